// Sequences under concurrent writers: one idempotency key makes one sequence; racing resumes move
// due times once; racing pauses hold each enrollment once; activate, pause, resume, update and
// duplicate crossing each other never answer 5xx and leave the sequence and its enrollments agreeing.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { prng } from '../helpers/random.ts';
import { rows } from '../helpers/sql.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { automation, sequencesFixture } from './authoring-helpers.ts';

let app: TestApp;
let acme: Applied;
let contacts: string[];
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(sequencesFixture()));
  // a few more contacts to enroll
  contacts = [acme.ids.ann!, acme.ids.bob!, acme.ids.cy!];
  for (let i = 0; i < 7; i++) {
    const [c] = await rows(app, `insert into app_public.contacts (organization_id, name, email) values ($1, $2, $3) returning id`,
      [acme.organization_id, `C ${i}`, `c${i}@example.com`]);
    contacts.push(c.id);
  }
});
test.after.always(async () => { await app?.close(); });

const key = () => acme.keys.org!;
async function activeWithEnrollments(name: string): Promise<string> {
  const s = await app.request('POST', '/api/v1/sequences', { key: key(), body: automation({ name }) });
  await app.request('POST', `/api/v1/sequences/${s.body.id}/activate`, { key: key() });
  for (const c of contacts) {
    await rows(app, `insert into app_public.enrollments (organization_id, sequence_id, contact_id, current_step_index, current_step_key,
      next_step_due_at, next_run_at) values ($1, $2, $3, 0, 'hello', now() + interval '1 hour', now() + interval '1 hour')`,
    [acme.organization_id, s.body.id, c]);
  }
  return s.body.id;
}

test('16 concurrent creates with one idempotency key make one sequence', async (t) => {
  const body = { ...automation({ name: 'Racing create' }), idempotency_key: 'race-1' };
  const answers = await Promise.all(Array.from({ length: 16 }, () => app.request('POST', '/api/v1/sequences', { key: key(), body })));
  const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.id));
  t.is(ids.size, 1, JSON.stringify(answers.map((a) => a.status)));
  for (const a of answers) t.true(a.status === 201 || (a.status === 409 && a.body.error === 'idempotency_in_progress'), `${a.status}`);
  const [n] = await rows(app, `select count(*)::int as n from app_public.sequences where organization_id = $1 and name = 'Racing create'`, [acme.organization_id]);
  t.is(n.n, 1);
});

test('racing resumes: one succeeds, the others answer 409, and every due time moves once', async (t) => {
  const id = await activeWithEnrollments('Racing resume');
  await app.request('POST', `/api/v1/sequences/${id}/pause`, { key: key() });
  await rows(app, `update app_public.enrollments set paused_at = now() - interval '3 hours' where sequence_id = $1`, [id]);
  const before = await rows(app, `select id, next_step_due_at from app_public.enrollments where sequence_id = $1 order by id`, [id]);
  const answers = await Promise.all(Array.from({ length: 8 }, () => app.request('POST', `/api/v1/sequences/${id}/resume`, { key: key() })));
  t.deepEqual(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409]);
  const after = await rows(app, `select id, status, next_step_due_at from app_public.enrollments where sequence_id = $1 order by id`, [id]);
  for (const [i, e] of after.entries()) {
    t.is(e.status, 'active');
    const moved = (e.next_step_due_at.getTime() - before[i]!.next_step_due_at.getTime()) / 3_600_000;
    t.true(Math.abs(moved - 3) < 0.05, `moved ${moved} hours`);
  }
  const [resumed] = await rows(app, `select count(*)::int as n from app_public.enrollment_events where enrollment_id = any($1) and type = 'resumed'`,
    [after.map((e) => e.id)]);
  t.is(resumed.n, contacts.length);
});

test('racing pauses hold each enrollment once', async (t) => {
  const id = await activeWithEnrollments('Racing pause');
  const answers = await Promise.all(Array.from({ length: 8 }, () => app.request('POST', `/api/v1/sequences/${id}/pause`, { key: key() })));
  t.true(answers.every((a) => a.status === 200));
  const [paused] = await rows(app, `select count(*)::int as n from app_public.enrollment_events ev join app_public.enrollments e on e.id = ev.enrollment_id
    where e.sequence_id = $1 and ev.type = 'paused'`, [id]);
  t.is(paused.n, contacts.length);
});

test('activate, pause, resume, update and duplicate crossing each other: no 5xx, and the enrollments agree with the sequence', async (t) => {
  const ids = [await activeWithEnrollments('Cross A'), await activeWithEnrollments('Cross B')];
  const r = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  await Promise.all(Array.from({ length: 12 }, async () => {
    for (let i = 0; i < 25; i++) {
      const id = pick(ids);
      const [method, path, body] = pick<[string, string, unknown]>([
        ['POST', `/api/v1/sequences/${id}/activate`, undefined],
        ['POST', `/api/v1/sequences/${id}/pause`, undefined],
        ['POST', `/api/v1/sequences/${id}/resume`, undefined],
        ['POST', `/api/v1/sequences/${id}/pause`, undefined],
        ['POST', `/api/v1/sequences/${id}/resume`, undefined],
        ['PATCH', `/api/v1/sequences/${id}`, { name: pick(['N1', 'N2']), steps: automation().steps }],
        ['POST', `/api/v1/sequences/${id}/duplicate`, undefined],
        ['GET', `/api/v1/sequences/${id}`, undefined],
      ]);
      const res = await app.request(method, path, { key: key(), body });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) failures.push(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    }
  }));
  t.log([...statuses].sort().map(([s, n]) => `${s}: ${n}`).join(', '));
  t.deepEqual(failures, []);
  for (const id of ids) {
    const [s] = await rows(app, `select status from app_public.sequences where id = $1`, [id]);
    const es = await rows(app, `select id, status from app_public.enrollments where sequence_id = $1`, [id]);
    const want = s.status === 'paused' ? 'paused' : 'active';
    t.true(es.every((e) => e.status === want), `${s.status}: ${es.map((e) => e.status).join(',')}`);
    // each enrollment's events alternate paused, resumed, paused, …
    for (const e of es) {
      const evs = (await rows(app, `select type from app_public.enrollment_events where enrollment_id = $1 order by id`, [e.id])).map((x) => x.type);
      t.true(evs.every((type, i) => type === (i % 2 ? 'resumed' : 'paused')), evs.join(','));
    }
  }
});
