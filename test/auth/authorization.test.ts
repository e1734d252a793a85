// Authorization from the registry (spec: Authentication 5-7): scope, member access, manager
// power and location reach, exercised through probe operations carrying each flag.
import test from 'ava';
import { startApp, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { probeOperations } from '../helpers/probes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  app = await startApp({ operations: probeOperations });
  acme = await app.apply({
    ...acmeFixture(),
    api_keys: [
      ...acmeFixture().api_keys,
      { ref: 'member_reader', kind: 'organization', created_by_ref: 'owner', role: 'MEMBER', scopes: ['contacts:read'] },
    ],
  });
});
test.after.always(async () => { await app?.close(); });

const write = (key: string | undefined, body: unknown = { name: 'x' }) => app.request('POST', '/api/v1/probe/write', { key, body });

test('a key without the scope gets 403 insufficient_scope naming it', async (t) => {
  const res = await write(acme.keys.org_reader);
  t.is(res.status, 403);
  t.is(res.body.error, 'insufficient_scope');
  t.is(res.body.required, 'contacts:write');
  t.is((await app.request('GET', `/api/v1/probe/contacts/${acme.ids.ann}`, { key: acme.keys.org_reader })).status, 200);
});

test('scope is checked before role', async (t) => {
  const res = await write(acme.keys.member_reader);
  t.is(res.body.error, 'insufficient_scope');
});

test('an operation with no scope is open to any live key', async (t) => {
  t.is((await app.request('GET', '/api/v1/me', { key: acme.keys.org_reader })).status, 200);
});

test('member access deny: a MEMBER gets 403 insufficient_role', async (t) => {
  for (const key of ['member_key', 'sam_personal', 'north_member']) {
    const res = await write(acme.keys[key]);
    t.is(res.status, 403, key);
    t.is(res.body.error, 'insufficient_role', key);
    t.is((await app.request('POST', '/api/v1/probe/deny', { key: acme.keys[key] })).status, 403, key);
  }
});

test('member access open and scoped: a MEMBER may call', async (t) => {
  t.is((await app.request('GET', '/api/v1/probe/open', { key: acme.keys.member_key })).status, 200);
  t.is((await app.request('GET', `/api/v1/probe/contacts/${acme.ids.ann}`, { key: acme.keys.sam_personal })).status, 200);
});

test('member access sms_setting: allowed while the SMS setting is on; a Member key sends no SMS', async (t) => {
  t.is((await app.request('POST', '/api/v1/probe/sms', { key: acme.keys.sam_personal })).status, 200);
  const off = await app.request('POST', '/api/v1/probe/sms', { key: acme.keys.quiet_personal });
  t.is(off.status, 403);
  t.is(off.body.error, 'insufficient_role');
  t.is((await app.request('POST', '/api/v1/probe/sms', { key: acme.keys.member_key })).status, 403);
});

test('a MANAGER may call deny operations only with their manager power', async (t) => {
  t.is((await write(acme.keys.mgr_key)).status, 200, 'manager key with every power from an owner');
  t.is((await write(acme.keys.north_mgr)).status, 200, 'location manager key with the contacts power');
  t.is((await write(acme.keys.mgr_personal)).status, 200, 'manager with powers');
  const weak = await write(acme.keys.weak_mgr_personal);
  t.is(weak.status, 403);
  t.is(weak.body.error, 'insufficient_role');
  t.is((await app.request('POST', '/api/v1/probe/sms', { key: acme.keys.weak_mgr_personal })).status, 403);
  t.is((await app.request('POST', '/api/v1/probe/sms', { key: acme.keys.mgr_personal })).status, 200);
});

test('a MANAGER does not call plain deny operations (no manager power)', async (t) => {
  for (const key of ['mgr_key', 'mgr_personal', 'north_mgr']) {
    const res = await app.request('POST', '/api/v1/probe/deny', { key: acme.keys[key] });
    t.is(res.status, 403, key);
    t.is(res.body.error, 'insufficient_role');
  }
});

test('owners, admins and organization keys may call everything', async (t) => {
  for (const key of ['org', 'admin_org', 'owner_personal', 'admin_personal']) {
    t.is((await write(acme.keys[key])).status, 200, key);
    t.is((await app.request('POST', '/api/v1/probe/deny', { key: acme.keys[key] })).status, 200, key);
    t.is((await app.request('POST', '/api/v1/probe/sms', { key: acme.keys[key] })).status, 200, key);
  }
});

test('location limits: a record at another location, or at none, is 404', async (t) => {
  const get = (key: string, id: string) => app.request('GET', `/api/v1/probe/contacts/${id}`, { key: acme.keys[key] });
  for (const key of ['north_mgr', 'north_member', 'sam_personal', 'mgr_personal']) {
    t.is((await get(key, acme.ids.ann!)).status, 200, `${key} reads a north contact`);
    const south = await get(key, acme.ids.bob!);
    t.is(south.status, 404, `${key} cannot see a south contact`);
    t.is(south.body.error, 'not_found');
    t.is((await get(key, acme.ids.cy!)).status, 404, `${key} cannot see a contact with no location`);
  }
  for (const key of ['org', 'member_key', 'mgr_key', 'owner_personal']) {
    for (const c of ['ann', 'bob', 'cy']) t.is((await get(key, acme.ids[c]!)).status, 200, `${key} reaches ${c}`);
  }
  const loc = await app.request('GET', `/api/v1/probe/locations/${acme.ids.south}`, { key: acme.keys.north_mgr });
  t.is(loc.status, 404);
});

test('validation comes after authentication and authorization', async (t) => {
  t.is((await write(undefined, { nope: true })).status, 401);
  t.is((await app.request('POST', '/api/v1/probe/write', { rawBody: '{not json' })).status, 401);
  t.is((await write(acme.keys.member_key, { nope: true })).status, 403);
  t.is((await write(acme.keys.org_reader, { nope: true })).body.error, 'insufficient_scope');
  t.is((await app.request('GET', '/api/v1/probe/contacts/not-a-uuid', { key: acme.keys.member_reader })).status, 400);
  t.is((await app.request('GET', '/api/v1/probe/contacts/not-a-uuid')).status, 401);
  const bad = await write(acme.keys.org, { nope: true });
  t.is(bad.status, 400);
});

test('a body field never authenticates', async (t) => {
  const res = await app.request('POST', '/api/v1/probe/write', { body: { name: 'x', api_key: acme.keys.org, key: acme.keys.org } });
  t.is(res.status, 401);
});

test('a multi-statement handler runs as the request role with the claims', async (t) => {
  const res = await app.request('GET', '/api/v1/probe/tx', { key: acme.keys.north_mgr });
  t.is(res.status, 200);
  t.is(res.body.role, 'svc_request');
  t.is(res.body.org, acme.organization_id);
  t.is(res.body.claims_org, acme.organization_id);
  t.deepEqual(res.body.contacts, [acme.ids.ann]);
  const denied = await app.request('GET', '/api/v1/probe/tx', { key: acme.keys.member_key!.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')) });
  t.is(denied.status, 401);
});
