// Task `broadcast_fire`: fires every scheduled broadcast whose next_fire_at has come, each
// occurrence once. Queued for each schedule at its next_fire_at (job key
// broadcast_fire:<sequence id>) and each minute by cron (the safety net). Several workers may run
// it at the same moment: app_private.broadcast_fire locks the schedule, fires only while it still
// waits for that occurrence, and the run's unique (sequence, fire_at) stops a second run.
// The next occurrence is computed here with Temporal (occurrences.ts), after the later of the
// occurrence fired and now: occurrences missed while no worker ran are not sent late one by one.
// Each schedule fires on its own: one that fails is retried with backoff, shown on its schedule
// (`fire_retry`, app_private.broadcast_fire_failed), and delays no other.
// It also queues again the runs whose worker died (no progress for five minutes), whatever the fires did.
import type { Task } from 'graphile-worker';
import type pg from 'pg';
import { retryingConflicts } from '../db/request.ts';
import { nextOccurrence, parseRule } from './occurrences.ts';

export interface StoredSchedule {
  schedule_kind: 'once' | 'recurring';
  send_at: string | null;
  rrule: string | null;
  timezone: string | null;
  ends_on: string | null;
  anchor: string;
  /** The latest occurrence that fired, if any. */
  last_fire_at?: string | null;
}

/** The occurrence after `after` (an instant), or null: a once schedule has none after its send_at. */
export function nextFireAfter(s: StoredSchedule, after: Date | string): Date | null {
  if (s.schedule_kind === 'once') return null;
  return nextOccurrence({ rule: parseRule(s.rrule!), timezone: s.timezone!, anchor: s.anchor, endsOn: s.ends_on }, after);
}

/**
 * When a schedule started at `now` fires first: a once schedule at send_at unless it has fired
 * since it was set (then never); a recurring one at its next occurrence after now.
 */
export function firstFireAt(s: StoredSchedule, now: Date | string): Date | null {
  if (s.schedule_kind === 'once') return s.last_fire_at ? null : new Date(s.send_at!);
  return nextFireAfter(s, now);
}

interface Due extends StoredSchedule { organization_id: string; sequence_id: string; next_fire_at: Date; fire_text: string; now: Date }

/**
 * Fires what is due, `limit` schedules at a time; answers the runs started. Each schedule fires
 * in a transaction of its own (one statement): one that fails is recorded on its schedule with
 * its retry time (app_private.broadcast_fire_failed), passed by until then, and the others fire.
 */
export async function fireDue(client: pg.ClientBase, limit = 100, log: (line: string) => void = () => undefined): Promise<string[]> {
  const runs: string[] = [];
  const tried = new Set<string>();
  for (;;) {
    const { rows } = await client.query<Due>(
      `select b.organization_id, b.sequence_id, b.schedule_kind, b.send_at, b.rrule, b.timezone, b.ends_on::text as ends_on,
              b.anchor, b.next_fire_at, b.next_fire_at::text as fire_text, now() as now
         from app_public.broadcast_schedules b
        where b.status = 'scheduled' and b.next_fire_at <= now() and (b.fire_retry_at is null or b.fire_retry_at <= now())
        order by b.next_fire_at limit $1`, [limit]);
    // a schedule whose failure could not even be recorded (the database went away) comes back
    // here: tried once per sweep, the next sweep tries it again
    const fresh = rows.filter((due) => !tried.has(`${due.sequence_id}@${due.fire_text}`));
    for (const due of fresh) {
      tried.add(`${due.sequence_id}@${due.fire_text}`);
      try {
        const after = due.next_fire_at > due.now ? due.next_fire_at : due.now;
        const next = nextFireAfter(due, after);
        // fire_text: the stored instant to the microsecond, which a Date would round to the millisecond
        // A fire enrolls the audience while a cancel of the broadcast's last run may be ending its
        // enrollments: the two can deadlock on the live-enrollment index. The fire is one statement,
        // undone whole, so it is run again as the request paths run theirs.
        const { rows: [fired] } = await retryingConflicts(() => client.query<{ run: string | null }>(
          'select app_private.broadcast_fire($1, $2, $3, $4) as run', [due.organization_id, due.sequence_id, due.fire_text, next]));
        if (fired?.run) runs.push(fired.run);
      } catch (e) {
        // a refusal raised as the API's errors are: the code as the message, what to fix in the detail
        const { message, detail } = (e ?? {}) as { message?: string; detail?: string };
        const error = [message ?? String(e), detail].filter(Boolean).join(': ');
        const { rows: [failed] } = await client.query<{ retry_at: Date | null }>(
          'select app_private.broadcast_fire_failed($1, $2, $3, $4) as retry_at', [due.organization_id, due.sequence_id, due.fire_text, error])
          .catch(() => ({ rows: [{ retry_at: null }] }));
        log(`broadcast ${due.sequence_id} failed to fire (${error}); ${failed?.retry_at ? `tried again at ${failed.retry_at.toISOString()}` : 'left for the next sweep'}`);
      }
    }
    if (rows.length < limit || fresh.length === 0) return runs;
  }
}

export const broadcastFire: Task = async (_payload, helpers) => {
  try {
    const runs = await helpers.withPgClient((client) => fireDue(client, 100, (l) => helpers.logger.warn(l)));
    if (runs.length) helpers.logger.info(`broadcast_fire started ${runs.length} runs`);
  } finally {
    // runs whose worker died: a new job each (app_private.broadcast_requeue_stalled), whatever
    // became of the fires
    const { rows: [stalled] } = await helpers.query<{ n: number }>('select app_private.broadcast_requeue_stalled() as n');
    if (stalled?.n) helpers.logger.warn(`broadcast_fire queued ${stalled.n} stalled runs again`);
  }
};

/** Each minute: fire what is due (graphile-worker's crontab syntax). */
export const broadcastFireCron = '* * * * * broadcast_fire';
