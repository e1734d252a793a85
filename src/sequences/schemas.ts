// The authored sequence: its record, steps, edges, conditions, triggers and exit conditions, and
// the discovery answers (docs/sequences-authoring.md). zod checks the structure and the limits
// so REST, OpenAPI and MCP name them; the database decides what depends on data (trigger and exit
// types are rows, custom fields, stages, audiences, send schedules, the steps enrollments stand on)
// and checks everything again (app_hidden.sequence_check_*, db/schema/sequences.sql).
import { z } from 'zod';
import { RULE_OPS } from '../audiences/schemas.ts';
import { timestamp, uuid } from '../platform/schemas.ts';

export const SequencePath = z.object({ sequenceId: uuid.describe('The sequence\'s id') });

/** The limits of a definition; app_hidden.sequence_limits() holds the same numbers and sequences_capabilities shows them. */
export const LIMITS = {
  name: 200,
  steps: 50,
  edges: 200,
  exitConditions: 20,
  subject: 300,
  emailBody: 50_000,
  smsBody: 1_600,
  delay: { minutes: 525_600, hours: 8_760, days: 365 },
} as const;

export const STEP_KEY = /^[A-Za-z0-9_-]{1,50}$/;
export const StepKey = z.string().regex(STEP_KEY, '1 to 50 letters, digits, _ or -')
  .describe('Names the step; unique in the sequence; edges and enrollments refer to it')
  .meta({ examples: ['hello', 'nudge', 'wait_2d'] });

export const SequenceName = z.string().trim().min(1).max(LIMITS.name).meta({ examples: ['Abandoned assessment follow-up'] });
export const SequenceKind = z.enum(['automation', 'broadcast']);
export const SequenceStatus = z.enum(['inactive', 'active', 'paused']);

const count = (unit: keyof typeof LIMITS.delay) => z.int().min(0).max(LIMITS.delay[unit]);
export const Delay = z.union([
  z.strictObject({ minutes: count('minutes') }),
  z.strictObject({ hours: count('hours') }),
  z.strictObject({ days: count('days') }),
]).describe(`One unit: {"minutes": n} (up to ${LIMITS.delay.minutes}), {"hours": n} (up to ${LIMITS.delay.hours}) or `
  + `{"days": n} (up to ${LIMITS.delay.days}); counted from the previous step's send (from enrollment for the first `
  + 'step), then moved forward into the send window. Default {"minutes": 0}')
  .meta({ examples: [{ minutes: 0 }, { days: 2 }, { hours: 4 }] });

export const Step = z.strictObject({
  step_key: StepKey,
  type: z.enum(['email', 'sms', 'wait']).describe('email (subject, body), sms (body) or wait (only a delay)'),
  delay: Delay.optional(),
  subject: z.string().max(LIMITS.subject).nullable().optional()
    .describe('Email steps only; {{variable}} placeholders (sequences_list_variables). Needed to activate')
    .meta({ examples: ['Hi {{contact.first_name|there}}'] }),
  body: z.string().max(LIMITS.emailBody).nullable().optional()
    .describe(`Email (HTML, up to ${LIMITS.emailBody} characters; variable values are HTML-escaped) and SMS (up to `
      + `${LIMITS.smsBody}) steps; {{variable}} or {{variable|default}} placeholders. Needed to activate`)
    .meta({ examples: ['You left before finishing. Reply STOP to opt out.'] }),
}).superRefine((s, ctx) => {
  if (s.type !== 'email' && s.subject != null) ctx.addIssue({ code: 'custom', path: ['subject'], message: 'only an email step has a subject' });
  if (s.type === 'wait' && s.body != null) ctx.addIssue({ code: 'custom', path: ['body'], message: 'a wait step has no body (only a delay)' });
  if (s.type === 'sms' && s.body != null && s.body.length > LIMITS.smsBody) {
    ctx.addIssue({ code: 'custom', path: ['body'], message: `an SMS body has at most ${LIMITS.smsBody} characters` });
  }
});

const Scalar = z.union([z.string().max(1000), z.number(), z.boolean()]);
export const Condition = z.strictObject({
  field: z.string().min(1).max(200)
    .describe('A contact field of sequences_get_condition_vocabulary (display_name, email, total_calls, stage_id, '
      + 'field_values.<key>, …) or an event of the enrollment: event.replied, event.clicked, event.opened')
    .meta({ examples: ['event.replied', 'email', 'total_calls', 'field_values.plan'] }),
  op: z.enum(RULE_OPS).describe('The audience rules\' ops; event fields take exists and not_exists'),
  value: z.union([Scalar, z.array(Scalar).min(1).max(500)]).optional()
    .describe('Omitted for exists and not_exists; a list for in, not_in and contains_any')
    .meta({ examples: ['gold', 3, ['a@example.com', 'b@example.com']] }),
}).describe('{field, op, value?}: one rule over the contact or the enrollment\'s events')
  .meta({ examples: [{ field: 'event.replied', op: 'exists' }, { field: 'total_calls', op: 'gte', value: 2 }] });

export const Edge = z.strictObject({
  from: StepKey,
  to: StepKey,
  condition: Condition.nullable().optional().describe('null (or absent): always followed'),
}).describe('After step `from`, the first edge whose condition holds leads to `to`; no edge ends the enrollment');

export const Trigger = z.looseObject({
  type: z.string().min(1).max(50).describe('A type of sequences_list_triggers (manual, event, tag_added, …)'),
}).describe('How contacts enter an automation: {type, …the fields sequences_list_triggers gives for that type}')
  .meta({ examples: [{ type: 'manual' }, { type: 'event', event: 'assessment_abandoned', assessmentAudience: 'started' },
    { type: 'tag_added', tag: 'vip' }] });

export const ExitCondition = z.looseObject({
  type: z.string().min(1).max(50).describe('A type of sequences_get_condition_vocabulary\'s exit_conditions'),
}).describe('Ends the enrollment (completed) as soon as it holds: {type: replied|tag_added|stage_changed|condition, …}')
  .meta({ examples: [{ type: 'replied' }, { type: 'tag_added', tag: 'booked' }, { type: 'condition',
    condition: { field: 'event.clicked', op: 'exists' } }] });

export const AudienceRef = z.union([z.strictObject({ id: uuid }), uuid])
  .describe('A broadcast\'s audience: {"id": "<audience id>"} or the id');

export const Sequence = z.object({
  id: uuid,
  kind: SequenceKind.describe('automation (contacts enter by its trigger) or broadcast (its audience, when its schedule fires); fixed at create'),
  status: SequenceStatus.describe('inactive (draft, nothing sends), active, paused (every enrollment held)'),
  is_active: z.boolean().describe('status is active or paused'),
  name: z.string(),
  location_id: uuid.nullable().describe('The location it belongs to; null: the whole organization'),
  send_schedule_id: uuid.nullable().describe('null: the organization\'s default send schedule'),
  trigger: Trigger.nullable(),
  steps: z.array(Step),
  edges: z.array(Edge),
  exit_conditions: z.array(ExitCondition),
  audience: z.object({ id: uuid }).nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

const fields = {
  location_id: uuid.nullable().optional()
    .describe('The location it belongs to (null: the whole organization). A MANAGER sends one of its own locations'),
  send_schedule_id: uuid.nullable().optional().describe('A schedule of sequences_list_send_schedules; null: the default one'),
  audience: AudienceRef.nullable().optional().describe('Broadcasts only: {"id": "<audience id>"} (404 when unknown)'),
  trigger: Trigger.nullable().optional().describe('Automations only: a trigger of sequences_list_triggers'),
  steps: z.array(Step).max(LIMITS.steps).optional()
    .describe(`The steps in order (at most ${LIMITS.steps}); step_key unique`),
  edges: z.array(Edge).max(LIMITS.edges).optional()
    .describe('Empty: the steps run in list order. Otherwise [{from, to, condition}] between step_keys'),
  exit_conditions: z.array(ExitCondition).max(LIMITS.exitConditions).optional()
    .describe(`At most ${LIMITS.exitConditions}; ends an enrollment as soon as one holds`),
};

export const CreateBody = z.strictObject({
  name: SequenceName,
  kind: SequenceKind.optional().describe('automation (default) or broadcast; fixed once created'),
  ...fields,
  is_active: z.boolean().optional().describe('Only false is accepted: a sequence is created inactive (activate it with sequences_activate)'),
});

export const UpdateBody = z.strictObject({
  name: SequenceName.optional(),
  kind: SequenceKind.optional().describe('Only the sequence\'s own kind is accepted: the kind cannot change'),
  ...fields,
  steps: fields.steps.describe('Replaces the whole list (send every step to keep); a step_key live enrollments stand on must stay'),
  edges: fields.edges.describe('Replaces the whole list'),
  exit_conditions: fields.exit_conditions.describe('Replaces the whole list'),
  is_active: z.boolean().optional()
    .describe('false: deactivates and cancels every live enrollment (resume cannot undo it); true: activates, as sequences_activate'),
}).refine((b) => Object.keys(b).length > 0, 'send at least one field to change');

// ---------------------------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------------------------
export const FieldSpec = z.object({
  type: z.enum(['string', 'uuid', 'enum', 'condition']),
  required: z.boolean().optional(),
  max_length: z.int().optional(),
  pattern: z.string().optional(),
  values: z.array(z.string()).optional(),
  only_when: z.record(z.string(), z.string()).optional().describe('Accepted only when these other fields have these values'),
  description: z.string().optional(),
});

const TypeWithFields = z.object({
  type: z.string(),
  description: z.string(),
  fields: z.record(z.string(), FieldSpec).describe('The fields this type takes besides `type`'),
});

export const TriggerList = z.object({ items: z.array(TypeWithFields) });

export const VariableList = z.object({
  items: z.array(z.object({ name: z.string(), description: z.string(), example: z.string() })),
});

export const Capabilities = z.object({
  kinds: z.array(SequenceKind),
  step_types: z.array(z.object({ type: z.enum(['email', 'sms', 'wait']), fields: z.array(z.string()), description: z.string() })),
  delay: z.object({
    units: z.array(z.enum(['minutes', 'hours', 'days'])),
    min: z.int(),
    max: z.object({ minutes: z.int(), hours: z.int(), days: z.int() }),
    description: z.string(),
  }),
  limits: z.object({
    name_max_length: z.int(),
    steps_per_sequence: z.int(),
    edges_per_sequence: z.int(),
    exit_conditions_per_sequence: z.int(),
    step_key_pattern: z.string(),
    subject_max_length: z.int(),
    email_body_max_length: z.int(),
    sms_body_max_length: z.int(),
  }),
  trigger_types: z.array(z.string()),
  exit_condition_types: z.array(z.string()),
  activation_blockers: z.array(z.string()),
  template: z.object({ placeholder: z.string(), with_default: z.string(), description: z.string() }),
});

export const ConditionVocabulary = z.object({
  shape: z.object({ field: z.string(), op: z.string(), value: z.string() }),
  ops: z.array(z.enum(RULE_OPS)),
  contact_fields: z.array(z.object({ field: z.string(), kind: z.string(), description: z.string(), ops: z.array(z.enum(RULE_OPS)) })),
  custom_fields: z.array(z.object({ field: z.string(), kind: z.string(), label: z.string() })),
  event_fields: z.array(z.object({ field: z.string(), description: z.string(), ops: z.array(z.enum(RULE_OPS)) })),
  exit_conditions: z.array(TypeWithFields),
  notes: z.string(),
});

export const SendWindow = z.object({
  day: z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']),
  start: z.string().describe('HH:MM, local to the schedule\'s time zone'),
  end: z.string().describe('HH:MM or 24:00'),
});

export const SendSchedule = z.object({
  id: uuid,
  name: z.string(),
  timezone: z.string().describe('IANA time zone'),
  is_default: z.boolean().describe('Used by sequences that name no send schedule'),
  windows: z.array(SendWindow),
  created_at: timestamp,
  updated_at: timestamp,
});
