// `node bench/sequences-enroll.ts`: sequences_enroll requests per second against contacts_get's,
// over HTTP at 16 connections, in the same run, alternating. Each enroll names a contact not yet
// in the sequence (a new enrollment, its event and its step's job: the full write), by id.
// Issue target: enroll ≥ 0.5 × contacts_get. Prints a markdown section.
//
//   BENCH_CONTACTS=200000 BENCH_SECONDS=6 BENCH_ROUNDS=5
import pg from 'pg';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { loginUrlFor } from '../src/db/connect.ts';
import { benchServer, closedLoop, fmt, freshDatabase, startTarget, writeSection } from './lib.ts';

const CONTACTS = Number(process.env.BENCH_CONTACTS || 200_000);
const SECONDS = Number(process.env.BENCH_SECONDS || 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const DB_NAME = 'svc_bench_sequences_enroll';
const started = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);

const db = await benchServer();
const ownerUrl = await freshDatabase(db, DB_NAME);
const loginUrl = loginUrlFor(ownerUrl, db.loginPassword);

const pool = new pg.Pool({ connectionString: ownerUrl, max: 2 });
const tenant = await adminApply(pool, {
  organization: { name: 'Bench enroll', sending_email_domain: 'bench.example' },
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@enroll.bench', role: 'owner' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
}, AREAS);
const org = tenant.organization_id;
log(`loading ${fmt(CONTACTS)} contacts`);
await pool.query(`insert into app_public.contacts (organization_id, name, email)
  select $1::uuid, 'First' || g.i || ' Last', 'c' || g.i || '@example.com' from generate_series(1, $2::int) g(i)`, [org, CONTACTS]);
await pool.query(`insert into app_public.send_schedules (organization_id, name, timezone, is_default, windows)
  values ($1, 'Weekdays', 'America/New_York', true, (select jsonb_agg(jsonb_build_object('day', d, 'start', '09:00', 'end', '17:00'))
    from unnest(array['mon','tue','wed','thu','fri']) d))`, [org]);
const { rows: [{ id: sequence }] } = await pool.query(`insert into app_public.sequences (organization_id, name, trigger, steps, status)
  values ($1, 'Manual', '{"type": "manual"}',
    '[{"step_key": "hello", "type": "email", "delay": {"hours": 1}, "subject": "Hi", "body": "Hello"}]', 'active') returning id`, [org]);
const ids: string[] = (await pool.query(`select id from app_public.contacts where organization_id = $1 order by random()`, [org])).rows.map((r) => r.id);
await pool.query('vacuum analyze');

const { url, child } = await startTarget(['svc', ownerUrl, loginUrl, org], { SVC_RATE_LIMIT: '100000000' });
const key = tenant.keys.org!;
let at = 0;
const get = () => closedLoop({ url, key, connections: 16, seconds: SECONDS, next: () => ({ path: `/api/v1/contacts/${ids[at++ % ids.length]}` }) });
let next = 0;
const enroll = () => closedLoop({ url, key, connections: 16, seconds: SECONDS, method: 'POST',
  next: () => ({ path: `/api/v1/sequences/${sequence}/enrollments`, body: JSON.stringify({ contact_id: ids[next++ % ids.length] }) }) });

await get();
const rows: { get: number; enroll: number; getP95: number; enrollP95: number; errors: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const g = await get();
  const e = await enroll();
  rows.push({ get: g.rps, enroll: e.rps, getP95: g.p95, enrollP95: e.p95, errors: g.errors + e.errors });
  log(`round ${i + 1}: contacts_get ${g.rps.toFixed(0)}/s, sequences_enroll ${e.rps.toFixed(0)}/s, ratio ${(e.rps / g.rps).toFixed(2)}`);
}
child.kill('SIGINT');
const { rows: [{ n }] } = await pool.query(`select count(*)::int as n from app_public.enrollments where organization_id = $1`, [org]);
if (next > CONTACTS) log(`warning: ${next} enrolls for ${CONTACTS} contacts: the later ones were skipped, not new`);
const ratios = rows.map((r) => r.enroll / r.get).sort((a, b) => a - b);
const section = `
## sequences_enroll against contacts_get

Produced by \`BENCH_CONTACTS=${CONTACTS} BENCH_SECONDS=${SECONDS} BENCH_ROUNDS=${ROUNDS} DATABASE_URL=… node bench/sequences-enroll.ts\`
on ${new Date().toISOString().slice(0, 10)}: ${fmt(CONTACTS)} contacts, 16 connections, ${SECONDS} s a measurement, ${ROUNDS} rounds
alternating; ${fmt(n)} enrollments made. docs/sequences-engine.md ("Performance") says where the time goes.

| round | contacts_get (req/s) | sequences_enroll (req/s) | ratio | p95 get / enroll (ms) | errors |
|---|---|---|---|---|---|
${rows.map((r, i) => `| ${i + 1} | ${r.get.toFixed(0)} | ${r.enroll.toFixed(0)} | ${(r.enroll / r.get).toFixed(2)} | ${r.getP95} / ${r.enrollP95} | ${r.errors} |`).join('\n')}

Median ratio: **${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}** (target ≥ 0.5).
`;
console.log(section);
writeSection('sequences-enroll', section);
await pool.end();
await db.stop();
