// The OpenAPI 3.1 document, generated from the registry (served at /api/v1/docs-json and
// printed by `svc openapi`). JSON Schemas come from the same zod schemas that validate.
import { z } from 'zod';
import type { AnyOperation } from './operation.ts';

const ErrorEnvelope = {
  type: 'object',
  required: ['statusCode', 'error', 'timestamp', 'path'],
  properties: {
    statusCode: { type: 'integer' },
    error: { type: 'string', description: 'Machine-readable code; branch on this and statusCode, never on message.' },
    timestamp: { type: 'string', format: 'date-time' },
    path: { type: 'string' },
    message: { type: 'string' },
    required: { type: 'string', description: 'The missing scope, on insufficient_scope.' },
    blockers: { type: 'array', items: {}, description: 'Why activation is blocked, on sequence_activation_blocked.' },
  },
} as const;

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function schemaOf(s: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function parameters(op: AnyOperation) {
  const out: unknown[] = [];
  for (const [where, shape] of [['path', op.params], ['query', op.query]] as const) {
    if (!shape) continue;
    const json = schemaOf(shape, 'input') as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
    for (const [name, schema] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = schema;
      out.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  return out;
}

function operationObject(op: AnyOperation) {
  const status = String(op.successStatus ?? 200);
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    security: [{ bearer: [] }],
    parameters: parameters(op),
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(op.body, 'input') } } } }
      : {}),
    responses: {
      [status]: { description: 'Success', content: { 'application/json': { schema: schemaOf(op.response, 'output') } } },
      '400': errorResponse('Invalid path, query or body'),
      '401': errorResponse('Missing, malformed, unknown or revoked key, or agent access off'),
      '403': errorResponse('insufficient_scope (with required) or insufficient_role'),
      '404': errorResponse('Absent in the organization or out of reach'),
      '429': errorResponse(op.heavy
        ? 'Over the rate limit, or too_many_concurrent_requests (retry after retry_after seconds)'
        : 'Over the rate limit'),
      '503': errorResponse('busy (retry after retry_after seconds) or timeout'),
    },
    'x-svc-heavy': op.heavy ?? false,
    'x-svc-scope': op.scope,
    'x-svc-confirm': op.confirm,
    'x-svc-changes': op.changes.length ? op.changes : null,
    'x-svc-idempotent': op.idempotent,
    'x-member-access': op.memberAccess,
    'x-manager-power': op.managerPower,
  };
}

// The MCP entry point is an operation of its own: JSON-RPC over Streamable HTTP, whose
// tools are the operations above.
const mcpRequest = {
  operationId: 'mcp_request',
  summary: 'MCP entry point (Streamable HTTP, stateless)',
  description:
    'JSON-RPC 2.0 messages of the Model Context Protocol. Every other operation is a tool named like its operationId, ' +
    'listed for what the credential may call. Any live credential may connect; 404 after the key is checked means MCP ' +
    'is not enabled for the organization (REST keeps working). Answers JSON or an SSE stream, as the Accept header prefers.',
  tags: ['MCP'],
  security: [{ bearer: [] }],
  requestBody: {
    required: true,
    content: { 'application/json': { schema: { type: 'object', description: 'A JSON-RPC 2.0 request, notification or batch' } } },
  },
  responses: {
    '200': { description: 'JSON-RPC response (application/json or text/event-stream)' },
    '202': { description: 'Accepted (notifications)' },
    '401': errorResponse('Missing or invalid key'),
    '403': errorResponse('Host or Origin not allowed'),
    '404': errorResponse('MCP not enabled for the organization'),
    '429': errorResponse('Over the rate limit'),
  },
  'x-svc-scope': null,
  'x-svc-confirm': false,
  'x-svc-changes': null,
  'x-svc-idempotent': false,
  'x-member-access': null,
  'x-manager-power': null,
};

export function openApiDocument(ops: readonly AnyOperation[], baseUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops) {
    (paths[op.path] ??= {})[op.method.toLowerCase()] = operationObject(op);
  }
  paths['/api/v1/mcp'] = { post: mcpRequest };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Receptionist, CRM and follow-up service',
      version: '1.0.0',
      description:
        'AI receptionist, CRM and follow-up service for small businesses. Every operation is also an MCP tool of the same name. ' +
        'An operation absent from this document is not live.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: baseUrl }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'svc_sk_ followed by 32 characters' } },
      schemas: { Error: ErrorEnvelope },
    },
  };
}
