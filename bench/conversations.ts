// `npm run bench:conversations`: the two ratios of issue 15, in one run.
//   1. conversations_list with q over BENCH_MESSAGES messages (one organization; a tenth as many
//      contacts, each with one SMS or chat thread of ten messages; q in turn a common word, a
//      rare reference number, a client's full name) against contacts_search by q (a full name)
//      in the same organization: p95 of each at 8 connections, closed loop. Target ≤ 3×.
//   2. An inbound SMS to the AI's answer in the outbox (a fake OpenAI-compatible server that
//      answers at once; the worker running beside it), one at a time, against contacts_upsert's
//      p95 at one connection. Target ≤ 5×.
// Writes the `conversations` section of bench/RESULTS.md.
//
//   BENCH_MESSAGES=1000000 BENCH_SECONDS=8 BENCH_ROUNDS=3 BENCH_AI_SAMPLES=200
//
// The data is loaded as the owner with set-based SQL (generate_series), not through the API.
import { createServer } from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { inboundSms } from '../src/conversations/inbound.ts';
import { loginUrlFor } from '../src/db/connect.ts';
import { createTransports } from '../src/delivery/index.ts';
import { startWorker } from '../src/worker.ts';
import { benchServer, closedLoop, fmt, freshDatabase, LINK_LOCATIONS, percentile, startTarget, writeSection } from './lib.ts';

const env = process.env;
const MESSAGES = Number(env.BENCH_MESSAGES || 1_000_000);
const PER_THREAD = 10;
const SECONDS = Number(env.BENCH_SECONDS || 8);
const ROUNDS = Number(env.BENCH_ROUNDS || 3);
const AI_SAMPLES = Number(env.BENCH_AI_SAMPLES || 200);
const CONNECTIONS = 8;
const DB_NAME = 'svc_bench_conversations';
const started = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);

const FIRST = ['James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William',
  'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Charles', 'Karen'];
const LAST = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez',
  'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin'];
const WORDS = ['appointment', 'monday', 'tuesday', 'cleaning', 'crown', 'invoice', 'parking', 'reschedule', 'thanks', 'price',
  'insurance', 'whitening', 'checkup', 'morning', 'afternoon', 'cancel', 'confirm', 'filling', 'xray', 'braces', 'emergency',
  'tooth', 'pain', 'late', 'early', 'friday', 'saturday', 'address', 'hours', 'payment'];

const db = await benchServer();
log(`loading ${fmt(MESSAGES)} messages into ${DB_NAME}`);
const ownerUrl = await freshDatabase(db, DB_NAME);
const loginUrl = loginUrlFor(ownerUrl, db.loginPassword);
const owner = new pg.Pool({ connectionString: ownerUrl, max: 4 });
const tenant = await adminApply(owner, {
  organization: { name: 'Bench Dental', default_sms_number: '+15550000000', sending_email_domain: 'bench.example' },
  locations: [
    { ref: 'north', name: 'North', timezone: 'America/New_York', sms_number: '+15550000001',
      hours: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, open: '09:00', close: '17:00' })) },
    { ref: 'south', name: 'South', sms_number: '+15550000002' },
  ],
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@bench.example', role: 'owner' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
}, AREAS);
const org = tenant.organization_id;
const key = tenant.keys.org!;
const contacts = Math.ceil(MESSAGES / PER_THREAD);
{
  const t0 = Date.now();
  const c = await owner.connect();
  try {
    await c.query(`set maintenance_work_mem = '512MB'`);
    await c.query(`insert into app_public.contacts (organization_id, name, email, phone, sms_consent)
      select $1::uuid, ($3::text[])[1 + abs(hashint4(g.i) % 20)] || ' ' || ($4::text[])[1 + abs(hashint4(g.i + 1000003) % 20)],
             'client' || g.i || '@example.com', '+1' || (2010000000 + g.i)::text, true
        from generate_series(1, $2::int) g(i)`, [org, contacts, FIRST, LAST]);
    await c.query(LINK_LOCATIONS, [org]);
    log(`${fmt(contacts)} contacts`);
    await c.query(`insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address, created_at,
        last_message_at)
      select c.organization_id, c.id, cl.location_id, case when abs(hashtext(c.id::text) % 4) = 0 then 'chat' else 'sms' end,
             l.sms_number, s.at, s.at + interval '10 minutes'
        from app_public.contacts c
        join app_public.contact_locations cl on cl.organization_id = c.organization_id and cl.contact_id = c.id
        join app_public.locations l on l.organization_id = cl.organization_id and l.id = cl.location_id
        cross join lateral (select now() - abs(hashtext(c.id::text || 'at') % 31536000) * interval '1 second' as at) s
       where c.organization_id = $1::uuid`, [org]);
    const { rows: indexes } = await c.query<{ name: string; def: string }>(`select i.indexrelid::regclass::text as name,
        pg_get_indexdef(i.indexrelid) as def from pg_index i
       where i.indrelid = 'app_public.conversation_messages'::regclass and not i.indisprimary`);
    for (const ix of indexes) await c.query(`drop index ${ix.name}`);
    await c.query(`insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body,
        status, created_at)
      select cv.organization_id, cv.id, cv.channel, case when g.n % 2 = 1 then 'inbound' else 'outbound' end,
             case when g.n % 2 = 1 then 'contact' else 'ai' end,
             ($2::text[])[1 + abs(hashint8(h.x) % 30)] || ' ' || ($2::text[])[1 + abs(hashint8(h.x + 1) % 30)] || ' '
               || ($2::text[])[1 + abs(hashint8(h.x + 2) % 30)] || ' please, ' || ($2::text[])[1 + abs(hashint8(h.x + 3) % 30)]
               || case when abs(hashint8(h.x + 4) % 100) = 0 then ' (ref R' || abs(hashint8(h.x + 5) % 100000) || ')' else '' end,
             case when g.n % 2 = 1 then 'received' else 'sent' end, cv.created_at + g.n * interval '1 minute'
        from app_public.conversations cv
        cross join generate_series(1, ${PER_THREAD}) g(n)
        cross join lateral (select hashtext(cv.id::text)::bigint + g.n * 7919 as x) h
       where cv.organization_id = $1::uuid`, [org, WORDS]);
    log('messages; indexes');
    for (const ix of indexes) await c.query(ix.def);
    await c.query('vacuum analyze app_public.contacts, app_public.contact_locations, app_public.conversations, app_public.conversation_messages');
    await c.query('select app_private.refresh_search_trigrams()');
  } finally {
    c.release();
  }
  const { rows: [counted] } = await owner.query(`select count(*)::int as n from app_public.conversation_messages where organization_id = $1`, [org]);
  log(`loaded ${fmt(counted.n)} messages in ${Math.round((Date.now() - t0) / 1000)} s`);
}

// ---------------------------------------------------------------------------------------------
// 1. conversations_list by q against contacts_search by q
// ---------------------------------------------------------------------------------------------
const target = await startTarget(['svc', ownerUrl, loginUrl, org]);
let n = 0;
const names = () => `${FIRST[n % 20]} ${LAST[(n++ * 7) % 20]}`;
const searches = {
  contacts_search: () => ({ path: `/api/v1/contacts?q=${encodeURIComponent(names())}&limit=25` }),
  // what people look for in an inbox, in turn: a word of the messages (common), a reference
  // number one message in a hundred carries (rare), a client's full name (the contact)
  conversations_list: () => {
    const i = n++;
    const q = [WORDS[i % 30], `R${(i * 7919) % 100000}`, `${FIRST[i % 20]} ${LAST[(i * 7) % 20]}`][i % 3]!;
    return { path: `/api/v1/conversations?q=${encodeURIComponent(q)}&limit=25` };
  },
};
const p95s: Record<keyof typeof searches, number[]> = { contacts_search: [], conversations_list: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, next] of Object.entries(searches) as [keyof typeof searches, () => { path: string }][]) {
    await closedLoop({ url: target.url, key, connections: CONNECTIONS, seconds: 2, next });
    const r = await closedLoop({ url: target.url, key, connections: CONNECTIONS, seconds: SECONDS, next });
    if (r.errors) throw new Error(`${name}: ${r.errors} errors`);
    p95s[name].push(r.p95);
    log(`${name} round ${round + 1}: ${fmt(r.rps)} requests/s, p95 ${r.p95} ms`);
  }
}
const ms = (x: number) => x.toFixed(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const searchRatio = median(p95s.conversations_list) / median(p95s.contacts_search);

// ---------------------------------------------------------------------------------------------
// 2. inbound SMS → the AI's answer in the outbox, against contacts_upsert
// ---------------------------------------------------------------------------------------------
const upsert = await closedLoop({ url: target.url, key, connections: 1, seconds: SECONDS, method: 'POST',
  next: () => ({ path: '/api/v1/contacts', body: JSON.stringify({ email: `new${n++}@upsert.example`, name: 'New Person' }) }) });
log(`contacts_upsert at 1 connection: p95 ${upsert.p95} ms`);
target.child.kill('SIGINT');

const fakeAi = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'We are open Monday to Friday, 9 to 5.' } }] }));
  });
});
await new Promise<void>((resolve) => fakeAi.listen(0, '127.0.0.1', resolve));
const aiAddress = fakeAi.address();
process.env.AI_BASE_URL = `http://127.0.0.1:${typeof aiAddress === 'object' && aiAddress ? aiAddress.port : 0}/v1`;
const worker = await startWorker(ownerUrl, createTransports({ emailTransport: 'sink', smsTransport: 'sink' }));
const latencies: number[] = [];
const { rows: phones } = await owner.query<{ phone: string }>(`select c.phone from app_public.contacts c
  join app_public.conversations cv on cv.organization_id = c.organization_id and cv.contact_id = c.id and cv.channel = 'sms'
  join app_public.locations l on l.organization_id = cv.organization_id and l.id = cv.location_id and l.name = 'North'
  where c.organization_id = $1 limit $2`, [org, AI_SAMPLES]);
for (const { phone } of phones) {
  const t0 = performance.now();
  const { conversation_id: conversation } = await inboundSms(owner, { to: '+15550000001', from: phone, body: 'What are your hours?' });
  for (;;) {
    const { rowCount } = await owner.query(`select 1 from app_private.outbox where organization_id = $1 and meta->>'conversation_id' = $2`,
      [org, conversation]);
    if (rowCount) break;
    if (performance.now() - t0 > 30_000) throw new Error('no answer within 30 s');
    await new Promise((r) => setTimeout(r, 2));
  }
  latencies.push(performance.now() - t0);
}
await worker.stop();
fakeAi.close();
latencies.sort((a, b) => a - b);
const aiP95 = percentile(latencies, 0.95);
const aiRatio = aiP95 / upsert.p95;
log(`inbound SMS → AI answer in the outbox: p50 ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1)} ms, p95 ${aiP95.toFixed(1)} ms`);
await owner.end();
await db.stop();

writeSection('conversations', `## Conversations: search and the AI's answer

Produced by \`BENCH_MESSAGES=${MESSAGES} BENCH_SECONDS=${SECONDS} BENCH_ROUNDS=${ROUNDS} BENCH_AI_SAMPLES=${AI_SAMPLES} npm run bench:conversations\`
(bench/conversations.ts) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores, Node ${process.version}. One organization
of ${fmt(contacts)} contacts, each with one thread (a quarter web chat) of ${PER_THREAD} messages: ${fmt(MESSAGES)} messages.

| measure | p95 ms (median of ${ROUNDS} rounds; every round) |
|---|---|
| contacts_search by q (a full name), ${CONNECTIONS} connections | ${ms(median(p95s.contacts_search))} (${p95s.contacts_search.map(ms).join(', ')}) |
| conversations_list by q (in turn a common word, a rare reference, a full name), ${CONNECTIONS} connections | ${ms(median(p95s.conversations_list))} (${p95s.conversations_list.map(ms).join(', ')}) |
| contacts_upsert, 1 connection | ${ms(upsert.p95)} |
| inbound SMS to the AI's answer in the outbox (fake AI answering at once, ${latencies.length} in a row) | ${aiP95.toFixed(1)} |

Ratio conversations_list / contacts_search: **${searchRatio.toFixed(2)}×** (target ≤ 3×). Ratio inbound SMS to answer /
contacts_upsert: **${aiRatio.toFixed(2)}×** (target ≤ 5×).
`);
log(`ratios: search ${searchRatio.toFixed(2)}× (≤ 3), AI answer ${aiRatio.toFixed(2)}× (≤ 5)`);
process.exit(0);
