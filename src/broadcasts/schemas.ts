// A broadcast's schedule and runs as the API takes and answers them. zod checks the grammar of
// the rule, the zone and the dates so that each 400 names the faulty part (`body.rrule.INTERVAL`,
// `body.timezone`, …); the database checks what needs its clock (send_at in the future) and the
// sequence (a broadcast, in reach).
import { Temporal } from 'temporal-polyfill';
import { z } from 'zod';
import { paging, timestamp, uuid } from '../platform/schemas.ts';
import { isTimeZone, nextOccurrence, parseRule, RuleProblem, type Rule } from './occurrences.ts';

export const SchedulePath = z.object({ sequenceId: uuid.describe('The broadcast\'s id (a sequence of kind broadcast)') });
export const RunPath = SchedulePath.extend({ runId: uuid.describe('The run\'s id (runs[].id of sequences_get_schedule)') });
export const RunsQuery = z.object(paging);

/** A YYYY-MM-DD that is a day of the calendar (not 2031-02-30), or null. */
function realDate(text: string): Temporal.PlainDate | null {
  try {
    return Temporal.PlainDate.from(text, { overflow: 'reject' });
  } catch {
    return null;
  }
}

export const ScheduleBody = z.strictObject({
  schedule_kind: z.enum(['once', 'recurring']).describe('once: at send_at; recurring: on each occurrence of rrule in timezone'),
  send_at: z.iso.datetime({ offset: true }).optional()
    .describe('once only: when to send, with Z or an offset, in the future').meta({ examples: ['2030-05-01T09:00:00-04:00'] }),
  rrule: z.string().max(500).optional()
    .describe('recurring only: FREQ=DAILY|WEEKLY|MONTHLY; INTERVAL (1-100); BYDAY (MO..SU, with an ordinal like 1MO or -1FR '
      + 'for MONTHLY); BYMONTHDAY; BYSETPOS; one BYHOUR; one BYMINUTE. No COUNT or UNTIL (use ends_on). BYHOUR alone is that '
      + 'hour sharp (BYMINUTE 0); without BYHOUR, BYHOUR and BYMINUTE default to the local time the schedule is set; '
      + 'INTERVAL counts from that day')
    .meta({ examples: ['FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0', 'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=17;BYMINUTE=0'] }),
  timezone: z.string().max(64).optional()
    .describe('recurring: the IANA zone the rule\'s times are in (09:00 stays 09:00 across daylight saving); once: optional, '
      + 'the zone send_at was meant in, kept with the schedule')
    .meta({ examples: ['America/New_York', 'Europe/Berlin'] }),
  ends_on: z.iso.date().optional().describe('recurring only: the last local date of the series (none: no end)')
    .meta({ examples: ['2030-12-31'] }),
}).superRefine((b, ctx) => {
  const bad = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (b.schedule_kind === 'once') {
    if (b.send_at === undefined) bad(['send_at'], 'required for schedule_kind once');
    for (const k of ['rrule', 'ends_on'] as const) if (b[k] !== undefined) bad([k], 'only for schedule_kind recurring');
    // a once schedule may name its zone (shown back; send_at carries its own offset)
    if (b.timezone !== undefined && !isTimeZone(b.timezone)) bad(['timezone'], 'not an IANA time zone (for example America/New_York)');
    return;
  }
  if (b.send_at !== undefined) bad(['send_at'], 'only for schedule_kind once');
  let rule: Rule | undefined;
  if (b.rrule === undefined) bad(['rrule'], 'required for schedule_kind recurring');
  else {
    try {
      rule = parseRule(b.rrule);
    } catch (e) {
      if (!(e instanceof RuleProblem)) throw e;
      bad(e.part.split('.'), e.message);
    }
  }
  const endsOn = b.ends_on === undefined ? undefined : realDate(b.ends_on);
  if (endsOn === null) bad(['ends_on'], 'not a date of the calendar');
  if (b.timezone === undefined) bad(['timezone'], 'required for schedule_kind recurring');
  else if (!isTimeZone(b.timezone)) bad(['timezone'], 'not an IANA time zone (for example America/New_York)');
  else if (endsOn && Temporal.PlainDate.compare(endsOn, Temporal.Now.plainDateISO(b.timezone)) < 0) {
    bad(['ends_on'], 'is in the past in the schedule\'s zone: the series would never fire');
  } else if (rule && endsOn !== null) {
    // A rule whose parts no date satisfies (BYMONTHDAY=31 with BYDAY=1MO) or whose first
    // occurrence comes after ends_on would be started and then never send: refused here, by part.
    const now = new Date();
    const first = nextOccurrence({ rule, timezone: b.timezone, anchor: now }, now);
    if (!first) bad(['rrule'], 'no date matches every part of the rule: the series would never fire');
    else if (endsOn && Temporal.PlainDate.compare(
      Temporal.Instant.fromEpochMilliseconds(first.getTime()).toZonedDateTimeISO(b.timezone).toPlainDate(), endsOn) > 0) {
      bad(['ends_on'], 'is before the rule\'s first occurrence: the series would never fire');
    }
  }
});
export type ScheduleBody = z.output<typeof ScheduleBody>;

const count = (what: string) => z.int().describe(what);
export const Run = z.object({
  id: uuid,
  status: z.enum(['sending', 'completed', 'cancelled', 'failed'])
    .describe('sending (until every recipient\'s message has gone or been skipped), completed, cancelled (sequences_cancel_schedule_run or a new schedule), failed (the audience was gone when it fired)'),
  fire_at: timestamp.describe('The occurrence it fired for'),
  started_at: timestamp,
  finished_at: timestamp.nullable(),
  recipients: count('The audience\'s members when it fired (each contact once)'),
  sent: count('Messages the transport accepted'),
  skipped: count('Recipients not sent to: opted out, suppressed, no consent or no address at send time'),
  failed: count('Messages the transport refused'),
  unknown: count('Messages handed over when a worker died, never sent again'),
  cancelled: count('Recipients stopped before their message went'),
  waiting: count('Recipients of a sending run whose message has not gone yet (0 once the run has ended)'),
  held_until: timestamp.nullable()
    .describe('The run fired outside its send window and waits for this opening; null when it is not waiting for one'),
});

export const Schedule = z.object({
  sequence_id: uuid,
  schedule_kind: z.enum(['once', 'recurring']),
  send_at: timestamp.nullable(),
  rrule: z.string().nullable(),
  timezone: z.string().nullable(),
  ends_on: z.string().nullable(),
  status: z.enum(['draft', 'scheduled', 'paused']),
  next_fire_at: timestamp.nullable().describe('When it sends next (scheduled only; null when the series has ended)'),
  fire_retry: z.object({
    attempts: z.int().describe('Failed attempts to fire the occurrence at next_fire_at'),
    next_attempt_at: timestamp.describe('When it is tried again (1 minute, doubling to at most an hour)'),
    last_error: z.string().describe('Why the last attempt failed'),
  }).nullable().describe('Set while the occurrence at next_fire_at failed to fire and is being retried; null otherwise'),
  created_at: timestamp,
  updated_at: timestamp,
  runs: z.array(Run).describe('A page of its runs, newest first'),
  runs_total: z.int(),
  page: z.int(),
  limit: z.int(),
});

export const CancelRunResult = z.object({
  run_id: uuid,
  status: z.literal('cancelled'),
  cancelled: z.int().describe('Recipients stopped before their message went'),
});
