// Every live operation as an MCP tool: same name, same input schema (path, query and body
// fields merged), same handler. Which tools a credential sees the database decides, with the
// check that authorizes each call (app_hidden.authorize_mcp, src/mcp/endpoint.ts); the list is a
// courtesy to the agent only — a call is authorized by the database like any REST request.
import { z } from 'zod';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AnyOperation } from '../registry/operation.ts';

const CONFIRM_NOTE =
  ' Confirmation: this call sends to a customer, deletes or cancels, or moves money; ask the user to approve it first unless they asked for exactly this action.';

export function inputSchemaOf(op: AnyOperation): Tool['inputSchema'] {
  const shape = {
    ...(op.params?.shape ?? {}),
    ...(op.query?.shape ?? {}),
    ...(op.body?.shape ?? {}),
  };
  const { $schema: _ignored, ...json } = z.toJSONSchema(z.object(shape), { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...json, type: 'object' } as Tool['inputSchema'];
}

export function toolOf(op: AnyOperation): Tool {
  // a read scope authorizes no write, so a POST under one (audiences_preview_count) is a read too
  const readOnly = op.method === 'GET' || (op.scope?.endsWith(':read') ?? false);
  return {
    name: op.operationId,
    title: op.summary,
    description: op.description + (op.confirm ? CONFIRM_NOTE : ''),
    inputSchema: inputSchemaOf(op),
    annotations: {
      title: op.summary,
      readOnlyHint: readOnly,
      ...(readOnly ? {} : {
        // removing, cancelling or sending cannot be undone; adding and setting can
        destructiveHint: op.method === 'DELETE' || op.confirm,
        // the same arguments again change nothing more: setting, removing, or a replayed key
        idempotentHint: op.method === 'PUT' || op.method === 'PATCH' || op.method === 'DELETE' || op.idempotent,
      }),
      openWorldHint: op.confirm,
    },
    _meta: { 'svc/confirm': op.confirm, 'svc/changes': [...op.changes] },
  };
}
