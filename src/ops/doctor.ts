// `svc doctor`: checks what the service needs from its surroundings and says what is wrong,
// one line each: the settings, the database (version, extensions, migrations, roles, the
// svc_login connection), the email and SMS transports (reachable, and for SMTP answering
// EHLO and accepting the credentials), and the base URL. It changes nothing.
import { readdirSync, readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { loadConfig, type Config } from '../config.ts';
import { openDatabase, type Database } from '../db/connect.ts';
import { keepAlive } from '../db/outage.ts';
import { createTransports } from '../delivery/index.ts';
import { parseTwilioSetting } from '../delivery/twilio.ts';

export interface Finding {
  check: string;
  ok: boolean;
  /** What was found, or what is wrong and what to do. */
  detail: string;
}

/** The oldest PostgreSQL the migrations are written for. */
export const MIN_SERVER_VERSION = 150000;

/** The roles the migrations create (svc_owner owns, svc_login connects, the rest are set per transaction). */
export const ROLES = ['svc_owner', 'svc_login', 'svc_request', 'svc_worker', 'svc_analyst'] as const;

/** How long a transport may take to answer before it counts as unreachable. */
const TRANSPORT_TIMEOUT_MS = 5_000;

const migrationsFolder = fileURLToPath(new URL('../../migrations/committed', import.meta.url));

interface Committed { number: string; file: string; hash: string | undefined }

function committedMigrations(): { migrations: Committed[]; extensions: string[] } {
  const extensions = new Set<string>();
  const migrations = readdirSync(migrationsFolder).filter((f) => /^\d+.*\.sql$/.test(f)).sort().map((file) => {
    const text = readFileSync(`${migrationsFolder}/${file}`, 'utf8');
    for (const m of text.matchAll(/create extension if not exists (\w+)/gi)) extensions.add(m[1]!.toLowerCase());
    return { number: file.match(/^\d+/)![0], file, hash: text.match(/^--! Hash: (\S+)/m)?.[1] };
  });
  return { migrations, extensions: [...extensions].sort() };
}

const ok = (check: string, detail: string): Finding => ({ check, ok: true, detail });
const bad = (check: string, detail: string): Finding => ({ check, ok: false, detail });
const reason = (e: unknown) => String((e as Error)?.message ?? e).split('\n')[0] ?? '';

export async function doctor(env: NodeJS.ProcessEnv = process.env): Promise<Finding[]> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (e) {
    return [bad('settings', reason(e))];
  }
  const findings: Finding[] = [ok('settings', 'every setting parses')];
  findings.push(baseUrlFinding(env, config));
  findings.push(...await transportFindings(config));
  findings.push(...await databaseFindings(config));
  return findings;
}

function baseUrlFinding(env: NodeJS.ProcessEnv, config: Config): Finding {
  const raw = env.SVC_BASE_URL;
  if (!raw) return bad('base URL', `SVC_BASE_URL is not set: links in messages, OAuth metadata and the OpenAPI servers name ${config.baseUrl}`);
  if (!URL.canParse(raw)) return bad('base URL', `SVC_BASE_URL is not a URL: "${raw}"`);
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return bad('base URL', `SVC_BASE_URL must be http:// or https://, got ${url.protocol}`);
  if (url.username || url.password || url.search || url.hash) return bad('base URL', 'SVC_BASE_URL must carry no credentials, query or fragment');
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol === 'http:' && !loopback) return bad('base URL', `SVC_BASE_URL is plain http on a public name (${url.host}): OAuth clients and browsers expect https`);
  return ok('base URL', url.origin + url.pathname.replace(/\/+$/, ''));
}

/** Whether a TCP connection to host:port opens within the timeout. */
function reachable(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port, timeout: TRANSPORT_TIMEOUT_MS });
    const done = (problem: string | undefined) => { socket.destroy(); resolve(problem); };
    socket.once('connect', () => done(undefined));
    socket.once('timeout', () => done(`no answer from ${host}:${port} within ${TRANSPORT_TIMEOUT_MS / 1000} s`));
    socket.once('error', (e) => done(`${host}:${port}: ${reason(e)}`));
  });
}

const defaultPort = (url: URL) => Number(url.port) || (url.protocol === 'https:' ? 443 : url.protocol === 'smtps:' ? 465 : url.protocol === 'smtp:' ? 587 : 80);

async function transportFindings(config: Config): Promise<Finding[]> {
  try {
    createTransports(config);
  } catch (e) {
    return [bad('transports', reason(e))];
  }
  const out: Finding[] = [];
  if (config.emailTransport === 'sink') {
    out.push(ok('email transport', 'sink (messages stay in the outbox table; nothing is sent)'));
  } else {
    const url = new URL(config.emailTransport);
    const mailer = nodemailer.createTransport({ url: config.emailTransport, connectionTimeout: TRANSPORT_TIMEOUT_MS,
      greetingTimeout: TRANSPORT_TIMEOUT_MS, socketTimeout: TRANSPORT_TIMEOUT_MS });
    try {
      await mailer.verify();
      out.push(ok('email transport', `SMTP server at ${url.hostname}:${defaultPort(url)} answers${url.username ? ' and accepts the credentials' : ''}`));
    } catch (e) {
      out.push(bad('email transport', `SMTP server at ${url.hostname}:${defaultPort(url)}: ${reason(e)}`));
    } finally {
      mailer.close();
    }
  }
  if (config.smsTransport === 'sink') {
    out.push(ok('sms transport', 'sink (messages stay in the outbox table; nothing is sent)'));
  } else {
    const twilio = parseTwilioSetting(config.smsTransport);
    const url = new URL(twilio ? twilio.apiBase : config.smsTransport);
    const problem = await reachable(url.hostname.replace(/^\[|\]$/g, ''), defaultPort(url));
    out.push(problem ? bad('sms transport', `SMS provider unreachable: ${problem}`) : ok('sms transport', `SMS provider at ${url.host} reachable`));
  }
  return out;
}

async function databaseFindings(config: Config): Promise<Finding[]> {
  let db: Database;
  try {
    db = await openDatabase(config);
  } catch (e) {
    return [bad('database', `cannot start or find the database: ${reason(e)}`)];
  }
  const owner = keepAlive(new pg.Client({ connectionString: db.ownerUrl, connectionTimeoutMillis: TRANSPORT_TIMEOUT_MS }), 'doctor');
  try {
    try {
      await owner.connect();
    } catch (e) {
      return [bad('database', `cannot connect with DATABASE_URL: ${reason(e)}`)];
    }
    return [
      ...await versionAndExtensions(owner),
      ...await migrationFindings(owner),
      ...await roleFindings(owner),
      await loginFinding(db.loginUrl),
    ];
  } finally {
    await owner.end().catch(() => undefined);
    await db.stop();
  }
}

async function versionAndExtensions(owner: pg.Client): Promise<Finding[]> {
  const { rows: [v] } = await owner.query(`select current_setting('server_version_num')::int as num, current_setting('server_version') as version`);
  const out = [v.num >= MIN_SERVER_VERSION
    ? ok('database version', `PostgreSQL ${v.version}`)
    : bad('database version', `PostgreSQL ${v.version} is older than 15, which the migrations need`)];
  const { extensions } = committedMigrations();
  const { rows } = await owner.query(
    `select a.name, e.extname is not null as installed from pg_available_extensions a left join pg_extension e on e.extname = a.name where a.name = any($1)`,
    [extensions]);
  const found = new Map(rows.map((r) => [r.name as string, r.installed as boolean]));
  for (const name of extensions) {
    if (!found.has(name)) out.push(bad('extension', `${name} is not available on this server (install PostgreSQL's contrib package)`));
    else if (!found.get(name)) out.push(bad('extension', `${name} is available but not installed (svc migrate installs it)`));
  }
  if (out.length === 1) out.push(ok('extensions', extensions.join(', ')));
  return out;
}

async function migrationFindings(owner: pg.Client): Promise<Finding[]> {
  const { migrations } = committedMigrations();
  const { rows: [present] } = await owner.query(
    `select to_regclass('graphile_migrate.migrations') is not null as migrate, to_regclass('graphile_worker.migrations') is not null as worker`);
  if (!present.migrate) return [bad('migrations', `none applied (${migrations.length} committed): run svc migrate`)];
  const { rows } = await owner.query(`select filename, hash from graphile_migrate.migrations`);
  const applied = new Map(rows.map((r) => [String(r.filename).match(/^\d+/)?.[0] ?? r.filename, r.hash as string]));
  const out: Finding[] = [];
  for (const m of migrations) {
    const hash = applied.get(m.number);
    if (hash === undefined) out.push(bad('migrations', `${m.file} is not applied: run svc migrate`));
    else if (m.hash && hash !== m.hash) out.push(bad('migrations', `${m.file} differs from the one applied (${hash}, file ${m.hash})`));
    applied.delete(m.number);
  }
  for (const number of applied.keys()) out.push(bad('migrations', `migration ${number} is applied but not in migrations/committed: the database is newer than this code`));
  if (!present.worker) out.push(bad('migrations', 'graphile-worker\'s schema is missing: run svc migrate'));
  if (!out.length) out.push(ok('migrations', `${migrations.length} committed, all applied`));
  return out;
}

async function roleFindings(owner: pg.Client): Promise<Finding[]> {
  const { rows } = await owner.query(`select rolname, rolcanlogin from pg_roles where rolname = any($1)`, [ROLES]);
  const found = new Map(rows.map((r) => [r.rolname as string, r.rolcanlogin as boolean]));
  const out: Finding[] = ROLES.filter((r) => !found.has(r)).map((r) => bad('roles', `role ${r} is missing: run svc migrate`));
  if (found.has('svc_login') && !found.get('svc_login')) out.push(bad('roles', 'svc_login cannot log in: run svc migrate'));
  if (!out.length) out.push(ok('roles', ROLES.join(', ')));
  return out;
}

async function loginFinding(loginUrl: string): Promise<Finding> {
  const login = keepAlive(new pg.Client({ connectionString: loginUrl, connectionTimeoutMillis: TRANSPORT_TIMEOUT_MS }), 'doctor');
  try {
    await login.connect();
    await login.query('select 1');
    return ok('svc_login', 'the request pool\'s role connects');
  } catch (e) {
    return bad('svc_login', `cannot connect as svc_login (${reason(e)}): set SVC_LOGIN_PASSWORD, or allow trust auth for svc_login`);
  } finally {
    await login.end().catch(() => undefined);
  }
}

/** The findings as the command prints them: one line each, problems marked. */
export const formatFinding = (f: Finding): string => `${f.ok ? 'ok     ' : 'PROBLEM'} ${f.check}: ${f.detail}`;
