// conversations_list (cursor-paged, q over messages and contacts, never chat) and
// conversations_get (the thread, response_mode). One SQL function each, of the same name
// (app_public.conversations_list, app_public.conversations_get; db/schema/conversations.sql).
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { paging, result } from '../platform/schemas.ts';
import { Conversation, ConversationPath, ConversationWithMessages, Cursor, Message, encodeCursor } from './schemas.ts';

interface ListAnswer { items: unknown[]; next: { at: string; id: string } | null }

export const conversationsList = defineOperation({
  operationId: 'conversations_list',
  method: 'GET',
  path: '/api/v1/conversations',
  tag: 'Conversations',
  summary: 'List conversations',
  description:
    'Lists the email, SMS and web chat conversations in reach, the most recently opened first, each with its contact, '
    + '`response_mode` (ai or human) and last message. Paged by cursor: pass `next_cursor` back as `cursor` until it is '
    + 'null; the pages together hold every conversation once, even while messages arrive. `q` finds conversations whose '
    + 'messages or contact (name, email, phone) contain the text; search leaves web chat out. Read one thread with '
    + 'conversations_get.',
  scope: 'conversations:read',
  memberAccess: 'scoped',
  managerPower: null,
  query: z.object({
    q: z.string().trim().min(1).max(200).optional()
      .describe('Text a message or the contact\'s name, email or phone contains (case-insensitive); chat is not searched')
      .meta({ examples: ['appointment', 'ann@example.com'] }),
    limit: paging.limit,
    cursor: Cursor.optional().describe('The next_cursor of the previous page'),
  }),
  response: z.object({
    items: z.array(Conversation.extend({ last_message: Message.nullable() })),
    next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
  }),
  run: {
    statement: ({ q, limit, cursor }) => sql`select app_public.conversations_list(${q ?? null}::text, ${limit}::int,
      ${cursor?.at ?? null}::timestamptz, ${cursor?.id ?? null}::uuid) as result`,
    shape: (rows) => {
      const { items, next } = result<ListAnswer>(rows);
      return { items: items as never, next_cursor: next ? encodeCursor(next) : null };
    },
  },
});

export const conversationsGet = defineOperation({
  operationId: 'conversations_get',
  method: 'GET',
  path: '/api/v1/conversations/{conversationId}',
  tag: 'Conversations',
  summary: 'Read a conversation',
  description:
    'Returns one conversation with all its messages, oldest first, and `response_mode`: `ai` while the AI receptionist '
    + 'answers, `human` while a person does (after conversations_hold or a person\'s reply; email is always human). '
    + '404 when the conversation is not in reach.',
  scope: 'conversations:read',
  memberAccess: 'scoped',
  managerPower: null,
  params: ConversationPath,
  response: ConversationWithMessages,
  run: {
    statement: ({ conversationId }) => sql`select app_public.conversations_get(${conversationId}::uuid) as result`,
    shape: result,
  },
});
