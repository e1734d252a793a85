// /metrics: off without SVC_METRICS_TOKEN, 401 for a wrong token, and with the token the
// Prometheus text format (strictly parsed) whose counters move after requests: requests by
// operation and status, latency, database pools, jobs, messages and rate-limit refusals.
import test from 'ava';
import { startApp, startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { RateLimiter, postgresWindowStore } from '../../src/http/rate-limit.ts';
import { tokenMatches } from '../../src/ops/metrics.ts';
import { parsePrometheus, sampleValue } from './prometheus.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';
let app: TestApp;
let tenant: Applied;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture(), {
    env: { SVC_METRICS_TOKEN: TOKEN },
    limiter: (pool) => new RateLimiter({ limit: 5, store: postgresWindowStore(pool) }),
  }));
});
test.after.always(async () => { await app?.close(); });

async function scrape(token = TOKEN) {
  const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  return { res, text: await res.text() };
}

test.serial('without SVC_METRICS_TOKEN /metrics is not served', async (t) => {
  const plain = await startApp();
  try {
    const res = await plain.request('GET', '/metrics', { key: TOKEN });
    t.is(res.status, 404);
    t.is(res.body.error, 'not_found');
  } finally {
    await plain.close();
  }
});

test.serial('a missing or wrong token answers 401 in the error envelope, without the metrics', async (t) => {
  for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    { authorization: TOKEN }, { authorization: `Basic ${TOKEN}` }]) {
    const res = await app.request('GET', '/metrics', { headers });
    t.is(res.status, 401, JSON.stringify(headers));
    t.is(res.body.error, 'unauthorized');
    t.is(res.headers.get('www-authenticate'), 'Bearer');
  }
});

test.serial('tokens compare equal only when identical, whatever their lengths', (t) => {
  t.true(tokenMatches('abc', 'abc'));
  t.false(tokenMatches('abd', 'abc'));
  t.false(tokenMatches('ab', 'abc'));
  t.false(tokenMatches('abcd', 'abc'));
  t.false(tokenMatches(undefined, 'abc'));
  t.false(tokenMatches('', 'abc'));
});

test.serial('the exposition parses strictly and counts requests by operation and status, with latency', async (t) => {
  const before = parsePrometheus((await scrape()).text);
  const count = (m: typeof before, status: string) =>
    sampleValue(m, 'svc_http_requests_total', { operation: 'contacts_get', status }) ?? 0;
  const ann = tenant.ids.ann!;
  const key = tenant.keys.org!;
  t.is((await app.request('GET', `/api/v1/contacts/${ann}`, { key })).status, 200);
  t.is((await app.request('GET', `/api/v1/contacts/${ann}`, { key })).status, 200);
  t.is((await app.request('GET', `/api/v1/contacts/${ann}`, { key: 'svc_sk_nope' })).status, 401);

  const { res, text } = await scrape();
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const after = parsePrometheus(text);
  t.is(after.get('svc_http_requests_total')?.type, 'counter');
  t.is(after.get('svc_http_request_duration_seconds')?.type, 'histogram');
  t.is(count(after, '200') - count(before, '200'), 2);
  t.is(count(after, '401') - count(before, '401'), 1);
  const n = sampleValue(after, 'svc_http_request_duration_seconds_count', { operation: 'contacts_get' })!;
  t.is(n - (sampleValue(before, 'svc_http_request_duration_seconds_count', { operation: 'contacts_get' }) ?? 0), 3);
  t.is(sampleValue(after, 'svc_http_request_duration_seconds_bucket', { operation: 'contacts_get', le: '+Inf' }), n);
  t.true(sampleValue(after, 'svc_http_request_duration_seconds_sum', { operation: 'contacts_get' })! > 0);
  // a path never becomes a label: the operation names it
  t.false(text.includes(ann));
});

test.serial('the database pools the app holds report connections in use, idle and waiting', async (t) => {
  // a request just before the scrape, so the request pool holds a connection whatever the
  // time since the previous test (its idle connections close after 30 s)
  t.is((await app.request('GET', `/api/v1/contacts/${tenant.ids.ann}`, { key: tenant.keys.org })).status, 200);
  const m = parsePrometheus((await scrape()).text);
  for (const pool of ['request', 'heavy']) {
    for (const state of ['in_use', 'idle', 'waiting']) {
      const v = sampleValue(m, 'svc_db_pool_connections', { pool, state });
      t.true(typeof v === 'number' && v >= 0, `${pool} ${state}`);
    }
  }
  t.is(sampleValue(m, 'svc_db_pool_connections', { pool: 'request', state: 'waiting' }), 0);
  const held = sampleValue(m, 'svc_db_pool_connections', { pool: 'request', state: 'idle' })!
    + sampleValue(m, 'svc_db_pool_connections', { pool: 'request', state: 'in_use' })!;
  t.true(held >= 1, `request pool holds ${held}`);
});

test.serial('background jobs by task and state, and messages by channel and status, are counted at scrape time', async (t) => {
  const owner = app.db.owner;
  await owner.query(`select graphile_worker.add_job('ops_metrics_probe', '{}'::json)`);
  await owner.query(`select graphile_worker.add_job('ops_metrics_probe', '{}'::json, max_attempts => 1)`);
  await owner.query(`update graphile_worker._private_jobs set attempts = 1, last_error = 'boom'
                      where max_attempts = 1 and task_id = (select id from graphile_worker._private_tasks where identifier = 'ops_metrics_probe')`);
  await owner.query(`insert into app_private.outgoing_messages (organization_id, channel, recipient, subject, body, status)
                     values ($1, 'email', 'a@example.com', 's', 'b', 'sent'), ($1, 'email', 'b@example.com', 's', 'b', 'failed'),
                            ($1, 'sms', '+15551230001', null, 'b', 'failed'), ($1, 'sms', '+15551230001', null, 'b', 'failed')`,
  [tenant.organization_id]);
  const m = parsePrometheus((await scrape()).text);
  t.is(m.get('svc_jobs')?.type, 'gauge');
  t.is(sampleValue(m, 'svc_jobs', { task: 'ops_metrics_probe', state: 'queued' }), 1);
  t.is(sampleValue(m, 'svc_jobs', { task: 'ops_metrics_probe', state: 'failed' }), 1);
  t.true((sampleValue(m, 'svc_messages', { channel: 'email', status: 'sent' }) ?? 0) >= 1);
  t.true((sampleValue(m, 'svc_messages', { channel: 'email', status: 'failed' }) ?? 0) >= 1);
  t.true((sampleValue(m, 'svc_messages', { channel: 'sms', status: 'failed' }) ?? 0) >= 2);

  // a job taken by a worker is running
  await owner.query(`update graphile_worker._private_jobs set locked_at = now(), locked_by = 'probe'
                      where attempts = 0 and task_id = (select id from graphile_worker._private_tasks where identifier = 'ops_metrics_probe')`);
  const later = parsePrometheus((await scrape()).text);
  t.is(sampleValue(later, 'svc_jobs', { task: 'ops_metrics_probe', state: 'running' }), 1);
  t.is(sampleValue(later, 'svc_jobs', { task: 'ops_metrics_probe', state: 'queued' }), undefined);
});

test.serial('the counting functions are svc_worker\'s alone: a request role cannot call them', async (t) => {
  for (const role of ['svc_request', 'svc_login']) {
    for (const fn of ['ops_job_counts', 'ops_message_counts']) {
      const client = await app.db.owner.connect();
      try {
        await client.query('begin');
        await client.query(`set local role ${role}`);
        const e = await t.throwsAsync(client.query(`select * from app_hidden.${fn}()`));
        t.is((e as { code?: string }).code, '42501', `${role} ${fn}`);
      } finally {
        await client.query('rollback');
        client.release();
      }
    }
  }
});

test.serial('rate-limit refusals are counted by route', async (t) => {
  const route = 'GET /api/v1/contacts/{contactId}';
  const before = sampleValue(parsePrometheus((await scrape()).text), 'svc_rate_limit_refusals_total', { route }) ?? 0;
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await app.request('GET', `/api/v1/contacts/${tenant.ids.bob}`, { key: tenant.keys.org })).status);
  const refused = statuses.filter((s) => s === 429).length;
  t.true(refused >= 3, statuses.join(','));
  const m = parsePrometheus((await scrape()).text);
  t.is(sampleValue(m, 'svc_rate_limit_refusals_total', { route })! - before, refused);
  t.true((sampleValue(m, 'svc_http_requests_total', { operation: 'contacts_get', status: '429' }) ?? 0) >= refused);
});
