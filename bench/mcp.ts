// `npm run bench:mcp`: MCP `tools/call contacts_get` against REST `GET /api/v1/contacts/{id}` on
// the same server process, at 1 and 16 connections, alternating rounds, in both flows: a 2025
// client's call (protocol version header 2025-11-25, after its initialize) and a 2026-07-28
// client's (the envelope in _meta, Mcp-Method/Mcp-Name headers); and the 2026-07-28 call through
// the SDK's createMcpHandler rather than the fast path (an SSE-first Accept), to show what the
// fast path is worth. The figure is the ratio of the medians' p50, with the server's CPU time per
// request beside it (steadier than latency on a shared machine). Writes the `mcp` section of
// bench/RESULTS.md.
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

type Kind = 'rest' | 'mcp' | 'mcp26' | 'mcp26sdk';
const KINDS: readonly Kind[] = ['rest', 'mcp', 'mcp26', 'mcp26sdk'];
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' } };
type Measured = ClosedLoop & { cpu: number };
let rpcId = 0;
function run(kind: Kind, connections: number, seconds: number) {
  if (kind === 'rest') return closedLoop({ url, key, connections, seconds, next: () => ({ path: `/api/v1/contacts/${pick()}` }) });
  const modern = kind !== 'mcp';
  return closedLoop({ url, key, connections, seconds, method: 'POST', next: () => ({
    path: '/api/v1/mcp',
    // what the SDK's client sends: JSON first, so the answer is JSON, not an SSE stream
    headers: {
      accept: kind === 'mcp26sdk' ? 'text/event-stream, application/json' : 'application/json, text/event-stream',
      'mcp-protocol-version': modern ? '2026-07-28' : '2025-11-25',
      ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'contacts_get' } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call',
      params: { name: 'contacts_get', arguments: { contactId: pick() }, ...(modern ? { _meta: ENVELOPE } : {}) } }),
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
  for (const kind of KINDS) await run(kind, 16, 2); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(os.loadavg()[0]!);
    for (const connections of CONNECTIONS) {
      // alternate which goes first, so a trend on the machine falls on both
      const order = (round % 2 ? [...KINDS].reverse() : KINDS).filter((k) => !env.BENCH_ONLY || k === env.BENCH_ONLY);
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
const LABEL: Record<Exclude<Kind, 'rest'>, string> = {
  mcp: '2025-11-25 (after initialize), fast path', mcp26: '2026-07-28 (stateless), fast path', mcp26sdk: '2026-07-28 through the SDK (createMcpHandler)',
};
const rows = CONNECTIONS.flatMap((c) => (['mcp', 'mcp26', 'mcp26sdk'] as const).map((kind) => {
  const p50 = (k: Kind) => stat(`${k}/${c}`, (m) => m.p50);
  const cpu = (k: Kind) => stat(`${k}/${c}`, (m) => m.cpu);
  const rps = (k: Kind) => stat(`${k}/${c}`, (m) => m.rps);
  // the ratio within each round (the two ran in the same round), then the median of those
  const ratios = runs.get(`${kind}/${c}`)!.map((m, i) => m.p50 / runs.get(`rest/${c}`)![i]!.p50);
  const rounds = ratios.map((r) => fmt(r, 2)).join(', ');
  const goal = kind === 'mcp26sdk' ? '' : '**';
  return `| ${c} | ${LABEL[kind]} | ${fmt(p50('rest'), 2)} | ${fmt(p50(kind), 2)} | ${goal}${fmt(p50(kind) / p50('rest'), 2)}${goal} | ${fmt(median(ratios), 2)} (${rounds}) | ${fmt(cpu('rest'))} | ${fmt(cpu(kind))} | ${fmt(cpu(kind) / cpu('rest'), 2)} | ${fmt(rps('rest'))} | ${fmt(rps(kind))} |`;
}));
const md = `## MCP tools/call against the same REST call

Produced by \`${command}\` (bench/mcp.ts) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores, Node ${process.version},
PostgreSQL from ${env.DATABASE_URL ? 'DATABASE_URL' : 'the embedded server'}; one organization of ${fmt(CONTACTS)} contacts, one server
process (bench/target.ts, pool of 20). REST \`GET /api/v1/contacts/{id}\` and MCP \`tools/call contacts_get\` (no
session, \`Accept: application/json, text/event-stream\` as the SDK's clients send it, so a JSON answer) in both flows:
a 2025-11-25 client's call and a 2026-07-28 client's (envelope in \`_meta\`, \`Mcp-Method\`/\`Mcp-Name\`), plus the
2026-07-28 call taken through the SDK's \`createMcpHandler\` instead of the fast path (an SSE-first Accept, answered
JSON all the same). They alternate over ${ROUNDS} rounds of ${SECONDS} s per figure, closed loop; each cell is the median of the rounds. CPU is the server process's
user + system time per request. Load average (1 min) at the start of each round: ${loads.map((l) => fmt(l, 1)).join(', ')}.

| connections | MCP flow | REST p50 ms | MCP p50 ms | MCP ÷ REST p50 (goal ≤ 1.3) | median of each round's ratio (rounds) | REST CPU µs/req | MCP CPU µs/req | CPU ratio | REST req/s | MCP req/s |
|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
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

With the 2026-07-28 revision the fast path serves both flows: a 2026-07-28 call qualifies when its envelope
and headers agree (version header and \`_meta\` version 2026-07-28, client capabilities an object,
\`Mcp-Method\`/\`Mcp-Name\` naming the call), and its answer adds \`resultType\` and the server's identity as the
SDK's would (tested equal). The row "through the SDK" is the same call without it: what the fast path is worth.

The CPU ratio is the steady figure on this shared machine; p50s of single rounds swing by 3× with the
load (see each round's ratio), so the ratio of the medians and the median of the rounds' ratios are both
given. Writes, batches and SSE answers still take the SDK path (not measured here; they keep
two round trips for a write: the setting's check, then the call).
`;
writeSection('mcp', md);
console.log(md);
