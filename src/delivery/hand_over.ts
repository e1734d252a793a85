// Handing a claimed batch of messages to the transports, all at once: what the sequences engine's
// jobs and broadcast runs do between the claim (committed) and the record of the answers. Each
// message is handed over exactly once; a refusal is its answer, never a retry here (the record
// fails it when permanent, else hands it to the delivery queue's retries). At most IN_FLIGHT at a time: an SMTP pool queues what its connections cannot
// take, but an HTTP provider counts concurrent requests (Twilio answers 429 past its account's
// limit), and a batch of hundreds at once would be refused in part. The answers keep the batch's order.
import type pg from 'pg';
import { serially } from '../db/serial.ts';
import { isPermanentDeliveryError, type OutgoingMessage, type Transports } from './transport.ts';

/** `permanent`: the refusal is final (the message fails); otherwise an error is retried later (app_private.delivery_retry_later). */
export interface HandOverAnswer { message_id: string; error: string | null; provider_id: string | null; permanent?: boolean }

/** Messages of one batch with the transports at a time. */
export const IN_FLIGHT = 16;

export async function handOver(transports: Transports, client: pg.ClientBase, messages: OutgoingMessage[],
  log: (line: string) => void): Promise<HandOverAnswer[]> {
  const answers: HandOverAnswer[] = new Array(messages.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, messages.length) }, async () => {
    while (next < messages.length) {
      const i = next++;
      answers[i] = await handOverOne(transports, client, messages[i]!, log);
    }
  }));
  return answers;
}

/**
 * One message to its transport: its answer (a refusal is an answer, never thrown). A provider's
 * id is kept at once on `idClient` (the transport's own client unless told).
 */
export async function handOverOne(transports: Transports, client: pg.ClientBase, message: OutgoingMessage,
  log: (line: string) => void, idClient: pg.ClientBase = client): Promise<HandOverAnswer> {
  try {
    const accepted = await transports[message.channel].send(message, client);
    const providerId = accepted?.providerId ?? null;
    // the provider's id (Twilio's SID), which its delivery reports name (src/delivery/webhooks.ts),
    // kept at once: a status callback can come before the batch is recorded
    if (providerId) {
      await serially(idClient, 'select app_private.delivery_set_provider_id($1, $2, $3)', [message.organization_id, message.id, providerId])
        .catch((e) => log(`message ${message.id}: its provider id ${providerId} not kept yet (${(e as Error)?.message ?? e}); the record keeps it`));
    }
    return { message_id: message.id, error: null, provider_id: providerId };
  } catch (e) {
    const error = String((e as Error)?.message ?? e).slice(0, 1000);
    log(`message ${message.id} refused by the ${message.channel} transport: ${error}`);
    return { message_id: message.id, error, provider_id: null, permanent: isPermanentDeliveryError(e) };
  }
}
