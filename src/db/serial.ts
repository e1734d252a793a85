// One connection, several callers at once: a broadcast sender claims its next batch while the
// answers of the one before are recorded, and the transport's answers note providers' ids as they
// come. A pg client runs one query at a time, and queueing a second while one runs is deprecated
// (pg 9 drops it), so whoever shares a client in flight sends through here: each query starts
// after the previous one sent this way has ended.
import type pg from 'pg';

const tails = new WeakMap<pg.ClientBase, Promise<unknown>>();

export function serially<R extends pg.QueryResultRow = pg.QueryResultRow>(client: pg.ClientBase, text: string,
  values?: unknown[]): Promise<pg.QueryResult<R>> {
  const run = (tails.get(client) ?? Promise.resolve()).then(() => client.query<R>(text, values));
  tails.set(client, run.catch(() => undefined));
  return run;
}
