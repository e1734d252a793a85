// The receptionist's tools: the operations it may use, described from the same registry entries
// that generate the MCP tools (name, description, input schema), less the fields the service
// fills in from the conversation, plus `handover`. A tool call runs through the operation's own
// code path (runOperation) under app_hidden.receptionist_authenticate's claims, which refuse an
// input naming another contact, location or appointment (403 not_allowed): the database decides.
import type pg from 'pg';
import type { Config } from '../config.ts';
import { appointmentsAvailability } from '../appointments/availability.ts';
import { appointmentsCancel, appointmentsCreate, appointmentsReschedule } from '../appointments/booking.ts';
import { appointmentsList } from '../appointments/reads.ts';
import { locationsBookingOptions } from '../appointments/resources.ts';
import { contactsUpdate } from '../contacts/records.ts';
import { inputSchemaOf } from '../mcp/tools.ts';
import { toApiError, type Envelope } from '../platform/errors.ts';
import { runOperation } from '../platform/execute.ts';
import type { AnyOperation } from '../registry/operation.ts';

export const TOOL_OPERATIONS: readonly AnyOperation[] = [locationsBookingOptions, appointmentsAvailability, appointmentsCreate,
  appointmentsList, appointmentsReschedule, appointmentsCancel, contactsUpdate];
const BY_NAME = new Map(TOOL_OPERATIONS.map((op) => [op.operationId, op]));

/** Fields the service fills in from the conversation (and the idempotency key it derives). */
const BOUND = ['contact_id', 'contactId', 'location_id', 'locationId', 'calendar_id', 'idempotency_key'];

/** A tool in the chat-completions `tools` format. */
export interface ToolSpec { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }

function parametersOf(op: AnyOperation): Record<string, unknown> {
  const schema = structuredClone(inputSchemaOf(op)) as { properties?: Record<string, unknown>; required?: string[] };
  for (const field of BOUND) delete schema.properties?.[field];
  if (schema.required) schema.required = schema.required.filter((f) => !BOUND.includes(f));
  return schema as Record<string, unknown>;
}

export const HANDOVER_TOOL: ToolSpec = {
  type: 'function',
  function: {
    name: 'handover',
    description: 'Hands the conversation to a person of the team (they are told by email and answer in the inbox); the contact '
      + 'is told a person will answer. Use it when the contact asks for a person, for an emergency, or for anything you cannot do.',
    parameters: { type: 'object', properties: { reason: { type: 'string', maxLength: 500, description: 'Why a person is needed' } },
      required: ['reason'], additionalProperties: false },
  },
};

/** The tools the model is given, in a fixed order. */
export const TOOLS: readonly ToolSpec[] = [
  ...TOOL_OPERATIONS.map((op): ToolSpec => ({
    type: 'function',
    function: { name: op.operationId, description: op.description, parameters: parametersOf(op) },
  })),
  HANDOVER_TOOL,
];

/** The conversation a tool call is bound to. */
export interface Binding {
  organization_id: string;
  conversation_id: string;
  contact_id: string;
  location_id: string | null;
  /** The inbound message answered: with the call's position, the idempotency key of a write. */
  message_id: string;
}

export type ToolResult = { ok: true; body: unknown } | { ok: false; error: Envelope };

const MAX_ARGUMENTS = 16 * 1024;

const errorOf = (statusCode: number, error: string, message: string): ToolResult =>
  ({ ok: false, error: { statusCode, error, message, timestamp: new Date().toISOString(), path: 'receptionist' } });

/**
 * Runs one tool call of the receptionist: `args` as the model sent them (JSON text, or an
 * object), `position` the call's place in this turn (1, 2, …). Never throws for what the model
 * sent: an unknown tool, arguments that are not JSON or not an object, too large, or refused by
 * the schema or the database come back as the error envelope.
 */
export async function runTool(deps: { config: Config }, client: pg.PoolClient, binding: Binding, name: string, args: unknown,
  position: number): Promise<ToolResult> {
  const op = BY_NAME.get(name);
  if (!op) return errorOf(404, 'unknown_tool', `No tool named ${String(name).slice(0, 80)}`);
  let input: unknown = args;
  if (typeof args === 'string') {
    if (args.length > MAX_ARGUMENTS) return errorOf(413, 'payload_too_large', `Tool arguments are limited to ${MAX_ARGUMENTS} characters`);
    try {
      input = args.trim() === '' ? {} : JSON.parse(args);
    } catch {
      return errorOf(400, 'bad_request', 'The arguments are not JSON');
    }
  }
  if (!input || typeof input !== 'object' || Array.isArray(input)) return errorOf(400, 'bad_request', 'The arguments must be a JSON object');
  const filled = { ...input as Record<string, unknown> };
  const fields = new Set(Object.keys(inputSchemaOf(op).properties ?? {}));
  // bound fields the model left out are the conversation's; one it named is checked by the database
  if (fields.has('contact_id') && !('contact_id' in filled)) filled.contact_id = binding.contact_id;
  if (fields.has('contactId') && !('contactId' in filled)) filled.contactId = binding.contact_id;
  if (binding.location_id && fields.has('location_id') && !('location_id' in filled)) filled.location_id = binding.location_id;
  if (binding.location_id && fields.has('locationId') && !('locationId' in filled)) filled.locationId = binding.location_id;
  if (op.idempotent) filled.idempotency_key = `receptionist:${binding.message_id}:${position}`;
  try {
    const { body } = await runOperation(deps, client, op, filled, (validated) => ({
      authenticate: 'app_hidden.receptionist_authenticate',
      args: [binding.organization_id, binding.conversation_id, op.operationId, JSON.stringify(validated)],
    }));
    return { ok: true, body };
  } catch (e) {
    const err = toApiError(e);
    if (err.statusCode >= 500) throw e;
    return errorOf(err.statusCode, err.code, err.message);
  }
}
