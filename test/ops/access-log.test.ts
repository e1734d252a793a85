// The access log: one JSON line per request at info, with the request id, operationId, status,
// duration, organization, credential and client address, and never the key, a token of the
// path, or the path itself; off below info (SVC_LOG_LEVEL) and sampled (SVC_ACCESS_LOG_SAMPLE).
import test from 'ava';
import { acmeFixture } from '../helpers/fixtures.ts';
import { linesAfter, startLogged } from './helpers.ts';

test('one line per request, with who asked for what and how it went, and never the key', async (t) => {
  const { app, tenant } = await startLogged(acmeFixture());
  try {
    const key = tenant.keys.org!;
    const ann = tenant.ids.ann!;
    const res = await fetch(`${app.url}/api/v1/contacts/${ann}`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': 'req-ops-1' } });
    t.is(res.status, 200);
    let lines = await linesAfter(app, 1);
    t.is(lines.length, 1);
    const line = lines[0]!;
    t.like(line, {
      level: 30, msg: 'request', service: 'svc', requestId: 'req-ops-1', operationId: 'contacts_get', method: 'GET',
      route: '/api/v1/contacts/{contactId}', status: 200, organizationId: tenant.organization_id, credentialId: tenant.key_ids.org,
      client: '127.0.0.1',
    });
    t.true(typeof line.ms === 'number' && line.ms > 0);
    t.is(line.aborted, undefined);

    // a refused key: no organization or credential, and the key is nowhere
    const bad = `${key.slice(0, -4)}zzzz`;
    t.is((await fetch(`${app.url}/api/v1/contacts/${ann}`, { headers: { authorization: `Bearer ${bad}` } })).status, 401);
    // an unknown route, and a page whose path carries a token
    t.is((await fetch(`${app.url}/nowhere/${key}`, { headers: { authorization: `Bearer ${key}` } })).status, 404);
    await fetch(`${app.url}/unsubscribe/${key}`);
    lines = await linesAfter(app, 4);
    t.is(lines.length, 4);
    t.like(lines[1], { operationId: 'contacts_get', status: 401, organizationId: undefined, credentialId: undefined });
    t.like(lines[2], { operationId: 'unmatched', status: 404, route: undefined });
    t.regex(String(lines[3]!.operationId), /^GET \/unsubscribe/);
    for (const raw of app.raw) {
      t.false(raw.includes(key.slice(7)), raw);
      t.false(raw.includes(bad.slice(7)), raw);
      t.false(raw.includes(ann), raw); // the path is not logged, its pattern is
    }
    t.is(app.raw.filter((l) => l.endsWith('\n')).length, 4, 'one JSON line each');
  } finally {
    await app.close();
  }
});

test('below info (SVC_LOG_LEVEL=warn) there are no access lines', async (t) => {
  const { app, tenant } = await startLogged(acmeFixture(), {}, 'warn');
  try {
    t.is((await fetch(`${app.url}/api/v1/contacts/${tenant.ids.ann}`, { headers: { authorization: `Bearer ${tenant.keys.org}` } })).status, 200);
    t.is((await fetch(`${app.url}/healthz`)).status, 200);
    await new Promise((r) => setTimeout(r, 50));
    t.deepEqual(app.raw, []);
  } finally {
    await app.close();
  }
});

test('SVC_ACCESS_LOG_SAMPLE logs that share of the requests', async (t) => {
  const none = await startLogged(acmeFixture(), { SVC_ACCESS_LOG_SAMPLE: '0' });
  const some = await startLogged(acmeFixture(), { SVC_ACCESS_LOG_SAMPLE: '0.25' });
  try {
    for (let i = 0; i < 200; i++) {
      await fetch(`${none.app.url}/healthz`);
      await fetch(`${some.app.url}/healthz`);
    }
    await new Promise((r) => setTimeout(r, 50));
    t.is(none.app.raw.length, 0);
    // 200 draws at 1/4: 50 expected, outside 20..80 about once in 10^7 runs
    t.true(some.app.raw.length >= 20 && some.app.raw.length <= 80, String(some.app.raw.length));
    t.like(some.app.lines[0], { operationId: 'healthz', status: 200 });
  } finally {
    await none.app.close();
    await some.app.close();
  }
});

test('a sample share outside 0..1 stops the start with a clear message', async (t) => {
  const { loadConfig } = await import('../../src/config.ts');
  for (const v of ['2', '-0.1', 'half']) {
    t.throws(() => loadConfig({ SVC_ACCESS_LOG_SAMPLE: v }), { message: /SVC_ACCESS_LOG_SAMPLE must be a number from 0 to 1/ });
  }
});
