// An app whose SVC_BASE_URL is its own address (the issuer and resource clients check), a
// tenant, and people signed in to the dashboard from their emailed links (test/dashboard's
// Browser), who open authorization URLs and answer the consent form as a browser would.
import { createServer } from 'node:net';
import { randomBytes, createHash } from 'node:crypto';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { Browser, signIn } from '../dashboard/helpers.ts';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startOAuthApp(env: Record<string, string> = {}): Promise<{ app: TestApp; acme: Applied }> {
  const port = await freePort();
  const { app, tenant } = await startWithTenant(acmeFixture(), { port, env: { SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_RATE_LIMIT: 'off', ...env } });
  return { app, acme: tenant };
}

export const REDIRECT = 'http://127.0.0.1:7777/callback';

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function registerClient(app: TestApp, metadata: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${app.url}/oauth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test agent', redirect_uris: [REDIRECT], ...metadata }),
  });
  if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { client_id: string }).client_id;
}

const signedIn = new Map<string, Promise<Browser>>();
/** The person's browser, signed in to the dashboard once per app. */
export function as(app: TestApp, email: string): Promise<Browser> {
  const key = `${app.url} ${email}`;
  if (!signedIn.has(key)) signedIn.set(key, signIn(app, email));
  return signedIn.get(key)!;
}

export interface Consent { status: number; html: string; location: string | null; request?: string; csrf?: string; headers: Headers }

/** GET the authorization URL in the person's browser: the answer, and the consent form's fields when shown. */
export async function openAuthorization(url: string, browser: Browser): Promise<Consent> {
  const u = new URL(url);
  const p = await browser.get(u.pathname + u.search);
  return { status: p.status, html: p.text, location: p.location, headers: p.headers,
    request: /name="request" value="([^"]+)"/.exec(p.text)?.[1], csrf: /name="csrf" value="([^"]+)"/.exec(p.text)?.[1] };
}

/** Posts the consent form: the redirect back to the client. */
export async function decide(browser: Browser, consent: Consent, decision: 'approve' | 'deny'): Promise<URL> {
  const res = await browser.post('/oauth/authorize', { csrf: consent.csrf!, request: consent.request!, decision });
  if (res.status !== 303) throw new Error(`consent answered ${res.status}: ${res.text}`);
  return new URL(res.location!);
}

export function authorizationUrl(app: TestApp, clientId: string, challenge: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge,
    code_challenge_method: 'S256', state: 'st-1', resource: `${app.url}/api/v1/mcp`, scope: 'contacts:read contacts:write conversations:write', ...extra,
  });
  return `${app.url}/oauth/authorize?${params}`;
}

/** A code for the person, through consent. */
export async function codeFor(app: TestApp, clientId: string, browser: Browser, challenge: string, extra: Record<string, string> = {}): Promise<string> {
  const opened = await openAuthorization(authorizationUrl(app, clientId, challenge, extra), browser);
  if (!opened.request) throw new Error(`no consent page: ${opened.status} ${opened.location ?? opened.html}`);
  return (await decide(browser, opened, 'approve')).searchParams.get('code')!;
}

export async function tokenRequest(app: TestApp, params: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${app.url}/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

export async function exchange(app: TestApp, clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) {
  return tokenRequest(app, { grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier,
    redirect_uri: REDIRECT, resource: `${app.url}/api/v1/mcp`, ...extra });
}
