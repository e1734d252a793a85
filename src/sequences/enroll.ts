// sequences_enroll: one contact into an active automation, by id or by email. Its SQL
// (app_private.enroll_one) shares where an enrollment starts and what follows it with the set
// form events and broadcasts enroll through (app_private.enroll_contacts).
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { Email, result, uuid } from '../platform/schemas.ts';
import { Enrollment } from './enrollment-schema.ts';

export const SequencePath = z.object({ sequenceId: uuid.describe('The sequence\'s id') });

export const StepKey = z.string().min(1).max(100).meta({ examples: ['hello', 'nudge'] });

export const EnrollResult = z.object({
  status: z.enum(['enrolled', 'skipped']).describe('enrolled: a new enrollment; skipped: the contact is already in the sequence'),
  reason: z.enum(['already_enrolled']).optional().describe('Why it was skipped'),
  enrollment: Enrollment.describe('The new enrollment, or the existing one when skipped'),
});

export const sequencesEnroll = defineOperation({
  operationId: 'sequences_enroll',
  method: 'POST',
  path: '/api/v1/sequences/{sequenceId}/enrollments',
  tag: 'Sequences',
  summary: 'Enroll a contact in a sequence',
  description:
    'Puts one contact into an active automation; its first step (or `start_step_key`) is due after that step\'s delay and '
    + 'goes out in the sequence\'s send window. This sends messages to a person: ask the user first unless they asked for '
    + 'exactly this. Name the contact by exactly one of `contact_id` or `email` (case-insensitive, a contact of the '
    + 'organization). A contact already active or paused in the sequence is not enrolled twice: the answer is '
    + '`status: skipped`, `reason: already_enrolled` with the existing enrollment, so retrying is safe. '
    + '400 for neither or both identifiers, an unknown start step, or a broadcast (a broadcast takes its audience); '
    + '404 for an unknown sequence or contact; 409 `sequence_inactive`, `sequence_paused`, or `contact_not_at_location` '
    + '(a sequence of one location enrolls only contacts linked to it). A manager enrolls only in sequences of its own '
    + 'locations (an organization-wide sequence: 403).',
  scope: 'sequences:write',
  memberAccess: 'deny',
  managerPower: 'sequences',
  confirm: true,
  changes: ['sequences'],
  params: SequencePath,
  body: z.strictObject({
    contact_id: uuid.optional().describe('The contact to enroll (or send email instead)'),
    email: Email.optional().describe('The email of the contact to enroll, case-insensitive (or send contact_id instead)'),
    start_step_key: StepKey.optional().describe('The step_key to start at; default the first step'),
  }),
  response: EnrollResult,
  run: {
    statement: ({ sequenceId, contact_id, email, start_step_key }) => sql`select app_public.sequences_enroll(${sequenceId}::uuid,
      ${contact_id ?? null}::uuid, ${email ?? null}::text, ${start_step_key ?? null}::text) as result`,
    shape: result,
  },
});
