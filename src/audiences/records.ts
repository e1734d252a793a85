// The audience record: list, create, read, update, archive. Each runs one SQL function
// (migrations: app_public.audiences_*); audiences belong to the organization.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { result } from '../platform/schemas.ts';
import { Audience, AudienceName, AudiencePath, Channel, Definition, Description, Kind } from './schemas.ts';

export const audiencesList = defineOperation({
  operationId: 'audiences_list',
  method: 'GET',
  path: '/api/v1/audiences',
  tag: 'Audiences',
  summary: 'List audiences',
  description:
    'Lists the organization\'s audiences, newest first, archived ones included (is_archived tells them apart), each with '
    + 'its kind, channel and, for a dynamic audience, its definition. Use audiences_count for sizes.',
  scope: 'audiences:read',
  memberAccess: 'open',
  managerPower: null,
  response: z.object({ items: z.array(Audience) }),
  run: {
    statement: () => sql`select app_public.audiences_list() as result`,
    shape: result,
  },
});

const CreateBody = z.strictObject({
  name: AudienceName,
  description: Description.nullable().optional(),
  kind: Kind.optional().describe('Fixed once created. Default: dynamic when a definition is sent, else static'),
  channel: Channel.optional().describe('any (default), email or sms'),
  definition: Definition.optional().describe('For a dynamic audience (absent = every contact); a static audience ignores it'),
  exclude_opted_out: z.boolean().optional().describe('Stored for sends (default false); counts and lists include opted-out contacts'),
});

export const audiencesCreate = defineOperation({
  operationId: 'audiences_create',
  method: 'POST',
  path: '/api/v1/audiences',
  tag: 'Audiences',
  summary: 'Create an audience',
  description:
    'Creates an audience. A dynamic audience selects contacts by its definition: `match` all (AND) or any (OR) over flat '
    + '`rules` of `{field, op, value}` (no rules = every contact). A static audience holds the contacts added with '
    + 'audiences_add_member and ignores any definition. The kind cannot change later. Only the format of rule fields is '
    + 'checked here: call audiences_preview_count first to check that the rules resolve and to see how many contacts '
    + 'they select. Send an `idempotency_key` to make a retry safe. Answers 201 with the audience.',
  scope: 'audiences:write',
  memberAccess: 'deny',
  managerPower: null,
  changes: ['audiences'],
  idempotent: true,
  successStatus: 201,
  body: CreateBody,
  response: Audience,
  run: {
    statement: (b) => sql`select app_public.audiences_create(${b.name}::text, ${b.description ?? null}::text,
      ${b.kind ?? null}::text, ${b.channel ?? null}::text, ${b.definition ? JSON.stringify(b.definition) : null}::jsonb,
      ${b.exclude_opted_out ?? null}::boolean) as result`,
    shape: result,
  },
});

export const audiencesGet = defineOperation({
  operationId: 'audiences_get',
  method: 'GET',
  path: '/api/v1/audiences/{audienceId}',
  tag: 'Audiences',
  summary: 'Read an audience',
  description: 'Returns one audience with its definition (null for a static audience). 404 when it is not the organization\'s.',
  scope: 'audiences:read',
  memberAccess: 'open',
  managerPower: null,
  params: AudiencePath,
  response: Audience,
  run: {
    statement: ({ audienceId }) => sql`select app_public.audiences_get(${audienceId}::uuid) as result`,
    shape: result,
  },
});

const UpdateBody = z
  .strictObject({
    name: AudienceName.optional(),
    description: Description.nullable().optional().describe('null clears it'),
    kind: Kind.optional().describe('Only the audience\'s own kind is accepted: the kind cannot change'),
    channel: Channel.optional(),
    definition: Definition.optional().describe('Replaces the whole definition (send every rule to keep); dynamic audiences only'),
    exclude_opted_out: z.boolean().optional(),
    is_archived: z.boolean().optional().describe('false restores an archived audience; true archives it'),
  })
  .refine((b) => Object.keys(b).length > 0, 'send at least one field to change');

export const audiencesUpdate = defineOperation({
  operationId: 'audiences_update',
  method: 'PATCH',
  path: '/api/v1/audiences/{audienceId}',
  tag: 'Audiences',
  summary: 'Update or restore an audience',
  description:
    'Changes only the fields sent. A `definition` replaces the whole definition (read it with audiences_get, change it, '
    + 'send it all back) and only a dynamic audience has one; `kind` cannot change (400); `is_archived: false` restores an '
    + 'archived audience. Check new rules with audiences_preview_count first. Returns the audience.',
  scope: 'audiences:write',
  memberAccess: 'deny',
  managerPower: null,
  changes: ['audiences'],
  params: AudiencePath,
  body: UpdateBody,
  response: Audience,
  run: {
    statement: ({ audienceId, ...patch }) =>
      sql`select app_public.audiences_update(${audienceId}::uuid, ${JSON.stringify(patch)}::jsonb) as result`,
    shape: result,
  },
});

export const audiencesArchive = defineOperation({
  operationId: 'audiences_archive',
  method: 'POST',
  path: '/api/v1/audiences/{audienceId}/archive',
  tag: 'Audiences',
  summary: 'Archive an audience',
  description:
    'Archives the audience: it stays readable and countable, and audiences_update with `is_archived: false` restores it. '
    + 'Archiving an archived audience changes nothing. Returns the audience.',
  scope: 'audiences:write',
  memberAccess: 'deny',
  managerPower: null,
  changes: ['audiences'],
  params: AudiencePath,
  response: Audience,
  run: {
    statement: ({ audienceId }) => sql`select app_public.audiences_archive(${audienceId}::uuid) as result`,
    shape: result,
  },
});
