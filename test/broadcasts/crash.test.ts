// Crash safety for real: `svc worker` runs as a child process sending a 300-recipient SMS
// broadcast in batches of 50 to a local provider that answers after 15 ms. SIGKILLed mid-run
// three times and restarted each time: every recipient gets exactly one message, except those
// each kill left handed over without an answer (at most IN_FLIGHT), whose step runs are `unknown`
// and never handed over again; the rest of the batch is claimed again and sent once, and the run
// resumes as soon as a worker starts. Killed with a second worker alive: that one frees the dead
// one's job (app_private.worker_processes_sweep) and resumes the run within seconds. A run
// cancelled after its worker was killed mid-batch: what was handed over is settled `unknown` by
// the cancel (no step run left `sending`), the rest cancelled, nothing sent once a worker runs
// again. And three worker processes firing the same due schedules at once: one run per
// occurrence. The tests run one at a time: each starts several worker processes.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { fireDue } from '../../src/broadcasts/fire.ts';
import { IN_FLIGHT } from '../../src/delivery/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { engineFixture } from '../sequences/engine-helpers.ts';
import { insertSendSchedule } from '../sequences/helpers.ts';
import { asKey } from '../helpers/sql.ts';
import { svcProcesses, until } from '../helpers/workers.ts';
import { insertAudience, insertBroadcast } from './helpers.ts';

const RECIPIENTS = 300;
// bigger than IN_FLIGHT: a kill puts in doubt what is handed over, not the batch
const BATCH = 50;

/** An SMS provider that answers each request after a few milliseconds and counts them by number. */
async function slowProvider() {
  const received: string[] = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    received.push(JSON.parse(text).to);
    setTimeout(() => { res.statusCode = 200; res.end('{}'); }, 15);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
  return { url, received, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/**
 * An organization with an audience of `recipients` numbers, a slow provider, and `svc worker`
 * started as a child process on demand (batches of BATCH); `close` kills what is left and drops
 * the database.
 */
async function withWorkers(recipients: number) {
  const db = await createTestDatabase();
  const provider = await slowProvider();
  const tenant = await adminApply(db.owner, engineFixture(), AREAS);
  const org = tenant.organization_id;
  await insertSendSchedule(db, org);
  const { rows: contacts } = await db.owner.query(`insert into app_public.contacts (organization_id, name, phone, sms_consent)
    select $1, 'Person ' || i, '+1555700' || lpad(i::text, 4, '0'), true from generate_series(1, $2) i returning id`, [org, recipients]);
  const audience = await insertAudience(db, org, contacts.map((c) => c.id), 'Everyone');
  /** An active SMS broadcast to the audience, its once schedule due a second ago; its id. */
  const dueBroadcast = async (name?: string) => {
    const id = await insertBroadcast(db, org, audience, { name, status: 'active', steps: [{ step_key: 'sale', type: 'sms', body: 'Sale today' }] });
    await db.owner.query(`insert into app_public.broadcast_schedules (organization_id, sequence_id, schedule_kind, send_at, status, next_fire_at)
      values ($1, $2, 'once', now() + interval '1 day', 'scheduled', now() - interval '1 second')`, [org, id]);
    return id;
  };

  const workers = svcProcesses({ DATABASE_URL: db.ownerUrl, SMS_TRANSPORT: provider.url, BROADCAST_BATCH_SIZE: String(BATCH),
    WORKER_HEARTBEAT_MS: '1000' });
  const start = () => workers.start();
  // a dead worker's jobs, freed before the next worker starts (its first sweep would free them too)
  const freeJobs = () => db.owner.query(`update graphile_worker._private_jobs set locked_at = null, locked_by = null, run_at = now()
    where locked_at is not null`);
  const close = async () => {
    workers.killAll();
    await provider.close();
    await db.drop();
  };
  return { db, provider, tenant, dueBroadcast, start, until, freeJobs, close };
}

/** A broadcast to `recipients` numbers, fired (its run's recipients enrolled), with workers on demand. */
async function crashRun(recipients: number) {
  const on = await withWorkers(recipients);
  const id = await on.dueBroadcast();
  const c = await on.db.owner.connect();
  try { await fireDue(c); } finally { c.release(); }
  const { rows: [{ id: runId }] } = await on.db.owner.query(`select id from app_public.broadcast_runs where sequence_id = $1`, [id]);
  return { ...on, id, runId: runId as string };
}

/** Messages the run's sender marked handed over with no answer yet: what a kill now puts in doubt. */
const inDoubt = async (db: Awaited<ReturnType<typeof crashRun>>['db'], runId: string) => (await db.owner.query(`select count(*)::int as n
  from app_private.broadcast_handed where run_id = $1 and answer is null`, [runId])).rows[0].n as number;

/** Every recipient reached once but the unknown, which are exactly `doubt`; the run completed. */
async function checkOutcome(t: import('ava').ExecutionContext, on: Awaited<ReturnType<typeof crashRun>>, doubt: number) {
  const { db, provider, runId } = on;
  const { rows: [run] } = await db.owner.query(`select * from app_public.broadcast_runs where id = $1`, [runId]);
  const { rows: runs } = await db.owner.query(`select c.phone, sr.status from app_public.enrollments e
    join app_public.contacts c on c.id = e.contact_id
    join app_public.step_runs sr on sr.enrollment_id = e.id where e.run_id = $1`, [runId]);
  const times = new Map<string, number>();
  for (const to of provider.received) times.set(to, (times.get(to) ?? 0) + 1);
  t.is(runs.length, RECIPIENTS, 'every recipient reached');
  t.true([...times.values()].every((n) => n === 1), 'no number got the message twice');
  const unknown = runs.filter((r) => r.status === 'unknown');
  const sent = runs.filter((r) => r.status === 'sent');
  t.is(unknown.length, doubt, 'unknown are exactly what the kills left handed over without an answer');
  t.is(sent.length + unknown.length, RECIPIENTS);
  for (const r of sent) t.is(times.get(r.phone), 1);
  t.true(times.size >= RECIPIENTS - doubt, 'lost at most what was in doubt');
  t.like(run, { status: 'completed', recipients: RECIPIENTS, sent: sent.length, unknown: unknown.length, skipped: 0, failed: 0, cancelled: 0 });
  const { rows: [m] } = await db.owner.query(`select count(*) filter (where status = 'unknown')::int as unknown,
    count(*) filter (where status = 'queued')::int as queued from app_private.outgoing_messages where meta->>'run_id' = $1`, [runId]);
  t.deepEqual(m, { unknown: unknown.length, queued: 0 });
  return { unknown: unknown.length, numbers: times.size };
}

const runStatus = async (db: Awaited<ReturnType<typeof crashRun>>['db'], runId: string) =>
  (await db.owner.query(`select status, sent + unknown + failed as done from app_public.broadcast_runs where id = $1`, [runId])).rows[0];

test.serial('SIGKILL three times mid-run, each worker restarted: at most IN_FLIGHT unknown per kill, the rest sent once, resumed at once', async (t) => {
  t.timeout(180_000);
  const on = await crashRun(RECIPIENTS);
  const { db, provider, runId, start, until, close } = on;
  try {
    const doubtAtKill: number[] = [];
    const resumedIn: number[] = [];
    for (const at of [40, 120, 200]) {
      const w = start();
      const restartedAt = Date.now();
      const before = provider.received.length;
      await until(`${at} requests`, () => provider.received.length >= at);
      if (before > 0) resumedIn.push(Date.now() - restartedAt);
      w.child.kill('SIGKILL');
      t.is(await w.exited, 'SIGKILL');
      t.is((await runStatus(db, runId)).status, 'sending', 'killed mid-run');
      const doubt = await inDoubt(db, runId);
      t.true(doubt <= IN_FLIGHT, `at most IN_FLIGHT handed over without an answer at the kill (${doubt})`);
      doubtAtKill.push(doubt);
    }
    const last = start();
    await until('the run to complete', async () => (await runStatus(db, runId)).status === 'completed', 120_000);
    await last.stop();
    for (const ms of resumedIn) t.true(ms < 60_000, `resumed after a restart within 60 s (${ms} ms, the process's start included)`);
    const o = await checkOutcome(t, on, doubtAtKill.reduce((a, b) => a + b, 0));
    t.log(`kills: 3, in doubt at each: ${doubtAtKill.join(', ')}; unknown: ${o.unknown}; numbers messaged: ${o.numbers} of ${RECIPIENTS}; resumed in ${resumedIn.join(', ')} ms`);
  } finally {
    await close();
  }
});

test.serial('SIGKILL mid-run with a second worker alive: it resumes the run within seconds, at most IN_FLIGHT unknown', async (t) => {
  t.timeout(180_000);
  const on = await crashRun(RECIPIENTS);
  const { db, provider, runId, start, until, close } = on;
  try {
    const workers = [start(), start()];
    await until('two workers announced', async () => (await db.owner.query(`select count(*)::int as n from app_private.worker_processes
      where cardinality(pool_ids) > 0`)).rows[0].n === 2);
    await until('80 requests', () => provider.received.length >= 80);
    const { rows: [holder] } = await db.owner.query(`select p.pid from graphile_worker._private_jobs j
      join app_private.worker_processes p on j.locked_by = any(p.pool_ids) where j.key = 'broadcast_run:' || $1`, [runId]);
    const victim = workers.find((w) => w.child.pid === holder?.pid);
    t.truthy(victim, 'a worker sends the run');
    victim!.child.kill('SIGKILL');
    await victim!.exited;
    const killedAt = Date.now();
    const doubt = await inDoubt(db, runId);
    t.true(doubt <= IN_FLIGHT, `at most IN_FLIGHT in doubt (${doubt})`);
    const at = provider.received.length;
    await until('the run to resume', () => provider.received.length > at + 5, 60_000);
    const resumed = Date.now() - killedAt;
    t.true(resumed < 60_000, `resumed in ${resumed} ms`);
    await until('the run to complete', async () => (await runStatus(db, runId)).status === 'completed', 120_000);
    const o = await checkOutcome(t, on, doubt);
    t.log(`in doubt at the kill: ${doubt}; unknown: ${o.unknown}; resumed by the live worker in ${resumed} ms`);
  } finally {
    await close();
  }
});

test.serial('SIGKILL mid-batch, then the run cancelled: what was handed over unknown (never sent again), the rest cancelled, nothing left sending', async (t) => {
  t.timeout(120_000);
  const { db, provider, tenant, id, runId, start, until, freeJobs, close } = await crashRun(100);
  try {
    const w = start();
    // mid-batch: the fifth batch's requests have left, their answers not yet come (15 ms each)
    await until('45 requests', () => provider.received.length >= 45);
    w.child.kill('SIGKILL');
    t.is(await w.exited, 'SIGKILL');
    // the dead worker's connection closes, and with it the run's advisory lock
    await until('the run\'s lock to go', async () => (await db.owner.query(`select count(*)::int as n from pg_locks
      where locktype = 'advisory' and granted and objid = (hashtextextended('svc.broadcast_run:' || $1::text, 0) & 4294967295)::bigint::oid`,
    [runId])).rows[0].n === 0);
    const before = { n: await inDoubt(db, runId) };
    t.true(before.n > 0 && before.n <= IN_FLIGHT, `killed with messages handed over, at most IN_FLIGHT (${before.n})`);

    const answer = await asKey({ db }, tenant.keys.org!, async (k) =>
      (await k.query(`select app_public.sequences_cancel_schedule_run($1, $2) as r`, [id, runId])).rows[0].r, { commit: true });
    const { rows: [run] } = await db.owner.query(`select * from app_public.broadcast_runs where id = $1`, [runId]);
    t.like(run, { status: 'cancelled', recipients: 100, unknown: before.n, in_flight: [] });
    t.is(run.sent + run.skipped + run.failed + run.unknown + run.cancelled, 100, 'every recipient counted once');
    t.deepEqual(answer, { run_id: runId, status: 'cancelled', cancelled: run.cancelled });
    const { rows: states } = await db.owner.query(`select sr.status, count(*)::int as n from app_public.enrollments e
      join app_public.step_runs sr on sr.enrollment_id = e.id where e.run_id = $1 group by sr.status order by sr.status`, [runId]);
    t.deepEqual(states, [{ status: 'sent', n: run.sent }, { status: 'unknown', n: before.n }], 'no step run left sending');
    const { rows: [m] } = await db.owner.query(`select count(*) filter (where status = 'queued')::int as queued,
      count(*) filter (where status = 'unknown')::int as unknown from app_private.outgoing_messages where meta->>'run_id' = $1`, [runId]);
    t.deepEqual(m, { queued: 0, unknown: before.n });
    const { rows: ended } = await db.owner.query(`select status, end_reason, count(*)::int as n from app_public.enrollments
      where run_id = $1 group by 1, 2 order by 1, 2`, [runId]);
    t.deepEqual(ended, [{ status: 'cancelled', end_reason: 'run_cancelled', n: run.cancelled + before.n },
      { status: 'completed', end_reason: 'last_step', n: run.sent }]);

    // a worker again (the dead one's job freed): the run is cancelled, nothing more goes
    await freeJobs();
    const received = provider.received.length;
    const again = start();
    await until('the run\'s job to finish', async () => (await db.owner.query(`select count(*)::int as n from graphile_worker._private_jobs
      where key = 'broadcast_run:' || $1`, [runId])).rows[0].n === 0);
    again.child.kill('SIGTERM');
    await again.exited;
    t.is(provider.received.length, received, 'nothing sent after the cancel');
    const times = new Map<string, number>();
    for (const to of provider.received) times.set(to, (times.get(to) ?? 0) + 1);
    t.true([...times.values()].every((n) => n === 1), 'no number got the message twice');
  } finally {
    await close();
  }
});

test.serial('three `svc worker` processes firing at once: each occurrence fires once, each number gets each broadcast once', async (t) => {
  t.timeout(120_000);
  const BROADCASTS = 12;
  const { db, provider, dueBroadcast, start, until, close } = await withWorkers(3);
  try {
    const ids: string[] = [];
    for (let i = 0; i < BROADCASTS; i++) ids.push(await dueBroadcast(`Due ${i}`));
    const workers = [start(), start(), start()];
    await until('three workers listening', async () => (await db.owner.query(`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and query ilike 'listen "jobs:insert"%'`)).rows[0].n >= 3);
    // each schedule's own job (as sequences_start_schedule queues it), all due now: every job fires
    // whatever is due, so the three processes race over the same schedules
    await db.owner.query(`select app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || id, now())
      from unnest($1::uuid[]) id`, [ids]);
    await until('every run to complete', async () => (await db.owner.query(`select count(*)::int as n from app_public.broadcast_runs
      where sequence_id = any($1) and status = 'completed'`, [ids])).rows[0].n === BROADCASTS);
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    const { rows: runs } = await db.owner.query(`select sequence_id, count(*)::int as n, sum(sent)::int as sent
      from app_public.broadcast_runs where sequence_id = any($1) group by sequence_id`, [ids]);
    t.is(runs.length, BROADCASTS);
    t.true(runs.every((r) => r.n === 1 && r.sent === 3), JSON.stringify(runs));
    const { rows: [outbox] } = await db.owner.query(`select count(*)::int as n, count(distinct (meta->>'run_id', recipient))::int as distinct_n
      from app_private.outgoing_messages where meta->>'run_id' is not null`);
    t.deepEqual(outbox, { n: BROADCASTS * 3, distinct_n: BROADCASTS * 3 });
    t.is(provider.received.length, BROADCASTS * 3, 'the provider got each broadcast once per number');
    const { rows: [{ n: left }] } = await db.owner.query(`select count(*)::int as n from app_public.broadcast_schedules
      where sequence_id = any($1) and next_fire_at is not null`, [ids]);
    t.is(left, 0, 'nothing left to fire');
  } finally {
    await close();
  }
});
