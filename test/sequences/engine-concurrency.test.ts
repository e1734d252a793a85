// The concurrency suite's sequences part: 16 writers at once over three contacts, crossing every
// way in and out of a sequence (enroll by id and email, events with shared keys, cancel_events,
// tags that trigger and exit, suppressions, test sends) while a worker drains the steps: no 5xx,
// and afterwards one live enrollment per contact and sequence, one acceptance per event key, and
// no message twice.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { prng } from '../helpers/random.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { drain, engineFixture } from './engine-helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(engineFixture()));
  await insertSendSchedule(app.db, acme.organization_id);
});
test.after.always(async () => { await app?.close(); });

type Request = [method: string, path: string, body: unknown];

test('16 concurrent writers crossing the same contacts and sequences: no 5xx, and every rule still holds', async (t) => {
  const org = acme.organization_id;
  const r = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const steps = [{ step_key: 'mail', type: 'email', subject: 'Hi', body: 'Hi {{contact.first_name|there}}' },
                 { step_key: 'text', type: 'sms', body: 'Hey' }];
  const manual = await insertSequence(app.db, org, { steps });
  const byEvent = await insertSequence(app.db, org, { steps, trigger: { type: 'event', event: 'assessment_abandoned' } });
  const byTag = await insertSequence(app.db, org, { steps, trigger: { type: 'tag_added', tag: 't1' },
    exit_conditions: [{ type: 'tag_added', tag: 't2' }] });
  const contacts = [acme.ids.ann!, acme.ids.bob!, acme.ids.dee!];
  const emails = ['ann@example.com', 'bob@example.com', 'dee@example.com'];

  const next = (): Request => {
    const c = pick(contacts);
    const seq = pick([manual, byEvent, byTag]);
    return pick<() => Request>([
      () => ['POST', `/api/v1/sequences/${seq}/enrollments`, r() < 0.5 ? { contact_id: c } : { email: pick(emails) }],
      () => ['POST', '/api/v1/contacts', { email: pick(emails), events: [{ name: 'assessment_abandoned', key: pick(['k1', 'k2', 'k3']) }],
        fields: { user_message_count: 1 }, ...(r() < 0.3 ? { cancel_events: ['assessment_abandoned'] } : {}) }],
      () => ['POST', `/api/v1/contacts/${c}/tags`, { name: pick(['t1', 't2']) }],
      () => ['DELETE', `/api/v1/contacts/${c}/tags/${pick(['t1', 't2'])}`, undefined],
      () => ['POST', `/api/v1/contacts/${c}/suppress`, { channels: pick([['email'], ['sms']]) }],
      () => ['POST', `/api/v1/contacts/${c}/sms-consent`, { source: 'web form' }],
      () => ['POST', `/api/v1/sequences/${seq}/steps/${pick(['mail', 'text'])}/test`, { contact_id: c }],
    ])();
  };
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let writing = true;
  const worker = (async () => {
    while (writing) await drain(app.db);
  })();
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let i = 0; i < 40; i++) {
      const [method, path, body] = next();
      const res = await app.request(method, path, { key: acme.keys.org, body });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) failures.push(`${method} ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
    }
  }));
  writing = false;
  await worker;
  await drain(app.db);
  t.log([...statuses].sort().map(([s, n]) => `${s}: ${n}`).join(', '));
  t.deepEqual(failures, []);

  const one = async (sql: string) => (await app.db.owner.query(sql, [org])).rows[0];
  // one live enrollment per (sequence, contact)
  t.is((await one(`select count(*)::int as n from (select 1 from app_public.enrollments where organization_id = $1
    and status in ('active', 'paused') group by sequence_id, contact_id having count(*) > 1) d`)).n, 0);
  // one acceptance per event key
  t.is((await one(`select count(*)::int as n from (select 1 from app_private.contact_events where organization_id = $1
    and kind = 'fire' and key is not null group by event, key having count(*) > 1) d`)).n, 0);
  // each (enrollment, step) at most once, and each message in the outbox once
  t.is((await one(`select count(*)::int as n from (select 1 from app_public.step_runs where organization_id = $1
    group by enrollment_id, step_key having count(*) > 1) d`)).n, 0);
  t.is((await one(`select count(*)::int as n from (select 1 from app_private.outbox where organization_id = $1
    and meta ? 'enrollment_id' group by meta->>'enrollment_id', meta->>'step_key' having count(*) > 1) d`)).n, 0);
  // nothing left half-sent, and no enrollment still on a step whose run ended without moving on
  t.is((await one(`select count(*)::int as n from app_public.step_runs where organization_id = $1 and status = 'sending'`)).n, 0);
  t.is((await one(`select count(*)::int as n from app_public.enrollments e where organization_id = $1 and status = 'active'
    and exists (select 1 from app_public.step_runs s where s.organization_id = e.organization_id and s.enrollment_id = e.id
                 and s.step_key = e.current_step_key)`)).n, 0);
});
