// The broadcasts suites' shared setup: audiences and broadcasts written as the owner, a schedule
// made due, the scheduler and the run jobs run in-process, and the broadcasts part of the
// malformed-input suite.
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { engineFixture } from '../sequences/engine-helpers.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { pick, type MalformedInput } from '../helpers/fuzz.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';
import type { Transports } from '../../src/delivery/index.ts';
import { insertSendSchedule } from '../sequences/helpers.ts';

/** The app with the engine's tenant (acme with a no-consent and a suppressed contact) and a default send window. */
export async function startBroadcastsApp(): Promise<{ app: TestApp; acme: Applied }> {
  const { app, tenant } = await startWithTenant(engineFixture());
  await insertSendSchedule(app.db, tenant.organization_id);
  return { app, acme: tenant };
}

/** A static audience of these contacts; its id. */
export async function insertAudience(db: TestDatabase, organizationId: string, contactIds: readonly string[], name = 'Newsletter'): Promise<string> {
  const { rows: [a] } = await db.owner.query(
    `insert into app_public.audiences (organization_id, name, kind) values ($1, $2, 'static') returning id`, [organizationId, name]);
  await db.owner.query(
    `insert into app_public.audience_members (organization_id, audience_id, contact_id) select $1, $2, unnest($3::uuid[])`,
    [organizationId, a.id, contactIds]);
  return a.id;
}

/** A broadcast (default: inactive, one email step) to this audience, written as the owner; its id. */
export async function insertBroadcast(db: TestDatabase, organizationId: string, audienceId: string | null, s: {
  name?: string; status?: 'inactive' | 'active'; steps?: unknown[]; location_id?: string | null; send_schedule_id?: string | null;
} = {}): Promise<string> {
  const { rows } = await db.owner.query(
    `insert into app_public.sequences (organization_id, kind, name, location_id, send_schedule_id, audience_id, steps, status)
     values ($1, 'broadcast', $2, $3, $4, $5, $6::jsonb, $7) returning id`,
    [organizationId, s.name ?? 'Spring news', s.location_id ?? null, s.send_schedule_id ?? null, audienceId,
      JSON.stringify(s.steps ?? [{ step_key: 'news', type: 'email', subject: 'News for {{contact.first_name|you}}', body: 'Hello {{contact.name}}' }]),
      s.status ?? 'inactive']);
  return rows[0].id;
}

/** Makes a scheduled broadcast due now, as if its next_fire_at had come (its scheduler job moved to now). */
export async function makeScheduleDue(db: TestDatabase, sequenceId: string): Promise<Date> {
  const { rows: [r] } = await db.owner.query(
    `update app_public.broadcast_schedules set next_fire_at = clock_timestamp() - interval '1 second'
      where sequence_id = $1 and status = 'scheduled' returning organization_id, next_fire_at`, [sequenceId]);
  await db.owner.query('select app_hidden.broadcast_queue_fire($1, $2)', [r.organization_id, sequenceId]);
  return r.next_fire_at;
}

/** Runs the due jobs (the scheduler, the runs) until none is left. */
export async function drainBroadcasts(db: TestDatabase, transports: Transports = sinkOnly): Promise<void> {
  await runJobs(db, transports);
}

export async function runsOf(db: TestDatabase, sequenceId: string) {
  return (await db.owner.query(`select * from app_public.broadcast_runs where sequence_id = $1 order by started_at, id`, [sequenceId])).rows;
}

export async function scheduleRow(db: TestDatabase, sequenceId: string) {
  return (await db.owner.query(`select * from app_public.broadcast_schedules where sequence_id = $1`, [sequenceId])).rows[0];
}

/** The outbox rows of a broadcast, by recipient. */
export async function outboxOf(db: TestDatabase, sequenceId: string) {
  return (await db.owner.query(`select recipient, subject, body, meta from app_private.outbox
     where meta->>'sequence_id' = $1 order by recipient`, [sequenceId])).rows;
}

export const schedulePath = (id: string, rest = '') => `/api/v1/sequences/${id}/schedule${rest}`;

/**
 * The broadcasts part of the malformed-input suite: in each tenant a send schedule, an audience,
 * broadcasts with and without a schedule (draft, scheduled), a run, and an automation; values for
 * the schedule fields that fit (and nearly fit) the grammar.
 */
const made = { broadcasts: [] as string[], scheduled: [] as string[], running: [] as string[], runs: [] as string[] };
let drawn = 'recurring';
const ownOrAny = (r: () => number, xs: string[], fallback: () => string) => (xs.length && r() < 0.8 ? pick(r, xs) : fallback());

export const malformedInput: MalformedInput = {
  async setup(app: TestApp, tenant) {
    const org = tenant.organization_id;
    const { rows } = await app.db.owner.query(`select 1 from app_public.send_schedules where organization_id = $1 and is_default`, [org]);
    if (!rows.length) await insertSendSchedule(app.db, org);
    const audience = await insertAudience(app.db, org, [tenant.ids.ann!, tenant.ids.bob!], 'Broadcast readers');
    const unscheduled = await insertBroadcast(app.db, org, audience, { name: 'Unscheduled' });
    const drafted = await insertBroadcast(app.db, org, audience, { name: 'Drafted' });
    await app.db.owner.query(`insert into app_public.broadcast_schedules (organization_id, sequence_id, schedule_kind, send_at)
      values ($1, $2, 'once', now() + interval '1 day')`, [org, drafted]);
    const running = await insertBroadcast(app.db, org, audience, { name: 'Running', status: 'active' });
    await app.db.owner.query(`insert into app_public.broadcast_schedules (organization_id, sequence_id, schedule_kind, rrule, timezone, status, next_fire_at)
      values ($1, $2, 'recurring', 'FREQ=DAILY;BYHOUR=9;BYMINUTE=0', 'America/New_York', 'scheduled', now() + interval '1 day')`, [org, running]);
    const { rows: [run] } = await app.db.owner.query(`insert into app_public.broadcast_runs (organization_id, sequence_id, fire_at)
      values ($1, $2, now()) returning id`, [org, running]);
    // the suite's requests go with the first tenant's keys: its records are the ones to name
    if (made.broadcasts.length) return;
    made.broadcasts.push(unscheduled, drafted, running);
    made.running.push(running);
    made.scheduled.push(drafted, running);
    made.runs.push(run.id);
  },
  // Near-valid bodies succeed only as a whole (once: send_at alone; recurring: rrule and timezone,
  // no send_at), so the values lean to one consistent body: recurring, a valid rule and zone, no
  // send_at; the schema's own draws and the odd bad value still cover the rest.
  values: {
    sequenceId: (r) => pick(r, made.broadcasts),
    'sequences_start_schedule.sequenceId': (r) => pick(r, made.scheduled),
    'sequences_cancel_schedule_run.sequenceId': (r) => pick(r, made.running),
    runId: (r, pools) => ownOrAny(r, made.runs, () => pick(r, [...pools.ids('broadcast_run').own, ...pools.ids('broadcast_run').other])),
    // drawn in the body's order (schedule_kind first): the others follow the kind drawn last
    schedule_kind: (r) => (drawn = r() < 0.97 ? pick(r, ['recurring', 'once', 'once', 'once']) : 'weekly'),
    send_at: (r) => (drawn === 'once' ? pick(r, ['2031-05-01T09:00:00-04:00', '2031-05-01T09:00:00Z', '2031-06-01T08:00:00+02:00', '2020-01-01T00:00:00Z'])
      : r() < 0.9 ? undefined : pick(r, ['2031-05-01T09:00:00', 'tomorrow'])),
    rrule: (r) => (drawn === 'once' ? undefined : r() < 0.9 ? pick(r, ['FREQ=DAILY;BYHOUR=9;BYMINUTE=0', 'RRULE:FREQ=WEEKLY;BYDAY=MO,TH',
      'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1', 'FREQ=MONTHLY;BYMONTHDAY=31'])
      : pick(r, ['FREQ=DAILY;COUNT=3', 'FREQ=YEARLY', 'FREQ=DAILY;INTERVAL=101', 'FREQ=DAILY;BYHOUR=9,10', 'FREQ=WEEKLY;BYDAY=1MO', ''])),
    timezone: (r) => (drawn === 'once' ? undefined : r() < 0.9 ? pick(r, ['America/New_York', 'Europe/Berlin', 'UTC'])
      : pick(r, ['Mars/Olympus', '+02:00', ''])),
    ends_on: (r) => (drawn === 'once' || r() < 0.5 ? undefined : pick(r, ['2031-12-31', '2031-12-31', '2020-01-01', '2031-02-30', 'never'])),
  },
  onceOnly: [],
};
