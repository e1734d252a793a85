// The REST face of the registry: one express route per operation under /api/v1, the
// OpenAPI document, health endpoints, and the error envelope for every failure.
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { authorizationHeaderCount, bearerKey } from '../auth/keys.ts';
import { log, type Logger } from '../log.ts';
import type { AnyOperation } from '../registry/operation.ts';
import type { PublicPage } from '../registry/area.ts';
import { openApiDocument } from '../registry/openapi.ts';
import { ApiError, badRequest, envelope, notFound, toApiError, unauthorized } from '../platform/errors.ts';
import { readJsonBody, readQuery, validateInput } from '../platform/input.ts';
import { execute, type ExecuteDeps } from '../platform/execute.ts';
import type { RateLimiter } from './rate-limit.ts';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { MCP_PATH, mcpHandler, mcpMessageCount, originCheck } from '../mcp/endpoint.ts';
import { mcpChallenge } from '../auth/oauth.ts';
import { nameRequest, observeRequests, type RequestNote } from '../ops/access-log.ts';
import { createMetrics, metricsEndpoint, type Metrics } from '../ops/metrics.ts';
import { DOCS_PATH, DOCS_SCRIPT_PATH, docsPage, docsScript } from '../ops/docs-page.ts';

export interface AppDeps extends ExecuteDeps {
  operations: readonly AnyOperation[];
  /** Absent when rate limiting is off. */
  limiter?: RateLimiter;
  /** The areas' public pages (no credential), outside /api/v1. */
  pages?: readonly PublicPage[];
  /** Further routes (internal endpoints), mounted before the 404 handler. */
  mount?: (app: express.Express) => void;
  /** Where access log lines go (the service's log by default). */
  accessLog?: Logger;
}

/** The app's metrics when SVC_METRICS_TOKEN turned them on (a process adds its other pools to them). */
export const metricsOf = (app: express.Express): Metrics | undefined => app.locals.metrics;

const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** Counts a request against its route's limit; answers 429 when over it. */
function rateLimited(limiter: RateLimiter | undefined, route: string, weight: (req: Request) => number = () => 1,
  own?: number | null): express.RequestHandler {
  // own: the route's own limit (null: none); otherwise the limiter's
  if (!limiter || own === null) return (_req, _res, next) => next();
  const perWindow = own ?? limiter.limit;
  const limit = String(perWindow);
  const policy = `${limit};w=60`;
  return (req, res, next) => {
    const v = limiter.hit(req.ip ?? req.socket.remoteAddress ?? 'unknown', route, weight(req), perWindow);
    res.setHeader('RateLimit-Policy', policy);
    res.setHeader('RateLimit-Limit', limit);
    res.setHeader('RateLimit-Remaining', String(v.remaining));
    res.setHeader('RateLimit-Reset', String(v.reset));
    if (v.allowed) return next();
    (req.app.locals.metrics as Metrics | undefined)?.refused(route);
    res.setHeader('Retry-After', String(v.reset));
    sendError(req, res, new ApiError(429, 'rate_limited',
      `Over the limit of ${v.limit} requests per 60 seconds on this route; retry after ${v.reset} s`));
  };
}

/** The MCP endpoint, however express matched it (a trailing slash, another case). */
const isMcpPath = (path: string) => path.replace(/\/+$/, '').toLowerCase() === MCP_PATH.toLowerCase();

function sendError(req: Request, res: Response, err: ApiError) {
  // the MCP endpoint's challenge names its protected resource metadata (OAuth discovery); an
  // error code only when a bearer token was sent (RFC 6750, 3.1: none for another scheme)
  if (err.statusCode === 401) {
    res.set('WWW-Authenticate', !isMcpPath(req.path) ? 'Bearer'
      : mcpChallenge(req.app.locals.baseUrl, /^bearer\s/i.test(req.get('authorization') ?? '') ? { error: 'invalid_token' } : undefined));
  }
  if (err.statusCode === 403 && err.code === 'insufficient_scope' && isMcpPath(req.path) && typeof err.extra.required === 'string') {
    res.set('WWW-Authenticate', mcpChallenge(req.app.locals.baseUrl, { error: 'insufficient_scope', scope: err.extra.required }));
  }
  if (typeof err.extra.retry_after === 'number') res.set('Retry-After', String(err.extra.retry_after));
  res.status(err.statusCode).json(envelope(err, req.originalUrl.split('?')[0]!));
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.locals.baseUrl = deps.config.baseUrl;
  app.set('query parser', 'simple');
  app.set('etag', false);
  app.set('trust proxy', deps.config.trustProxy);
  const metrics = deps.config.metricsToken ? createMetrics({ stats: deps.pool }) : undefined;
  metrics?.addPool('request', deps.pool);
  if (deps.heavy) metrics?.addPool('heavy', deps.heavy.pool);
  app.locals.metrics = metrics;
  const observe = observeRequests({ metrics, log: deps.accessLog ?? log, sample: deps.config.accessLogSample });

  app.use((req, res, next) => {
    const id = (req.get('x-request-id') || '').slice(0, 100) || randomUUID();
    res.set('X-Request-Id', id);
    res.locals.requestId = id;
    next();
  });
  if (observe) app.use(observe);

  if (metrics) {
    app.get('/metrics', nameRequest('metrics'), metricsEndpoint(metrics, deps.config.metricsToken!, (req, res) => sendError(req, res, unauthorized())));
  }
  app.get('/healthz', nameRequest('healthz'), (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', nameRequest('readyz'), async (_req, res) => {
    try {
      await deps.pool.query('select 1');
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ status: 'unavailable' });
    }
  });

  // Node keeps the first of several Authorization headers; which one the sender meant is
  // unknowable, so such a request carries no valid credential, wherever it goes.
  app.use((req, res, next) => (authorizationHeaderCount(req.rawHeaders) > 1 ? sendError(req, res, unauthorized()) : next()));

  const document = openApiDocument(deps.operations, deps.config.baseUrl);
  app.get('/api/v1/docs-json', nameRequest('docs_json'), rateLimited(deps.limiter, 'GET /api/v1/docs-json'), (_req, res) => { res.json(document); });
  app.get(DOCS_PATH, nameRequest('docs'), rateLimited(deps.limiter, `GET ${DOCS_PATH}`), docsPage(deps.config.baseUrl));
  app.get(DOCS_SCRIPT_PATH, nameRequest('docs'), rateLimited(deps.limiter, `GET ${DOCS_SCRIPT_PATH}`), docsScript);

  // Bodies are read raw and parsed per operation, after the key is checked; operations
  // without a body schema ignore whatever was sent.
  const raw = express.raw({ type: () => true, limit: '1mb' });
  for (const op of deps.operations) {
    const method = op.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    const handlers = [nameRequest(op.operationId, op.path), rateLimited(deps.limiter, `${op.method} ${op.path}`), ...(op.body ? [raw] : [])];
    app[method](expressPath(op.path), ...handlers, async (req: Request, res: Response) => {
      const { status, body } = await execute(deps, op, bearerKey(req.get('authorization')),
        () => validateInput(op, { params: req.params, query: readQuery(req.query), body: readJsonBody(op, req.body) }),
        res.locals as RequestNote);
      res.status(status).json(body);
    });
  }

  // MCP: DNS-rebinding protection (the SDK's Host check, and Origin when a browser sends one)
  // before anything else; GET and DELETE have no meaning in stateless mode.
  // The body is read first so that each message of a JSON-RPC batch counts against the limit.
  app.post(MCP_PATH, nameRequest('mcp_request', MCP_PATH), raw, rateLimited(deps.limiter, `POST ${MCP_PATH}`, mcpMessageCount), hostHeaderValidation(deps.config.allowedHosts),
    originCheck(deps.config), mcpHandler(deps, deps.operations));
  app.all(MCP_PATH, nameRequest('mcp_request', MCP_PATH), (req, res) => {
    res.set('Allow', 'POST');
    sendError(req, res, new ApiError(405, 'method_not_allowed', 'The MCP endpoint is stateless: only POST is served'));
  });

  for (const page of deps.pages ?? []) {
    const method = page.method.toLowerCase() as 'get' | 'post' | 'options';
    const limited = rateLimited(deps.limiter, `${page.method} ${page.path}`, undefined, page.provider ? deps.config.webhookRateLimit : undefined);
    app[method](page.path, nameRequest(`${page.method} ${page.path}`, page.path), limited, (req, res, next) => {
      page.handle(req, res, { pool: deps.pool, config: deps.config, operations: deps.operations }).catch(next);
    });
  }

  app.use('/internal', nameRequest('internal'), rateLimited(deps.limiter, 'internal'));
  deps.mount?.(app);

  app.use(rateLimited(deps.limiter, 'unmatched'), (req: Request, res: Response) => sendError(req, res, notFound('Route')));

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // body-parser's own errors carry a type; its decompression errors only a status and `expose`
    const e = err as { type?: string; status?: number; expose?: boolean };
    let apiError: ApiError;
    if (e?.type === 'entity.too.large') apiError = new ApiError(413, 'payload_too_large', 'The request body is too large');
    else if ((e?.type || e?.expose !== undefined) && typeof e.status === 'number' && e.status < 500) apiError = badRequest('The request body could not be read');
    // the router could not percent-decode a path segment (like a malformed request line, before any key is read)
    else if (err instanceof URIError) apiError = badRequest('The request path could not be decoded');
    else apiError = toApiError(err);
    if (apiError.statusCode >= 500) log.error({ err, requestId: res.locals.requestId }, 'request failed');
    sendError(req, res, apiError);
  });

  return app;
}
