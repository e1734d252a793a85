// One declaration per operation: REST routes, the OpenAPI document and (later) MCP tools
// are generated from these, so the flags in the document are the ones the code enforces.
import type { z } from 'zod';
import type { Power, Scope } from '../auth/scopes.ts';
import type { Claims, Tx } from '../db/request.ts';
import type { Sql } from '../db/sql.ts';
import type { Config } from '../config.ts';

export type MemberAccess = 'open' | 'scoped' | 'sms_setting' | 'deny';
export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type Changes = 'contacts' | 'sequences' | 'appointments' | 'audiences';

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
  managerPower: Extract<Power, 'contacts' | 'sequences'> | null;
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

export function defineOperation<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends AnyObject | undefined = undefined,
  R extends z.ZodType = z.ZodType,
>(op: Operation<P, Q, B, R>): Operation<P, Q, B, R> {
  return op;
}

// The registry stores operations of every shape; their own types are checked where declared.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any, any, any>;
