// Migrations apply to an empty database, create the roles, and are idempotent.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import pg from 'pg';
import { migrate, setLoginPassword } from '../../src/db/migrate.ts';

test('migrations apply to an empty database and again as a no-op', async (t) => {
  const base = process.env.SVC_TEST_OWNER_URL!;
  const name = `svc_t_${Math.floor(Date.now() / 1000)}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client(base);
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  try {
    await migrate(url.toString(), process.env.SVC_LOGIN_PASSWORD);
    await migrate(url.toString(), process.env.SVC_LOGIN_PASSWORD);
    const c = new pg.Client(url.toString());
    await c.connect();
    try {
      const { rows } = await c.query(`select count(*)::int as n from graphile_migrate.migrations`);
      t.is(rows[0].n, readdirSync(new URL('../../migrations/committed', import.meta.url)).length);
      const roles = await c.query(`select rolname, rolcanlogin, rolbypassrls, rolsuper from pg_roles where rolname like 'svc\\_%' order by 1`);
      t.deepEqual(roles.rows.map((r) => r.rolname), ['svc_analyst', 'svc_login', 'svc_owner', 'svc_request', 'svc_worker']);
      t.true(roles.rows.every((r) => !r.rolbypassrls && !r.rolsuper), 'no role bypasses RLS');
      t.deepEqual(roles.rows.filter((r) => r.rolcanlogin).map((r) => r.rolname), ['svc_login']);
      const owners = await c.query(`select distinct pg_get_userbyid(relowner) as owner from pg_class c
        join pg_namespace n on n.oid = c.relnamespace where n.nspname like 'app\\_%'`);
      t.deepEqual(owners.rows, [{ owner: 'svc_owner' }]);
      const definers = await c.query(`select p.proname, p.proconfig from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname like 'app\\_%' and p.prosecdef`);
      t.true(definers.rows.length > 0);
      for (const f of definers.rows) t.true((f.proconfig ?? []).some((s: string) => s.startsWith('search_path=')), `${f.proname} pins search_path`);
      const open = await c.query(`select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'app_hidden' and p.prosecdef
          and (p.proacl is null or exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0))`);
      t.deepEqual(open.rows, [], 'no definer helper of app_hidden is executable by PUBLIC');
    } finally {
      await c.end();
    }
  } finally {
    // graphile-migrate keeps its pool for 200 ms after use and exits the process if that
    // pool's connection is terminated, so let it close before dropping the database.
    await new Promise((r) => setTimeout(r, 600));
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
});

test('processes that start together each set svc_login\'s password without failing on one another', async (t) => {
  // The role is the cluster's: with the embedded server every operator command, server and test
  // database sets it at start, often at the same moment. Setting the password it already has
  // changes nothing for the other tests (with trust authentication it is not even asked for).
  const password = process.env.SVC_LOGIN_PASSWORD ?? 'svc-login-test-password';
  const results = await Promise.allSettled(Array.from({ length: 12 }, () => setLoginPassword(process.env.SVC_TEST_OWNER_URL!, password)));
  t.deepEqual(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)), []);
});
