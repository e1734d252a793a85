// Who is in an audience (spec: Endpoints → Audiences): members of static audiences (safe to
// repeat, contacts of the organization only), counts under the caller's reach, and cursor
// paging that lists every member exactly once, even while contacts are added meanwhile.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from '../contacts/helpers.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(contactsFixture()));
  // a few hundred more contacts, so pages are many
  await app.db.owner.query(`
    insert into app_public.contacts (organization_id, name, email, field_values)
    select $1, 'Bulk ' || i, 'bulk' || i || '@example.com', jsonb_build_object('plan', case when i % 3 = 0 then 'gold' else 'silver' end)
      from generate_series(1, 300) i`, [acme.organization_id]);
});
test.after.always(async () => { await app?.close(); });

const key = () => acme.keys.org!;
const create = (body: unknown) => app.request('POST', '/api/v1/audiences', { key: key(), body });
const add = (id: string, contactId: string, k = key()) => app.request('POST', `/api/v1/audiences/${id}/members`, { key: k, body: { contact_id: contactId } });
const remove = (id: string, contactId: string, k = key()) => app.request('DELETE', `/api/v1/audiences/${id}/members/${contactId}`, { key: k });
const count = async (id: string, k = key()) => (await app.request('GET', `/api/v1/audiences/${id}/count`, { key: k })).body.count as number;
const page = (id: string, query = '') => app.request('GET', `/api/v1/audiences/${id}/contacts${query}`, { key: key() });

async function allPages(id: string, limit: number, between?: (n: number) => Promise<void>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await page(id, `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    if (res.body.items.length > limit) throw new Error('page over the limit');
    ids.push(...res.body.items.map((c: { id: string }) => c.id));
    cursor = res.body.next_cursor;
    pages++;
    if (cursor && res.body.items.length !== limit) throw new Error('a short page before the end');
    await between?.(pages);
  } while (cursor);
  return { ids, pages };
}

const orgContactIds = async () => (await app.db.owner.query(
  `select id from app_public.contacts where organization_id = $1 order by id`, [acme.organization_id])).rows.map((r) => r.id as string);

test('a static audience takes members: adding and removing are safe to repeat', async (t) => {
  const a = (await create({ name: 'Static', kind: 'static' })).body;
  t.is(await count(a.id), 0);
  const first = await add(a.id, acme.ids.ann!);
  t.is(first.status, 200, JSON.stringify(first.body));
  t.deepEqual(first.body, { audience_id: a.id, contact_id: acme.ids.ann, is_member: true });
  t.deepEqual((await add(a.id, acme.ids.ann!)).body, first.body, 'adding again changes nothing');
  await Promise.all([add(a.id, acme.ids.bob!), add(a.id, acme.ids.bob!), add(a.id, acme.ids.bob!)]);
  t.is(await count(a.id), 2);
  const members = (await page(a.id)).body;
  t.deepEqual(members.items.map((c: { id: string }) => c.id).sort(), [acme.ids.ann, acme.ids.bob].sort());
  t.deepEqual(Object.keys(members.items[0]).sort(), ['email', 'id', 'name', 'phone'], 'members as contact cards');
  t.is(members.next_cursor, null);
  const removed = await remove(a.id, acme.ids.ann!);
  t.deepEqual(removed.body, { audience_id: a.id, contact_id: acme.ids.ann, is_member: false });
  t.is((await remove(a.id, acme.ids.ann!)).status, 200, 'removing a non-member is fine');
  t.is((await remove(a.id, acme.ids.cy!)).status, 200, 'never a member');
  t.is(await count(a.id), 1);
});

test('members must be contacts of the organization; a dynamic audience takes none', async (t) => {
  const a = (await create({ name: 'Static', kind: 'static' })).body;
  const missing = '00000000-0000-4000-8000-000000000000';
  const unknownContact = await add(a.id, missing);
  t.is(unknownContact.status, 404);
  t.is(unknownContact.body.error, 'not_found');
  t.is((await remove(a.id, missing)).status, 404);
  t.is((await add(missing, acme.ids.ann!)).status, 404, 'unknown audience');
  t.is((await add(a.id, 'not-a-uuid')).status, 400);
  t.is((await app.request('POST', `/api/v1/audiences/${a.id}/members`, { key: key(), body: {} })).status, 400);
  t.is((await app.request('DELETE', `/api/v1/audiences/${a.id}/members/nope`, { key: key() })).status, 400);
  const d = (await create({ name: 'Dynamic', definition: { rules: [] } })).body;
  for (const res of [await add(d.id, acme.ids.ann!), await remove(d.id, acme.ids.ann!)]) {
    t.is(res.status, 400);
    t.regex(res.body.message, /dynamic/);
  }
  const n = await app.db.owner.query(`select count(*)::int as n from app_public.audience_members where audience_id = $1`, [d.id]);
  t.is(n.rows[0].n, 0);
});

test('counts include only the contacts the credential can see', async (t) => {
  const a = (await create({ name: 'Mixed', kind: 'static' })).body;
  for (const c of ['ann', 'bob', 'cy', 'dee', 'eve']) await add(a.id, acme.ids[c]!);
  t.is(await count(a.id), 5);
  // ann, dee and eve are linked to north; bob to south; cy to no location
  t.is(await count(a.id, acme.keys.north_member), 3);
  t.is(await count(a.id, acme.keys.north_mgr), 3);
  t.is(await count(a.id, acme.keys.south_mgr), 2);
  t.is(await count(a.id, acme.keys.member_key), 5, 'a MEMBER key with no locations reaches the organization');
  t.is(await count(a.id, acme.keys.own_personal), 0, 'own-records level: only its own clients');
  const d = (await create({ name: 'Gold', definition: { rules: [{ field: 'field_values.plan', op: 'eq', value: 'gold' }] } })).body;
  t.is(await count(d.id), 101, 'ann and one in three bulk contacts');
  t.is(await count(d.id, acme.keys.north_mgr), 1, 'a custom field rule: a credential that reads custom fields');
  t.is(await count(a.id), 5, 'opted-out contacts (eve) are counted');
});

test('the member query validates cursor and limit', async (t) => {
  const d = (await create({ name: 'All', definition: {} })).body;
  const first = await page(d.id, '?limit=2');
  t.is(first.body.items.length, 2);
  t.regex(first.body.next_cursor, /^[A-Za-z0-9_-]{22}$/);
  for (const q of ['?limit=0', '?limit=101', '?limit=x', '?cursor=', '?cursor=abc', `?cursor=${first.body.next_cursor}x`, '?cursor=AAAAAAAAAAAAAAAAAAAAA*']) {
    const res = await page(d.id, q);
    t.is(res.status, 400, q);
    t.is(res.body.error, 'bad_request', q);
  }
  t.is((await page(d.id)).body.items.length, 25, 'default limit 25');
  t.is((await page(d.id, '?limit=100')).body.items.length, 100);
});

test('paging a dynamic audience lists every member once, in a stable order, while contacts are added', async (t) => {
  const d = (await create({ name: 'Bulk and new', definition: { match: 'any', rules: [
    { field: 'display_name', op: 'contains', value: 'bulk' }, { field: 'email', op: 'contains', value: '@paging.example' }] } })).body;
  const before = new Set((await app.db.owner.query(
    `select id from app_public.contacts where organization_id = $1 and name like 'Bulk %'`, [acme.organization_id])).rows.map((r) => r.id));
  let added = 0;
  const { ids, pages } = await allPages(d.id, 7, async () => {
    // new contacts, whose ids fall before and after the cursor
    for (let i = 0; i < 3; i++) {
      const res = await app.request('POST', '/api/v1/contacts', { key: key(), body: { email: `new${added++}@paging.example`, name: 'New' } });
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    }
  });
  t.true(pages > 40, String(pages));
  t.is(new Set(ids).size, ids.length, 'no contact twice');
  t.true([...before].every((id) => ids.includes(id)), 'every contact present from the start is listed');
  t.deepEqual(ids, [...ids].sort(), 'in id order');
  const again = await allPages(d.id, 100);
  t.is(again.ids.length, before.size + added, 'a new listing sees the added contacts');
});

test('a sparse audience among many contacts pages completely (beyond the in-order walk, the planner\'s query)', async (t) => {
  // 6,000 contacts, one in 150 of them rare: a page of 100 is not found in the first few
  // thousand ids, so the page function goes on past its in-order walk
  await app.db.owner.query(`
    insert into app_public.contacts (organization_id, name, email, phone, field_values)
    select $1, 'Sparse ' || i, 'sparse' || i || '@example.com', case when i % 300 = 0 then '+1555777' || lpad(i::text, 4, '0') end,
           jsonb_build_object('plan', case when i % 150 = 0 then 'rare' else 'common' end)
      from generate_series(1, 6000) i`, [acme.organization_id]);
  const rare = new Set((await app.db.owner.query(
    `select id from app_public.contacts where organization_id = $1 and field_values->>'plan' = 'rare'`, [acme.organization_id])).rows.map((r) => r.id));
  t.is(rare.size, 40);
  for (const definition of [
    { rules: [{ field: 'field_values.plan', op: 'eq', value: 'RARE' }] },
    { match: 'any', rules: [{ field: 'phone_number', op: 'contains', value: '+1555777' }, { field: 'field_values.plan', op: 'eq', value: 'rare' }] },
  ]) {
    const d = (await create({ name: 'Rare', definition })).body;
    const expected = definition.match === 'any'
      ? new Set([...rare, ...(await app.db.owner.query(`select id from app_public.contacts where phone like '+1555777%'`)).rows.map((r) => r.id)])
      : rare;
    for (const limit of [100, 7, 1]) {
      const { ids } = await allPages(d.id, limit);
      t.is(ids.length, expected.size, `limit ${limit}`);
      t.is(new Set(ids).size, ids.length);
      t.true(ids.every((id) => expected.has(id)));
      t.deepEqual(ids, [...ids].sort());
    }
    t.is(await count(d.id), expected.size);
  }
});

test('paging a static audience while members are added concurrently lists every member present throughout once', async (t) => {
  const a = (await create({ name: 'Big static', kind: 'static' })).body;
  const all = await orgContactIds();
  const initial = all.filter((_, i) => i % 2 === 0);
  const later = all.filter((_, i) => i % 2 === 1);
  for (const id of initial) await add(a.id, id);
  const adding = (async () => { for (const id of later) await add(a.id, id); })();
  const { ids } = await allPages(a.id, 9);
  await adding;
  t.is(new Set(ids).size, ids.length, 'no member twice');
  t.true(initial.every((id) => ids.includes(id)), 'every member present throughout is listed');
  t.true(ids.every((id) => all.includes(id)));
  t.is(await count(a.id), all.length);
  const complete = await allPages(a.id, 100);
  t.deepEqual(complete.ids, [...all].sort());
});
