// Replay for operations flagged idempotent (spec: Limits, Errors). Keyed by (credential,
// operation, idempotency_key) in app_private.idempotency_keys. One pooled connection carries
// the whole call:
//   1. a short transaction claims the key (app_hidden.idempotency_begin), taking the key's
//      session-level advisory lock, or answers with the stored first answer, or with the 409
//      that applies;
//   2. the write and its stored answer commit together (app_hidden.idempotency_finish); a
//      write that fails is undone to a savepoint and frees the key in the same transaction,
//      under the same claims. The key is resolved once, by the claim: the write's transaction
//      re-applies the settings app_hidden.authenticate set for it, exactly as it answered them
//      (transactionUnder);
//   3. after the commit, the lock is released.
// The lock is how other backends tell that the first call is alive (the API roles cannot read
// pg_stat_activity): a retry that finds the claim running but the lock free, or the claim
// older than a statement may run, records the call as idempotency_outcome_unknown (see
// app_hidden.idempotency_begin). So the lock must not outlive the call on a pooled
// connection: unless the unlock confirms it, the connection is destroyed.
// A commit left unanswered marks the key unknown from another connection.
// The fingerprint covers the request's details and the caller's access, so a replay after the
// caller's access changed is idempotency_key_reused, not a stale answer.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import {
  checkout, CommitOutcomeUnknown, PoolBusy, releaseClient, runStatement, statementOn, transactionUnder,
  type Claims, type Requirement, type Tx,
} from '../db/request.ts';
import { sql, type Sql } from '../db/sql.ts';
import { ApiError } from './errors.ts';

export interface Answer { status: number; body: unknown }

/** JSON with sorted keys, so equal details hash equally whatever their order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function fingerprint(operationId: string, input: Record<string, unknown>): string {
  const { idempotency_key: _key, ...details } = input;
  return createHash('sha256').update(`${operationId}\n${canonical(details)}`).digest('hex');
}

const unavailable = () => new ApiError(503, 'idempotency_unavailable',
  'The idempotency store cannot be reached; the call did not run. Retry later with the same key');


export async function runIdempotent(
  pool: pg.Pool,
  keyHash: Buffer,
  requirement: Requirement,
  operationId: string,
  input: Record<string, unknown>,
  idempotencyKey: string,
  now: Date,
  successStatus: number,
  write: (tx: Tx, claims: Claims) => Promise<unknown>,
): Promise<Answer> {
  // The caller's access joins the fingerprint in SQL, where the claims were just set.
  const begin = sql`select response_status, response_body, lock_key, settled from app_hidden.idempotency_begin(
      ${operationId}::text, ${idempotencyKey}::text,
      encode(sha256(convert_to(${fingerprint(operationId, input)}::text
        || '|' || current_setting('svc.role') || '|' || current_setting('svc.location_ids')
        || '|' || current_setting('svc.powers') || '|' || current_setting('svc.scopes'), 'UTF8')), 'hex'),
      ${now.toISOString()}::timestamptz)`;
  const release = (outcomeUnknown: boolean): Sql =>
    sql`select app_hidden.idempotency_release(${operationId}::text, ${idempotencyKey}::text, ${outcomeUnknown}::boolean)`;

  // a saturated pool is 503 busy like any other call's; a database that cannot be reached
  // at all is the store being down
  const client = await checkout(pool).catch((e: unknown) => { throw e instanceof PoolBusy ? e : unavailable(); });
  let lockKey: string;
  let claims: Claims;
  try {
    const ask = () => statementOn(client, keyHash, requirement, begin);
    let asked = await ask();
    // A first call found gone was just recorded as unknown and committed; asking again raises its 409.
    while (asked.rows[0]!.settled) asked = await ask();
    const claim = asked.rows[0]!;
    if (claim.lock_key == null) {
      releaseClient(client);
      return { status: Number(claim.response_status), body: claim.response_body };
    }
    lockKey = String(claim.lock_key);
    claims = asked.claims;
  } catch (e) {
    // idempotency_begin raises only before it locks; after anything else the lock is in doubt.
    const raised = e instanceof ApiError || /^SV/.test((e as { code?: string })?.code ?? '');
    releaseClient(client, !raised);
    throw raised ? e : unavailable();
  }

  let outcome: { body: unknown } | { refused: unknown };
  try {
    outcome = await transactionUnder(client, claims, async (tx) => {
      await tx.query(sql`savepoint idempotent_write`);
      try {
        const body = await write(tx, claims);
        await tx.query(sql`select app_hidden.idempotency_finish(${operationId}::text, ${idempotencyKey}::text,
          ${successStatus}::int, ${JSON.stringify(body ?? null)}::jsonb)`);
        return { body };
      } catch (refused) {
        await tx.query(sql`rollback to savepoint idempotent_write`);
        await tx.query(release(false));
        return { refused };
      }
    });
  } catch (e) {
    // Nothing committed, or the commit went unanswered. This connection goes first (taking its
    // lock with it): waiting for a second one while holding it could drain the pool. A retry
    // in between finds the lock free and records the call as unknown: cautious, never false.
    releaseClient(client, true);
    await runStatement(pool, keyHash, requirement, release(e instanceof CommitOutcomeUnknown)).catch(() => undefined);
    throw e;
  }
  // Outside any transaction, so the lock is gone at once; the answer stands whatever happens here.
  const unlocked = await client.query('select pg_advisory_unlock($1::bigint) as unlocked', [lockKey])
    .then((r) => r.rows[0]?.unlocked === true, () => false);
  releaseClient(client, !unlocked);
  if ('refused' in outcome) throw outcome.refused;
  return { status: successStatus, body: outcome.body };
}
