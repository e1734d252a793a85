// MCP from the tests: the SDK's own client, and raw JSON-RPC for what that client would not send
// (batches, stateless calls, arguments of any shape, bodies that are not JSON-RPC). Every
// successful tool result that comes back is held to its operation's response schema (responses.ts).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AnyOperation } from '../../src/registry/operation.ts';
import { assertFitsResponse } from './responses.ts';

/** A running service: where it listens and the operations it serves (a TestApp). */
export interface McpTarget { url: string; operations: readonly AnyOperation[] }

const endpoint = (target: McpTarget) => `${target.url}/api/v1/mcp`;

function checkToolResult(target: McpTarget, name: unknown, result: unknown, where: string): void {
  if (!result || typeof result !== 'object' || (result as { isError?: boolean }).isError) return;
  const op = target.operations.find((o) => o.operationId === name);
  // the text content is the body as REST answers it (structuredContent wraps an array in {result})
  const text = (result as { content?: { type: string; text?: string }[] }).content?.find((c) => c.type === 'text')?.text;
  if (op && text !== undefined) assertFitsResponse(op, JSON.parse(text), where);
}

/** The JSON-RPC message, or batch of messages, of an answer sent as JSON or as an SSE stream; undefined when it holds none. */
export function rpcMessages(text: string): any {
  const data = text.trimStart().startsWith('event:') || text.trimStart().startsWith('data:')
    ? text.split('\n').find((line) => line.startsWith('data: '))?.slice(6)
    : text;
  try {
    return data === undefined ? undefined : JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The tools/call requests of a body, by JSON-RPC id. */
function toolCalls(body: unknown): Map<unknown, unknown> {
  let parsed = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    try { parsed = JSON.parse(Buffer.from(body).toString()); } catch { return new Map(); }
  }
  const messages = (Array.isArray(parsed) ? parsed : [parsed]) as { id?: unknown; method?: unknown; params?: { name?: unknown } }[];
  return new Map(messages.filter((m) => m?.method === 'tools/call').map((m) => [m.id, m.params?.name]));
}

/**
 * POSTs `body` to the MCP endpoint: an object or a batch as JSON, a string or bytes exactly as
 * given. Answers the HTTP response, whose body reads as usual, once the successful tool results in
 * it are checked.
 */
export async function mcpRpc(target: McpTarget, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(endpoint(target), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const calls = toolCalls(body);
  const answers = rpcMessages(text);
  for (const answer of (Array.isArray(answers) ? answers : [answers]) as { id?: unknown; result?: unknown }[]) {
    if (answer && calls.has(answer.id)) checkToolResult(target, calls.get(answer.id), answer.result, `tools/call ${String(calls.get(answer.id))}`);
  }
  return new Response(text === '' ? null : text, { status: res.status, headers: res.headers });
}

/**
 * A stateless tools/call with `key`, its arguments an object or JSON text sent exactly: the HTTP
 * status and the JSON-RPC answer (the text itself when it is not JSON-RPC).
 */
export async function mcpCall(target: McpTarget, key: string, name: string, args: Record<string, unknown> | string): Promise<{ http: number; body: any }> {
  const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(name)},`
    + `"arguments":${typeof args === 'string' ? args : JSON.stringify(args)}}}`;
  const res = await mcpRpc(target, text, { authorization: `Bearer ${key}` });
  const raw = await res.text();
  return { http: res.status, body: rpcMessages(raw) ?? raw };
}

/** The API's error envelope of an isError tool result: its text (errors carry no structuredContent). */
export const errorEnvelope = (result: object): any => JSON.parse(((result as { content: { text: string }[] }).content)[0]!.text);

/** A tools/call that must come back as a tool result: whether it is an error, and its structuredContent (an error: its envelope). */
export async function callTool(target: McpTarget, key: string, name: string, args: Record<string, unknown> | string): Promise<{ isError: boolean; body: any }> {
  const res = await mcpCall(target, key, name, args);
  if (res.http !== 200 || !res.body?.result) throw new Error(`MCP answered ${res.http} ${JSON.stringify(res.body).slice(0, 500)}`);
  // an error's envelope comes as text only (no structuredContent: it would not fit the outputSchema)
  const { isError, content, structuredContent } = res.body.result;
  return { isError: Boolean(isError), body: isError ? errorEnvelope({ content }) : structuredContent };
}

/** The SDK's client, whose successful tool results are checked like every other answer. */
class CheckedClient extends Client {
  readonly target: McpTarget;
  constructor(target: McpTarget) {
    super({ name: 'svc-test', version: '1.0.0' });
    this.target = target;
  }

  override async callTool(...args: Parameters<Client['callTool']>): ReturnType<Client['callTool']> {
    const result = await super.callTool(...args);
    checkToolResult(this.target, args[0].name, result, `tools/call ${args[0].name}`);
    return result;
  }
}

/** Runs fn with the SDK's client connected with `key` (over Streamable HTTP, as an agent connects), closed after. */
export async function withMcpClient<T>(target: McpTarget, key: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new CheckedClient(target);
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint(target)), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  }));
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** The names of the tools `key` is shown, sorted. */
export const toolNames = (target: McpTarget, key: string): Promise<string[]> =>
  withMcpClient(target, key, async (c) => (await c.listTools()).tools.map((t) => t.name).sort());
