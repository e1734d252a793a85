// Validation of an operation's input, shared by REST (path, query, body) and MCP (one
// arguments object split back into the same parts).
import { z } from 'zod';
import type { AnyOperation } from '../registry/operation.ts';
import { badRequest, fromZod } from './errors.ts';

export interface InputParts { params?: unknown; query?: unknown; body?: unknown }

function parsePart(schema: z.ZodType | undefined, value: unknown, where: string): object {
  if (!schema) return {};
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw fromZod(parsed.error, where);
  return parsed.data as object;
}

/**
 * Text PostgreSQL cannot hold as sent, refused up front: NUL, and a lone UTF-16 surrogate
 * (`"\ud800"` in JSON), which would be stored as U+FFFD, so that two different tags became one.
 */
const badText = (s: string): boolean => s.includes('\u0000') || !s.isWellFormed();
function hasBadText(value: unknown): boolean {
  if (typeof value === 'string') return badText(value);
  if (Array.isArray(value)) return value.some(hasBadText);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => badText(k) || hasBadText(v));
  return false;
}

/** Input nested deeper than this is refused before any walk of it (ours and zod's recurse). */
export const MAX_INPUT_DEPTH = 64;
function tooDeep(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) return true;
    for (const x of Object.values(v)) stack.push([x, depth + 1]);
  }
  return false;
}

/**
 * Where a number that JSON parsing rounded sits (an integer beyond ±(2^53 − 1), such as
 * 9007199254740993, arrives as a neighbour): stored, it would be another number than the one sent.
 */
function unsafeIntegerAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value) ? path : undefined;
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = unsafeIntegerAt(v, `${path}.${k}`);
      if (at) return at;
    }
  }
  return undefined;
}

const keysOf = (schema: z.ZodType | undefined) =>
  schema && 'shape' in schema ? Object.keys((schema as unknown as { shape: object }).shape) : [];

// Query schemas are declared as plain objects, which drop what they do not name; the query is
// held to its parameters here, once for every operation, so a misspelt one (?emial=) is refused
// instead of ignored (and ignoring it would, for a filter, list everything).
const queryParameters = new WeakMap<AnyOperation, ReadonlySet<string>>();
function checkQueryParameters(op: AnyOperation, query: object): void {
  let known = queryParameters.get(op);
  if (!known) queryParameters.set(op, known = new Set(keysOf(op.query)));
  const unknown = Object.keys(query).filter((k) => !known.has(k));
  if (!unknown.length) return;
  const takes = known.size ? `it takes ${[...known].join(', ')}` : 'it takes none';
  throw badRequest(`query.${unknown[0]}: not a parameter of this operation (${takes})`, {
    issues: unknown.map((k) => ({ path: `query.${k}`, message: 'not a parameter of this operation' })),
  });
}

/** Path, query and body validated by the operation's schemas and merged into one input. */
export function validateInput(op: AnyOperation, parts: InputParts): Record<string, unknown> {
  const query = parts.query ?? {};
  checkQueryParameters(op, query as object);
  if (tooDeep(parts.body) || tooDeep(query)) throw badRequest(`The input is nested more than ${MAX_INPUT_DEPTH} levels deep`);
  const unsafe = unsafeIntegerAt(query, 'query') ?? unsafeIntegerAt(parts.body, 'body');
  if (unsafe) throw badRequest(`${unsafe}: integers must lie within ±9007199254740991 (beyond, a JSON number is not read exactly)`, { field: unsafe });
  const input = {
    ...parsePart(op.params, parts.params ?? {}, 'path'),
    ...parsePart(op.query, query, 'query'),
    ...(op.body ? parsePart(op.body, parts.body, 'body') : {}),
  };
  if (hasBadText(input)) throw badRequest('Strings may not contain NUL characters or lone UTF-16 surrogates');
  return input;
}

/**
 * A REST query as Node's querystring parses it: a parameter sent twice arrives as a list,
 * which no parameter takes; it is refused by name rather than read one way or the other.
 */
export function readQuery(query: Record<string, unknown>): Record<string, unknown> {
  const repeated = Object.keys(query).filter((k) => Array.isArray(query[k]));
  if (repeated.length) throw badRequest(`query.${repeated[0]}: sent more than once; send each parameter once`);
  return query;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** JSON text as sent; invalid UTF-8 is refused, never read as U+FFFD. */
export function parseJsonBody(raw: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw badRequest('The request body is not valid UTF-8');
  }
  if (text.trim() === '') throw badRequest('A JSON request body is required');
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON');
  }
}

/** A REST body: JSON text, required when the operation has a body schema. */
export function readJsonBody(op: AnyOperation, raw: unknown): unknown {
  if (!op.body) return undefined;
  return parseJsonBody(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0));
}

const PROTO = '__proto__';

/**
 * `schema`, an object of free keys (a record, or an object with a catchall), parsed as zod
 * parses it except for one key: zod drops a `__proto__` key without a word (JSON.parse makes
 * it an ordinary own key). Here it is checked like any other key, by `free`, and kept, so it
 * reaches whatever decides whether the key is allowed (a custom field key is [A-Za-z0-9_],
 * so an organization may even define one by that name). The JSON Schema is `schema`'s.
 */
export function keepingProtoKey<S extends z.ZodType<Record<string, unknown>>>(schema: S, free: { key?: z.ZodType; value: z.ZodType }) {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return z.unknown().transform((input, ctx): z.output<S> => {
    const parsed = schema.safeParse(input);
    const own = input && typeof input === 'object' ? Object.getOwnPropertyDescriptor(input, PROTO) : undefined;
    const issues = parsed.success ? [] : [...parsed.error.issues];
    let value: unknown;
    if (own) {
      const key = free.key?.safeParse(PROTO);
      if (key && !key.success) issues.push(...key.error.issues.map((i) => ({ ...i, path: [PROTO] })));
      const checked = free.value.safeParse(own.value);
      if (checked.success) value = checked.data;
      else issues.push(...checked.error.issues.map((i) => ({ ...i, path: [PROTO, ...i.path] })));
    }
    if (!parsed.success || issues.length) {
      for (const issue of issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
      return z.NEVER;
    }
    if (own) Object.defineProperty(parsed.data, PROTO, { value, enumerable: true, writable: true, configurable: true });
    return parsed.data;
  }).meta(json);
}

/** An MCP tool's arguments split into the REST parts they stand for. */
export function splitArguments(op: AnyOperation, args: Record<string, unknown>): InputParts {
  const pathKeys = keysOf(op.params);
  const queryKeys = keysOf(op.query);
  const pick = (keys: string[]) => Object.fromEntries(Object.entries(args).filter(([k]) => keys.includes(k)));
  const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !pathKeys.includes(k) && !queryKeys.includes(k)));
  if (!op.body && Object.keys(rest).length) {
    throw badRequest(`Unknown argument${Object.keys(rest).length > 1 ? 's' : ''}: ${Object.keys(rest).join(', ')}`);
  }
  return { params: pick(pathKeys), query: pick(queryKeys), body: rest };
}
