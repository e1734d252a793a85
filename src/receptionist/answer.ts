// The receptionist's one entry point: a conversation's context and the contact's inbound text
// in, the answer out (a reply to send, or a hand-over, with the dialogue's new pending offer and
// the appointment it booked or moved). It knows no transport: the SMS and chat job
// (src/receptionist/task.ts) records and sends what it answers; a voice channel can call the
// same function with a call's transcript and speak the reply.
//
// Two brains: the model (AI_BASE_URL set: src/receptionist/model.ts) and the built-in dialogue
// (src/receptionist/dialogue.ts). Both act only through `tools` (the bound tool runner), so the
// same operations, SQL functions and row-level security decide for both.
import { builtInAnswer } from './dialogue.ts';
import { modelAnswer, type ModelSettings } from './model.ts';
import type { Answer, ReceptionistContext, ToolRunner } from './types.ts';

/** More AI answers than this in one conversation in 24 hours hand it to a person (a loop guard). */
export const LOOP_LIMIT = 20;

/**
 * Answers one inbound message. `model` absent: the built-in dialogue. With a model, a model
 * that keeps failing is the caller's to retry (this throws ModelUnavailable); `modelDown` tells
 * this function the retries are spent: the built-in dialogue then answers what it can without
 * acting (hours, address, FAQ) and hands the rest to a person.
 */
export async function answer(ctx: ReceptionistContext, tools: ToolRunner,
  opts: { model?: ModelSettings; modelDown?: boolean } = {}): Promise<Answer> {
  if (ctx.ai_answers_24h >= LOOP_LIMIT) {
    return { kind: 'handover', reason: `more than ${LOOP_LIMIT} answers in 24 hours`, brain: opts.model ? 'model' : 'built-in' };
  }
  if (opts.model && !opts.modelDown) return modelAnswer(ctx, tools, opts.model);
  return builtInAnswer(ctx, tools, { informationOnly: Boolean(opts.model && opts.modelDown) });
}
