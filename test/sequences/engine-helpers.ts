// The engine suites' shared setup: a tenant (acme's, with consent and suppression cases),
// sequences written as the owner (test/sequences/helpers.ts), running due jobs, and reading what
// the engine wrote (enrollments, step runs, events, the outbox).
import type { TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';
import type { TestDatabase } from '../helpers/db.ts';
import type { Transports } from '../../src/delivery/index.ts';
import { pick, type MalformedInput } from '../helpers/fuzz.ts';

/** Acme with two more contacts: dee (no SMS consent) and eve (suppressed email, opted-out number). */
export function engineFixture(name = 'Acme Dental') {
  const f = acmeFixture(name);
  return {
    ...f,
    contacts: [
      ...f.contacts,
      { ref: 'dee', name: 'Dee Noconsent', email: 'dee@example.com', phone: '+15551230004', location_refs: ['north'] },
      { ref: 'eve', name: 'Eve Stopped', email: 'eve@example.com', phone: '+15551230005', location_refs: ['north'],
        email_suppressed: true, sms_opted_out: true },
    ],
  };
}

/** Runs every job due now (with the sink unless told otherwise), then again until nothing more is due. */
export async function drain(db: TestDatabase, transports: Transports = sinkOnly): Promise<void> {
  await runJobs(db, transports);
}

/**
 * Makes the step of these active enrollments (or all) due now, as if their time had come: their
 * next_run_at is now, and their jobs are there (a waiting job moved to now; the others added, as
 * the sweep adds a job once its step comes near).
 */
export async function makeDue(db: TestDatabase, enrollmentIds?: string[]): Promise<number> {
  const { rows } = await db.owner.query(
    `with due as (
       update app_public.enrollments e set next_run_at = now()
        where e.status = 'active' and e.current_step_key is not null and ($1::uuid[] is null or e.id = any($1::uuid[]))
       returning e.organization_id, e.id)
     select organization_id, array_agg(id) as ids from due group by organization_id`, [enrollmentIds ?? null]);
  let n = 0;
  for (const r of rows) {
    await db.owner.query('select app_private.schedule_enrollment_steps($1, $2::uuid[])', [r.organization_id, r.ids]);
    n += r.ids.length;
  }
  return n;
}

/** Runs the sweep as its cron line does (every organization), as of `until` (default now + its horizon). */
export async function sweep(db: TestDatabase, until?: Date | string): Promise<number> {
  const { rows: [{ n }] } = await db.owner.query('select app_private.sweep_enrollment_steps(null, $1::timestamptz) as n', [until ?? null]);
  return n;
}

export async function enrollment(db: TestDatabase, id: string) {
  const { rows: [row] } = await db.owner.query(`select * from app_public.enrollments where id = $1`, [id]);
  return row;
}

export async function enrollmentsOf(db: TestDatabase, sequenceId: string) {
  return (await db.owner.query(`select * from app_public.enrollments where sequence_id = $1 order by created_at, id`, [sequenceId])).rows;
}

export async function stepRuns(db: TestDatabase, enrollmentId: string) {
  return (await db.owner.query(`select step_key, step_type, status, reason, message_id from app_public.step_runs
     where enrollment_id = $1 order by created_at, step_key`, [enrollmentId])).rows;
}

export async function events(db: TestDatabase, enrollmentId: string) {
  return (await db.owner.query(`select type, step_key, reason, message_id from app_public.enrollment_events
     where enrollment_id = $1 order by id`, [enrollmentId])).rows;
}

export async function outbox(db: TestDatabase, organizationId: string) {
  return (await db.owner.query(`select id, channel, sender, recipient, subject, body, meta from app_private.outbox
     where organization_id = $1 order by created_at, id`, [organizationId])).rows;
}

/** The pending job of an enrollment, if any. */
export async function jobOf(db: TestDatabase, enrollmentId: string) {
  const { rows: [row] } = await db.owner.query(
    `select j.key, j.run_at, j.payload, j.locked_at from graphile_worker._private_jobs j
       join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'sequence_step' and j.payload->>'enrollment_id' = $1`, [enrollmentId]);
  return row;
}

/** Enrolls through the API with the organization key. */
export async function enroll(app: TestApp, key: string, sequenceId: string, body: Record<string, unknown>) {
  return app.request('POST', `/api/v1/sequences/${sequenceId}/enrollments`, { key, body });
}

/**
 * The engine's part of the malformed-input suite (composed into the area's by
 * test/sequences/helpers.ts): in each tenant a send schedule of its own and sequences in every state the
 * engine's operations tell apart (active with email, SMS and wait steps; one of the north
 * location; inactive; paused), and values of the fields that name their steps and recipients.
 */
export const engineMalformedInput: MalformedInput = {
  async setup(app, tenant) {
    // imported here: helpers.ts imports this file to compose the area's part
    const { insertSendSchedule, insertSequence } = await import('./helpers.ts');
    const org = tenant.organization_id;
    // the default schedule may come from another part: this one is named by the engine's sequences
    const schedule = await insertSendSchedule(app.db, org, { name: 'Engine hours', is_default: false });
    const steps = [{ step_key: 'hello', type: 'email', subject: 'Hi {{contact.first_name|there}}', body: 'Hello' },
                   { step_key: 'text', type: 'sms', body: 'Hey', delay: { hours: 1 } }, { step_key: 'hold', type: 'wait', delay: { days: 1 } }];
    await insertSequence(app.db, org, { name: 'Active', steps, send_schedule_id: schedule });
    await insertSequence(app.db, org, { name: 'North', steps, location_id: tenant.ids.north, send_schedule_id: schedule });
    await insertSequence(app.db, org, { name: 'Draft', steps, status: 'inactive', send_schedule_id: schedule });
    await insertSequence(app.db, org, { name: 'Held', steps, status: 'paused', send_schedule_id: schedule });
  },
  values: {
    step_key: (r) => pick(r, ['hello', 'hello', 'text', 'text', 'hold', 'nope']),
    start_step_key: (r) => pick(r, ['hello', 'text', 'hold', 'nope']),
    email: (r) => pick(r, ['ann@example.com', 'BOB@example.com', 'cy@example.com', 'nobody@example.com']),
    // sequences_test_step takes exactly one recipient: often none of these, so that one is left
    to_email: (r) => (r() < 0.6 ? undefined : pick(r, ['ann@example.com', 'author@acme.example'])),
    to_phone: (r) => (r() < 0.6 ? undefined : pick(r, ['+15551230001', '+1 555 999 0000'])),
  },
};
