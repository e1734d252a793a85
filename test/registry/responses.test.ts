// The test helpers hold every 2xx answer to its operation's response schema, over REST and MCP:
// an answer that does not parse, or carries a field the schema does not declare, fails the test
// that received it.
import test from 'ava';
import { z } from 'zod';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { callTool, mcpRpc, withMcpClient } from '../helpers/mcp.ts';
import { operationAt } from '../helpers/responses.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { AREAS } from '../../src/areas.ts';
import { sql } from '../../src/db/sql.ts';
import { operationsOf } from '../../src/registry/area.ts';
import { defineOperation } from '../../src/registry/operation.ts';

const probe = (operationId: string, answer: Record<string, unknown>) => defineOperation({
  operationId, method: 'GET', path: `/api/v1/probe/${operationId}`, tag: 'Probe', summary: 'probe', description: 'test-only',
  scope: null, memberAccess: 'open', managerPower: null,
  response: z.object({ ok: z.boolean() }),
  run: { statement: () => sql`select 1`, shape: () => answer as { ok: boolean } },
});
const fits = probe('probe_fits', { ok: true });
const wrongType = probe('probe_wrong_type', { ok: 'yes' });
const undeclared = probe('probe_undeclared', { ok: true, secret: 'x' });

let app: TestApp;
let acme: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture(), { operations: [fits, wrongType, undeclared] }));
});
test.after.always(async () => { await app?.close(); });

test('REST: an answer that fits passes; a wrong type or an undeclared field fails the request', async (t) => {
  t.deepEqual((await app.request('GET', '/api/v1/probe/probe_fits', { key: acme.keys.org })).body, { ok: true });
  await t.throwsAsync(app.request('GET', '/api/v1/probe/probe_wrong_type', { key: acme.keys.org }),
    { message: /answered 200: the answer does not fit probe_wrong_type's response schema: ok: Invalid input: expected boolean/ });
  await t.throwsAsync(app.request('GET', '/api/v1/probe/probe_undeclared', { key: acme.keys.org }),
    { message: /does not fit probe_undeclared's response schema: secret: not declared by the schema/ });
  t.like(await app.request('GET', '/api/v1/probe/probe_undeclared', { key: acme.keys.org, undeclared: ['secret'] }),
    { status: 200, body: { ok: true, secret: 'x' } }, 'unless the suite names the field');
  t.is((await app.request('GET', '/api/v1/probe/probe_wrong_type')).status, 401, 'errors are envelopes, not the schema\'s');
});

test('MCP: the SDK client, a tool call and a raw batch fail on a result that does not fit', async (t) => {
  t.deepEqual((await callTool(app, acme.keys.org!, 'probe_fits', {})).body, { ok: true });
  await t.throwsAsync(callTool(app, acme.keys.org!, 'probe_undeclared', {}), { message: /tools\/call probe_undeclared: .*secret: not declared/ });
  await t.throwsAsync(withMcpClient(app, acme.keys.org!, (c) => c.callTool({ name: 'probe_wrong_type', arguments: {} })),
    { message: /tools\/call probe_wrong_type: the answer does not fit/ });
  const batch = [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'probe_fits', arguments: {} } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'probe_wrong_type', arguments: {} } }];
  await t.throwsAsync(mcpRpc(app, batch, { authorization: `Bearer ${acme.keys.org}` }), { message: /probe_wrong_type/ });
});

test('a request is checked against the operation express routes it to: fixed paths before parameters, any case', (t) => {
  const operations = operationsOf(AREAS);
  const at = (method: string, path: string) => operationAt(operations, method, path)?.operationId;
  t.is(at('GET', '/api/v1/contacts/stages'), 'contacts_list_stages');
  t.is(at('GET', '/api/v1/contacts/6f1c2a4e-93d7-4b0a-8e15-2c7d9b3f0a61'), 'contacts_get');
  t.is(at('DELETE', '/api/v1/contacts/x/tags/a%2Fb'), 'contacts_remove_tag');
  t.is(at('POST', '/api/v1/audiences/preview-count'), 'audiences_preview_count');
  t.is(at('get', '/API/v1/Audiences/'), 'audiences_list');
  t.is(at('PUT', '/api/v1/contacts'), undefined);
  t.is(at('GET', '/api/v1/contacts/x/y'), undefined);
});
