// The signature of the email webhooks (inbound MIME, delivery events): header X-Svc-Signature
// `sha256=<hex>`, the HMAC-SHA256 of the exact body under EMAIL_WEBHOOK_SECRET.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const BODY_SIGNATURE_HEADER = 'x-svc-signature';

/** The header's value for a body: what a provider (or its adapter) sends and the tests compute. */
export const signBody = (secret: string, body: Buffer | string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Whether `header` signs `body` under `secret` (constant-time); false without a secret or a header. */
export function bodySignedCorrectly(secret: string | undefined, body: Buffer, header: string | undefined): boolean {
  if (!secret || !header) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
