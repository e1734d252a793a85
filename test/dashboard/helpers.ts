// A small browser over fetch for the dashboard's HTTP tests: a cookie jar, forms posted as
// application/x-www-form-urlencoded, redirects not followed (tests check them), and sign-in
// from the link in the queued email (what the sink writes to the outbox).
import { pino } from 'pino';
import { log } from '../../src/log.ts';
import type { TestApp } from '../helpers/app.ts';

export interface Page { status: number; headers: Headers; text: string; location: string | null; cookies: string[] }

export class Browser {
  readonly jar = new Map<string, string>();
  readonly baseUrl: string;
  constructor(baseUrl: string) { this.baseUrl = baseUrl; }

  cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, form?: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Page> {
    const body = form ? new URLSearchParams(Object.entries(form).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x): [string, string] => [k, x]))) : undefined;
    const res = await fetch(this.baseUrl + path, {
      method,
      redirect: 'manual',
      headers: { ...(this.jar.size ? { cookie: this.cookieHeader() } : {}), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      body,
    });
    const cookies = res.headers.getSetCookie();
    for (const c of cookies) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (/Max-Age=0/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location'), cookies };
  }

  get = (path: string) => this.request('GET', path);
  post = (path: string, form: Record<string, string | string[]>) => this.request('POST', path, form);

  /** The CSRF token of the page's forms. */
  static csrf(page: Page): string {
    const m = /name="csrf" value="([^"]+)"/.exec(page.text);
    if (!m) throw new Error(`no CSRF token on the page (${page.status})`);
    return m[1]!;
  }

  /** GETs a page and posts one of its forms with the page's CSRF token. */
  async submit(formPage: string, action: string, fields: Record<string, string | string[]>): Promise<Page> {
    const p = await this.get(formPage);
    return this.post(action, { csrf: Browser.csrf(p), ...fields });
  }
}

/** The sign-in link of the last email queued to `email` (by `organizationId` when given: one address may be in several). */
export async function lastLink(app: TestApp, email: string, organizationId?: string): Promise<string> {
  const { rows } = await app.db.owner.query(
    `select body from app_private.outgoing_messages where recipient = $1 and meta->>'kind' = 'dashboard_sign_in'
        and ($2::uuid is null or organization_id = $2)
      order by created_at desc, id limit 1`, [email, organizationId ?? null]);
  const m = /https?:\/\/\S+\/dashboard\/sign-in\/link\?token=[A-Za-z0-9_-]+/.exec(rows[0]?.body ?? '');
  if (!m) throw new Error(`no sign-in link was sent to ${email}`);
  return m[0];
}

/** Asks for a link, follows it from the email and signs in: a browser with a live session. */
export async function signIn(app: TestApp, email: string, browser = new Browser(app.url), organizationId?: string): Promise<Browser> {
  const asked = await browser.submit('/dashboard/sign-in', '/dashboard/sign-in', { email });
  if (asked.status !== 200) throw new Error(`sign-in request answered ${asked.status}`);
  const link = new URL(await lastLink(app, email, organizationId));
  const landing = await browser.get(link.pathname + link.search);
  const done = await browser.post('/dashboard/sign-in/link', { csrf: Browser.csrf(landing), token: link.searchParams.get('token')! });
  if (done.status !== 303) throw new Error(`sign-in answered ${done.status}: ${done.text.slice(0, 200)}`);
  return browser;
}

/**
 * Everything the process writes while `fn` runs, with the log at its most verbose: what pino
 * hands its destination stream, and the standard streams' writes.
 */
export async function capturingLogs<T>(fn: () => Promise<T>): Promise<{ result: T; written: string }> {
  const chunks: string[] = [];
  const level = log.level;
  const destination = (log as unknown as Record<symbol, { write: (chunk: unknown) => boolean }>)[pino.symbols.streamSym]!;
  const toLog = destination.write;
  const out = process.stdout.write;
  const err = process.stderr.write;
  const keep = (chunk: unknown) => { chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString()); return true; };
  destination.write = keep;
  process.stdout.write = keep as typeof process.stdout.write;
  process.stderr.write = keep as typeof process.stderr.write;
  log.level = 'trace';
  try {
    const result = await fn();
    return { result, written: chunks.join('') };
  } finally {
    log.level = level;
    destination.write = toLog;
    process.stdout.write = out;
    process.stderr.write = err;
  }
}
