// The calls operations as MCP tools: listed for every credential with calls:read, read-only, and
// answering as REST does — cursor paging and the MEMBER rule included.
import test from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { withMcpClient } from '../helpers/mcp.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { callsFixture } from './helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(callsFixture())); });
test.after.always(async () => { await app?.close(); });

const withClient = <T>(key: string, fn: (c: Client) => Promise<T>) => withMcpClient(app, key, fn);
const json = (res: any) => JSON.parse(res.content[0].text);
const callTools = (c: Client) => c.listTools().then((r) => r.tools.filter((x) => x.name.startsWith('calls_')));

test('calls_list and calls_get are read-only tools of every credential with calls:read', async (t) => {
  for (const k of ['org', 'north_mgr', 'member_key', 'sam_personal']) {
    const tools = await withClient(acme.keys[k]!, callTools);
    t.deepEqual(tools.map((x) => x.name).sort(), ['calls_get', 'calls_list'], k);
    t.true(tools.every((x) => x.annotations?.readOnlyHint === true), k);
  }
  t.deepEqual(await withClient(acme.keys.org_reader!, callTools), [], 'no calls:read, no calls tools');
});

test('paging through calls over MCP, and the MEMBER rule', async (t) => {
  const ids: string[] = [];
  await withClient(acme.keys.org!, async (c) => {
    let cursor: string | null = null;
    do {
      const page = json(await c.callTool({ name: 'calls_list', arguments: { limit: 1, ...(cursor ? { cursor } : {}) } }));
      ids.push(...page.items.map((x: { id: string }) => x.id));
      cursor = page.next_cursor;
    } while (cursor);
  });
  t.deepEqual(ids, ['call_ann', 'call_bob', 'call_cy', 'call_dee'].map((r) => acme.ids[r]));
  const mine = await withClient(acme.keys.sam_personal!, async (c) => json(await c.callTool({ name: 'calls_list', arguments: {} })));
  t.deepEqual(mine.items.map((x: { id: string }) => x.id), [acme.ids.call_ann]);
  const denied = await withClient(acme.keys.sam_personal!, (c) => c.callTool({ name: 'calls_get', arguments: { callId: acme.ids.call_dee } }));
  t.true(denied.isError);
  t.like(json(denied), { statusCode: 404, error: 'not_found' });
  const bad = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'calls_list', arguments: { cursor: 'nope' } }));
  t.true(bad.isError);
  t.like(json(bad), { statusCode: 400 });
});
