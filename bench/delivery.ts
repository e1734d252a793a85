// `node bench/delivery.ts`: the SMTP path of issue 16, in one run. BENCH_EMAILS sequence emails
// (one email step, BENCH_EMAILS contacts enrolled by one event each, drained by the worker
// running sequence_step with the SMTP transport) to a local smtp-server, against a bare
// nodemailer pool sending the same number of messages to the same server, alternating, in
// BENCH_ROUNDS rounds. The engine runs EMAIL_TRANSPORT as written (smtp://host:port: the
// transport's pool of connections, src/delivery/smtp.ts); with BENCH_SINGLE=1 also with
// `?pool=false` (one connection per message). Besides the rates, each round's CPU time per
// message: this process's (the worker, or the bare client, and the SMTP server both share it)
// and the database's (the bench database's backends, from /proc), and the load average.
// Target: engine ≥ 0.8 × bare. Writes the `delivery` section of bench/RESULTS.md.
//
//   BENCH_EMAILS=10000 BENCH_ROUNDS=3 BENCH_CONCURRENCY=4 BENCH_SINGLE=0
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { runOnce } from 'graphile-worker';
import { SMTPServer } from 'smtp-server';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { createTransports } from '../src/delivery/index.ts';
import { IN_FLIGHT } from '../src/delivery/hand_over.ts';
import { TAKEN_PER_JOB } from '../src/sequences/sequence_step.ts';
import { allTasks, workerLogger, workerPreset } from '../src/worker.ts';
import { backendsCpu, backendsCpuSince, benchServer, fmt, freshDatabase, writeSection } from './lib.ts';

const EMAILS = Number(process.env.BENCH_EMAILS || 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 4);
const SINGLE = process.env.BENCH_SINGLE === '1';
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

interface Measured { rate: number; nodeMs: number; pgMs: number; load: number }

/** The same message the engine sends, through a bare nodemailer pool: N at a time until all are accepted. */
async function bare(): Promise<Measured> {
  const mailer = nodemailer.createTransport({ url: smtpUrl, pool: true, maxConnections: CONCURRENCY });
  const before = accepted;
  const cpu0 = process.cpuUsage();
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
  const cpu = process.cpuUsage(cpu0);
  mailer.close();
  if (accepted - before !== EMAILS) throw new Error(`bare: ${accepted - before} of ${EMAILS} accepted`);
  return { rate, nodeMs: (cpu.user + cpu.system) / 1000 / EMAILS, pgMs: 0, load: os.loadavg()[0]! };
}

let round = 0;
async function engine(url: string): Promise<Measured> {
  round++;
  const before = accepted;
  const transports = createTransports({ emailTransport: url, smsTransport: 'sink' });
  const cpu0 = process.cpuUsage();
  const pg0 = await backendsCpu(pool);
  const t0 = performance.now();
  await pool.query(`insert into app_private.contact_events (organization_id, contact_id, kind, event, key, fields, subscription_ids, receipt)
    select $1, c.id, 'fire', 'visit_done', $2 || c.id, '{}', array(select s.id from app_private.event_subscriptions s where s.organization_id = $1),
           jsonb_build_object('status', 'accepted', 'key', $2 || c.id)
      from app_public.contacts c where c.organization_id = $1`, [org, `v${round}-`]);
  const workerPool = new pg.Pool({ connectionString: ownerUrl, max: CONCURRENCY + 4 });
  workerPool.on('error', () => undefined);
  workerPool.on('connect', (client) => client.on('error', () => undefined));
  let pgMs = 0;
  try {
    await runOnce({ pgPool: workerPool, taskList: allTasks({ transports, baseUrl: 'https://svc.example' }), concurrency: CONCURRENCY,
      logger: workerLogger, preset: workerPreset });
    pgMs = backendsCpuSince(pg0, await backendsCpu(pool)) / 1000 / EMAILS;
  } finally {
    await workerPool.end();
  }
  const rate = EMAILS / ((performance.now() - t0) / 1000);
  const cpu = process.cpuUsage(cpu0);
  transports.email.close?.();
  if (accepted - before !== EMAILS) throw new Error(`engine: ${accepted - before} of ${EMAILS} accepted`);
  return { rate, nodeMs: (cpu.user + cpu.system) / 1000 / EMAILS, pgMs, load: os.loadavg()[0]! };
}

const single = `${smtpUrl}/?pool=false`;
// one unmeasured round of each: the tables hold rows and are analyzed, as a running service's
await bare();
await engine(smtpUrl);
await pool.query('vacuum analyze');
const results: { bare: Measured; pooled: Measured; single?: Measured }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const b = await bare();
  const p = await engine(smtpUrl);
  const s = SINGLE ? await engine(single) : undefined;
  results.push({ bare: b, pooled: p, single: s });
  log(`round ${i + 1}: bare ${b.rate.toFixed(0)} msg/s (${b.nodeMs.toFixed(2)} ms CPU/msg), engine ${p.rate.toFixed(0)} (${(p.rate / b.rate).toFixed(2)}; `
    + `${p.nodeMs.toFixed(2)} ms CPU/msg here, ${p.pgMs.toFixed(2)} in the database)${s ? `, one connection each ${s.rate.toFixed(0)} (${(s.rate / b.rate).toFixed(2)})` : ''}, `
    + `load ${p.load.toFixed(1)}`);
  await pool.query('vacuum analyze');
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratio = median(results.map((r) => r.pooled.rate / r.bare.rate));
const cpuRatio = median(results.map((r) => r.bare.nodeMs / (r.pooled.nodeMs + r.pooled.pgMs)));
const singleRatio = SINGLE ? median(results.map((r) => r.single!.rate / r.bare.rate)) : undefined;
const loads = results.flatMap((r) => [r.bare.load, r.pooled.load]);
const section = `
## Delivery: sequence emails over SMTP, against a bare nodemailer pool

Produced by \`BENCH_EMAILS=${EMAILS} BENCH_ROUNDS=${ROUNDS} BENCH_CONCURRENCY=${CONCURRENCY} BENCH_SINGLE=${SINGLE ? 1 : 0} DATABASE_URL=… node bench/delivery.ts\`
on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} cores shared with the database and the SMTP server (a local
smtp-server in the bench's process that accepts everything), load average (1 min) ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} during the rounds.
Each round: ${fmt(EMAILS)} messages. Bare: nodemailer's pool (${CONCURRENCY} connections) sending the same HTML + text message with the
same headers, ${CONCURRENCY} at a time. Engine: ${fmt(EMAILS)} events accepted in one statement, each enrolling a contact into a
one-email-step sequence, drained by the worker (concurrency ${CONCURRENCY}) running sequence_step with EMAIL_TRANSPORT=smtp://host:port
(the transport's own pool): claim, render, hand-over, record, completed, in batches of up to ${TAKEN_PER_JOB + 1}. Timed from the first statement to the last message
accepted by the server; one unmeasured round of each first. CPU per message: this process (client, worker and SMTP server), and
the bench database's backends (from /proc).

| round | load | bare (msg/s) | bare CPU (ms/msg) | engine (msg/s) | ratio | engine CPU here (ms/msg) | engine CPU in PostgreSQL (ms/msg) |${SINGLE ? ' one connection per message (msg/s) | ratio |' : ''}
|---|---|---|---|---|---|---|---|${SINGLE ? '---|---|' : ''}
${results.map((r, i) => `| ${i + 1} | ${r.pooled.load.toFixed(1)} | ${r.bare.rate.toFixed(0)} | ${r.bare.nodeMs.toFixed(2)} | ${r.pooled.rate.toFixed(0)} | ${(r.pooled.rate / r.bare.rate).toFixed(2)} | `
  + `${r.pooled.nodeMs.toFixed(2)} | ${r.pooled.pgMs.toFixed(2)} |${r.single ? ` ${r.single.rate.toFixed(0)} | ${(r.single.rate / r.bare.rate).toFixed(2)} |` : ''}`).join('\n')}

Median ratio of rates: **${ratio.toFixed(2)}** (target ≥ 0.8)${singleRatio === undefined ? '' : `; one connection per message ${singleRatio.toFixed(2)}`}.
Median ratio of CPU time per message, bare over engine (all of it, here and in PostgreSQL): ${cpuRatio.toFixed(2)}.

${ratio >= 0.8 ? '**Target met.**' : '**Target not met.**'} On two shared cores the ratio follows what each message costs in the engine
against the bare pool (client and SMTP server in one process). Each \`sequence_step\` job takes up to
${TAKEN_PER_JOB} other due steps off the queue and runs them with its own as one batch
(docs/sequences-engine.md "Steps taken together"): one statement claims the batch
(\`app_private.sequence_steps_claim\`: the per-message claim's rules as joins, the claim broadcasts use),
the messages go to the transport ${IN_FLIGHT} at a time, one statement records the answers
(\`app_private.sequence_steps_record\`).

Before it, at 0.48 (the run of the 24th, afternoon: bare 1,373 msg/s, engine 652), a job ran its own
step and 16 taken ones one after the other, two PL/pgSQL transactions a message:
\`sequence_step_claim\` 0.8 ms of wall time (of which \`build_sequence_message\` 0.45) and
\`sequence_step_record\` 0.85 ms (\`advance_enrollment\` 0.4, \`end_enrollments\` 0.35), with the
SMTP round trips of a job in series: about 0.9 ms of CPU a message in the worker's process and 1.2 ms
in PostgreSQL. With batches of 25 (and their messages handed over together) the ratio was 0.83;
with batches of 50, 0.88 to 0.90, the figure above.

Earlier changes it builds on: the SMTP transport keeps a pool by default (up to 5 connections, QUIT
after 1 s idle; \`?pool=false\` is one connection per message, about a tenth of the rate).
graphile-worker's \`add_jobs\` keeps one generic plan per connection (a setting on the function): it was
planned at every call (250 of the 320 µs of queueing one job). Checked without effect on the
ratio: raising the worker's concurrency to 8.
`;
console.log(section);
writeSection('delivery', section);
await pool.end();
await new Promise<void>((r) => smtp.close(() => r()));
await db.stop();
