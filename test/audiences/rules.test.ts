// The audience rule language (spec: Resources → Audience): random rule sets counted and listed
// by the database against an independent in-memory evaluation of the same rules over the same
// contacts; every 400 naming the rule part to fix; counts under each credential's reach.
import test from 'ava';
import fc from 'fast-check';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { prng } from '../helpers/random.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
let data: Row[];

// ---------------------------------------------------------------------------------------------
// The data set: contacts with every kind of value, missing values, mixed case, LIKE wildcards
// ---------------------------------------------------------------------------------------------
const DAY = 86_400_000;
const STAGES = ['lead', 'won', 'lost'] as const;
const CUSTOM = {
  plan: 'text', tier: 'select', visits: 'number', ltv: 'currency', vip: 'boolean', birthday: 'date', last_call: 'datetime',
} as const;
const TEXTS = ['Gold', 'gold plan', 'SILVER', '50%_off', 'back\\slash', 'a_b', 'Bronze 2'];
const NAMES = ['Ann Lee', 'bob SMITH', 'Cy Nowhere', 'Dee O\'Hara', '100% Real_Name', 'Eve', 'eve adams', 'Zed \\ Back', 'MIXED case'];

const rnd = prng(20261122);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
const maybe = <T>(p: number, f: () => T): T | undefined => (rnd() < p ? f() : undefined);
const BASE = Date.UTC(2025, 11, 20); // the data's days cluster around the turn of 2026
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const withOffset = (ms: number, minutes: number) => {
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 19);
  const sign = minutes < 0 ? '-' : '+';
  const m = Math.abs(minutes);
  return `${local}${sign}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
};
const someInstant = () => BASE + Math.floor(rnd() * 20) * DAY + Math.floor(rnd() * 86_400) * 1000;

const CONTACTS = 48;
const contacts = Array.from({ length: CONTACTS }, (_, i) => {
  const fields: Record<string, unknown> = {};
  const put = (k: string, v: unknown) => { if (v !== undefined) fields[k] = v; };
  put('plan', maybe(0.7, () => pick(TEXTS)));
  put('tier', maybe(0.6, () => pick(['Gold', 'Silver'])));
  put('visits', maybe(0.7, () => Math.floor(rnd() * 12)));
  put('ltv', maybe(0.6, () => pick([0, 12.5, 100, 250.25, 99.5, 7])));
  put('vip', maybe(0.6, () => rnd() < 0.5));
  put('birthday', maybe(0.6, () => `19${70 + Math.floor(rnd() * 30)}-0${1 + Math.floor(rnd() * 9)}-1${Math.floor(rnd() * 9)}`));
  put('last_call', maybe(0.6, () => withOffset(someInstant(), pick([0, 120, -300, 330]))));
  const first = someInstant();
  return {
    ref: `c${i}`,
    name: i % 11 === 5 ? null : pick(NAMES),
    email: i % 7 === 3 ? null : `${pick(['user', 'User', 'ANN', 'bob'])}${i}@${pick(['example.com', 'Example.COM', 'mail.test'])}`,
    phone: i % 5 === 1 ? null : `+1555123${String(1000 + i)}`,
    stage_ref: i % 4 === 0 ? undefined : pick(STAGES),
    total_calls: Math.floor(rnd() * 6),
    first_seen_at: isoSeconds(first),
    last_seen_at: isoSeconds(first + Math.floor(rnd() * 5) * DAY),
    custom_fields: fields,
    location_refs: i % 3 === 0 ? ['north'] : i % 3 === 1 ? ['south'] : [],
    created_at: isoSeconds(someInstant()),
    updated_at: isoSeconds(someInstant()),
  };
}).map((c) => (c.email || c.phone ? c : { ...c, phone: '+15559990000' }));

function fixture(name: string) {
  const base = acmeFixture(name);
  return {
    ...base,
    stages: STAGES.map((ref) => ({ ref, name: ref })),
    custom_fields: [
      ...Object.entries(CUSTOM).map(([key, type]) => ({ key, label: key, type, ...(type === 'select' ? { options: ['Gold', 'Silver'] } : {}) })),
      { key: 'retired', label: 'Retired', type: 'text', enabled: false },
    ],
    contacts: contacts.map(({ created_at: _c, updated_at: _u, ...c }) => c),
  };
}

/** A contact as the evaluator sees it: read back from the database as the owner. */
interface Row {
  id: string;
  name: string | null;
  email_key: string | null;
  phone: string | null;
  stage_id: string | null;
  total_calls: number;
  field_values: Record<string, unknown>;
  first_seen_at: number;
  last_seen_at: number;
  created_at: number;
  updated_at: number;
  north: boolean;
}

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(fixture('Acme Rules')));
  other = await app.apply(fixture('Other Org'));
  // created_at and updated_at are the database's to set; the data set wants them spread out
  for (const c of contacts) {
    await app.db.owner.query(`update app_public.contacts set created_at = $2, updated_at = $3 where id = $1`,
      [acme.ids[c.ref], c.created_at, c.updated_at]);
  }
  const { rows } = await app.db.owner.query(`
    select c.id, c.name, c.email_key, c.phone, c.stage_id, c.total_calls, c.field_values,
           (extract(epoch from c.first_seen_at) * 1000)::float8 as first_seen_at,
           (extract(epoch from c.last_seen_at) * 1000)::float8 as last_seen_at,
           (extract(epoch from c.created_at) * 1000)::float8 as created_at,
           (extract(epoch from c.updated_at) * 1000)::float8 as updated_at,
           exists (select 1 from app_public.contact_locations cl join app_public.locations l on l.id = cl.location_id
                    where cl.contact_id = c.id and l.name = 'North') as north
      from app_public.contacts c where c.organization_id = $1`, [acme.organization_id]);
  data = rows;
});
test.after.always(async () => { await app?.close(); });

// ---------------------------------------------------------------------------------------------
// The independent evaluator: the spec's semantics written plainly in TypeScript
// ---------------------------------------------------------------------------------------------
type Kind = 'text' | 'number' | 'datetime' | 'date' | 'boolean' | 'stage';
type Scalar = string | number | boolean;
interface Rule { field: string; op: string; value?: Scalar | Scalar[] }
interface Definition { match?: 'all' | 'any'; rules?: Rule[] }

const COLUMN_KINDS: Record<string, Kind> = {
  display_name: 'text', email: 'text', phone_number: 'text', total_calls: 'number',
  first_seen_at: 'datetime', last_seen_at: 'datetime', created_at: 'datetime', updated_at: 'datetime', stage_id: 'stage',
};
const CUSTOM_KINDS: Record<string, Kind> = {
  plan: 'text', tier: 'text', visits: 'number', ltv: 'number', vip: 'boolean', birthday: 'date', last_call: 'datetime',
};
const kindOf = (field: string): Kind => COLUMN_KINDS[field] ?? CUSTOM_KINDS[field.slice('field_values.'.length)]!;
const isCustom = (field: string) => field.startsWith('field_values.');

/** The field's value, typed; undefined when the contact has none. */
function valueOf(c: Row, field: string): unknown {
  switch (field) {
    case 'display_name': return c.name?.toLowerCase() ?? undefined;
    case 'email': return c.email_key ?? undefined;
    case 'phone_number': return c.phone ?? undefined;
    case 'stage_id': return c.stage_id ?? undefined;
    case 'total_calls': case 'first_seen_at': case 'last_seen_at': case 'created_at': case 'updated_at':
      return c[field];
  }
  const v = c.field_values[field.slice('field_values.'.length)];
  if (v === undefined || v === null) return undefined;
  switch (kindOf(field)) {
    case 'number': return typeof v === 'number' ? v : undefined;
    case 'boolean': return typeof v === 'boolean' ? v : undefined;
    case 'datetime': return typeof v === 'string' ? Date.parse(v) : undefined;
    case 'date': return String(v);
    default: return textOf(v).toLowerCase();
  }
}
const textOf = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
function rawText(c: Row, field: string): string | undefined {
  if (!isCustom(field)) return valueOf(c, field) as string | undefined;
  const v = c.field_values[field.slice('field_values.'.length)];
  return v === undefined || v === null ? undefined : textOf(v).toLowerCase();
}
const present = (c: Row, field: string) =>
  isCustom(field) ? field.slice('field_values.'.length) in c.field_values : valueOf(c, field) !== undefined;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const dayStart = (d: string) => Date.parse(`${d}T00:00:00Z`);

function compare(kind: Kind, x: unknown, v: Scalar, op: string): boolean {
  if (x === undefined) return false;
  switch (kind) {
    case 'text': return op === 'eq' ? x === String(v).toLowerCase() : false;
    case 'number': return cmp(x as number, Number(v), op);
    case 'date': return cmp(x as string, String(v), op);
    case 'boolean': return x === (v === true || v === 'true');
    case 'stage': return x === v;
    case 'datetime': {
      const t = x as number;
      if (typeof v === 'string' && DATE_ONLY.test(v)) {
        const lo = dayStart(v);
        const hi = lo + DAY;
        return { eq: t >= lo && t < hi, gt: t >= hi, gte: t >= lo, lt: t < lo, lte: t < hi }[op] ?? false;
      }
      return cmp(t, Date.parse(String(v)), op);
    }
  }
}
function cmp<T extends number | string>(a: T, b: T, op: string): boolean {
  switch (op) {
    case 'gt': return a > b;
    case 'gte': return a >= b;
    case 'lt': return a < b;
    case 'lte': return a <= b;
    default: return a === b;
  }
}

function holds(c: Row, r: Rule): boolean {
  const kind = kindOf(r.field);
  const values = Array.isArray(r.value) ? r.value : [r.value!];
  switch (r.op) {
    case 'exists': return present(c, r.field);
    case 'not_exists': return !present(c, r.field);
    case 'contains': case 'contains_any': {
      const text = rawText(c, r.field);
      return text !== undefined && values.some((v) => text.includes(String(v).toLowerCase()));
    }
    case 'in': return values.some((v) => compare(kind, valueOf(c, r.field), v, 'eq'));
    case 'not_in': return !values.some((v) => compare(kind, valueOf(c, r.field), v, 'eq'));
    case 'neq': return !compare(kind, valueOf(c, r.field), values[0]!, 'eq');
    default: return compare(kind, valueOf(c, r.field), values[0]!, r.op);
  }
}

function evaluate(def: Definition, rows: Row[]): Set<string> {
  const rules = def.rules ?? [];
  return new Set(rows.filter((c) => !rules.length
    || (def.match === 'any' ? rules.some((r) => holds(c, r)) : rules.every((r) => holds(c, r)))).map((c) => c.id));
}

// ---------------------------------------------------------------------------------------------
// Random rule sets, valid by construction, with values drawn near the data
// ---------------------------------------------------------------------------------------------
const FIELDS = [...Object.keys(COLUMN_KINDS), ...Object.keys(CUSTOM_KINDS).map((k) => `field_values.${k}`)];
const OPS_FOR: Record<Kind, string[]> = {
  text: ['eq', 'neq', 'in', 'not_in', 'contains', 'contains_any', 'exists', 'not_exists'],
  number: ['eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'],
  datetime: ['eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'],
  date: ['eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'],
  boolean: ['eq', 'neq', 'in', 'not_in', 'exists', 'not_exists'],
  stage: ['eq', 'neq', 'in', 'not_in', 'exists', 'not_exists'],
};
const opsFor = (field: string) => [...OPS_FOR[kindOf(field)], ...(isCustom(field) && kindOf(field) !== 'text' ? ['contains', 'contains_any'] : [])];

const caseVariants = (s: string) => fc.constantFrom(s, s.toUpperCase(), s.toLowerCase());
const textTokens = () => {
  const words = [...NAMES, ...TEXTS, 'example.com', 'user1', '@mail', '555123', '+1555', '%', '_', '\\', 'gold', 'zzz', '12.5', 'true', '19', '-0'];
  return fc.oneof(
    fc.constantFrom(...words).chain(caseVariants),
    fc.constantFrom(...words).chain((w) => fc.nat(w.length).map((i) => w.slice(i, i + 3))),
    fc.string({ maxLength: 3, unit: fc.constantFrom('a', 'E', 'l', '1', '%', '_', '@', '.', ' ') }),
    fc.constantFrom<Scalar>(5, 12.5, true),
  );
};
const numbers = fc.oneof(
  fc.integer({ min: -1, max: 13 }) as fc.Arbitrary<Scalar>,
  fc.constantFrom<Scalar>(12.5, 99.5, 250.25, 0.5, '7', ' 3 ', '+2', '.5', '100.0'),
);
const days = fc.integer({ min: -3, max: 26 }).map((n) => new Date(BASE + n * DAY).toISOString().slice(0, 10));
const instants = fc.oneof(
  fc.constantFrom(...contacts.flatMap((c) => [c.first_seen_at, c.last_seen_at, c.created_at, String(c.custom_fields.last_call ?? c.updated_at)])),
  fc.tuple(fc.integer({ min: -2, max: 24 }), fc.integer({ min: 0, max: 86_399 }), fc.constantFrom(0, 120, -300, 330))
    .map(([d, s, off]) => withOffset(BASE + d * DAY + s * 1000, off)),
);
const birthdays = fc.tuple(fc.integer({ min: 69, max: 100 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 10, max: 19 }))
  .map(([y, m, d]) => `${1900 + y}-0${m}-${d}`);

function scalarFor(field: string, op: string): fc.Arbitrary<Scalar> {
  if (op === 'contains' || op === 'contains_any') return textTokens();
  switch (kindOf(field)) {
    case 'text': return textTokens();
    case 'number': return numbers;
    case 'datetime': return fc.oneof(days, instants);
    case 'date': return birthdays;
    case 'boolean': return fc.constantFrom<Scalar>(true, false, 'true', 'false');
    case 'stage': return fc.constantFrom(...STAGES.map((s) => acme.ids[s]!));
  }
}

const ruleArb = () => fc.constantFrom(...FIELDS).chain((field) => fc.constantFrom(...opsFor(field)).chain((op): fc.Arbitrary<Rule> => {
  if (op === 'exists' || op === 'not_exists') return fc.constant({ field, op });
  if (['in', 'not_in', 'contains_any'].includes(op)) {
    return fc.array(scalarFor(field, op), { minLength: 1, maxLength: 4 }).map((value) => ({ field, op, value }));
  }
  return scalarFor(field, op).map((value) => ({ field, op, value }));
}));
const definitionArb = () => fc.record({
  match: fc.constantFrom<'all' | 'any'>('all', 'any'),
  rules: fc.array(ruleArb(), { minLength: 1, maxLength: 4 }), // no rules at all: a fixed case below
});

const preview = (body: unknown, key = acme.keys.org) => app.request('POST', '/api/v1/audiences/preview-count', { key, body });

async function members(audienceId: string, key = acme.keys.org, limit = 100): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await app.request('GET', `/api/v1/audiences/${audienceId}/contacts?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { key });
    if (res.status !== 200) throw new Error(`list_members: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(...res.body.items.map((c: { id: string }) => c.id));
    cursor = res.body.next_cursor;
  } while (cursor);
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------
test('the data set has what the properties need', (t) => {
  t.is(data.length, CONTACTS);
  for (const key of Object.keys(CUSTOM)) {
    t.true(data.some((c) => key in c.field_values), `some contact has ${key}`);
    t.true(data.some((c) => !(key in c.field_values)), `some contact lacks ${key}`);
  }
  t.true(data.some((c) => c.stage_id === null) && data.some((c) => c.name === null) && data.some((c) => c.email_key === null));
});

test('random rule sets: the database counts exactly what the rules select', async (t) => {
  const sizes: number[] = [];
  await fc.assert(fc.asyncProperty(definitionArb(), async (def) => {
    const res = await preview(def);
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    const expected = evaluate(def, data).size;
    if (res.body.count !== expected) throw new Error(`count ${res.body.count}, expected ${expected}`);
    sizes.push(expected);
  }), { numRuns: 300, seed: 4242, endOnFailure: true });
  // the rule sets are worth checking: most select some contacts but not all
  t.true(sizes.filter((n) => n > 0 && n < CONTACTS).length > sizes.length / 3, JSON.stringify(sizes));
});

test('random rule sets: a dynamic audience lists exactly the contacts its rules select, each once', async (t) => {
  await fc.assert(fc.asyncProperty(definitionArb(), fc.integer({ min: 1, max: 40 }), async (definition, limit) => {
    const created = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'Property', definition } });
    if (created.status !== 201) throw new Error(`${created.status} ${JSON.stringify(created.body)}`);
    const listed = await members(created.body.id, acme.keys.org, limit);
    const expected = evaluate(definition, data);
    if (new Set(listed).size !== listed.length) throw new Error('a contact was listed twice');
    if (listed.length !== expected.size || !listed.every((id) => expected.has(id))) {
      throw new Error(`listed ${listed.length}, expected ${expected.size}`);
    }
    const count = await app.request('GET', `/api/v1/audiences/${created.body.id}/count`, { key: acme.keys.org });
    if (count.body.count !== expected.size) throw new Error(`count ${count.body.count}, expected ${expected.size}`);
  }), { numRuns: 60, seed: 99, endOnFailure: true });
  t.pass();
});

test('counts follow the credential\'s reach: a north-only credential counts north contacts only', async (t) => {
  const north = data.filter((c) => c.north);
  t.true(north.length > 0 && north.length < data.length);
  // a MEMBER reads only name, email and phone, so its rules test only those
  const readable = (def: Definition) => ({ ...def, rules: def.rules!.filter((r) => ['display_name', 'email', 'phone_number'].includes(r.field)) });
  await fc.assert(fc.asyncProperty(definitionArb(), async (def) => {
    for (const [key, d] of [[acme.keys.north_mgr!, def], [acme.keys.north_member!, readable(def)]] as const) {
      const res = await preview(d, key);
      if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
      if (res.body.count !== evaluate(d, north).size) throw new Error(`count ${res.body.count}, expected ${evaluate(d, north).size}`);
    }
  }), { numRuns: 40, seed: 7, endOnFailure: true });
  t.pass();
});

test('fixed cases of the semantics', async (t) => {
  const count = async (def: Definition) => (await preview(def)).body.count as number;
  const expect = async (def: Definition, why: string) => t.is(await count(def), evaluate(def, data).size, why);
  t.is(await count({}), CONTACTS, 'no rules: every contact');
  t.is(await count({ match: 'any', rules: [] }), CONTACTS, 'no rules with any: every contact');
  t.is(await count({ rules: [{ field: 'display_name', op: 'contains', value: '%' }] }),
    data.filter((c) => c.name?.includes('%')).length, 'LIKE wildcards are taken literally');
  t.is(await count({ rules: [{ field: 'display_name', op: 'contains', value: '\\' }] }),
    data.filter((c) => c.name?.includes('\\')).length, 'a backslash is taken literally');
  t.is(await count({ rules: [{ field: 'field_values.plan', op: 'eq', value: 'GOLD' }] }),
    data.filter((c) => String(c.field_values.plan ?? '').toLowerCase() === 'gold').length, 'text compares case-insensitively');
  t.is(await count({ rules: [{ field: 'field_values.plan', op: 'neq', value: 'gold' }] }),
    data.filter((c) => String(c.field_values.plan ?? '').toLowerCase() !== 'gold').length, 'neq matches contacts without the value');
  t.is(await count({ rules: [{ field: 'field_values.visits', op: 'gte', value: '5' }] }),
    data.filter((c) => typeof c.field_values.visits === 'number' && c.field_values.visits >= 5).length, 'a numeric string');
  const day = new Date(data[0]!.last_seen_at).toISOString().slice(0, 10);
  t.is(await count({ rules: [{ field: 'last_seen_at', op: 'eq', value: day }] }),
    data.filter((c) => new Date(c.last_seen_at).toISOString().slice(0, 10) === day).length, 'a date compares the UTC day');
  await expect({ rules: [{ field: 'last_seen_at', op: 'gt', value: day }] }, 'gt a day: after it');
  await expect({ rules: [{ field: 'last_seen_at', op: 'lte', value: day }] }, 'lte a day: on or before it');
  await expect({ rules: [{ field: 'field_values.last_call', op: 'in', value: [day, String(contacts.find((c) => c.custom_fields.last_call)!.custom_fields.last_call)] }] },
    'days and date-times in one list');
  await expect({ rules: [{ field: 'field_values.ltv', op: 'contains', value: '.5' }] }, 'contains on a number field matches its text');
  await expect({ rules: [{ field: 'field_values.vip', op: 'eq', value: 'false' }] }, 'a boolean as a string');
  await expect({ rules: [{ field: 'stage_id', op: 'not_in', value: [acme.ids.lead!] }] }, 'not_in includes contacts without a stage');
  await expect({ rules: [{ field: 'email', op: 'eq', value: data.find((c) => c.email_key)!.email_key!.toUpperCase() }] }, 'email, any case');
  await expect({ match: 'any', rules: [{ field: 'total_calls', op: 'gt', value: 4 }, { field: 'field_values.birthday', op: 'lt', value: '1980-01-01' }] },
    'match any');
  t.is(await count({ rules: [{ field: 'total_calls', op: 'gte', value: 0 }] }), CONTACTS);
});

test('contacts of another organization are never counted', async (t) => {
  t.is((await preview({}, other.keys.org)).body.count, CONTACTS, 'the other organization counts its own');
  t.is((await preview({}, acme.keys.org)).body.count, CONTACTS);
  const res = await preview({ rules: [{ field: 'stage_id', op: 'eq', value: other.ids.lead }] });
  t.is(res.status, 400, 'another organization\'s stage is not a stage of this pipeline');
  t.regex(res.body.message, /^body\.rules\.0\.value: /);
});

// ---------------------------------------------------------------------------------------------
// Every 400: the message and the issue name the rule part to fix
// ---------------------------------------------------------------------------------------------
const r = (rule: Record<string, unknown>, at = 0) => ({ rules: [...Array.from({ length: at }, () => ({ field: 'email', op: 'exists' })), rule] });
/** [why, body, path named, checked when: stored (shape) or evaluated (meaning)] */
const BAD: [string, unknown, string, 'shape' | 'meaning'][] = [
  // structure (checked on create and update too)
  ['rules not a list', { rules: 'all' }, 'body.rules', 'shape'],
  ['match unknown', { match: 'some' }, 'body.match', 'shape'],
  ['51 rules', { rules: Array.from({ length: 51 }, () => ({ field: 'email', op: 'exists' })) }, 'body.rules', 'shape'],
  ['unknown top-level field', { rules: [], where: 1 }, 'body', 'shape'],
  ['unknown rule field', r({ field: 'email', op: 'exists', negate: true }), 'body.rules.0', 'shape'],
  ['missing field', r({ op: 'exists' }), 'body.rules.0.field', 'shape'],
  ['empty field', r({ field: '', op: 'exists' }), 'body.rules.0.field', 'shape'],
  ['field over 200 characters', r({ field: 'a'.repeat(201), op: 'exists' }), 'body.rules.0.field', 'shape'],
  ['field with a space', r({ field: 'field values.plan', op: 'exists' }), 'body.rules.0.field', 'shape'],
  ['field with two dots', r({ field: 'field_values.a.b', op: 'exists' }), 'body.rules.0.field', 'shape'],
  ['unknown op', r({ field: 'email', op: 'like', value: 'x' }), 'body.rules.0.op', 'shape'],
  ['missing op', r({ field: 'email', value: 'x' }), 'body.rules.0.op', 'shape'],
  ['eq without value', r({ field: 'email', op: 'eq' }), 'body.rules.0.value', 'shape'],
  ['exists with a value', r({ field: 'email', op: 'exists', value: true }), 'body.rules.0.value', 'shape'],
  ['in with one value', r({ field: 'email', op: 'in', value: 'x' }), 'body.rules.0.value', 'shape'],
  ['eq with a list', r({ field: 'email', op: 'eq', value: ['x'] }), 'body.rules.0.value', 'shape'],
  ['an object value', r({ field: 'email', op: 'eq', value: { a: 1 } }), 'body.rules.0.value', 'shape'],
  ['a null value', r({ field: 'email', op: 'eq', value: null }), 'body.rules.0.value', 'shape'],
  ['a nested list', r({ field: 'email', op: 'in', value: [['x']] }), 'body.rules.0.value', 'shape'],
  ['an object in a list', r({ field: 'email', op: 'in', value: ['x', { a: 1 }] }), 'body.rules.0.value', 'shape'],
  ['an empty list', r({ field: 'email', op: 'in', value: [] }), 'body.rules.0.value', 'shape'],
  ['501 values', r({ field: 'email', op: 'in', value: Array.from({ length: 501 }, (_, i) => `v${i}`) }), 'body.rules.0.value', 'shape'],
  ['a string over 1000 characters', r({ field: 'email', op: 'contains', value: 'x'.repeat(1001) }), 'body.rules.0.value', 'shape'],
  ['the rule\'s index is named', r({ field: 'email', op: 'eq' }, 3), 'body.rules.3.value', 'shape'],
  // meaning (checked when evaluated)
  ['a field that is not a column', r({ field: 'favorite_color', op: 'exists' }), 'body.rules.0.field', 'meaning'],
  ['a column name in another case', r({ field: 'Email', op: 'exists' }), 'body.rules.0.field', 'meaning'],
  ['field_values without a key', r({ field: 'field_values', op: 'exists' }), 'body.rules.0.field', 'meaning'],
  ['a look-alike of field_values', r({ field: 'fieldXvalues.plan', op: 'exists' }), 'body.rules.0.field', 'meaning'],
  ['an unknown custom field', r({ field: 'field_values.nope', op: 'exists' }), 'body.rules.0.field', 'meaning'],
  ['a disabled custom field', r({ field: 'field_values.retired', op: 'eq', value: 'x' }), 'body.rules.0.field', 'meaning'],
  ['gt on text', r({ field: 'display_name', op: 'gt', value: 'a' }), 'body.rules.0.op', 'meaning'],
  ['lte on a text custom field', r({ field: 'field_values.plan', op: 'lte', value: 'a' }), 'body.rules.0.op', 'meaning'],
  ['gt on a boolean field', r({ field: 'field_values.vip', op: 'gt', value: true }), 'body.rules.0.op', 'meaning'],
  ['gt on the stage', r({ field: 'stage_id', op: 'gt', value: 'x' }), 'body.rules.0.op', 'meaning'],
  ['contains on total_calls', r({ field: 'total_calls', op: 'contains', value: '1' }), 'body.rules.0.op', 'meaning'],
  ['contains on a date column', r({ field: 'created_at', op: 'contains', value: '2026' }), 'body.rules.0.op', 'meaning'],
  ['contains_any on the stage', r({ field: 'stage_id', op: 'contains_any', value: ['a'] }), 'body.rules.0.op', 'meaning'],
  ['a word for a number', r({ field: 'total_calls', op: 'eq', value: 'three' }), 'body.rules.0.value', 'meaning'],
  ['a boolean for a number', r({ field: 'field_values.visits', op: 'gt', value: true }), 'body.rules.0.value', 'meaning'],
  ['a word in a number list', r({ field: 'total_calls', op: 'in', value: [1, 'x'] }), 'body.rules.0.value.1', 'meaning'],
  ['NaN for a number', r({ field: 'field_values.ltv', op: 'lt', value: 'NaN' }), 'body.rules.0.value', 'meaning'],
  ['not a date', r({ field: 'created_at', op: 'gt', value: 'yesterday' }), 'body.rules.0.value', 'meaning'],
  ['a date-time without offset', r({ field: 'created_at', op: 'gt', value: '2026-01-05T10:00:00' }), 'body.rules.0.value', 'meaning'],
  ['an impossible date', r({ field: 'last_seen_at', op: 'eq', value: '2026-02-30' }), 'body.rules.0.value', 'meaning'],
  ['a number for a date', r({ field: 'first_seen_at', op: 'lt', value: 20260101 }), 'body.rules.0.value', 'meaning'],
  ['a date-time for a date field', r({ field: 'field_values.birthday', op: 'eq', value: '1980-01-10T00:00:00Z' }), 'body.rules.0.value', 'meaning'],
  ['a word for a boolean', r({ field: 'field_values.vip', op: 'eq', value: 'yes' }), 'body.rules.0.value', 'meaning'],
  ['a number for a boolean', r({ field: 'field_values.vip', op: 'eq', value: 1 }), 'body.rules.0.value', 'meaning'],
  ['not a stage id', r({ field: 'stage_id', op: 'eq', value: 'lead' }), 'body.rules.0.value', 'meaning'],
  ['an unknown stage id', r({ field: 'stage_id', op: 'in', value: ['00000000-0000-4000-8000-000000000000'] }), 'body.rules.0.value.0', 'meaning'],
];

test('every malformed or unresolvable rule is a 400 naming the part to fix', async (t) => {
  for (const [why, body, path] of BAD) {
    const res = await preview(body);
    t.is(res.status, 400, `${why}: ${JSON.stringify(res.body)}`);
    t.is(res.body.error, 'bad_request', why);
    t.true(String(res.body.message).startsWith(`${path}: `), `${why}: ${res.body.message}`);
    t.true((res.body.issues ?? []).some((i: { path: string }) => i.path === path), `${why}: issues ${JSON.stringify(res.body.issues)}`);
  }
});

test('create and update check only the field\'s format; count and members of a dynamic audience resolve it', async (t) => {
  const definition = { rules: [{ field: 'email', op: 'exists' }, { field: 'field_values.not_yet', op: 'eq', value: 'x' }] };
  const created = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'Later field', definition } });
  t.is(created.status, 201, JSON.stringify(created.body));
  for (const path of ['count', 'contacts']) {
    const res = await app.request('GET', `/api/v1/audiences/${created.body.id}/${path}`, { key: acme.keys.org });
    t.is(res.status, 400, path);
    t.true(res.body.message.startsWith('definition.rules.1.field: '), res.body.message);
  }
  for (const [why, body] of BAD.filter((b) => b[3] === 'shape')) {
    const res = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'Bad', definition: body } });
    t.is(res.status, 400, `create, ${why}`);
    const upd = await app.request('PATCH', `/api/v1/audiences/${created.body.id}`, { key: acme.keys.org, body: { definition: body } });
    t.is(upd.status, 400, `update, ${why}`);
  }
  for (const [why, body] of BAD.filter((b) => b[3] === 'meaning')) {
    const res = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'Resolved later', definition: body } });
    t.is(res.status, 201, `create accepts ${why}`);
    const count = await app.request('GET', `/api/v1/audiences/${res.body.id}/count`, { key: acme.keys.org });
    t.is(count.status, 400, `count refuses ${why}`);
  }
});
