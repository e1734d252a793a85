// The schedule operations of a broadcast: set, read, start, pause, and cancel one run. Each runs
// app_public.sequences_*_schedule (db/schema/sequences.sql), which checks
// the sequence (a broadcast, in reach, writable) and writes; start computes next_fire_at here,
// with Temporal, between its two statements (src/broadcasts/occurrences.ts).
import { sql } from '../db/sql.ts';
import { result } from '../platform/schemas.ts';
import { defineOperation, type AnyOperation } from '../registry/operation.ts';
import { firstFireAt, type StoredSchedule } from './fire.ts';
import { CancelRunResult, RunPath, RunsQuery, Schedule, ScheduleBody, SchedulePath } from './schemas.ts';

const common = { tag: 'Sequences', managerPower: 'sequences' as const, memberAccess: 'deny' as const };

export const sequencesSetSchedule = defineOperation({
  ...common,
  operationId: 'sequences_set_schedule',
  method: 'PUT',
  path: '/api/v1/sequences/{sequenceId}/schedule',
  summary: 'Set a broadcast\'s schedule (draft)',
  description:
    'Sets when a broadcast sends: `{"schedule_kind": "once", "send_at": "<date-time with Z or offset, in the future>"}` or '
    + '`{"schedule_kind": "recurring", "rrule": "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0", "timezone": "America/New_York", '
    + '"ends_on": "2030-12-31"}`. Times are wall-clock times in the zone (09:00 stays 09:00 across daylight saving; a time '
    + 'skipped by the clock change moves forward by the gap, a repeated one takes the first). The schedule is saved as '
    + '`draft` and sends nothing until sequences_start_schedule; setting it again returns it to draft and cancels runs '
    + 'that have not ended, so ask the user first when one is sending. 400 names the faulty part (`body.rrule.INTERVAL`, '
    + '`body.timezone`, `body.send_at`, …) and for an automation; 404 for a sequence not in reach.',
  scope: 'sequences:write',
  confirm: true,
  changes: ['sequences'],
  params: SchedulePath,
  body: ScheduleBody,
  response: Schedule,
  run: {
    statement: ({ sequenceId, ...body }) =>
      sql`select app_public.sequences_set_schedule(${sequenceId}::uuid, ${JSON.stringify(body)}::jsonb) as result`,
    shape: result,
  },
});

export const sequencesGetSchedule = defineOperation({
  ...common,
  operationId: 'sequences_get_schedule',
  method: 'GET',
  path: '/api/v1/sequences/{sequenceId}/schedule',
  summary: 'Read a broadcast\'s schedule and runs',
  description:
    'The schedule (kind, send_at or rrule/timezone/ends_on, status draft|scheduled|paused, next_fire_at) with a page of its '
    + 'runs, newest first (`page`, `limit`), and `runs_total`. Each run has its id, status (sending, completed, cancelled, '
    + 'failed) and counts: recipients, sent, skipped (opted out, suppressed, no consent or address at send time), failed, '
    + 'unknown (handed over as a worker died; never sent again), cancelled. 404 before a schedule is set.',
  scope: 'sequences:read',
  params: SchedulePath,
  query: RunsQuery,
  response: Schedule,
  run: {
    statement: ({ sequenceId, page, limit }) =>
      sql`select app_public.sequences_get_schedule(${sequenceId}::uuid, ${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});

export const sequencesStartSchedule = defineOperation({
  ...common,
  operationId: 'sequences_start_schedule',
  method: 'POST',
  path: '/api/v1/sequences/{sequenceId}/schedule/start',
  summary: 'Start a broadcast\'s schedule',
  description:
    'Schedules the broadcast: it sends to its audience at `next_fire_at` (and each later occurrence of a recurring rule), '
    + 'so confirm with the user. Answers the schedule with `status: scheduled` and `next_fire_at` (null when nothing is left '
    + 'to fire: ends_on passed, or a once schedule already sent). An inactive broadcast is activated. From `paused`, it '
    + 'goes on from the next occurrence after now. When something prevents sending, 400 `sequence_activation_blocked` '
    + 'with `blockers` (audience_missing, audience_archived, missing_sending_domain, empty_content, …). 404 before a '
    + 'schedule is set. Already scheduled: unchanged.',
  scope: 'sequences:write',
  confirm: true,
  changes: ['sequences'],
  params: SchedulePath,
  response: Schedule,
  run: {
    handler: async (tx, { input }) => {
      const [row] = await tx.query<{ result: StoredSchedule & { now: string; status: string; next_fire_at: string | null } }>(
        sql`select app_public.sequences_schedule_for_start(${input.sequenceId}::uuid) as result`);
      const stored = row!.result;
      const next = stored.status === 'scheduled' ? stored.next_fire_at : firstFireAt(stored, stored.now);
      const [started] = await tx.query<{ result: unknown }>(
        sql`select app_public.sequences_start_schedule(${input.sequenceId}::uuid, ${next === null ? null : new Date(next).toISOString()}::timestamptz) as result`);
      return started!.result as never;
    },
  },
});

export const sequencesPauseSchedule = defineOperation({
  ...common,
  operationId: 'sequences_pause_schedule',
  method: 'POST',
  path: '/api/v1/sequences/{sequenceId}/schedule/pause',
  summary: 'Pause a broadcast\'s schedule',
  description:
    'Stops later occurrences of a scheduled broadcast (`status: paused`, next_fire_at null); a run already sending goes on '
    + '(sequences_cancel_schedule_run stops it). sequences_start_schedule resumes from the next occurrence after now. A '
    + 'draft or paused schedule is answered unchanged. 404 before a schedule is set.',
  scope: 'sequences:write',
  changes: ['sequences'],
  params: SchedulePath,
  response: Schedule,
  run: {
    statement: ({ sequenceId }) => sql`select app_public.sequences_pause_schedule(${sequenceId}::uuid) as result`,
    shape: result,
  },
});

export const sequencesCancelScheduleRun = defineOperation({
  ...common,
  operationId: 'sequences_cancel_schedule_run',
  method: 'POST',
  path: '/api/v1/sequences/{sequenceId}/schedule/runs/{runId}/cancel',
  summary: 'Cancel a broadcast run',
  description:
    'Stops a run that is sending: its recipients not yet sent to get nothing (their enrollments cancelled); messages already '
    + 'with the transport are not recalled. Answers `{run_id, status: "cancelled", cancelled: N}` with the number stopped; '
    + 'a run already cancelled answers the same again. 409 `run_finished` for a run that has completed or failed; 404 for '
    + 'a run not of this broadcast. Confirm with the user.',
  scope: 'sequences:write',
  confirm: true,
  changes: ['sequences'],
  params: RunPath,
  response: CancelRunResult,
  run: {
    statement: ({ sequenceId, runId }) =>
      sql`select app_public.sequences_cancel_schedule_run(${sequenceId}::uuid, ${runId}::uuid) as result`,
    shape: result,
  },
});

export const broadcastOperations: AnyOperation[] = [
  sequencesSetSchedule,
  sequencesGetSchedule,
  sequencesStartSchedule,
  sequencesPauseSchedule,
  sequencesCancelScheduleRun,
];
