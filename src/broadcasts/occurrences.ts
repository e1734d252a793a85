// When a recurring broadcast fires: the spec's rrule subset, parsed and checked, and its
// occurrences computed as wall-clock times in the schedule's zone, then turned into instants
// with Temporal (temporal-polyfill: Node 24 has no Temporal yet). Not rrule.js (open DST and
// time-zone bugs, no release since 2023) and not PostgreSQL's AT TIME ZONE (it takes the later
// instant of a repeated hour; RFC 5545 wants the first). docs/broadcasts.md, "Occurrences".
//
//   - a local time that does not exist (spring forward) moves forward by the gap, and one that
//     occurs twice (fall back) takes the first: Temporal's `compatible` disambiguation;
//   - a BYMONTHDAY a month does not have (31 in April) gives nothing that month (RFC 5545);
//   - DTSTART is the moment the schedule was set (`anchor`): INTERVAL counts from its day, week or
//     month, and BYHOUR / BYMINUTE default to its local hour and minute;
//   - `ends_on` is the last local date of the series.
import { Temporal } from 'temporal-polyfill';

export type Freq = 'DAILY' | 'WEEKLY' | 'MONTHLY';
export interface ByDay { weekday: number; ordinal: number | null }
export interface Rule {
  freq: Freq;
  interval: number;
  byday: ByDay[];
  bymonthday: number[];
  bysetpos: number[];
  byhour: number | null;
  byminute: number | null;
}

/** A part of an rrule that is wrong: `part` is what a 400 names (`rrule.INTERVAL`, …). */
export class RuleProblem extends Error {
  readonly part: string;
  constructor(part: string, message: string) {
    super(message);
    this.part = part;
  }
}

const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const KNOWN = new Set(['FREQ', 'INTERVAL', 'BYDAY', 'BYMONTHDAY', 'BYSETPOS', 'BYHOUR', 'BYMINUTE']);

function intList(part: string, value: string, min: number, max: number, nonZero: boolean): number[] {
  return value.split(',').map((v) => {
    if (!/^[+-]?\d{1,3}$/.test(v)) throw new RuleProblem(part, `${v || '(empty)'} is not a whole number`);
    const n = Number(v);
    if (n < min || n > max || (nonZero && n === 0)) throw new RuleProblem(part, `${v} is outside ${min}..${max}${nonZero ? ' (not 0)' : ''}`);
    return n;
  });
}

/** Parses the spec's grammar (an optional leading `RRULE:`); throws RuleProblem naming the part. */
export function parseRule(text: string): Rule {
  const body = text.trim().replace(/^RRULE:/i, '');
  if (body === '') throw new RuleProblem('rrule', 'empty: expected FREQ=DAILY|WEEKLY|MONTHLY;…');
  const parts = new Map<string, string>();
  for (const piece of body.split(';')) {
    const eq = piece.indexOf('=');
    const name = (eq < 0 ? piece : piece.slice(0, eq)).trim().toUpperCase();
    const value = eq < 0 ? '' : piece.slice(eq + 1).trim().toUpperCase();
    if (name === 'COUNT' || name === 'UNTIL') {
      throw new RuleProblem(`rrule.${name}`, `${name} is not supported: a series ends with ends_on`);
    }
    if (!KNOWN.has(name)) throw new RuleProblem(`rrule.${name || '(empty)'}`.slice(0, 60), 'not a part of the supported grammar (FREQ, INTERVAL, BYDAY, BYMONTHDAY, BYSETPOS, BYHOUR, BYMINUTE)');
    if (parts.has(name)) throw new RuleProblem(`rrule.${name}`, 'given twice');
    if (value === '') throw new RuleProblem(`rrule.${name}`, 'has no value');
    parts.set(name, value);
  }
  const freq = parts.get('FREQ');
  if (!freq) throw new RuleProblem('rrule.FREQ', 'missing: DAILY, WEEKLY or MONTHLY');
  if (freq !== 'DAILY' && freq !== 'WEEKLY' && freq !== 'MONTHLY') throw new RuleProblem('rrule.FREQ', `${freq} is not DAILY, WEEKLY or MONTHLY`);
  const interval = parts.has('INTERVAL') ? intList('rrule.INTERVAL', parts.get('INTERVAL')!, 1, 100, true) : [1];
  if (interval.length !== 1) throw new RuleProblem('rrule.INTERVAL', 'one number from 1 to 100');
  const byday = (parts.get('BYDAY')?.split(',') ?? []).map((d) => {
    const m = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(d);
    if (!m) throw new RuleProblem('rrule.BYDAY', `${d || '(empty)'} is not a weekday (MO..SU, with an ordinal like 1MO or -1FR for MONTHLY)`);
    const ordinal = m[1] === undefined ? null : Number(m[1]);
    if (ordinal !== null && (freq !== 'MONTHLY' || ordinal === 0 || ordinal < -5 || ordinal > 5)) {
      throw new RuleProblem('rrule.BYDAY', `${d}: an ordinal (1..5 or -1..-5) goes only with FREQ=MONTHLY`);
    }
    return { weekday: WEEKDAYS.indexOf(m[2]!) + 1, ordinal };
  });
  const bymonthday = parts.has('BYMONTHDAY') ? intList('rrule.BYMONTHDAY', parts.get('BYMONTHDAY')!, -31, 31, true) : [];
  if (bymonthday.length && freq === 'WEEKLY') throw new RuleProblem('rrule.BYMONTHDAY', 'not with FREQ=WEEKLY');
  const bysetpos = parts.has('BYSETPOS') ? intList('rrule.BYSETPOS', parts.get('BYSETPOS')!, -366, 366, true) : [];
  if (bysetpos.length && !byday.length && !bymonthday.length) {
    throw new RuleProblem('rrule.BYSETPOS', 'needs BYDAY or BYMONTHDAY to choose among');
  }
  const one = (name: string, max: number) => {
    if (!parts.has(name)) return null;
    const values = intList(`rrule.${name}`, parts.get(name)!, 0, max, false);
    if (values.length !== 1) throw new RuleProblem(`rrule.${name}`, 'exactly one value');
    return values[0]!;
  };
  return { freq, interval: interval[0]!, byday, bymonthday, bysetpos, byhour: one('BYHOUR', 23), byminute: one('BYMINUTE', 59) };
}

/** An IANA zone name Temporal knows (not an offset: occurrences follow the zone's rules). */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name) || name.length > 64) return false;
  try {
    Temporal.Now.zonedDateTimeISO(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * The local dates of one period (a day, a week from Monday, a month) that the rule selects, in
 * order. The days are filtered as numbers (day of the month, weekday) and only those chosen become
 * dates: a rule that selects nothing for years (BYMONTHDAY=31 with BYDAY=1MO) is searched in
 * milliseconds, not hundreds of them.
 */
function periodDates(rule: Rule, start: Temporal.PlainDate, anchor: Temporal.PlainDate): Temporal.PlainDate[] {
  // each candidate as its offset from `start`, with its day of the month and weekday (1 = Monday)
  const length = rule.freq === 'DAILY' ? 1 : rule.freq === 'WEEKLY' ? 7 : start.daysInMonth;
  const monthLength = start.daysInMonth;
  let offsets = Array.from({ length }, (_, i) => i);
  const dayOf = (i: number) => start.day + i;
  const weekdayOf = (i: number) => ((start.dayOfWeek - 1 + i) % 7) + 1;
  if (rule.freq === 'WEEKLY' && !rule.byday.length) offsets = offsets.filter((i) => weekdayOf(i) === anchor.dayOfWeek);
  if (rule.freq === 'MONTHLY' && !rule.byday.length && !rule.bymonthday.length) offsets = offsets.filter((i) => dayOf(i) === anchor.day);
  // BYMONTHDAY goes with DAILY and MONTHLY only, whose candidates never leave start's month
  if (rule.bymonthday.length) {
    offsets = offsets.filter((i) => rule.bymonthday.some((n) => (n > 0 ? dayOf(i) === n : dayOf(i) === monthLength + n + 1)));
  }
  if (rule.byday.length) {
    offsets = offsets.filter((i) => rule.byday.some(({ weekday, ordinal }) => {
      if (weekdayOf(i) !== weekday) return false;
      if (ordinal === null) return true;
      // the n-th (or n-th from last) such weekday of the month (ordinals go with MONTHLY only)
      return ordinal > 0 ? Math.ceil(dayOf(i) / 7) === ordinal : Math.ceil((monthLength - dayOf(i) + 1) / 7) === -ordinal;
    }));
  }
  if (rule.bysetpos.length) {
    const n = offsets.length;
    const chosen = new Set(rule.bysetpos.map((p) => (p > 0 ? p - 1 : n + p)).filter((i) => i >= 0 && i < n));
    offsets = offsets.filter((_, i) => chosen.has(i));
  }
  return offsets.map((i) => (i === 0 ? start : start.add({ days: i })));
}

/** The first day of the period holding `date`. */
function periodStart(freq: Freq, date: Temporal.PlainDate): Temporal.PlainDate {
  if (freq === 'DAILY') return date;
  if (freq === 'WEEKLY') return date.subtract({ days: date.dayOfWeek - 1 });
  return date.with({ day: 1 });
}

function periodsBetween(freq: Freq, from: Temporal.PlainDate, to: Temporal.PlainDate): number {
  if (freq === 'DAILY') return from.until(to, { largestUnit: 'days' }).days;
  if (freq === 'WEEKLY') return Math.floor(from.until(to, { largestUnit: 'days' }).days / 7);
  return (to.year - from.year) * 12 + (to.month - from.month);
}

function addPeriods(freq: Freq, date: Temporal.PlainDate, n: number): Temporal.PlainDate {
  return freq === 'DAILY' ? date.add({ days: n }) : freq === 'WEEKLY' ? date.add({ weeks: n }) : date.add({ months: n });
}

export interface Series {
  rule: Rule;
  timezone: string;
  /** DTSTART: the moment the schedule was set. */
  anchor: Date | string;
  /** The last local date of the series (YYYY-MM-DD), or none. */
  endsOn?: string | null;
}

/** Enough periods to meet any occurrence the grammar allows (BYMONTHDAY=31 with INTERVAL=100 months skips at most a few). */
const MAX_PERIODS = 2000;

/**
 * The first occurrence strictly after `after` (an instant), or null when the series has ended.
 * Each candidate is a local date and time in the zone, made an instant with `compatible`
 * disambiguation (a gap moves forward by its length; a repeated hour takes its first instant).
 */
export function nextOccurrence(series: Series, after: Date | string): Date | null {
  const { rule, timezone } = series;
  const anchorInstant = Temporal.Instant.from(new Date(series.anchor).toISOString());
  const anchorLocal = anchorInstant.toZonedDateTimeISO(timezone);
  const anchorDate = anchorLocal.toPlainDate();
  const hour = rule.byhour ?? anchorLocal.hour;
  // BYHOUR alone is that hour sharp ("FREQ=DAILY;BYHOUR=9" is 09:00, not 09 and the minute the
  // schedule was set, as RFC 5545 would take it from DTSTART); neither: the time it was set
  const minute = rule.byminute ?? (rule.byhour != null ? 0 : anchorLocal.minute);
  const endsOn = series.endsOn ? Temporal.PlainDate.from(series.endsOn) : null;
  const afterInstant = Temporal.Instant.from(new Date(after).toISOString());
  const floor = Temporal.Instant.compare(afterInstant, anchorInstant) >= 0 ? afterInstant : anchorInstant.subtract({ nanoseconds: 1 });
  const firstPeriod = periodStart(rule.freq, anchorDate);
  // start at the period holding `floor` (rounded down to the interval), a day earlier for zones
  // whose offset moves a local date across it
  const floorDate = floor.toZonedDateTimeISO(timezone).toPlainDate().subtract({ days: 1 });
  let k = Math.max(0, periodsBetween(rule.freq, firstPeriod, periodStart(rule.freq, floorDate)));
  k -= k % rule.interval;
  for (let i = 0; i < MAX_PERIODS; i++, k += rule.interval) {
    const start = addPeriods(rule.freq, firstPeriod, k);
    if (endsOn && Temporal.PlainDate.compare(start, endsOn) > 0) return null;
    for (const date of periodDates(rule, start, anchorDate)) {
      if (endsOn && Temporal.PlainDate.compare(date, endsOn) > 0) return null;
      const at = date.toPlainDateTime({ hour, minute }).toZonedDateTime(timezone, { disambiguation: 'compatible' }).toInstant();
      if (Temporal.Instant.compare(at, floor) > 0) return new Date(at.epochMilliseconds);
    }
  }
  return null;
}

/** The next `n` occurrences after `after` (for tests and the docs' examples). */
export function occurrences(series: Series, after: Date | string, n: number): Date[] {
  const out: Date[] = [];
  let at: Date | string = after;
  while (out.length < n) {
    const next = nextOccurrence(series, at);
    if (!next) break;
    out.push(next);
    at = next;
  }
  return out;
}
