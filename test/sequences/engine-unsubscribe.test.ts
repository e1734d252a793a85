// One-click unsubscribe (RFC 8058) from sequence email: the List-Unsubscribe URL's GET shows a
// confirmation page and changes nothing; its POST (no sign-in) suppresses the address and
// cancels the contact's email sequences; unknown tokens are 404; only the token's hash is kept.
import test from 'ava';
import { createHash } from 'node:crypto';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { unchanged } from '../helpers/writes.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { drain, engineFixture, enroll, enrollment, outbox } from './engine-helpers.ts';

let app: TestApp;
let tenant: Applied;
let org: string;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(engineFixture('Acme <Dental> & Co')));
  org = tenant.organization_id;
  await insertSendSchedule(app.db, org);
});
test.after.always(async () => {
  await app?.close();
});

test.serial('GET shows a confirmation page and changes nothing; POST unsubscribes, cancels the email sequences, and can be repeated', async (t) => {
  const first = await insertSequence(app.db, org, {
    steps: [{ step_key: 'a', type: 'email', subject: 'A', body: 'A' }, { step_key: 'b', type: 'email', delay: { days: 1 }, subject: 'B', body: 'B' }] });
  const sms = await insertSequence(app.db, org, { steps: [{ step_key: 't', type: 'sms', body: 'T', delay: { days: 1 } }] });
  const mailed = (await enroll(app, tenant.keys.org!, first, { contact_id: tenant.ids.ann })).body.enrollment.id;
  const texted = (await enroll(app, tenant.keys.org!, sms, { contact_id: tenant.ids.ann })).body.enrollment.id;
  await drain(app.db);
  const [m] = (await outbox(app.db, org)).filter((o) => o.meta.enrollment_id === mailed);
  const url = m.meta.headers['List-Unsubscribe'].slice(1, -1) as string;
  const path = new URL(url).pathname;
  const token = path.split('/').pop()!;
  // only the hash is stored
  const { rows } = await app.db.owner.query(`select token_hash, email, used_at from app_private.unsubscribe_tokens where organization_id = $1`, [org]);
  t.is(rows.length, 1);
  t.deepEqual(rows[0].token_hash, createHash('sha256').update(token).digest());
  t.false(JSON.stringify(rows).includes(token));

  const page = await unchanged(t, app, org, () => fetch(app.url + path));
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type')!, /^text\/html/);
  const html = await page.text();
  t.true(html.includes('<form method="post">'));
  t.true(html.includes('Acme &#60;Dental&#62; &#38; Co'), 'the organization\'s name is escaped');
  t.true(html.includes('a…@example.com'));
  t.false(html.includes('ann@example.com'), 'the address is masked');

  // the mail client's one-click POST
  const post = await fetch(app.url + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click' });
  t.is(post.status, 200);
  t.true((await post.text()).includes('You are unsubscribed'));
  const { rows: [s] } = await app.db.owner.query(`select source, contact_id from app_public.email_suppressions where organization_id = $1 and email = 'ann@example.com'`, [org]);
  t.like(s, { source: 'unsubscribe', contact_id: tenant.ids.ann });
  t.like(await enrollment(app.db, mailed), { status: 'cancelled', end_reason: 'suppressed' });
  t.is((await enrollment(app.db, texted)).status, 'active', 'SMS sequences go on');
  // again: the same answer, nothing more
  const again = await unchanged(t, app, org, async () => {
    const r = await fetch(app.url + path, { method: 'POST' });
    await r.text();
    return r;
  }, 'a repeated unsubscribe changes nothing');
  t.is(again.status, 200);
  t.true((await (await fetch(app.url + path)).text()).includes('You are unsubscribed'));
});

test.serial('unknown or malformed tokens are 404 pages, and change nothing', async (t) => {
  for (const token of ['x', 'A'.repeat(43), 'abc$%25def', '..%2F..%2Fapi%2Fv1%2Fme', 'A'.repeat(300)]) {
    for (const method of ['GET', 'POST']) {
      const res = await unchanged(t, app, org, () => fetch(`${app.url}/unsubscribe/${token}`, { method }));
      t.is(res.status, 404, `${method} ${token}`);
      await res.text();
    }
  }
});

test.serial('a test send to an address no contact carries: its link records nothing and says so', async (t) => {
  const seq = await insertSequence(app.db, org, { status: 'inactive' });
  const sent = await app.request('POST', `/api/v1/sequences/${seq}/steps/hello/test`, { key: tenant.keys.org!, body: { to_email: 'author@elsewhere.example' } });
  t.is(sent.body.success, true);
  const [m] = (await outbox(app.db, org)).filter((o) => o.id === sent.body.message_id);
  const path = new URL(m.meta.headers['List-Unsubscribe'].slice(1, -1)).pathname;
  const res = await fetch(app.url + path, { method: 'POST' });
  t.is(res.status, 200);
  t.true((await res.text()).includes('Nothing to unsubscribe'));
  const { rows } = await app.db.owner.query(`select 1 from app_public.email_suppressions where organization_id = $1 and email = 'author@elsewhere.example'`, [org]);
  t.is(rows.length, 0);
});
