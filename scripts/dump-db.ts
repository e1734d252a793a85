// Writes db/schema.sql and, split by area, db/schema/<area>.sql.
//
// `npm run db:dump`: migrates a throwaway database on the server `svc` uses (DATABASE_URL, else
// the embedded one) with the committed migrations and the one in progress, as `npm test` does,
// dumps it and drops it.
//
// As graphile-migrate's afterAllMigrations action (.gmrc; GM_DBURL set): dumps the shadow
// database it has just reset and migrated (`graphile-migrate commit`, `reset --shadow`). That
// database ran the committed migrations only; its dump is written only when it ran exactly the
// committed files here and no migration in progress. When it cannot dump (that, or no usable
// pg_dump) it says why and lets graphile-migrate's command go on; the schema-dump test then
// stays red until `npm run db:dump` is run.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/connect.ts';
import { migrate } from '../src/db/migrate.ts';
import {
  committedMigrations, dumpSchema, findPgDump, migrationsHash, readSchemaFile, schemaFile, writeSchemaFiles,
} from './schema-dump.ts';

async function write(url: string, withCurrent: boolean): Promise<string | undefined> {
  const pgDump = await findPgDump(url);
  if ('unusable' in pgDump) return pgDump.unusable;
  writeSchemaFiles(await dumpSchema(url, pgDump.path), withCurrent);
  console.log(`db/schema.sql and db/schema/<area>.sql written (${pgDump.version})`);
}

/** Why the database graphile-migrate migrated is not the committed migrations alone, if it is not. */
async function notCommittedOnly(url: string): Promise<string | undefined> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    // graphile-migrate records a committed migration by its number and the hash in its header.
    const ran = await client.query<{ hash: string }>(`select hash from graphile_migrate.migrations order by filename`);
    if (ran.rows.map((r) => r.hash).join() !== committedMigrations().map((m) => m.hash).join()) {
      return 'it ran other committed migrations than migrations/committed/ holds';
    }
    const current = await client.query<{ content: string }>(`select content from graphile_migrate.current`);
    if (current.rows.some((r) => r.content.replace(/^--.*$/gm, '').trim())) return 'it also ran a migration in progress';
  } finally {
    await client.end();
  }
}

async function fromAction(url: string): Promise<void> {
  // With work in progress in migrations/current/, a dump of the committed migrations alone
  // would replace a file that `npm run db:dump` made complete.
  if (existsSync(schemaFile) && readSchemaFile().hash === migrationsHash(true)) {
    console.log('db/schema.sql is already the dump of these migrations');
    return;
  }
  const why = (await notCommittedOnly(url)) ?? (await write(url, false));
  if (why) console.error(`db/schema.sql not written from ${new URL(url).pathname.slice(1)}: ${why}; run \`npm run db:dump\``);
}

async function fromScratch(): Promise<void> {
  const db = await openDatabase(loadConfig(process.env));
  const name = `svc_dump_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client(db.ownerUrl);
  await admin.connect();
  let why: string | undefined;
  try {
    await admin.query(`create database ${pg.escapeIdentifier(name)}`);
    const url = new URL(db.ownerUrl);
    url.pathname = `/${name}`;
    try {
      await migrate(url.toString(), undefined, { withCurrent: true });
      why = await write(url.toString(), true);
    } finally {
      // graphile-migrate's pool lingers for 200 ms and ends the process if its connection is
      // terminated under it.
      await sleep(600);
      await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    }
  } finally {
    await admin.end();
    await db.stop();
  }
  if (why) {
    console.error(`db/schema.sql not written: ${why}. Point DATABASE_URL at a PostgreSQL no newer than your pg_dump, or set PG_DUMP.`);
    process.exitCode = 1;
  }
}

if (process.env.GM_DBURL) await fromAction(process.env.GM_DBURL);
else await fromScratch();
