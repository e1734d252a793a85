// The people, agent access and organization pages over HTTP: owners and admins change people,
// roles' agent access and the organization, effective on the next API request; everyone else
// is refused (nothing written); the rules that keep an organization from locking itself out;
// CSRF on every form.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { Browser, signIn as signInAnywhere } from './helpers.ts';

let app: TestApp;
let tenant: Applied;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture()));
});
test.after.always(async () => { await app?.close(); });

// one address may be in both organizations of this suite: sign in to the first's
const signIn = (a: TestApp, email: string) => signInAnywhere(a, email, undefined, tenant.organization_id);
const person = async (id: string) => (await app.db.owner.query(
  `select role, powers, sms_enabled, records_level, agent_access, active,
          array(select location_id::text from app_public.person_locations pl where pl.person_id = p.id order by 1) as locations
     from app_public.people p where id = $1`, [id])).rows[0];
const me = (key: string) => app.request('GET', '/api/v1/me', { key });
const state = (over: Record<string, string | string[]>) => ({
  role: 'member', records_level: 'all', sms_enabled: 'on', agent_access: 'on', active: 'on', ...over,
});

test.serial('an admin changes a person: role, locations, powers, SMS, records level; the next API request follows', async (t) => {
  const admin = await signIn(app, 'adam@acme.example');
  const page = await admin.get('/dashboard/people');
  t.is(page.status, 200);
  t.regex(page.text, new RegExp(`data-person="${tenant.ids.staff}"`));
  const r = await admin.post('/dashboard/people/update', { csrf: Browser.csrf(page), id: tenant.ids.staff!,
    ...state({ role: 'manager', locations: [tenant.ids.north!, tenant.ids.south!], powers: ['contacts'], sms_enabled: '', records_level: 'all' }) });
  t.is(r.status, 200, r.text.slice(-500));
  t.like(await person(tenant.ids.staff!), { role: 'manager', powers: ['contacts'], sms_enabled: false });
  t.is((await person(tenant.ids.staff!)).locations.length, 2);
  const m = await me(tenant.keys.sam_personal!);
  t.is(m.status, 200);
  t.is(m.body.principal.role, 'MANAGER');
  // back to a member at the own-records level, at North only: powers cleared
  await admin.submit('/dashboard/people', '/dashboard/people/update', { id: tenant.ids.staff!,
    ...state({ role: 'member', locations: [tenant.ids.north!], powers: ['contacts'], records_level: 'own' }) });
  t.like(await person(tenant.ids.staff!), { role: 'member', powers: [], records_level: 'own', locations: [tenant.ids.north] });
});

test.serial('agent access off for a person: their personal key gets 401 until it is on again; deactivation revokes', async (t) => {
  const owner = await signIn(app, 'olive@acme.example');
  const id = tenant.ids.quiet!;
  const base = { id, ...state({ role: 'member', locations: [tenant.ids.south!], sms_enabled: '' }) };
  await owner.submit('/dashboard/people', '/dashboard/people/update', { ...base, agent_access: '' });
  t.is((await me(tenant.keys.quiet_personal!)).status, 401);
  await owner.submit('/dashboard/people', '/dashboard/people/update', base);
  t.is((await me(tenant.keys.quiet_personal!)).status, 200);
  const quinn = await signIn(app, 'quinn@acme.example');
  t.is((await quinn.get('/dashboard')).status, 200);
  await owner.submit('/dashboard/people', '/dashboard/people/update', { ...base, active: '' });
  t.is((await me(tenant.keys.quiet_personal!)).status, 401);
  t.is((await quinn.get('/dashboard')).status, 303, 'their session ended');
});

test.serial('an owner\'s agent access is always on; the last owner stays; an admin does not touch owners', async (t) => {
  const owner = await signIn(app, 'olive@acme.example');
  const ownerState = { id: tenant.ids.owner!, ...state({ role: 'owner' }) };
  const off = await owner.submit('/dashboard/people', '/dashboard/people/update', { ...ownerState, agent_access: '' });
  t.is(off.status, 422);
  t.is((await owner.submit('/dashboard/people', '/dashboard/people/update', { ...ownerState, role: 'admin' })).status, 409);
  t.is((await owner.submit('/dashboard/people', '/dashboard/people/update', { ...ownerState, active: '' })).status, 409);
  const roleOff = await owner.submit('/dashboard/agent-access', '/dashboard/agent-access/set', { role: 'owner' });
  t.is(roleOff.status, 422);
  const admin = await signIn(app, 'adam@acme.example');
  t.is((await admin.submit('/dashboard/people', '/dashboard/people/update', { ...ownerState, sms_enabled: '' })).status, 403);
  t.is((await admin.submit('/dashboard/people', '/dashboard/people/update', { id: tenant.ids.weak_mgr!, ...state({ role: 'owner' }) })).status, 403);
  t.like(await person(tenant.ids.owner!), { role: 'owner', agent_access: true, active: true, sms_enabled: true });
  t.like(await person(tenant.ids.weak_mgr!), { role: 'manager' });
  t.is((await app.db.owner.query(`select count(*)::int as n from app_public.role_agent_access where role = 'owner'`)).rows[0]?.n ?? 0, 0);
});

test.serial('members and managers are refused the team pages\' changes, and nothing is written', async (t) => {
  const mgr = await signIn(app, 'max@acme.example');
  const before = await person(tenant.ids.weak_mgr!);
  const page = await mgr.get('/dashboard/people');
  t.regex(page.text, /Only an owner or admin/);
  t.is((await mgr.post('/dashboard/people/update', { csrf: Browser.csrf(page), id: tenant.ids.weak_mgr!, ...state({ role: 'admin' }) })).status, 403);
  t.is((await mgr.post('/dashboard/agent-access/set', { csrf: Browser.csrf(page), role: 'member' })).status, 403);
  t.is((await mgr.post('/dashboard/organization/update', { csrf: Browser.csrf(page), mcp_enabled: '', sending_email_domain: '', default_sms_number: '' })).status, 403);
  t.deepEqual(await person(tenant.ids.weak_mgr!), before);
  t.is((await app.db.owner.query(`select count(*)::int as n from app_public.role_agent_access`)).rows[0].n, 0);
  t.true((await app.db.owner.query(`select mcp_enabled from app_public.organizations where id = $1`, [tenant.organization_id])).rows[0].mcp_enabled);
  // another organization's person is out of reach
  const other = await app.apply(acmeFixture('Other Dental'));
  const admin = await signIn(app, 'adam@acme.example');
  const cross = await admin.submit('/dashboard/people', '/dashboard/people/update', { id: other.ids.staff!, ...state({ role: 'admin' }) });
  t.is(cross.status, 404);
});

test.serial('agent access per role, and the organization settings, effective on the next request', async (t) => {
  const admin = await signIn(app, 'adam@acme.example');
  t.is((await admin.submit('/dashboard/agent-access', '/dashboard/agent-access/set', { role: 'manager' })).status, 200);
  t.is((await me(tenant.keys.mgr_personal!)).status, 401);
  t.is((await me(tenant.keys.north_mgr!)).status, 200, 'organization keys are unaffected');
  await admin.submit('/dashboard/agent-access', '/dashboard/agent-access/set', { role: 'manager', agent_access: 'on' });
  t.is((await me(tenant.keys.mgr_personal!)).status, 200);

  const bad = await admin.submit('/dashboard/organization', '/dashboard/organization/update', { sending_email_domain: 'not a domain', default_sms_number: '', mcp_enabled: 'on' });
  t.is(bad.status, 400);
  const badPhone = await admin.submit('/dashboard/organization', '/dashboard/organization/update', { sending_email_domain: '', default_sms_number: 'call me', mcp_enabled: 'on' });
  t.is(badPhone.status, 400);
  const r = await admin.submit('/dashboard/organization', '/dashboard/organization/update', { sending_email_domain: 'mail.acme.example', default_sms_number: '+1 555 000 0009' });
  t.is(r.status, 200);
  const { rows: [o] } = await app.db.owner.query(`select mcp_enabled, sending_email_domain, default_sms_number from app_public.organizations where id = $1`, [tenant.organization_id]);
  t.deepEqual(o, { mcp_enabled: false, sending_email_domain: 'mail.acme.example', default_sms_number: '+15550000009' });
  const mcp = await app.request('POST', '/api/v1/mcp', { key: tenant.keys.org!, headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
  t.is(mcp.status, 404, 'MCP off at the next request');
  await admin.submit('/dashboard/organization', '/dashboard/organization/update', { mcp_enabled: 'on', sending_email_domain: 'acme.example', default_sms_number: '+15550000000' });
});

test.serial('CSRF: every team form refuses a post without the page\'s token', async (t) => {
  const owner = await signIn(app, 'olive@acme.example');
  const before = await person(tenant.ids.admin!);
  for (const [path, fields] of [
    ['/dashboard/people/update', { id: tenant.ids.admin!, ...state({ role: 'member' }) }],
    ['/dashboard/agent-access/set', { role: 'admin' }],
    ['/dashboard/organization/update', { mcp_enabled: '', sending_email_domain: '', default_sms_number: '' }],
  ] as const) {
    t.is((await owner.post(path, { ...fields })).status, 403, path);
    t.is((await owner.post(path, { ...fields, csrf: 'forged' })).status, 403, path);
  }
  t.deepEqual(await person(tenant.ids.admin!), before);
  t.is((await app.db.owner.query(`select count(*)::int as n from app_public.role_agent_access where role = 'admin'`)).rows[0].n, 0);
  t.true((await app.db.owner.query(`select mcp_enabled from app_public.organizations where id = $1`, [tenant.organization_id])).rows[0].mcp_enabled);
});
