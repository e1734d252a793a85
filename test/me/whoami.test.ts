// me_get for every kind of credential (spec: Whoami).
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { ALL_SCOPES, SCOPES } from '../../src/auth/scopes.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(acmeFixture(), { env: { SVC_RATE_LIMIT: '250' } })); });
test.after.always(async () => { await app?.close(); });

const me = async (ref: string) => (await app.request('GET', '/api/v1/me', { key: acme.keys[ref] })).body;

test('organization key: whole organization, no role, no principal', async (t) => {
  const body = await me('org');
  t.deepEqual(body.organization, { id: acme.organization_id, name: 'Acme Dental' });
  t.deepEqual(body.api_key, { id: acme.key_ids.org, kind: 'organization', scopes: ALL_SCOPES, role: null, location_ids: null, powers: null });
  t.false('principal' in body);
  t.deepEqual(body.scopes_available, Object.entries(SCOPES).map(([scope, label]) => ({ scope, label })));
  t.deepEqual(body.rate_limit, { limit: 250, window_seconds: 60 });
});

test('scope-limited key shows its scopes', async (t) => {
  t.deepEqual((await me('org_reader')).api_key.scopes, ['contacts:read']);
});

test('location-limited manager key: role, locations and powers fixed at creation', async (t) => {
  t.like((await me('north_mgr')).api_key, { role: 'MANAGER', location_ids: [acme.ids.north], powers: ['contacts'] });
  t.like((await me('mgr_key')).api_key, { role: 'MANAGER', location_ids: null, powers: ['contacts', 'sequences', 'appointments', 'staff'] });
});

test('member key: role MEMBER, no powers', async (t) => {
  t.like((await me('member_key')).api_key, { role: 'MEMBER', location_ids: null, powers: [] });
});

test('personal keys show the person as principal', async (t) => {
  const owner = await me('owner_personal');
  t.deepEqual(owner.principal, { user_id: acme.ids.owner, role: 'OWNER', location_ids: null });
  t.like(owner.api_key, { kind: 'personal', role: null, location_ids: null, powers: null });
  const mgr = await me('mgr_personal');
  t.deepEqual(mgr.principal, { user_id: acme.ids.mgr, role: 'MANAGER', location_ids: [acme.ids.north] });
  t.like(mgr.api_key, { role: 'MANAGER', powers: ['contacts', 'sequences', 'appointments', 'staff'] });
});
