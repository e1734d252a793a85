// Sign-in by email link, the session cookie, sign-out, and the session's end at deactivation;
// session fixation, CSRF on the sign-in forms and open redirects.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { updateUser } from '../../src/admin/commands.ts';
import express from 'express';
import { listen } from '../../src/server.ts';
import { currentPerson, requireSignIn, safeReturnTo } from '../../src/dashboard/session.ts';
import { Browser, capturingLogs, lastLink, signIn } from './helpers.ts';

let app: TestApp;
let tenant: Applied;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture()));
});
test.after.always(async () => { await app?.close(); });

const sessionCount = async (email: string) => (await app.db.owner.query(
  `select count(*)::int as n from app_private.dashboard_sessions s join app_public.people p
      on p.organization_id = s.organization_id and p.id = s.person_id where p.email = $1`, [email])).rows[0].n as number;

test.serial('a signed-out visit is sent to sign-in with where it was going', async (t) => {
  const b = new Browser(app.url);
  const r = await b.get('/dashboard?x=1');
  t.is(r.status, 303);
  t.is(r.location, '/dashboard/sign-in?return_to=%2Fdashboard%3Fx%3D1');
});

test.serial('sign in by the emailed link: HttpOnly, SameSite=Lax cookie, hashed session, link stored as a hash', async (t) => {
  const b = new Browser(app.url);
  const form = await b.get('/dashboard/sign-in?return_to=%2Fdashboard%2Fpeople');
  t.is(form.status, 200);
  t.regex(form.text, /name="return_to" value="\/dashboard\/people"/);
  const asked = await b.post('/dashboard/sign-in', { csrf: Browser.csrf(form), email: 'adam@acme.example', return_to: '/dashboard/people' });
  t.is(asked.status, 200);
  const link = new URL(await lastLink(app, 'adam@acme.example'));
  const token = link.searchParams.get('token')!;
  const { rows: links } = await app.db.owner.query(`select token_hash, l.expires_at - l.created_at < interval '16 minutes' as short
    from app_private.dashboard_links l join app_public.people p on p.id = l.person_id where p.email = 'adam@acme.example'`);
  t.is(links.length, 1);
  t.true(links[0].short);
  t.notDeepEqual(links[0].token_hash, Buffer.from(token));
  // a link scanner's GET spends nothing
  const landing = await b.get(link.pathname + link.search);
  t.is(landing.status, 200);
  const done = await b.post('/dashboard/sign-in/link', { csrf: Browser.csrf(landing), token });
  t.is(done.status, 303);
  t.is(done.location, '/dashboard/people');
  const cookie = done.cookies.find((c) => c.startsWith('svc_session='))!;
  t.regex(cookie, /HttpOnly/);
  t.regex(cookie, /SameSite=Lax/);
  t.notRegex(cookie, /Secure/);
  const id = cookie.split(';')[0]!.split('=')[1]!;
  const stored = await app.db.owner.query(`select 1 from app_private.dashboard_sessions where session_hash::text like $1`, [`%${Buffer.from(id).toString('hex')}%`]);
  t.is(stored.rowCount, 0, 'the session id is not stored as it is');
  t.is((await b.get('/dashboard')).status, 200);
  // the link is single-use
  const again = await new Browser(app.url).get(link.pathname + link.search);
  const reuse = await new Browser(app.url).post('/dashboard/sign-in/link', { csrf: 'x', token });
  t.is(reuse.status, 403, 'without the pre-session CSRF token');
  const b2 = new Browser(app.url);
  const l2 = await b2.get(link.pathname + link.search);
  t.is(again.status, 200);
  const spent = await b2.post('/dashboard/sign-in/link', { csrf: Browser.csrf(l2), token });
  t.is(spent.status, 400);
  t.false(b2.jar.has('svc_session'));
});

test.serial('an unknown address gets the same answer and no email', async (t) => {
  const b = new Browser(app.url);
  const r = await b.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'nobody@acme.example' });
  t.is(r.status, 200);
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_private.outgoing_messages where recipient = 'nobody@acme.example'`);
  t.is(rows[0].n, 0);
});

test.serial('an expired link signs nobody in', async (t) => {
  const b = new Browser(app.url);
  await b.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'max@acme.example' });
  const link = new URL(await lastLink(app, 'max@acme.example'));
  await app.db.owner.query(`update app_private.dashboard_links set expires_at = now() - interval '1 second'
     where person_id = (select id from app_public.people where email = 'max@acme.example')`);
  const landing = await b.get(link.pathname + link.search);
  const r = await b.post('/dashboard/sign-in/link', { csrf: Browser.csrf(landing), token: link.searchParams.get('token')! });
  t.is(r.status, 400);
  t.false(b.jar.has('svc_session'));
});

test.serial('session fixation: a session id the browser brings is never the one it gets', async (t) => {
  const b = new Browser(app.url);
  const planted = 'A'.repeat(43);
  b.jar.set('svc_session', planted);
  await signIn(app, 'quinn@acme.example', b);
  t.not(b.jar.get('svc_session'), planted);
  t.is((await b.get('/dashboard')).status, 200);
  const fixed = new Browser(app.url);
  fixed.jar.set('svc_session', planted);
  t.is((await fixed.get('/dashboard')).status, 303, 'the planted id opens nothing');
});

test.serial('CSRF: the sign-in forms and sign-out refuse a post without the token', async (t) => {
  const b = new Browser(app.url);
  await b.get('/dashboard/sign-in');
  const before = (await app.db.owner.query(`select count(*)::int as n from app_private.dashboard_links`)).rows[0].n;
  t.is((await b.post('/dashboard/sign-in', { email: 'adam@acme.example' })).status, 403);
  t.is((await b.post('/dashboard/sign-in', { csrf: 'forged', email: 'adam@acme.example' })).status, 403);
  t.is((await app.db.owner.query(`select count(*)::int as n from app_private.dashboard_links`)).rows[0].n, before, 'no link issued');
  const signedIn = await signIn(app, 'sam@acme.example');
  t.is((await signedIn.post('/dashboard/sign-out', { csrf: 'forged' })).status, 403);
  t.is((await signedIn.get('/dashboard')).status, 200, 'still signed in');
  // the pre-session token does not pass for a signed-in session's form
  const pre = new Browser(app.url);
  const prePage = await pre.get('/dashboard/sign-in');
  signedIn.jar.set('svc_presession', pre.jar.get('svc_presession')!);
  t.is((await signedIn.post('/dashboard/sign-out', { csrf: Browser.csrf(prePage) })).status, 403);
});

test.serial('sign-out ends the session in the database', async (t) => {
  const b = await signIn(app, 'wes@acme.example');
  const home = await b.get('/dashboard');
  const id = b.jar.get('svc_session')!;
  t.is((await b.post('/dashboard/sign-out', { csrf: Browser.csrf(home) })).status, 303);
  t.is(await sessionCount('wes@acme.example'), 0);
  const replay = new Browser(app.url);
  replay.jar.set('svc_session', id);
  t.is((await replay.get('/dashboard')).status, 303);
});

test.serial('deactivation ends the person\'s sessions', async (t) => {
  const { app: other, tenant: ten } = await startWithTenant(acmeFixture());
  try {
    const b = await signIn(other, 'sam@acme.example');
    const owner = await signIn(other, 'olive@acme.example');
    t.is((await b.get('/dashboard')).status, 200);
    await updateUser(other.db.owner, { id: ten.ids.staff, active: 'off' });
    t.is((await b.get('/dashboard')).status, 303);
    t.is((await other.db.owner.query(`select count(*)::int as n from app_private.dashboard_sessions`)).rows[0].n, 1, 'only others remain');
    t.is((await owner.get('/dashboard')).status, 200);
  } finally {
    await other.close();
  }
  t.truthy(tenant);
});

test.serial('open redirects: return_to keeps only same-origin paths', async (t) => {
  // the last ones resolve to "//evil.example/x": what a browser reads as another origin
  for (const bad of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/\tx', 'dashboard', '',
    '/.//evil.example/x', '/a/..//evil.example/x', '/%2e//evil.example/x', '/./\\evil.example']) {
    t.is(safeReturnTo(bad), null, bad);
  }
  t.is(safeReturnTo('/dashboard/keys?a=1'), '/dashboard/keys?a=1');
  t.is(safeReturnTo('/oauth/authorize?client_id=x'), '/oauth/authorize?client_id=x');
  const b = new Browser(app.url);
  const form = await b.get('/dashboard/sign-in?return_to=%2F%2Fevil.example');
  t.notRegex(form.text, /evil/);
  t.notRegex((await b.get('/dashboard/sign-in?return_to=%2F.%2F%2Fevil.example%2Fx')).text, /evil/);
  await b.post('/dashboard/sign-in', { csrf: Browser.csrf(form), email: 'olive@acme.example', return_to: 'https://evil.example/' });
  const link = new URL(await lastLink(app, 'olive@acme.example'));
  const landing = await b.get(link.pathname + link.search);
  const done = await b.post('/dashboard/sign-in/link', { csrf: Browser.csrf(landing), token: link.searchParams.get('token')! });
  t.is(done.location, '/dashboard');
});

test.serial('Secure cookie under an https base URL', async (t) => {
  const { app: secure } = await startWithTenant(acmeFixture(), { env: { SVC_BASE_URL: 'https://svc.example' } });
  try {
    const b = new Browser(secure.url);
    const form = await b.get('/dashboard/sign-in');
    t.true(form.cookies.every((c) => c.startsWith('__Host-') && /; Secure/.test(c)));
    await signIn(secure, 'olive@acme.example', b);
    t.true(b.jar.has('__Host-svc_session'));
    t.regex(await lastLink(secure, 'olive@acme.example'), /^https:\/\/svc\.example\/dashboard\/sign-in\/link\?token=/);
  } finally {
    await secure.close();
  }
});

test.serial('in sink mode the link is also logged, so a local user can sign in', async (t) => {
  const b = new Browser(app.url);
  const form = await b.get('/dashboard/sign-in');
  const { written } = await capturingLogs(() => b.post('/dashboard/sign-in', { csrf: Browser.csrf(form), email: 'max@acme.example' }));
  const link = await lastLink(app, 'max@acme.example');
  t.true(written.includes(link));
  t.regex(written, /dashboard sign-in link \(sink mode\)/);
});

test.serial('requireSignIn and currentPerson, as another page (the OAuth consent page) uses them', async (t) => {
  const consent = express();
  consent.get('/oauth/authorize', requireSignIn({ pool: app.pool, config: app.config }), (req, res) => { res.json(currentPerson(req)); });
  const server = await listen(consent, 0, '127.0.0.1');
  try {
    const address = server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const out = await fetch(`${url}/oauth/authorize?client_id=x&state=y`, { redirect: 'manual' });
    t.is(out.status, 303);
    t.is(out.headers.get('location'), '/dashboard/sign-in?return_to=%2Foauth%2Fauthorize%3Fclient_id%3Dx%26state%3Dy');
    const b = await signIn(app, 'max@acme.example');
    const res = await fetch(`${url}/oauth/authorize?client_id=x`, { headers: { cookie: b.cookieHeader() } });
    t.deepEqual(await res.json(), { organization_id: tenant.organization_id, person_id: tenant.ids.mgr });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test.serial('at most five links per person in fifteen minutes: a stranger cannot flood a mailbox', async (t) => {
  const { app: other } = await startWithTenant(acmeFixture());
  try {
    const b = new Browser(other.url);
    for (let i = 0; i < 7; i++) t.is((await b.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'wes@acme.example' })).status, 200);
    const { rows } = await other.db.owner.query(`select count(*)::int as n from app_private.outgoing_messages where recipient = 'wes@acme.example'`);
    t.is(rows[0].n, 5);
    t.is((await other.db.owner.query(`select count(*)::int as n from app_private.dashboard_links`)).rows[0].n, 5);
  } finally {
    await other.close();
  }
});
