// app_hidden.hours_hold answers "does this range lie inside these weekly hours" by one opening of
// the range's first day when it can, and by the merged openings around the range otherwise. The
// property: it always agrees with the merged openings alone (opening_multirange @> range), over
// random ranges and hours with split days, adjacent openings, nights, and both DST changes.
import test from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { prng } from '../helpers/random.ts';

let db: TestDatabase;
test.before(async () => { db = await createTestDatabase(); });
test.after.always(async () => { await db?.drop(); });

const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const HOURS: Record<string, unknown[]> = {
  // one opening a weekday
  plain: days.slice(0, 5).map((day) => ({ day, open: '08:00', close: '18:00' })),
  // a lunch gap, and adjacent openings that merge into one
  split: days.flatMap((day, i) => i % 2
    ? [{ day, open: '08:00', close: '12:00' }, { day, open: '13:00', close: '18:00' }]
    : [{ day, open: '08:00', close: '12:00' }, { day, open: '12:00', close: '18:00' }]),
  // around the clock: a range over midnight lies in two openings
  allDay: days.map((day) => ({ day, open: '00:00', close: '23:59' })).concat(days.map((day) => ({ day, open: '23:59', close: '24:00' }))),
  // openings inside the hours that DST skips or repeats
  night: days.map((day) => ({ day, open: '01:00', close: '03:30' })),
};
// the spring and autumn changes of New York and Berlin in 2030, and an ordinary week
const STARTS = ['2030-03-10T00:00:00Z', '2030-11-03T00:00:00Z', '2030-03-31T00:00:00Z', '2030-10-27T00:00:00Z', '2030-06-03T00:00:00Z'];
const ZONES = ['America/New_York', 'Europe/Berlin', 'UTC'];

test('hours_hold agrees with the merged openings for 3,000 random ranges', async (t) => {
  const r = prng(20301110);
  const cases: [string, string, string, string][] = [];
  for (let i = 0; i < 3000; i++) {
    const hours = Object.keys(HOURS)[Math.floor(r() * 4)]!;
    const zone = ZONES[Math.floor(r() * ZONES.length)]!;
    const start = Date.parse(STARTS[Math.floor(r() * STARTS.length)]!) + Math.floor(r() * 4 * 96) * 15 * 60_000;
    const minutes = [15, 30, 45, 60, 90, 120, 240, 600][Math.floor(r() * 8)]!;
    cases.push([hours, zone, new Date(start).toISOString(), new Date(start + minutes * 60_000).toISOString()]);
  }
  const { rows } = await db.owner.query(
    `select c.n, app_hidden.hours_hold(h.hours, c.zone, c.during) as fast,
            app_hidden.opening_multirange(h.hours, c.zone, c.during) @> c.during as merged
       from jsonb_to_recordset($1::jsonb) as c0(n int, hours text, zone text, lower timestamptz, upper timestamptz)
       cross join lateral (select c0.n, c0.zone, tstzrange(c0.lower, c0.upper, '[)') as during) c
       join jsonb_each($2::jsonb) h(name, hours) on h.name = c0.hours`,
    [JSON.stringify(cases.map(([hours, zone, lower, upper], n) => ({ n, hours, zone, lower, upper }))), JSON.stringify(HOURS)]);
  t.is(rows.length, cases.length);
  const differ = rows.filter((x) => x.fast !== x.merged).map((x) => cases[x.n]);
  t.deepEqual(differ, []);
  // both answers occur, so the property is not met by a constant
  t.true(rows.some((x) => x.fast) && rows.some((x) => !x.fast));
  // a range across the adjacent openings of a day is inside (merged); across the lunch gap it is not
  const split = JSON.stringify(HOURS.split);
  const at = async (lower: string, upper: string) => (await db.owner.query(
    `select app_hidden.hours_hold($1::jsonb, 'UTC', tstzrange($2, $3, '[)')) as ok`, [split, lower, upper])).rows[0].ok;
  t.true(await at('2030-06-03T11:30:00Z', '2030-06-03T12:30:00Z'));   // Monday: 08–12 and 12–18
  t.false(await at('2030-06-04T11:30:00Z', '2030-06-04T12:30:00Z'));  // Tuesday: 08–12 and 13–18
});
