// One declaration per operation: REST routes, the OpenAPI document and the MCP tools are
// generated from these, so the flags in the document are the ones the code enforces.
import { z } from 'zod';
import type { Power, Scope } from '../auth/scopes.ts';
import type { Claims, Tx } from '../db/request.ts';
import type { Sql } from '../db/sql.ts';
import type { Config } from '../config.ts';

export type MemberAccess = 'open' | 'scoped' | 'sms_setting' | 'deny';
export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
/** What a write changes: the nouns of the scope catalog (`contacts` of contacts:write, …). */
export type Changes = Scope extends `${infer Noun}:${string}` ? Noun : never;
/** The manager powers an operation can require (the staff power governs keys, no operation). */
export type ManagerPower = Exclude<Power, 'staff'>;

type AnyObject = z.ZodObject<z.ZodRawShape>;
type Infer<S> = S extends z.ZodType ? z.output<S> : Record<never, never>;

/** Path, query and body fields merged into one object (the MCP tool's input, too). */
export type InputOf<P, Q, B> = Infer<P> & Infer<Q> & Infer<B>;

export interface Context<I> {
  input: I;
  claims: Claims;
  config: Config;
}

/**
 * How an operation runs. `statement` builds a single SQL statement that is sent together
 * with authentication and claims in one round trip; `handler` gets a transaction for
 * operations that need more than one statement.
 */
export type Run<I, R> =
  | { statement: (input: I) => Sql; shape: (rows: Record<string, unknown>[], ctx: Context<I>) => R }
  | { handler: (tx: Tx, ctx: Context<I>) => Promise<R> };

export interface Operation<
  P extends AnyObject | undefined = AnyObject | undefined,
  Q extends AnyObject | undefined = AnyObject | undefined,
  B extends AnyObject | undefined = AnyObject | undefined,
  R extends z.ZodType = z.ZodType,
> {
  operationId: string;
  method: Method;
  path: string;
  summary: string;
  /** Written for a developer and for an agent: what it does, when to ask the user first. */
  description: string;
  tag: string;
  scope: Scope | null;
  memberAccess: MemberAccess;
  managerPower: ManagerPower | null;
  confirm: boolean;
  changes: readonly Changes[];
  idempotent: boolean;
  /**
   * Expensive: its cost grows with the organization's data (rules evaluated over every
   * contact). Runs in the heavy lane (src/platform/heavy.ts), with a cap on calls in flight.
   */
  heavy?: boolean;
  successStatus?: number;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  run: Run<InputOf<P, Q, B>, z.input<R>>;
}

/** The idempotency key the registry adds to the body of every operation flagged idempotent. */
export const IdempotencyKey = z.string().min(1).max(255)
  .describe('Any unique string; a retry with the same key and body returns the first answer (24 h)');

/** An operation as declared: the flags most operations share may be left out. */
export type OperationSpec<P extends AnyObject | undefined, Q extends AnyObject | undefined, B extends AnyObject | undefined, R extends z.ZodType> =
  Omit<Operation<P, Q, B, R>, 'confirm' | 'changes' | 'idempotent'>
  & Partial<Pick<Operation<P, Q, B, R>, 'confirm' | 'changes' | 'idempotent'>>;

/**
 * Declares an operation: not confirmed, changing nothing and not idempotent unless it says so.
 * An idempotent operation gets an optional `idempotency_key` in its body (src/platform/idempotency.ts
 * reads it), so no operation declares it itself.
 */
export function defineOperation<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends AnyObject | undefined = undefined,
  R extends z.ZodType = z.ZodType,
>(spec: OperationSpec<P, Q, B, R>): Operation<P, Q, B, R> {
  const op: Operation<P, Q, B, R> = { confirm: false, changes: [], idempotent: false, ...spec };
  if (!op.idempotent) return op;
  const keyed = { idempotency_key: IdempotencyKey.optional() };
  const body = (op.body ? op.body.extend(keyed) : z.strictObject(keyed)) as unknown as B;
  return { ...op, body };
}

// The registry stores operations of every shape; their own types are checked where declared.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any, any, any>;
