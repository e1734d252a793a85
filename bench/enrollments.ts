// `node bench/enrollments.ts`: the enrollment lists over HTTP against one organization holding
// 1,000,000 enrollments, with contacts_get measured in the same run, in alternating rounds, as
// the yardstick (issue goal: sequences_list_enrollments page p95 ≤ 2 × contacts_get's). Writes
// the `enrollments` section of bench/RESULTS.md with the plans PostgreSQL chose (auto_explain).
//
//   BENCH_ENROLLMENTS=1000000  enrollments in the organization
//   BENCH_CONTACTS=200000      its contacts (each enrolled several times: once live at most per sequence)
//   BENCH_SEQUENCES=10         its sequences; half the enrollments are in the first ("Big")
//   BENCH_SECONDS=8 BENCH_ROUNDS=3 BENCH_PACE=0.25
//   BENCH_REUSE=1              keep an already loaded svc_bench_enrollments database of the same size
//   BENCH_ONLY=regex           measure only the matching requests and print them (RESULTS.md untouched)
//
// The data is loaded as the owner with set-based SQL (generate_series), not through the API.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { adminApply } from '../src/admin/commands.ts';
import type { Applied } from '../src/admin/fixture.ts';
import { hashKey } from '../src/auth/keys.ts';
import { loginUrlFor } from '../src/db/connect.ts';
import { migrate } from '../src/db/migrate.ts';
import { AREAS } from '../src/areas.ts';
import { benchServer, closedLoop, cpuOf, databaseUrl, fmt, freshDatabase, LINK_LOCATIONS, percentile, postgresCpu, startTarget, writeSection } from './lib.ts';

const env = process.env;
const ENROLLMENTS = Number(env.BENCH_ENROLLMENTS || 1_000_000);
const CONTACTS = Number(env.BENCH_CONTACTS || 200_000);
const SEQUENCES = Number(env.BENCH_SEQUENCES || 10);
const SECONDS = Number(env.BENCH_SECONDS || 8);
const ROUNDS = Number(env.BENCH_ROUNDS || 3);
const PACE = Number(env.BENCH_PACE || 0.25);
const CONNECTIONS = 16;
const DB_NAME = 'svc_bench_enrollments';
const started = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);

const db = await benchServer();
const ownerUrl = databaseUrl(db, DB_NAME);
const loginUrl = loginUrlFor(ownerUrl, db.loginPassword);
const stateFile = new URL('./.out/enrollments.json', import.meta.url);
const size = { ENROLLMENTS, CONTACTS, SEQUENCES };
interface State { size: typeof size; big: Applied; sequences: string[]; loadSeconds: number }
let state: State | undefined;
if (env.BENCH_REUSE && existsSync(stateFile)) {
  const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as State;
  if (JSON.stringify(saved.size) === JSON.stringify(size)) state = saved;
}

const fixture = {
  organization: { name: 'Bench Enrollments' },
  locations: ['north', 'south', 'east', 'west'].map((ref) => ({ ref, name: ref })),
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@enrollments.bench', role: 'owner' }],
  api_keys: [
    { ref: 'org', kind: 'organization', created_by_ref: 'owner' },
    { ref: 'north_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['north'], powers: ['contacts', 'sequences'] },
  ],
};

// Enrollment i: contact i mod C, in round r = i div C. Half go to the first sequence, the rest
// spread over the others. Only round 0 may be live (one live enrollment per sequence and
// contact): 80 % active, 5 % paused; every later round has ended (completed, cancelled or
// failed). Newer rounds are newer; within a round, enrollment times spread over a day. Rows are
// written in the order of their times, so the table's order follows time as in a running service.
const LOAD_ENROLLMENTS = `
  insert into app_public.enrollments (organization_id, sequence_id, contact_id, status, current_step_index, current_step_key,
    next_step_due_at, next_run_at, paused_at, end_reason, source, created_at, updated_at)
  select $1::uuid, s.ids[case when h % 2 = 0 or array_length(s.ids, 1) = 1 then 1 else 2 + (h / 2) % (array_length(s.ids, 1) - 1) end],
         c.ids[1 + g.i % array_length(c.ids, 1)], st.status,
         case when st.live then 0 end, case when st.live then 'hello' end,
         case when st.live then at + interval '2 days' end, case when st.live then at + interval '2 days 1 hour' end,
         case when st.status = 'paused' then at + interval '1 day' end,
         case when not st.live then st.status end, 'event', at, at
    from generate_series(0, $2::int - 1) g(i)
    cross join (select array_agg(id order by created_at, id) as ids from app_public.sequences where organization_id = $1::uuid) s
    cross join (select array_agg(id order by id) as ids from app_public.contacts where organization_id = $1::uuid) c
    cross join lateral (select abs(hashint4(g.i)) as h, g.i / array_length(c.ids, 1) as round) x
    cross join lateral (select now() - interval '400 days' + x.round * interval '30 days' + (h % 86400) * interval '1 second' as at) t
    cross join lateral (select case when x.round = 0 and h % 100 < 80 then 'active' when x.round = 0 and h % 100 < 85 then 'paused'
                                    when h % 100 < 90 then 'cancelled' when h % 100 < 93 then 'failed' else 'completed' end as status) st0
    cross join lateral (select st0.status, st0.status in ('active', 'paused') as live) st
   -- in time order, as a running service writes them (each enrollment at its creation)
   order by t.at`;

async function load(): Promise<State> {
  const t0 = Date.now();
  await freshDatabase(db, DB_NAME);
  const owner = new pg.Client(ownerUrl);
  await owner.connect();
  try {
    const pool = new pg.Pool({ connectionString: ownerUrl, max: 1 });
    const big = await adminApply(pool, fixture, AREAS);
    await pool.end();
    const org = big.organization_id;
    log(`${fmt(CONTACTS)} contacts`);
    await owner.query(`insert into app_public.contacts (organization_id, name, email, phone)
      select $1, 'Contact ' || i, 'contact' || i || '@enrollments.example', '+1' || (2010000000 + i)::text
        from generate_series(1, $2::int) i`, [org, CONTACTS]);
    await owner.query(LINK_LOCATIONS, [org]);
    await owner.query(`insert into app_public.send_schedules (organization_id, name, timezone, is_default, windows)
      select $1, 'Any time', 'UTC', true, jsonb_agg(jsonb_build_object('day', d, 'start', '00:00', 'end', '24:00'))
        from unnest(array['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']) d`, [org]);
    const steps = JSON.stringify([{ step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Hi', body: 'Hello' },
      { step_key: 'nudge', type: 'sms', delay: { days: 2 }, body: 'Still there?' }]);
    const { rows: seqs } = await owner.query(`insert into app_public.sequences (organization_id, name, steps, trigger, status, created_at)
      select $1, case when i = 1 then 'Big' else 'Sequence ' || i end, $3::jsonb, '{"type": "manual"}', 'active',
             now() - interval '1 year' + i * interval '1 second'
        from generate_series(1, $2::int) i returning id`, [org, SEQUENCES, steps]);
    // secondary indexes built after the rows (same definitions)
    const { rows: indexes } = await owner.query<{ name: string; def: string }>(`select i.indexrelid::regclass::text as name,
      pg_get_indexdef(i.indexrelid) as def from pg_index i where i.indrelid = 'app_public.enrollments'::regclass and not i.indisprimary`);
    for (const ix of indexes) await owner.query(`drop index ${ix.name}`);
    await owner.query(`set maintenance_work_mem = '1GB'`);
    log(`${fmt(ENROLLMENTS)} enrollments`);
    await owner.query(LOAD_ENROLLMENTS, [org, ENROLLMENTS]);
    log('indexes');
    for (const ix of indexes) await owner.query(ix.def);
    await owner.query(`select app_private.fold_enrollment_counts($1, s.id) from app_public.sequences s where s.organization_id = $1`, [org]);
    log('vacuum analyze');
    await owner.query('vacuum analyze app_public.enrollments, app_public.contacts, app_public.contact_locations, app_private.enrollment_counts');
    return { size, big, sequences: seqs.map((s) => s.id as string), loadSeconds: Math.round((Date.now() - t0) / 1000) };
  } finally {
    await owner.end();
  }
}

if (!state) {
  log(`loading ${fmt(ENROLLMENTS)} enrollments of ${fmt(CONTACTS)} contacts in ${SEQUENCES} sequences into ${DB_NAME}`);
  state = await load();
  mkdirSync(new URL('./.out/', import.meta.url), { recursive: true });
  writeFileSync(stateFile, JSON.stringify(state));
  log(`loaded in ${state.loadSeconds} s`);
} else {
  log(`reusing ${DB_NAME}`);
  await migrate(ownerUrl, db.loginPassword, { withCurrent: true });
}
const { big, sequences } = state;
const bigSequence = sequences[0]!;

const owner = new pg.Client(ownerUrl);
await owner.connect();
const { rows: sample } = await owner.query<{ id: string; email: string }>(
  `select id, email from app_public.contacts tablesample system (10) where organization_id = $1 limit 5000`, [big.organization_id]);
const { rows: [sizes] } = await owner.query(`
  select (select count(*) from app_public.enrollments where organization_id = $1) as enrollments,
         (select count(*) from app_public.enrollments where organization_id = $1 and sequence_id = $2) as in_big,
         (select count(*) from app_public.enrollments where organization_id = $1 and sequence_id = $2 and status = 'active') as big_active,
         (select count(*) from app_private.enrollment_counts) as count_rows,
         pg_size_pretty(pg_table_size('app_public.enrollments')) as table_size,
         pg_size_pretty(pg_indexes_size('app_public.enrollments')) as index_size`, [big.organization_id, bigSequence]);
let n = 0;
const pick = <T>(xs: T[]): T => xs[(n++ * 7919) % xs.length]!;
const page = () => 1 + ((n++ * 31) % 20);

interface Workload { name: string; key: string; next: () => { path: string } }
interface Result { name: string; rps: number; p50: number; p95: number; p99: number; count: number; errors: number; rounds?: number[];
  cpu?: { server: number; postgres: number } }

const { url, child } = await startTarget(['svc', ownerUrl, loginUrl, big.organization_id], { SVC_RATE_LIMIT: '100000000' });

async function saturate(w: Workload, seconds: number): Promise<Result> {
  const before = { server: await cpuOf(child), postgres: postgresCpu() };
  const r = await closedLoop({ url, key: big.keys[w.key]!, connections: CONNECTIONS, seconds, next: w.next });
  return { name: w.name, ...r, cpu: { server: (await cpuOf(child) - before.server) / r.count, postgres: (postgresCpu() - before.postgres) / r.count } };
}

/** Open loop at a fixed rate over 16 keep-alive connections; latency from when each request was due (as bench/contacts.ts). */
async function paced(w: Workload, rate: number, seconds: number): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const target = new URL(url);
  const latencies: number[] = [];
  let errors = 0;
  const send = (due: number) => new Promise<void>((resolve) => {
    const req = http.request({ host: target.hostname, port: target.port, agent, method: 'GET', path: w.next().path,
      headers: { authorization: `Bearer ${big.keys[w.key]}` } }, (res) => {
      res.resume();
      res.on('end', () => {
        latencies.push(performance.now() - due);
        if ((res.statusCode ?? 500) >= 400) errors++;
        resolve();
      });
    });
    req.on('error', () => { errors++; resolve(); });
    req.end();
  });
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total;) {
    const now = performance.now();
    while (i < total && start + (i * 1000) / rate <= now) pending.push(send(start + (i++ * 1000) / rate));
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(pending);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { name: w.name, rps: rate, p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), p99: percentile(latencies, 0.99),
    count: latencies.length, errors };
}

const list = (q: string) => `/api/v1/sequences/${bigSequence}/enrollments?${q}`;
const workloads: Workload[] = [
  { name: 'contacts_get (yardstick)', key: 'org', next: () => ({ path: `/api/v1/contacts/${pick(sample).id}` }) },
  { name: 'sequences_list_enrollments, big sequence, pages 1–20', key: 'org', next: () => ({ path: list(`page=${page()}`) }) },
  { name: 'sequences_list_enrollments, big sequence, status=active, pages 1–20', key: 'org', next: () => ({ path: list(`status=active&page=${page()}`) }) },
  { name: 'sequences_list_enrollments, big sequence, status=failed, page 1', key: 'org', next: () => ({ path: list('status=failed') }) },
  { name: 'sequences_list_enrollments, big sequence, by email', key: 'org', next: () => ({ path: list(`email=${encodeURIComponent(pick(sample).email.toUpperCase())}`) }) },
  { name: 'sequences_list_enrollments, big sequence, by contact_id', key: 'org', next: () => ({ path: list(`contact_id=${pick(sample).id}`) }) },
  { name: 'sequences_list_enrollments, small sequence, page 1', key: 'org', next: () => ({ path: `/api/v1/sequences/${pick(sequences.slice(1))}/enrollments` }) },
  { name: 'contacts_list_enrollments', key: 'org', next: () => ({ path: `/api/v1/contacts/${pick(sample).id}/enrollments` }) },
];

const only = env.BENCH_ONLY ? new RegExp(env.BENCH_ONLY) : undefined;
const chosen = workloads.filter((w, i) => i === 0 || !only || only.test(w.name));
const loadBefore = os.loadavg()[0]!;
const sat = new Map<string, Result[]>();
const pace = new Map<string, Result[]>();
try {
  for (const w of chosen) await saturate(w, 2); // warm-up: prepared statements, caches
  // Alternating rounds: every workload once per round, contacts_get first, so the yardstick and
  // the lists meet the same moments of a shared machine.
  for (let round = 0; round < ROUNDS; round++) {
    for (const w of chosen) {
      const s = await saturate(w, SECONDS);
      sat.set(w.name, [...(sat.get(w.name) ?? []), s]);
      const p = await paced(w, Math.max(1, Math.round(s.rps * PACE)), SECONDS);
      pace.set(w.name, [...(pace.get(w.name) ?? []), p]);
      log(`round ${round + 1} ${w.name}: saturated ${fmt(s.rps)} req/s p95 ${fmt(s.p95, 1)} ms; paced ${fmt(p.rps)} req/s p95 ${fmt(p.p95, 1)} ms`);
    }
  }
} finally {
  child.kill();
}
const loadAfter = os.loadavg()[0]!;
for (const r of [...sat.values(), ...pace.values()].flat()) if (r.errors) throw new Error(`${r.name}: ${r.errors} failed requests`);
const medianOf = (rounds: Result[], by: (r: Result) => number): Result & { rounds: number[] } => {
  const sorted = [...rounds].sort((a, b) => by(a) - by(b));
  return { ...sorted[Math.floor(sorted.length / 2)]!, rounds: rounds.map(by) };
};
const results = chosen.map((w) => ({ w, s: medianOf(sat.get(w.name)!, (r) => r.p95), p: medianOf(pace.get(w.name)!, (r) => r.p95),
  sRps: medianOf(sat.get(w.name)!, (r) => r.rps) }));
if (only) {
  for (const r of results) console.log(r.w.name, 'saturated p95', r.s.rounds, 'paced p95', r.p.rounds);
  await owner.end();
  await db.stop();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Plans: EXPLAIN ANALYZE of each statement inside the functions (auto_explain), org key
// ---------------------------------------------------------------------------------------------
async function plans(statement: string, values: unknown[], pattern: RegExp, key = 'org'): Promise<string> {
  const c = new pg.Client(ownerUrl);
  await c.connect();
  const notices: string[] = [];
  c.on('notice', (m) => notices.push(m.message ?? ''));
  try {
    await c.query(`load 'auto_explain'`);
    await c.query('set jit = off');
    await c.query('begin');
    for (const s of ['log_analyze = on', 'log_buffers = on', 'log_nested_statements = on', 'log_min_duration = 0', 'log_level = notice', 'log_timing = on']) {
      await c.query(`set local auto_explain.${s}`);
    }
    await c.query('set local role svc_request');
    await c.query(`select app_hidden.authenticate($1, null, 'open', null)`, [hashKey(big.keys[key]!)]);
    await c.query(statement, values);
    notices.length = 0;
    await c.query(statement, values);
    return notices.filter((m) => pattern.test(m))
      .map((m) => m.replace(/^duration: [\d.]+ ms\s+plan:\n/, '').replace(/^Query Text: [\s\S]*?\n(?=\S+.*\(cost=)/m, '')
        .split('\n').filter((l) => !l.includes('(never executed)')).join('\n'))
      .join('\n') || '(no plan captured)';
  } finally {
    await c.query('rollback').catch(() => undefined);
    await c.end();
  }
}
const one = sample[0]!;
// the statements of app_hidden.sequence_enrollments_page: the ids of the page, the total, the rows
const ownerPage = /select e\.id from app_public\.enrollments e|'total', \(select|e\.id = any\(ids\)/;
const explain = {
  page: await plans(`select app_public.sequences_list_enrollments($1, null, null, null, 3, 25)`, [bigSequence], ownerPage),
  status: await plans(`select app_public.sequences_list_enrollments($1, 'active', null, null, 1, 25)`, [bigSequence], ownerPage),
  email: await plans(`select app_public.sequences_list_enrollments($1, null, null, $2, 1, 25)`, [bigSequence, one.email.toUpperCase()], /c\.email_key = lower|x\.contact_id = sequence_enrollments_page\.contact_id/),
  contact: await plans(`select app_public.contacts_list_enrollments($1, 1, 25)`, [one.id], /e\.contact_id = contacts_list_enrollments\.contact_id/),
  get: await plans(`select app_public.contacts_get($1)`, [one.id], /from app_public\.contacts\s+where organization_id/),
  limited: await plans(`select app_hidden.sequence_enrollment_count($1, null)`, [sequences[1]], /count\(\*\)/, 'north_mgr'),
};
// How long a location-limited manager's count takes (counted under its policies, row by row)
const limitedMs: number[] = [];
{
  const c = new pg.Client(ownerUrl);
  await c.connect();
  for (const seq of [sequences[1]!, bigSequence]) {
    await c.query('begin');
    await c.query('set local role svc_request');
    await c.query(`select app_hidden.authenticate($1, null, 'open', null)`, [hashKey(big.keys.north_mgr!)]);
    const t0 = performance.now();
    await c.query(`select app_public.sequences_list_enrollments($1, null, null, null, 1, 25)`, [seq]);
    limitedMs.push(performance.now() - t0);
    await c.query('rollback');
  }
  await c.end();
}
// PostgreSQL's own time per call, in one session with nothing else of ours running: steadier
// than HTTP latency on a shared machine (the statement as the service sends it, after the claims).
interface SqlTime { name: string; median: number; p95: number }
const sqlTimes: SqlTime[] = [];
{
  const c = new pg.Client(ownerUrl);
  await c.connect();
  await c.query('begin');
  await c.query('set local role svc_request');
  await c.query(`select app_hidden.authenticate($1, null, 'open', null)`, [hashKey(big.keys.org!)]);
  const cases: [string, (i: number) => [string, unknown[]]][] = [
    ['contacts_get (yardstick)', (i) => ['select app_public.contacts_get($1)', [sample[i % sample.length]!.id]]],
    ['sequences_list_enrollments, big sequence, pages 1–20', (i) => ['select app_public.sequences_list_enrollments($1, null, null, null, $2, 25)', [bigSequence, 1 + (i % 20)]]],
    ['sequences_list_enrollments, big sequence, page 1', () => ['select app_public.sequences_list_enrollments($1, null, null, null, 1, 25)', [bigSequence]]],
    ['sequences_list_enrollments, big sequence, page 400 (OFFSET 9,975)', () => ['select app_public.sequences_list_enrollments($1, null, null, null, 400, 25)', [bigSequence]]],
    ['sequences_list_enrollments, big sequence, status=active, pages 1–20', (i) => ['select app_public.sequences_list_enrollments($1, \'active\', null, null, $2, 25)', [bigSequence, 1 + (i % 20)]]],
    ['sequences_list_enrollments, big sequence, by email', (i) => ['select app_public.sequences_list_enrollments($1, null, null, $2, 1, 25)', [bigSequence, sample[i % sample.length]!.email.toUpperCase()]]],
    ['contacts_list_enrollments', (i) => ['select app_public.contacts_list_enrollments($1, 1, 25)', [sample[i % sample.length]!.id]]],
  ];
  for (const [name, statement] of cases) {
    const times: number[] = [];
    for (let i = 0; i < 330; i++) {
      const [text, values] = statement(i);
      const t0 = performance.now();
      await c.query(text, values);
      if (i >= 30) times.push(performance.now() - t0); // the first 30 warm the caches and plans
    }
    times.sort((a, b) => a - b);
    sqlTimes.push({ name, median: percentile(times, 0.5), p95: percentile(times, 0.95) });
  }
  await c.query('rollback');
  await c.end();
}
await owner.end();
await db.stop();

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------
const command = [...['BENCH_ENROLLMENTS', 'BENCH_CONTACTS', 'BENCH_SEQUENCES', 'BENCH_SECONDS', 'BENCH_ROUNDS', 'BENCH_PACE', 'BENCH_REUSE']
  .filter((k) => env[k]).map((k) => `${k}=${env[k]}`), ...(env.DATABASE_URL ? ['DATABASE_URL=…'] : []), 'node bench/enrollments.ts'].join(' ');
const ms = (x: number) => fmt(x, 1);
const yard = results[0]!;
const ratio = (a: number, b: number) => `${fmt(a / b, 2)}×`;
const rows = results.map(({ w, s, p, sRps }) => `| ${w.name} | ${fmt(sRps.rps)} | ${ms(s.p50)} | ${ms(s.p95)} (${s.rounds.map(ms).join(', ')}) | `
  + `${ratio(s.p95, yard.s.p95)} | ${fmt(p.rps)}: ${ms(p.p50)} / ${ms(p.p95)} (${p.rounds.map(ms).join(', ')}) | ${ratio(p.p95, yard.p.p95)} | `
  + `${fmt(sRps.cpu!.server)} + ${fmt(sRps.cpu!.postgres)} |`).join('\n');
const goal = results.filter(({ w }) => w.name.startsWith('sequences_list_enrollments, big sequence, pages'))[0];
const md = `## Enrollment lists at ${fmt(ENROLLMENTS)} enrollments

Produced by \`${command}\` (bench/enrollments.ts) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores,
${Math.round(os.totalmem() / 2 ** 30)} GiB, PostgreSQL from ${env.DATABASE_URL ? 'DATABASE_URL (the machine\'s own server, default settings)' : 'the embedded server'},
Node ${process.version}; load generator, server and PostgreSQL on the same machine (shared with other sessions' work).

Data: one organization with ${fmt(Number(sizes.enrollments))} enrollments of ${fmt(CONTACTS)} contacts (each at one of 4 locations) in ${SEQUENCES}
sequences, loaded as the owner with \`generate_series\` in ${state.loadSeconds} s (enrollments table ${sizes.table_size}, its indexes
${sizes.index_size}): half in the sequence "Big" (${fmt(Number(sizes.in_big))} enrollments, ${fmt(Number(sizes.big_active))} active), the rest spread
over the others; a contact's first enrollment in a sequence is live (80 % active, 5 % paused) or ended, later ones ended.
app_private.enrollment_counts held ${sizes.count_rows} rows. Every request is authenticated with an organization key and runs under RLS;
the server runs in its own process with a pool of ${env.BENCH_POOL || 20} and no rate limiter. List pages are drawn from pages
1–20 of 25 (OFFSET up to 475), contacts and emails from a sample of the organization's contacts.

Alternating rounds: in each of ${ROUNDS} rounds every request is measured in turn, contacts_get first, ${SECONDS} s **saturated** (closed
loop, ${CONNECTIONS} connections) then ${SECONDS} s **paced** (open loop at ${Math.round(PACE * 100)} % of that round's saturated throughput,
latency from when each request was due). Reported: saturated requests/s and CPU from the median round by throughput,
latencies from the median round by p95, with every round's p95. Load average ${fmt(loadBefore, 1)} before, ${fmt(loadAfter, 1)}
after: other sessions' tests and benches ran on the same 2 cores and the same PostgreSQL meanwhile, so single rounds
swing widely, and the PostgreSQL CPU column (every postgres process of the machine, from /proc) includes their work.

| request | saturated req/s | p50 ms | p95 ms (rounds) | p95 vs contacts_get | paced rate: p50 / p95 ms (rounds' p95) | paced p95 vs contacts_get | CPU µs per request: server + PostgreSQL |
|---|---:|---:|---:|---:|---:|---:|---:|
${rows}

| goal | saturated | paced |
|---|---|---|
| sequences_list_enrollments page p95 ≤ 2 × contacts_get's | ${goal ? `${ms(goal.s.p95)} / ${ms(yard.s.p95)} ms = ${ratio(goal.s.p95, yard.s.p95)} (${goal.s.p95 <= 2 * yard.s.p95 ? 'met' : 'not met'})` : '–'} | ${goal ? `${ms(goal.p.p95)} / ${ms(yard.p.p95)} ms = ${ratio(goal.p.p95, yard.p.p95)} (${goal.p.p95 <= 2 * yard.p.p95 ? 'met' : 'not met'})` : '–'} |

PostgreSQL's time per call, one session (as the request role with the organization key's claims, the statement as the service
sends it, 300 calls after 30 to warm up; round trip on localhost included, no HTTP):

| call | median ms | p95 ms | median vs contacts_get |
|---|---:|---:|---:|
${sqlTimes.map((x) => `| ${x.name} | ${fmt(x.median, 2)} | ${fmt(x.p95, 2)} | ${ratio(x.median, sqlTimes[0]!.median)} |`).join('\n')}

How \`total\` stays exact and cheap: each change of an enrollment's status is appended as a delta row to
app_private.enrollment_counts by the enrollments' triggers (app_private.tg_enrollments__count_*), folded now and then into one row per status,
so the total of a sequence (or of one status) is the sum of a few rows, for a caller that reaches every contact of the
organization. Other callers see only their contacts' enrollments and are counted row by row under their policies: a
location-limited manager's first page took ${limitedMs.map((x) => `${fmt(x)} ms`).join(' and ')} (a small sequence, then "Big"; one call each,
as the owner's session under the manager's claims), which grows with the sequence. The page itself comes from
enrollments_by_sequence (or enrollments_by_sequence_status with a status, enrollments_by_contact with a contact or an
email, read as the owner for the same callers), newest first; deep pages pay their OFFSET (read from the index alone).

### Plans (auto_explain inside the SQL functions, organization key unless noted)

Page 3 of "Big": the count from the delta rows, then the page from the index:
\`\`\`
${explain.page}
\`\`\`

status=active, page 1:
\`\`\`
${explain.status}
\`\`\`

By email (the contact by its email_key under the caller's policies, then, as the owner, its enrollments in the sequence):
\`\`\`
${explain.email}
\`\`\`

contacts_list_enrollments:
\`\`\`
${explain.contact}
\`\`\`

contacts_get (the yardstick):
\`\`\`
${explain.get}
\`\`\`

A location-limited manager's count (row by row under the policies, "${'Sequence 2'}"):
\`\`\`
${explain.limited}
\`\`\`
`;
writeSection('enrollments', md);
log('bench/RESULTS.md: enrollments section written');
