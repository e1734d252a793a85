// appointments_list and appointments_get (spec: "### Appointments"; issue 14, "List"): the window
// and its defaults, earliest first, one row per occurrence of a repeating series (right across
// DST in New York and London), cancelled ones and blocks left out, contact_id by id, attendee
// phone or email, paging, reach by organization and location, own-records MEMBERs, and MCP.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import type { TestApp } from '../helpers/app.ts';
import { withMcpClient } from '../helpers/mcp.ts';
import { bookingFixture, startBookingApp, teamMember } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => { ({ app, acme, other } = await startBookingApp()); });
test.after.always(async () => { await app?.close(); });

const MARCH = 'from=2030-03-01T00:00:00Z&to=2030-04-15T00:00:00Z';
const list = (key: string, query = MARCH) => app.request('GET', `/api/v1/appointments?${query}&limit=100`, { key });
const get = (key: string, id: string) => app.request('GET', `/api/v1/appointments/${id}`, { key });
/** Items as `ref@start`, refs from the tenant's ids. */
const named = (tenant: Applied, items: { id: string; start_time: string }[]) => {
  const refs = Object.fromEntries(Object.entries(tenant.ids).map(([k, v]) => [v, k]));
  return items.map((i) => `${refs[i.id] ?? i.id}@${new Date(i.start_time).toISOString().slice(0, 16)}`);
};

/** An appointment written straight as the owner (for defaults relative to now, attendee matches). */
async function insert(tenant: Applied, a: { contact: string; start: string; minutes?: number; phone?: string; email?: string; location?: string }) {
  const start = new Date(a.start);
  const end = new Date(start.getTime() + (a.minutes ?? 30) * 60_000);
  const { rows } = await app.db.owner.query(
    `insert into app_public.appointments (organization_id, location_id, contact_id, title, attendee_phone, attendee_email, starts_at, ends_at)
     values ($1, $2, $3, 'Inserted', $4, $5, $6, $7) returning id`,
    [tenant.organization_id, a.location ?? tenant.ids.north, a.contact, a.phone ?? null, a.email ?? null, start, end]);
  return rows[0].id as string;
}

test('the owner lists bookings earliest first: a series once per occurrence, right across DST; cancelled ones and blocks left out', async (t) => {
  const res = await list(acme.keys.org!);
  t.is(res.status, 200, JSON.stringify(res.body));
  // earliest first; equal starts by id
  const byStart = (x: string, y: string) => {
    const [rx, sx] = x.split('@') as [string, string];
    const [ry, sy] = y.split('@') as [string, string];
    return sx < sy ? -1 : sx > sy ? 1 : acme.ids[rx]! < acme.ids[ry]! ? -1 : 1;
  };
  t.deepEqual(named(acme, res.body.items), [
    'a_series@2030-03-04T15:00', // 10:00 EST
    'a_desk@2030-03-05T10:00',
    'a1@2030-03-05T15:00',
    'a_south@2030-03-05T15:00',
    'a2@2030-03-05T16:00',
    'a_series@2030-03-11T14:00', // 10:00 EDT: New York's DST began on 10 March
    'a_series@2030-03-18T14:00',
    'a_series@2030-03-25T14:00',
    'a_room_series@2030-03-25T09:30', // 09:30 GMT
    'a_room_series@2030-04-01T08:30', // 09:30 BST: London's DST began on 31 March
    'a_room_series@2030-04-08T08:30',
  ].sort(byStart));
  t.like(res.body, { total: 11, page: 1, limit: 100, from: '2030-03-01T00:00:00+00:00', to: '2030-04-15T00:00:00+00:00' });
  const occurrence = res.body.items.find((i: any) => i.start_time.startsWith('2030-03-11'));
  t.like(occurrence, { id: acme.ids.a_series, recurring: true, occurrence_start: '2030-03-11T14:00:00+00:00',
    start_time: '2030-03-11T14:00:00+00:00', end_time: '2030-03-11T14:30:00+00:00', team_member_id: teamMember(acme, 'nia'),
    rrule: 'FREQ=WEEKLY;BYDAY=MO', recurrence_ends_on: '2030-03-25' });
  const single = res.body.items.find((i: any) => i.id === acme.ids.a1);
  t.like(single, { recurring: false, occurrence_start: null, kind: 'appointment', status: 'booked', location_id: acme.ids.north,
    team_member_id: teamMember(acme, 'staff'), offering_id: acme.ids.cleaning, contact_id: acme.ids.ann, attendee_notes: 'Sensitive teeth' });
  t.false(res.body.items.some((i: any) => [acme.ids.a_cancelled, acme.ids.holiday, acme.ids.sam_off].includes(i.id)));
});

test('the window: from defaults to now, to to 30 days after from; occurrences outside it are left out', async (t) => {
  const tenant = await app.apply(bookingFixture('Window Dental'));
  const day = 24 * 3600_000;
  const soon = await insert(tenant, { contact: tenant.ids.ann!, start: new Date(Date.now() + day).toISOString() });
  const later = await insert(tenant, { contact: tenant.ids.ann!, start: new Date(Date.now() + 40 * day).toISOString() });
  const past = await insert(tenant, { contact: tenant.ids.ann!, start: new Date(Date.now() - day).toISOString() });
  const byDefault = await app.request('GET', '/api/v1/appointments', { key: tenant.keys.org! });
  t.is(byDefault.status, 200);
  t.deepEqual(byDefault.body.items.map((i: any) => i.id), [soon]);
  t.is(Date.parse(byDefault.body.to) - Date.parse(byDefault.body.from), 30 * day);
  t.true(Math.abs(Date.parse(byDefault.body.from) - Date.now()) < 60_000);
  const fromOnly = await app.request('GET', `/api/v1/appointments?from=${encodeURIComponent(new Date(Date.now() + 20 * day).toISOString())}`, { key: tenant.keys.org! });
  t.deepEqual(fromOnly.body.items.map((i: any) => i.id), [later]);
  const withPast = await list(tenant.keys.org!, `from=${encodeURIComponent(new Date(Date.now() - 2 * day).toISOString())}`);
  t.deepEqual(withPast.body.items.map((i: any) => i.id), [past, soon]);
  // the series' later occurrences only, in a window that starts after its first
  const tail = await list(tenant.keys.org!, 'from=2030-03-18T00:00:00-04:00&to=2030-03-19T00:00:00-04:00');
  t.deepEqual(named(tenant, tail.body.items), ['a_series@2030-03-18T14:00']);
  // exactly 92 days is allowed
  const widest = await list(tenant.keys.org!, 'from=2030-03-01T00:00:00Z&to=2030-06-01T00:00:00Z');
  t.is(widest.status, 200);
  // and 92 local days across the autumn clock change (92 days and an hour)
  const quarter = await list(tenant.keys.org!, 'from=2030-09-01T00:00:00-04:00&to=2030-12-02T00:00:00-05:00');
  t.is(quarter.status, 200, JSON.stringify(quarter.body));
});

test('an empty or too long window, or a malformed query, is 400', async (t) => {
  const cases = [
    ['from=2030-03-05T00:00:00Z&to=2030-03-05T00:00:00Z', /query\.to/],
    ['from=2030-03-05T00:00:00Z&to=2030-03-04T00:00:00Z', /query\.to/],
    ['from=2030-03-01T00:00:00Z&to=2030-06-01T01:00:01Z', /92 days/],
    ['from=2030-03-01T00:00:00Z', null], // to defaults: fine
    ['to=2030-03-01T00:00:00Z', /query\.to/], // before now
    ['from=2030-03-01', /query\.from/],
    ['from=yesterday', /query\.from/],
    ['to=2030-03-01T00:00:00', /query\.to/],
    ['contact_id=nope', /query\.contact_id/],
    ['limit=101', /query\.limit/],
    ['page=0', /query\.page/],
  ] as const;
  for (const [query, message] of cases) {
    const res = await app.request('GET', `/api/v1/appointments?${query}`, { key: acme.keys.org! });
    if (message === null) { t.is(res.status, 200, query); continue; }
    t.is(res.status, 400, query);
    t.is(res.body.error, 'bad_request', query);
    t.regex(res.body.message, message, query);
  }
});

test('contact_id finds the contact\'s bookings and those whose attendee phone or email is the contact\'s', async (t) => {
  const tenant = await app.apply(bookingFixture('Attendee Dental'));
  const byPhone = await insert(tenant, { contact: tenant.ids.cy!, start: '2030-03-07T15:00:00Z', phone: '+15551230001' });
  const byEmail = await insert(tenant, { contact: tenant.ids.dee!, start: '2030-03-07T16:00:00Z', email: 'ANN@example.COM' });
  await insert(tenant, { contact: tenant.ids.cy!, start: '2030-03-07T17:00:00Z', phone: '+15551239999', email: 'someone@example.com' });
  const res = await list(tenant.keys.org!, `${MARCH}&contact_id=${tenant.ids.ann}`);
  t.is(res.status, 200);
  t.deepEqual(res.body.items.map((i: any) => i.id), [tenant.ids.a_series, tenant.ids.a1, byPhone, byEmail,
    tenant.ids.a_series, tenant.ids.a_series, tenant.ids.a_series]);
  const lia = await list(tenant.keys.org!, `${MARCH}&contact_id=${tenant.ids.lia}`);
  t.deepEqual(named(tenant, lia.body.items).map((x) => x.split('@')[0]), ['a_desk', 'a_room_series', 'a_room_series', 'a_room_series']);
  // a contact with no bookings in the window: an empty page
  const none = await list(tenant.keys.org!, `from=2030-03-06T00:00:00Z&to=2030-03-07T00:00:00Z&contact_id=${tenant.ids.bob}`);
  t.like(none.body, { items: [], total: 0 });
});

test('contact_id of an unknown contact, another organization\'s or one out of reach is 404', async (t) => {
  for (const [key, id] of [[acme.keys.org!, '00000000-0000-4000-8000-000000000000'], [acme.keys.org!, other.ids.ann!],
    [acme.keys.north_mgr!, acme.ids.bob!], [acme.keys.london_member!, acme.ids.ann!]] as const) {
    const res = await list(key, `${MARCH}&contact_id=${id}`);
    t.is(res.status, 404, `${id}`);
    t.is(res.body.error, 'not_found');
  }
});

test('pages echo total, page and limit, earliest first across pages', async (t) => {
  const all = (await list(acme.keys.org!)).body.items.map((i: any) => `${i.id}@${i.start_time}`);
  const pages: string[] = [];
  for (let page = 1; page <= 4; page++) {
    const res = await app.request('GET', `/api/v1/appointments?${MARCH}&limit=3&page=${page}`, { key: acme.keys.org! });
    t.like(res.body, { total: 11, page, limit: 3 });
    pages.push(...res.body.items.map((i: any) => `${i.id}@${i.start_time}`));
  }
  t.deepEqual(pages, all);
  const past = await app.request('GET', `/api/v1/appointments?${MARCH}&limit=3&page=5`, { key: acme.keys.org! });
  t.deepEqual(past.body.items, []);
});

test('reach: each organization sees its own; a location-limited credential its locations\' only', async (t) => {
  const refsOf = async (key: string) => [...new Set(named(acme, (await list(key)).body.items).map((x) => x.split('@')[0]))].sort();
  const everything = ['a1', 'a2', 'a_desk', 'a_room_series', 'a_series', 'a_south'];
  t.deepEqual(await refsOf(acme.keys.owner_personal!), everything);
  t.deepEqual(await refsOf(acme.keys.member_key!), everything); // a MEMBER key of the whole organization
  t.deepEqual(await refsOf(acme.keys.north_mgr!), ['a1', 'a2', 'a_series']);
  t.deepEqual(await refsOf(acme.keys.mgr_personal!), ['a1', 'a2', 'a_series']);
  t.deepEqual(await refsOf(acme.keys.sam_personal!), ['a1', 'a2', 'a_series']); // records level all
  t.deepEqual(await refsOf(acme.keys.weak_mgr_personal!), ['a_south']);
  t.deepEqual(await refsOf(acme.keys.london_member!), ['a_desk', 'a_room_series']);
  // the other organization's key sees its own copies, none of Acme's ids
  const theirs = (await list(other.keys.org!)).body.items.map((i: any) => i.id);
  t.is(theirs.length, 11);
  t.false(theirs.some((id: string) => Object.values(acme.ids).includes(id)));
});

test('an own-records MEMBER lists and reads only the appointments where it is the team member', async (t) => {
  const res = await list(acme.keys.nia_personal!);
  t.is(res.status, 200);
  t.deepEqual([...new Set(named(acme, res.body.items).map((x) => x.split('@')[0]))].sort(), ['a2', 'a_series']);
  t.true(res.body.items.every((i: any) => i.team_member_id === teamMember(acme, 'nia')));
  t.is((await get(acme.keys.nia_personal!, acme.ids.a2!)).status, 200);
  for (const ref of ['a1', 'a_cancelled', 'holiday', 'sam_off', 'a_south']) {
    const denied = await get(acme.keys.nia_personal!, acme.ids[ref]!);
    t.is(denied.status, 404, ref);
  }
});

test('get: one appointment, a series (its first start), a cancelled one and a block', async (t) => {
  const a1 = await get(acme.keys.org!, acme.ids.a1!);
  t.is(a1.status, 200);
  t.like(a1.body, { id: acme.ids.a1, kind: 'appointment', recurring: false, occurrence_start: null, title: 'Cleaning',
    start_time: '2030-03-05T15:00:00+00:00', end_time: '2030-03-05T15:30:00+00:00', attendee_name: 'Ann Lee',
    attendee_phone: '+15551230001', attendee_email: 'ann@example.com', status: 'booked', calendar_id: null, rrule: null });
  const series = await get(acme.keys.org!, acme.ids.a_series!);
  t.like(series.body, { id: acme.ids.a_series, recurring: true, occurrence_start: '2030-03-04T15:00:00+00:00',
    start_time: '2030-03-04T15:00:00+00:00', rrule: 'FREQ=WEEKLY;BYDAY=MO', recurrence_ends_on: '2030-03-25' });
  t.like((await get(acme.keys.org!, acme.ids.a_cancelled!)).body, { status: 'cancelled' });
  t.like((await get(acme.keys.org!, acme.ids.holiday!)).body, { kind: 'block', team_member_id: null, contact_id: null, title: 'Closed' });
  t.like((await get(acme.keys.mgr_personal!, acme.ids.sam_off!)).body, { kind: 'block', team_member_id: teamMember(acme, 'staff') });
  t.like((await get(acme.keys.london_member!, acme.ids.a_desk!)).body, { calendar_id: acme.ids.desk, location_id: acme.ids.london });
});

test('get: absent, another organization\'s and another location\'s appointment are 404; a malformed id 400', async (t) => {
  const cases: [string, string][] = [
    [acme.keys.org!, '00000000-0000-4000-8000-000000000000'],
    [acme.keys.org!, other.ids.a1!],
    [other.keys.org!, acme.ids.a_series!],
    [acme.keys.north_mgr!, acme.ids.a_south!],
    [acme.keys.north_mgr!, acme.ids.a_desk!],
    [acme.keys.weak_mgr_personal!, acme.ids.holiday!],
    [acme.keys.london_member!, acme.ids.a1!],
    [acme.keys.sam_personal!, acme.ids.a_room_series!],
  ];
  for (const [key, id] of cases) {
    const res = await get(key, id);
    t.is(res.status, 404, id);
    t.is(res.body.error, 'not_found');
  }
  const bad = await get(acme.keys.org!, 'not-a-uuid');
  t.is(bad.status, 400);
});

test('without appointments:read: 403 insufficient_scope naming it; appointments:read alone suffices', async (t) => {
  for (const path of ['/api/v1/appointments', `/api/v1/appointments/${acme.ids.a1}`]) {
    const res = await app.request('GET', path, { key: acme.keys.org_reader! });
    t.is(res.status, 403);
    t.like(res.body, { error: 'insufficient_scope', required: 'appointments:read' });
    t.is((await app.request('GET', path, { key: acme.keys.appt_reader! })).status, 200);
  }
});

test('MCP: appointments_list and appointments_get answer as REST does', async (t) => {
  const json = (res: any) => JSON.parse(res.content[0].text);
  const listed = await withMcpClient(app, acme.keys.nia_personal!, (c) =>
    c.callTool({ name: 'appointments_list', arguments: { from: '2030-03-01T00:00:00Z', to: '2030-04-15T00:00:00Z' } }));
  t.falsy(listed.isError);
  t.deepEqual(json(listed), (await app.request('GET', `/api/v1/appointments?${MARCH}`, { key: acme.keys.nia_personal! })).body);
  const got = await withMcpClient(app, acme.keys.org!, (c) => c.callTool({ name: 'appointments_get', arguments: { appointmentId: acme.ids.a1 } }));
  t.deepEqual(json(got), (await get(acme.keys.org!, acme.ids.a1!)).body);
  const hidden = await withMcpClient(app, acme.keys.nia_personal!, (c) => c.callTool({ name: 'appointments_get', arguments: { appointmentId: acme.ids.a1 } }));
  t.true(hidden.isError);
  t.like(json(hidden), { statusCode: 404, error: 'not_found' });
});

test('an own-records MEMBER filters by its own clients only; another contact is 404', async (t) => {
  // the contacts of nia's bookings are its own clients (written by the bookings' trigger; stated
  // here too, so this suite reads them whichever part writes them)
  const { rows: [nia] } = await app.db.owner.query('select person_id from app_public.staff_profiles where id = $1', [teamMember(acme, 'nia')]);
  for (const contact of [acme.ids.ann, acme.ids.dee]) {
    await app.db.owner.query(
      `insert into app_private.own_clients (organization_id, person_id, contact_id, source) values ($1, $2, $3, 'appointments')
       on conflict do nothing`, [acme.organization_id, nia.person_id, contact]);
  }
  const ann = await list(acme.keys.nia_personal!, `${MARCH}&contact_id=${acme.ids.ann}`);
  t.is(ann.status, 200);
  // a1 is Ann's too, but Sam's: not listed to nia
  t.deepEqual(named(acme, ann.body.items), ['a_series@2030-03-04T15:00', 'a_series@2030-03-11T14:00', 'a_series@2030-03-18T14:00', 'a_series@2030-03-25T14:00']);
  const dee = await list(acme.keys.nia_personal!, `${MARCH}&contact_id=${acme.ids.dee}`);
  t.deepEqual(named(acme, dee.body.items), ['a2@2030-03-05T16:00']);
  // a North contact with no booking of nia's: Sam (records level all) reads it, nia does not
  const { rows: [eli] } = await app.db.owner.query(
    `with c as (insert into app_public.contacts (organization_id, name, email) values ($1, 'Eli North', 'eli@example.com') returning id)
     insert into app_public.contact_locations (organization_id, contact_id, location_id) select $1, id, $2 from c returning contact_id`,
    [acme.organization_id, acme.ids.north]);
  t.is((await list(acme.keys.sam_personal!, `${MARCH}&contact_id=${eli.contact_id}`)).status, 200);
  const other = await list(acme.keys.nia_personal!, `${MARCH}&contact_id=${eli.contact_id}`);
  t.is(other.status, 404);
  t.is(other.body.error, 'not_found');
});
