// Delivers one queued email or SMS: the job app_hidden.queue_message adds in the transaction
// that decided to send it, and the retries of any message refused for now (a conversation's
// reply, the receptionist's, a sequence's or a broadcast's: app_private.delivery_retry queues the
// job again at the next attempt of the retry schedule, docs/delivery.md). Runs on graphile-worker's owner connection, since app_private
// belongs to the owner alone.
//
// A message is sent once: its row stays locked while it is handed over and is marked sent in
// the same transaction, so any later job for it (a duplicate, or a rerun after a worker died
// between that commit and recording the job done) waits for the lock, finds it sent and does
// nothing. The open transaction costs one connection per running delivery, for as long as the
// transports' timeouts allow. With the sink, storing and marking commit together: exactly once.
// SMTP and HTTP hand the message over before that commit, so if the process dies, or the commit
// fails, after the far side accepted it, the retry sends it again: at least once. That window
// is one UPDATE and a COMMIT wide; the stable Message-ID and Idempotency-Key let the far side
// recognise the duplicate.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { isPermanentDeliveryError, type OutgoingMessage, type Transports } from '../src/delivery/index.ts';

const Payload = z.object({ organization_id: z.uuid(), message_id: z.uuid() });

export function deliverMessage(transports: Transports): Task {
  return async (payload, helpers) => {
    const { organization_id, message_id } = Payload.parse(payload);
    let sent = false;
    try {
      await helpers.withPgClient(async (client) => {
        await client.query('begin');
        try {
          const { rows: [message] } = await client.query<OutgoingMessage & { status: string }>(
            `select organization_id, id, channel, sender, recipient, subject, body, meta, status
               from app_private.outgoing_messages
              where organization_id = $1 and id = $2
                for update`, [organization_id, message_id]);
          // Gone (its organization was deleted), delivered, failed or unknown: nothing to do. A
          // sequence's message retried after its enrollment ended (cancelled, unsubscribed) is
          // failed instead of sent.
          const ended = message?.status === 'queued'
            && (await client.query<{ ended: boolean }>('select app_private.delivery_enrollment_ended($1, $2) as ended',
              [organization_id, message_id])).rows[0]!.ended;
          if (message?.status === 'queued' && !ended) {
            const accepted = await transports[message.channel].send(message, client);
            // the provider's id (Twilio's SID): its status callbacks name the message by it
            if (accepted?.providerId) {
              await client.query('select app_private.delivery_set_provider_id($1, $2, $3)', [organization_id, message_id, accepted.providerId]);
            }
            await client.query(
              `update app_private.outgoing_messages set status = 'sent', sent_at = now(), error = null, next_attempt_at = null
                where organization_id = $1 and id = $2`, [organization_id, message_id]);
            // a sequence's or broadcast's message that was retried: its step recorded, its enrollment moved on
            await client.query('select app_private.delivery_settle($1, $2, null)', [organization_id, message_id]);
            sent = true;
          }
          await client.query('commit');
        } catch (e) {
          await client.query('rollback').catch(() => undefined);
          throw e;
        }
      });
    } catch (e) {
      const error = String((e as Error)?.message ?? e).slice(0, 1000);
      if (sent) throw e; // the commit itself failed: graphile-worker runs the job again
      if (isPermanentDeliveryError(e)) {
        // refused for good (an SMTP 5xx, a provider's permanent error): sending again cannot change the answer
        helpers.logger.warn(`message ${message_id} refused for good: ${error.slice(0, 200)}`);
        await helpers.query(
          `update app_private.outgoing_messages set error = $3, status = 'failed', next_attempt_at = null
            where organization_id = $1 and id = $2 and status = 'queued'`, [organization_id, message_id, error]);
        await helpers.query('select app_private.delivery_settle($1, $2, $3)', [organization_id, message_id, error]);
        return;
      }
      // refused for now (connection refused, reset or timed out, SMTP 4xx, HTTP 429/5xx): the
      // message stays queued and its job comes back at the next attempt of the retry schedule
      // (app_private.delivery_retry); if that cannot be recorded, graphile-worker retries the job
      const { rows: [retry] } = await helpers.query<{ at: Date | null }>('select app_private.delivery_retry($1, $2, $3) as at',
        [organization_id, message_id, error]);
      helpers.logger.warn(`message ${message_id} refused for now (${error.slice(0, 200)}); ${
        retry?.at ? `tried again at ${retry.at.toISOString()}` : 'its retries are over: failed'}`);
    }
  };
}
