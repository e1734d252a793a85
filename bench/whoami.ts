// `npm run bench`: authenticated me_get against a bare express+pg route doing the same
// primary-key lookup, in the same run on the same database, at 32 connections.
// Writes bench/RESULTS.md.
import os from 'node:os';
import { adminApply } from '../src/admin/commands.ts';
import { benchDatabase, cpuOf, fmt, load, startTarget, writeSection, type Load } from './lib.ts';
import { AREAS } from '../src/areas.ts';

const SECONDS = Number(process.env.BENCH_SECONDS || 15);
const CONNECTIONS = 32;
const ORGS = Number(process.env.BENCH_ORGS || 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);

const bench = await benchDatabase();
console.log(`loading ${ORGS} organizations with a key each…`);
const fixture = (i: number) => ({
  organization: { name: `Bench ${i}` },
  users: [{ ref: 'owner', name: 'Owner', email: `owner${i}@bench.example`, role: 'owner' }],
  locations: [{ ref: 'main', name: 'Main' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
});
let target = await adminApply(bench.owner, fixture(0), AREAS);
for (let i = 1; i < ORGS; i++) {
  const applied = await adminApply(bench.owner, fixture(i), AREAS);
  if (i === Math.floor(ORGS / 2)) target = applied;
}
await bench.owner.query('vacuum analyze');

type Measured = Load & { cpuPerRequest: number };

async function measure(kind: 'bare' | 'svc' | 'svc-limited', path: string, headers: Record<string, string> = {}): Promise<Measured> {
  const { url, child } = await startTarget([kind, bench.ownerUrl, bench.loginUrl, target.organization_id]);
  try {
    await load(url + path, { connections: CONNECTIONS, seconds: 3, headers }); // warm-up
    const before = await cpuOf(child);
    const r = await load(url + path, { connections: CONNECTIONS, seconds: SECONDS, headers });
    return { ...r, cpuPerRequest: ((await cpuOf(child)) - before) / r.requests };
  } finally {
    child.kill();
  }
}

// The two targets alternate over several rounds and the medians are compared, so a noisy
// moment on the machine does not decide the ratio.
const auth = { authorization: `Bearer ${target.keys.org}` };
const runs: { bare: Measured[]; me: Measured[]; limited: Measured[] } = { bare: [], me: [], limited: [] };
for (let round = 0; round < ROUNDS; round++) {
  runs.bare.push(await measure('bare', '/bare/org'));
  runs.me.push(await measure('svc', '/api/v1/me', auth));
  runs.limited.push(await measure('svc-limited', '/api/v1/me', auth));
}
for (const r of [...runs.bare, ...runs.me, ...runs.limited]) {
  if (r.non2xx || r.errors) throw new Error(`${r.non2xx} non-2xx answers, ${r.errors} errors`);
}
const median = (xs: Measured[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;
const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuMe = medianOf(runs.me.map((r) => r.cpuPerRequest));
const cpuLimited = medianOf(runs.limited.map((r) => r.cpuPerRequest));
const bare = median(runs.bare);
const me = median(runs.me);
const limited = median(runs.limited);
await bench.owner.end();
await bench.db.stop();

const ratio = me.rps / bare.rps;
const command = [...['BENCH_SECONDS', 'BENCH_ORGS', 'BENCH_ROUNDS'].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]}`),
  ...(process.env.DATABASE_URL ? ['DATABASE_URL=…'] : []), 'npm run bench'].join(' ');
const row = (name: string, r: Load) => `| ${name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} |`;
const md = `## Whoami against a bare baseline

Produced by \`${command}\` (bench/whoami.ts) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores,
${Math.round(os.totalmem() / 2 ** 30)} GiB, PostgreSQL from ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'the embedded server'},
Node ${process.version}. autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a 3 s warm-up, the server in its own
process, ${ORGS} organizations with a key each; both targets use a pool of 20 connections. The targets
alternate over ${ROUNDS} rounds; each row is the median round (all rounds: bare ${runs.bare.map((r) => fmt(r.rps)).join(', ')};
me_get ${runs.me.map((r) => fmt(r.rps)).join(', ')} requests/s).

| target | requests/s | p50 ms | p99 ms |
|---|---:|---:|---:|
${row('bare express + pg, primary-key lookup (no auth)', bare)}
${row('me_get: key lookup, scope check, claims, RLS read', me)}

Ratio me_get / bare: **${fmt(ratio * 100, 1)}%** (target ≥ 50%); me_get p99 **${fmt(me.p99, 1)} ms** (target < 25 ms).

### What the rate limiter costs

| target | requests/s | p50 ms | p99 ms |
|---|---:|---:|---:|
${row('me_get without rate limiting', me)}
${row('me_get counted by the rate limiter (shared store, limit never reached)', limited)}

Throughput difference of the medians: **${fmt((1 - limited.rps / me.rps) * 100, 1)}%** (all rounds limited: ${runs.limited.map((r) => fmt(r.rps)).join(', ')}
requests/s). Rounds of one target differ by more than that on this shared machine, so the server's own CPU time per
request (measured inside the target process, median of the rounds) is the steadier figure: **${fmt(cpuMe, 1)} µs**
without the limiter, **${fmt(cpuLimited, 1)} µs** with it, a cost of **${fmt((cpuLimited / cpuMe - 1) * 100, 1)}%** of the Node process's
work per request (target < 5% of throughput; PostgreSQL's share of a request is untouched: the limiter reaches it once a
second, never per request).

How: the key is resolved, authorized and the claims set by one security-definer call sent in the
same simple-protocol message as \`set local role\` and the read, both as prepared statements, so a
request costs one round trip and no planning (src/db/request.ts); the bare route also makes one.

Where the rest goes (CPU per request measured from /proc during a run like this one): the bare
route costs about 30 µs in Node and 25 µs in PostgreSQL; me_get about 55 µs in Node and 75 µs in
PostgreSQL. In PostgreSQL the authentication function dominates: its pinned \`search_path\`
(security definer), nine \`set_config\` calls and the JSON it returns each cost about as much as
the bare lookup (measured one by one with pgbench). Replacing the function by a plain prepared
statement over a security-barrier view keyed by the presented hash measured the same under
pgbench (about 15,000 transactions/s each), so the cost is the work itself — resolving the key,
setting the claims, applying the policies — not the language it is written in. In Node: the
larger answer (2 KB against 80 bytes), hashing the key and parsing three result sets. What is
left to try: fewer, packed claims, and a smaller answer for callers that do not need the
scope catalog.
`;
writeSection('whoami', md);
console.log(md);
