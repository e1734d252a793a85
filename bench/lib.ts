// Shared bench plumbing: a database to load, a measured server in a child process, and the
// load generator.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { openDatabase, loginUrlFor, type Database } from '../src/db/connect.ts';
import { migrate } from '../src/db/migrate.ts';

export interface BenchDb { db: Database; ownerUrl: string; loginUrl: string; owner: pg.Pool }

/** The server the benches use: DATABASE_URL's, or the embedded one on its own port and folder. */
export function benchServer(): Promise<Database> {
  return openDatabase(loadConfig({ ...process.env, SVC_DATA_DIR: process.env.SVC_DATA_DIR || '.data/bench', SVC_EMBEDDED_PORT: '54331' }));
}

/** The owner URL of database `name` on the bench server. */
export function databaseUrl(db: Database, name: string): string {
  const url = new URL(db.ownerUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Drops database `name` if it exists, creates it afresh and migrates it, the migration in progress
 * (migrations/current/) included as the tests apply it; answers its owner URL.
 */
export async function freshDatabase(db: Database, name: string): Promise<string> {
  const admin = new pg.Client(db.ownerUrl);
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const ownerUrl = databaseUrl(db, name);
  await migrate(ownerUrl, db.loginPassword, { withCurrent: true });
  return ownerUrl;
}

/** A fresh `svc_bench` database on the bench server. */
export async function benchDatabase(): Promise<BenchDb> {
  const db = await benchServer();
  const ownerUrl = await freshDatabase(db, 'svc_bench');
  return { db, ownerUrl, loginUrl: loginUrlFor(ownerUrl, db.loginPassword), owner: new pg.Pool({ connectionString: ownerUrl, max: 4 }) };
}

/**
 * Links each contact of organization $1 to one of its locations, chosen by a hash of its id
 * (set-based, for the 1,000,000-contact loads).
 */
export const LINK_LOCATIONS = `
  insert into app_public.contact_locations (organization_id, contact_id, location_id)
  select c.organization_id, c.id, loc.ids[1 + abs(hashtext(c.id::text)) % array_length(loc.ids, 1)]
    from app_public.contacts c
    cross join (select array_agg(id order by name) as ids from app_public.locations where organization_id = $1::uuid) loc
   where c.organization_id = $1::uuid and array_length(loc.ids, 1) > 0`;

export async function startTarget(args: string[], env: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(fileURLToPath(new URL('./target.ts', import.meta.url)), args, {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`target exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

export interface Load { rps: number; p50: number; p99: number; non2xx: number; errors: number; requests: number }

/** The target process's CPU time so far, in microseconds. */
export function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (m: { cpu: NodeJS.CpuUsage }) => resolve(m.cpu.user + m.cpu.system));
    child.send('cpu');
  });
}

export async function load(url: string, opts: { connections: number; seconds: number; headers?: Record<string, string> }): Promise<Load> {
  const r = await autocannon({ url, connections: opts.connections, duration: opts.seconds, headers: opts.headers });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors, requests: r.requests.total };
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/**
 * Replaces one bench's section of bench/RESULTS.md (between `<!-- bench:NAME -->` markers),
 * leaving the other benches' figures as they were.
 */
export function writeSection(name: string, markdown: string): void {
  const file = new URL('./RESULTS.md', import.meta.url);
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '# Bench results\n\nEach section is written by the bench named in it, with the command that produced it.\n';
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  text = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}

/**
 * CPU time so far of every process named `postgres` on this machine (server and backends), in
 * microseconds, from /proc; 0 where /proc is not readable. Meaningful when the measured server
 * is this machine's (DATABASE_URL on localhost, or the embedded one). Backends that have ended
 * count through the postmaster, which reaps them (its children's time), so the sum only grows.
 */
export function postgresCpu(): number {
  let ticks = 0;
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      // utime, stime, and the reaped children's cutime, cstime (fields 14 to 17 of stat)
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // the process ended meanwhile
    }
  }
  return (ticks * 1e6) / 100; // USER_HZ is 100 on Linux
}

/**
 * CPU time so far (µs) of each backend connected to the database `pool` reaches, by pid, from
 * /proc: unlike postgresCpu, blind to the other databases of a shared server. Take the
 * difference of two readings with backendsCpuSince; a backend that ended between them is lost.
 */
export async function backendsCpu(pool: pg.Pool): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database()');
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpu.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100);
    } catch {
      // ended meanwhile
    }
  }
  return cpu;
}

/** The CPU time (µs) the backends of `after` spent since `before` (backendsCpu readings). */
export const backendsCpuSince = (before: Map<number, number>, after: Map<number, number>): number =>
  [...after].reduce((sum, [pid, t]) => sum + t - (before.get(pid) ?? 0), 0);

/** The value at quantile p of ascending `sorted`. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

export interface ClosedLoop { rps: number; p50: number; p95: number; p99: number; count: number; errors: number }

/**
 * Closed loop: `connections` keep-alive connections, each sending its next request (from
 * `next`) as soon as it has the answer to the last, for `seconds`. Latencies are every
 * answer's; answers of 400 and above count as errors.
 */
export async function closedLoop(opts: {
  url: string; key: string; connections: number; seconds: number; method?: string;
  next: () => { path: string; body?: string; headers?: Record<string, string> };
}): Promise<ClosedLoop> {
  const latencies: number[] = [];
  let errors = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({
      url: opts.url,
      connections: opts.connections,
      duration: opts.seconds,
      headers: { authorization: `Bearer ${opts.key}`, 'content-type': 'application/json' },
      requests: [{
        method: (opts.method ?? 'GET') as autocannon.Request['method'],
        setupRequest: (req: autocannon.Request) => {
          const r = opts.next();
          return { ...req, path: r.path, body: r.body, ...(r.headers ? { headers: { ...req.headers, ...r.headers } } : {}) };
        },
      }],
    }, (err, res) => (err ? reject(err) : resolve(res)));
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      latencies.push(ms);
      if (status >= 400) errors++;
    });
  });
  latencies.sort((a, b) => a - b);
  return { rps: result.requests.average, p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95),
    p99: percentile(latencies, 0.99), count: latencies.length, errors: errors + result.errors };
}
