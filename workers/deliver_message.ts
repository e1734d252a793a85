// Delivers one queued email or SMS: the job app_hidden.queue_message adds in the transaction
// that decided to send it. Runs on graphile-worker's owner connection, since app_private
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
    try {
      await helpers.withPgClient(async (client) => {
        await client.query('begin');
        try {
          const { rows: [message] } = await client.query<OutgoingMessage & { status: string }>(
            `select organization_id, id, channel, sender, recipient, subject, body, meta, status
               from app_private.outgoing_messages
              where organization_id = $1 and id = $2
                for update`, [organization_id, message_id]);
          // Gone (its organization was deleted) or already delivered: nothing to do.
          if (message && message.status !== 'sent') {
            const accepted = await transports[message.channel].send(message, client);
            // the provider's id (Twilio's SID): its status callbacks name the message by it
            if (accepted?.providerId) {
              await client.query('select app_private.delivery_set_provider_id($1, $2, $3)', [organization_id, message_id, accepted.providerId]);
            }
            await client.query(
              `update app_private.outgoing_messages set status = 'sent', sent_at = now(), error = null
                where organization_id = $1 and id = $2`, [organization_id, message_id]);
          }
          await client.query('commit');
        } catch (e) {
          await client.query('rollback').catch(() => undefined);
          throw e;
        }
      });
    } catch (e) {
      // Kept for operators; graphile-worker retries with backoff until max_attempts, after which
      // the message is marked failed. A permanent refusal (an SMTP 5xx) fails it now: sending
      // again cannot change the answer, so the job ends without a retry.
      const permanent = isPermanentDeliveryError(e);
      const last = permanent || helpers.job.attempts >= helpers.job.max_attempts;
      await helpers.query(
        `update app_private.outgoing_messages
            set error = $3, status = case when $4 then 'failed' else status end
          where organization_id = $1 and id = $2 and status <> 'sent'`,
        [organization_id, message_id, String((e as Error)?.message ?? e).slice(0, 1000), last],
      ).catch((recordError: Error) => helpers.logger.error(`could not record the delivery error: ${recordError.message}`));
      if (permanent) {
        helpers.logger.warn(`message ${message_id} refused for good: ${String((e as Error).message).slice(0, 200)}`);
        return;
      }
      throw e;
    }
  };
}
