// The dashboard in real Chromium (test/dashboard/chromium.ts says which), with JavaScript off:
// the pages must work as plain HTML forms. Sign in from the link the email sink put in the
// outbox, create each kind of key and be refused the kinds the role may not create, revoke,
// change a person. A failing step leaves a screenshot in .data/screenshots/.
import test, { type ExecutionContext } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inBrowser, launchChromium, outboxedLink } from './chromium.ts';

let app: TestApp;
let tenant: Applied;
let browser: Browser;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture()));
  ({ browser } = await launchChromium());
});
test.after.always(async () => {
  await browser?.close();
  await app?.close();
});

const run = (t: ExecutionContext, fn: (page: Page, context: BrowserContext) => Promise<void>) => inBrowser(browser, t, fn, { baseURL: app.url });

/** Visits `path` signed out, signs in from the outboxed link, and lands back on `path`. */
async function signIn(page: Page, email: string, path = '/dashboard/keys') {
  await page.goto(path);
  await page.fill('input[name=email]', email);
  await page.click('button[type=submit]');
  await page.waitForSelector('text=a sign-in link is on its way');
  // the link names SVC_BASE_URL; the test's server listens on a port of its own
  const link = new URL(await outboxedLink(app, email, tenant.organization_id));
  await page.goto(link.pathname + link.search);
  await page.click('button:has-text("Sign in")');
  await page.waitForURL((u) => u.pathname === path);
}

const newKey = async (page: Page) => (await page.textContent('#new-key'))!.trim();
const me = (key: string) => app.request('GET', '/api/v1/me', { key });

test.serial('an owner signs in from the outboxed link and creates each kind of key, each shown once', async (t) => {
  await run(t, async (page) => {
    await signIn(page, 'olive@acme.example');
    t.truthy(await page.$('nav >> text=Sign out'));
    for (const kind of ['personal', 'organization', 'organization_role', 'location_limited'] as const) {
      const form = `form[data-kind=${kind}]`;
      await page.fill(`${form} input[name=name]`, `browser ${kind}`);
      if (kind === 'organization_role') await page.check(`${form} input[name=role][value=MEMBER]`);
      if (kind === 'location_limited') await page.check(`${form} input[name=locations][value="${tenant.ids.north}"]`);
      await page.click(`${form} button[type=submit]`);
      const key = await newKey(page);
      t.regex(key, /^svc_sk_[A-Za-z0-9]{32}$/);
      const answer = await me(key);
      t.is(answer.status, 200, kind);
      t.like(answer.body.api_key, {
        personal: { kind: 'personal', role: null },
        organization: { kind: 'organization', role: null },
        organization_role: { kind: 'organization', role: 'MEMBER' },
        location_limited: { kind: 'organization', role: 'MANAGER', location_ids: [tenant.ids.north] },
      }[kind]);
      await page.goto('/dashboard/keys');
      t.false((await page.content()).includes(key), 'shown once');
      t.truthy(await page.$(`td:text-is("browser ${kind}")`));
    }
  });
});

test.serial('a member sees only the personal kind, and a forged form for another kind is refused', async (t) => {
  await run(t, async (page, context) => {
    await signIn(page, 'sam@acme.example');
    t.truthy(await page.$('form[data-kind=personal]'));
    t.is(await page.$('form[data-kind=organization]'), null);
    t.is(await page.$('form[data-kind=location_limited]'), null);
    const before = (await app.db.owner.query(`select count(*)::int as n from app_private.api_keys`)).rows[0].n;
    const csrf = await page.getAttribute('form[data-kind=personal] input[name=csrf]', 'value');
    for (const kind of ['organization', 'organization_role', 'location_limited']) {
      const forged = await context.request.post('/dashboard/keys/create', { form: { csrf: csrf!, kind, role: 'MANAGER', locations: tenant.ids.north!, scopes: 'contacts:read' }, maxRedirects: 0 });
      t.is(forged.status(), 403, kind);
      t.regex(await forged.text(), /may not create/);
    }
    t.is((await app.db.owner.query(`select count(*)::int as n from app_private.api_keys`)).rows[0].n, before);
    await page.fill('form[data-kind=personal] input[name=name]', 'sam browser');
    await page.click('form[data-kind=personal] button[type=submit]');
    t.is((await me(await newKey(page))).status, 200);
  });
});

test.serial('a manager with the staff power is refused another location\'s key', async (t) => {
  await run(t, async (page) => {
    await signIn(page, 'max@acme.example');
    t.is(await page.$('form[data-kind=organization]'), null);
    // only their own location is offered
    t.truthy(await page.$(`form[data-kind=location_limited] input[value="${tenant.ids.north}"]`));
    t.is(await page.$(`form[data-kind=location_limited] input[value="${tenant.ids.south}"]`), null);
    await page.click('form[data-kind=location_limited] button[type=submit]');
    t.truthy(await page.$('.error:has-text("Choose at least one location")'));
    await page.check(`form[data-kind=location_limited] input[value="${tenant.ids.north}"]`);
    await page.click('form[data-kind=location_limited] button[type=submit]');
    t.like((await me(await newKey(page))).body.api_key, { role: 'MANAGER', location_ids: [tenant.ids.north] });
  });
});

test.serial('revoke: the key stops at its next request', async (t) => {
  await run(t, async (page) => {
    await signIn(page, 'adam@acme.example');
    t.is((await me(tenant.keys.admin_org!)).status, 200);
    await page.click(`tr[data-key="${tenant.key_ids.admin_org}"] button:has-text("Revoke")`);
    await page.waitForSelector('text=Key revoked');
    t.truthy(await page.$(`tr[data-key="${tenant.key_ids.admin_org}"] td:text-is("revoked")`));
    t.is((await me(tenant.keys.admin_org!)).status, 401);
  });
});

test.serial('change a person: an admin turns a member\'s SMS and agent access off', async (t) => {
  await run(t, async (page) => {
    await signIn(page, 'adam@acme.example', '/dashboard/people');
    const form = `form[data-person="${tenant.ids.staff}"]`;
    await page.uncheck(`${form} input[name=sms_enabled]`);
    await page.uncheck(`${form} input[name=agent_access]`);
    await page.selectOption(`${form} select[name=records_level]`, 'own');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector('text=Saved');
    const { rows: [p] } = await app.db.owner.query(`select sms_enabled, agent_access, records_level from app_public.people where id = $1`, [tenant.ids.staff]);
    t.deepEqual(p, { sms_enabled: false, agent_access: false, records_level: 'own' });
    t.is((await me(tenant.keys.sam_personal!)).status, 401, 'agent access off at the next request');
    // an owner's agent access cannot be turned off from the page
    t.true(await page.isDisabled(`form[data-person="${tenant.ids.owner}"] input[type=checkbox][disabled]`));
    await page.click('nav button:has-text("Sign out")');
    await page.waitForURL((u) => u.pathname === '/dashboard/sign-in');
    await page.goto('/dashboard/people');
    t.is(new URL(page.url()).pathname, '/dashboard/sign-in');
  });
});
