// An app whose SVC_BASE_URL is its own address (the issuer and resource clients check), a
// tenant, and a browser stand-in: a person is "signed in" by a cookie naming them (the test's
// own sign-in; the service's is the dashboard's session), and the consent page is read and
// answered as a browser would post its form.
import { createServer } from 'node:net';
import { randomBytes, createHash } from 'node:crypto';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { useSignIn } from '../../src/oauth/sign-in.ts';

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
  useSignIn(async (req, res) => {
    const m = /(?:^|;\s*)test_person=([0-9a-f-]{36})/.exec(req.get('cookie') ?? '');
    if (m) return { organization_id: tenant.organization_id, person_id: m[1]! };
    res.status(401).send('not signed in');
    return null;
  });
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

export const cookieOf = (personId: string) => ({ cookie: `test_person=${personId}` });

/** GET the authorization URL as the person's browser: the answer, and the consent's request id when shown. */
export async function openAuthorization(url: string, personId: string): Promise<{ status: number; html: string; location: string | null; request?: string }> {
  const res = await fetch(url, { headers: cookieOf(personId), redirect: 'manual' });
  const html = await res.text();
  return { status: res.status, html, location: res.headers.get('location'), request: /name="request" value="([^"]+)"/.exec(html)?.[1] };
}

/** Posts the consent form: the redirect back to the client. */
export async function decide(app: TestApp, request: string, personId: string, decision: 'approve' | 'deny'): Promise<URL> {
  const res = await fetch(`${app.url}/oauth/authorize`, {
    method: 'POST', redirect: 'manual',
    headers: { ...cookieOf(personId), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request, decision }),
  });
  if (res.status !== 303) throw new Error(`consent answered ${res.status}: ${await res.text()}`);
  return new URL(res.headers.get('location')!);
}

export function authorizationUrl(app: TestApp, clientId: string, challenge: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge,
    code_challenge_method: 'S256', state: 'st-1', resource: `${app.url}/api/v1/mcp`, scope: 'contacts:read contacts:write conversations:write', ...extra,
  });
  return `${app.url}/oauth/authorize?${params}`;
}

/** A code for the person, through consent. */
export async function codeFor(app: TestApp, clientId: string, personId: string, challenge: string, extra: Record<string, string> = {}): Promise<string> {
  const opened = await openAuthorization(authorizationUrl(app, clientId, challenge, extra), personId);
  if (!opened.request) throw new Error(`no consent page: ${opened.status} ${opened.location ?? opened.html}`);
  return (await decide(app, opened.request, personId, 'approve')).searchParams.get('code')!;
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
