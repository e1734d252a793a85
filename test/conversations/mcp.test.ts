// The conversations operations as MCP tools: listed per credential (texting tools only while
// a member may text), flags as the spec says, same answers and errors as REST.
import test from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { withMcpClient } from '../helpers/mcp.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { conversations } from '../../src/conversations/index.ts';
import { inboxFixture, makeOwnClient } from './fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(inboxFixture())); });
test.after.always(async () => { await app?.close(); });

const withClient = <T>(key: string, fn: (c: Client) => Promise<T>) => withMcpClient(app, key, fn);
const json = (res: any) => JSON.parse(res.content[0].text);
const ours = new Set(conversations.operations.map((o) => o.operationId));
const toolsOf = (key: string) => withClient(key, async (c) => (await c.listTools()).tools.filter((x) => ours.has(x.name)));

test('the tools follow the credential: readers read, members text only while their SMS setting is on', async (t) => {
  const all = await toolsOf(acme.keys.org!);
  t.deepEqual(all.map((x) => x.name).sort(), [...ours].sort());
  const reply = all.find((x) => x.name === 'conversations_reply')!;
  t.like(reply._meta, { 'svc/confirm': true, 'svc/changes': [] });
  t.like(all.find((x) => x.name === 'conversations_resume')!._meta, { 'svc/confirm': true });
  t.like(all.find((x) => x.name === 'conversations_hold')!._meta, { 'svc/confirm': false });
  t.true(all.find((x) => x.name === 'conversations_list')!.annotations!.readOnlyHint);
  const names = async (key: string) => (await toolsOf(key)).map((x) => x.name).sort();
  t.deepEqual(await names(acme.keys.sam_personal!), [...ours].sort(), 'a member with texting on');
  t.deepEqual(await names(acme.keys.quiet_personal!), ['conversations_get', 'conversations_list'], 'texting off');
  t.deepEqual(await names(acme.keys.member_key!), ['conversations_get', 'conversations_list'], 'a Member key sends no SMS');
  t.deepEqual(await names(acme.keys.north_weak!), ['conversations_get', 'conversations_list'], 'a manager without the contacts power');
  t.deepEqual(await names(acme.keys.org_reader!), [], 'without the scopes');
});

test('a tool call answers as REST does', async (t) => {
  const listed = await withClient(acme.keys.north_mgr!, (c) => c.callTool({ name: 'conversations_list', arguments: { q: 'monday', limit: 5 } }));
  t.falsy(listed.isError);
  t.deepEqual(json(listed).items.map((i: { id: string }) => i.id), [acme.ids.ann_sms]);
  const thread = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'conversations_get', arguments: { conversationId: acme.ids.ann_sms } }));
  t.like(json(thread), { id: acme.ids.ann_sms, response_mode: 'ai' });
  await makeOwnClient(app.db, acme.organization_id, acme.ids.staff!, acme.ids.ann!);
  const sent = await withClient(acme.keys.sam_personal!, (c) => c.callTool({ name: 'conversations_send_sms',
    arguments: { contact_id: acme.ids.ann, body: 'Hi Ann, Sam here' } }));
  t.falsy(sent.isError, JSON.stringify(sent));
  t.like(json(sent), { message: { author: 'person', author_person_id: acme.ids.staff, status: 'sent' },
    conversation: { id: acme.ids.ann_sms, response_mode: 'human' } });
  const resumed = await withClient(acme.keys.sam_personal!, (c) => c.callTool({ name: 'conversations_resume',
    arguments: { conversationId: acme.ids.ann_sms } }));
  t.like(json(resumed), { response_mode: 'ai' });
});

test('a failing tool call carries the REST error envelope', async (t) => {
  const email = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'conversations_hold', arguments: { conversationId: acme.ids.cy_email } }));
  t.true(email.isError);
  t.like(json(email), { statusCode: 422, error: 'channel_not_supported' });
  const noPerson = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'conversations_reply',
    arguments: { conversationId: acme.ids.cy_email, body: 'Hi' } }));
  t.like(json(noPerson), { statusCode: 422, error: 'no_acting_user' });
  const noConsent = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'conversations_send_sms',
    arguments: { contact_id: acme.ids.dee, body: 'Hi' } }));
  t.like(json(noConsent), { statusCode: 409, error: 'sms_not_permitted' });
  const away = await withClient(acme.keys.north_mgr!, (c) => c.callTool({ name: 'conversations_get', arguments: { conversationId: acme.ids.bob_sms } }));
  t.like(json(away), { statusCode: 404, error: 'not_found' });
});
