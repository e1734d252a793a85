// A person's writes in the inbox: conversations_reply, conversations_send_sms,
// conversations_hold, conversations_resume (spec: "Conversation and SMS rules"). The rules are
// the SQL functions' (app_public.conversations_*, db/schema/conversations.sql); sending goes through the delivery transports once,
// inside the call: the local sink stores the message in the call's own transaction, any other
// transport gets it from here and its answer is recorded before the call answers. Nothing is
// queued for a retry: after a 5xx the message may have gone (rule 1).
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import type { Tx } from '../db/request.ts';
import { createTransports, type OutgoingMessage, type Transports } from '../delivery/index.ts';
import type { Config } from '../config.ts';
import { ApiError } from '../platform/errors.ts';
import { defineOperation } from '../registry/operation.ts';
import { result, uuid } from '../platform/schemas.ts';
import { Conversation, ConversationPath, Message } from './schemas.ts';

const Body = z.string().trim().min(1).max(1600)
  .describe('The text to send (at most 1600 characters: ten SMS segments)')
  .meta({ examples: ['Thanks! We have you down for Monday at 10:00.'] });

/** The flags every write of the inbox shares (operations.tsv): texting needs the member's SMS setting, a manager the contacts power. */
const WRITE = { scope: 'conversations:write', memberAccess: 'sms_setting', managerPower: 'contacts', changes: [] } as const;

const Sent = z.object({
  message: Message.describe('The message as stored; status sent, or failed with error when the transport refused it'),
  conversation: Conversation.describe('The conversation after the message: response_mode human, since a person wrote'),
});

interface SendAnswer { message: z.input<typeof Message>; conversation: z.input<typeof Conversation>; outgoing?: OutgoingMessage | null }

const transportsByConfig = new Map<string, Transports>();
function transports(config: Config): Transports {
  const setting = `${config.emailTransport}\n${config.smsTransport}`;
  if (!transportsByConfig.has(setting)) transportsByConfig.set(setting, createTransports(config));
  return transportsByConfig.get(setting)!;
}

/** The channels whose transport is the local sink: SQL stores their messages itself. */
export const sinkChannels = (config: Config) => JSON.stringify(
  (['email', 'sms'] as const).filter((c) => (c === 'email' ? config.emailTransport : config.smsTransport) === 'sink'));

/**
 * Hands a message the SQL left to the caller to its transport, once, and records the answer.
 * A failure after the hand-over is a 500 that is never retried (the message may have gone).
 */
async function deliver(tx: Tx, config: Config, answer: SendAnswer): Promise<z.input<typeof Sent>> {
  const { outgoing, ...sent } = answer;
  if (!outgoing) return sent;
  let error: string | null = null;
  let providerId: string | null = null;
  try {
    // only the sink writes with the transaction, and the sink is handled in SQL
    providerId = (await transports(config)[outgoing.channel].send(outgoing, undefined as never))?.providerId ?? null;
  } catch (e) {
    error = String((e as Error)?.message ?? e).slice(0, 500);
  }
  try {
    await tx.query(sql`select app_hidden.conversation_message_record(${outgoing.id}::uuid, ${error}::text)`);
    // the provider's id (Twilio's SID), which its status callbacks name (src/delivery/webhooks.ts)
    if (providerId) await tx.query(sql`select app_hidden.delivery_note_provider_id(${outgoing.id}::uuid, ${providerId}::text)`);
  } catch {
    // not a conflict to retry: the transport may have taken the message
    throw new ApiError(500, 'internal_error', 'The message was handed to the transport but its outcome could not be recorded; '
      + 'read the conversation before sending again');
  }
  return { ...sent, message: { ...sent.message, status: error === null ? 'sent' : 'failed', error } };
}

export const conversationsReply = defineOperation({
  operationId: 'conversations_reply',
  method: 'POST',
  path: '/api/v1/conversations/{conversationId}/reply',
  tag: 'Conversations',
  summary: 'Reply in a conversation',
  description:
    'Sends a reply on the conversation\'s own channel (email, SMS, or web chat) and puts the AI on hold, so a person '
    + 'answers from now on (conversations_resume hands it back). This sends a message: ask the user first. Not safe to '
    + 'retry after a 5xx: the message may have gone; read the conversation first. An email reply goes out as a person: '
    + 'a key that acts for no one gets 422 `no_acting_user`. SMS: 409 `sms_not_permitted` when the contact opted out, or '
    + 'has not consented and never wrote in this thread. A MEMBER replies only to its own clients (404 otherwise) and '
    + 'only while its SMS setting is on (403). Answers 201 with the message and the conversation.',
  ...WRITE,
  confirm: true,
  successStatus: 201,
  params: ConversationPath,
  body: z.strictObject({ body: Body }),
  response: Sent,
  run: {
    handler: async (tx, { input, config }) => {
      const [row] = await tx.query<{ result: SendAnswer }>(sql`select app_public.conversations_reply(${input.conversationId}::uuid,
        ${input.body}::text, array(select jsonb_array_elements_text(${sinkChannels(config)}::jsonb))) as result`);
      return deliver(tx, config, row!.result);
    },
  },
});

export const conversationsSendSms = defineOperation({
  operationId: 'conversations_send_sms',
  method: 'POST',
  path: '/api/v1/conversations/sms',
  tag: 'Conversations',
  summary: 'Text a contact',
  description:
    'Sends an SMS to a contact from the number of the contact\'s location (the first of its locations in reach with a '
    + 'number, or `location_id`), else from the organization\'s default number, in the contact\'s thread on that number '
    + '(opened when there is none), and puts the AI on hold there. This sends a message: ask the user first. The contact '
    + 'must have consented to SMS and not opted out (409 `sms_not_permitted`). 422 `no_sms_number` when no number can text '
    + 'the contact (no number, or no phone), 422 `thread_at_other_location` when the contact\'s thread on that number '
    + 'belongs to a location out of reach. A MEMBER texts only its own clients (404 otherwise) while its SMS setting is on '
    + '(403). Answers 201 with the message and the conversation.',
  ...WRITE,
  confirm: true,
  successStatus: 201,
  body: z.strictObject({
    contact_id: uuid.describe('The contact to text'),
    body: Body,
    location_id: uuid.optional().describe('Text from this location\'s number (one of the contact\'s locations); default: the contact\'s'),
  }),
  response: Sent,
  run: {
    handler: async (tx, { input, config }) => {
      const [row] = await tx.query<{ result: SendAnswer }>(sql`select app_public.conversations_send_sms(${input.contact_id}::uuid,
        ${input.body}::text, ${input.location_id ?? null}::uuid, array(select jsonb_array_elements_text(${sinkChannels(config)}::jsonb)))
        as result`);
      return deliver(tx, config, row!.result);
    },
  },
});

const Held = Conversation.extend({
  ai_queued: z.boolean().describe('Whether the AI was handed the contact\'s unanswered last message (on resume)'),
});

export const conversationsHold = defineOperation({
  operationId: 'conversations_hold',
  method: 'POST',
  path: '/api/v1/conversations/{conversationId}/hold',
  tag: 'Conversations',
  summary: 'Hold the AI in a conversation',
  description:
    'Stops the AI answering the SMS or web chat conversation until conversations_resume: a person answers '
    + '(`response_mode` becomes human). Holding a held conversation changes nothing. An email conversation has no AI: 422 '
    + '`channel_not_supported`. A MEMBER holds only its own clients\' conversations (404 otherwise) while its SMS setting is '
    + 'on (403).',
  ...WRITE,
  params: ConversationPath,
  response: Held,
  run: {
    statement: ({ conversationId }) => sql`select app_public.conversations_hold(${conversationId}::uuid) as result`,
    shape: result,
  },
});

export const conversationsResume = defineOperation({
  operationId: 'conversations_resume',
  method: 'POST',
  path: '/api/v1/conversations/{conversationId}/resume',
  tag: 'Conversations',
  summary: 'Hand a conversation back to the AI',
  description:
    'The AI answers the SMS or web chat conversation again (`response_mode` ai). When the contact\'s last message has no '
    + 'answer yet, the AI answers it now: this may send a message, so ask the user first. Resuming a conversation the AI '
    + 'answers changes nothing. An email conversation has no AI: 422 `channel_not_supported`. A MEMBER resumes only its '
    + 'own clients\' conversations (404 otherwise) while its SMS setting is on (403).',
  ...WRITE,
  confirm: true,
  params: ConversationPath,
  response: Held,
  run: {
    statement: ({ conversationId }) => sql`select app_public.conversations_resume(${conversationId}::uuid) as result`,
    shape: result,
  },
});
