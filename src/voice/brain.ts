// What answers a turn of a call: the receptionist, as for SMS and chat. It reads the
// conversation's context through app_hidden.voice_context (the voice secret's organization and
// a call's conversation only) and answers with the responder the environment configures (the
// model when AI_BASE_URL is set, the built-in receptionist otherwise).
import type pg from 'pg';
import { publicStatement } from '../db/request.ts';
import { responderFromEnv, type AiContext } from '../conversations/responder.ts';

export interface VoiceTurn {
  organization_id: string;
  conversation_id: string;
  contact_id: string;
  location_id: string | null;
  /** The caller's words of this turn, as the conversation's inbound message. */
  message_id: string;
}

/** A turn's answer as kept with it: what was decided and the words spoken. */
export interface VoiceAnswer {
  kind: 'reply' | 'handover';
  text?: string;
  reason?: string;
  spoken: string;
  /** The number the platform is asked to transfer the call to. */
  transfer_to?: string;
}

export type BrainAnswer = { kind: 'reply'; text: string } | { kind: 'handover'; reason: string };
export type VoiceBrain = (pool: pg.Pool, secretHash: Buffer, turn: VoiceTurn) => Promise<BrainAnswer>;

export const receptionistBrain: VoiceBrain = async (pool, secretHash, turn) => {
  const [row] = await publicStatement<{ context: AiContext | null }>(pool, 'select app_hidden.voice_context($1, $2, $3) as context',
    [secretHash, turn.conversation_id, turn.message_id]);
  if (!row?.context) return { kind: 'handover', reason: 'not the receptionist\'s to answer' };
  return responderFromEnv().respond(row.context);
};
