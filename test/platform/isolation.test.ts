// Cross-organization isolation: a key of one organization probing every id of another
// always gets 404, never data.
import test from 'ava';
import { startApp, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { probeOperations } from '../helpers/probes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let a: Applied;
let b: Applied;
test.before(async () => {
  app = await startApp({ operations: probeOperations });
  a = await app.apply(acmeFixture('Org A'));
  b = await app.apply(acmeFixture('Org B'));
});
test.after.always(async () => { await app?.close(); });

test('every key of one organization gets 404 for every id of another', async (t) => {
  for (const [ref, key] of Object.entries(a.keys)) {
    for (const [idRef, id] of Object.entries(b.ids)) {
      for (const path of [`/api/v1/probe/contacts/${id}`, `/api/v1/probe/locations/${id}`]) {
        const res = await app.request('GET', path, { key });
        t.true(res.status === 404 || res.status === 403, `${ref} → ${idRef}: ${res.status}`);
        if (res.status === 404) t.is(res.body.error, 'not_found');
        t.false(JSON.stringify({ ...res.body, path: undefined }).includes(id), 'no data of the other organization');
      }
    }
  }
});

test('the same ids are reachable from their own organization', async (t) => {
  t.is((await app.request('GET', `/api/v1/probe/contacts/${b.ids.ann}`, { key: b.keys.org })).status, 200);
  t.is((await app.request('GET', `/api/v1/probe/locations/${b.ids.north}`, { key: b.keys.org })).status, 200);
});

test('whoami names only the key\'s own organization', async (t) => {
  const res = await app.request('GET', '/api/v1/me', { key: a.keys.org });
  t.is(res.body.organization.id, a.organization_id);
  t.is(res.body.organization.name, 'Org A');
});

test('a multi-statement handler sees only its own organization', async (t) => {
  const res = await app.request('GET', '/api/v1/probe/tx', { key: a.keys.org });
  t.is(res.body.contacts.length, 3);
  t.false(res.body.contacts.some((id: string) => Object.values(b.ids).includes(id)));
});
