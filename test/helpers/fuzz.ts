// Values for the malformed-input suite (test/platform/malformed.test.ts), derived from each input
// field's JSON Schema as the MCP tool and the OpenAPI document publish it: plausible values from
// its examples, enums, formats and bounds (at the bound), and garbage from the same schema (other
// types, just past a bound, outside a set, unknown and `__proto__` keys), plus hostile strings and
// numbers any field may meet. Nothing here names a field of an area: values that only make sense
// with the fixture's data come from the area's `malformedInput` (test/<area>/helpers.ts).
import type { Applied } from '../../src/admin/fixture.ts';
import type { TestApp } from './app.ts';
import type { Fixture } from './fixtures.ts';

export type Rand = () => number;
export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** A key set as JSON.parse sets it: `__proto__` too becomes an own key (an assignment would set the prototype). */
export const own = <T extends object>(o: T, k: string, v: unknown): T =>
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

/** What values may name: the tenant (and its fixture's refs), and the ids of records. */
export interface Pools {
  tenant: Applied;
  /**
   * Ids for a field, the tenant's and another organization's: of the table the field names
   * (`contactId`, `contact_id`: contacts; `stage_id`: pipeline_stages; `location_ids`:
   * locations), or of every record when it names none.
   */
  ids(field: string): { own: readonly string[]; other: readonly string[] };
}

/**
 * What an area adds to the malformed-input suite: `export const malformedInput` from
 * test/<area>/helpers.ts, found by the area's name.
 */
export interface MalformedInput {
  /** What the area adds to the suite's tenants (both organizations get it). */
  fixture?: (base: Fixture) => Fixture;
  /** Records made through the API once each tenant exists (their ids join the pools). */
  setup?: (app: TestApp, tenant: Applied) => Promise<void>;
  /**
   * Values of the area's input fields that fit the fixture's data, by field name, or by
   * `<operationId>.<field>` for one operation's field only (other operations' draws unchanged).
   */
  values?: Record<string, (r: Rand, pools: Pools) => unknown>;
  /**
   * Transitions that refuse to run twice (a 409 by the spec, as resuming a sequence no longer
   * paused): each case goes over REST first, so their successes are counted there.
   */
  onceOnly?: readonly string[];
  /**
   * Restores, before an operation's cases run, the state some of them need that the cases of
   * operations before it may have changed (a broadcast's audience archived by the audiences'
   * cases): called once per operation of any area, it acts only on the operations it knows.
   */
  prepare?: (app: TestApp, tenant: Applied, operationId: string) => Promise<void>;
}

/** A JSON Schema node, as zod writes it. */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  examples?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
}

const HOSTILE_STRINGS = [
  '', ' ', 'a', 'x'.repeat(256), 'y'.repeat(1001), 'z'.repeat(20_001), 'nul\u0000byte', 'lone \ud800 surrogate', '😀 emoji',
  "' or 1=1 --", '%', '_', '\\', '%_%', '../../etc/passwd', 'NaN', 'Infinity', '-Infinity', '1e400', '-0', '0x10',
  '2026-02-30', '2026-11-22', '2026-11-22T10:00:00Z', '2026-11-22T10:00:00', '0000-01-01T00:00:00Z',
  '294277-01-01T00:00:00Z', '9999-12-31T23:59:59+14:00', 'infinity', 'epoch', 'today', '+', '+999999999999999999', 'a@b', '@',
  'true', 'false', 'null', '{}', '00000000-0000-0000-0000-000000000000',
];
// beyond ±(2^53 - 1) an integer is not read exactly: 2 ** 53 + 1 is sent as 9007199254740992
const HOSTILE_NUMBERS = [0, -1, 1, 2, 1.5, -0.5, 1e308, -1e308, 2 ** 31, 2 ** 53 + 1, -(2 ** 53) - 2, 1e20,
  Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
/** Keys an object may meet that it does not declare, JavaScript's own among them. */
const STRAY_KEYS = ['surprise', '__proto__', 'constructor', 'prototype', 'id', 'organization_id'];

/** A value of any JSON type, from the hostile pools. */
export function hostile(r: Rand, pools: Pools, name = ''): unknown {
  const roll = r();
  if (roll < 0.5) return pick(r, HOSTILE_STRINGS);
  if (roll < 0.7) return pick(r, HOSTILE_NUMBERS);
  if (roll < 0.8) return anyId(r, pools, name);
  if (roll < 0.9) return r() < 0.5;
  if (roll < 0.95) return null;
  return pick(r, [{}, [], [null], { a: { b: [1] } }]);
}

/** An id for the field: mostly the tenant's records, some of the other organization's, some of nothing. */
function anyId(r: Rand, pools: Pools, name: string): string {
  const { own: mine, other } = pools.ids(name);
  const roll = r();
  if (roll < 0.55 && mine.length) return pick(r, mine);
  if (roll < 0.85 && other.length) return pick(r, other);
  return pick(r, ['00000000-0000-0000-0000-000000000000', '6f1c2a4e-93d7-4b0a-8e15-2c7d9b3f0a61']);
}

const typeOf = (s: Schema, r: Rand): string | undefined => {
  if (Array.isArray(s.type)) {
    const types = s.type.filter((x) => x !== 'null');
    return r() < 0.9 && types.length ? pick(r, types) : pick(r, s.type);
  }
  return s.type ?? (s.properties || s.additionalProperties ? 'object' : undefined);
};
const branchesOf = (s: Schema) => s.anyOf ?? s.oneOf;
const nonNull = (branches: Schema[]) => branches.filter((b) => b.type !== 'null');

/** A length within [min, max]: mostly small, sometimes at a bound. */
function length(r: Rand, min = 0, max = Infinity): number {
  const roll = r();
  if (roll < 0.1 && Number.isFinite(max) && max <= 600) return max;
  if (roll < 0.2) return min;
  return Math.min(max, min + Math.floor(r() * 3));
}

/** A value the schema of field `name` takes, as a careful caller would send it. */
export function plausible(s: Schema, r: Rand, pools: Pools, name: string, depth = 0): unknown {
  if (s.examples?.length && r() < 0.7) return structuredClone(pick(r, s.examples));
  if (s.const !== undefined) return s.const;
  if (s.enum) return pick(r, s.enum);
  const branches = branchesOf(s);
  if (branches) {
    return plausible(r() < 0.9 && nonNull(branches).length ? pick(r, nonNull(branches)) : pick(r, branches), r, pools, name, depth + 1);
  }
  switch (typeOf(s, r)) {
    case 'string': return plausibleString(s, r, pools, name);
    case 'integer': case 'number': return plausibleNumber(s, r);
    case 'boolean': return r() < 0.5;
    case 'null': return null;
    case 'array':
      return Array.from({ length: length(r, s.minItems, depth > 2 ? 1 : s.maxItems) }, () => plausible(s.items ?? {}, r, pools, name, depth + 1));
    case 'object': return plausibleObject(s, r, pools, depth);
    default: return depth > 2 ? pick(r, HOSTILE_STRINGS) : hostile(r, pools, name);
  }
}

function plausibleString(s: Schema, r: Rand, pools: Pools, name: string): string {
  switch (s.format) {
    case 'uuid': return anyId(r, pools, name);
    case 'email': return pick(r, [`p${Math.floor(r() * 1e6)}@example.com`, `New.Person${Math.floor(r() * 100)}@Example.com`]);
    case 'date-time':
      return pick(r, ['2026-01-05T10:00:00Z', '2025-12-31T23:00:00-05:00', new Date(Date.now() - 3_600_000).toISOString(),
        new Date(Date.now() + 86_400_000).toISOString()]);
    case 'date': return pick(r, ['2026-01-05', '1990-02-28']);
  }
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? 255;
  const roll = r();
  if (roll < 0.1 && max <= 25_000) return 'x'.repeat(max);
  if (roll < 0.15 && min > 0) return 'y'.repeat(min);
  const word = pick(r, ['sample', 'Ann', 'vip', 'New value', 'ünïcödé 😀', `s${Math.floor(r() * 1e6)}`]);
  return word.length < min ? word.padEnd(min, 'z') : word.slice(0, max);
}

function plausibleNumber(s: Schema, r: Rand): number {
  const integer = s.type === 'integer';
  const min = s.minimum ?? -5;
  const max = s.maximum ?? min + 100;
  const roll = r();
  if (roll < 0.15) return min;
  if (roll < 0.25) return max;
  const n = min + r() * Math.min(max - min, 10);
  return integer ? Math.floor(n) : Math.round(n * 10) / 10;
}

function plausibleObject(s: Schema, r: Rand, pools: Pools, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    if (s.required?.includes(k) || r() < 0.6) out[k] = plausible(v, r, pools, k, depth + 1);
  }
  if (typeof s.additionalProperties === 'object' && depth < 3) {
    for (let i = Math.floor(r() * 3); i > 0; i--) {
      const key = String(plausible(s.propertyNames ?? { type: 'string', maxLength: 40 }, r, pools, '', depth + 1));
      own(out, key, plausible(s.additionalProperties, r, pools, key, depth + 1));
    }
  }
  return out;
}

/** A value the schema of field `name` refuses, or nearly takes: another type, just past a bound, outside a set. */
export function garbage(s: Schema, r: Rand, pools: Pools, name: string, depth = 0): unknown {
  const roll = r();
  if (roll < 0.2 || depth > 2) return hostile(r, pools, name);
  const branches = branchesOf(s);
  if (branches && nonNull(branches).length) return garbage(pick(r, nonNull(branches)), r, pools, name, depth + 1);
  if (s.enum) return pick(r, [`${String(pick(r, s.enum)).toUpperCase()}_`, '', `${String(pick(r, s.enum))} `, 'none', 1]);
  const near: unknown[] = [];
  switch (typeOf(s, r)) {
    case 'string':
      if (s.maxLength !== undefined) near.push('x'.repeat(s.maxLength + 1));
      if (s.minLength) near.push('y'.repeat(s.minLength - 1));
      if (s.format === 'uuid') near.push(anyId(r, pools, name).toUpperCase(), `${anyId(r, pools, name)} `, '123', 'not-a-uuid');
      if (s.format === 'email') near.push('a@b', '@', 'ann@', 'ann example.com');
      if (s.format === 'date-time') near.push('2026-02-30T00:00:00Z', '2026-11-22T10:00:00', 'yesterday', '294277-01-01T00:00:00Z');
      if (s.pattern) near.push('Bad Value!', ' ', 'a.b.c');
      near.push(pick(r, HOSTILE_NUMBERS), r() < 0.5);
      break;
    case 'integer': case 'number':
      if (s.minimum !== undefined) near.push(s.minimum - 1);
      if (s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER) near.push(s.maximum + 1);
      if (s.type === 'integer') near.push(1.5, 2 ** 53 + 1);
      near.push('3', pick(r, HOSTILE_STRINGS), pick(r, HOSTILE_NUMBERS));
      break;
    case 'boolean':
      near.push('true', 1, 'yes', null);
      break;
    case 'array': {
      const item = s.items ?? {};
      if (s.maxItems !== undefined && s.maxItems < 600) {
        near.push(Array.from({ length: s.maxItems + 1 }, () => plausible(item, r, pools, name, depth + 1)));
      }
      if (s.minItems) near.push([]);
      near.push([garbage(item, r, pools, name, depth + 1)], [plausible(item, r, pools, name, depth + 1), garbage(item, r, pools, name, depth + 1)],
        pick(r, HOSTILE_STRINGS), {});
      break;
    }
    case 'object': {
      const base = () => plausibleObject(s, r, pools, depth);
      near.push(own(base(), pick(r, STRAY_KEYS), hostile(r, pools)), [base()], pick(r, HOSTILE_STRINGS));
      const declared = Object.entries(s.properties ?? {});
      if (declared.length) {
        const [k, v] = pick(r, declared);
        near.push({ ...base(), [k]: garbage(v, r, pools, k, depth + 1) });
      }
      const required = s.required?.length ? pick(r, s.required) : undefined;
      if (required) near.push(Object.fromEntries(Object.entries(base()).filter(([k]) => k !== required)));
      break;
    }
    default:
      return hostile(r, pools, name);
  }
  return pick(r, near);
}
