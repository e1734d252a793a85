// Outbound webhooks end to end: each of the eight events from its real cause (the API, the
// engine, `svc admin inbound sms`, the receptionist handing that message to a person,
// `svc admin form submit`), delivered to a local receiver and
// verified with the standardwebhooks package; retries after a 500 with the same webhook-id;
// removal, 410 Gone, the three-day limit; organizations never see each other's events.
import test from 'ava';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sendAttempt } from '../../src/webhooks/send.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { svc } from '../helpers/cli.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';
import { northCleaning } from '../appointments/booking-helpers.ts';
import { insertSendSchedule, insertSequence } from '../sequences/helpers.ts';
import { deliveries, receiver, subscribe, verified, webhooksFixture } from './helpers.ts';

// the worker's settings (read when the task list is built): the receiver is local, retries quick
process.env.SVC_WEBHOOKS_ALLOW_PRIVATE = '1';
process.env.SVC_WEBHOOKS_RETRY_BASE_MS = '100';

let app: TestApp;
let acme: Applied;
let other: Applied;
let rx: Awaited<ReturnType<typeof receiver>>;
/** Paths answered 500 this many times before a 200; '/gone' answers 410. */
const failFirst = new Map<string, number>();

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(webhooksFixture()));
  other = await app.apply(webhooksFixture('Other Co'));
  rx = await receiver((path, n) => (path === '/gone' ? 410 : n <= (failFirst.get(path) ?? 0) ? 500 : 200));
});
test.after.always(async () => {
  await rx?.close();
  await app?.close();
});

const drain = () => runJobs(app.db, sinkOnly);
/** Drains until `done`, letting retries come due. */
async function drainUntil(done: () => boolean | Promise<boolean>, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    await drain();
    if (await done()) return;
    if (Date.now() > end) throw new Error('timed out draining');
    await new Promise((r) => setTimeout(r, 150));
  }
}
const webhookIdOf = (deliveryId: string) => `msg_${deliveryId.replaceAll('-', '')}`;

test.serial('each of the eight events fires once from its real cause, signed, and only to its own organization', async (t) => {
  const a = await subscribe(app.db.owner, acme.organization_id, `${rx.base}/acme`);
  const b = await subscribe(app.db.owner, other.organization_id, `${rx.base}/other`);
  t.regex(a.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const key = acme.keys.owner_personal!;
  const seen = new Set<string>();
  /** The events of Acme's deliveries made since the last call. */
  const fresh = async () => {
    const rows = (await deliveries(app.db.owner, acme.organization_id)).filter((d) => !seen.has(d.id));
    for (const d of rows) seen.add(d.id);
    return rows.map((d) => d.event);
  };

  const created = await app.request('POST', '/api/v1/contacts', { key, body: { email: 'new@example.com', name: 'New Person' } });
  t.is(created.status, 200, JSON.stringify(created.body));
  const contactId = created.body.id;
  t.deepEqual(await fresh(), ['contact.created']);

  const updated = await app.request('PATCH', `/api/v1/contacts/${contactId}`, { key, body: { name: 'New Name' } });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.deepEqual(await fresh(), ['contact.updated']);

  await insertSendSchedule(app.db, acme.organization_id);
  const seq = await insertSequence(app.db, acme.organization_id, { name: 'Welcome' });
  const enrolled = await app.request('POST', `/api/v1/sequences/${seq}/enrollments`, { key, body: { contact_id: contactId } });
  t.is(enrolled.body.status, 'enrolled', JSON.stringify(enrolled.body));
  await drain(); // the engine sends the one step and completes the enrollment
  t.deepEqual(await fresh(), ['enrollment.completed']);

  const booked = await app.request('POST', '/api/v1/appointments', { key, body: { idempotency_key: 'wh-book-1', ...northCleaning(acme) } });
  t.is(booked.status, 201, JSON.stringify(booked.body));
  t.deepEqual(await fresh(), ['appointment.booked']);
  const cancelled = await app.request('POST', `/api/v1/appointments/${booked.body.id}/cancel`, { key, body: {} });
  t.is(cancelled.status, 200, JSON.stringify(cancelled.body));
  t.deepEqual(await fresh(), ['appointment.cancelled']);

  const sms = await svc(['admin', 'inbound', 'sms', '--to', '+15550000001', '--from', '+15551230001', '--body', 'Is Tuesday free?'],
    { databaseUrl: app.db.ownerUrl });
  t.is(sms.code, 0, sms.stderr);
  t.deepEqual(await fresh(), ['message.received']);
  // the built-in receptionist (no model configured) cannot answer it: a person is asked to
  await drainUntil(async () => (await deliveries(app.db.owner, acme.organization_id)).some((d) => d.event === 'conversation.handed_over'));
  t.deepEqual(await fresh(), ['conversation.handed_over']);

  const form = await svc(['admin', 'form', 'submit', '--form', acme.ids.intake!, '--payload', JSON.stringify({ email: 'ann@example.com' })],
    { databaseUrl: app.db.ownerUrl });
  t.is(form.code, 0, form.stderr);
  t.is(JSON.parse(form.stdout).status, 'accepted');
  t.deepEqual(await fresh(), ['form.submitted']);

  await drainUntil(async () => (await deliveries(app.db.owner, acme.organization_id)).every((d) => d.status === 'delivered'));
  const rows = await deliveries(app.db.owner, acme.organization_id);
  const got = rx.at('/acme');
  t.is(got.length, 8);
  const bodies = got.map((r) => verified(a.secret, r));
  t.deepEqual(bodies.map((x) => x.type).sort(), ['appointment.booked', 'appointment.cancelled', 'contact.created', 'contact.updated',
    'conversation.handed_over', 'enrollment.completed', 'form.submitted', 'message.received']);
  t.deepEqual(got.map((r) => r.headers['webhook-id']).sort(), rows.map((d) => webhookIdOf(d.id)).sort());
  for (const r of got) t.throws(() => verified(b.secret, r), undefined, 'another secret does not verify it');
  const byType = Object.fromEntries(bodies.map((x) => [x.type, x]));
  t.like(byType['contact.created']!.data, { id: contactId, email: 'new@example.com', name: 'New Person' });
  t.like(byType['contact.updated']!.data, { id: contactId, name: 'New Name' });
  t.like(byType['enrollment.completed']!.data, { sequence_id: seq, contact_id: contactId, status: 'completed' });
  t.like(byType['appointment.booked']!.data, { id: booked.body.id, contact_id: acme.ids.ann, status: 'booked' });
  t.like(byType['appointment.cancelled']!.data, { id: booked.body.id, status: 'cancelled' });
  t.like(byType['message.received']!.data, { contact_id: acme.ids.ann, channel: 'sms', body: 'Is Tuesday free?' });
  t.like(byType['conversation.handed_over']!.data, { conversation_id: byType['message.received']!.data.conversation_id,
    contact_id: acme.ids.ann, location_id: acme.ids.north, reason: 'a message the receptionist cannot answer' });
  t.like(byType['form.submitted']!.data, { form_id: acme.ids.intake, contact_id: acme.ids.ann, payload: { email: 'ann@example.com' } });
  for (const x of bodies) t.false(Number.isNaN(Date.parse(x.timestamp)));
  t.true(rows.every((d) => d.attempts === 1 && d.last_status === 200));

  // nothing of Acme's went to the other organization's receiver, and the other's events go to it alone
  t.is(rx.at('/other').length, 0);
  t.is((await deliveries(app.db.owner, other.organization_id)).length, 0);
  const theirs = await app.request('POST', '/api/v1/contacts', { key: other.keys.owner_personal, body: { email: 'theirs@example.com' } });
  t.is(theirs.status, 200);
  await drainUntil(() => rx.at('/other').length === 1);
  t.like(verified(b.secret, rx.at('/other')[0]!), { type: 'contact.created', data: { email: 'theirs@example.com' } });
  t.is(rx.at('/acme').length, 8);
  t.deepEqual(await fresh(), []);
});

test.serial('a 500 is retried with backoff and delivered with the same webhook-id and body', async (t) => {
  failFirst.set('/flaky', 2);
  const s = await subscribe(app.db.owner, acme.organization_id, `${rx.base}/flaky`, 'contact.created');
  const r = await app.request('POST', '/api/v1/contacts', { key: acme.keys.org, body: { email: 'flaky@example.com' } });
  t.is(r.status, 200);
  await drainUntil(() => rx.at('/flaky').length >= 3);
  const got = rx.at('/flaky');
  t.is(got.length, 3);
  t.is(new Set(got.map((g) => g.headers['webhook-id'])).size, 1, 'one webhook-id on every attempt');
  t.is(new Set(got.map((g) => g.body)).size, 1, 'the same body on every attempt');
  for (const g of got) t.is(verified(s.secret, g).type, 'contact.created');
  const [d] = (await deliveries(app.db.owner, acme.organization_id)).filter((x) => x.subscription_id === s.id);
  t.like(d, { status: 'delivered', attempts: 3, last_status: 200, next_attempt_at: null });
  t.is(webhookIdOf(d.id), String(got[0]!.headers['webhook-id']));
});

test.serial('after svc admin webhook remove nothing more is sent, pending retries included', async (t) => {
  failFirst.set('/removed', 1000);
  const s = await subscribe(app.db.owner, acme.organization_id, `${rx.base}/removed`, 'contact.created,contact.updated');
  await app.request('POST', '/api/v1/contacts', { key: acme.keys.org, body: { email: 'gone-soon@example.com' } });
  await drainUntil(() => rx.at('/removed').length >= 1);
  const [pending] = (await deliveries(app.db.owner, acme.organization_id)).filter((x) => x.subscription_id === s.id);
  t.like(pending, { status: 'pending', last_status: 500 });
  t.true(pending.attempts >= 1);

  const listed = await svc(['admin', 'webhook', 'list', '--org', acme.organization_id], { databaseUrl: app.db.ownerUrl });
  t.is(listed.code, 0, listed.stderr);
  const mine = JSON.parse(listed.stdout).webhooks.find((w: { id: string }) => w.id === s.id);
  t.like(mine, { url: `${rx.base}/removed`, events: ['contact.created', 'contact.updated'], status: 'active', deliveries: { pending: 1 } });
  t.false(listed.stdout.includes('whsec_'), 'list never shows a secret');

  const removed = await svc(['admin', 'webhook', 'remove', '--id', s.id], { databaseUrl: app.db.ownerUrl });
  t.is(removed.code, 0, removed.stderr);
  t.like(JSON.parse(removed.stdout), { id: s.id, removed: true });
  const before = rx.at('/removed').length;
  await app.request('POST', '/api/v1/contacts', { key: acme.keys.org, body: { email: 'after-removal@example.com' } });
  await new Promise((r) => setTimeout(r, 400));
  await drain();
  await new Promise((r) => setTimeout(r, 400));
  await drain();
  t.is(rx.at('/removed').length, before);
  t.is((await app.db.owner.query('select count(*)::int as n from app_public.webhook_deliveries where subscription_id = $1', [s.id])).rows[0].n, 0);
  const again = await svc(['admin', 'webhook', 'remove', '--id', s.id], { databaseUrl: app.db.ownerUrl });
  t.is(again.code, 2);
  t.regex(again.stderr, /no webhook with id/);
});

test.serial('410 Gone disables the subscription: the delivery fails and later events make none', async (t) => {
  const s = await subscribe(app.db.owner, acme.organization_id, `${rx.base}/gone`, 'contact.created');
  await app.request('POST', '/api/v1/contacts', { key: acme.keys.org, body: { email: 'to-gone@example.com' } });
  await drainUntil(() => rx.at('/gone').length >= 1);
  await drain();
  const { rows: [sub] } = await app.db.owner.query('select status, disabled_reason from app_public.webhook_subscriptions where id = $1', [s.id]);
  t.like(sub, { status: 'disabled' });
  t.regex(sub.disabled_reason, /410/);
  const mine = async () => (await deliveries(app.db.owner, acme.organization_id)).filter((x) => x.subscription_id === s.id);
  t.like((await mine())[0], { status: 'failed', last_status: 410, attempts: 1 });
  await app.request('POST', '/api/v1/contacts', { key: acme.keys.org, body: { email: 'after-gone@example.com' } });
  t.is((await mine()).length, 1);
  await drain();
  t.is(rx.at('/gone').length, 1);
});

test.serial('a delivery still failing three days after its event is marked failed, with no further job', async (t) => {
  failFirst.set('/down', 1000);
  const s = await subscribe(app.db.owner, acme.organization_id, `${rx.base}/down`, 'contact.created');
  await app.request('POST', '/api/v1/contacts', { key: acme.keys.org, body: { email: 'down@example.com' } });
  const [d] = (await deliveries(app.db.owner, acme.organization_id)).filter((x) => x.subscription_id === s.id);
  await app.db.owner.query(`update app_public.webhook_deliveries set created_at = now() - interval '3 days' where id = $1`, [d.id]);
  await drain();
  const { rows: [after] } = await app.db.owner.query('select status, attempts, last_status, next_attempt_at from app_public.webhook_deliveries where id = $1', [d.id]);
  t.deepEqual(after, { status: 'failed', attempts: 1, last_status: 500, next_attempt_at: null });
  const { rows: jobs } = await app.db.owner.query(`select 1 from graphile_worker._private_jobs where key = $1`, [`webhook:${d.id}`]);
  t.is(jobs.length, 0);
});

test.serial('a rolled-back write leaves no delivery and no job', async (t) => {
  const s = await subscribe(app.db.owner, acme.organization_id, `${rx.base}/rollback`, 'contact.created');
  const jobs = async () => (await app.db.owner.query(`select count(*)::int as n from graphile_worker._private_jobs j
    join graphile_worker._private_tasks k on k.id = j.task_id where k.identifier = 'webhook_deliver'`)).rows[0].n as number;
  const before = await jobs();
  const made = (await deliveries(app.db.owner, acme.organization_id)).length;
  const c = await app.db.owner.connect();
  try {
    await c.query('begin');
    await c.query(`insert into app_public.contacts (organization_id, name) values ($1, 'Never')`, [acme.organization_id]);
    t.is((await c.query('select count(*)::int as n from app_public.webhook_deliveries where subscription_id = $1', [s.id])).rows[0].n, 1);
    t.is((await c.query(`select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks k
      on k.id = j.task_id where k.identifier = 'webhook_deliver'`)).rows[0].n - before,
      (await c.query('select count(*)::int as n from app_public.webhook_deliveries where organization_id = $1', [acme.organization_id])).rows[0].n - made,
      'a job for each delivery, in the same transaction');
    await c.query('rollback');
  } finally {
    c.release();
  }
  t.is((await app.db.owner.query('select count(*)::int as n from app_public.webhook_deliveries where subscription_id = $1', [s.id])).rows[0].n, 0);
  t.is(await jobs(), before);
});

test('an attempt has one deadline for the whole answer: a receiver trickling its headers, or its body after a 200, is cut off', async (t) => {
  // headers a byte at a time, never finished; then a 200 whose body never ends
  const trickle = (chunks: string[], every: number) => createServer((socket) => {
    let i = 0;
    const timer = setInterval(() => socket.write(chunks[Math.min(i++, chunks.length - 1)]!), every);
    socket.on('close', () => clearInterval(timer));
    socket.on('error', () => clearInterval(timer));
  });
  const servers = [
    trickle(['H', 'T', 'T', 'P', '/', '1', '.', '1', ' ', 'X-Slow: y\r\n'], 100),
    trickle(['HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n', 'x'], 100),
  ];
  const attempt = async (server: ReturnType<typeof createServer>) => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const started = Date.now();
    const outcome = await sendAttempt({ url, secret: `whsec_${Buffer.from('k'.repeat(24)).toString('base64')}`, id: 'msg_1', body: '{}',
      allowPrivate: true, timeoutMs: 600 }).then((status) => ({ status }), (e: Error) => ({ error: e.message }));
    server.close();
    return { ...outcome, ms: Date.now() - started };
  };
  const headers = await attempt(servers[0]!);
  t.like(headers, { error: 'no whole answer within 0.6 s' });
  t.true(headers.ms < 3000, `${headers.ms} ms`);
  const body = await attempt(servers[1]!);
  t.like(body, { status: 200 }, 'the status counts; the body is cut short');
  t.true(body.ms < 3000, `${body.ms} ms`);
});
