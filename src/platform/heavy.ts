// The lane for expensive calls: evaluating audience rules over every contact, and internal
// GraphQL. One such call can keep a core busy for seconds, and forty of them queued on the
// request pool would hold every connection while cheap calls (me_get, a contact by id) wait
// behind them. So expensive calls
//   - are admitted only while their credential and their organization have fewer than a few
//     such calls in flight (otherwise 429 with Retry-After: the caller learns at once),
//   - are authenticated on the request pool first (a refused key never queues here),
//   - and then run on a small pool of their own, whose checkout timeout bounds the wait (503 busy).
// The counts are per API process: each process bounds its own lane.
import type pg from 'pg';
import { createRequestPool, type Claims } from '../db/request.ts';
import type { Config } from '../config.ts';
import { ApiError } from './errors.ts';

export interface HeavyLimits {
  /** Expensive calls one credential may have in flight (running or waiting for the lane). */
  perCredential: number;
  /** Expensive calls one organization may have in flight, all its credentials together. */
  perOrganization: number;
}

/**
 * How long an admitted call waits for a lane connection before it answers 503 busy. Longer than
 * the request pool's: an expensive call is expected to wait its turn behind a few others.
 */
export const HEAVY_CHECKOUT_TIMEOUT_MS = 5_000;

/** The lane's pool: few connections, so expensive work never takes every core at once. */
export function createHeavyLane(loginUrl: string, config: Config, opts: { statementTimeoutMs?: number } = {}): HeavyLane {
  const pool = createRequestPool(loginUrl, {
    max: config.heavyConnections, statementTimeoutMs: opts.statementTimeoutMs, checkoutTimeoutMs: HEAVY_CHECKOUT_TIMEOUT_MS,
  });
  return new HeavyLane(pool, { perCredential: config.heavyPerCredential, perOrganization: config.heavyPerOrganization });
}

const tooMany = (who: string, limit: number) => new ApiError(429, 'too_many_concurrent_requests',
  `${who} already has ${limit} expensive calls in flight; retry after the number of seconds in retry_after`,
  { retry_after: 1 });

export class HeavyLane {
  readonly pool: pg.Pool;
  readonly limits: HeavyLimits;
  private readonly inFlight = new Map<string, number>();

  constructor(pool: pg.Pool, limits: HeavyLimits) {
    this.pool = pool;
    this.limits = limits;
  }

  /**
   * Admits one call of a key, or throws 429. Counted by the key's hash, before the key is even
   * resolved, so that refusing a burst costs no database round trip. The ticket then admits the
   * call for its organization once authentication has told which one it is; `end` ends both.
   */
  admit(keyHash: Buffer): { organization(claims: Pick<Claims, 'organization_id'>): void; end(): void } {
    const credential = `key:${keyHash.toString('hex')}`;
    if (this.count(credential) >= this.limits.perCredential) throw tooMany('This credential', this.limits.perCredential);
    this.add(credential, 1);
    let organization: string | undefined;
    let ended = false;
    return {
      organization: ({ organization_id }) => {
        const key = `organization:${organization_id}`;
        if (this.count(key) >= this.limits.perOrganization) throw tooMany('This organization', this.limits.perOrganization);
        this.add(key, 1);
        organization = key;
      },
      end: () => {
        if (ended) return;
        ended = true;
        this.add(credential, -1);
        if (organization) this.add(organization, -1);
      },
    };
  }

  private count(key: string): number {
    return this.inFlight.get(key) ?? 0;
  }

  private add(key: string, n: number): void {
    const next = this.count(key) + n;
    if (next > 0) this.inFlight.set(key, next);
    else this.inFlight.delete(key);
  }
}
