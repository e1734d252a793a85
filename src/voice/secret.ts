// The voice secret: `svc_voice_` + 40 base62 characters (about 238 bits), what a voice platform
// sends as `Authorization: Bearer` to POST /api/v1/receptionist/chat/completions. Only its
// SHA-256 is stored (app_private.voice_secrets), as for API keys: with this much entropy a fast
// hash is enough and finding the organization stays one index probe.
import { createHash, randomInt } from 'node:crypto';
import type pg from 'pg';
import { AdminError, asAdmin } from '../admin/commands.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const VOICE_SECRET_PATTERN = /^svc_voice_[A-Za-z0-9]{40}$/;

export function generateVoiceSecret(): string {
  let body = '';
  for (let i = 0; i < 40; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return `svc_voice_${body}`;
}

export const hashVoiceSecret = (secret: string): Buffer => createHash('sha256').update(secret).digest();

/** The voice secret of an Authorization header (`Bearer svc_voice_…`), or undefined. */
export function bearerVoiceSecret(header: string | undefined): string | undefined {
  const m = /^bearer[ ]+(\S+)[ ]*$/i.exec(header ?? '');
  return m && VOICE_SECRET_PATTERN.test(m[1]!) ? m[1] : undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `svc admin voice secret --org ORG_ID`: a new secret, printed once; the organization's previous one stops working. */
export async function adminVoiceSecret(pool: pg.Pool, org: string | undefined) {
  if (!org || !UUID.test(org)) throw new AdminError('--org must be a uuid');
  const secret = generateVoiceSecret();
  const { rows: [row] } = await asAdmin(() => pool.query<{ result: { id: string; organization_id: string; created_at: string } }>(
    'select app_private.voice_secret_rotate($1::uuid, $2) as result', [org.toLowerCase(), hashVoiceSecret(secret)]));
  return { ...row!.result, secret };
}
