// The keys page over HTTP: each kind of key by the roles that may create it, refusals for the
// others (nothing written), the key shown once and never logged, revocation effective on the
// next API request, CSRF on every keys form.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { Browser, capturingLogs, signIn } from './helpers.ts';

let app: TestApp;
let tenant: Applied;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture()));
});
test.after.always(async () => { await app?.close(); });

const keyCount = async () => (await app.db.owner.query(`select count(*)::int as n from app_private.api_keys`)).rows[0].n as number;
const newKey = (text: string) => /id="new-key">(svc_sk_[A-Za-z0-9]{32})</.exec(text)?.[1];
const create = (b: Browser, fields: Record<string, string | string[]>) => b.submit('/dashboard/keys', '/dashboard/keys/create', fields);
const ALL = ['contacts:read', 'contacts:write'];

test.serial('an owner creates each kind of key, shown once, working at the next API request', async (t) => {
  const b = await signIn(app, 'olive@acme.example');
  const page = await b.get('/dashboard/keys');
  t.is(page.status, 200);
  for (const kind of ['personal', 'organization', 'organization_role', 'location_limited']) t.regex(page.text, new RegExp(`data-kind="${kind}"`));
  const cases: { fields: Record<string, string | string[]>; me: Record<string, unknown> }[] = [
    { fields: { kind: 'personal', name: 'mine', scopes: ALL }, me: { kind: 'personal', role: null } },
    { fields: { kind: 'organization', name: 'whole', scopes: ALL }, me: { kind: 'organization', role: null } },
    { fields: { kind: 'organization_role', name: 'mgr', role: 'MANAGER', powers: ['contacts'], scopes: ALL }, me: { kind: 'organization', role: 'MANAGER', powers: ['contacts'] } },
    { fields: { kind: 'organization_role', name: 'mem', role: 'MEMBER', scopes: ALL }, me: { kind: 'organization', role: 'MEMBER' } },
    { fields: { kind: 'location_limited', name: 'north', role: 'MANAGER', powers: ['contacts'], locations: [tenant.ids.north!], scopes: ALL }, me: { kind: 'organization', role: 'MANAGER', location_ids: [tenant.ids.north] } },
  ];
  for (const c of cases) {
    const r = await create(b, c.fields);
    t.is(r.status, 200, r.text.slice(0, 300));
    const key = newKey(r.text);
    t.truthy(key, String(c.fields.kind));
    const me = await app.request('GET', '/api/v1/me', { key });
    t.is(me.status, 200, String(c.fields.kind));
    t.like(me.body.api_key, c.me, String(c.fields.kind));
    const { rows } = await app.db.owner.query(`select kind, role, powers, scopes, name from app_private.api_keys where key_hash = sha256($1::bytea)`, [Buffer.from(key!)]);
    t.is(rows.length, 1);
    t.deepEqual(rows[0].scopes, ALL);
    t.is(rows[0].name, c.fields.name);
    // shown once: the list never carries it
    const list = await b.get('/dashboard/keys');
    t.false(list.text.includes(key!));
    t.regex(list.text, new RegExp(`>${c.fields.name}<`));
  }
});

test.serial('refusals: each role is refused the kinds it may not create, and nothing is written', async (t) => {
  const member = await signIn(app, 'sam@acme.example');
  const page = await member.get('/dashboard/keys');
  t.regex(page.text, /data-kind="personal"/);
  t.notRegex(page.text, /data-kind="organization/);
  t.notRegex(page.text, /data-kind="location_limited"/);
  const before = await keyCount();
  for (const kind of ['organization', 'organization_role', 'location_limited']) {
    const r = await create(member, { kind, role: 'MEMBER', locations: [tenant.ids.north!], scopes: ALL });
    t.is(r.status, 403, kind);
    t.regex(r.text, /may not create/);
  }
  const weak = await signIn(app, 'wes@acme.example');
  t.is((await create(weak, { kind: 'location_limited', role: 'MEMBER', locations: [tenant.ids.south!], scopes: ALL })).status, 403);
  const mgr = await signIn(app, 'max@acme.example');
  t.is((await create(mgr, { kind: 'organization', scopes: ALL })).status, 403);
  t.is((await create(mgr, { kind: 'organization_role', role: 'MANAGER', scopes: ALL })).status, 403);
  const south = await create(mgr, { kind: 'location_limited', role: 'MANAGER', locations: [tenant.ids.south!], scopes: ALL });
  t.is(south.status, 403, 'not their location');
  t.regex(south.text, /their own locations/);
  // no scope, no location, an unknown scope, an id that is no location
  t.is((await create(mgr, { kind: 'location_limited', role: 'MANAGER', locations: [tenant.ids.north!] })).status, 422);
  t.is((await create(mgr, { kind: 'location_limited', role: 'MANAGER', scopes: ALL })).status, 422);
  t.is((await create(mgr, { kind: 'personal', scopes: ['admin:all'] })).status, 400);
  t.is((await create(mgr, { kind: 'location_limited', role: 'MANAGER', locations: ['nope'], scopes: ALL })).status, 400);
  t.is(await keyCount(), before, 'nothing written');
  // what they may create
  const own = await create(mgr, { kind: 'location_limited', role: 'MANAGER', powers: ['contacts'], locations: [tenant.ids.north!], scopes: ALL });
  t.is(own.status, 200);
  t.truthy(newKey(own.text));
  const mine = await create(member, { kind: 'personal', scopes: ['contacts:read'] });
  t.is(mine.status, 200);
  t.is((await app.request('GET', '/api/v1/me', { key: newKey(mine.text) })).status, 200);
});

test.serial('revoke: effective on the next API request; others\' keys are out of a member\'s reach', async (t) => {
  const owner = await signIn(app, 'olive@acme.example');
  const made = await create(owner, { kind: 'organization', name: 'to-revoke', scopes: ALL });
  const key = newKey(made.text)!;
  t.is((await app.request('GET', '/api/v1/me', { key })).status, 200);
  const { rows: [row] } = await app.db.owner.query(`select id from app_private.api_keys where name = 'to-revoke'`);
  const member = await signIn(app, 'quinn@acme.example');
  const list = await member.get('/dashboard/keys');
  t.false(list.text.includes(row.id), 'a member sees only their own keys');
  const refused = await member.post('/dashboard/keys/revoke', { csrf: Browser.csrf(list), id: row.id });
  t.is(refused.status, 404);
  t.is((await app.request('GET', '/api/v1/me', { key })).status, 200);
  const r = await owner.submit('/dashboard/keys', '/dashboard/keys/revoke', { id: row.id });
  t.is(r.status, 200);
  t.regex(r.text, /data-key="[^"]+"><td>to-revoke<\/td>.*?revoked/s);
  t.is((await app.request('GET', '/api/v1/me', { key })).status, 401);
});

test.serial('CSRF: create and revoke refuse a post without the page\'s token', async (t) => {
  const owner = await signIn(app, 'adam@acme.example');
  const before = await keyCount();
  for (const csrf of [undefined, 'forged', '']) {
    const fields: Record<string, string | string[]> = { kind: 'organization', scopes: ALL };
    if (csrf !== undefined) fields.csrf = csrf;
    t.is((await owner.post('/dashboard/keys/create', fields)).status, 403);
  }
  t.is(await keyCount(), before);
  const id = tenant.key_ids.org!;
  t.is((await owner.post('/dashboard/keys/revoke', { csrf: 'forged', id })).status, 403);
  const { rows } = await app.db.owner.query(`select revoked_at from app_private.api_keys where id = $1`, [id]);
  t.is(rows[0].revoked_at, null);
  // signed out: a post is 401
  t.is((await new Browser(app.url).post('/dashboard/keys/create', { kind: 'personal', scopes: ALL })).status, 401);
});

test.serial('a new key is never logged, though the request is', async (t) => {
  const owner = await signIn(app, 'olive@acme.example');
  const page = await owner.get('/dashboard/keys');
  const { result: r, written } = await capturingLogs(() =>
    owner.post('/dashboard/keys/create', { csrf: Browser.csrf(page), kind: 'personal', scopes: ALL }));
  const key = newKey(r.text);
  t.truthy(key);
  t.regex(written, /\/dashboard\/keys\/create/, 'the log was captured');
  t.false(written.includes(key!));
  t.false(written.includes(key!.slice(7)));
});

test.serial('an organization key created while its creator is being demoted is refused (or revoked): never live', async (t) => {
  const adam = await signIn(app, 'adam@acme.example');
  t.is((await adam.get('/dashboard/keys')).status, 200);
  const client = await app.db.owner.connect();
  try {
    await client.query('begin');
    await client.query(`update app_public.people set role = 'member', powers = '{}' where id = $1`, [tenant.ids.admin]);
    const created = create(adam, { kind: 'organization', name: 'racing', scopes: ALL });
    await new Promise((r) => setTimeout(r, 300));
    await client.query('commit');
    const r = await created;
    t.is(newKey(r.text), undefined, 'no key shown');
  } finally {
    client.release();
  }
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_private.api_keys
    where created_by = $1 and kind = 'organization' and revoked_at is null`, [tenant.ids.admin]);
  t.is(rows[0].n, 0);
  await app.db.owner.query(`update app_public.people set role = 'admin' where id = $1`, [tenant.ids.admin]);
});
