// `node bench/delivery-webhook.ts`: the inbound SMS webhook of issue 16 against contacts_upsert,
// in one run. Each webhook request is a signed Twilio inbound SMS from a new number (a new
// contact, its thread, the message, the AI's job queued); each upsert creates a new contact.
// Closed loop at BENCH_CONNECTIONS connections for BENCH_SECONDS, alternating, BENCH_ROUNDS
// rounds after one unmeasured round of each. Target: webhook req/s ≥ 0.5 × contacts_upsert's.
// Writes the `delivery-webhook` section of bench/RESULTS.md.
//
//   BENCH_SECONDS=8 BENCH_ROUNDS=3 BENCH_CONNECTIONS=8
import os from 'node:os';
import pg from 'pg';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { loginUrlFor } from '../src/db/connect.ts';
import { twilioSignature } from '../src/delivery/twilio.ts';
import { benchServer, closedLoop, freshDatabase, startTarget, writeSection } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS || 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 8);
const TOKEN = 'bench-twilio-token';
const NUMBER = '+15550000001';

const db = await benchServer();
const ownerUrl = await freshDatabase(db, 'svc_bench_delivery_webhook');
const owner = new pg.Pool({ connectionString: ownerUrl, max: 2 });
const tenant = await adminApply(owner, {
  organization: { name: 'Bench SMS', default_sms_number: '+15550000000' },
  locations: [{ ref: 'north', name: 'North', sms_number: NUMBER }],
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@sms.bench', role: 'owner' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
}, AREAS);
const key = tenant.keys.org!;
const target = await startTarget(['svc', ownerUrl, loginUrlFor(ownerUrl, db.loginPassword), tenant.organization_id],
  { TWILIO_AUTH_TOKEN: TOKEN, SVC_RATE_LIMIT: 'off' });

let n = 0;
const inbound = () => {
  const i = ++n;
  const params = { MessageSid: `SMbench${i}`, AccountSid: 'ACbench', From: `+1666${String(i).padStart(7, '0')}`, To: NUMBER,
    Body: 'Hi, do you have an opening on Friday afternoon?' };
  return { path: '/webhooks/twilio/sms', body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(TOKEN, `${target.url}/webhooks/twilio/sms`, params) } };
};
const upsert = () => ({ path: '/api/v1/contacts', body: JSON.stringify({ email: `new${++n}@upsert.example`, name: 'New Person' }) });
const run = (next: () => { path: string; body?: string; headers?: Record<string, string> }, seconds = SECONDS) =>
  closedLoop({ url: target.url, key, connections: CONNECTIONS, seconds, method: 'POST', next });

await run(inbound, 2);
await run(upsert, 2);
const results: { webhook: number; upsert: number; errors: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const w = await run(inbound);
  const u = await run(upsert);
  results.push({ webhook: w.rps, upsert: u.rps, errors: w.errors + u.errors });
  console.log(`round ${i + 1}: webhook ${w.rps.toFixed(0)} req/s, contacts_upsert ${u.rps.toFixed(0)} req/s, ratio ${(w.rps / u.rps).toFixed(2)}, errors ${w.errors + u.errors}`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratio = median(results.map((r) => r.webhook / r.upsert));
const section = `
## Delivery: the inbound SMS webhook against contacts_upsert

Produced by \`BENCH_SECONDS=${SECONDS} BENCH_ROUNDS=${ROUNDS} BENCH_CONNECTIONS=${CONNECTIONS} DATABASE_URL=… node bench/delivery-webhook.ts\`
on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores shared with the database. Closed loop, ${CONNECTIONS} connections,
${SECONDS} s each, alternating after one unmeasured round of each. Webhook: a signed Twilio inbound SMS from a new number
each time (signature checked, contact created, thread opened, message stored, the AI's job queued). contacts_upsert: a new
contact each time.

| round | webhook (req/s) | contacts_upsert (req/s) | ratio | errors |
|---|---|---|---|---|
${results.map((r, i) => `| ${i + 1} | ${r.webhook.toFixed(0)} | ${r.upsert.toFixed(0)} | ${(r.webhook / r.upsert).toFixed(2)} | ${r.errors} |`).join('\n')}

Median ratio: **${ratio.toFixed(2)}** (target ≥ 0.5).
`;
console.log(section);
writeSection('delivery-webhook', section);
target.child.kill('SIGINT');
await owner.end();
await db.stop();
