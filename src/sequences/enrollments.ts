// Reading enrollments: a sequence's and a contact's lists, one enrollment with its step runs and
// events, cancelling one, and a sequence's analytics. Each runs one SQL function
// of the same name (app_public.sequences_list_enrollments, …; db/schema/sequences.sql) under the
// caller's policies: an enrollment is visible with its sequence and its contact.
import { z } from 'zod';
import type { Config } from '../config.ts';
import { sql } from '../db/sql.ts';
import { emailDeliveryReported } from '../delivery/index.ts';
import { defineOperation, type AnyOperation } from '../registry/operation.ts';
import { Email, Page, paging, result, timestamp, uuid } from '../platform/schemas.ts';
import { Enrollment, EnrollmentStatus } from './enrollment-schema.ts';

const SequencePath = z.object({ sequenceId: uuid.describe('The sequence') });
const EnrollmentPath = SequencePath.extend({ enrollmentId: uuid.describe('The enrollment (from sequences_list_enrollments)') });
const ContactPath = z.object({ contactId: uuid.describe('The contact') });

const SequenceEnrollment = Enrollment.extend({
  next_send_at: timestamp.nullable().describe('Next send time: next_step_due_at, else next_run_at; null once ended'),
});

const ContactEnrollment = Enrollment.extend({
  sequence_name: z.string().describe('The name of the enrollment\'s sequence'),
  next_send_at: timestamp.nullable().describe('When the engine runs the next step (next_run_at); null once ended'),
});

const StepRun = z.object({
  step_key: z.string(),
  step_type: z.enum(['email', 'sms', 'wait']),
  status: z.enum(['sending', 'retrying', 'sent', 'skipped', 'failed', 'unknown', 'waited']).describe(
    'sending while the message is with the transport; retrying while the provider refuses it for now (reason: the last '
    + 'refusal; tried again for up to five days, the enrollment waiting on this step); sent; skipped (reason: suppressed, opted_out, no_consent, '
    + 'missing_address); failed; unknown (the service stopped between hand-off and record: never sent again); waited (a wait step)'),
  message_id: uuid.nullable(),
  reason: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const EnrollmentEventType = z.enum(['enrolled', 'sent', 'delivered', 'bounced', 'opened', 'clicked', 'replied',
  'auto_replied', 'skipped', 'failed', 'unknown', 'paused', 'resumed', 'completed', 'cancelled']);

const EnrollmentEvent = z.object({
  type: EnrollmentEventType,
  at: timestamp,
  step_key: z.string().optional(),
  message_id: uuid.optional(),
  reason: z.string().optional(),
});

const EnrollmentDetail = Enrollment.extend({
  step_runs: z.array(StepRun).describe('Each step the enrollment reached, in the order they started'),
  events: z.array(EnrollmentEvent).describe('What happened, in order of occurrence'),
});

export const sequencesListEnrollments = defineOperation({
  operationId: 'sequences_list_enrollments',
  method: 'GET',
  path: '/api/v1/sequences/{sequenceId}/enrollments',
  tag: 'Sequences',
  summary: 'List a sequence\'s enrollments',
  description:
    'One page of the contacts enrolled in the sequence, newest enrollment first, each with its status, the step it stands on '
    + 'and `next_send_at` (when the next step is due, else when the engine runs it; null once ended). Filter by `status`, '
    + 'and by contact with `contact_id` or `email` (case-insensitive; `email` wins when both are sent; an address no contact '
    + 'carries answers an empty page, not 404). A credential limited to some locations sees only its contacts\' enrollments. '
    + '404 for a sequence that is not the organization\'s or out of reach.',
  scope: 'sequences:read',
  memberAccess: 'deny',
  managerPower: 'sequences',
  params: SequencePath,
  query: z.object({
    ...paging,
    status: EnrollmentStatus.optional().describe('Only enrollments in this status'),
    contact_id: uuid.optional().describe('Only this contact\'s enrollments'),
    email: Email.optional().describe('Only the enrollments of the contact with this email (case-insensitive); wins over contact_id'),
  }),
  response: Page(SequenceEnrollment),
  run: {
    statement: ({ sequenceId, status, contact_id, email, page, limit }) =>
      sql`select app_public.sequences_list_enrollments(${sequenceId}::uuid, ${status ?? null}::text,
        ${contact_id ?? null}::uuid, ${email ?? null}::text, ${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});

export const sequencesGetEnrollment = defineOperation({
  operationId: 'sequences_get_enrollment',
  method: 'GET',
  path: '/api/v1/sequences/{sequenceId}/enrollments/{enrollmentId}',
  tag: 'Sequences',
  summary: 'Read one enrollment with its step runs and events',
  description:
    'The enrollment, its `step_runs` (each step it reached: sent, skipped with a reason, failed, unknown, waited) and its '
    + '`events` in order of occurrence (enrolled, sent, delivered, bounced, opened, clicked, replied, skipped, failed, unknown, '
    + 'paused, resumed, completed, cancelled; each `{type, at, step_key?, message_id?, reason?}`). Use it to see why a '
    + 'contact did or did not get a message. 404 when the enrollment is not of that sequence or out of reach.',
  scope: 'sequences:read',
  memberAccess: 'deny',
  managerPower: 'sequences',
  params: EnrollmentPath,
  response: EnrollmentDetail,
  run: {
    statement: ({ sequenceId, enrollmentId }) =>
      sql`select app_public.sequences_get_enrollment(${sequenceId}::uuid, ${enrollmentId}::uuid) as result`,
    shape: result,
  },
});

export const sequencesCancelEnrollment = defineOperation({
  operationId: 'sequences_cancel_enrollment',
  method: 'POST',
  path: '/api/v1/sequences/{sequenceId}/enrollments/{enrollmentId}/cancel',
  tag: 'Sequences',
  summary: 'Cancel one enrollment',
  description:
    'Stops the contact\'s way through the sequence: an active or paused enrollment becomes `cancelled` and nothing more is '
    + 'sent to the contact by it; this cannot be undone (enroll the contact again to restart from the first step). Confirm '
    + 'with the user first. An enrollment that has already ended (cancelled, completed or failed) is answered as it is and '
    + 'nothing changes, so a retry is safe. A manager may cancel only in sequences of its own locations (an '
    + 'organization-wide sequence: 403). 404 when the enrollment is not of that sequence or out of reach.',
  scope: 'sequences:write',
  memberAccess: 'deny',
  managerPower: 'sequences',
  confirm: true,
  changes: ['sequences'],
  params: EnrollmentPath,
  response: Enrollment,
  run: {
    statement: ({ sequenceId, enrollmentId }) =>
      sql`select app_public.sequences_cancel_enrollment(${sequenceId}::uuid, ${enrollmentId}::uuid) as result`,
    shape: result,
  },
});

export const contactsListEnrollments = defineOperation({
  operationId: 'contacts_list_enrollments',
  method: 'GET',
  path: '/api/v1/contacts/{contactId}/enrollments',
  tag: 'Contacts',
  summary: 'List a contact\'s enrollments',
  description:
    'One page of the sequences the contact is or was enrolled in, newest enrollment first, each with `sequence_name`, its '
    + 'status and `next_send_at` (when the engine next runs it; null once ended). Only sequences the credential can see are '
    + 'listed. 404 when the contact is not the organization\'s or out of reach.',
  scope: 'sequences:read',
  memberAccess: 'deny',
  managerPower: 'sequences',
  params: ContactPath,
  query: z.object(paging),
  response: Page(ContactEnrollment),
  run: {
    statement: ({ contactId, page, limit }) =>
      sql`select app_public.contacts_list_enrollments(${contactId}::uuid, ${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});

const StepCounts = z.object({
  step_key: z.string(),
  type: z.string().describe('email, sms or wait'),
  sent: z.int().describe('Messages of the step handed to the transport'),
  delivered: z.int().describe('Enrollments whose message of the step was reported delivered'),
  bounced: z.int(),
  opened: z.int(),
  clicked: z.int(),
  replied: z.int().describe('Enrollments that replied to the step\'s message'),
  skipped: z.int().describe('Not sent: suppressed, opted out, no consent or no address'),
  failed: z.int(),
  unknown: z.int().describe('The service stopped between hand-off and record: may or may not have gone out; never sent again'),
});

export const EmailDeliveryReporting = z.enum(['supported', 'unsupported', 'not_applicable']);

const Analytics = z.object({
  steps: z.array(StepCounts).describe('One entry per step, in the sequence\'s step order'),
  rollup: z.object({
    enrolled: z.int(), active: z.int(), paused: z.int(), completed: z.int(), cancelled: z.int(), failed: z.int(),
    sent: z.int(), delivered: z.int(), bounced: z.int(),
    replied: z.int().describe('Enrollments with at least one reply'),
  }),
  email_delivery_reporting: EmailDeliveryReporting.describe(
    'supported: delivery and bounce counts are real; unsupported: the email transport does not report delivery (zero means '
    + 'unknown); not_applicable: the sequence sends no email'),
});

/** Whether the email transport reports delivery: the sink does (every message delivered), a provider with its events webhook does; plain SMTP does not. */
export const emailDeliveryReporting = (config: Pick<Config, 'emailTransport'>): 'supported' | 'unsupported' =>
  (emailDeliveryReported(config.emailTransport) ? 'supported' : 'unsupported');

export const sequencesAnalytics = defineOperation({
  operationId: 'sequences_analytics',
  method: 'GET',
  path: '/api/v1/sequences/{sequenceId}/analytics',
  tag: 'Sequences',
  summary: 'A sequence\'s per-step counts and rollup',
  description:
    'Per step, in the sequence\'s order (wait steps too, with zeros): messages sent, skipped, failed and unknown, and '
    + 'enrollments whose message was delivered, bounced, opened, clicked or replied to. The rollup counts enrollments by '
    + 'status, messages sent, delivered and bounced, and enrollments that replied. Read `email_delivery_reporting` before '
    + 'trusting delivered and bounced: `unsupported` means the email transport does not report delivery, so zero means '
    + 'unknown. A credential limited to some locations counts only its contacts\' enrollments. 404 for a sequence out of reach.',
  scope: 'sequences:read',
  memberAccess: 'deny',
  managerPower: 'sequences',
  heavy: true,
  params: SequencePath,
  response: Analytics,
  run: {
    statement: ({ sequenceId }) => sql`select app_public.sequences_analytics(${sequenceId}::uuid) as result`,
    shape: (rows, ctx) => {
      const answer = result<z.input<typeof Analytics>>(rows);
      return { ...answer, email_delivery_reporting: answer.email_delivery_reporting ?? emailDeliveryReporting(ctx.config) };
    },
  },
});

// Routing order: the area's operations come after contacts', and no contacts route takes
// /contacts/{contactId}/enrollments; .../enrollments/{enrollmentId}/cancel and .../analytics are
// fixed tails no other sequences route matches.
export const enrollmentOperations: AnyOperation[] = [
  sequencesListEnrollments,
  sequencesGetEnrollment,
  sequencesCancelEnrollment,
  contactsListEnrollments,
  sequencesAnalytics,
];
