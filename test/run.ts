// `npm test`: finds PostgreSQL (DATABASE_URL, else an embedded server under .data/test),
// migrates one template database (committed migrations, then the one in progress), then
// runs ava; each test file clones the template.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/connect.ts';
import { currentMigrationFiles, migrate } from '../src/db/migrate.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const config = loadConfig({
  ...process.env,
  SVC_DATA_DIR: process.env.SVC_DATA_DIR || `${root}/.data/test`,
  SVC_EMBEDDED_PORT: process.env.SVC_EMBEDDED_PORT || '54330',
});
const db = await openDatabase(config);

// The template's name carries a hash of the migrations, so a changed schema gets a new one.
const folder = `${root}/migrations/committed`;
const hash = createHash('sha256');
for (const f of readdirSync(folder).sort()) hash.update(readFileSync(`${folder}/${f}`));
// the migration in progress (migrations/current/) is part of what the tests run against
for (const f of currentMigrationFiles()) hash.update(f).update(readFileSync(f));
const template = `svc_test_tpl_${hash.digest('hex').slice(0, 12)}`;

const adminUrl = new URL(db.ownerUrl);
const admin = new pg.Client({ connectionString: db.ownerUrl });
await admin.connect();
// Test databases carry their creation time (svc_t_<epoch seconds>_<random>); each file drops
// its own, and what a killed run left behind is dropped here once it is an hour old. Another
// run's template is left alone unless this is CI (one run on a fresh machine).
const { rows: stale } = await admin.query(
  `select datname from pg_database
    where (datname ~ '^svc_t_[0-9]+_' and split_part(datname, '_', 3)::bigint < extract(epoch from now()) - 3600)
       or ($2 and datname like 'svc\\_test\\_tpl\\_%' and datname <> $1)`, [template, Boolean(process.env.CI)]);
for (const { datname } of stale) {
  await admin.query(`alter database ${pg.escapeIdentifier(datname)} is_template false`);
  await admin.query(`drop database if exists ${pg.escapeIdentifier(datname)} with (force)`);
}
const { rowCount } = await admin.query(`select 1 from pg_database where datname = $1`, [template]);
if (!rowCount) {
  await admin.query(`create database ${pg.escapeIdentifier(template)}`);
  adminUrl.pathname = `/${template}`;
  await migrate(adminUrl.toString(), db.loginPassword, { withCurrent: true });
  await admin.query(`alter database ${pg.escapeIdentifier(template)} with is_template true allow_connections false`);
}
await admin.end();

// Suites named *.alone.test.ts compare timings (a ratio measured in one run): they run after
// the others, one file at a time, so that other suites do not load the machine meanwhile.
// Explicit file arguments run as given.
const args = process.argv.slice(2);
const fileArgs = args.filter((a) => a.endsWith('.ts'));
const options = args.filter((a) => !a.endsWith('.ts'));
const testFiles = (readdirSync(`${root}/test`, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`).sort();
const passes = fileArgs.length ? [fileArgs] : [
  testFiles.filter((f) => !f.endsWith('.alone.test.ts')),
  ...testFiles.filter((f) => f.endsWith('.alone.test.ts')).map((f) => [f]),
];

function runAva(files: string[]): Promise<number> {
  const ava = spawn(process.execPath, [`${root}/node_modules/ava/entrypoints/cli.mjs`, ...options, ...files], {
    stdio: 'inherit',
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      SVC_TEST_OWNER_URL: db.ownerUrl,
      SVC_TEST_TEMPLATE: template,
      ...(db.loginPassword ? { SVC_LOGIN_PASSWORD: db.loginPassword } : {}),
    },
  });
  return new Promise((resolve) => ava.on('exit', (c) => resolve(c ?? 1)));
}

let code = 0;
for (const files of passes) code = (await runAva(files)) || code;
await db.stop();
process.exit(code);
