// Checking that nothing was written: every row an organization has, in every table of ours that
// carries an organization_id (app_public and app_private: records, keys, idempotency records,
// messages), compared byte for byte before and after.
import type { ExecutionContext } from 'ava';
import type { TestDatabase } from './db.ts';

const statements = new WeakMap<TestDatabase, Promise<string>>();

/** One statement that hashes each table's rows of an organization ($1), in text form, in a stable order. */
function statementFor(db: TestDatabase): Promise<string> {
  let statement = statements.get(db);
  if (!statement) {
    statement = db.owner.query(`select format('%I.%I', c.table_schema, c.table_name) as t from information_schema.columns c
        join information_schema.tables x on x.table_schema = c.table_schema and x.table_name = c.table_name and x.table_type = 'BASE TABLE'
       where c.table_schema in ('app_public', 'app_private') and c.column_name = 'organization_id' order by 1`)
      .then(({ rows }) => (rows as { t: string }[]).map(({ t }) => `select '${t}' as t,
        md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from ${t} x where organization_id = $1`).join('\nunion all\n'));
    statements.set(db, statement);
  }
  return statement;
}

/** Every row of the organization, as one hash per table. */
export async function organizationData(on: { db: TestDatabase }, organizationId: string): Promise<Record<string, string>> {
  const { rows } = await on.db.owner.query(await statementFor(on.db), [organizationId]);
  return Object.fromEntries((rows as { t: string; h: string }[]).map(({ t, h }) => [t, h]));
}

/** Runs fn and checks that none of these organizations' data changed meanwhile. */
export async function unchanged<T>(t: ExecutionContext, on: { db: TestDatabase }, organizationIds: string | readonly string[],
  fn: () => Promise<T>, what = 'nothing was written'): Promise<T> {
  const ids = typeof organizationIds === 'string' ? [organizationIds] : organizationIds;
  const before = await Promise.all(ids.map((id) => organizationData(on, id)));
  const out = await fn();
  t.deepEqual(await Promise.all(ids.map((id) => organizationData(on, id))), before, what);
  return out;
}

/**
 * Sends a request that must be refused: checks its status and error code, and that the
 * organization's data (each organization's, given several) is byte for byte as it was.
 */
export async function refusedWithoutWrites<R extends { status: number; body: any }>(t: ExecutionContext, on: { db: TestDatabase },
  organizationIds: string | readonly string[], status: number, error: string, call: () => Promise<R>): Promise<R> {
  const res = await unchanged(t, on, organizationIds, call);
  const why = JSON.stringify(res.body).slice(0, 300);
  t.is(res.status, status, why);
  t.is(res.body?.error, error, why);
  return res;
}
