// A worker process killed outright (SIGKILL) while the transport holds sequence messages: the
// jobs it held run again within seconds (not graphile-worker's four hours), freed by a live
// worker or by the dead one restarted (app_private.worker_processes_sweep): the messages it held
// become `unknown` (never handed over again), the enrollments move on, nothing is sent twice.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { svcProcesses, until, type SvcProcess } from '../helpers/workers.ts';
import { engineFixture } from './engine-helpers.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';

const CONTACTS = 6;

/** An SMS provider that records every request and holds it until told to answer. */
async function holdingProvider() {
  const requests: { to: string; answer: () => void }[] = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    requests.push({ to: JSON.parse(text).to, answer: () => { res.statusCode = 200; res.end('{}'); } });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
  let answering = false;
  return {
    url, requests,
    /** Answers what it holds, and from now on everything at once. */
    answerAll: () => { answering = true; for (const q of requests) q.answer(); },
    poll: setInterval(() => { if (answering) for (const q of requests) q.answer(); }, 20),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

async function setUp() {
  const db = await createTestDatabase();
  const provider = await holdingProvider();
  const tenant = await adminApply(db.owner, engineFixture(), AREAS);
  const org = tenant.organization_id;
  await insertSendSchedule(db, org);
  const seq = await insertSequence(db, org, {
    steps: [{ step_key: 'text', type: 'sms', body: 'Hello' }, { step_key: 'mail', type: 'email', subject: 'After', body: 'After the text' }] });
  const { rows: contacts } = await db.owner.query(`insert into app_public.contacts (organization_id, name, phone, email, sms_consent)
    select $1, 'Person ' || i, '+1555800' || lpad(i::text, 4, '0'), 'p' || i || '@example.com', true from generate_series(1, $2) i returning id`,
  [org, CONTACTS]);
  const workers = svcProcesses({ DATABASE_URL: db.ownerUrl, SMS_TRANSPORT: provider.url, WORKER_HEARTBEAT_MS: '1000' });
  const enrollAll = async () => {
    for (const c of contacts) await db.owner.query(`select app_private.enroll_contact($1, $2, $3)`, [org, seq, c.id]);
  };
  const close = async () => {
    workers.killAll();
    clearInterval(provider.poll);
    await provider.close();
    await db.drop();
  };
  return { db, provider, workers, enrollAll, seq, close };
}

/** The worker process (of `procs`) holding a sequence_step job, by its announced pid. */
async function holderOf(db: TestDatabase, procs: SvcProcess[]): Promise<SvcProcess | undefined> {
  const { rows } = await db.owner.query<{ pid: number }>(`select distinct p.pid from graphile_worker._private_jobs j
    join app_private.worker_processes p on j.locked_by = any(p.pool_ids)
    join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'sequence_step'`);
  return procs.find((w) => rows.some((r) => r.pid === w.child.pid));
}

/** Every enrollment completed; each number messaged at most once; the `text` step runs by status. */
async function outcome(db: TestDatabase, seq: string, requests: { to: string }[]) {
  const { rows: [done] } = await db.owner.query(`select count(*) filter (where status = 'completed')::int as completed
    from app_public.enrollments where sequence_id = $1`, [seq]);
  const { rows: runs } = await db.owner.query(`select sr.status, count(*)::int as n from app_public.step_runs sr
    join app_public.enrollments e on e.id = sr.enrollment_id where e.sequence_id = $1 and sr.step_key = 'text' group by 1 order by 1`, [seq]);
  const times = new Map<string, number>();
  for (const q of requests) times.set(q.to, (times.get(q.to) ?? 0) + 1);
  return { completed: done.completed as number, runs: Object.fromEntries(runs.map((r) => [r.status, r.n])), twice: [...times.values()].filter((n) => n > 1).length };
}

const completedAll = (db: TestDatabase, seq: string) => async () => (await db.owner.query(`select count(*)::int as n from app_public.enrollments
  where sequence_id = $1 and status = 'completed'`, [seq])).rows[0].n === CONTACTS;

test('SIGKILL mid-step with a second worker alive: the dead one\'s jobs run again within seconds, nothing twice', async (t) => {
  t.timeout(120_000);
  const { db, provider, workers, enrollAll, seq, close } = await setUp();
  try {
    const procs = [workers.start(), workers.start()];
    await until('two workers announced', async () => (await db.owner.query(`select count(*)::int as n from app_private.worker_processes
      where cardinality(pool_ids) > 0`)).rows[0].n === 2);
    await enrollAll();
    await until('messages with the provider', () => provider.requests.length >= 1);
    const victim = await holderOf(db, procs);
    t.truthy(victim, 'a worker holds a step');
    t.is(await victim!.kill(), 'SIGKILL');
    const killedAt = Date.now();
    // what the provider held it accepts after all; from now on it answers at once
    provider.answerAll();
    await until('every enrollment completed', completedAll(db, seq), 60_000, 50);
    const waited = Date.now() - killedAt;
    t.true(waited < 60_000, `recovered in ${waited} ms`);
    const o = await outcome(db, seq, provider.requests);
    t.is(o.completed, CONTACTS);
    t.is(o.twice, 0, 'no number got the text twice');
    t.is((o.runs.sent ?? 0) + (o.runs.unknown ?? 0), CONTACTS);
    t.true((o.runs.unknown ?? 0) >= 1, 'what the dead worker held is unknown');
    t.true(provider.requests.length <= CONTACTS, 'one request per number at most');
    const { rows: [{ n: rows }] } = await db.owner.query(`select count(*)::int as n from app_private.worker_processes`);
    t.is(rows, 1, 'the dead worker\'s row is gone');
    t.log(`recovered in ${waited} ms; text step runs ${JSON.stringify(o.runs)}`);
  } finally {
    await close();
  }
});

test('SIGKILL mid-step with no worker left, then one restarted: the jobs run again at once, nothing twice', async (t) => {
  t.timeout(120_000);
  const { db, provider, workers, enrollAll, seq, close } = await setUp();
  try {
    const first = workers.start();
    await until('the worker announced', async () => (await db.owner.query(`select count(*)::int as n from app_private.worker_processes
      where cardinality(pool_ids) > 0`)).rows[0].n === 1);
    await enrollAll();
    await until('messages with the provider', () => provider.requests.length >= 1);
    t.is(await first.kill(), 'SIGKILL');
    provider.answerAll();
    const { rows: [held] } = await db.owner.query(`select count(*)::int as n from graphile_worker._private_jobs where locked_at is not null`);
    t.true(held.n >= 1, 'the dead worker left jobs locked');
    const restartedAt = Date.now();
    workers.start();
    await until('every enrollment completed', completedAll(db, seq), 60_000, 50);
    const waited = Date.now() - restartedAt;
    t.true(waited < 60_000, `recovered in ${waited} ms`);
    const o = await outcome(db, seq, provider.requests);
    t.is(o.twice, 0, 'no number got the text twice');
    t.true((o.runs.unknown ?? 0) >= 1, 'what the dead worker held is unknown');
    t.is((o.runs.sent ?? 0) + (o.runs.unknown ?? 0), CONTACTS);
    t.log(`recovered ${waited} ms after the restart; text step runs ${JSON.stringify(o.runs)}`);
  } finally {
    await close();
  }
});
