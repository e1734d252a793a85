// conversations_list and conversations_get: shapes, search, cursor paging, and who sees what
// (organizations, locations, the MEMBER/MANAGER matrix, own-records members).
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { NORTH, NOWHERE, SOUTH, inboxFixture, makeOwnClient } from './fixture.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(inboxFixture()));
  other = await app.apply(inboxFixture('Other Dental'));
});
test.after.always(async () => { await app?.close(); });

const list = (key: string, query = '') => app.request('GET', `/api/v1/conversations${query}`, { key });
const get = (key: string, id: string) => app.request('GET', `/api/v1/conversations/${id}`, { key });
const idsOf = (tenant: Applied, refs: string[]) => refs.map((r) => tenant.ids[r]).sort();
const listed = (res: { body: { items: { id: string }[] } }) => res.body.items.map((i) => i.id).sort();

/** Every page of the list for a key, following next_cursor. */
async function all(key: string, query = '', limit = 2): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const sep = query ? '&' : '?';
    const res = await list(key, `${query}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    seen.push(...res.body.items.map((i: { id: string }) => i.id));
    cursor = res.body.next_cursor;
  } while (cursor);
  return seen;
}

test('an organization key lists every conversation of its organization, newest opened first, with contact and last message', async (t) => {
  const res = await list(acme.keys.org!);
  t.is(res.status, 200);
  t.deepEqual(listed(res), idsOf(acme, [...NORTH, ...SOUTH, ...NOWHERE]));
  const created = res.body.items.map((i: { created_at: string }) => Date.parse(i.created_at));
  t.deepEqual(created, [...created].sort((a, b) => b - a));
  const ann = res.body.items.find((i: { id: string }) => i.id === acme.ids.ann_sms);
  t.like(ann, { channel: 'sms', location_id: acme.ids.north, response_mode: 'ai', ai_held: false, business_address: '+15550000001',
    contact: { id: acme.ids.ann, name: 'Ann Lee', phone: '+15551230001' } });
  t.like(ann.last_message, { direction: 'outbound', author: 'ai', body: 'Yes, 10:00 is free.', status: 'sent' });
  const email = res.body.items.find((i: { id: string }) => i.id === acme.ids.cy_email);
  t.is(email.response_mode, 'human', 'email has no AI');
  t.is(res.body.next_cursor, null);
});

test('conversations_get answers the thread oldest first with response_mode; another organization\'s id is 404', async (t) => {
  const res = await get(acme.keys.org!, acme.ids.cy_email!);
  t.is(res.status, 200);
  t.like(res.body, { id: acme.ids.cy_email, channel: 'email', subject: 'Invoice', response_mode: 'human', location_id: null });
  t.deepEqual(res.body.messages.map((m: { author: string; body: string }) => [m.author, m.body]),
    [['contact', 'Where is my invoice?'], ['person', 'Attached, sorry!']]);
  t.is(res.body.messages[1].author_person_id, acme.ids.owner);
  t.is((await get(acme.keys.org!, other.ids.cy_email!)).status, 404);
  t.is((await get(other.keys.org!, acme.ids.ann_sms!)).status, 404);
  t.is((await get(acme.keys.org!, '00000000-0000-4000-8000-000000000000')).body.error, 'not_found');
  t.deepEqual(listed(await list(other.keys.org!)), idsOf(other, [...NORTH, ...SOUTH, ...NOWHERE]), 'each sees its own');
});

test('location-limited keys and managers see their locations only; organization-wide records need the whole organization', async (t) => {
  t.deepEqual(listed(await list(acme.keys.north_mgr!)), idsOf(acme, NORTH));
  t.deepEqual(listed(await list(acme.keys.south_mgr!)), idsOf(acme, SOUTH));
  t.deepEqual(listed(await list(acme.keys.mgr_personal!)), idsOf(acme, NORTH));
  t.deepEqual(listed(await list(acme.keys.north_member!)), idsOf(acme, NORTH));
  for (const key of [acme.keys.north_mgr!, acme.keys.north_member!, acme.keys.mgr_personal!]) {
    t.is((await get(key, acme.ids.bob_sms!)).status, 404, 'another location');
    t.is((await get(key, acme.ids.cy_email!)).status, 404, 'the organization\'s');
    t.is((await get(key, acme.ids.ann_sms!)).status, 200);
  }
  t.deepEqual(listed(await list(acme.keys.admin_personal!)), idsOf(acme, [...NORTH, ...SOUTH, ...NOWHERE]));
  t.deepEqual(listed(await list(acme.keys.mgr_key!)), idsOf(acme, [...NORTH, ...SOUTH, ...NOWHERE]), 'a manager key of the whole organization');
});

test('members read the conversations of their locations whatever their SMS setting; own-records members only their clients\'', async (t) => {
  t.deepEqual(listed(await list(acme.keys.sam_personal!)), idsOf(acme, NORTH));
  t.deepEqual(listed(await list(acme.keys.quiet_personal!)), idsOf(acme, SOUTH), 'reading is not texting');
  t.deepEqual(listed(await list(acme.keys.member_key!)), idsOf(acme, [...NORTH, ...SOUTH, ...NOWHERE]));
  t.deepEqual(listed(await list(acme.keys.own_personal!)), [], 'no clients yet');
  t.is((await get(acme.keys.own_personal!, acme.ids.ann_sms!)).status, 404);
  await makeOwnClient(app.db, acme.organization_id, acme.ids.own!, acme.ids.ann!);
  await makeOwnClient(app.db, acme.organization_id, acme.ids.own!, acme.ids.bob!);
  t.deepEqual(listed(await list(acme.keys.own_personal!)), idsOf(acme, ['ann_sms', 'ann_chat']), 'bob is at another location');
  t.is((await get(acme.keys.own_personal!, acme.ids.ann_chat!)).status, 200);
  t.is((await get(acme.keys.own_personal!, acme.ids.dee_sms!)).status, 404);
});

test('scope: conversations:read is required, and enough', async (t) => {
  const res = await list(acme.keys.org_reader!);
  t.is(res.status, 403);
  t.like(res.body, { error: 'insufficient_scope', required: 'conversations:read' });
  t.is((await list(acme.keys.reader!)).status, 200);
});

test('q finds message bodies and contacts, case-insensitively, and never chat', async (t) => {
  t.deepEqual(listed(await list(acme.keys.org!, '?q=RESCHEDULE')), idsOf(acme, ['bob_sms']));
  t.deepEqual(listed(await list(acme.keys.org!, '?q=zebra')), [], 'only a chat says zebra');
  t.deepEqual(listed(await list(acme.keys.org!, '?q=Monday')), idsOf(acme, ['ann_sms']), 'the chat about Monday is left out');
  t.deepEqual(listed(await list(acme.keys.org!, '?q=ann%20lee')), idsOf(acme, ['ann_sms']), 'by contact name, not the chat');
  t.deepEqual(listed(await list(acme.keys.org!, '?q=cy%40example')), idsOf(acme, ['cy_email']), 'by email');
  t.deepEqual(listed(await list(acme.keys.org!, '?q=5551230004')), idsOf(acme, ['dee_sms']), 'by phone');
  t.deepEqual(listed(await list(acme.keys.org!, '?q=100%25')), idsOf(acme, ['bob_sms']), '% is a character, not a wildcard');
  t.deepEqual(listed(await list(acme.keys.org!, '?q=_')), [], '_ is a character too');
  t.deepEqual(listed(await list(acme.keys.north_mgr!, '?q=reschedule')), [], 'search stays in reach');
  t.deepEqual(listed(await list(other.keys.org!, '?q=invoice')), idsOf(other, ['cy_email']));
});

test('cursor paging visits every conversation once', async (t) => {
  const seen = await all(acme.keys.org!, '', 2);
  t.deepEqual([...seen].sort(), idsOf(acme, [...NORTH, ...SOUTH, ...NOWHERE]));
  t.deepEqual(await all(acme.keys.org!, '?q=monday', 1), [acme.ids.ann_sms]);
  t.is(new Set(await all(acme.keys.north_mgr!, '', 1)).size, NORTH.length);
});

test('paging stays complete and without duplicates while conversations open and messages arrive', async (t) => {
  const tenant = await app.apply(inboxFixture('Busier Dental'));
  const before = (await app.db.owner.query(`select id from app_public.conversations where organization_id = $1`, [tenant.organization_id])).rows
    .map((r) => r.id as string).sort();
  const seen: string[] = [];
  let cursor: string | null = null;
  let round = 0;
  do {
    const res = await list(tenant.keys.org!, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    t.is(res.status, 200);
    seen.push(...res.body.items.map((i: { id: string }) => i.id));
    cursor = res.body.next_cursor;
    // between pages: a new conversation opens and every existing one gets a message
    await app.db.owner.query(
      `insert into app_public.conversations (organization_id, contact_id, channel, location_id)
       select organization_id, id, 'chat', null from app_public.contacts where organization_id = $1 and name = 'Cy Nowhere'`,
      [tenant.organization_id]);
    await app.db.owner.query(
      `insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
       select organization_id, id, channel, 'inbound', 'contact', 'more ' || $2, 'received' from app_public.conversations
        where organization_id = $1`, [tenant.organization_id, round++]);
    await app.db.owner.query(`update app_public.conversations set last_message_at = clock_timestamp() where organization_id = $1`,
      [tenant.organization_id]);
  } while (cursor);
  t.is(new Set(seen).size, seen.length, 'no duplicates');
  t.deepEqual(before.filter((id) => !seen.includes(id)), [], 'none missed');
});

test('bad cursors and limits are 400s', async (t) => {
  for (const query of ['?cursor=abc', '?cursor=' + Buffer.from('2026-01-01T00:00:00Z|x').toString('base64url'), '?limit=0', '?limit=101',
    '?q=', '?limit=2&limit=3']) {
    const res = await list(acme.keys.org!, query);
    t.is(res.status, 400, query);
  }
  const first = await list(acme.keys.org!, '?limit=1');
  const tampered = first.body.next_cursor.slice(0, -2) + (first.body.next_cursor.endsWith('AA') ? 'AB' : 'AA');
  t.is((await list(acme.keys.org!, `?cursor=${tampered}`)).status, 400);
});

test('q for a location-limited key finds its matches behind many it cannot read', async (t) => {
  const tenant = await app.apply(inboxFixture('Crowded Dental'));
  const org = tenant.organization_id;
  // eleven newer south threads say the word; one older north thread too
  await app.db.owner.query(`insert into app_public.conversations (organization_id, contact_id, location_id, channel, created_at)
    select $1, $2, $3, 'chat', now() - interval '1 day'`, [org, tenant.ids.ann, tenant.ids.north]);
  const { rows: [north] } = await app.db.owner.query(`insert into app_public.conversations (organization_id, contact_id, location_id, channel,
      business_address, created_at) values ($1, $2, $3, 'sms', '+15559990000', now() - interval '2 days') returning id`,
    [org, tenant.ids.ann, tenant.ids.north]);
  await app.db.owner.query(`insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
    select $1, $2, $3, 'sms', '+1555999' || lpad(g::text, 4, '0') from generate_series(1, 11) g`, [org, tenant.ids.bob, tenant.ids.south]);
  await app.db.owner.query(`insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
    select organization_id, id, channel, 'inbound', 'contact', 'a loopword here', 'received' from app_public.conversations
     where organization_id = $1 and (business_address like '+1555999%' or (channel = 'chat' and created_at > now() - interval '36 hours'))`,
    [org]);
  const page = await list(tenant.keys.north_mgr!, '?q=loopword&limit=1');
  t.deepEqual(page.body.items.map((i: { id: string }) => i.id), [north.id], 'the chat is not searched; the south threads are out of reach');
  t.is(page.body.next_cursor, null);
  const everyone = await all(tenant.keys.org!, '?q=loopword', 3);
  t.is(everyone.length, 12);
});
