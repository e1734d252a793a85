// OAuth secrets: codes and tokens are 32 random bytes (base64url), stored only as SHA-256.
// Access tokens are `svc_at_` + 43 characters so that a bearer header tells them from API
// keys; their stored hash covers the resource they were issued for (src/auth/oauth.ts), so a
// token presented to another resource resolves to nothing.
import { createHash, randomBytes } from 'node:crypto';

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;

const random = () => randomBytes(32).toString('base64url');
export const newAccessToken = () => `svc_at_${random()}`;
export const newRefreshToken = () => `svc_rt_${random()}`;
export const newCode = () => random();

export const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

/** The PKCE S256 challenge of a verifier (RFC 7636 4.2). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');
