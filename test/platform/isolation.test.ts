// Cross-organization isolation: a key of one organization probing every id of another
// always gets 404, never data.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { probeContactGet, probeLocationGet, probeOperations } from '../helpers/probes.ts';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let a: Applied;
let b: Applied;
test.before(async () => {
  ({ app, tenant: a } = await startWithTenant(acmeFixture('Org A'), { operations: probeOperations }));
  b = await app.apply(acmeFixture('Org B'));
});
test.after.always(async () => { await app?.close(); });

/** The scopes a key of acmeFixture carries: its own list, or all of them. */
const scopesOf = (ref: string) => acmeFixture().api_keys.find((k) => k.ref === ref)?.scopes ?? ALL_SCOPES;

test('every key of one organization gets 404 for every id of another (403 naming the scope a key lacks)', async (t) => {
  const probes = [
    { path: (id: string) => `/api/v1/probe/contacts/${id}`, scope: probeContactGet.scope! },
    { path: (id: string) => `/api/v1/probe/locations/${id}`, scope: probeLocationGet.scope! },
  ];
  for (const [ref, key] of Object.entries(a.keys)) {
    for (const [idRef, id] of Object.entries(b.ids)) {
      for (const probe of probes) {
        const res = await app.request('GET', probe.path(id), { key });
        const expected = scopesOf(ref).includes(probe.scope)
          ? { status: 404, body: { error: 'not_found' } }
          : { status: 403, body: { error: 'insufficient_scope', required: probe.scope } };
        t.like(res, expected, `${ref} → ${idRef}`);
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
