// The authorization server's endpoints: discovery documents, registration, the authorization
// endpoint with its consent page, and the token endpoint. OAuth errors are answered as OAuth
// defines them ({error, error_description}, or on the client's redirect URI with state and iss),
// never as the API's envelope.
import type { Request, Response } from 'express';
import type pg from 'pg';
import { ALL_SCOPES, SCOPES, type Scope } from '../auth/scopes.ts';
import type { Config } from '../config.ts';
import { publicStatement } from '../db/request.ts';
import { readRawBody } from '../http/body.ts';
import type { PageDeps, PublicPage } from '../registry/area.ts';
import { ApiError, toApiError } from '../platform/errors.ts';
import { LOOPBACK_HOSTS, OAuthError, checkRedirectUri, isLoopbackRedirect, redirectMatches, registerClient, resolveClient, type Client } from './clients.ts';
import { OAUTH_PATHS, authorizationServerMetadata, canonicalResource, protectedResourceMetadata } from './metadata.ts';
import { ACCESS_TOKEN_SECONDS, REFRESH_TOKEN_SECONDS, newAccessToken, newCode, newRefreshToken, s256, sha256 } from './secrets.ts';
import { oauthAccessHash, resourceOf } from '../auth/oauth.ts';
import { page, sendPage as sendDashboardPage } from '../dashboard/html.ts';
import { checkCsrf, csrfField, readForm as readDashboardForm, signedIn } from '../dashboard/session.ts';

type Deps = PageDeps;

import { esc } from '../dashboard/html.ts';

function sendOAuthError(res: Response, e: OAuthError): void {
  res.status(e.status).set('Cache-Control', 'no-store').json({ error: e.error, error_description: e.message });
}

/**
 * Runs an OAuth endpoint: OAuthError answers as OAuth says; any other refusal of the input (the
 * app's 4xx, the database's) as OAuth's `invalid` code for the endpoint; faults as the app does.
 */
const oauthEndpoint = (fn: (req: Request, res: Response, deps: Deps) => Promise<void>, invalid = 'invalid_request') =>
  async (req: Request, res: Response, deps: Deps): Promise<void> => {
    try {
      await fn(req, res, deps);
    } catch (e) {
      if (e instanceof OAuthError) return sendOAuthError(res, e);
      const refusal = toApiError(e);
      if (refusal.statusCode < 500 && refusal.statusCode !== 429) {
        return sendOAuthError(res, new OAuthError(refusal.statusCode, invalid, refusal.message));
      }
      throw e;
    }
  };

/** Browser-based clients (an MCP inspector) read the documents and call register and token from another origin. */
function cors(res: Response): void {
  res.set('Access-Control-Allow-Origin', '*');
  res.set('Access-Control-Allow-Headers', 'content-type, mcp-protocol-version');
  res.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
}

async function readForm(req: Request): Promise<URLSearchParams> {
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError(400, 'invalid_request', 'Send application/x-www-form-urlencoded');
  const raw = await readRawBody(req, 16 * 1024, 'The form');
  try {
    return new URLSearchParams(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw new OAuthError(400, 'invalid_request', 'The form is not valid UTF-8');
  }
}

/** One parameter, sent at most once (RFC 6749 3.1: parameters must not repeat). */
function single(params: URLSearchParams, name: string, required = false): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw new OAuthError(400, 'invalid_request', `${name} was sent more than once`);
  if (all.some((v) => /[\u0000-\u001f\u007f]/.test(v))) throw new OAuthError(400, 'invalid_request', `${name} has control characters`);
  if (required && !all[0]) throw new OAuthError(400, 'invalid_request', `${name} is required`);
  return all[0] || undefined;
}

const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

function sendPage(res: Response, status: number, title: string, body: string): void {
  sendDashboardPage(res, status, page(title, body));
}

/**
 * The consent page: the dashboard's, but its form may lead on to the client's redirect URI
 * (browsers apply form-action to the redirect that follows a post).
 */
function sendConsent(res: Response, redirectUri: string, title: string, body: string): void {
  const url = new URL(redirectUri);
  const target = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  res.status(200).set({
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${target}; frame-ancestors 'none'; base-uri 'none'`,
    'Referrer-Policy': 'no-referrer',
  }).send(page(title, body));
}

/** The client's redirect URI with the answer (RFC 9207: iss on every answer, success or error). */
function redirectTo(res: Response, config: Config, redirectUri: string, params: Record<string, string | null | undefined>): void {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) url.searchParams.set(k, v);
  url.searchParams.set('iss', config.baseUrl);
  res.set('Cache-Control', 'no-store').redirect(303, url.href);
}

/** The person about to approve a client (app_hidden.oauth_person). */
interface Person {
  organization_id: string;
  person_id: string;
  organization_name: string;
  role: 'owner' | 'admin' | 'manager' | 'member';
  powers: string[];
  sms_enabled: boolean;
}

async function person(pool: pg.Pool, organizationId: string, personId: string): Promise<Person | null> {
  const [row] = await publicStatement<{ p: Person | null }>(pool, 'select app_hidden.oauth_person($1::uuid, $2::uuid) as p', [organizationId, personId]);
  return row?.p ?? null;
}

/**
 * The scopes a person may grant now, decided by the same rule as every request's
 * (app_hidden.oauth_grantable_scopes over the catalog's operations' requirements).
 */
async function grantableScopes(pool: pg.Pool, p: Person, operations: Deps['operations']): Promise<Scope[]> {
  const requirements = operations.map((op) => ({ scope: op.scope, member_access: op.memberAccess, manager_power: op.managerPower }));
  const [row] = await publicStatement<{ scopes: string[] }>(pool,
    'select app_hidden.oauth_grantable_scopes($1::uuid, $2::uuid, $3::jsonb) as scopes',
    [p.organization_id, p.person_id, JSON.stringify(requirements)]);
  return ALL_SCOPES.filter((s) => row?.scopes.includes(s));
}

const authorizeGet = async (req: Request, res: Response, { pool, config, operations }: Deps): Promise<void> => {
  // the query is everything after the first "?" (a "?" inside it is data: RFC 3986, 3.4)
  const at = req.url.indexOf('?');
  const q = new URLSearchParams(at < 0 ? '' : req.url.slice(at + 1));
  // Until client and redirect URI are known good, errors are shown here, never redirected (open redirect).
  let client: Client;
  let redirectUri: string;
  try {
    client = await resolveClient(pool, config, single(q, 'client_id', true)!);
    const sent = single(q, 'redirect_uri');
    if (sent === undefined && client.redirect_uris.length !== 1) throw new OAuthError(400, 'invalid_request', 'redirect_uri is required');
    redirectUri = sent ?? client.redirect_uris[0]!;
    if (!redirectMatches(client.redirect_uris, redirectUri)) throw new OAuthError(400, 'invalid_request', 'redirect_uri is not one the client registered');
    // a client registered before the rule was narrowed keeps its row, not a scheme now refused
    checkRedirectUri(redirectUri);
  } catch (e) {
    if (!(e instanceof OAuthError)) throw e;
    return sendPage(res, 400, 'This app\'s request cannot be used', `<p>${esc(e.message)}.</p>`);
  }
  let state: string | undefined;
  const fail = (error: string, description: string) => redirectTo(res, config, redirectUri, { error, error_description: description, state });
  let challenge: string;
  let resource: string;
  let requested: string[];
  try {
    state = single(q, 'state');
    if (single(q, 'response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    challenge = single(q, 'code_challenge') ?? '';
    if (!PKCE_VALUE.test(challenge)) return fail('invalid_request', 'code_challenge (PKCE) is required');
    if (single(q, 'code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    const named = canonicalResource(single(q, 'resource') ?? resourceOf(config.baseUrl), config.baseUrl);
    if (named === null) return fail('invalid_target', `resource must be ${resourceOf(config.baseUrl)}`);
    resource = named;
    requested = (single(q, 'scope') ?? Object.keys(SCOPES).join(' ')).split(' ').filter(Boolean);
  } catch (e) {
    if (!(e instanceof OAuthError)) throw e;
    return fail(e.error, e.message);
  }

  const who = await signedIn(req, res, { pool, config });
  if (!who) return;
  const p = await person(pool, who.organization_id, who.person_id);
  if (!p) return fail('access_denied', 'This person may not connect agents now');
  const scopes = (await grantableScopes(pool, p, operations)).filter((s) => requested.includes(s));
  if (scopes.length === 0) return fail('invalid_scope', 'None of the requested scopes is one this person may grant');
  const [row] = await publicStatement<{ id: string }>(pool,
    'select app_hidden.oauth_begin($1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8::text[]) as id',
    [p.organization_id, p.person_id, client.client_id, redirectUri, state ?? null, challenge, resource, scopes]);
  const name = client.client_name ?? client.client_id;
  const host = new URL(redirectUri).host || new URL(redirectUri).protocol;
  sendConsent(res, redirectUri, `Connect ${name}?`, `
<p><strong>${esc(name)}</strong>${client.registration === 'metadata_document' ? ` (${esc(client.client_id)})` : ' (registered itself; not verified)'}
wants to act for you in <strong>${esc(p.organization_name)}</strong>, with your current role and locations.</p>
<p>After you approve, you will be sent to <strong>${esc(host)}</strong>.</p>
${isLoopbackRedirect(redirectUri) ? `<p class="error" data-warning="localhost"><strong>This app receives your approval on this computer
(${esc(new URL(redirectUri).hostname)}) only.</strong> Any program running here could use this name: approve only if you started
${esc(name)} yourself just now.</p>` : ''}
<p>It asks for:</p><ul>${scopes.map((s) => `<li><code>${esc(s)}</code>: ${esc(SCOPES[s])}</li>`).join('')}</ul>
<form method="post" action="${OAUTH_PATHS.authorize}">${csrfField(req, res, { pool, config })}
<input type="hidden" name="request" value="${esc(row!.id)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`);
};

const authorizePost = async (req: Request, res: Response, { pool, config }: Deps): Promise<void> => {
  const who = await signedIn(req, res, { pool, config });
  if (!who) return;
  let form: URLSearchParams;
  let requestId: string;
  let decision: string;
  try {
    form = await readDashboardForm(req);
    if (!checkCsrf(req, form, { pool, config })) {
      return sendPage(res.status(403), 403, 'This form has expired', '<p>Open the app\'s link again.</p>');
    }
    requestId = single(form, 'request', true)!;
    decision = single(form, 'decision', true)!;
    if (!/^[0-9a-f-]{36}$/.test(requestId) || (decision !== 'approve' && decision !== 'deny')) throw new OAuthError(400, 'invalid_request', 'Not a consent form');
  } catch (e) {
    if (!(e instanceof OAuthError)) throw e;
    return sendPage(res, 400, 'This form cannot be used', `<p>${esc(e.message)}.</p>`);
  }
  const code = newCode();
  const [row] = await publicStatement<{ r: { redirect_uri: string; state: string | null } | null }>(pool,
    'select app_hidden.oauth_decide($1::uuid, $2::uuid, $3::uuid, $4, $5) as r',
    [who.organization_id, who.person_id, requestId, decision === 'approve', sha256(code)]);
  const r = row?.r;
  if (!r) return sendPage(res, 400, 'This request has expired', '<p>Start connecting the app again.</p>');
  if (decision === 'approve') redirectTo(res, config, r.redirect_uri, { code, state: r.state });
  else redirectTo(res, config, r.redirect_uri, { error: 'access_denied', error_description: 'The person denied access', state: r.state });
};

const token = oauthEndpoint(async (req, res, { pool, config }) => {
  cors(res);
  const form = await readForm(req);
  const grantType = single(form, 'grant_type', true);
  const clientId = single(form, 'client_id');
  if (!clientId) throw new OAuthError(401, 'invalid_client', 'client_id is required (public clients authenticate with none)');
  const resource = canonicalResource(single(form, 'resource') ?? resourceOf(config.baseUrl), config.baseUrl);
  if (resource === null) throw new OAuthError(400, 'invalid_target', `resource must be ${resourceOf(config.baseUrl)}`);
  const access = newAccessToken();
  const refresh = newRefreshToken();
  const accessHash = oauthAccessHash(resourceOf(config.baseUrl), access);
  let answer: { scopes: string[] } & Partial<{ error: string; error_description: string }>;
  if (grantType === 'authorization_code') {
    const code = single(form, 'code', true)!;
    const verifier = single(form, 'code_verifier', true)!;
    // OAuth 2.1 (section 10.2) clients send no redirect_uri here, PKCE binding the code instead;
    // when one is sent, it must be the authorization request's (NULL skips the comparison in SQL)
    const redirectUri = single(form, 'redirect_uri') ?? null;
    if (!PKCE_VALUE.test(verifier)) throw new OAuthError(400, 'invalid_grant', 'code_verifier is not a PKCE verifier');
    const [row] = await publicStatement<{ r: typeof answer }>(pool,
      'select app_hidden.oauth_exchange_code($1, $2, $3, $4, $5, $6, $7, $8, $9) as r',
      [sha256(code), clientId, redirectUri, s256(verifier), resource, accessHash, sha256(refresh), ACCESS_TOKEN_SECONDS, REFRESH_TOKEN_SECONDS]);
    answer = row!.r;
  } else if (grantType === 'refresh_token') {
    const presented = single(form, 'refresh_token', true)!;
    // scope, when sent: none beyond the grant's (invalid_scope); fewer are answered with the grant's
    const scope = single(form, 'scope');
    const requested = scope === undefined ? null : scope.split(' ').filter(Boolean);
    const [row] = await publicStatement<{ r: typeof answer }>(pool,
      'select app_hidden.oauth_refresh($1, $2, $3, $4, $5, $6, $7, $8::text[]) as r',
      [sha256(presented), clientId, resource, accessHash, sha256(refresh), ACCESS_TOKEN_SECONDS, REFRESH_TOKEN_SECONDS, requested]);
    answer = row!.r;
  } else {
    throw new OAuthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }
  if (answer.error) throw new OAuthError(400, answer.error, answer.error_description ?? answer.error);
  res.status(200).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json({
    access_token: access,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    refresh_token: refresh,
    scope: answer.scopes.join(' '),
  });
});

/** RFC 9745's Deprecation header: dynamic client registration is deprecated since 2026-07-28 (as a Unix time). */
export const REGISTRATION_DEPRECATED = `@${Date.UTC(2026, 6, 28) / 1000}`;

const register = oauthEndpoint(async (req, res, { pool }) => {
  cors(res);
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new OAuthError(400, 'invalid_client_metadata', 'Send the client metadata as application/json');
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await readRawBody(req, 16 * 1024, 'The client metadata')));
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new OAuthError(400, 'invalid_client_metadata', 'The client metadata is not JSON');
  }
  // Dynamic registration is deprecated by the 2026-07-28 MCP revision in favour of client ID
  // metadata documents; it stays for older clients, and says so (RFC 9745: deprecated since then)
  res.status(201).set('Cache-Control', 'no-store').set('Deprecation', REGISTRATION_DEPRECATED).json(await registerClient(pool, body));
}, 'invalid_client_metadata');

const json = (document: (baseUrl: string) => unknown) => async (_req: Request, res: Response, { config }: Deps) => {
  cors(res);
  res.json(document(config.baseUrl));
};
const rootResourceMetadata = (baseUrl: string) => protectedResourceMetadata(baseUrl, true);
const preflight = async (_req: Request, res: Response) => { cors(res); res.status(204).end(); };

/**
 * Whether this service may act as an authorization server at its base URL: the MCP
 * authorization specification and OAuth 2.1 (1.5) require HTTPS for every endpoint, and codes
 * and tokens must not cross a network in clear. Plain http is accepted on a loopback host only
 * (a developer's `npm start`, the tests). Behind a TLS-terminating proxy, SVC_BASE_URL is the
 * public https URL and this holds.
 */
export function servesOAuth(baseUrl: string): boolean {
  const url = new URL(baseUrl);
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
}

/** Every OAuth endpoint answers 404 while the base URL is plain http on a host other than loopback. */
const overHttps = (page: PublicPage): PublicPage => ({
  ...page,
  handle: async (req, res, deps) => {
    if (servesOAuth(deps.config.baseUrl)) return page.handle(req, res, deps);
    res.status(404).set('Cache-Control', 'no-store').json({ error: 'invalid_request',
      error_description: 'OAuth is served only over https: set SVC_BASE_URL to the service\'s https URL' });
  },
});

export const OAUTH_PAGES: PublicPage[] = ([
  { method: 'GET', path: `${OAUTH_PATHS.protectedResource}/api/v1/mcp`, handle: json(protectedResourceMetadata) },
  { method: 'GET', path: OAUTH_PATHS.protectedResource, handle: json(rootResourceMetadata) },
  { method: 'GET', path: OAUTH_PATHS.authorizationServer, handle: json(authorizationServerMetadata) },
  { method: 'GET', path: OAUTH_PATHS.authorize, handle: authorizeGet },
  { method: 'POST', path: OAUTH_PATHS.authorize, handle: authorizePost },
  { method: 'POST', path: OAUTH_PATHS.token, handle: token },
  { method: 'POST', path: OAUTH_PATHS.register, handle: register },
  ...[OAUTH_PATHS.token, OAUTH_PATHS.register, OAUTH_PATHS.authorizationServer, OAUTH_PATHS.protectedResource, `${OAUTH_PATHS.protectedResource}/api/v1/mcp`]
    .map((path) => ({ method: 'OPTIONS' as const, path, handle: preflight })),
] satisfies PublicPage[]).map(overHttps);
