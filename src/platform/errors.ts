// The one error envelope (spec: Errors) and the one place that maps database errors to it.
import type { ZodError } from 'zod';
import { ClaimStoreUnavailable, CommitOutcomeUnknown, isCheckoutTimeout } from '../db/request.ts';
import { isConnectionLost } from '../db/outage.ts';

export interface Envelope {
  statusCode: number;
  error: string;
  timestamp: string;
  path: string;
  message?: string;
  required?: string;
  blockers?: unknown[];
  [extra: string]: unknown;
}

/** An error the API answers with; everything else becomes a 500 with no details. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly extra: Record<string, unknown>;
  constructor(statusCode: number, code: string, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.extra = extra;
  }
}

export const UNAUTHORIZED_MESSAGE = 'Invalid or missing API key';
export const unauthorized = () => new ApiError(401, 'unauthorized', UNAUTHORIZED_MESSAGE);
export const notFound = (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found`);
export const badRequest = (message: string, extra: Record<string, unknown> = {}) =>
  new ApiError(400, 'bad_request', message, extra);

export function fromZod(err: ZodError, where: string): ApiError {
  const first = err.issues[0];
  const at = first && first.path.length ? `${where}.${first.path.join('.')}` : where;
  return badRequest(`${at}: ${first?.message ?? 'invalid'}`, {
    issues: err.issues.map((i) => ({ path: [where, ...i.path].join('.'), message: i.message })),
  });
}

interface PgError { code?: string; message?: string; detail?: string; hint?: string; constraint?: string }

const retryable = (status: number, code: string, message: string) => () =>
  new ApiError(status, code, message, { retry_after: 1 });

/**
 * What the database's standard refusals mean for the caller, by SQLSTATE, then by class (its
 * first two characters). Statuses are PostgREST's (Error.hs, pgErrorStatus) unless noted; the
 * database's own message never reaches the caller, since it names tables, constraints and the
 * values of other rows. Whatever is not here is a fault of ours (a bug: 42703, P0001, XX000;
 * the service's own login or role refused: 28, 0L, 0P) and answers 500.
 */
const BY_CODE: Record<string, () => ApiError> = {
  // a policy's WITH CHECK, or a missing grant, refused the request role. authenticate checked
  // the scope before anything ran, so what is left is the credential's role, locations or
  // powers: insufficient_role, the spec's 403 for those (insufficient_scope needs `required`)
  '42501': () => new ApiError(403, 'insufficient_role', 'This credential may not make this change'),
  '23503': () => new ApiError(409, 'conflict',
    'A record this change refers to does not exist, or another record still refers to this one'),
  '23505': () => new ApiError(409, 'conflict', 'Another record already uses this value'),
  // statement_timeout (createRequestPool) or an operator's cancel
  '57014': () => new ApiError(503, 'timeout', 'The request took longer than the server allows; narrow it and try again'),
  // a lock not granted in time (PostgREST: 500): the same as losing a deadlock
  '55P03': retryable(503, 'contention', 'The request collided with concurrent work and was undone; retry it'),
  // writes reaching a standby during a failover (PostgREST: 405, for its read-only GETs)
  '25006': retryable(503, 'unavailable', 'The database cannot take writes at the moment; retry shortly'),
};
const BY_CLASS: Record<string, () => ApiError> = {
  '22': () => badRequest('A value is out of range or malformed'),
  // not null, check, exclusion, restrict (23503 and 23505 above)
  '23': () => badRequest('A value breaks a rule of the record'),
  // serialization failure, deadlock (PostgREST: 500): nothing was written, a retry may succeed
  '40': retryable(503, 'contention', 'The request collided with concurrent work and was undone; retry it'),
  '08': retryable(503, 'unavailable', 'The database cannot be reached at the moment; retry shortly'),
  // disk full, out of memory, too many connections, a configured limit (53400; PostgREST: 500)
  '53': () => busy(),
  // statement too complex, too many columns or arguments (PostgREST: 500): the input made it so
  '54': () => badRequest('The request is too large or too complex to process'),
  // shutdown, crash, start-up, database dropped, session timeout (PostgREST: 503 for 57P01 only)
  '57': retryable(503, 'unavailable', 'The database is restarting or unavailable; retry shortly'),
};

/**
 * SQL functions raise SQLSTATE 'SV' + status with the error code as message, the human
 * sentence as detail and extra envelope fields as JSON in the hint (app_hidden.raise_error).
 * The standard refusals of the database answer as BY_CODE and BY_CLASS say; anything else is
 * ours (500).
 */
export function fromDatabase(e: unknown): ApiError | undefined {
  const err = e as PgError;
  const code = err?.code;
  if (typeof code !== 'string' || code.length !== 5) return undefined;
  const m = /^SV(\d{3})$/.exec(code);
  if (m) {
    const status = Number(m[1]);
    if (status === 401) return unauthorized();
    let extra: Record<string, unknown> = {};
    if (err.hint) {
      try { extra = JSON.parse(err.hint) as Record<string, unknown>; } catch { extra = {}; }
    }
    return new ApiError(status, err.message || 'error', err.detail || err.message || 'error', extra);
  }
  return (BY_CODE[code] ?? BY_CLASS[code.slice(0, 2)])?.();
}

/** Answers that tell the caller to come back: 503 `busy` and 429 concurrency refusals. */
export const busy = retryable(503, 'busy', 'The service is at capacity; retry after the number of seconds in retry_after');


export function envelope(err: ApiError, path: string): Envelope {
  const base: Envelope = {
    statusCode: err.statusCode,
    error: err.code,
    timestamp: new Date().toISOString(),
    path,
    message: err.message,
  };
  return { ...base, ...err.extra };
}

export const internalError = () => new ApiError(500, 'internal_error', 'Something went wrong on our side');

/** Any thrown value as the error the caller sees. */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (isCheckoutTimeout(e)) return busy();
  if (e instanceof ClaimStoreUnavailable) {
    return new ApiError(503, 'idempotency_unavailable',
      'The idempotency store cannot be reached; the call did not run. Retry later with the same key');
  }
  // no server to answer (down, restarting): the caller comes back, as for the server's own 08 and 57
  if (isConnectionLost(e)) return BY_CLASS['08']!();
  if (e instanceof CommitOutcomeUnknown) {
    return new ApiError(503, 'unavailable', 'The database connection was lost while the change was committing, '
      + 'so it may or may not have been made; check before retrying, or retry with an Idempotency-Key', { retry_after: 1 });
  }
  return fromDatabase(e) ?? internalError();
}
