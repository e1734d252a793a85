// An analyst connected to the primary stalls no one: no advisory lock (the service's writes
// serialize on them), no temporary table (also in a read-write transaction), a statement and a
// lock timeout and a connection limit of its own; `analyst create` says analysts belong on a
// replica when the login it makes is the primary's. The service's own roles keep their locks.
import test from 'ava';
import pg from 'pg';
import { createAnalyst, revokeAnalyst } from '../../src/admin/analysts.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
let beta: Applied;
let made: Awaited<ReturnType<typeof createAnalyst>>;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture()));
  beta = await app.apply(acmeFixture('Beta Clinic'));
  made = await createAnalyst(app.db.owner, app.db.ownerUrl, { org: acme.organization_id });
});
test.after.always(async () => {
  if (made) await revokeAnalyst(app.db.owner, made.name).catch(() => undefined);
  await app?.close();
});

async function asAnalyst<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(made.connection_string);
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

test.serial('no advisory lock: the organization\'s tag writes and other organizations go on', async (t) => {
  const lock = `hashtextextended('svc.tags:' || '${acme.organization_id}', 0)`;
  await asAnalyst(async (c) => {
    for (const sql of [`select pg_advisory_lock(${lock})`, `select pg_try_advisory_lock(${lock})`,
      `select pg_advisory_lock_shared(${lock})`, `select pg_advisory_lock(1, 2)`, `select pg_try_advisory_lock_shared(${lock})`]) {
      await t.throwsAsync(c.query(sql), { code: '42501' }, sql);
    }
    await c.query('begin');
    await t.throwsAsync(c.query(`select pg_advisory_xact_lock(${lock})`), { code: '42501' });
    await c.query('rollback');
    // while the analyst's session is open and busy, the service answers both organizations
    let slept = false;
    const sleeping = c.query('select pg_sleep(8)').then(() => { slept = true; });
    const tag = await app.request('POST', `/api/v1/contacts/${acme.ids.ann}/tags`, { key: acme.keys.org, body: { name: 'analyst-proof' } });
    t.true([200, 201].includes(tag.status), JSON.stringify(tag.body));
    t.is((await app.request('GET', '/api/v1/me', { key: beta.keys.org })).status, 200);
    t.false(slept, 'neither waited for the analyst');
    await sleeping;
  });
});

test.serial('no temporary table, in a read-write transaction either', async (t) => {
  await asAnalyst(async (c) => {
    await t.throwsAsync(c.query('create temporary table scratch (x int)'), { code: '25006' }, 'read-only by default');
    await c.query('begin read write');
    await t.throwsAsync(c.query('create temporary table scratch (x int)'), { code: '42501' });
    await c.query('rollback');
    await c.query('set default_transaction_read_only = off');
    await t.throwsAsync(c.query('create temp table scratch as select 1 as x'), { code: '42501' });
  });
});

test.serial('a statement timeout, a lock timeout and a connection limit of its own', async (t) => {
  await asAnalyst(async (c) => {
    t.is((await c.query('show statement_timeout')).rows[0].statement_timeout, '1min');
    t.is((await c.query('show lock_timeout')).rows[0].lock_timeout, '5s');
  });
  const { rows: [role] } = await app.db.owner.query(`select rolconnlimit from pg_roles where rolname = $1`, [made.name]);
  t.is(role.rolconnlimit, 5);
  t.is(made.lock_timeout, '5s');
  t.regex(made.warning ?? '', /analysts belong on a replica.*NOTIFY/);
});

test.serial('the service\'s own roles still take advisory locks and temporary tables', async (t) => {
  const c = await app.pool.connect();
  try {
    for (const role of ['svc_request', 'svc_worker']) {
      await c.query('begin');
      await c.query(`set local role ${role}`);
      t.is((await c.query(`select pg_try_advisory_xact_lock(42) as got`)).rows[0].got, true, role);
      await c.query('create temporary table if not exists scratch (x int) on commit drop');
      await c.query('rollback');
    }
  } finally {
    c.release();
  }
});
