// Send windows (migrations: sequences send windows): the first instant a due step may go out, on
// the local calendar of the schedule's time zone, DST included; and the one job per enrollment
// that runs its due step.
import test from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after.always(async () => {
  await db?.drop();
});

const weekdays = (start: string, end: string) =>
  ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, start, end }));

async function next(timezone: string, windows: unknown, at: string): Promise<string | null> {
  const { rows } = await db.owner.query(
    `select to_char(app_hidden.next_send_time($1, $2::jsonb, $3::timestamptz) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as t`,
    [timezone, JSON.stringify(windows), at]);
  return rows[0].t;
}

test('a 09:00-17:00 New York window is 14:00-22:00 UTC in January and 13:00-21:00 UTC in July', async (t) => {
  const ny = weekdays('09:00', '17:00');
  t.is(await next('America/New_York', ny, '2027-01-04T12:00:00Z'), '2027-01-04T14:00:00Z'); // Monday, 07:00 EST
  t.is(await next('America/New_York', ny, '2026-07-06T12:00:00Z'), '2026-07-06T13:00:00Z'); // Monday, 08:00 EDT
  t.is(await next('America/New_York', ny, '2027-01-04T21:59:00Z'), '2027-01-04T21:59:00Z', 'inside: at once');
  t.is(await next('America/New_York', ny, '2027-01-04T22:00:00Z'), '2027-01-05T14:00:00Z', 'at closing: the next day');
  t.is(await next('America/New_York', ny, '2027-01-08T23:00:00Z'), '2027-01-11T14:00:00Z', 'Friday evening: Monday');
});

test('on the days clocks change, 08:00 local stays 08:00 local', async (t) => {
  const sundays = [{ day: 'sun', start: '08:00', end: '10:00' }];
  // spring forward (2027-03-14, 02:00 EST → 03:00 EDT): 08:00 EDT is 12:00 UTC
  t.is(await next('America/New_York', sundays, '2027-03-14T05:00:00Z'), '2027-03-14T12:00:00Z');
  // fall back (2026-11-01, 02:00 EDT → 01:00 EST): 08:00 EST is 13:00 UTC
  t.is(await next('America/New_York', sundays, '2026-11-01T04:00:00Z'), '2026-11-01T13:00:00Z');
  // the Sunday before each, for contrast
  t.is(await next('America/New_York', sundays, '2027-03-07T05:00:00Z'), '2027-03-07T13:00:00Z');
  t.is(await next('America/New_York', sundays, '2026-10-25T04:00:00Z'), '2026-10-25T12:00:00Z');
});

test('a window of a skipped local hour opens when that hour would have begun, and a 24:00 close follows the day\'s length', async (t) => {
  // 02:00-03:00 does not exist on 2027-03-14 in New York: 02:00 EST is 07:00 UTC (03:00 EDT)
  t.is(await next('America/New_York', [{ day: 'sun', start: '02:00', end: '03:00' }], '2027-03-14T05:00:00Z'), '2027-03-14T07:00:00Z');
  // a Sunday window to 24:00 on the 25-hour fall-back day closes at 05:00 UTC on Monday
  const allSunday = [{ day: 'sun', start: '00:00', end: '24:00' }];
  t.is(await next('America/New_York', allSunday, '2026-11-02T04:59:00Z'), '2026-11-02T04:59:00Z');
  t.is(await next('America/New_York', allSunday, '2026-11-02T05:00:00Z'), '2026-11-08T05:00:00Z');
  // and on the 23-hour spring day at 04:00 UTC on Monday
  t.is(await next('America/New_York', allSunday, '2027-03-15T03:59:00Z'), '2027-03-15T03:59:00Z');
  t.is(await next('America/New_York', allSunday, '2027-03-15T04:00:00Z'), '2027-03-21T04:00:00Z');
});

test('zones east of UTC and windows across the week', async (t) => {
  // Kolkata is UTC+05:30 all year: a Monday 09:00 window opens at 03:30 UTC
  t.is(await next('Asia/Kolkata', [{ day: 'mon', start: '09:00', end: '10:00' }], '2026-11-23T20:00:00Z'), '2026-11-30T03:30:00Z');
  // the earliest window of the day wins whatever their order in the list
  const twice = [{ day: 'mon', start: '15:00', end: '16:00' }, { day: 'mon', start: '09:00', end: '10:00' }];
  t.is(await next('UTC', twice, '2026-11-23T08:00:00Z'), '2026-11-23T09:00:00Z');
  t.is(await next('UTC', twice, '2026-11-23T10:00:00Z'), '2026-11-23T15:00:00Z');
});

test('send windows and time zones are checked as stored', async (t) => {
  const valid = async (w: unknown) => (await db.owner.query('select app_hidden.send_windows_valid($1::jsonb) as ok', [JSON.stringify(w)])).rows[0].ok;
  t.true(await valid([{ day: 'mon', start: '00:00', end: '24:00' }]));
  for (const bad of [[], {}, [{ day: 'monday', start: '09:00', end: '17:00' }], [{ day: 'mon', start: '17:00', end: '09:00' }],
    [{ day: 'mon', start: '9:00', end: '17:00' }], [{ day: 'mon', start: '09:00', end: '24:30' }], [{ day: 'mon', start: '09:00' }],
    [{ day: 'mon', start: '09:00', end: '17:00', extra: 1 }], ['mon']]) {
    t.false(await valid(bad), JSON.stringify(bad));
  }
  const zone = async (z: string) => (await db.owner.query('select app_hidden.is_time_zone($1) as ok', [z])).rows[0].ok;
  t.true(await zone('America/New_York'));
  t.true(await zone('UTC'));
  t.false(await zone('EST5EDT-not'));
  t.false(await zone('Mars/Olympus'));
  const org = (await db.owner.query(`insert into app_public.organizations (name) values ('W') returning id`)).rows[0].id;
  await t.throwsAsync(db.owner.query(`insert into app_public.send_schedules (organization_id, name, timezone, windows)
    values ($1, 'bad', 'UTC', '[{"day":"mon","start":"10:00","end":"09:00"}]')`, [org]), { message: /send_schedules_windows_valid/ });
});

test('an enrollment has one pending step job, moved rather than doubled', async (t) => {
  const { rows: [ids] } = await db.owner.query(`
    with org as (insert into app_public.organizations (name) values ('J') returning id),
    contact as (insert into app_public.contacts (organization_id, email) select id, 'j@example.com' from org returning organization_id, id),
    seq as (insert into app_public.sequences (organization_id, name) select id, 'S' from org returning organization_id, id)
    insert into app_public.enrollments (organization_id, sequence_id, contact_id, current_step_index, current_step_key, next_step_due_at, next_run_at)
    select seq.organization_id, seq.id, contact.id, 0, 'hello', '2030-01-01T09:00Z', '2030-01-01T09:00Z' from seq, contact
    returning organization_id, id`);
  const schedule = () => db.owner.query('select app_private.schedule_enrollment_steps($1, array[$2::uuid]) as n', [ids.organization_id, ids.id]);
  const jobs = async () => (await db.owner.query(`select t.identifier as task_identifier, j.payload, j.run_at
    from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where j.key = $1`,
  [`sequence_step:${ids.id}`])).rows;
  // due years from now: no job yet, the sweep adds it once its time comes near; once there, a
  // second sweep adds nothing, and a reschedule moves it
  t.is((await schedule()).rows[0].n, 0);
  t.deepEqual(await jobs(), []);
  const sweep = async () => (await db.owner.query(`select app_private.sweep_enrollment_steps($1, '2030-01-01T09:00Z') as n`,
    [ids.organization_id])).rows[0].n;
  t.is(await sweep(), 1);
  t.is(await sweep(), 0);
  await db.owner.query(`update app_public.enrollments set next_run_at = '2030-01-02T09:00Z' where id = $1`, [ids.id]);
  t.is((await schedule()).rows[0].n, 1);
  const [job, ...more] = await jobs();
  t.deepEqual(more, []);
  t.is(job.task_identifier, 'sequence_step');
  t.deepEqual(job.payload, { organization_id: ids.organization_id, enrollment_id: ids.id, step_key: 'hello' });
  t.is(new Date(job.run_at).toISOString(), '2030-01-02T09:00:00.000Z');
  // an ended enrollment gets no job
  await db.owner.query(`update app_public.enrollments set status = 'cancelled' where id = $1`, [ids.id]);
  t.is((await schedule()).rows[0].n, 0);
});

test('a delay in days is counted on the send schedule\'s calendar: the same local time across a clock change, whatever the session\'s zone', async (t) => {
  const { rows: [{ id: org }] } = await db.owner.query(`insert into app_public.organizations (name) values ('Days Dental') returning id`);
  const { rows: [{ id: ny }] } = await db.owner.query(`insert into app_public.send_schedules (organization_id, name, timezone, is_default, windows)
    values ($1, 'New York', 'America/New_York', true, '[{"day":"mon","start":"09:00","end":"17:00"}]') returning id`, [org]);
  const client = await db.owner.connect();
  try {
    for (const zone of ['UTC', 'Pacific/Auckland', 'America/New_York']) {
      await client.query(`select set_config('TimeZone', $1, false)`, [zone]);
      const due = async (schedule: string | null, delay: object, at: string, organization = org) => (await client.query(
        `select to_char(app_hidden.step_due($1, $2, $3::jsonb, $4::timestamptz) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"') as t`,
        [organization, schedule, JSON.stringify({ delay }), at])).rows[0].t;
      // Saturday 09:10 EST, the day before spring forward: Sunday 09:10 EDT, 23 hours later
      t.is(await due(ny, { days: 1 }, '2027-03-13T14:10:00Z'), '2027-03-14T13:10Z', zone);
      t.is(await due(null, { days: 1 }, '2027-03-13T14:10:00Z'), '2027-03-14T13:10Z', `${zone}: the default schedule`);
      // Saturday 09:10 EDT before fall back: Sunday 09:10 EST, 25 hours later; hours and minutes elapsed on top
      t.is(await due(ny, { days: 1, hours: 2, minutes: 5 }, '2026-10-31T13:10:00Z'), '2026-11-01T16:15Z', zone);
      t.is(await due(ny, { hours: 24 }, '2027-03-13T14:10:00Z'), '2027-03-14T14:10Z', `${zone}: hours are elapsed time`);
      // 02:30 the day after does not exist on the spring day: moved forward by the gap
      t.is(await due(ny, { days: 1 }, '2027-03-13T07:30:00Z'), '2027-03-14T07:30Z', zone);
      // an organization without a schedule: days of 24 hours
      const { rows: [{ id: bare }] } = await client.query(`insert into app_public.organizations (name) values ('Bare') returning id`);
      t.is(await due(null, { days: 2 }, '2027-03-13T14:10:00Z', bare), '2027-03-15T14:10Z', zone);
    }
  } finally {
    client.release(true);
  }
});
