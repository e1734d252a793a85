// Where a contact stands and what happened with it: the pipeline stages and the
// interactions (calls, chats, SMS threads) the assistant handled.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { ContactPath } from './schemas.ts';
import { Page, paging, result, uuid } from '../platform/schemas.ts';

/** The audience rule field that tests a contact's stage (stage ids as values). */
export const STAGE_AUDIENCE_FIELD = 'stage_id' as const;

const Stage = z.object({
  id: uuid,
  name: z.string(),
  position: z.int().describe('1-based place in the dashboard order'),
  audience_field: z.literal(STAGE_AUDIENCE_FIELD),
});

export const contactsListStages = defineOperation({
  operationId: 'contacts_list_stages',
  method: 'GET',
  path: '/api/v1/contacts/stages',
  tag: 'Contacts',
  summary: 'List the pipeline stages',
  description:
    'Lists the organization\'s pipeline stages in dashboard order, with `audience_field`: the audience rule field that '
    + 'tests a contact\'s stage (use it with stage ids as values). Use a stage id as `stage_id` in contacts_update. '
    + 'An organization without a pipeline answers an empty list and a null audience_field.',
  scope: 'contacts:read',
  memberAccess: 'open',
  managerPower: null,
  response: z.object({
    stages: z.array(Stage),
    audience_field: z.literal(STAGE_AUDIENCE_FIELD).nullable(),
  }),
  run: {
    statement: () => sql`select s.id, s.name, s.position from app_public.pipeline_stages s
      where s.organization_id = app_hidden.current_org_id() order by s.position`,
    shape: (rows) => ({
      stages: rows.map((r) => ({ id: String(r.id), name: String(r.name), position: Number(r.position), audience_field: STAGE_AUDIENCE_FIELD })),
      audience_field: rows.length ? STAGE_AUDIENCE_FIELD : null,
    }),
  },
});

const Interaction = z.object({
  id: uuid,
  contact_id: uuid,
  channel: z.enum(['voice', 'chat', 'sms']),
  status: z.enum(['in_progress', 'completed', 'abandoned']),
  location_id: uuid.nullable(),
  appointment_id: uuid.nullable().describe('The appointment the interaction booked'),
  summary: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  captured_fields: z.record(z.string(), z.unknown()).optional()
    .describe('What the assistant captured; omitted for a MEMBER and for a MANAGER without the contacts power'),
});

export const contactsListInteractions = defineOperation({
  operationId: 'contacts_list_interactions',
  method: 'GET',
  path: '/api/v1/contacts/{contactId}/interactions',
  tag: 'Contacts',
  summary: 'List a contact\'s interactions',
  description:
    'Lists the calls, chats and SMS threads the assistant handled with the contact, most recent first, optionally only '
    + 'one `channel` (voice, chat, sms) or `status` (in_progress, completed, abandoned). Email threads are conversations, '
    + 'not interactions. A location-limited credential sees only interactions at its locations. A `page` past the last is 400.',
  scope: 'contacts:read',
  memberAccess: 'scoped',
  managerPower: null,
  params: ContactPath,
  query: z.object({
    ...paging,
    channel: z.enum(['voice', 'chat', 'sms']).optional(),
    status: z.enum(['in_progress', 'completed', 'abandoned']).optional(),
  }),
  response: Page(Interaction),
  run: {
    statement: ({ contactId, channel, status, page, limit }) => sql`select app_public.contacts_list_interactions(
      ${contactId}::uuid, ${channel ?? null}::text, ${status ?? null}::text, ${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});
