// The API reference page (/api/v1/docs): Scalar's bundle served from node_modules, loaded in
// real Chromium (test/dashboard/chromium.ts says which) with every request watched: it lists
// every live operation, asks nothing of another origin, and "try it" sends the key as
// Authorization: Bearer. The served OpenAPI document lints clean under Redocly's recommended rules.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { Browser, Page } from 'playwright-core';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { launchChromium } from '../dashboard/chromium.ts';

let app: TestApp;
let tenant: Applied;
let browser: Browser;

/** A port free now, so that the app's base URL (where "try it" sends) is its own address. */
const freePort = () => new Promise<number>((resolve, reject) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as { port: number };
    s.close(() => resolve(port));
  }).on('error', reject);
});

test.before(async () => {
  const port = await freePort();
  ({ app, tenant } = await startWithTenant(acmeFixture(), { port, env: { SVC_BASE_URL: `http://127.0.0.1:${port}` } }));
  ({ browser } = await launchChromium());
});
test.after.always(async () => {
  await browser?.close();
  await app?.close();
});

/** Opens the page, recording every request the browser makes and every complaint it logs. */
async function openDocs(): Promise<{ page: Page; requests: { url: string; authorization?: string }[]; complaints: string[] }> {
  const page = await browser.newPage();
  const requests: { url: string; authorization?: string }[] = [];
  const complaints: string[] = [];
  page.on('request', (r) => { requests.push({ url: r.url(), authorization: r.headers().authorization }); });
  page.on('console', (m) => { if (m.type() === 'error') complaints.push(m.text()); });
  page.on('pageerror', (e) => complaints.push(e.message));
  await page.goto(`${app.url}/api/v1/docs`);
  await page.getByText('Receptionist, CRM and follow-up service').first().waitFor();
  return { page, requests, complaints };
}

test.serial('the page lists every live operation, and nothing leaves this origin', async (t) => {
  const { page, requests, complaints } = await openDocs();
  try {
    const live = [...app.operations.map((op) => `${op.method} ${op.path}`), 'POST /api/v1/mcp'].sort();
    // each tag's section lists its operations as METHOD and path, open or collapsed
    const listed = async () => {
      const text = await page.locator('body').innerText();
      return [...new Set([...text.matchAll(/^(GET|POST|PATCH|PUT|DELETE)\s*\n\s*(\/api\/v1\/\S*)\s*$/gm)].map((m) => `${m[1]} ${m[2]}`))].sort();
    };
    let seen = await listed();
    for (let i = 0; i < 50 && seen.length < live.length; i++) {
      await page.waitForTimeout(100);
      seen = await listed();
    }
    t.deepEqual(seen, live);
    t.true(live.length > 70);
    await page.waitForTimeout(500); // anything the page would fetch after rendering
    const origin = new URL(app.url).origin;
    t.deepEqual(requests.filter((r) => !r.url.startsWith(`${origin}/`)), [], 'every request stays on this origin');
    t.deepEqual(requests.map((r) => new URL(r.url).pathname).sort(), ['/api/v1/docs', '/api/v1/docs-json', '/api/v1/docs/scalar.js']);
    t.deepEqual(complaints, []);
  } finally {
    await page.close();
  }
});

test.serial('"try it" sends the key as Authorization: Bearer, to this service', async (t) => {
  const { page, requests, complaints } = await openDocs();
  try {
    await page.getByPlaceholder(/token/i).first().fill(tenant.keys.org!);
    await page.getByRole('button', { name: /Test Request/ }).first().click();
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/v1/me'));
    await page.getByRole('button', { name: /^Send/ }).first().click();
    const response = await answered;
    t.is(response.status(), 200);
    t.is(response.request().headers().authorization, `Bearer ${tenant.keys.org}`);
    t.is(((await response.json()) as { organization: { id: string } }).organization.id, tenant.organization_id);
    t.true(requests.every((r) => r.url.startsWith(`${app.url}/`)));
    t.deepEqual(complaints, []);
  } finally {
    await page.close();
  }
});

test('the page forbids every other origin, and its script is the package\'s own bundle', async (t) => {
  const res = await fetch(`${app.url}/api/v1/docs`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self'(;|$)/);
  // the one origin named is the base URL's, which is this service
  t.deepEqual([...csp.matchAll(/https?:\/\/[^\s;]+/g)].map((m) => m[0]), [new URL(app.url).origin]);
  const html = await res.text();
  t.false(/https?:\/\//.test(html), 'the page names no absolute URL');

  const script = await fetch(`${app.url}/api/v1/docs/scalar.js`);
  t.is(script.status, 200);
  t.regex(script.headers.get('content-type') ?? '', /^text\/javascript/);
  const bundle = createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js');
  t.true(Buffer.from(await script.arrayBuffer()).equals(readFileSync(bundle)));
});

test('the served OpenAPI document declares the bearer scheme and lints clean under Redocly\'s recommended rules', async (t) => {
  const doc = await (await fetch(`${app.url}/api/v1/docs-json`)).json() as Record<string, any>;
  t.deepEqual(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', description: 'svc_sk_ followed by 32 characters' });
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `${app.url}/api/v1/docs-json`, config });
  const lines = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
  t.deepEqual(lines.filter((l) => l.startsWith('error')), []);
  t.deepEqual(lines.filter((l) => l.startsWith('warn')), []);
  t.deepEqual(lines, []);
});
