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
  private readonly limit: number;
  private readonly store: WindowStore;
  private readonly now: () => number;
  private windowStart = 0;
  private counts = new Map<string, Count>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(opts: { limit: number; store: WindowStore; now?: () => number; flushMs?: number }) {
    this.limit = opts.limit;
    this.store = opts.store;
    this.now = opts.now ?? Date.now;
    this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 1000);
    this.timer.unref();
  }

  hit(client: string, route: string): Verdict {
    const now = this.now();
    this.roll(now);
    const key = `${client}\u0000${route}`;
    let c = this.counts.get(key);
    if (!c) this.counts.set(key, (c = { total: 0, pending: 0 }));
    c.total++;
    c.pending++;
    return {
      allowed: c.total <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - c.total),
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
    // Every route seen in this window goes out, new hits or not, to learn what the other
    // processes added.
    const batch = [...this.counts.entries()].map(([key, c]) => ({ key, sent: c.pending }));
    if (!batch.length) return;
    const counts = batch.map(({ key, sent }) => {
      const [client, route] = key.split('\u0000') as [string, string];
      return { client, route, hits: sent };
    });
    try {
      const totals = await this.store(new Date(windowStart), counts);
      if (windowStart !== this.windowStart) return; // the window rolled over meanwhile
      for (const { key, sent } of batch) {
        const c = this.counts.get(key);
        if (c) c.pending -= sent;
      }
      for (const t of totals) {
        const c = this.counts.get(`${t.client}\u0000${t.route}`);
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
