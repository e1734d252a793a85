// Occurrences as wall-clock times in the schedule's zone, made instants with Temporal: both DST
// changes in New York and Berlin, the last weekday of the month (BYSETPOS=-1), BYMONTHDAY=31 in
// short months, INTERVAL counted from the day the schedule was set, ends_on; and the grammar's
// refusals, each naming its part.
import test from 'ava';
import { nextOccurrence, occurrences, parseRule, RuleProblem } from '../../src/broadcasts/occurrences.ts';

const series = (rrule: string, timezone: string, anchor: string, endsOn?: string) =>
  ({ rule: parseRule(rrule), timezone, anchor, endsOn });
const iso = (ds: Date[]) => ds.map((d) => d.toISOString().replace('.000', ''));

test('09:00 in New York stays 09:00 across both clock changes (EST -05:00, EDT -04:00)', (t) => {
  const s = series('FREQ=DAILY;BYHOUR=9;BYMINUTE=0', 'America/New_York', '2026-03-06T12:00:00Z');
  t.deepEqual(iso(occurrences(s, '2026-03-06T12:00:00Z', 3)), ['2026-03-06T14:00:00Z', '2026-03-07T14:00:00Z', '2026-03-08T13:00:00Z']);
  t.deepEqual(iso(occurrences(s, '2026-10-31T00:00:00Z', 3)), ['2026-10-31T13:00:00Z', '2026-11-01T14:00:00Z', '2026-11-02T14:00:00Z']);
});

test('New York: 02:30 on the spring-forward day moves forward by the gap; 01:30 on the fall-back day takes the first', (t) => {
  const spring = series('FREQ=DAILY;BYHOUR=2;BYMINUTE=30', 'America/New_York', '2026-03-06T12:00:00Z');
  // 03-07 02:30 EST; 03-08 02:30 does not exist: 03:30 EDT (07:30Z); 03-09 02:30 EDT
  t.deepEqual(iso(occurrences(spring, '2026-03-06T12:00:00Z', 3)), ['2026-03-07T07:30:00Z', '2026-03-08T07:30:00Z', '2026-03-09T06:30:00Z']);
  const fall = series('FREQ=DAILY;BYHOUR=1;BYMINUTE=30', 'America/New_York', '2026-10-30T12:00:00Z');
  // 11-01 01:30 happens twice (EDT 05:30Z, then EST 06:30Z): the first
  t.deepEqual(iso(occurrences(fall, '2026-10-31T12:00:00Z', 2)), ['2026-11-01T05:30:00Z', '2026-11-02T06:30:00Z']);
});

test('Berlin: the gap of the last Sunday of March and the repeated hour of the last Sunday of October', (t) => {
  const spring = series('FREQ=DAILY;BYHOUR=2;BYMINUTE=30', 'Europe/Berlin', '2026-03-27T12:00:00Z');
  t.deepEqual(iso(occurrences(spring, '2026-03-27T12:00:00Z', 3)), ['2026-03-28T01:30:00Z', '2026-03-29T01:30:00Z', '2026-03-30T00:30:00Z']);
  const fall = series('FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=30', 'Europe/Berlin', '2026-10-01T12:00:00Z');
  // 10-25 02:30 happens at 00:30Z (CEST) and 01:30Z (CET): the first
  t.deepEqual(iso(occurrences(fall, '2026-10-20T00:00:00Z', 2)), ['2026-10-25T00:30:00Z', '2026-11-01T01:30:00Z']);
});

test('monthly BYSETPOS=-1: the last weekday of each month at 17:00 Berlin', (t) => {
  const s = series('FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=17;BYMINUTE=0', 'Europe/Berlin', '2026-01-01T00:00:00Z');
  // Jan 30 (Fri), Feb 27 (Fri), Mar 31 (Tue, CEST), May 29 (Fri; May 31 is a Sunday)
  t.deepEqual(iso(occurrences(s, '2026-01-01T00:00:00Z', 5)),
    ['2026-01-30T16:00:00Z', '2026-02-27T16:00:00Z', '2026-03-31T15:00:00Z', '2026-04-30T15:00:00Z', '2026-05-29T15:00:00Z']);
  const lastFriday = series('FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=9;BYMINUTE=0', 'UTC', '2026-01-01T00:00:00Z');
  t.deepEqual(iso(occurrences(lastFriday, '2026-01-01T00:00:00Z', 2)), ['2026-01-30T09:00:00Z', '2026-02-27T09:00:00Z']);
});

test('BYMONTHDAY=31 skips the months without a 31st; -1 is the last day of each', (t) => {
  const s = series('FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0', 'America/New_York', '2026-01-01T12:00:00Z');
  t.deepEqual(iso(occurrences(s, '2026-01-01T12:00:00Z', 4)),
    ['2026-01-31T14:00:00Z', '2026-03-31T13:00:00Z', '2026-05-31T13:00:00Z', '2026-07-31T13:00:00Z']);
  const last = series('FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=9;BYMINUTE=0', 'UTC', '2028-01-01T00:00:00Z');
  t.deepEqual(iso(occurrences(last, '2028-01-01T00:00:00Z', 3)), ['2028-01-31T09:00:00Z', '2028-02-29T09:00:00Z', '2028-03-31T09:00:00Z']);
});

test('INTERVAL counts from the week the schedule was set; ends_on is the last local date', (t) => {
  const s = series('FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;BYHOUR=9;BYMINUTE=0', 'UTC', '2026-01-01T00:00:00Z', '2026-01-29');
  t.deepEqual(iso(occurrences(s, '2026-01-01T00:00:00Z', 10)),
    ['2026-01-01T09:00:00Z', '2026-01-12T09:00:00Z', '2026-01-15T09:00:00Z', '2026-01-26T09:00:00Z', '2026-01-29T09:00:00Z']);
  t.is(nextOccurrence(s, '2026-01-29T09:00:00Z'), null, 'nothing after ends_on');
  // ends_on is a local date: 21:00 New York on the 31st is the 1st in UTC, still in the series
  // (set at 19:00 New York on the 29th: that evening is the first)
  const late = series('FREQ=DAILY;BYHOUR=21;BYMINUTE=0', 'America/New_York', '2026-01-30T00:00:00Z', '2026-01-31');
  t.deepEqual(iso(occurrences(late, '2026-01-30T00:00:00Z', 5)), ['2026-01-30T02:00:00Z', '2026-01-31T02:00:00Z', '2026-02-01T02:00:00Z']);
});

test('BYHOUR and BYMINUTE default to the local time the schedule was set; BYHOUR alone is that hour sharp', (t) => {
  const s = series('FREQ=DAILY', 'Europe/Berlin', '2026-06-10T08:15:00Z');
  t.deepEqual(iso(occurrences(s, '2026-06-10T08:15:00Z', 2)), ['2026-06-11T08:15:00Z', '2026-06-12T08:15:00Z']);
  // BYHOUR alone is that hour sharp; BYMINUTE alone keeps the hour it was set
  const nine = series('FREQ=DAILY;BYHOUR=9', 'Europe/Berlin', '2026-06-10T08:15:00Z');
  t.deepEqual(iso(occurrences(nine, '2026-06-10T08:15:00Z', 2)), ['2026-06-11T07:00:00Z', '2026-06-12T07:00:00Z']);
  const half = series('FREQ=DAILY;BYMINUTE=30', 'Europe/Berlin', '2026-06-10T08:15:00Z');
  t.deepEqual(iso(occurrences(half, '2026-06-10T08:15:00Z', 2)), ['2026-06-10T08:30:00Z', '2026-06-11T08:30:00Z']);
});

test('the grammar: each refusal names its part', (t) => {
  const part = (rrule: string) => t.throws(() => parseRule(rrule), { instanceOf: RuleProblem })!.part;
  t.is(part('FREQ=YEARLY'), 'rrule.FREQ');
  t.is(part('INTERVAL=2'), 'rrule.FREQ');
  t.is(part('FREQ=DAILY;INTERVAL=0'), 'rrule.INTERVAL');
  t.is(part('FREQ=DAILY;INTERVAL=101'), 'rrule.INTERVAL');
  t.is(part('FREQ=DAILY;COUNT=3'), 'rrule.COUNT');
  t.is(part('FREQ=DAILY;UNTIL=20300101T000000Z'), 'rrule.UNTIL');
  t.is(part('FREQ=DAILY;BYHOUR=9,10'), 'rrule.BYHOUR');
  t.is(part('FREQ=DAILY;BYMINUTE=60'), 'rrule.BYMINUTE');
  t.is(part('FREQ=WEEKLY;BYDAY=1MO'), 'rrule.BYDAY');
  t.is(part('FREQ=WEEKLY;BYDAY=XX'), 'rrule.BYDAY');
  t.is(part('FREQ=MONTHLY;BYMONTHDAY=32'), 'rrule.BYMONTHDAY');
  t.is(part('FREQ=DAILY;BYSETPOS=1'), 'rrule.BYSETPOS');
  t.is(part('FREQ=DAILY;BYSECOND=1'), 'rrule.BYSECOND');
  t.is(part('FREQ=DAILY;FREQ=WEEKLY'), 'rrule.FREQ');
  t.like(parseRule('RRULE:freq=monthly;byday=-1fr'), { freq: 'MONTHLY', byday: [{ weekday: 5, ordinal: -1 }] });
});
