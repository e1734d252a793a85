// db/schema.sql, the schema the migrations leave, in one file to read (and split by area into
// db/schema/<area>.sql, scripts/schema-areas.ts): which migrations it was
// dumped from (a hash in its header, so a test can tell it is stale without a database) and how
// pg_dump's text is made the same across runs and PostgreSQL versions.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { currentMigrationFiles } from '../src/db/migrate.ts';
import { PLATFORM, splitByArea } from './schema-areas.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
export const schemaFile = `${root}db/schema.sql`;
const committedDir = `${root}migrations/committed`;

export interface CommittedMigration { file: string; hash: string }

/** The committed migrations in order, each with the hash graphile-migrate records for it. */
export function committedMigrations(): CommittedMigration[] {
  return readdirSync(committedDir).filter((f) => f.endsWith('.sql')).sort().map((file) => {
    const hash = /^--! Hash: (\S+)$/m.exec(readFileSync(`${committedDir}/${file}`, 'utf8'))?.[1];
    if (!hash) throw new Error(`migrations/committed/${file} has no Hash header`);
    return { file, hash };
  });
}

/**
 * The files of migrations/current/ that hold SQL: after a commit graphile-migrate leaves one
 * with a comment only, which runs nothing.
 */
function currentFiles(): string[] {
  return currentMigrationFiles().filter((f) => readFileSync(f, 'utf8').replace(/^\s*--.*$/gm, '').trim() !== '');
}

/**
 * What a database was migrated from: the committed migrations and, when it ran them too
 * (`withCurrent`), the files of the migration in progress, by name and content.
 */
export function migrationsHash(withCurrent: boolean): string {
  const hash = createHash('sha256');
  const add = (name: string, path: string) => hash.update(`${name}\0`).update(readFileSync(path)).update('\0');
  for (const { file } of committedMigrations()) add(`committed/${file}`, `${committedDir}/${file}`);
  if (withCurrent) for (const f of currentFiles()) add(`current/${basename(f)}`, f);
  return hash.digest('hex');
}

/** The header of db/schema.sql: which migrations, the hash the test recomputes, and where it comes from. */
function header(hash: string, withCurrent: boolean): string {
  const committed = committedMigrations();
  const range = committed.length ? `${committed[0]!.file.slice(0, 6)}–${committed.at(-1)!.file.slice(0, 6)}` : 'none';
  const current = (withCurrent ? currentFiles().map((f) => basename(f)).join(', ') : '') || 'none';
  return [
    `-- The schema that migrations/committed/ (${range}) and migrations/current/ (${current}) leave.`,
    `-- migrations sha256:${hash}`,
    '-- Written by `npm run db:dump` (scripts/dump-db.ts): pg_dump --schema-only, normalized. Do not edit;',
    '-- db/README.md says how to read it and when to write it again.',
  ].join('\n');
}

export function renderSchemaFile(body: string, withCurrent: boolean): string {
  return `${header(migrationsHash(withCurrent), withCurrent)}\n\n${body}`;
}

export const schemaFolder = `${root}db/schema`;

/**
 * db/schema/<area>.sql for each area and the platform, from the body of db/schema.sql: what
 * each file holds, by name. Each begins with a header naming its area and the owner rules.
 */
export function renderAreaFiles(body: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const [area, text] of splitByArea(body)) {
    const what = area === PLATFORM
      ? 'the shared machinery: tenancy, credentials and claims, idempotency, paging, jobs, analysts'
      : `what src/${area}/ stands on`;
    files.set(`${area}.sql`, [
      `-- db/schema/${area}.sql: ${what}.`,
      '-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);',
      '-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.',
      '',
      text || `-- The ${area} area owns no tables or functions of its own: it reads through the platform's.`,
      '',
    ].join('\n'));
  }
  return files;
}

/** Writes db/schema.sql and db/schema/<area>.sql, and removes area files no area writes any more. */
export function writeSchemaFiles(body: string, withCurrent: boolean): void {
  writeFileSync(schemaFile, renderSchemaFile(body, withCurrent));
  const files = renderAreaFiles(body);
  mkdirSync(schemaFolder, { recursive: true });
  for (const f of readdirSync(schemaFolder)) if (f.endsWith('.sql') && !files.has(f)) rmSync(`${schemaFolder}/${f}`);
  for (const [f, text] of files) writeFileSync(`${schemaFolder}/${f}`, text);
}

/** The committed file: the hash its header carries and the dump below the header. */
export function readSchemaFile(): { hash: string | undefined; body: string } {
  const text = readFileSync(schemaFile, 'utf8');
  const split = text.indexOf('\n\n');
  return {
    hash: /^-- migrations sha256:([0-9a-f]{64})$/m.exec(text.slice(0, split))?.[1],
    body: text.slice(split + 2),
  };
}

export type PgDump = { path: string; version: string } | { unusable: string };

/**
 * The pg_dump to use against `url` (PG_DUMP, else pg_dump on the PATH), or why there is none:
 * pg_dump refuses servers of a newer major version than its own.
 */
export async function findPgDump(url: string): Promise<PgDump> {
  const path = process.env.PG_DUMP || 'pg_dump';
  const client = new pg.Client(url);
  await client.connect();
  const server = await client.query<{ v: string }>(`select current_setting('server_version_num') as v`).finally(() => client.end());
  const serverMajor = Math.floor(Number(server.rows[0]!.v) / 10000);
  let version: string;
  try {
    version = (await run(path, ['--version'])).stdout.trim();
  } catch {
    return { unusable: `no ${path} on the PATH (PostgreSQL ${serverMajor} needs pg_dump ${serverMajor} or newer)` };
  }
  const major = Number(/\)\s*(\d+)/.exec(version)?.[1]);
  if (!(major >= serverMajor)) return { unusable: `${version} cannot dump PostgreSQL ${serverMajor}` };
  return { path, version };
}

/** One entry of a plain-text dump: its `-- Name: …; Type: …` comment and statements. */
interface Entry { type: string; schema: string; lines: string[] }

const entryTitle = /^-- Name: .*; Type: (.+); Schema: (.+); Owner: .*$/;

/**
 * Splits pg_dump's text into entries and drops what varies between runs and versions: the
 * preamble (`SET`s, the versions it was dumped from and by, `\restrict` and its random key),
 * the closing lines, the per-table `SET default_…`, statistics (pg_dump 18 can write them).
 */
function entries(dump: string): Entry[] {
  const lines = dump.split('\n');
  const found: Entry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const title = entryTitle.exec(lines[i + 1] ?? '');
    if (lines[i] === '--' && title && lines[i + 2] === '--') {
      found.push({ type: title[1]!, schema: title[2]!, lines: [] });
    } else if (lines[i] === '--' && lines[i + 1] === '-- PostgreSQL database dump complete') {
      break;
    }
    found.at(-1)?.lines.push(lines[i]!);
  }
  for (const e of found) e.lines = e.lines.map((l) => l.trimEnd()).filter((l) => !/^SET [a-z_]+ = [^;]*;$/.test(l));
  return found.filter((e) => e.type !== 'STATISTICS DATA');
}

function text(list: Entry[]): string {
  return list.map((e) => e.lines.join('\n')).join('\n').replace(/\n{3,}/g, '\n\n').trim();
}

/**
 * Our objects, and after them what our migrations grant on graphile-worker's objects and the
 * policies they put on its tables (its own definitions are its business and left out; they
 * belong to whoever installed its schema, so the owner is left out of those titles too).
 */
export function normalize(ours: string, worker: string): string {
  const granted = entries(worker).filter((e) => e.type === 'ACL' || e.type === 'POLICY');
  for (const e of granted) e.lines = e.lines.map((l) => l.replace(/^(-- Name: .*; Owner: ).*$/, '$1-'));
  return [
    text(entries(ours)),
    '--\n-- Our grants on graphile_worker and our policies on its tables: svc_owner adds jobs\n' +
      '-- through graphile_worker.add_job and add_jobs; PUBLIC executes none of its functions.\n--',
    text(granted),
  ].join('\n\n') + '\n';
}

/** The normalized schema-only dump of the database at `url`. */
export async function dumpSchema(url: string, pgDump: string): Promise<string> {
  const dump = (args: string[]) => run(pgDump, ['--schema-only', ...args, `--dbname=${url}`], { maxBuffer: 256 * 1024 * 1024 })
    .then((r) => r.stdout);
  const [ours, worker] = await Promise.all([
    dump(['--exclude-schema=graphile_migrate', '--exclude-schema=graphile_worker']),
    dump(['--schema=graphile_worker']),
  ]);
  return normalize(ours, worker);
}
