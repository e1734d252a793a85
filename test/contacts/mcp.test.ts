// The contacts operations as MCP tools: listed per credential, same answers and errors as REST.
import test from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { withMcpClient } from '../helpers/mcp.ts';
import { contactsFixture } from './helpers.ts';
import { contacts } from '../../src/contacts/index.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(contactsFixture())); });
test.after.always(async () => { await app?.close(); });

const withClient = <T>(key: string, fn: (c: Client) => Promise<T>) => withMcpClient(app, key, fn);

const json = (res: any) => JSON.parse(res.content[0].text);

test('tools follow the credential: a MEMBER sees the scoped reads and the stages only', async (t) => {
  const member = await withClient(acme.keys.member_key!, async (c) => (await c.listTools()).tools.map((x) => x.name).filter((n) => n.startsWith('contacts_')).sort());
  t.deepEqual(member, ['contacts_get', 'contacts_list_interactions', 'contacts_list_stages', 'contacts_search']);
  // the contacts area's tools (contacts_list_enrollments, also named contacts_, is the sequences area's)
  const ours = new Set(contacts.operations.map((o) => o.operationId));
  const org = await withClient(acme.keys.org!, async (c) => (await c.listTools()).tools.filter((x) => ours.has(x.name)));
  t.is(org.length, 12);
  const upsert = org.find((x) => x.name === 'contacts_upsert')!;
  t.like(upsert._meta, { 'svc/confirm': true, 'svc/changes': ['contacts', 'sequences'] });
  t.true(org.find((x) => x.name === 'contacts_search')!.annotations!.readOnlyHint);
  t.truthy((upsert.inputSchema.properties as Record<string, unknown>).email);
});

test('a tool call answers as REST does, field limiting included', async (t) => {
  const card = await withClient(acme.keys.member_key!, (c) => c.callTool({ name: 'contacts_get', arguments: { contactId: acme.ids.ann } }));
  t.falsy(card.isError);
  t.deepEqual(json(card), { id: acme.ids.ann, name: 'Ann Lee', email: 'ann@example.com', phone: '+15551230001' });
  const found = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'contacts_search', arguments: { q: 'lee', limit: 5 } }));
  t.like(json(found), { total: 1, limit: 5, page: 1 });
  const tagged = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'contacts_add_tag', arguments: { contactId: acme.ids.bob, name: 'mcp' } }));
  t.deepEqual(json(tagged), { contact_id: acme.ids.bob, tags: ['mcp'] });
});

test('a failing tool call carries the REST error envelope', async (t) => {
  const res = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'contacts_search', arguments: { q: 'a', email: 'a@example.com' } }));
  t.true(res.isError);
  t.like(json(res), { statusCode: 400, error: 'bad_request' });
  const missing = await withClient(acme.keys.north_mgr!, (c) => c.callTool({ name: 'contacts_get', arguments: { contactId: acme.ids.bob } }));
  t.like(json(missing), { statusCode: 404, error: 'not_found' });
});
