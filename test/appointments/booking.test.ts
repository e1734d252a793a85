// appointments_create: every 400/403/404/409/422 of the issue, each with a check that nothing was
// written; the first free team member; attendee details; idempotency; own clients.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Applied } from '../../src/admin/fixture.ts';
import type { TestApp } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import { availability, book, cancel, northCleaning, starts, startBooking } from './booking-helpers.ts';
import { teamMember } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => { ({ app, acme, other } = await startBooking()); });
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;
const refused = (t: Parameters<typeof refusedWithoutWrites>[0], status: number, error: string, key: string | undefined, body: Record<string, unknown>) =>
  refusedWithoutWrites(t, app, [org(), other.organization_id], status, error, () => book(app, key, body));
const plus = (iso: string, minutes: number) => new Date(Date.parse(iso) + minutes * 60_000).toISOString();
/** A 30-minute range from `iso`. */
const half = (iso: string) => ({ start_time: iso, end_time: plus(iso, 30) });

async function ownClients(organizationId: string, personEmail: string): Promise<string[]> {
  const { rows } = await app.db.owner.query(
    `select oc.contact_id from app_private.own_clients oc join app_public.people p on p.organization_id = oc.organization_id and p.id = oc.person_id
      where oc.organization_id = $1 and p.email = $2 and oc.source = 'appointments' order by 1`, [organizationId, personEmail]);
  return rows.map((r: { contact_id: string }) => r.contact_id);
}

test.serial('an owner books a named team member: 201 with the appointment, attendee details from the contact', async (t) => {
  const res = await book(app, acme.keys.owner_personal, northCleaning(acme, 0, { title: 'First cleaning' }));
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, {
    kind: 'appointment', recurring: false, occurrence_start: null, location_id: acme.ids.north, team_member_id: teamMember(acme, 'staff'),
    calendar_id: null, offering_id: acme.ids.cleaning, contact_id: acme.ids.ann, title: 'First cleaning', status: 'booked',
    attendee_name: 'Ann Lee', attendee_phone: '+15551230001', attendee_email: 'ann@example.com', rrule: null,
  });
  t.is(new Date(res.body.start_time).toISOString(), '2030-03-07T14:00:00.000Z');
  t.is(new Date(res.body.end_time).toISOString(), '2030-03-07T14:30:00.000Z');
  const { rows } = await app.db.owner.query(
    `select source, created_by, created_by_credential from app_public.appointments where organization_id = $1 and id = $2`, [org(), res.body.id]);
  t.is(rows[0].source, 'api');
  t.truthy(rows[0].created_by);
  t.is(rows[0].created_by_credential, acme.key_ids.owner_personal);
  // its time is no longer offered for Sam
  const after = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-07', team_member_id: teamMember(acme, 'staff'), offering_id: acme.ids.cleaning });
  t.false(starts(after).includes('2030-03-07T14:00:00.000Z'));
});

test.serial('omitted team member: the first free eligible one, oldest first; a MEMBER books itself', async (t) => {
  const at = '2030-03-07T16:00:00Z';
  // checkup: everyone; the manager is the oldest team member
  const first = await book(app, acme.keys.owner_personal, { location_id: acme.ids.north, offering_id: acme.ids.checkup, contact_id: acme.ids.dee,
    start_time: at, end_time: plus(at, 60) });
  t.is(first.status, 201, JSON.stringify(first.body));
  t.is(first.body.team_member_id, teamMember(acme, 'mgr'));
  // the manager is now busy: the next is Sam
  const second = await book(app, acme.keys.owner_personal, { location_id: acme.ids.north, offering_id: acme.ids.checkup, contact_id: acme.ids.dee,
    start_time: at, end_time: plus(at, 60) });
  t.is(second.body.team_member_id, teamMember(acme, 'staff'));
  // cleaning: not the manager; Sam is busy, so Nia
  const third = await book(app, acme.keys.owner_personal, { location_id: acme.ids.north, offering_id: acme.ids.cleaning, contact_id: acme.ids.dee, ...half(at) });
  t.is(third.body.team_member_id, teamMember(acme, 'nia'));
  // none named and everyone who may is busy: no_team_member_available, nothing written
  await refused(t, 409, 'no_team_member_available', acme.keys.owner_personal, { location_id: acme.ids.north, offering_id: acme.ids.checkup,
    contact_id: acme.ids.dee, start_time: at, end_time: plus(at, 60) });
  // a MEMBER without team_member_id: itself
  const own = await book(app, acme.keys.sam_personal, { location_id: acme.ids.north, offering_id: acme.ids.cleaning, contact_id: acme.ids.ann,
    ...half('2030-03-07T18:00:00Z') });
  t.is(own.status, 201, JSON.stringify(own.body));
  t.is(own.body.team_member_id, teamMember(acme, 'staff'));
});

test.serial('a calendar of a location that is not staffed is booked by calendar_id, also with a Member key or a key with no role', async (t) => {
  const desk = await book(app, acme.keys.london_member, { calendar_id: acme.ids.desk, contact_id: acme.ids.lia, ...half('2030-03-06T09:00:00Z') });
  t.is(desk.status, 201, JSON.stringify(desk.body));
  t.like(desk.body, { calendar_id: acme.ids.desk, location_id: acme.ids.london, team_member_id: null });
  const room = await book(app, acme.keys.org, { calendar_id: acme.ids.room, contact_id: acme.ids.lia, ...half('2030-03-06T09:00:00Z') });
  t.is(room.status, 201, JSON.stringify(room.body));
  // both calendars taken at 09:00Z: no longer offered; 09:30Z still is
  const slots = starts(await availability(app, acme.keys.org, { location_id: acme.ids.london, date: '2030-03-06' }));
  t.false(slots.includes('2030-03-06T09:00:00.000Z'));
  t.true(slots.includes('2030-03-06T09:30:00.000Z'));
  await refused(t, 409, 'slot_taken', acme.keys.org, { calendar_id: acme.ids.desk, contact_id: acme.ids.lia, ...half('2030-03-06T09:15:00Z') });
  await refused(t, 409, 'outside_hours', acme.keys.org, { calendar_id: acme.ids.desk, contact_id: acme.ids.lia, ...half('2030-03-06T08:30:00Z') });
  // the room's repeating series holds Mondays 09:30 London
  await refused(t, 409, 'slot_taken', acme.keys.org, { calendar_id: acme.ids.room, contact_id: acme.ids.lia, ...half('2030-04-01T08:30:00Z') });
});

test.serial('400: both or neither of location_id and calendar_id, no idempotency_key, bad times, calendar with team fields, wrong shape for the location', async (t) => {
  const base = northCleaning(acme, 60);
  const { location_id: _l, ...noPlace } = base;
  const cases: [string, Record<string, unknown>][] = [
    ['both', { ...base, calendar_id: acme.ids.desk }],
    ['neither', noPlace],
    ['end before start', { ...base, end_time: base.start_time, start_time: base.end_time }],
    ['equal times', { ...base, end_time: base.start_time }],
    ['no offset', { ...base, start_time: '2030-03-07T15:00:00', end_time: '2030-03-07T15:30:00' }],
    ['not a time', { ...base, start_time: 'tomorrow' }],
    ['no contact', { ...base, contact_id: undefined }],
    ['unknown field', { ...base, colour: 'red' }],
    ['calendar with team member', { calendar_id: acme.ids.desk, team_member_id: teamMember(acme, 'staff'), contact_id: acme.ids.lia, ...half('2030-03-06T11:00:00Z') }],
    ['calendar with offering', { calendar_id: acme.ids.desk, offering_id: acme.ids.cleaning, contact_id: acme.ids.lia, ...half('2030-03-06T11:00:00Z') }],
    ['calendar of a staffed location... by location_id of an unstaffed one', { location_id: acme.ids.london, contact_id: acme.ids.lia, ...half('2030-03-06T11:00:00Z') }],
    ['service address without a postal code', { ...base, service_address: { line1: '1 Elm St', country_code: 'US' } }],
    ['service address with a bad country', { ...base, service_address: { postal_code: '12207', country_code: 'USA' } }],
  ];
  for (const [why, body] of cases) {
    const res = await refused(t, 400, 'bad_request', acme.keys.owner_personal, body);
    t.is(res.status, 400, why);
  }
  // the key is required
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () =>
    app.request('POST', '/api/v1/appointments', { key: acme.keys.owner_personal, body: northCleaning(acme, 60) }));
});

test.serial('403 insufficient_role: a MEMBER booking another team member, keys without a role or power booking a team member', async (t) => {
  const nia = teamMember(acme, 'nia');
  // Sam books Nia
  await refused(t, 403, 'insufficient_role', acme.keys.sam_personal, northCleaning(acme, 90, { team_member_id: nia }));
  // Nia (own records) books Sam, for her own client Ann
  await refused(t, 403, 'insufficient_role', acme.keys.nia_personal, northCleaning(acme, 90));
  // an organization key (no role, no powers), named team member or not
  await refused(t, 403, 'insufficient_role', acme.keys.org, northCleaning(acme, 90));
  await refused(t, 403, 'insufficient_role', acme.keys.org, northCleaning(acme, 90, { team_member_id: undefined }));
  // a Member key (no person): calendars only
  await refused(t, 403, 'insufficient_role', acme.keys.north_member, northCleaning(acme, 90));
  await refused(t, 403, 'insufficient_role', acme.keys.north_member, northCleaning(acme, 90, { team_member_id: undefined }));
  // managers without the appointments power: a manager key (no person) none, a manager only itself
  await refused(t, 403, 'insufficient_role', acme.keys.north_mgr, northCleaning(acme, 90));
  await refused(t, 403, 'insufficient_role', acme.keys.north_mgr, northCleaning(acme, 90, { team_member_id: undefined }));
  await refused(t, 403, 'insufficient_role', acme.keys.weak_mgr_personal, { location_id: acme.ids.south, contact_id: acme.ids.bob,
    team_member_id: teamMember(acme, 'quiet'), ...half('2030-03-07T15:00:00Z') });
  // no appointments:write scope
  await refused(t, 403, 'insufficient_scope', acme.keys.appt_reader, northCleaning(acme, 90));
});

test.serial('a MANAGER without the appointments power books only itself (named or omitted), and calendars', async (t) => {
  const itself = await book(app, acme.keys.weak_mgr_personal, { location_id: acme.ids.south, contact_id: acme.ids.bob,
    team_member_id: teamMember(acme, 'weak_mgr'), ...half('2030-03-07T16:00:00Z') });
  t.is(itself.status, 201, JSON.stringify(itself.body));
  const omitted = await book(app, acme.keys.weak_mgr_personal, { location_id: acme.ids.south, contact_id: acme.ids.bob, ...half('2030-03-07T17:00:00Z') });
  t.is(omitted.status, 201, JSON.stringify(omitted.body));
  t.is(omitted.body.team_member_id, teamMember(acme, 'weak_mgr'));
});

test.serial('a MANAGER with the appointments power books anyone at its locations; a manager key without a person too', async (t) => {
  const byMgr = await book(app, acme.keys.mgr_personal, northCleaning(acme, 330, { team_member_id: teamMember(acme, 'nia'), contact_id: acme.ids.dee }));
  t.is(byMgr.status, 201, JSON.stringify(byMgr.body));
  const byKey = await book(app, acme.keys.north_appt_mgr, northCleaning(acme, 330));
  t.is(byKey.status, 201, JSON.stringify(byKey.body));
  // at another location: 404 (out of reach)
  await refused(t, 404, 'not_found', acme.keys.mgr_personal, { location_id: acme.ids.south, contact_id: acme.ids.bob,
    team_member_id: teamMember(acme, 'quiet'), ...half('2030-03-07T15:00:00Z') });
});

test.serial('404: unknown or out-of-reach contact, location, calendar, offering, team member; another organization\'s ids', async (t) => {
  const unknown = '00000000-0000-4000-8000-000000000000';
  const cases: [string | undefined, Record<string, unknown>][] = [
    [acme.keys.owner_personal, northCleaning(acme, 150, { contact_id: unknown })],
    [acme.keys.owner_personal, northCleaning(acme, 150, { contact_id: other.ids.ann })],
    [acme.keys.owner_personal, northCleaning(acme, 150, { location_id: other.ids.north })],
    [acme.keys.owner_personal, northCleaning(acme, 150, { offering_id: other.ids.cleaning })],
    [acme.keys.owner_personal, northCleaning(acme, 150, { team_member_id: teamMember(other, 'staff') })],
    [acme.keys.owner_personal, northCleaning(acme, 150, { team_member_id: unknown })],
    [acme.keys.owner_personal, { calendar_id: other.ids.desk, contact_id: acme.ids.lia, ...half('2030-03-06T12:00:00Z') }],
    [acme.keys.owner_personal, { calendar_id: unknown, contact_id: acme.ids.lia, ...half('2030-03-06T12:00:00Z') }],
    // an offering of another location of the organization
    [acme.keys.owner_personal, { location_id: acme.ids.south, offering_id: acme.ids.cleaning, contact_id: acme.ids.bob, ...half('2030-03-07T15:00:00Z') }],
    // a location-bound key, another location
    [acme.keys.north_member, { calendar_id: acme.ids.desk, contact_id: acme.ids.lia, ...half('2030-03-06T12:00:00Z') }],
    // a MEMBER: its own locations only
    [acme.keys.sam_personal, { location_id: acme.ids.south, contact_id: acme.ids.bob, ...half('2030-03-07T15:00:00Z') }],
    // an own-records MEMBER: only its own clients (Bob is not Nia's)
    [acme.keys.nia_personal, northCleaning(acme, 150, { team_member_id: teamMember(acme, 'nia'), contact_id: acme.ids.bob })],
  ];
  for (const [key, body] of cases) await refused(t, 404, 'not_found', key, body);
});

test.serial('409 offering_required carries booking_options; nothing written', async (t) => {
  const { offering_id: _o, ...body } = northCleaning(acme, 180);
  const res = await refused(t, 409, 'offering_required', acme.keys.owner_personal, body);
  t.deepEqual(res.body.booking_options.offerings.map((o: { name: string; duration_minutes: number }) => [o.name, o.duration_minutes]),
    [['Checkup', 60], ['Cleaning', 30]]);
  t.deepEqual(res.body.booking_options.team_member_ids, ['mgr', 'staff', 'nia'].map((r) => teamMember(acme, r)));
  // the same object locations_booking_options answers
  const options = await app.request('GET', `/api/v1/locations/${acme.ids.north}/booking-options`, { key: acme.keys.owner_personal! });
  t.is(options.status, 200, JSON.stringify(options.body));
  t.deepEqual(res.body.booking_options, options.body);
  // a location without offerings takes any length
  const south = await book(app, acme.keys.owner_personal, { location_id: acme.ids.south, contact_id: acme.ids.bob,
    team_member_id: teamMember(acme, 'weak_mgr'), start_time: '2030-03-07T15:00:00Z', end_time: '2030-03-07T15:20:00Z' });
  t.is(south.status, 201, JSON.stringify(south.body));
});

test.serial('409 duration_mismatch, outside_hours, team_member_not_eligible, address_out_of_area, no_team_member_available; nothing written', async (t) => {
  const k = acme.keys.owner_personal;
  await refused(t, 409, 'duration_mismatch', k, { ...northCleaning(acme, 180), end_time: '2030-03-07T18:00:00Z' });
  // 08:30 New York: before the location opens; 16:45 + 30 min: past closing
  await refused(t, 409, 'outside_hours', k, northCleaning(acme, -30));
  await refused(t, 409, 'outside_hours', k, northCleaning(acme, 465));
  await refused(t, 409, 'outside_hours', k, { ...northCleaning(acme, -30), team_member_id: undefined });
  // Nia works from 10:00: 09:00 is outside her hours
  await refused(t, 409, 'outside_hours', k, northCleaning(acme, 0, { team_member_id: teamMember(acme, 'nia'), contact_id: acme.ids.dee }));
  // Saturday: North is closed
  await refused(t, 409, 'outside_hours', k, { ...northCleaning(acme, 0), ...half('2030-03-09T15:00:00Z') });
  // the manager does no cleanings; Quinn works at South; Nia does not cover 12207
  await refused(t, 409, 'team_member_not_eligible', k, northCleaning(acme, 180, { team_member_id: teamMember(acme, 'mgr') }));
  await refused(t, 409, 'team_member_not_eligible', k, northCleaning(acme, 180, { team_member_id: teamMember(acme, 'quiet') }));
  await refused(t, 409, 'team_member_not_eligible', k, northCleaning(acme, 180, { team_member_id: teamMember(acme, 'nia'),
    service_address: { line1: '5 Elm St', postal_code: '12207', country_code: 'US' } }));
  // no territory covers it (or the code is another country's)
  await refused(t, 409, 'address_out_of_area', k, northCleaning(acme, 180, { service_address: { postal_code: '99999', country_code: 'US' } }));
  await refused(t, 409, 'address_out_of_area', k, northCleaning(acme, 180, { service_address: { postal_code: '12207', country_code: 'CA' } }));
  // 12999 is the manager's alone, who does no cleanings: nobody may take it
  await refused(t, 409, 'no_team_member_available', k, { ...northCleaning(acme, 180, { team_member_id: undefined }),
    service_address: { postal_code: '12999', country_code: 'US' } });
  // 12888 is Nia's alone, and at 09:00 she does not work yet
  await refused(t, 409, 'no_team_member_available', k, { ...northCleaning(acme, 0, { team_member_id: undefined }),
    service_address: { postal_code: '12888', country_code: 'US' } });
  // a home visit in a covered area books, with its address
  const visit = await book(app, k, northCleaning(acme, 180, { service_address: { line1: '5 Elm St', city: 'Albany', postal_code: '122 08', country_code: 'us' } }));
  t.is(visit.status, 201, JSON.stringify(visit.body));
  t.like(visit.body.service_address, { line1: '5 Elm St', postal_code: '122 08', country_code: 'US' });
});

test.serial('409 slot_taken: another booking, a team member\'s block, a location-wide block, an occurrence of a series; nothing written', async (t) => {
  const k = acme.keys.owner_personal;
  // a1: Sam, Tue 5 Mar 15:00–15:30Z (overlapping by a quarter hour is enough)
  await refused(t, 409, 'slot_taken', k, { ...northCleaning(acme), ...half('2030-03-05T15:15:00Z') });
  // Sam's training, Wed 6 Mar 14:00–16:00Z
  await refused(t, 409, 'slot_taken', k, { ...northCleaning(acme), ...half('2030-03-06T15:00:00Z') });
  // the holiday closes North on Fri 8 Mar, for everyone
  await refused(t, 409, 'slot_taken', k, { ...northCleaning(acme), ...half('2030-03-08T15:00:00Z') });
  // none named, and the holiday keeps every eligible team member off: no team member is available
  await refused(t, 409, 'no_team_member_available', k, { ...northCleaning(acme, 0, { team_member_id: undefined }), ...half('2030-03-08T15:00:00Z') });
  // Nia's weekly series on Mon 11 Mar, 10:00 New York (14:00Z after the DST change)
  await refused(t, 409, 'slot_taken', k, { ...northCleaning(acme, 0, { team_member_id: teamMember(acme, 'nia'), contact_id: acme.ids.dee }),
    ...half('2030-03-11T14:00:00Z') });
  // a cancelled booking frees its time: a_cancelled was Sam's at 18:00Z on 5 Mar
  const freed = await book(app, k, { ...northCleaning(acme), ...half('2030-03-05T18:00:00Z') });
  t.is(freed.status, 201, JSON.stringify(freed.body));
  // back to back is fine: [15:30, 16:00) right after a1
  const next = await book(app, k, { ...northCleaning(acme), ...half('2030-03-05T15:30:00Z') });
  t.is(next.status, 201, JSON.stringify(next.body));
});

test.serial('422: an organization key whose creator has left the organization cannot book; nothing written', async (t) => {
  // Leaving revokes the creator's keys (app_private.tg_people__revoke_keys); the booking function
  // checks again on its own, which is what is tested here: Lee leaves and the key stays live.
  await app.db.owner.query(`update app_public.people set active = false where organization_id = $1 and email = 'lee@acme.example'`, [org()]);
  await app.db.owner.query(`update app_private.api_keys set revoked_at = null where organization_id = $1 and id = $2`, [org(), acme.key_ids.leaver_key]);
  await refused(t, 422, 'key_creator_left', acme.keys.leaver_key, { calendar_id: acme.ids.desk, contact_id: acme.ids.lia, ...half('2030-03-06T13:00:00Z') });
});

test.serial('idempotency: the same key and details answer the first booking; the same key with other details is 409', async (t) => {
  const idempotency_key = randomUUID();
  const body = { ...northCleaning(acme, 270), idempotency_key };
  const first = await book(app, acme.keys.owner_personal, body);
  t.is(first.status, 201, JSON.stringify(first.body));
  const again = await unchanged(t, app, org(), () => book(app, acme.keys.owner_personal, body), 'a replay writes nothing');
  t.is(again.status, 201);
  t.deepEqual(again.body, first.body);
  const otherDetails = await unchanged(t, app, org(), () => book(app, acme.keys.owner_personal, { ...body, title: 'Changed' }));
  t.is(otherDetails.status, 409);
  t.is(otherDetails.body.error, 'idempotency_key_reused');
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_public.appointments where organization_id = $1 and starts_at = $2`,
    [org(), (body as Record<string, unknown>).start_time]);
  t.is(rows[0].n, 1);
});

test.serial('own clients: a booking makes its contact a client of the team member; cancelling the last one undoes it', async (t) => {
  // Nia's own clients are Ann and Dee (the fixture's bookings); Eve is nobody's
  t.deepEqual(await ownClients(org(), 'nia@acme.example'), [acme.ids.ann, acme.ids.dee].sort());
  const lia = acme.ids.eve!;
  const first = await book(app, acme.keys.owner_personal, northCleaning(acme, 300, { team_member_id: teamMember(acme, 'nia'), contact_id: lia }));
  const second = await book(app, acme.keys.owner_personal, northCleaning(acme, 360, { team_member_id: teamMember(acme, 'nia'), contact_id: lia }));
  t.is(second.status, 201);
  t.true((await ownClients(org(), 'nia@acme.example')).includes(lia));
  // Nia now reads Eve (own-records level)
  t.is((await app.request('GET', `/api/v1/contacts/${lia}`, { key: acme.keys.nia_personal })).status, 200);
  await cancel(app, acme.keys.owner_personal, first.body.id);
  t.true((await ownClients(org(), 'nia@acme.example')).includes(lia), 'one live booking is left');
  await cancel(app, acme.keys.owner_personal, second.body.id);
  t.false((await ownClients(org(), 'nia@acme.example')).includes(lia));
  t.is((await app.request('GET', `/api/v1/contacts/${lia}`, { key: acme.keys.nia_personal })).status, 404);
});

test.serial('MCP: appointments_create books, and refuses with the same codes as REST', async (t) => {
  const ok = await callTool(app, acme.keys.owner_personal!, 'appointments_create', { ...northCleaning(acme, 420), idempotency_key: randomUUID() });
  t.false(ok.isError, JSON.stringify(ok.body));
  t.is(ok.body.team_member_id, teamMember(acme, 'staff'));
  const taken = await unchanged(t, app, org(), () =>
    callTool(app, acme.keys.owner_personal!, 'appointments_create', { ...northCleaning(acme, 420), idempotency_key: randomUUID() }));
  t.true(taken.isError);
  t.is(taken.body.error, 'slot_taken');
});
