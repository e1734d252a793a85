// `npm run bench:mcp`: MCP `tools/call contacts_get` against REST `GET /api/v1/contacts/{id}` on
// the same server process, at 1 and 16 connections, alternating rounds; the figure is the ratio
// of the medians' p50, with the server's CPU time per request beside it (steadier than latency
// on a shared machine). Writes the `mcp` section of bench/RESULTS.md.
//
//   BENCH_CONTACTS=10000 BENCH_SECONDS=5 BENCH_ROUNDS=5
//   BENCH_ONLY=mcp        measure one side only, to profile it (node --cpu-prof bench/mcp.ts; RESULTS.md untouched)
//
// What an MCP call adds to a REST call does not depend on the number of contacts (the same
// statement runs under both), so the organization is small and loads in seconds.
import os from 'node:os';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import pg from 'pg';
import { loginUrlFor } from '../src/db/connect.ts';
import { benchServer, closedLoop, cpuOf, fmt, freshDatabase, startTarget, writeSection, type ClosedLoop } from './lib.ts';

const env = process.env;
const CONTACTS = Number(env.BENCH_CONTACTS || 10_000);
const SECONDS = Number(env.BENCH_SECONDS || 5);
const ROUNDS = Number(env.BENCH_ROUNDS || 5);
const CONNECTIONS = [1, 16];

// its own database, so other benches can run beside it
const db = await benchServer();
const ownerUrl = await freshDatabase(db, 'svc_bench_mcp');
const bench = { db, ownerUrl, loginUrl: loginUrlFor(ownerUrl, db.loginPassword), owner: new pg.Pool({ connectionString: ownerUrl, max: 4 }) };
const org = await adminApply(bench.owner, {
  organization: { name: 'Bench MCP' },
  locations: [{ ref: 'main', name: 'Main' }],
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@mcp.bench', role: 'owner' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
}, AREAS);
await bench.owner.query(`insert into app_public.contacts (organization_id, name, email)
  select $1::uuid, 'Contact ' || g, 'contact' || g || '@mcp.bench' from generate_series(1, $2::int) g`, [org.organization_id, CONTACTS]);
await bench.owner.query('vacuum analyze');
const ids = (await bench.owner.query<{ id: string }>('select id from app_public.contacts where organization_id = $1 order by random() limit 1000',
  [org.organization_id])).rows.map((r) => r.id);
const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
const key = org.keys.org!;

const { url, child } = await startTarget(['svc', bench.ownerUrl, bench.loginUrl, org.organization_id]);

type Kind = 'rest' | 'mcp';
type Measured = ClosedLoop & { cpu: number };
let rpcId = 0;
function run(kind: Kind, connections: number, seconds: number) {
  return kind === 'rest'
    ? closedLoop({ url, key, connections, seconds, next: () => ({ path: `/api/v1/contacts/${pick()}` }) })
    : closedLoop({ url, key, connections, seconds, method: 'POST', next: () => ({
      path: '/api/v1/mcp',
      // what the SDK's client sends: JSON first, so the answer is JSON, not an SSE stream
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: 'contacts_get', arguments: { contactId: pick() } } }),
    }) });
}
async function measure(kind: Kind, connections: number): Promise<Measured> {
  const before = await cpuOf(child);
  const r = await run(kind, connections, SECONDS);
  const cpu = ((await cpuOf(child)) - before) / r.count;
  if (r.errors) throw new Error(`${kind}: ${r.errors} errors`);
  return { ...r, cpu };
}

const runs = new Map<string, Measured[]>();
const loads: number[] = [];
try {
  for (const kind of ['rest', 'mcp'] as const) await run(kind, 16, 2); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(os.loadavg()[0]!);
    for (const connections of CONNECTIONS) {
      // alternate which goes first, so a trend on the machine falls on both
      const order = (round % 2 ? ['mcp', 'rest'] as const : ['rest', 'mcp'] as const).filter((k) => !env.BENCH_ONLY || k === env.BENCH_ONLY);
      for (const kind of order) {
        const m = await measure(kind, connections);
        const k = `${kind}/${connections}`;
        runs.set(k, [...(runs.get(k) ?? []), m]);
        console.log(`round ${round + 1} ${k}: p50 ${fmt(m.p50, 2)} ms, ${fmt(m.rps)} req/s, ${fmt(m.cpu)} µs CPU/request`);
      }
    }
  }
} finally {
  // SIGINT lets the server exit on its own, writing its profile when run with --cpu-prof
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
  await bench.owner.end();
  await bench.db.stop();
}

if (env.BENCH_ONLY) process.exit(0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const stat = (k: string, f: (m: Measured) => number) => median(runs.get(k)!.map(f));
const command = [...['BENCH_CONTACTS', 'BENCH_SECONDS', 'BENCH_ROUNDS'].filter((k) => env[k]).map((k) => `${k}=${env[k]}`),
  ...(env.DATABASE_URL ? ['DATABASE_URL=…'] : []), 'npm run bench:mcp'].join(' ');
const rows = CONNECTIONS.map((c) => {
  const p50 = (k: Kind) => stat(`${k}/${c}`, (m) => m.p50);
  const cpu = (k: Kind) => stat(`${k}/${c}`, (m) => m.cpu);
  const rps = (k: Kind) => stat(`${k}/${c}`, (m) => m.rps);
  // the ratio within each round (the two ran back to back), then the median of those
  const paired = median(runs.get(`mcp/${c}`)!.map((m, i) => m.p50 / runs.get(`rest/${c}`)![i]!.p50));
  const rounds = runs.get(`mcp/${c}`)!.map((m, i) => fmt(m.p50 / runs.get(`rest/${c}`)![i]!.p50, 2)).join(', ');
  return `| ${c} | ${fmt(p50('rest'), 2)} | ${fmt(p50('mcp'), 2)} | **${fmt(p50('mcp') / p50('rest'), 2)}** | ${fmt(paired, 2)} (${rounds}) | ${fmt(cpu('rest'))} | ${fmt(cpu('mcp'))} | ${fmt(cpu('mcp') / cpu('rest'), 2)} | ${fmt(rps('rest'))} | ${fmt(rps('mcp'))} |`;
});
const md = `## MCP tools/call against the same REST call

Produced by \`${command}\` (bench/mcp.ts) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores, Node ${process.version},
PostgreSQL from ${env.DATABASE_URL ? 'DATABASE_URL' : 'the embedded server'}; one organization of ${fmt(CONTACTS)} contacts, one server
process (bench/target.ts, pool of 20). REST \`GET /api/v1/contacts/{id}\` and MCP \`tools/call contacts_get\` (stateless, no
session, \`Accept: application/json, text/event-stream\` as the SDK's client sends it, so a JSON answer) alternate over
${ROUNDS} rounds of ${SECONDS} s per figure, closed loop; each cell is the median of the rounds. CPU is the server process's
user + system time per request. Load average (1 min) at the start of each round: ${loads.map((l) => fmt(l, 1)).join(', ')}.

| connections | REST p50 ms | MCP p50 ms | MCP ÷ REST p50 (goal ≤ 1.3) | median of each round's ratio (rounds) | REST CPU µs/req | MCP CPU µs/req | CPU ratio | REST req/s | MCP req/s |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

Where an MCP call's cost went (\`node --cpu-prof\` of the server under this bench, \`BENCH_ONLY=mcp\`), and what
changed (src/mcp/endpoint.ts). Before, at a load average of 15–23, one round: MCP 1,400–2,500 µs CPU per
request against REST's 300–530 (ratio 4.4–4.6), p50 4.3–4.8× REST's:
- a new Ajv instance per request: the SDK's \`Server\` builds its JSON Schema validator when none is given
  (the largest single item of the MCP path in the profile); now one shared instance;
- a second round trip: \`app_hidden.authorize_mcp\` with every operation's requirements (7 KB of JSON
  parsed by PostgreSQL, 70 names parsed back) before the call's own round trip; now the requirements are
  sent only with a \`tools/list\`, and a lone \`tools/call\` of a read runs the setting's check as a
  one-time filter of the read itself, in the call's round trip;
- the SDK's Node adapter (@hono/node-server: a web Request and Response per request, a stream per answer),
  the SDK server's per-request zod parsing of the JSON-RPC message and of the result, and its close: a
  lone JSON \`tools/call\` of a read is answered directly (the same JSON-RPC answer, tested), anything else goes
  through the SDK's web-standard transport without the Node adapter;
- the answer: the body is serialized once, its JSON serving as the text and as \`structuredContent\` (it was
  serialized twice, as text and again as the structured object);
- tools and JSON Schemas: converted once with the registry (they were converted per \`tools/list\`).

The CPU ratio is the steady figure on this shared machine; p50s of single rounds swing by 3× with the
load (see each round's ratio), so the ratio of the medians and the median of the rounds' ratios are both
given. Writes, batches and SSE answers still take the SDK path (not measured here; they keep
two round trips for a write: the setting's check, then the call).
`;
writeSection('mcp', md);
console.log(md);
