// Malformed posts to every dashboard form: no 5xx, a clear 4xx and nothing written; and one
// link redeemed by several browsers at once opens one session.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { AREAS } from '../../src/areas.ts';
import { Browser, lastLink, signIn } from './helpers.ts';

let app: TestApp;
let tenant: Applied;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture()));
});
test.after.always(async () => { await app?.close(); });

// everything the dashboard's forms can change, as one value
const snapshot = async () => (await app.db.owner.query(`select
  (select jsonb_agg(k order by k.id) from (select id, revoked_at, role, powers, scopes from app_private.api_keys) k) as keys,
  (select jsonb_agg(p order by p.id) from (select id, role, powers, sms_enabled, records_level, agent_access, active from app_public.people) p) as people,
  (select jsonb_agg(pl order by pl.person_id, pl.location_id) from app_public.person_locations pl) as person_locations,
  (select jsonb_agg(r order by r.organization_id, r.role) from app_public.role_agent_access r) as role_access,
  (select jsonb_agg(o order by o.id) from (select id, mcp_enabled, sending_email_domain, default_sms_number from app_public.organizations) o) as orgs,
  (select count(*) from app_private.dashboard_links) as links`)).rows[0];

const POSTS = AREAS.find((a) => a.name === 'dashboard')!.pages!.filter((p) => p.method === 'POST').map((p) => p.path);
const GARBAGE: Record<string, string | string[]>[] = [
  {},
  { kind: 'root' }, { kind: ['personal', 'organization'] }, { id: 'x' }, { id: "'; drop table x; --" },
  { role: 'god', records_level: 'some', id: '00000000-0000-0000-0000-000000000000' },
  { scopes: ['contacts:read', '__proto__'], kind: 'personal' }, { locations: ['nope'], kind: 'location_limited', role: 'MANAGER' },
  { powers: ['flying'], role: 'Manager', id: '00000000-0000-0000-0000-000000000000', records_level: 'all' },
  { email: 'a'.repeat(5000) }, { token: '\u0000' }, { sending_email_domain: '\ud800', default_sms_number: '+1' },
  { name: 'x'.repeat(10_000), kind: 'personal', scopes: 'contacts:read' },
];

test.serial('garbage posted to every form: a 4xx, never a 5xx, and nothing written', async (t) => {
  t.true(POSTS.length >= 8);
  const owner = await signIn(app, 'olive@acme.example');
  const csrf = Browser.csrf(await owner.get('/dashboard/keys'));
  const signedOut = new Browser(app.url);
  const preCsrf = Browser.csrf(await signedOut.get('/dashboard/sign-in'));
  const before = await snapshot();
  for (const path of POSTS) {
    if (path === '/dashboard/sign-out') continue;
    const [who, token] = path.startsWith('/dashboard/sign-in') ? [signedOut, preCsrf] : [owner, csrf];
    for (const fields of GARBAGE) {
      const r = await who.post(path, { csrf: token, ...fields });
      t.true(r.status >= 400 && r.status < 500, `${path} ${JSON.stringify(fields).slice(0, 80)} answered ${r.status}`);
    }
    const wrongType = await who.request('POST', path, undefined, { 'content-type': 'application/json' });
    t.is(wrongType.status, 415, path);
    const tooBig = await who.post(path, { csrf: token, name: 'x'.repeat(20_000) });
    t.is(tooBig.status, 413, path);
  }
  t.deepEqual(await snapshot(), before);
});

test.serial('one link redeemed by several browsers at once opens one session', async (t) => {
  const asker = new Browser(app.url);
  await asker.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'adam@acme.example' });
  const link = new URL(await lastLink(app, 'adam@acme.example', tenant.organization_id));
  const browsers = Array.from({ length: 6 }, () => new Browser(app.url));
  const landings = await Promise.all(browsers.map((b) => b.get(link.pathname + link.search)));
  const answers = await Promise.all(browsers.map((b, i) =>
    b.post('/dashboard/sign-in/link', { csrf: Browser.csrf(landings[i]!), token: link.searchParams.get('token')! })));
  t.deepEqual(answers.map((a) => a.status).sort(), [303, 400, 400, 400, 400, 400]);
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_private.dashboard_sessions s
    join app_public.people p on p.organization_id = s.organization_id and p.id = s.person_id where p.email = 'adam@acme.example'`);
  t.is(rows[0].n, 1);
});
