// `svc serve`: migrate, seed an empty database with the demo organization, serve the API and
// run the workers, and shut down cleanly on SIGTERM/SIGINT.
import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import pg from 'pg';
import type { Runner } from 'graphile-worker';
import { loadConfig, type Config } from './config.ts';
import { openDatabase, type Database } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import { createRequestPool } from './db/request.ts';
import { outlivingOutages } from './db/outage.ts';
import { createApp, metricsOf } from './http/app.ts';
import { ApiError, badRequest, envelope } from './platform/errors.ts';
import { createInternalGraphql } from './graphql/internal.ts';
import { RateLimiter, postgresWindowStore } from './http/rate-limit.ts';
import { log } from './log.ts';
import { AREAS } from './areas.ts';
import { operationsOf, pagesOf } from './registry/area.ts';
import { describeSeed, seedIfEmpty } from './seed/demo.ts';
import { startWorker } from './worker.ts';
import { createTransports } from './delivery/index.ts';
import { parseSmtpListen, startSmtpListener, type SmtpListener } from './delivery/smtp_listener.ts';
import { createHeavyLane } from './platform/heavy.ts';

export interface Running {
  server: Server;
  url: string;
  stop(): Promise<void>;
}

export function requestPool(db: Database): pg.Pool {
  // connections the server dropped (restart, failover) are replaced on next use (createRequestPool)
  return createRequestPool(db.loginUrl);
}

export async function listen(app: ReturnType<typeof createApp>, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(server)));
    server.on('clientError', answerUnparsable);
  });
}

/**
 * A request Node's HTTP parser refused (a request line or headers over its 16 kB limit, broken
 * syntax, headers too slow to arrive) never reaches the app: answer it with the error envelope
 * too, instead of Node's empty 431, 400 or 408. The path is unknown, since the request line is
 * what could not be read.
 */
export function answerUnparsable(err: Error & { code?: string }, socket: Duplex): void {
  // Bytes after a request that is still being answered (pipelined garbage): that request's answer
  // is sent whole, then the connection closes; a 400 written now would cut into it.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight && !inFlight.writableFinished && inFlight.req?.complete !== false) {
    inFlight.once('finish', () => socket.end());
    inFlight.once('close', () => socket.destroy());
    return;
  }
  // The request in flight itself is cut short (the connection ended before its Content-Length):
  // its body will never arrive, so its reader must learn it now; waiting for its answer would
  // hold the connection open forever.
  if (inFlight && !inFlight.writableFinished) {
    socket.destroy();
    return;
  }
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  if (!socket.writable || !(timedOut || err.code?.startsWith('HPE_'))) {
    socket.destroy();
    return;
  }
  const [status, reason, error] = err.code === 'HPE_HEADER_OVERFLOW'
    ? [431, 'Request Header Fields Too Large', new ApiError(431, 'request_header_fields_too_large', 'The request line or headers are too large (at most 16 kB)')]
    : timedOut
      ? [408, 'Request Timeout', new ApiError(408, 'request_timeout', 'The request did not arrive in time')]
      : [400, 'Bad Request', badRequest('The request could not be parsed as HTTP')];
  const body = JSON.stringify(envelope(error, ''));
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

export async function serve(opts: { port?: number; worker: boolean; config?: Config }): Promise<Running> {
  const config = opts.config ?? loadConfig();
  // A bad EMAIL_TRANSPORT or SMS_TRANSPORT stops the start before anything listens.
  const transports = opts.worker ? createTransports(config) : undefined;
  // So does a bad SVC_SMTP_LISTEN (the optional inbound SMTP listener, src/delivery/smtp_listener.ts).
  const smtpListen = parseSmtpListen(process.env.SVC_SMTP_LISTEN);
  const db = await openDatabase(config);
  await migrate(db.ownerUrl, db.loginPassword);

  const owner = outlivingOutages(new pg.Pool({ connectionString: db.ownerUrl, max: 2 }), 'owner');
  const seeded = await seedIfEmpty(owner);
  await owner.end();
  if (seeded) process.stdout.write(`${describeSeed(seeded, config.baseUrl)}\n`);

  const pool = requestPool(db);
  await pool.query('select 1').catch((e: Error) => {
    throw new Error(`cannot connect as svc_login (${e.message}); set SVC_LOGIN_PASSWORD or allow trust auth for svc_login`);
  });
  const heavy = createHeavyLane(db.loginUrl, config);
  const limiter = config.rateLimit ? new RateLimiter({ limit: config.rateLimit, store: postgresWindowStore(pool) }) : undefined;
  const graphql = await createInternalGraphql({ pool, heavy, config, areas: AREAS });
  const app = createApp({ pool, heavy, config, operations: operationsOf(AREAS), pages: pagesOf(AREAS), limiter, mount: graphql.mount });
  const server = await listen(app, opts.port ?? config.port, config.host);
  const address = server.address();
  const url = typeof address === 'object' && address ? `http://${config.host}:${address.port}` : config.baseUrl;
  const smtp: SmtpListener | undefined = smtpListen ? await startSmtpListener({ pool, ...smtpListen }) : undefined;
  let runner: Runner | undefined;
  if (transports) {
    const worker = await startWorker(db.ownerUrl, transports, config.baseUrl);
    metricsOf(app)?.addPool('worker', worker.pgPool);
    runner = worker;
  }
  log.info({ url, worker: opts.worker }, 'serving');

  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= (async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await smtp?.close();
    await runner?.stop();
    limiter?.stop();
    await limiter?.flush();
    await graphql.release();
    await pool.end();
    await heavy.pool.end();
    await db.stop();
  })());
  return { server, url, stop };
}
