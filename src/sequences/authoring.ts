// Writing sequences: create, read, update, activate, pause, resume, duplicate, and the discovery
// operations an agent authors from. Each runs one SQL function (app_public.sequences_*, with
// the app_hidden.sequence_check_* helpers; db/schema/sequences.sql), which checks the definition
// and the credential's reach; the transitions move the enrollments in the same transaction.
import { z } from 'zod';
import { sql, type Sql } from '../db/sql.ts';
import { defineOperation, type AnyOperation } from '../registry/operation.ts';
import { result } from '../platform/schemas.ts';
import { discoveryOperations } from './discovery.ts';
import { sequencesFixture as fixture } from './fixture.ts';
import { CreateBody, Sequence, SequencePath, UpdateBody } from './schemas.ts';

const common = { tag: 'Sequences', managerPower: 'sequences' as const };

export const sequencesList = defineOperation({
  ...common,
  operationId: 'sequences_list',
  method: 'GET',
  path: '/api/v1/sequences',
  summary: 'List sequences',
  description:
    'Lists the sequences (automations and broadcasts) in reach, newest first, as an array: the organization-wide ones '
    + 'and those of the credential\'s locations. Each item is the full record (steps, edges, exit conditions, trigger, status).',
  scope: 'sequences:read',
  memberAccess: 'open',
  managerPower: null,
  response: z.array(Sequence),
  run: { statement: () => sql`select app_public.sequences_list() as result`, shape: result },
});

export const sequencesCreate = defineOperation({
  ...common,
  operationId: 'sequences_create',
  method: 'POST',
  path: '/api/v1/sequences',
  summary: 'Create a sequence (inactive draft)',
  description:
    'Creates an inactive draft: nothing sends until sequences_activate. `kind` (automation, the default, or broadcast) '
    + 'is fixed here. An automation has a `trigger` (sequences_list_triggers); a broadcast has an `audience` and no '
    + 'trigger. Steps (email, sms, wait) take `{{variable}}` placeholders (sequences_list_variables); edges and exit '
    + 'conditions use sequences_get_condition_vocabulary; sequences_capabilities gives the limits. `is_active: true` is '
    + 'a 400; an unknown audience, location or send schedule is a 404. A MANAGER must send `location_id`, one of its '
    + 'own locations. Send an `idempotency_key` to make a retry safe. Answers 201 with the sequence.',
  scope: 'sequences:write',
  memberAccess: 'deny',
  changes: ['sequences'],
  idempotent: true,
  successStatus: 201,
  body: CreateBody,
  response: Sequence,
  run: {
    statement: (input) => {
      // the registry's idempotency_key is not part of the sequence
      const { idempotency_key: _key, ...body } = input as typeof input & { idempotency_key?: string };
      return sql`select app_public.sequences_create(${JSON.stringify(body)}::jsonb) as result`;
    },
    shape: result,
  },
});

export const sequencesGet = defineOperation({
  ...common,
  operationId: 'sequences_get',
  method: 'GET',
  path: '/api/v1/sequences/{sequenceId}',
  summary: 'Read a sequence',
  description: 'Returns one sequence with its kind, status, trigger, steps, edges and exit conditions. 404 when it is not '
    + 'in reach (another organization, or another location than the credential\'s).',
  scope: 'sequences:read',
  memberAccess: 'open',
  managerPower: null,
  params: SequencePath,
  response: Sequence,
  run: { statement: ({ sequenceId }) => sql`select app_public.sequences_get(${sequenceId}::uuid) as result`, shape: result },
});

export const sequencesUpdate = defineOperation({
  ...common,
  operationId: 'sequences_update',
  method: 'PATCH',
  path: '/api/v1/sequences/{sequenceId}',
  summary: 'Change a sequence; deactivate it',
  description:
    'Changes only the fields sent. `steps`, `edges` and `exit_conditions` each replace the whole list (read the '
    + 'sequence, change it, send the list back); a step that live enrollments stand on must keep its step_key (400 '
    + 'naming it). `kind` cannot change. On an active or paused sequence, a change that would block activation is '
    + 'refused with the blockers. `is_active: false` deactivates the sequence and cancels every live enrollment, which '
    + 'sequences_resume cannot undo: ask the user first. `is_active: true` activates as sequences_activate does.',
  scope: 'sequences:write',
  memberAccess: 'deny',
  confirm: true,
  changes: ['sequences'],
  params: SequencePath,
  body: UpdateBody,
  response: Sequence,
  run: {
    statement: ({ sequenceId, ...patch }) =>
      sql`select app_public.sequences_update(${sequenceId}::uuid, ${JSON.stringify(patch)}::jsonb) as result`,
    shape: result,
  },
});

const transition = (operationId: string, path: string, statement: (id: string) => Sql, summary: string,
  description: string, flags: { confirm: boolean; successStatus?: number }) =>
  defineOperation({
    ...common,
    operationId,
    method: 'POST',
    path: `/api/v1/sequences/{sequenceId}/${path}`,
    summary,
    description,
    scope: 'sequences:write',
    memberAccess: 'deny',
    ...flags,
    changes: ['sequences'],
    params: SequencePath,
    response: Sequence,
    run: { statement: ({ sequenceId }) => statement(sequenceId), shape: result },
  });

export const sequencesActivate = transition('sequences_activate', 'activate',
  (id) => sql`select app_public.sequences_activate(${id}::uuid) as result`, 'Activate a sequence',
  'Makes an inactive sequence active: its trigger starts enrolling contacts and messages may go out, so confirm with '
  + 'the user. When something prevents sending, answers 400 `sequence_activation_blocked` with `blockers` '
  + '[{code, message, step_key?}] listing every reason at once (no_steps, missing_sending_domain, missing_sms_number, '
  + 'empty_content, unknown_variable, unknown_step_key, no_send_schedule, audience_missing, audience_archived, '
  + 'trigger_missing). An active sequence stays as it is; a paused one is 409 sequence_paused (use sequences_resume). '
  + 'Activating a broadcast does not start sending: its schedule does.', { confirm: true });

export const sequencesPause = transition('sequences_pause', 'pause',
  (id) => sql`select app_public.sequences_pause(${id}::uuid) as result`, 'Pause an automation',
  'Holds every enrollment of an active automation (each shown as paused; nothing sends) until sequences_resume. A '
  + 'broadcast answers 400 (pause its schedule instead); an inactive sequence 409 sequence_inactive; a paused one stays '
  + 'as it is.', { confirm: false });

export const sequencesResume = transition('sequences_resume', 'resume',
  (id) => sql`select app_public.sequences_resume(${id}::uuid) as result`, 'Resume a paused sequence',
  'Continues a paused sequence: each enrollment goes on from its current step with the same spacing, its due time '
  + 'moved forward by the time it was held, so messages may go out at once: confirm with the user. A sequence that is '
  + 'not paused answers 409 sequence_not_paused and nothing changes. Enrollments cancelled by deactivation stay cancelled.',
  { confirm: true });

export const sequencesDuplicate = transition('sequences_duplicate', 'duplicate',
  (id) => sql`select app_public.sequences_duplicate(${id}::uuid) as result`, 'Duplicate a sequence',
  'Makes an inactive copy named "<name> (copy)" with the same kind, location, trigger, steps, edges, exit conditions, '
  + 'send schedule and audience, to edit and activate separately. No enrollment is copied. Answers 201 with the copy.',
  { confirm: false, successStatus: 201 });

export const authoringOperations: AnyOperation[] = [
  // the fixed paths (/sequences/capabilities, …) before /sequences/{sequenceId}
  ...discoveryOperations,
  sequencesList,
  sequencesCreate,
  sequencesGet,
  sequencesUpdate,
  sequencesActivate,
  sequencesPause,
  sequencesResume,
  sequencesDuplicate,
];
export const sequencesFixture = fixture;
