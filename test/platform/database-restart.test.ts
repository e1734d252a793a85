// The API outlives its database restarting: a PostgreSQL of the test's own is stopped (as an
// operator's restart does, then as a crash) under a stream of writes, with the processes as an
// operator runs them (`svc serve --no-worker` beside `svc worker`, and `svc serve` with its
// worker). They stay up, requests meanwhile answer 503 `unavailable` with Retry-After, every
// write answered 2xx is stored, and the API serves again within 10 s of the database, the
// workers' LISTEN included.
// The SMTP listener defers mail (451) meanwhile, so the sending server tries again later.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { replyAddress } from '../../src/delivery/index.ts';
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.ts';
import { startServe } from '../helpers/cli.ts';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long after the database answers again the API must serve (the bound). */
const RECOVERY_MS = 10_000;

interface Stream {
  acknowledged: string[];
  statuses: Map<number, number>;
  /** The answers that were neither 2xx nor 503 unavailable with Retry-After. */
  wrong: string[];
  unavailable: number;
  /** Times (ms since epoch) of each 2xx answer. */
  served: number[];
  stop(): Promise<void>;
}

/** `writers` loops creating contacts until stopped, recording every answer. */
function streamWrites(url: string, key: string, writers = 4): Stream {
  const s: Stream = { acknowledged: [], statuses: new Map(), wrong: [], unavailable: 0, served: [], stop: async () => undefined };
  let running = true;
  let n = 0;
  const loop = async () => {
    while (running) {
      const email = `w${n++}-${Math.random().toString(36).slice(2, 8)}@example.com`;
      let res: Response;
      try {
        res = await fetch(`${url}/api/v1/contacts`, {
          method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email }), signal: AbortSignal.timeout(20_000),
        });
      } catch (e) {
        s.wrong.push(`request failed: ${(e as Error).message} ${(e as { cause?: Error }).cause?.message ?? ''}`);
        await sleep(100);
        continue;
      }
      const text = await res.text();
      s.statuses.set(res.status, (s.statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 200 && res.status < 300) {
        s.acknowledged.push(email);
        s.served.push(Date.now());
      } else if (res.status === 503 && JSON.parse(text).error === 'unavailable' && Number(res.headers.get('retry-after')) > 0) {
        s.unavailable++;
        await sleep(50);
      } else {
        s.wrong.push(`${res.status} ${res.headers.get('retry-after') ?? '-'} ${text.slice(0, 300)}`);
        await sleep(50);
      }
    }
  };
  const loops = Array.from({ length: writers }, loop);
  s.stop = async () => { running = false; await Promise.all(loops); };
  return s;
}

async function waitFor(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

/** Whether `n` workers' LISTEN connections are there, as PostgreSQL sees them. */
async function listening(server: OwnPostgres, n = 2): Promise<boolean> {
  const c = new pg.Client(server.ownerUrl);
  c.on('error', () => undefined);
  await c.connect();
  try {
    const { rows } = await c.query(`select count(*)::int as n from pg_stat_activity where datname = 'svc' and query ilike '%listen%jobs:insert%'`);
    return rows[0].n >= n;
  } finally {
    await c.end();
  }
}

/** The SMTP reply code a message to an unknown reply address gets from the listener at `port`. */
async function smtpAnswer(port: number): Promise<number> {
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    await mailer.sendMail({ from: 'ann@example.com', to: replyAddress(randomUUID(), 'example.com'), subject: 'Re', text: 'Hi' });
    return 250;
  } catch (e) {
    return (e as { responseCode?: number }).responseCode ?? 0;
  } finally {
    mailer.close();
  }
}

interface Api { name: string; url: string; proc: ReturnType<typeof startServe>; worker: boolean }

test('svc serve, with its worker and without, outlives its database restarting under writes', async (t) => {
  const started = Date.now();
  const server = await startOwnPostgres();
  t.log(`own PostgreSQL in ${Date.now() - started} ms`);
  const env = { SVC_LOGIN_PASSWORD: server.loginPassword, SVC_RATE_LIMIT: 'off', SVC_ACCESS_LOG_SAMPLE: '0' };
  const apis: Api[] = [];
  const streams: Stream[] = [];
  let worker: ReturnType<typeof spawn> | undefined;
  let workerOutput = '';
  const launch = async (name: string, args: string[], more: Record<string, string> = {}) => {
    const proc = startServe(server.ownerUrl, { ...env, ...more }, args);
    apis.push({ name, proc, url: '', worker: !args.includes('--no-worker') });
    const { url, output } = await proc.ready;
    apis.at(-1)!.url = url;
    return output;
  };
  try {
    // the first seeds the demo organization and prints its keys; both serve the same database
    const first = await launch('svc serve --no-worker', ['--no-worker'], { SVC_SMTP_LISTEN: '127.0.0.1:0' });
    const key = /svc_sk_[A-Za-z0-9]{32}/.exec(first)![0];
    const smtpPort = Number(/"port":(\d+)[^\n]*"msg":"SMTP listener started"/.exec(first)![1]);
    t.is(await smtpAnswer(smtpPort), 550, 'an unknown reply address is refused for good');
    await launch('svc serve', []);
    // and `svc worker` alone, as an operator runs it beside the API
    worker = spawn(process.execPath, [fileURLToPath(new URL('../../bin/svc.js', import.meta.url)), 'worker'], {
      env: { ...process.env, ...env, DATABASE_URL: server.ownerUrl, LOG_LEVEL: 'warn', NODE_ENV: 'production' },
    });
    worker.stdout!.on('data', (d) => { workerOutput += d; });
    worker.stderr!.on('data', (d) => { workerOutput += d; });
    await waitFor('both workers listen', () => listening(server), 30_000);

    for (const mode of ['fast', 'immediate'] as const) {
      const writes = apis.map((api) => streamWrites(api.url, key, 2));
      streams.push(...writes);
      await waitFor('writes are served', async () => writes.every((w) => w.acknowledged.length >= 3), 20_000);
      await server.stopServer(mode);
      await sleep(2_500);
      for (const [i, api] of apis.entries()) {
        t.is(api.proc.child.exitCode, null, `${api.name} is alive while the database is away (${mode})\n${api.proc.output().slice(-3000)}`);
        t.is((await fetch(`${api.url}/healthz`)).status, 200);
        t.is((await fetch(`${api.url}/readyz`)).status, 503);
        t.true(writes[i]!.unavailable > 0, `${api.name}: 503 unavailable with Retry-After while the database is away`);
      }
      t.is(await smtpAnswer(smtpPort), 451, `the SMTP listener defers mail while the database is away (${mode})`);
      await server.startServer();
      const back = Date.now();
      for (const [i, api] of apis.entries()) {
        await waitFor(`${api.name} serves writes again after a ${mode} restart`, async () => writes[i]!.served.some((at) => at > back), RECOVERY_MS);
        t.log(`${api.name}, ${mode}: serving ${writes[i]!.served.find((at) => at > back)! - back} ms after the database was back; `
          + `answers ${JSON.stringify([...writes[i]!.statuses])}`);
      }
      await sleep(300);
      await Promise.all(writes.map((w) => w.stop()));
      t.is(await smtpAnswer(smtpPort), 550, `the SMTP listener answers from the database again (${mode})`);
      const owner = new pg.Client(server.ownerUrl);
      await owner.connect();
      try {
        for (const [i, api] of apis.entries()) {
          t.is(api.proc.child.exitCode, null, `${api.name} is alive after the ${mode} restart`);
          t.deepEqual(writes[i]!.wrong, [], `${api.name}: every answer was 2xx or 503 unavailable (${mode})`);
          const { rows } = await owner.query('select email from app_public.contacts where email = any($1)', [writes[i]!.acknowledged]);
          t.is(rows.length, writes[i]!.acknowledged.length, `${api.name}: every acknowledged write is stored (${mode})`);
        }
      } finally {
        await owner.end();
      }
      t.is(worker!.exitCode, null, `svc worker is alive after the ${mode} restart\n${workerOutput.slice(-3000)}`);
      await waitFor(`both workers listen again after a ${mode} restart`, () => listening(server), RECOVERY_MS);
    }
    for (const api of apis) {
      api.proc.child.kill('SIGTERM');
      t.is(await api.proc.exited, 0, api.proc.output().slice(-3000));
    }
  } finally {
    await Promise.all(streams.map((s) => s.stop()));
    for (const api of apis) if (api.proc.child.exitCode === null) api.proc.child.kill('SIGKILL');
    if (worker && worker.exitCode === null) worker.kill('SIGKILL');
    await server.destroy();
  }
});
