// Rate limiting (spec: Limits): per client address and route, shared across processes
// through PostgreSQL, 429 in the envelope with Retry-After and RateLimit-* headers.
import test from 'ava';
import { startApp, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { RateLimiter, postgresWindowStore } from '../../src/http/rate-limit.ts';
import { mcpRpc } from '../helpers/mcp.ts';

const at = Date.parse('2026-11-21T12:00:30Z'); // 30 s into a window
let app: TestApp;
let acme: Applied;
test.before(async () => {
  app = await startApp({
    env: { SVC_RATE_LIMIT: '5', SVC_WEBHOOK_RATE_LIMIT: '8', SVC_TRUST_PROXY: 'true' },
    limiter: (pool, config) => new RateLimiter({ limit: config.rateLimit!, store: postgresWindowStore(pool), now: () => at }),
  });
  acme = await app.apply(acmeFixture());
});
test.after.always(async () => { await app?.close(); });

const me = (ip: string) => app.request('GET', '/api/v1/me', { key: acme.keys.org, headers: { 'x-forwarded-for': ip } });

test('over the limit a route answers 429 with Retry-After and RateLimit headers', async (t) => {
  for (let i = 1; i <= 5; i++) {
    const res = await me('10.0.0.1');
    t.is(res.status, 200);
    t.is(res.headers.get('ratelimit-limit'), '5');
    t.is(res.headers.get('ratelimit-remaining'), String(5 - i));
    t.is(res.headers.get('ratelimit-reset'), '30');
    t.is(res.headers.get('ratelimit-policy'), '5;w=60');
  }
  const over = await me('10.0.0.1');
  t.is(over.status, 429);
  t.is(over.body.statusCode, 429);
  t.is(over.body.error, 'rate_limited');
  t.is(over.body.path, '/api/v1/me');
  t.is(over.headers.get('retry-after'), '30');
  t.is(over.headers.get('ratelimit-remaining'), '0');
});

test('each client address and each route has its own count', async (t) => {
  for (let i = 0; i < 6; i++) await me('10.0.0.2');
  t.is((await me('10.0.0.2')).status, 429);
  t.is((await me('10.0.0.3')).status, 200, 'another address');
  t.is((await app.request('GET', '/api/v1/docs-json', { headers: { 'x-forwarded-for': '10.0.0.2' } })).status, 200, 'another route');
});

test('unknown routes are limited too, and still answer 404 below the limit', async (t) => {
  const hit = () => app.request('GET', '/api/v1/nowhere', { headers: { 'x-forwarded-for': '10.0.0.4' } });
  for (let i = 0; i < 5; i++) t.is((await hit()).status, 404);
  t.is((await hit()).status, 429);
});

test('each message of an MCP batch counts against the limit', async (t) => {
  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'me_get', arguments: {} } });
  const batch = (n: number) => mcpRpc(app, Array.from({ length: n }, (_, i) => call(i)),
    { authorization: `Bearer ${acme.keys.org}`, 'x-forwarded-for': '10.0.0.6' });
  const three = await batch(3);
  t.is(three.status, 200);
  t.is(three.headers.get('ratelimit-remaining'), '2');
  t.is(((await three.json()) as unknown[]).length, 3);
  const over = await batch(3);
  t.is(over.status, 429);
  t.is(((await over.json()) as any).error, 'rate_limited');
});

test('the providers\' webhooks have their own, higher limit (SVC_WEBHOOK_RATE_LIMIT); other pages the API\'s', async (t) => {
  const post = (path: string) => app.request('POST', path, { rawBody: '{}', headers: { 'x-forwarded-for': '10.0.0.7' } });
  for (const path of ['/webhooks/email/events', '/webhooks/twilio/status', '/webhooks/voice']) {
    for (let i = 1; i <= 8; i++) {
      const res = await post(path);
      t.not(res.status, 429, `${path} ${i}`);
      t.is(res.headers.get('ratelimit-limit'), '8', path);
    }
    t.is((await post(path)).status, 429, path);
  }
  const page = () => app.request('GET', '/unsubscribe/nothing-here', { headers: { 'x-forwarded-for': '10.0.0.7' } });
  for (let i = 0; i < 5; i++) t.is((await page()).headers.get('ratelimit-limit'), '5');
  t.is((await page()).status, 429);
});

test('me_get reports the limit', async (t) => {
  t.deepEqual((await me('10.0.0.5')).body.rate_limit, { limit: 5, window_seconds: 60 });
});

test('without SVC_TRUST_PROXY, X-Forwarded-For is ignored', async (t) => {
  const own = await startApp({
    env: { SVC_RATE_LIMIT: '3' },
    limiter: (pool, config) => new RateLimiter({ limit: config.rateLimit!, store: postgresWindowStore(pool), now: () => at }),
  });
  try {
    const f = await own.apply(acmeFixture());
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await own.request('GET', '/api/v1/me', { key: f.keys.org, headers: { 'x-forwarded-for': `10.1.0.${i}` } })).status);
    }
    t.deepEqual(statuses, [200, 200, 200, 429]);
  } finally {
    await own.close();
  }
});

test('two API processes share one limit through the database', async (t) => {
  const store = postgresWindowStore(app.pool);
  const a = new RateLimiter({ limit: 10, store, now: () => at, flushMs: 60_000 });
  const b = new RateLimiter({ limit: 10, store, now: () => at, flushMs: 60_000 });
  try {
    for (let i = 0; i < 6; i++) t.true(a.hit('192.0.2.1', 'GET /x').allowed);
    await a.flush();
    t.true(b.hit('192.0.2.1', 'GET /x').allowed, 'b alone has seen one request');
    await b.flush(); // b learns that a served six
    const verdicts = [1, 2, 3, 4].map(() => b.hit('192.0.2.1', 'GET /x'));
    t.deepEqual(verdicts.map((v) => v.allowed), [true, true, true, false], 'eleventh request over both processes is refused');
    await b.flush();
    await a.flush();
    t.false(a.hit('192.0.2.1', 'GET /x').allowed, 'a learns it too');
  } finally {
    a.stop();
    b.stop();
  }
});

test('a new window starts the count again', async (t) => {
  let now = at;
  const limiter = new RateLimiter({ limit: 2, store: async () => [], now: () => now, flushMs: 60_000 });
  try {
    t.true(limiter.hit('c', 'r').allowed);
    t.true(limiter.hit('c', 'r').allowed);
    t.false(limiter.hit('c', 'r').allowed);
    now += 30_000;
    t.true(limiter.hit('c', 'r').allowed);
  } finally {
    limiter.stop();
  }
});

test('when the shared store is unreachable, each process still limits on its own', async (t) => {
  const limiter = new RateLimiter({ limit: 2, store: async () => { throw new Error('down'); }, now: () => at, flushMs: 60_000 });
  try {
    limiter.hit('c', 'r');
    await limiter.flush();
    t.true(limiter.hit('c', 'r').allowed);
    t.false(limiter.hit('c', 'r').allowed);
  } finally {
    limiter.stop();
  }
});
