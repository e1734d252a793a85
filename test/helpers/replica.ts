// A real streaming replica for the analysts' suite and bench: a primary PostgreSQL of its own
// (test/helpers/own-postgres.ts), migrated like the test template, and a hot standby streaming
// from it through a physical replication slot. Its own pair, not a standby of the shared test
// server: a base backup copies the whole cluster (every test file's database), and that server's
// pg_hba.conf need admit no replication connection. With pg_basebackup (system packages) the
// standby is made by it; the embedded package has none, so the base backup is the low-level one:
// pg_backup_start, a copy of the data folder, pg_backup_stop's backup_label.
import { appendFileSync, chmodSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { chownTree, findPostgresBinaries, freePort, runTool, startOwnPostgres, type PostgresBinaries } from './own-postgres.ts';

export { embeddedBinaries, findPostgresBinaries, type PostgresBinaries } from './own-postgres.ts';

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
  const primary = await startOwnPostgres({ binaries, replication: true });
  const { user, root } = primary;
  const primaryDir = primary.dataDir;
  const standbyDir = join(root, 'standby');
  const standbyPort = await freePort();
  const tool = (name: string) => join(binaries.bin, name);
  let standbyStarted = false;
  const stop = async () => {
    if (standbyStarted) await runTool(tool('pg_ctl'), ['-D', standbyDir, '-m', 'immediate', 'stop'], user).catch(() => undefined);
    await primary.destroy();
  };
  try {
    const primaryPort = primary.port;
    const base = primary.base;
    const admin = new pg.Client(`${base}/postgres`);
    await admin.connect();
    let backup: ReplicaPair['backup'];
    try {
      await admin.query(`select pg_create_physical_replication_slot('standby', true)`);
      if (binaries.basebackup) {
        backup = 'pg_basebackup';
        await runTool(tool('pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standbyDir,
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
    await runTool(tool('pg_ctl'), ['-D', standbyDir, '-l', join(root, 'standby.log'), '-w', '-t', '120', 'start'], user);
    standbyStarted = true;

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
