// The receptionist area: the AI receptionist that answers SMS and chat and acts (books, moves,
// cancels) through the same operations as any key, the built-in dialogue when no model is
// configured, and the hand-over to a person. docs/receptionist.md describes it.
import type { Area } from '../registry/area.ts';
import { inboxPages } from './inbox.ts';
import { conversationAiReply } from './task.ts';

export const receptionist: Area = {
  name: 'receptionist',
  operations: [],
  tasks: (deps) => ({ conversation_ai_reply: conversationAiReply(deps) }),
  // the dashboard's inbox: waiting conversations first, the thread, reply, "Let the AI answer"
  pages: inboxPages,
};
