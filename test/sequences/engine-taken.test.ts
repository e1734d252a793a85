// A burst of due steps: each sequence_step job takes a handful of other due steps off the queue
// (app_private.sequence_steps_take) and runs them with its own, claimed and recorded together. Fewer jobs, the same
// messages: each contact gets exactly one, a step that fails when taken gets its own job back,
// and steps taken by a worker killed outright are queued again by the sweep, never lost and
// never sent twice.
import test from 'ava';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runOnce, type Task } from 'graphile-worker';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { IN_FLIGHT } from '../../src/delivery/hand_over.ts';
import { httpSmsTransport } from '../../src/delivery/sms_http.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { PermanentDeliveryError } from '../../src/delivery/transport.ts';
import { TAKEN_PER_JOB } from '../../src/sequences/sequence_step.ts';
import { allTasks, workerLogger, workerPreset } from '../../src/worker.ts';
import type { Transports } from '../../src/delivery/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { drain, engineFixture, sweep } from './engine-helpers.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
/** The jobs `svc worker` runs at once (src/worker.ts). */
const WORKER_JOBS = 4;

/** `n` contacts with a number and SMS consent, enrolled at once (one statement) in a one-step sequence. */
async function burst(db: TestDatabase, n: number, step: Record<string, unknown>) {
  const tenant = await adminApply(db.owner, engineFixture(), AREAS);
  const org = tenant.organization_id;
  await insertSendSchedule(db, org);
  const seq = await insertSequence(db, org, { steps: [{ step_key: 'hello', ...step }] });
  const { rows } = await db.owner.query<{ id: string }>(
    `insert into app_public.contacts (organization_id, name, email, phone, sms_consent)
     select $1, 'Burst ' || i, 'burst' || i || '@example.com', '+1555700' || lpad(i::text, 4, '0'), true
       from generate_series(1, $2::int) i returning id`, [org, n]);
  await db.owner.query(`select * from app_private.enroll_contacts($1, $2, $3)`, [org, seq, rows.map((r) => r.id)]);
  return { org, seq };
}

/** Runs the due jobs as the worker does, counting how many sequence_step jobs ran. */
async function runCounting(db: TestDatabase, transports: Transports, concurrency: number) {
  const tasks = allTasks({ transports });
  let jobs = 0;
  const inner = tasks.sequence_step as Task;
  const pgPool = new pg.Pool({ connectionString: db.ownerUrl, max: concurrency + 2 });
  pgPool.on('error', () => undefined);
  try {
    await runOnce({ pgPool, concurrency, logger: workerLogger, preset: workerPreset,
      taskList: { ...tasks, sequence_step: (payload, helpers) => { jobs++; return inner(payload, helpers); } } });
  } finally {
    await pgPool.end();
  }
  return jobs;
}

async function completed(db: TestDatabase, seq: string) {
  const { rows: [r] } = await db.owner.query(
    `select count(*) filter (where status = 'completed')::int as done, count(*)::int as all from app_public.enrollments where sequence_id = $1`, [seq]);
  return r as { done: number; all: number };
}

test('a burst of 100 due steps runs in a handful of jobs, one message per contact', async (t) => {
  const db = await createTestDatabase();
  try {
    const { org, seq } = await burst(db, 100, { type: 'email', subject: 'Hi', body: 'Hello {{contact.first_name}}' });
    const jobs = await runCounting(db, { email: sinkTransport, sms: sinkTransport }, 2);
    t.true(jobs <= Math.ceil(100 / (TAKEN_PER_JOB + 1)) + 2, `${jobs} jobs`);
    t.deepEqual(await completed(db, seq), { done: 100, all: 100 });
    const { rows } = await db.owner.query(
      `select recipient, count(*)::int as n from app_private.outbox where organization_id = $1 group by recipient having count(*) <> 1`, [org]);
    t.deepEqual(rows, []);
    const { rows: [{ n }] } = await db.owner.query(`select count(*)::int as n from app_private.outbox where organization_id = $1`, [org]);
    t.is(n, 100);
    const { rows: left } = await db.owner.query(`select key from graphile_worker._private_jobs`);
    t.deepEqual(left, [], 'nothing left queued');
  } finally {
    await db.drop();
  }
});

test('a transport error on a taken step is recorded failed, as on a job\'s own step', async (t) => {
  const db = await createTestDatabase();
  try {
    const { org, seq } = await burst(db, 5, { type: 'sms', body: 'Hello' });
    let handed = 0;
    const flaky = { name: 'flaky', async send() { if (++handed === 3) throw new PermanentDeliveryError('provider refused'); } };
    t.is(await runCounting(db, { email: sinkTransport, sms: flaky }, 1), 1, 'one job took the other four');
    t.deepEqual(await completed(db, seq), { done: 5, all: 5 });
    const { rows } = await db.owner.query(`select status, reason, count(*)::int as n from app_public.step_runs
       where organization_id = $1 group by status, reason order by status`, [org]);
    t.deepEqual(rows, [{ status: 'failed', reason: 'provider refused', n: 1 }, { status: 'sent', reason: null, n: 4 }]);
  } finally {
    await db.drop();
  }
});

test('a taken step whose claim throws gets its own job back, flagged so no job takes it, and runs there later', async (t) => {
  const db = await createTestDatabase();
  try {
    const { org, seq } = await burst(db, 4, { type: 'email', subject: 'Hi', body: 'Hello' });
    // the last job queued is taken by the first; its claim fails (a constraint its step run
    // breaks) until the fault is lifted
    const { rows: [{ victim }] } = await db.owner.query(
      `select payload->>'enrollment_id' as victim from graphile_worker._private_jobs order by id desc limit 1`);
    await db.owner.query(`alter table app_public.step_runs add constraint t_fault check (enrollment_id <> '${victim}'::uuid) not valid`);
    t.is(await runCounting(db, { email: sinkTransport, sms: sinkTransport }, 1), 2, 'the first job, then the victim\'s own');
    const { rows: [job] } = await db.owner.query(
      `select j.flags, j.attempts, j.last_error from graphile_worker._private_jobs j where j.key = $1`, [`sequence_step:${victim}`]);
    t.like(job, { flags: { alone: true }, attempts: 1 }, 'queued again to run alone, and failed there with graphile-worker\'s attempts');
    t.deepEqual(await completed(db, seq), { done: 3, all: 4 });

    await db.owner.query(`alter table app_public.step_runs drop constraint t_fault`);
    await db.owner.query(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`sequence_step:${victim}`]);
    await drain(db);
    t.deepEqual(await completed(db, seq), { done: 4, all: 4 });
    const { rows: [{ n }] } = await db.owner.query(`select count(*)::int as n from app_private.outbox where organization_id = $1`, [org]);
    t.is(n, 4);
  } finally {
    await db.drop();
  }
});

test('a batch goes to the provider together, at most IN_FLIGHT requests at a time, and is recorded at once', async (t) => {
  const db = await createTestDatabase();
  let open = 0;
  let most = 0;
  // Requests are held until IN_FLIGHT of them are open at once (or 2 s, were they never to be),
  // so that how many overlap does not depend on how fast a loaded machine sends them.
  const held = new Set<() => void>();
  const server = createServer(async (req: IncomingMessage, res) => {
    open++;
    most = Math.max(most, open);
    for await (const _ of req) { /* the body */ }
    const answer = () => { if (held.delete(answer)) { open--; res.end('{}'); } };
    held.add(answer);
    if (most >= IN_FLIGHT) for (const a of [...held]) setTimeout(a, 20);
    else setTimeout(answer, 2000);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { org, seq } = await burst(db, 40, { type: 'sms', body: 'Hello' });
    const provider = httpSmsTransport(`http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`);
    t.is(await runCounting(db, { email: sinkTransport, sms: provider }, 1), 1, 'one job, one batch');
    t.is(most, IN_FLIGHT, 'the batch\'s requests overlap, up to the bound');
    t.deepEqual(await completed(db, seq), { done: 40, all: 40 });
    const { rows } = await db.owner.query(`select status, count(*)::int as n from app_private.outgoing_messages
       where organization_id = $1 group by status`, [org]);
    t.deepEqual(rows, [{ status: 'sent', n: 40 }]);
  } finally {
    await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
    await db.drop();
  }
});

/** An SMS provider that answers every request at once, but holds the `hold`-th until told. */
async function providerHolding(hold: number) {
  const bodies: { to: string }[] = [];
  let held!: () => void;
  const holding = new Promise<void>((r) => { held = r; });
  const server = createServer(async (req: IncomingMessage, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    bodies.push(JSON.parse(text));
    if (bodies.length === hold) { held(); return; } // never answered
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
  return { url, bodies, holding, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** The application name the killed worker's connections carry (pg reads PGAPPNAME). */
const WORKER_APP = 'engine-taken-worker';

async function backendsGone(db: TestDatabase): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rowCount } = await db.owner.query(
      `select 1 from pg_stat_activity where datname = current_database() and application_name = $1`, [WORKER_APP]);
    if (!rowCount) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the killed worker\'s backends did not end');
}

test('SIGKILL while a worker sends its batches: the sweep queues the steps it held; no contact gets two SMS, none is lost', async (t) => {
  // more due steps than the worker's jobs (4 at a time) claim at once
  const N = 150;
  const db = await createTestDatabase();
  const provider = await providerHolding(25);
  try {
    const { seq } = await burst(db, N, { type: 'sms', body: 'Hello' });
    const child = spawn(process.execPath, [bin, 'worker'], {
      env: { ...process.env, DATABASE_URL: db.ownerUrl, SMS_TRANSPORT: provider.url, LOG_LEVEL: 'info', NODE_ENV: 'production',
             PGAPPNAME: WORKER_APP },
    });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    try {
      await Promise.race([provider.holding, exited.then(() => { throw new Error(`worker exited: ${output}`); })]);
      child.kill('SIGKILL');
      t.is(await exited, 'SIGKILL');
    } finally {
      child.kill('SIGKILL');
    }
    // the dead worker's backends end once they see its sockets closed; until then one may still
    // hold the rows of a transaction it was in (the sweep skips locked rows)
    await backendsGone(db);
    const before = await completed(db, seq);
    t.true(before.done < N, 'killed mid-burst');
    // steps the dead worker had taken have no job: the sweep queues them (its jobs it held, as
    // graphile-worker after four hours; here at once; and step runs left sending, hours old)
    await db.owner.query(`update graphile_worker._private_jobs set locked_at = null, locked_by = null, run_at = now() where locked_at is not null`);
    await db.owner.query(`update app_public.step_runs set updated_at = now() - interval '4 hours' where status = 'sending'`);
    const { rows: [{ n: jobless }] } = await db.owner.query(
      `select count(*)::int as n from app_public.enrollments e where e.sequence_id = $1 and e.status = 'active'
          and not exists (select 1 from graphile_worker._private_jobs j where j.key = 'sequence_step:' || e.id)`, [seq]);
    t.true(jobless > 0, 'the dead worker held taken steps');
    t.is(await sweep(db), jobless);
    await drain(db, { email: sinkTransport, sms: httpSmsTransport(provider.url) });

    t.deepEqual(await completed(db, seq), { done: N, all: N });
    const perNumber = new Map<string, number>();
    for (const b of provider.bodies) perNumber.set(b.to, (perNumber.get(b.to) ?? 0) + 1);
    t.deepEqual([...perNumber.values()].filter((n) => n !== 1), [], 'none twice');
    // each step sent reached the provider; the one held, and the others of the batches the dead
    // worker had claimed but not recorded (at most one batch per job it ran), are unknown (handed
    // over or not, never again)
    const { rows } = await db.owner.query<{ phone: string; status: string }>(`select c.phone, r.status from app_public.step_runs r
       join app_public.enrollments e on e.id = r.enrollment_id join app_public.contacts c on c.id = e.contact_id
      where e.sequence_id = $1`, [seq]);
    t.is(rows.length, N);
    const unknown = rows.filter((r) => r.status === 'unknown');
    t.true(unknown.length >= 1 && unknown.length <= WORKER_JOBS * (TAKEN_PER_JOB + 1), `${unknown.length} unknown`);
    t.deepEqual(rows.filter((r) => r.status === 'sent' && perNumber.get(r.phone) !== 1), [], 'every step sent reached the provider');
    t.is(rows.filter((r) => r.status === 'sent').length, N - unknown.length);
  } finally {
    await provider.close();
    await db.drop();
  }
});
