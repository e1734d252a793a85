// The MCP entry point (spec: What the service does, MCP details), driven by the SDK's own
// client over real HTTP.
import test from 'ava';
import { startApp, startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { probeIdempotentOperations } from '../helpers/probes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { updateOrg } from '../../src/admin/commands.ts';
import { MCP_BATCH_LIMIT } from '../../src/mcp/endpoint.ts';
import { errorEnvelope, mcpRpc, toolNames, withMcpClient } from '../helpers/mcp.ts';
import { loadConfig } from '../../src/config.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture(), { operations: probeIdempotentOperations }));
  other = await app.apply(acmeFixture('Other Co'));
});
test.after.always(async () => { await app?.close(); });

const rpc = (body: unknown, headers: Record<string, string> = {}) => mcpRpc(app, body, headers);
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

test('initialize names the server and its instructions', async (t) => {
  await withMcpClient(app, acme.keys.org!, async (client) => {
    t.is(client.getServerVersion()?.name, 'svc');
    t.regex(client.getInstructions() ?? '', /me_get/);
    t.truthy(client.getServerCapabilities()?.tools);
  });
});

test('an organization key sees every tool; mcp_request itself is not one', async (t) => {
  const names = await toolNames(app, acme.keys.org!);
  t.deepEqual(names, probeIdempotentOperations.map((o) => o.operationId).sort());
  t.false(names.includes('mcp_request'));
});

test('a scope-limited key sees only the tools its scopes allow', async (t) => {
  t.deepEqual(await toolNames(app, acme.keys.org_reader!), ['me_get', 'probe_contact_get', 'probe_throw', 'probe_tx']);
});

test('a MEMBER does not see deny tools (nor texting without the SMS setting)', async (t) => {
  const member = await toolNames(app, acme.keys.member_key!);
  for (const hidden of ['probe_write', 'probe_deny', 'probe_queue', 'probe_sms']) t.false(member.includes(hidden), hidden);
  t.true(member.includes('probe_open'));
  t.true((await toolNames(app, acme.keys.sam_personal!)).includes('probe_sms'), 'a member whose SMS setting is on');
});

test('a MANAGER sees deny tools only with their manager power', async (t) => {
  const withPowers = await toolNames(app, acme.keys.mgr_key!);
  t.true(withPowers.includes('probe_write'));
  t.true(withPowers.includes('probe_sms'));
  t.false(withPowers.includes('probe_deny'), 'plain deny tools stay hidden');
  const without = await toolNames(app, acme.keys.weak_mgr_personal!);
  t.false(without.includes('probe_write'));
  t.false(without.includes('probe_sms'));
  t.true(without.includes('probe_open'));
});

test('tools carry hints and the confirm/changes flags', async (t) => {
  await withMcpClient(app, acme.keys.org!, async (client) => {
    const tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
    const me = tools.get('me_get')!;
    t.is(me.annotations?.readOnlyHint, true);
    t.deepEqual(me._meta, { 'svc/confirm': false, 'svc/changes': [] });
    const queue = tools.get('probe_queue')!;
    t.is(queue.annotations?.readOnlyHint, false);
    t.is(queue.annotations?.idempotentHint, false, 'its idempotency key is optional');
    t.deepEqual(Object.keys(queue.inputSchema.properties ?? {}).sort(), ['idempotency_key', 'to']);
    const get = tools.get('probe_contact_get')!;
    t.deepEqual(get.inputSchema.required, ['contactId']);
  });
});

test('a successful call returns the REST body as text and structuredContent', async (t) => {
  await withMcpClient(app, acme.keys.north_mgr!, async (client) => {
    const me = await client.callTool({ name: 'me_get', arguments: {} });
    t.falsy(me.isError);
    const structured = me.structuredContent as any;
    t.is(structured.organization.id, acme.organization_id);
    t.deepEqual(JSON.parse((me.content as any)[0].text), structured);
    // a response schema that is not an object's (z.any() here) is wrapped under `result`
    const contact = await client.callTool({ name: 'probe_contact_get', arguments: { contactId: acme.ids.ann } });
    t.is((contact.structuredContent as any).result.id, acme.ids.ann);
    t.is(JSON.parse((contact.content as any)[0].text).id, acme.ids.ann, 'the text is the REST body');
  });
});

test('failing calls return isError with the REST error envelope', async (t) => {
  await withMcpClient(app, acme.keys.north_mgr!, async (client) => {
    const cases: [string, Record<string, unknown>, number, string][] = [
      ['probe_contact_get', { contactId: 'not-a-uuid' }, 400, 'bad_request'],
      ['probe_contact_get', {}, 400, 'bad_request'],
      ['probe_contact_get', { contactId: acme.ids.bob }, 404, 'not_found'],
      ['probe_contact_get', { contactId: other.ids.ann }, 404, 'not_found'],
      ['probe_contact_get', { contactId: acme.ids.ann, surprise: 1 }, 400, 'bad_request'],
      ['probe_deny', {}, 403, 'insufficient_role'],
      ['no_such_tool', {}, 404, 'not_found'],
      ['probe_throw', {}, 500, 'internal_error'],
    ];
    for (const [name, args, status, error] of cases) {
      const res = await client.callTool({ name, arguments: args });
      t.true(res.isError, name);
      const body = errorEnvelope(res);
      t.is(body.statusCode, status, `${name} ${JSON.stringify(args)}`);
      t.is(body.error, error);
      t.is(body.path, '/api/v1/mcp');
      t.is(res.structuredContent, undefined, 'the envelope is text only: it would not fit the outputSchema');
    }
  });
  await withMcpClient(app, acme.keys.org_reader!, async (client) => {
    const scope = await client.callTool({ name: 'probe_write', arguments: { name: 'x' } });
    t.is(errorEnvelope(scope).error, 'insufficient_scope');
    t.is(errorEnvelope(scope).required, 'contacts:write');
  });
});

test('idempotent tools replay like REST', async (t) => {
  await withMcpClient(app, acme.keys.org!, async (client) => {
    const args = { to: '+15550002001', idempotency_key: 'mcp-key' };
    const first = await client.callTool({ name: 'probe_queue', arguments: args });
    const again = await client.callTool({ name: 'probe_queue', arguments: args });
    t.deepEqual(again.structuredContent, first.structuredContent);
    const { rows } = await app.db.owner.query(`select count(*)::int as n from app_private.outgoing_messages where recipient = '+15550002001'`);
    t.is(rows[0].n, 1);
  });
});

test('the key is checked first: 401 with WWW-Authenticate', async (t) => {
  const cases: Record<string, string>[] = [{}, { authorization: 'Bearer nope' }, { authorization: `Bearer svc_sk_${'x'.repeat(32)}` }];
  for (const headers of cases) {
    const res = await rpc(initialize, headers);
    t.is(res.status, 401);
    // names the protected resource metadata (test/oauth/discovery.test.ts checks the whole challenge)
    t.regex(res.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/api\/v1\/mcp", scope="/);
    t.is(((await res.json()) as any).error, 'unauthorized');
  }
});

test('MCP turned off for the organization: 404 after the key is checked, REST keeps working', async (t) => {
  const f = await app.apply(acmeFixture('No MCP Co'));
  await updateOrg(app.db.owner, f.organization_id, 'off', undefined);
  const res = await rpc(initialize, { authorization: `Bearer ${f.keys.org}` });
  t.is(res.status, 404);
  t.is(((await res.json()) as any).error, 'not_found');
  await t.throwsAsync(withMcpClient(app, f.keys.org!, async () => undefined));
  t.is((await app.request('GET', '/api/v1/me', { key: f.keys.org })).status, 200);
  t.is((await rpc(initialize, { authorization: 'Bearer nope' })).status, 401, 'an invalid key is still 401');
});

test('GET and DELETE on the endpoint are 405', async (t) => {
  for (const method of ['GET', 'DELETE']) {
    const res = await app.request(method, '/api/v1/mcp', { key: acme.keys.org });
    t.is(res.status, 405);
    t.is(res.headers.get('allow'), 'POST');
    t.is(res.body.error, 'method_not_allowed');
  }
});

test('a foreign Host or Origin is refused (DNS rebinding)', async (t) => {
  const auth = { authorization: `Bearer ${acme.keys.org}` };
  const port = new URL(app.url).port;
  t.is((await rpc(initialize, { ...auth, origin: 'http://evil.example' })).status, 403);
  for (const ours of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`]) {
    t.is((await rpc(initialize, { ...auth, origin: ours })).status, 200, ours);
  }
  // another port of the same host is another site; so is another scheme
  for (const foreign of ['http://localhost:9999', 'http://localhost', `https://localhost:${port}`, 'http://127.0.0.1:1', 'null', 'file://']) {
    const res = await rpc(initialize, { ...auth, origin: foreign });
    t.is(res.status, 403, foreign);
    t.like(await res.json(), { statusCode: 403, error: 'forbidden_origin' });
  }
  const { request } = await import('node:http');
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(`${app.url}/api/v1/mcp`, { method: 'POST', headers: { ...auth, host: 'evil.example',
      'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => { res.resume(); resolve(res.statusCode!); });
    req.on('error', reject);
    req.end(JSON.stringify(initialize));
  });
  t.is(status, 403);
});

test('the origins of SVC_BASE_URL and SVC_ALLOWED_HOSTS are ours, port included', async (t) => {
  const other = await startApp({ operations: probeIdempotentOperations,
    env: { SVC_BASE_URL: 'https://api.example.com/', SVC_ALLOWED_HOSTS: 'crm.example:8443, plain.example' } });
  try {
    const f = await other.apply(acmeFixture('Origins Co'));
    const auth = { authorization: `Bearer ${f.keys.org}` };
    const status = async (origin: string) => (await mcpRpc(other, initialize, { ...auth, origin })).status;
    for (const ours of ['https://api.example.com', 'https://api.example.com:443', 'https://crm.example:8443', 'http://crm.example:8443',
      'http://plain.example', 'https://plain.example', `http://localhost:${new URL(other.url).port}`]) {
      t.is(await status(ours), 200, ours);
    }
    for (const foreign of ['http://api.example.com', 'https://api.example.com:8443', 'https://crm.example', 'http://plain.example:8080',
      'https://evil.example', 'http://localhost:3000']) {
      t.is(await status(foreign), 403, foreign);
    }
  } finally {
    await other.close();
  }
});

test('an SVC_ALLOWED_HOSTS entry that is not a host, with or without a port, stops the start by name', (t) => {
  for (const entry of ['http://x.example', 'x.example/path', 'user@x.example', 'x.example:notaport']) {
    t.throws(() => loadConfig({ SVC_ALLOWED_HOSTS: entry }), { message: new RegExp(`SVC_ALLOWED_HOSTS.*"${entry.replace(/[./]/g, '\\$&')}"`) }, entry);
  }
  t.deepEqual(loadConfig({ SVC_ALLOWED_HOSTS: 'a.example:8080' }).allowedHosts.slice(-1), ['a.example']);
});

test('answers JSON or an SSE stream as the client prefers', async (t) => {
  const auth = { authorization: `Bearer ${acme.keys.org}` };
  const json = await rpc(initialize, { ...auth, accept: 'application/json' });
  t.is(json.status, 200);
  t.regex(json.headers.get('content-type') ?? '', /application\/json/);
  t.is(((await json.json()) as any).result.serverInfo.name, 'svc');
  const sse = await rpc(initialize, { ...auth, accept: 'text/event-stream' });
  t.is(sse.status, 200);
  t.regex(sse.headers.get('content-type') ?? '', /text\/event-stream/);
  t.regex(await sse.text(), /"serverInfo"/);
});

test('a batch of more than 20 messages and a body that is not JSON are JSON-RPC errors; no key is still 401 first', async (t) => {
  const auth = { authorization: `Bearer ${acme.keys.org}`, accept: 'application/json' };
  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'me_get', arguments: {} } });
  const fits = await rpc(Array.from({ length: MCP_BATCH_LIMIT }, (_, i) => call(i)), auth);
  t.is(fits.status, 200);
  t.is(((await fits.json()) as unknown[]).length, MCP_BATCH_LIMIT);
  const big = await rpc(Array.from({ length: MCP_BATCH_LIMIT + 1 }, (_, i) => call(i)), auth);
  t.is(big.status, 400);
  t.like(await big.json(), { jsonrpc: '2.0', error: { code: -32600 }, id: null });
  const notJson = await fetch(`${app.url}/api/v1/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: '{"jsonrpc":' });
  t.is(notJson.status, 400);
  t.like(await notJson.json(), { error: { code: -32700 } });
  const anonymous = await fetch(`${app.url}/api/v1/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{"jsonrpc":' });
  t.is(anonymous.status, 401);
});

test('a stateless server answers a tools/call without a session', async (t) => {
  const res = await rpc({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'me_get', arguments: {} } },
    { authorization: `Bearer ${acme.keys.org}`, accept: 'application/json' });
  t.is(res.status, 200);
  const body = (await res.json()) as any;
  t.is(body.id, 7);
  t.is(body.result.structuredContent.organization.id, acme.organization_id);
});
