// Helpers of the availability and booking suites, and their malformed inputs.
//
// dstFixture() is bookingFixture() plus two locations open around the clock on Sundays (the days
// clocks change in 2030: 10 Mar and 3 Nov in New York, 31 Mar and 27 Oct in London), with one team
// member each, slots every 60 minutes: a day there has 23, 24 or 25 one-hour slots.
import { randomUUID } from 'node:crypto';
import type { Applied } from '../../src/admin/fixture.ts';
import type { Answer, TestApp } from '../helpers/app.ts';
import { acmeFixture, type Fixture } from '../helpers/fixtures.ts';
import { pick, type MalformedInput } from '../helpers/fuzz.ts';
import { teamMember, withBooking } from './reads-helpers.ts';

const allDay = (days: readonly string[]) => days.map((day) => ({ day, open: '00:00', close: '24:00' }));

/**
 * withBooking plus the around-the-clock locations ny24 and ldn24 with their team members (tess,
 * lou), two territories of North covered by one team member each (12999: mgr; 12888: nia), and an
 * organization key of an admin, Lee (leaver_key), for the 422 of a key whose creator has left, and a
 * contact at North who is nobody's client (eve).
 */
export function withDstLocations(base: Fixture): Fixture {
  const f = withBooking(base) as unknown as Record<string, any>;
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

// Times that fit the fixture's hours (North: weekdays 09:00–17:00 New York; London: 09:00–17:00),
// so a draw sometimes books for real rather than always being refused.
const STARTS = ['2030-03-07T14:00:00Z', '2030-03-07T14:30:00Z', '2030-03-11T13:00:00Z', '2030-03-05T10:00:00Z', '2030-03-12T18:00:00Z'];
const ENDS = ['2030-03-07T14:30:00Z', '2030-03-07T15:30:00Z', '2030-03-11T13:30:00Z', '2030-03-05T10:30:00Z', '2030-03-12T19:00:00Z'];
const DATES = ['2030-03-05', '2030-03-08', '2030-03-10', '2030-03-31', '2030-11-03', '2030-10-27'];

export const bookingMalformedInput: MalformedInput = {
  fixture: withDstLocations,
  values: {
    'appointments_availability.location_id': (r, pools) =>
      pick(r, [pools.tenant.ids.north!, pools.tenant.ids.london!, pools.tenant.ids.south!, pools.tenant.ids.ny24!]),
    'appointments_availability.date': (r) => pick(r, DATES),
    'appointments_availability.team_member_id': (r, pools) => pick(r, Object.values(pools.tenant.team_member_ids as Record<string, string>)),
    'appointments_availability.offering_id': (r, pools) => pick(r, [pools.tenant.ids.cleaning!, pools.tenant.ids.checkup!]),
    'appointments_availability.postal_code': (r) => pick(r, ['12207', '12303', 'WC2N 5HR', '99999']),
    'appointments_create.location_id': (r, pools) => pick(r, [pools.tenant.ids.north!, pools.tenant.ids.south!]),
    'appointments_create.calendar_id': (r, pools) => pick(r, [pools.tenant.ids.desk!, pools.tenant.ids.room!]),
    'appointments_create.offering_id': (r, pools) => pick(r, [pools.tenant.ids.cleaning!, pools.tenant.ids.checkup!]),
    'appointments_create.team_member_id': (r, pools) => pick(r, Object.values(pools.tenant.team_member_ids as Record<string, string>)),
    'appointments_create.contact_id': (r, pools) => pick(r, pools.ids('contact_id').own),
    'appointments_create.start_time': (r) => pick(r, STARTS),
    'appointments_create.end_time': (r) => pick(r, ENDS),
    'appointments_reschedule.start_time': (r) => pick(r, STARTS),
    'appointments_reschedule.end_time': (r) => pick(r, ENDS),
  },
};
