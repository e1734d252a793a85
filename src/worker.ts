// graphile-worker inside `svc serve` or alone as `svc worker`. It runs on the owner
// connection (it manages its own schema); tasks that act on tenant data open their own
// transaction as svc_worker with the tenant's claims.
import { run, Logger, type Runner } from 'graphile-worker';
import { taskList } from '../workers/index.ts';
import { log } from './log.ts';

const logger = new Logger((scope) => (level, message, meta) => {
  const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : log.debug;
  fn.call(log, { scope, ...meta }, message);
});

export async function startWorker(connectionString: string): Promise<Runner> {
  const runner = await run({ connectionString, taskList, concurrency: 4, noHandleSignals: true, pollInterval: 1000, logger });
  log.info({ tasks: Object.keys(taskList) }, 'worker started');
  return runner;
}
