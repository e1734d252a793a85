// Kept availability answers (app_private.availability_answers; docs/appointments-booking.md, "Kept answers"): an
// answer is served again until a change it read commits, never one computed under a snapshot
// that missed a change, never to a caller who cannot reach its location, and the prune drops
// only what no live answer needs.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import type { TestApp } from '../helpers/app.ts';
import { authenticate, rows } from '../helpers/sql.ts';
import { availability, book, cancel, northCleaning, starts, startBooking } from './booking-helpers.ts';
import { teamMember } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => { ({ app, acme, other } = await startBooking()); });
test.after.always(async () => { await app?.close(); });

/** When the answer kept for this day of the location was made (one per question asked there), or null. */
async function keptAt(locationId: string, day: string): Promise<string[]> {
  return (await rows(app, `select made_at::text as at from app_private.availability_answers
                             where location_id = $1 and day = $2 order by variant`, [locationId, day])).map((r) => r.at);
}

test.serial('a kept answer is served again until a booking over its day commits; a booking on another day leaves it', async (t) => {
  const q = { location_id: acme.ids.north!, date: '2030-03-07', team_member_id: teamMember(acme, 'staff'), duration_minutes: 30 };
  const first = await availability(app, acme.keys.owner_personal, q);
  t.is(first.status, 200);
  t.true(starts(first).includes('2030-03-07T14:00:00.000Z'));
  const made = await keptAt(acme.ids.north!, '2030-03-07');
  t.is(made.length, 1);
  // asked again, by another caller who reaches the location: the same answer, the same kept row
  const again = await availability(app, acme.keys.sam_personal, q);
  t.deepEqual(again.body, first.body);
  t.deepEqual(await keptAt(acme.ids.north!, '2030-03-07'), made);

  // a booking a week later changes nothing of this day
  const later = await book(app, acme.keys.owner_personal, northCleaning(acme, 7 * 24 * 60));
  t.is(later.status, 201, JSON.stringify(later.body));
  t.deepEqual((await availability(app, acme.keys.owner_personal, q)).body, first.body);
  t.deepEqual(await keptAt(acme.ids.north!, '2030-03-07'), made);

  // a booking of 14:00Z that day: computed again, without 14:00Z (nor the starts overlapping it)
  const booked = await book(app, acme.keys.owner_personal, northCleaning(acme));
  t.is(booked.status, 201, JSON.stringify(booked.body));
  const after = await availability(app, acme.keys.owner_personal, q);
  t.false(starts(after).includes('2030-03-07T14:00:00.000Z'));
  t.false(starts(after).includes('2030-03-07T13:45:00.000Z'));
  t.notDeepEqual(await keptAt(acme.ids.north!, '2030-03-07'), made);

  // cancelled: free again at once
  t.is((await cancel(app, acme.keys.owner_personal, booked.body.id)).status, 200);
  t.deepEqual(starts(await availability(app, acme.keys.owner_personal, q)), starts(first));
  t.is((await cancel(app, acme.keys.owner_personal, later.body.id)).status, 200);
});

test.serial('an answer computed under a snapshot that missed a booking is never served', async (t) => {
  const q = { location_id: acme.ids.north!, date: '2030-03-21', team_member_id: teamMember(acme, 'staff'), duration_minutes: 30 };
  const slot = '2030-03-21T15:00:00.000Z';
  // a reader whose snapshot is taken now, before the booking commits (nothing kept for its question yet)
  const reader = await app.db.owner.connect();
  try {
    await reader.query('begin isolation level repeatable read');
    await reader.query('set local role svc_request');
    await reader.query(authenticate(acme.keys.owner_personal!));
    const booked = await book(app, acme.keys.owner_personal, northCleaning(acme, 0, { start_time: slot, end_time: '2030-03-21T15:30:00.000Z' }));
    t.is(booked.status, 201, JSON.stringify(booked.body));
    const { rows: [{ result: stale }] } = await reader.query(
      `select app_public.appointments_availability($1, $2, null, $3, null, null, 30) as result`, [q.location_id, q.date, q.team_member_id]);
    // its snapshot predates the booking: the slot looks free to it, and that answer is kept
    t.true((stale.slots as { start: string }[]).some((s) => new Date(s.start).toISOString() === slot));
    await reader.query('commit');
  } finally {
    reader.release();
  }
  const kept = await rows(app, `select answer from app_private.availability_answers where location_id = $1 and day = $2`, [q.location_id, q.date]);
  t.is(kept.length, 1);
  t.true((kept[0].answer.slots as { start: string }[]).some((s) => new Date(s.start).toISOString() === slot), 'the stale answer was kept');
  // but never served: the booking committed after its snapshot
  t.false(starts(await availability(app, acme.keys.owner_personal, q)).includes(slot));
});

test.serial('changes to hours, team members, offerings and series reach kept answers', async (t) => {
  const ny = { location_id: acme.ids.ny24!, date: '2030-03-17', duration_minutes: 60 };
  t.is(starts(await availability(app, acme.keys.owner_personal, ny)).length, 24);
  // the location's hours
  await app.db.owner.query(`update app_public.locations set hours = '[{"day": "sun", "open": "00:00", "close": "12:00"}]' where id = $1`, [ny.location_id]);
  t.is(starts(await availability(app, acme.keys.owner_personal, ny)).length, 12);
  // its only team member leaves the organization (inactive): nobody to book
  const tess = teamMember(acme, 'tess');
  await app.db.owner.query(`update app_public.people p set active = false from app_public.staff_profiles sp
                             where sp.id = $1 and p.organization_id = sp.organization_id and p.id = sp.person_id`, [tess]);
  t.deepEqual(starts(await availability(app, acme.keys.owner_personal, ny)), []);
  await app.db.owner.query(`update app_public.people p set active = true from app_public.staff_profiles sp
                             where sp.id = $1 and p.organization_id = sp.organization_id and p.id = sp.person_id`, [tess]);
  t.is(starts(await availability(app, acme.keys.owner_personal, ny)).length, 12);
  // a team member's working hours
  await app.db.owner.query(`update app_public.staff_profiles set working_hours = '[{"day": "sun", "open": "06:00", "close": "09:00"}]' where id = $1`, [tess]);
  t.is(starts(await availability(app, acme.keys.owner_personal, ny)).length, 3);
  // a repeating series of hers, every Sunday 07:00–08:00 New York: one hour less on any Sunday
  await app.db.owner.query(`
    with s as (insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id, title, starts_at, ends_at, rrule, source)
               select organization_id, 'block', $2, id, 'Weekly', '2030-03-03 07:00 America/New_York', '2030-03-03 08:00 America/New_York',
                      'FREQ=WEEKLY', 'fixture' from app_public.staff_profiles where id = $1 returning organization_id, id)
    insert into app_public.appointment_occurrences (organization_id, appointment_id, occurrence_start, during)
    select s.organization_id, s.id, d, tstzrange(d, d + interval '1 hour') from s,
           (values ('2030-03-17 07:00 America/New_York'::timestamptz)) v(d)`, [tess, ny.location_id]);
  t.is(starts(await availability(app, acme.keys.owner_personal, ny)).length, 2);

  // an offering's team: the cleaning at North is done by Sam and Nia; with Sam alone, Nia's slots go
  const cleaning = { location_id: acme.ids.north!, date: '2030-03-05', offering_id: acme.ids.cleaning! };
  const both = await availability(app, acme.keys.owner_personal, cleaning);
  t.deepEqual(both.body.team_member_ids, [teamMember(acme, 'staff'), teamMember(acme, 'nia')]);
  await app.db.owner.query(`delete from app_public.offering_team_members where offering_id = $1 and staff_profile_id = $2`,
    [acme.ids.cleaning, teamMember(acme, 'nia')]);
  t.deepEqual((await availability(app, acme.keys.owner_personal, cleaning)).body.team_member_ids, [teamMember(acme, 'staff')]);
});

test.serial('a kept answer reaches nobody who cannot reach its location or offering', async (t) => {
  const q = { location_id: acme.ids.south!, date: '2030-03-05', offering_id: acme.ids.cleaning! };
  const southOwn = { location_id: acme.ids.south!, date: '2030-03-05', duration_minutes: 30 };
  t.is((await availability(app, acme.keys.owner_personal, southOwn)).status, 200);
  t.is((await keptAt(acme.ids.south!, '2030-03-05')).length, 1);
  for (const key of [acme.keys.north_member, other.keys.owner_personal]) {
    const res = await availability(app, key!, southOwn);
    t.is(res.status, 404);
    t.is(res.body.error, 'not_found');
  }
  // the offering of another location is not found there, kept answers or not
  t.is((await availability(app, acme.keys.owner_personal, q)).status, 404);
});

test.serial('availability.keep_answers = off computes every answer and keeps none; the answers are the same', async (t) => {
  const q = { location_id: acme.ids.north!, date: '2030-03-12', duration_minutes: 45 };
  const served = await availability(app, acme.keys.owner_personal, q);
  t.is(served.status, 200);
  const before = await keptAt(acme.ids.north!, '2030-03-12');
  const c = await app.db.owner.connect();
  try {
    await c.query('begin');
    await c.query('set local availability.keep_answers = off');
    await c.query('set local role svc_request');
    await c.query(authenticate(acme.keys.owner_personal!));
    const { rows: [{ result }] } = await c.query(
      `select app_public.appointments_availability($1, $2, null, null, null, null, 45) as result`, [q.location_id, q.date]);
    t.deepEqual(JSON.parse(JSON.stringify(result)), served.body);
    await c.query('commit');
  } finally {
    c.release();
  }
  t.deepEqual(await keptAt(acme.ids.north!, '2030-03-12'), before);
});

test.serial('the prune drops answers past their time and the changes every live answer has seen', async (t) => {
  const q = { location_id: acme.ids.north!, date: '2030-03-26', duration_minutes: 30 };
  t.is((await availability(app, acme.keys.owner_personal, q)).status, 200);
  const old = { location_id: acme.ids.north!, date: '2030-03-27', duration_minutes: 30 };
  t.is((await availability(app, acme.keys.owner_personal, old)).status, 200);
  const backdate = () => app.db.owner.query(`update app_private.availability_answers set made_at = made_at - interval '6 minutes' where day = '2030-03-27'`);
  await backdate();
  // a kept answer older than its time is not served even before any prune: computed and kept anew
  const stale = await keptAt(acme.ids.north!, '2030-03-27');
  t.is((await availability(app, acme.keys.owner_personal, old)).status, 200);
  t.notDeepEqual(await keptAt(acme.ids.north!, '2030-03-27'), stale);
  await backdate();
  const booked = await book(app, acme.keys.owner_personal, northCleaning(acme, 19 * 24 * 60));
  t.is(booked.status, 201, JSON.stringify(booked.body));
  const changes = Number((await rows(app, 'select count(*) as n from app_private.availability_changes'))[0].n);
  t.true(changes > 0);

  // no mark old enough yet: only the answer past its time goes, and every change stays
  t.is((await rows(app, 'select app_private.availability_prune() as n'))[0].n, 1);
  t.deepEqual(await keptAt(acme.ids.north!, '2030-03-27'), []);
  t.is((await keptAt(acme.ids.north!, '2030-03-26')).length, 1);
  t.is(Number((await rows(app, 'select count(*) as n from app_private.availability_changes'))[0].n), changes);

  // a mark that is a time-to-live old (its snapshot sees every change so far): those changes go,
  // a later one stays
  await app.db.owner.query(`update app_private.availability_marks set taken_at = taken_at - interval '6 minutes'`);
  t.is((await cancel(app, acme.keys.owner_personal, booked.body.id)).status, 200);
  await rows(app, 'select app_private.availability_prune()');
  const left = await rows(app, 'select during::text from app_private.availability_changes');
  t.is(left.length, 1);
  t.is(left[0].during, '["2030-03-26 14:00:00+00","2030-03-26 14:30:00+00")');
  // and the answer of the 26th, made before the cancellation, is not served: computed again
  const made = await keptAt(acme.ids.north!, '2030-03-26');
  t.is((await availability(app, acme.keys.owner_personal, q)).status, 200);
  t.notDeepEqual(await keptAt(acme.ids.north!, '2030-03-26'), made);
});
