// Every request, once it is answered: one access log line (pino, at info) and the request
// metrics. The route handlers name the request (`nameRequest`) and, once the credential is
// known, its claims (res.locals.claims); neither the key nor the raw URL is ever logged (a
// path may carry a token, like an unsubscribe link's), only the route's pattern.
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '../log.ts';
import type { Claims } from '../db/request.ts';
import type { Metrics } from './metrics.ts';

/** What a route tells the access log about the request it serves. */
export interface RequestNote {
  /** The operationId, or the name of a route that is no operation (`docs`, `healthz`, a page's `GET /path`). */
  operation?: string;
  /** The route's pattern (`/api/v1/contacts/{id}`). */
  route?: string;
  claims?: Claims;
}

/** Names the request for the access log and metrics (a middleware, first on its route). */
export const nameRequest = (operation: string, route?: string): RequestHandler => (_req, res, next) => {
  const note = res.locals as RequestNote;
  note.operation = operation;
  note.route = route;
  next();
};

export interface ObserveOptions {
  metrics?: Metrics;
  /** Where access lines go; none when absent, or while its level is above info. */
  log?: Logger;
  /** The share of requests logged (0 to 1); metrics count every request. */
  sample: number;
}

/** The middleware that logs and counts each request as it ends; undefined when there is nothing to do. */
export function observeRequests({ metrics, log, sample }: ObserveOptions): RequestHandler | undefined {
  // the level is read per request, so that a level changed at run time takes effect
  const logger = sample > 0 ? log : undefined;
  if (!metrics && !logger) return undefined;
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    // Read now: once the connection is gone (a body reader destroyed it, the client cut it) the
    // request has no socket, and req.ip would throw in the close handler, outside any request's
    // error handling, ending the process.
    const client = logger ? req.ip ?? req.socket?.remoteAddress : undefined;
    res.once('close', () => {
      try {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const note = res.locals as RequestNote & { requestId?: string };
        const operation = note.operation ?? 'unmatched';
        metrics?.request(operation, res.statusCode, seconds);
        if (logger?.isLevelEnabled('info') && (sample >= 1 || Math.random() < sample)) {
          logger.info(accessLine(req, res, note, operation, seconds, client), 'request');
        }
      } catch (err) {
        // a line lost is better than a process lost
        log?.warn({ err }, 'access log: a request could not be recorded');
      }
    });
    next();
  };
}

function accessLine(req: Request, res: Response, note: RequestNote & { requestId?: string }, operation: string, seconds: number,
  client: string | undefined) {
  return {
    requestId: note.requestId,
    operationId: operation,
    method: req.method,
    route: note.route,
    status: res.statusCode,
    ms: Math.round(seconds * 1e6) / 1e3,
    organizationId: note.claims?.organization_id,
    credentialId: note.claims?.credential_id,
    client,
    // the answer was cut short: the client went away, or the connection failed
    ...(res.writableFinished ? {} : { aborted: true }),
  };
}
