// Many writers on one sequence's enrollments at once: cancels through the API crossing each
// other, enrollments added and paused or resumed by the engine's kind of writes (as the owner),
// folds of the counts, and reads: no answer is a 5xx, every cancelled enrollment has exactly one
// cancelled event, and the counts behind `total` equal the rows.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { prng } from '../helpers/random.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { insertSequence } from './helpers.ts';
import { readsFixture } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(readsFixture())); });
test.after.always(async () => { await app?.close(); });

test('16 concurrent writers and readers on one sequence: no 5xx, one cancelled event each, exact counts', async (t) => {
  const org = acme.organization_id;
  const sequenceId = await insertSequence(app.db, org, { name: 'Busy' });
  const contacts = (await app.db.owner.query(`insert into app_public.contacts (organization_id, name, email)
    select $1, 'Busy ' || i, 'busy' || i || '@example.com' from generate_series(1, 120) i returning id`, [org])).rows.map((r) => r.id as string);
  const enroll = (contactId: string) => app.db.owner.query(`insert into app_public.enrollments (organization_id, sequence_id, contact_id,
      current_step_index, current_step_key, next_step_due_at, next_run_at)
    values ($1, $2, $3, 0, 'hello', now(), now()) on conflict do nothing returning id`, [org, sequenceId, contactId]);
  const ids: string[] = [];
  for (const c of contacts.slice(0, 60)) ids.push((await enroll(c)).rows[0].id);

  const r = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const failures: string[] = [];
  const statuses = new Map<string, number>();
  const note = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
  const base = `/api/v1/sequences/${sequenceId}/enrollments`;
  const actions: (() => Promise<void>)[] = [
    async () => {
      const res = await app.request('POST', `${base}/${pick(ids)}/cancel`, { key: acme.keys.org });
      note(`cancel ${res.status}`);
      if (res.status >= 500) failures.push(`cancel → ${res.status} ${JSON.stringify(res.body)}`);
    },
    async () => {
      const res = await app.request('GET', `${base}?status=${pick(['active', 'paused', 'cancelled'])}&limit=5`, { key: acme.keys.org });
      note(`list ${res.status}`);
      if (res.status !== 200) failures.push(`list → ${res.status} ${JSON.stringify(res.body)}`);
    },
    async () => {
      const { rows } = await enroll(pick(contacts.slice(60)));
      if (rows[0]) ids.push(rows[0].id);
      note('enroll');
    },
    async () => {
      const paused = r() < 0.5;
      await app.db.owner.query(`update app_public.enrollments set status = $2, paused_at = case when $2 = 'paused' then now() end
        where id = $1 and status = $3`, [pick(ids), paused ? 'paused' : 'active', paused ? 'active' : 'paused']);
      note('pause/resume');
    },
    async () => {
      await app.db.owner.query(`select app_private.fold_enrollment_counts($1, $2)`, [org, sequenceId]);
      note('fold');
    },
  ];
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let i = 0; i < 40; i++) {
      try {
        await pick(actions)();
      } catch (e) {
        failures.push(String(e));
      }
    }
  }));
  t.log([...statuses].sort().map(([s, n]) => `${s}: ${n}`).join(', '));
  t.deepEqual(failures, []);

  const exact = (await app.db.owner.query(`select status, count(*)::int as n from app_public.enrollments where sequence_id = $1
    group by 1 order by 1`, [sequenceId])).rows;
  const counted = (await app.db.owner.query(`select status, sum(n)::int as n from app_private.enrollment_counts where sequence_id = $1
    group by 1 having sum(n) <> 0 order by 1`, [sequenceId])).rows;
  t.deepEqual(counted, exact);
  const { rows: events } = await app.db.owner.query(`select e.id, count(v.id)::int as n from app_public.enrollments e
      left join app_public.enrollment_events v on v.enrollment_id = e.id and v.type = 'cancelled'
     where e.sequence_id = $1 and e.status = 'cancelled' group by 1`, [sequenceId]);
  t.true(events.length > 0, 'some were cancelled');
  t.deepEqual(events.filter((x) => x.n !== 1), [], 'one cancelled event per cancelled enrollment');
  const total = (await app.request('GET', base, { key: acme.keys.org })).body.total;
  t.is(total, exact.reduce((a, x) => a + x.n, 0));
});
