// Helpers of the availability and booking suites, and their malformed inputs.
//
// dstFixture() is bookingFixture() plus two locations open around the clock on Sundays (the days
// clocks change in 2030: 10 Mar and 3 Nov in New York, 31 Mar and 27 Oct in London), with one team
// member each, slots every 60 minutes: a day there has 23, 24 or 25 one-hour slots.
import { randomUUID } from 'node:crypto';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type Answer, type TestApp } from '../helpers/app.ts';
import { acmeFixture, type Fixture } from '../helpers/fixtures.ts';
import { pick, type MalformedInput, type Pools, type Rand } from '../helpers/fuzz.ts';
import { teamMember, withBooking } from './reads-helpers.ts';

const allDay = (days: readonly string[]) => days.map((day) => ({ day, open: '00:00', close: '24:00' }));

/**
 * withBooking plus the around-the-clock locations ny24 and ldn24 with their team members (tess,
 * lou), two territories of North covered by one team member each (12999: mgr; 12888: nia), and an
 * organization key of an admin, Lee (leaver_key), for the 422 of a key whose creator has left, and a
 * contact at North who is nobody's client (eve).
 */
export function withDstLocations(base: Fixture): Fixture {
  return withBookingExtras(withBooking(base));
}

/** What withDstLocations adds on top of a fixture that has withBooking's data already. */
export function withBookingExtras(booking: Fixture): Fixture {
  const f = booking as unknown as Record<string, any>;
  return {
    ...f,
    locations: [
      ...f.locations,
      { ref: 'ny24', name: 'NY 24h', timezone: 'America/New_York', staffed: true, slot_interval_minutes: 60, hours: allDay(['sun', 'mon']) },
      { ref: 'ldn24', name: 'London 24h', timezone: 'Europe/London', staffed: true, slot_interval_minutes: 60, hours: allDay(['sun', 'mon']) },
    ],
    territories: [
      ...f.territories,
      // covered by the manager alone (who does no cleanings), and by Nia alone (who starts at 10:00)
      { ref: 'mgr_land', location_ref: 'north', name: 'Manager land', country_code: 'US', postal_codes: ['12999'], team_member_refs: ['mgr'] },
      { ref: 'nia_land', location_ref: 'north', name: 'Nia land', country_code: 'US', postal_codes: ['12888'], team_member_refs: ['nia'] },
    ],
    users: [
      ...f.users,
      { ref: 'leaver', name: 'Lee Left', email: 'lee@acme.example', role: 'admin' },
      { ref: 'tess', name: 'Tess Nights', email: 'tess@acme.example', role: 'member', location_refs: ['ny24'], staff_profile: true },
      { ref: 'lou', name: 'Lou Nights', email: 'lou@acme.example', role: 'member', location_refs: ['ldn24'], staff_profile: true },
    ],
    contacts: [
      ...f.contacts,
      // at North and nobody's client yet
      { ref: 'eve', name: 'Eve North', email: 'eve@example.com', phone: '+15551230005', location_refs: ['north'] },
    ],
    api_keys: [
      ...f.api_keys,
      // an organization key of Lee's (booking.test.ts makes Lee leave with the key still live: 422)
      { ref: 'leaver_key', kind: 'organization', created_by_ref: 'leaver' },
    ],
  } as unknown as Fixture;
}

/** The booking fixture with the DST locations: what the availability and booking suites start from. */
export const dstFixture = (name = 'Acme Dental'): Fixture => withDstLocations(acmeFixture(name));

/** The app over a fresh database with two tenants of dstFixture: Acme Dental and Other Co (for isolation). */
export async function startBooking(): Promise<{ app: TestApp; acme: Applied; other: Applied }> {
  const { app, tenant: acme } = await startWithTenant(dstFixture());
  return { app, acme, other: await app.apply(dstFixture('Other Co')) };
}

/** GET appointments_availability with these query parameters. */
export function availability(app: TestApp, key: string | undefined, query: Record<string, string | number | undefined>): Promise<Answer> {
  const missing = Object.keys(query).filter((k) => query[k] === undefined);
  if (missing.length) throw new Error(`availability: no value for ${missing.join(', ')}`);
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return app.request('GET', `/api/v1/appointments/availability?${qs}`, { key });
}

/** POST appointments_create; a fresh idempotency key unless the body has one. */
export function book(app: TestApp, key: string | undefined, body: Record<string, unknown>): Promise<Answer> {
  return app.request('POST', '/api/v1/appointments', { key, body: { idempotency_key: randomUUID(), ...body } });
}

export const reschedule = (app: TestApp, key: string | undefined, id: string | undefined, start_time: string, end_time: string) =>
  app.request('POST', `/api/v1/appointments/${id}/reschedule`, { key, body: { start_time, end_time } });
export const cancel = (app: TestApp, key: string | undefined, id: string | undefined) => app.request('POST', `/api/v1/appointments/${id}/cancel`, { key });
export const update = (app: TestApp, key: string | undefined, id: string | undefined, body: Record<string, unknown>) =>
  app.request('PATCH', `/api/v1/appointments/${id}`, { key, body });

/** Slot starts of an availability answer, as ISO strings in UTC. */
export const starts = (res: Answer): string[] => (res.body.slots as { start: string }[]).map((s) => new Date(s.start).toISOString());

/** A booking at North for Sam (staff) on Thu 7 Mar 2030 (a plain day), `minutes` after 09:00 New York, 30 minutes long. */
export function northCleaning(tenant: Applied, minutes = 0, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const start = new Date(Date.parse('2030-03-07T14:00:00Z') + minutes * 60_000);
  return {
    location_id: tenant.ids.north, offering_id: tenant.ids.cleaning, team_member_id: teamMember(tenant, 'staff'),
    contact_id: tenant.ids.ann, start_time: start.toISOString(), end_time: new Date(start.getTime() + 30 * 60_000).toISOString(),
    ...extra,
  };
}

/** The live (booked) rows of a team member, as [start, end) pairs sorted. */
export async function liveRanges(app: TestApp, organizationId: string, staffProfileId: string): Promise<[Date, Date][]> {
  const { rows } = await app.db.owner.query(
    `select starts_at, ends_at from app_public.appointments
      where organization_id = $1 and staff_profile_id = $2 and status = 'booked' and rrule is null order by starts_at`,
    [organizationId, staffProfileId]);
  return rows.map((r: { starts_at: Date; ends_at: Date }) => [r.starts_at, r.ends_at]);
}

// Values that fit the fixture's data, so careful draws book for real now and then. The malformed
// suite's keys are an organization key (no role: it books calendars only) and a manager key
// without the appointments power: bookings they may make are London's calendars', so the team
// fields are mostly left out (a value of undefined is a field not sent).
const STARTS = ['2030-04-04T09:00:00+01:00', '2030-04-04T08:30:00Z', '2030-04-04T10:00:00+01:00', '2030-04-05T09:00:00+01:00'];
const ENDS = ['2030-04-04T11:30:00+01:00', '2030-04-04T11:00:00Z', '2030-04-04T12:00:00+01:00', '2030-04-04T10:30:00+01:00'];
const DATES = ['2030-03-05', '2030-03-08', '2030-03-10', '2030-03-31', '2030-11-03', '2030-10-27'];
const mostlyAbsent = <T>(value: (r: Rand, pools: Pools) => T) => (r: Rand, pools: Pools): T | undefined => (r() < 0.85 ? undefined : value(r, pools));
const north = (pools: Pools) => pools.tenant.ids.north!;
const northTeam = (r: Rand, pools: Pools) => teamMember(pools.tenant, pick(r, ['mgr', 'staff', 'nia']));

export const bookingMalformedInput: MalformedInput = {
  // composed after the reads' part, whose fixture adds withBooking's data
  fixture: withBookingExtras,
  values: {
    'appointments_availability.location_id': (_r, pools) => north(pools),
    'appointments_availability.date': (r) => pick(r, DATES),
    'appointments_availability.team_member_id': northTeam,
    'appointments_availability.offering_id': (r, pools) => pick(r, [pools.tenant.ids.cleaning!, pools.tenant.ids.checkup!]),
    'appointments_availability.postal_code': (r) => pick(r, ['12207', '12303', ' 122 08 ', '99999']),
    'appointments_availability.country_code': (r) => pick(r, ['US', 'us']),
    'appointments_create.location_id': mostlyAbsent((_r, pools) => north(pools)),
    'appointments_create.offering_id': mostlyAbsent((r, pools) => pick(r, [pools.tenant.ids.cleaning!, pools.tenant.ids.checkup!])),
    'appointments_create.team_member_id': mostlyAbsent(northTeam),
    'appointments_create.service_address': mostlyAbsent((r) => ({ postal_code: pick(r, ['12207', '99999']), country_code: 'US' })),
    'appointments_create.calendar_id': (r, pools) => pick(r, [pools.tenant.ids.desk!, pools.tenant.ids.room!]),
    'appointments_create.contact_id': (r, pools) => pick(r, [pools.tenant.ids.lia!, pools.tenant.ids.ann!]),
    'appointments_create.start_time': (r) => pick(r, STARTS),
    'appointments_create.idempotency_key': () => randomUUID(),
    'appointments_create.end_time': (r) => pick(r, ENDS),
    // what a key with no role may change: a calendar's appointment and a location-wide block
    'appointments_update.appointmentId': (r, pools) => pick(r, ['a_desk', 'holiday', 'a_desk', 'a1'].map((k) => pools.tenant.ids[k]!)),
    'appointments_reschedule.appointmentId': (r, pools) => pick(r, ['a_desk', 'holiday', 'holiday', 'a_series'].map((k) => pools.tenant.ids[k]!)),
    'appointments_reschedule.start_time': (r) => pick(r, STARTS),
    'appointments_reschedule.end_time': (r) => pick(r, ENDS),
  },
};
