// Background work: jobs enqueued from SQL in the writing transaction, delivery through the sink
// once and only once, retries, the hourly purge, `svc admin outbox`, and shutdown of `svc worker`
// while a delivery is running. Tests are serial: they share one job queue.
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseCrontab } from 'graphile-worker';
import { adminApply } from '../../src/admin/commands.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import type { Transport } from '../../src/delivery/index.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { allTasks, crontab } from '../../src/worker.ts';
import { svc } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { jobsFor, messageRow, queueMessage, recording, runJobs, sinkOnly } from '../helpers/messages.ts';
import { AREAS } from '../../src/areas.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

let db: TestDatabase;
let a: Applied;
let b: Applied;
let fb: ReturnType<typeof acmeFixture>;
test.before(async () => {
  db = await createTestDatabase();
  fb = acmeFixture('Workers B');
  // this suite's own database: its first organization keeps the default domain and number the checks name
  const fa = acmeFixture('Workers A');
  a = await adminApply(db.owner, { ...fa, organization: { ...fa.organization, sending_email_domain: 'acme.example', default_sms_number: '+15550000000' } }, AREAS);
  b = await adminApply(db.owner, fb, AREAS);
});
test.after.always(async () => { await db?.drop(); });

const email = (subject: string) => ({ channel: 'email' as const, recipient: 'ann@example.com', subject, body: `Body of ${subject}` });
const count = async (sql: string, params: unknown[] = []) => (await db.owner.query(sql, params)).rows[0].n as number;
const outboxCount = (id: string) => count(`select count(*)::int as n from app_private.outbox where id = $1`, [id]);

test.serial('a message queued by a SQL function is delivered by the worker and marked sent', async (t) => {
  const id = await queueMessage(db, a.keys.org!, { ...email('Welcome'), meta: { purpose: 'test' } });
  t.like((await jobsFor(db, id))[0], { task_identifier: 'deliver_message', key: `message:${id}` }, 'the job committed with the message');
  t.is((await messageRow(db, id))?.status, 'queued');

  await runJobs(db, sinkOnly);

  const { rows } = await db.owner.query(`select * from app_private.outbox where id = $1`, [id]);
  t.like(rows[0], {
    organization_id: a.organization_id, channel: 'email', sender: 'no-reply@acme.example', recipient: 'ann@example.com',
    subject: 'Welcome', body: 'Body of Welcome', meta: { purpose: 'test' },
  });
  const row = await messageRow(db, id);
  t.like(row, { status: 'sent', error: null });
  t.truthy(row?.sent_at);
  t.deepEqual(await jobsFor(db, id), [], 'the finished job is gone');
});

test.serial('graphile_worker.add_jobs keeps one generic plan per connection: queueing a job is not planned afresh each time', async (t) => {
  // the function's plan_cache_mode setting: without it, PostgreSQL plans add_jobs' statements at
  // every call (an array parameter); an upgrade of graphile-worker that replaces the function drops it
  const { rows: [fn] } = await db.owner.query(
    `select proconfig from pg_proc where oid = 'graphile_worker.add_jobs(graphile_worker.job_spec[], boolean)'::regprocedure`);
  t.deepEqual(fn.proconfig, ['plan_cache_mode=force_generic_plan', 'enable_seqscan=off']);
  // and jobs are still added, replaced by key, and kept apart by key
  const client = await db.owner.connect();
  try {
    await client.query('begin');
    for (let i = 0; i < 8; i++) {
      await client.query(`select graphile_worker.add_job('deliver_message', json_build_object('n', $1::int), job_key => 'plan-test:' || ($1::int % 3))`, [i]);
    }
    const { rows } = await client.query(`select key, payload->>'n' as n from graphile_worker._private_jobs where key like 'plan-test:%' order by key`);
    t.deepEqual(rows, [{ key: 'plan-test:0', n: '6' }, { key: 'plan-test:1', n: '7' }, { key: 'plan-test:2', n: '5' }]);
  } finally {
    await client.query('rollback');
    client.release();
  }
});

test.serial('a rolled-back transaction enqueues nothing', async (t) => {
  const jobs = () => count(`select count(*)::int as n from graphile_worker._private_jobs`);
  const messages = () => count(`select count(*)::int as n from app_private.outgoing_messages`);
  const [jobsBefore, messagesBefore] = [await jobs(), await messages()];
  const id = await queueMessage(db, a.keys.org!, email('Never'), { rollback: true });
  t.is(await jobs(), jobsBefore);
  t.is(await count(`select count(*)::int as n from graphile_worker.jobs`), jobsBefore);
  t.is(await messages(), messagesBefore);
  t.is(await messageRow(db, id), undefined);
});

test.serial('a retried or duplicated delivery sends once', async (t) => {
  const sms = recording(sinkTransport, 300);
  const id = await queueMessage(db, a.keys.org!, { channel: 'sms', recipient: '+15551230001', body: 'See you at 9' });
  // A second job for the same message, run at the same time: it waits for the first one's lock.
  await db.owner.query(`select graphile_worker.add_job('deliver_message', json_build_object('organization_id', $1::uuid, 'message_id', $2::uuid), job_key => 'duplicate:' || $2)`,
    [a.organization_id, id]);
  await runJobs(db, { email: sinkTransport, sms }, 2);
  t.is(sms.sent.length, 1);

  // And once more after it was sent, as a retry would.
  await db.owner.query(`select graphile_worker.add_job('deliver_message', json_build_object('organization_id', $1::uuid, 'message_id', $2::uuid))`,
    [a.organization_id, id]);
  await runJobs(db, { email: sinkTransport, sms });
  t.is(sms.sent.length, 1, 'a sent message is not handed to its transport again');
  t.is(await outboxCount(id), 1);
  t.is((await messageRow(db, id))?.status, 'sent');
});

test.serial('a failed delivery keeps its error, stays queued for the retry, and is marked failed after the last attempt', async (t) => {
  const failing: Transport = { name: 'failing', send: async () => { throw new Error('relay said no'); } };
  const id = await queueMessage(db, a.keys.org!, email('Flaky'));
  await runJobs(db, { email: failing, sms: sinkTransport });
  t.like(await messageRow(db, id), { status: 'queued', error: 'relay said no', sent_at: null });
  const [job] = await jobsFor(db, id);
  // refused for now: the job comes back at the retry schedule's next attempt (app_private.delivery_retry)
  t.like(job, { locked_at: null }, 'back in the queue, not locked');
  t.true(job!.run_at.getTime() > Date.now(), 'at the next attempt of the retry schedule');
  t.is(await outboxCount(id), 0);

  // The schedule's lifetime over: the attempt that comes due is the last, and fails the message.
  await db.owner.query(`update app_private.delivery_retry_settings set lifetime_seconds = 1`);
  try {
    await new Promise((r) => setTimeout(r, 1100));
    await db.owner.query(`update graphile_worker._private_jobs set run_at = now() where payload->>'message_id' = $1`, [id]);
    await runJobs(db, { email: failing, sms: sinkTransport });
    t.like(await messageRow(db, id), { status: 'failed', error: 'relay said no' });
  } finally {
    await db.owner.query(`update app_private.delivery_retry_settings set lifetime_seconds = 432000`);
  }
});

test.serial('the hourly purge drops expired idempotency records and rate-limit windows only', async (t) => {
  const parsed = parseCrontab(crontab);
  t.deepEqual(parsed.map((item) => item.task), ['purge_expired_request_records', 'refresh_search_trigrams', 'sequence_step_sweep', 'broadcast_fire', 'availability_prune']);
  t.true(parsed.every((item) => item.task in allTasks({ transports: sinkOnly })), 'every cron item names a registered task');

  await db.owner.query(`
    insert into app_private.idempotency_keys (credential_id, operation_id, key, organization_id, fingerprint, state, created_at)
    values (gen_random_uuid(), 'op', 'old', $1, 'f', 'done', now() - interval '25 hours'),
           (gen_random_uuid(), 'op', 'fresh', $1, 'f', 'done', now() - interval '23 hours')`, [a.organization_id]);
  const minute = `date_trunc('minute', now())`;
  await db.owner.query(`
    insert into app_private.rate_limit_windows (window_start, client, route, hits)
    values (${minute} - interval '10 minutes', 'c', 'old', 1), (${minute}, 'c', 'current', 1)`);
  await db.owner.query(`select graphile_worker.add_job('purge_expired_request_records', '{}'::json)`);
  await runJobs(db, sinkOnly);
  t.deepEqual((await db.owner.query(`select key from app_private.idempotency_keys`)).rows.map((r) => r.key), ['fresh']);
  t.deepEqual((await db.owner.query(`select route from app_private.rate_limit_windows`)).rows.map((r) => r.route), ['current']);
});

test.serial('the hourly trigram count recounts the shares contacts_search picks the pieces of q by', async (t) => {
  await db.owner.query('delete from app_private.search_trigrams');
  await db.owner.query(`select graphile_worker.add_job('refresh_search_trigrams', '{}'::json)`);
  await runJobs(db, sinkOnly);
  const { rows } = await db.owner.query(`select trigram, share from app_private.search_trigrams where trigram = 'ann'`);
  t.is(rows.length, 1, 'the fixture contact Ann Lee was counted');
  t.true(rows[0].share > 0 && rows[0].share <= 1);
});

test.serial('svc admin outbox prints one JSON line per delivered message, and --since filters', async (t) => {
  const first = await queueMessage(db, b.keys.org!, email('First'));
  await runJobs(db, sinkOnly);
  const { rows: [{ at }] } = await db.owner.query(`select clock_timestamp() as at`);
  const second = await queueMessage(db, b.keys.org!, { channel: 'sms', recipient: '+15551230002', body: 'Second' });
  await runJobs(db, sinkOnly);

  const all = await svc(['admin', 'outbox', '--org', b.organization_id], { databaseUrl: db.ownerUrl });
  t.is(all.code, 0, all.stderr);
  const lines = all.stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.deepEqual(lines.map((l) => l.id), [first, second]);
  t.like(lines[0], { organization_id: b.organization_id, channel: 'email', from: `no-reply@${fb.organization.sending_email_domain}`, to: 'ann@example.com', subject: 'First', body: 'Body of First' });
  t.like(lines[1], { channel: 'sms', from: fb.organization.default_sms_number, to: '+15551230002', subject: null, body: 'Second' });

  const since = await svc(['admin', 'outbox', '--org', b.organization_id, '--since', (at as Date).toISOString()], { databaseUrl: db.ownerUrl });
  t.is(since.code, 0, since.stderr);
  t.deepEqual(since.stdout.trim().split('\n').map((l) => JSON.parse(l).id), [second]);
});

/** An SMS provider that holds each request until told how to answer. */
async function slowProvider() {
  const requests: { body: unknown; answer: (status: number) => void }[] = [];
  let arrived!: () => void;
  const first = new Promise<void>((r) => { arrived = r; });
  const server = createServer(async (req: IncomingMessage, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    requests.push({ body: JSON.parse(text), answer: (status) => { res.statusCode = status; res.end('{}'); } });
    arrived();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
  return { url, requests, first, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** Starts `svc worker`, waits until the provider holds a delivery, sends SIGTERM, then answers `status`. */
async function stopDuringDelivery(t: ExecutionContext, status: number) {
  const provider = await slowProvider();
  const id = await queueMessage(db, a.keys.org!, { channel: 'sms', recipient: '+15551230001', body: `answered ${status}` });
  const child = spawn(process.execPath, [bin, 'worker'], {
    env: { ...process.env, DATABASE_URL: db.ownerUrl, SMS_TRANSPORT: provider.url, LOG_LEVEL: 'info', NODE_ENV: 'production' },
  });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await Promise.race([provider.first, exited.then(() => { throw new Error(`worker exited: ${output}`); })]);
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    t.is(child.exitCode, null, 'the worker waits for the running delivery');
    provider.requests[0]!.answer(status);
    t.is(await exited, 0, output);
    t.is(provider.requests.length, 1);
    t.like(provider.requests[0]!.body, { from: '+15550000000', to: '+15551230001', body: `answered ${status}` });
    return { id, output };
  } finally {
    child.kill('SIGKILL');
    await provider.close();
  }
}

test.serial('on SIGTERM, svc worker finishes the delivery it is running before it exits', async (t) => {
  const { id } = await stopDuringDelivery(t, 200);
  t.is((await messageRow(db, id))?.status, 'sent');
  t.deepEqual(await jobsFor(db, id), [], 'completed, not lost');
});

test.serial('on SIGTERM, a delivery that fails goes back to the queue, unlocked, for its retry', async (t) => {
  const { id } = await stopDuringDelivery(t, 503);
  t.like(await messageRow(db, id), { status: 'queued', error: 'SMS provider answered 503: {}' });
  const [job] = await jobsFor(db, id);
  // refused for now: the job comes back at the retry schedule's next attempt (app_private.delivery_retry)
  t.like(job, { locked_at: null }, 'returned to the queue, not lost');
});

test.serial('svc worker refuses an unsupported transport with one line, without echoing a password', async (t) => {
  for (const [name, value, pattern] of [
    ['EMAIL_TRANSPORT', 'ftp://mailer:hunter2@mail.example', /EMAIL_TRANSPORT must be "sink" or an smtp:\/\/ or smtps:\/\/ URL/],
    ['SMS_TRANSPORT', 'carrier-pigeon', /SMS_TRANSPORT must be "sink", twilio:\/\/SID:TOKEN@HOST or an http:\/\/ or https:\/\/ provider URL/],
  ] as const) {
    const r = await svc(['worker'], { databaseUrl: db.ownerUrl, env: { [name]: value } });
    t.not(r.code, 0);
    t.regex(r.stderr, pattern);
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    t.notRegex(r.stderr, /hunter2/);
  }
});
