// Real Chromium for the dashboard's browser tests, through playwright-core (which ships no
// browser). Where it comes from, first found wins:
//   1. CHROMIUM_PATH, when set
//   2. Debian's /usr/bin/chromium (`apt-get install -y chromium`; .ci/run may install it)
//   3. @sparticuz/chromium, a devDependency: a headless Chromium inside the npm package,
//      unpacked into the temporary directory at first use, so `npm ci && npm test` needs
//      nothing else on a fresh x64 Linux machine (CHROMIUM_PATH=packaged forces this one)
// inBrowser runs a test in a fresh context with a screenshot on failure; outboxedLink reads the
// sign-in link the email sink delivered.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';

export async function launchChromium(): Promise<{ browser: Browser; source: string }> {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv && fromEnv !== 'packaged') return { browser: await chromium.launch({ executablePath: fromEnv, headless: true }), source: fromEnv };
  for (const path of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (!fromEnv && existsSync(path)) return { browser: await chromium.launch({ executablePath: path, headless: true, args: ['--no-sandbox'] }), source: path };
  }
  const packaged = (await import('@sparticuz/chromium')).default;
  const executablePath = await packaged.executablePath();
  // not the package's own args: they are for AWS Lambda (--single-process, which dies with the
  // first closed context, and --disable-web-security, which a dashboard test must not have)
  return { browser: await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--no-zygote'] }), source: '@sparticuz/chromium' };
}

const SHOTS = join(process.cwd(), '.data', 'screenshots');

/** Runs a browser test in a fresh context (JavaScript off); a screenshot of the page in .data/screenshots/ on failure. */
export async function inBrowser(browser: Browser, t: ExecutionContext, fn: (page: Page, context: BrowserContext) => Promise<void>,
  options: { baseURL?: string } = {}): Promise<void> {
  const context = await browser.newContext({ javaScriptEnabled: false, ...options });
  const page = await context.newPage();
  try {
    await fn(page, context);
  } catch (e) {
    mkdirSync(SHOTS, { recursive: true });
    const file = join(SHOTS, `${t.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    t.log(`screenshot: ${file}`);
    throw e;
  } finally {
    await context.close();
  }
}

/** The link of the last sign-in email the sink delivered to `email` in the organization (the jobs run first). */
export async function outboxedLink(app: TestApp, email: string, organizationId: string): Promise<string> {
  await runJobs(app.db, sinkOnly);
  const { rows } = await app.db.owner.query(
    `select body from app_private.outbox where recipient = $1 and organization_id = $2 and meta->>'kind' = 'dashboard_sign_in'
      order by created_at desc, id limit 1`, [email, organizationId]);
  const m = /https?:\/\/\S+\/dashboard\/sign-in\/link\?token=[A-Za-z0-9_-]+/.exec(rows[0]?.body ?? '');
  if (!m) throw new Error(`no sign-in link in the outbox for ${email}`);
  return m[0];
}
