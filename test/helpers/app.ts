// The service on a random port over a fresh database, plus small HTTP helpers. Every 2xx
// answer is checked against its operation's response schema (responses.ts).
import type { Server } from 'node:http';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.ts';
import { adminApply } from '../../src/admin/commands.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { createApp, type AppDeps } from '../../src/http/app.ts';
import { createRequestPool } from '../../src/db/request.ts';
import { AREAS } from '../../src/areas.ts';
import { operationsOf, pagesOf, type Area } from '../../src/registry/area.ts';
import type { AnyOperation } from '../../src/registry/operation.ts';
import { listen } from '../../src/server.ts';
import { createHeavyLane, type HeavyLane } from '../../src/platform/heavy.ts';
import type { RateLimiter } from '../../src/http/rate-limit.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { assertFitsResponse, operationAt } from './responses.ts';

export interface RequestOptions {
  key?: string;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string | Uint8Array;
  /** Fields a 2xx answer may carry beyond its schema: ones the suite adds to a record as an area would. */
  undeclared?: readonly string[];
}
export interface Answer { status: number; body: any; headers: Headers }

/**
 * One HTTP request to a service at `baseUrl` serving `operations`: the body is sent as JSON
 * (or `rawBody` as given) and read back as JSON when it is; a 2xx answer of an operation must
 * fit its response schema.
 */
export async function requestAt(baseUrl: string, operations: readonly AnyOperation[], method: string, path: string,
  { key, headers = {}, body, rawBody, undeclared }: RequestOptions = {}): Promise<Answer> {
  const url = new URL(baseUrl + path);
  const res = await fetch(url, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined || rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  const op = res.status >= 200 && res.status < 300 ? operationAt(operations, method, url.pathname) : undefined;
  if (op) assertFitsResponse(op, parsed, `${method} ${path} answered ${res.status}`, undeclared);
  return { status: res.status, body: parsed, headers: res.headers };
}

export interface TestApp {
  url: string;
  db: TestDatabase;
  pool: pg.Pool;
  heavy: HeavyLane;
  config: Config;
  /** The operations it serves, in routing order. */
  operations: readonly AnyOperation[];
  apply(fixture: unknown): Promise<Applied>;
  request(method: string, path: string, opts?: RequestOptions): Promise<Answer>;
  close(): Promise<void>;
}

export async function startApp(opts: {
  operations?: readonly AnyOperation[];
  env?: Record<string, string>;
  /** Further routes, as createApp takes them; given the app's pool and config. */
  mount?: (deps: { pool: pg.Pool; heavy: HeavyLane; config: Config; areas: readonly Area[] }) => Promise<AppDeps['mount']>;
  /** The clock idempotency records are dated by. */
  clock?: () => Date;
  /** How long a request's statement may run (the service's default otherwise). */
  statementTimeoutMs?: number;
  /** A rate limiter over the app's pool; none by default. */
  limiter?: (pool: pg.Pool, config: Config) => RateLimiter | undefined;
  /** The port to listen on (a suite that sets SVC_BASE_URL to its own address); a free one otherwise. */
  port?: number;
} = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  // Suites that send many expensive calls at once test other things than the heavy lane's
  // limits (test/platform/heavy-lane.alone.test.ts sets its own): a wide lane unless the suite says otherwise.
  const laneForTests = { SVC_HEAVY_CONNECTIONS: '4', SVC_HEAVY_PER_CREDENTIAL: '1000', SVC_HEAVY_PER_ORGANIZATION: '1000' };
  const config = loadConfig({ ...process.env, ...laneForTests, ...opts.env });
  const pool = createRequestPool(db.loginUrl, { max: 8, statementTimeoutMs: opts.statementTimeoutMs });
  pool.on('error', () => undefined); // an idle connection dropped with the database
  const heavy = createHeavyLane(db.loginUrl, config, { statementTimeoutMs: opts.statementTimeoutMs });
  const mount = await opts.mount?.({ pool, heavy, config, areas: AREAS });
  const limiter = opts.limiter?.(pool, config);
  const operations = opts.operations ?? operationsOf(AREAS);
  const app = createApp({ pool, heavy, config, operations, pages: pagesOf(AREAS), mount, clock: opts.clock, limiter });
  const server: Server = await listen(app, opts.port ?? 0, '127.0.0.1');
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    db,
    pool,
    heavy,
    config,
    operations,
    apply: (fixture) => adminApply(db.owner, fixture, AREAS),
    request: (method, path, options) => requestAt(url, operations, method, path, options),
    async close() {
      limiter?.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
      await heavy.pool.end();
      await db.drop();
    },
  };
}

/** startApp, then one tenant from `fixture`: how most suites begin. */
export async function startWithTenant(fixture: unknown, opts?: Parameters<typeof startApp>[0]): Promise<{ app: TestApp; tenant: Applied }> {
  const app = await startApp(opts);
  try {
    return { app, tenant: await app.apply(fixture) };
  } catch (e) {
    await app.close();
    throw e;
  }
}
