// graphile-worker inside `svc serve` or alone as `svc worker`. It runs on the owner
// connection (it manages its own schema); tasks that act on tenant data open their own
// transaction as svc_worker with the tenant's claims.
//
// Shutdown: runner.stop() stops taking jobs and waits for the running ones to finish; a job that
// throws goes back to the queue with its retry. Tasks ignore graphile-worker's abort signal on
// purpose: cutting a send short leaves its outcome unknown, and the transports' own timeouts
// already bound how long a delivery takes. A process killed outright leaves its jobs locked, which
// graphile-worker alone would free after 4 hours: each process announces itself
// (workers/liveness.ts), and a live one (or the dead one restarted) frees a dead one's jobs and
// settles the sequence messages it held within seconds.
import { EventEmitter } from 'node:events';
import { run, runOnce, Logger, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import { platformCrontab, platformTasks } from '../workers/index.ts';
import { workerLiveness } from '../workers/liveness.ts';
import { AREAS } from './areas.ts';
import { loadConfig } from './config.ts';
import { tasksOf, type TaskDeps } from './registry/area.ts';
import { sendQueriesWhole } from './db/request.ts';
import { outlivingOutages } from './db/outage.ts';
import { createTransports, type Transports } from './delivery/index.ts';
import { log } from './log.ts';

export const workerLogger = new Logger((scope) => (level, message, meta) => {
  const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : log.debug;
  fn.call(log, { scope, ...meta }, message);
});

// Unbatched, graphile-worker records a finished job without waiting for the write, so stop()
// could resolve (and the process exit) before the job is marked done or failed, and a job run to
// the end would stay locked for hours. Batched, stop() waits for those writes; a delay of 0
// batches within one tick, adding no latency.
export const workerPreset = { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } };

/** Every task: the platform's (workers/) and the areas'. */
export const allTasks = (deps: TaskDeps): TaskList => ({ ...platformTasks(deps), ...tasksOf(AREAS, deps) });

/** graphile-worker's crontab: the platform's lines, then the areas'. */
export const crontab = [...platformCrontab, ...AREAS.flatMap((a) => a.crontab ?? [])].join('\n');

/** Starts the workers; `transports` (from createTransports, which validates the settings) default to the environment's. */
export async function startWorker(connectionString: string, transports: Transports = createTransports(loadConfig()),
  baseUrl?: string): Promise<Runner & { pgPool: pg.Pool }> {
  const taskList = allTasks({ transports, baseUrl });
  // Our own pool, so that stop() resolves only once every worker connection is closed: the pool
  // graphile-worker makes is ended without waiting, and a connection still closing when the
  // embedded database stops would throw. Sized as graphile-worker's default (concurrency + room).
  // Its connections name the process (the step runs it claims record it: step_runs.claimed_by).
  const liveness = workerLiveness(connectionString);
  const pgPool = new pg.Pool({ connectionString, max: 10, options: liveness.connectionOptions });
  outlivingOutages(pgPool, 'worker');
  pgPool.on('connect', sendQueriesWhole);
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool }) => liveness.addPool(workerPool.id));
  let runner: Runner;
  try {
    await liveness.start();
    runner = await run({
      pgPool, taskList, crontab, concurrency: 4, noHandleSignals: true, pollInterval: 1000, logger: workerLogger, preset: workerPreset, events,
    });
  } catch (e) {
    await liveness.stop().catch(() => undefined);
    await pgPool.end();
    throw e;
  }
  // which receptionist answers SMS and chat (the model's URL and key are never logged)
  const receptionist = process.env.AI_BASE_URL?.trim() ? `model ${process.env.AI_MODEL || 'gpt-4o-mini'}` : 'built-in';
  log.info({ tasks: Object.keys(taskList), email: transports.email.name, sms: transports.sms.name, receptionist }, 'worker started');
  const stop = async (reason?: string) => {
    try {
      await runner.stop(reason);
      await liveness.stop();
    } finally {
      await pgPool.end();
    }
  };
  return { ...runner, pgPool, stop, [Symbol.asyncDispose]: () => stop() };
}

/** The tasks the crontab runs every minute: what makes due work due (the step sweep, due broadcasts, …). */
export const everyMinuteTasks = (lines: string = crontab): string[] =>
  lines.split('\n').map((l) => /^\* \* \* \* \* (\S+)/.exec(l.trim())?.[1]).filter((t): t is string => t !== undefined);

/**
 * `svc admin jobs drain`: first does what the worker's every-minute cron would do now (the
 * sequence step sweep, which queues the jobs of steps coming due; the due broadcast fires; …),
 * then runs every job that is due now (and those they make due now: a step that moves on to one
 * with no delay), then resolves; jobs due later stay queued. For tests and demos, which would
 * otherwise wait for the worker's poll and its cron. Past `timeoutMs` it rejects: jobs still
 * running then finish or are retried by graphile-worker as usual.
 */
export async function drainJobs(connectionString: string, transports: Transports, opts: { timeoutMs?: number; baseUrl?: string } = {})
  : Promise<{ drained: true; due_later: number }> {
  const pgPool = new pg.Pool({ connectionString, max: 4 });
  outlivingOutages(pgPool, 'worker');
  const count = async (sql: string) => Number((await pgPool.query(sql)).rows[0].n);
  let timer: NodeJS.Timeout | undefined;
  try {
    // one run of each every-minute cron task, keyed so that a drain racing another adds it once
    for (const task of everyMinuteTasks()) {
      await pgPool.query(`select graphile_worker.add_job($1, '{}'::json, job_key => $2, job_key_mode => 'replace')`, [task, `drain:${task}`]);
    }
    const drained = runOnce({ pgPool, taskList: allTasks({ transports, baseUrl: opts.baseUrl }), concurrency: 2, logger: workerLogger,
      preset: workerPreset });
    if (opts.timeoutMs !== undefined) {
      const timeoutMs = opts.timeoutMs;
      await Promise.race([drained, new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`jobs still running after ${timeoutMs / 1000} s`)), timeoutMs);
      })]);
    } else {
      await drained;
    }
    const dueLater = await count(`select count(*) as n from graphile_worker._private_jobs where run_at > now() and locked_at is null`);
    return { drained: true, due_later: dueLater };
  } finally {
    clearTimeout(timer);
    await pgPool.end();
  }
}
