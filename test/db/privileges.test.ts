// Who may execute which function, read from the catalog of a migrated database: PUBLIC
// nothing, no definer function runs as a superuser, and each role exactly what it calls.
import test from 'ava';
import type pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { asRole, claim } from '../helpers/sql.ts';

const OURS = ['app_public', 'app_hidden', 'app_private'];
const ROLES = ['svc_request', 'svc_worker', 'svc_analyst', 'svc_login'];

let db: TestDatabase;
test.before(async () => { db = await createTestDatabase(); });
test.after.always(async () => { await db?.drop(); });

/** Runs fn inside a rolled-back transaction as `role`, with the claims of some organization. */
const as = <T>(role: string, fn: (c: pg.PoolClient) => Promise<T>) => asRole({ db }, role, [claim('organization_id', randomUUID()), claim('location_ids', '*')], fn);

async function names(sql: string, params: unknown[] = []): Promise<string[]> {
  return (await db.owner.query(sql, params)).rows.map((r) => r.name as string).sort();
}

// A function whose ACL is null has the default one, in which PUBLIC holds EXECUTE.
const PUBLIC_EXECUTES = `(p.proacl is null or exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0 and a.privilege_type = 'EXECUTE'))`;
const FN_NAME = `n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'`;

test('no function of our schemas or of graphile_worker is executable by PUBLIC', async (t) => {
  t.deepEqual(await names(`select ${FN_NAME} as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = any($1) and ${PUBLIC_EXECUTES}`, [[...OURS, 'graphile_worker']]), []);
  const counted = await db.owner.query(`select count(*)::int as n from pg_proc where pronamespace = any($1::regnamespace[])`, [OURS]);
  t.true(counted.rows[0].n > 40, 'the schemas hold the functions');
});

test('functions svc_owner creates from now on are not executable by PUBLIC either', async (t) => {
  const c = await db.owner.connect();
  try {
    await c.query('begin');
    await c.query('set local role svc_owner');
    await c.query(`create function app_hidden.privileges_probe() returns int language sql as 'select 1'`);
    const { rows } = await c.query(`select coalesce(p.proacl::text, 'the default') as acl, ${PUBLIC_EXECUTES} as public from pg_proc p
      where p.oid = 'app_hidden.privileges_probe()'::regprocedure`);
    t.false(rows[0].public, rows[0].acl);
  } finally {
    await c.query('rollback');
    c.release();
  }
});

test('no security-definer function is owned by a superuser, and each pins its search_path', async (t) => {
  const definers = await db.owner.query(`select ${FN_NAME} as name, r.rolname as owner, r.rolsuper, p.proconfig
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace join pg_roles r on r.oid = p.proowner
    where n.nspname = any($1) and p.prosecdef`, [[...OURS, 'graphile_worker']]);
  t.true(definers.rows.some((f) => f.name.startsWith('app_private.add_job(')), 'add_job is a definer function');
  for (const f of definers.rows) {
    t.is(f.owner, 'svc_owner', `${f.name} belongs to svc_owner`);
    t.false(f.rolsuper, `${f.name} is not a superuser's`);
    t.true((f.proconfig ?? []).some((s: string) => s.startsWith('search_path=')), `${f.name} pins search_path`);
  }
});

test('only the worker\'s connection and svc_owner may use the graphile_worker schema', async (t) => {
  for (const role of ROLES) {
    const { rows } = await db.owner.query(`select has_schema_privilege($1, 'graphile_worker', 'USAGE') as usage`, [role]);
    t.false(rows[0].usage, role);
  }
  const { rows } = await db.owner.query(`select exists (select 1 from pg_namespace n, aclexplode(n.nspacl) a
    where n.nspname = 'graphile_worker' and a.grantee = 0) as public`);
  t.false(rows[0].public, 'PUBLIC');
  t.deepEqual(await names(`select p.proname as name from pg_proc p where p.pronamespace = 'graphile_worker'::regnamespace
    and has_function_privilege('svc_owner', p.oid, 'EXECUTE')`), ['add_job', 'add_jobs', 'force_unlock_workers']);
  // force_unlock_workers: a live worker frees the jobs of a dead one (app_private.worker_processes_sweep)
});

test('svc_owner enqueues a job through app_private.add_job, and no request role may call add_job', async (t) => {
  const c = await db.owner.connect();
  try {
    await c.query('begin');
    await c.query('set local role svc_owner');
    await c.query(`select app_private.add_job('deliver_message', '{"probe": true}', job_key => 'privileges-probe')`);
    await c.query('reset role');
    const { rows } = await c.query(`select payload from graphile_worker._private_jobs where key = 'privileges-probe'`);
    t.deepEqual(rows.map((r) => r.payload), [{ probe: true }]);
  } finally {
    await c.query('rollback');
    c.release();
  }
  for (const role of ROLES) {
    const { rows } = await db.owner.query(`select has_function_privilege($1, 'app_private.add_job(text, jsonb, text, timestamptz)', 'EXECUTE') as x`, [role]);
    t.false(rows[0].x, role);
  }
});

test('svc_request may execute every function of app_public: the API\'s operations', async (t) => {
  t.deepEqual(await names(`select ${FN_NAME} as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app_public' and not has_function_privilege('svc_request', p.oid, 'EXECUTE')`), []);
});

test('svc_analyst may execute only the helpers its policies call, and calls no operation', async (t) => {
  const executable = await db.owner.query(`select ${FN_NAME} as name, n.nspname, p.proname, p.prosecdef, p.prosrc
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = any($1) and has_function_privilege('svc_analyst', p.oid, 'EXECUTE')`, [OURS]);
  t.deepEqual(executable.rows.filter((f) => f.nspname !== 'app_hidden').map((f) => f.name), []);
  const policies = (await db.owner.query(`select coalesce(qual, '') || ' ' || coalesce(with_check, '') as expr
    from pg_policies where schemaname = 'app_public' and cmd in ('SELECT', 'ALL')`)).rows.map((r) => r.expr as string).join('\n');
  // a helper is called by a policy, or by an invoker helper the analyst may call (it runs as the analyst)
  const callers = policies + executable.rows.filter((f) => !f.prosecdef).map((f) => f.prosrc as string).join('\n');
  for (const f of executable.rows) {
    t.regex(callers, new RegExp(`app_hidden\\."?${f.proname}"?\\(`), `${f.name} is called by a policy`);
  }
  t.true(executable.rows.some((f) => f.proname === 'current_org_id'));
  await as('svc_analyst', async (c) => {
    const write = await t.throwsAsync(c.query(`select app_public.contacts_upsert('a@example.com', null, null, null, null, null, null, null)`));
    t.is((write as { code?: string }).code, '42501', 'permission denied');
  });
});

test('each role reads every app_public table it may select under the policies, helpers and all', async (t) => {
  for (const role of ['svc_request', 'svc_worker', 'svc_analyst']) {
    const tables = await names(`select c.relname as name from pg_class c
      where c.relnamespace = 'app_public'::regnamespace and c.relkind in ('r', 'v', 'p')
        and has_table_privilege($1, c.oid, 'SELECT')`, [role]);
    t.true(tables.length >= 10, role);
    await as(role, async (c) => {
      for (const table of tables) {
        await t.notThrowsAsync(c.query(`select count(*) from app_public.${table}`), `${role} reads ${table}`);
      }
    });
  }
});
