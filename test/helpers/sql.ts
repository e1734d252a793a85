// Straight at the SQL: statements as one of the service's roles, or as the request role with the
// claims a key gets, the way the policies and functions meet every caller.
import type pg from 'pg';
import type { DatabaseError } from 'pg';
import { hashKey } from '../../src/auth/keys.ts';
import type { TestDatabase } from './db.ts';

/** Rows of a query run as the owner (what was really written). */
export async function rows(on: { db: TestDatabase }, query: string, values: unknown[] = []): Promise<any[]> {
  return (await on.db.owner.query(query, values)).rows;
}

/** The statement that sets the claims `key` gets, as the service's authentication does. */
export const authenticate = (key: string) =>
  `select app_hidden.authenticate('\\x${hashKey(key).toString('hex')}'::bytea, null, 'open', null)`;

/** The statement that sets one claim to a value, as a caller could. */
export const claim = (name: string, value: string) => `select set_config('svc.${name}', '${value.replace(/'/g, "''")}', true)`;

/**
 * Runs fn in a transaction as `role`, after the `setup` statements; the transaction is rolled
 * back, unless `commit` (then only when fn fails).
 */
export async function asRole<T>(on: { db: TestDatabase }, role: string, setup: readonly string[],
  fn: (c: pg.PoolClient) => Promise<T>, { commit = false } = {}): Promise<T> {
  const c = await on.db.owner.connect();
  let done = false;
  try {
    await c.query('begin');
    await c.query(`set local role ${role}`);
    for (const statement of setup) await c.query(statement);
    const out = await fn(c);
    if (commit) {
      await c.query('commit');
      done = true;
    }
    return out;
  } finally {
    if (!done) await c.query('rollback');
    c.release();
  }
}

/**
 * Runs fn as the request role with the claims `key` gets (none without a key), in a transaction
 * that is rolled back unless `commit`.
 */
export const asKey = <T>(on: { db: TestDatabase }, key: string | undefined, fn: (c: pg.PoolClient) => Promise<T>, options?: { commit?: boolean }) =>
  asRole(on, 'svc_request', key ? [authenticate(key)] : [], fn, options);

/** What one statement answers as `key`: its first row's `result`, or the database's error. */
export type Outcome = { ok: true; result: any } | { ok: false; error: DatabaseError };

export const outcome = (on: { db: TestDatabase }, key: string | undefined, statement: string, values: unknown[] = []): Promise<Outcome> =>
  asKey(on, key, async (c) => {
    try {
      return { ok: true, result: (await c.query(statement, values)).rows[0]?.result };
    } catch (e) {
      return { ok: false, error: e as DatabaseError };
    }
  });

/** The error one statement raises as `key` (a test failure when it succeeds). */
export async function sqlError(on: { db: TestDatabase }, key: string | undefined, statement: string, values: unknown[] = []): Promise<DatabaseError> {
  const out = await outcome(on, key, statement, values);
  if (out.ok) throw new Error(`${statement} succeeded: ${JSON.stringify(out.result).slice(0, 300)}`);
  return out.error;
}
