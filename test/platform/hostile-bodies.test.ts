// No request ends the process, whatever its body: every route of every router (the registry's
// REST operations, the MCP endpoint, internal GraphQL, every area's public pages: /oauth/*,
// /dashboard/*, /forms/*, /webhooks/*, /chat/*, and the unmatched) gets, many times, a body over
// its limit (declared, and chunked), a body shorter than its Content-Length followed by the end
// of the connection, and a body cut off mid-stream (closed, and reset). After each, the process
// is alive and answers a health request. `svc serve` runs as a child process, as an operator
// runs it, with the access log on: a hook that throws ends that process, not this test's. At the
// end it must stop on SIGTERM within 15 s: a cut-short body left no connection open.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { createTestDatabase } from '../helpers/db.ts';
import { startServe } from '../helpers/cli.ts';
import { AREAS } from '../../src/areas.ts';
import { operationsOf, pagesOf } from '../../src/registry/area.ts';
import { MCP_PATH } from '../../src/mcp/endpoint.ts';
import { INTERNAL_GRAPHQL_PATH } from '../../src/graphql/internal.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Rounds of the kinds below per route. */
const ROUNDS = 2;
/** Requests in flight at once. */
const LANES = 6;
/** Over the largest body any route takes (the registry's 1 MB). */
const OVER = 1_100_000;
const CHUNK = Buffer.alloc(16_384, 'x');

type Kind = 'oversized-declared' | 'oversized-chunked' | 'truncated' | 'aborted' | 'reset';
const KINDS: Kind[] = ['oversized-declared', 'oversized-chunked', 'truncated', 'aborted', 'reset'];
const CONTENT_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x'];

/** Every route the app serves, with its parameters filled in. */
function routes(): { method: string; path: string }[] {
  const fill = (path: string) => path.replace(/\{\w+\}|:\w+/g, () => randomUUID());
  const all = [
    ...operationsOf(AREAS).map((op) => ({ method: op.method, path: fill(op.path) })),
    ...pagesOf(AREAS).map((page) => ({ method: page.method, path: fill(page.path) })),
    { method: 'POST', path: MCP_PATH }, { method: 'GET', path: MCP_PATH },
    { method: 'POST', path: INTERNAL_GRAPHQL_PATH }, { method: 'GET', path: INTERNAL_GRAPHQL_PATH },
    { method: 'GET', path: '/healthz' }, { method: 'GET', path: '/readyz' }, { method: 'GET', path: '/api/v1/docs-json' },
    { method: 'POST', path: '/no/such/route' },
  ];
  return all;
}

/** Writes; resolves once the data is handed over, the socket is closed, or the server stopped reading (after 500 ms). */
const written = (socket: Socket, data: string | Buffer) => new Promise<void>((resolve) => {
  if (socket.destroyed) return resolve();
  if (socket.write(data)) return resolve();
  const timer = setTimeout(done, 500);
  function done() {
    clearTimeout(timer);
    socket.off('drain', done).off('close', done);
    resolve();
  }
  socket.once('drain', done).once('close', done);
});

/** Sends one hostile request; resolves once the connection is over (answered, closed or cut). */
async function hostile(port: number, method: string, path: string, kind: Kind, contentType: string, key?: string): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  // whatever the server does, the request is over after 5 s
  const deadline = setTimeout(() => socket.destroy(), 5_000);
  let answered = false;
  socket.on('data', () => { answered = true; });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', resolve).once('close', resolve));
  const length = kind === 'oversized-declared' ? `Content-Length: ${OVER}`
    : kind === 'truncated' ? 'Content-Length: 80000' : 'Transfer-Encoding: chunked';
  await written(socket, `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${contentType}\r\n`
    + `${key ? `Authorization: Bearer ${key}\r\n` : ''}Origin: http://127.0.0.1:${port}\r\n${length}\r\nConnection: close\r\n\r\n`);
  const chunked = length.startsWith('Transfer');
  const send = (bytes: Buffer) => written(socket, chunked ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]) : bytes);
  if (kind === 'oversized-declared' || kind === 'oversized-chunked') {
    for (let sent = 0; sent < OVER && !answered && !socket.destroyed && socket.writableLength < OVER; sent += CHUNK.length) await send(CHUNK);
    if (chunked && !socket.destroyed) await written(socket, '0\r\n\r\n');
    socket.end();
  } else if (kind === 'truncated') {
    await send(Buffer.alloc(1000, '{'));
    socket.end();
  } else {
    for (let i = 0; i < 4; i++) await send(CHUNK);
    await sleep(1);
    if (kind === 'reset') socket.resetAndDestroy();
    else socket.destroy();
  }
  const timer = setTimeout(() => socket.destroy(), 300);
  await closed;
  clearTimeout(timer);
  clearTimeout(deadline);
}

test('no oversized, truncated or aborted body on any route ends the process', async (t) => {
  const db = await createTestDatabase();
  const api = startServe(db.ownerUrl, { SVC_RATE_LIMIT: 'off', SVC_WEBHOOK_RATE_LIMIT: 'off' });
  try {
    const { url, output } = await api.ready;
    const port = Number(new URL(url).port);
    const key = /svc_sk_[A-Za-z0-9]{32}/.exec(output)![0];
    // HOSTILE_ONLY=<regular expression>: only the routes (`METHOD /path`) it matches, to chase one failure
    const all = routes().filter((r) => !process.env.HOSTILE_ONLY || new RegExp(process.env.HOSTILE_ONLY).test(`${r.method} ${r.path}`));
    if (!process.env.HOSTILE_ONLY) t.true(all.length > 100, `${all.length} routes`);
    // every request of every round, sent by a few lanes at once (each waits for its request's
    // end and a health answer before the next)
    const requests = Array.from({ length: ROUNDS }, (_, round) => all.flatMap(({ method, path }, i) => KINDS.map((kind, k) => ({
      method, path, kind, contentType: CONTENT_TYPES[(i + k + round) % CONTENT_TYPES.length]!, key: (i + k + round) % 2 ? key : undefined,
    })))).flat();
    let next = 0;
    let sent = 0;
    let failure: string | undefined;
    const lane = async () => {
      while (!failure && next < requests.length) {
        const r = requests[next++]!;
        await hostile(port, r.method, r.path, r.kind, r.contentType, r.key);
        sent++;
        const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) }).catch((e: Error) => e);
        if (api.child.exitCode !== null || !(health instanceof Response) || health.status !== 200) {
          failure ??= `${r.method} ${r.path} with a body ${r.kind} (${r.contentType}) ended the process or its health`;
        }
      }
    };
    await Promise.all(Array.from({ length: LANES }, lane));
    if (failure) {
      t.fail(`${failure}:\n${api.output().slice(-4000)}`);
      return;
    }
    t.log(`${sent} hostile requests over ${all.length} routes`);
    t.is(api.child.exitCode, null);
    api.child.kill('SIGTERM');
    const code = await Promise.race([api.exited, sleep(15_000).then(() => 'still running')]);
    t.is(code, 0, `stops on SIGTERM:\n${api.output().slice(-3000)}`);
  } finally {
    if (api.child.exitCode === null) api.child.kill('SIGKILL');
    await db.drop();
  }
});
