// `npm run bench:voice`: the receptionist on the phone, the two ratios of its issue in one run.
//   1. Time to the first streamed chunk of a turn answered by the built-in receptionist, p95,
//      against contacts_get's p95 on the same server. Target ≤ 3×.
//   2. With a fake OpenAI-compatible model that answers at once: the first streamed chunk's p95
//      against the whole non-streamed answer's p95 of the same turns. Target ≤ 1.5×.
// One request at a time, rounds alternating the measured kinds; each turn a new turn of a call
// (a call takes 50 turns, then the next call begins). Writes the `voice` section of bench/RESULTS.md.
//
//   BENCH_ROUNDS=3 BENCH_SAMPLES=60
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { loginUrlFor } from '../src/db/connect.ts';
import { adminVoiceSecret } from '../src/voice/secret.ts';
import { COMPLETIONS_PATH } from '../src/voice/completions.ts';
import { benchServer, fmt, freshDatabase, percentile, startTarget, writeSection } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SAMPLES = Number(process.env.BENCH_SAMPLES || 60);
const loadBefore = os.loadavg()[0]!;

const db = await benchServer();
const ownerUrl = await freshDatabase(db, 'svc_bench_voice');
const loginUrl = loginUrlFor(ownerUrl, db.loginPassword);
const owner = new pg.Pool({ connectionString: ownerUrl, max: 2 });
const tenant = await adminApply(owner, {
  organization: { name: 'Bench Dental', default_sms_number: '+15550000000' },
  locations: [{ ref: 'north', name: 'North', timezone: 'America/New_York', sms_number: '+15550000001',
    hours: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, open: '09:00', close: '17:00' })) }],
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@bench.example', role: 'owner' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
  contacts: [{ ref: 'ann', name: 'Ann', phone: '+15551230001', location_refs: ['north'] }],
}, AREAS);
const { secret } = await adminVoiceSecret(owner, tenant.organization_id);

const fake = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'fake',
      choices: [{ index: 0, message: { role: 'assistant', content: 'We are open Monday to Friday, nine to five. Anything else?' }, finish_reason: 'stop' }] }));
  });
});
await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
const fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;

const builtIn = await startTarget(['svc', ownerUrl, loginUrl, tenant.organization_id], { VOICE_RATE_LIMIT: '1000000' });
const withModel = await startTarget(['svc', ownerUrl, loginUrl, tenant.organization_id], { AI_BASE_URL: fakeUrl, VOICE_RATE_LIMIT: '1000000' });

let calls = 0;
function caller(prefix: string) {
  let call = '';
  let messages: { role: string; content: string }[] = [];
  return () => {
    if (messages.length >= 100) messages = [];
    if (!messages.length) call = `${prefix}-${++calls}`;
    messages.push({ role: 'user', content: 'What are your opening hours?' });
    const body = messages.slice();
    messages.push({ role: 'assistant', content: 'ok' });
    return { call, body };
  };
}

/** Milliseconds to the first chunk (streamed) or to the whole answer (not). */
async function turn(url: string, next: ReturnType<typeof caller>, stream: boolean): Promise<number> {
  const { call, body } = next();
  const t0 = performance.now();
  const res = await fetch(url + COMPLETIONS_PATH, { method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ stream, messages: body, metadata: { call_id: call, from: '+15557770001', to: '+15550000001' } }) });
  if (res.status !== 200) throw new Error(`turn answered ${res.status}: ${await res.text()}`);
  if (!stream) {
    await res.json();
    return performance.now() - t0;
  }
  const reader = res.body!.getReader();
  const first = await reader.read();
  const at = performance.now() - t0;
  if (first.done) throw new Error('no chunk');
  while (!(await reader.read()).done) { /* the rest of the stream */ }
  return at;
}

async function contactsGet(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/contacts/${tenant.ids.ann}`, { headers: { authorization: `Bearer ${tenant.keys.org}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`contacts_get answered ${res.status}`);
  return performance.now() - t0;
}

const times = { contacts: [] as number[], builtInFirst: [] as number[], modelFirst: [] as number[], modelWhole: [] as number[] };
const builtInCaller = caller('builtin');
const modelStreamCaller = caller('model-s');
const modelWholeCaller = caller('model-w');
for (let i = 0; i < 20; i++) { // warm both servers and their pools
  await contactsGet(builtIn.url);
  await turn(builtIn.url, builtInCaller, true);
  await turn(withModel.url, modelStreamCaller, true);
  await turn(withModel.url, modelWholeCaller, false);
}
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < SAMPLES; i++) {
    times.contacts.push(await contactsGet(builtIn.url));
    times.builtInFirst.push(await turn(builtIn.url, builtInCaller, true));
    times.modelFirst.push(await turn(withModel.url, modelStreamCaller, true));
    times.modelWhole.push(await turn(withModel.url, modelWholeCaller, false));
  }
  console.log(`round ${round + 1}/${ROUNDS} done`);
}
builtIn.child.kill();
withModel.child.kill();
fake.close();
await owner.end();
await db.stop?.();

const p = (xs: number[], q: number) => percentile([...xs].sort((a, b) => a - b), q);
const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${fmt(p(xs, 0.5), 2)} | ${fmt(p(xs, 0.95), 2)} |`;
const r1 = p(times.builtInFirst, 0.95) / p(times.contacts, 0.95);
const r2 = p(times.modelFirst, 0.95) / p(times.modelWhole, 0.95);
const md = `## voice

\`BENCH_ROUNDS=${ROUNDS} BENCH_SAMPLES=${SAMPLES} npm run bench:voice\` (one request at a time, kinds alternating; load average ${fmt(loadBefore, 2)} before, ${os.cpus().length} cores)

| measured | samples | p50 ms | p95 ms |
|---|---|---|---|
${row('contacts_get', times.contacts)}
${row('first chunk, built-in receptionist', times.builtInFirst)}
${row('first chunk, fake model', times.modelFirst)}
${row('whole answer non-streamed, fake model', times.modelWhole)}

| ratio | value | target |
|---|---|---|
| built-in first chunk p95 / contacts_get p95 | ${fmt(r1, 2)} | ≤ 3 |
| model first chunk p95 / non-streamed p95 | ${fmt(r2, 2)} | ≤ 1.5 |

A turn writes the caller's words and the answer (two transactions) before its first byte: that
floor is what the first ratio measures against a one-statement read.`;
writeSection('voice', md);
console.log(md);
