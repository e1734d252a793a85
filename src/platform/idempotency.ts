// Replay for operations flagged idempotent (spec: Limits, Errors). Keyed by (credential,
// operation, idempotency_key) in app_private.idempotency_keys. The key is claimed, the write
// runs and its answer is stored in one transaction, which the database layer runs
// (runStatement and runTransaction in src/db/request.ts, given the claim):
//   * app_hidden.idempotency_claim, in the message that opens the transaction, takes the key's
//     transaction-level advisory lock and returns the stored first answer, or raises the 409
//     that applies (a second call while the first runs: idempotency_in_progress);
//   * the write, then app_hidden.idempotency_record, commit together. A write that is one
//     statement answering JSON runs with the claim and the storing of its answer as one
//     statement, in one round trip, as a read does. A write that is refused or fails rolls back
//     with the claim, so the key stays free.
// A process killed mid-call, or a commit whose answer was lost, leaves either nothing or the
// committed answer, so a retry runs the call or gets its answer: never twice, never unknown.
// This holds because an idempotent operation acts only in the database; what it causes
// outside is a job enqueued in the same transaction.
// The fingerprint covers the request's details and the caller's access, so a replay after the
// caller's access changed is idempotency_key_reused, not a stale answer.
import { createHash } from 'node:crypto';
import { runStatement, runTransaction, type Answer, type Claims, type Connection, type Credential, type IdempotencyClaim,
  type Requirement, type Tx } from '../db/request.ts';
import type { Sql } from '../db/sql.ts';

export type { Answer };

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

/**
 * The write of an idempotent call: a function of the transaction, whose answer is then stored by
 * a second statement; or a statement answering one row whose `result` column is the whole answer,
 * which runs with the claim and the storing of its answer in one statement (one round trip).
 */
export type IdempotentWrite =
  | ((tx: Tx, claims: Claims) => Promise<unknown>)
  | { statement: Sql; claimed?: (claims: Claims) => void };

export async function runIdempotent(
  on: Connection,
  credential: Credential,
  requirement: Requirement,
  operationId: string,
  input: Record<string, unknown>,
  idempotencyKey: string,
  now: Date,
  successStatus: number,
  write: IdempotentWrite,
): Promise<Answer> {
  const claim: IdempotencyClaim = {
    operationId, key: idempotencyKey, details: fingerprint(operationId, input), at: now.toISOString(), successStatus,
  };
  if (typeof write === 'function') return runTransaction(on, credential, requirement, write, { claim });
  const { claims, rows: [row] } = await runStatement(on, credential, requirement, write.statement, claim);
  write.claimed?.(claims);
  return { status: Number(row!.status), body: row!.body };
}
