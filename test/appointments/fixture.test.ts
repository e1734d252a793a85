// `svc admin apply` with the booking keys of operator-cli.md: locations' slot interval and
// address, working hours, offerings, territories, calendars, appointments (repeating, cancelled),
// blocks, interactions linked to appointments, and `team_member_ids` in the output.
import test from 'ava';
import { svc } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { withOwnIdentifiers } from '../helpers/fixtures.ts';
import { demoBooking } from '../../src/appointments/fixture.ts';
import { adminApply } from '../../src/admin/commands.ts';
import { FixtureError } from '../../src/admin/fixture.ts';
import { AREAS } from '../../src/areas.ts';
import { demoFixture } from '../../src/seed/demo.ts';
import { bookingFixture } from './reads-helpers.ts';

let db: TestDatabase;
test.before(async () => { db = await createTestDatabase(); });
test.after.always(async () => { await db?.drop(); });

// each fixture applied here is a new organization: its domain and numbers are its own
const apply = (fixture: unknown) => svc(['admin', 'apply', '-'], { databaseUrl: db.ownerUrl, stdin: JSON.stringify(withOwnIdentifiers(fixture)) });

const tenant = (more: Record<string, unknown> = {}) => ({
  organization: { name: 'Booking Co' },
  locations: [
    { ref: 'north', name: 'North', timezone: 'America/New_York', hours: [{ day: 'mon', open: '09:00', close: '17:00' }] },
    { ref: 'far', name: 'Far', timezone: 'Europe/London', staffed: false, hours: [{ day: 'mon', open: '00:00', close: '24:00' }] },
  ],
  users: [
    { ref: 'owner', name: 'Olive', email: 'o@x.example', role: 'owner' },
    { ref: 'sam', name: 'Sam', email: 's@x.example', role: 'member', location_refs: ['north'] },
    { ref: 'far_member', name: 'Fay', email: 'f@x.example', role: 'member', location_refs: ['far'] },
  ],
  contacts: [{ ref: 'ann', name: 'Ann Lee', email: 'ann@example.com', phone: '+15551230001', location_refs: ['north'] },
    { ref: 'bo', name: 'Bo', email: 'bo@example.com' }],
  ...more,
});

test('the booking fixture applies: team_member_ids, resources, appointments and blocks as stored', async (t) => {
  const res = await apply(bookingFixture());
  t.is(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  const org = out.organization_id;
  // every user with a staff profile, by ref (owner and admin have none by default)
  t.deepEqual(Object.keys(out.team_member_ids).sort(), ['ivy', 'mgr', 'nia', 'quiet', 'staff', 'weak_mgr']);
  const { rows: profiles } = await db.owner.query(
    `select sp.id, p.email, sp.working_hours from app_public.staff_profiles sp join app_public.people p on p.id = sp.person_id
      where sp.organization_id = $1`, [org]);
  const nia = profiles.find((p) => p.email === 'nia@acme.example');
  t.is(nia.id, out.team_member_ids.nia);
  t.is(nia.working_hours.length, 5);
  t.is(profiles.find((p) => p.email === 'sam@acme.example').working_hours, null);

  // team members of North in file order, the inactive one left out
  const { rows: members } = await db.owner.query('select app_hidden.location_team_members($1, $2) as id', [org, out.ids.north]);
  t.deepEqual(members.map((m) => m.id), [out.team_member_ids.mgr, out.team_member_ids.staff, out.team_member_ids.nia]);

  const { rows: [north] } = await db.owner.query('select slot_interval_minutes, address from app_public.locations where id = $1', [out.ids.north]);
  t.deepEqual(north, { slot_interval_minutes: 15,
    address: { line1: '1 Main St', city: 'Albany', region: 'NY', postal_code: '12207', country_code: 'US' } });
  const { rows: [south] } = await db.owner.query('select slot_interval_minutes, address from app_public.locations where id = $1', [out.ids.south]);
  t.deepEqual(south, { slot_interval_minutes: 30, address: null });

  const { rows: offerings } = await db.owner.query(
    `select o.id, o.duration_minutes, array(select staff_profile_id::text from app_public.offering_team_members m
        where m.offering_id = o.id order by 1) as members
       from app_public.offerings o where o.organization_id = $1 order by o.name`, [org]);
  t.deepEqual(offerings, [
    { id: out.ids.checkup, duration_minutes: 60, members: [] },
    { id: out.ids.cleaning, duration_minutes: 30, members: [out.team_member_ids.staff, out.team_member_ids.nia].sort() },
  ]);
  const { rows: [central] } = await db.owner.query('select country_code, postal_codes from app_public.territories where id = $1', [out.ids.central]);
  t.deepEqual(central, { country_code: 'GB', postal_codes: ['SW1A1AA', 'WC2N5HR'] });
  const { rows: [desk] } = await db.owner.query('select location_id, name from app_public.calendars where id = $1', [out.ids.desk]);
  t.deepEqual(desk, { location_id: out.ids.london, name: 'Front desk' });

  const { rows: [a1] } = await db.owner.query('select * from app_public.appointments where id = $1', [out.ids.a1]);
  t.like(a1, { kind: 'appointment', location_id: out.ids.north, staff_profile_id: out.team_member_ids.staff, offering_id: out.ids.cleaning,
    contact_id: out.ids.ann, attendee_name: 'Ann Lee', attendee_phone: '+15551230001', attendee_notes: 'Sensitive teeth',
    status: 'booked', source: 'fixture', rrule: null });
  // attendee defaults to the contact's name, phone and email
  const { rows: [a2] } = await db.owner.query('select attendee_name, attendee_phone, attendee_email from app_public.appointments where id = $1', [out.ids.a2]);
  t.deepEqual(a2, { attendee_name: 'Dee North', attendee_phone: '+15551230004', attendee_email: 'dee@example.com' });
  const { rows: [cancelled] } = await db.owner.query('select status, cancelled_at is not null as at from app_public.appointments where id = $1', [out.ids.a_cancelled]);
  t.deepEqual(cancelled, { status: 'cancelled', at: true });
  // a calendar booking takes its calendar's location
  const { rows: [deskBooking] } = await db.owner.query('select location_id, calendar_id, staff_profile_id from app_public.appointments where id = $1', [out.ids.a_desk]);
  t.deepEqual(deskBooking, { location_id: out.ids.london, calendar_id: out.ids.desk, staff_profile_id: null });

  const { rows: blocks } = await db.owner.query(
    `select id, kind, staff_profile_id, contact_id, title from app_public.appointments where organization_id = $1 and kind = 'block' order by starts_at`, [org]);
  t.deepEqual(blocks, [
    { id: out.ids.sam_off, kind: 'block', staff_profile_id: out.team_member_ids.staff, contact_id: null, title: 'Training' },
    { id: out.ids.holiday, kind: 'block', staff_profile_id: null, contact_id: null, title: 'Closed' },
  ]);
});

test('users as operator-cli.md\'s booking example writes them, without name or email (or role): members named by their ref', async (t) => {
  const fixture = {
    organization: { name: 'Sparse Co' },
    locations: [{ ref: 'north', name: 'North', timezone: 'America/New_York', staffed: true, hours: [{ day: 'mon', open: '09:00', close: '17:00' }] }],
    users: [
      { ref: 'sam', role: 'member', location_refs: ['north'], staff_profile: true, working_hours: [{ day: 'mon', open: '10:00', close: '16:00' }] },
      { ref: 'Pat Lee', location_refs: ['north'] },
    ],
  };
  const r = await apply(fixture);
  t.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.truthy(out.team_member_ids.sam);
  const { rows } = await db.owner.query(`select p.name, p.email::text as email, p.role, sp.display_name from app_public.people p
      left join app_public.staff_profiles sp on sp.organization_id = p.organization_id and sp.person_id = p.id
     where p.organization_id = $1 order by p.email`, [out.organization_id]);
  t.deepEqual(rows, [
    { name: 'Pat Lee', email: 'pat-lee@people.invalid', role: 'member', display_name: 'Pat Lee' },
    { name: 'sam', email: 'sam@people.invalid', role: 'member', display_name: 'sam' },
  ]);
});

test('a repeating series keeps its wall-clock time across DST in America/New_York and Europe/London', async (t) => {
  const res = await apply(bookingFixture());
  t.is(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  const starts = async (id: string) => (await db.owner.query(
    `select to_char(occurrence_start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"') as s, upper(during) - lower(during) as len
       from app_public.appointment_occurrences where appointment_id = $1 order by occurrence_start`, [id])).rows;
  // Mondays 10:00 New York: EST (UTC-5) until 10 March 2030, EDT (UTC-4) after; ends_on 25 March included
  t.deepEqual((await starts(out.ids.a_series)).map((r) => r.s),
    ['2030-03-04T15:00Z', '2030-03-11T14:00Z', '2030-03-18T14:00Z', '2030-03-25T14:00Z']);
  // Mondays 09:30 London: GMT until 31 March 2030, BST (UTC+1) after
  const london = await starts(out.ids.a_room_series);
  t.deepEqual(london.map((r) => r.s), ['2030-03-25T09:30Z', '2030-04-01T08:30Z', '2030-04-08T08:30Z']);
  t.true(london.every((r) => r.len.minutes === 30));
});

test('a series without ends_on is expanded for two years', async (t) => {
  const res = await apply(tenant({
    appointments: [{ ref: 's', location_ref: 'north', team_member_ref: 'sam', contact_ref: 'ann', start: '2030-01-07T14:00:00Z',
      end: '2030-01-07T15:00:00Z', recurrence: { rrule: 'FREQ=MONTHLY;BYMONTHDAY=7' } }],
  }));
  t.is(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  const { rows } = await db.owner.query(
    `select min(occurrence_start) as first, max(occurrence_start) as last, count(*)::int as n
       from app_public.appointment_occurrences where appointment_id = $1`, [out.ids.s]);
  t.is(rows[0].n, 25);
  t.is(rows[0].first.toISOString(), '2030-01-07T14:00:00.000Z');
  t.is(rows[0].last.toISOString(), '2032-01-07T14:00:00.000Z');
});

test('an interaction links to the appointment it booked', async (t) => {
  const fixture = tenant({
    appointments: [{ ref: 'a', location_ref: 'north', team_member_ref: 'sam', contact_ref: 'ann', start: '2030-01-07T14:00:00Z', end: '2030-01-07T15:00:00Z' }],
  });
  (fixture.contacts[0] as Record<string, unknown>).interactions = [{ ref: 'i1', channel: 'voice', appointment_ref: 'a' }];
  const res = await apply(fixture);
  t.is(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  const { rows } = await db.owner.query('select appointment_id from app_public.interactions where id = $1', [out.ids.i1]);
  t.deepEqual(rows, [{ appointment_id: out.ids.a }]);
});

test('closing at 24:00 is allowed in location and working hours', async (t) => {
  const res = await apply(tenant({
    users: [{ ref: 'owner', name: 'Olive', email: 'o@x.example', role: 'owner' },
      { ref: 'sam', name: 'Sam', email: 's@x.example', role: 'member', location_refs: ['north'],
        working_hours: [{ day: 'tue', open: '18:00', close: '24:00' }] }],
  }));
  t.is(res.code, 0, res.stderr);
});

test.serial('bad booking entries are refused with one line naming the place, and no organization is left', async (t) => {
  const at = { start: '2030-01-07T14:00:00Z', end: '2030-01-07T15:00:00Z' };
  const booking = (more: Record<string, unknown>) => ({ appointments: [{ location_ref: 'north', contact_ref: 'ann', ...at, ...more }] });
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ offerings: [{ location_ref: 'north', name: 'X', duration_minutes: 3 }] }, /offerings\.0\.duration_minutes/],
    [{ offerings: [{ location_ref: 'nowhere', name: 'X', duration_minutes: 30 }] }, /offerings\[0\]\.location_ref: unknown ref "nowhere"/],
    [{ offerings: [{ location_ref: 'north', name: 'X', duration_minutes: 30, team_member_refs: ['far_member'] }] },
      /offerings\[0\]\.team_member_refs\[0\]: "far_member" is not an active team member of the location/],
    [{ offerings: [{ location_ref: 'north', name: 'X', duration_minutes: 30, team_member_refs: ['owner'] }] }, /"owner" has no staff profile/],
    [{ territories: [{ location_ref: 'north', name: 'T', country_code: 'USA' }] }, /territories\.0\.country_code/],
    [{ calendars: [{ location_ref: 'north' }] }, /calendars\.0\.name/],
    [{ locations: [{ ref: 'north', name: 'N', slot_interval_minutes: 1 }] }, /locations\.0\.slot_interval_minutes/],
    [{ locations: [{ ref: 'north', name: 'N' }, { ref: 'far', name: 'F', hours: [{ day: 'mon', open: '17:00', close: '09:00' }] }] },
      /locations\[1\]\.hours\[0\]: open \(17:00\) must be before close/],
    [{ users: [{ ref: 'o', name: 'O', email: 'o@x.example', role: 'owner', working_hours: [{ day: 'mon', open: '09:00', close: '10:00' }] }] },
      /users\[0\]\.working_hours: only a user with a staff profile/],
    [booking({ end: '2030-01-07T14:00:00Z' }), /appointments\[0\]: end must be after start/],
    [booking({ start: '2030-01-07 14:00' }), /appointments\.0\.start/],
    [booking({ team_member_ref: 'far_member' }), /appointments\[0\]\.team_member_ref: "far_member" is not an active team member/],
    [booking({ contact_ref: undefined }), /appointments\.0\.contact_ref/],
    [{ ...booking({}), appointments: [{ contact_ref: 'ann', ...at }] }, /location_ref \(or calendar_ref\) is required/],
    [booking({ attendee: { phone: '12' } }), /appointments\[0\]\.attendee\.phone/],
    [booking({ recurrence: { rrule: 'FREQ=WEEKLY;COUNT=3' } }), /recurrence\.rrule: COUNT is not allowed/],
    [booking({ recurrence: { rrule: 'FREQ=YEARLY' } }), /recurrence\.rrule: FREQ=YEARLY is not a valid value/],
    [booking({ recurrence: { rrule: 'FREQ=WEEKLY;BYDAY=TU' } }), /is not an occurrence of its rrule/],
    [booking({ recurrence: { rrule: 'FREQ=WEEKLY;BYDAY=MO', ends_on: '2029-12-01' } }), /ends_on: before the start/],
    [{ appointments: [
      { location_ref: 'north', team_member_ref: 'sam', contact_ref: 'ann', ...at },
      { location_ref: 'north', team_member_ref: 'sam', contact_ref: 'bo', start: '2030-01-07T14:30:00Z', end: '2030-01-07T15:30:00Z' },
    ] }, /appointments\[1\]: overlaps another booking/],
    [{ appointments: [{ location_ref: 'north', team_member_ref: 'sam', contact_ref: 'ann', ...at }],
      blocks: [{ location_ref: 'north', team_member_ref: 'sam', start: '2030-01-07T14:45:00Z', end: '2030-01-07T16:00:00Z' }] },
      /blocks\[0\]: overlaps another booking/],
    [{ calendars: [{ ref: 'c', location_ref: 'far', name: 'C' }], ...booking({ calendar_ref: 'c' }) }, /appointments\[0\]\.calendar_ref: belongs to another location/],
    [{ calendars: [{ ref: 'c', location_ref: 'north', name: 'C' }], ...booking({ calendar_ref: 'c', team_member_ref: 'sam' }) },
      /a team member or a calendar, not both/],
    [{ ...booking({ ref: 'a' }), contacts: [{ ref: 'ann', name: 'Ann', interactions: [{ channel: 'voice', appointment_ref: 'a' }] },
      { ref: 'bo', name: 'Bo', interactions: [{ channel: 'voice', appointment_ref: 'a' }] }] },
      /contacts\[1\]\.interactions\[0\]\.appointment_ref: the appointment is another contact's/],
  ];
  const { rows: [before] } = await db.owner.query('select count(*)::int as n from app_public.organizations');
  // in process (a CLI start each would take a minute), then two through the CLI: one line on stderr
  for (const [more, message] of cases) {
    const err = await adminApply(db.owner, tenant(more), AREAS).then(() => undefined, (e: unknown) => e);
    t.true(err instanceof FixtureError, `${JSON.stringify(more)}: ${String(err)}`);
    t.regex((err as Error).message, message, JSON.stringify(more));
  }
  for (const [more, message] of [cases[1]!, cases[19]!]) {
    const res = await apply(tenant(more));
    t.not(res.code, 0, JSON.stringify(more));
    t.regex(res.stderr.trim(), message, JSON.stringify(more));
    t.is(res.stderr.trim().split('\n').length, 1);
  }
  const { rows: [after] } = await db.owner.query('select count(*)::int as n from app_public.organizations');
  t.is(after.n, before.n);
});

test('the demo organization books at wall-clock times in New York, whichever day it is seeded, DST weeks included', async (t) => {
  for (const now of [undefined, '2030-03-08T20:00:00Z', '2030-10-31T23:30:00Z', '2030-12-31T12:00:00Z']) {
    const demo = { ...demoFixture(), ...(now ? demoBooking(new Date(now)) : {}) };
    const res = await apply(demo);
    t.is(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    const { rows } = await db.owner.query(
      `select a.title, to_char(a.starts_at at time zone 'America/New_York', 'HH24:MI') as local, a.starts_at > now() as ahead
         from app_public.appointments a where a.organization_id = $1 and a.rrule is null order by a.starts_at`, [out.organization_id]);
    t.true(rows.length >= 8, now);
    t.true(rows.every((r) => r.ahead), now);
    t.is(rows.find((r) => r.title === 'Cleaning')?.local, '10:00', now);
    const { rows: [series] } = await db.owner.query(
      `select count(*)::int as n, count(distinct to_char(o.occurrence_start at time zone 'America/New_York', 'HH24:MI'))::int as times
         from app_public.appointment_occurrences o where o.appointment_id = $1`, [out.ids.demo_weekly_dev]);
    t.deepEqual(series, { n: 8, times: 1 }, now);
  }
});
