// The MCP endpoint serves the stateless 2026-07-28 revision (no initialize: each request carries
// its protocol version and client capabilities in _meta, with Mcp-Method/Mcp-Name headers) beside
// the 2025 revisions that open with initialize, chosen per request (src/mcp/endpoint.ts). Here:
// the SDK's v2 client and its v1 client on one endpoint, raw 2026-07-28 requests and their
// refusals, what a MEMBER is shown, and the Inspector's CLI in both flows. Serial: the Inspector's
// processes are heavy, and the clients' timing should not depend on them.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { updateOrg } from '../../src/admin/commands.ts';
import { mcpRpc, rpcMessages } from '../helpers/mcp.ts';
import { requirementOf } from '../../src/platform/execute.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture()));
});
test.after.always(async () => { await app?.close(); });

const REVISION = '2026-07-28';
const endpoint = () => new URL(`${app.url}/api/v1/mcp`);
const envelope = { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' } };

/** A 2026-07-28 request as a current client sends it: envelope in _meta, the version and method headers. */
async function modern(key: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const name: Record<string, string> = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
  const res = await mcpRpc(app, { jsonrpc: '2.0', id: 'm1', method, params: { ...params, _meta: { ...envelope, ...(params._meta as object) } } },
    { authorization: `Bearer ${key}`, 'mcp-protocol-version': REVISION, 'mcp-method': method, ...name, ...headers });
  return { status: res.status, body: rpcMessages(await res.text()) };
}

test.serial('an SDK v2 client ends on 2026-07-28 and an SDK v1 client on 2025-11-25, side by side', async (t) => {
  const headers = { authorization: `Bearer ${acme.keys.org}` };
  const v2 = new ClientV2({ name: 'v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  const v1 = new ClientV1({ name: 'v1', version: '1.0.0' });
  await v2.connect(new TransportV2(endpoint(), { requestInit: { headers } }));
  await v1.connect(new TransportV1(endpoint(), { requestInit: { headers } }));
  try {
    t.is(v2.getProtocolEra(), 'modern');
    t.is(v2.getNegotiatedProtocolVersion(), REVISION);
    t.is(v1.getServerVersion()?.name, 'svc');
    t.is(v2.getServerVersion()?.name, 'svc');
    const [new2, old1] = await Promise.all([v2.listTools(), v1.listTools()]);
    t.deepEqual(new2.tools.map((x) => x.name), old1.tools.map((x) => x.name), 'the same tools in the same order');
    t.deepEqual(new2.tools.find((x) => x.name === 'contacts_remove_tag'), old1.tools.find((x) => x.name === 'contacts_remove_tag') as never);
    const args = { name: 'contacts_get', arguments: { contactId: acme.ids.ann } };
    const [r2, r1] = await Promise.all([v2.callTool(args), v1.callTool(args)]);
    t.deepEqual(r2.structuredContent, r1.structuredContent);
    t.is((r2.structuredContent as { id: string }).id, acme.ids.ann as string);
    const bad = await v2.callTool({ name: 'contacts_get', arguments: { contactId: 'nope' } });
    t.true(bad.isError);
    t.like(JSON.parse((bad.content as { text: string }[])[0]!.text ?? ''), { statusCode: 400, error: 'bad_request' });
  } finally {
    await Promise.all([v2.close(), v1.close()]);
  }
});

test.serial('server/discover names the revision, the tools capability, the server and how long to keep it', async (t) => {
  const { status, body } = await modern(acme.keys.org!, 'server/discover');
  t.is(status, 200);
  t.deepEqual(body.result.supportedVersions, [REVISION]);
  t.like(body.result, { resultType: 'complete', capabilities: { tools: { listChanged: false } }, ttlMs: 3_600_000, cacheScope: 'private',
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'svc' } } });
  t.regex(body.result.instructions, /me_get/);
});

test.serial('a 2026-07-28 tools/list carries ttlMs and cacheScope, hints, the confirm/changes _meta and output schemas', async (t) => {
  const { status, body } = await modern(acme.keys.org!, 'tools/list');
  t.is(status, 200);
  t.like(body.result, { resultType: 'complete', ttlMs: 60_000, cacheScope: 'private' });
  const tools = new Map((body.result.tools as { name: string }[]).map((x) => [x.name, x as any]));
  t.like(tools.get('contacts_get'), { annotations: { readOnlyHint: true }, _meta: { 'svc/confirm': false }, outputSchema: { type: 'object' } });
  t.like(tools.get('conversations_send_sms'), { annotations: { readOnlyHint: false }, _meta: { 'svc/confirm': true } });
  t.false(tools.has('mcp_request'));
});

test.serial('a 2026-07-28 tools/call: the fast path and the SDK answer alike; failures are isError with the envelope', async (t) => {
  const params = { name: 'contacts_get', arguments: { contactId: acme.ids.ann } };
  const fast = await modern(acme.keys.org!, 'tools/call', params);
  // an SSE-first Accept takes the SDK's path (createMcpHandler), which answers JSON all the same
  const sdk = await modern(acme.keys.org!, 'tools/call', params, { accept: 'text/event-stream, application/json' });
  t.is(fast.status, 200);
  t.deepEqual(fast.body, sdk.body);
  t.like(fast.body.result, { resultType: 'complete', structuredContent: { id: acme.ids.ann },
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'svc' } } });
  t.deepEqual(JSON.parse(fast.body.result.content[0].text), fast.body.result.structuredContent);
  const write = await modern(acme.keys.org!, 'tools/call', { name: 'contacts_add_note', arguments: { contactId: acme.ids.ann, body: 'From 2026' } });
  t.like(write.body.result, { resultType: 'complete', structuredContent: { body: 'From 2026' } });
  const missing = await modern(acme.keys.org!, 'tools/call', { name: 'contacts_get', arguments: { contactId: '00000000-0000-4000-8000-000000000000' } });
  t.true(missing.body.result.isError);
  t.like(JSON.parse(missing.body.result.content[0].text), { statusCode: 404, error: 'not_found' });
  t.is(missing.body.result.structuredContent, undefined);
  const member = await modern(acme.keys.member_key!, 'tools/call', { name: 'contacts_upsert', arguments: { email: 'x@example.com' } });
  t.like(JSON.parse(member.body.result.content[0].text), { statusCode: 403 }, 'a MEMBER calling a deny tool');
});

test.serial('2026-07-28 refusals: the envelope, the headers and the version must agree; no initialize', async (t) => {
  const key = acme.keys.org!;
  const params = { name: 'contacts_get', arguments: { contactId: acme.ids.ann } };
  const noHeader = await mcpRpc(app, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: envelope } }, { authorization: `Bearer ${key}` });
  t.is(noHeader.status, 400);
  t.like(rpcMessages(await noHeader.text()), { error: { code: -32020 } }, 'the version header is missing');
  const wrongName = await modern(key, 'tools/call', params, { 'mcp-name': 'contacts_search' });
  t.is(wrongName.status, 400);
  t.like(wrongName.body, { error: { code: -32020 } }, 'Mcp-Name names another tool');
  const noMeta = await mcpRpc(app, { jsonrpc: '2.0', id: 1, method: 'tools/call', params }, { authorization: `Bearer ${key}`, 'mcp-protocol-version': REVISION });
  t.is(noMeta.status, 400);
  t.like(rpcMessages(await noMeta.text()), { error: { code: -32602 } }, 'the header without the envelope');
  const future = await modern(key, 'tools/call', { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }, { 'mcp-protocol-version': '2099-01-01' });
  t.is(future.status, 400);
  t.like(future.body, { error: { code: -32022 } }, 'an unsupported version names the supported ones');
  t.true(future.body.error.data.supported.includes(REVISION));
  const init = await modern(key, 'initialize', { protocolVersion: REVISION, capabilities: {}, clientInfo: { name: 'x', version: '1' } });
  t.truthy(init.body.error, 'initialize does not exist in the stateless revision');
});

test.serial('2026-07-28: the key first (401), then 404 while MCP is off for the organization', async (t) => {
  const none = await mcpRpc(app, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }, { 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/list' });
  t.is(none.status, 401);
  t.truthy(none.headers.get('www-authenticate'));
  const off = await app.apply(acmeFixture('MCP Off Revision Co'));
  await updateOrg(app.db.owner, off.organization_id, 'off', undefined);
  for (const [method, params] of [['server/discover', {}], ['tools/list', {}], ['tools/call', { name: 'contacts_get', arguments: { contactId: off.ids.ann } }]] as const) {
    const res = await modern(off.keys.org!, method, params);
    t.is(res.status, 404, method);
    t.is(res.body.error, 'not_found', method);
  }
});

test.serial('a 2026-07-28 tools/list shows a MEMBER every tool it may call and none it may not', async (t) => {
  // acme's quiet_personal: a MEMBER whose SMS setting is off; sam_personal: a MEMBER whose setting is on
  const listed = async (key: string) => new Set(((await modern(key, 'tools/list')).body.result.tools as { name: string }[]).map((x) => x.name));
  const [quiet, sam] = await Promise.all([listed(acme.keys.quiet_personal!), listed(acme.keys.sam_personal!)]);
  let checked = 0;
  for (const op of app.operations) {
    if (op.operationId === 'mcp_request') continue;
    const { memberAccess } = requirementOf(op);
    if (memberAccess === 'deny') {
      t.false(quiet.has(op.operationId), `${op.operationId} is denied to a MEMBER`);
      t.false(sam.has(op.operationId), `${op.operationId} is denied to a MEMBER`);
    } else if (memberAccess === 'sms_setting') {
      t.false(quiet.has(op.operationId), `${op.operationId} needs the SMS setting`);
      t.true(sam.has(op.operationId), `${op.operationId} with the SMS setting on`);
    } else {
      t.true(quiet.has(op.operationId), `${op.operationId} (${memberAccess}) is a MEMBER's to call`);
    }
    checked += 1;
  }
  t.true(checked >= 60);
});

const inspector = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')), 'clients/launcher/build/index.js');

function inspect(args: string[], home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [inspector, '--cli', ...args], { env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

test.serial('the Inspector\'s CLI lists and calls tools in both flows', async (t) => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'mcp-inspector-'));
  try {
    for (const era of ['legacy', 'modern']) {
      const common = [endpoint().href, '--transport', 'http', '--protocol-era', era, '--header', `Authorization: Bearer ${acme.keys.org}`];
      const list = await inspect([...common, '--method', 'tools/list'], home);
      t.is(list.code, 0, `${era}: ${list.stderr.slice(-2000)}`);
      const names = (JSON.parse(list.stdout) as { tools: { name: string }[] }).tools.map((x) => x.name);
      t.true(names.includes('contacts_get'), era);
      const call = await inspect([...common, '--method', 'tools/call', '--tool-name', 'contacts_get', '--tool-arg', `contactId=${acme.ids.ann}`], home);
      t.is(call.code, 0, `${era}: ${call.stderr.slice(-2000)}`);
      t.like(JSON.parse(call.stdout), { structuredContent: { id: acme.ids.ann } }, era);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
