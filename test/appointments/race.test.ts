// Race-free booking: fifty requests at once for one slot make exactly one booking; the other
// forty-nine answer 409 slot_taken. The database's exclusion constraint decides, not a read in
// application code. Also for a calendar, and for the first free team member (omitted): there the
// losers answer no_team_member_available (none named, and nobody is free then).
import test, { type ExecutionContext } from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { book, dstFixture, northCleaning } from './booking-helpers.ts';
import { teamMember } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(dstFixture())); });
test.after.always(async () => { await app?.close(); });

async function race(t: ExecutionContext, body: Record<string, unknown>, where: string, lost = 'slot_taken') {
  const answers = await Promise.all(Array.from({ length: 50 }, () => book(app, acme.keys.owner_personal, body)));
  const booked = answers.filter((a) => a.status === 201);
  const taken = answers.filter((a) => a.status === 409 && a.body.error === lost);
  t.is(booked.length, 1, JSON.stringify(answers.filter((a) => a.status !== 201 && a.status !== 409).map((a) => a.body)));
  t.is(taken.length, 49);
  const { rows } = await app.db.owner.query(
    `select count(*)::int as n from app_public.appointments where organization_id = $1 and starts_at = $2 and status = 'booked' and ${where}`,
    [acme.organization_id, body.start_time]);
  t.is(rows[0].n, 1, 'one row in the database');
  return booked[0]!;
}

test.serial('50 parallel bookings of one team member\'s slot: exactly 1 booking, 49 × 409 slot_taken', async (t) => {
  const won = await race(t, northCleaning(acme, 60), 'source = \'api\'');
  t.is(won.body.team_member_id, teamMember(acme, 'staff'));
});

test.serial('50 parallel bookings of the only team member of a location, none named: exactly 1 booking, 49 × no_team_member_available', async (t) => {
  const won = await race(t, { location_id: acme.ids.ny24, contact_id: acme.ids.ann,
    start_time: '2030-03-11T15:00:00Z', end_time: '2030-03-11T16:00:00Z' }, 'source = \'api\'', 'no_team_member_available');
  t.is(won.body.team_member_id, teamMember(acme, 'tess'));
});

test.serial('50 parallel bookings of one calendar\'s slot: exactly 1 booking, 49 × slot_taken', async (t) => {
  const won = await race(t, { calendar_id: acme.ids.room, contact_id: acme.ids.lia,
    start_time: '2030-03-07T13:00:00Z', end_time: '2030-03-07T13:30:00Z' }, 'calendar_id is not null');
  t.is(won.body.calendar_id, acme.ids.room);
});

test.serial('overlapping (not equal) ranges race too: of 20 requests staggered by 5 minutes over one hour, the winners never overlap', async (t) => {
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    book(app, acme.keys.owner_personal, northCleaning(acme, 240 + 5 * (i % 12)))));
  t.true(answers.every((a) => a.status === 201 || (a.status === 409 && a.body.error === 'slot_taken')));
  const ranges = answers.filter((a) => a.status === 201).map((a) => [Date.parse(a.body.start_time), Date.parse(a.body.end_time)] as const)
    .sort((x, y) => x[0] - y[0]);
  t.true(ranges.length >= 1);
  for (let i = 1; i < ranges.length; i++) t.true(ranges[i]![0] >= ranges[i - 1]![1], 'no two winners overlap');
});
