// Every tool's outputSchema and annotations (spec: MCP details), and the structuredContent of a
// representative successful call of each area held to its tool's outputSchema with the SDK's own
// JSON Schema validator (Ajv, as the SDK's client checks structured results).
import test from 'ava';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { errorEnvelope, mcpCall, mcpRpc, rpcMessages, withMcpClient } from '../helpers/mcp.ts';
import { updateOrg } from '../../src/admin/commands.ts';

let app: TestApp;
let acme: Applied;
let tools: Map<string, Tool>;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture()));
  tools = await withMcpClient(app, acme.keys.org!, async (c) => new Map((await c.listTools()).tools.map((t) => [t.name, t])));
});
test.after.always(async () => { await app?.close(); });

const ajv = new AjvJsonSchemaValidator();

test('every tool has an object outputSchema that compiles, and all four hints', (t) => {
  t.true(tools.size >= 60, `${tools.size} tools`);
  for (const tool of tools.values()) {
    t.is(tool.outputSchema?.type, 'object', tool.name);
    t.notThrows(() => ajv.getValidator(tool.outputSchema!), tool.name);
    const a = tool.annotations!;
    t.is(a.title, tool.title, tool.name);
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) t.is(typeof a[hint], 'boolean', `${tool.name} ${hint}`);
    if (a.readOnlyHint) t.like(a, { destructiveHint: false, idempotentHint: true, openWorldHint: false }, tool.name);
  }
  t.like(tools.get('contacts_get')!.annotations, { readOnlyHint: true });
  t.like(tools.get('audiences_preview_count')!.annotations, { readOnlyHint: true }, 'a POST under a read scope');
  t.like(tools.get('contacts_remove_tag')!.annotations, { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
  t.like(tools.get('conversations_send_sms')!.annotations, { readOnlyHint: false, destructiveHint: true, openWorldHint: true });
  t.like(tools.get('contacts_add_note')!.annotations, { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
  t.like(tools.get('contacts_update')!.annotations, { readOnlyHint: false, destructiveHint: false, idempotentHint: true });
});

test('a response that is not an object is wrapped under result (sequences_list answers an array)', (t) => {
  const schema = tools.get('sequences_list')!.outputSchema!;
  t.deepEqual(schema.required, ['result']);
  t.is((schema.properties!.result as { type?: string }).type, 'array');
  t.is(tools.get('contacts_get')!.outputSchema!.required, undefined, 'a union of objects stays as it is, typed object');
});

// one or more successful calls of each area, reads and writes
const calls = (): [string, Record<string, unknown>][] => [
  ['me_get', {}],
  ['contacts_search', {}],
  ['contacts_get', { contactId: acme.ids.ann }],
  ['contacts_list_stages', {}],
  ['contacts_list_notes', { contactId: acme.ids.ann }],
  ['contacts_list_interactions', { contactId: acme.ids.ann }],
  ['contacts_add_note', { contactId: acme.ids.ann, body: 'Called back' }],
  ['contacts_update', { contactId: acme.ids.bob, name: 'Bob Southern' }],
  ['contacts_upsert', { email: 'new@example.com', name: 'New Person' }],
  ['audiences_list', {}],
  ['audiences_preview_count', { rules: [] }],
  ['sequences_list', {}],
  ['sequences_capabilities', {}],
  ['sequences_list_triggers', {}],
  ['sequences_list_variables', {}],
  ['sequences_list_send_schedules', {}],
  ['appointments_list', {}],
  ['locations_list', {}],
  ['territories_list', {}],
  ['calendars_list', {}],
  ['calls_list', {}],
  ['forms_list', {}],
  ['conversations_list', {}],
];

test('the structuredContent of a successful call of each area fits its outputSchema; the text is the REST body', async (t) => {
  for (const [name, args] of calls()) {
    const { http, body } = await mcpCall(app, acme.keys.org!, name, args);
    t.is(http, 200, name);
    const result = body.result;
    t.falsy(result.isError, `${name}: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
    if (result.isError) continue;
    const check = ajv.getValidator(tools.get(name)!.outputSchema!)(result.structuredContent);
    t.true(check.valid, `${name}: ${check.errorMessage}`);
    const text = JSON.parse(result.content[0].text);
    t.deepEqual(tools.get(name)!.outputSchema!.required?.[0] === 'result' ? { result: text } : text, result.structuredContent, name);
  }
});

// A lone tools/call of a read runs the key check, the MCP setting and the read in one round trip
// (src/mcp/endpoint.ts, fastCall); its refusals are the ordinary path's.
test('a lone read call: MCP off is HTTP 404, an unknown key 401, a missing contact the 404 tool result', async (t) => {
  const off = await app.apply(acmeFixture('MCP Off Co'));
  await updateOrg(app.db.owner, off.organization_id, 'off', undefined);
  const offCall = await mcpCall(app, off.keys.org!, 'contacts_get', { contactId: off.ids.ann });
  t.is(offCall.http, 404);
  t.is(offCall.body.error, 'not_found');
  for (const [name, args] of calls().filter(([n]) => tools.get(n)!.annotations!.readOnlyHint)) {
    t.is((await mcpCall(app, off.keys.org!, name, args)).http, 404, `${name} while MCP is off`);
  }
  const unknown = await mcpCall(app, `svc_sk_${'x'.repeat(32)}`, 'contacts_get', { contactId: acme.ids.ann });
  t.is(unknown.http, 401);
  const missing = await mcpCall(app, acme.keys.org!, 'contacts_get', { contactId: '00000000-0000-4000-8000-000000000000' });
  t.is(missing.http, 200);
  t.true(missing.body.result.isError);
  t.like(errorEnvelope(missing.body.result), { statusCode: 404, error: 'not_found' });
  t.is(missing.body.result.structuredContent, undefined, 'an error carries no structuredContent');
  const other = await mcpCall(app, acme.keys.org!, 'contacts_get', { contactId: off.ids.ann });
  t.like(errorEnvelope(other.body.result), { statusCode: 404 }, 'another organization\'s contact');
  const bad = await mcpCall(app, acme.keys.org!, 'contacts_get', { contactId: 'nope' });
  t.like(errorEnvelope(bad.body.result), { statusCode: 400 });
  const ok = await mcpCall(app, acme.keys.org!, 'contacts_get', { contactId: acme.ids.ann });
  t.is(ok.body.result.structuredContent.id, acme.ids.ann);
  t.is(ok.body.id, 1);
});

test('a lone read call answers as the SDK\'s transport does; an unsupported protocol version is still 400', async (t) => {
  const auth = { authorization: `Bearer ${acme.keys.org}` };
  const body = { jsonrpc: '2.0', id: 'abc', method: 'tools/call', params: { name: 'contacts_get', arguments: { contactId: acme.ids.ann } } };
  const direct = await mcpRpc(app, body, { ...auth, accept: 'application/json, text/event-stream' });
  t.regex(direct.headers.get('content-type') ?? '', /^application\/json/);
  const viaSdk = await mcpRpc(app, body, { ...auth, accept: 'text/event-stream, application/json' });
  t.regex(viaSdk.headers.get('content-type') ?? '', /^text\/event-stream/);
  t.deepEqual(rpcMessages(await direct.text()), rpcMessages(await viaSdk.text()));
  const version = await mcpRpc(app, body, { ...auth, accept: 'application/json', 'mcp-protocol-version': '1999-01-01' });
  t.is(version.status, 400);
  const notJson = await mcpRpc(app, JSON.stringify(body), { ...auth, accept: 'application/json', 'content-type': 'text/plain' });
  t.is(notJson.status, 415);
  // what the SDK's schemas refuse is refused as before: a member JSON-RPC does not have, a _meta that is no object
  const extra = await mcpRpc(app, { ...body, surprise: 1 }, { ...auth, accept: 'application/json' });
  t.is(extra.status, 400);
  const meta = await mcpRpc(app, { ...body, params: { ...body.params, _meta: 5 } }, { ...auth, accept: 'application/json' });
  t.like(await meta.json(), { error: { code: -32602 }, id: 'abc' }, 'params that do not fit tools/call');
  // a _meta the SDK's schema refuses is refused alike, whichever answer the client prefers
  const token = { ...body, params: { ...body.params, _meta: { progressToken: { a: 1 } } } };
  for (const accept of ['application/json', 'text/event-stream, application/json']) {
    const res = await mcpRpc(app, token, { ...auth, accept });
    t.like(rpcMessages(await res.text()), { error: { code: -32602 }, id: 'abc' }, accept);
  }
});

test('JSON-RPC refusals: not JSON-RPC is -32600, params that do not fit the method -32602 with the id', async (t) => {
  const auth = { authorization: `Bearer ${acme.keys.org}`, accept: 'application/json' };
  for (const message of [null, [1], 5, { jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: null, method: 'ping' },
    { jsonrpc: '2.0', id: true, method: 'ping' }, { jsonrpc: '2.0', id: 1.5, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 7 },
    { jsonrpc: '2.0', id: 1 }, []]) {
    const res = await mcpRpc(app, message, auth);
    t.is(res.status, 400, JSON.stringify(message));
    t.like(await res.json(), { jsonrpc: '2.0', error: { code: -32600 }, id: null }, JSON.stringify(message));
  }
  for (const message of [{ jsonrpc: '2.0', id: 7, method: 'tools/call' }, { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { cursor: 5 } },
    { jsonrpc: '2.0', id: 7, method: 'initialize' }, { jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-06-18' } }]) {
    const res = await mcpRpc(app, message, auth);
    t.is(res.status, 200, JSON.stringify(message));
    const answer = await res.json() as { error: { message: string } };
    t.like(answer, { jsonrpc: '2.0', error: { code: -32602 }, id: 7 }, JSON.stringify(message));
    t.regex(answer.error.message, /^Invalid params: /);
  }
});

test('a method named like an object\'s own property is an unknown method, -32601', async (t) => {
  for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const res = await mcpRpc(app, { jsonrpc: '2.0', id: 1, method }, { authorization: `Bearer ${acme.keys.org}`, accept: 'application/json' });
    t.true(res.status < 500, method);
    t.like(rpcMessages(await res.text()), { error: { code: -32601 }, id: 1 }, method);
  }
});

test('a batch is answered with an array, even of one; two requests of a batch with one id are refused and neither runs', async (t) => {
  const auth = { authorization: `Bearer ${acme.keys.org}`, accept: 'application/json' };
  const one = await mcpRpc(app, [{ jsonrpc: '2.0', id: 'a', method: 'ping' }], auth);
  t.deepEqual(await one.json(), [{ jsonrpc: '2.0', id: 'a', result: {} }]);
  const withNotification = await mcpRpc(app, [{ jsonrpc: '2.0', id: 'b', method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }], auth);
  t.deepEqual(await withNotification.json(), [{ jsonrpc: '2.0', id: 'b', result: {} }]);
  const notes = async () => (await app.db.owner.query(`select count(*)::int as n from app_public.contact_notes where contact_id = $1`, [acme.ids.ann])).rows[0].n;
  const before = await notes();
  const note = (body: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'contacts_add_note', arguments: { contactId: acme.ids.ann, body } } });
  const twice = await mcpRpc(app, [note('first'), note('second')], auth);
  t.is(twice.status, 400);
  t.like(await twice.json(), { error: { code: -32600, message: 'Invalid Request: two requests of the batch have the id 1' } });
  t.is(await notes(), before);
});

test('input schemas refuse what the call refuses; only a required idempotency key makes a write idempotent', async (t) => {
  t.is(tools.get('contacts_add_note')!.inputSchema.additionalProperties, false);
  t.is(tools.get('contacts_get')!.inputSchema.additionalProperties, false);
  const extra = await mcpCall(app, acme.keys.org!, 'contacts_add_note', { contactId: acme.ids.ann, body: 'x', nope: 1 });
  t.like(errorEnvelope(extra.body.result), { statusCode: 400 });
  for (const name of ['contacts_add_note', 'audiences_create', 'sequences_create']) t.false(tools.get(name)!.annotations!.idempotentHint, name);
  t.true(tools.get('appointments_create')!.annotations!.idempotentHint, 'its key is required');
});
