// Task `conversation_ai_reply`: the AI receptionist answers one inbound SMS or chat message
// (payload {organization_id, conversation_id, message_id}; job key conversation_ai:<message id>,
// queued in the transaction that recorded the message, or by conversations_resume). Runs on
// graphile-worker's owner connection: the functions are app_private's
// (app_private.conversation_ai_due, conversation_ai_context, conversation_ai_record).
//
// Crash-safe in three steps: the context is read (NULL: nothing owed, done); the responder
// answers outside any transaction; conversation_ai_record checks again under the
// conversation's lock and writes the answer with its delivery job (or the hold of a hand-over)
// in one transaction (with the local sink, the answer is stored there in it). A rerun after
// that commit finds the message answered; a rerun before it asks the responder again, nothing
// having been sent. A responder that fails throws: the job is retried by graphile-worker with
// its backoff.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { TaskDeps } from '../registry/area.ts';
import { responderFromEnv, type AiContext, type Responder } from './responder.ts';

const Payload = z.object({ organization_id: z.uuid(), conversation_id: z.uuid(), message_id: z.uuid() });

/** The task, with the responder the environment configures at each run (or the one given). */
export function conversationAiReply(deps: TaskDeps, responder?: Responder): Task {
  // channels whose transport is the local sink: the answer is stored there with its record
  const sinks = (['email', 'sms'] as const).filter((c) => deps.transports[c].name === 'sink');
  return async (payload, helpers) => {
    const { organization_id, conversation_id, message_id } = Payload.parse(payload);
    await helpers.withPgClient(async (client) => {
      const { rows: [context] } = await client.query<{ context: AiContext | null }>(
        'select app_private.conversation_ai_context($1, $2, $3) as context', [organization_id, conversation_id, message_id]);
      if (!context?.context) return;
      const answer = await (responder ?? responderFromEnv()).respond(context.context);
      const { rows: [recorded] } = await client.query<{ result: { action: string; reason?: string } }>(
        'select app_private.conversation_ai_record($1, $2, $3, $4, $5) as result',
        [organization_id, conversation_id, message_id, JSON.stringify(answer), sinks]);
      if (recorded?.result.action === 'refused') {
        helpers.logger.info(`AI answer to message ${message_id} not sent: ${recorded.result.reason}`);
      }
    });
  };
}
