// The authorization code flow as a person goes through it, in real Chromium (the one
// test/dashboard/chromium.ts finds), JavaScript off. The MCP client is played by this file with
// plain HTTP, as a client would: the 401 from the MCP endpoint, the two metadata documents, a
// client ID metadata document served by a local server (or dynamic registration), PKCE S256 and
// the resource parameter. The person signs in from the link in the outbox, reads the consent page,
// and clicks Approve or Deny; the browser lands on the client's local callback server. The client
// then exchanges the code, calls the MCP endpoint with the token, and refreshes (the old refresh
// token is refused afterwards). A failing step leaves a screenshot in .data/screenshots/.
import test, { type ExecutionContext } from 'ava';
import { createServer, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { mcpCall } from '../helpers/mcp.ts';
import { inBrowser, launchChromium, outboxedLink } from '../dashboard/chromium.ts';
import { freePort, pkce, startOAuthApp, tokenRequest } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let browser: Browser;
let client: Server;
let clientUrl: string;
/** What the client's callback received, by state. */
const callbacks = new Map<string, URLSearchParams>();

test.before(async () => {
  const port = await freePort();
  clientUrl = `http://127.0.0.1:${port}`;
  // the MCP client's own little web server: its client ID metadata document and its callback
  client = createServer((req, res) => {
    const url = new URL(req.url ?? '/', clientUrl);
    if (url.pathname === '/client.json') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        client_id: `${clientUrl}/client.json`, client_name: 'Browser Test Agent', client_uri: clientUrl,
        redirect_uris: [`${clientUrl}/callback`], grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'], token_endpoint_auth_method: 'none',
      }));
      return;
    }
    if (url.pathname === '/callback') {
      callbacks.set(url.searchParams.get('state') ?? '', url.searchParams);
      res.setHeader('content-type', 'text/html');
      res.end('<p>You may close this window.</p>');
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => client.listen(port, '127.0.0.1', resolve));
  ({ app, acme } = await startOAuthApp({ SVC_ALLOWED_HOSTS: `127.0.0.1:${port}` }));
  ({ browser } = await launchChromium());
});
test.after.always(async () => {
  await browser?.close();
  await app?.close();
  client?.close();
});

/** What an MCP client learns before it opens the browser: from the 401 to the endpoints. */
async function discover(t: ExecutionContext) {
  const mcp = `${app.url}/api/v1/mcp`;
  const first = await fetch(mcp, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  t.is(first.status, 401);
  const challenge = first.headers.get('www-authenticate')!;
  const resourceMetadata = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
  const scope = /scope="([^"]+)"/.exec(challenge)![1]!;
  const prm = await (await fetch(resourceMetadata)).json() as { resource: string; authorization_servers: string[] };
  t.is(prm.resource, mcp);
  const issuer = prm.authorization_servers[0]!;
  const as = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json() as Record<string, any>;
  t.is(as.issuer, issuer);
  t.deepEqual(as.code_challenge_methods_supported, ['S256']);
  t.true(as.client_id_metadata_document_supported);
  return { resource: prm.resource, scope, issuer, as };
}

/** Opens the authorization URL signed out: signs in from the emailed link and lands on the consent page. */
async function signInToConsent(page: Page, authorizationUrl: string, email: string) {
  await page.goto(authorizationUrl);
  await page.waitForURL((u) => u.pathname === '/dashboard/sign-in');
  await page.fill('input[name=email]', email);
  await page.click('button[type=submit]');
  await page.waitForSelector('text=a sign-in link is on its way');
  await page.goto(await outboxedLink(app, email, acme.organization_id));
  await page.click('button:has-text("Sign in")');
  await page.waitForURL((u) => u.pathname === '/oauth/authorize');
}

function authorizationUrl(endpoint: string, p: Record<string, string>): string {
  return `${endpoint}?${new URLSearchParams({ response_type: 'code', code_challenge_method: 'S256', ...p })}`;
}

test.serial('a client ID metadata document client: sign in, approve, exchange, call MCP, refresh with rotation', async (t) => {
  const { resource, scope, issuer, as } = await discover(t);
  const clientId = `${clientUrl}/client.json`;
  const redirectUri = `${clientUrl}/callback`;
  const { verifier, challenge } = pkce();
  const state = 'cimd-approve';
  await inBrowser(browser, t, async (page) => {
    await signInToConsent(page, authorizationUrl(as.authorization_endpoint, {
      client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, state, resource, scope,
    }), 'olive@acme.example');
    // the consent page names the client, where it will send the person, and the scopes
    const text = (await page.textContent('body'))!;
    t.regex(text, /Connect Browser Test Agent\?/);
    t.true(text.includes(clientId), 'the client id URL is shown');
    t.true(text.includes('127.0.0.1'), 'the redirect host is shown');
    t.truthy(await page.$('[data-warning=localhost]'), 'its only redirect URI is on this computer: a warning');
    for (const s of ['contacts:read', 'contacts:write', 'conversations:write']) t.truthy(await page.$(`li code:text-is("${s}")`), s);
    await page.click('button:has-text("Approve")');
    await page.waitForURL((u) => u.origin === clientUrl && u.pathname === '/callback');
  });
  const back = callbacks.get(state)!;
  t.truthy(back, 'the callback was reached');
  t.is(back.get('iss'), issuer, 'RFC 9207 iss');
  t.is(back.get('error'), null);
  const code = back.get('code')!;

  const exchanged = await tokenRequest(app, { grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri, resource });
  t.is(exchanged.status, 200);
  t.is(exchanged.headers.get('cache-control'), 'no-store');
  const { access_token, refresh_token } = exchanged.body as { access_token: string; refresh_token: string };

  // the MCP endpoint with the token: the person's own identity, the client named
  const me = await mcpCall(app, access_token, 'me_get', {});
  t.is(me.http, 200);
  const body = me.body.result.structuredContent;
  t.is(body.api_key, null);
  t.is(body.oauth_client.client_id, clientId);
  t.is(body.oauth_client.client_name, 'Browser Test Agent');
  t.is(body.principal.user_id, acme.ids.owner);

  // refresh: new tokens; the old refresh token is refused afterwards (and its reuse ends the grant)
  const refreshed = await tokenRequest(app, { grant_type: 'refresh_token', client_id: clientId, refresh_token, resource });
  t.is(refreshed.status, 200);
  t.not(refreshed.body.refresh_token, refresh_token);
  t.not(refreshed.body.access_token, access_token);
  t.is((await mcpCall(app, refreshed.body.access_token, 'me_get', {})).http, 200);
  const reused = await tokenRequest(app, { grant_type: 'refresh_token', client_id: clientId, refresh_token, resource });
  t.is(reused.status, 400);
  t.is(reused.body.error, 'invalid_grant');
  t.is((await mcpCall(app, refreshed.body.access_token, 'me_get', {})).http, 401, 'reuse revoked the grant');
});

test.serial('a dynamically registered client: deny sends access_denied with state and iss, and no code', async (t) => {
  const { resource, scope, issuer, as } = await discover(t);
  const redirectUri = `${clientUrl}/callback`;
  const registered = await fetch(as.registration_endpoint, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Registered Agent', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }) });
  t.is(registered.status, 201);
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const grantsBefore = Number((await app.db.owner.query('select count(*) as n from app_private.oauth_grants')).rows[0].n);
  const state = 'dcr-deny';
  await inBrowser(browser, t, async (page) => {
    await signInToConsent(page, authorizationUrl(as.authorization_endpoint, {
      client_id: clientId, redirect_uri: redirectUri, code_challenge: pkce().challenge, state, resource, scope,
    }), 'sam@acme.example');
    const text = (await page.textContent('body'))!;
    t.regex(text, /Connect Registered Agent\?/);
    t.regex(text, /registered itself; not verified/);
    t.truthy(await page.$('li code:text-is("contacts:read")'));
    await page.click('button:has-text("Deny")');
    await page.waitForURL((u) => u.origin === clientUrl && u.pathname === '/callback');
  });
  const back = callbacks.get(state)!;
  t.is(back.get('error'), 'access_denied');
  t.is(back.get('iss'), issuer);
  t.is(back.get('code'), null);
  t.is(Number((await app.db.owner.query('select count(*) as n from app_private.oauth_grants')).rows[0].n), grantsBefore, 'no grant');
});
