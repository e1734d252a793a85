// The appointments' part of the tenant fixture (operator-cli.md, "Booking … in fixtures"):
// locations' slot interval and address, team members' working hours, offerings, territories,
// calendars, appointments (repeating and cancelled ones too) and blocks, and the link from a
// contact's interaction to the appointment it booked. The output carries `team_member_ids`
// (user ref → staff profile id, the API's team_member_id) beside `ids`.
//
// The database keeps its own rules: two live bookings of one team member or calendar never
// overlap (the exclusion constraints of app_public.appointments); such a fixture is refused
// with the entry named. A repeating series is one row with its rrule; its occurrences are
// expanded here (the `rrule` package) in the location's wall time, so a 10:00 series stays at
// 10:00 across a DST change, and written to app_public.appointment_occurrences.
import rrule from 'rrule';
import { z } from 'zod';
import { FixtureError, clockTime, instant, ref, refs, type FixtureContext, type FixtureSection } from '../admin/fixture.ts';
import { toE164 } from '../platform/phone.ts';

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const Hours = z.array(z.strictObject({ day: z.enum(DAYS), open: clockTime, close: z.union([clockTime, z.literal('24:00')]) })).max(100);

const Address = z.strictObject({
  line1: z.string().max(200).nullish(),
  line2: z.string().max(200).nullish(),
  city: z.string().max(200).nullish(),
  region: z.string().max(200).nullish(),
  postal_code: z.string().max(20).nullish(),
  country_code: z.string().regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code').nullish(),
});

const LocationFields = {
  slot_interval_minutes: z.int().min(5).max(240).default(15),
  address: Address.nullish(),
};

const UserFields = { working_hours: Hours.nullish() };

const Offering = {
  ref: ref.optional(),
  location_ref: ref,
  name: z.string().min(1).max(200),
  duration_minutes: z.int().min(5).max(1440),
  team_member_refs: refs.default([]),
};

const Territory = {
  ref: ref.optional(),
  location_ref: ref,
  name: z.string().min(1).max(200),
  country_code: z.string().regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code'),
  postal_codes: z.array(z.string().min(1).max(20)).max(10000).default([]),
  team_member_refs: refs.default([]),
};

const Calendar = { ref: ref.optional(), location_ref: ref, name: z.string().min(1).max(200) };

const Appointment = {
  ref: ref.optional(),
  location_ref: ref.optional(),
  team_member_ref: ref.nullish(),
  calendar_ref: ref.nullish(),
  offering_ref: ref.nullish(),
  contact_ref: ref,
  title: z.string().max(500).nullish(),
  description: z.string().max(10000).nullish(),
  start: instant,
  end: instant,
  attendee: z.strictObject({
    name: z.string().max(200).nullish(),
    phone: z.string().max(40).nullish(),
    email: z.email().max(320).nullish(),
    notes: z.string().max(10000).nullish(),
  }).optional(),
  service_address: Address.nullish(),
  cancelled: z.boolean().default(false),
  recurrence: z.strictObject({ rrule: z.string().min(1).max(500), ends_on: z.iso.date().nullish() }).nullish(),
};

const Block = {
  ref: ref.optional(),
  location_ref: ref,
  team_member_ref: ref.nullish(),
  start: instant,
  end: instant,
  title: z.string().max(500).nullish(),
};

type Hour = z.output<typeof Hours>[number];
type Part = {
  locations: ({ ref?: string; hours: Hour[] } & z.output<z.ZodObject<typeof LocationFields>>)[];
  users: ({ ref?: string } & z.output<z.ZodObject<typeof UserFields>>)[];
  offerings: z.output<z.ZodObject<typeof Offering>>[];
  territories: z.output<z.ZodObject<typeof Territory>>[];
  calendars: z.output<z.ZodObject<typeof Calendar>>[];
  appointments: z.output<z.ZodObject<typeof Appointment>>[];
  blocks: z.output<z.ZodObject<typeof Block>>[];
  contacts: { interactions: { appointment_ref?: string }[] }[];
};

/** Opening before closing, for a location's hours and a team member's. */
function checkHours(hours: readonly Hour[], where: string): void {
  for (const [i, h] of hours.entries()) {
    if (h.open >= h.close) throw new FixtureError(`${where}[${i}]: open (${h.open}) must be before close (${h.close})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Repeating series
// ---------------------------------------------------------------------------------------------
// Spec, "Recurrence rule (rrule) grammar": FREQ DAILY|WEEKLY|MONTHLY, INTERVAL 1..100, BYDAY,
// BYMONTHDAY, BYSETPOS, one BYHOUR, one BYMINUTE; no COUNT or UNTIL (a series ends with ends_on).
const RULE_PARTS: Record<string, RegExp> = {
  FREQ: /^(DAILY|WEEKLY|MONTHLY)$/,
  INTERVAL: /^([1-9]|[1-9][0-9]|100)$/,
  BYDAY: /^([+-]?[1-5]?(MO|TU|WE|TH|FR|SA|SU))(,[+-]?[1-5]?(MO|TU|WE|TH|FR|SA|SU))*$/,
  BYMONTHDAY: /^-?([1-9]|[12][0-9]|3[01])(,-?([1-9]|[12][0-9]|3[01]))*$/,
  BYSETPOS: /^-?([1-9][0-9]{0,2})(,-?([1-9][0-9]{0,2}))*$/,
  BYHOUR: /^([01]?[0-9]|2[0-3])$/,
  BYMINUTE: /^([0-5]?[0-9])$/,
};

/** The rule's problem in words, or null when it follows the grammar. */
export function rruleProblem(rule: string): string | null {
  const seen = new Set<string>();
  for (const part of rule.replace(/^RRULE:/i, '').split(';')) {
    const [key = '', value = '', ...rest] = part.split('=');
    const name = key.toUpperCase();
    const pattern = RULE_PARTS[name];
    if (!pattern) return `${key || '(empty)'} is not allowed (FREQ, INTERVAL, BYDAY, BYMONTHDAY, BYSETPOS, BYHOUR, BYMINUTE)`;
    if (seen.has(name)) return `${name} is given twice`;
    seen.add(name);
    if (rest.length || !pattern.test(value.toUpperCase())) return `${name}=${value} is not a valid value`;
  }
  return seen.has('FREQ') ? null : 'FREQ is required';
}

const { RRule } = rrule;
const pad = (n: number) => String(n).padStart(2, '0');
/** A floating (wall-clock) time carried in a Date's UTC fields, as `YYYY-MM-DDTHH:MM:SS`. */
const wall = (d: Date) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

/**
 * The wall-clock starts of a series from `localStart` (YYYY-MM-DDTHH:MM:SS in the location's zone)
 * to the end of `endsOn`, or two years after the start when it has none. The rule runs in
 * floating time: the zone is applied after, by the database, to each wall-clock start.
 */
export function seriesStarts(rule: string, localStart: string, endsOn: string | null): string[] {
  const dtstart = new Date(`${localStart}Z`);
  const until = endsOn
    ? new Date(`${endsOn}T23:59:59Z`)
    : new Date(Date.UTC(dtstart.getUTCFullYear() + 2, dtstart.getUTCMonth(), dtstart.getUTCDate(),
      dtstart.getUTCHours(), dtstart.getUTCMinutes(), dtstart.getUTCSeconds()));
  const options = RRule.parseString(rule.replace(/^RRULE:/i, '').toUpperCase());
  return new RRule({ ...options, dtstart, until }).all().map(wall);
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------
/** A constraint's refusal (overlap, a check) as the fixture's error naming the entry. */
async function asFixture<T>(where: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    const err = e as { code?: string; detail?: string; message?: string };
    if (err.code === '23P01') throw new FixtureError(`${where}: overlaps another booking or block of the same team member or calendar`);
    if (typeof err.code === 'string' && (err.code.startsWith('22') || err.code.startsWith('23'))) {
      throw new FixtureError(`${where}: ${err.detail || err.message}`);
    }
    throw e;
  }
}

class Place {
  readonly ctx: FixtureContext;
  constructor(ctx: FixtureContext) { this.ctx = ctx; }
  /** The team member (staff profile) of a user ref at a location, or a FixtureError. */
  async teamMember(userRef: string, locationId: string, where: string): Promise<string> {
    const person = this.ctx.resolve('person', userRef, where);
    const [row] = await this.ctx.q<{ id: string; here: boolean }>(
      `select sp.id, sp.id in (select app_hidden.location_team_members($1, $3)) as here
         from app_public.staff_profiles sp where sp.organization_id = $1 and sp.person_id = $2`,
      [this.ctx.organizationId, person, locationId]);
    if (!row) throw new FixtureError(`${where}: "${userRef}" has no staff profile, so is no team member`);
    if (!row.here) throw new FixtureError(`${where}: "${userRef}" is not an active team member of the location`);
    return row.id;
  }
  /** Writes who does an offering or covers a territory (`team_member_refs`). */
  async listTeamMembers(of: 'offering' | 'territory', id: string, refs: readonly string[], locationId: string, where: string): Promise<void> {
    for (const [j, member] of [...new Set(refs)].entries()) {
      const staffProfile = await this.teamMember(member, locationId, `${where}.team_member_refs[${j}]`);
      await this.ctx.q(`insert into app_public.${of}_team_members (organization_id, ${of}_id, staff_profile_id) values ($1, $2, $3)`,
        [this.ctx.organizationId, id, staffProfile]);
    }
  }
  /** The location of an entity (offering, calendar) by its ref, checked against the location given. */
  async sameLocation(table: 'offerings' | 'calendars', id: string, locationId: string, where: string): Promise<void> {
    const [row] = await this.ctx.q<{ location_id: string }>(
      `select location_id from app_public.${table} where organization_id = $1 and id = $2`, [this.ctx.organizationId, id]);
    if (row?.location_id !== locationId) throw new FixtureError(`${where}: belongs to another location`);
  }
}

async function applyLocationsAndUsers(ctx: FixtureContext, f: Part): Promise<void> {
  ctx.output('team_member_ids'); // always in the output, if empty
  for (const [i, l] of f.locations.entries()) {
    checkHours(l.hours, `locations[${i}].hours`);
    const address = l.address ? { ...l.address, country_code: l.address.country_code?.toUpperCase() ?? null } : null;
    await ctx.q(`update app_public.locations set slot_interval_minutes = $3, address = $4::jsonb where organization_id = $1 and id = $2`,
      [ctx.organizationId, ctx.idAt(`locations[${i}]`), l.slot_interval_minutes, address ? JSON.stringify(address) : null]);
  }
  for (const [i, u] of f.users.entries()) {
    const where = `users[${i}]`;
    const [profile] = await ctx.q<{ id: string }>(
      `select id from app_public.staff_profiles where organization_id = $1 and person_id = $2`, [ctx.organizationId, ctx.idAt(where)]);
    if (u.working_hours) {
      if (!profile) throw new FixtureError(`${where}.working_hours: only a user with a staff profile has working hours`);
      checkHours(u.working_hours, `${where}.working_hours`);
      await ctx.q(`update app_public.staff_profiles set working_hours = $3::jsonb where organization_id = $1 and id = $2`,
        [ctx.organizationId, profile.id, JSON.stringify(u.working_hours)]);
    }
    if (profile && u.ref !== undefined) ctx.output('team_member_ids')[u.ref] = profile.id;
  }
}

async function applyResources(ctx: FixtureContext, f: Part, place: Place): Promise<void> {
  const org = ctx.organizationId;
  for (const [i, o] of f.offerings.entries()) {
    const where = `offerings[${i}]`;
    const location = ctx.resolve('location', o.location_ref, `${where}.location_ref`);
    const [row] = await ctx.q<{ id: string }>(
      `insert into app_public.offerings (organization_id, location_id, name, duration_minutes) values ($1, $2, $3, $4) returning id`,
      [org, location, o.name, o.duration_minutes]);
    await place.listTeamMembers('offering', row!.id, o.team_member_refs, location, where);
    ctx.remember('offering', o.ref, row!.id, where);
  }
  for (const [i, t] of f.territories.entries()) {
    const where = `territories[${i}]`;
    const location = ctx.resolve('location', t.location_ref, `${where}.location_ref`);
    const [row] = await ctx.q<{ id: string }>(
      `insert into app_public.territories (organization_id, location_id, name, country_code, postal_codes)
       select $1, $2, $3, $4, coalesce(array_agg(distinct app_hidden.postal_code_key(c)) filter (where app_hidden.postal_code_key(c) <> ''), '{}')
         from unnest($5::text[]) c
       returning id`,
      [org, location, t.name, t.country_code.toUpperCase(), t.postal_codes]);
    await place.listTeamMembers('territory', row!.id, t.team_member_refs, location, where);
    ctx.remember('territory', t.ref, row!.id, where);
  }
  for (const [i, c] of f.calendars.entries()) {
    const where = `calendars[${i}]`;
    const [row] = await ctx.q<{ id: string }>(
      `insert into app_public.calendars (organization_id, location_id, name) values ($1, $2, $3) returning id`,
      [org, ctx.resolve('location', c.location_ref, `${where}.location_ref`), c.name]);
    ctx.remember('calendar', c.ref, row!.id, where);
  }
}

/** Writes the occurrences of a series: the rule's wall-clock starts placed in the location's zone. */
async function writeOccurrences(ctx: FixtureContext, id: string, a: Part['appointments'][number], where: string): Promise<void> {
  const rule = a.recurrence!;
  const problem = rruleProblem(rule.rrule);
  if (problem) throw new FixtureError(`${where}.recurrence.rrule: ${problem}`);
  const [row] = await ctx.q<{ local: string; zone: string }>(
    `select to_char(a.starts_at at time zone l.timezone, 'YYYY-MM-DD"T"HH24:MI:SS') as local, l.timezone as zone
       from app_public.appointments a join app_public.locations l on l.organization_id = a.organization_id and l.id = a.location_id
      where a.organization_id = $1 and a.id = $2`, [ctx.organizationId, id]);
  if (rule.ends_on && rule.ends_on < row!.local.slice(0, 10)) throw new FixtureError(`${where}.recurrence.ends_on: before the start`);
  const starts = seriesStarts(rule.rrule, row!.local, rule.ends_on ?? null);
  if (starts[0] !== row!.local) {
    throw new FixtureError(`${where}: start (${row!.local} in ${row!.zone}) is not an occurrence of its rrule`);
  }
  await ctx.q(
    `insert into app_public.appointment_occurrences (organization_id, appointment_id, occurrence_start, during)
     select a.organization_id, a.id, o.at, tstzrange(o.at, o.at + (a.ends_at - a.starts_at), '[)')
       from app_public.appointments a
       join app_public.locations l on l.organization_id = a.organization_id and l.id = a.location_id
      cross join lateral (select distinct w::timestamp at time zone l.timezone as at from unnest($3::text[]) w) o
      where a.organization_id = $1 and a.id = $2`,
    [ctx.organizationId, id, starts]);
}

async function applyAppointments(ctx: FixtureContext, f: Part, place: Place): Promise<void> {
  const org = ctx.organizationId;
  for (const [i, a] of f.appointments.entries()) {
    const where = `appointments[${i}]`;
    if (a.team_member_ref && a.calendar_ref) throw new FixtureError(`${where}: a booking has a team member or a calendar, not both`);
    const calendar = a.calendar_ref ? ctx.resolve('calendar', a.calendar_ref, `${where}.calendar_ref`) : null;
    let location: string;
    if (a.location_ref) location = ctx.resolve('location', a.location_ref, `${where}.location_ref`);
    else if (calendar) [{ location_id: location }] = await ctx.q<{ location_id: string }>(
      'select location_id from app_public.calendars where organization_id = $1 and id = $2', [org, calendar]) as [{ location_id: string }];
    else throw new FixtureError(`${where}: location_ref (or calendar_ref) is required`);
    if (calendar) await place.sameLocation('calendars', calendar, location, `${where}.calendar_ref`);
    const member = a.team_member_ref ? await place.teamMember(a.team_member_ref, location, `${where}.team_member_ref`) : null;
    const offering = a.offering_ref ? ctx.resolve('offering', a.offering_ref, `${where}.offering_ref`) : null;
    if (offering) await place.sameLocation('offerings', offering, location, `${where}.offering_ref`);
    const contact = ctx.resolve('contact', a.contact_ref, `${where}.contact_ref`);
    if (Date.parse(a.end) <= Date.parse(a.start)) throw new FixtureError(`${where}: end must be after start`);
    const phone = a.attendee?.phone ? toE164(a.attendee.phone) : null;
    if (a.attendee?.phone && !phone) throw new FixtureError(`${where}.attendee.phone: "${a.attendee.phone}" is not a valid phone number with country code`);
    const [row] = await asFixture(where, () => ctx.q<{ id: string }>(
      `insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id, calendar_id, offering_id, contact_id,
         title, description, attendee_name, attendee_phone, attendee_email, attendee_notes, service_address, starts_at, ends_at,
         status, cancelled_at, rrule, recurrence_ends_on, source)
       select $1, 'appointment', $2, $3, $4, $5, c.id, $6, $7, coalesce($8, c.name), coalesce($9, c.phone), coalesce($10, c.email),
              nullif($11, ''), $12::jsonb, $13, $14, case when $15 then 'cancelled' else 'booked' end, case when $15 then now() end,
              $16, $17::date, 'fixture'
         from app_public.contacts c where c.organization_id = $1 and c.id = $18
       returning id`,
      [org, location, member, calendar, offering, a.title ?? null, a.description ?? null,
        a.attendee?.name ?? null, phone, a.attendee?.email ?? null, a.attendee?.notes ?? null,
        a.service_address ? JSON.stringify({ ...a.service_address, country_code: a.service_address.country_code?.toUpperCase() ?? null }) : null,
        a.start, a.end, a.cancelled, a.recurrence?.rrule ?? null, a.recurrence?.ends_on ?? null, contact]));
    if (a.recurrence) await writeOccurrences(ctx, row!.id, a, where);
    ctx.remember('appointment', a.ref, row!.id, where);
  }
  for (const [i, b] of f.blocks.entries()) {
    const where = `blocks[${i}]`;
    const location = ctx.resolve('location', b.location_ref, `${where}.location_ref`);
    const member = b.team_member_ref ? await place.teamMember(b.team_member_ref, location, `${where}.team_member_ref`) : null;
    if (Date.parse(b.end) <= Date.parse(b.start)) throw new FixtureError(`${where}: end must be after start`);
    const [row] = await asFixture(where, () => ctx.q<{ id: string }>(
      `insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id, title, starts_at, ends_at, source)
       values ($1, 'block', $2, $3, $4, $5, $6, 'fixture') returning id`,
      [org, location, member, b.title ?? null, b.start, b.end]));
    ctx.remember('block', b.ref, row!.id, where);
  }
  for (const [i, c] of f.contacts.entries()) {
    for (const [j, it] of c.interactions.entries()) {
      if (!it.appointment_ref) continue;
      const where = `contacts[${i}].interactions[${j}]`;
      const appointment = ctx.resolve('appointment', it.appointment_ref, `${where}.appointment_ref`);
      const [linked] = await ctx.q<{ ok: boolean }>(
        `update app_public.interactions i set appointment_id = a.id
           from app_public.appointments a
          where i.organization_id = $1 and i.id = $2 and a.organization_id = $1 and a.id = $3 and a.contact_id = i.contact_id
         returning true as ok`, [org, ctx.idAt(where), appointment]);
      if (!linked) throw new FixtureError(`${where}.appointment_ref: the appointment is another contact's`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The demo organization's part (src/seed/demo.json: Downtown and Uptown, New York time)
// ---------------------------------------------------------------------------------------------
const NEW_YORK = 'America/New_York';
const WEEKDAY_CODES = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'] as const;

/** The instant of a wall-clock time in a zone, as ISO 8601 with that zone's offset then. */
function zoned(date: string, time: string, zone: string): string {
  const guess = new Date(`${date}T${time}:00Z`);
  const offsetOf = (d: Date) => new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
    .formatToParts(d).find((p) => p.type === 'timeZoneName')!.value.replace('GMT', '') || '+00:00';
  // the offset at the guess, then at the instant it gives (right unless the time falls in a DST gap)
  const first = offsetOf(guess);
  return `${date}T${time}:00${offsetOf(new Date(`${date}T${time}:00${first}`))}`;
}

/** The `n`-th day after today (in New York) whose weekday is one of `days` (0 = Sunday), as YYYY-MM-DD. */
function upcoming(days: readonly number[], n: number, from = new Date()): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: NEW_YORK }).format(from);
  const d = new Date(`${today}T12:00:00Z`);
  for (let found = 0; ; ) {
    d.setUTCDate(d.getUTCDate() + 1);
    if (days.includes(d.getUTCDay()) && ++found === n) return d.toISOString().slice(0, 10);
  }
}

/** Offerings, a territory, a few bookings in the coming days, a weekly series and a block, dated from now. */
export function demoBooking(now = new Date()): Record<string, unknown> {
  const at = (date: string, time: string) => zoned(date, time, NEW_YORK);
  const booking = (ref: string, date: string, from: string, to: string, more: Record<string, unknown>) =>
    ({ ref, start: at(date, from), end: at(date, to), ...more });
  const weekday = (n: number) => upcoming([1, 2, 3, 4, 5], n, now);
  const upDay = (n: number) => upcoming([2, 4], n, now);
  const seriesDay = upcoming([2], 1, now);
  const endsOn = new Date(Date.parse(`${seriesDay}T12:00:00Z`) + 7 * 7 * 86_400_000).toISOString().slice(0, 10);
  return {
    offerings: [
      { ref: 'cleaning', location_ref: 'downtown', name: 'Cleaning', duration_minutes: 30, team_member_refs: ['hygienist'] },
      { ref: 'checkup', location_ref: 'downtown', name: 'Checkup', duration_minutes: 45 },
      { ref: 'consultation', location_ref: 'uptown', name: 'Consultation', duration_minutes: 60, team_member_refs: ['dentist'] },
      { ref: 'whitening', location_ref: 'uptown', name: 'Whitening', duration_minutes: 90, team_member_refs: ['dentist'] },
    ],
    territories: [
      { ref: 'lower_manhattan', location_ref: 'downtown', name: 'Lower Manhattan', country_code: 'US',
        postal_codes: ['10002', '10003', '10004', '10005', '10006', '10007', '10013', '10038'], team_member_refs: ['hygienist'] },
    ],
    appointments: [
      booking('demo_cleaning_ann', weekday(1), '10:00', '10:30', { location_ref: 'downtown', team_member_ref: 'hygienist',
        offering_ref: 'cleaning', contact_ref: 'ann', title: 'Cleaning', attendee: { notes: 'Prefers mornings' } }),
      booking('demo_checkup_ben', weekday(1), '11:00', '11:45', { location_ref: 'downtown', team_member_ref: 'manager',
        offering_ref: 'checkup', contact_ref: 'ben', title: 'Checkup' }),
      booking('demo_checkup_eve', weekday(2), '14:00', '14:45', { location_ref: 'downtown', team_member_ref: 'hygienist',
        offering_ref: 'checkup', contact_ref: 'eve', title: 'Checkup' }),
      booking('demo_cancelled_hal', weekday(2), '15:00', '15:30', { location_ref: 'downtown', team_member_ref: 'hygienist',
        offering_ref: 'cleaning', contact_ref: 'hal', title: 'Cleaning', cancelled: true }),
      booking('demo_consult_cara', upDay(1), '10:00', '11:00', { location_ref: 'uptown', team_member_ref: 'dentist',
        offering_ref: 'consultation', contact_ref: 'cara', title: 'Consultation' }),
      booking('demo_whitening_finn', upDay(2), '13:00', '14:30', { location_ref: 'uptown', team_member_ref: 'dentist',
        offering_ref: 'whitening', contact_ref: 'finn', title: 'Whitening' }),
      booking('demo_weekly_dev', seriesDay, '08:00', '08:30', { location_ref: 'downtown', team_member_ref: 'hygienist',
        offering_ref: 'cleaning', contact_ref: 'dev', title: 'Weekly aligner check',
        recurrence: { rrule: `FREQ=WEEKLY;BYDAY=${WEEKDAY_CODES[new Date(`${seriesDay}T12:00:00Z`).getUTCDay()]}`, ends_on: endsOn } }),
    ],
    blocks: [
      booking('demo_training', weekday(3), '13:00', '15:00', { location_ref: 'downtown', team_member_ref: 'hygienist', title: 'Training' }),
      booking('demo_staff_meeting', weekday(4), '08:00', '09:00', { location_ref: 'downtown', team_member_ref: null, title: 'Staff meeting' }),
    ],
  };
}

export const appointmentsFixture: FixtureSection = {
  keys: {
    offerings: { list: Offering },
    territories: { list: Territory },
    calendars: { list: Calendar },
    appointments: { list: Appointment },
    blocks: { list: Block },
  },
  extend: { locations: LocationFields, users: UserFields },
  // dated from when the process starts (`npm start` seeds an empty database, `svc seed demo`)
  demo: demoBooking(),
  async apply(ctx, fixture) {
    const f = fixture as Part;
    const place = new Place(ctx);
    await applyLocationsAndUsers(ctx, f);
    await applyResources(ctx, f, place);
    await applyAppointments(ctx, f, place);
  },
};
