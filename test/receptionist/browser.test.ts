// The dashboard inbox in real Chromium with JavaScript off (test/dashboard/chromium.ts): an
// owner follows the hand-over email's link, signs in, finds the conversation waiting for a
// person, replies (the SMS leaves through the outbox) and lets the AI answer again.
import test from 'ava';
import type { Browser } from 'playwright-core';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { inBrowser, launchChromium, outboxedLink } from '../dashboard/chromium.ts';
import { answers, clinicFixture, drain, sms } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let browser: Browser;
test.before(async () => {
  delete process.env.AI_BASE_URL;
  ({ app, tenant: acme } = await startWithTenant(clinicFixture()));
  ({ browser } = await launchChromium());
});
test.after.always(async () => {
  await browser?.close();
  await app?.close();
});

test('sign in from the hand-over email, reply in the inbox, let the AI answer', async (t) => {
  const conversation = (await sms(app, '+15551230001', 'Can I talk to a person please?')).conversation_id as string;
  await drain(app);
  const { rows: [email] } = await app.db.owner.query(`select body from app_private.outbox
     where channel = 'email' and recipient = 'olive@acme.example' and meta->>'conversation_id' = $1`, [conversation]);
  const path = new URL(/https?:\/\/\S+\/dashboard\/inbox\/\S+/.exec(email.body)![0]).pathname;
  t.is(path, `/dashboard/inbox/${conversation}`);

  await inBrowser(browser, t, async (page) => {
    // the page's stylesheet loads (the Content-Security-Policy allows it)
    const stylesheet = page.waitForResponse((r) => new URL(r.url()).pathname === '/dashboard/assets/pico.css');
    await page.goto('/dashboard/inbox');
    t.is((await stylesheet).status(), 200);
    await page.fill('input[name=email]', 'olive@acme.example');
    await page.click('button[type=submit]');
    await page.waitForSelector('text=a sign-in link is on its way');
    const link = new URL(await outboxedLink(app, 'olive@acme.example', acme.organization_id));
    await page.goto(link.pathname + link.search);
    await page.click('button:has-text("Sign in")');
    await page.waitForURL((u) => u.pathname === '/dashboard/inbox');

    const row = page.locator(`tr[data-conversation="${conversation}"]`);
    t.regex((await row.textContent())!, /Ann Lee[\s\S]*Waiting for a person/);
    await row.locator('a').click();
    await page.waitForURL((u) => u.pathname === path);
    t.truthy(await page.$('li[data-author=contact]:has-text("Can I talk to a person please?")'));

    await page.fill('textarea[name=body]', 'Hi Ann, Olive here. What can I do for you?');
    await page.click('button:has-text("Send")');
    await page.waitForSelector('text=Sent. The AI stays quiet until you let it answer.');
    t.truthy(await page.$('li[data-author=person]:has-text("Olive here")'));
    await drain(app);
    const { rows: sent } = await app.db.owner.query(`select recipient from app_private.outbox
       where channel = 'sms' and meta->>'conversation_id' = $1 and body like 'Hi Ann, Olive here%'`, [conversation]);
    t.deepEqual(sent, [{ recipient: '+15551230001' }]);

    await sms(app, '+15551230001', 'What are your hours?');
    await drain(app);
    const before = (await answers(app, conversation)).length;
    await page.click('button:has-text("Let the AI answer")');
    await page.waitForSelector('text=The AI answers this conversation again.');
    await drain(app);
    const after = await answers(app, conversation);
    t.is(after.length, before + 1);
    t.regex(after.at(-1)!, /open|hours/i);
    await page.goto(path);
    t.truthy(await page.$(`li[data-author=ai]:has-text("${after.at(-1)!.slice(0, 20)}")`));
  }, { baseURL: app.url });
});
