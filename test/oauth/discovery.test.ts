// Discovery from the MCP endpoint's 401 (MCP authorization; RFC 9728, RFC 8414).
import test from 'ava';
import type { TestApp } from '../helpers/app.ts';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { startOAuthApp } from './helpers.ts';

let app: TestApp;
test.before(async () => { ({ app } = await startOAuthApp()); });
test.after.always(async () => { await app?.close(); });

test('the MCP endpoint\'s 401 names the resource metadata and the scopes', async (t) => {
  const res = await fetch(`${app.url}/api/v1/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
  t.is(res.status, 401);
  t.is(res.headers.get('www-authenticate'),
    `Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/api/v1/mcp", scope="${ALL_SCOPES.join(' ')}"`);
  // REST keeps its plain challenge
  t.is((await app.request('GET', '/api/v1/me')).headers.get('www-authenticate'), 'Bearer');
  // the same endpoint however express matched it; a bearer token it cannot use is invalid_token,
  // another scheme gets no error code (RFC 6750, 3.1)
  const post = (path: string, authorization?: string) => fetch(`${app.url}${path}`, { method: 'POST', body: '{}',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) } });
  for (const path of ['/api/v1/mcp/', '/API/v1/MCP']) {
    const res = await post(path);
    t.is(res.status, 401, path);
    t.regex(res.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="/, path);
  }
  t.regex((await post('/api/v1/mcp', 'Bearer svc_sk_nope')).headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const basic = (await post('/api/v1/mcp', 'Basic YTpi')).headers.get('www-authenticate') ?? '';
  t.regex(basic, /^Bearer resource_metadata="/);
  t.notRegex(basic, /error=/);
});

test('protected resource metadata at the path-suffixed and the root address, each naming the identifier it was made from', async (t) => {
  for (const [path, resource] of [['/.well-known/oauth-protected-resource/api/v1/mcp', `${app.url}/api/v1/mcp`], ['/.well-known/oauth-protected-resource', app.url]]) {
    const res = await fetch(app.url + path!);
    t.is(res.status, 200);
    t.deepEqual(await res.json(), {
      resource, authorization_servers: [app.url], scopes_supported: ALL_SCOPES,
      bearer_methods_supported: ['header'], resource_name: 'Receptionist, CRM and follow-up (MCP)',
    });
  }
});

test('authorization server metadata', async (t) => {
  const res = await fetch(`${app.url}/.well-known/oauth-authorization-server`);
  t.is(res.status, 200);
  t.like(await res.json(), {
    issuer: app.url,
    authorization_endpoint: `${app.url}/oauth/authorize`,
    token_endpoint: `${app.url}/oauth/token`,
    registration_endpoint: `${app.url}/oauth/register`,
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    token_endpoint_auth_methods_supported: ['none'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
  });
});

test('over plain http on a host other than loopback, every OAuth endpoint answers 404 and registers nothing', async (t) => {
  const { app: plain } = await startOAuthApp({ SVC_BASE_URL: 'http://crm.example.com' });
  try {
    for (const [method, path] of [['GET', '/.well-known/oauth-protected-resource/api/v1/mcp'], ['GET', '/.well-known/oauth-protected-resource'],
      ['GET', '/.well-known/oauth-authorization-server'], ['GET', '/oauth/authorize'], ['POST', '/oauth/token'], ['POST', '/oauth/register']] as const) {
      const res = await fetch(plain.url + path, { method, headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? JSON.stringify({ client_name: 'x', redirect_uris: ['http://127.0.0.1:1/cb'] }) : undefined });
      t.is(res.status, 404, path);
      t.regex(((await res.json()) as { error_description: string }).error_description, /https/, path);
    }
    const { rows } = await plain.db.owner.query('select count(*)::int as n from app_private.oauth_clients');
    t.is(rows[0].n, 0);
  } finally {
    await plain.close();
  }
});
