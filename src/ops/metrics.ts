// Prometheus metrics (prom-client), served at /metrics when SVC_METRICS_TOKEN is set
// (docs/operating.md lists every series). Requests are counted as they finish; database pools
// are read at scrape time from the pools themselves; background jobs and outgoing messages are
// counted in the database at scrape time, by two definer functions (app_hidden.ops_message_counts,
// app_hidden.ops_job_counts)
// that svc_worker may call, so every process's work shows wherever the scrape lands.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { log } from '../log.ts';

export interface Metrics {
  readonly registry: Registry;
  /** One finished request: its operation (operationId, or the name of a non-API route), status and duration. */
  request(operation: string, status: number, seconds: number): void;
  /** One request refused by the rate limiter, by route. */
  refused(route: string): void;
  /** A pool whose connections in use, idle and awaited are reported at each scrape. */
  addPool(name: string, pool: pg.Pool): void;
}

/**
 * The service's metrics. `stats` is the pool the scrape counts jobs and messages on (as
 * svc_worker, in one short transaction); without it those series are absent.
 */
export function createMetrics(opts: { stats?: pg.Pool } = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: 'svc_http_requests_total', help: 'Requests answered, by operation (operationId, or the route for pages) and status',
    labelNames: ['operation', 'status'], registers,
  });
  const duration = new Histogram({
    name: 'svc_http_request_duration_seconds', help: 'Time from a request\'s arrival to its answer\'s last byte, by operation',
    labelNames: ['operation'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers,
  });
  const refusals = new Counter({
    name: 'svc_rate_limit_refusals_total', help: 'Requests answered 429 rate_limited, by route', labelNames: ['route'], registers,
  });

  const pools = new Map<string, pg.Pool>();
  new Gauge({
    name: 'svc_db_pool_connections', help: 'Database connections of each pool this process holds, by state (in_use, idle, waiting: checkouts awaiting one)',
    labelNames: ['pool', 'state'], registers,
    collect() {
      this.reset();
      for (const [name, pool] of pools) {
        this.set({ pool: name, state: 'in_use' }, pool.totalCount - pool.idleCount);
        this.set({ pool: name, state: 'idle' }, pool.idleCount);
        this.set({ pool: name, state: 'waiting' }, pool.waitingCount);
      }
    },
  });

  if (opts.stats) {
    const stats = opts.stats;
    // One scrape reads the database once for both gauges.
    let reading: Promise<DatabaseCounts | undefined> | undefined;
    const read = () => (reading ??= readCounts(stats).finally(() => { setImmediate(() => { reading = undefined; }); }));
    new Gauge({
      name: 'svc_jobs', help: 'Background jobs by task and state (queued: due or waiting to retry; running: locked by a worker; failed: out of attempts)',
      labelNames: ['task', 'state'], registers,
      async collect() {
        this.reset();
        for (const r of (await read())?.jobs ?? []) this.set({ task: r.task, state: r.state }, Number(r.n));
      },
    });
    new Gauge({
      name: 'svc_messages', help: 'Outgoing emails and SMS by channel and status (queued, sent, failed), every organization',
      labelNames: ['channel', 'status'], registers,
      async collect() {
        this.reset();
        for (const r of (await read())?.messages ?? []) this.set({ channel: r.channel, status: r.status }, Number(r.n));
      },
    });
  }

  return {
    registry,
    request(operation, status, seconds) {
      requests.inc({ operation, status });
      duration.observe({ operation }, seconds);
    },
    refused(route) { refusals.inc({ route }); },
    addPool(name, pool) { pools.set(name, pool); },
  };
}

interface DatabaseCounts {
  jobs: { task: string; state: string; n: string }[];
  messages: { channel: string; status: string; n: string }[];
}

async function readCounts(pool: pg.Pool): Promise<DatabaseCounts | undefined> {
  let client: pg.PoolClient | undefined;
  try {
    client = await pool.connect();
    await client.query('begin read only; set local role svc_worker');
    const jobs = await client.query('select task, state, n from app_hidden.ops_job_counts()');
    const messages = await client.query('select channel, status, n from app_hidden.ops_message_counts()');
    await client.query('commit');
    return { jobs: jobs.rows, messages: messages.rows };
  } catch (err) {
    await client?.query('rollback').catch(() => undefined);
    // the scrape still answers, with the series it could read
    log.warn({ err }, 'metrics: cannot count jobs and messages');
    return undefined;
  } finally {
    client?.release();
  }
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether `given` is the token, in time independent of where they differ (both are hashed first). */
export function tokenMatches(given: string | undefined, token: string): boolean {
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

/**
 * GET /metrics: the bearer token or 401 (`refuse` answers it in the service's error envelope).
 */
export function metricsEndpoint(metrics: Metrics, token: string, refuse: RequestHandler): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    const given = header?.match(/^Bearer +(\S+) *$/i)?.[1];
    if (!tokenMatches(given, token)) return refuse(req, res, next);
    try {
      const text = await metrics.registry.metrics();
      res.set('Content-Type', metrics.registry.contentType).set('Cache-Control', 'no-store').send(text);
    } catch (e) {
      next(e);
    }
  };
}
