// The conversations area: the receptionist's inbox of email, SMS and web chat threads, the AI
// that answers them, and the person who can take over. docs/conversations.md describes it.
import type { Area } from '../registry/area.ts';
import { conversationAiReply } from './ai_reply.ts';
import { chatPages } from './chat.ts';
import { conversationsFixture } from './fixture.ts';
import { conversationsGet, conversationsList } from './reads.ts';
import { conversationsHold, conversationsReply, conversationsResume, conversationsSendSms } from './writes.ts';

export const conversations: Area = {
  name: 'conversations',
  // the fixed path /conversations/sms comes before the /conversations/{conversationId} paths
  operations: [conversationsList, conversationsSendSms, conversationsGet, conversationsReply, conversationsHold, conversationsResume],
  tasks: (deps) => ({ conversation_ai_reply: conversationAiReply(deps) }),
  fixture: conversationsFixture,
  // web chat from the organization's sites (no key: the widget's id, then the visitor's token)
  pages: chatPages,
};
