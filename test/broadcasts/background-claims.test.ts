// Background work runs with its unit of work's organization, never a request's claims: a worker's
// connection has no credential. Every audience rule kind fires a broadcast through the worker (its
// recipients are the audience's count as the API answers it) and steers a sequence through the
// worker (an edge conditioned on the same rule); and, structurally, no SQL function the worker's
// tasks call reads a claim, through the functions it calls and the triggers of the tables it
// writes (app_hidden.audience_filter_of takes the organization as an argument).
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { drain, enroll, enrollmentsOf, makeDue } from '../sequences/engine-helpers.ts';
import { insertSequence } from '../sequences/helpers.ts';
import { drainBroadcasts, insertBroadcast, makeScheduleDue, runsOf, schedulePath, startBroadcastsApp } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let stage: string;
test.before(async () => {
  ({ app, acme } = await startBroadcastsApp());
  const org = acme.organization_id;
  const { rows: [s] } = await app.db.owner.query(
    `insert into app_public.pipeline_stages (organization_id, name, position) values ($1, 'Won', 90) returning id`, [org]);
  stage = s.id;
  for (const [key, type] of Object.entries({ plan: 'text', tier: 'select', visits: 'number', ltv: 'currency', vip: 'boolean', birthday: 'date', last_call: 'datetime' })) {
    await app.db.owner.query(`insert into app_public.custom_fields (organization_id, key, label, type, options) values ($1, $2, $2, $3, $4::jsonb) on conflict do nothing`,
      [org, key, type, type === 'select' ? JSON.stringify(['Gold', 'Silver']) : null]);
  }
  const values: Record<string, Record<string, unknown>> = {
    ann: { plan: 'Gold plan', tier: 'Gold', visits: 5, ltv: 12.5, vip: true, birthday: '1980-02-01', last_call: '2026-01-01T09:00:00Z' },
    bob: { plan: 'silver', tier: 'Silver', visits: 1, ltv: 250, vip: false, birthday: '1975-05-05' },
    cy: { visits: 9, vip: true },
  };
  for (const [ref, v] of Object.entries(values)) {
    await app.db.owner.query(`update app_public.contacts set field_values = $2::jsonb, total_calls = $3, stage_id = $4 where id = $1`,
      [acme.ids[ref], JSON.stringify(v), ref === 'ann' ? 3 : 0, ref === 'bob' ? stage : null]);
  }
});
test.after.always(async () => { await app?.close(); });

const key = () => acme.keys.org!;
const ok = <T extends { status: number; body: any }>(res: T): T => {
  if (res.status !== 200 && res.status !== 201) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res;
};

/** One rule of each kind: every contact field, every custom field type, every op. */
const rules = () => [
  { field: 'display_name', op: 'contains', value: 'ann' },
  { field: 'display_name', op: 'not_in', value: ['Ann Lee'] },
  { field: 'email', op: 'eq', value: 'bob@example.com' },
  { field: 'phone_number', op: 'exists' },
  { field: 'total_calls', op: 'gte', value: 1 },
  { field: 'first_seen_at', op: 'not_exists' },
  { field: 'last_seen_at', op: 'lt', value: '2100-01-01' },
  { field: 'created_at', op: 'gt', value: '2000-01-01T00:00:00Z' },
  { field: 'updated_at', op: 'lte', value: '2100-01-01T00:00:00Z' },
  { field: 'stage_id', op: 'in', value: [stage] },
  { field: 'stage_id', op: 'neq', value: stage },
  { field: 'field_values.plan', op: 'contains_any', value: ['gold', 'silver'] },
  { field: 'field_values.tier', op: 'eq', value: 'Gold' },
  { field: 'field_values.visits', op: 'gt', value: 2 },
  { field: 'field_values.ltv', op: 'lt', value: 100 },
  { field: 'field_values.vip', op: 'eq', value: true },
  { field: 'field_values.birthday', op: 'gte', value: '1978-01-01' },
  { field: 'field_values.last_call', op: 'exists' },
];

test.serial('a broadcast fires through the worker over every audience rule kind, to exactly the audience the API counts', async (t) => {
  for (const rule of rules()) {
    const name = `${rule.field} ${rule.op}`;
    const audience = ok(await app.request('POST', '/api/v1/audiences', {
      key: key(), body: { name, kind: 'dynamic', definition: { match: 'all', rules: [rule] } } })).body;
    const { count } = ok(await app.request('GET', `/api/v1/audiences/${audience.id}/count`, { key: key() })).body;
    const id = await insertBroadcast(app.db, acme.organization_id, audience.id, { name });
    ok(await app.request('PUT', schedulePath(id), { key: key(), body: { schedule_kind: 'once', send_at: new Date(Date.now() + 86_400_000).toISOString() } }));
    ok(await app.request('POST', schedulePath(id, '/start'), { key: key() }));
    await makeScheduleDue(app.db, id);
    await drainBroadcasts(app.db);
    const runs = await runsOf(app.db, id);
    t.is(runs.length, 1, name);
    t.like(runs[0], { status: 'completed', recipients: count }, name);
    if (rule.field.startsWith('field_values.')) t.true(count > 0, `${name}: the data has members`);
  }
});

test.serial('a sequence follows an edge conditioned on every rule kind, decided in the worker', async (t) => {
  const contacts = ['ann', 'bob', 'cy'].map((c) => acme.ids[c]!);
  for (const rule of rules()) {
    const name = `${rule.field} ${rule.op}`;
    const id = await insertSequence(app.db, acme.organization_id, {
      name,
      steps: [
        { step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Hi', body: 'Hello' },
        { step_key: 'later', type: 'email', delay: { days: 3 }, subject: 'Later', body: 'Again' },
      ],
      edges: [{ from: 'hello', to: 'later', condition: rule }],
    });
    for (const c of contacts) ok(await enroll(app, key(), id, { contact_id: c }));
    await makeDue(app.db);
    await drain(app.db);
    // who the rule selects, as the audience preview (a request) counts each contact
    const expected: string[] = [];
    for (const c of contacts) {
      const { rows: [row] } = await app.db.owner.query(`select name from app_public.contacts where id = $1`, [c]);
      const rulesOf = [rule, { field: 'display_name', op: 'eq', value: row.name }];
      const { count } = ok(await app.request('POST', '/api/v1/audiences/preview-count', {
        key: key(), body: { match: 'all', rules: rulesOf } })).body;
      if (count > 0) expected.push(c);
    }
    const enrollments = await enrollmentsOf(app.db, id);
    t.deepEqual(enrollments.filter((e) => e.current_step_key === 'later' && e.status === 'active').map((e) => e.contact_id).sort(),
      expected.sort(), name);
    t.true(enrollments.every((e) => e.status !== 'failed'), name);
  }
});

// ---------------------------------------------------------------------------------------------
// Structural: the functions the worker's tasks call, and all they reach, read no claim
// ---------------------------------------------------------------------------------------------
const root = fileURLToPath(new URL('../..', import.meta.url));
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}
/** The SQL functions named by code that runs in the worker: task modules (they use graphile-worker) and delivery. */
function backgroundEntries(): string[] {
  const files = [...sources(join(root, 'src')), ...sources(join(root, 'workers'))]
    .filter((f) => f.includes('/src/delivery/') || /from 'graphile-worker'/.test(readFileSync(f, 'utf8')))
    .filter((f) => !/\/src\/(worker|server)\.ts$|\/src\/registry\//.test(f));
  const names = new Set<string>();
  for (const f of files) for (const m of readFileSync(f, 'utf8').matchAll(/\bapp_(private|hidden)\.([a-z_0-9]+)\s*\(/g)) names.add(`app_${m[1]}.${m[2]}`);
  return [...names].sort();
}

/** Each function reached from `entries` (calls, and triggers of tables written) that reads a claim, with the functions that call it. */
async function claimReaders(entries: string[]): Promise<{ name: string; path: string }[]> {
  const { rows } = await app.db.owner.query(`
    with recursive fns as (
      select p.oid, n.nspname::text || '.' || p.proname::text collate "C" as name, p.prosrc as src
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname in ('app_private', 'app_hidden', 'app_public')
    ), trig as (
      select tn.nspname || '.' || c.relname as tbl, fn.nspname || '.' || p.proname as fname
        from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace tn on tn.oid = c.relnamespace
        join pg_proc p on p.oid = t.tgfoid join pg_namespace fn on fn.oid = p.pronamespace
       where not t.tgisinternal
    ), edges as (
      -- each name a function's text calls, and the triggers of each table it writes, by one scan of its text
      select distinct f.name as caller, (m[1] || '.' || m[2]) collate "C" as callee
        from fns f, regexp_matches(f.src, '\\m(app_private|app_hidden|app_public)\\.([a-z_0-9]+)\\s*\\(', 'g') m
      union
      select distinct f.name, t.fname::text collate "C"
        from fns f, regexp_matches(f.src, '(?:insert\\s+into|update|delete\\s+from)\\s+(app_private|app_hidden|app_public)\\.([a-z_0-9]+)', 'gi') m
        join trig t on t.tbl = lower(m[1] || '.' || m[2])
    ), reached(name, via) as (
      select name, null::text collate "C" from fns where name = any($1::text[])
      union
      select e.callee, e.caller from reached r join edges e on e.caller = r.name
    )
    select r.name, string_agg(distinct r.via, ', ') as path from reached r join fns f on f.name = r.name
     where f.src ~ '(session_claim|current_setting\\(''(svc|request)\\.|request\\.jwt|app_hidden\\.current_[a-z_]+\\()'
     group by r.name order by r.name`, [entries]);
  return rows;
}

test('no SQL function the worker calls reads a request claim (through calls and triggers)', async (t) => {
  const entries = backgroundEntries();
  t.true(entries.includes('app_private.broadcast_fire') && entries.includes('app_private.sequence_steps_claim'), entries.join(' '));
  t.deepEqual(await claimReaders(entries), []);
  // the check sees a claim read when there is one: the request paths' compiler reads two
  t.true((await claimReaders(['app_hidden.audience_filter'])).some((r) => r.name === 'app_hidden.current_org_id'));
});
