// What answers a turn of a call: the receptionist of SMS and chat (src/receptionist/answer.ts),
// the model when AI_BASE_URL is set, the built-in dialogue otherwise, with the same tools bound
// to the caller's contact and the called location. The request holds no owner connection: its
// connection takes the request role, and the context, the tool calls' claims and the record go
// through the voice functions that check the secret's hash (app_hidden.voice_context,
// voice_receptionist_authenticate, voice_record).
import type pg from 'pg';
import type { Config } from '../config.ts';
import { answer } from '../receptionist/answer.ts';
import type { Answer, ReceptionistContext } from '../receptionist/types.ts';
import { modelFromEnv, ModelUnavailable } from '../receptionist/model.ts';
import { runTool, type Binding } from '../receptionist/tools.ts';

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

/** The receptionist's answer (`decided`: as receptionist_record takes it). */
export type BrainAnswer = ({ kind: 'reply'; text: string } | { kind: 'handover'; reason: string }) & { decided?: Answer };
export type VoiceBrain = (pool: pg.Pool, secretHash: Buffer, turn: VoiceTurn, config: Config) => Promise<BrainAnswer>;

export const receptionistBrain: VoiceBrain = async (pool, secretHash, turn, config) => {
  const client = await pool.connect();
  try {
    // the request role for the whole turn (each tool call's transaction sets its claims)
    await client.query('set role svc_request');
    const { rows: [row] } = await client.query<{ context: ReceptionistContext | null }>(
      'select app_hidden.voice_context($1, $2, $3) as context', [secretHash, turn.conversation_id, turn.message_id]);
    const ctx = row?.context;
    if (!ctx) return { kind: 'handover', reason: 'not the receptionist\'s to answer' };
    const binding: Binding = { organization_id: turn.organization_id, conversation_id: turn.conversation_id, message_id: turn.message_id,
      contact_id: ctx.contact_id, location_id: ctx.location_id,
      authenticate: { name: 'app_hidden.voice_receptionist_authenticate', args: [secretHash] } };
    const tools = (name: string, args: unknown, position: number) => runTool({ config }, client, binding, name, args, position);
    const model = modelFromEnv();
    let decided: Answer;
    try {
      decided = await answer(ctx, tools, { model });
    } catch (e) {
      // a caller cannot wait for retries: a failing model leaves the built-in dialogue to answer what it can
      if (!(e instanceof ModelUnavailable)) throw e;
      decided = await answer(ctx, tools, { model, modelDown: true });
    }
    return decided.kind === 'reply' ? { kind: 'reply', text: decided.text, decided } : { kind: 'handover', reason: decided.reason, decided };
  } finally {
    const broken = await client.query('reset role').then(() => false, () => true);
    client.release(broken);
  }
};
