// Validation of an operation's input, shared by REST (path, query, body) and MCP (one
// arguments object split back into the same parts).
import type { z } from 'zod';
import type { AnyOperation } from '../registry/operation.ts';
import { badRequest, fromZod } from './errors.ts';

export interface InputParts { params?: unknown; query?: unknown; body?: unknown }

function parsePart(schema: z.ZodType | undefined, value: unknown, where: string): object {
  if (!schema) return {};
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw fromZod(parsed.error, where);
  return parsed.data as object;
}

/** PostgreSQL text cannot hold NUL, so a string carrying one is refused up front. */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(hasNul);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => k.includes('\u0000') || hasNul(v));
  return false;
}

/** Path, query and body validated by the operation's schemas and merged into one input. */
export function validateInput(op: AnyOperation, parts: InputParts): Record<string, unknown> {
  const input = {
    ...parsePart(op.params, parts.params ?? {}, 'path'),
    ...parsePart(op.query, parts.query ?? {}, 'query'),
    ...(op.body ? parsePart(op.body, parts.body, 'body') : {}),
  };
  if (hasNul(input)) throw badRequest('Strings may not contain NUL characters');
  return input;
}

/** A REST body: JSON text, required when the operation has a body schema. */
export function readJsonBody(op: AnyOperation, raw: unknown): unknown {
  if (!op.body) return undefined;
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
  if (text.trim() === '') throw badRequest('A JSON request body is required');
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON');
  }
}

const keysOf = (schema: z.ZodType | undefined) =>
  schema && 'shape' in schema ? Object.keys((schema as unknown as { shape: object }).shape) : [];

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
