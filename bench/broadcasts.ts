// `node bench/broadcasts.ts`: a broadcast run against the bare work it does, same database, same
// run, in alternating rounds (BENCH_ROUNDS, default 3), medians (the issue's ratios):
//   1. sink: a BENCH_RECIPIENTS-recipient email broadcast into the sink (the run's batches:
//      claimed set-based with the sequences engine's rules, rendered, stored, recorded), against
//      a bare batched insert of the same outbox rows (one INSERT … SELECT per batch of the same
//      size), and against the floor the documented record sets (the same outbox rows plus the end
//      of each recipient's enrollment, batched, nothing else); meanwhile contacts_get is read in
//      a closed loop over HTTP, p95 during the run against idle; the CPU time of the database
//      backend doing each (from /proc) beside it;
//   2. SMTP: a BENCH_SMTP_RECIPIENTS-recipient broadcast to a local smtp-server through a
//      nodemailer pool (EMAIL_TRANSPORT with ?pool=true), against the bare nodemailer pool
//      sending the same number of messages to the same server;
//   3. next_fire_at of 10,000 recurring schedules (varied rules, zones, intervals) recomputed
//      with Temporal, against 10,000 primary-key reads of those schedules.
// The load average is taken beside every round: the machine is shared.
//
//   BENCH_RECIPIENTS=100000 BENCH_SMTP_RECIPIENTS=10000 BENCH_BATCH=200 BENCH_ROUNDS=3 (the defaults)
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { fireDue, nextFireAfter } from '../src/broadcasts/fire.ts';
import { sendRun } from '../src/broadcasts/run.ts';
import { loginUrlFor } from '../src/db/connect.ts';
import { sinkTransport } from '../src/delivery/sink.ts';
import { smtpTransport } from '../src/delivery/smtp.ts';
import { benchServer, fmt, freshDatabase, percentile, startTarget, writeSection } from './lib.ts';

const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS || 100_000);
const SMTP_RECIPIENTS = Number(process.env.BENCH_SMTP_RECIPIENTS || 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const BATCH = Number(process.env.BENCH_BATCH || 200);
const SCHEDULES = 10_000;
const started = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);

const db = await benchServer();
const ownerUrl = await freshDatabase(db, 'svc_bench_broadcasts');
const loginUrl = loginUrlFor(ownerUrl, db.loginPassword);
const pool = new pg.Pool({ connectionString: ownerUrl, max: 8 });
const tenant = await adminApply(pool, {
  organization: { name: 'Bench broadcasts', sending_email_domain: 'bench.example' },
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@broadcasts.bench', role: 'owner' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
}, AREAS);
const org = tenant.organization_id;
log(`loading ${fmt(RECIPIENTS)} contacts`);
await pool.query(`insert into app_public.contacts (organization_id, name, email)
  select $1::uuid, 'First' || g.i || ' Last', 'c' || g.i || '@example.com' from generate_series(1, $2::int) g(i)`, [org, RECIPIENTS]);
await pool.query(`insert into app_public.send_schedules (organization_id, name, timezone, is_default, windows)
  values ($1, 'Always', 'UTC', true, (select jsonb_agg(jsonb_build_object('day', d, 'start', '00:00', 'end', '24:00'))
    from unnest(array['mon','tue','wed','thu','fri','sat','sun']) d))`, [org]);
const { rows: [audience] } = await pool.query(`insert into app_public.audiences (organization_id, name, kind) values ($1, 'All', 'static') returning id`, [org]);
await pool.query(`insert into app_public.audience_members (organization_id, audience_id, contact_id)
  select organization_id, $2, id from app_public.contacts where organization_id = $1`, [org, audience.id]);
await pool.query('vacuum analyze');

/** A broadcast to the first `n` contacts (its own audience when n is below all), fired now; its run id. */
async function firedRun(name: string, n: number): Promise<string> {
  let audienceId = audience.id as string;
  if (n < RECIPIENTS) {
    const { rows: [a] } = await pool.query(`insert into app_public.audiences (organization_id, name, kind) values ($1, $2, 'static') returning id`, [org, name]);
    await pool.query(`insert into app_public.audience_members (organization_id, audience_id, contact_id)
      select organization_id, $2, id from app_public.contacts where organization_id = $1 order by id limit $3`, [org, a.id, n]);
    audienceId = a.id;
  }
  const { rows: [s] } = await pool.query(`insert into app_public.sequences (organization_id, kind, name, audience_id, steps, status)
    values ($1, 'broadcast', $2, $3, '[{"step_key": "news", "type": "email", "subject": "News for {{contact.first_name|you}}",
      "body": "Hello {{contact.first_name}}, here is our news."}]', 'active') returning id`, [org, name, audienceId]);
  await pool.query(`insert into app_public.broadcast_schedules (organization_id, sequence_id, schedule_kind, send_at, status, next_fire_at)
    values ($1, $2, 'once', now() + interval '1 day', 'scheduled', now() - interval '1 second')`, [org, s.id]);
  return withClient(async (c) => (await fireDue(c))[0]!);
}
async function withClient<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try { return await fn(c); } finally { c.release(); }
}

// ---- 1. the sink, with contacts_get measured meanwhile -------------------------------------
const target = await startTarget(['svc', ownerUrl, loginUrl, org], { SVC_RATE_LIMIT: '100000000' });
const { rows: contactIds } = await pool.query(`select id from app_public.contacts where organization_id = $1 order by id limit 1000`, [org]);
let k = 0;
/** contacts_get in a closed loop of 4 until `stop` resolves (or for `seconds`): the p95 in ms. */
async function readLoop(seconds: number, stop?: Promise<unknown>): Promise<{ p95: number; count: number }> {
  const latencies: number[] = [];
  let done = false;
  const timer = setTimeout(() => { done = true; }, seconds * 1000);
  void stop?.then(() => { done = true; }, () => { done = true; });
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (!done) {
      const t = performance.now();
      const res = await fetch(`${target.url}/api/v1/contacts/${contactIds[k++ % contactIds.length].id}`,
        { headers: { authorization: `Bearer ${tenant.keys.org}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`contacts_get answered ${res.status}`);
      latencies.push(performance.now() - t);
    }
  }));
  clearTimeout(timer);
  latencies.sort((a, b) => a - b);
  return { p95: Number(percentile(latencies, 0.95).toFixed(1)), count: latencies.length };
}

/** CPU time (ms) the database backend of this connection has used so far, from /proc (the server is this machine's). */
async function backendCpu(c: pg.ClientBase): Promise<number> {
  const { rows: [{ pid }] } = await c.query('select pg_backend_pid() as pid');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, USER_HZ 100
}
/** What `fn` took on client `c`: wall seconds, CPU ms of this process and of the backend, the 1-minute load average after. */
async function measured(c: pg.ClientBase, fn: () => Promise<unknown>) {
  const db0 = await backendCpu(c);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { seconds, nodeMs: (cpu.user + cpu.system) / 1000, dbMs: (await backendCpu(c)) - db0, load: os.loadavg()[0]! };
}
const median = (xs: number[]) => { const v = [...xs].sort((a, b) => a - b); return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2; };

await readLoop(2); // warm
const idle = await readLoop(5);
log(`contacts_get idle: p95 ${idle.p95} ms over ${idle.count} reads`);

async function bareSink(c: pg.ClientBase): Promise<void> {
  for (let from = 0; from < RECIPIENTS; from += BATCH) {
    await c.query(`insert into app_private.outbox (organization_id, channel, sender, recipient, subject, body, meta)
      select $1, 'email', 'no-reply@bench.example', 'c' || g.i || '@example.com', 'News for First' || g.i,
             'Hello First' || g.i || ', here is our news.', jsonb_build_object('n', g.i)
        from generate_series($2::int + 1, least($2::int + $3::int, $4::int)) g(i)`, [org, from, BATCH, RECIPIENTS]);
  }
}
/**
 * The floor the documented record sets (sequences.md, "Broadcasts": each recipient of a run is
 * an enrollment of the broadcast, which ends once its message is sent): the bare insert's own
 * statement, with the batch's enrollments ended (status completed) in it, as the owner, and
 * nothing else: no claim, no contact read, no step run, no message row, no events, no counts,
 * and no triggers or foreign-key checks at all where the connection may switch them off
 * (session_replication_role, a superuser's; otherwise the status counts are skipped as the
 * engine's own batched statements skip them). Only the row's new version and its index entries.
 * No run that keeps an enrollment per recipient can do less per message than this.
 */
async function floorSink(c: pg.ClientBase, runId: string): Promise<void> {
  const { rows } = await c.query<{ id: string }>(`select id from app_public.enrollments where organization_id = $1 and run_id = $2 order by id`, [org, runId]);
  const { rows: [su] } = await c.query<{ yes: boolean }>(`select rolsuper as yes from pg_roles where rolname = current_user`);
  for (let from = 0; from < rows.length; from += BATCH) {
    await c.query('begin');
    await c.query(su?.yes ? `set local session_replication_role = replica` : `select set_config('svc.enrollment_counts', 'batched', true)`);
    // the bare insert's statement, with the batch's enrollments ended beside it
    await c.query(`with ended as (
        update app_public.enrollments e set status = 'completed', end_reason = 'completed', current_step_index = null,
               current_step_key = null, next_run_at = null, next_step_due_at = null, updated_at = now()
         where e.organization_id = $1 and e.id = any($5::uuid[]))
      insert into app_private.outbox (organization_id, channel, sender, recipient, subject, body, meta)
      select $1, 'email', 'no-reply@bench.example', 'c' || g.i || '@example.com', 'News for First' || g.i,
             'Hello First' || g.i || ', here is our news.', jsonb_build_object('n', g.i)
        from generate_series($2::int + 1, least($2::int + $3::int, $4::int)) g(i)`,
    [org, from, BATCH, RECIPIENTS, rows.slice(from, from + BATCH).map((r) => r.id)]);
    await c.query('commit');
  }
}
const sinkRounds: { bare: Awaited<ReturnType<typeof measured>>; run: Awaited<ReturnType<typeof measured>>; floor: Awaited<ReturnType<typeof measured>>; busyP95: number; idleP95: number }[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const sinkRun = await firedRun(`Sink news ${round}`, RECIPIENTS);
  const floorRun = await firedRun(`Floor news ${round}`, RECIPIENTS);
  // the enrollments of the two runs just fired, known to the planner (as autovacuum would soon have
  // them): the floor's statements find theirs by key, as the run's claims do
  await pool.query('analyze app_public.enrollments');
  // idle again in each round, just before it: the machine's load moves between rounds
  const idleNow = (await readLoop(5)).p95;
  const r = await withClient(async (c) => {
    const doBare = () => measured(c, () => bareSink(c));
    const doRun = async () => {
      let busy: Promise<{ p95: number; count: number }> | undefined;
      const m = await measured(c, () => {
        const sending = sendRun(c, org, sinkRun, { transports: { email: sinkTransport, sms: sinkTransport }, baseUrl: 'https://svc.example', batchSize: BATCH });
        busy = readLoop(3600, sending);
        return sending;
      });
      return { m, busy: await busy! };
    };
    const doFloor = () => measured(c, () => floorSink(c, floorRun));
    // alternating: the bare insert first in odd rounds, the broadcast first in even ones
    if (round % 2) { const bare = await doBare(); const floor = await doFloor(); const run = await doRun(); return { bare, floor, run: run.m, busyP95: run.busy.p95 }; }
    const run = await doRun(); const floor = await doFloor(); const bare = await doBare(); return { bare, floor, run: run.m, busyP95: run.busy.p95 };
  });
  const { rows: [run] } = await pool.query(`select * from app_public.broadcast_runs where id = $1`, [sinkRun]);
  if (run.sent !== RECIPIENTS) throw new Error(`expected ${RECIPIENTS} sent, got ${JSON.stringify(run)}`);
  sinkRounds.push({ ...r, idleP95: idleNow });
  log(`round ${round}: bare ${(RECIPIENTS / r.bare.seconds).toFixed(0)} rows/s (db ${(r.bare.dbMs * 1000 / RECIPIENTS).toFixed(1)} µs/row, load ${r.bare.load.toFixed(1)}); `
    + `broadcast ${(RECIPIENTS / r.run.seconds).toFixed(0)} msg/s (db ${(r.run.dbMs * 1000 / RECIPIENTS).toFixed(1)} µs/msg, node ${(r.run.nodeMs * 1000 / RECIPIENTS).toFixed(1)} µs/msg, load ${r.run.load.toFixed(1)}); `
    + `contacts_get p95 ${r.busyP95} ms, idle before ${idleNow} ms; `
    + `the design's floor ${(RECIPIENTS / r.floor.seconds).toFixed(0)} msg/s (db ${(r.floor.dbMs * 1000 / RECIPIENTS).toFixed(1)} µs/msg)`);
}
target.child.kill('SIGTERM');
const bareRate = median(sinkRounds.map((r) => RECIPIENTS / r.bare.seconds));
const sinkRate = median(sinkRounds.map((r) => RECIPIENTS / r.run.seconds));
const sinkRatio = median(sinkRounds.map((r) => r.bare.seconds / r.run.seconds));
const bareDbUs = median(sinkRounds.map((r) => (r.bare.dbMs * 1000) / RECIPIENTS));
const runDbUs = median(sinkRounds.map((r) => (r.run.dbMs * 1000) / RECIPIENTS));
const runNodeUs = median(sinkRounds.map((r) => (r.run.nodeMs * 1000) / RECIPIENTS));
const busyP95 = median(sinkRounds.map((r) => r.busyP95));
const idleP95 = median(sinkRounds.map((r) => r.idleP95));
const readRatio = median(sinkRounds.map((r) => r.busyP95 / r.idleP95));
const sinkLoads = sinkRounds.flatMap((r) => [r.bare.load, r.run.load, r.floor.load]);
const floorRate = median(sinkRounds.map((r) => RECIPIENTS / r.floor.seconds));
const floorRatio = median(sinkRounds.map((r) => r.bare.seconds / r.floor.seconds));
const floorDbUs = median(sinkRounds.map((r) => (r.floor.dbMs * 1000) / RECIPIENTS));

// ---- 2. SMTP through a nodemailer pool -------------------------------------------------------
let received = 0;
const smtp = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
  onData(stream, _s, cb) { stream.on('data', () => undefined); stream.on('end', () => { received++; cb(); }); } });
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}?pool=true&maxConnections=5`;
async function bareSmtp(): Promise<void> {
  const bareMailer = nodemailer.createTransport({ url: smtpUrl });
  for (let from = 0; from < SMTP_RECIPIENTS; from += BATCH) {
    await Promise.all(Array.from({ length: Math.min(BATCH, SMTP_RECIPIENTS - from) }, (_, i) => bareMailer.sendMail({
      from: 'no-reply@bench.example', to: `c${from + i + 1}@example.com`, subject: `News for First${from + i + 1}`, text: 'Hello, here is our news.' })));
  }
  bareMailer.close();
}
const smtpRounds: { bare: Awaited<ReturnType<typeof measured>>; run: Awaited<ReturnType<typeof measured>> }[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const smtpRun = await firedRun(`SMTP news ${round}`, SMTP_RECIPIENTS);
  const transport = smtpTransport(smtpUrl);
  // the marks of messages handed over go on a second connection, as the worker's task sends them
  const r = await withClient((markClient) => withClient(async (c) => {
    const doBare = () => measured(c, bareSmtp);
    const doRun = () => measured(c, () => sendRun(c, org, smtpRun,
      { transports: { email: transport, sms: sinkTransport }, baseUrl: 'https://svc.example', batchSize: BATCH, markClient }));
    if (round % 2) { const bare = await doBare(); return { bare, run: await doRun() }; }
    const run = await doRun(); return { bare: await doBare(), run };
  }));
  transport.close?.();
  const { rows: [run] } = await pool.query(`select sent, failed from app_public.broadcast_runs where id = $1`, [smtpRun]);
  if (run.sent !== SMTP_RECIPIENTS) throw new Error(`expected ${SMTP_RECIPIENTS} sent over SMTP, got ${JSON.stringify(run)}`);
  smtpRounds.push(r);
  log(`SMTP round ${round}: bare pool ${(SMTP_RECIPIENTS / r.bare.seconds).toFixed(0)} msg/s (node ${(r.bare.nodeMs * 1000 / SMTP_RECIPIENTS).toFixed(0)} µs/msg, load ${r.bare.load.toFixed(1)}); `
    + `broadcast ${(SMTP_RECIPIENTS / r.run.seconds).toFixed(0)} msg/s (node ${(r.run.nodeMs * 1000 / SMTP_RECIPIENTS).toFixed(0)} µs/msg, db ${(r.run.dbMs * 1000 / SMTP_RECIPIENTS).toFixed(0)} µs/msg, load ${r.run.load.toFixed(1)}); server received ${received}`);
}
smtp.close();
const bareSmtpRate = median(smtpRounds.map((r) => SMTP_RECIPIENTS / r.bare.seconds));
const smtpRate = median(smtpRounds.map((r) => SMTP_RECIPIENTS / r.run.seconds));
const smtpRatio = median(smtpRounds.map((r) => r.bare.seconds / r.run.seconds));
const smtpBareNodeUs = median(smtpRounds.map((r) => (r.bare.nodeMs * 1000) / SMTP_RECIPIENTS));
const smtpRunNodeUs = median(smtpRounds.map((r) => (r.run.nodeMs * 1000) / SMTP_RECIPIENTS));
const smtpRunDbUs = median(smtpRounds.map((r) => (r.run.dbMs * 1000) / SMTP_RECIPIENTS));
const smtpLoads = smtpRounds.flatMap((r) => [r.bare.load, r.run.load]);

// ---- 3. next_fire_at of 10,000 recurring schedules -------------------------------------------
const RULES = ['FREQ=DAILY;BYHOUR=9;BYMINUTE=0', 'FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=8;BYMINUTE=30', 'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU',
  'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=17;BYMINUTE=0', 'FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0',
  'FREQ=MONTHLY;BYDAY=1MO;BYHOUR=10;BYMINUTE=15', 'FREQ=DAILY;INTERVAL=3;BYHOUR=2;BYMINUTE=30'];
const ZONES = ['America/New_York', 'Europe/Berlin', 'UTC', 'Asia/Tokyo', 'Australia/Sydney', 'America/Los_Angeles'];
const { rows: seqs } = await pool.query(`insert into app_public.sequences (organization_id, kind, name, steps)
  select $1, 'broadcast', 'Recurring ' || g.i, '[]' from generate_series(1, $2::int) g(i) returning id`, [org, SCHEDULES]);
await pool.query(`insert into app_public.broadcast_schedules (organization_id, sequence_id, schedule_kind, rrule, timezone, anchor, status)
  select $1, s.id, 'recurring', ($3::text[])[1 + o % $4], ($5::text[])[1 + o % $6], now() - (o % 400) * interval '1 day', 'scheduled'
    from unnest($2::uuid[]) with ordinality t(id, o) join app_public.sequences s on s.organization_id = $1 and s.id = t.id`,
  [org, seqs.map((s) => s.id), RULES, RULES.length, ZONES, ZONES.length]);
await pool.query('vacuum analyze app_public.broadcast_schedules');
const stored = (await pool.query(`select sequence_id, schedule_kind, send_at, rrule, timezone, ends_on::text as ends_on, anchor
  from app_public.broadcast_schedules where organization_id = $1 and schedule_kind = 'recurring'`, [org])).rows;
const tr = performance.now();
await withClient(async (c) => {
  for (const s of stored) await c.query('select * from app_public.broadcast_schedules where organization_id = $1 and sequence_id = $2', [org, s.sequence_id]);
});
const readsMs = performance.now() - tr;
const now = new Date();
const tc = performance.now();
let computed = 0;
for (const s of stored) if (nextFireAfter(s, now)) computed++;
const computeMs = performance.now() - tc;
log(`${fmt(stored.length)} next_fire_at in ${computeMs.toFixed(0)} ms (${computed} with a next); ${fmt(stored.length)} key reads ${readsMs.toFixed(0)} ms`);

const range = (xs: number[]) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
const section = `
## Broadcasts: a run against the bare work it does

Produced by \`BENCH_RECIPIENTS=${RECIPIENTS} BENCH_SMTP_RECIPIENTS=${SMTP_RECIPIENTS} BENCH_BATCH=${BATCH} BENCH_ROUNDS=${ROUNDS} DATABASE_URL=… node bench/broadcasts.ts\`
(\`npm run bench:broadcasts\`) on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores shared with the database and with other work on the machine;
${ROUNDS} alternating rounds (the bare work first in odd rounds, the broadcast first in even ones), medians; ratios per round, then their median.
The batches are claimed and recorded set-based (app_private.broadcast_claim_batch and broadcast_record_batch), the next claimed while the transport has one
and put in flight by the record of the one before. CPU time of the database backend
doing the work is from /proc, per message; the load average (1 minute) is taken after each measure.

| measure | broadcast | bare | ratio (median of rounds) | target |
|---|---|---|---|---|
| into the sink, ${fmt(RECIPIENTS)} recipients (msg/s) | ${sinkRate.toFixed(0)} | ${bareRate.toFixed(0)} (batched INSERT of the same outbox rows) | ${sinkRatio.toFixed(3)} | ≥ 0.60 |
| database CPU per message, sink (µs) | ${runDbUs.toFixed(1)} | ${bareDbUs.toFixed(1)} | ${(bareDbUs / runDbUs).toFixed(3)} (bare ÷ broadcast) | |
| the design's floor: the outbox row and the end of the recipient's enrollment, batched, nothing else (msg/s) | ${floorRate.toFixed(0)} | ${bareRate.toFixed(0)} | ${floorRatio.toFixed(3)} | (≥ 0.60 is out of reach when this is below it) |
| database CPU per message, the design's floor (µs) | ${floorDbUs.toFixed(1)} | ${bareDbUs.toFixed(1)} | ${(bareDbUs / floorDbUs).toFixed(3)} (bare ÷ floor) | |
| node CPU per message, sink (µs; with the contacts_get reader's, same process) | ${runNodeUs.toFixed(1)} | | | |
| contacts_get p95 during the run vs idle just before it (ms) | ${busyP95} | ${idleP95} | ${readRatio.toFixed(2)} | ≤ 3 |
| SMTP, nodemailer pool of 5, ${fmt(SMTP_RECIPIENTS)} messages (msg/s) | ${smtpRate.toFixed(0)} | ${bareSmtpRate.toFixed(0)} (bare pool) | ${smtpRatio.toFixed(2)} | ≥ 0.80 |
| SMTP: node CPU per message (µs; the smtp-server runs in the same process) | ${smtpRunNodeUs.toFixed(0)} | ${smtpBareNodeUs.toFixed(0)} | | |
| SMTP: database CPU per message (µs) | ${smtpRunDbUs.toFixed(0)} | | | |
| next_fire_at of ${fmt(stored.length)} recurring schedules (ms, one run) | ${computeMs.toFixed(0)} | ${readsMs.toFixed(0)} (primary-key reads) | ${(computeMs / readsMs).toFixed(2)} | ≤ 10 |

Load average during the sink rounds ${range(sinkLoads)}, during the SMTP rounds ${range(smtpLoads)}.
Rounds (sink: bare rows/s, the design's floor msg/s, broadcast msg/s; SMTP: bare msg/s, broadcast msg/s):
${sinkRounds.map((r, i) => `sink ${i + 1}: ${(RECIPIENTS / r.bare.seconds).toFixed(0)} / ${(RECIPIENTS / r.floor.seconds).toFixed(0)} / ${(RECIPIENTS / r.run.seconds).toFixed(0)} (load ${r.bare.load.toFixed(1)} / ${r.floor.load.toFixed(1)} / ${r.run.load.toFixed(1)})`).join('; ')};
${smtpRounds.map((r, i) => `SMTP ${i + 1}: ${(SMTP_RECIPIENTS / r.bare.seconds).toFixed(0)} / ${(SMTP_RECIPIENTS / r.run.seconds).toFixed(0)} (load ${r.bare.load.toFixed(1)} / ${r.run.load.toFixed(1)})`).join('; ')}.
`;
console.log(section);
writeSection('broadcasts', section);
await pool.end();
await db.stop();
