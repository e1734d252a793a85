// Tags on a contact. Adding a tag the organization lacks creates it, within the
// organization's tag limit; both operations are idempotent and answer the contact's tags.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { ContactPath, Tags } from './schemas.ts';
import { result } from '../platform/schemas.ts';

const TagName = z.string().trim().min(1).max(120).describe('Tag name, at most 120 characters (case-insensitive)')
  .meta({ examples: ['VIP', 'Follow up'] });

const AddTagBody = z
  .strictObject({ name: TagName.optional(), tag: TagName.optional().describe('Same as name') })
  .refine((b) => (b.name === undefined) !== (b.tag === undefined), 'send the tag name as name');

export const contactsAddTag = defineOperation({
  operationId: 'contacts_add_tag',
  method: 'POST',
  path: '/api/v1/contacts/{contactId}/tags',
  tag: 'Contacts',
  summary: 'Tag a contact',
  description:
    'Adds a tag to the contact; a tag the organization does not have yet is created (422 tag_limit_reached when the '
    + 'organization is at its tag limit). Adding a tag the contact already has changes nothing. Answers the contact\'s tags.',
  scope: 'contacts:write',
  memberAccess: 'deny',
  managerPower: 'contacts',
  changes: ['contacts'],
  params: ContactPath,
  body: AddTagBody,
  response: Tags,
  run: {
    statement: ({ contactId, name, tag }) =>
      sql`select app_public.contacts_add_tag(${contactId}::uuid, ${name ?? tag}::citext) as result`,
    shape: result,
  },
});

export const contactsRemoveTag = defineOperation({
  operationId: 'contacts_remove_tag',
  method: 'DELETE',
  path: '/api/v1/contacts/{contactId}/tags/{tag}',
  tag: 'Contacts',
  summary: 'Remove a tag from a contact',
  description:
    'Removes the tag (URL-encoded in the path) from the contact; the organization keeps the tag. Removing a tag the '
    + 'contact does not have still answers 200. Answers the contact\'s tags. Confirm with the user first: tags can '
    + 'decide which audiences and sequences reach the contact.',
  scope: 'contacts:write',
  memberAccess: 'deny',
  managerPower: 'contacts',
  confirm: true,
  changes: ['contacts'],
  params: ContactPath.extend({ tag: TagName }),
  response: Tags,
  run: {
    statement: ({ contactId, tag }) => sql`select app_public.contacts_remove_tag(${contactId}::uuid, ${tag}::citext) as result`,
    shape: result,
  },
});
