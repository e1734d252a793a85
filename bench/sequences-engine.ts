// `node bench/sequences-engine.ts`: event → enrollment → first message in the outbox, against
// bare graphile-worker jobs that each insert one outbox row, on the same database in the same
// run. Loads one organization with BENCH_CONTACTS contacts and an active sequence triggered by
// an event (one email step, no delay, a send schedule open all week), then, alternating, in
// BENCH_ROUNDS rounds:
//   bare:   N jobs added in one statement, drained by a worker whose task inserts one outbox row;
//   engine: N events accepted in one statement (contacts_process_events' rows; the engine's
//           trigger enrolls each contact and schedules its step), drained by the worker running
//           sequence_step with the sink transport (claim, render, hand-off, record, move on).
// One unmeasured round of each comes first (the tables then hold rows, analyzed, as a running
// service's do). Each is timed from the first statement to the queue drained; the figure is messages per second
// and the ratio engine / bare (issue target: at least 0.5). Prints a markdown section.
//
//   BENCH_CONTACTS=20000 BENCH_ROUNDS=3 BENCH_CONCURRENCY=4
import os from 'node:os';
import pg from 'pg';
import { runOnce, type Task } from 'graphile-worker';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { sinkTransport } from '../src/delivery/sink.ts';
import { allTasks, workerLogger, workerPreset } from '../src/worker.ts';
import { benchServer, fmt, freshDatabase, writeSection } from './lib.ts';

const CONTACTS = Number(process.env.BENCH_CONTACTS || 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 4);
const DB_NAME = 'svc_bench_sequences_engine';
const started = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);

const db = await benchServer();
const ownerUrl = await freshDatabase(db, DB_NAME);

const pool = new pg.Pool({ connectionString: ownerUrl, max: CONCURRENCY + 4 });
const tenant = await adminApply(pool, {
  organization: { name: 'Bench engine', sending_email_domain: 'bench.example' },
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@engine.bench', role: 'owner' }],
}, AREAS);
const org = tenant.organization_id;
log(`loading ${fmt(CONTACTS)} contacts`);
await pool.query(`insert into app_public.contacts (organization_id, name, email)
  select $1::uuid, 'First' || g.i || ' Last', 'c' || g.i || '@example.com' from generate_series(1, $2::int) g(i)`, [org, CONTACTS]);
await pool.query(`insert into app_public.send_schedules (organization_id, name, timezone, is_default, windows)
  values ($1, 'Always', 'UTC', true, (select jsonb_agg(jsonb_build_object('day', d, 'start', '00:00', 'end', '24:00'))
    from unnest(array['mon','tue','wed','thu','fri','sat','sun']) d))`, [org]);
await pool.query(`insert into app_public.sequences (organization_id, name, trigger, steps, status)
  values ($1, 'Abandoned', '{"type": "event", "event": "assessment_abandoned"}',
    '[{"step_key": "hello", "type": "email", "subject": "Hi {{contact.first_name|there}}", "body": "You left before finishing, {{contact.first_name}}."}]',
    'active')`, [org]);
await pool.query('vacuum analyze');

const bareTask: Task = async (payload, helpers) => {
  const p = payload as { organization_id: string; n: number };
  await helpers.query(`insert into app_private.outbox (organization_id, channel, sender, recipient, subject, body, meta)
    values ($1, 'email', 'no-reply@bench.example', 'c' || $2 || '@example.com', 'Hi', 'Bare', '{}')`, [p.organization_id, p.n]);
};

// A fresh pool per drain, as a worker that starts: no plan cached while the tables were small.
async function drain(taskList: Parameters<typeof runOnce>[0]['taskList']) {
  const pgPool = new pg.Pool({ connectionString: ownerUrl, max: CONCURRENCY + 4 });
  pgPool.on('error', () => undefined);
  try {
    await runOnce({ pgPool, taskList, concurrency: CONCURRENCY, logger: workerLogger, preset: workerPreset });
  } finally {
    await pgPool.end();
  }
}

async function bare(): Promise<number> {
  const t0 = performance.now();
  await pool.query(`select graphile_worker.add_jobs(array(select row('bare_outbox', json_build_object('organization_id', $1::uuid, 'n', g.i),
      null, null, null, null, null, null)::graphile_worker.job_spec from generate_series(1, $2::int) g(i)))`, [org, CONTACTS]);
  await drain({ bare_outbox: bareTask });
  return CONTACTS / ((performance.now() - t0) / 1000);
}

let round = 0;
async function engine(): Promise<number> {
  round++;
  const t0 = performance.now();
  await pool.query(`insert into app_private.contact_events (organization_id, contact_id, kind, event, key, fields, subscription_ids, receipt)
    select c.organization_id, c.id, 'fire', 'assessment_abandoned', 'r' || $2 || '-' || c.id, '{}',
           array(select s.id from app_private.event_subscriptions s where s.organization_id = $1),
           jsonb_build_object('status', 'accepted', 'key', 'r' || $2 || '-' || c.id)
      from app_public.contacts c where c.organization_id = $1`, [org, round]);
  const t1 = performance.now();
  await drain(allTasks({ transports: { email: sinkTransport, sms: sinkTransport }, baseUrl: 'https://svc.example' }));
  const t2 = performance.now();
  const { rows: [{ n }] } = await pool.query(`select count(*)::int as n from app_public.enrollments where organization_id = $1 and status = 'completed'`, [org]);
  if (n !== CONTACTS * round) throw new Error(`expected ${CONTACTS * round} completed enrollments, found ${n}`);
  log(`engine round ${round}: enroll ${((t1 - t0) / 1000).toFixed(1)} s, send ${((t2 - t1) / 1000).toFixed(1)} s`);
  return CONTACTS / ((t2 - t0) / 1000);
}

// one round of each first, unmeasured: the tables hold what a running service's do, and are analyzed
await bare();
await engine();
await pool.query('vacuum analyze');
await pool.query('select pg_stat_reset()');
const results: { bare: number; engine: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const b = await bare();
  const e = await engine();
  results.push({ bare: b, engine: e });
  log(`round ${i + 1}: bare ${b.toFixed(0)} msg/s, engine ${e.toFixed(0)} msg/s, ratio ${(e / b).toFixed(2)}`);
  await pool.query(`delete from app_private.outbox where organization_id = $1`, [org]);
  await pool.query('vacuum analyze');
}
const { rows: scans } = await pool.query(`select relname, seq_scan, seq_tup_read, idx_scan from pg_stat_user_tables
  where schemaname in ('app_public', 'app_private') and seq_tup_read > 1000 order by seq_tup_read desc`);
log(`sequential scans in the measured rounds: ${JSON.stringify(scans)}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratio = median(results.map((r) => r.engine / r.bare));
const section = `
## Sequences engine: event → enrollment → first message, against bare graphile-worker jobs

Produced by \`BENCH_CONTACTS=${CONTACTS} BENCH_ROUNDS=${ROUNDS} BENCH_CONCURRENCY=${CONCURRENCY} DATABASE_URL=… node bench/sequences-engine.ts\`
on ${new Date().toISOString().slice(0, 10)}: ${fmt(CONTACTS)} contacts, one unmeasured round of each, then ${ROUNDS} measured
rounds alternating, worker concurrency ${CONCURRENCY}, ${os.cpus().length} cores shared with the database. Each round is timed
from the first statement (the bare jobs added; the events accepted) to the queue drained.

| round | bare jobs (msg/s) | engine (msg/s) | ratio |
|---|---|---|---|
${results.map((r, i) => `| ${i + 1} | ${r.bare.toFixed(0)} | ${r.engine.toFixed(0)} | ${(r.engine / r.bare).toFixed(2)} |`).join('\n')}

Median ratio: **${ratio.toFixed(2)}** (target ≥ 0.5). Sequential scans over 1,000 rows in the measured rounds:
${scans.length ? scans.map((r) => `\`${r.relname}\` ${fmt(Number(r.seq_scan))} scans, ${fmt(Number(r.seq_tup_read))} rows`).join('; ') : 'none'}.
`;
console.log(section);
writeSection('sequences-engine', section);
await pool.end();
await db.stop();
