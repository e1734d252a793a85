// sequences_analytics (docs/sequences-reads.md, "Analytics"): per-step counts in the
// sequence's step order, wait steps included; a rollup; and whether delivery counts mean
// anything with this email transport.
import test from 'ava';
import { startApp, startWithTenant, type TestApp } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { emailDeliveryReporting } from '../../src/sequences/enrollments.ts';
import { insertSequence } from './helpers.ts';
import { insertEnrollment, insertEvents, insertStepRun, readsFixture } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(readsFixture())); });
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;
const analytics = (sequenceId: string, key = acme.keys.org!) => app.request('GET', `/api/v1/sequences/${sequenceId}/analytics`, { key });
const zero = { sent: 0, delivered: 0, bounced: 0, opened: 0, clicked: 0, replied: 0, skipped: 0, failed: 0, unknown: 0 };
const STEPS = [
  { step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Hi', body: 'Hello' },
  { step_key: 'pause', type: 'wait', delay: { days: 1 } },
  { step_key: 'nudge', type: 'sms', delay: { days: 2 }, body: 'Still there?' },
];

test('a sequence nobody entered: every step with zeros, in step order', async (t) => {
  const id = await insertSequence(app.db, org(), { steps: [STEPS[2], STEPS[1], STEPS[0]] });
  const res = await analytics(id);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body, {
    steps: [{ step_key: 'nudge', type: 'sms', ...zero }, { step_key: 'pause', type: 'wait', ...zero }, { step_key: 'hello', type: 'email', ...zero }],
    rollup: { enrolled: 0, active: 0, paused: 0, completed: 0, cancelled: 0, failed: 0, sent: 0, delivered: 0, bounced: 0, replied: 0 },
    email_delivery_reporting: 'supported',
  });
  const none = await analytics(await insertSequence(app.db, org(), { steps: [] }));
  t.deepEqual(none.body.steps, []);
  t.is(none.body.email_delivery_reporting, 'not_applicable');
});

test('counts: step runs for sent/skipped/failed/unknown, events per enrollment for delivered..replied; the rollup', async (t) => {
  const id = await insertSequence(app.db, org(), { steps: STEPS });
  const contacts = (await app.db.owner.query(`insert into app_public.contacts (organization_id, name, email)
    select $1, 'A' || i, 'analytics-' || i || '@example.com' from generate_series(1, 8) i returning id`, [org()])).rows.map((r) => r.id as string);
  const statuses = ['active', 'active', 'paused', 'completed', 'completed', 'cancelled', 'failed', 'active'] as const;
  const e = [];
  for (const [i, c] of contacts.entries()) e.push(await insertEnrollment(app.db, org(), { sequence_id: id, contact_id: c, status: statuses[i] }));
  const m = (i: number) => `00000000-0000-4000-8000-00000000000${i}`;
  // hello: 5 sent, 1 skipped, 1 failed, 1 unknown
  for (const i of [0, 1, 2, 3, 4]) await insertStepRun(app.db, org(), e[i]!, { step_key: 'hello', status: 'sent', message_id: m(i) });
  await insertStepRun(app.db, org(), e[5]!, { step_key: 'hello', status: 'skipped', reason: 'suppressed' });
  await insertStepRun(app.db, org(), e[6]!, { step_key: 'hello', status: 'failed', reason: 'transport_error' });
  await insertStepRun(app.db, org(), e[7]!, { step_key: 'hello', status: 'unknown', message_id: m(7) });
  // pause: waited (no message); nudge: 2 sent, 1 skipped
  for (const i of [0, 1, 3]) await insertStepRun(app.db, org(), e[i]!, { step_key: 'pause', step_type: 'wait', status: 'waited' });
  for (const i of [0, 3]) await insertStepRun(app.db, org(), e[i]!, { step_key: 'nudge', step_type: 'sms', status: 'sent' });
  await insertStepRun(app.db, org(), e[1]!, { step_key: 'nudge', step_type: 'sms', status: 'skipped', reason: 'no_consent' });
  const hello = (type: string, i: number) => ({ type, step_key: 'hello', message_id: m(i) });
  await insertEvents(app.db, org(), e[0]!, [hello('sent', 0), hello('delivered', 0), hello('opened', 0),
    hello('clicked', 0), { type: 'replied', step_key: 'hello' }, { type: 'replied', step_key: 'hello' }]);
  await insertEvents(app.db, org(), e[1]!, [hello('sent', 1), hello('delivered', 1), hello('opened', 1)]);
  await insertEvents(app.db, org(), e[2]!, [hello('sent', 2), hello('bounced', 2)]);
  await insertEvents(app.db, org(), e[3]!, [hello('sent', 3), hello('delivered', 3), { type: 'replied', step_key: 'nudge' },
    { type: 'completed', reason: 'exit_condition' }]);
  await insertEvents(app.db, org(), e[4]!, [hello('sent', 4), { type: 'replied' }]);
  const res = await analytics(id);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.steps, [
    { step_key: 'hello', type: 'email', ...zero, sent: 5, delivered: 3, bounced: 1, opened: 2, clicked: 1, replied: 1, skipped: 1, failed: 1, unknown: 1 },
    { step_key: 'pause', type: 'wait', ...zero },
    { step_key: 'nudge', type: 'sms', ...zero, sent: 2, replied: 1, skipped: 1 },
  ]);
  t.deepEqual(res.body.rollup, { enrolled: 8, active: 3, paused: 1, completed: 2, cancelled: 1, failed: 1, sent: 7, delivered: 3,
    bounced: 1, replied: 3 }, 'replied counts enrollments, a reply naming no step too');
  t.is(res.body.email_delivery_reporting, 'supported');

  // a manager at North sees no contact of these (none linked): zeros, same steps
  const north = await analytics(id, acme.keys.north_seq_mgr!);
  t.is(north.status, 200);
  t.like(north.body.rollup, { enrolled: 0, sent: 0, replied: 0 });
  t.deepEqual(north.body.steps.map((s: { step_key: string }) => s.step_key), ['hello', 'pause', 'nudge']);
  const viaMcp = await callTool(app, acme.keys.org!, 'sequences_analytics', { sequenceId: id });
  t.deepEqual(viaMcp.body, res.body);
});

test('email_delivery_reporting: not_applicable without an email step; otherwise the transport decides', async (t) => {
  const sms = await insertSequence(app.db, org(), { steps: [STEPS[2], STEPS[1]] });
  t.is((await analytics(sms)).body.email_delivery_reporting, 'not_applicable');
  t.is(emailDeliveryReporting({ emailTransport: 'sink' }), 'supported');
  t.is(emailDeliveryReporting({ emailTransport: 'smtp://mail.example:587' }), 'unsupported');
  t.is(emailDeliveryReporting({ emailTransport: 'smtps://user:pw@mail.example' }), 'unsupported');
});

test('over plain SMTP, delivery is unsupported (zero means unknown)', async (t) => {
  const smtp = await startApp({ env: { EMAIL_TRANSPORT: 'smtp://127.0.0.1:2525' } });
  try {
    const tenant = await smtp.apply(readsFixture());
    const email = await insertSequence(smtp.db, tenant.organization_id, { steps: STEPS });
    const sms = await insertSequence(smtp.db, tenant.organization_id, { steps: [STEPS[2]] });
    const get = (id: string) => smtp.request('GET', `/api/v1/sequences/${id}/analytics`, { key: tenant.keys.org });
    t.is((await get(email)).body.email_delivery_reporting, 'unsupported');
    t.is((await get(sms)).body.email_delivery_reporting, 'not_applicable');
  } finally {
    await smtp.close();
  }
});
