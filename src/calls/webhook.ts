// The voice platform's webhook: POST /webhooks/voice, outside /api/v1 and with no key. The body
// is signed: header X-Svc-Signature `sha256=<hex>`, the HMAC-SHA256 of the raw body with
// VOICE_WEBHOOK_SECRET (403 `invalid_signature` otherwise, before anything is read or written).
// A call is recorded once per platform call id (a retried delivery answers the first's ids):
// app_hidden.voice_call_record (db/schema/calls.sql).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { publicStatement } from '../db/request.ts';
import { readRawBody } from '../http/body.ts';
import { log } from '../log.ts';
import { ApiError, fromZod } from '../platform/errors.ts';
import { parseJsonBody } from '../platform/input.ts';
import { Phone } from '../platform/schemas.ts';
import type { PublicPage } from '../registry/area.ts';

const MAX_BODY = 1024 * 1024;
export const SIGNATURE_HEADER = 'x-svc-signature';

/** The signature header's value for a body: what the platform sends and the tests compute. */
export const signVoiceBody = (secret: string, body: Buffer | string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** The call as the platform reports it. */
export const VoiceCall = z.object({
  call_id: z.string().min(1).max(200).describe('The platform\'s id of the call: a second delivery records nothing new'),
  direction: z.enum(['inbound', 'outbound']).default('inbound'),
  from: Phone,
  to: Phone,
  status: z.enum(['completed', 'missed', 'voicemail', 'in_progress', 'failed']).default('completed'),
  started_at: z.iso.datetime({ offset: true }).optional(),
  duration_seconds: z.int().min(0).max(86400).optional(),
  summary: z.string().max(20000).optional(),
  caller_name: z.string().max(200).optional(),
  transcript: z.array(z.object({ speaker: z.enum(['caller', 'assistant', 'staff']), text: z.string().max(20000) })).max(5000).default([]),
});


function signedCorrectly(secret: string | undefined, body: Buffer, header: string | undefined): boolean {
  if (!secret || !header) return false;
  const expected = Buffer.from(signVoiceBody(secret, body));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export const webhookPages: PublicPage[] = [{
  method: 'POST',
  path: '/webhooks/voice',
  provider: true,
  async handle(req, res, { pool }) {
    const body = await readRawBody(req, MAX_BODY);
    const secret = process.env.VOICE_WEBHOOK_SECRET;
    if (!secret) log.warn('VOICE_WEBHOOK_SECRET is not set: every voice webhook is refused');
    if (!signedCorrectly(secret, body, req.get(SIGNATURE_HEADER))) {
      throw new ApiError(403, 'invalid_signature', `The ${SIGNATURE_HEADER} header is not the HMAC-SHA256 of this body`);
    }
    const parsed = VoiceCall.safeParse(parseJsonBody(body));
    if (!parsed.success) throw fromZod(parsed.error, 'body');
    const [row] = await publicStatement<{ result: { call_id: string; contact_id: string; duplicate: boolean } }>(pool,
      'select app_hidden.voice_call_record($1::jsonb) as result', [JSON.stringify(parsed.data)]);
    res.status(200).json(row!.result);
  },
}];
