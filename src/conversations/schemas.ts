// The conversation and message records, and the list's cursor.
import { z } from 'zod';
import { ContactCard } from '../contacts/schemas.ts';
import { timestamp, uuid } from '../platform/schemas.ts';

export const ConversationPath = z.object({ conversationId: uuid.describe('The conversation\'s id') });

export const Channel = z.enum(['email', 'sms', 'chat']);
export const ResponseMode = z.enum(['ai', 'human']);

export const Message = z.object({
  id: uuid.describe('The message\'s id; for an email or SMS the service sent, the outbox\'s meta.message_id'),
  conversation_id: uuid,
  direction: z.enum(['inbound', 'outbound']),
  author: z.enum(['contact', 'ai', 'person', 'system'])
    .describe('contact (inbound), ai (the AI receptionist), person (a team member or a key through the API), system '
      + '(automatic answers to STOP, START, HELP)'),
  author_person_id: uuid.nullable().describe('The team member who wrote it (person messages sent with a personal key)'),
  body: z.string(),
  subject: z.string().nullable(),
  status: z.enum(['received', 'queued', 'sent', 'failed'])
    .describe('received (inbound); queued, sent or failed: what became of an outbound message'),
  error: z.string().nullable().describe('Why an outbound message failed'),
  created_at: timestamp,
});

export const Conversation = z.object({
  id: uuid,
  channel: Channel.describe('email, sms or chat (web chat)'),
  contact: ContactCard,
  location_id: uuid.nullable().describe('The location the conversation belongs to; null: the whole organization'),
  business_address: z.string().nullable().describe('The business\'s side: the number it texts from, or the address written to'),
  subject: z.string().nullable(),
  response_mode: ResponseMode.describe('Who answers: ai, or human (held, and always for email, which has no AI)'),
  ai_held: z.boolean(),
  held_at: timestamp.nullable(),
  last_message_at: timestamp,
  created_at: timestamp,
  updated_at: timestamp,
});

export const ConversationWithMessages = Conversation.extend({
  messages: z.array(Message).describe('Every message, oldest first'),
});

// A cursor is the last row's sort key (created_at with microseconds, id) as base64url: opaque
// to callers, checked strictly here so a mangled cursor is a 400, never a wrong page.
const KEY = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export const encodeCursor = (next: { at: string; id: string }) => Buffer.from(`${next.at}|${next.id}`).toString('base64url');

export const Cursor = z.string().max(128).transform((raw, ctx) => {
  const m = KEY.exec(Buffer.from(raw, 'base64url').toString('latin1'));
  if (!m || Buffer.from(`${m[1]}|${m[2]}`).toString('base64url') !== raw || Number.isNaN(Date.parse(m[1]!))) {
    ctx.addIssue({ code: 'custom', message: 'not a cursor from this list: pass next_cursor back unchanged' });
    return z.NEVER;
  }
  return { at: m[1]!, id: m[2]! };
});
