// Authentication (spec: Authentication 1-4): only `Authorization: Bearer <key>` counts, and
// every failure is the same 401.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { revokeKey, setRoleAccess, updateUser } from '../../src/admin/commands.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(acmeFixture())); });
test.after.always(async () => { await app?.close(); });

const stable = (body: Record<string, unknown>) => ({ ...body, timestamp: undefined });

async function expect401(t: import('ava').ExecutionContext, res: { status: number; body: any; headers: Headers }) {
  t.is(res.status, 401);
  t.deepEqual(stable(res.body), {
    statusCode: 401, error: 'unauthorized', message: 'Invalid or missing API key', path: '/api/v1/me', timestamp: undefined,
  });
  t.is(res.headers.get('www-authenticate'), 'Bearer');
}

test('a valid key in the Bearer header authenticates', async (t) => {
  const res = await app.request('GET', '/api/v1/me', { key: acme.keys.org });
  t.is(res.status, 200);
  t.is(res.body.organization.id, acme.organization_id);
});

test('the scheme name is case-insensitive', async (t) => {
  for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
    const res = await app.request('GET', '/api/v1/me', { headers: { authorization: `${scheme} ${acme.keys.org}` } });
    t.is(res.status, 200, scheme);
  }
});

test('every authentication failure is the same 401', async (t) => {
  const key = acme.keys.org!;
  const cases: Record<string, Record<string, string>> = {
    'no header': {},
    'empty header': { authorization: '' },
    'scheme only': { authorization: 'Bearer' },
    'basic scheme': { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
    'token scheme': { authorization: `Token ${key}` },
    'key without scheme': { authorization: key },
    'too short': { authorization: `Bearer ${key.slice(0, -1)}` },
    'too long': { authorization: `Bearer ${key}x` },
    'wrong prefix': { authorization: `Bearer svc_pk_${key.slice(7)}` },
    'bad characters': { authorization: `Bearer svc_sk_${'!'.repeat(32)}` },
    'unknown key': { authorization: `Bearer svc_sk_${'A'.repeat(32)}` },
    'two keys': { authorization: `Bearer ${key} ${key}` },
  };
  for (const [name, headers] of Object.entries(cases)) {
    const res = await app.request('GET', '/api/v1/me', { headers });
    t.is(res.status, 401, name);
    await expect401(t, res);
  }
});

test('no query parameter, cookie or other header authenticates', async (t) => {
  const key = acme.keys.org!;
  for (const path of [`/api/v1/me?api_key=${key}`, `/api/v1/me?access_token=${key}`, `/api/v1/me?key=${key}`]) {
    const res = await app.request('GET', path);
    t.is(res.status, 401);
  }
  await expect401(t, await app.request('GET', '/api/v1/me', { headers: { cookie: `api_key=${key}; token=${key}` } }));
  await expect401(t, await app.request('GET', '/api/v1/me', { headers: { 'x-api-key': key } }));
});

test('a revoked key gets 401 on the next request', async (t) => {
  const fresh = await app.apply(acmeFixture('Revoke Co'));
  t.is((await app.request('GET', '/api/v1/me', { key: fresh.keys.org })).status, 200);
  await revokeKey(app.db.owner, fresh.key_ids.org);
  await expect401(t, await app.request('GET', '/api/v1/me', { key: fresh.keys.org }));
  t.is((await app.request('GET', '/api/v1/me', { key: fresh.keys.admin_org })).status, 200, 'other keys unaffected');
});

test('deactivating a person revokes their personal keys for good', async (t) => {
  const f = await app.apply(acmeFixture('Deactivate Co'));
  await updateUser(app.db.owner, { id: f.ids.staff, active: 'false' });
  await expect401(t, await app.request('GET', '/api/v1/me', { key: f.keys.sam_personal }));
  await updateUser(app.db.owner, { id: f.ids.staff, active: 'true' });
  await expect401(t, await app.request('GET', '/api/v1/me', { key: f.keys.sam_personal }));
});

test('agent access off for a person: their personal keys get 401, organization keys do not', async (t) => {
  const f = await app.apply(acmeFixture('Agent Access Co'));
  await updateUser(app.db.owner, { id: f.ids.admin, agentAccess: 'off' });
  await expect401(t, await app.request('GET', '/api/v1/me', { key: f.keys.admin_personal }));
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.admin_org })).status, 200, 'organization key created by the same person');
  await updateUser(app.db.owner, { id: f.ids.admin, agentAccess: 'on' });
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.admin_personal })).status, 200, 'nothing was revoked');
});

test('agent access off for a role: personal keys of that role get 401; an owner is always on', async (t) => {
  const f = await app.apply(acmeFixture('Role Switch Co'));
  await setRoleAccess(app.db.owner, f.organization_id, 'member', 'off');
  await expect401(t, await app.request('GET', '/api/v1/me', { key: f.keys.sam_personal }));
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.mgr_personal })).status, 200, 'other roles unaffected');
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.member_key })).status, 200, 'a Member organization key is unaffected');
  await setRoleAccess(app.db.owner, f.organization_id, 'admin', 'off');
  await expect401(t, await app.request('GET', '/api/v1/me', { key: f.keys.admin_personal }));
  await updateUser(app.db.owner, { id: f.ids.owner, agentAccess: 'off' });
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.owner_personal })).status, 200, 'owner always on');
  await setRoleAccess(app.db.owner, f.organization_id, 'member', 'on');
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.sam_personal })).status, 200);
  await t.throwsAsync(setRoleAccess(app.db.owner, f.organization_id, 'owner', 'off'), { message: /always on/ });
});

test('a personal key follows demotion at once', async (t) => {
  const f = await app.apply(acmeFixture('Demotion Co'));
  let me = await app.request('GET', '/api/v1/me', { key: f.keys.admin_personal });
  t.is(me.body.principal.role, 'ADMIN');
  t.is(me.body.api_key.location_ids, null);
  await updateUser(app.db.owner, { id: f.ids.admin, role: 'member', locations: f.ids.south });
  me = await app.request('GET', '/api/v1/me', { key: f.keys.admin_personal });
  t.is(me.status, 200, 'keeps working with the lower role');
  t.is(me.body.principal.role, 'MEMBER');
  t.deepEqual(me.body.principal.location_ids, [f.ids.south]);
  t.is(me.body.api_key.role, 'MEMBER');
});

test('an organization key is revoked when its creator loses what it carries', async (t) => {
  const f = await app.apply(acmeFixture('Creator Co'));
  // a manager with the staff power made staff_mgr_key for north with the contacts power
  await updateUser(app.db.owner, { id: f.ids.mgr, powers: 'contacts,sequences,appointments' });
  await expect401(t, await app.request('GET', '/api/v1/me', { key: f.keys.staff_mgr_key }));
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.mgr_personal })).status, 200, 'the manager\'s own key still works');
  await updateUser(app.db.owner, { id: f.ids.admin, role: 'manager' });
  await expect401(t, await app.request('GET', '/api/v1/me', { key: f.keys.admin_org }));
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.org })).status, 200, 'keys of other creators unaffected');
});
