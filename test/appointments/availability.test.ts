// appointments_availability: location hours ∩ working hours, minus bookings, blocks and series
// occurrences, for the offering's length, stepped by the slot interval from each opening; merged
// across team members; narrowed by team member and territory; right on days of 23 and 25 hours.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import type { TestApp } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';
import { availability, starts, startBooking } from './booking-helpers.ts';
import { teamMember } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => { ({ app, acme, other } = await startBooking()); });
test.after.always(async () => { await app?.close(); });

const at = (iso: string) => new Date(iso).toISOString();
/** Starts every `step` minutes from `from` (inclusive) to `to` (inclusive), as ISO strings. */
const every = (from: string, to: string, step: number): string[] => {
  const out: string[] = [];
  for (let t = Date.parse(from); t <= Date.parse(to); t += step * 60_000) out.push(new Date(t).toISOString());
  return out;
};

test('one team member: the location\'s hours stepped by the slot interval, less its bookings (cancelled ones free)', async (t) => {
  const staff = teamMember(acme, 'staff');
  const res = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-05', team_member_id: staff, duration_minutes: 30 });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.timezone, 'America/New_York');
  t.is(res.body.duration_minutes, 30);
  t.deepEqual(res.body.team_member_ids, [staff]);
  // 09:00–17:00 EST = 14:00Z–22:00Z; a1 holds 15:00–15:30Z; a_cancelled (18:00Z) is cancelled
  const expected = every('2030-03-05T14:00:00Z', '2030-03-05T21:30:00Z', 15)
    .filter((s) => !['2030-03-05T14:45:00.000Z', '2030-03-05T15:00:00.000Z', '2030-03-05T15:15:00.000Z'].includes(s));
  t.deepEqual(starts(res), expected);
  t.true(res.body.slots.every((s: { start: string; end: string }) => Date.parse(s.end) - Date.parse(s.start) === 30 * 60_000));
});

test('an offering gives the length and its team members; slots are merged across them', async (t) => {
  const [staff, nia] = [teamMember(acme, 'staff'), teamMember(acme, 'nia')];
  const q = { location_id: acme.ids.north, date: '2030-03-05', offering_id: acme.ids.cleaning };
  const res = await availability(app, acme.keys.owner_personal, q);
  t.is(res.status, 200);
  t.is(res.body.duration_minutes, 30);
  // the manager does not do cleanings: Sam and Nia, oldest first
  t.deepEqual(res.body.team_member_ids, [staff, nia]);
  const merged = starts(res);
  const sam = starts(await availability(app, acme.keys.owner_personal, { ...q, team_member_id: staff }));
  const niaOnly = starts(await availability(app, acme.keys.owner_personal, { ...q, team_member_id: nia }));
  // a start is offered when someone can take it: the union of each one's starts
  t.deepEqual(merged, [...new Set([...sam, ...niaOnly])].sort());
  // 14:45Z: Sam is booked from 15:00 and Nia starts work at 15:00Z (10:00 New York): nobody
  t.false(merged.includes('2030-03-05T14:45:00.000Z'));
  // 15:00Z: Sam is booked, Nia is free: offered
  t.false(sam.includes('2030-03-05T15:00:00.000Z'));
  t.true(niaOnly.includes('2030-03-05T15:00:00.000Z'));
  t.true(merged.includes('2030-03-05T15:00:00.000Z'));
  // 14:00Z: only Sam works; 16:00Z: Nia has a2 (16:00–17:00Z), Sam is free
  t.deepEqual([sam.includes('2030-03-05T14:00:00.000Z'), niaOnly.includes('2030-03-05T14:00:00.000Z')], [true, false]);
  t.deepEqual([sam.includes('2030-03-05T16:00:00.000Z'), niaOnly.includes('2030-03-05T16:00:00.000Z')], [true, false]);
  // last start: 16:30 New York, ending at closing time
  t.is(merged.at(-1), '2030-03-05T21:30:00.000Z');
});

test('an offering\'s length wins over duration_minutes; no length at all means the slot interval', async (t) => {
  const withBoth = await availability(app, acme.keys.owner_personal,
    { location_id: acme.ids.north, date: '2030-03-05', offering_id: acme.ids.checkup!, duration_minutes: 15 });
  t.is(withBoth.body.duration_minutes, 60);
  t.is(starts(withBoth).at(-1), '2030-03-05T21:00:00.000Z');
  const bare = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.south, date: '2030-03-05' });
  t.is(bare.body.duration_minutes, 30);
  t.is(bare.body.slot_interval_minutes, 30);
});

test('blocks: a location-wide one closes the day, a team member\'s one only its time', async (t) => {
  const holiday = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-08', duration_minutes: 15 });
  t.deepEqual(holiday.body.slots, []);
  const staff = teamMember(acme, 'staff');
  const off = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-06', team_member_id: staff, duration_minutes: 30 });
  // Training 14:00–16:00Z: the first slot is 16:00Z
  t.is(starts(off)[0], '2030-03-06T16:00:00.000Z');
  const anyone = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-06', duration_minutes: 30 });
  t.is(starts(anyone)[0], '2030-03-06T14:00:00.000Z', 'the manager is free during Sam\'s training');
});

test('occurrences of a repeating series are busy, in the location\'s wall time across the DST change', async (t) => {
  const nia = teamMember(acme, 'nia');
  // Monday 4 Mar (EST): Nia works 10:00–16:00 = 15:00–21:00Z; the series holds 15:00–15:30Z
  const before = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-04', team_member_id: nia, duration_minutes: 30 });
  t.is(starts(before)[0], '2030-03-04T15:30:00.000Z');
  // Monday 11 Mar (EDT): 10:00 New York = 14:00Z; the series holds 14:00–14:30Z
  const after = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-11', team_member_id: nia, duration_minutes: 30 });
  t.is(starts(after)[0], '2030-03-11T14:30:00.000Z');
  t.is(starts(after).at(-1), '2030-03-11T19:30:00.000Z');
});

for (const [where, date, hours, first] of [
  ['ny24', '2030-03-10', 23, '2030-03-10T05:00:00Z'],
  ['ny24', '2030-11-03', 25, '2030-11-03T04:00:00Z'],
  ['ny24', '2030-03-17', 24, '2030-03-17T04:00:00Z'],
  ['ldn24', '2030-03-31', 23, '2030-03-31T00:00:00Z'],
  ['ldn24', '2030-10-27', 25, '2030-10-26T23:00:00Z'],
  ['ldn24', '2030-03-24', 24, '2030-03-24T00:00:00Z'],
] as const) {
  test(`DST: ${where} on ${date} has ${hours} hours, so ${hours} one-hour slots, back to back from local midnight`, async (t) => {
    const res = await availability(app, acme.keys.owner_personal, { location_id: acme.ids[where]!, date, duration_minutes: 60 });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.deepEqual(starts(res), every(first, new Date(Date.parse(first) + (hours - 1) * 3_600_000).toISOString(), 60));
    // each slot's local start, read back in the zone, is on that date
    const tz = res.body.timezone as string;
    const day = (iso: string) => new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(iso));
    t.true(res.body.slots.every((s: { start: string }) => day(s.start) === date));
  });
}

test('DST: opening hours are wall times, so 09:00 London is 09:00Z before the change and 08:00Z after it', async (t) => {
  const saturday = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.london, date: '2030-03-30' });
  const sunday = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.london, date: '2030-03-31' });
  t.is(starts(saturday)[0], '2030-03-30T09:00:00.000Z');
  t.is(starts(saturday).at(-1), '2030-03-30T16:30:00.000Z');
  t.is(starts(sunday)[0], '2030-03-31T08:00:00.000Z');
  t.is(starts(sunday).at(-1), '2030-03-31T15:30:00.000Z');
  t.is(starts(sunday).length, 16);
});

test('a location that is not staffed offers its calendars\' free time', async (t) => {
  const res = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.london, date: '2030-03-05' });
  t.is(res.status, 200);
  // calendars in name order: Consult room, Front desk
  t.deepEqual(res.body.calendar_ids, [acme.ids.room, acme.ids.desk]);
  t.deepEqual(res.body.team_member_ids, []);
  // a_desk holds the desk 10:00–10:30Z, the room is free: offered; 09:00Z–17:00Z, every 30 minutes
  t.deepEqual(starts(res), every('2030-03-05T09:00:00Z', '2030-03-05T16:30:00Z', 30));
  // the room's series (Mondays 09:30 London; 08:30Z after 31 Mar) leaves the desk free: still offered
  const monday = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.london, date: '2030-04-01' });
  t.true(starts(monday).includes('2030-04-01T08:30:00.000Z'));
});

test('postal_code and country_code keep only team members whose territory covers the address', async (t) => {
  const [staff, nia] = [teamMember(acme, 'staff'), teamMember(acme, 'nia')];
  const q = { location_id: acme.ids.north!, date: '2030-03-07', offering_id: acme.ids.cleaning! };
  const names = async (extra: Record<string, string>) => {
    const res = await availability(app, acme.keys.owner_personal, { ...q, ...extra });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is(res.body.slots.length > 0, res.body.team_member_ids.length > 0, 'slots when someone is considered (a free Thursday)');
    return res.body.team_member_ids;
  };
  // metro (12207, 12208) is Sam's alone
  t.deepEqual(await names({ postal_code: '12207', country_code: 'US' }), [staff]);
  // spaces and case do not matter; the country defaults to the location's (US)
  t.deepEqual(await names({ postal_code: ' 122 08 ' }), [staff]);
  // suburbs (12303) has no team members listed: everyone of the location who does cleanings
  t.deepEqual(await names({ postal_code: '12303', country_code: 'us' }), [staff, nia]);
  // uncovered, or the right code in another country: nobody
  t.deepEqual(await names({ postal_code: '99999', country_code: 'US' }), []);
  t.deepEqual(await names({ postal_code: '12207', country_code: 'GB' }), []);
  // with a team member who does not cover it: nothing
  t.deepEqual(await names({ postal_code: '12207', team_member_id: nia }), []);
});

test('team_member_id narrows to one; one who is not a team member of the location is 404', async (t) => {
  const res = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-05', team_member_id: teamMember(acme, 'mgr') });
  t.true(res.body.slots.length > 0);
  t.deepEqual(res.body.team_member_ids, [teamMember(acme, 'mgr')]);
  for (const id of [teamMember(acme, 'quiet'), teamMember(other, 'staff'), '00000000-0000-4000-8000-000000000000']) {
    const r = await availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date: '2030-03-05', team_member_id: id });
    t.is(r.status, 404);
    t.is(r.body.error, 'not_found');
  }
});

test('isolation: another organization\'s location or offering, and another location\'s for a location-bound key, are 404', async (t) => {
  for (const [key, query] of [
    [acme.keys.owner_personal, { location_id: other.ids.north!, date: '2030-03-05' }],
    [acme.keys.org, { location_id: acme.ids.north!, date: '2030-03-05', offering_id: other.ids.cleaning! }],
    [acme.keys.owner_personal, { location_id: acme.ids.south!, date: '2030-03-05', offering_id: acme.ids.cleaning! }],
    [acme.keys.north_member, { location_id: acme.ids.south!, date: '2030-03-05' }],
    [acme.keys.sam_personal, { location_id: acme.ids.london!, date: '2030-03-05' }],
    [acme.keys.weak_mgr_personal, { location_id: acme.ids.north!, date: '2030-03-05' }],
  ] as const) {
    const res = await availability(app, key!, query);
    t.is(res.status, 404, JSON.stringify(query));
    t.is(res.body.error, 'not_found');
  }
  // the other organization's own key sees its own slots
  t.is((await availability(app, other.keys.owner_personal!, { location_id: other.ids.north!, date: '2030-03-05' })).status, 200);
});

test('roles: a MEMBER, a Member key and an own-records MEMBER read open slots of their locations, busy time of others included', async (t) => {
  const staff = teamMember(acme, 'staff');
  for (const key of [acme.keys.sam_personal, acme.keys.north_member, acme.keys.nia_personal, acme.keys.appt_reader]) {
    const res = await availability(app, key!, { location_id: acme.ids.north!, date: '2030-03-05', team_member_id: staff, duration_minutes: 30 });
    t.is(res.status, 200);
    // Nia cannot read Sam's a1, but its time is still busy for her
    t.false(starts(res).includes('2030-03-05T15:00:00.000Z'));
  }
  const noScope = await availability(app, acme.keys.org_reader!, { location_id: acme.ids.north!, date: '2030-03-05' });
  t.is(noScope.status, 403);
  t.is(noScope.body.error, 'insufficient_scope');
});

test('bad queries are 400: no date, a malformed date, an impossible date, a length out of range, an unknown parameter', async (t) => {
  for (const query of [
    { location_id: acme.ids.north! },
    { location_id: acme.ids.north!, date: '5 March 2030' },
    { location_id: acme.ids.north!, date: '2030-02-30' },
    { location_id: acme.ids.north!, date: '2030-03-05', duration_minutes: 0 },
    { location_id: acme.ids.north!, date: '2030-03-05', duration_minutes: 'long' },
    { location_id: acme.ids.north!, date: '2030-03-05', country_code: 'USA' },
    { location_id: 'north', date: '2030-03-05' },
    { location_id: acme.ids.north!, date: '2030-03-05', day: 'mon' },
  ]) {
    const res = await availability(app, acme.keys.owner_personal!, query as unknown as Record<string, string>);
    t.is(res.status, 400, JSON.stringify(query));
  }
});

test('MCP: appointments_availability answers the same slots as REST', async (t) => {
  const query = { location_id: acme.ids.north!, date: '2030-03-05', offering_id: acme.ids.cleaning! };
  const rest = await availability(app, acme.keys.owner_personal!, query);
  const mcp = await callTool(app, acme.keys.owner_personal!, 'appointments_availability', query);
  t.false(mcp.isError);
  t.deepEqual(mcp.body, rest.body);
});

test('slots that have already started are left out: none for a past day; asked today, the rest of the day', async (t) => {
  const staff = teamMember(acme, 'staff');
  const ask = (date: string) => availability(app, acme.keys.owner_personal, { location_id: acme.ids.north, date, team_member_id: staff, duration_minutes: 30 });
  // a Tuesday gone by, and one to come: the same hours
  const past = await ask('2020-03-03');
  t.is(past.status, 200, JSON.stringify(past.body));
  t.deepEqual(past.body.slots, []);
  t.true((await ask('2030-03-12')).body.slots.length > 20);
  // today's answer, through the filter the operation applies: the slots from now on, in order
  const { rows: [r] } = await app.db.owner.query(`select app_hidden.slots_from_now(jsonb_build_object('date', 'today', 'slots', jsonb_build_array(
      jsonb_build_object('start', now() - interval '1 hour', 'end', now() - interval '30 minutes'),
      jsonb_build_object('start', now() - interval '10 minutes', 'end', now() + interval '20 minutes'),
      jsonb_build_object('start', now() + interval '1 hour', 'end', now() + interval '90 minutes'),
      jsonb_build_object('start', now() + interval '2 hours', 'end', now() + interval '150 minutes')))) as a,
      now() + interval '1 hour' as h1, now() + interval '2 hours' as h2`);
  t.deepEqual(r.a.slots.map((s: { start: string }) => Date.parse(s.start)), [r.h1.getTime(), r.h2.getTime()]);
  t.is(r.a.date, 'today');
  const { rows: [none] } = await app.db.owner.query(`select app_hidden.slots_from_now('{"slots": []}') as a`);
  t.deepEqual(none.a, { slots: [] });
});
