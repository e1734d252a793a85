// `node bench/broadcasts.ts`: a broadcast run against the bare work it does, same database, same
// run (the three ratios, from one run each):
//   1. sink: a BENCH_RECIPIENTS-recipient email broadcast into the sink (the run's batches:
//      claim through the sequences engine, render, store, record), against a bare batched insert
//      of the same outbox rows (one INSERT … SELECT per batch of the same size); meanwhile
//      contacts_get is read in a closed loop over HTTP, p95 during the run against idle;
//   2. SMTP: a BENCH_SMTP_RECIPIENTS-recipient broadcast to a local smtp-server through a
//      nodemailer pool (EMAIL_TRANSPORT with ?pool=true), against the bare nodemailer pool
//      sending the same number of messages to the same server;
//   3. next_fire_at of 10,000 recurring schedules (varied rules, zones, intervals) recomputed
//      with Temporal, against 10,000 primary-key reads of those schedules.
//
//   BENCH_RECIPIENTS=20000 BENCH_SMTP_RECIPIENTS=2000 BENCH_BATCH=200
// (the size: BENCH_RECIPIENTS=100000)
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

const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS || 20_000);
const SMTP_RECIPIENTS = Number(process.env.BENCH_SMTP_RECIPIENTS || 2_000);
const BATCH = Number(process.env.BENCH_BATCH || 200);
const SCHEDULES = 10_000;
const started = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);

const db = await benchServer();
const ownerUrl = await freshDatabase(db, 'svc_bench_broadcasts');
const loginUrl = loginUrlFor(ownerUrl, db.loginPassword);
const pool = new pg.Pool({ connectionString: ownerUrl, max: 6 });
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
  void stop?.then(() => { done = true; });
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
await readLoop(2); // warm
const idle = await readLoop(5);
log(`contacts_get idle: p95 ${idle.p95} ms over ${idle.count} reads`);

async function bareSink(): Promise<number> {
  const t0 = performance.now();
  for (let from = 0; from < RECIPIENTS; from += BATCH) {
    await pool.query(`insert into app_private.outbox (organization_id, channel, sender, recipient, subject, body, meta)
      select $1, 'email', 'no-reply@bench.example', 'c' || g.i || '@example.com', 'News for First' || g.i,
             'Hello First' || g.i || ', here is our news.', jsonb_build_object('n', g.i)
        from generate_series($2::int + 1, least($2::int + $3::int, $4::int)) g(i)`, [org, from, BATCH, RECIPIENTS]);
  }
  return RECIPIENTS / ((performance.now() - t0) / 1000);
}
const bareRate = await bareSink();
log(`bare batched insert: ${bareRate.toFixed(0)} rows/s`);
const sinkRun = await firedRun('Sink news', RECIPIENTS);
const t0 = performance.now();
const sending = withClient((c) => sendRun(c, org, sinkRun, { transports: { email: sinkTransport, sms: sinkTransport }, baseUrl: 'https://svc.example', batchSize: BATCH }));
const during = readLoop(3600, sending);
await sending;
const sinkSeconds = (performance.now() - t0) / 1000;
const { rows: [run] } = await pool.query(`select * from app_public.broadcast_runs where id = $1`, [sinkRun]);
if (run.sent !== RECIPIENTS) throw new Error(`expected ${RECIPIENTS} sent, got ${JSON.stringify(run)}`);
const sinkRate = RECIPIENTS / sinkSeconds;
log(`broadcast into the sink: ${sinkRate.toFixed(0)} msg/s`);
const busy = await during;
target.child.kill('SIGTERM');
const busyP95 = busy.p95;
log(`contacts_get during the run: p95 ${busyP95} ms over ${busy.count} reads`);

// ---- 2. SMTP through a nodemailer pool -------------------------------------------------------
let received = 0;
const smtp = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
  onData(stream, _s, cb) { stream.on('data', () => undefined); stream.on('end', () => { received++; cb(); }); } });
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}?pool=true&maxConnections=5`;
const bareMailer = nodemailer.createTransport({ url: smtpUrl });
const tb = performance.now();
for (let from = 0; from < SMTP_RECIPIENTS; from += BATCH) {
  await Promise.all(Array.from({ length: Math.min(BATCH, SMTP_RECIPIENTS - from) }, (_, i) => bareMailer.sendMail({
    from: 'no-reply@bench.example', to: `c${from + i + 1}@example.com`, subject: `News for First${from + i + 1}`, text: 'Hello, here is our news.' })));
}
const bareSmtp = SMTP_RECIPIENTS / ((performance.now() - tb) / 1000);
bareMailer.close();
log(`bare nodemailer pool: ${bareSmtp.toFixed(0)} msg/s`);
const smtpRun = await firedRun('SMTP news', SMTP_RECIPIENTS);
const ts = performance.now();
await withClient((c) => sendRun(c, org, smtpRun, { transports: { email: smtpTransport(smtpUrl), sms: sinkTransport }, baseUrl: 'https://svc.example', batchSize: BATCH }));
const smtpRate = SMTP_RECIPIENTS / ((performance.now() - ts) / 1000);
log(`broadcast over SMTP: ${smtpRate.toFixed(0)} msg/s (server received ${received})`);
smtp.close();

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

const section = `
## Broadcasts: a run against the bare work it does

Produced by \`BENCH_RECIPIENTS=${RECIPIENTS} BENCH_SMTP_RECIPIENTS=${SMTP_RECIPIENTS} BENCH_BATCH=${BATCH} DATABASE_URL=… node bench/broadcasts.ts\`
on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores shared with the database and with other work on the machine;
one run, ratios from that run. The issue's size is \`BENCH_RECIPIENTS=100000\`; this run used ${fmt(RECIPIENTS)} recipients
(the machine is shared), batches of ${BATCH}.

| measure | broadcast | bare | ratio | target |
|---|---|---|---|---|
| into the sink (msg/s) | ${sinkRate.toFixed(0)} | ${bareRate.toFixed(0)} (batched INSERT of the same outbox rows) | ${(sinkRate / bareRate).toFixed(2)} | ≥ 0.60 |
| contacts_get p95 during the run vs idle (ms) | ${busyP95} | ${idle.p95} | ${(busyP95 / idle.p95).toFixed(2)} | ≤ 3 |
| SMTP, nodemailer pool of 5, ${fmt(SMTP_RECIPIENTS)} messages (msg/s) | ${smtpRate.toFixed(0)} | ${bareSmtp.toFixed(0)} (bare pool) | ${(smtpRate / bareSmtp).toFixed(2)} | ≥ 0.80 |
| next_fire_at of ${fmt(stored.length)} recurring schedules (ms) | ${computeMs.toFixed(0)} | ${readsMs.toFixed(0)} (primary-key reads) | ${(computeMs / readsMs).toFixed(2)} | ≤ 10 |
`;
console.log(section);
writeSection('broadcasts', section);
await pool.end();
await db.stop();
