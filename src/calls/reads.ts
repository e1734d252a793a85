// calls_list and calls_get: one SQL function each (app_public.calls_list, app_public.calls_get), read
// as the caller so the calls' reach policies decide what a credential sees.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { result, uuid } from '../platform/schemas.ts';
import { CallPage, CallPath, CallWithTranscript, Cursor, encodeCursor, type CallPosition } from './schemas.ts';

const READ_RULE = 'A MEMBER reads only the calls of its own clients (contacts of its appointments and of the calls it took), and '
  + 'none without a team-member profile; a location-limited credential reads the calls of its locations.';

export const callsList = defineOperation({
  operationId: 'calls_list',
  method: 'GET',
  path: '/api/v1/calls',
  tag: 'Calls',
  summary: 'List calls',
  description:
    'The calls with contacts, newest first (without transcripts: calls_get has them), optionally of one contact '
    + '(`contact_id`; 404 when the contact is out of reach). Omit `cursor` for the first page, then pass each answer\'s '
    + `\`next_cursor\` until it is null: no call appears twice. ${READ_RULE}`,
  scope: 'calls:read',
  memberAccess: 'scoped',
  managerPower: null,
  query: z.object({
    contact_id: uuid.optional().describe('Only this contact\'s calls'),
    cursor: Cursor.optional().describe('The previous answer\'s next_cursor; omit for the first page'),
    limit: z.coerce.number().int().min(1).max(100).default(25).describe('Calls per page, 1 to 100'),
  }),
  response: CallPage,
  run: {
    statement: ({ contact_id, cursor, limit }) => sql`select app_public.calls_list(${contact_id ?? null}::uuid,
      ${cursor?.at ?? null}::timestamptz, ${cursor?.id ?? null}::uuid, ${limit}::int) as result`,
    shape: (rows) => {
      const page = result<{ items: z.input<typeof CallPage>['items']; next_after: CallPosition | null }>(rows);
      return { items: page.items, next_cursor: page.next_after ? encodeCursor(page.next_after) : null };
    },
  },
});

export const callsGet = defineOperation({
  operationId: 'calls_get',
  method: 'GET',
  path: '/api/v1/calls/{callId}',
  tag: 'Calls',
  summary: 'Read a call with its transcript',
  description: `One call with its transcript (lines of caller, assistant and staff in the order spoken). 404 when the call is `
    + `not the organization's or out of reach. ${READ_RULE}`,
  scope: 'calls:read',
  memberAccess: 'scoped',
  managerPower: null,
  params: CallPath,
  response: CallWithTranscript,
  run: {
    statement: ({ callId }) => sql`select app_public.calls_get(${callId}::uuid) as result`,
    shape: result,
  },
});

export const readOperations = [callsList, callsGet];
