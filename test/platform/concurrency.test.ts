// Many writers on a few contacts at once (16 connections, every contacts and audience-member
// write, crossing each other's rows, phones and tags): no answer is a 5xx (a deadlock or a
// unique-index race would surface as one), and afterwards the rules still hold.
import test from 'ava';
import { startApp, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { prng } from '../helpers/random.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  app = await startApp();
  const fixture = acmeFixture();
  fixture.organization.tag_limit = 4;
  acme = await app.apply(fixture);
});
test.after.always(async () => { await app?.close(); });

type Request = [method: string, path: string, body: unknown];

test('16 concurrent writers crossing the same contacts: no 5xx, and every rule still holds', async (t) => {
  const r = prng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const contacts = [acme.ids.ann!, acme.ids.bob!, acme.ids.cy!];
  const emails = ['ann@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com', 'eve@example.com'];
  const phones = ['+15551230001', '+15551230002', '+15551230009'];
  const audience = await app.request('POST', '/api/v1/audiences',
    { key: acme.keys.org, body: { name: 'Racing', kind: 'static', idempotency_key: 'racing' } });
  t.is(audience.status, 201);
  const members = `/api/v1/audiences/${audience.body.id}/members`;

  const next = (): Request => {
    const c = pick(contacts);
    return pick<() => Request>([
      () => ['POST', '/api/v1/contacts', { email: pick(emails), name: pick(['A', 'B']), ...(r() < 0.7 ? { phone: pick(phones) } : {}),
        custom_fields: { plan: pick(['x', 'y']) }, location_ids: [pick([acme.ids.north, acme.ids.south])] }],
      () => ['PATCH', `/api/v1/contacts/${c}`, { name: pick(['N1', 'N2']), phone: pick(phones), stage_id: pick([acme.ids.lead, acme.ids.won]) }],
      () => ['POST', `/api/v1/contacts/${c}/tags`, { name: pick(['t1', 't2', 't3', 't4', 't5']) }],
      () => ['DELETE', `/api/v1/contacts/${c}/tags/${pick(['t1', 't2', 't3', 'vip'])}`, undefined],
      () => ['POST', `/api/v1/contacts/${c}/suppress`, { channels: pick([['email'], ['sms'], ['email', 'sms']]) }],
      () => ['POST', `/api/v1/contacts/${c}/sms-consent`, { source: 'web form' }],
      () => ['POST', `/api/v1/contacts/${c}/notes`, { body: 'Racing note', idempotency_key: pick(['k1', 'k2', 'k3']) }],
      () => ['POST', members, { contact_id: c }],
      () => ['DELETE', `${members}/${c}`, undefined],
      () => ['GET', `/api/v1/contacts/${c}`, undefined],
    ])();
  };
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let i = 0; i < 60; i++) {
      const [method, path, body] = next();
      const res = await app.request(method, path, { key: acme.keys.org, body });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) failures.push(`${method} ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
    }
  }));
  t.log([...statuses].sort().map(([s, n]) => `${s}: ${n}`).join(', '));
  t.deepEqual(failures, []);

  const one = async (sql: string) => (await app.db.owner.query(sql, [acme.organization_id])).rows[0];
  // the tag limit held: at most 4 tags however many raced to create the fifth
  t.true((await one(`select count(*)::int as n from app_public.tags where organization_id = $1`)).n <= 4);
  // one note per idempotency key, however many requests raced with it
  t.true((await one(`select count(*)::int as n from app_public.contact_notes where organization_id = $1 and body = 'Racing note'`)).n <= 3);
  // one contact per email, one open opt-out per phone, one suppression per address, notes_count matching the notes
  t.is((await one(`select count(*)::int as n from (select email_key from app_public.contacts where organization_id = $1
    group by 1 having count(*) > 1) d`)).n, 0);
  t.is((await one(`select count(*)::int as n from (select phone from app_public.sms_opt_outs where organization_id = $1 and ended_at is null
    group by 1 having count(*) > 1) d`)).n, 0);
  t.is((await one(`select count(*)::int as n from app_public.contacts c where organization_id = $1
    and notes_count <> (select count(*) from app_public.contact_notes n where n.organization_id = c.organization_id and n.contact_id = c.id)`)).n, 0);
});
