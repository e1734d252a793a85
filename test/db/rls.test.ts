// Row-level security tested directly in SQL under the request role: the database, not the
// TypeScript, is what keeps tenants apart.
import test from 'ava';
import type pg from 'pg';
import { hashKey } from '../../src/auth/keys.ts';
import { adminApply } from '../../src/admin/commands.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { asRole, authenticate, claim } from '../helpers/sql.ts';
import { AREAS } from '../../src/areas.ts';

let db: TestDatabase;
let a: Applied;
let b: Applied;
let tables: string[];
test.before(async () => {
  db = await createTestDatabase();
  a = await adminApply(db.owner, acmeFixture('RLS A'), AREAS);
  b = await adminApply(db.owner, acmeFixture('RLS B'), AREAS);
  const { rows } = await db.owner.query(`select tablename from pg_tables where schemaname = 'app_public' order by 1`);
  tables = rows.map((r) => r.tablename);
});
test.after.always(async () => { await db?.drop(); });

const as = <T>(role: string, setup: string[], fn: (c: pg.PoolClient) => Promise<T>) => asRole({ db }, role, setup, fn);

const count = async (c: pg.PoolClient, table: string) =>
  (await c.query(`select count(*)::int as n from app_public.${table}`)).rows[0].n as number;


test('every tenant table has row-level security enabled', async (t) => {
  const { rows } = await db.owner.query(`
    select n.nspname || '.' || c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app_public', 'app_private') and c.relkind = 'r' and not c.relrowsecurity`);
  t.deepEqual(rows, []);
  t.true(tables.length >= 10);
});

test('with no claims the request role sees nothing in any table', async (t) => {
  await as('svc_request', [], async (c) => {
    for (const table of tables) t.is(await count(c, table), 0, table);
  });
});

test('empty claims (as left after a transaction) see nothing either', async (t) => {
  const empty = ['organization_id', 'location_ids', 'role', 'records_level'].map((n) => claim(n, ''));
  await as('svc_request', empty, async (c) => {
    for (const table of tables) t.is(await count(c, table), 0, table);
  });
});

test('a location-bound claim without locations sees no location-bound rows', async (t) => {
  await as('svc_request', [claim('organization_id', a.organization_id), claim('role', 'member')], async (c) => {
    t.is(await count(c, 'contacts'), 0);
    t.is(await count(c, 'locations'), 0);
    t.is(await count(c, 'contact_notes'), 0);
    t.is(await count(c, 'organizations'), 1);
  });
});

test('an organization-wide credential sees exactly its organization', async (t) => {
  await as('svc_request', [authenticate(a.keys.org!)], async (c) => {
    const { rows } = await c.query(`select distinct organization_id from app_public.contacts
      union select distinct organization_id from app_public.people
      union select distinct organization_id from app_public.locations`);
    t.deepEqual(rows.map((r) => r.organization_id), [a.organization_id]);
    t.is(await count(c, 'contacts'), 3);
    t.is(await count(c, 'organizations'), 1);
    const { rowCount } = await c.query(`select 1 from app_public.contacts where id = $1`, [b.ids.ann]);
    t.is(rowCount, 0, 'an id of another organization is simply absent');
  });
});

test('a location-limited credential sees only its locations\' contacts, notes and tags', async (t) => {
  await as('svc_request', [authenticate(a.keys.north_mgr!)], async (c) => {
    const { rows } = await c.query(`select id from app_public.contacts`);
    t.deepEqual(rows.map((r) => r.id), [a.ids.ann]);
    t.deepEqual((await c.query(`select id from app_public.locations`)).rows.map((r) => r.id), [a.ids.north]);
    t.is(await count(c, 'contact_tags'), 1);
  });
});

test('location-private notes are never visible, but counted on the contact', async (t) => {
  await as('svc_request', [authenticate(a.keys.org!)], async (c) => {
    const { rows } = await c.query(`select body, source from app_public.contact_notes where contact_id = $1`, [a.ids.ann]);
    t.deepEqual(rows, [{ body: 'Prefers mornings', source: 'user' }]);
    const { rows: [contact] } = await c.query(`select notes_count from app_public.contacts where id = $1`, [a.ids.ann]);
    t.is(contact.notes_count, 2);
  });
});

test('an own-records member sees no contacts until they are their clients', async (t) => {
  await as('svc_request', [authenticate(a.keys.sam_personal!), claim('records_level', 'own')], async (c) => {
    t.is(await count(c, 'contacts'), 0);
  });
});

test('the request role cannot read private tables or write directly', async (t) => {
  await as('svc_request', [authenticate(a.keys.org!)], async (c) => {
    await t.throwsAsync(c.query(`select * from app_private.api_keys`), { code: '42501' });
  });
  await as('svc_request', [authenticate(a.keys.org!)], async (c) => {
    await t.throwsAsync(c.query(`insert into app_public.contacts (organization_id, name) values ($1, 'x')`, [a.organization_id]), { code: '42501' });
  });
  await as('svc_request', [authenticate(a.keys.org!)], async (c) => {
    await t.throwsAsync(c.query(`update app_public.organizations set name = 'x'`), { code: '42501' });
  });
});

test('the login role holds no data rights of its own', async (t) => {
  await as('svc_login', [], async (c) => {
    await t.throwsAsync(c.query(`select * from app_public.contacts`), { code: '42501' });
  });
});

test('claims set by a caller cannot widen what a key may see: authenticate overwrites them', async (t) => {
  await as('svc_request', [claim('location_ids', '*'), claim('organization_id', b.organization_id), authenticate(a.keys.north_mgr!)], async (c) => {
    t.deepEqual((await c.query(`select id from app_public.contacts`)).rows.map((r) => r.id), [a.ids.ann]);
  });
});

test('the analyst role reads under the same policies', async (t) => {
  await as('svc_analyst', [], async (c) => {
    t.is(await count(c, 'contacts'), 0);
  });
  await as('svc_analyst', [claim('organization_id', b.organization_id), claim('location_ids', '*')], async (c) => {
    t.is(await count(c, 'contacts'), 3);
    t.is((await c.query(`select 1 from app_public.contacts where organization_id = $1`, [a.organization_id])).rowCount, 0);
  });
});

test('authenticate raises the API error codes', async (t) => {
  const c = await db.owner.connect();
  try {
    const call = (key: string, scope: string | null, access: string, power: string | null) =>
      c.query(`select app_hidden.authenticate($1, $2, $3, $4)`, [hashKey(key), scope, access, power]);
    await t.throwsAsync(call(`svc_sk_${'Z'.repeat(32)}`, null, 'open', null), { code: 'SV401' });
    const scope = await t.throwsAsync(call(a.keys.org_reader!, 'contacts:write', 'deny', 'contacts'));
    t.is((scope as any).code, 'SV403');
    t.is((scope as any).message, 'insufficient_scope');
    t.deepEqual(JSON.parse((scope as any).hint), { required: 'contacts:write' });
    const role = await t.throwsAsync(call(a.keys.member_key!, 'contacts:write', 'deny', 'contacts'));
    t.is((role as any).message, 'insufficient_role');
  } finally {
    c.release();
  }
});
