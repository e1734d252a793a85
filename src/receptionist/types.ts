// The receptionist's shared types: what its entry point (src/receptionist/answer.ts), its two
// brains (src/receptionist/dialogue.ts, src/receptionist/model.ts) and its job
// (src/receptionist/task.ts) pass between them. Kept apart so those modules import these
// without importing one another in a circle.
import type { AiContext } from '../conversations/responder.ts';
import type { ToolResult } from './tools.ts';

/** An open slot as appointments_availability gives it. */
export type Slot = { start: string; end: string };
/** The built-in dialogue's pending offer, stored with its answer (app_private.receptionist_states). */
export type DialogueState =
  | { kind: 'pick_offering'; offering_ids: string[]; appointment_id?: string }
  | { kind: 'pick_slot'; slots: Slot[]; offering_id: string | null; appointment_id?: string }
  | { kind: 'confirm_cancel'; appointment_id: string };

/** What app_private.receptionist_context gives: conversation_ai_context's, with the ids and settings. */
export interface ReceptionistContext extends AiContext {
  organization_id: string;
  conversation_id: string;
  message_id: string;
  contact_id: string;
  location_id: string | null;
  receptionist: ReceptionistSettings;
  /** The location's offerings in booking order. */
  offerings: { id: string; name: string; duration_minutes: number }[];
  /** The dialogue's pending offer and when it was made. */
  state: { state: DialogueState; at: string } | null;
  opted_out: boolean;
  ai_answers_24h: number;
  now: string;
}

export interface ReceptionistSettings {
  instructions?: string;
  handover_message?: string;
  faq?: { question: string; keywords: string[]; answer: string }[];
}

/** Runs one tool call bound to the conversation (position: its place in this turn, for idempotency keys). */
export type ToolRunner = (name: string, args: unknown, position: number) => Promise<ToolResult>;

export type Answer =
  | { kind: 'reply'; text: string; state: DialogueState | null; appointment_id?: string; brain: 'model' | 'built-in' }
  | { kind: 'handover'; reason: string; brain: 'model' | 'built-in' };
