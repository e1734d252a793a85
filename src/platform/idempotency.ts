// Replay for operations flagged idempotent (spec: Limits, Errors). Keyed by (credential,
// operation, idempotency_key) in app_private.idempotency_keys. The key is claimed, the write
// runs and its answer is stored in one transaction (migration 000016, part 050):
//   * app_hidden.idempotency_claim, in the message that opens the transaction, takes the key's
//     transaction-level advisory lock and returns the stored first answer, or raises the 409
//     that applies (a second call while the first runs: idempotency_in_progress);
//   * the write, then app_hidden.idempotency_record, commit together. A write that is one
//     statement answering JSON runs with the claim and the storing of its answer as one
//     statement, in one round trip, as a read does (claimWriteRecord). A write that is refused
//     or fails rolls back with the claim, so the key stays free.
// A process killed mid-call, or a commit whose answer was lost, leaves either nothing or the
// committed answer, so a retry runs the call or gets its answer: never twice, never unknown.
// This holds because an idempotent operation acts only in the database; what it causes
// outside is a job enqueued in the same transaction.
// The fingerprint covers the request's details and the caller's access, so a replay after the
// caller's access changed is idempotency_key_reused, not a stale answer.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { checkout, CommitOutcomeUnknown, PoolBusy, releaseClient, runStatementOn, transactionOn, type Claims, type Credential,
  type Requirement, type Tx } from '../db/request.ts';
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


/**
 * The write of an idempotent call: a function of the transaction, whose answer is then stored by
 * a second statement; or a statement answering one row whose `result` column is the whole answer,
 * which runs with the claim and the storing of its answer in one statement (one round trip).
 */
export type IdempotentWrite =
  | ((tx: Tx, claims: Claims) => Promise<unknown>)
  | { statement: Sql; claimed?: (claims: Claims) => void };

/**
 * The claim, the write and the storing of its answer as one statement, run as the request's own
 * (one implicit transaction). The write is a scalar sub-select in a CASE: PostgreSQL runs it only
 * when the CASE takes that branch, that is when the key had no answer; a stored answer is
 * replayed without it. Each CTE is materialized so nothing runs twice.
 */
function claimWriteRecord(operationId: string, idempotencyKey: string, details: string, at: string, successStatus: number,
  statement: Sql): Sql {
  return sql`with c as materialized (
      select response_status, response_body
        from app_hidden.idempotency_claim(${operationId}::text, ${idempotencyKey}::text, ${details}::text, ${at}::timestamptz)
    ), w as materialized (
      select case when (select c.response_status from c) is null then (${statement})::jsonb end as result
    ), r as materialized (
      select app_hidden.idempotency_record(${operationId}::text, ${idempotencyKey}::text, ${details}::text,
               ${at}::timestamptz, ${successStatus}::int, w.result)
        from w where (select c.response_status from c) is null
    )
    select coalesce(c.response_status, ${successStatus}::int) as status,
           case when c.response_status is null then (select w.result from w) else c.response_body end as body,
           (select count(*) from r) as recorded
      from c`;
}

export async function runIdempotent(
  pool: pg.Pool,
  keyHash: Credential,
  requirement: Requirement,
  operationId: string,
  input: Record<string, unknown>,
  idempotencyKey: string,
  now: Date,
  successStatus: number,
  write: IdempotentWrite,
): Promise<Answer> {
  // a saturated pool is 503 busy like any other call's; a database that cannot be reached
  // at all is the store being down
  const client = await checkout(pool).catch((e: unknown) => { throw e instanceof PoolBusy ? e : unavailable(); });
  try {
    return await runIdempotentOn(client, keyHash, requirement, operationId, input, idempotencyKey, now, successStatus, write);
  } finally {
    releaseClient(client);
  }
}

/** runIdempotent on a connection the caller holds (the receptionist's job: its own connection). */
export async function runIdempotentOn(
  client: pg.PoolClient,
  keyHash: Credential,
  requirement: Requirement,
  operationId: string,
  input: Record<string, unknown>,
  idempotencyKey: string,
  now: Date,
  successStatus: number,
  write: IdempotentWrite,
): Promise<Answer> {
  const details = fingerprint(operationId, input);
  const at = now.toISOString();
  const claim = sql`select response_status, response_body
    from app_hidden.idempotency_claim(${operationId}::text, ${idempotencyKey}::text, ${details}::text, ${at}::timestamptz)`;
  if (typeof write !== 'function') {
    try {
      const { claims, rows: [row] } = await runStatementOn(client, keyHash, requirement,
        claimWriteRecord(operationId, idempotencyKey, details, at, successStatus, write.statement));
      write.claimed?.(claims);
      return { status: Number(row!.status), body: row!.body };
    } catch (e) {
      // Refusals (ApiError, SV… codes) and the database's own errors pass; without an answer
      // from the server the statement may or may not have committed.
      if (e instanceof ApiError || typeof (e as { code?: unknown })?.code === 'string') throw e;
      throw new CommitOutcomeUnknown(e);
    }
  }
  let claimed = false;
  try {
    return await transactionOn(client, keyHash, requirement, async (tx, claims, [stored]) => {
      claimed = true;
      if (stored!.response_status != null) return { status: Number(stored!.response_status), body: stored!.response_body };
      const body = await write(tx, claims);
      await tx.execute(sql`select app_hidden.idempotency_record(${operationId}::text, ${idempotencyKey}::text,
        ${details}::text, ${at}::timestamptz, ${successStatus}::int, ${JSON.stringify(body ?? null)}::jsonb)`);
      return { status: successStatus, body };
    }, claim);
  } catch (e) {
    // Refusals (ApiError, SV… codes) pass; the claim failing otherwise is the store being down.
    if (claimed || e instanceof ApiError || /^SV/.test((e as { code?: string })?.code ?? '')) throw e;
    throw unavailable();
  }
}
