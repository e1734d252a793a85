// appointments_update, appointments_reschedule, appointments_cancel: what each may change, the
// checks a new time gets, repeating series and cancelled ones, who may change whose, and
// isolation across organizations and locations. Every refusal writes nothing.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import type { TestApp } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import { availability, book, cancel, northCleaning, reschedule, starts, update, startBooking } from './booking-helpers.ts';
import { teamMember } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => { ({ app, acme, other } = await startBooking()); });
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;
const refused = <R extends { status: number; body: any }>(t: Parameters<typeof refusedWithoutWrites>[0], status: number, error: string, call: () => Promise<R>) =>
  refusedWithoutWrites(t, app, [org(), other.organization_id], status, error, call);

test.serial('update changes the title, description and attendee details only; null clears', async (t) => {
  const a1 = acme.ids.a1!;
  const res = await update(app, acme.keys.owner_personal, a1, {
    title: 'Deep cleaning', description: 'Bring the old x-rays', attendee_name: 'Ann L.', attendee_phone: '+1 (555) 123-0099',
    attendee_email: 'ann.lee@example.com', attendee_notes: 'Prefers the window seat',
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { id: a1, title: 'Deep cleaning', description: 'Bring the old x-rays', attendee_name: 'Ann L.',
    attendee_phone: '+15551230099', attendee_email: 'ann.lee@example.com', attendee_notes: 'Prefers the window seat', status: 'booked' });
  t.is(new Date(res.body.start_time).toISOString(), '2030-03-05T15:00:00.000Z');
  const cleared = await update(app, acme.keys.owner_personal, a1, { description: null });
  t.is(cleared.body.description, null);
  t.is(cleared.body.title, 'Deep cleaning', 'fields not sent stay');
});

test.serial('update refuses time and status fields with 400 naming the operation to use, and other bad bodies; nothing written', async (t) => {
  const a1 = acme.ids.a1!;
  for (const [body, names] of [
    [{ start_time: '2030-03-05T16:00:00Z' }, 'appointments_reschedule'],
    [{ end_time: '2030-03-05T16:00:00Z', title: 'x' }, 'appointments_reschedule'],
    [{ status: 'cancelled' }, 'appointments_cancel'],
  ] as const) {
    const res = await refused(t, 400, 'bad_request', () => update(app, acme.keys.owner_personal, a1, body));
    t.regex(res.body.message, new RegExp(names));
  }
  for (const body of [{}, { attendee_phone: 'call me' }, { attendee_email: 'not-an-email' }, { title: 'x'.repeat(501) }, { colour: 'red' }, { title: 7 }]) {
    await refused(t, 400, 'bad_request', () => update(app, acme.keys.owner_personal, a1, body));
  }
});

test.serial('a repeating series: update, reschedule and cancel are 409 recurring_series_not_supported; nothing written', async (t) => {
  for (const id of [acme.ids.a_series!, acme.ids.a_room_series!]) {
    await refused(t, 409, 'recurring_series_not_supported', () => update(app, acme.keys.owner_personal, id, { title: 'x' }));
    await refused(t, 409, 'recurring_series_not_supported', () =>
      reschedule(app, acme.keys.owner_personal, id, '2030-03-04T16:00:00Z', '2030-03-04T16:30:00Z'));
    await refused(t, 409, 'recurring_series_not_supported', () => cancel(app, acme.keys.owner_personal, id));
  }
});

test.serial('reschedule moves a booking, frees its old time, and re-checks the new one like a booking; nothing written on refusal', async (t) => {
  const k = acme.keys.owner_personal;
  const made = await book(app, k, northCleaning(acme, 60));
  t.is(made.status, 201, JSON.stringify(made.body));
  const id = made.body.id as string;
  const moved = await reschedule(app, k, id, '2030-03-07T17:00:00Z', '2030-03-07T17:30:00Z');
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.is(new Date(moved.body.start_time).toISOString(), '2030-03-07T17:00:00.000Z');
  const slots = starts(await availability(app, k, { location_id: acme.ids.north, date: '2030-03-07', team_member_id: teamMember(acme, 'staff'), offering_id: acme.ids.cleaning }));
  t.true(slots.includes('2030-03-07T15:00:00.000Z'), 'the old time is free again');
  t.false(slots.includes('2030-03-07T17:00:00.000Z'));
  // onto Sam's own booking a1, his training, the holiday: slot_taken
  await refused(t, 409, 'slot_taken', () => reschedule(app, k, id, '2030-03-05T15:15:00Z', '2030-03-05T15:45:00Z'));
  await refused(t, 409, 'slot_taken', () => reschedule(app, k, id, '2030-03-06T14:00:00Z', '2030-03-06T14:30:00Z'));
  await refused(t, 409, 'slot_taken', () => reschedule(app, k, id, '2030-03-08T15:00:00Z', '2030-03-08T15:30:00Z'));
  // outside hours; not the cleaning's 30 minutes; end before start
  await refused(t, 409, 'outside_hours', () => reschedule(app, k, id, '2030-03-07T13:00:00Z', '2030-03-07T13:30:00Z'));
  await refused(t, 409, 'duration_mismatch', () => reschedule(app, k, id, '2030-03-07T18:00:00Z', '2030-03-07T19:00:00Z'));
  await refused(t, 400, 'bad_request', () => reschedule(app, k, id, '2030-03-07T18:30:00Z', '2030-03-07T18:00:00Z'));
  await refused(t, 400, 'bad_request', () => app.request('POST', `/api/v1/appointments/${id}/reschedule`, { key: k, body: { start_time: '2030-03-07T18:30:00Z' } }));
  // moving within its own time (overlapping itself) is fine
  const nudged = await reschedule(app, k, id, '2030-03-07T17:15:00Z', '2030-03-07T17:45:00Z');
  t.is(nudged.status, 200, JSON.stringify(nudged.body));
  // the team member's own hours count too: Nia works from 10:00, North opens at 09:00
  const nias = await book(app, k, northCleaning(acme, 120, { team_member_id: teamMember(acme, 'nia'), contact_id: acme.ids.dee }));
  t.is(nias.status, 201, JSON.stringify(nias.body));
  await refused(t, 409, 'outside_hours', () => reschedule(app, k, nias.body.id, '2030-03-07T14:00:00Z', '2030-03-07T14:30:00Z'));
  // a calendar's appointment: the London desk keeps London's hours (09:00-17:00, Greenwich time in March)
  await refused(t, 409, 'outside_hours', () => reschedule(app, k, acme.ids.a_desk, '2030-03-05T08:00:00Z', '2030-03-05T08:30:00Z'));
  const desk = await reschedule(app, k, acme.ids.a_desk, '2030-03-05T11:00:00Z', '2030-03-05T11:30:00Z');
  t.is(desk.status, 200, JSON.stringify(desk.body));
  const back = await reschedule(app, k, acme.ids.a_desk, '2030-03-05T10:00:00Z', '2030-03-05T10:30:00Z');
  t.is(back.status, 200, JSON.stringify(back.body));
});

test.serial('reschedule of a cancelled appointment is 409 appointment_cancelled; cancel again answers it unchanged', async (t) => {
  const k = acme.keys.owner_personal;
  await refused(t, 409, 'appointment_cancelled', () => reschedule(app, k, acme.ids.a_cancelled, '2030-03-07T19:00:00Z', '2030-03-07T19:30:00Z'));
  const again = await unchanged(t, app, org(), () => cancel(app, k, acme.ids.a_cancelled), 'cancelling a cancelled one writes nothing');
  t.is(again.status, 200);
  t.is(again.body.status, 'cancelled');
});

test.serial('cancel frees the time and answers the cancelled appointment', async (t) => {
  const k = acme.keys.owner_personal;
  const res = await cancel(app, k, acme.ids.a2);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { id: acme.ids.a2, status: 'cancelled' });
  const slots = starts(await availability(app, k, { location_id: acme.ids.north, date: '2030-03-05', team_member_id: teamMember(acme, 'nia'), offering_id: acme.ids.checkup }));
  t.true(slots.includes('2030-03-05T16:00:00.000Z'));
  // the list leaves it out
  const list = await app.request('GET', '/api/v1/appointments?from=2030-03-05T00:00:00Z&to=2030-03-06T00:00:00Z', { key: k });
  t.is(list.status, 200, JSON.stringify(list.body));
  t.false(list.body.items.some((a: { id: string }) => a.id === acme.ids.a2));
});

test.serial('blocks: a team member\'s follows its rules (a block may be set outside hours); a location-wide one only for owner, admin and organization keys', async (t) => {
  // Sam moves his own training to the evening, outside the location's hours
  const moved = await reschedule(app, acme.keys.sam_personal, acme.ids.sam_off, '2030-03-06T23:00:00Z', '2030-03-07T01:00:00Z');
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.is(moved.body.kind, 'block');
  // the holiday: 403 to a manager with every power and to its location's members
  await refused(t, 403, 'insufficient_role', () => update(app, acme.keys.mgr_personal, acme.ids.holiday, { title: 'Open after all' }));
  await refused(t, 403, 'insufficient_role', () => cancel(app, acme.keys.north_appt_mgr, acme.ids.holiday));
  await refused(t, 403, 'insufficient_role', () => cancel(app, acme.keys.sam_personal, acme.ids.holiday));
  await refused(t, 403, 'insufficient_role', () =>
    reschedule(app, acme.keys.mgr_personal, acme.ids.holiday, '2030-03-09T05:00:00Z', '2030-03-10T05:00:00Z'));
  // an organization key and an admin may
  t.is((await update(app, acme.keys.org, acme.ids.holiday, { title: 'Closed for the holiday' })).status, 200);
  const reopened = await cancel(app, acme.keys.admin_personal, acme.ids.holiday);
  t.is(reopened.status, 200);
  t.true(starts(await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-08', duration_minutes: 30 })).length > 0);
});

test.serial('roles: a MEMBER changes only its own; keys without a role only calendars; a manager with the power anyone at its locations', async (t) => {
  const { a1, a2, a_desk } = acme.ids;
  // Sam on Nia's booking, a Member key and an organization key on Sam's: 403
  await refused(t, 403, 'insufficient_role', () => update(app, acme.keys.sam_personal, a2, { title: 'x' }));
  await refused(t, 403, 'insufficient_role', () => reschedule(app, acme.keys.sam_personal, a2, '2030-03-05T19:00:00Z', '2030-03-05T20:00:00Z'));
  await refused(t, 403, 'insufficient_role', () => cancel(app, acme.keys.north_member, a1));
  await refused(t, 403, 'insufficient_role', () => update(app, acme.keys.org, a1, { title: 'x' }));
  await refused(t, 403, 'insufficient_role', () => reschedule(app, acme.keys.org, a1, '2030-03-05T19:00:00Z', '2030-03-05T19:30:00Z'));
  await refused(t, 403, 'insufficient_role', () => cancel(app, acme.keys.member_key, a1));
  // a manager key without the appointments power (and without a person): no team member's
  await refused(t, 403, 'insufficient_role', () => update(app, acme.keys.north_mgr, a1, { title: 'x' }));
  // a manager without the power: only its own (Wes at South: not Quinn's a_south)
  await refused(t, 403, 'insufficient_role', () => cancel(app, acme.keys.weak_mgr_personal, acme.ids.a_south));
  // Nia (own records) does not see Sam's booking at all
  await refused(t, 404, 'not_found', () => update(app, acme.keys.nia_personal, a1, { title: 'x' }));
  // allowed: Sam on his own, the manager on anyone's at North, a Member key on a calendar's
  t.is((await update(app, acme.keys.sam_personal, a1, { attendee_notes: 'Running late' })).status, 200);
  t.is((await update(app, acme.keys.mgr_personal, a1, { title: 'By the manager' })).status, 200);
  t.is((await update(app, acme.keys.north_appt_mgr, a1, { title: 'By the manager key' })).status, 200);
  t.is((await update(app, acme.keys.london_member, a_desk, { title: 'Desk, changed' })).status, 200);
  t.is((await update(app, acme.keys.org, a_desk, { attendee_notes: 'ok' })).status, 200);
});

test.serial('isolation: another organization\'s appointment, and another location\'s for a location-bound credential, are 404', async (t) => {
  for (const [key, id] of [
    [acme.keys.owner_personal, other.ids.a1],
    [acme.keys.org, other.ids.a_desk],
    [acme.keys.north_member, acme.ids.a_south],
    [acme.keys.mgr_personal, acme.ids.a_south],
    [acme.keys.sam_personal, acme.ids.a_desk],
    [acme.keys.london_member, acme.ids.a1],
    [acme.keys.owner_personal, '00000000-0000-4000-8000-000000000000'],
  ] as const) {
    await refused(t, 404, 'not_found', () => update(app, key, id, { title: 'x' }));
    await refused(t, 404, 'not_found', () => reschedule(app, key, id, '2030-03-07T20:00:00Z', '2030-03-07T20:30:00Z'));
    await refused(t, 404, 'not_found', () => cancel(app, key, id));
  }
});

test.serial('MCP: reschedule and cancel through tools', async (t) => {
  const made = await book(app, acme.keys.owner_personal, northCleaning(acme, 420));
  t.is(made.status, 201, JSON.stringify(made.body));
  const moved = await callTool(app, acme.keys.owner_personal!, 'appointments_reschedule',
    { appointmentId: made.body.id, start_time: '2030-03-07T21:30:00Z', end_time: '2030-03-07T22:00:00Z' });
  t.false(moved.isError, JSON.stringify(moved.body));
  const gone = await callTool(app, acme.keys.owner_personal!, 'appointments_cancel', { appointmentId: made.body.id });
  t.false(gone.isError);
  t.is(gone.body.status, 'cancelled');
});
