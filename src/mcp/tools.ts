// Every live operation as an MCP tool: same name, same input schema (path, query and body
// fields merged), same handler, and an output schema from the operation's response schema.
// Which tools a credential sees the database decides, with the check that authorizes each call
// (app_hidden.authorize_mcp, src/mcp/endpoint.ts); the list is a courtesy to the agent only — a
// call is authorized by the database like any REST request.
import { z } from 'zod';
import type { Tool } from '@modelcontextprotocol/server';
import type { AnyOperation } from '../registry/operation.ts';

const CONFIRM_NOTE =
  ' Confirmation: this call sends to a customer, deletes or cancels, or moves money; ask the user to approve it first unless they asked for exactly this action.';

type JsonSchema = Record<string, unknown>;

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return json;
}

export function inputSchemaOf(op: AnyOperation): Tool['inputSchema'] {
  const shape = {
    ...(op.params?.shape ?? {}),
    ...(op.query?.shape ?? {}),
    ...(op.body?.shape ?? {}),
  };
  // strict, as validateInput is: an argument the tool does not name is refused, so the schema says so
  return { ...jsonSchemaOf(z.strictObject(shape), 'input'), type: 'object' } as Tool['inputSchema'];
}

const isObjectSchema = (s: unknown): boolean => {
  const json = s as JsonSchema;
  if (json.type === 'object') return true;
  const union = (json.anyOf ?? json.oneOf) as unknown[] | undefined;
  return json.type === undefined && Array.isArray(union) && union.length > 0 && union.every(isObjectSchema);
};

/**
 * Whether the tool's structuredContent is the REST body itself or the body under `result`: MCP
 * requires an output schema of type object, so an answer that is not always an object (an
 * array, as sequences_list answers) is wrapped as `{ "result": body }`. The text content is the
 * REST body as it is in every case.
 */
export function wrapsOutput(op: AnyOperation): boolean {
  return !isObjectSchema(jsonSchemaOf(op.response, 'output'));
}

/**
 * The operation's response schema as the tool's outputSchema: as it is when every answer is an
 * object (a union of objects gets `type: object` beside its anyOf), else under `result`.
 */
export function outputSchemaOf(op: AnyOperation): NonNullable<Tool['outputSchema']> {
  const json = jsonSchemaOf(op.response, 'output');
  if (!isObjectSchema(json)) {
    return { type: 'object', properties: { result: json }, required: ['result'], additionalProperties: false };
  }
  return { ...json, type: 'object' } as NonNullable<Tool['outputSchema']>;
}

/** The structuredContent of a successful call whose REST body is `body`. */
export function structuredOf(op: AnyOperation, body: unknown, wrap = wrapsOutput(op)): Record<string, unknown> {
  return wrap ? { result: body } : body as Record<string, unknown>;
}

/**
 * The annotations of the 2025-11-25 revision (ToolAnnotations), all stated rather than left to
 * their defaults, from the registry's method and flags:
 * - readOnlyHint: a GET, or any operation under a read scope (a read scope authorizes no write, so
 *   audiences_preview_count's POST is a read);
 * - destructiveHint: a write that removes, cancels or sends, which cannot be undone (DELETE, or
 *   flagged confirm); adding and setting are not;
 * - idempotentHint: the same arguments again change nothing more (reads; PUT, PATCH, DELETE; or an
 *   operation whose idempotency key is required, so that the same arguments carry the same key:
 *   where the key is optional, a retry without one writes again, a second note say);
 * - openWorldHint: the call may reach people outside the service (a confirmed write other than a
 *   DELETE: a text, an email, an enrollment that sends, a cancellation the customer is told of);
 *   reads and the other writes stay inside.
 */
const requiresKey = (op: AnyOperation): boolean =>
  op.idempotent && op.body?.shape.idempotency_key?.safeParse(undefined).success === false;

export function annotationsOf(op: AnyOperation): NonNullable<Tool['annotations']> {
  const readOnly = op.method === 'GET' || (op.scope?.endsWith(':read') ?? false);
  return {
    title: op.summary,
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && (op.method === 'DELETE' || op.confirm),
    idempotentHint: readOnly || op.method === 'PUT' || op.method === 'PATCH' || op.method === 'DELETE' || requiresKey(op),
    openWorldHint: !readOnly && op.confirm && op.method !== 'DELETE',
  };
}

export function toolOf(op: AnyOperation): Tool {
  return {
    name: op.operationId,
    title: op.summary,
    description: op.description + (op.confirm ? CONFIRM_NOTE : ''),
    inputSchema: inputSchemaOf(op),
    outputSchema: outputSchemaOf(op),
    annotations: annotationsOf(op),
    _meta: { 'svc/confirm': op.confirm, 'svc/changes': [...op.changes] },
  };
}
