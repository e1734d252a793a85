// The enrollment reads' suites: a tenant with sequences at each reach (organization-wide, North,
// South) and credentials of every kind around them, and enrollments, step runs and events
// written straight as the owner (the engine that writes them in production is another part).
import type { Applied } from '../../src/admin/fixture.ts';
import { acmeFixture, type Fixture } from '../helpers/fixtures.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { pick, type MalformedInput, type Pools, type Rand } from '../helpers/fuzz.ts';

/** acmeFixture plus managers with the sequences power at North and at South. */
export function readsFixture(name = 'Acme Dental'): Fixture {
  const base = acmeFixture(name);
  return {
    ...base,
    api_keys: [
      ...base.api_keys,
      { ref: 'north_seq_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['north'], powers: ['sequences'] },
      { ref: 'south_seq_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['south'], powers: ['sequences'] },
    ] as Fixture['api_keys'],
    contacts: [
      ...base.contacts,
      { ref: 'dee', name: 'Dee Both', email: 'Dee@Example.com', phone: '+15551230004', location_refs: ['north', 'south'] },
    ] as Fixture['contacts'],
  };
}

export interface EnrollmentRow {
  sequence_id: string;
  contact_id: string;
  status?: 'active' | 'paused' | 'completed' | 'cancelled' | 'failed';
  current_step_index?: number | null;
  current_step_key?: string | null;
  next_step_due_at?: string | null;
  next_run_at?: string | null;
  end_reason?: string | null;
  source?: string;
  created_at?: string;
}

/** An enrollment as stored (default: active, on step 0 `hello`, due now); its id. */
export async function insertEnrollment(db: TestDatabase, organizationId: string, e: EnrollmentRow): Promise<string> {
  const status = e.status ?? 'active';
  const live = status === 'active' || status === 'paused';
  const { rows } = await db.owner.query(
    `insert into app_public.enrollments (organization_id, sequence_id, contact_id, status, current_step_index, current_step_key,
       next_step_due_at, next_run_at, paused_at, end_reason, source, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, case when $4 = 'paused' then now() end, $9, $10, coalesce($11::timestamptz, now()),
       coalesce($11::timestamptz, now()))
     returning id`,
    [organizationId, e.sequence_id, e.contact_id, status,
      e.current_step_index !== undefined ? e.current_step_index : (live ? 0 : null),
      e.current_step_key !== undefined ? e.current_step_key : (live ? 'hello' : null),
      e.next_step_due_at !== undefined ? e.next_step_due_at : (live ? '2030-01-01T10:00:00Z' : null),
      e.next_run_at !== undefined ? e.next_run_at : (live ? '2030-01-01T10:05:00Z' : null),
      e.end_reason ?? (live ? null : status), e.source ?? 'manual', e.created_at ?? null]);
  return rows[0].id;
}

export interface StepRunRow {
  step_key: string;
  step_type?: 'email' | 'sms' | 'wait';
  status: 'sending' | 'sent' | 'skipped' | 'failed' | 'unknown' | 'waited';
  message_id?: string | null;
  reason?: string | null;
  created_at?: string;
}

/** A step run of an enrollment, as the engine writes it; its id. */
export async function insertStepRun(db: TestDatabase, organizationId: string, enrollmentId: string, r: StepRunRow): Promise<string> {
  const { rows } = await db.owner.query(
    `insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id, reason, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, coalesce($8::timestamptz, now()), coalesce($8::timestamptz, now())) returning id`,
    [organizationId, enrollmentId, r.step_key, r.step_type ?? 'email', r.status, r.message_id ?? null, r.reason ?? null, r.created_at ?? null]);
  return rows[0].id;
}

export interface EventRow { type: string; at?: string; step_key?: string | null; message_id?: string | null; reason?: string | null }

/** Events of an enrollment, in the order given (the order of occurrence). */
export async function insertEvents(db: TestDatabase, organizationId: string, enrollmentId: string, events: readonly EventRow[]): Promise<void> {
  for (const v of events) {
    await db.owner.query(
      `insert into app_public.enrollment_events (organization_id, enrollment_id, type, at, step_key, message_id, reason)
       values ($1, $2, $3, coalesce($4::timestamptz, now()), $5, $6, $7)`,
      [organizationId, enrollmentId, v.type, v.at ?? null, v.step_key ?? null, v.message_id ?? null, v.reason ?? null]);
  }
}

export interface ReadsData { schedule: string; orgWide: string; north: string; south: string; enrollments: Record<string, string> }

/**
 * Three sequences (organization-wide, North, South) and an enrollment of each fixture contact in
 * each: ann (North), bob (South), cy (no location), dee (both). Enrollment names: `<sequence>.<contact>`.
 */
export async function seedReads(db: TestDatabase, tenant: Applied): Promise<ReadsData> {
  // imported when called: helpers.ts composes this file's malformedInput part, so a static import would be a cycle
  const { insertSendSchedule, insertSequence } = await import('./helpers.ts');
  const org = tenant.organization_id;
  // the organization's default send schedule (another part's fixture may have made it)
  const existing = await db.owner.query(`select id from app_public.send_schedules where organization_id = $1 and is_default`, [org]);
  const schedule: string = existing.rows[0]?.id ?? await insertSendSchedule(db, org);
  const steps = [
    { step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Hi', body: 'Hello' },
    { step_key: 'pause', type: 'wait', delay: { days: 1 } },
    { step_key: 'nudge', type: 'sms', delay: { days: 2 }, body: 'Still there?' },
  ];
  const orgWide = await insertSequence(db, org, { name: 'Everyone', steps });
  const north = await insertSequence(db, org, { name: 'North follow-up', location_id: tenant.ids.north!, steps });
  const south = await insertSequence(db, org, { name: 'South follow-up', location_id: tenant.ids.south!, steps });
  const enrollments: Record<string, string> = {};
  let minute = 0;
  for (const [name, id] of Object.entries({ orgWide, north, south })) {
    for (const c of ['ann', 'bob', 'cy', 'dee'].filter((ref) => tenant.ids[ref])) {
      minute++;
      enrollments[`${name}.${c}`] = await insertEnrollment(db, org, {
        sequence_id: id, contact_id: tenant.ids[c]!, created_at: `2026-01-01T10:${String(minute).padStart(2, '0')}:00Z` });
    }
  }
  return { schedule, orgWide, north, south, enrollments };
}

// The malformed-input suite: sequences and enrollments in each tenant, so that ids of both
// organizations land in the pools. An enrollment is found only with its own sequence, and the
// suite draws sequenceId and enrollmentId apart: for the two operations that take both, the
// sequenceId value names one of these sequences more often than not, and enrollmentId (drawn
// right after it, in path order) one of its enrollments. The sequences are drafts and only
// North's enrollments are live, so that the other parts' operations on them can succeed too.
const seeded = new Map<string, string[]>();
let lastSequence: string | undefined;
let turn = 0;
const pairedSequence = (r: Rand, pools: Pools): string => {
  const ours = [...seeded.keys()].filter((id) => pools.ids('sequenceId').own.includes(id));
  lastSequence = ours.length && r() < 0.7 ? pick(r, ours) : undefined;
  return lastSequence ?? pick(r, [...pools.ids('sequenceId').own, ...pools.ids('sequenceId').other]);
};
export const readsMalformedInput: MalformedInput = {
  fixture: (base) => ({
    ...base,
    api_keys: [...base.api_keys, ...readsFixture().api_keys.filter((k) => !base.api_keys.some((b) => b.ref === k.ref))],
  }),
  async setup(app, tenant) {
    const d = await seedReads(app.db, tenant);
    await app.db.owner.query(`update app_public.sequences set status = 'inactive', paused_at = null where id = any($1::uuid[])`,
      [[d.orgWide, d.north, d.south]]);
    await app.db.owner.query(`update app_public.enrollments set status = 'completed', end_reason = 'exit_condition',
        current_step_index = null, current_step_key = null, next_step_due_at = null, next_run_at = null, paused_at = null
      where organization_id = $1 and sequence_id <> $2`, [tenant.organization_id, d.north]);
    for (const [name, enrollmentId] of Object.entries(d.enrollments)) {
      const sequenceId = d[name.split('.')[0] as 'orgWide' | 'north' | 'south'];
      seeded.set(sequenceId, [...(seeded.get(sequenceId) ?? []), enrollmentId]);
    }
  },
  values: {
    'sequences_list_enrollments.status': (r) => pick(r, ['active', 'paused', 'completed', 'cancelled', 'failed']),
    'sequences_list_enrollments.email': (r) => pick(r, ['ann@example.com', 'ANN@EXAMPLE.COM', 'dee@example.com', 'nobody@example.com']),
    'sequences_get_enrollment.sequenceId': pairedSequence,
    'sequences_cancel_enrollment.sequenceId': pairedSequence,
    enrollmentId: (r, pools) => {
      const ofSequence = lastSequence ? seeded.get(lastSequence)! : [];
      return ofSequence.length ? ofSequence[turn++ % ofSequence.length]! : pick(r, pools.ids('enrollmentId').own);
    },
  },
};
