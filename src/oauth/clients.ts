// OAuth clients without ids or secrets handed out by hand: client ID metadata documents (the
// MCP revision's preferred way: the client_id is an https URL serving the client's metadata)
// and dynamic client registration (RFC 7591, public clients only) for older clients.
import http from 'node:http';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { publicStatement } from '../db/request.ts';
import { AddressRefused, checkedAddresses, pinnedLookup } from '../platform/addresses.ts';

export class OAuthError extends Error {
  readonly status: number;
  readonly error: string;
  constructor(status: number, error: string, description: string) {
    super(description);
    this.status = status;
    this.error = error;
  }
}

// A native app's private-use scheme, in RFC 8252's reverse-domain form (com.example.app): a
// domain its author controls, so never one of the schemes browsers and operating systems hand
// to a program of their own (ms-msdt:, view-source:, javascript:, jar:, feed:, …), none of which
// holds a period. Nothing else is let through: a list of bad schemes is never complete.
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/;
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * A redirect URI as OAuth 2.1 and RFC 8252 allow it: https, http on a loopback address (any
 * port), or a private-use scheme of a native app in reverse-domain form (com.example.app:/cb);
 * never with a fragment; nothing else.
 */
export function checkRedirectUri(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2000) throw new OAuthError(400, 'invalid_redirect_uri', 'redirect_uri must be a URI');
  let url: URL;
  try { url = new URL(value); } catch { throw new OAuthError(400, 'invalid_redirect_uri', `${value} is not a URI`); }
  const scheme = url.protocol.slice(0, -1);
  const ok = !url.hash && !value.includes('#') && !url.username && !url.password && (
    (scheme === 'https' && url.hostname !== '')
    || (scheme === 'http' && LOOPBACK_HOSTS.has(url.hostname))
    || PRIVATE_USE_SCHEME.test(scheme));
  if (!ok) {
    throw new OAuthError(400, 'invalid_redirect_uri', `${value}: redirect URIs must be https, http on a loopback address `
      + '(127.0.0.1, [::1], localhost), or a private-use scheme in reverse-domain form (com.example.app:/callback), without a fragment');
  }
  return value;
}

/** Whether a redirect URI is http on a loopback address (the consent page warns when the one in use is: MCP, CIMD security). */
export const isLoopbackRedirect = (uri: string): boolean => {
  const url = URL.parse(uri);
  return url !== null && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
};

/** Whether a requested redirect URI is one registered: exactly, but any port for http loopback ones. */
export function redirectMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  let req: URL;
  try { req = new URL(requested); } catch { return false; }
  if (req.protocol !== 'http:' || !LOOPBACK_HOSTS.has(req.hostname)) return false;
  return registered.some((r) => {
    const reg = new URL(r);
    if (reg.protocol !== 'http:' || reg.hostname !== req.hostname) return false;
    reg.port = req.port;
    return reg.href === req.href;
  });
}

export interface Client {
  client_id: string;
  registration: 'dynamic' | 'metadata_document';
  client_name: string | null;
  client_uri: string | null;
  redirect_uris: string[];
  fetched_age_s: number | null;
  /** How long a fetched metadata document may be used (its Cache-Control within our bounds); null for a registered client. */
  cache_seconds: number | null;
}

const text = (v: unknown, max: number, name: string): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > max) throw new OAuthError(400, 'invalid_client_metadata', `${name} must be a string of at most ${max} characters`);
  return v;
};

/**
 * The metadata fields we keep, checked as RFC 7591 reads them (public clients: no secret). A
 * client ID metadata document must also name the client (MCP: client_id, client_name and
 * redirect_uris are required) and carry no shared secret (CIMD draft section 4).
 */
function clientMetadata(body: unknown, document = false): { client_name: string | null; client_uri: string | null; redirect_uris: string[] } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new OAuthError(400, 'invalid_client_metadata', 'The client metadata must be a JSON object');
  const m = body as Record<string, unknown>;
  if (document && (m.client_secret !== undefined || m.client_secret_expires_at !== undefined)) {
    throw new OAuthError(400, 'invalid_client_metadata', 'A client metadata document carries no client_secret');
  }
  if (document && (typeof m.client_name !== 'string' || m.client_name.trim() === '')) {
    throw new OAuthError(400, 'invalid_client_metadata', 'A client metadata document must have a client_name');
  }
  if (!Array.isArray(m.redirect_uris) || m.redirect_uris.length < 1 || m.redirect_uris.length > 20) {
    throw new OAuthError(400, 'invalid_redirect_uri', 'redirect_uris must list 1 to 20 redirect URIs');
  }
  const redirect_uris = m.redirect_uris.map(checkRedirectUri);
  if (m.token_endpoint_auth_method !== undefined && m.token_endpoint_auth_method !== 'none') {
    throw new OAuthError(400, 'invalid_client_metadata', 'Only public clients are registered: token_endpoint_auth_method must be none');
  }
  const grants = m.grant_types ?? ['authorization_code'];
  if (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    throw new OAuthError(400, 'invalid_client_metadata', 'grant_types may list authorization_code and refresh_token only');
  }
  const responses = m.response_types ?? ['code'];
  if (!Array.isArray(responses) || responses.some((r) => r !== 'code')) {
    throw new OAuthError(400, 'invalid_client_metadata', 'response_types may list code only');
  }
  const client_uri = text(m.client_uri, 2000, 'client_uri');
  if (client_uri !== null && !/^https?:\/\//.test(client_uri)) throw new OAuthError(400, 'invalid_client_metadata', 'client_uri must be an http(s) URL');
  return { client_name: text(m.client_name, 200, 'client_name'), client_uri, redirect_uris };
}

async function saveClient(pool: pg.Pool, clientId: string, registration: Client['registration'], m: ReturnType<typeof clientMetadata>,
  cacheSeconds: number | null = null) {
  await publicStatement(pool, 'select app_hidden.oauth_save_client($1, $2, $3, $4, $5::text[], $6::int)',
    [clientId, registration, m.client_name, m.client_uri, m.redirect_uris, cacheSeconds]);
}

/**
 * The registration's application_type (OpenID Connect Dynamic Client Registration), which the
 * 2026-07-28 MCP revision requires its clients to send: "native" (desktop, CLI, mobile, a page
 * served on localhost) or "web" (a remote browser-based app); any other value is refused. A web
 * app's redirect URIs are https on a host that is not a loopback one (OIDC), so a loopback or
 * private-use-scheme redirect URI under "web" is refused as the conflict the revision names.
 * Clients of the 2025 revisions send none: theirs is inferred as the v2 SDK infers it (native
 * when every redirect URI is loopback http or a private-use scheme, else web), so that they keep
 * registering.
 */
function applicationType(body: Record<string, unknown>, redirectUris: readonly string[]): 'native' | 'web' {
  const sent = body.application_type;
  const nativeOnly = (u: string) => { const url = new URL(u); return url.protocol !== 'https:' || LOOPBACK_HOSTS.has(url.hostname); };
  if (sent === undefined) return redirectUris.every(nativeOnly) ? 'native' : 'web';
  if (sent !== 'native' && sent !== 'web') {
    throw new OAuthError(400, 'invalid_client_metadata', 'application_type must be "native" or "web"');
  }
  if (sent === 'web' && redirectUris.some(nativeOnly)) {
    throw new OAuthError(400, 'invalid_redirect_uri', 'A web application\'s redirect URIs are https on a host that is not a loopback one; register as "native" for loopback or private-use-scheme redirect URIs');
  }
  return sent;
}

/** RFC 7591 registration of a public client: the answer (201) is the registered metadata. */
export async function registerClient(pool: pg.Pool, body: unknown): Promise<Record<string, unknown>> {
  const m = clientMetadata(body);
  const application_type = applicationType(body as Record<string, unknown>, m.redirect_uris);
  const clientId = `svc_client_${randomBytes(16).toString('base64url')}`;
  await saveClient(pool, clientId, 'dynamic', m);
  return {
    client_id: clientId,
    client_id_issued_at: Math.floor(Date.now() / 1000),
    ...(m.client_name !== null ? { client_name: m.client_name } : {}),
    ...(m.client_uri !== null ? { client_uri: m.client_uri } : {}),
    redirect_uris: m.redirect_uris,
    application_type,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  };
}

// --- client ID metadata documents ---------------------------------------------------------

/**
 * How long a fetched document is used before it is fetched again: what its Cache-Control
 * (max-age; no-store or no-cache: not reused) or Expires says (RFC 9111), at most a day; an hour
 * when it says nothing.
 */
export const METADATA_CACHE_SECONDS = 3600;
export const METADATA_CACHE_MAX_SECONDS = 24 * 3600;
/** The CIMD draft's recommended limit (section 6.6). */
export const METADATA_MAX_BYTES = 5 * 1024;
export const METADATA_TIMEOUT_MS = 5000;

/** The cache lifetime of a document from its response headers, within our bounds. */
export function cacheSeconds(headers: { 'cache-control'?: string; expires?: string; date?: string }): number {
  const directives = (headers['cache-control'] ?? '').toLowerCase().split(',').map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)?.[1]).find((v) => v !== undefined);
  let seconds: number = METADATA_CACHE_SECONDS;
  if (maxAge !== undefined) seconds = Number(maxAge);
  else if (headers.expires !== undefined) {
    const expires = Date.parse(headers.expires);
    const now = headers.date !== undefined && !Number.isNaN(Date.parse(headers.date)) ? Date.parse(headers.date) : Date.now();
    seconds = Number.isNaN(expires) ? 0 : Math.floor((expires - now) / 1000);
  }
  return Math.max(0, Math.min(METADATA_CACHE_MAX_SECONDS, seconds));
}

/** Whether a string is a client ID metadata document URL (an https URL with a path), as the MCP spec defines it. */
export const isMetadataDocumentId = (clientId: string) => /^https?:\/\/[^/]+\/./.test(clientId);

/**
 * GETs a client ID metadata document: https (http only for an origin SVC_ALLOWED_HOSTS lists),
 * connecting only to the address checked (no private address unless the origin is listed), no
 * redirects, at most METADATA_MAX_BYTES within METADATA_TIMEOUT_MS.
 */
async function fetchDocument(url: URL, trusted: boolean): Promise<{ doc: unknown; cacheSeconds: number }> {
  const addresses = await checkedAddresses(url, trusted).catch((e: unknown) => {
    if (!(e instanceof AddressRefused)) throw e;
    throw new OAuthError(400, 'invalid_client', e.reason === 'private'
      ? `The client metadata document's host ${url.hostname} is a private address`
      : `The client metadata document's host ${url.hostname} does not resolve`);
  });
  const pinned = addresses[0]!;
  const get = url.protocol === 'https:' ? https.get : http.get;
  return await new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new OAuthError(400, 'invalid_client', `The client metadata document could not be fetched: ${why}`));
    const req = get(url, {
      headers: { accept: 'application/json' },
      timeout: METADATA_TIMEOUT_MS,
      // connect to the address vetted above, never to what a second lookup might answer
      lookup: pinnedLookup(pinned),
    }, (res) => {
      if (res.statusCode !== 200) { res.resume(); return fail(`HTTP ${res.statusCode}`); }
      // application/json, or a more specific application/…+json
      const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
        res.resume();
        return fail(`served as ${type || 'no content type'}, not application/json`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > METADATA_MAX_BYTES) { req.destroy(); fail(`larger than ${METADATA_MAX_BYTES} bytes`); } else chunks.push(c);
      });
      res.on('end', () => {
        try {
          resolve({ doc: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))), cacheSeconds: cacheSeconds(res.headers) });
        } catch { fail('not JSON'); }
      });
      res.on('error', () => fail('the connection failed'));
    });
    req.on('timeout', () => { req.destroy(); fail('timed out'); });
    req.on('error', () => fail('the connection failed'));
  });
}

/** The client a client_id names: registered, or its metadata document (cached, else fetched and checked). */
export async function resolveClient(pool: pg.Pool, config: Pick<Config, 'allowedOrigins'>, clientId: string): Promise<Client> {
  if (clientId.length > 2000) throw new OAuthError(400, 'invalid_client', 'Unknown client_id');
  const [row] = await publicStatement<{ client: Client | null }>(pool, 'select app_hidden.oauth_client($1) as client', [clientId]);
  const known = row?.client ?? null;
  if (known && (known.registration === 'dynamic' || (known.fetched_age_s ?? Infinity) < (known.cache_seconds ?? 0))) return known;
  if (!isMetadataDocumentId(clientId)) throw new OAuthError(400, 'invalid_client', 'Unknown client_id');
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new OAuthError(400, 'invalid_client', 'The client_id is not a URL');
  }
  const trusted = config.allowedOrigins.includes(url.origin);
  if (url.protocol !== 'https:' && !trusted) throw new OAuthError(400, 'invalid_client', 'A client metadata document must be served over https');
  if (clientId.includes('#') || url.username || url.password) throw new OAuthError(400, 'invalid_client', 'A client_id URL carries no fragment or credentials');
  // CIMD draft section 3: no single-dot or double-dot path segments (also percent-encoded)
  const path = clientId.replace(/^https?:\/\/[^/]+/i, '').split('?')[0]!;
  if (path.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) {
    throw new OAuthError(400, 'invalid_client', 'A client_id URL has no . or .. path segments');
  }
  const { doc, cacheSeconds: lifetime } = await fetchDocument(url, trusted);
  if (!doc || typeof doc !== 'object' || (doc as { client_id?: unknown }).client_id !== clientId) {
    throw new OAuthError(400, 'invalid_client', 'The client metadata document\'s client_id is not its own URL');
  }
  const m = clientMetadata(doc, true);
  await saveClient(pool, clientId, 'metadata_document', m, lifetime);
  return { client_id: clientId, registration: 'metadata_document', ...m, fetched_age_s: 0, cache_seconds: lifetime };
}
