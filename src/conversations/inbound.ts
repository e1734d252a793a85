// Messages from outside, as the operator simulates them (`svc admin inbound sms|email`,
// operator-cli.md) and as the Delivery issue's provider webhooks will hand them over: one owner
// transaction each (app_private.conversations_inbound_*), which also queues
// the AI's answer or a keyword's.
import type pg from 'pg';
import { AdminError, asAdmin } from '../admin/commands.ts';
import { toE164 } from '../platform/phone.ts';
import { isAutoReply } from '../delivery/inbound_email.ts';

export interface InboundSms { to?: string; from?: string; body?: string; providerId?: string }
export interface InboundEmail {
  to?: string; from?: string; subject?: string; body?: string; inReplyTo?: string; providerId?: string;
  /** `--header "Name: value"`, as many as wanted: what marks an automatic answer (Auto-Submitted, X-Autoreply, Precedence, …) */
  header?: string[];
}

function phone(value: string | undefined, flag: string): string {
  const e164 = value === undefined ? undefined : toE164(value);
  if (!e164) throw new AdminError(`${flag} must be a phone number with its country code (+15551230001)`);
  return e164;
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new AdminError(`${flag} is required`);
  if (value.includes('\u0000')) throw new AdminError(`${flag} may not contain NUL characters`);
  if (value.length > 20000) throw new AdminError(`${flag} is longer than 20000 characters`);
  return value;
}

/** An SMS arrives at one of an organization's numbers: {conversation_id, message_id, contact_id, …}. */
export async function inboundSms(pool: pg.Pool, m: InboundSms): Promise<Record<string, unknown>> {
  const to = phone(m.to, '--to');
  const from = phone(m.from, '--from');
  const body = required(m.body, '--body');
  return asAdmin(async () => (await pool.query(
    // the delivery area's entry (app_hidden.delivery_inbound_sms), the webhook's path: this area's function, then the replied exit
    'select app_hidden.delivery_inbound_sms($1, $2, $3, $4, false) as result', [to, from, body, m.providerId ?? null])).rows[0].result);
}

const BARE_ID = /^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})>?$/i;

/**
 * --in-reply-to as a Message-ID header carries it: the outbox's `message_id` (a bare id, as
 * `svc admin delivery --message-id` takes it) becomes `<id@…>`, the form our messages' Message-ID
 * has; a whole Message-ID passes as it is.
 */
export const asMessageIdHeader = (v: string): string => {
  const bare = BARE_ID.exec(v.trim());
  return bare ? `<${bare[1]!.toLowerCase()}@message-id>` : v;
};

/** An email arrives (a reply to a message the service sent when inReplyTo names it): {conversation_id, message_id, contact_id, …}. */
export async function inboundEmail(pool: pg.Pool, m: InboundEmail): Promise<Record<string, unknown>> {
  const to = required(m.to, '--to');
  const from = required(m.from, '--from');
  const body = required(m.body, '--body');
  const headers = new Map<string, string>();
  for (const line of m.header ?? []) {
    const at = line.indexOf(':');
    if (at < 1 || line.includes('\u0000') || line.length > 1000) throw new AdminError('--header must be "Name: value"');
    headers.set(line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim());
  }
  return asAdmin(async () => (await pool.query(
    // the delivery area's entry (app_hidden.delivery_inbound_email): reply+TOKEN addresses too, the same path as its webhook;
    // the headers name an auto-reply here, its subject in the SQL (email_auto_reply_subject)
    'select app_hidden.delivery_inbound_email($1, $2, $3, $4, $5, $6, $7) as result',
    [to, from, m.subject ?? null, body, m.inReplyTo === undefined ? null : asMessageIdHeader(m.inReplyTo), m.providerId ?? null,
      isAutoReply(headers)])).rows[0].result);
}
