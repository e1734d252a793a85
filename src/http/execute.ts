// Runs one operation for a key, whatever the face (REST or MCP): authentication and
// authorization first (so a caller without access learns nothing from a malformed request),
// then validation, then the operation — with replay for idempotent operations.
import type pg from 'pg';
import type { Config } from '../config.ts';
import { hashKey } from '../auth/keys.ts';
import { runStatement, runTransaction, type Claims, type Requirement, type Tx } from '../db/request.ts';
import type { AnyOperation } from '../registry/operation.ts';
import { ApiError, unauthorized } from './errors.ts';
import { runIdempotent, type Answer } from './idempotency.ts';

export interface ExecuteDeps {
  pool: pg.Pool;
  config: Config;
  /** The clock idempotency records are dated by (tests move it). */
  clock?: () => Date;
}

export const requirementOf = (op: AnyOperation): Requirement => ({
  scope: op.scope,
  memberAccess: op.memberAccess,
  managerPower: op.managerPower,
});

export async function execute(
  deps: ExecuteDeps,
  op: AnyOperation,
  key: string | undefined,
  readInput: () => Record<string, unknown>,
): Promise<Answer> {
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
  const status = op.successStatus ?? 200;
  const run = op.run;
  const ctx = (claims: Claims) => ({ input, claims, config: deps.config });
  const inTransaction = async (tx: Tx, claims: Claims) =>
    'statement' in run ? run.shape(await tx.query(run.statement(input)), ctx(claims)) : run.handler(tx, ctx(claims));

  const idempotencyKey = op.idempotent ? input.idempotency_key : undefined;
  if (typeof idempotencyKey === 'string') {
    return runIdempotent(deps.pool, keyHash, requirement, op.operationId, input, idempotencyKey,
      (deps.clock ?? (() => new Date()))(), status, inTransaction);
  }
  if ('statement' in run) {
    const { claims, rows } = await runStatement(deps.pool, keyHash, requirement, run.statement(input));
    return { status, body: run.shape(rows, ctx(claims)) };
  }
  return { status, body: await runTransaction(deps.pool, keyHash, requirement, inTransaction) };
}
