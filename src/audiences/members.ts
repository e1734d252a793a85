// Who is in an audience: counts, previews, member pages, and the members of static audiences.
// Counts and pages read app_public.contacts as the caller, so the contacts reach policies
// decide which contacts a credential counts and sees (app_hidden.audience_count, …_contacts).
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { result, uuid } from '../platform/schemas.ts';
import { AudiencePath, Cursor, MemberPage, PreviewBody, encodeCursor } from './schemas.ts';

const Count = z.object({ audience_id: uuid, count: z.int() });

export const audiencesCount = defineOperation({
  operationId: 'audiences_count',
  method: 'GET',
  path: '/api/v1/audiences/{audienceId}/count',
  tag: 'Audiences',
  summary: 'Count an audience',
  description:
    'How many contacts the audience holds now: a dynamic audience\'s rules evaluated now, or a static audience\'s members. '
    + 'Opted-out contacts are included (they are removed when sending). A location-limited credential counts only the '
    + 'contacts it can see. 400 naming the rule when a dynamic audience\'s rule no longer resolves (for example a custom '
    + 'field that was disabled).',
  scope: 'audiences:read',
  memberAccess: 'open',
  managerPower: null,
  heavy: true,
  params: AudiencePath,
  response: Count,
  run: {
    statement: ({ audienceId }) => sql`select app_public.audiences_count(${audienceId}::uuid) as result`,
    shape: result,
  },
});

export const audiencesPreviewCount = defineOperation({
  operationId: 'audiences_preview_count',
  method: 'POST',
  path: '/api/v1/audiences/preview-count',
  tag: 'Audiences',
  summary: 'Count the contacts a definition would select',
  description:
    'Evaluates a definition (`match`, `rules`) now, without saving anything, and answers how many contacts it selects '
    + '(opted-out ones included). Use it to check rules before audiences_create or audiences_update: a 400 names the rule '
    + 'and the part to fix (for example body.rules.2.field for a field that does not resolve, .op for an op the field\'s '
    + 'type does not allow, .value for a value that does not fit, body.rules for more contains and contains_any values than '
    + 'one definition may hold). Stage rules use the audience_field and stage ids from contacts_list_stages; custom fields '
    + 'are field_values.<key>. A MEMBER, and a MANAGER without the contacts power, may test only display_name, email and '
    + 'phone_number.',
  scope: 'audiences:read',
  memberAccess: 'open',
  managerPower: null,
  heavy: true,
  body: PreviewBody,
  response: z.object({ count: z.int() }),
  run: {
    statement: ({ match, rules }) =>
      sql`select app_public.audiences_preview_count(${JSON.stringify({ match, rules })}::jsonb) as result`,
    shape: result,
  },
});

export const audiencesListMembers = defineOperation({
  operationId: 'audiences_list_members',
  method: 'GET',
  path: '/api/v1/audiences/{audienceId}/contacts',
  tag: 'Audiences',
  summary: 'List an audience\'s contacts',
  description:
    'One page of the audience\'s contacts (id, name, email, phone), in a stable order. Omit `cursor` for the first page, '
    + 'then pass each answer\'s `next_cursor` until it is null: every contact that stays in the audience while you page '
    + 'appears exactly once. Opted-out contacts are included. 400 naming the rule when a dynamic audience\'s rule no '
    + 'longer resolves.',
  scope: 'audiences:read',
  memberAccess: 'deny',
  managerPower: null,
  heavy: true,
  params: AudiencePath,
  query: z.object({
    cursor: Cursor.optional().describe('The previous answer\'s next_cursor; omit for the first page'),
    limit: z.coerce.number().int().min(1).max(100).default(25).describe('Contacts per page, 1 to 100'),
  }),
  response: MemberPage,
  run: {
    statement: ({ audienceId, cursor, limit }) => sql`select app_public.audiences_list_members(${audienceId}::uuid,
      ${cursor ?? null}::uuid, ${limit}::int) as result`,
    shape: (rows) => {
      const page = result<{ items: z.input<typeof MemberPage>['items']; next_after: string | null }>(rows);
      return { items: page.items, next_cursor: page.next_after ? encodeCursor(page.next_after) : null };
    },
  },
});

const Membership = z.object({
  audience_id: uuid,
  contact_id: uuid,
  is_member: z.boolean().describe('Whether the contact is a member after the call'),
});

export const audiencesAddMember = defineOperation({
  operationId: 'audiences_add_member',
  method: 'POST',
  path: '/api/v1/audiences/{audienceId}/members',
  tag: 'Audiences',
  summary: 'Add a contact to a static audience',
  description:
    'Adds a contact of the organization to a static audience; adding a member again changes nothing, so it is safe to '
    + 'retry. A dynamic audience takes no members (400: change its definition instead). 404 for an unknown audience or contact.',
  scope: 'audiences:write',
  memberAccess: 'deny',
  managerPower: null,
  changes: ['audiences'],
  params: AudiencePath,
  body: z.strictObject({ contact_id: uuid.describe('The contact to add') }),
  response: Membership,
  run: {
    statement: ({ audienceId, contact_id }) =>
      sql`select app_public.audiences_add_member(${audienceId}::uuid, ${contact_id}::uuid) as result`,
    shape: result,
  },
});

export const audiencesRemoveMember = defineOperation({
  operationId: 'audiences_remove_member',
  method: 'DELETE',
  path: '/api/v1/audiences/{audienceId}/members/{contactId}',
  tag: 'Audiences',
  summary: 'Remove a contact from a static audience',
  description:
    'Removes a contact from a static audience; removing a contact that is not a member changes nothing, so it is safe to '
    + 'retry. The contact stops receiving what is sent to this audience, so confirm with the user first. A dynamic audience '
    + 'takes no members (400). 404 for an unknown audience or contact.',
  scope: 'audiences:write',
  memberAccess: 'deny',
  managerPower: null,
  confirm: true,
  changes: ['audiences'],
  params: AudiencePath.extend({ contactId: uuid.describe('The contact to remove') }),
  response: Membership,
  run: {
    statement: ({ audienceId, contactId }) =>
      sql`select app_public.audiences_remove_member(${audienceId}::uuid, ${contactId}::uuid) as result`,
    shape: result,
  },
});
