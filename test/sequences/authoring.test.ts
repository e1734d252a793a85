// Authoring sequences (spec: Sequence, States and transitions → Sequence status; sequences.md):
// create, read, list, update, duplicate; every activation blocker; pause, resume and deactivate
// with what they do to enrollments; every refusal with its code and nothing written.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { rows } from '../helpers/sql.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { automation, sequencesFixture } from './authoring-helpers.ts';

let app: TestApp;
let acme: Applied;
let bare: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(sequencesFixture()));
  // an organization with no sending domain, no numbers and no send schedule
  const f = sequencesFixture('Bare');
  f.organization.sending_email_domain = null as unknown as string;
  f.organization.default_sms_number = null as unknown as string;
  f.locations = f.locations.map((l) => ({ ...l, sms_number: undefined })) as typeof f.locations;
  f.send_schedules = [];
  bare = await app.apply(f);
});
test.after.always(async () => { await app?.close(); });

const create = (body: unknown, key = acme.keys.org) => app.request('POST', '/api/v1/sequences', { key, body });
const get = (id: string, key = acme.keys.org) => app.request('GET', `/api/v1/sequences/${id}`, { key });
const patch = (id: string, body: unknown, key = acme.keys.org) => app.request('PATCH', `/api/v1/sequences/${id}`, { key, body });
const post = (id: string, action: string, key = acme.keys.org) => app.request('POST', `/api/v1/sequences/${id}/${action}`, { key });

async function created(body: unknown = automation(), key = acme.keys.org): Promise<any> {
  const res = await create(body, key);
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
async function active(body: unknown = automation()): Promise<any> {
  const s = await created(body);
  const res = await post(s.id, 'activate');
  if (res.status !== 200) throw new Error(`activate: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Enrollments of a sequence written as the owner (the engine's part is not needed here). */
async function enroll(sequenceId: string, contacts: string[], over: { status?: string; step?: string; dueIn?: string; pausedAgo?: string } = {},
  org = acme): Promise<string[]> {
  const ids: string[] = [];
  for (const c of contacts) {
    const [r] = await rows(app, `insert into app_public.enrollments (organization_id, sequence_id, contact_id, status, current_step_index,
        current_step_key, next_step_due_at, next_run_at, paused_at)
      values ($1, $2, $3, $4, 0, $5, now() + $6::interval, now() + $6::interval + interval '1 minute',
        case when $4 = 'paused' then now() - $7::interval end) returning id`,
    [org.organization_id, sequenceId, c, over.status ?? 'active', over.step ?? 'hello', over.dueIn ?? '1 hour', over.pausedAgo ?? '0']);
    ids.push(r.id);
  }
  return ids;
}
const enrollments = (sequenceId: string) => rows(app, `select * from app_public.enrollments where sequence_id = $1 order by created_at, id`, [sequenceId]);
const events = (enrollmentId: string) => rows(app, `select type, step_key, reason from app_public.enrollment_events where enrollment_id = $1 order by id`, [enrollmentId]);

test.serial('create answers 201 with the record of sequences.md; get and list read it back', async (t) => {
  const res = await create({ ...automation(), name: '  Abandoned assessment follow-up ', location_id: acme.ids.north,
    send_schedule_id: acme.ids.office });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.deepEqual(Object.keys(res.body).sort(), ['audience', 'created_at', 'edges', 'exit_conditions', 'id', 'is_active', 'kind',
    'location_id', 'name', 'send_schedule_id', 'status', 'steps', 'trigger', 'updated_at']);
  t.like(res.body, { kind: 'automation', status: 'inactive', is_active: false, name: 'Abandoned assessment follow-up',
    location_id: acme.ids.north, send_schedule_id: acme.ids.office, audience: null,
    trigger: { type: 'event', event: 'assessment_abandoned', assessmentAudience: 'started' } });
  t.deepEqual(res.body.steps, automation().steps);
  t.deepEqual(res.body.exit_conditions, automation().exit_conditions);
  t.deepEqual((await get(res.body.id)).body, res.body);
  const list = await app.request('GET', '/api/v1/sequences', { key: acme.keys.org });
  t.is(list.status, 200);
  t.true(Array.isArray(list.body), 'an array');
  t.deepEqual(list.body[0], res.body, 'newest first');
});

test.serial('a step without a delay gets {minutes: 0}; an edge without a condition gets null', async (t) => {
  const s = await created({ name: 'Defaults', steps: [{ step_key: 'a', type: 'email' }, { step_key: 'b', type: 'sms', body: 'x' }],
    edges: [{ from: 'a', to: 'b' }] });
  t.deepEqual(s.steps, [{ step_key: 'a', type: 'email', delay: { minutes: 0 } }, { step_key: 'b', type: 'sms', delay: { minutes: 0 }, body: 'x' }]);
  t.deepEqual(s.edges, [{ from: 'a', to: 'b', condition: null }]);
  t.is(s.trigger, null);
  t.is(s.kind, 'automation');
});

test.serial('a broadcast has an audience ({id} or the id) and no trigger; kind is fixed', async (t) => {
  const audience = (await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'Everyone', kind: 'dynamic' } })).body;
  const a = await created({ name: 'News', kind: 'broadcast', audience: { id: audience.id }, steps: automation().steps.slice(0, 1) });
  t.like(a, { kind: 'broadcast', audience: { id: audience.id }, trigger: null });
  const b = await created({ name: 'News 2', kind: 'broadcast', audience: audience.id });
  t.deepEqual(b.audience, { id: audience.id });
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => patch(a.id, { kind: 'automation' }));
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => patch(a.id, { trigger: { type: 'manual' } }));
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => create({ name: 'x', kind: 'broadcast', audience: audience.id, trigger: { type: 'manual' } }));
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create({ name: 'x', audience: audience.id }));
  // activated, a broadcast is active and sends nothing by itself
  const activated = await post(a.id, 'activate');
  t.is(activated.status, 200, JSON.stringify(activated.body));
  t.is(activated.body.status, 'active');
  t.deepEqual(await rows(app, `select 1 from graphile_worker.jobs where key like 'sequence_%'`), []);
  t.deepEqual(await enrollments(a.id), []);
});

test.serial('create refuses is_active: true (400), and unknown audience, location or send schedule (404), writing nothing', async (t) => {
  const org = acme.organization_id;
  const otherAudience = (await app.request('POST', '/api/v1/audiences', { key: bare.keys.org, body: { name: 'Theirs' } })).body.id;
  const res = await refusedWithoutWrites(t, app, org, 400, 'bad_request', () => create({ ...automation(), is_active: true }));
  t.regex(res.body.message, /is_active/);
  t.is((await create({ ...automation(), name: 'Inactive on purpose', is_active: false })).status, 201);
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => create({ name: 'b', kind: 'broadcast', audience: { id: otherAudience } }));
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => create({ name: 'b', kind: 'broadcast', audience: '00000000-0000-4000-8000-000000000000' }));
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => create({ ...automation(), location_id: bare.ids.north }));
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => create({ ...automation(), send_schedule_id: '00000000-0000-4000-8000-000000000001' }));
});

test.serial('create validates steps, edges, triggers and exit conditions, naming the part', async (t) => {
  const org = acme.organization_id;
  const steps = automation().steps;
  const cases: [unknown, RegExp][] = [
    [{ name: '' }, /name/],
    [{ name: 'x', kind: 'drip' }, /kind/],
    [{ name: 'x', steps: [steps[0], steps[0]] }, /step_key|unique/],
    [{ name: 'x', steps: [{ step_key: 'bad key', type: 'email' }] }, /step_key/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'fax' }] }, /type/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'wait', delay: { weeks: 1 } }] }, /delay/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'wait', delay: { hours: 1, days: 1 } }] }, /delay/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'wait', delay: { days: 366 } }] }, /delay/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'wait', delay: { minutes: -1 } }] }, /delay/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'wait', delay: { hours: 1.5 } }] }, /delay/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'wait', body: 'no' }] }, /body/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'sms', subject: 'no', body: 'x' }] }, /subject/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'sms', body: 'x'.repeat(1601) }] }, /body/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'email', subject: 'x'.repeat(301) }] }, /subject/],
    [{ name: 'x', steps: Array.from({ length: 51 }, (_, i) => ({ step_key: `s${i}`, type: 'wait' })) }, /steps/],
    [{ name: 'x', steps, edges: [{ from: 'hello', to: 'nowhere' }] }, /edges\.0\.to/],
    [{ name: 'x', steps, edges: [{ from: 'hello', to: 'nudge', condition: { field: 'event.bounced', op: 'exists' } }] }, /condition/],
    [{ name: 'x', steps, edges: [{ from: 'hello', to: 'nudge', condition: { field: 'field_values.nope', op: 'exists' } }] }, /custom field/],
    [{ name: 'x', steps, edges: [{ from: 'hello', to: 'nudge', condition: { field: 'email', op: 'gt', value: 'a' } }] }, /condition/],
    [{ name: 'x', trigger: { type: 'review_left', location_id: '00000000-0000-4000-8000-000000000000' } }, /trigger\.type/],
    [{ name: 'x', trigger: { type: 'call_completed' } }, /trigger\.type/],
    [{ name: 'x', trigger: { type: 'appointment_booked', location_id: 'north' } }, /trigger\.location_id/],
    [{ name: 'x', trigger: { type: 'event' } }, /trigger\.event/],
    [{ name: 'x', trigger: { type: 'event', event: 'Bad Name' } }, /trigger\.event/],
    [{ name: 'x', trigger: { type: 'event', event: 'signup', assessmentAudience: 'started' } }, /assessmentAudience/],
    [{ name: 'x', trigger: { type: 'event', event: 'assessment_abandoned', assessmentAudience: 'some' } }, /assessmentAudience/],
    [{ name: 'x', trigger: { type: 'tag_added' } }, /trigger\.tag/],
    [{ name: 'x', trigger: { type: 'manual', tag: 'x' } }, /trigger\.tag/],
    [{ name: 'x', exit_conditions: [{ type: 'form_submitted' }] }, /exit_conditions\.0\.type/],
    [{ name: 'x', exit_conditions: [{ type: 'appointment_booked', location_id: 'north' }] }, /exit_conditions\.0\.location_id/],
    [{ name: 'x', exit_conditions: [{ type: 'stage_changed', stage_id: '00000000-0000-4000-8000-000000000000' }] }, /stage/],
    [{ name: 'x', exit_conditions: [{ type: 'condition', condition: { field: 'nope', op: 'exists' } }] }, /condition/],
    [{ name: 'x', exit_conditions: [{ type: 'tag_added', tag: 'x'.repeat(121) }] }, /tag/],
  ];
  for (const [body, message] of cases) {
    const res = await refusedWithoutWrites(t, app, org, 400, 'bad_request', () => create(body));
    t.regex(res.body.message ?? '', message, JSON.stringify(body).slice(0, 200));
  }
});

test.serial('every activation blocker at once, with its code and step', async (t) => {
  const audience = (await app.request('POST', '/api/v1/audiences', { key: bare.keys.org, body: { name: 'Gone' } })).body.id;
  await app.request('POST', `/api/v1/audiences/${audience}/archive`, { key: bare.keys.org });
  const s = await created({ name: 'Blocked', steps: [
    { step_key: 'mail', type: 'email', subject: 'Hi {{contact.nickname}}', body: '' },
    { step_key: 'text', type: 'sms', body: 'Hi {{contact.first name}}' },
  ], edges: [{ from: 'mail', to: 'text' }] }, bare.keys.org);
  // the edge's target disappears with a steps-only update: unknown_step_key
  const changed = await patch(s.id, { steps: [{ step_key: 'mail', type: 'email', subject: 'Hi {{contact.nickname}}', body: '' },
    { step_key: 'text2', type: 'sms', body: 'Hi {{contact.first name}}' }] }, bare.keys.org);
  t.is(changed.status, 200, JSON.stringify(changed.body));
  const res = await refusedWithoutWrites(t, app, bare.organization_id, 400, 'sequence_activation_blocked', () => post(s.id, 'activate', bare.keys.org));
  const codes = res.body.blockers.map((b: { code: string; step_key?: string }) => b.code + (b.step_key ? `:${b.step_key}` : ''));
  t.deepEqual(codes.sort(), ['empty_content:mail', 'missing_sending_domain', 'missing_sms_number', 'no_send_schedule', 'trigger_missing',
    'unknown_step_key:text', 'unknown_variable:mail', 'unknown_variable:text2'].sort());
  for (const b of res.body.blockers) t.true(typeof b.message === 'string' && b.message.length > 0);

  const empty = await created({ name: 'Empty', trigger: { type: 'manual' } });
  const none = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'sequence_activation_blocked', () => post(empty.id, 'activate'));
  t.deepEqual(none.body.blockers.map((b: { code: string }) => b.code), ['no_steps']);

  const gone = await created({ name: 'Gone', kind: 'broadcast', audience: audience, steps: [{ step_key: 'a', type: 'sms', body: 'x' }] }, bare.keys.org);
  const archived = await refusedWithoutWrites(t, app, bare.organization_id, 400, 'sequence_activation_blocked', () => post(gone.id, 'activate', bare.keys.org));
  t.true(archived.body.blockers.some((b: { code: string }) => b.code === 'audience_archived'));
  const missing = await created({ name: 'No audience', kind: 'broadcast', steps: [{ step_key: 'a', type: 'sms', body: 'x' }] });
  const blocked = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'sequence_activation_blocked', () => post(missing.id, 'activate'));
  t.deepEqual(blocked.body.blockers.map((b: { code: string }) => b.code), ['audience_missing']);
});

test.serial('activate: inactive → active; again, unchanged; the location\'s SMS number or the organization\'s will do', async (t) => {
  const s = await created({ ...automation(), location_id: acme.ids.south });
  const res = await post(s.id, 'activate');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { status: 'active', is_active: true });
  const again = await unchanged(t, app, acme.organization_id, () => post(s.id, 'activate'));
  t.deepEqual(again.body, res.body);
});

test.serial('pause: a broadcast is 400, an inactive sequence 409; every active enrollment held with a paused event', async (t) => {
  const audience = (await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'B' } })).body.id;
  const b = await created({ name: 'B', kind: 'broadcast', audience, steps: [{ step_key: 'a', type: 'sms', body: 'x' }] });
  await post(b.id, 'activate');
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => post(b.id, 'pause'));
  const draft = await created();
  await refusedWithoutWrites(t, app, acme.organization_id, 409, 'sequence_inactive', () => post(draft.id, 'pause'));

  const s = await active();
  const [e1, e2] = await enroll(s.id, [acme.ids.ann!, acme.ids.bob!]);
  const [done] = await enroll(s.id, [acme.ids.cy!], { status: 'completed' });
  const res = await post(s.id, 'pause');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { status: 'paused', is_active: true });
  const after = await enrollments(s.id);
  t.deepEqual(after.map((e) => e.status).sort(), ['completed', 'paused', 'paused']);
  t.true(after.filter((e) => e.status === 'paused').every((e) => e.paused_at !== null));
  t.deepEqual(await events(e1!), [{ type: 'paused', step_key: 'hello', reason: null }]);
  t.deepEqual(await events(e2!), [{ type: 'paused', step_key: 'hello', reason: null }]);
  t.deepEqual(await events(done!), []);
  // pausing again changes nothing
  const again = await unchanged(t, app, acme.organization_id, () => post(s.id, 'pause'));
  t.is(again.status, 200);
});

test.serial('resume when not paused: 409 sequence_not_paused and nothing changes', async (t) => {
  const draft = await created();
  await refusedWithoutWrites(t, app, acme.organization_id, 409, 'sequence_not_paused', () => post(draft.id, 'resume'));
  const s = await active();
  await enroll(s.id, [acme.ids.ann!]);
  await refusedWithoutWrites(t, app, acme.organization_id, 409, 'sequence_not_paused', () => post(s.id, 'resume'));
});

test.serial('activate, or is_active: true, on a paused sequence: 409 sequence_paused and nothing changes (resume continues it)', async (t) => {
  const s = await active();
  await enroll(s.id, [acme.ids.ann!]);
  t.is((await post(s.id, 'pause')).status, 200);
  const res = await refusedWithoutWrites(t, app, acme.organization_id, 409, 'sequence_paused', () => post(s.id, 'activate'));
  t.regex(res.body.message, /sequences_resume/);
  await refusedWithoutWrites(t, app, acme.organization_id, 409, 'sequence_paused',
    () => app.request('PATCH', `/api/v1/sequences/${s.id}`, { key: acme.keys.org, body: { is_active: true } }));
  t.like((await post(s.id, 'resume')).body, { status: 'active' });
});

test.serial('pause for N hours then resume: every due time moved forward by N hours, resumed events, one job each from the sweep', async (t) => {
  const s = await active();
  await post(s.id, 'pause');
  // enrollments held for 5 hours (paused_at set back), due at different times
  const ids = await enroll(s.id, [acme.ids.ann!, acme.ids.bob!, acme.ids.cy!], { status: 'paused', pausedAgo: '5 hours', dueIn: '2 hours' });
  await rows(app, `update app_public.enrollments set next_step_due_at = next_step_due_at + interval '1 day', next_run_at = next_run_at + interval '1 day'
    where id = $1`, [ids[2]]);
  const before = await enrollments(s.id);
  const res = await post(s.id, 'resume');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { status: 'active', is_active: true });
  const after = await enrollments(s.id);
  for (const [i, e] of after.entries()) {
    const b = before[i]!;
    t.is(e.status, 'active');
    t.is(e.paused_at, null);
    const moved = (e.next_step_due_at.getTime() - b.next_step_due_at.getTime()) / 3_600_000;
    const movedRun = (e.next_run_at.getTime() - b.next_run_at.getTime()) / 3_600_000;
    t.true(Math.abs(moved - 5) < 0.05, `due moved by ${moved} hours`);
    t.true(Math.abs(movedRun - 5) < 0.05, `run moved by ${movedRun} hours`);
    t.deepEqual(await events(e.id), [{ type: 'resumed', step_key: 'hello', reason: null }]);
  }
  // due hours from now: the resume added no job; the sweep adds each, at its moved run time, once
  // that comes near
  const stepJobs = () => rows(app, `select key, run_at from graphile_worker.jobs where key = any($1)`, [ids.map((id) => `sequence_step:${id}`)]);
  t.deepEqual(await stepJobs(), []);
  const last = new Date(Math.max(...after.map((e) => e.next_run_at.getTime())) + 60_000); // a minute past the last (Date drops µs)
  await rows(app, `select app_private.sweep_enrollment_steps($1, $2)`, [acme.organization_id, last]);
  const jobs = await stepJobs();
  t.is(jobs.length, 3);
  for (const j of jobs) {
    const e = after.find((x) => `sequence_step:${x.id}` === j.key)!;
    t.is(j.run_at.getTime(), e.next_run_at.getTime());
  }
});

test.serial('resume puts the moved due time back into the send window: a step moved past the window waits for its next opening', async (t) => {
  // one daily window, six hours after the time the step will be due once moved by the 5 hours held
  const dueAfter = new Date(Date.now() + 7 * 3_600_000); // due in 2 hours, held 5
  const opens = (dueAfter.getUTCHours() + 6) % 24;
  const hh = (h: number) => String(h).padStart(2, '0');
  const windows = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
    .map((day) => ({ day, start: `${hh(opens)}:00`, end: opens === 23 ? '24:00' : `${hh(opens + 1)}:00` }));
  const [schedule] = await rows(app, `insert into app_public.send_schedules (organization_id, name, timezone, windows)
    values ($1, 'One hour a day', 'UTC', $2::jsonb) returning id`, [acme.organization_id, JSON.stringify(windows)]);
  const s = await active({ ...automation(), send_schedule_id: schedule.id });
  await post(s.id, 'pause');
  const [id] = await enroll(s.id, [acme.ids.ann!], { status: 'paused', pausedAgo: '5 hours', dueIn: '2 hours' });
  t.is((await post(s.id, 'resume')).status, 200);
  const [e] = await rows(app, `select next_step_due_at, next_run_at,
      app_hidden.next_send_time('UTC', $2::jsonb, next_step_due_at) as opening
    from app_public.enrollments where id = $1`, [id, JSON.stringify(windows)]);
  t.true(Math.abs(e.next_step_due_at.getTime() - dueAfter.getTime()) < 120_000, 'due moved by the 5 hours held');
  t.is(e.next_run_at.getUTCHours(), opens, 'runs when the window opens');
  t.is(e.next_run_at.getTime(), e.opening.getTime());
  t.true(e.next_run_at.getTime() > e.next_step_due_at.getTime());
  await rows(app, `select app_private.sweep_enrollment_steps($1, $2::timestamptz + interval '1 minute')`, [acme.organization_id, e.next_run_at]);
  const [job] = await rows(app, `select run_at from graphile_worker.jobs where key = $1`, [`sequence_step:${id}`]);
  t.is(job.run_at.getTime(), e.next_run_at.getTime());
});

test.serial('is_active: false deactivates and cancels every live enrollment; resume cannot undo it', async (t) => {
  const s = await active();
  const [live] = await enroll(s.id, [acme.ids.ann!]);
  await post(s.id, 'pause');
  const [held] = await enroll(s.id, [acme.ids.bob!], { status: 'paused' });
  const res = await patch(s.id, { is_active: false });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { status: 'inactive', is_active: false });
  const after = await enrollments(s.id);
  t.deepEqual(after.map((e) => [e.status, e.end_reason]), [['cancelled', 'sequence_deactivated'], ['cancelled', 'sequence_deactivated']]);
  t.deepEqual((await events(live!)).map((e) => e.type), ['paused', 'cancelled']);
  t.deepEqual((await events(held!)).map((e) => e.type), ['cancelled']);
  await refusedWithoutWrites(t, app, acme.organization_id, 409, 'sequence_not_paused', () => post(s.id, 'resume'));
  // activated again, the cancelled enrollments stay cancelled
  t.is((await post(s.id, 'activate')).status, 200);
  t.deepEqual((await enrollments(s.id)).map((e) => e.status), ['cancelled', 'cancelled']);
});

test.serial('is_active: true on update activates (blockers refused as activate refuses them)', async (t) => {
  const s = await created();
  const res = await patch(s.id, { name: 'Renamed', is_active: true });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { name: 'Renamed', status: 'active' });
  const blocked = await created({ name: 'No steps', trigger: { type: 'manual' } });
  const refused = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'sequence_activation_blocked',
    () => patch(blocked.id, { name: 'Renamed', is_active: true }));
  t.deepEqual(refused.body.blockers.map((b: { code: string }) => b.code), ['no_steps']);
});

test.serial('update replaces lists whole; a step that enrollments stand on cannot disappear (400 naming it)', async (t) => {
  const s = await active();
  await enroll(s.id, [acme.ids.ann!], { step: 'nudge' });
  await enroll(s.id, [acme.ids.cy!], { step: 'hello', status: 'completed' });
  const steps = automation().steps;
  const res = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => patch(s.id, { steps: steps.slice(0, 2) }));
  t.regex(res.body.message, /nudge/);
  // hello may go: only a completed enrollment stood on it
  const ok = await patch(s.id, { steps: [steps[2], { ...steps[1], delay: { hours: 3 } }] });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(ok.body.steps.map((x: { step_key: string }) => x.step_key), ['nudge', 'wait']);
  const exits = await patch(s.id, { exit_conditions: [] });
  t.deepEqual(exits.body.exit_conditions, []);
  t.deepEqual(exits.body.steps, ok.body.steps, 'what is not sent stays');
  // on a live sequence, a change that would block activation is refused with the blockers
  const blocked = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'sequence_activation_blocked',
    () => patch(s.id, { steps: [{ step_key: 'nudge', type: 'sms', body: '{{oops}}' }] }));
  t.deepEqual(blocked.body.blockers.map((b: { code: string }) => b.code), ['unknown_variable']);
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => patch(s.id, {}));
  // deactivating in the same change cancels them, so the step may go
  const off = await patch(s.id, { is_active: false, steps: [steps[0]] });
  t.is(off.status, 200, JSON.stringify(off.body));
  t.deepEqual((await enrollments(s.id)).map((e) => e.status).sort(), ['cancelled', 'completed']);
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => patch(s.id, { send_schedule_id: '00000000-0000-4000-8000-000000000001' }));
});

test.serial('duplicate: an inactive copy named "… (copy)", without enrollments', async (t) => {
  const s = await active({ ...automation(), name: 'x'.repeat(200) });
  await enroll(s.id, [acme.ids.ann!]);
  const res = await post(s.id, 'duplicate');
  t.is(res.status, 201, JSON.stringify(res.body));
  t.not(res.body.id, s.id);
  t.like(res.body, { status: 'inactive', is_active: false, kind: s.kind, trigger: s.trigger, location_id: s.location_id });
  t.is(res.body.name, `${'x'.repeat(193)} (copy)`);
  t.deepEqual(res.body.steps, s.steps);
  t.deepEqual(res.body.exit_conditions, s.exit_conditions);
  t.deepEqual(await enrollments(res.body.id), []);
});

test.serial('unknown or malformed ids: 404 or 400, nothing written', async (t) => {
  const missing = '00000000-0000-4000-8000-000000000000';
  for (const [method, path] of [['GET', ''], ['PATCH', ''], ['POST', '/activate'], ['POST', '/pause'], ['POST', '/resume'], ['POST', '/duplicate']] as const) {
    await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
      () => app.request(method, `/api/v1/sequences/${missing}${path}`, { key: acme.keys.org, body: method === 'PATCH' ? { name: 'x' } : undefined }));
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
      () => app.request(method, `/api/v1/sequences/not-a-uuid${path}`, { key: acme.keys.org, body: method === 'PATCH' ? { name: 'x' } : undefined }));
  }
});

test.serial('create is idempotent: the same key and body answer the first sequence', async (t) => {
  const body = { ...automation(), name: 'Once', idempotency_key: 'once-1' };
  const first = await create(body);
  const second = await create(body);
  t.is(first.status, 201);
  t.deepEqual(second.body, first.body);
  t.is((await rows(app, `select count(*)::int as n from app_public.sequences where organization_id = $1 and name = 'Once'`, [acme.organization_id]))[0].n, 1);
  const reused = await create({ ...body, name: 'Other' });
  t.is(reused.status, 409);
  t.is(reused.body.error, 'idempotency_key_reused');
});

test.serial('a broadcast\'s audience changes by update; a live sequence cannot lose its trigger or audience', async (t) => {
  const a1 = (await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'A1' } })).body.id;
  const a2 = (await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'A2' } })).body.id;
  const b = await created({ name: 'Cast', kind: 'broadcast', audience: a1, steps: [{ step_key: 'a', type: 'sms', body: 'x' }] });
  const moved = await patch(b.id, { audience: { id: a2 } });
  t.deepEqual(moved.body.audience, { id: a2 });
  await post(b.id, 'activate');
  const lost = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'sequence_activation_blocked', () => patch(b.id, { audience: null }));
  t.deepEqual(lost.body.blockers.map((x: { code: string }) => x.code), ['audience_missing']);
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => patch(b.id, { audience: '00000000-0000-4000-8000-000000000002' }));
  const s = await active();
  const noTrigger = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'sequence_activation_blocked', () => patch(s.id, { trigger: null }));
  t.deepEqual(noTrigger.body.blockers.map((x: { code: string }) => x.code), ['trigger_missing']);
  const other = await patch(s.id, { trigger: { type: 'tag_added', tag: 'vip' } });
  t.deepEqual(other.body.trigger, { type: 'tag_added', tag: 'vip' });
});
