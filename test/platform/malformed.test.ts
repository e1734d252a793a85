// Every live operation, over REST and over MCP, fed seeded garbage and near-valid input: bad
// input gets a clear 4xx and changes nothing, and no request, however malformed, gets a 5xx.
// For each request: the answer is below 500 and, when it is an error, the envelope; after a 4xx
// the organization's data is exactly as before. Data out of the key's reach (the other
// organization, whose ids are in the value pool too, and for a key limited to North the
// contacts of South and of no location) never changes, whatever the answers.
import test, { type ExecutionContext } from 'ava';
import { startApp, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { prng } from '../helpers/random.ts';
import { mcpRpc } from '../helpers/mcp.ts';
import { AREAS } from '../../src/areas.ts';
import { operationsOf } from '../../src/registry/area.ts';

const operations = operationsOf(AREAS);
import type { AnyOperation } from '../../src/registry/operation.ts';
import type { Applied } from '../../src/admin/fixture.ts';

const PER_OPERATION = Number(process.env.MALFORMED_PER_OPERATION || 40);

let app: TestApp;
let acme: Applied;
let other: Applied;
let audienceIds: string[];

function fixture(name: string) {
  const f = acmeFixture(name);
  f.custom_fields.push(
    { key: 'visits', label: 'Visits', type: 'number', enabled: true },
    { key: 'ltv', label: 'LTV', type: 'currency', enabled: true },
    { key: 'birthday', label: 'Birthday', type: 'date', enabled: true },
    { key: 'last_visit', label: 'Last visit', type: 'datetime', enabled: true },
    { key: 'vip', label: 'VIP', type: 'boolean', enabled: true },
    { key: 'tier', label: 'Tier', type: 'select', options: ['a', 'b'], enabled: true } as never,
    { key: 'old', label: 'Old', type: 'text', enabled: false },
  );
  return f;
}

test.before(async () => {
  app = await startApp();
  acme = await app.apply(fixture('Acme Dental'));
  other = await app.apply(fixture('Other Co'));
  audienceIds = [];
  for (const [i, body] of [
    { name: 'Static', kind: 'static' },
    { name: 'Dynamic', kind: 'dynamic', definition: { match: 'all', rules: [{ field: 'email', op: 'contains', value: 'example' }] } },
  ].entries()) {
    const res = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { ...body, idempotency_key: `setup-${i}` } });
    if (res.status !== 201 && res.status !== 200) throw new Error(`audience setup: ${res.status} ${JSON.stringify(res.body)}`);
    audienceIds.push(res.body.id);
  }
});
test.after.always(async () => { await app?.close(); });

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------
type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

// A key set as JSON.parse sets it: `__proto__` too becomes an own key (an assignment would set
// the prototype instead, and the key would never be sent).
const own = <T extends object>(o: T, k: string, v: unknown): T =>
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

const strings = [
  '', ' ', 'a', 'x'.repeat(256), 'y'.repeat(1001), 'z'.repeat(20_001), 'nul\u0000byte', 'lone \ud800 surrogate', '😀 emoji',
  "' or 1=1 --", '%', '_', '\\', '%_%', '../../etc/passwd', 'NaN', 'Infinity', '-Infinity', '1e400', '-0', '0x10',
  '2026-02-30', '2026-11-22', '2026-11-22T10:00:00Z', '2026-11-22T10:00:00', '0000-01-01T00:00:00Z',
  '294277-01-01T00:00:00Z', '9999-12-31T23:59:59+14:00', 'infinity', 'epoch', 'today',
  '+15551230001', '+1 (555) 123-0001', '555', '+', '+999999999999999999', 'ann@example.com', 'ANN@EXAMPLE.COM',
  'new.person@example.com', 'a@b', '@', 'email', 'sms', 'all', 'any', 'static', 'dynamic', 'eq', 'in', 'gold', 'a',
  'true', 'false', 'user', 'integration', 'vip', '00000000-0000-0000-0000-000000000000',
];
// beyond ±(2^53 - 1) an integer is not read exactly: 2 ** 53 + 1 is sent as 9007199254740992
const numbers = [0, -1, 1, 2, 25, 100, 101, 1.5, -0.5, 1e308, -1e308, 2 ** 31, 2 ** 53 + 1, -(2 ** 53) - 2, 1e20,
  Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
const fields = [
  'display_name', 'email', 'phone_number', 'total_calls', 'first_seen_at', 'last_seen_at', 'created_at', 'updated_at',
  'field_values.plan', 'field_values.visits', 'field_values.ltv', 'field_values.birthday', 'field_values.last_visit',
  'field_values.vip', 'field_values.tier', 'field_values.old', 'field_values.nope', 'stage_id', 'pipeline_stage',
  'organization_id', 'id', 'nope', 'field_values', 'a.b.c',
];
const ops = ['eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'contains_any', 'exists', 'not_exists', 'like', ''];

function ids(): string[] {
  return [acme.ids.ann!, acme.ids.bob!, acme.ids.cy!, acme.ids.lead!, acme.ids.north!, other.ids.ann!, other.ids.lead!,
    other.ids.north!, ...audienceIds, '00000000-0000-0000-0000-000000000000', '6f1c2a4e-93d7-4b0a-8e15-2c7d9b3f0a61'];
}

function scalar(r: Rand): unknown {
  const roll = r();
  if (roll < 0.5) return pick(r, strings);
  if (roll < 0.7) return pick(r, numbers);
  if (roll < 0.8) return pick(r, ids());
  if (roll < 0.9) return r() < 0.5;
  return null;
}

function rule(r: Rand): unknown {
  const op = pick(r, ops);
  const out: Record<string, unknown> = { field: pick(r, fields), op };
  const roll = r();
  if (roll < 0.45) out.value = scalar(r);
  else if (roll < 0.8) out.value = Array.from({ length: 1 + Math.floor(r() * 3) }, () => scalar(r));
  else if (roll < 0.85) out.value = [];
  else if (roll < 0.9) out.value = { nested: scalar(r) };
  if (r() < 0.05) out.extra = 1;
  return out;
}

// Well-formed rules over the evaluation bound: 600 contains_any values in all (at most 500).
const costlyRules = () => [0, 1].map((i) => ({
  field: 'display_name', op: 'contains_any', value: Array.from({ length: 300 }, (_, j) => `c${i}.${j}`) }));

// Values a field of this name might take when sent by a careful caller: most requests mix these
// with garbage, so that many get past the schema to the database.
function plausible(name: string, r: Rand): unknown {
  switch (name) {
    case 'email': return pick(r, ['ann@example.com', 'Ann@Example.com', 'new.person@example.com', `p${Math.floor(r() * 1e6)}@example.com`]);
    case 'name': case 'tag': return pick(r, ['Ann Lee', 'vip', 'New Tag', 'x'.repeat(120), 'x'.repeat(121), 'ünïcödé 😀']);
    case 'phone': return pick(r, ['+15551230001', '+1 (555) 123-0002', '+442071838750', '555-0100', '+15551239999']);
    case 'custom_fields': return pick(r, [{ plan: 'silver' }, { visits: 3 }, { visits: '3' }, { ltv: 12.5 }, { birthday: '1990-02-28' },
      { birthday: '1990-02-30' }, { last_visit: '2026-11-01T09:00:00Z' }, { vip: true }, { tier: 'a' }, { tier: 'c' }, { old: 'x' }, { plan: null },
      { visits: 2 ** 53 + 1 }, own({}, '__proto__', 'x'), own({ plan: 'gold' }, '__proto__', { plan: 'x' }), { constructor: 'x' }, { prototype: 1 }]);
    case 'location_ids': return [pick(r, ids())];
    case 'stage_id': case 'contact_id': return pick(r, ids());
    case 'channels': return pick(r, [['email'], ['sms'], ['email', 'sms'], [], ['fax']]);
    case 'source': return pick(r, ['web form', 'keyword START', '']);
    case 'consented_at': return pick(r, ['2026-11-01T09:00:00Z', '2026-11-01', '2999-01-01T00:00:00Z']);
    case 'body': return pick(r, ['A note', '', 'n'.repeat(20_001)]);
    case 'idempotency_key': return `k-${Math.floor(r() * 1e9)}`;
    case 'kind': return pick(r, ['static', 'dynamic']);
    case 'channel': return pick(r, ['any', 'email', 'sms', 'call', 'completed']);
    case 'status': return pick(r, ['completed', 'missed', 'open']);
    case 'match': return pick(r, ['all', 'any']);
    case 'rules': return r() < 0.1 ? costlyRules() : Array.from({ length: Math.floor(r() * 4) }, () => rule(r));
    case 'definition': return { match: pick(r, ['all', 'any']), rules: r() < 0.1 ? costlyRules() : Array.from({ length: Math.floor(r() * 4) }, () => rule(r)) };
    case 'exclude_opted_out': case 'is_archived': return r() < 0.5;
    case 'page': return pick(r, [1, 2, 3, 100, 0, -1]);
    case 'limit': return pick(r, [1, 25, 100, 101, 0, -1]);
    case 'q': return pick(r, ['ann', 'Lee', '555', '%', '_', '\\', 'a'.repeat(255), 'a'.repeat(256)]);
    case 'events': return [{ name: pick(r, ['assessment_abandoned', 'booked', 'Bad Name']), key: pick(r, ['s1', '', 'k'.repeat(256)]) }];
    case 'cancel_events': return [pick(r, ['assessment_abandoned', 'booked', 'x'.repeat(101)])];
    case 'fields': return pick(r, [{ user_message_count: 2 }, { user_message_count: -1 }, { user_message_count: 1.5 }, { answer: 'x' },
      { user_message_count: 2 ** 53 + 1 }, own({}, '__proto__', 'x'), own({}, '__proto__', 'y'.repeat(1001))]);
    case 'cursor': return pick(r, ['', 'abc', acme.ids.ann]);
    default: return value(r);
  }
}

function value(r: Rand, depth = 0): unknown {
  const roll = r();
  if (roll < 0.55 || depth > 2) return scalar(r);
  if (roll < 0.65) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  if (roll < 0.75) return { match: pick(r, ['all', 'any', 'none']), rules: Array.from({ length: Math.floor(r() * 5) }, () => rule(r)) };
  if (roll < 0.85) {
    // custom field values: known keys with values of any type
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(r() * 3); i >= 0; i--) own(o, pick(r, ['plan', 'visits', 'ltv', 'birthday', 'last_visit', 'vip', 'tier', 'old', 'nope', '__proto__', 'constructor']), scalar(r));
    return o;
  }
  if (roll < 0.9) return ['email', 'sms', 'voice'].filter(() => r() < 0.5);
  if (roll < 0.95) return Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({ name: pick(r, strings), payload: value(r, depth + 1) }));
  return {};
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------
// A lone surrogate cannot be percent-encoded as UTF-8: it is sent as the bytes a careless encoder makes.
const escape = (v: string) => encodeURIComponent(v.replace(/[\ud800-\udfff]/gu, '\u0000')).replace(/%00/g, '%ED%A0%80');
const shapeKeys = (s: unknown): string[] => (s ? Object.keys((s as { shape: object }).shape) : []);

interface Case { params: Record<string, string>; query: string; body: unknown; args: Record<string, unknown>; rawBody?: Uint8Array }

// Bytes that are not UTF-8 (a stray byte, a broken sequence, an encoded surrogate), inside the
// first string of the JSON text.
function invalidUtf8(text: string, r: Rand): Uint8Array {
  const at = text.indexOf('"') + 1;
  const bytes = pick(r, [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82]]);
  return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))]);
}

function pathValue(r: Rand): string {
  const roll = r();
  if (roll < 0.6) return pick(r, ids());
  return pick(r, ['x', '123', 'vip', '%00', '%E0%A4%A', '%25', 'a%2Fb', '..', 'z'.repeat(5000), '😀',
    acme.ids.ann!.toUpperCase(), `${acme.ids.ann} `, '{}', 'null']);
}

function makeCase(op: AnyOperation, r: Rand): Case {
  // half the cases are careful (every field plausible but, sometimes, one) to reach the database
  const careful = r() < 0.5;
  const odd = careful && r() < 0.5 ? pick(r, [...shapeKeys(op.query), ...shapeKeys(op.body)]) : undefined;
  const fieldValue = (k: string, garbage: (r: Rand) => unknown) =>
    (careful ? k !== odd : r() < 0.6) ? plausible(k, r) : garbage(r);
  const params: Record<string, string> = {};
  for (const k of shapeKeys(op.params)) params[k] = k === 'tag' && r() < 0.5 ? String(plausible(k, r)) : pathValue(r);
  const args: Record<string, unknown> = { ...params };
  const queryParts: string[] = [];
  for (const k of shapeKeys(op.query)) {
    if (r() < 0.5) continue;
    const v = fieldValue(k, scalar);
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    args[k] = v;
    const roll = r();
    if (roll < 0.1) queryParts.push(`${k}[]=${escape(text)}`);
    else if (roll < 0.15) queryParts.push(`${k}[a]=${escape(text)}`);
    else if (roll < 0.25) queryParts.push(`${k}=${escape(text)}`, `${k}=2`);
    else if (roll < 0.3) queryParts.push(`${k}=%E0%A4%A`);
    else queryParts.push(`${k}=${escape(text)}`);
  }
  // parameters no operation takes, misspelt or bracketed
  if (!careful && r() < 0.15) queryParts.push(pick(r, ['surprise=1', 'emial=ann%40example.com', 'q%5B%5D=x', '__proto__=1', 'limit%20=5']));
  let body: unknown;
  const keys = shapeKeys(op.body);
  if (keys.length) {
    const roll = r();
    if (!careful && roll < 0.05) body = pick(r, [null, [], 'text', 5, [{}]]);
    else {
      const b: Record<string, unknown> = {};
      for (const k of keys) if (r() < 0.6) b[k] = fieldValue(k, value);
      if (!careful && r() < 0.05) b.surprise = 1;
      if (!careful && r() < 0.05) own(b, '__proto__', value(r));
      if (!careful && r() < 0.05) b.n = pick(r, [2 ** 53 + 1, -(2 ** 53) - 2, 1e20]);
      body = b;
    }
    if (body && typeof body === 'object' && !Array.isArray(body)) for (const [k, v] of Object.entries(body)) own(args, k, v);
  }
  const rawBody = keys.length && !careful && r() < 0.05 ? invalidUtf8(JSON.stringify(body ?? {}), r) : undefined;
  return { params, query: queryParts.join('&'), body, args, ...(rawBody ? { rawBody } : {}) };
}

function pathOf(op: AnyOperation, params: Record<string, string>): string {
  // a value holding '%' is sent as written (broken escapes on purpose); others are escaped
  return op.path.replace(/\{(\w+)\}/g, (_, k: string) => (params[k]!.includes('%') ? params[k]! : escape(params[k]!)));
}

// ---------------------------------------------------------------------------------------------
// What must not change
// ---------------------------------------------------------------------------------------------
let tables: string[] | undefined;
async function snapshot(orgId: string): Promise<string> {
  tables ??= (await app.db.owner.query(
    `select format('%I.%I', table_schema, table_name) as t from information_schema.columns
      where table_schema = 'app_public' and column_name = 'organization_id'
        and table_name in (select table_name from information_schema.tables where table_schema = 'app_public' and table_type = 'BASE TABLE')
      order by 1`)).rows.map((row: { t: string }) => row.t);
  const parts = await Promise.all(tables.map(async (t) => {
    const { rows } = await app.db.owner.query(
      `select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from ${t} x where organization_id = $1`, [orgId]);
    return `${t}:${rows[0].h}`;
  }));
  return parts.join(',');
}

const changed = (a: string, b: string) => {
  const bs = new Set(b.split(','));
  return a.split(',').filter((p) => !bs.has(p)).map((p) => p.split(':')[0]).join(', ');
};

function isEnvelope(body: any, status: number): boolean {
  return body && typeof body === 'object' && body.statusCode === status && typeof body.error === 'string'
    && typeof body.message === 'string';
}

const describe = (op: AnyOperation, c: Case, how: string) =>
  `${op.operationId} over ${how}: ${JSON.stringify({ params: c.params, query: c.query, body: c.body }).slice(0, 600)}`;

async function mcpCall(key: string, name: string, args: Record<string, unknown>): Promise<{ http: number; body: any }> {
  const res = await mcpRpc(app, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    { authorization: `Bearer ${key}` });
  const text = await res.text();
  const data = text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: '))?.slice(6) ?? text;
  let body: unknown = text;
  try { body = JSON.parse(data); } catch { /* reported below */ }
  return { http: res.status, body };
}

/** The rows of these contacts, and of every table that points at them. */
async function contactRows(contactIds: string[]): Promise<string> {
  const { rows } = await app.db.owner.query(
    `select table_name as t from information_schema.columns
      where table_schema = 'app_public' and column_name = 'contact_id'
        and table_name in (select table_name from information_schema.tables where table_schema = 'app_public' and table_type = 'BASE TABLE')
      order by 1`);
  const parts = [];
  for (const { t } of rows as { t: string }[]) {
    const q = await app.db.owner.query(
      `select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from app_public.${t} x where contact_id = any($1)`, [contactIds]);
    parts.push(`${t}:${q.rows[0].h}`);
  }
  const c = await app.db.owner.query(
    `select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from app_public.contacts x where id = any($1)`, [contactIds]);
  return `${parts.join(',')},contacts:${c.rows[0].h}`;
}

/**
 * Sends `count` cases to one operation over both faces with one key. Every answer is below 500
 * (an envelope when an error); after a 4xx the organization's data is as before; `untouchable`
 * (data out of the key's reach) is the same at the end whatever the answers were.
 */
async function fuzz(t: ExecutionContext, op: AnyOperation, keyRef: string, count: number, untouchable: () => Promise<string>) {
  const key = acme.keys[keyRef]!;
  const r = prng([...`${op.operationId} ${keyRef}`].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7));
  const outOfReach = await untouchable();
  let before = await snapshot(acme.organization_id);
  const tally = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const c = makeCase(op, r);
    for (const face of ['REST', 'MCP'] as const) {
      let status: number;
      let body: any;
      if (face === 'REST') {
        const url = pathOf(op, c.params) + (c.query ? `?${c.query}` : '');
        const res = await app.request(op.method, url, { key, ...(op.body ? { rawBody: c.rawBody ?? JSON.stringify(c.body ?? {}) } : {}) });
        status = res.status;
        body = res.body;
      } else {
        const res = await mcpCall(key, op.operationId, c.args);
        if (res.http !== 200 || !res.body?.result) {
          t.fail(`MCP answered ${res.http} ${JSON.stringify(res.body).slice(0, 300)} for ${describe(op, c, face)}`);
          continue;
        }
        body = res.body.result.structuredContent;
        status = res.body.result.isError ? body?.statusCode : 200;
      }
      tally.set(`${face} ${status}`, (tally.get(`${face} ${status}`) ?? 0) + 1);
      if (!(status < 500)) t.fail(`${status} ${JSON.stringify(body)} for ${describe(op, c, face)}`);
      else if (status >= 400 && !isEnvelope(body, status)) t.fail(`not an envelope: ${status} ${JSON.stringify(body)} for ${describe(op, c, face)}`);
      const after = await snapshot(acme.organization_id);
      if (status >= 400 && after !== before) t.fail(`a ${status} changed ${changed(before, after)}: ${describe(op, c, face)}`);
      before = after;
    }
  }
  t.is(await untouchable(), outOfReach, 'data out of reach is untouched');
  t.log(keyRef, [...tally].sort().map(([k, n]) => `${k}: ${n}`).join(', '));
}

for (const op of operations) {
  test.serial(`${op.operationId}: malformed and near-valid input never answers 5xx, and a 4xx changes nothing`, async (t) => {
    await fuzz(t, op, 'org', PER_OPERATION, () => snapshot(other.organization_id));
    // a manager limited to North: South's contact and the contact of no location stay as they were
    await fuzz(t, op, 'north_mgr', PER_OPERATION / 2,
      async () => `${await snapshot(other.organization_id)};${await contactRows([acme.ids.bob!, acme.ids.cy!])}`);
  });
}
