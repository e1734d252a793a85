// The error envelope (spec: Errors) for every failure, and no 5xx from malformed requests.
import test from 'ava';
import { startApp, startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { probeOperations } from '../helpers/probes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { z } from 'zod';
import { sql } from '../../src/db/sql.ts';
import { defineOperation } from '../../src/registry/operation.ts';
import { PassThrough } from 'node:stream';
import { answerUnparsable } from '../../src/server.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(acmeFixture(), { operations: probeOperations })); });
test.after.always(async () => { await app?.close(); });

function isEnvelope(t: import('ava').ExecutionContext, body: any, status: number, error: string, path: string) {
  t.is(body.statusCode, status);
  t.is(body.error, error);
  t.is(body.path, path);
  t.true(typeof body.timestamp === 'string' && !Number.isNaN(Date.parse(body.timestamp)));
  t.is(typeof body.message, 'string');
}

test('malformed JSON is a 400 envelope', async (t) => {
  const res = await app.request('POST', '/api/v1/probe/write', { key: acme.keys.org, rawBody: '{"name": ' });
  t.is(res.status, 400);
  isEnvelope(t, res.body, 400, 'bad_request', '/api/v1/probe/write');
  t.regex(res.body.message, /JSON/);
});

test('a missing body, a wrong type and an unknown field are 400 naming the problem', async (t) => {
  const empty = await app.request('POST', '/api/v1/probe/write', { key: acme.keys.org });
  t.is(empty.status, 400);
  const wrong = await app.request('POST', '/api/v1/probe/write', { key: acme.keys.org, body: { name: 5 } });
  t.is(wrong.status, 400);
  t.regex(wrong.body.message, /body\.name/);
  const extra = await app.request('POST', '/api/v1/probe/write', { key: acme.keys.org, body: { name: 'x', surprise: 1 } });
  t.is(extra.status, 400);
  const array = await app.request('POST', '/api/v1/probe/write', { key: acme.keys.org, body: [1, 2] });
  t.is(array.status, 400);
});

test('a value the database refuses is a 400, not a 500', async (t) => {
  const res = await app.request('POST', '/api/v1/probe/write', { key: acme.keys.org, body: { name: 'nul\u0000byte' } });
  t.is(res.status, 400);
  isEnvelope(t, res.body, 400, 'bad_request', '/api/v1/probe/write');
});

test('SQL-looking input is data, never SQL', async (t) => {
  const name = `x'); drop table app_public.contacts; --\\'`;
  const res = await app.request('POST', '/api/v1/probe/write', { key: acme.keys.org, body: { name } });
  t.is(res.status, 200);
  t.is(res.body.name, name);
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_public.contacts`);
  t.is(rows[0].n, 3);
});

test('a non-uuid path id is 400', async (t) => {
  const res = await app.request('GET', '/api/v1/probe/contacts/123', { key: acme.keys.org });
  isEnvelope(t, res.body, 400, 'bad_request', '/api/v1/probe/contacts/123');
  t.regex(res.body.message, /path\.contactId/);
});

test('a path segment with a broken percent-escape is a 400 envelope, not a 500', async (t) => {
  const res = await app.request('GET', '/api/v1/probe/contacts/%E0%A4%A', { key: acme.keys.org });
  isEnvelope(t, res.body, 400, 'bad_request', '/api/v1/probe/contacts/%E0%A4%A');
  t.regex(res.body.message, /path could not be decoded/);
});

test('a request line over the parser\'s limit is a 431 envelope', async (t) => {
  const res = await app.request('GET', `/api/v1/probe/open?q=${'z'.repeat(20_000)}`, { key: acme.keys.org });
  t.is(res.status, 431);
  isEnvelope(t, res.body, 431, 'request_header_fields_too_large', '');
});

test('an invalid query is 400; a valid one is coerced', async (t) => {
  t.is((await app.request('GET', '/api/v1/probe/open?page=abc', { key: acme.keys.org })).status, 400);
  t.is((await app.request('GET', '/api/v1/probe/open?page=0', { key: acme.keys.org })).status, 400);
  t.is((await app.request('GET', '/api/v1/probe/open?page=1&page=2', { key: acme.keys.org })).status, 400);
  const ok = await app.request('GET', '/api/v1/probe/open?page=3', { key: acme.keys.org });
  t.deepEqual(ok.body, { page: 3 });
});

test('unknown routes and methods are 404 envelopes', async (t) => {
  for (const [method, path] of [['GET', '/api/v1/nothing'], ['DELETE', '/api/v1/me'], ['GET', '/api/v1/contacts'], ['POST', '/'], ['GET', '/api/v2/me']] as const) {
    const res = await app.request(method, path, { key: acme.keys.org });
    t.is(res.status, 404, `${method} ${path}`);
    isEnvelope(t, res.body, 404, 'not_found', path);
  }
});

test('an unexpected failure is a 500 envelope with nothing internal in it', async (t) => {
  const res = await app.request('GET', '/api/v1/probe/throw', { key: acme.keys.org });
  t.is(res.status, 500);
  isEnvelope(t, res.body, 500, 'internal_error', '/api/v1/probe/throw');
  t.notRegex(JSON.stringify(res.body), /secret|\/srv|app\.ts|stack/);
});

test('an oversized body is a 413 envelope', async (t) => {
  const res = await app.request('POST', '/api/v1/probe/write', { key: acme.keys.org, rawBody: JSON.stringify({ name: 'x'.repeat(1_100_000) }) });
  t.is(res.status, 413);
  t.is(res.body.error, 'payload_too_large');
});

test('every answer carries a request id', async (t) => {
  const res = await app.request('GET', '/api/v1/me', { key: acme.keys.org, headers: { 'x-request-id': 'abc-123' } });
  t.is(res.headers.get('x-request-id'), 'abc-123');
  t.truthy((await app.request('GET', '/api/v1/me')).headers.get('x-request-id'));
});

test('health and readiness', async (t) => {
  t.deepEqual((await app.request('GET', '/healthz')).body, { status: 'ok' });
  t.deepEqual((await app.request('GET', '/readyz')).body, { status: 'ready' });
});

test('a statement over the request time limit is cancelled: 503 timeout, and the connection serves the next request', async (t) => {
  const sleep = defineOperation({
    operationId: 'probe_sleep', method: 'GET', path: '/api/v1/probe/sleep', tag: 'Probe', summary: 'probe',
    description: 'test-only', confirm: false, changes: [], idempotent: false,
    scope: null, memberAccess: 'open', managerPower: null, response: z.any(),
    query: z.object({ seconds: z.coerce.number() }),
    run: { statement: ({ seconds }) => sql`select pg_sleep(${seconds}) is null as slept`, shape: () => ({ ok: true }) },
  });
  const slow = await startApp({ operations: [sleep], statementTimeoutMs: 300 });
  try {
    const key = (await slow.apply(acmeFixture())).keys.org;
    const res = await slow.request('GET', '/api/v1/probe/sleep?seconds=2', { key });
    t.is(res.status, 503);
    isEnvelope(t, res.body, 503, 'timeout', '/api/v1/probe/sleep');
    // every pooled connection is still good
    for (let i = 0; i < 10; i++) t.is((await slow.request('GET', '/api/v1/probe/sleep?seconds=0', { key })).status, 200);
  } finally {
    await slow.close();
  }
});

test('what Node\'s parser refuses is answered in the envelope: 408 for a request too slow, 400 for broken syntax; a reset socket is closed', async (t) => {
  const answer = (code: string) => {
    const socket = new PassThrough();
    let written = '';
    socket.on('data', (chunk) => { written += String(chunk); });
    answerUnparsable(Object.assign(new Error(code), { code }), socket);
    return { socket, written: () => written };
  };
  const slow = answer('ERR_HTTP_REQUEST_TIMEOUT');
  await new Promise((resolve) => setImmediate(resolve));
  t.regex(slow.written(), /^HTTP\/1\.1 408 Request Timeout\r\n/);
  t.like(JSON.parse(slow.written().split('\r\n\r\n')[1]!), { statusCode: 408, error: 'request_timeout', path: '' });
  const broken = answer('HPE_INVALID_METHOD');
  await new Promise((resolve) => setImmediate(resolve));
  t.regex(broken.written(), /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.like(JSON.parse(broken.written().split('\r\n\r\n')[1]!), { statusCode: 400, error: 'bad_request' });
  const reset = answer('ECONNRESET');
  t.true(reset.socket.destroyed);
  t.is(reset.written(), '');
});
