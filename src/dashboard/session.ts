// Dashboard sessions: who is signed in, the session cookie, CSRF tokens and safe return paths.
// Other pages that need a signed-in person (the OAuth consent page) use this module alone:
//
//   await signedIn(req, res, deps)   the person, or null after redirecting to sign-in with a
//                                    safe return_to (the page then returns)
//   requireSignIn(deps)              the same as express middleware (next() only when signed in)
//   currentPerson(req)               {organization_id, person_id} after either of them, or null
//   csrfField(req, res, deps)        a hidden <input> carrying the request's CSRF token
//   checkCsrf(req, form, deps)       whether a posted form carries it (compare in constant time)
//   readForm(req)                    an application/x-www-form-urlencoded body
//   asSignedIn(deps, req, fn)        a transaction as svc_request with the person's claims set
//                                    (app_hidden.dashboard_session), for the page's SQL
//   safeReturnTo(value)              a same-origin path, or null
//
// The cookie carries a random session id (256 bits); the database keeps its SHA-256 only. A new
// id is drawn at every sign-in, never taken from the browser (no fixation). The cookie is
// HttpOnly, SameSite=Lax, Path=/, and Secure (named __Host-…) when SVC_BASE_URL is https. The
// CSRF token of a signed-in form is an HMAC of the session id: a page of another site can read
// neither. Before sign-in (the sign-in forms) a separate random cookie plays the same part.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { inTransaction } from '../admin/commands.ts';
import { readRawBody } from '../http/body.ts';
import { ApiError, badRequest } from '../platform/errors.ts';

/** What a dashboard page gets (PublicPage's deps). */
export interface PageDeps {
  pool: pg.Pool;
  config: Pick<Config, 'baseUrl' | 'emailTransport' | 'webhooksAllowPrivate'>;
}

/** The signed-in person as they are now (read at every request). */
export interface SignedIn {
  organization_id: string;
  person_id: string;
  session_id: string;
  name: string;
  email: string;
  role: 'owner' | 'admin' | 'manager' | 'member';
  powers: string[];
  /** null for owners and admins (the whole organization). */
  location_ids: string[] | null;
}

export const SIGN_IN_PATH = '/dashboard/sign-in';
export const HOME_PATH = '/dashboard';

const secure = (config: PageDeps['config']) => config.baseUrl.startsWith('https://');
/** The session cookie's name: __Host- (Secure, Path=/, no Domain) over https. */
export const sessionCookie = (config: PageDeps['config']) => (secure(config) ? '__Host-svc_session' : 'svc_session');
const preCookie = (config: PageDeps['config']) => (secure(config) ? '__Host-svc_presession' : 'svc_presession');

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** A fresh random id (256 bits, base64url): session ids, link tokens, pre-session secrets. */
export const randomToken = () => randomBytes(32).toString('base64url');
export const sha256 = (value: string) => createHash('sha256').update(value).digest();

/** The request's cookies (first of a name wins). */
export function cookies(req: Request): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    if (!out.has(name)) out.set(name, part.slice(i + 1).trim());
  }
  return out;
}

function cookieHeader(config: PageDeps['config'], name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure(config) ? '; Secure' : ''}`;
}

function appendCookie(res: Response, header: string) {
  res.append('Set-Cookie', header);
}

/** The session id the browser sent, when well formed. */
function sessionIdOf(req: Request, config: PageDeps['config']): string | undefined {
  const id = cookies(req).get(sessionCookie(config));
  return id && SESSION_ID.test(id) ? id : undefined;
}

/** Sets the cookie of a session just opened (the id was drawn by the server). */
export function setSessionCookie(res: Response, config: PageDeps['config'], sessionId: string, hours: number): void {
  appendCookie(res, cookieHeader(config, sessionCookie(config), sessionId, hours * 3600));
}

export function clearSessionCookie(res: Response, config: PageDeps['config']): void {
  appendCookie(res, cookieHeader(config, sessionCookie(config), '', 0));
}

/** A transaction as svc_request on the request pool; `fn` runs between begin and commit. */
export const inRequestTransaction = <T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> =>
  inTransaction(pool, async (c) => {
    await c.query('set local role svc_request');
    return fn(c);
  });

/** Reads the session (claims set in `c`'s transaction); null when there is none alive. */
async function sessionIn(c: pg.ClientBase, sessionId: string): Promise<SignedIn | null> {
  const { rows } = await c.query('select app_hidden.dashboard_session($1) as s', [sha256(sessionId)]);
  return (rows[0]?.s as SignedIn | null) ?? null;
}

const signedInPeople = new WeakMap<Request, SignedIn>();

/** The signed-in person of this request, once signedIn or requireSignIn found one. */
export function currentPerson(req: Request): { organization_id: string; person_id: string } | null {
  const p = signedInPeople.get(req);
  return p ? { organization_id: p.organization_id, person_id: p.person_id } : null;
}

/** The whole signed-in person of this request (role, powers, locations), once found. */
export const signedInPerson = (req: Request): SignedIn | null => signedInPeople.get(req) ?? null;

/** The signed-in person, or null (nothing sent). */
export async function loadSession(req: Request, deps: PageDeps): Promise<SignedIn | null> {
  const id = sessionIdOf(req, deps.config);
  if (!id) return null;
  const person = await inRequestTransaction(deps.pool, (c) => sessionIn(c, id));
  if (person) signedInPeople.set(req, person);
  return person;
}

/**
 * A path on this origin to return to after sign-in, or null: an absolute path ("/…"), not
 * "//host" or "/\host" (which browsers read as another origin), no control characters, and
 * resolving to this very origin.
 */
export function safeReturnTo(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2000) return null;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return null;
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return null;
  const base = 'http://dashboard.invalid';
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return null;
  }
  if (url.origin !== base) return null;
  // what it resolves to must pass too: "/.//evil.example" and "/a/..//evil.example" resolve to
  // "//evil.example", another origin to a browser
  const resolved = url.pathname + url.search;
  if (resolved.startsWith('//') || resolved.startsWith('/\\')) return null;
  return resolved;
}

/** The sign-in page's address that returns to where the request was going. */
export function signInUrl(req: Request): string {
  const back = safeReturnTo(req.originalUrl);
  return back && back !== HOME_PATH ? `${SIGN_IN_PATH}?return_to=${encodeURIComponent(back)}` : SIGN_IN_PATH;
}

/**
 * The signed-in person, or null once the answer went out: a GET is redirected to sign-in with a
 * return_to; another method (a form posted after the session ended) is 401.
 */
export async function signedIn(req: Request, res: Response, deps: PageDeps): Promise<SignedIn | null> {
  const person = await loadSession(req, deps);
  if (person) return person;
  if (sessionIdOf(req, deps.config)) clearSessionCookie(res, deps.config);
  res.set('Cache-Control', 'no-store');
  if (req.method === 'GET' || req.method === 'HEAD') res.redirect(303, signInUrl(req));
  else res.status(401).type('text/plain').send('Your session has ended: sign in again.');
  return null;
}

/** signedIn as express middleware: next() only with a signed-in person (currentPerson then answers). */
export function requireSignIn(deps: PageDeps): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    signedIn(req, res, deps).then((p) => (p ? next() : undefined), next);
  };
}

const hmac = (secret: string, purpose: string) => createHmac('sha256', secret).update(purpose).digest('base64url');

/**
 * The request's CSRF token: bound to the session when signed in, else to a pre-session cookie
 * (set here when the browser has none yet, so call it before the response is sent).
 */
export function csrfToken(req: Request, res: Response, deps: PageDeps): string {
  const session = sessionIdOf(req, deps.config);
  if (session && signedInPeople.has(req)) return hmac(session, 'csrf');
  let pre = cookies(req).get(preCookie(deps.config));
  if (!pre || !SESSION_ID.test(pre)) {
    pre = (res.locals.dashboardPre as string | undefined) ?? randomToken();
    if (!res.locals.dashboardPre) appendCookie(res, cookieHeader(deps.config, preCookie(deps.config), pre, 3600));
    res.locals.dashboardPre = pre;
  }
  return hmac(pre, 'csrf');
}

/** The hidden form field carrying the CSRF token. */
export const csrfField = (req: Request, res: Response, deps: PageDeps) =>
  `<input type="hidden" name="csrf" value="${csrfToken(req, res, deps)}">`;

/** Whether a posted form carries the request's CSRF token (the session's, else the pre-session's). */
export function checkCsrf(req: Request, form: URLSearchParams, deps: PageDeps): boolean {
  const sent = form.getAll('csrf');
  if (sent.length !== 1) return false;
  const session = sessionIdOf(req, deps.config);
  const pre = cookies(req).get(preCookie(deps.config));
  const secret = session && signedInPeople.has(req) ? session : pre && SESSION_ID.test(pre) ? pre : undefined;
  if (!secret) return false;
  const expected = Buffer.from(hmac(secret, 'csrf'));
  const given = Buffer.from(sent[0]!);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const MAX_FORM = 16 * 1024;

/** A posted form (application/x-www-form-urlencoded, at most 16 kB); 415 for another type. */
export async function readForm(req: Request): Promise<URLSearchParams> {
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new ApiError(415, 'unsupported_media_type', 'Send the form as application/x-www-form-urlencoded');
  }
  const raw = await readRawBody(req, MAX_FORM, 'A dashboard form');
  try {
    return new URLSearchParams(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw badRequest('The form is not valid UTF-8');
  }
}

/**
 * A transaction as svc_request with the signed-in person's claims set afresh (their role,
 * powers and locations as they are now); null when the session ended meanwhile.
 */
export async function asSignedIn<T>(deps: PageDeps, req: Request, fn: (c: pg.PoolClient, person: SignedIn) => Promise<T>): Promise<T | null> {
  const id = sessionIdOf(req, deps.config);
  if (!id) return null;
  return inRequestTransaction(deps.pool, async (c) => {
    const person = await sessionIn(c, id);
    return person ? fn(c, person) : null;
  });
}

/** Signs the browser's session out (the row is deleted) and clears the cookie. */
export async function endSession(req: Request, res: Response, deps: PageDeps): Promise<void> {
  const id = sessionIdOf(req, deps.config);
  if (id) await inRequestTransaction(deps.pool, (c) => c.query('select app_hidden.dashboard_end_session($1)', [sha256(id)]));
  clearSessionCookie(res, deps.config);
}
