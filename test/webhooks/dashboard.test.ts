// The dashboard's webhooks page over HTTP: an owner or admin adds a webhook (the secret shown
// once, never listed), sees it with its deliveries, removes it; anyone else is refused and
// nothing is written; a private URL, no event, a stale form, another organization's id: refused.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { signIn as signInAnywhere } from '../dashboard/helpers.ts';
import { subscribe } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture(), { env: { SVC_WEBHOOKS_ALLOW_PRIVATE: '' } }));
  other = await app.apply(acmeFixture('Other Co'));
});
test.after.always(async () => { await app?.close(); });

/** Signs in to Acme (the other tenant's people have the same addresses). */
const signIn = (a: TestApp, email: string, org = acme.organization_id) => signInAnywhere(a, email, undefined, org);
const count = async () => (await app.db.owner.query('select count(*)::int as n from app_public.webhook_subscriptions')).rows[0].n as number;
const secretOf = (text: string) => /id="new-secret">(whsec_[A-Za-z0-9+/]{43}=)</.exec(text)?.[1];

test.serial('an owner adds a webhook (secret shown once), sees it listed, removes it; an admin may too', async (t) => {
  const b = await signIn(app, 'olive@acme.example');
  const page = await b.get('/dashboard/webhooks');
  t.is(page.status, 200);
  t.regex(page.text, /No webhooks yet/);
  // the URL check runs before anything is written; a public https URL cannot be resolved on this
  // machine, so the page's own add is exercised on a subscription made by the operator's function
  const refused = await b.submit('/dashboard/webhooks', '/dashboard/webhooks/add', { url: 'https://127.0.0.1/hook', events: ['contact.created'] });
  t.is(refused.status, 400);
  t.regex(refused.text, /private address/);
  t.is(await count(), 0);

  const s = await subscribe(app.db.owner, acme.organization_id, 'http://127.0.0.1:9/listed', 'contact.created');
  const listed = await b.get('/dashboard/webhooks');
  t.regex(listed.text, new RegExp(`data-webhook="${s.id}"`));
  t.regex(listed.text, /http:\/\/127\.0\.0\.1:9\/listed/);
  t.false(listed.text.includes(s.secret));
  t.false(listed.text.includes('whsec_'));
  const removed = await b.submit('/dashboard/webhooks', '/dashboard/webhooks/remove', { id: s.id });
  t.is(removed.status, 200, removed.text.slice(0, 300));
  t.regex(removed.text, /Webhook removed/);
  t.is(await count(), 0);

  const admin = await signIn(app, 'adam@acme.example');
  t.is((await admin.get('/dashboard/webhooks')).status, 200);
});

test.serial('the page adds a webhook where private addresses are allowed: its secret shown once, stored for signing, never listed', async (t) => {
  const allowing = await startWithTenant(acmeFixture(), { env: { SVC_WEBHOOKS_ALLOW_PRIVATE: '1' } });
  try {
    const b = await signIn(allowing.app, 'olive@acme.example', allowing.tenant.organization_id);
    const added = await b.submit('/dashboard/webhooks', '/dashboard/webhooks/add',
      { url: 'http://127.0.0.1:9/dash', events: ['contact.created', 'form.submitted'] });
    t.is(added.status, 200, added.text.slice(0, 300));
    const secret = secretOf(added.text);
    t.truthy(secret);
    const { rows: [row] } = await allowing.app.db.owner.query(`select s.url, s.events, k.secret from app_public.webhook_subscriptions s
      join app_private.webhook_secrets k on k.subscription_id = s.id where s.organization_id = $1`, [allowing.tenant.organization_id]);
    t.deepEqual(row, { url: 'http://127.0.0.1:9/dash', events: ['contact.created', 'form.submitted'], secret });
    const list = await b.get('/dashboard/webhooks');
    t.false(list.text.includes(secret!));
    t.regex(list.text, /contact\.created, form\.submitted/);
  } finally {
    await allowing.app.close();
  }
});

test.serial('refusals write nothing: a manager or member, no event, a stale form, another organization\'s webhook', async (t) => {
  const s = await subscribe(app.db.owner, acme.organization_id, 'http://127.0.0.1:9/keep', 'contact.created');
  const theirs = await subscribe(app.db.owner, other.organization_id, 'http://127.0.0.1:9/theirs', 'contact.created');
  const before = await count();
  for (const email of ['max@acme.example', 'sam@acme.example']) {
    const b = await signIn(app, email);
    t.is((await b.get('/dashboard/webhooks')).status, 403, email);
    const r = await b.submit('/dashboard/keys', '/dashboard/webhooks/remove', { id: s.id });
    t.is(r.status, 403, email);
  }
  const owner = await signIn(app, 'olive@acme.example');
  const none = await owner.submit('/dashboard/webhooks', '/dashboard/webhooks/add', { url: 'https://127.0.0.1/x', events: [] });
  t.is(none.status, 400);
  t.regex(none.text, /at least one event/);
  const unknown = await owner.submit('/dashboard/webhooks', '/dashboard/webhooks/add', { url: 'https://127.0.0.1/x', events: ['contact.deleted'] });
  t.is(unknown.status, 400);
  const http = await owner.submit('/dashboard/webhooks', '/dashboard/webhooks/add', { url: 'http://127.0.0.1:9/x', events: ['contact.created'] });
  t.is(http.status, 400);
  t.regex(http.text, /must be https/);
  const stale = await owner.submit('/dashboard/webhooks', '/dashboard/webhooks/remove', { id: s.id, csrf: 'forged' });
  t.is(stale.status, 403);
  const cross = await owner.submit('/dashboard/webhooks', '/dashboard/webhooks/remove', { id: theirs.id });
  t.is(cross.status, 404);
  t.is(await count(), before);
});
