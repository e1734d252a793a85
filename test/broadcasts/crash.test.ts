// Crash safety for real: `svc worker` runs as a child process sending a 300-recipient SMS
// broadcast in batches of 10 to a local provider; it is SIGKILLed mid-run three times and
// restarted each time (the last time through broadcast_requeue_stalled, as in production). Every
// recipient gets exactly one message, except the batch each kill left in flight (at most one),
// whose step runs are `unknown` and never handed over again (the batch
// claimed meanwhile was only prepared: it is claimed again and sent). And a run cancelled after
// its worker was killed mid-batch: what it had in flight is settled `unknown` by the cancel
// (no step run left `sending`), the rest cancelled, and nothing sent once a worker runs again.
// And three worker processes firing the same due schedules at once: one run per occurrence.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { fireDue } from '../../src/broadcasts/fire.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { engineFixture } from '../sequences/engine-helpers.ts';
import { insertSendSchedule } from '../sequences/helpers.ts';
import { asKey } from '../helpers/sql.ts';
import { insertAudience, insertBroadcast } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
const RECIPIENTS = 300;
const BATCH = 10;

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
  const children: ChildProcess[] = [];
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

  const start = () => {
    const child = spawn(process.execPath, [bin, 'worker'], {
      env: { ...process.env, DATABASE_URL: db.ownerUrl, SMS_TRANSPORT: provider.url, BROADCAST_BATCH_SIZE: String(BATCH),
        LOG_LEVEL: 'warn', NODE_ENV: 'production' },
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d) => { output += d; });
    child.stderr!.on('data', (d) => { output += d; });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    return { child, exited, output: () => output };
  };
  const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 60_000) => {
    const end = Date.now() + ms;
    while (!(await ok())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  // graphile-worker frees a dead worker's job after four hours (broadcast_requeue_stalled queues a
  // new one after five minutes without progress, as the last kill of the first test does): here, at once
  const freeJobs = () => db.owner.query(`update graphile_worker._private_jobs set locked_at = null, locked_by = null, run_at = now()
    where locked_at is not null`);
  const close = async () => {
    for (const child of children) child.kill('SIGKILL');
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

test('SIGKILL three times mid-run: each recipient once, at most the in-flight batch per kill unknown, never sent again', async (t) => {
  t.timeout(180_000);
  const { db, provider, runId, start, until, freeJobs, close } = await crashRun(RECIPIENTS);
  try {
    // what each dead worker left in flight: the next worker settles exactly these `unknown`
    const outAtKill: number[] = [];
    for (const at of [40, 120, 200]) {
      const w = start();
      await until(`${at} requests`, () => provider.received.length >= at);
      w.child.kill('SIGKILL');
      t.is(await w.exited, 'SIGKILL');
      const { rows: [left] } = await db.owner.query(`select status, cardinality(in_flight) as out, cardinality(prepared) as prepared
        from app_public.broadcast_runs where id = $1`, [runId]);
      t.is(left.status, 'sending', 'killed mid-run');
      t.true(left.out <= BATCH, `at most one batch in flight at the kill (${left.out})`);
      outAtKill.push(left.out);
      if (at < 200) await freeJobs();
      else {
        // the last kill recovers as production does: the dead worker's job stays locked, and
        // broadcast_requeue_stalled (run by the broadcast_fire task each minute) queues a new one
        // once the run has made no progress for five minutes
        await db.owner.query(`update app_public.broadcast_runs set progress_at = now() - interval '6 minutes' where id = $1`, [runId]);
        const { rows: [{ n }] } = await db.owner.query(`select app_private.broadcast_requeue_stalled() as n`);
        t.is(n, 1, 'the stalled run queued again');
      }
    }
    const last = start();
    await until('the run to complete', async () =>
      (await db.owner.query(`select status from app_public.broadcast_runs where id = $1`, [runId])).rows[0].status === 'completed', 120_000);
    last.child.kill('SIGTERM');
    await last.exited;

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
    t.is(unknown.length, outAtKill.reduce((a, b) => a + b, 0), `unknown are exactly what the kills left in flight (${outAtKill.join(', ')})`);
    t.true(outAtKill.some((n) => n > 0), 'a kill landed while a batch was out');
    t.is(sent.length + unknown.length, RECIPIENTS);
    for (const r of sent) t.is(times.get(r.phone), 1);
    // a number never reached is one of the unknown (its request had not left when the worker died)
    const unknownPhones = new Set(unknown.map((r) => r.phone));
    for (const r of runs) if (!times.has(r.phone)) t.true(unknownPhones.has(r.phone), r.phone);
    t.like(run, { status: 'completed', recipients: RECIPIENTS, sent: sent.length, unknown: unknown.length, skipped: 0, failed: 0, cancelled: 0 });
    t.log(`kills: 3, in flight at each: ${outAtKill.join(', ')}; unknown: ${unknown.length}; numbers messaged: ${times.size} of ${RECIPIENTS}`);
    const { rows: [m] } = await db.owner.query(`select count(*) filter (where status = 'unknown')::int as unknown,
      count(*) filter (where status = 'queued')::int as queued from app_private.outgoing_messages where meta->>'run_id' = $1`, [runId]);
    t.deepEqual(m, { unknown: unknown.length, queued: 0 });
  } finally {
    await close();
  }
});

test('SIGKILL mid-batch, then the run cancelled: the batch in flight unknown (never sent again), the rest cancelled, nothing left sending', async (t) => {
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
    const { rows: [before] } = await db.owner.query(`select cardinality(in_flight) as n, sent from app_public.broadcast_runs where id = $1`, [runId]);
    t.true(before.n > 0 && before.n <= BATCH, `killed with one batch in flight (${before.n})`);

    const answer = await asKey({ db }, tenant.keys.org!, async (k) =>
      (await k.query(`select app_public.sequences_cancel_schedule_run($1, $2) as r`, [id, runId])).rows[0].r, { commit: true });
    const { rows: [run] } = await db.owner.query(`select * from app_public.broadcast_runs where id = $1`, [runId]);
    t.like(run, { status: 'cancelled', recipients: 100, unknown: before.n, sent: before.sent, in_flight: [] });
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

test('three `svc worker` processes firing at once: each occurrence fires once, each number gets each broadcast once', async (t) => {
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
