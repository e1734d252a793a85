// How every API request touches the database: as svc_request, with the credential's claims,
// inside one transaction. The credential is resolved and authorized by one security-definer
// call (app_hidden.authenticate) in the same round trip as a single-statement operation,
// sent as one simple-protocol message, which PostgreSQL runs as one implicit transaction, so
// role and claims end with it. Values are inlined only through the driver's literal escaping
// (db/sql.ts) and are either server-produced (the key hash) or validated by zod.
import pg from 'pg';
import { createHash } from 'node:crypto';
import { literal, toQuery, type Sql } from './sql.ts';

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
  return pool;
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
export async function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
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

/** Authenticate, authorize and run one statement: one round trip. */
export async function runStatement(
  pool: pg.Pool,
  keyHash: Credential,
  req: Requirement,
  statement: Sql | undefined,
): Promise<{ claims: Claims; rows: Record<string, unknown>[] }> {
  const client = await checkout(pool);
  try {
    return await retryingConflicts(() => statementOn(client, keyHash, req, statement));
  } finally {
    releaseClient(client);
  }
}

// Connections a step found unusable (no answer from the server): destroyed, not pooled again.
const unusable = new WeakSet<pg.ClientBase>();

/**
 * Gives a checked-out connection back to the pool, or destroys it: when a step found it
 * unusable, or when the caller cannot vouch for its session state (an idempotent call that may
 * still hold its key's advisory lock).
 */
export function releaseClient(client: pg.PoolClient, destroy = false): void {
  client.release(destroy || unusable.has(client));
}

/** runStatement on a connection the caller checked out (conflicts retried likewise). */
export function runStatementOn(
  client: pg.ClientBase,
  keyHash: Credential,
  req: Requirement,
  statement: Sql,
): Promise<{ claims: Claims; rows: Record<string, unknown>[] }> {
  return retryingConflicts(() => statementOn(client, keyHash, req, statement));
}

/** runStatement on a connection the caller checked out. */
async function statementOn(
  client: pg.ClientBase,
  keyHash: Credential,
  req: Requirement,
  statement: Sql | undefined,
): Promise<{ claims: Claims; rows: Record<string, unknown>[] }> {
  return preparedRun(client, async () => {
    const auth = await authStatements(client, keyHash, req);
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
export async function publicStatementOn(client: pg.ClientBase, text: string, values: readonly unknown[]): Promise<Record<string, unknown>[]> {
  const name = statementName(text);
  return preparedRun(client, async () => {
    await ensurePrepared(client, name, text);
    const results = (await client.query(`set local role svc_request; ${execute(name, values)}`)) as unknown as Results;
    return results[1]!.rows;
  });
}

/** The connection failed while committing: whether the transaction took effect is unknown. */
export class CommitOutcomeUnknown extends Error {
  constructor(cause: unknown) {
    super('the outcome of the commit is unknown', { cause });
  }
}

/** Authenticate and authorize, then hand a transaction to a multi-statement handler. */
/**
 * Authenticate and authorize, then hand a transaction to a multi-statement handler. A `first`
 * statement runs (prepared) in the message that opens the transaction, and the handler gets
 * its rows: one round trip fewer for a handler that always starts with it.
 */
export async function runTransaction<T>(
  pool: pg.Pool,
  keyHash: Credential,
  req: Requirement,
  body: (tx: Tx, claims: Claims, first: Record<string, unknown>[]) => Promise<T>,
  first?: Sql,
): Promise<T> {
  const client = await checkout(pool);
  try {
    // the handler only queries through tx, so running it again repeats nothing outside the database
    return await retryingConflicts(() => transactionOn(client, keyHash, req, body, first));
  } finally {
    releaseClient(client);
  }
}

/** runTransaction on a connection the caller checked out (an idempotent call: src/platform/idempotency.ts). */
export async function transactionOn<T>(
  client: pg.ClientBase,
  keyHash: Credential,
  req: Requirement,
  body: (tx: Tx, claims: Claims, first: Record<string, unknown>[]) => Promise<T>,
  first?: Sql,
): Promise<T> {
  return inTransaction(client, async () => {
    const auth = await authStatements(client, keyHash, req);
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
