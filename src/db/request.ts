// How every API request touches the database: as svc_request, with the credential's claims,
// inside one transaction. The credential is resolved and authorized by one security-definer
// call (app_hidden.authenticate) in the same round trip as a single-statement operation,
// sent as one simple-protocol message, which PostgreSQL runs as one implicit transaction, so
// role and claims end with it. Values are inlined only through the driver's literal escaping
// (db/sql.ts) and are either server-produced (the key hash) or validated by zod.
import pg from 'pg';
import { createHash } from 'node:crypto';
import { literal, sql, toQuery, type Sql } from './sql.ts';
import { outlivingOutages } from './outage.ts';

/**
 * How long one request's message (or one statement of a multi-statement handler) may run in
 * PostgreSQL before it is cancelled and the request answers 503 `timeout`. The slowest reads
 * measured at a million contacts take about a second; this bounds what a pathological request
 * (or an internal GraphQL query) can hold a connection and a core for.
 */
export const REQUEST_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * How long a request waits for a pooled connection (or for a new one to open) before it answers
 * 503 `busy`. Requests hold a connection for milliseconds, so a wait this long means the pool is
 * saturated; failing fast keeps a backlog from turning into minute-long waits for everyone.
 */
export const CHECKOUT_TIMEOUT_MS = 3_000;

/** The pool requests run on: svc_login connections, each statement bounded in time. */
export function createRequestPool(
  loginUrl: string,
  opts: { max?: number; statementTimeoutMs?: number; checkoutTimeoutMs?: number } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: loginUrl,
    max: opts.max ?? 20,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: opts.checkoutTimeoutMs ?? CHECKOUT_TIMEOUT_MS,
    // sent in each connection's startup packet, so it costs requests nothing
    statement_timeout: opts.statementTimeoutMs ?? REQUEST_STATEMENT_TIMEOUT_MS,
  });
  pool.on('connect', sendQueriesWhole);
  return outlivingOutages(pool, 'request');
}

/**
 * A query with parameters goes out as five protocol messages (parse, bind, describe, execute,
 * sync), which the driver writes to the socket one by one: five system calls, the largest
 * share of a request's CPU in the server when profiled. Corking the socket while the driver
 * submits a query sends them in one. (A query that waits behind another is submitted later,
 * uncorked, as before.)
 */
export function sendQueriesWhole(client: pg.Client): void {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  if (!stream?.cork || !stream.uncork) return;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
    stream.cork!();
    try {
      return query(...args);
    } finally {
      stream.uncork!();
    }
  };
}

/** No connection of the pool came free (or could be opened) within the checkout timeout. */
export class PoolBusy extends Error {
  constructor(cause: unknown) {
    super('no database connection came free in time', { cause });
  }
}

/**
 * pg-pool's two checkout timeouts (waiting for a free client, opening a new one), which carry no
 * SQLSTATE. Also what PostGraphile's own checkouts from a pool of ours throw.
 */
export function isCheckoutTimeout(e: unknown): boolean {
  return e instanceof PoolBusy
    || (e instanceof Error && !(e as { code?: string }).code && /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)/.test(e.message));
}

/** A connection from the pool, or PoolBusy once the checkout timeout has passed. */
async function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (e) {
    if (isCheckoutTimeout(e)) throw new PoolBusy(e);
    throw e;
  }
}

export interface Requirement {
  scope: string | null;
  memberAccess: string;
  managerPower: string | null;
}

/** svc.* settings by name, with the text app_hidden.authenticate set them to. */
export type ClaimSettings = Record<`svc.${string}`, string>;

/** The claims app_hidden.authenticate set for the transaction, as it returns them. */
export interface Claims {
  organization_id: string;
  credential_id: string;
  kind: 'personal' | 'organization';
  user_id: string | null;
  role: 'organization' | 'owner' | 'admin' | 'manager' | 'member';
  key_role: 'MANAGER' | 'MEMBER' | null;
  location_ids: string[] | null;
  powers: string[] | null;
  scopes: string[];
  records_level: 'all' | 'own';
  sms_enabled: boolean;
  /** Present for an OAuth access token: its client and the scopes its grant carries. */
  oauth_client?: { client_id: string; client_name: string | null; scopes: string[] };
  /**
   * Exactly what authenticate set, setting by setting: what another transaction re-applies to
   * act under these claims (internal GraphQL) without encoding them itself.
   */
  settings: ClaimSettings;
}

export interface Tx {
  query<T = Record<string, unknown>>(q: Sql): Promise<T[]>;
  /**
   * query for a statement whose text is fixed (an operation's own): prepared once per pooled
   * connection and executed by name, so PostgreSQL skips parsing and planning it again.
   */
  execute<T = Record<string, unknown>>(q: Sql): Promise<T[]>;
}

// Statements are prepared once per pooled connection (as svc_request, which owns the
// schema rights) and executed by name with escaped literals, so a request's message is
//   set local role svc_request; execute svc_auth(...); execute s_<hash>(...)
// and PostgreSQL skips parsing and planning on the hot path.
const AUTH = { name: 'svc_auth', text: 'select app_hidden.authenticate($1::bytea, $2::text, $3::text, $4::text) as claims' };
const prepared = new WeakMap<pg.ClientBase, Set<string>>();

function statementName(text: string): string {
  return `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
}

async function ensurePrepared(client: pg.ClientBase, name: string, text: string): Promise<void> {
  let names = prepared.get(client);
  if (!names) prepared.set(client, (names = new Set()));
  if (names.has(name)) return;
  if (names.size >= 1000) {
    // a safety net: statement texts are fixed per operation, so this should never fill up
    await forget(client);
    names = new Set();
    prepared.set(client, names);
  }
  await client.query(`set local role svc_request; prepare ${name} as ${text}`);
  names.add(name);
}

/**
 * Drops this module's prepared statements from a connection. Only ours: the internal GraphQL
 * layer prepares its own on the same pooled connections and would not know they were gone.
 */
async function forget(client: pg.ClientBase): Promise<void> {
  const names = prepared.get(client);
  prepared.delete(client);
  for (const name of names ?? []) await client.query(`deallocate ${name}`).catch(() => undefined);
}

function execute(name: string, values: readonly unknown[]): string {
  return values.length ? `execute ${name}(${values.map(literal).join(', ')})` : `execute ${name}`;
}

/**
 * Who a statement runs as: an API key's (or OAuth access token's) hash, or an internal actor of
 * the service (the receptionist) whose claims an owner-only SQL function sets: `authenticate`
 * names it (fixed text, never input) and is called with `args`, then the operation's scope,
 * member access and manager power, and answers the claims. Such a credential works only on a
 * connection of the owner, which becomes svc_request after that call.
 */
export type Credential = Buffer | InternalCredential;
export interface InternalCredential { authenticate: string; args: readonly unknown[] }

/** The statements that authenticate and take the request role, and where their answer (the claims) is among them. */
async function authStatements(client: pg.ClientBase, credential: Credential, req: Requirement): Promise<{ text: string; claimsAt: number }> {
  if (Buffer.isBuffer(credential)) {
    await ensurePrepared(client, AUTH.name, AUTH.text);
    return { text: `set local role svc_request; ${execute(AUTH.name, [credential, req.scope, req.memberAccess, req.managerPower])}`, claimsAt: 1 };
  }
  const args = [...credential.args, req.scope, req.memberAccess, req.managerPower];
  const text = `select ${credential.authenticate}(${args.map((_, i) => `$${i + 1}`).join(', ')}) as claims`;
  const name = statementName(text);
  await ensurePrepared(client, name, text);
  return { text: `${execute(name, args)}; set local role svc_request`, claimsAt: 0 };
}

/**
 * Where a request runs: a pool (a connection is checked out for it and given back), or a
 * connection the caller holds (an internal actor's job), which stays the caller's.
 */
export type Connection = pg.Pool | pg.PoolClient;

async function lease(on: Connection, forClaim = false): Promise<{ client: pg.PoolClient; release: () => void }> {
  if (!(on instanceof pg.Pool)) return { client: on, release: () => undefined };
  const client = await (forClaim ? checkoutForClaim(on) : checkout(on));
  return { client, release: () => releaseClient(client) };
}

// A migration that changes what a prepared statement depends on makes PostgreSQL refuse it
// once; the connection forgets its statements and the request is tried again.
const STALE_PLAN = new Set(['0A000', '26000']);

type Results = pg.QueryResult<Record<string, unknown>>[];

// A deadlock (40P01) or serialization failure (40001) undoes the whole transaction: nothing of
// it happened, so it is run again, up to five tries in all, after a short random pause (growing
// with each try) that lets the other side finish. Concurrent writers swapping two contacts'
// phones meet this way; the second try then sees the other's commit (and answers 409 if the phone
// is taken now). Sixteen writers racing on one contact (test/platform/concurrency.test.ts) could
// meet three times in a row.
const CONFLICTS = new Set(['40P01', '40001']);
const ATTEMPTS = 5;

export async function retryingConflicts<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      if (attempt >= ATTEMPTS || !CONFLICTS.has((e as { code?: string }).code ?? '')) throw e;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}

// Connections a step found unusable (no answer from the server): destroyed, not pooled again.
const unusable = new WeakSet<pg.ClientBase>();

/**
 * Gives a checked-out connection back to the pool, or destroys it: when a step found it
 * unusable, or when the caller cannot vouch for its session state (an idempotent call that may
 * still hold its key's advisory lock).
 */
function releaseClient(client: pg.PoolClient, destroy = false): void {
  client.release(destroy || unusable.has(client));
}

/** runStatement on a connection the caller checked out. */
async function statementOn(
  client: pg.ClientBase,
  credential: Credential,
  req: Requirement,
  statement: Sql | undefined,
): Promise<{ claims: Claims; rows: Record<string, unknown>[] }> {
  return preparedRun(client, async () => {
    const auth = await authStatements(client, credential, req);
    let text = auth.text;
    if (statement) {
      const q = toQuery(statement);
      const name = statementName(q.text);
      await ensurePrepared(client, name, q.text);
      text += `; ${execute(name, statement.values)}`;
    }
    const results = (await client.query(text)) as unknown as Results;
    return { claims: results[auth.claimsAt]!.rows[0]!.claims as Claims, rows: statement ? results[2]!.rows : [] };
  });
}

/**
 * Runs one round trip of prepared statements: once more, after forgetting them, when a plan went
 * stale (the schema changed under it); the connection is not pooled again when the server did
 * not answer.
 */
async function preparedRun<T>(client: pg.ClientBase, run: () => Promise<T>): Promise<T> {
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (e) {
        if (attempt > 0 || !STALE_PLAN.has((e as { code?: string }).code ?? '')) throw e;
        await forget(client);
      }
    }
  } catch (e) {
    if (!(e as { code?: string }).code) unusable.add(client);
    throw e;
  }
}

/**
 * One statement as the request role with no claims (a public page: a provider's webhook), in one
 * round trip: prepared once per connection, then `set local role svc_request; execute …` in one
 * message, which is one transaction. The values travel as EXECUTE's arguments through literal(),
 * as on statementOn's path.
 */
async function publicStatementOn(client: pg.ClientBase, text: string, values: readonly unknown[]): Promise<Record<string, unknown>[]> {
  const name = statementName(text);
  return preparedRun(client, async () => {
    await ensurePrepared(client, name, text);
    const results = (await client.query(`set local role svc_request; ${execute(name, values)}`)) as unknown as Results;
    return results[1]!.rows;
  });
}

// Public endpoints (a form post, a provider's webhook): no credential and no claims, as the
// request role, which may call only the definer functions granted to it for this.

/** Runs `text` in its own transaction as svc_request; the rows. Nothing is committed when it throws. */
export async function publicStatement<T = Record<string, unknown>>(pool: pg.Pool, text: string, values: unknown[]): Promise<T[]> {
  const client = await checkout(pool);
  let broken = false;
  try {
    await client.query('begin');
    await client.query('set local role svc_request');
    const { rows } = await client.query(text, values);
    await client.query('commit');
    return rows as T[];
  } catch (e) {
    broken = await client.query('rollback').then(() => false, () => true);
    throw e;
  } finally {
    releaseClient(client, broken);
  }
}

/**
 * publicStatement in one round trip instead of four (begin, role, statement, commit): the
 * statement prepared once per connection (publicStatementOn). For a page called at a provider's
 * rate (the SMS webhooks).
 */
export async function publicCall<T = Record<string, unknown>>(pool: pg.Pool, text: string, values: unknown[]): Promise<T[]> {
  const client = await checkout(pool);
  try {
    return (await publicStatementOn(client, text, values)) as T[];
  } finally {
    releaseClient(client);
  }
}

/**
 * An idempotent write's key (app_private.idempotency_keys): taken in the transaction that runs
 * the write, with the write's answer stored before it commits. `details` is the request's
 * fingerprint, `at` the time the record is dated by.
 */
export interface IdempotencyClaim {
  operationId: string;
  key: string;
  details: string;
  at: string;
  successStatus: number;
}

/** A write's answer, stored under its idempotency key and replayed for a retry. */
export interface Answer { status: number; body: unknown }

/** The idempotency store could not be reached: the call did not run. */
export class ClaimStoreUnavailable extends Error {
  constructor(cause: unknown) {
    super('the idempotency store cannot be reached', { cause });
  }
}

/**
 * A connection for a claimed write: a saturated pool is PoolBusy like any other call's; a
 * database that cannot be reached at all is the store being down.
 */
async function checkoutForClaim(pool: pg.Pool): Promise<pg.PoolClient> {
  return checkout(pool).catch((e: unknown) => { throw e instanceof PoolBusy ? e : new ClaimStoreUnavailable(e); });
}

/** app_hidden.idempotency_claim: takes the key's lock and returns its stored answer, if any. */
function claimStatement(c: IdempotencyClaim): Sql {
  return sql`select response_status, response_body
    from app_hidden.idempotency_claim(${c.operationId}::text, ${c.key}::text, ${c.details}::text, ${c.at}::timestamptz)`;
}

/** app_hidden.idempotency_record: stores the write's answer under the claimed key. */
function recordStatement(c: IdempotencyClaim, body: unknown): Sql {
  return sql`select app_hidden.idempotency_record(${c.operationId}::text, ${c.key}::text, ${c.details}::text,
    ${c.at}::timestamptz, ${c.successStatus}::int, ${JSON.stringify(body ?? null)}::jsonb)`;
}

/**
 * The claim, the write and the storing of its answer as one statement (one implicit
 * transaction). The write is a scalar sub-select in a CASE: PostgreSQL runs it only when the CASE
 * takes that branch, that is when the key had no answer; a stored answer is replayed without it.
 * Each CTE is materialized so nothing runs twice.
 */
function claimWriteRecord(c: IdempotencyClaim, statement: Sql): Sql {
  return sql`with c as materialized (${claimStatement(c)}
    ), w as materialized (
      select case when (select c.response_status from c) is null then (${statement})::jsonb end as result
    ), r as materialized (
      select app_hidden.idempotency_record(${c.operationId}::text, ${c.key}::text, ${c.details}::text,
               ${c.at}::timestamptz, ${c.successStatus}::int, w.result)
        from w where (select c.response_status from c) is null
    )
    select coalesce(c.response_status, ${c.successStatus}::int) as status,
           case when c.response_status is null then (select w.result from w) else c.response_body end as body,
           (select count(*) from r) as recorded
      from c`;
}

/**
 * Authenticate, authorize and run one statement: one round trip. With a claim, the statement
 * is a write answering one row whose `result` column is its whole answer, run with the claim
 * and the storing of that answer in the same statement; the rows are then one `{status, body}`:
 * the write's, or the answer stored by the first call with that key.
 */
export async function runStatement(
  on: Connection,
  credential: Credential,
  req: Requirement,
  statement: Sql | undefined,
  claim?: IdempotencyClaim,
): Promise<{ claims: Claims; rows: Record<string, unknown>[] }> {
  const { client, release } = await lease(on, claim !== undefined);
  try {
    if (!claim) return await retryingConflicts(() => statementOn(client, credential, req, statement));
    return await retryingConflicts(() => statementOn(client, credential, req, claimWriteRecord(claim, statement!)));
  } catch (e) {
    // Refusals (SV… codes) and the database's own errors pass; without an answer from the
    // server a claimed write may or may not have committed.
    if (!claim || typeof (e as { code?: unknown })?.code === 'string') throw e;
    throw new CommitOutcomeUnknown(e);
  } finally {
    release();
  }
}

/** The connection failed while committing: whether the transaction took effect is unknown. */
export class CommitOutcomeUnknown extends Error {
  constructor(cause: unknown) {
    super('the outcome of the commit is unknown', { cause });
  }
}

type Body<T> = (tx: Tx, claims: Claims, first: Record<string, unknown>[]) => Promise<T>;

/**
 * Authenticate and authorize, then hand a transaction to a multi-statement handler. A `first`
 * statement runs (prepared) in the message that opens the transaction, and the handler gets its
 * rows: one round trip fewer for a handler that always starts with it.
 *
 * With a `claim`, the message that opens the transaction takes the idempotency key
 * (app_hidden.idempotency_claim, which raises the 409 that applies, idempotency_in_progress for
 * a call still running); a key already answered returns the stored answer without running the
 * handler, otherwise the handler's answer is stored (app_hidden.idempotency_record) and commits
 * with the write. A refused or failed write rolls back with its claim, so the key stays free.
 */
export function runTransaction<T>(on: Connection, credential: Credential, req: Requirement, body: Body<T>, opts?: { first?: Sql }): Promise<T>;
export function runTransaction<T>(on: Connection, credential: Credential, req: Requirement, body: Body<T>, opts: { claim: IdempotencyClaim }): Promise<Answer>;
export async function runTransaction<T>(
  on: Connection,
  credential: Credential,
  req: Requirement,
  body: Body<T>,
  opts: { first?: Sql; claim?: IdempotencyClaim } = {},
): Promise<T | Answer> {
  const { claim } = opts;
  const { client, release } = await lease(on, claim !== undefined);
  if (!claim) {
    try {
      // the handler only queries through tx, so running it again repeats nothing outside the database
      return await retryingConflicts(() => transactionOn(client, credential, req, body, opts.first));
    } finally {
      release();
    }
  }
  let claimed = false;
  try {
    return await transactionOn(client, credential, req, async (tx, claims, [stored]) => {
      claimed = true;
      if (stored!.response_status != null) return { status: Number(stored!.response_status), body: stored!.response_body };
      const answer = await body(tx, claims, []);
      await tx.execute(recordStatement(claim, answer));
      return { status: claim.successStatus, body: answer };
    }, claimStatement(claim));
  } catch (e) {
    // Refusals (SV… codes) pass; the claim failing otherwise is the store being down.
    if (claimed || /^SV/.test((e as { code?: string })?.code ?? '')) throw e;
    throw new ClaimStoreUnavailable(e);
  } finally {
    release();
  }
}

async function transactionOn<T>(
  client: pg.ClientBase,
  credential: Credential,
  req: Requirement,
  body: Body<T>,
  first?: Sql,
): Promise<T> {
  return inTransaction(client, async () => {
    const auth = await authStatements(client, credential, req);
    let text = `begin; ${auth.text}`;
    if (first) {
      const q = toQuery(first);
      const name = statementName(q.text);
      await ensurePrepared(client, name, q.text);
      text += `; ${execute(name, first.values)}`;
    }
    const results = (await client.query(text)) as unknown as Results;
    return { claims: results[auth.claimsAt + 1]!.rows[0]!.claims as Claims, first: first ? results[3]!.rows : [] };
  }, body);
}

async function inTransaction<T>(
  client: pg.ClientBase,
  open: () => Promise<{ claims: Claims; first: Record<string, unknown>[] }>,
  body: (tx: Tx, claims: Claims, first: Record<string, unknown>[]) => Promise<T>,
): Promise<T> {
  try {
    const { claims, first } = await open();
    const tx: Tx = {
      async query<R>(q: Sql) {
        const { text, values } = toQuery(q);
        return (await client.query(text, values)).rows as R[];
      },
      async execute<R>(q: Sql) {
        const { text } = toQuery(q);
        const name = statementName(text);
        await ensurePrepared(client, name, text);
        return (await client.query(execute(name, q.values))).rows as R[];
      },
    };
    const out = await body(tx, claims, first);
    try {
      await client.query('commit');
    } catch (e) {
      // Without an answer from the server the write may or may not have committed.
      if (typeof (e as { code?: unknown }).code !== 'string') throw new CommitOutcomeUnknown(e);
      throw e;
    }
    return out;
  } catch (e) {
    await client.query('rollback').catch(() => { unusable.add(client); });
    throw e;
  }
}
