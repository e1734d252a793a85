// Many writers on a few contacts at once (16 connections, every contacts and audience-member
// write and bookings of those contacts, crossing each other's rows, phones, tags and times): no answer is a 5xx (a deadlock or a
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

type Request = [method: string, path: string, body: unknown, key?: string];

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
  // bookings of Sam at North on a Monday, overlapping each other (appointments_create and _cancel)
  const bookingStarts = ['2030-03-04T14:00:00Z', '2030-03-04T14:15:00Z', '2030-03-04T14:30:00Z', '2030-03-04T15:00:00Z'];
  const booked: string[] = [];

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
      () => {
        const start = pick(bookingStarts);
        return ['POST', '/api/v1/appointments', { location_id: acme.ids.north, contact_id: c, start_time: start,
          end_time: new Date(Date.parse(start) + 30 * 60_000).toISOString(), idempotency_key: `b${Math.floor(r() * 1e6)}` }, acme.keys.owner_personal];
      },
      () => ['POST', `/api/v1/appointments/${pick(booked.length ? booked : [c])}/cancel`, undefined, acme.keys.owner_personal],
    ])();
  };
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let i = 0; i < 60; i++) {
      const [method, path, body, key] = next();
      const res = await app.request(method, path, { key: key ?? acme.keys.org, body });
      if (path === '/api/v1/appointments' && res.status === 201) booked.push(res.body.id);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) failures.push(`${method} ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
    }
  }));
  t.log([...statuses].sort().map(([s, n]) => `${s}: ${n}`).join(', '));
  t.deepEqual(failures, []);
  t.true(booked.length > 0, 'some bookings were made');

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
  // no two live bookings of a team member overlap, and own clients are exactly the contacts of live bookings
  t.is((await one(`select count(*)::int as n from app_public.appointments a join app_public.appointments b
    on b.organization_id = a.organization_id and b.staff_profile_id = a.staff_profile_id and a.id < b.id and a.during && b.during
    where a.organization_id = $1 and a.status = 'booked' and b.status = 'booked'`)).n, 0);
  t.is((await one(`select count(*)::int as n from (
      select sp.person_id, a.contact_id from app_public.appointments a join app_public.staff_profiles sp
        on sp.organization_id = a.organization_id and sp.id = a.staff_profile_id
       where a.organization_id = $1 and a.status = 'booked' and a.kind = 'appointment'
      except select person_id, contact_id from app_private.own_clients where organization_id = $1 and source = 'appointments'
      union all
      (select person_id, contact_id from app_private.own_clients where organization_id = $1 and source = 'appointments'
       except select sp.person_id, a.contact_id from app_public.appointments a join app_public.staff_profiles sp
        on sp.organization_id = a.organization_id and sp.id = a.staff_profile_id
       where a.organization_id = $1 and a.status = 'booked' and a.kind = 'appointment')) d`)).n, 0);
});

test('20 upserts of one new person at once (same email, same phone) all answer that contact, 8 rounds', async (t) => {
  for (let round = 0; round < 8; round++) {
    const email = `Twin${round}@Example.com`;
    const phone = `+1555777${String(1000 + round)}`;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => app.request('POST', '/api/v1/contacts',
      { key: acme.keys.org!, body: { email: i % 2 ? email : email.toLowerCase(), name: `Twin ${i}`, phone } })));
    t.deepEqual([...new Set(answers.map((r) => r.status))], [200], JSON.stringify(answers.find((r) => r.status !== 200)?.body));
    t.is(new Set(answers.map((r) => r.body.id)).size, 1);
    t.is(answers.filter((r) => r.body.created).length, 1);
  }
});
