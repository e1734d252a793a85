// Task `conversation_ai_reply`: the receptionist answers one inbound SMS or chat message
// (payload {organization_id, conversation_id, message_id}; job key conversation_ai:<message id>,
// queued in the transaction that recorded the message, or by conversations_resume).
//
// Crash-safe in three steps, as before the receptionist could act:
//   1. app_private.receptionist_context (NULL: nothing owed, done; a contact who opted out: no answer);
//   2. answer(): the tool calls each commit on their own, a write with an idempotency key derived
//      from the inbound message and the call's position, so a rerun replays them, never acts twice;
//   3. app_private.receptionist_record checks again under the conversation's lock and writes the
//      reply (or the hand-over) with its delivery in one transaction, once.
// A model endpoint that fails throws (graphile-worker retries with its backoff); from the
// MODEL_ATTEMPTS-th attempt on the built-in dialogue answers what it can and hands the rest over.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { loadConfig } from '../config.ts';
import { sinkOnlyChannels } from './sinks.ts';
import type { TaskDeps } from '../registry/area.ts';
import { answer } from './answer.ts';
import type { ReceptionistContext } from './types.ts';
import { modelFromEnv, ModelUnavailable, type ModelSettings } from './model.ts';
import { runTool } from './tools.ts';

const Payload = z.object({ organization_id: z.uuid(), conversation_id: z.uuid(), message_id: z.uuid() });

/** From this attempt on, a failing model no longer holds the answer back. */
export const MODEL_ATTEMPTS = 3;

/** The task, with the model the environment configures at each run (or the one given; null: the built-in dialogue). */
export function conversationAiReply(deps: TaskDeps, model?: ModelSettings | null): Task {
  const sinks = sinkOnlyChannels(deps);
  return async (payload, helpers) => {
    const { organization_id, conversation_id, message_id } = Payload.parse(payload);
    const config = loadConfig();
    const inbox = `${(deps.baseUrl ?? config.baseUrl).replace(/\/+$/, '')}/dashboard/inbox`;
    await helpers.withPgClient(async (client) => {
      const { rows: [row] } = await client.query<{ context: ReceptionistContext | null }>(
        'select app_private.receptionist_context($1, $2, $3) as context', [organization_id, conversation_id, message_id]);
      const ctx = row?.context;
      if (!ctx || ctx.opted_out) return;
      const binding = { organization_id, conversation_id, message_id, contact_id: ctx.contact_id, location_id: ctx.location_id };
      const tools = (name: string, args: unknown, position: number) => runTool({ config }, client, binding, name, args, position);
      const settings = model === undefined ? modelFromEnv() : model ?? undefined;
      let turn;
      try {
        turn = await answer(ctx, tools, { model: settings });
      } catch (e) {
        if (!(e instanceof ModelUnavailable) || helpers.job.attempts < MODEL_ATTEMPTS) throw e;
        helpers.logger.warn(`${e.message}; the built-in receptionist answers message ${message_id}`);
        turn = await answer(ctx, tools, { model: settings, modelDown: true });
      }
      const { rows: [recorded] } = await client.query<{ result: { action: string; reason?: string } }>(
        'select app_private.receptionist_record($1, $2, $3, $4, $5, $6, $7) as result',
        [organization_id, conversation_id, message_id, JSON.stringify(turn), sinks,
          turn.kind === 'reply' && turn.state ? JSON.stringify(turn.state) : null, inbox]);
      if (recorded?.result.action === 'refused') {
        helpers.logger.info(`answer to message ${message_id} not sent: ${recorded.result.reason}`);
      }
    });
  };
}
