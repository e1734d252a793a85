// Every refusal of the authorization server, and what a token may do as its person changes.
// Serial: several tests count rows or expire every token of a kind.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { oauthAccessHash } from '../../src/auth/oauth.ts';
import type { Browser } from '../dashboard/helpers.ts';
import {
  REDIRECT, as, authorizationUrl, codeFor, decide, exchange, freePort, openAuthorization, pkce, registerClient, startOAuthApp, tokenRequest,
} from './helpers.ts';

let app: TestApp;
let acme: Applied;
let docs: Server;
let docsUrl: string;
let clientId: string;
const documents = new Map<string, unknown>();

test.before(async () => {
  const docsPort = await freePort();
  docsUrl = `http://127.0.0.1:${docsPort}`;
  docs = createServer((req, res) => {
    const doc = documents.get(req.url ?? '');
    if (doc === undefined) { res.statusCode = 404; res.end(); return; }
    res.setHeader('content-type', 'application/json');
    res.end(typeof doc === 'string' ? doc : JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => docs.listen(docsPort, '127.0.0.1', resolve));
  ({ app, acme } = await startOAuthApp({ SVC_ALLOWED_HOSTS: `127.0.0.1:${docsPort}` }));
  clientId = await registerClient(app);
});
test.after.always(async () => { await app?.close(); docs?.close(); });

const count = async (table: string) => Number((await app.db.owner.query(`select count(*) as n from app_private.${table}`)).rows[0].n);
const me = (token: string) => app.request('GET', '/api/v1/me', { key: token });

async function tokensFor(browser: Browser, extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const code = await codeFor(app, clientId, browser, challenge, extra);
  const res = await exchange(app, clientId, code, verifier);
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body as { access_token: string; refresh_token: string; scope: string };
}

test.serial('a token works on REST as its person; the token answer is not cached', async (t) => {
  const { verifier, challenge } = pkce();
  const code = await codeFor(app, clientId, await as(app, 'olive@acme.example'), challenge);
  const res = await exchange(app, clientId, code, verifier);
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  t.like(res.body, { token_type: 'Bearer', expires_in: 3600, scope: 'contacts:read contacts:write conversations:write' });
  const answer = await me(res.body.access_token);
  t.is(answer.status, 200);
  t.is(answer.body.api_key, null);
  t.deepEqual(answer.body.oauth_client, { client_id: clientId, client_name: 'Test agent', scopes: ['contacts:read', 'contacts:write', 'conversations:write'] });
  t.like(answer.body.principal, { user_id: acme.ids.owner, role: 'OWNER' });
  // only hashes are stored
  const stored = await app.db.owner.query('select token_hash from app_private.oauth_tokens');
  t.false(stored.rows.some((r) => r.token_hash.toString('utf8').includes(res.body.access_token)));
  // a scope not granted is refused like a key's
  t.is((await app.request('GET', '/api/v1/sequences', { key: res.body.access_token })).status, 403);
});

test.serial('wrong PKCE verifier: invalid_grant, no token', async (t) => {
  const { challenge } = pkce();
  const code = await codeFor(app, clientId, await as(app, 'olive@acme.example'), challenge);
  const before = await count('oauth_tokens');
  const res = await exchange(app, clientId, code, pkce().verifier);
  t.is(res.status, 400);
  t.is(res.body.error, 'invalid_grant');
  t.is(await count('oauth_tokens'), before);
});

test.serial('a reused code is refused and revokes what it gave', async (t) => {
  const { verifier, challenge } = pkce();
  const code = await codeFor(app, clientId, await as(app, 'olive@acme.example'), challenge);
  const first = await exchange(app, clientId, code, verifier);
  t.is(first.status, 200);
  const second = await exchange(app, clientId, code, verifier);
  t.is(second.status, 400);
  t.is(second.body.error, 'invalid_grant');
  t.is((await me(first.body.access_token)).status, 401);
});

test.serial('wrong redirect URI: shown, never redirected, at authorization; invalid_grant at the token endpoint', async (t) => {
  const { verifier, challenge } = pkce();
  const before = await count('oauth_requests');
  const opened = await openAuthorization(authorizationUrl(app, clientId, challenge, { redirect_uri: 'https://evil.example/cb' }), await as(app, 'olive@acme.example'));
  t.is(opened.status, 400);
  t.is(opened.location, null);
  t.is(await count('oauth_requests'), before);
  const code = await codeFor(app, clientId, await as(app, 'olive@acme.example'), challenge);
  const res = await exchange(app, clientId, code, verifier, { redirect_uri: 'http://127.0.0.1:7777/other' });
  t.is(res.status, 400);
  t.is(res.body.error, 'invalid_grant');
});

test.serial('loopback redirect URIs match on any port', async (t) => {
  const { verifier, challenge } = pkce();
  const code = await codeFor(app, clientId, await as(app, 'olive@acme.example'), challenge, { redirect_uri: 'http://127.0.0.1:4321/callback' });
  t.is((await exchange(app, clientId, code, verifier, { redirect_uri: 'http://127.0.0.1:4321/callback' })).status, 200);
});

test.serial('wrong resource: invalid_target at authorization and at the token endpoint; a token for another resource is refused', async (t) => {
  const { verifier, challenge } = pkce();
  const opened = await openAuthorization(authorizationUrl(app, clientId, challenge, { resource: 'https://other.example/mcp' }), await as(app, 'olive@acme.example'));
  t.is(opened.status, 303);
  const back = new URL(opened.location!);
  t.is(back.origin + back.pathname, REDIRECT);
  t.is(back.searchParams.get('error'), 'invalid_target');
  t.is(back.searchParams.get('state'), 'st-1');
  t.is(back.searchParams.get('iss'), app.url);

  const code = await codeFor(app, clientId, await as(app, 'olive@acme.example'), challenge);
  const res = await exchange(app, clientId, code, verifier, { resource: 'https://other.example/mcp' });
  t.is(res.status, 400);
  t.is(res.body.error, 'invalid_target');

  // a token bound to another resource finds nothing here
  const tokens = await tokensFor(await as(app, 'olive@acme.example'));
  const grant = (await app.db.owner.query(`select grant_id from app_private.oauth_tokens where kind = 'access' order by created_at desc limit 1`)).rows[0].grant_id;
  const elsewhere = `svc_at_${'A'.repeat(43)}`;
  await app.db.owner.query(`insert into app_private.oauth_tokens (token_hash, grant_id, kind, expires_at) values ($1, $2, 'access', now() + interval '1 hour')`,
    [oauthAccessHash('https://other.example/mcp', elsewhere), grant]);
  t.is((await me(elsewhere)).status, 401);
  t.is((await me(tokens.access_token)).status, 200);
});

test.serial('refresh tokens rotate; a reused one revokes the grant; an expired one is refused', async (t) => {
  const tokens = await tokensFor(await as(app, 'olive@acme.example'));
  const refresh = (token: string) => tokenRequest(app, { grant_type: 'refresh_token', client_id: clientId, refresh_token: token });
  const next = await refresh(tokens.refresh_token);
  t.is(next.status, 200);
  t.is(next.headers.get('cache-control'), 'no-store');
  t.not(next.body.refresh_token, tokens.refresh_token);
  t.is((await me(next.body.access_token)).status, 200);

  const reused = await refresh(tokens.refresh_token);
  t.is(reused.status, 400);
  t.is(reused.body.error, 'invalid_grant');
  t.is((await me(next.body.access_token)).status, 401);
  t.is((await refresh(next.body.refresh_token)).body.error, 'invalid_grant');

  const other = await tokensFor(await as(app, 'olive@acme.example'));
  await app.db.owner.query(`update app_private.oauth_tokens set expires_at = now() - interval '1 second' where kind = 'refresh'`);
  const expired = await refresh(other.refresh_token);
  t.is(expired.status, 400);
  t.is(expired.body.error, 'invalid_grant');
});

test.serial('a refresh may not widen the grant (invalid_scope, the token still good); a narrower scope is answered with the grant\'s', async (t) => {
  const tokens = await tokensFor(await as(app, 'olive@acme.example'));
  const granted = tokens.scope.split(' ').sort();
  const refresh = (token: string, scope: string) => tokenRequest(app, { grant_type: 'refresh_token', client_id: clientId, refresh_token: token, scope });
  const wider = await refresh(tokens.refresh_token, `${granted[0]} sequences:write`);
  t.is(wider.status, 400);
  t.is(wider.body.error, 'invalid_scope');
  // refused before anything was used: the same refresh token still works
  const narrower = await refresh(tokens.refresh_token, granted[0]!);
  t.is(narrower.status, 200, JSON.stringify(narrower.body));
  t.deepEqual(narrower.body.scope.split(' ').sort(), granted);
});

test.serial('deny returns access_denied with state and iss', async (t) => {
  const opened = await openAuthorization(authorizationUrl(app, clientId, pkce().challenge), await as(app, 'olive@acme.example'));
  const owner = await as(app, 'olive@acme.example');
  const back = await decide(owner, opened, 'deny');
  t.is(back.searchParams.get('error'), 'access_denied');
  t.is(back.searchParams.get('state'), 'st-1');
  t.is(back.searchParams.get('iss'), app.url);
  t.is(back.searchParams.get('code'), null);
  // a request is decided once, only by its person, and only with the form's CSRF token
  t.is((await owner.post('/oauth/authorize', { csrf: opened.csrf!, request: opened.request!, decision: 'approve' })).status, 400);
  const other = await openAuthorization(authorizationUrl(app, clientId, pkce().challenge), owner);
  const admin = await as(app, 'adam@acme.example');
  const adminPage = await admin.get('/dashboard');
  t.is((await admin.post('/oauth/authorize', { csrf: /name="csrf" value="([^"]+)"/.exec(adminPage.text)![1]!, request: other.request!, decision: 'approve' })).status, 400);
  t.is((await owner.post('/oauth/authorize', { csrf: 'forged', request: other.request!, decision: 'approve' })).status, 403);
  t.is((await owner.post('/oauth/authorize', { request: other.request!, decision: 'approve' })).status, 403);
  // the request is still there for its person
  t.is((await decide(owner, other, 'approve')).searchParams.get('state'), 'st-1');
});

test.serial('a literal "?" inside the query is data: the state comes back whole, and the parameters after it count', async (t) => {
  const url = authorizationUrl(app, clientId, pkce().challenge).replace('state=st-1', 'state=a?b');
  const owner = await as(app, 'olive@acme.example');
  const opened = await openAuthorization(url, owner);
  t.is(opened.status, 200);
  t.notRegex(opened.html, /sequences:write/, 'only the scopes asked for, which come after the "?"');
  t.is((await decide(owner, opened, 'deny')).searchParams.get('state'), 'a?b');
});

test.serial('PKCE S256 is required', async (t) => {
  const opened = await openAuthorization(authorizationUrl(app, clientId, pkce().challenge, { code_challenge_method: 'plain' }), await as(app, 'olive@acme.example'));
  t.is(new URL(opened.location!).searchParams.get('error'), 'invalid_request');
});

test.serial('consent leaves out conversations:write while the person may not text', async (t) => {
  const opened = await openAuthorization(authorizationUrl(app, clientId, pkce().challenge), await as(app, 'quinn@acme.example'));
  t.is(opened.status, 200);
  t.regex(opened.html, /contacts:read/);
  t.notRegex(opened.html, /conversations:write/);
  const tokens = await tokensFor(await as(app, 'quinn@acme.example'));
  t.false(tokens.scope.split(' ').includes('conversations:write'));
  // the setting limits members only: a manager with it off still texts with a key, and may grant it
  const { rows: [was] } = await app.db.owner.query(`select sms_enabled from app_public.people where id = $1`, [acme.ids.mgr]);
  await app.db.owner.query(`update app_public.people set sms_enabled = false where id = $1`, [acme.ids.mgr]);
  try {
    const max = await tokensFor(await as(app, 'max@acme.example'));
    t.true(max.scope.split(' ').includes('conversations:write'));
  } finally {
    await app.db.owner.query(`update app_public.people set sms_enabled = $2 where id = $1`, [acme.ids.mgr, was.sms_enabled]);
  }
});

test.serial('agent access off: 401 while off; demotion followed at once; deactivation ends tokens for good', async (t) => {
  const tokens = await tokensFor(await as(app, 'adam@acme.example'));
  const setPerson = (set: string) => app.db.owner.query(`update app_public.people set ${set} where id = $1`, [acme.ids.admin]);
  await setPerson('agent_access = false');
  t.is((await me(tokens.access_token)).status, 401);
  await setPerson('agent_access = true');
  t.is((await me(tokens.access_token)).status, 200);
  await setPerson(`role = 'member', sms_enabled = false`);
  t.is((await me(tokens.access_token)).body.principal.role, 'MEMBER');
  await setPerson(`role = 'admin'`);
  await setPerson('active = false');
  t.is((await me(tokens.access_token)).status, 401);
  await setPerson('active = true');
  t.is((await me(tokens.access_token)).status, 401);
});

test.serial('registration refuses redirect URIs that are not https, loopback http or a private-use scheme', async (t) => {
  const before = await count('oauth_clients');
  for (const uri of ['http://example.com/cb', 'javascript:alert(1)', 'https://ok.example/cb#frag', 'not a uri',
    // schemes an OS hands to programs of its own; a private-use scheme is reverse-domain (RFC 8252)
    'ms-msdt:/id', 'view-source:https://a.example/', 'feed:javascript:alert(1)', 'jar:https://a.example/x.jar!/', 'myapp:/cb',
    'search-ms:query=x', 'http://127.0.0.2/cb', 'http://localhost.evil.example/cb', 'com.example.:/cb', '.com.example:/cb']) {
    const res = await fetch(`${app.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [uri] }) });
    t.is(res.status, 400, uri);
    t.is(((await res.json()) as any).error, 'invalid_redirect_uri', uri);
  }
  const secret = await fetch(`${app.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }) });
  t.is(((await secret.json()) as any).error, 'invalid_client_metadata');
  t.is(await count('oauth_clients'), before);
  for (const uri of ['https://app.example/cb', 'http://localhost:3000/cb', 'http://[::1]/cb', 'http://127.0.0.1:9/cb',
    'com.example.app:/oauth', 'io.github.someone.tool:/cb']) {
    const res = await fetch(`${app.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [uri] }) });
    t.is(res.status, 201, uri);
  }
});

test.serial('registration: application_type is native or web, a web app has https redirect URIs, and the endpoint says it is deprecated', async (t) => {
  const register = (body: object) => fetch(`${app.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const before = await count('oauth_clients');
  for (const [body, error] of [
    [{ redirect_uris: [REDIRECT], application_type: 'desktop' }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], application_type: 7 }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], application_type: null }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], application_type: 'web' }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example/cb', 'com.example.app:/oauth'], application_type: 'web' }, 'invalid_redirect_uri'],
  ] as const) {
    const res = await register(body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(((await res.json()) as any).error, error, JSON.stringify(body));
  }
  t.is(await count('oauth_clients'), before, 'nothing registered');
  for (const [body, type] of [
    [{ redirect_uris: [REDIRECT], application_type: 'native' }, 'native'],
    [{ redirect_uris: ['https://app.example/cb'], application_type: 'native' }, 'native'],
    [{ redirect_uris: ['https://app.example/cb'], application_type: 'web' }, 'web'],
    // a 2025 client sends none: inferred from its redirect URIs
    [{ redirect_uris: [REDIRECT] }, 'native'],
    [{ redirect_uris: ['https://app.example/cb'] }, 'web'],
  ] as const) {
    const res = await register(body);
    t.is(res.status, 201, JSON.stringify(body));
    t.is(res.headers.get('deprecation'), '@1785196800', 'RFC 9745: deprecated since 2026-07-28');
    t.is(((await res.json()) as any).application_type, type, JSON.stringify(body));
  }
});

test.serial('client ID metadata documents: fetched from a listed host, refused at a private address', async (t) => {
  const id = `${docsUrl}/client.json`;
  documents.set('/client.json', { client_id: id, client_name: 'Doc agent', redirect_uris: [REDIRECT] });
  const { verifier, challenge } = pkce();
  const opened = await openAuthorization(authorizationUrl(app, id, challenge), await as(app, 'olive@acme.example'));
  t.is(opened.status, 200);
  t.regex(opened.html, /Doc agent/);
  const code = (await decide(await as(app, 'olive@acme.example'), opened, 'approve')).searchParams.get('code')!;
  t.is((await exchange(app, id, code, verifier)).status, 200);

  // cached: the document going away does not matter for an hour
  documents.delete('/client.json');
  t.is((await openAuthorization(authorizationUrl(app, id, challenge), await as(app, 'olive@acme.example'))).status, 200);

  const before = await count('oauth_clients');
  for (const url of ['https://127.0.0.1:1/client.json', 'https://10.0.0.1/client.json', 'https://localhost/client.json', 'https://[::1]/c.json',
    'https://[fec0::1]/c.json', 'https://[2001::1]/c.json', 'https://[2001:db8::1]/c.json', 'https://240.0.0.1/c.json']) {
    const res = await openAuthorization(authorizationUrl(app, url, challenge), await as(app, 'olive@acme.example'));
    t.is(res.status, 400, url);
    t.is(res.location, null);
    t.regex(res.html, /private address/, url);
  }
  // a document naming another client_id, or too large, is refused
  documents.set('/liar.json', { client_id: 'https://other.example/c.json', redirect_uris: [REDIRECT] });
  documents.set('/big.json', JSON.stringify({ client_id: `${docsUrl}/big.json`, redirect_uris: [REDIRECT], pad: 'x'.repeat(70_000) }));
  for (const path of ['/liar.json', '/big.json']) {
    t.is((await openAuthorization(authorizationUrl(app, docsUrl + path, challenge), await as(app, 'olive@acme.example'))).status, 400, path);
  }
  t.is(await count('oauth_clients'), before);
});

test.serial('malformed requests: a clear 4xx, nothing written', async (t) => {
  const before = await Promise.all(['oauth_clients', 'oauth_tokens', 'oauth_requests', 'oauth_grants'].map(count));
  const post = (path: string, type: string, body: string | Uint8Array) =>
    fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body, redirect: 'manual' });
  const cases: [string, Promise<Response>, string][] = [
    ['token as JSON', post('/oauth/token', 'application/json', '{"grant_type":"authorization_code"}'), 'invalid_request'],
    ['no grant_type', post('/oauth/token', 'application/x-www-form-urlencoded', 'client_id=x'), 'invalid_request'],
    ['unknown grant_type', post('/oauth/token', 'application/x-www-form-urlencoded', `grant_type=password&client_id=${clientId}`), 'unsupported_grant_type'],
    ['repeated parameter', post('/oauth/token', 'application/x-www-form-urlencoded', 'grant_type=refresh_token&grant_type=refresh_token&client_id=x'), 'invalid_request'],
    ['not UTF-8', post('/oauth/token', 'application/x-www-form-urlencoded', new Uint8Array([0x67, 0x3d, 0xff])), 'invalid_request'],
    ['no client_id', post('/oauth/token', 'application/x-www-form-urlencoded', 'grant_type=refresh_token&refresh_token=x'), 'invalid_client'],
    ['unknown refresh token', post('/oauth/token', 'application/x-www-form-urlencoded', `grant_type=refresh_token&client_id=${clientId}&refresh_token=nope`), 'invalid_grant'],
    ['registration not JSON', post('/oauth/register', 'application/json', '{nope'), 'invalid_client_metadata'],
    ['registration an array', post('/oauth/register', 'application/json', '[]'), 'invalid_client_metadata'],
    ['registration too large', post('/oauth/register', 'application/json', JSON.stringify({ redirect_uris: [REDIRECT], x: 'y'.repeat(20_000) })), 'invalid_client_metadata'], // RFC 7591's codes
    // control characters: refused as OAuth refuses, not in the API's envelope
    ['a NUL in client_id', post('/oauth/token', 'application/x-www-form-urlencoded', 'grant_type=refresh_token&client_id=x%00&refresh_token=x'), 'invalid_request'],
    ['a NUL in redirect_uri', post('/oauth/token', 'application/x-www-form-urlencoded',
      `grant_type=authorization_code&client_id=${clientId}&code=x&code_verifier=${'v'.repeat(43)}&redirect_uri=x%00`), 'invalid_request'],
    ['a NUL in client_name', post('/oauth/register', 'application/json', JSON.stringify({ client_name: 'a\u0000b', redirect_uris: [REDIRECT] })), 'invalid_client_metadata'],
  ];
  for (const [name, pending, error] of cases) {
    const res = await pending;
    t.true(res.status >= 400 && res.status < 500, name);
    t.is(((await res.json()) as any).error, error, name);
    t.is(res.headers.get('cache-control'), 'no-store', name);
  }
  // a client_id that looks like a metadata document URL but is none: the 400 page, not a 500
  for (const query of ['', 'client_id=nope', `client_id=${'x'.repeat(3000)}`, `client_id=${clientId}&client_id=${clientId}`,
    'client_id=https%3A%2F%2Fexa+mple.com%2Fx', 'client_id=https%3A%2F%2F%5B%3A%3A1%2Fx', 'client_id=https%3A%2F%2Fa.example%3A99999%2Fx']) {
    const res = await (await as(app, 'olive@acme.example')).get(`/oauth/authorize?${query}`);
    t.is(res.status, 400, query);
  }
  const form = await post('/oauth/authorize', 'application/x-www-form-urlencoded', 'request=nope&decision=approve');
  t.is(form.status, 401); // no one signed in
  // not signed in: a GET is sent to sign in, and comes back here afterwards
  const anonymous = await fetch(authorizationUrl(app, clientId, pkce().challenge), { redirect: 'manual' });
  t.is(anonymous.status, 303);
  t.regex(anonymous.headers.get('location')!, /^\/dashboard\/sign-in\?return_to=%2Foauth%2Fauthorize%3F/);
  t.deepEqual(await Promise.all(['oauth_clients', 'oauth_tokens', 'oauth_requests', 'oauth_grants'].map(count)), before);
});

test.serial('one refresh token presented twice at once: one answer gets tokens, the grant is then revoked', async (t) => {
  const tokens = await tokensFor(await as(app, 'olive@acme.example'));
  const answers = await Promise.all([1, 2].map(() =>
    tokenRequest(app, { grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.refresh_token })));
  t.deepEqual(answers.map((a) => a.status).sort(), [200, 400]);
  const winner = answers.find((a) => a.status === 200)!;
  t.is((await me(winner.body.access_token)).status, 401);
});
