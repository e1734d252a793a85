// Email coming back (README: Delivery webhooks), outside /api/v1 and with no key, each body
// signed (src/delivery/signed_body.ts) with EMAIL_WEBHOOK_SECRET: 403 `invalid_signature`
// before anything is parsed or recorded.
//   POST /webhooks/email/inbound  one raw MIME message (as an MX provider or an smtp-server
//     relay forwards it), parsed with mailparser: the answer to one of our messages found by
//     In-Reply-To/References or the reply+TOKEN@ address, continued in its conversation
//     (app_hidden.delivery_inbound_email, the path of `svc admin inbound email`); an auto-reply
//     is recorded on the message, not as a reply. Idempotent on the email's Message-ID.
//   POST /webhooks/email/events   delivery events as JSON, {events: [{id, message_id, type,
//     bounce?, reason?}]} (or one such object): delivered, bounced (hard|soft), complained,
//     opened, clicked;
//     each recorded once by its id (app_hidden.delivery_record_event).
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { z } from 'zod';
import { publicCall } from '../db/request.ts';
import { readRawBody } from '../http/body.ts';
import { log } from '../log.ts';
import { ApiError, fromZod } from '../platform/errors.ts';
import { parseJsonBody } from '../platform/input.ts';
import type { PublicPage } from '../registry/area.ts';
import { htmlToText, messageIdOfReplyAddress } from './email_headers.ts';
import { BODY_SIGNATURE_HEADER, bodySignedCorrectly } from './signed_body.ts';

const MAX_MIME = 10 * 1024 * 1024;
const MAX_EVENTS = 256 * 1024;
const OURS = /^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@[^>\s]+>?$/i;

/** The facts of an inbound email the SQL needs. */
export interface InboundEmailFacts {
  to: string; from: string; subject: string | null; body: string; inReplyTo: string | null; providerId: string | null; autoReply: boolean;
}

const addresses = (a: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value.map((v) => v.address ?? '')).filter(Boolean);

/**
 * Whether a message's headers mark it an automatic answer: RFC 3834 Auto-Submitted other than
 * "no", the X-Autoreply / X-Autorespond that vacation responders set, Exchange's
 * X-Auto-Response-Suppress: All, Precedence auto_reply, bulk or junk. Recorded, never a reply.
 * The subject (Automatic reply, Out of Office, Abwesenheitsnotiz, …) is read by the SQL on every
 * path (app_private.email_auto_reply_subject), for messages that carry none of these.
 */
export function isAutoReply(headers: Pick<ParsedMail['headers'], 'get' | 'has'>): boolean {
  const h = (name: string) => String(headers.get(name) ?? '').trim().toLowerCase();
  const auto = h('auto-submitted');
  if (auto && auto !== 'no') return true;
  if (headers.has('x-autoreply') || headers.has('x-autorespond') || h('x-auto-response-suppress').includes('all')) return true;
  return ['auto_reply', 'auto-reply', 'bulk', 'junk'].includes(h('precedence'));
}

/**
 * The facts of a parsed email: the address written to (a reply+TOKEN one first), the id of ours it
 * answers. Received over SMTP (src/delivery/smtp_listener.ts), the envelope's recipient comes
 * first and its sender stands in for a missing From.
 */
export function emailFacts(mail: ParsedMail, envelope: { to?: string; from?: string } = {}): InboundEmailFacts {
  const recipients = [...(envelope.to ? [envelope.to] : []), ...addresses(mail.to), ...addresses(mail.cc),
    ...['delivered-to', 'x-original-to'].map((h) => String(mail.headers.get(h) ?? '')).filter((v) => v.includes('@'))];
  const to = recipients.find((r) => messageIdOfReplyAddress(r)) ?? recipients[0];
  const from = addresses(mail.from)[0] ?? envelope.from;
  if (!to || !from) throw new ApiError(400, 'bad_request', 'The message has no From or no To address');
  const refs = [mail.inReplyTo, ...[mail.references ?? []].flat().reverse()].filter((r): r is string => typeof r === 'string');
  const inReplyTo = refs.find((r) => OURS.test(r.trim())) ?? mail.inReplyTo ?? null;
  const text = (mail.text ?? (typeof mail.html === 'string' ? htmlToText(mail.html) : '')).trim();
  // a NUL cannot be stored in text: dropped, not refused (it is never meaningful in mail)
  const clean = <T extends string | null>(v: T): T => (v === null ? v : v.replace(/\u0000/g, '') as T);
  return {
    to: clean(to), from: clean(from), subject: clean(mail.subject ?? null),
    body: clean(text || '(no text)').slice(0, 20000),
    inReplyTo: clean(inReplyTo?.slice(0, 1000) ?? null),
    providerId: clean(mail.messageId?.slice(0, 200) ?? null),
    autoReply: isAutoReply(mail.headers),
  };
}

async function verified(req: Parameters<PublicPage['handle']>[0], max: number): Promise<Buffer> {
  const body = await readRawBody(req, max);
  const secret = process.env.EMAIL_WEBHOOK_SECRET;
  if (!secret) log.warn('EMAIL_WEBHOOK_SECRET is not set: every email webhook is refused');
  if (!bodySignedCorrectly(secret, body, req.get(BODY_SIGNATURE_HEADER))) {
    throw new ApiError(403, 'invalid_signature', `The ${BODY_SIGNATURE_HEADER} header is not the HMAC-SHA256 of this body`);
  }
  return body;
}

const EmailEvent = z.object({
  id: z.string().min(1).max(200).describe('The provider\'s id of the event: a second delivery records nothing'),
  message_id: z.string().max(300).regex(OURS, 'our message id, bare or as <id@domain>').or(z.uuid()),
  type: z.enum(['delivered', 'bounced', 'complained', 'opened', 'clicked']),
  bounce: z.enum(['hard', 'soft']).optional(),
  reason: z.string().max(500).optional(),
}).refine((e) => e.type !== 'bounced' || e.bounce !== undefined, { message: 'a bounce is hard or soft', path: ['bounce'] });
const EmailEventBatch = z.object({ events: z.array(EmailEvent).min(1).max(100) });
/** A batch ({events: […]}) or one event; each parsed on its own, so a 400 names the faulty field. */
const parseEmailEvents = (body: unknown) => (body !== null && typeof body === 'object' && 'events' in body
  ? EmailEventBatch.safeParse(body)
  : EmailEvent.transform((e) => ({ events: [e] })).safeParse(body));

/** Our message id from a Message-ID or a bare id. */
const ourId = (v: string): string => (OURS.exec(v)?.[1] ?? v).toLowerCase();

export const emailPages: PublicPage[] = [{
  method: 'POST',
  path: '/webhooks/email/inbound',
  provider: true,
  async handle(req, res, { pool }) {
    const raw = await verified(req, MAX_MIME);
    let mail: ParsedMail;
    try {
      mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
    } catch {
      throw new ApiError(400, 'bad_request', 'The body is not a MIME message');
    }
    const f = emailFacts(mail);
    const [row] = await publicCall<{ result: Record<string, unknown> }>(pool,
      'select app_hidden.delivery_inbound_email($1, $2, $3, $4, $5, $6, $7) as result',
      [f.to, f.from, f.subject, f.body, f.inReplyTo, f.providerId, f.autoReply]);
    res.status(200).json(row!.result);
  },
}, {
  method: 'POST',
  path: '/webhooks/email/events',
  provider: true,
  async handle(req, res, { pool }) {
    const raw = await verified(req, MAX_EVENTS);
    const parsed = parseEmailEvents(parseJsonBody(raw));
    if (!parsed.success) throw fromZod(parsed.error, 'body');
    // one transaction: a batch is recorded whole or not at all
    const [row] = await publicCall<{ results: unknown[] }>(pool,
      `select coalesce(jsonb_agg(app_hidden.delivery_record_event(null, (e->>'message_id')::uuid, 'email:' || (e->>'id'),
         e->>'type', e - 'id' - 'message_id' - 'type') order by n), '[]') as results
         from jsonb_array_elements($1::jsonb) with ordinality as x(e, n)`,
      [JSON.stringify(parsed.data.events.map((e) => ({ ...e, message_id: ourId(e.message_id) })))]);
    res.status(200).json({ results: row!.results });
  },
}];
