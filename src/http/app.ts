// The REST face of the registry: one express route per operation under /api/v1, the
// OpenAPI document, health endpoints, and the error envelope for every failure.
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { bearerKey, hashKey } from '../auth/keys.ts';
import { runStatement, runTransaction, type Requirement } from '../db/request.ts';
import { log } from '../log.ts';
import type { AnyOperation } from '../registry/operation.ts';
import { openApiDocument } from '../registry/openapi.ts';
import { ApiError, badRequest, envelope, fromZod, notFound, toApiError, unauthorized } from './errors.ts';

export interface AppDeps {
  pool: pg.Pool;
  config: Config;
  operations: readonly AnyOperation[];
  /** Further routes (internal endpoints), mounted before the 404 handler. */
  mount?: (app: express.Express) => void;
}

const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

function parseBody(op: AnyOperation, raw: unknown): unknown {
  if (!op.body) return {};
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
  if (text.trim() === '') throw badRequest('A JSON request body is required');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON');
  }
  const parsed = op.body.safeParse(json);
  if (!parsed.success) throw fromZod(parsed.error, 'body');
  return parsed.data;
}

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
export function parseInput(op: AnyOperation, req: Request): Record<string, unknown> {
  const input = {
    ...parsePart(op.params, req.params, 'path'),
    ...parsePart(op.query, req.query, 'query'),
    ...(parseBody(op, req.body) as object),
  };
  if (hasNul(input)) throw badRequest('Strings may not contain NUL characters');
  return input;
}

export const requirementOf = (op: AnyOperation): Requirement => ({
  scope: op.scope,
  memberAccess: op.memberAccess,
  managerPower: op.managerPower,
});

/**
 * Runs one operation for a key: authentication and authorization come first, so a bad
 * request from a caller without access answers 401/403, not 400.
 */
export async function execute(
  deps: AppDeps,
  op: AnyOperation,
  key: string | undefined,
  readInput: () => Record<string, unknown>,
): Promise<unknown> {
  if (!key) throw unauthorized();
  const keyHash = hashKey(key);
  const requirement = requirementOf(op);
  let input: Record<string, unknown>;
  try {
    input = readInput();
  } catch (e) {
    if (e instanceof ApiError) await runStatement(deps.pool, keyHash, requirement, undefined);
    throw e;
  }
  const run = op.run;
  if ('statement' in run) {
    const { claims, rows } = await runStatement(deps.pool, keyHash, requirement, run.statement(input));
    return run.shape(rows, { input, claims, config: deps.config });
  }
  return runTransaction(deps.pool, keyHash, requirement, (tx, claims) =>
    run.handler(tx, { input, claims, config: deps.config }));
}

function sendError(req: Request, res: Response, err: ApiError) {
  if (err.statusCode === 401) res.set('WWW-Authenticate', 'Bearer');
  res.status(err.statusCode).json(envelope(err, req.originalUrl.split('?')[0]!));
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('etag', false);

  app.use((req, res, next) => {
    const id = (req.get('x-request-id') || '').slice(0, 100) || randomUUID();
    res.set('X-Request-Id', id);
    res.locals.requestId = id;
    if (log.isLevelEnabled('debug')) {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        log.debug({ requestId: id, method: req.method, url: req.originalUrl, status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'request');
      });
    }
    next();
  });

  app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', async (_req, res) => {
    try {
      await deps.pool.query('select 1');
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ status: 'unavailable' });
    }
  });

  const document = openApiDocument(deps.operations, deps.config.baseUrl);
  app.get('/api/v1/docs-json', (_req, res) => { res.json(document); });

  // Bodies are read raw and parsed per operation, after the key is checked; operations
  // without a body schema ignore whatever was sent.
  const raw = express.raw({ type: () => true, limit: '1mb' });
  for (const op of deps.operations) {
    const method = op.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    const handlers = op.body ? [raw] : [];
    app[method](expressPath(op.path), ...handlers, async (req: Request, res: Response) => {
      const body = await execute(deps, op, bearerKey(req.get('authorization')), () => parseInput(op, req));
      res.status(op.successStatus ?? 200).json(body);
    });
  }

  deps.mount?.(app);

  app.use((req: Request, res: Response) => sendError(req, res, notFound('Route')));

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number };
    let apiError: ApiError;
    if (e?.type === 'entity.too.large') apiError = new ApiError(413, 'payload_too_large', 'The request body is too large');
    else if (e?.type && typeof e.status === 'number' && e.status < 500) apiError = badRequest('The request body could not be read');
    else apiError = toApiError(err);
    if (apiError.statusCode >= 500) log.error({ err, requestId: res.locals.requestId }, 'request failed');
    sendError(req, res, apiError);
  });

  return app;
}
