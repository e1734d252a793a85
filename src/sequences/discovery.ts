// Discovery: what a sequence may hold, answered from the same SQL the checks read (trigger and
// exit types are rows, the variables a function, the limits one function), so an agent can author
// a sequence from these answers alone and the service accepts exactly what they offer.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { Page, paging, result } from '../platform/schemas.ts';
import { Capabilities, ConditionVocabulary, SendSchedule, TriggerList, VariableList } from './schemas.ts';

const read = { tag: 'Sequences', scope: 'sequences:read' as const, memberAccess: 'open' as const, managerPower: null, method: 'GET' as const };

export const sequencesCapabilities = defineOperation({
  ...read,
  operationId: 'sequences_capabilities',
  path: '/api/v1/sequences/capabilities',
  summary: 'What a sequence may hold',
  description:
    'The kinds, step types (email, sms, wait) with their fields, delay units and bounds, the limits (steps per sequence, '
    + 'body lengths, step_key format), the trigger and exit-condition types accepted now, the activation blocker codes '
    + 'and the placeholder syntax. Read it before authoring a sequence.',
  response: Capabilities,
  run: { statement: () => sql`select app_public.sequences_capabilities() as result`, shape: result },
});

export const sequencesListTriggers = defineOperation({
  ...read,
  operationId: 'sequences_list_triggers',
  path: '/api/v1/sequences/triggers',
  summary: 'Trigger types',
  description:
    'The trigger types an automation accepts now, each with the fields it takes (type, required, pattern, values, and '
    + 'only_when for a field allowed only with another\'s value, such as assessmentAudience with event '
    + 'assessment_abandoned). A trigger is {"type": …, …those fields}. Types of areas not live yet are not listed and not accepted.',
  response: TriggerList,
  run: { statement: () => sql`select app_public.sequences_list_triggers() as result`, shape: result },
});

export const sequencesListVariables = defineOperation({
  ...read,
  operationId: 'sequences_list_variables',
  path: '/api/v1/sequences/variables',
  summary: 'Message variables',
  description:
    'The variables a step\'s subject and body may use as {{name}} or {{name|default}} (the default when the value is '
    + 'empty), each with a description and an example. Any other name blocks activation (unknown_variable).',
  response: VariableList,
  run: { statement: () => sql`select app_public.sequences_list_variables() as result`, shape: result },
});

export const sequencesGetConditionVocabulary = defineOperation({
  ...read,
  operationId: 'sequences_get_condition_vocabulary',
  path: '/api/v1/sequences/condition-vocabulary',
  summary: 'Condition fields, ops and exit conditions',
  description:
    'What a condition ({field, op, value?}, in edges and in exit conditions of type condition) may test: the contact '
    + 'fields with the ops each takes, the organization\'s enabled custom fields (field_values.<key>), and the '
    + 'enrollment\'s events (event.replied, event.clicked, event.opened with exists / not_exists); and the '
    + 'exit-condition types with their fields.',
  response: ConditionVocabulary,
  run: { statement: () => sql`select app_public.sequences_get_condition_vocabulary() as result`, shape: result },
});

export const sequencesListSendSchedules = defineOperation({
  ...read,
  operationId: 'sequences_list_send_schedules',
  path: '/api/v1/sequences/send-schedules',
  summary: 'Send schedules',
  description:
    'A page of the organization\'s send schedules, the default first: each with its IANA time zone and weekly windows '
    + '(day, start, end, local). A sequence with no send_schedule_id sends in the default one\'s windows.',
  query: z.strictObject({ ...paging }),
  response: Page(SendSchedule),
  run: {
    statement: ({ page, limit }) => sql`select app_public.sequences_list_send_schedules(${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});

export const discoveryOperations = [
  sequencesCapabilities,
  sequencesListTriggers,
  sequencesListVariables,
  sequencesGetConditionVocabulary,
  sequencesListSendSchedules,
];
