// `svc admin webhook add|list|remove` (README, Outbound webhooks): an organization's
// subscriptions, as the operator manages them. The secret is generated here, printed once by
// `add`, and kept in app_private.webhook_secrets for signing (docs/webhooks.md says why it is
// stored raw).
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { AdminError, inTransaction } from '../admin/commands.ts';
import { AddressRefused, checkedAddresses } from '../platform/addresses.ts';
import { WEBHOOK_EVENTS, type WebhookEvent } from './events.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function uuid(value: string | undefined, flag: string): string {
  if (!value || !UUID.test(value)) throw new AdminError(`${flag} must be a uuid`);
  return value.toLowerCase();
}

/** A Standard Webhooks secret: whsec_ and 32 random bytes in base64. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** `--events a,b` (or `all`): known event types, each once. */
export function parseEvents(value: string | undefined): WebhookEvent[] {
  if (value === undefined || value.trim() === '') throw new AdminError(`--events must list event types (${WEBHOOK_EVENTS.join(', ')}) or be all`);
  if (value.trim() === 'all') return [...WEBHOOK_EVENTS];
  const events = [...new Set(value.split(',').map((e) => e.trim()).filter(Boolean))];
  for (const e of events) {
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(e)) throw new AdminError(`--events: unknown event "${e}" (${WEBHOOK_EVENTS.join(', ')})`);
  }
  return events as WebhookEvent[];
}

/**
 * A receiver's URL: https (http only where private addresses are allowed, for a receiver on the
 * operator's own network), no credentials or fragment, and a host that resolves to public
 * addresses only, every one of them (the delivery checks again at each attempt).
 */
export async function checkWebhookUrl(value: string | undefined, allowPrivate: boolean): Promise<string> {
  if (value === undefined || value.length > 2000) throw new AdminError('--url must be an https URL of at most 2000 characters');
  let url: URL;
  try { url = new URL(value); } catch { throw new AdminError(`--url: ${value} is not a URL`); }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowPrivate)) {
    throw new AdminError('--url must be https (http only with SVC_WEBHOOKS_ALLOW_PRIVATE=1)');
  }
  if (url.username || url.password || url.hash || value.includes('#')) throw new AdminError('--url carries no credentials or fragment');
  // what is stored is the URL written out (percent-encoded), which can be longer than what was sent
  if (url.href.length > 2000) throw new AdminError('--url must be an https URL of at most 2000 characters (percent-encoded)');
  await checkedAddresses(url, allowPrivate).catch((e: unknown) => {
    if (e instanceof AddressRefused) {
      throw new AdminError(e.reason === 'private'
        ? `--url: ${e.message}; webhooks are not sent to the service's own network unless SVC_WEBHOOKS_ALLOW_PRIVATE=1`
        : `--url: ${e.message}`);
    }
    throw e;
  });
  return url.href;
}

export interface WebhookAdd { org?: string; url?: string; events?: string }

/** Subscribes an URL; answers the subscription with its secret, shown this once. */
export async function addWebhook(pool: pg.Pool, a: WebhookAdd, allowPrivate: boolean) {
  const org = uuid(a.org, '--org');
  const events = parseEvents(a.events);
  const url = await checkWebhookUrl(a.url, allowPrivate);
  const secret = newSecret();
  const row = await inTransaction(pool, async (c) => {
    const { rowCount } = await c.query('select 1 from app_public.organizations where id = $1', [org]);
    if (!rowCount) throw new AdminError(`no organization with id ${org}`);
    const { rows: [s] } = await c.query('select * from app_private.webhook_subscribe($1, $2, $3, $4)', [org, url, events, secret]);
    return s;
  });
  return {
    id: row.id, organization_id: row.organization_id, url: row.url, events: row.events, status: row.status, created_at: row.created_at,
    secret,
    note: 'shown once: verify each delivery\'s webhook-signature with this secret (Standard Webhooks); only the service keeps it.',
  };
}

/** An organization's subscriptions with their deliveries counted by status (no secrets). */
export async function listWebhooks(pool: pg.Pool, orgFlag: string | undefined) {
  const org = uuid(orgFlag, '--org');
  const { rowCount } = await pool.query('select 1 from app_public.organizations where id = $1', [org]);
  if (!rowCount) throw new AdminError(`no organization with id ${org}`);
  const { rows } = await pool.query(
    `select s.id, s.url, s.events, s.status, s.disabled_reason, s.created_at,
            jsonb_build_object(
              'pending', count(d.id) filter (where d.status = 'pending'),
              'delivered', count(d.id) filter (where d.status = 'delivered'),
              'failed', count(d.id) filter (where d.status = 'failed'),
              'cancelled', count(d.id) filter (where d.status = 'cancelled')) as deliveries,
            max(d.delivered_at) as last_delivered_at
       from app_public.webhook_subscriptions s
       left join app_public.webhook_deliveries d on d.organization_id = s.organization_id and d.subscription_id = s.id
      where s.organization_id = $1
      group by s.organization_id, s.id
      order by s.created_at, s.id`, [org]);
  return { organization_id: org, webhooks: rows };
}

/** Removes a subscription: nothing more is sent to it, retries included. */
export async function removeWebhook(pool: pg.Pool, idFlag: string | undefined) {
  const id = uuid(idFlag, '--id');
  const { rows: [found] } = await pool.query('select organization_id from app_public.webhook_subscriptions where id = $1', [id]);
  if (!found) throw new AdminError(`no webhook with id ${id}`);
  await pool.query('select app_private.webhook_unsubscribe($1, $2)', [found.organization_id, id]);
  return { id, organization_id: found.organization_id, removed: true };
}
