// The contact record (spec: Contact; Endpoints → Contacts): upsert, search, read, update,
// with every 400/404/409 rule checked to have written nothing.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from './helpers.ts';
import { rows } from '../helpers/sql.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(contactsFixture())); });
test.after.always(async () => { await app?.close(); });

const upsert = (body: unknown, key = acme.keys.org) => app.request('POST', '/api/v1/contacts', { key, body });
const search = (query: string, key = acme.keys.org) => app.request('GET', `/api/v1/contacts${query}`, { key });
const get = (id: string, key = acme.keys.org) => app.request('GET', `/api/v1/contacts/${id}`, { key });
const patch = (id: string, body: unknown, key = acme.keys.org) => app.request('PATCH', `/api/v1/contacts/${id}`, { key, body });

// ---------------------------------------------------------------------------------------------
// contacts_upsert
// ---------------------------------------------------------------------------------------------

test.serial('upsert creates a contact keyed on email, normalizing the phone to E.164', async (t) => {
  const res = await upsert({ email: 'New.Person@Example.com', name: 'New Person', phone: '+1 (555) 777-0001',
    custom_fields: { visits: 3, insurance: 'Delta' }, location_ids: [acme.ids.north] });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { email: 'New.Person@Example.com', name: 'New Person', phone: '+15557770001', created: true,
    custom_fields: { visits: 3, insurance: 'Delta' }, location_ids: [acme.ids.north], tags: [], notes_count: 0 });
  t.false('assessmentAbandonment' in res.body);
  const again = await upsert({ email: 'new.person@EXAMPLE.com', name: 'Renamed' });
  t.is(again.status, 200);
  t.is(again.body.id, res.body.id, 'case-insensitive email finds the same contact');
  t.like(again.body, { created: false, name: 'Renamed', phone: '+15557770001', email: 'New.Person@Example.com',
    custom_fields: { visits: 3, insurance: 'Delta' } });
  t.true(Date.parse(again.body.last_seen_at) >= Date.parse(res.body.last_seen_at));
  const n = await rows(app, `select count(*)::int as n from app_public.contacts where organization_id = $1 and email = 'new.person@example.com'`, [acme.organization_id]);
  t.is(n[0].n, 1);
});

test.serial('upsert changes only the fields sent, merges custom fields and adds locations', async (t) => {
  const first = await upsert({ email: 'merge@example.com', name: 'Merge Me', custom_fields: { visits: 1, vip: true }, location_ids: [acme.ids.north] });
  const second = await upsert({ email: 'merge@example.com', custom_fields: { visits: 2, vip: null }, location_ids: [acme.ids.south] });
  t.is(second.status, 200);
  t.is(second.body.id, first.body.id);
  t.is(second.body.name, 'Merge Me');
  t.deepEqual(second.body.custom_fields, { visits: 2 });
  t.deepEqual([...second.body.location_ids].sort(), [acme.ids.north, acme.ids.south].sort());
});

test.serial('upsert validates its body: 400 and nothing written', async (t) => {
  const bad: unknown[] = [
    {},
    { name: 'No Email' },
    { email: 'not-an-email' },
    { email: 'x@example.com', phone: '555-1234' },
    { email: 'x@example.com', phone: '+1 555' },
    { email: 'x@example.com', name: '' },
    { email: 'x@example.com', surprise: true },
    { email: 'x@example.com', events: [{ name: 'Bad Name', key: 'k' }] },
    { email: 'x@example.com', events: 'assessment_abandoned' },
    { email: 'x@example.com', cancel_events: [{ name: 'x' }] },
    { email: 'x@example.com', events: [{ name: 'assessment_abandoned', key: 'a' }, { name: 'assessment_abandoned', key: 'b' }] },
    { email: 'x@example.com', fields: { user_message_count: -1 } },
    { email: 'x@example.com', fields: { user_message_count: 1.5 } },
    { email: 'x@example.com', fields: { user_message_count: '3' } },
    { email: 'x@example.com', fields: { user_message_count: Number.MAX_SAFE_INTEGER + 1 } },
    { email: 'x@example.com', fields: { nested: { a: 1 } } },
    { email: 'x@example.com', custom_fields: { nope: 'x' } },
    { email: 'x@example.com', custom_fields: { retired: 'x' } },
    { email: 'x@example.com', custom_fields: { visits: 'three' } },
    { email: 'x@example.com', location_ids: ['00000000-0000-4000-8000-000000000000'] },
    { email: 'x@example.com', location_ids: ['nope'] },
  ];
  for (const body of bad) {
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => upsert(body));
  }
  const named = await upsert({ email: 'x@example.com', custom_fields: { nope: 'x' } });
  t.regex(named.body.message, /custom_fields\.nope/);
  const loc = await upsert({ email: 'x@example.com', location_ids: [acme.ids.owner] });
  t.is(loc.status, 400, 'a person id is not a location');
});

test.serial('upsert with a phone another contact uses is 409 and writes nothing', async (t) => {
  const res = await refusedWithoutWrites(t, app, acme.organization_id, 409, 'conflict',
    () => upsert({ email: 'thief@example.com', phone: '+1 555 123 0001' }));
  t.regex(res.body.message, /phone/);
  const same = await upsert({ email: 'ann@example.com', phone: '+15551230001' });
  t.is(same.status, 200, 'the contact keeps its own phone');
  t.is(same.body.id, acme.ids.ann);
});

test.serial('upsert answers an assessment_abandoned event with no_subscriber until sequences exist', async (t) => {
  const res = await upsert({ email: 'quiz@example.com', events: [{ name: 'assessment_abandoned', key: 'session-1' }],
    cancel_events: ['assessment_completed'], fields: { user_message_count: 0 } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.assessmentAbandonment, { status: 'no_subscriber', key: 'session-1' });
  const other = await upsert({ email: 'quiz@example.com', events: [{ name: 'newsletter_signup', key: 'n1' }] });
  t.false('assessmentAbandonment' in other.body);
  const retry = await upsert({ email: 'quiz@example.com', events: [{ name: 'assessment_abandoned', key: 'session-1' }] });
  t.deepEqual(retry.body.assessmentAbandonment, { status: 'no_subscriber', key: 'session-1' }, 'the key stayed unspent');
});

test.serial('concurrent upserts of one email never create two contacts', async (t) => {
  const email = 'race@example.com';
  const results = await Promise.all(Array.from({ length: 24 }, (_, i) =>
    upsert({ email: i % 2 ? email.toUpperCase() : email, name: `Racer ${i}`, custom_fields: { visits: i } })));
  t.true(results.every((r) => r.status === 200), JSON.stringify(results.map((r) => r.status)));
  t.is(new Set(results.map((r) => r.body.id)).size, 1);
  t.is(results.filter((r) => r.body.created).length, 1, 'exactly one call created it');
  const n = await rows(app, `select count(*)::int as n from app_public.contacts where organization_id = $1 and email = $2`, [acme.organization_id, email]);
  t.is(n[0].n, 1);
});

test.serial('concurrent upserts of one phone under different emails: one wins, the rest are 409', async (t) => {
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => upsert({ email: `phone-race-${i}@example.com`, phone: '+15557779999' })));
  t.is(results.filter((r) => r.status === 200).length, 1);
  t.true(results.filter((r) => r.status !== 200).every((r) => r.status === 409 && r.body.error === 'conflict'));
});

// ---------------------------------------------------------------------------------------------
// contacts_get
// ---------------------------------------------------------------------------------------------

test.serial('get returns stage, tags, custom fields, notes count and consent state', async (t) => {
  const res = await get(acme.ids.ann!);
  t.is(res.status, 200);
  t.like(res.body, {
    id: acme.ids.ann, name: 'Ann Lee', email: 'ann@example.com', phone: '+15551230001',
    stage_id: acme.ids.lead, stage: { id: acme.ids.lead, name: 'Lead' }, tags: ['vip'], custom_fields: { plan: 'gold' },
    notes_count: 2, location_ids: [acme.ids.north], sms_consent: true, email_suppressed: false, sms_opted_out: false, total_calls: 2,
  });
  const eve = await get(acme.ids.eve!);
  t.like(eve.body, { email_suppressed: true, sms_opted_out: true, sms_consent: false });
});

test.serial('get of an unknown or malformed id', async (t) => {
  const missing = await get('00000000-0000-4000-8000-000000000000');
  t.is(missing.status, 404);
  t.is(missing.body.error, 'not_found');
  t.is((await get('nope')).status, 400);
});

// ---------------------------------------------------------------------------------------------
// contacts_search
// ---------------------------------------------------------------------------------------------

test.serial('search without a filter lists every contact, most recently seen first, with paging', async (t) => {
  const all = await search('?limit=100');
  t.is(all.status, 200);
  t.is(all.body.page, 1);
  t.is(all.body.limit, 100);
  t.is(all.body.total, all.body.items.length);
  const seen = all.body.items.map((c: any) => Date.parse(c.last_seen_at));
  t.deepEqual(seen, [...seen].sort((a, b) => b - a));
  t.is(all.body.items.at(-1).id, acme.ids.dee, 'the contact seen longest ago is last');
  const page2 = await search('?limit=2&page=2');
  t.deepEqual(page2.body.items.map((c: any) => c.id), all.body.items.slice(2, 4).map((c: any) => c.id));
  t.like(page2.body, { page: 2, limit: 2, total: all.body.total });
  const past = await search('?limit=100&page=50');
  t.is(past.status, 200);
  t.deepEqual(past.body.items, []);
  t.is(past.body.total, all.body.total);
});

test.serial('search by q: case-insensitive substring of name, email or phone', async (t) => {
  const ids = async (q: string) => (await search(`?q=${encodeURIComponent(q)}`)).body.items.map((c: any) => c.id).sort();
  t.deepEqual(await ids('ann lee'), [acme.ids.ann]);
  t.deepEqual(await ids('NOWHERE'), [acme.ids.cy]);
  t.deepEqual(await ids('bob@EXAMPLE'), [acme.ids.bob]);
  t.deepEqual(await ids('5551230002'), [acme.ids.bob]);
  t.deepEqual(await ids('(555) 123-0004'), [acme.ids.dee], 'a punctuated phone fragment matches the stored number');
  t.deepEqual(await ids('7700 900'), [acme.ids.phil]);
  t.deepEqual(await ids('zzz-no-match'), []);
  t.deepEqual(await ids('%'), [], 'LIKE wildcards are literal');
  t.deepEqual(await ids('_'), []);
  t.deepEqual(await ids('lee\nann'), [], 'a match may not span two fields');
  const res = await search('?q=example.com&limit=2');
  t.is(res.body.items.length, 2);
  t.true(res.body.total >= 6);
});

test.serial('search by email: exact and case-insensitive', async (t) => {
  const res = await search('?email=ANN@example.com');
  t.is(res.status, 200);
  t.deepEqual(res.body.items.map((c: any) => c.id), [acme.ids.ann]);
  t.like(res.body, { total: 1, page: 1, limit: 25 });
  t.is((await search('?email=ann@example.co')).body.total, 0, 'not a substring match');
});

test.serial('search by phone ignores spaces, dashes and brackets and reads only the contact\'s phone', async (t) => {
  for (const phone of ['+15551230001', '+1 555 123 0001', '+1 (555) 123-0001', '+1-555-123-0001', '+1 [555] 1230001']) {
    const res = await search(`?phone=${encodeURIComponent(phone)}`);
    t.is(res.status, 200, phone);
    t.deepEqual(res.body.items.map((c: any) => c.id), [acme.ids.ann], phone);
  }
  await upsert({ email: 'cf-phone@example.com', custom_fields: { plan: '+15551239999' } });
  t.is((await search(`?phone=${encodeURIComponent('+15551239999')}`)).body.total, 0, 'a phone in custom fields is not matched');
});

test.serial('search: more than one filter, or an invalid one, is 400', async (t) => {
  for (const query of ['?q=ann&email=ann@example.com', '?q=ann&phone=%2B15551230001', '?email=ann@example.com&phone=%2B15551230001',
    `?q=${'x'.repeat(256)}`, '?q=', '?email=nope', '?phone=5551230001', '?phone=%2B1abc', '?phone=%2B1', '?limit=101', '?limit=0',
    '?page=0', '?page=x', '?q=a&q=b']) {
    const res = await search(query);
    t.is(res.status, 400, query);
    t.is(res.body.error, 'bad_request', query);
  }
  t.is((await search(`?q=${'x'.repeat(255)}`)).status, 200);
});

// ---------------------------------------------------------------------------------------------
// contacts_update
// ---------------------------------------------------------------------------------------------

test.serial('update changes only the fields sent and returns the contact as get does', async (t) => {
  const { body: created } = await upsert({ email: 'patch@example.com', name: 'Pat Ch', phone: '+15557770101', custom_fields: { visits: 1, plan: 'basic' } });
  const res = await patch(created.id, { name: 'Pat Changed', stage_id: acme.ids.won, custom_fields: { visits: 2, plan: null, birthday: '1990-02-28' } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { id: created.id, name: 'Pat Changed', email: 'patch@example.com', phone: '+15557770101',
    stage_id: acme.ids.won, stage: { id: acme.ids.won, name: 'Won' } });
  t.deepEqual(res.body.custom_fields, { visits: 2, birthday: '1990-02-28' });
  t.deepEqual((await get(created.id)).body, res.body);
  const phone = await patch(created.id, { phone: '+1 555 777 0102', email: 'Patched@Example.com' });
  t.like(phone.body, { phone: '+15557770102', email: 'Patched@Example.com', name: 'Pat Changed', stage_id: acme.ids.won });
  const cleared = await patch(created.id, { stage_id: null, phone: null });
  t.like(cleared.body, { stage_id: null, stage: null, phone: null });
  // a stage id in capitals is the same stage, answered in the usual lowercase
  const upper = await patch(created.id, { stage_id: acme.ids.lead!.toUpperCase() });
  t.is(upper.status, 200, JSON.stringify(upper.body));
  t.like(upper.body, { stage_id: acme.ids.lead, stage: { id: acme.ids.lead } });
});

test.serial('update: a stage not of the pipeline, an unknown or disabled custom field, or a value of the wrong type is 400 naming it', async (t) => {
  const b = await app.apply(contactsFixture('Other Org'));
  const cases: [unknown, RegExp][] = [
    [{ stage_id: '00000000-0000-4000-8000-000000000000' }, /stage_id/],
    [{ stage_id: b.ids.lead }, /stage_id/],
    [{ custom_fields: { unknown_key: 'x' } }, /custom_fields\.unknown_key/],
    [{ custom_fields: { retired: 'x' } }, /custom_fields\.retired/],
    [{ custom_fields: { visits: '3' } }, /custom_fields\.visits.*number/],
    [{ custom_fields: { ltv: true } }, /custom_fields\.ltv/],
    [{ custom_fields: { vip: 'yes' } }, /custom_fields\.vip.*boolean/],
    [{ custom_fields: { birthday: '2026-02-30' } }, /custom_fields\.birthday.*date/],
    [{ custom_fields: { birthday: '02/03/2020' } }, /custom_fields\.birthday/],
    [{ custom_fields: { last_call: '2026-01-01 10:00' } }, /custom_fields\.last_call/],
    [{ custom_fields: { insurance: 'Cigna' } }, /custom_fields\.insurance.*select/],
    [{ custom_fields: { plan: 5 } }, /custom_fields\.plan/],
    [{ name: 'ok', custom_fields: { visits: 1, unknown_key: 1 } }, /custom_fields\.unknown_key/],
  ];
  for (const [body, message] of cases) {
    const res = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => patch(acme.ids.ann!, body));
    t.regex(res.body.message, message, JSON.stringify(body));
  }
  for (const body of [{}, { surprise: 1 }, { email: 'nope' }, { phone: '12' }, { name: '' }, { stage_id: 'lead' }, { custom_fields: [] },
    { custom_fields: { plan: { nested: true } } }]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => patch(acme.ids.ann!, body));
  }
  const ok = await patch(acme.ids.ann!, { custom_fields: { last_call: '2026-01-01T10:00:00+02:00', insurance: 'Aetna', ltv: 10.5, vip: false } });
  t.is(ok.status, 200, JSON.stringify(ok.body));
});

test.serial('update: an email or phone another contact uses is 409 and nothing is written', async (t) => {
  for (const body of [{ email: 'BOB@example.com' }, { phone: '+15551230002' }, { name: 'Changed', phone: '+1 555 123 0002' }]) {
    const res = await refusedWithoutWrites(t, app, acme.organization_id, 409, 'conflict', () => patch(acme.ids.ann!, body));
  }
  const own = await patch(acme.ids.ann!, { email: 'ANN@example.com' });
  t.is(own.status, 200, 'a contact may keep (or recase) its own email');
  await patch(acme.ids.ann!, { email: 'ann@example.com' });
});

test.serial('update of an unknown contact is 404 and writes nothing', async (t) => {
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
    () => patch('00000000-0000-4000-8000-000000000000', { name: 'Ghost' }));
});
