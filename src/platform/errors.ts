// The one error envelope (spec: Errors) and the one place that maps database errors to it.
import type { ZodError } from 'zod';
import { isCheckoutTimeout } from '../db/request.ts';

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

/**
 * SQL functions raise SQLSTATE 'SV' + status with the error code as message, the human
 * sentence as detail and extra envelope fields as JSON in the hint (app_hidden.raise_error).
 * A few standard classes are the caller's fault too; anything else is ours (500).
 */
export function fromDatabase(e: unknown): ApiError | undefined {
  const err = e as PgError;
  const code = err?.code;
  if (typeof code !== 'string') return undefined;
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
  if (code === '23505') return new ApiError(409, 'conflict', 'Another record already uses this value');
  // statement_timeout (createRequestPool) or an operator's cancel
  if (code === '57014') return new ApiError(503, 'timeout', 'The request took longer than the server allows; narrow it and try again');
  if (code.startsWith('22')) return badRequest('A value is out of range or malformed');
  return undefined;
}

/** Answers that tell the caller to come back: 503 `busy` and 429 concurrency refusals. */
export const busy = () => new ApiError(503, 'busy',
  'The service is at capacity; retry after the number of seconds in retry_after', { retry_after: 1 });


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
  return fromDatabase(e) ?? internalError();
}
