// The service over a fresh database with its access log caught in memory (startApp's app,
// built here because startApp writes to the process's log).
import type { Server } from 'node:http';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { adminApply } from '../../src/admin/commands.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { createApp } from '../../src/http/app.ts';
import { createRequestPool } from '../../src/db/request.ts';
import { AREAS } from '../../src/areas.ts';
import { operationsOf, pagesOf } from '../../src/registry/area.ts';
import { listen } from '../../src/server.ts';
import { createHeavyLane } from '../../src/platform/heavy.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

export interface LoggedApp {
  url: string;
  db: TestDatabase;
  /** The access log's lines so far, parsed. */
  lines: Record<string, unknown>[];
  /** The same lines as written. */
  raw: string[];
  close(): Promise<void>;
}

export async function startLogged(fixture: unknown, env: Record<string, string> = {}, level = 'info')
  : Promise<{ app: LoggedApp; tenant: Applied }> {
  const db = await createTestDatabase();
  const config = loadConfig({ ...process.env, ...env });
  const pool = createRequestPool(db.loginUrl, { max: 4 });
  pool.on('error', () => undefined);
  const heavy = createHeavyLane(db.loginUrl, config);
  const raw: string[] = [];
  const accessLog = pino({ level, base: { service: 'svc' } }, { write: (s: string) => { raw.push(s); } });
  const server: Server = await listen(createApp({ pool, heavy, config, operations: operationsOf(AREAS), pages: pagesOf(AREAS), accessLog }), 0, '127.0.0.1');
  const address = server.address();
  const app: LoggedApp = {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    db,
    raw,
    get lines() { return raw.map((l) => JSON.parse(l) as Record<string, unknown>); },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
      await heavy.pool.end();
      await db.drop();
    },
  };
  return { app, tenant: await adminApply(db.owner, fixture, AREAS) };
}

/** Waits until the access log has `n` lines (a line is written once the answer is sent). */
export async function linesAfter(app: LoggedApp, n: number): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 100 && app.raw.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  return app.lines;
}
