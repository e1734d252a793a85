// The conversations area: the receptionist's inbox of email, SMS and web chat threads, the AI
// that answers them, and the person who can take over. docs/conversations.md describes it.
import type { Area } from '../registry/area.ts';
import { conversationsFixture } from './fixture.ts';
import { conversationsGet, conversationsList } from './reads.ts';

export const conversations: Area = {
  name: 'conversations',
  operations: [conversationsList, conversationsGet],
  fixture: conversationsFixture,
};
