// Rate limiting (spec: Limits): N requests per 60 s per client address on each route, shared
// by every API process. Counting stays off the hot path: each process counts in memory and
// adds its counts to app_private.rate_limit_windows about once a second, learning the totals
// of all processes in the same call. The limit therefore holds across processes within a
// slack of what the other processes served in the last second (documented in the README).
import type pg from 'pg';
import { log } from '../log.ts';

const WINDOW_MS = 60_000;

export interface Verdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  reset: number;
}

interface Count { total: number; pending: number }

export type WindowStore = (windowStart: Date, counts: { client: string; route: string; hits: number }[]) =>
  Promise<{ client: string; route: string; hits: number }[]>;

/** The shared store: app_hidden.rate_limit_add as svc_worker, in one short transaction. */
export function postgresWindowStore(pool: pg.Pool): WindowStore {
  return async (windowStart, counts) => {
    const client = await pool.connect();
    try {
      await client.query('begin; set local role svc_worker');
      const { rows } = await client.query('select client, route, hits from app_hidden.rate_limit_add($1, $2)',
        [windowStart, JSON.stringify(counts)]);
      await client.query('commit');
      return rows;
    } catch (e) {
      await client.query('rollback').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  };
}

export class RateLimiter {
  readonly limit: number;
  private readonly store: WindowStore;
  private readonly now: () => number;
  private windowStart = 0;
  /** route → client address → count, for the current window only. */
  private counts = new Map<string, Map<string, Count>>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(opts: { limit: number; store: WindowStore; now?: () => number; flushMs?: number }) {
    this.limit = opts.limit;
    this.store = opts.store;
    this.now = opts.now ?? Date.now;
    this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 1000);
    this.timer.unref();
  }

  /** Counts `n` requests of a client on a route (a JSON-RPC batch counts each message), against `limit` (the route's, when it has its own). */
  hit(client: string, route: string, n = 1, limit = this.limit): Verdict {
    const now = this.now();
    this.roll(now);
    let byClient = this.counts.get(route);
    if (!byClient) this.counts.set(route, (byClient = new Map()));
    let c = byClient.get(client);
    if (!c) byClient.set(client, (c = { total: 0, pending: 0 }));
    c.total += n;
    c.pending += n;
    return {
      allowed: c.total <= limit,
      limit,
      remaining: Math.max(0, limit - c.total),
      reset: Math.max(1, Math.ceil((this.windowStart + WINDOW_MS - now) / 1000)),
    };
  }

  /** Adds this process's new counts to the shared store and takes the totals back. */
  flush(): Promise<void> {
    this.flushing ??= this.doFlush().finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    this.roll(this.now());
    const windowStart = this.windowStart;
    // Every client and route seen in this window goes out, new hits or not, to learn what the
    // other processes added.
    const batch: { client: string; route: string; hits: number; count: Count }[] = [];
    for (const [route, byClient] of this.counts) {
      for (const [client, count] of byClient) batch.push({ client, route, hits: count.pending, count });
    }
    if (!batch.length) return;
    try {
      const totals = await this.store(new Date(windowStart), batch.map(({ client, route, hits }) => ({ client, route, hits })));
      if (windowStart !== this.windowStart) return; // the window rolled over meanwhile
      for (const { hits, count } of batch) count.pending -= hits;
      for (const t of totals) {
        const c = this.counts.get(t.route)?.get(t.client);
        // what the store knows, plus what arrived here while it answered
        if (c) c.total = Math.max(c.total, t.hits + c.pending);
      }
    } catch (e) {
      // The limit keeps holding per process; the shared view catches up on the next flush.
      log.warn({ err: e }, 'rate limit store unreachable');
    }
  }

  private roll(now: number): void {
    const start = now - (now % WINDOW_MS);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.counts = new Map();
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
