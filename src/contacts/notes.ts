// Contact notes: written once through the API (organization-shared, source user), never
// edited or deleted. Location-private notes are counted on the contact but never listed.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { ContactPath } from './schemas.ts';
import { Page, paging, result, uuid } from '../platform/schemas.ts';

const Note = z.object({
  id: uuid,
  contact_id: uuid,
  body: z.string(),
  source: z.enum(['user', 'system', 'integration']).describe('user (a team member or key through the API), system '
    + '(the service), integration (the automation-platform integration)'),
  author: z.object({ id: uuid, name: z.string() }).optional().describe('Present when a team member wrote it'),
  created_at: z.string().describe('When it was written (ISO 8601)'),
});

export const contactsAddNote = defineOperation({
  operationId: 'contacts_add_note',
  method: 'POST',
  path: '/api/v1/contacts/{contactId}/notes',
  tag: 'Contacts',
  summary: 'Add a note to a contact',
  description:
    'Adds a note, shared with the whole organization, to the contact; notes cannot be edited or deleted, so check the '
    + 'text first. Send an `idempotency_key` to make a retry safe: the same key and body answer the first note again. '
    + 'Answers 201 with the note.',
  scope: 'contacts:write',
  memberAccess: 'deny',
  managerPower: 'contacts',
  changes: ['contacts'],
  idempotent: true,
  successStatus: 201,
  params: ContactPath,
  body: z.strictObject({
    body: z.string().min(1).max(20000).refine((s) => s.trim() !== '', 'the note is empty').describe('The note text')
      .meta({ examples: ['Prefers morning appointments'] }),
  }),
  response: Note,
  run: {
    statement: ({ contactId, body }) => sql`select app_public.contacts_add_note(${contactId}::uuid, ${body}::text) as result`,
    shape: result,
  },
});

export const contactsListNotes = defineOperation({
  operationId: 'contacts_list_notes',
  method: 'GET',
  path: '/api/v1/contacts/{contactId}/notes',
  tag: 'Contacts',
  summary: 'List a contact\'s notes',
  description:
    'Lists the contact\'s organization-shared notes (from contacts_add_note, the service and the automation integration), '
    + 'newest first. Notes private to one location are not listed, so `total` can be below the contact\'s `notes_count`. '
    + 'A `page` past the last note is 400.',
  scope: 'contacts:read',
  memberAccess: 'deny',
  managerPower: 'contacts',
  params: ContactPath,
  query: z.object(paging),
  response: Page(Note),
  run: {
    statement: ({ contactId, page, limit }) =>
      sql`select app_public.contacts_list_notes(${contactId}::uuid, ${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});
