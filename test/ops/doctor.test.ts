// `svc doctor` as an operator runs it: all good on a freshly migrated database with reachable
// transports and a base URL (exit 0); one line per problem otherwise (exit 1): a migration not
// applied or changed, an unmigrated database, an unreachable SMTP server or SMS provider, a
// refused SMTP login, a bad base URL or setting, a database it cannot reach.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import { SMTPServer } from 'smtp-server';
import pg from 'pg';
import { svc } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let smtp: SMTPServer;
let smtpPort: number;
let sms: Server;
let smsPort: number;
test.before(async () => {
  smtp = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false, allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'svc' && auth.password === 'right') return callback(null, { user: 'svc' });
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpPort = (smtp.server.address() as { port: number }).port;
  sms = createServer((_req, res) => { res.end('{}'); });
  await new Promise<void>((resolve) => sms.listen(0, '127.0.0.1', () => resolve()));
  smsPort = (sms.address() as { port: number }).port;
});
test.after.always(async () => {
  await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  await new Promise<void>((resolve) => sms?.close(() => resolve()));
});

const goodEnv = () => ({
  SVC_BASE_URL: 'https://crm.example.com',
  EMAIL_TRANSPORT: `smtp://svc:right@127.0.0.1:${smtpPort}`,
  SMS_TRANSPORT: `http://127.0.0.1:${smsPort}/send`,
});
const lines = (out: string) => out.trim().split('\n').filter(Boolean);

async function withDatabase(fn: (db: TestDatabase) => Promise<void>): Promise<void> {
  const db = await createTestDatabase();
  try {
    await fn(db);
  } finally {
    await db.drop();
  }
}

test('a freshly migrated database with reachable transports and a base URL: all good, exit 0', async (t) => {
  await withDatabase(async (db) => {
    const r = await svc(['doctor'], { databaseUrl: db.ownerUrl, env: goodEnv() });
    t.is(r.code, 0, r.stdout + r.stderr);
    t.regex(r.stdout, /^svc doctor: all \d+ checks passed\n$/);
    const all = await svc(['doctor', '--all'], { databaseUrl: db.ownerUrl, env: goodEnv() });
    t.is(all.code, 0);
    const checks = lines(all.stdout).slice(0, -1);
    t.true(checks.every((l) => l.startsWith('ok ')), all.stdout);
    for (const check of ['settings', 'base URL', 'email transport', 'sms transport', 'database version', 'extensions', 'migrations', 'roles', 'svc_login']) {
      t.true(checks.some((l) => l.includes(` ${check}: `)), check);
    }
    t.true(checks.some((l) => /extensions: .*pg_trgm/.test(l)));
    // the SMTP password is never printed
    t.false(all.stdout.includes('right'));
  });
});

test('a missing and a changed migration, an unreachable SMTP server and a plain-http base URL: one line each, exit 1', async (t) => {
  await withDatabase(async (db) => {
    await db.owner.query(`delete from graphile_migrate.migrations where filename = (select max(filename) from graphile_migrate.migrations)`);
    // the last one still applied (no later one refers to its hash)
    const { rows: [last] } = await db.owner.query(`update graphile_migrate.migrations set hash = 'sha1:0000'
      where filename = (select max(filename) from graphile_migrate.migrations) returning filename`);
    const changed = String(last.filename).slice(0, 6);
    const r = await svc(['doctor'], {
      databaseUrl: db.ownerUrl,
      env: { ...goodEnv(), EMAIL_TRANSPORT: 'smtp://127.0.0.1:1', SVC_BASE_URL: 'http://crm.example.com' },
    });
    t.is(r.code, 1);
    const out = lines(r.stdout);
    t.true(out.every((l) => l.startsWith('PROBLEM ')), r.stdout);
    t.is(out.length, 4, r.stdout);
    t.true(out.some((l) => /^PROBLEM migrations: 0000\d\d-.*\.sql is not applied: run svc migrate$/.test(l)), r.stdout);
    t.true(out.some((l) => new RegExp(`^PROBLEM migrations: ${changed}-.*\\.sql differs from the one applied \\(sha1:0000, file sha1:`).test(l)), r.stdout);
    t.true(out.some((l) => /^PROBLEM email transport: SMTP server at 127\.0\.0\.1:1: .*ECONNREFUSED/.test(l)), r.stdout);
    t.true(out.some((l) => /^PROBLEM base URL: SVC_BASE_URL is plain http on a public name/.test(l)), r.stdout);
  });
});

test('a refused SMTP login and an unreachable SMS provider are problems; an unset base URL too', async (t) => {
  await withDatabase(async (db) => {
    const env: Record<string, string> = { ...goodEnv(), EMAIL_TRANSPORT: `smtp://svc:wrong@127.0.0.1:${smtpPort}`, SMS_TRANSPORT: 'https://127.0.0.1:1/send', SVC_BASE_URL: '' };
    const r = await svc(['doctor'], { databaseUrl: db.ownerUrl, env });
    t.is(r.code, 1);
    const out = lines(r.stdout);
    t.is(out.length, 3, r.stdout);
    t.regex(out.find((l) => l.includes('email transport')) ?? '', /535|Invalid/);
    t.regex(out.find((l) => l.includes('sms transport')) ?? '', /unreachable: 127\.0\.0\.1:1/);
    t.regex(out.find((l) => l.includes('base URL')) ?? '', /SVC_BASE_URL is not set/);
    t.false(r.stdout.includes('wrong'));
  });
});

test('an empty database: no migrations, no extensions, exit 1', async (t) => {
  const admin = new pg.Client(process.env.SVC_TEST_OWNER_URL);
  await admin.connect();
  const name = `svc_doctor_empty_${process.pid}`;
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  try {
    const url = new URL(process.env.SVC_TEST_OWNER_URL!);
    url.pathname = `/${name}`;
    const r = await svc(['doctor'], { databaseUrl: url.toString(), env: goodEnv() });
    t.is(r.code, 1);
    t.regex(r.stdout, /^PROBLEM migrations: none applied \(\d+ committed\): run svc migrate$/m);
    t.regex(r.stdout, /^PROBLEM extension: pg_trgm is available but not installed/m);
  } finally {
    await admin.query(`drop database if exists ${name}`);
    await admin.end();
  }
});

test('a database it cannot reach, and a setting that does not parse, are one line each', async (t) => {
  const down = await svc(['doctor'], { databaseUrl: 'postgres://postgres@127.0.0.1:1/postgres', env: goodEnv() });
  t.is(down.code, 1);
  t.deepEqual(lines(down.stdout), [lines(down.stdout).find((l) => l.startsWith('PROBLEM database: cannot connect with DATABASE_URL'))]);
  const badSetting = await svc(['doctor'], { databaseUrl: 'postgres://postgres@127.0.0.1:1/postgres', env: { ...goodEnv(), SMS_TRANSPORT: 'ftp://x' } });
  t.is(badSetting.code, 1);
  t.regex(badSetting.stdout, /^PROBLEM transports: SMS_TRANSPORT must be/m);
  const badPort = await svc(['doctor'], { env: { PORT: 'many' } });
  t.is(badPort.code, 1);
  t.is(badPort.stdout, 'PROBLEM settings: PORT must be a positive integer, got "many"\n');
});
