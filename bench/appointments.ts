// `npm run bench:appointments`: appointments_availability and appointments_create over HTTP
// against contacts_get, measured in the same run, alternating (issue 14, "Performance"): one
// location with 20 team members, 3 offerings and 2,000 appointments in the month measured.
// Targets: availability p95 ≤ 2 × contacts_get p95; booking requests/s ≥ 0.4 × contacts_get's.
// Writes the `appointments` section of bench/RESULTS.md, with the plans PostgreSQL chose inside
// the SQL functions (auto_explain).
//
//   BENCH_TEAM=20 BENCH_APPOINTMENTS=2000 BENCH_CONTACTS=2000 BENCH_SECONDS=5 BENCH_ROUNDS=3 BENCH_CONNECTIONS=8
//   BENCH_STATEMENTS=1 also prints every statement the two sampled calls ran, with its time
//
// The month's appointments are loaded as the owner with set-based SQL: each team member's spread
// over the weekdays of March 2030 (New York), never overlapping. Availability asks for a random
// weekday of that month and a random offering (every team member's busy time, merged). Each
// booking names a team member and a time of its own (weekdays from April 2030 on, every 30
// minutes), so the bookings measured succeed: the full write (idempotency claim, the checks, the
// insert under the exclusion constraint, own clients, the answer).
//
// Availability is measured twice: as served (answers kept until a change they read commits, so
// after the first asks of each day and offering most are kept answers) and computed every time,
// by a second server whose connections set availability.keep_answers = off. Booking is measured
// beside its floor: a bare express+pg route writing the same appointment row with one insert as
// the owner (constraints, indexes, triggers and commit; no authentication, policies, checks or
// idempotency record).
import pg from 'pg';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { hashKey } from '../src/auth/keys.ts';
import { loginUrlFor } from '../src/db/connect.ts';
import { backendsCpu, backendsCpuSince, benchServer, closedLoop, cpuOf, fmt, freshDatabase, startTarget, writeSection, type ClosedLoop } from './lib.ts';

const env = process.env;
const TEAM = Number(env.BENCH_TEAM || 20);
const APPOINTMENTS = Number(env.BENCH_APPOINTMENTS || 2_000);
const CONTACTS = Number(env.BENCH_CONTACTS || 2_000);
const SECONDS = Number(env.BENCH_SECONDS || 5);
const ROUNDS = Number(env.BENCH_ROUNDS || 3);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS || 8);
const DB_NAME = 'svc_bench_appointments';
const started = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);

const db = await benchServer();
const ownerUrl = await freshDatabase(db, DB_NAME);
const loginUrl = loginUrlFor(ownerUrl, db.loginPassword);
const pool = new pg.Pool({ connectionString: ownerUrl, max: 2 });

const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri'];
const tenant = await adminApply(pool, {
  organization: { name: 'Bench booking' },
  locations: [{ ref: 'main', name: 'Main', timezone: 'America/New_York', staffed: true, slot_interval_minutes: 15,
    hours: weekdays.map((day) => ({ day, open: '08:00', close: '18:00' })) }],
  users: [
    { ref: 'owner', name: 'Owner', email: 'owner@booking.bench', role: 'owner' },
    ...Array.from({ length: TEAM }, (_, i) => ({ ref: `t${i}`, name: `Team ${i}`, email: `t${i}@booking.bench`, role: 'member',
      location_refs: ['main'], staff_profile: true,
      ...(i % 4 === 3 ? { working_hours: weekdays.map((day) => ({ day, open: '10:00', close: '16:00' })) } : {}) })),
  ],
  offerings: [
    { ref: 'short', location_ref: 'main', name: 'Short', duration_minutes: 30 },
    { ref: 'medium', location_ref: 'main', name: 'Medium', duration_minutes: 45, team_member_refs: Array.from({ length: TEAM / 2 }, (_, i) => `t${i}`) },
    { ref: 'long', location_ref: 'main', name: 'Long', duration_minutes: 60 },
  ],
  api_keys: [{ ref: 'owner_personal', kind: 'personal', user_ref: 'owner' }],
}, AREAS);
const org = tenant.organization_id;
const location = tenant.ids.main!;
const offerings = [tenant.ids.short!, tenant.ids.medium!, tenant.ids.long!];
const team = Array.from({ length: TEAM }, (_, i) => (tenant.team_member_ids as unknown as Record<string, string>)[`t${i}`]!);
const key = tenant.keys.owner_personal!;

log(`loading ${fmt(CONTACTS)} contacts and ${fmt(APPOINTMENTS)} appointments in March 2030`);
await pool.query(`insert into app_public.contacts (organization_id, name, email)
  select $1::uuid, 'Client ' || g.i, 'client' || g.i || '@example.com' from generate_series(1, $2::int) g(i)`, [org, CONTACTS]);
// appointment k of team member m: weekday (k mod 21) of March 2030, slot (k div 21) of the day's
// two-hour slots from 10:00 New York, 30 or 60 minutes: never overlapping within a team member
await pool.query(`
  with days as (select d::date as d, row_number() over (order by d) - 1 as n
                  from generate_series('2030-03-01'::date, '2030-03-31', interval '1 day') d where extract(isodow from d) < 6),
       team as (select id, row_number() over (order by created_at, id) - 1 as m from app_public.staff_profiles where organization_id = $1),
       contacts as (select array_agg(id) as ids from app_public.contacts where organization_id = $1),
       offerings as (select array_agg(id order by duration_minutes) as ids, array_agg(duration_minutes order by duration_minutes) as mins
                       from app_public.offerings where organization_id = $1 and duration_minutes <> 45)
  insert into app_public.appointments (organization_id, location_id, staff_profile_id, offering_id, contact_id, title, starts_at, ends_at, source)
  select $1, $2, t.id, o.ids[1 + k % 2], c.ids[1 + (k * 7 + t.m::int * 13) % array_length(c.ids, 1)], 'Booked',
         ((d.d + time '10:00') + (k / 21) * interval '2 hours') at time zone 'America/New_York',
         ((d.d + time '10:00') + (k / 21) * interval '2 hours' + o.mins[1 + k % 2] * interval '1 minute') at time zone 'America/New_York',
         'fixture'
    from team t cross join generate_series(0, $3::int / $4::int - 1) k
    join days d on d.n = k % 21
    cross join contacts c cross join offerings o`, [org, location, APPOINTMENTS, TEAM]);
const { rows: [{ n: loaded }] } = await pool.query(`select count(*)::int as n from app_public.appointments where organization_id = $1
  and starts_at >= '2030-03-01' and starts_at < '2030-04-01'`, [org]);
const contacts: string[] = (await pool.query(`select id from app_public.contacts where organization_id = $1 order by random()`, [org])).rows.map((r) => r.id);
await pool.query('vacuum analyze');
log(`${fmt(loaded)} appointments in March 2030`);

const marchWeekdays = Array.from({ length: 31 }, (_, i) => `2030-03-${String(i + 1).padStart(2, '0')}`)
  .filter((d) => { const w = new Date(`${d}T12:00:00Z`).getUTCDay(); return w > 0 && w < 6; });

// bookings to make: team member i mod TEAM, its (i div TEAM)-th free half hour of the weekdays from
// 1 April 2030, 10:00–16:00 New York (inside everyone's hours)
function weekdaysFrom(first: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${first}T12:00:00Z`); days.length < 400; t += 86_400_000) {
    const w = new Date(t).getUTCDay();
    if (w > 0 && w < 6) days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}
/** The bookings of one series, each in a free half hour of its own (weekdays from `first`). */
function bookingSeries(first: string, keyPrefix: string): () => string {
  const days = weekdaysFrom(first);
  let made = 0;
  return () => {
    const i = made++;
    const m = i % TEAM;
    const n = Math.floor(i / TEAM);
    const day = days[Math.floor(n / 12) % days.length]!;
    const minutes = 10 * 60 + (n % 12) * 30;
    const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
    const mm = String(minutes % 60).padStart(2, '0');
    // New York's offset on the day (EST before the second Sunday of March, EDT after)
    const start = new Date(Date.parse(`${day}T${hh}:${mm}:00Z`) + nyOffsetHours(day) * 3_600_000).toISOString();
    const end = new Date(Date.parse(start) + 30 * 60_000).toISOString();
    return JSON.stringify({ location_id: location, offering_id: offerings[0], team_member_id: team[m], contact_id: contacts[i % contacts.length],
      start_time: start, end_time: end, idempotency_key: `${keyPrefix}-${i}` });
  };
}
/** Hours to add to a New York wall-clock time on this day to get UTC (kept per day: the load generator shares the CPU). */
const offsets = new Map<string, number>();
function nyOffsetHours(day: string): number {
  let hours = offsets.get(day);
  if (hours === undefined) {
    const local = new Date(`${day}T12:00:00Z`).toLocaleString('en-US', { timeZone: 'America/New_York', hour: 'numeric', hour12: false });
    offsets.set(day, (hours = 12 - Number(local)));
  }
  return hours;
}
const nextBooking = bookingSeries('2030-04-01', 'bench');
// the bare inserts (the floor below) take other days, so both series always find their time free
const nextBareInsert = bookingSeries('2034-01-02', 'bare');

const { url, child } = await startTarget(['svc', ownerUrl, loginUrl, org], { SVC_RATE_LIMIT: '100000000' });
// the same server, computing every answer (no answer kept or read)
const computingUrl = new URL(loginUrl);
computingUrl.searchParams.set('options', '-c availability.keep_answers=off');
const computing = await startTarget(['svc', ownerUrl, computingUrl.toString(), org], { SVC_RATE_LIMIT: '100000000' });
// express + pg writing the same appointment row with one insert as the owner: the floor
const bare = await startTarget(['bare', ownerUrl, loginUrl, org]);

interface Measured extends ClosedLoop { serverUs: number; postgresUs: number }
/** A closed-loop measurement with the CPU each request cost the server and PostgreSQL. */
async function measured(run: () => Promise<ClosedLoop>, target = child): Promise<Measured> {
  // per backend: one of another server's pool that closes meanwhile (idle) is left out, not
  // taken away with its whole past
  const [s0, p0] = [await cpuOf(target), await backendsCpu(pool)];
  const r = await run();
  const [s1, p1] = [await cpuOf(target), await backendsCpu(pool)];
  return { ...r, serverUs: (s1 - s0) / r.count, postgresUs: backendsCpuSince(p0, p1) / r.count };
}
let at = 0;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const get = () => measured(() => closedLoop({ url, key, connections: CONNECTIONS, seconds: SECONDS, next: () => ({ path: `/api/v1/contacts/${contacts[at++ % contacts.length]}` }) }));
const slotsPath = () => `/api/v1/appointments/availability?location_id=${location}&date=${pick(marchWeekdays)}&offering_id=${pick(offerings)}`;
const slots = () => measured(() => closedLoop({ url, key, connections: CONNECTIONS, seconds: SECONDS, next: () => ({ path: slotsPath() }) }));
const computed = () => measured(() => closedLoop({ url: computing.url, key, connections: CONNECTIONS, seconds: SECONDS,
  next: () => ({ path: slotsPath() }) }), computing.child);
const book = () => measured(() => closedLoop({ url, key, connections: CONNECTIONS, seconds: SECONDS, method: 'POST',
  next: () => ({ path: '/api/v1/appointments', body: nextBooking() }) }));
const bareInsert = () => measured(() => closedLoop({ url: bare.url, key, connections: CONNECTIONS, seconds: SECONDS, method: 'POST',
  next: () => ({ path: '/bare/appointments', body: nextBareInsert() }) }), bare.child);

// a check before measuring: one availability answer and one booking are what they should be
// (both servers answer the same)
const samplePath = `/api/v1/appointments/availability?location_id=${location}&date=2030-03-12&offering_id=${offerings[2]}`;
const [sample, sampleComputed] = await Promise.all([url, computing.url].map((u) => fetch(`${u}${samplePath}`,
  { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json()) as Promise<{ slots: unknown[] }>));
if (JSON.stringify(sample) !== JSON.stringify(sampleComputed)) throw new Error('a kept answer differs from the computed one');
log(`availability of 12 March 2030 (60 min): ${sample!.slots.length} slots`);

await get();
await slots();
await computed();
const rounds: { get: Measured; slots: Measured; computed: Measured; book: Measured; bare: Measured }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const g = await get();
  const s = await slots();
  const c = await computed();
  const b = await book();
  const f = await bareInsert();
  rounds.push({ get: g, slots: s, computed: c, book: b, bare: f });
  log(`round ${i + 1}: contacts_get ${g.rps.toFixed(0)}/s p95 ${g.p95.toFixed(1)} ms; availability ${s.rps.toFixed(0)}/s p95 ${s.p95.toFixed(1)} ms; `
    + `computed every time ${c.rps.toFixed(0)}/s p95 ${c.p95.toFixed(1)} ms; `
    + `appointments_create ${b.rps.toFixed(0)}/s p95 ${b.p95.toFixed(1)} ms (${b.errors} errors); bare insert ${f.rps.toFixed(0)}/s (${f.errors} errors); `
    + `CPU µs/request ${fmt(g.serverUs + g.postgresUs)} / ${fmt(s.serverUs + s.postgresUs)} / ${fmt(c.serverUs + c.postgresUs)} / `
    + `${fmt(b.serverUs + b.postgresUs)} / ${fmt(f.serverUs + f.postgresUs)}`);
}
const { rows: [{ n: kept }] } = await pool.query(`select count(*)::int as n from app_private.availability_answers where organization_id = $1`, [org]);
child.kill('SIGINT');
computing.child.kill('SIGINT');
bare.child.kill('SIGINT');
const { rows: [{ n: made }] } = await pool.query(`select count(*)::int as n from app_public.appointments where organization_id = $1 and source = 'api' and created_by is not null`, [org]);

// ---------------------------------------------------------------------------------------------
// The plans, as auto_explain records them inside the SQL functions (owner's personal key)
// ---------------------------------------------------------------------------------------------
async function plans(statement: string, values: unknown[], opts: { settings?: string[]; reads?: RegExp } = {}): Promise<string> {
  const c = new pg.Client(ownerUrl);
  const notices: string[] = [];
  await c.connect();
  c.on('notice', (m) => notices.push(m.message ?? ''));
  try {
    await c.query(`load 'auto_explain'`);
    for (const s of ['log_analyze = on', 'log_buffers = on', 'log_nested_statements = on', 'log_min_duration = 0', 'log_level = notice', 'log_timing = on']) {
      await c.query(`set auto_explain.${s}`);
    }
    await c.query('begin');
    await c.query('set local jit = off');
    for (const setting of opts.settings ?? []) await c.query(`set local ${setting}`);
    await c.query('set local role svc_request');
    await c.query(`select app_hidden.authenticate($1, null, 'scoped', null)`, [hashKey(key)]);
    await c.query('savepoint warm');
    await c.query(statement, values);
    await c.query('rollback to savepoint warm');
    notices.length = 0;
    await c.query(statement, values);
    if (env.BENCH_STATEMENTS) {
      // every statement the call runs, with its median time over 20 calls (log_analyze timings:
      // read them as shares of the whole)
      const times = new Map<string, number[]>();
      for (let i = 0; i < 20; i++) {
        const before = notices.length;
        await c.query('rollback to savepoint warm');
        await c.query(statement, values);
        notices.slice(before).forEach((m, n) => {
          const ms = Number(/^duration: ([\d.]+) ms/.exec(m)?.[1] ?? NaN);
          const q = `${String(n).padStart(3)} ${(/Query Text: ([\s\S]*?)\n\S/.exec(m)?.[1] ?? '').replace(/\s+/g, ' ').slice(0, 130)}`;
          times.set(q, [...(times.get(q) ?? []), ms]);
        });
      }
      const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
      console.log([...times].map(([q, xs]) => `${med(xs).toFixed(3).padStart(8)} ms  ${q}`).join('\n'));
    }
    // the statements that read or write appointments, each once (the top one is the function call)
    const seen = new Set<string>();
    return notices
      .filter((m) => (opts.reads ?? /app_public\.appointments|appointment_occurrences/).test(m) && !/^duration[\s\S]*Query Text: select app_public\./.test(m))
      .map((m) => m.replace(/^duration: ([\d.]+) ms\s+plan:\n/, '-- $1 ms\n').replace(/\n\s*Settings:.*$/m, ''))
      .filter((m) => { const q = /Query Text: ([\s\S]*?)\n\S/.exec(m)?.[1] ?? m; if (seen.has(q)) return false; seen.add(q); return true; })
      .join('\n\n') || '(no plan captured)';
  } finally {
    await c.query('rollback').catch(() => undefined);
    await c.end();
  }
}
const explainSlots = await plans(`select app_public.appointments_availability($1, '2030-03-12', $2)`, [location, offerings[2]],
  { settings: ['availability.keep_answers = off'] });
// the answer the server kept for that question, found and checked against the changes since
const explainKept = await plans(`select app_public.appointments_availability($1, '2030-03-12', $2)`, [location, offerings[2]],
  { reads: /app_private\.availability_/ });
const explainBook = await plans(`select app_public.appointments_create($1, null, $2, $3, null, $4, '2031-06-02T14:00:00Z', '2031-06-02T14:30:00Z', null)`,
  [location, offerings[0], team[1], contacts[0]]);
await pool.end();
await db.stop();

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------
const median = (xs: number[]) => {
  const known = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return known[Math.floor(known.length / 2)] ?? NaN;
};
const p95Ratio = median(rounds.map((r) => r.slots.p95 / r.get.p95));
const computedRatio = median(rounds.map((r) => r.computed.p95 / r.get.p95));
const rpsRatio = median(rounds.map((r) => r.book.rps / r.get.rps));
const floorRatio = median(rounds.map((r) => r.bare.rps / r.get.rps));
const ofFloor = median(rounds.map((r) => r.book.rps / r.bare.rps));
const command = [...['BENCH_TEAM', 'BENCH_APPOINTMENTS', 'BENCH_CONTACTS', 'BENCH_SECONDS', 'BENCH_ROUNDS', 'BENCH_CONNECTIONS']
  .filter((k) => env[k]).map((k) => `${k}=${env[k]}`), ...(env.DATABASE_URL ? ['DATABASE_URL=…'] : []), 'npm run bench:appointments'].join(' ');
const section = `
## Appointments: availability and booking against contacts_get

Produced by \`${command}\` on ${new Date().toISOString().slice(0, 10)} (a shared 2-core machine: the ratios, measured in the
same run and alternating, are what to read). One location (America/New_York, weekdays 08:00–18:00, 15-minute slots),
${TEAM} team members (a quarter of them on 10:00–16:00), 3 offerings (30, 45 and 60 minutes; the 45-minute one done by
half the team), ${fmt(loaded)} appointments in March 2030, ${fmt(CONTACTS)} contacts; ${CONNECTIONS} connections,
${SECONDS} s a measurement, ${ROUNDS} rounds, the owner's personal key for every request. Availability asks for a random
weekday of March and a random offering (63 questions), measured twice: as served, where an answer is kept until a
change it read commits (the bookings measured are in April and change none of them, so after the warm-up nearly every
answer is a kept one: ${fmt(kept)} kept at the end), and computed every time, by a second server whose connections set
\`availability.keep_answers = off\`. Each booking names a team member and a free half hour of its own (April 2030
on), so every booking measured is a full write: ${fmt(made)} made.

| round | contacts_get req/s, p95 ms | availability req/s, p95 ms | computed every time: req/s, p95 ms | appointments_create req/s, p95 ms | bare insert req/s | errors | availability p95 / get p95 | computed p95 / get p95 | create req/s / get req/s | bare insert req/s / get req/s |
|---|---|---|---|---|---|---|---|---|---|---|
${rounds.map((r, i) => `| ${i + 1} | ${r.get.rps.toFixed(0)}, ${r.get.p95.toFixed(1)} | ${r.slots.rps.toFixed(0)}, ${r.slots.p95.toFixed(1)} | `
  + `${r.computed.rps.toFixed(0)}, ${r.computed.p95.toFixed(1)} | `
  + `${r.book.rps.toFixed(0)}, ${r.book.p95.toFixed(1)} | ${r.bare.rps.toFixed(0)} | `
  + `${r.get.errors + r.slots.errors + r.computed.errors + r.book.errors + r.bare.errors} | `
  + `${(r.slots.p95 / r.get.p95).toFixed(2)} | ${(r.computed.p95 / r.get.p95).toFixed(2)} | ${(r.book.rps / r.get.rps).toFixed(2)} | `
  + `${(r.bare.rps / r.get.rps).toFixed(2)} |`).join('\n')}

Median ratios: availability p95 / contacts_get p95 **${p95Ratio.toFixed(2)}** (target ≤ 2); computed every time
**${computedRatio.toFixed(2)}**; appointments_create req/s / contacts_get req/s **${rpsRatio.toFixed(2)}** (target ≥ 0.4).
The floor: the same appointment row written by a bare express+pg route with one \`insert\` as the owner (the table's
constraints, indexes and triggers, and the commit; no authentication, policies, booking checks or idempotency record)
runs at **${floorRatio.toFixed(2)}** of contacts_get's requests/s, and appointments_create at **${ofFloor.toFixed(2)}** of that floor's.

CPU per request (µs, median round; server process + this database's PostgreSQL backends; waiting is not CPU):

| request | server | PostgreSQL | total | of contacts_get's |
|---|---|---|---|---|
${(['get', 'slots', 'computed', 'book', 'bare'] as const).map((k) => {
    const server = median(rounds.map((r) => r[k].serverUs));
    const postgres = median(rounds.map((r) => r[k].postgresUs));
    const base = median(rounds.map((r) => r.get.serverUs)) + median(rounds.map((r) => r.get.postgresUs));
    const name = { get: 'contacts_get', slots: 'appointments_availability', computed: 'appointments_availability, computed every time',
      book: 'appointments_create', bare: 'bare insert of the same row (the floor)' }[k];
    return `| ${name} | ${fmt(server)} | ${fmt(postgres)} | `
      + `${fmt(server + postgres)} | ${((server + postgres) / base).toFixed(1)}× |`;
  }).join('\n')}

Reading: a kept answer costs about what a primary-key read costs (the location and offering
read under the caller's policies, the answer found by its key, one index probe for changes its
snapshot missed). Computing one is about ${fmt(median(rounds.map((r) => r.computed.postgresUs)) / 1000, 1)} ms of PostgreSQL CPU (every team
member's busy rows of the day in one pass, the slot grid, the answer), and its p95 ratio moves with the
machine's load from run to run: that is what the first ask of a day after a change costs. A booking is a write under an idempotency record: the claim, the
write and the storing of its answer are one statement in one round trip (one WAL flush), plus its
checks and triggers (own clients, appointment_booked, webhooks, the change noted for kept
availability answers). Its requests/s ratio follows its
CPU per request (the table above), so it stays
under the target. The bare insert is the part no booking can shed: the row, its seven indexes (the
exclusion constraint among them), foreign keys, triggers and a durable commit. What
appointments_create adds to it is authentication, the caller's policies, the booking checks and the
idempotency record. docs/appointments-booking.md ("Performance") says what was changed and
what is left.

### Plans (auto_explain inside the SQL functions)

Availability of 12 March 2030 for the 60-minute offering, computed (the statements reading appointments and occurrences):

\`\`\`
${explainSlots}
\`\`\`

The same question answered by the answer the server kept (the statements reading the kept answers and the changes):

\`\`\`
${explainKept}
\`\`\`

A booking (appointments_create of a named team member):

\`\`\`
${explainBook}
\`\`\`
`;
console.log(section);
writeSection('appointments', section);
