// The booking fixture every appointments suite starts from, and the reads' malformed inputs.
//
// bookingFixture() is acmeFixture with booking data, all in March 2030 (far enough ahead to stay
// in the future, and across both DST starts):
//   north   America/New_York, staffed, Mon–Fri 09:00–17:00, slots every 15 min, offerings
//           `cleaning` (30 min; staff and nia) and `checkup` (60 min; everyone), territories
//           `metro` (US 12207, 12208; staff) and `suburbs` (US 12303; everyone). Team members
//           in file order: mgr, staff (Sam, the location's hours), nia (own-records MEMBER,
//           Mon–Fri 10:00–16:00); ivy is inactive, so no team member.
//   south   America/Chicago, staffed, Mon–Sat 08:00–18:00, 30 min slots, no offerings. Team
//           members: weak_mgr, quiet.
//   london  Europe/London, NOT staffed, every day 09:00–17:00, 30 min slots, calendars `desk`
//           and `room`, territory `central` (GB).
// Appointments (ids under tenant.ids): a1 (north, staff, cleaning, ann, Tue 5 Mar 10:00–10:30 EST),
// a2 (north, nia, checkup, dee, 5 Mar 11:00–12:00), a_cancelled (north, staff, ann, cancelled,
// 5 Mar 13:00), a_series (north, nia, ann, Mondays 10:00–10:30 New York time from 4 Mar to 25 Mar:
// 15:00Z before the DST start of 10 Mar, 14:00Z after), a_south (south, quiet, bob, 5 Mar 09:00
// Chicago), a_desk (london desk, lia, 5 Mar 10:00 London), a_room_series (london room, lia,
// Mondays 09:30 London from 25 Mar to 8 Apr: 09:30Z, then 08:30Z after the DST start of 31 Mar).
// Blocks: holiday (north, location-wide, Fri 8 Mar all day), sam_off (north, staff, Wed 6 Mar
// 09:00–11:00 New York).
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture, type Fixture } from '../helpers/fixtures.ts';
import { pick, type MalformedInput } from '../helpers/fuzz.ts';

const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri'] as const;
const hours = (days: readonly string[], open: string, close: string) => days.map((day) => ({ day, open, close }));

/** What bookingFixture adds to an acme-shaped fixture (also used by the malformed-input suite). */
export function withBooking(base: Fixture): Fixture {
  const f = base as unknown as Record<string, any>;
  return {
    ...f,
    locations: [
      ...f.locations.map((l: Record<string, unknown>) =>
        l.ref === 'north'
          ? { ...l, hours: hours(WEEKDAYS, '09:00', '17:00'), slot_interval_minutes: 15,
              address: { line1: '1 Main St', city: 'Albany', region: 'NY', postal_code: '12207', country_code: 'US' } }
          : l.ref === 'south'
            ? { ...l, hours: hours([...WEEKDAYS, 'sat'], '08:00', '18:00'), slot_interval_minutes: 30 }
            : l),
      { ref: 'london', name: 'London', timezone: 'Europe/London', staffed: false, slot_interval_minutes: 30,
        hours: hours([...WEEKDAYS, 'sat', 'sun'], '09:00', '17:00'),
        address: { line1: '10 Strand', city: 'London', postal_code: 'WC2N 5HR', country_code: 'GB' } },
    ],
    users: [
      ...f.users,
      { ref: 'nia', name: 'Nia Own', email: 'nia@acme.example', role: 'member', location_refs: ['north'], records_level: 'own',
        working_hours: hours(WEEKDAYS, '10:00', '16:00') },
      { ref: 'ivy', name: 'Ivy Gone', email: 'ivy@acme.example', role: 'member', location_refs: ['north'], active: false },
    ],
    api_keys: [
      ...f.api_keys,
      { ref: 'nia_personal', kind: 'personal', user_ref: 'nia' },
      { ref: 'north_appt_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['north'], powers: ['appointments'] },
      { ref: 'london_member', kind: 'organization', created_by_ref: 'owner', role: 'MEMBER', location_refs: ['london'] },
      { ref: 'appt_reader', kind: 'organization', created_by_ref: 'owner', scopes: ['appointments:read'] },
    ],
    contacts: [
      ...f.contacts,
      { ref: 'dee', name: 'Dee North', email: 'dee@example.com', phone: '+15551230004', location_refs: ['north'] },
      { ref: 'lia', name: 'Lia London', email: 'lia@example.co.uk', phone: '+447700900123', location_refs: ['london'] },
    ],
    offerings: [
      { ref: 'cleaning', location_ref: 'north', name: 'Cleaning', duration_minutes: 30, team_member_refs: ['staff', 'nia'] },
      { ref: 'checkup', location_ref: 'north', name: 'Checkup', duration_minutes: 60 },
    ],
    territories: [
      { ref: 'metro', location_ref: 'north', name: 'Metro', country_code: 'US', postal_codes: ['12207', '12208'], team_member_refs: ['staff'] },
      { ref: 'suburbs', location_ref: 'north', name: 'Suburbs', country_code: 'US', postal_codes: ['12303'] },
      { ref: 'central', location_ref: 'london', name: 'Central', country_code: 'GB', postal_codes: ['WC2N 5HR', 'sw1a 1aa'] },
    ],
    calendars: [
      { ref: 'desk', location_ref: 'london', name: 'Front desk' },
      { ref: 'room', location_ref: 'london', name: 'Consult room' },
    ],
    appointments: [
      { ref: 'a1', location_ref: 'north', team_member_ref: 'staff', offering_ref: 'cleaning', contact_ref: 'ann', title: 'Cleaning',
        start: '2030-03-05T15:00:00Z', end: '2030-03-05T15:30:00Z',
        attendee: { name: 'Ann Lee', phone: '+15551230001', email: 'ann@example.com', notes: 'Sensitive teeth' } },
      { ref: 'a2', location_ref: 'north', team_member_ref: 'nia', offering_ref: 'checkup', contact_ref: 'dee', title: 'Checkup',
        start: '2030-03-05T16:00:00Z', end: '2030-03-05T17:00:00Z' },
      { ref: 'a_cancelled', location_ref: 'north', team_member_ref: 'staff', contact_ref: 'ann', title: 'Called off',
        start: '2030-03-05T18:00:00Z', end: '2030-03-05T18:30:00Z', cancelled: true },
      { ref: 'a_series', location_ref: 'north', team_member_ref: 'nia', contact_ref: 'ann', title: 'Weekly care',
        start: '2030-03-04T15:00:00Z', end: '2030-03-04T15:30:00Z',
        recurrence: { rrule: 'FREQ=WEEKLY;BYDAY=MO', ends_on: '2030-03-25' } },
      { ref: 'a_south', location_ref: 'south', team_member_ref: 'quiet', contact_ref: 'bob', title: 'South visit',
        start: '2030-03-05T15:00:00Z', end: '2030-03-05T16:00:00Z' },
      { ref: 'a_desk', calendar_ref: 'desk', contact_ref: 'lia', title: 'Desk appointment',
        start: '2030-03-05T10:00:00Z', end: '2030-03-05T10:30:00Z' },
      { ref: 'a_room_series', calendar_ref: 'room', contact_ref: 'lia', title: 'Weekly consult',
        start: '2030-03-25T09:30:00Z', end: '2030-03-25T10:00:00Z',
        recurrence: { rrule: 'FREQ=WEEKLY;BYDAY=MO', ends_on: '2030-04-08' } },
    ],
    blocks: [
      { ref: 'holiday', location_ref: 'north', team_member_ref: null,
        start: '2030-03-08T00:00:00-05:00', end: '2030-03-09T00:00:00-05:00', title: 'Closed' },
      { ref: 'sam_off', location_ref: 'north', team_member_ref: 'staff',
        start: '2030-03-06T14:00:00Z', end: '2030-03-06T16:00:00Z', title: 'Training' },
    ],
  } as unknown as Fixture;
}

/** acmeFixture with the booking data above. */
export function bookingFixture(name = 'Acme Dental'): Fixture {
  return withBooking(acmeFixture(name));
}

/** The service with two organizations from bookingFixture: Acme Dental and Other Dental (for isolation). */
export async function startBookingApp(): Promise<{ app: TestApp; acme: Applied; other: Applied }> {
  const { app, tenant: acme } = await startWithTenant(bookingFixture());
  return { app, acme, other: await app.apply(bookingFixture('Other Dental')) };
}

/** The team member id (staff profile id) of a user ref of an applied fixture. */
export const teamMember = (tenant: Applied, userRef: string): string => {
  const id = (tenant.team_member_ids as Record<string, string> | undefined)?.[userRef];
  if (!id) throw new Error(`no team member ${userRef}`);
  return id;
};

const WINDOW_STARTS = ['2030-03-01T00:00:00Z', '2030-03-04T00:00:00-05:00', '2030-03-25T00:00:00Z', '2030-01-01T00:00:00Z'];
const WINDOW_ENDS = ['2030-03-31T00:00:00Z', '2030-04-30T00:00:00Z', '2030-03-06T00:00:00+01:00', '2030-06-01T00:00:00Z'];

export const readsMalformedInput: MalformedInput = {
  fixture: withBooking,
  values: {
    'appointments_list.from': (r) => pick(r, WINDOW_STARTS),
    'appointments_list.to': (r) => pick(r, WINDOW_ENDS),
    'appointments_list.contact_id': (r, pools) => pick(r, pools.ids('contact_id').own),
    'locations_booking_options.locationId': (r, pools) => pick(r, [pools.tenant.ids.north!, pools.tenant.ids.london!, pools.tenant.ids.south!]),
    'territories_list.location_id': (r, pools) => pick(r, pools.ids('location_id').own),
    'calendars_list.location_id': (r, pools) => pick(r, pools.ids('location_id').own),
    appointmentId: (r, pools) => pick(r, ['a1', 'a2', 'a_cancelled', 'a_series', 'a_south', 'a_desk', 'holiday', 'sam_off']
      .map((k) => pools.tenant.ids[k]!)),
  },
};
