// Email over SMTP (EMAIL_TRANSPORT=smtp://user:pass@host:port or smtps://…), through nodemailer.
// Every message carries (src/delivery/email_headers.ts): a Message-ID on the sending domain,
// stable per message; Reply-To reply+TOKEN@ the sending domain, which routes an answer back to
// the conversation (src/delivery/inbound_email.ts); the headers it was built with (the RFC 8058
// one-click unsubscribe pair on sequence and broadcast mail); and for HTML a plain-text part
// beside it. A temporary refusal (SMTP 4xx, or the connection failing) is thrown for the delivery
// queue to retry later (and retried here first when retryDelaysMs asks); a permanent one (5xx) is a
// PermanentDeliveryError: the message fails with the server's reason and is never retried.
import nodemailer from 'nodemailer';
import type { OutgoingMessage, Transport } from './transport.ts';
import { PermanentDeliveryError } from './transport.ts';
import { emailEnvelopeHeaders, htmlToText } from './email_headers.ts';
import { serially } from '../db/serial.ts';
import type pg from 'pg';

export interface SmtpOptions {
  /** The waits before each retry of a temporary refusal within one delivery (ms). */
  retryDelaysMs?: readonly number[];
}

/** The SMTP reply code of a nodemailer error, if the server answered one. */
const responseCode = (e: unknown): number | undefined => {
  const code = (e as { responseCode?: unknown })?.responseCode;
  return typeof code === 'number' ? code : undefined;
};

export function smtpTransport(url: string, options: SmtpOptions = {}): Transport {
  // none by default: a message refused for now goes back to the delivery queue, which retries it
  // for hours on the retry schedule (docs/delivery.md) without holding up the rest of its batch
  const delays = options.retryDelaysMs ?? [];
  // One pool of connections per transport (one per worker), as a bare nodemailer pool keeps:
  // a message goes over a connection already greeted and EHLO'd, not a new TCP connection, greeting
  // and EHLO each (bench/delivery.ts: 35 against 400 msg/s). At most five connections (nodemailer's
  // default; above the worker's concurrency of 4, so an API send does not wait
  // behind the worker's). A connection idle for a second says QUIT, so nothing outlives a stopped
  // worker by more than that; a burst (a sequence's due steps, a broadcast's batch) reuses them.
  // The timeouts bound how long a delivery can hold up a graceful shutdown. The URL's own query
  // options win: `?pool=false` is one connection per message, `?maxConnections=N`,
  // `?idleTimeout=MS`.
  const mailer = nodemailer.createTransport({
    url, pool: true, maxConnections: 5, idleTimeout: 1000, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000,
  });
  return {
    name: 'smtp',
    close: () => mailer.close(),
    async send(m, tx) {
      const { messageId, headers } = emailEnvelopeHeaders(m);
      const html = m.meta?.html === true;
      const name = await fromName(m, tx);
      const mail = {
        // an address object: nodemailer quotes and encodes the name (commas, quotes, non-ASCII)
        from: m.sender ? (name ? { name, address: m.sender } : m.sender) : undefined,
        to: m.recipient,
        subject: m.subject ?? '',
        ...(html ? { html: m.body, text: htmlToText(m.body) } : { text: m.body }),
        headers,
        // Stable per message: if a retry sends it again (see workers/deliver_message.ts), the
        // receiving side can recognise the duplicate.
        messageId,
      };
      for (let attempt = 0; ; attempt++) {
        try {
          await mailer.sendMail(mail);
          return;
        } catch (e) {
          const code = responseCode(e);
          const reason = String((e as Error)?.message ?? e).slice(0, 500);
          if (code !== undefined && code >= 500) throw new PermanentDeliveryError(`SMTP ${code}: ${reason}`);
          if (attempt >= delays.length) throw new Error(`SMTP temporary failure${code ? ` ${code}` : ''} after ${attempt + 1} attempts: ${reason}`);
          await new Promise((r) => setTimeout(r, delays[attempt]));
        }
      }
    },
  };
}

/** How long an organization's name is reused for its messages before it is asked again. */
const NAME_TTL_MS = 30_000;
const orgNames = new Map<string, { name: string | null; at: number }>();

/**
 * The display name of a message's From (app_private.email_from_name): `meta.from_name` when it
 * was built with one; a person's reply in a conversation, `<person>, <organization>`, asked each
 * time; anything else the organization's name, kept a short while per organization so a batch
 * of a broadcast asks once. Without a transaction (a bare transport), none.
 */
async function fromName(m: OutgoingMessage, tx: pg.ClientBase | undefined): Promise<string | null> {
  if (typeof m.meta?.from_name === 'string') return m.meta.from_name || null;
  if (!tx) return null;
  const personal = typeof m.meta?.conversation_id === 'string';
  const kept = personal ? undefined : orgNames.get(m.organization_id);
  if (kept && Date.now() - kept.at < NAME_TTL_MS) return kept.name;
  const { rows: [row] } = await serially<{ name: string | null }>(tx, 'select app_private.email_from_name($1, $2) as name',
    [m.organization_id, m.id]);
  const name = row?.name?.trim() || null;
  if (!personal) orgNames.set(m.organization_id, { name, at: Date.now() });
  return name;
}
