// A sending domain or a phone number belongs to one organization (app_private.inbound_claims):
// claiming one another organization holds is refused with 409 domain_in_use / number_in_use
// on every path that sets one (the dashboard's organization page, a fixture, SQL itself), and
// nothing is written; an operator moves one with `svc admin org move`; the migration keeps the
// older organization's identifier where an existing database holds one twice.
import test from 'ava';
import pg from 'pg';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { svc } from '../helpers/cli.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { signIn } from '../dashboard/helpers.ts';

let app: TestApp;
let acme: Applied;
let beta: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture()));
  beta = await app.apply(acmeFixture('Beta Clinic'));
});
test.after.always(async () => { await app?.close(); });

const org = async (id: string) => (await app.db.owner.query(
  `select sending_email_domain, default_sms_number from app_public.organizations where id = $1`, [id])).rows[0];
const numbers = async (id: string) => (await app.db.owner.query(
  `select coalesce(array_agg(sms_number order by name), '{}') as n from app_public.locations where organization_id = $1`, [id])).rows[0].n;
const sqlError = async (sql: string, params: unknown[]) => {
  const e = await app.db.owner.query(sql, params).then(() => undefined, (err: pg.DatabaseError) => err);
  return e && { code: e.code, error: e.message, message: e.detail };
};

test.serial('the dashboard refuses another organization\'s domain or number with a clear message; nothing is written', async (t) => {
  const before = await org(beta.organization_id);
  const owner = await signIn(app, 'olive@acme.example', undefined, beta.organization_id);
  for (const [fields, code, what] of [
    [{ sending_email_domain: 'ACME.example', default_sms_number: '' }, 'domain', /acme\.example is in use by another organization/],
    [{ sending_email_domain: '', default_sms_number: '+1 555 000 0000' }, 'default number', /\+15550000000 is in use by another organization/],
    [{ sending_email_domain: '', default_sms_number: '+15550000001' }, 'location number', /\+15550000001 is in use by another organization/],
  ] as const) {
    const r = await owner.submit('/dashboard/organization', '/dashboard/organization/update', { mcp_enabled: 'on', ...fields });
    t.is(r.status, 409, code);
    t.regex(r.text, what, code);
    t.deepEqual(await org(beta.organization_id), before, code);
  }
  t.deepEqual(await org(acme.organization_id), { sending_email_domain: 'acme.example', default_sms_number: '+15550000000' });
});

test.serial('every table that routes inbound traffic: SQL itself refuses, across organizations', async (t) => {
  const a = acme.organization_id;
  const b = beta.organization_id;
  for (const [sql, params, code] of [
    [`update app_public.organizations set sending_email_domain = 'Acme.Example' where id = $1`, [b], 'domain_in_use'],
    [`update app_public.organizations set default_sms_number = '+15550000001' where id = $1`, [b], 'number_in_use'],
    [`update app_public.locations set sms_number = '+15550000000' where organization_id = $1 and name = 'South'`, [b], 'number_in_use'],
    [`insert into app_public.locations (organization_id, name, sms_number) values ($1, 'Third', '+15550000001')`, [b], 'number_in_use'],
    [`insert into app_public.organizations (name, sending_email_domain) values ('Gamma', 'acme.example')`, [], 'domain_in_use'],
  ] as const) {
    t.like(await sqlError(sql, [...params]), { code: 'SV409', error: code }, sql);
  }
  t.is((await app.db.owner.query(`select count(*)::int as n from app_public.organizations where name = 'Gamma'`)).rows[0].n, 0);
  t.deepEqual(await numbers(a), ['+15550000001', null]);
  // one organization may use one number as its default and a location's
  await app.db.owner.query(`update app_public.locations set sms_number = '+15550000000' where organization_id = $1 and name = 'South'`, [a]);
  t.deepEqual(await numbers(a), ['+15550000001', '+15550000000']);
  await app.db.owner.query(`update app_public.locations set sms_number = null where organization_id = $1 and name = 'South'`, [a]);
  t.is((await app.db.owner.query(`select organization_id from app_private.inbound_claims where identifier = '+15550000000'`)).rows[0]
    .organization_id, a, 'still the default\'s');
  // widget and form ids are each one row's
  for (const table of ['chat_widgets', 'forms']) {
    const { rows } = await app.db.owner.query(`select indexdef from pg_indexes where schemaname = 'app_public' and tablename = $1
      and indexdef ilike 'create unique index%(id)'`, [table]);
    t.is(rows.length, 1, table);
  }
});

test.serial('a fixture naming another organization\'s number is refused and nothing is applied', async (t) => {
  const count = async () => (await app.db.owner.query(`select count(*)::int as n from app_public.organizations`)).rows[0].n;
  const before = await count();
  const f = acmeFixture('Taker Co');
  f.locations[0]!.sms_number = '+15550000001';
  const err = await t.throwsAsync(app.apply(f));
  t.regex(err!.message, /\+15550000001 is in use by another organization/);
  t.is(await count(), before);
});

test.serial('two organizations claiming one number at once: exactly one holds it', async (t) => {
  const [x, y] = [acme.organization_id, beta.organization_id];
  const results = await Promise.allSettled([x, y].map((id) =>
    app.db.owner.query(`update app_public.organizations set default_sms_number = '+15559990000' where id = $1`, [id])));
  t.is(results.filter((r) => r.status === 'fulfilled').length, 1);
  const { rows } = await app.db.owner.query(`select id from app_public.organizations where default_sms_number = '+15559990000'`);
  t.is(rows.length, 1);
  await app.db.owner.query(`update app_public.organizations set default_sms_number = '+15550000000' where id = $1`, [x]);
  await app.db.owner.query(`update app_public.organizations set default_sms_number = $2 where id = $1`, [y, (await org(y)).default_sms_number === '+15559990000' ? null : (await org(y)).default_sms_number]);
});

test.serial('an operator moves a domain and a number between organizations in one step', async (t) => {
  const url = app.db.ownerUrl;
  const refused = await svc(['admin', 'org', 'move', '--number', '+15550000001', '--to', 'nope'], { databaseUrl: url });
  t.not(refused.code, 0);
  t.regex(refused.stderr, /--to must be a uuid/);
  const north = (await app.db.owner.query(`select id from app_public.locations where organization_id = $1 and name = 'North'`,
    [beta.organization_id])).rows[0].id;
  const moved = await svc(['admin', 'org', 'move', '--number', '+1 555 000 0001', '--to', beta.organization_id, '--location', north],
    { databaseUrl: url });
  t.is(moved.code, 0, moved.stderr);
  t.like(JSON.parse(moved.stdout), { identifier: '+15550000001', from_organization_id: acme.organization_id, to_organization_id: beta.organization_id });
  t.deepEqual(await numbers(acme.organization_id), [null, null]);
  t.is((await numbers(beta.organization_id))[0], '+15550000001');
  const domain = await svc(['admin', 'org', 'move', '--domain', 'acme.example', '--to', beta.organization_id], { databaseUrl: url });
  t.is(domain.code, 0, domain.stderr);
  t.is((await org(beta.organization_id)).sending_email_domain, 'acme.example');
  t.is((await org(acme.organization_id)).sending_email_domain, null);
  // and back: the organization that gave it up can hold it again
  await svc(['admin', 'org', 'move', '--domain', 'acme.example', '--to', acme.organization_id], { databaseUrl: url });
  t.is((await org(acme.organization_id)).sending_email_domain, 'acme.example');
});

test('migrating a database that holds an identifier twice keeps the older organization\'s and clears the newer', async (t) => {
  const { createTestDatabase } = await import('../helpers/db.ts');
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const c = db.owner;
  // the state before the claims: triggers off, the claims emptied, two organizations sharing
  await c.query(`alter table app_public.organizations disable trigger user; alter table app_public.locations disable trigger user;
                 delete from app_private.inbound_claims`);
  const { rows: [old] } = await c.query(`insert into app_public.organizations (name, sending_email_domain, default_sms_number, created_at)
    values ('Old', 'shared.example', '+15557000000', now() - interval '1 year') returning id`);
  const { rows: [young] } = await c.query(`insert into app_public.organizations (name, sending_email_domain, default_sms_number)
    values ('Young', 'SHARED.example', '+15557000001') returning id`);
  await c.query(`insert into app_public.locations (organization_id, name, sms_number) values ($1, 'Y', '+15557000000')`, [young.id]);
  await c.query(`alter table app_public.organizations enable trigger user; alter table app_public.locations enable trigger user`);
  const { readFileSync } = await import('node:fs');
  // the topic of the committed migrations that made app_private.inbound_claims, as it ran on such a database
  const { readdirSync } = await import('node:fs');
  const folder = new URL('../../migrations/committed/', import.meta.url);
  const topic = readdirSync(folder).flatMap((f) => readFileSync(new URL(f, folder), 'utf8').split(/^--! split: /m))
    .find((part) => part.includes('create table if not exists app_private.inbound_claims'));
  t.truthy(topic, 'the inbound claims topic');
  await c.query(topic!.slice(topic!.indexOf('\n') + 1));
  const { rows } = await c.query(`select o.name, o.sending_email_domain, o.default_sms_number,
      (select array_agg(l.sms_number) from app_public.locations l where l.organization_id = o.id) as locs
      from app_public.organizations o where o.id in ($1, $2) order by o.created_at`, [old.id, young.id]);
  t.deepEqual(rows, [
    { name: 'Old', sending_email_domain: 'shared.example', default_sms_number: '+15557000000', locs: null },
    { name: 'Young', sending_email_domain: null, default_sms_number: '+15557000001', locs: [null] },
  ]);
});
