// Delivers one event to one subscription: the job app_private.webhook_emit adds (key
// webhook:<delivery id>) in the transaction that caused the event. Runs on graphile-worker's
// owner connection: the signing secret lives in app_private.
//
// The delivery's row stays locked while the attempt is out, and what became of it (delivered,
// or the next attempt with its job) commits after the answer. A worker that dies in between
// leaves the row pending and its job to run again: the receiver may get the same event twice,
// always with the same webhook-id and body (at least once; receivers drop repeats by
// webhook-id). Every retry is a new job under the same key, due when the backoff says.
import type { Task } from 'graphile-worker';
import type pg from 'pg';
import { z } from 'zod';
import { AddressRefused } from '../platform/addresses.ts';
import { RETRY_FOR_MS, retryDelayMs } from './events.ts';
import { sendAttempt } from './send.ts';

const Payload = z.object({ organization_id: z.uuid(), delivery_id: z.uuid() });

export interface DeliverOptions { allowPrivate: boolean; retryBaseMs: number }

interface Due {
  id: string; event: string; occurred_at: Date; data: unknown; status: string; attempts: number; created_at: Date;
  subscription_id: string; url: string; subscription_status: string; secret: string;
}

/** The body of a delivery, the same bytes on every attempt. */
export const deliveryBody = (d: Pick<Due, 'event' | 'occurred_at' | 'data'>) =>
  JSON.stringify({ type: d.event, timestamp: d.occurred_at.toISOString(), data: d.data });

/** webhook-id of a delivery. */
export const webhookId = (deliveryId: string) => `msg_${deliveryId.replaceAll('-', '')}`;

async function settle(client: pg.PoolClient, org: string, d: Due, status: number | null, error: string | null, opts: DeliverOptions) {
  const args = [org, d.id, status, error?.slice(0, 1000) ?? null];
  if (status !== null && status >= 200 && status < 300) {
    await client.query(`update app_public.webhook_deliveries set status = 'delivered', delivered_at = now(), next_attempt_at = null,
      attempts = attempts + 1, last_status = $3, last_error = $4 where organization_id = $1 and id = $2`, args);
  } else if (status === 410) {
    // the receiver says the URL is gone for good: the subscription stops, and so do its retries
    await client.query(`update app_public.webhook_deliveries set status = 'failed', next_attempt_at = null,
      attempts = attempts + 1, last_status = $3, last_error = $4 where organization_id = $1 and id = $2`, args);
    await client.query(`update app_public.webhook_subscriptions set status = 'disabled', disabled_reason = 'the receiver answered 410 Gone',
      updated_at = now() where organization_id = $1 and id = $2`, [org, d.subscription_id]);
    await client.query(`update app_public.webhook_deliveries set status = 'cancelled', next_attempt_at = null
      where organization_id = $1 and subscription_id = $2 and status = 'pending'`, [org, d.subscription_id]);
  } else {
    const delay = retryDelayMs(d.attempts + 1, opts.retryBaseMs);
    const giveUp = Date.now() + delay > d.created_at.getTime() + RETRY_FOR_MS;
    await client.query(`update app_public.webhook_deliveries
        set status = case when $5 then 'failed' else 'pending' end,
            next_attempt_at = case when $5 then null else now() + $6 * interval '1 millisecond' end,
            attempts = attempts + 1, last_status = $3, last_error = $4
      where organization_id = $1 and id = $2`, [...args, giveUp, delay]);
    if (!giveUp) {
      await client.query(`select app_private.add_job('webhook_deliver', $1, $2, now() + $3 * interval '1 millisecond')`,
        [{ organization_id: org, delivery_id: d.id }, `webhook:${d.id}`, delay]);
    }
  }
}

export function deliverWebhook(opts: DeliverOptions): Task {
  return async (payload, helpers) => {
    const { organization_id: org, delivery_id } = Payload.parse(payload);
    await helpers.withPgClient(async (client) => {
      await client.query('begin');
      try {
        // skip locked: another run of this delivery is out; it settles it
        const { rows: [d] } = await client.query<Due>(
          `select d.id, d.event, d.occurred_at, d.data, d.status, d.attempts, d.created_at,
                  s.id as subscription_id, s.url, s.status as subscription_status, k.secret
             from app_public.webhook_deliveries d
             join app_public.webhook_subscriptions s on s.organization_id = d.organization_id and s.id = d.subscription_id
             join app_private.webhook_secrets k on k.organization_id = s.organization_id and k.subscription_id = s.id
            where d.organization_id = $1 and d.id = $2
              for update of d skip locked`, [org, delivery_id]);
        // gone (the subscription was removed), or settled already
        if (d && d.status === 'pending') {
          if (d.subscription_status !== 'active') {
            await client.query(`update app_public.webhook_deliveries set status = 'cancelled', next_attempt_at = null
              where organization_id = $1 and id = $2`, [org, d.id]);
          } else {
            let status: number | null = null;
            let error: string | null = null;
            try {
              status = await sendAttempt({ url: d.url, secret: d.secret, id: webhookId(d.id), body: deliveryBody(d), allowPrivate: opts.allowPrivate });
              if (status < 200 || status >= 300) error = `HTTP ${status}`;
            } catch (e) {
              error = e instanceof AddressRefused ? `refused: ${e.message}` : String((e as Error)?.message ?? e);
            }
            await settle(client, org, d, status, error, opts);
            if (error) helpers.logger.info(`webhook delivery ${d.id} attempt ${d.attempts + 1}: ${error}`);
          }
        }
        await client.query('commit');
      } catch (e) {
        await client.query('rollback').catch(() => undefined);
        throw e;
      }
    });
  };
}
