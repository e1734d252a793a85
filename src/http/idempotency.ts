// Replay for operations flagged idempotent (spec: Limits, Errors). Keyed by (credential,
// operation, idempotency_key) in app_private.idempotency_keys:
//   1. a short transaction claims the key (app_hidden.idempotency_begin), or answers with the
//      stored first answer, or with the 409 that applies;
//   2. the write and its stored answer commit together (app_hidden.idempotency_finish);
//   3. a call that rolled back frees the key; one whose outcome is unknown marks it.
// The fingerprint covers the request's details and the caller's access, so a replay after the
// caller's access changed is idempotency_key_reused, not a stale answer.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { CommitOutcomeUnknown, runStatement, runTransaction, type Claims, type Requirement, type Tx } from '../db/request.ts';
import { sql } from '../db/sql.ts';
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
  const begin = sql`select response_status, response_body from app_hidden.idempotency_begin(
      ${operationId}::text, ${idempotencyKey}::text,
      encode(sha256(convert_to(${fingerprint(operationId, input)}::text
        || '|' || current_setting('svc.role') || '|' || current_setting('svc.location_ids')
        || '|' || current_setting('svc.powers') || '|' || current_setting('svc.scopes'), 'UTF8')), 'hex'),
      ${now.toISOString()}::timestamptz)`;
  let stored: Record<string, unknown> | undefined;
  try {
    ({ rows: [stored] } = await runStatement(pool, keyHash, requirement, begin));
  } catch (e) {
    const code = (e as { code?: string })?.code ?? '';
    if (e instanceof ApiError || /^SV/.test(code)) throw e;
    throw unavailable();
  }
  if (stored?.response_status != null) return { status: Number(stored.response_status), body: stored.response_body };

  const release = (outcomeUnknown: boolean) => runStatement(pool, keyHash, requirement,
    sql`select app_hidden.idempotency_release(${operationId}::text, ${idempotencyKey}::text, ${outcomeUnknown}::boolean)`)
    .catch(() => undefined);
  try {
    const body = await runTransaction(pool, keyHash, requirement, async (tx, claims) => {
      const out = await write(tx, claims);
      await tx.query(sql`select app_hidden.idempotency_finish(${operationId}::text, ${idempotencyKey}::text,
        ${successStatus}::int, ${JSON.stringify(out ?? null)}::jsonb)`);
      return out;
    });
    return { status: successStatus, body };
  } catch (e) {
    // Anything before the commit rolled back; only a commit left unanswered is unknown.
    await release(e instanceof CommitOutcomeUnknown);
    throw e;
  }
}
