// The MCP entry point, POST /api/v1/mcp, serving every protocol revision from 2025-03-26 to
// 2026-07-28, chosen per request. A request carrying the 2026-07-28 per-request envelope (its
// protocol version and client capabilities in params._meta, no initialize, no session) goes to
// the SDK's createMcpHandler; any other (the 2025 revisions, which open with initialize, and
// batches) to a stateless Streamable HTTP transport of our own, answering JSON when the client
// prefers it. Either way a fresh server per request, built by one factory; what does not depend
// on the request (the tools and their JSON Schemas, the JSON Schema validator) is built once. The
// key is checked first: 401 without a valid one, then, in the same round trip, the database's
// rule (app_hidden.authorize_mcp): 404 when the organization has MCP turned off, else the tools
// the credential may call.
import type { Request, Response } from 'express';
import {
  Server, WebStandardStreamableHTTPServerTransport, createMcpHandler, isLegacyRequest, specTypeSchemas,
  SERVER_INFO_META_KEY, SUPPORTED_PROTOCOL_VERSIONS, PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY,
  type AuthInfo, type CallToolResult, type JsonSchemaType, type JsonSchemaValidator, type jsonSchemaValidator, type McpRequestContext,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { bearerKey, credentialHash } from '../auth/keys.ts';
import { ACCESS_TOKEN_PATTERN } from '../auth/oauth.ts';
import { runStatement } from '../db/request.ts';
import { sql } from '../db/sql.ts';
import { ApiError, envelope, notFound, toApiError, unauthorized } from '../platform/errors.ts';
import { execute, requirementOf, type ExecuteDeps } from '../platform/execute.ts';
import { parseJsonBody, splitArguments, validateInput } from '../platform/input.ts';
import { log } from '../log.ts';
import type { AnyOperation } from '../registry/operation.ts';
import { structuredOf, toolOf, wrapsOutput } from './tools.ts';

export const MCP_PATH = '/api/v1/mcp';

const INSTRUCTIONS =
  'Tools of an AI receptionist, CRM and follow-up service for one small business. Call me_get first to learn what ' +
  'this credential may do. Tools whose _meta svc/confirm is true send to a customer, delete or cancel: get the ' +
  'user\'s approval before calling them unless the user asked for exactly that action. A failing call returns ' +
  'isError with the API\'s error envelope: branch on statusCode and error.';

// The envelope goes as text only: structuredContent must fit the tool's outputSchema, and the
// SDK's client checks it against that schema even on an error result (a call refused with an
// envelope there would throw in the client instead of answering isError).
function errorResult(err: ApiError): CallToolResult {
  const body = envelope(err, MCP_PATH);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** The REST body as JSON text, and as structuredContent fitting the tool's outputSchema. */
function okResult(entry: ToolEntry, body: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: structuredOf(entry.op, body, entry.wraps) };
}

/** An operation as a tool, built once with the registry: the list and each call only read it. */
interface ToolEntry { op: AnyOperation; tool: ReturnType<typeof toolOf>; wraps: boolean; guarded?: AnyOperation }

/** The revision of the stateless core: every request carries its version and capabilities in _meta. */
export const STATELESS_REVISION = '2026-07-28';

/**
 * A read that runs one statement, as the fast path of a lone tools/call runs it: the statement
 * under app_hidden.authorize_mcp's check of the organization's MCP setting (a one-time filter,
 * evaluated before any row is read, raising 404 while MCP is off), so that the key, the setting
 * and the read take one round trip instead of two. Writes, transactions and heavy reads have none.
 */
function guardedRead(op: AnyOperation): AnyOperation | undefined {
  const how = op.run;
  if (op.method !== 'GET' || op.heavy || !('statement' in how)) return undefined;
  return { ...op, run: {
    statement: (input: Record<string, unknown>) => sql`select * from (${how.statement(input)}) s where app_hidden.authorize_mcp('[]'::jsonb) is not null`,
    shape: how.shape,
  } };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const REQUEST_META = specTypeSchemas.RequestMeta;

/** The first issue the SDK's schema (a Standard Schema, checked synchronously) finds with `value`, else undefined. */
type SpecSchema = (typeof specTypeSchemas)[keyof typeof specTypeSchemas];
function issueOf(schema: SpecSchema, value: unknown): { path: string; message: string } | undefined {
  const result = schema['~standard'].validate(value) as { issues?: readonly { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] }[] };
  const issue = result.issues?.[0];
  if (!issue) return undefined;
  return { path: (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.'), message: issue.message };
}

/** The tool and arguments of a body that is one well-formed tools/call request, else undefined. */
interface LoneCall { id: string | number; name: string; args: Record<string, unknown>; meta?: Record<string, unknown> }
function loneCall(json: unknown): LoneCall | undefined {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const m = json as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (m.jsonrpc !== '2.0' || m.method !== 'tools/call' || !isId(m.id)) return undefined;
  // the SDK's JSON-RPC request schema is strict: any other member is for it to refuse
  if (Object.keys(m).some((k) => !['jsonrpc', 'id', 'method', 'params'].includes(k))) return undefined;
  const params = m.params as { name?: unknown; arguments?: unknown; _meta?: unknown } | undefined;
  if (!isPlainObject(params) || typeof params.name !== 'string') return undefined;
  // anything else in params (a task to create, say) is for the SDK's server to answer
  if (Object.keys(params).some((k) => k !== 'name' && k !== 'arguments' && k !== '_meta')) return undefined;
  // _meta as the SDK's schema has it (a progress token is a string or an integer, say)
  if (params._meta !== undefined && issueOf(REQUEST_META, params._meta)) return undefined;
  const args = params.arguments ?? {};
  if (!isPlainObject(args)) return undefined;
  return { id: m.id as string | number, name: params.name, args, meta: params._meta as Record<string, unknown> | undefined };
}

/**
 * The revision a lone tools/call is answered in when the SDK would take it as it is, else
 * undefined (the ordinary path then answers it, refusals included). A JSON body, always; then
 * either a 2025 request (no envelope in _meta, and no protocol version header or a 2025 one), or
 * a 2026-07-28 request whose envelope and headers agree as that revision requires: the version
 * header and _meta's version both 2026-07-28, client capabilities an object, Mcp-Method
 * tools/call and Mcp-Name the tool's name. The Accept header is checked by negotiate.
 */
type Era = 'legacy' | 'modern';
function directEra(req: Request, call: LoneCall): Era | undefined {
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) return undefined;
  const version = req.headers['mcp-protocol-version'];
  if (!call.meta || !(PROTOCOL_VERSION_META_KEY in call.meta)) {
    if (call.meta && CLIENT_CAPABILITIES_META_KEY in call.meta) return undefined;
    return version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version as string) ? 'legacy' : undefined;
  }
  const modern = version === STATELESS_REVISION && call.meta[PROTOCOL_VERSION_META_KEY] === STATELESS_REVISION
    && isPlainObject(call.meta[CLIENT_CAPABILITIES_META_KEY])
    && req.headers['mcp-method'] === 'tools/call' && req.headers['mcp-name'] === call.name;
  return modern ? 'modern' : undefined;
}

/**
 * The fast path: a POST that is one tools/call of a guarded read, asking for a JSON answer. The
 * read runs with the key's authentication and the MCP setting's check in one round trip, and the
 * JSON-RPC answer is written as the SDK's transport would write it, without building the SDK's
 * server and transport for it. Its successful result, else undefined, and the request takes the
 * ordinary path (the key and setting checked first, then the call through the SDK), which
 * answers every refusal as before. A read may so run twice when it fails; it changes nothing,
 * and a failing call is the rare one.
 */
async function fastCall(deps: ExecuteDeps, tools: ReadonlyMap<string, ToolEntry>, key: string, call: LoneCall, era: Era): Promise<string | undefined> {
  const entry = tools.get(call.name);
  if (!entry?.guarded) return undefined;
  const op = entry.guarded;
  let body: unknown;
  try {
    ({ body } = await execute(deps, op, key, () => validateInput(op, splitArguments(op, call.args))));
  } catch {
    return undefined;
  }
  // the JSON-RPC answer of okResult(entry, body), the body serialized once: the text is its JSON,
  // and the structuredContent the same JSON (under `result` where the output schema wraps it)
  const text = JSON.stringify(body) as string | undefined;
  if (text === undefined) return undefined;
  const structured = entry.wraps ? `{"result":${text}}` : text;
  // a 2026-07-28 result states that it is complete, and names the server, as the SDK's does
  return `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${structured}`
    + `${era === 'modern' ? MODERN_RESULT_TAIL : ''}},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}`;
}

/**
 * The server validates JSON Schemas only for elicitation, which it never asks for; the SDK's
 * default is a new Ajv instance per Server, that is per request here (the largest single item of
 * a call's profile before it was shared). One instance serves every request.
 */
class SharedValidator implements jsonSchemaValidator {
  private inner: jsonSchemaValidator | undefined;
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.inner ??= new AjvJsonSchemaValidator();
    return this.inner.getValidator<T>(schema);
  }
}
const validator = new SharedValidator();

// tools/call as the SDK's Server checks it itself before our handler runs: against
// CallToolRequestSchema, answering JSON-RPC -32602 (invalid params) when the request does not
// fit it, as for `arguments: null`; the spec makes a request that fails the CallToolRequest
// schema a protocol error, while a call that fits it and fails the tool's own validation is a
// tool result with isError. Registered under CallToolRequestSchema itself, the request would be
// parsed first by the generic layer, whose failure is -32603 (internal error). The arguments
// arrive as sent: the schema's record would drop a `__proto__` key unseen.
const ToolCall = z.custom<ToolCallParams>(() => true);
interface ToolCallParams { name: string; arguments?: Record<string, unknown> }

const SERVER_INFO = { name: 'svc', title: 'Receptionist, CRM and follow-up', version: '1.0.0' };
/**
 * How long a 2026-07-28 client may keep what it was told (ttlMs, cacheScope): the tool list
 * differs per credential and changes with its role, scopes and the organization's settings, so it
 * is private and kept a minute (a call is authorized when it runs, whatever the list said);
 * server/discover names no credential's rights and changes only with a release.
 */
const CACHE_HINTS = {
  'tools/list': { ttlMs: 60_000, cacheScope: 'private' as const },
  'server/discover': { ttlMs: 3_600_000, cacheScope: 'private' as const },
};
const SERVER_OPTIONS = { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: validator, cacheHints: CACHE_HINTS };
const MODERN_RESULT_TAIL = `,"resultType":"complete","_meta":${JSON.stringify({ [SERVER_INFO_META_KEY]: SERVER_INFO })}`;

function buildServer(deps: ExecuteDeps, tools: ReadonlyMap<string, ToolEntry>, key: string, callable: ReadonlySet<string>): Server {
  const server = new Server(SERVER_INFO, SERVER_OPTIONS);
  server.setRequestHandler('tools/list', async () => ({
    tools: [...tools.values()].filter((t) => callable.has(t.op.operationId)).map((t) => t.tool),
  }));
  server.setRequestHandler('tools/call', { params: ToolCall }, async (params) => {
    const entry = tools.get(params.name);
    if (!entry) return errorResult(notFound(`Tool ${params.name}`));
    const { op } = entry;
    try {
      const args = params.arguments ?? {};
      const { body } = await execute(deps, op, key, () => validateInput(op, splitArguments(op, args)));
      return okResult(entry, body);
    } catch (e) {
      const err = toApiError(e);
      if (err.statusCode >= 500) log.error({ err: e, tool: op.operationId }, 'tool call failed');
      return errorResult(err);
    }
  });
  return server;
}

/**
 * The SDK insists on an Accept header naming both JSON and SSE. We answer as the client
 * prefers: JSON when application/json comes first (or alone), an SSE stream otherwise.
 */
function negotiate(req: Request): boolean {
  const accept = req.headers.accept ?? '';
  const json = accept.indexOf('application/json');
  const sse = accept.indexOf('text/event-stream');
  if (json < 0 && sse < 0) return false;
  const both = json >= 0 && sse >= 0 ? accept : `${accept}, ${json < 0 ? 'application/json' : 'text/event-stream'}`;
  req.headers.accept = both;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === 'accept') req.rawHeaders[i + 1] = both;
  }
  return json >= 0 && (sse < 0 || json < sse);
}

/**
 * A browser's Origin must be one of this service's own (the SDK checks Host): scheme, host and
 * port, since another port of the same host is another site (a page served there must not
 * call this endpoint with the user's browser). Ours are config.allowedOrigins and the address
 * the request came in on: localhost, 127.0.0.1, [::1] and HOST at the listening port.
 */
export function originCheck(config: Pick<Config, 'allowedOrigins' | 'localHosts'>) {
  return (req: Request, _res: Response, next: () => void): void => {
    const origin = req.get('origin');
    if (origin !== undefined) {
      let sent: string | undefined;
      try { sent = new URL(origin).origin; } catch { /* not a URL: refused below */ }
      const port = req.socket.localPort;
      const ours = sent !== undefined && (config.allowedOrigins.includes(sent)
        || config.localHosts.some((host) => new URL(`http://${host}:${port}`).origin === sent));
      if (!ours) throw new ApiError(403, 'forbidden_origin', 'Requests from this origin are not accepted');
    }
    next();
  };
}

/**
 * At most this many JSON-RPC messages in one POST. Batches (protocol 2025-03-26) are still
 * accepted from clients that send them, but each message counts against the rate limit and one
 * request cannot queue more work than this on the pool.
 */
export const MCP_BATCH_LIMIT = 20;

// The body as JSON, read once (the route's raw body parser leaves a Buffer): undefined when it
// is not JSON, which the handler answers after the key is checked.
const parsedBodies = new WeakMap<Request, { json: unknown } | undefined>();
function parsedBody(req: Request): { json: unknown } | undefined {
  if (!parsedBodies.has(req)) {
    let parsed: { json: unknown } | undefined;
    try {
      // invalid UTF-8 is not JSON text either: a parse error, never U+FFFD in the arguments
      parsed = Buffer.isBuffer(req.body) ? { json: parseJsonBody(req.body) } : undefined;
    } catch {
      parsed = undefined;
    }
    parsedBodies.set(req, parsed);
  }
  return parsedBodies.get(req);
}

/** How many requests an MCP POST counts for: each message of a batch. */
export function mcpMessageCount(req: Request): number {
  const json = parsedBody(req)?.json;
  return Array.isArray(json) ? Math.max(1, json.length) : 1;
}

function jsonRpcError(res: Response, code: number, message: string, id: string | number | null = null, status = 400): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id });
}

const isId = (id: unknown): id is string | number => typeof id === 'string' || Number.isSafeInteger(id);

/** Why a message is not JSON-RPC 2.0 as MCP allows it (ids are strings or integers, never null), else undefined. */
function invalidMessage(m: unknown): string | undefined {
  if (!isPlainObject(m)) return 'a message is a JSON object';
  if (m.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if ('method' in m) {
    if (typeof m.method !== 'string') return 'method must be a string';
    const other = Object.keys(m).find((k) => !['jsonrpc', 'id', 'method', 'params'].includes(k));
    if (other !== undefined) return `a request has no member ${JSON.stringify(other)}`;
    if ('id' in m && !isId(m.id)) return 'id must be a string or an integer';
    return undefined;
  }
  if (('result' in m || 'error' in m) && 'id' in m) return undefined;
  return 'a message is a request, a notification or a response';
}

// The requests this server answers, as the SDK's schemas state their params. The SDK's server
// parses them in a way whose failure it answers -32603 (internal error), with the parser's dump.
const REQUESTS = new Map<string, SpecSchema>([
  ['initialize', specTypeSchemas.InitializeRequest], ['ping', specTypeSchemas.PingRequest],
  ['tools/list', specTypeSchemas.ListToolsRequest], ['tools/call', specTypeSchemas.CallToolRequest],
  ['server/discover', specTypeSchemas.DiscoverRequest],
]);

/**
 * JSON-RPC's refusals that the SDK's transport gets wrong, answered before it: a body that is
 * JSON but not JSON-RPC is -32600 (invalid request; the transport says -32700, parse error), as
 * are an empty batch and a batch whose requests share an id (the transport answers them by id,
 * so one would be lost while both run); a lone request whose params do not fit its method is
 * -32602 (invalid params) with its id. Within a batch, params are the SDK's to check.
 */
function refusal(json: unknown): { code: number; message: string; id: string | number | null; status: number } | undefined {
  const invalid = (message: string) => ({ code: -32600, message: `Invalid Request: ${message}`, id: null, status: 400 });
  if (Array.isArray(json)) {
    if (json.length === 0) return invalid('an empty batch');
    const ids = new Set<string | number>();
    for (const m of json) {
      const why = invalidMessage(m);
      if (why) return invalid(why);
      const { id, method } = m as { id?: string | number; method?: unknown };
      if (method === undefined || id === undefined) continue;
      if (ids.has(id)) return invalid(`two requests of the batch have the id ${JSON.stringify(id)}`);
      ids.add(id);
    }
    return undefined;
  }
  const why = invalidMessage(json);
  if (why) return invalid(why);
  const m = json as { id?: string | number; method?: string };
  const schema = m.method !== undefined && m.id !== undefined ? REQUESTS.get(m.method) : undefined;
  const issue = schema && issueOf(schema, json);
  if (!issue) return undefined;
  return { code: -32602, message: `Invalid params: ${issue.path}: ${issue.message}`, id: m.id!, status: 200 };
}

/**
 * The scope a lone tools/call needs and the credential lacks, when that is why the tool is not
 * callable; null otherwise (a batch, another method, an unknown tool, a refusal of the role).
 */
function missingScope(json: unknown, byName: ReadonlyMap<string, AnyOperation>, callable: ReadonlySet<string>, scopes: readonly string[]): string | null {
  const message = json as { method?: unknown; params?: { name?: unknown } } | null;
  if (!message || typeof message !== 'object' || Array.isArray(message) || message.method !== 'tools/call') return null;
  const name = message.params?.name;
  const op = typeof name === 'string' ? byName.get(name) : undefined;
  if (!op || callable.has(op.operationId)) return null;
  const { scope } = requirementOf(op);
  return scope !== null && scope !== undefined && !scopes.includes(scope) ? scope : null;
}

export function mcpHandler(deps: ExecuteDeps, operations: readonly AnyOperation[]) {
  const byName = new Map(operations.map((op) => [op.operationId, op]));
  // Every operation's requirements, as app_hidden.authorize_mcp reads them; fixed with the registry.
  const requirements = JSON.stringify(operations.map((op) => {
    const { scope, memberAccess, managerPower } = requirementOf(op);
    return { operation_id: op.operationId, scope, member_access: memberAccess, manager_power: managerPower };
  }));
  // every tool's description and JSON Schemas, converted from zod once, not per request
  const tools = new Map<string, ToolEntry>(operations.map((op) => [op.operationId,
    { op, tool: toolOf(op), wraps: wrapsOutput(op), guarded: guardedRead(op) }]));
  // the 2026-07-28 flow: the SDK validates the envelope and headers, answers server/discover and
  // stamps resultType, ttlMs/cacheScope and serverInfo; the factory gets the request's credential
  // and the tools it may call through authInfo, as checked below before the request reaches it
  const modern = createMcpHandler(({ authInfo }: McpRequestContext) => {
    const { key, callable } = authInfo!.extra as { key: string; callable: ReadonlySet<string> };
    return buildServer(deps, tools, key, callable);
  }, { legacy: 'reject', onerror: (err) => log.debug({ err }, 'MCP request refused') });
  return async (req: Request, res: Response): Promise<void> => {
    const key = bearerKey(req.get('authorization'));
    if (!key) throw unauthorized();
    const body = parsedBody(req);
    const prefersJson = negotiate(req);
    const call = body && prefersJson ? loneCall(body.json) : undefined;
    const era = call && directEra(req, call);
    const answered = era && await fastCall(deps, tools, key, call, era);
    if (answered) {
      // what the SDK would write for this one request, without building it
      res.status(200).type('application/json').end(answered);
      return;
    }
    // The key and the organization's MCP setting are checked for every POST; which tools the
    // credential may call only for a tools/list (a call is authorized by the database when it runs).
    const { rows } = await runStatement(deps.pool, credentialHash(key, deps.config.baseUrl), { scope: null, memberAccess: 'open', managerPower: null },
      // an OAuth token's tools/call needs them too: a tool beyond its scopes is a 403 (missingScope)
      sql`select app_hidden.authorize_mcp(${listsTools(body?.json) || ACCESS_TOKEN_PATTERN.test(key) ? requirements : '[]'}::jsonb) as tools,
        app_hidden.current_scopes() as scopes`);
    const callable = new Set(rows[0]!.tools as string[]);

    if (!body) return jsonRpcError(res, -32700, 'Parse error: the body is not JSON');
    if (Array.isArray(body.json) && body.json.length > MCP_BATCH_LIMIT) {
      return jsonRpcError(res, -32600, `Invalid Request: at most ${MCP_BATCH_LIMIT} messages in one batch`);
    }
    const refused = refusal(body.json);
    if (refused) return jsonRpcError(res, refused.code, refused.message, refused.id, refused.status);
    const scopes = rows[0]!.scopes as string[];
    const missing = ACCESS_TOKEN_PATTERN.test(key) ? missingScope(body.json, byName, callable, scopes) : null;
    if (missing) {
      // MCP "Runtime Insufficient Scope Errors": an OAuth client gets a 403 whose challenge names
      // the scope, and may ask the person for it (API keys keep the tool result with isError)
      throw new ApiError(403, 'insufficient_scope', `This credential lacks the ${missing} scope`, { required: missing });
    }

    const request = webRequest(req);
    if (!await isLegacyRequest(request, body.json)) {
      const authInfo: AuthInfo = { token: key, clientId: 'svc', scopes, extra: { key, callable } };
      return send(res, await modern.fetch(request, { authInfo, parsedBody: body.json }), false);
    }
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: prefersJson });
    return serve(request, res, buildServer(deps, tools, key, callable), transport, body.json);
  };
}

/** A 2025 request (or batch): our stateless transport, answering JSON when the client prefers it. */
async function serve(request: globalThis.Request, res: Response, server: Server, transport: WebStandardStreamableHTTPServerTransport, json: unknown): Promise<void> {
  // a rejection here would be unhandled, which ends the process
  res.on('close', () => {
    transport.close().catch(() => undefined);
    server.close().catch(() => undefined);
  });
  await server.connect(transport);
  await send(res, await transport.handleRequest(request, { parsedBody: json }), Array.isArray(json));
}

const listsTools = (json: unknown): boolean =>
  (Array.isArray(json) ? json : [json]).some((m) => (m as { method?: unknown } | null)?.method === 'tools/list');

/**
 * The request as the SDK's web-standard transport reads it: method, URL and headers (the body is
 * passed parsed). Converting here rather than through the SDK's Node adapter (@hono/node-server)
 * saves a copy of the request and a stream per answer.
 */
function webRequest(req: Request): globalThis.Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  return new globalThis.Request(`http://${req.headers.host ?? 'localhost'}${req.originalUrl}`, { method: req.method, headers });
}

/**
 * Writes the transport's answer: JSON in one write, an SSE stream as its events come. A batch is
 * answered with an array (JSON-RPC 2.0, 6), which the transport leaves out when one message of
 * it answers.
 */
async function send(res: Response, answer: globalThis.Response, batch: boolean): Promise<void> {
  res.status(answer.status);
  answer.headers.forEach((value, name) => res.setHeader(name, value));
  if (!answer.body) {
    res.end();
    return;
  }
  if (!answer.headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await answer.text();
    res.removeHeader('content-length');
    res.end(batch && answer.ok && !text.trimStart().startsWith('[') ? `[${text}]` : text);
    return;
  }
  res.flushHeaders();
  try {
    for await (const chunk of answer.body) {
      if (res.destroyed) break;
      res.write(chunk);
    }
  } finally {
    res.end();
  }
}
