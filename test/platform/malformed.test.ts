// Every live operation, over REST and over MCP, fed seeded garbage and near-valid input: bad
// input gets a clear 4xx and changes nothing, and no request, however malformed, gets a 5xx.
// For each request: the answer is below 500 and, when it is an error, the envelope; after a 4xx
// the organization's data is exactly as before. Data out of the key's reach (the other
// organization, whose ids are in the pools too, and the rows of its own organization the key
// cannot read: for a key limited to North, the contacts of South and of no location) never
// changes, whatever the answers.
//
// The values come from each field's JSON Schema (test/helpers/fuzz.ts) and, for what only makes
// sense with the fixture's data, from the `malformedInput` of the operation's area
// (test/<area>/helpers.ts, found by the area's name): an area's operations are fuzzed as soon as
// they are registered.
import test, { type ExecutionContext } from 'ava';
import { existsSync } from 'node:fs';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { garbage, hostile, own, pick, plausible, type MalformedInput, type Pools, type Rand, type Schema } from '../helpers/fuzz.ts';
import { errorEnvelope, mcpCall } from '../helpers/mcp.ts';
import { prng } from '../helpers/random.ts';
import { asKey } from '../helpers/sql.ts';
import { organizationData } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { AREAS } from '../../src/areas.ts';
import { inputSchemaOf } from '../../src/mcp/tools.ts';
import { splitArguments, validateInput } from '../../src/platform/input.ts';
import type { AnyOperation } from '../../src/registry/operation.ts';

const PER_OPERATION = Number(process.env.MALFORMED_PER_OPERATION || 40);

/** Each area's part of this suite, from test/<area>/helpers.ts. */
const parts = new Map<string, MalformedInput>();
for (const area of AREAS) {
  const helpers = new URL(`../${area.name}/helpers.ts`, import.meta.url);
  const part = existsSync(helpers) ? ((await import(helpers.href)) as { malformedInput?: MalformedInput }).malformedInput : undefined;
  if (part) parts.set(area.name, part);
}
const partOf = (op: AnyOperation) => parts.get(AREAS.find((a) => a.operations.includes(op))!.name);

let app: TestApp;
let acme: Applied;
let other: Applied;
let pools: Pools;

function fixture(name: string) {
  let f = acmeFixture(name);
  for (const part of parts.values()) f = part.fixture?.(f) ?? f;
  return f;
}

/** Tables of app_public whose rows belong to an organization. */
async function tenantTables(): Promise<string[]> {
  const { rows } = await app.db.owner.query(`select c.table_name as t from information_schema.columns c
      join information_schema.tables x on x.table_schema = c.table_schema and x.table_name = c.table_name and x.table_type = 'BASE TABLE'
     where c.table_schema = 'app_public' and c.column_name = 'organization_id' order by 1`);
  return (rows as { t: string }[]).map(({ t }) => t);
}

/** The ids of each table that has them, per organization; a field names a table as `contactId`, `contact_id` or `contact_ids`. */
async function idPools(): Promise<Pools> {
  const { rows: tables } = await app.db.owner.query(`select table_name as t from information_schema.columns
    where table_schema = 'app_public' and column_name = 'id' and data_type = 'uuid' and table_name = any($1)`, [await tenantTables()]);
  const byTable = new Map<string, { own: string[]; other: string[] }>();
  for (const { t } of tables as { t: string }[]) {
    const { rows } = await app.db.owner.query(`select id::text as id, organization_id = $1 as mine from app_public.${t}
      where organization_id in ($1, $2)`, [acme.organization_id, other.organization_id]);
    byTable.set(t, { own: rows.filter((x) => x.mine).map((x) => x.id), other: rows.filter((x) => !x.mine).map((x) => x.id) });
  }
  const all = { own: [...byTable.values()].flatMap((x) => x.own), other: [...byTable.values()].flatMap((x) => x.other) };
  return {
    tenant: acme,
    ids(field) {
      const noun = field.replace(/_?[iI]ds?$/, '').replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
      const table = byTable.has(`${noun}s`) ? `${noun}s` : [...byTable.keys()].find((t) => t.endsWith(`_${noun}s`));
      return (table && byTable.get(table)) || all;
    },
  };
}

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(fixture('Acme Dental')));
  other = await app.apply(fixture('Other Co'));
  for (const part of parts.values()) {
    await part.setup?.(app, acme);
    await part.setup?.(app, other);
  }
  pools = await idPools();
});
test.after.always(async () => { await app?.close(); });

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------
// A lone surrogate cannot be percent-encoded as UTF-8: it is sent as the bytes a careless encoder makes.
const escape = (v: string) => encodeURIComponent(v.replace(/[\ud800-\udfff]/gu, '\u0000')).replace(/%00/g, '%ED%A0%80');
const shapeKeys = (s: unknown): string[] => (s ? Object.keys((s as { shape: object }).shape) : []);
const HOSTILE_PATHS = ['x', '123', '%00', '%E0%A4%A', '%25', 'a%2Fb', '..', 'z'.repeat(5000), '😀', '{}', 'null'];

interface Case { params: Record<string, string>; query: string; body: unknown; args: Record<string, unknown>; rawBody?: Uint8Array }

// Bytes that are not UTF-8 (a stray byte, a broken sequence, an encoded surrogate), inside the
// first string of the JSON text.
function invalidUtf8(text: string, r: Rand): Uint8Array {
  const at = text.indexOf('"') + 1;
  const bytes = pick(r, [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82]]);
  return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))]);
}

const schemas = new Map<AnyOperation, Record<string, Schema>>();
/** Each input field's JSON Schema, as the MCP tool publishes it. */
function fieldSchemas(op: AnyOperation): Record<string, Schema> {
  let out = schemas.get(op);
  if (!out) schemas.set(op, out = (inputSchemaOf(op) as { properties?: Record<string, Schema> }).properties ?? {});
  return out;
}

/**
 * A careful caller's value for a field: the area's value for it (when it has one: for this
 * operation's field, `<operationId>.<field>`, else for any field of that name) or the schema's.
 */
function plausibleFor(op: AnyOperation, k: string, r: Rand): unknown {
  const fromArea = partOf(op)?.values?.[`${op.operationId}.${k}`] ?? partOf(op)?.values?.[k];
  return fromArea && r() < 0.5 ? fromArea(r, pools) : plausible(fieldSchemas(op)[k] ?? {}, r, pools, k);
}

function makeCase(op: AnyOperation, r: Rand): Case {
  // half the cases are careful (every field plausible but, sometimes, one) to reach the database
  const careful = r() < 0.5;
  const fields = fieldSchemas(op);
  const odd = careful && r() < 0.5 ? pick(r, [...shapeKeys(op.query), ...shapeKeys(op.body)]) : undefined;
  const fieldValue = (k: string) => ((careful ? k !== odd : r() < 0.6) ? plausibleFor(op, k, r) : garbage(fields[k] ?? {}, r, pools, k));
  const params: Record<string, string> = {};
  for (const k of shapeKeys(op.params)) {
    const near = () => pick(r, [...HOSTILE_PATHS, String(plausibleFor(op, k, r)).toUpperCase(), `${plausibleFor(op, k, r)} `]);
    const v = r() < 0.6 ? plausibleFor(op, k, r) : near();
    params[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  const args: Record<string, unknown> = { ...params };
  const queryParts: string[] = [];
  for (const k of shapeKeys(op.query)) {
    if (r() < 0.5) continue;
    const v = fieldValue(k);
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
    if (!careful && r() < 0.05) body = pick(r, [null, [], 'text', 5, [{}]]);
    else {
      const required = (inputSchemaOf(op) as { required?: string[] }).required ?? [];
      const b: Record<string, unknown> = {};
      for (const k of keys) if ((careful && required.includes(k)) || r() < 0.6) own(b, k, fieldValue(k));
      if (!careful && r() < 0.05) b.surprise = 1;
      if (!careful && r() < 0.05) own(b, '__proto__', hostile(r, pools));
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

/** Whether the arguments pass the operation's schemas: what a tool call answers then, the database decided. */
function passesSchemas(op: AnyOperation, args: Record<string, unknown>): boolean {
  try {
    validateInput(op, splitArguments(op, args));
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// What must not change
// ---------------------------------------------------------------------------------------------
const changed = (a: Record<string, string>, b: Record<string, string>) => Object.keys(b).filter((t) => a[t] !== b[t]).join(', ');

/** The rows of the tenant `key` cannot read, table by table, and every row of the other organization. */
async function outOfReach(key: string): Promise<string> {
  const hidden: Record<string, string[]> = {};
  for (const t of await tenantTables()) {
    const query = `select x::text as row from app_public.${t} x where organization_id = $1 order by 1`;
    const all = (await app.db.owner.query(query, [acme.organization_id])).rows.map((x) => x.row as string);
    const readable = await asKey(app, key, async (c) => (await c.query(query, [acme.organization_id])).rows.map((x) => x.row as string));
    const seen = new Set(readable);
    hidden[t] = all.filter((row) => !seen.has(row));
  }
  return JSON.stringify({ hidden, other: await organizationData(app, other.organization_id) });
}

function isEnvelope(body: any, status: number): boolean {
  return body && typeof body === 'object' && body.statusCode === status && typeof body.error === 'string'
    && typeof body.message === 'string';
}

const describe = (op: AnyOperation, c: Case, how: string) =>
  `${op.operationId} over ${how}: ${JSON.stringify({ params: c.params, query: c.query, body: c.body }).slice(0, 600)}`;

/**
 * Sends `count` cases to one operation over both faces with one key. Every answer is below 500
 * (an envelope when an error); after a 4xx the organization's data is as before; data out of the
 * key's reach is the same at the end whatever the answers were. Answers the tally of statuses, and
 * of the tool calls whose arguments passed the schemas (what the database answered).
 */
async function fuzz(t: ExecutionContext, op: AnyOperation, keyRef: string, count: number) {
  const key = acme.keys[keyRef]!;
  const r = prng([...`${op.operationId} ${keyRef}`].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7));
  const untouchable = await outOfReach(key);
  let before = await organizationData(app, acme.organization_id);
  const tally = new Map<string, number>();
  const count1 = (label: string) => tally.set(label, (tally.get(label) ?? 0) + 1);
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
        const res = await mcpCall(app, key, op.operationId, c.args);
        if (res.http !== 200 || !res.body?.result) {
          t.fail(`MCP answered ${res.http} ${JSON.stringify(res.body).slice(0, 300)} for ${describe(op, c, face)}`);
          continue;
        }
        body = res.body.result.isError ? errorEnvelope(res.body.result) : res.body.result.structuredContent;
        status = res.body.result.isError ? body?.statusCode : 200;
        if (passesSchemas(op, c.args)) count1(`database ${status < 300 ? '2xx' : status}`);
      }
      count1(`${face} ${status}`);
      if (!(status < 500)) t.fail(`${status} ${JSON.stringify(body)} for ${describe(op, c, face)}`);
      else if (status >= 400 && !isEnvelope(body, status)) t.fail(`not an envelope: ${status} ${JSON.stringify(body)} for ${describe(op, c, face)}`);
      const after = await organizationData(app, acme.organization_id);
      if (status >= 400 && changed(before, after)) t.fail(`a ${status} changed ${changed(before, after)}: ${describe(op, c, face)}`);
      before = after;
    }
  }
  t.is(await outOfReach(key), untouchable, 'data out of reach is untouched');
  t.log(keyRef, [...tally].sort().map(([k, n]) => `${k}: ${n}`).join(', '));
  return tally;
}

const hasInput = (op: AnyOperation) => Boolean(op.params || op.query || op.body);

for (const op of AREAS.flatMap((a) => a.operations)) {
  test.serial(`${op.operationId}: malformed and near-valid input never answers 5xx, and a 4xx changes nothing`, async (t) => {
    for (const part of parts.values()) await part.prepare?.(app, acme, op.operationId);
    const tally = await fuzz(t, op, 'org', PER_OPERATION);
    // the organization key's cases reach the database: some succeed, and (given input) some are refused there
    const reached = [...tally.keys()].filter((k) => k.startsWith('database '));
    const onceOnly = partOf(op)?.onceOnly?.includes(op.operationId) && [...tally.keys()].some((k) => /^REST 2\d\d$/.test(k));
    t.true(onceOnly || reached.includes('database 2xx'), `some cases succeed: ${reached.join(', ')}`);
    if (hasInput(op)) {
      t.true(reached.some((k) => /^database 4\d\d$/.test(k)), `some cases are refused by the database: ${reached.join(', ')}`);
    }
    // a manager limited to North: what it cannot read (South's contacts, those of no location) stays as it was
    await fuzz(t, op, 'north_mgr', PER_OPERATION / 2);
  });
}
