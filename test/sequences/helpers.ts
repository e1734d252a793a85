// The sequences suites' shared setup: rows written straight as the owner, so a suite of one
// part of the area (the engine, the enrollment reads) does not depend on another part's
// operations to build its sequences. Each part's own helpers live in test/sequences/<part>-helpers.ts.
import type { TestDatabase } from '../helpers/db.ts';
import { authoringMalformedInput, composeMalformedInput } from './authoring-helpers.ts';
import { engineMalformedInput } from './engine-helpers.ts';
import { readsMalformedInput } from './reads-helpers.ts';

const ALWAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '00:00', end: '24:00' }));

/** A send schedule of the organization (default: any time, UTC, the default one); its id. */
export async function insertSendSchedule(db: TestDatabase, organizationId: string, s: {
  name?: string; timezone?: string; is_default?: boolean; windows?: unknown[];
} = {}): Promise<string> {
  const { rows } = await db.owner.query(
    `insert into app_public.send_schedules (organization_id, name, timezone, is_default, windows)
     values ($1, $2, $3, $4, $5::jsonb) returning id`,
    [organizationId, s.name ?? 'Any time', s.timezone ?? 'UTC', s.is_default ?? true, JSON.stringify(s.windows ?? ALWAYS)]);
  return rows[0].id;
}

export interface SequenceRow {
  kind?: 'automation' | 'broadcast';
  name?: string;
  location_id?: string | null;
  send_schedule_id?: string | null;
  audience_id?: string | null;
  trigger?: unknown;
  steps?: unknown[];
  edges?: unknown[];
  exit_conditions?: unknown[];
  status?: 'inactive' | 'active' | 'paused';
}

/** A sequence of the organization, as stored (default: an active manual automation, one email step now); its id. */
export async function insertSequence(db: TestDatabase, organizationId: string, s: SequenceRow = {}): Promise<string> {
  const status = s.status ?? 'active';
  const { rows } = await db.owner.query(
    `insert into app_public.sequences (organization_id, kind, name, location_id, send_schedule_id, audience_id, trigger,
       steps, edges, exit_conditions, status, paused_at)
     values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10::jsonb, $11, case when $11 = 'paused' then now() end)
     returning id`,
    [organizationId, s.kind ?? 'automation', s.name ?? 'Follow-up', s.location_id ?? null, s.send_schedule_id ?? null,
      s.audience_id ?? null,
      JSON.stringify(s.trigger === undefined ? (s.kind === 'broadcast' ? null : { type: 'manual' }) : s.trigger),
      JSON.stringify(s.steps ?? [{ step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Hi {{contact.first_name|there}}', body: 'Hello!' }]),
      JSON.stringify(s.edges ?? []), JSON.stringify(s.exit_conditions ?? []), status]);
  return rows[0].id;
}

// The area's part of the malformed-input suite: each part's pool, composed (add a part to the list).
export const malformedInput = composeMalformedInput(authoringMalformedInput, engineMalformedInput, readsMalformedInput);
