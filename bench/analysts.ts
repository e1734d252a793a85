// `npm run bench:analysts`: an analyst's `select count(*)` over its organization's contacts on a
// hot standby, against the same count as the owner (a superuser: no row-level security), on the
// same standby in the same run. Target: the analyst's count costs at most 1.5 times the owner's.
//
// A primary and a streaming standby of their own (test/helpers/replica.ts: system PostgreSQL, or
// the project's embedded one with a low-level base backup); BENCH_CONTACTS contacts in the
// measured organization and as many in another one, each linked to one of three locations;
// the analysts made by src/admin/analysts.ts (the code behind `svc admin analyst create`).
// Writes its section of bench/RESULTS.md.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createAnalyst } from '../src/admin/analysts.ts';
import { startReplicaPair } from '../test/helpers/replica.ts';
import { fmt, LINK_LOCATIONS, writeSection } from './lib.ts';

const CONTACTS = Number(process.env.BENCH_CONTACTS || 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 7);
const REPEATS = Number(process.env.BENCH_REPEATS || 5);

const loadBefore = os.loadavg()[0]!;
const pair = await startReplicaPair();
const primary = new pg.Pool({ connectionString: pair.primaryUrl, max: 2 });
try {
  const orgs: string[] = [];
  for (const name of ['Measured', 'Other']) {
    const { rows: [o] } = await primary.query(`insert into app_public.organizations (name) values ($1) returning id`, [name]);
    orgs.push(o.id);
    await primary.query(`insert into app_public.locations (organization_id, name) select $1, l from unnest(array['North', 'South', 'West']) l`, [o.id]);
    console.log(`loading ${fmt(CONTACTS)} contacts into ${name}…`);
    for (let from = 0; from < CONTACTS; from += 100_000) {
      await primary.query(`insert into app_public.contacts (organization_id, name, email)
        select $1, 'Contact ' || g, 'c' || g || '@' || $4 || '.example' from generate_series($2::int, $3::int) g`,
      [o.id, from + 1, Math.min(from + 100_000, CONTACTS), name.toLowerCase()]);
    }
    await primary.query(LINK_LOCATIONS, [o.id]);
  }
  const [measured] = orgs as [string, string];
  const { rows: [north] } = await primary.query(`select id from app_public.locations where organization_id = $1 and name = 'North'`, [measured]);
  await primary.query('vacuum analyze');
  const credentials = (url: string) => {
    const u = new URL(url);
    return pair.replicaUrlAs(decodeURIComponent(u.username), decodeURIComponent(u.password));
  };
  const whole = await createAnalyst(primary, pair.primaryUrl, { org: measured, name: 'bench' });
  const limited = await createAnalyst(primary, pair.primaryUrl, { org: measured, name: 'bench_north', locations: north.id });
  await pair.caughtUp(300_000);

  // Two sessions per kind: one with parallel query off (each count scans in one process: the
  // work it costs), one as configured (the owner's count may use parallel workers; the analyst's
  // cannot, see below).
  const url = { owner: pair.replicaUrl, analyst: credentials(whole.connection_string), north: credentials(limited.connection_string) };
  const sessions: Record<string, pg.Client> = {};
  for (const [kind, u] of Object.entries(url)) {
    for (const mode of ['serial', 'default']) {
      const c = new pg.Client(u);
      await c.connect();
      if (mode === 'serial') await c.query('set max_parallel_workers_per_gather = 0');
      sessions[`${kind}/${mode}`] = c;
    }
  }
  const ownerCount = { text: `select count(*)::int as n from app_public.contacts where organization_id = $1`, values: [measured] };
  const analystCount = { text: `select count(*)::int as n from app_public.contacts`, values: [] };
  const queryOf = (key: string) => (key.startsWith('owner/') ? ownerCount : analystCount);

  /** Median ms of REPEATS runs of one count (after one unmeasured run), and its answer. */
  async function time(c: pg.Client, q: { text: string; values: unknown[] }) {
    let n = 0;
    await c.query(q);
    const ms: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      const t0 = performance.now();
      n = (await c.query(q)).rows[0].n;
      ms.push(performance.now() - t0);
    }
    return { ms: ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!, n };
  }

  const keys = Object.keys(sessions);
  const rounds: Record<string, number>[] = [];
  const counts: Record<string, number> = {};
  for (let r = 0; r < ROUNDS; r++) {
    const round: Record<string, number> = {};
    for (const key of keys) {
      const { ms, n } = await time(sessions[key]!, queryOf(key));
      round[key] = ms;
      counts[key] = n;
    }
    rounds.push(round);
  }
  if (counts['analyst/serial'] !== CONTACTS || counts['owner/serial'] !== CONTACTS || counts['analyst/default'] !== CONTACTS) {
    throw new Error(`counts differ: ${JSON.stringify(counts)}`);
  }
  const plan = async (key: string) =>
    (await sessions[key]!.query({ text: `explain (costs off) ${queryOf(key).text}`, values: queryOf(key).values })).rows.map((r) => r['QUERY PLAN']).join('\n');
  const plans = { ownerSerial: await plan('owner/serial'), analystSerial: await plan('analyst/serial'), ownerDefault: await plan('owner/default') };
  for (const c of Object.values(sessions)) await c.end();
  const { rows: [version] } = await primary.query(`select current_setting('server_version') as v`);

  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const m = (key: string) => med(rounds.map((r) => r[key]!));
  const ratio = m('analyst/serial') / m('owner/serial');
  const ratioDefault = m('analyst/default') / m('owner/default');
  const loadAfter = os.loadavg()[0]!;
  const command = [...['BENCH_CONTACTS', 'BENCH_ROUNDS', 'BENCH_REPEATS'].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]}`),
    'npm run bench:analysts'].join(' ');
  const row = (who: string, statement: string, key: string) => `| ${who} | \`${statement}\` | ${fmt(counts[key]!)} | ${fmt(m(key), 1)} |`;
  const md = `## Analysts: count(*) on a replica, under row-level security and without

Produced by \`${command}\` (bench/analysts.ts) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores,
${Math.round(os.totalmem() / 2 ** 30)} GiB, PostgreSQL ${version.v} (${pair.binaries.from}), a primary and a hot standby of
their own (standby made by ${pair.backup}), both on this machine, shared with other work (load average
${fmt(loadBefore, 1)} when the bench started, ${fmt(loadAfter, 1)} when it ended: on a loaded machine the figures move by tens of percent between runs). ${fmt(CONTACTS)} contacts in the
measured organization and ${fmt(CONTACTS)} in another, each linked to one of three locations; \`vacuum analyze\` on the
primary, replayed. Every count runs on the standby. Each figure is the median of ${ROUNDS} rounds; a round times each
count ${REPEATS} times after one unmeasured run and takes the median; the counts alternate within every round.

With parallel query off in every session (\`max_parallel_workers_per_gather = 0\`: each count is one process scanning
one organization's rows, so the time is the work it costs):

| who | statement | rows | ms |
|---|---|---:|---:|
${row('owner (superuser, no RLS)', 'select count(*) from app_public.contacts where organization_id = $1', 'owner/serial')}
${row('analyst of the organization', 'select count(*) from app_public.contacts', 'analyst/serial')}
${row('analyst of one location (North)', 'select count(*) from app_public.contacts', 'north/serial')}

Ratio analyst / owner: **${fmt(ratio, 2)}×** (target ≤ 1.5×).

As configured (parallel query allowed, up to 2 workers):

| who | rows | ms |
|---|---:|---:|
| owner (superuser, no RLS) | ${fmt(counts['owner/default']!)} | ${fmt(m('owner/default'), 1)} |
| analyst of the organization | ${fmt(counts['analyst/default']!)} | ${fmt(m('analyst/default'), 1)} |
| analyst of one location (North) | ${fmt(counts['north/default']!)} | ${fmt(m('north/default'), 1)} |

Ratio analyst / owner: **${fmt(ratioDefault, 2)}×**. The owner's count may run in parallel; the analyst's may not: the
contacts policy calls \`app_hidden.current_own_client_ids()\` (a definer helper not marked PARALLEL SAFE), and one
such function anywhere in a statement keeps PostgreSQL from planning it in parallel. Marking it PARALLEL SAFE (it only
reads) would let the analyst's count go parallel too; it would also allow parallel plans for the API's statements under
that policy, a change to the request path this work leaves to a decision of its own.

All rounds, ms (${keys.join(', ')}):
${rounds.map((r) => keys.map((k) => fmt(r[k]!, 1)).join(' / ')).join('; ')}.

Plans on the standby. They need not have the same shape: the owner's organization is a literal, whose share of the
table the planner knows (half of it here: a sequential scan is likely), while the analyst's comes from a one-time
initplan, a value the planner cannot see when it plans (it estimates few rows, and tends to scan the primary key's index).

\`\`\`
-- owner, parallel off
${plans.ownerSerial}
-- owner, as configured
${plans.ownerDefault}
-- analyst (the same plan either way)
${plans.analystSerial}
\`\`\`

What the analyst pays for beyond the owner's scan is the policy's filter, evaluated on every row (the owner's scan has
none): \`(($14 = 'all') OR (id = ANY ($15))) AND ($1 OR (SubPlan 7))\`, where $14 is the records level and $1 \"reaches
every location\", both one-time. Written in the policy as \`(select app_hidden.current_records_level() = 'all')\`, the
comparison would be made once too, leaving a test of two booleans per row; that is the contacts policy's text
as first written, not changed here.

The analyst's claims are read once per statement (the policies call the helpers as
\`(select app_hidden.current_org_id())\`: one-time initplans, each one lookup of the analyst's row by \`session_user\`);
the policy's location test is answered per row by the one-time "reaches every location" for an organization-wide
analyst, and its subplan runs only for a location-limited one. Analyst roles run with \`jit = off\`
(src/admin/analysts.ts): the policies' subplans push the estimated cost of this count past the JIT thresholds, and
compiling it took about 250 ms, ten times the scan. The issue's size: \`BENCH_CONTACTS=1000000 npm run bench:analysts\`.`;
  writeSection('analysts', md);
  console.log(md);
} finally {
  await primary.end();
  await pair.stop();
}
