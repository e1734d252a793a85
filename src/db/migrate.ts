// Applies graphile-migrate's committed migrations (idempotent; concurrent runs serialize on
// graphile-migrate's advisory lock), then gives svc_login its password when one is known.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { migrate as gmMigrate, watch as gmWatch, Logger } from 'graphile-migrate';
import { runMigrations as workerMigrations, Logger as WorkerLogger } from 'graphile-worker';
import pg from 'pg';
import { literal } from './sql.ts';
import { keepAlive } from './outage.ts';
import { log } from '../log.ts';

const migrationsFolder = fileURLToPath(new URL('../../migrations', import.meta.url));

const logger = new Logger((scope) => (level, message) => {
  if (level === 'error') log.error({ scope }, message);
  else log.debug({ scope }, message);
});

const committedCount = () => readdirSync(`${migrationsFolder}/committed`).filter((f) => f.endsWith('.sql')).length;

/** Whether every committed migration has run (a cheap check before taking the lock). */
async function upToDate(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query(`select to_regclass('graphile_migrate.migrations') is not null as present`);
  if (!rows[0].present) return false;
  const { rows: [done] } = await client.query(`select count(*)::int as n from graphile_migrate.migrations`);
  return done.n === committedCount();
}

const workerLogger = new WorkerLogger((scope) => (level, message) => {
  if (level === 'error') log.error({ scope }, message);
  else log.debug({ scope }, message);
});

/** SQL files of the migration in progress (migrations/current/), in the order they apply. */
export function currentMigrationFiles(): string[] {
  const dir = `${migrationsFolder}/current`;
  return readdirSync(dir).filter((f) => /^\d+(-[\w-]*)?\.sql$/.test(f)).sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
    .map((f) => `${dir}/${f}`);
}

/**
 * Brings a database up to date: committed migrations, then (`withCurrent`, for tests and
 * development only) the migration in progress, as `graphile-migrate watch --once` runs it.
 */
export async function migrate(ownerUrl: string, loginPassword?: string, opts: { withCurrent?: boolean } = {}): Promise<void> {
  const check = keepAlive(new pg.Client(ownerUrl), 'migrate');
  await check.connect();
  const current = await upToDate(check).finally(() => check.end());
  // graphile-migrate refuses, rather than waits, while another process holds its lock.
  for (let attempt = 0; !current; attempt++) {
    try {
      // graphile-worker's schema first: our migrations grant on it.
      await workerMigrations({ connectionString: ownerUrl, logger: workerLogger });
      await gmMigrate({ connectionString: ownerUrl, migrationsFolder, logger });
      break;
    } catch (e) {
      if (!/exclusive lock/.test((e as Error).message) || attempt >= 100) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  if (opts.withCurrent && currentMigrationFiles().length) {
    await gmWatch({ connectionString: ownerUrl, migrationsFolder, logger }, true);
  }
  if (loginPassword) await setLoginPassword(ownerUrl, loginPassword);
}

/** Gives svc_login its password (ours: generated for the embedded server, or SVC_LOGIN_PASSWORD). */
export async function setLoginPassword(ownerUrl: string, password: string): Promise<void> {
  const client = keepAlive(new pg.Client(ownerUrl), 'migrate');
  await client.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        // ALTER ROLE takes no bind parameters; the password is ours (generated or from the
        // operator's environment) and goes through the driver's literal escaping.
        await client.query(`alter role svc_login with login password ${literal(password)}`);
        return;
      } catch (e) {
        // Processes starting together (operator commands, a server and a worker, on any database
        // of the cluster) may set it at the same moment; PostgreSQL refuses the second change of
        // the role while the first commits. The role is the cluster's, so no advisory lock
        // (one per database) would order them: the loser tries again.
        // With many starting at once (a test suite's processes on a busy machine) ten tries
        // were not always enough: thirty, spread by a random part so the losers do not meet again.
        if (!/tuple concurrently updated/.test((e as Error).message) || attempt >= 30) throw e;
        await new Promise((r) => setTimeout(r, 20 * Math.min(attempt, 10) + Math.random() * 50));
      }
    }
  } finally {
    await client.end();
  }
}
