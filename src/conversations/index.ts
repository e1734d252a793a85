// The conversations area: the receptionist's inbox of email, SMS and web chat threads, the AI
// that answers them, and the person who can take over. docs/conversations.md describes it.
import type { Area } from '../registry/area.ts';
import { chatPages } from './chat.ts';
import { conversationsFixture } from './fixture.ts';
import { conversationsGet, conversationsList } from './reads.ts';
import { conversationsHold, conversationsReply, conversationsResume, conversationsSendSms } from './writes.ts';

export const conversations: Area = {
  name: 'conversations',
  // the fixed path /conversations/sms comes before the /conversations/{conversationId} paths
  operations: [conversationsList, conversationsSendSms, conversationsGet, conversationsReply, conversationsHold, conversationsResume],
  // the AI's answers (task conversation_ai_reply) are the receptionist area's
  fixture: conversationsFixture,
  // web chat from the organization's sites (no key: the widget's id, then the visitor's token)
  pages: chatPages,
  graphql: {
    // what conversations_get shows (its contact's id as contact_id; a message's channel is its
    // conversation's). Not a message's provider id; chat widgets and visitor tokens not at all.
    tables: {
      conversations: ['organization_id', 'id', 'contact_id', 'location_id', 'channel', 'business_address', 'subject', 'ai_held',
        'held_at', 'last_message_at', 'created_at', 'updated_at'],
      conversation_messages: ['organization_id', 'id', 'conversation_id', 'channel', 'direction', 'author', 'author_person_id',
        'body', 'subject', 'status', 'error', 'created_at'],
    },
    groupBy: ['channel', 'conversation_id'],
  },
};
