// What a Twilio-compatible SMS provider posts back (README: Delivery webhooks), outside /api/v1
// and with no key. Both are form-encoded as Twilio sends them and signed with X-Twilio-Signature:
// base64 HMAC-SHA1, under the auth token, of the full URL and the sorted parameters
// (src/delivery/twilio.ts). The token is TWILIO_AUTH_TOKEN, else the one in
// SMS_TRANSPORT=twilio://…; the URL is SVC_BASE_URL + the path when set (a service behind a
// proxy), else the URL as this server was asked. A bad or missing signature: 403
// `invalid_signature` before anything is parsed or recorded.
//   POST /webhooks/twilio/sms     an inbound SMS: app_hidden.delivery_inbound_sms, the path of
//                                 `svc admin inbound sms` (idempotent on MessageSid)
//   POST /webhooks/twilio/status  a status callback: app_hidden.delivery_record_event, once per
//                                 (MessageSid, MessageStatus)
import type { Request } from 'express';
import { z } from 'zod';
import { publicCall } from '../db/request.ts';
import { readRawBody } from '../http/body.ts';
import { log } from '../log.ts';
import { ApiError, fromZod } from '../platform/errors.ts';
import type { PublicPage } from '../registry/area.ts';
import { parseTwilioSetting, twilioSignatureValid } from './twilio.ts';

const MAX_BODY = 64 * 1024;
export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';
const E164 = z.string().regex(/^\+[1-9][0-9]{6,14}$/, 'an E.164 number');
const Sid = z.string().min(1).max(200).refine((s) => !s.includes('\u0000'), 'no NUL characters');

/** The auth token webhooks are verified with, if one is configured. */
export function twilioAuthToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.TWILIO_AUTH_TOKEN) return env.TWILIO_AUTH_TOKEN;
  try {
    return parseTwilioSetting(env.SMS_TRANSPORT)?.authToken;
  } catch {
    return undefined;
  }
}

/** The URL the provider signed: SVC_BASE_URL's origin and path prefix with this request's path, else as asked. */
export function signedUrl(req: Request, env: NodeJS.ProcessEnv = process.env): string {
  if (env.SVC_BASE_URL) return new URL(req.originalUrl.replace(/^\//, ''), env.SVC_BASE_URL.replace(/\/?$/, '/')).toString();
  return `${req.protocol}://${req.get('host')}${req.originalUrl}`;
}

/** The verified form parameters of a provider's request; 403 unless signed with the token. */
async function verifiedForm(req: Request): Promise<Record<string, string>> {
  const raw = await readRawBody(req, MAX_BODY);
  const token = twilioAuthToken();
  if (!token) log.warn('No Twilio auth token (TWILIO_AUTH_TOKEN or SMS_TRANSPORT=twilio://…): every Twilio webhook is refused');
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) {
    const seen = params[name];
    params[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  if (!token || !twilioSignatureValid(token, signedUrl(req), params, req.get(TWILIO_SIGNATURE_HEADER))) {
    throw new ApiError(403, 'invalid_signature', `The ${TWILIO_SIGNATURE_HEADER} header does not sign this URL and these parameters`);
  }
  // a repeated parameter is not part of Twilio's messages: the last value counts
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Array.isArray(v) ? v.at(-1)! : v]));
}

const InboundSms = z.object({
  MessageSid: Sid,
  From: E164,
  To: E164,
  Body: z.string().min(1).max(20000).refine((s) => !s.includes('\u0000'), 'no NUL characters'),
});

/** Twilio's message statuses, as the delivery events record them; others (receiving, received) are not ours to record. */
const STATUS: Record<string, 'queued' | 'sent' | 'delivered' | 'undelivered' | 'failed'> = {
  accepted: 'queued', scheduled: 'queued', queued: 'queued', sending: 'queued', sent: 'sent',
  delivered: 'delivered', read: 'delivered', undelivered: 'undelivered', failed: 'failed', canceled: 'failed',
};
const StatusCallback = z.object({
  MessageSid: Sid,
  MessageStatus: z.enum(Object.keys(STATUS) as [string, ...string[]]),
  ErrorCode: z.string().max(20).optional(),
  ErrorMessage: z.string().max(500).optional(),
});

const emptyTwiml = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

export const webhookPages: PublicPage[] = [{
  method: 'POST',
  path: '/webhooks/twilio/sms',
  provider: true,
  async handle(req, res, { pool }) {
    const parsed = InboundSms.safeParse(await verifiedForm(req));
    if (!parsed.success) throw fromZod(parsed.error, 'body');
    const { MessageSid, From, To, Body } = parsed.data;
    await publicCall(pool, 'select app_hidden.delivery_inbound_sms($1, $2, $3, $4, true) as result', [To, From, Body, MessageSid]);
    // the answer (a keyword's, the AI's) leaves through our own queue, not this response
    res.status(200).type('text/xml').send(emptyTwiml);
  },
}, {
  method: 'POST',
  path: '/webhooks/twilio/status',
  provider: true,
  async handle(req, res, { pool }) {
    const parsed = StatusCallback.safeParse(await verifiedForm(req));
    if (!parsed.success) throw fromZod(parsed.error, 'body');
    const { MessageSid, MessageStatus, ErrorCode, ErrorMessage } = parsed.data;
    const type = STATUS[MessageStatus]!;
    const reason = ErrorCode ? `${ErrorCode}${ErrorMessage ? `: ${ErrorMessage}` : ''}` : undefined;
    const [row] = await publicCall<{ result: Record<string, unknown> }>(pool,
      'select app_hidden.delivery_record_event($1, null, $2, $3, $4::jsonb) as result',
      [MessageSid, `twilio:${MessageSid}:${MessageStatus}`, type,
        JSON.stringify({ status: MessageStatus, ...(ErrorCode ? { error_code: ErrorCode } : {}), ...(reason ? { reason } : {}) })]);
    res.status(200).json(row!.result);
  },
}];
