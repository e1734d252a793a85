// The forms operations as MCP tools: a staff member is offered the forms but not their
// submissions, and the tools answer as REST does.
import test from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { withMcpClient } from '../helpers/mcp.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { formsFixture } from './helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(formsFixture())); });
test.after.always(async () => { await app?.close(); });

const withClient = <T>(key: string, fn: (c: Client) => Promise<T>) => withMcpClient(app, key, fn);
const json = (res: any) => JSON.parse(res.content[0].text);
const formTools = (c: Client) => c.listTools().then((r) => r.tools.filter((x) => x.name.startsWith('forms_')).map((x) => x.name).sort());

test('tools follow the credential: staff see forms, not submissions', async (t) => {
  t.deepEqual(await withClient(acme.keys.org!, formTools), ['forms_get', 'forms_list', 'forms_list_submissions']);
  for (const k of ['member_key', 'sam_personal']) t.deepEqual(await withClient(acme.keys[k]!, formTools), ['forms_get', 'forms_list'], k);
});

test('a tool call answers as REST does', async (t) => {
  const form = await withClient(acme.keys.sam_personal!, async (c) => json(await c.callTool({ name: 'forms_get', arguments: { formId: acme.ids.intake } })));
  const rest = await app.request('GET', `/api/v1/forms/${acme.ids.intake}`, { key: acme.keys.sam_personal });
  t.deepEqual(form, rest.body);
  const page = await withClient(acme.keys.org!, async (c) => json(await c.callTool({ name: 'forms_list_submissions',
    arguments: { formId: acme.ids.intake, search: 'bob', limit: 1 } })));
  t.like(page, { total: 1, limit: 1, page: 1 });
  t.is(page.items[0].id, acme.ids.s_bob);
  const dateOnly = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'forms_list_submissions',
    arguments: { formId: acme.ids.intake, from: '2026-11-18' } }));
  t.true(dateOnly.isError);
  t.like(json(dateOnly), { statusCode: 400 });
});
