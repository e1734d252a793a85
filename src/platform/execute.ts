// Runs one operation for a key, whatever the face (REST or MCP): authentication and
// authorization first (so a caller without access learns nothing from a malformed request),
// then validation, then the operation — with replay for idempotent operations.
import type pg from 'pg';
import type { Config } from '../config.ts';
import { credentialHash } from '../auth/keys.ts';
import { runStatement, runTransaction, type Claims, type Connection, type Credential, type InternalCredential,
  type Requirement, type Tx } from '../db/request.ts';
import type { AnyOperation } from '../registry/operation.ts';
import { ApiError, unauthorized } from './errors.ts';
import type { HeavyLane } from './heavy.ts';
import { runIdempotent, type Answer } from './idempotency.ts';
import { splitArguments, validateInput } from './input.ts';
import { result } from './schemas.ts';

export interface ExecuteDeps {
  pool: pg.Pool;
  /** Where operations flagged `heavy` run; without it they run on `pool` like the rest. */
  heavy?: HeavyLane;
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
  /** Receives the credential's claims once they are known (the access log's organization and credential). */
  note?: { claims?: Claims },
): Promise<Answer> {
  if (!key) throw unauthorized();
  const keyHash = credentialHash(key, deps.config.baseUrl);
  const requirement = requirementOf(op);
  const lane = op.heavy ? deps.heavy : undefined;
  if (lane) {
    const ticket = lane.admit(keyHash);
    try {
      // Authorized and validated on the request pool, so that only calls that may run queue
      // for the lane.
      const { claims } = await runStatement(deps.pool, keyHash, requirement, undefined);
      if (note) note.claims = claims;
      const input = readInput();
      ticket.organization(claims);
      return await run(deps, lane.pool, op, keyHash, requirement, input, note);
    } finally {
      ticket.end();
    }
  }
  let input: Record<string, unknown>;
  try {
    input = readInput();
  } catch (e) {
    if (e instanceof ApiError) await runStatement(deps.pool, keyHash, requirement, undefined);
    throw e;
  }
  return run(deps, deps.pool, op, keyHash, requirement, input, note);
}

async function run(
  deps: { config: Config; clock?: () => Date },
  pool: Connection,
  op: AnyOperation,
  keyHash: Credential,
  requirement: Requirement,
  input: Record<string, unknown>,
  note: { claims?: Claims } | undefined,
): Promise<Answer> {
  const status = op.successStatus ?? 200;
  const how = op.run;
  const ctx = (claims: Claims) => ({ input, claims, config: deps.config });
  const inTransaction = async (tx: Tx, claims: Claims) => {
    if (note) note.claims = claims;
    return 'statement' in how ? how.shape(await tx.execute(how.statement(input)), ctx(claims)) : how.handler(tx, ctx(claims));
  };

  const idempotencyKey = op.idempotent ? input.idempotency_key : undefined;
  if (typeof idempotencyKey === 'string') {
    // a statement whose answer is its JSON as it is: the write stores its answer itself
    const write = 'statement' in how && how.shape === result
      ? { statement: how.statement(input), claimed: (claims: Claims) => { if (note) note.claims = claims; } }
      : inTransaction;
    return runIdempotent(pool, keyHash, requirement, op.operationId, input, idempotencyKey,
      (deps.clock ?? (() => new Date()))(), status, write);
  }
  if ('statement' in how) {
    const { claims, rows } = await runStatement(pool, keyHash, requirement, how.statement(input));
    if (note) note.claims = claims;
    return { status, body: how.shape(rows, ctx(claims)) };
  }
  return { status, body: await runTransaction(pool, keyHash, requirement, inTransaction) };
}

/**
 * Runs one operation for an internal actor of the service (the receptionist) on a connection of
 * the owner it holds: the arguments are validated as an MCP tool's are, then the operation's own
 * statement or handler runs under the claims the actor's SQL function sets (which also refuses
 * what the actor may not name), with replay for idempotent operations. Errors are the API's
 * (ApiError), as for a key.
 */
export async function runOperation(
  deps: { config: Config; clock?: () => Date },
  client: pg.PoolClient,
  op: AnyOperation,
  args: Record<string, unknown>,
  credential: (input: Record<string, unknown>) => InternalCredential,
): Promise<Answer> {
  const input = validateInput(op, splitArguments(op, args));
  return run(deps, client, op, credential(input), requirementOf(op), input, undefined);
}
