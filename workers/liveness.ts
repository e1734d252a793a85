// A worker process announces itself so that a live one can free the work of a dead one
// (app_private.worker_processes, migrations/current/250-worker-processes.sql): on a connection of
// its own it holds an advisory lock on its id and keeps its row with its graphile-worker pool ids;
// every few seconds, and at once when it starts, it renews its row and sweeps for processes that
// died (app_private.worker_processes_sweep): their sequence messages held with the transport
// become `unknown` and their jobs run again, within seconds rather than graphile-worker's four
// hours. Its pool's connections carry its id (svc.worker_process), which each step run it claims
// records (step_runs.claimed_by).
//
// The connection is opened again whenever it is lost (a database restart): the lock is taken
// again, and until then the sweeps of others do not take this process for dead (a lock taken
// before the database started proves nothing; an unseen row is dead only after 30 s).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { log } from '../src/log.ts';

/** How often a process renews its row and sweeps for dead ones. WORKER_HEARTBEAT_MS overrides. */
export const HEARTBEAT_MS = 5000;

export interface Liveness {
  /** This process's id (app_private.worker_processes.id). */
  readonly id: string;
  /** The pg connection options that make a pool's connections name this process. */
  readonly connectionOptions: string;
  /** Names a graphile-worker pool of this process (its jobs' locked_by). */
  addPool(poolId: string): void;
  /** Takes the lock, writes the row and sweeps once. */
  start(): Promise<void>;
  /** Removes the row and closes the connection (a clean stop: nothing is left to free). */
  stop(): Promise<void>;
}

export function workerLiveness(connectionString: string, heartbeatMs = Number(process.env.WORKER_HEARTBEAT_MS) || HEARTBEAT_MS): Liveness {
  const id = `${hostname()}:${process.pid}:${randomUUID()}`;
  const pools = new Set<string>();
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const announce = (c: pg.Client) =>
    c.query('select app_private.worker_process_announce($1, $2, $3, $4)', [id, [...pools], hostname(), process.pid]);

  /** The connection holding the lock, opened (and the lock taken) if it is not. */
  const connection = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString, application_name: 'svc worker liveness' });
      c.on('error', (err) => {
        log.warn({ err }, 'worker liveness connection lost');
        if (client === c) client = undefined;
      });
      try {
        await c.connect();
        await announce(c);
      } catch (e) {
        c.end().catch(() => undefined);
        throw e;
      }
      client = c;
      return c;
    })().finally(() => { connecting = undefined; });
    return connecting;
  };

  const sweep = async (c: pg.Client) => {
    const { rows: [row] } = await c.query<{ dead: string[] }>('select app_private.worker_processes_sweep($1) as dead', [id]);
    if (row?.dead.length) log.warn({ dead: row.dead }, 'worker processes found dead: their jobs run again');
  };

  const beat = async () => {
    try {
      const c = await connection();
      const { rows: [seen] } = await c.query<{ ok: boolean }>('select app_private.worker_process_seen($1) as ok', [id]);
      // taken for dead (its connection was lost long enough): announced again
      if (!seen?.ok) await announce(c);
      await sweep(c);
    } catch (err) {
      if (!stopped) log.warn({ err }, 'worker liveness: heartbeat failed; trying again');
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => { void beat().finally(schedule); }, heartbeatMs);
    timer.unref();
  };

  return {
    id,
    connectionOptions: `-c svc.worker_process=${id}`,
    addPool(poolId) {
      pools.add(poolId);
      if (client) announce(client).catch((err) => log.warn({ err }, 'worker liveness: pool not announced; the next heartbeat does'));
    },
    async start() {
      const c = await connection();
      await sweep(c);
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const c = client ?? await connecting?.catch(() => undefined);
      if (!c) return;
      try {
        await c.query('select app_private.worker_process_gone($1)', [id]);
      } finally {
        await c.end().catch(() => undefined);
      }
    },
  };
}
