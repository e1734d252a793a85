// The webhooks suites' shared pieces: a local receiver that records each delivery and answers
// as told, the tenant (booking, forms, numbers of its own so two tenants can share a database),
// and subscribing through the same function as `svc admin webhook add`.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type pg from 'pg';
import { addWebhook } from '../../src/webhooks/subscriptions.ts';
import type { Fixture } from '../helpers/fixtures.ts';
import { dstFixture } from '../appointments/booking-helpers.ts';
import { withForms } from '../forms/helpers.ts';

export interface Received { path: string; headers: IncomingHttpHeaders; body: string; at: number }

/**
 * An HTTP receiver on 127.0.0.1: records every request; `answer(path, n)` (n: how many requests
 * that path had, this one included) gives the status, or null to hold the request unanswered.
 */
export async function receiver(answer: (path: string, n: number) => number | null = () => 200) {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const path = req.url ?? '/';
    received.push({ path, headers: req.headers, body, at: Date.now() });
    const status = answer(path, received.filter((r) => r.path === path).length);
    if (status === null) { held.push(res); return; }
    res.statusCode = status;
    res.end(status >= 200 && status < 300 ? 'ok' : 'no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** The parsed body of a delivery after checking its signature with the standardwebhooks verifier (throws if it fails). */
export function verified(secret: string, r: Received): { type: string; timestamp: string; data: Record<string, any> } {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: Record<string, any> };
}

/**
 * Acme with booking resources and forms; a tenant named otherwise gets SMS numbers of its own
 * (+1555990…), so an inbound SMS names one organization.
 */
export function webhooksFixture(name = 'Acme Dental'): Fixture {
  const f = withForms(dstFixture(name));
  return name === 'Acme Dental' ? f : JSON.parse(JSON.stringify(f).replaceAll('"+155500000', '"+155599000'));
}

/** Subscribes `url` (private addresses allowed: the receiver is local) to `events` (default all). */
export async function subscribe(owner: pg.Pool, org: string, url: string, events = 'all') {
  return addWebhook(owner, { org, url, events }, true);
}

/** The organization's deliveries, oldest first. */
export async function deliveries(owner: pg.Pool, org: string) {
  return (await owner.query(`select d.*, s.url from app_public.webhook_deliveries d
    join app_public.webhook_subscriptions s on s.organization_id = d.organization_id and s.id = d.subscription_id
    where d.organization_id = $1 order by d.created_at, d.id`, [org])).rows;
}
