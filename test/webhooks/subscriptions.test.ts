// `svc admin webhook add|list|remove` as an operator runs it, and who may read what they keep:
// the secret is printed once and readable by the owner alone; subscriptions and deliveries only
// by the organization's owners and admins. URLs on the service's own network are refused when
// added, and again by the worker at each attempt, unless SVC_WEBHOOKS_ALLOW_PRIVATE=1.
import test from 'ava';
import { WEBHOOK_EVENTS } from '../../src/webhooks/events.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { deliverWebhook } from '../../src/webhooks/webhook_deliver.ts';
import { RETRY_FOR_MS, retryDelayMs } from '../../src/webhooks/events.ts';
import { addWebhook, listWebhooks, newSecret, removeWebhook } from '../../src/webhooks/subscriptions.ts';
import { AdminError } from '../../src/admin/commands.ts';
import { isPrivateAddress } from '../../src/platform/addresses.ts';
import { runOnce } from 'graphile-worker';
import pg from 'pg';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { svc } from '../helpers/cli.ts';
import { asKey, asRole } from '../helpers/sql.ts';
import { workerLogger, workerPreset } from '../../src/worker.ts';
import { deliveries, receiver, subscribe, webhooksFixture } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(webhooksFixture()));
  other = await app.apply(webhooksFixture('Other Co'));
});
test.after.always(async () => {
  await app?.close();
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  svc(['admin', 'webhook', ...args], { databaseUrl: app.db.ownerUrl, env: { SVC_WEBHOOKS_ALLOW_PRIVATE: '', ...env } });
const count = async () => (await app.db.owner.query('select count(*)::int as n from app_public.webhook_subscriptions')).rows[0].n as number;

test.serial('add prints the subscription and its secret once; list shows it without the secret; remove deletes it', async (t) => {
  const added = await cli(['add', '--org', acme.organization_id, '--url', 'http://127.0.0.1:9/hook', '--events', 'form.submitted,contact.created,form.submitted'],
    { SVC_WEBHOOKS_ALLOW_PRIVATE: '1' });
  t.is(added.code, 0, added.stderr);
  const out = JSON.parse(added.stdout);
  t.like(out, { organization_id: acme.organization_id, url: 'http://127.0.0.1:9/hook', events: ['contact.created', 'form.submitted'], status: 'active' });
  t.regex(out.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const { rows: [stored] } = await app.db.owner.query('select secret from app_private.webhook_secrets where subscription_id = $1', [out.id]);
  t.is(stored.secret, out.secret);

  const listed = await cli(['list', '--org', acme.organization_id]);
  t.is(listed.code, 0, listed.stderr);
  t.false(listed.stdout.includes(out.secret));
  t.like(JSON.parse(listed.stdout), { organization_id: acme.organization_id,
    webhooks: [{ id: out.id, events: ['contact.created', 'form.submitted'], deliveries: { pending: 0, delivered: 0, failed: 0, cancelled: 0 } }] });
  t.deepEqual(JSON.parse((await cli(['list', '--org', other.organization_id])).stdout).webhooks, []);

  const all = await subscribe(app.db.owner, other.organization_id, 'http://127.0.0.1:9/all', 'all');
  t.is(all.events.length, WEBHOOK_EVENTS.length);

  const removed = await cli(['remove', '--id', out.id]);
  t.is(removed.code, 0, removed.stderr);
  t.is((await app.db.owner.query('select count(*)::int as n from app_private.webhook_secrets where subscription_id = $1', [out.id])).rows[0].n, 0);
  await removeWebhook(app.db.owner, all.id);
  t.is(await count(), 0);
});

test.serial('bad input and URLs on the service\'s own network exit 2 with one line, writing nothing', async (t) => {
  const org = acme.organization_id;
  const cases: [string[], RegExp, Record<string, string>?][] = [
    [['add', '--url', 'https://example.com/h', '--events', 'all'], /--org must be a uuid/],
    [['add', '--org', 'acme', '--url', 'https://example.com/h', '--events', 'all'], /--org must be a uuid/],
    [['add', '--org', '00000000-0000-4000-8000-000000000000', '--url', 'https://127.0.0.2/h', '--events', 'all'], /no organization/,
      { SVC_WEBHOOKS_ALLOW_PRIVATE: '1' }],
    [['add', '--org', org, '--url', 'https://example.com/h'], /--events must list/],
    [['add', '--org', org, '--url', 'https://example.com/h', '--events', 'contact.deleted'], /unknown event "contact.deleted"/],
    [['add', '--org', org, '--url', 'not a url', '--events', 'all'], /is not a URL/],
    [['add', '--org', org, '--url', 'ftp://example.com/h', '--events', 'all'], /must be https/],
    [['add', '--org', org, '--url', 'http://127.0.0.1:9/h', '--events', 'all'], /must be https/],
    [['add', '--org', org, '--url', 'https://user:pw@example.com/h', '--events', 'all'], /no credentials/],
    [['add', '--org', org, '--url', 'https://127.0.0.1/h', '--events', 'all'], /private address \(127\.0\.0\.1\)/],
    [['add', '--org', org, '--url', 'https://localhost/h', '--events', 'all'], /localhost resolves to a private address/],
    [['add', '--org', org, '--url', 'https://[::1]/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://169.254.169.254/latest', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://10.1.2.3/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://[::ffff:192.168.0.1]/h', '--events', 'all'], /private address/],
    // IPv4 inside IPv6: NAT64, compatible, translated, 6to4, mapped in hex
    [['add', '--org', org, '--url', 'https://[64:ff9b::a9fe:a9fe]/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://[::7f00:1]/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://[::ffff:0:7f00:1]/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://[2002:a00:1::1]/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://[::ffff:a9fe:a9fe]/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://[64:ff9b:1::1]/h', '--events', 'all'], /private address/],
    // site-local and Teredo (IANA's special-purpose registry, not a hand list)
    [['add', '--org', org, '--url', 'https://[fec0::1]/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/h', '--events', 'all'], /private address/],
    [['add', '--org', org, '--url', 'https://198.51.100.7/h', '--events', 'all'], /private address/],
    // longer once percent-encoded than sent
    [['add', '--org', org, '--url', `https://example.com/${'é'.repeat(700)}`, '--events', 'all'], /at most 2000 characters/],
    [['add', '--org', org, '--url', 'https://no-such-host.invalid/h', '--events', 'all'], /does not resolve/],
    [['remove', '--id', '00000000-0000-4000-8000-000000000000'], /no webhook with id/],
    [['remove'], /--id must be a uuid/],
    [['list', '--org', 'x'], /--org must be a uuid/],
    [['add', '--org', org, '--url', 'https://example.com/h', '--events', 'all', '--secret', 'x'], /Unknown option '--secret'/],
  ];
  // the command's own function, case by case; then three through the command itself
  for (const [args, why, env] of cases) {
    const flags = Object.fromEntries(args.slice(1).join(' ').split(/ ?--/).filter(Boolean).map((f) => [f.split(' ')[0], f.split(' ').slice(1).join(' ')]));
    if (flags.secret !== undefined) continue; // an unknown flag: the command's parser refuses it (below)
    const run = args[0] === 'add' ? addWebhook(app.db.owner, flags, env?.SVC_WEBHOOKS_ALLOW_PRIVATE === '1')
      : args[0] === 'remove' ? removeWebhook(app.db.owner, flags.id) : listWebhooks(app.db.owner, flags.org);
    const e = await run.then(() => undefined, (x: unknown) => x);
    t.true(e instanceof AdminError, `${args.join(' ')}: ${e}`);
    t.regex((e as Error).message, why, args.join(' '));
  }
  const picked = [cases[1]!, cases[9]!, cases[cases.length - 1]!];
  const results = await Promise.all(picked.map(([args, , env]) => cli(args, env)));
  picked.forEach(([args, why], i) => {
    const r = results[i]!;
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, why, args.join(' '));
    t.is(r.stderr.trim().split('\n').length, 1);
    t.is(r.stdout, '');
  });
  t.is(await count(), 0);
});

test.serial('subscriptions and deliveries: owners and admins of the organization read them; others, analysts and other organizations do not; secrets nobody but the owner', async (t) => {
  const s = await subscribe(app.db.owner, acme.organization_id, 'http://127.0.0.1:9/read');
  await app.db.owner.query(`insert into app_public.contacts (organization_id, name) values ($1, 'Reader test')`, [acme.organization_id]);
  const seen = (key: string) => asKey({ db: app.db }, key, async (c) => [
    (await c.query('select id from app_public.webhook_subscriptions')).rows.length,
    (await c.query('select id from app_public.webhook_deliveries')).rows.length]);
  t.deepEqual(await seen(acme.keys.owner_personal!), [1, 1]);
  t.deepEqual(await seen(acme.keys.admin_personal!), [1, 1]);
  t.deepEqual(await seen(acme.keys.org!), [1, 1]);
  t.deepEqual(await seen(acme.keys.mgr_personal!), [0, 0]);
  t.deepEqual(await seen(acme.keys.mgr_key!), [0, 0]);
  t.deepEqual(await seen(acme.keys.sam_personal!), [0, 0]);
  t.deepEqual(await seen(other.keys.owner_personal!), [0, 0]);
  for (const role of ['svc_request', 'svc_worker', 'svc_analyst']) {
    const e = await asRole({ db: app.db }, role, [], (c) => c.query('select secret from app_private.webhook_secrets')).catch((x) => x);
    t.is(e.code, '42501', role);
  }
  // writes only through the owner's functions
  const w = await asKey({ db: app.db }, acme.keys.owner_personal, (c) =>
    c.query(`update app_public.webhook_subscriptions set url = 'https://evil.example/' where id = $1`, [s.id])).catch((x) => x);
  t.is(w.code, '42501');
  const f = await asKey({ db: app.db }, acme.keys.owner_personal, (c) =>
    c.query(`select app_private.webhook_subscribe($1, 'https://evil.example/', '{contact.created}', $2)`, [acme.organization_id, newSecret()])).catch((x) => x);
  t.is(f.code, '42501');
  await app.db.owner.query('select app_private.webhook_unsubscribe($1, $2)', [acme.organization_id, s.id]);
});

test.serial('the worker refuses a private address at delivery time unless allowed: nothing is sent, the attempt says why', async (t) => {
  const rx = await receiver();
  try {
    // added while private addresses were allowed, https to the loopback address
    const port = new URL(rx.base).port;
    const s = await subscribe(app.db.owner, acme.organization_id, `https://127.0.0.1:${port}/private`, 'contact.created');
    await app.db.owner.query(`insert into app_public.contacts (organization_id, name) values ($1, 'Private test')`, [acme.organization_id]);
    const pgPool = new pg.Pool({ connectionString: app.db.ownerUrl, max: 3 });
    pgPool.on('error', () => undefined);
    pgPool.on('connect', (c) => c.on('error', () => undefined));
    try {
      await runOnce({ pgPool, taskList: { webhook_deliver: deliverWebhook({ allowPrivate: false, retryBaseMs: 60_000 }) },
        logger: workerLogger, preset: workerPreset });
    } finally {
      await pgPool.end();
    }
    t.is(rx.received.length, 0);
    const [d] = (await deliveries(app.db.owner, acme.organization_id)).filter((x) => x.subscription_id === s.id);
    t.like(d, { status: 'pending', attempts: 1, last_status: null });
    t.regex(d.last_error, /^refused: 127\.0\.0\.1 resolves to a private address/);
    await app.db.owner.query('select app_private.webhook_unsubscribe($1, $2)', [acme.organization_id, s.id]);
  } finally {
    await rx.close();
  }
});

test('public addresses stay public, IPv4 inside IPv6 included', (t) => {
  for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '64:ff9b::5db8:d822', '::ffff:93.184.216.34', '2002:5db8:d822::1']) {
    t.false(isPrivateAddress(a), a);
  }
  for (const a of ['::', '::1', '64:ff9b::7f00:1', '::ffff:10.0.0.1', '2002:c0a8:101::', 'fe80::1', '::a9fe:a9fe']) t.true(isPrivateAddress(a), a);
});

test('the retry schedule: 30 s doubling to at most 6 h, less up to a fifth at random, about twenty attempts in three days', (t) => {
  const base = 30_000;
  t.deepEqual([1, 2, 3, 4, 10, 11, 20].map((n) => retryDelayMs(n, base, () => 0)),
    [30_000, 60_000, 120_000, 240_000, 15_360_000, 21_600_000, 21_600_000]);
  t.is(retryDelayMs(1, base, () => 1), 24_000);
  let at = 0;
  let attempts = 1;
  while (at + retryDelayMs(attempts, base, () => 0) <= RETRY_FOR_MS) at += retryDelayMs(attempts++, base, () => 0);
  t.true(attempts >= 18 && attempts <= 22, `${attempts} attempts`);
});

test.serial('a subscription being removed never fails or holds a customer\'s write that emits its event', async (t) => {
  const sub = await subscribe(app.db.owner, acme.organization_id, 'http://127.0.0.1:9/removed', 'contact.created');
  const client = await app.db.owner.connect();
  try {
    await client.query('begin');
    await client.query('select app_private.webhook_unsubscribe($1, $2)', [acme.organization_id, sub.id]);
    // the removal is not committed yet: the write goes on without its delivery, at once
    const res = await app.request('POST', '/api/v1/contacts', { key: acme.keys.org!, body: { email: 'racing-removal@example.com' } });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.true(res.body.created);
    await client.query('commit');
  } finally {
    client.release();
  }
  t.is((await app.db.owner.query(`select count(*)::int as n from app_public.webhook_subscriptions where id = $1`, [sub.id])).rows[0].n, 0);
  t.is((await app.db.owner.query(`select count(*)::int as n from app_public.webhook_deliveries where subscription_id = $1`, [sub.id])).rows[0].n, 0);
});
