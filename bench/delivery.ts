// `node bench/delivery.ts`: the SMTP path of issue 16, in one run. BENCH_EMAILS sequence emails
// (one email step, BENCH_EMAILS contacts enrolled by one event each, drained by the worker
// running sequence_step with the SMTP transport) to a local smtp-server, against a bare
// nodemailer pool sending the same number of messages to the same server, alternating, in
// BENCH_ROUNDS rounds. The engine is measured twice: with EMAIL_TRANSPORT as written (one
// connection per message) and with `?pool=true&maxConnections=N` on the URL (nodemailer's own
// pool, N = the worker's concurrency, the same as the bare pool's). Target: engine ≥ 0.8 × bare.
// Writes the `delivery` section of bench/RESULTS.md.
//
//   BENCH_EMAILS=10000 BENCH_ROUNDS=3 BENCH_CONCURRENCY=4
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { runOnce } from 'graphile-worker';
import { SMTPServer } from 'smtp-server';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { createTransports } from '../src/delivery/index.ts';
import { allTasks, workerLogger, workerPreset } from '../src/worker.ts';
import { benchServer, fmt, freshDatabase, writeSection } from './lib.ts';

const EMAILS = Number(process.env.BENCH_EMAILS || 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 4);
const t00 = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - t00) / 1000).toFixed(0).padStart(4)} s] ${m}`);

// the server every message goes to: counts what it accepted, keeps nothing
let accepted = 0;
const smtp = new SMTPServer({
  authOptional: true, disabledCommands: ['STARTTLS'], logger: false, maxClients: 1000, disableReverseLookup: true,
  onData(stream, _session, callback) {
    stream.on('data', () => undefined);
    stream.on('end', () => { accepted++; callback(); });
  },
});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;

const db = await benchServer();
const ownerUrl = await freshDatabase(db, 'svc_bench_delivery');
const pool = new pg.Pool({ connectionString: ownerUrl, max: CONCURRENCY + 4 });
const { organization_id: org } = await adminApply(pool, {
  organization: { name: 'Bench mail', sending_email_domain: 'bench.example' },
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@mail.bench', role: 'owner' }],
}, AREAS);
log(`loading ${fmt(EMAILS)} contacts`);
await pool.query(`insert into app_public.contacts (organization_id, name, email)
  select $1::uuid, 'Person ' || i, 'p' || i || '@example.com' from generate_series(1, $2::int) i`, [org, EMAILS]);
await pool.query(`insert into app_public.send_schedules (organization_id, name, timezone, is_default, windows)
  select $1, 'Open', 'UTC', true, jsonb_agg(jsonb_build_object('day', d, 'start', '00:00', 'end', '24:00'))
    from unnest(array['mon','tue','wed','thu','fri','sat','sun']) d`, [org]);
await pool.query(`insert into app_public.sequences (organization_id, name, trigger, status, steps)
  values ($1, 'Follow-up', '{"type": "event", "event": "visit_done"}', 'active', jsonb_build_array(jsonb_build_object(
    'step_key', 'ask', 'type', 'email', 'subject', 'How was your visit, {{contact.first_name|there}}?',
    'body', '<p>Thanks for coming in, {{contact.name}}.</p><p>Tell us <a href="https://bench.example/r">how it went</a>.</p>')))`, [org]);
await pool.query('vacuum analyze');

/** The same message the engine sends, through a bare nodemailer pool: N at a time until all are accepted. */
async function bare(): Promise<number> {
  const mailer = nodemailer.createTransport({ url: smtpUrl, pool: true, maxConnections: CONCURRENCY });
  const before = accepted;
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < EMAILS) {
      const i = ++next;
      await mailer.sendMail({ from: 'no-reply@bench.example', to: `p${i}@example.com`, subject: 'How was your visit, Person?',
        html: `<p>Thanks for coming in, Person ${i}.</p><p>Tell us <a href="https://bench.example/r">how it went</a>.</p>`,
        text: `Thanks for coming in, Person ${i}.\n\nTell us how it went (https://bench.example/r)`,
        headers: { 'List-Unsubscribe': '<https://svc.example/unsubscribe/x>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } });
    }
  }));
  const rate = EMAILS / ((performance.now() - t0) / 1000);
  mailer.close();
  if (accepted - before !== EMAILS) throw new Error(`bare: ${accepted - before} of ${EMAILS} accepted`);
  return rate;
}

let round = 0;
async function engine(url: string): Promise<number> {
  round++;
  const before = accepted;
  const transports = createTransports({ emailTransport: url, smsTransport: 'sink' });
  const t0 = performance.now();
  await pool.query(`insert into app_private.contact_events (organization_id, contact_id, kind, event, key, fields, subscription_ids, receipt)
    select $1, c.id, 'fire', 'visit_done', $2 || c.id, '{}', array(select s.id from app_private.event_subscriptions s where s.organization_id = $1),
           jsonb_build_object('status', 'accepted', 'key', $2 || c.id)
      from app_public.contacts c where c.organization_id = $1`, [org, `v${round}-`]);
  const workerPool = new pg.Pool({ connectionString: ownerUrl, max: CONCURRENCY + 4 });
  workerPool.on('error', () => undefined);
  workerPool.on('connect', (client) => client.on('error', () => undefined));
  try {
    await runOnce({ pgPool: workerPool, taskList: allTasks({ transports, baseUrl: 'https://svc.example' }), concurrency: CONCURRENCY,
      logger: workerLogger, preset: workerPreset });
  } finally {
    await workerPool.end();
  }
  const rate = EMAILS / ((performance.now() - t0) / 1000);
  transports.email.close?.();
  if (accepted - before !== EMAILS) throw new Error(`engine: ${accepted - before} of ${EMAILS} accepted`);
  return rate;
}

const pooled = `${smtpUrl}/?pool=true&maxConnections=${CONCURRENCY}`;
// one unmeasured round of each: the tables hold rows and are analyzed, as a running service's
await bare();
await engine(pooled);
await pool.query('vacuum analyze');
const results: { bare: number; single: number; pooled: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const b = await bare();
  const p = await engine(pooled);
  const s = await engine(smtpUrl);
  results.push({ bare: b, single: s, pooled: p });
  log(`round ${i + 1}: bare ${b.toFixed(0)} msg/s, engine pooled ${p.toFixed(0)} (${(p / b).toFixed(2)}), one connection each ${s.toFixed(0)} (${(s / b).toFixed(2)})`);
  await pool.query('vacuum analyze');
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pooledRatio = median(results.map((r) => r.pooled / r.bare));
const singleRatio = median(results.map((r) => r.single / r.bare));
const section = `
## Delivery: sequence emails over SMTP, against a bare nodemailer pool

Produced by \`BENCH_EMAILS=${EMAILS} BENCH_ROUNDS=${ROUNDS} BENCH_CONCURRENCY=${CONCURRENCY} DATABASE_URL=… node bench/delivery.ts\`
on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores shared with the database and the SMTP server (a local
smtp-server that accepts everything). Each round: ${fmt(EMAILS)} messages. Bare: nodemailer's pool (${CONCURRENCY} connections)
sending the same HTML + text message with the same headers, ${CONCURRENCY} at a time. Engine: ${fmt(EMAILS)} events accepted in one
statement, each enrolling a contact into a one-email-step sequence, drained by the worker (concurrency ${CONCURRENCY}) running
sequence_step with the SMTP transport: claim, render, hand-over, record, completed. Timed from the first statement to the
last message accepted by the server; one unmeasured round of each first.

| round | bare (msg/s) | engine, \`?pool=true&maxConnections=${CONCURRENCY}\` (msg/s) | ratio | engine, one connection per message (msg/s) | ratio |
|---|---|---|---|---|---|
${results.map((r, i) => `| ${i + 1} | ${r.bare.toFixed(0)} | ${r.pooled.toFixed(0)} | ${(r.pooled / r.bare).toFixed(2)} | ${r.single.toFixed(0)} | ${(r.single / r.bare).toFixed(2)} |`).join('\n')}

Median ratio: pooled **${pooledRatio.toFixed(2)}**, one connection per message **${singleRatio.toFixed(2)}** (target ≥ 0.8).
`;
console.log(section);
writeSection('delivery', section);
await pool.end();
await new Promise<void>((r) => smtp.close(() => r()));
await db.stop();
