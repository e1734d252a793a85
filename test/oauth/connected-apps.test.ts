// The dashboard's connected apps page: who sees which grants, revoke, CSRF.
import test from 'ava';
import type { TestApp } from '../helpers/app.ts';
import { Browser } from '../dashboard/helpers.ts';
import { as, codeFor, exchange, pkce, registerClient, startOAuthApp } from './helpers.ts';

let app: TestApp;
let clientId: string;
test.before(async () => {
  ({ app } = await startOAuthApp());
  clientId = await registerClient(app, { client_name: 'Calendar agent' });
});
test.after.always(async () => { await app?.close(); });

async function connect(email: string): Promise<string> {
  const { verifier, challenge } = pkce();
  const code = await codeFor(app, clientId, await as(app, email), challenge);
  return (await exchange(app, clientId, code, verifier)).body.access_token;
}
const grantIds = (html: string) => [...html.matchAll(/data-grant="([^"]+)"/g)].map((m) => m[1]!);
const live = async (token: string) => (await app.request('GET', '/api/v1/me', { key: token })).status;

test.serial('people see their own apps, owners everyone\'s; revoke ends the tokens; CSRF is checked', async (t) => {
  const ownerToken = await connect('olive@acme.example');
  const staffToken = await connect('sam@acme.example');
  const owner = await as(app, 'olive@acme.example');
  const staff = await as(app, 'sam@acme.example');

  const ownerPage = await owner.get('/dashboard/connected-apps');
  t.is(ownerPage.status, 200);
  t.regex(ownerPage.text, /Calendar agent/);
  t.regex(ownerPage.text, /contacts:read contacts:write conversations:write/);
  t.is(grantIds(ownerPage.text).length, 2);
  const staffPage = await staff.get('/dashboard/connected-apps');
  const [staffGrant] = grantIds(staffPage.text);
  t.is(grantIds(staffPage.text).length, 1);
  const ownerGrant = grantIds(ownerPage.text).find((id) => id !== staffGrant)!;

  // a member cannot revoke the owner's app; a form without its CSRF token changes nothing
  const refused = await staff.post('/dashboard/connected-apps/revoke', { csrf: Browser.csrf(staffPage), id: ownerGrant });
  t.is(refused.status, 404);
  t.is(await live(ownerToken), 200);
  t.is((await owner.post('/dashboard/connected-apps/revoke', { id: staffGrant! })).status, 403);
  t.is(await live(staffToken), 200);

  // the owner revokes the member's app: its token is refused at once
  const done = await owner.post('/dashboard/connected-apps/revoke', { csrf: Browser.csrf(ownerPage), id: staffGrant! });
  t.is(done.status, 200);
  t.regex(done.text, /App disconnected/);
  t.is(await live(staffToken), 401);
  t.is(await live(ownerToken), 200);
  t.deepEqual(grantIds((await staff.get('/dashboard/connected-apps')).text), []);
  // and the member revokes nothing twice
  t.is((await staff.post('/dashboard/connected-apps/revoke', { csrf: Browser.csrf(staffPage), id: staffGrant! })).status, 404);
});

test.serial('not signed in: sent to sign in', async (t) => {
  const res = await new Browser(app.url).get('/dashboard/connected-apps');
  t.is(res.status, 303);
  t.regex(res.location!, /^\/dashboard\/sign-in/);
});
