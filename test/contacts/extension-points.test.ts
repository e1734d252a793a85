// How later areas extend the contacts area by data, without redefining its functions
// (db/README.md, Extension points): event subscriptions and the events they take, own clients,
// and the fields of the contact record. Rows are inserted here as the owner, as the areas' own
// migrations and triggers will.
import test from 'ava';
import { startApp, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from './helpers.ts';
import { asKey, rows } from '../helpers/sql.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
test.before(async () => { app = await startApp(); });
test.after.always(async () => { await app?.close(); });

let tenants = 0;
const tenant = () => app.apply(contactsFixture(`Extension Co ${++tenants}`));
const upsert = (f: Applied, body: Record<string, unknown>) => app.request('POST', '/api/v1/contacts', { key: f.keys.org, body });
const owner = (query: string, values: unknown[] = []) => app.db.owner.query(query, values);

// ---------------------------------------------------------------------------------------------
// Events: app_private.event_subscriptions in, app_private.contact_events out
// ---------------------------------------------------------------------------------------------

async function subscribe(f: Applied, event: string, audience: string | null = null): Promise<string> {
  const { rows: [s] } = await owner(`insert into app_private.event_subscriptions
    (organization_id, event, subscriber_kind, subscriber_id, assessment_audience)
    values ($1, $2, 'sequence', gen_random_uuid(), $3) returning id`, [f.organization_id, event, audience]);
  return s.id;
}
const recorded = (f: Applied) => rows(app, `select contact_id, kind, event, key, fields, subscription_ids, receipt
  from app_private.contact_events where organization_id = $1 order by seq`, [f.organization_id]);

test('without a subscription an event answers no_subscriber and records nothing: its key stays unspent', async (t) => {
  const f = await tenant();
  await subscribe(f, 'form_abandoned'); // another event's subscription changes nothing here
  const res = await upsert(f, { email: 'ann@example.com', cancel_events: ['assessment_abandoned'],
    events: [{ name: 'assessment_abandoned', key: 'session-1' }], fields: { user_message_count: 3 } });
  t.is(res.status, 200);
  t.deepEqual(res.body.assessmentAbandonment, { status: 'no_subscriber', key: 'session-1' });
  t.deepEqual(await recorded(f), []);
});

test('a subscribed event is accepted once per key in an organization; the same key answers the first receipt', async (t) => {
  const f = await tenant();
  const sub = await subscribe(f, 'assessment_abandoned');
  const first = await upsert(f, { email: 'ann@example.com', events: [{ name: 'assessment_abandoned', key: 'k1' }],
    fields: { user_message_count: 2 } });
  t.deepEqual(first.body.assessmentAbandonment, { status: 'accepted', key: 'k1' });
  const expected = [{ contact_id: f.ids.ann, kind: 'fire', event: 'assessment_abandoned', key: 'k1',
    fields: { user_message_count: 2 }, subscription_ids: [sub], receipt: { status: 'accepted', key: 'k1' } }];
  t.deepEqual(await recorded(f), expected);

  // again, for another contact even: the first receipt, and nobody new
  const again = await upsert(f, { email: 'bob@example.com', events: [{ name: 'assessment_abandoned', key: 'k1' }] });
  t.deepEqual(again.body.assessmentAbandonment, { status: 'accepted', key: 'k1' });
  t.deepEqual(await recorded(f), expected);

  // another organization's key of the same name is its own
  const g = await tenant();
  await subscribe(g, 'assessment_abandoned');
  t.deepEqual((await upsert(g, { email: 'ann@example.com', events: [{ name: 'assessment_abandoned', key: 'k1' }] })).body
    .assessmentAbandonment, { status: 'accepted', key: 'k1' });
  t.is((await recorded(g)).length, 1);

  // any event name can be subscribed to; only assessment_abandoned answers a receipt
  const form = await subscribe(f, 'form_abandoned');
  const other = await upsert(f, { email: 'cy@example.com', events: [{ name: 'form_abandoned', key: 'f1' }] });
  t.false('assessmentAbandonment' in other.body);
  t.like((await recorded(f))[1], { contact_id: f.ids.cy, kind: 'fire', event: 'form_abandoned', key: 'f1', subscription_ids: [form] });
});

test('assessmentAudience: started needs a positive count, never_started zero; no count matches only unfiltered subscriptions', async (t) => {
  const f = await tenant();
  const started = await subscribe(f, 'assessment_abandoned', 'started');
  const never = await subscribe(f, 'assessment_abandoned', 'never_started');
  const fire = (key: string, fields?: Record<string, unknown>) =>
    upsert(f, { email: 'ann@example.com', events: [{ name: 'assessment_abandoned', key }], ...(fields ? { fields } : {}) });

  t.deepEqual((await fire('no-count')).body.assessmentAbandonment, { status: 'no_subscriber', key: 'no-count' });
  t.deepEqual((await fire('other-fields', { source: 'web' })).body.assessmentAbandonment.status, 'no_subscriber');
  t.deepEqual(await recorded(f), [], 'unspent');

  t.deepEqual((await fire('zero', { user_message_count: 0 })).body.assessmentAbandonment, { status: 'accepted', key: 'zero' });
  t.deepEqual((await fire('some', { user_message_count: 4 })).body.assessmentAbandonment, { status: 'accepted', key: 'some' });
  t.deepEqual((await recorded(f)).map((e) => [e.key, e.subscription_ids]), [['zero', [never]], ['some', [started]]]);

  // an unfiltered subscription takes every count, and none
  const all = await subscribe(f, 'assessment_abandoned');
  t.deepEqual((await fire('no-count')).body.assessmentAbandonment, { status: 'accepted', key: 'no-count' });
  t.deepEqual((await fire('more', { user_message_count: 1 })).body.assessmentAbandonment.status, 'accepted');
  t.deepEqual((await recorded(f)).slice(2).map((e) => [e.key, e.subscription_ids]),
    [['no-count', [all]], ['more', [all, started].sort()]]);
});

test('cancel_events are recorded first, for the events some subscription listens to', async (t) => {
  const f = await tenant();
  const sub = await subscribe(f, 'assessment_abandoned', 'started');
  const res = await upsert(f, { email: 'dee@example.com', cancel_events: ['nobody_listens', 'assessment_abandoned'],
    events: [{ name: 'assessment_abandoned', key: 'k-replace' }], fields: { user_message_count: 1 } });
  t.deepEqual(res.body.assessmentAbandonment, { status: 'accepted', key: 'k-replace' });
  t.deepEqual((await recorded(f)).map((e) => [e.kind, e.event, e.key, e.subscription_ids, e.contact_id]), [
    ['cancel', 'assessment_abandoned', null, [sub], f.ids.dee],
    ['fire', 'assessment_abandoned', 'k-replace', [sub], f.ids.dee],
  ]);
});

test('an upsert that rolls back spends no key; an event without a key is legacy_unverified, every time', async (t) => {
  const f = await tenant();
  await subscribe(f, 'assessment_abandoned');
  const call = (events: unknown) => asKey(app, f.keys.org, async (c) => (await c.query(
    `select app_public.contacts_upsert('ann@example.com', events => $1::jsonb) as r`, [JSON.stringify(events)])).rows[0].r);
  // asKey rolls its transaction back
  t.deepEqual((await call([{ name: 'assessment_abandoned', key: 'k-rolled' }])).assessmentAbandonment, { status: 'accepted', key: 'k-rolled' });
  t.deepEqual(await recorded(f), []);
  t.deepEqual((await upsert(f, { email: 'ann@example.com', events: [{ name: 'assessment_abandoned', key: 'k-rolled' }] }))
    .body.assessmentAbandonment, { status: 'accepted', key: 'k-rolled' });
  t.is((await recorded(f)).length, 1);

  // committed this time, as an older client's calls would be
  const answers = [];
  for (let i = 0; i < 2; i++) {
    answers.push(await asKey(app, f.keys.org, async (c) => (await c.query(`select app_public.contacts_upsert('ann@example.com',
      events => '[{"name": "assessment_abandoned"}]') as r`)).rows[0].r.assessmentAbandonment, { commit: true }));
  }
  t.deepEqual(answers, [{ status: 'legacy_unverified', key: null }, { status: 'legacy_unverified', key: null }]);
  t.deepEqual((await recorded(f)).map((e) => [e.key, e.receipt.status]),
    [['k-rolled', 'accepted'], [null, 'legacy_unverified'], [null, 'legacy_unverified']]);
});

test('only a credential that may upsert records events, and only for a contact of its organization', async (t) => {
  const f = await tenant();
  await subscribe(f, 'assessment_abandoned');
  const call = (key: string, contactId: string) => asKey(app, key, (c) => c.query(
    `select app_hidden.contacts_process_events($1, '[{"name": "assessment_abandoned", "key": "x"}]', null, null)`, [contactId]));
  t.like(await t.throwsAsync(call(f.keys.north_mgr!, f.ids.ann!)), { code: 'SV403' });
  const g = await tenant();
  t.like(await t.throwsAsync(call(f.keys.org!, g.ids.ann!)), { code: 'SV404' });
  t.deepEqual(await recorded(f), []);
});

// ---------------------------------------------------------------------------------------------
// Own clients: app_private.own_clients
// ---------------------------------------------------------------------------------------------

test('a MEMBER at the own-records level reaches exactly the own clients the areas recorded, within its locations', async (t) => {
  const f = await tenant();
  const search = async () => {
    const res = await app.request('GET', '/api/v1/contacts', { key: f.keys.own_personal });
    t.is(res.status, 200);
    return res.body.items.map((c: { id: string }) => c.id).sort();
  };
  const get = async (id: string) => (await app.request('GET', `/api/v1/contacts/${id}`, { key: f.keys.own_personal })).status;
  t.deepEqual(await search(), []);

  const own = (contact: string, source: string) => owner(`insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    values ($1, $2, $3, $4)`, [f.organization_id, f.ids.own, contact, source]);
  await own(f.ids.ann!, 'appointments');
  await own(f.ids.ann!, 'calls');
  await own(f.ids.dee!, 'calls');
  await own(f.ids.bob!, 'appointments'); // Bob is at South, out of Olga's reach
  t.deepEqual(await search(), [f.ids.ann, f.ids.dee].sort());
  t.is(await get(f.ids.ann!), 200);
  t.deepEqual(Object.keys((await app.request('GET', `/api/v1/contacts/${f.ids.ann}`, { key: f.keys.own_personal })).body).sort(),
    ['email', 'id', 'name', 'phone'], 'still a member\'s card');
  for (const id of [f.ids.bob!, f.ids.cy!, f.ids.eve!]) t.is(await get(id), 404, id);

  // each source keeps its own rows: Ann stays an own client while one source still says so
  await owner(`delete from app_private.own_clients where contact_id = $1 and source = 'appointments'`, [f.ids.ann]);
  t.is(await get(f.ids.ann!), 200);
  await owner(`delete from app_private.own_clients where contact_id = $1`, [f.ids.ann]);
  t.is(await get(f.ids.ann!), 404);
  t.deepEqual(await search(), [f.ids.dee]);

  // a member at the all-records level, and the organization, are unaffected
  t.is((await app.request('GET', '/api/v1/contacts', { key: f.keys.sam_personal })).body.total, 4, 'every contact at North');
  t.is((await app.request('GET', '/api/v1/contacts', { key: f.keys.org })).body.total, 6);
});

// ---------------------------------------------------------------------------------------------
// The contact record: app_private.contact_fields
// ---------------------------------------------------------------------------------------------

const CORE = ['id', 'name', 'email', 'phone', 'stage_id', 'stage', 'tags', 'custom_fields', 'notes_count', 'location_ids',
  'sms_consent', 'sms_consent_at', 'email_suppressed', 'sms_opted_out', 'total_calls', 'first_seen_at', 'last_seen_at',
  'created_at', 'updated_at'].sort();

test.serial('a field another area registers appears on contacts_get and contacts_search, for those who see details only', async (t) => {
  const f = await tenant();
  // the field this suite registers, which the registering area would add to the Contact schema
  const undeclared = ['shared_notes'];
  const get = (key: string) => app.request('GET', `/api/v1/contacts/${f.ids.ann}`, { key, undeclared });
  t.deepEqual(Object.keys((await get(f.keys.org!)).body).sort(), CORE);

  await owner(`insert into app_private.contact_fields (name, area, expression) values ('shared_notes', 'test',
    $$(select count(*) from app_public.contact_notes n
        where n.organization_id = c.organization_id and n.contact_id = c.id and n.source <> 'location_private')$$)`);
  try {
    const full = await get(f.keys.org!);
    t.is(full.status, 200);
    t.deepEqual(Object.keys(full.body).sort(), [...CORE, 'shared_notes'].sort());
    t.is(full.body.shared_notes, 1, 'Ann has one shared note and one private to North');
    t.is(full.body.notes_count, 2);

    for (const query of ['', '?q=ann', '?email=ann@example.com', '?phone=%2B15551230001']) {
      const page = await app.request('GET', `/api/v1/contacts${query}`, { key: f.keys.org, undeclared });
      t.is(page.status, 200, query);
      t.true(page.body.items.length > 0 && page.body.items.every((c: object) => 'shared_notes' in c), query);
    }
    // the writes answer the contact through the same renderer
    t.is((await app.request('PATCH', `/api/v1/contacts/${f.ids.ann}`, { key: f.keys.org, body: { name: 'Ann L.' }, undeclared }))
      .body.shared_notes, 1);
    t.is((await app.request('POST', '/api/v1/contacts', { key: f.keys.org, body: { email: 'new@example.com' }, undeclared })).body.shared_notes, 0);

    // field limiting: a MEMBER and a MANAGER without the contacts power read the card only
    for (const key of [f.keys.member_key!, f.keys.sam_personal!, f.keys.north_mgr_nopower!]) {
      t.deepEqual(Object.keys((await get(key)).body).sort(), ['email', 'id', 'name', 'phone']);
      const page = await app.request('GET', '/api/v1/contacts', { key });
      t.true(page.body.items.every((c: object) => Object.keys(c).sort().join() === 'email,id,name,phone'));
    }
    // a location-limited MANAGER with the contacts power sees details, the field included
    t.is((await get(f.keys.north_mgr!)).body.shared_notes, 1);

    // an expression that does not compile is refused with its registration; the renderer stays
    await t.throwsAsync(owner(`insert into app_private.contact_fields (name, area, expression) values ('broken', 'test', 'c.no_such_column')`));
    await t.throwsAsync(owner(`insert into app_private.contact_fields (name, area, expression) values ('email', 'test', 'null')`));
    t.deepEqual(Object.keys((await get(f.keys.org!)).body).sort(), [...CORE, 'shared_notes'].sort());
  } finally {
    await owner(`delete from app_private.contact_fields where area = 'test'`);
  }
  t.deepEqual(Object.keys((await get(f.keys.org!)).body).sort(), CORE);
});
