// The database going away (an operator's restart, a crash, a failover) is an outage to wait
// out, never a reason for a process to end. pg emits 'error' on a connection the server
// ended; an EventEmitter with no listener for it throws, and that ended the API. pg-pool
// listens only while a connection is idle in the pool: one checked out (a request between
// two statements, the worker's LISTEN connection, a metrics scrape) had no listener at all.
import type pg from 'pg';
import { log } from '../log.ts';

/**
 * Every connection of `pool`, idle or checked out, gets an error listener for its whole life.
 * The query in flight, if any, fails on its own and its caller answers for it; the pool drops
 * the connection and opens a new one on next use, once the server answers again.
 */
export function outlivingOutages<P extends pg.Pool>(pool: P, what: string): P {
  pool.on('error', (err) => log.warn({ err, pool: what }, 'idle database connection lost'));
  pool.on('connect', (client) => keepAlive(client, what));
  return pool;
}

/** A single connection (a migration's, the doctor's) likewise: its error fails its own query. */
export function keepAlive<C extends pg.ClientBase>(client: C, what: string): C {
  client.on('error', (err) => log.debug({ err, connection: what }, 'database connection lost'));
  return client;
}

// What pg and the socket report when there is no server to answer (no SQLSTATE: the server
// said nothing): refused, reset or cut connections, and a client already found broken.
const LOST_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const LOST_MESSAGES = /^(Connection terminated|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Connection refused)/;

/** The database could not be reached, or the connection died before it answered. */
export function isConnectionLost(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && LOST_CODES.has(code)) return true;
  if (e instanceof AggregateError) return e.errors.some(isConnectionLost);
  return code === undefined && LOST_MESSAGES.test(e.message);
}
