// API keys: `svc_sk_` + 32 base62 characters (about 190 bits). Only the SHA-256 of the whole
// key is stored; with that much entropy a fast hash is enough and lookups stay one index probe.
import { createHash, randomInt } from 'node:crypto';
import { ACCESS_TOKEN_PATTERN, oauthAccessHash, resourceOf } from './oauth.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const KEY_PATTERN = /^svc_sk_[A-Za-z0-9]{32}$/;

export function generateKey(): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return `svc_sk_${body}`;
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/**
 * The key from an Authorization header, or undefined. Only `Bearer` (any case) with a
 * well-formed key or OAuth access token counts; nothing else authenticates.
 */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^bearer[ ]+(\S+)[ ]*$/i.exec(header);
  if (!m || !(KEY_PATTERN.test(m[1]!) || ACCESS_TOKEN_PATTERN.test(m[1]!))) return undefined;
  return m[1];
}

/** How many Authorization headers a request carried (`req.headers` shows only the first). */
export function authorizationHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'authorization') count++;
  return count;
}

/**
 * What app_hidden.authenticate looks a bearer credential up by: an API key's hash, or an OAuth
 * access token's hash bound to this service's resource (./oauth.ts).
 */
export function credentialHash(key: string, baseUrl: string): Buffer {
  return ACCESS_TOKEN_PATTERN.test(key) ? oauthAccessHash(resourceOf(baseUrl), key) : hashKey(key);
}
