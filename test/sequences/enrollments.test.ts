// Reading enrollments (spec: Enrollment; Endpoints → Sequences): a sequence's list with its
// filters and paging, one enrollment with its step runs and events in order, cancelling (twice:
// the same row), a contact's list; over REST and MCP; refusals change nothing.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { insertSequence } from './helpers.ts';
import { insertEnrollment, insertEvents, insertStepRun, readsFixture, seedReads, type ReadsData } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
let data: ReadsData;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(readsFixture()));
  other = await app.apply(readsFixture('Other Co'));
  data = await seedReads(app.db, acme);
  await seedReads(app.db, other);
});
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;
const key = () => acme.keys.org!;
const list = (sequenceId: string, query = '', k = key()) => app.request('GET', `/api/v1/sequences/${sequenceId}/enrollments${query}`, { key: k });
const get = (sequenceId: string, id: string, k = key()) => app.request('GET', `/api/v1/sequences/${sequenceId}/enrollments/${id}`, { key: k });
const cancel = (sequenceId: string, id: string, k = key()) =>
  app.request('POST', `/api/v1/sequences/${sequenceId}/enrollments/${id}/cancel`, { key: k });
const ofContact = (contactId: string, query = '', k = key()) => app.request('GET', `/api/v1/contacts/${contactId}/enrollments${query}`, { key: k });
const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((e) => e.id);
const missing = '00000000-0000-4000-8000-000000000000';

/** A sequence of its own with `n` enrollments of distinct new contacts, a minute apart (the last newest); their ids, oldest first. */
async function sequenceWith(n: number, statusOf: (i: number) => 'active' | 'paused' | 'completed' | 'cancelled' | 'failed' = () => 'active') {
  const sequenceId = await insertSequence(app.db, org(), { name: `Paged ${Math.random()}` });
  const { rows } = await app.db.owner.query(`insert into app_public.contacts (organization_id, name, email)
    select $1, 'Paged ' || i, 'paged-' || $2::text || '-' || i || '@example.com' from generate_series(1, $3::int) i returning id`,
  [org(), sequenceId.slice(0, 8), n]);
  const out: string[] = [];
  for (const [i, r] of rows.entries()) {
    out.push(await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: r.id, status: statusOf(i),
      created_at: new Date(Date.UTC(2026, 0, 2, 0, i)).toISOString() }));
  }
  return { sequenceId, enrollments: out };
}

test.serial('a sequence\'s enrollments: newest first, paged, with an exact total', async (t) => {
  const { sequenceId, enrollments } = await sequenceWith(7);
  const first = await list(sequenceId, '?limit=3');
  t.is(first.status, 200, JSON.stringify(first.body));
  t.like(first.body, { total: 7, page: 1, limit: 3 });
  const newestFirst = [...enrollments].reverse();
  t.deepEqual(ids(first), newestFirst.slice(0, 3));
  t.deepEqual(ids(await list(sequenceId, '?limit=3&page=2')), newestFirst.slice(3, 6));
  t.deepEqual(ids(await list(sequenceId, '?limit=3&page=3')), newestFirst.slice(6));
  const past = await list(sequenceId, '?limit=3&page=9');
  t.is(past.status, 200);
  t.deepEqual(past.body, { items: [], total: 7, page: 9, limit: 3 }, 'a page past the end is empty');
  t.like((await list(sequenceId)).body, { total: 7, page: 1, limit: 25 });
  // equal creation times are ordered by id
  const tied = await insertSequence(app.db, org(), { name: 'Tied' });
  const at = '2026-03-01T00:00:00Z';
  const a = await insertEnrollment(app.db, org(), { sequence_id: tied, contact_id: acme.ids.ann!, created_at: at });
  const b = await insertEnrollment(app.db, org(), { sequence_id: tied, contact_id: acme.ids.bob!, created_at: at });
  t.deepEqual(ids(await list(tied)), [a, b].sort());
});

test.serial('each item is the enrollment with next_send_at: next_run_at (when it goes out), else next_step_due_at', async (t) => {
  const sequenceId = await insertSequence(app.db, org(), { name: 'Next send' });
  const due = await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: acme.ids.ann!,
    next_step_due_at: '2030-02-01T09:00:00Z', next_run_at: '2030-02-01T14:00:00Z', created_at: '2026-01-01T00:00:03Z' });
  const runOnly = await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: acme.ids.bob!,
    next_step_due_at: null, next_run_at: '2030-02-02T14:00:00Z', created_at: '2026-01-01T00:00:02Z' });
  const ended = await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: acme.ids.cy!, status: 'completed',
    end_reason: 'exit_condition', created_at: '2026-01-01T00:00:01Z' });
  const res = await list(sequenceId);
  t.is(res.status, 200);
  const [first, second, third] = res.body.items;
  t.is(first.id, due);
  t.is(Date.parse(first.next_send_at), Date.parse('2030-02-01T14:00:00Z'), 'the step goes out at next_run_at, in the window');
  t.is(Date.parse(first.next_run_at), Date.parse('2030-02-01T14:00:00Z'));
  t.is(second.id, runOnly);
  t.is(Date.parse(second.next_send_at), Date.parse('2030-02-02T14:00:00Z'));
  t.is(third.id, ended);
  t.like(third, { status: 'completed', next_send_at: null, current_step_key: null, end_reason: 'exit_condition' });
  t.deepEqual(Object.keys(first).sort(), ['contact_id', 'created_at', 'current_step_index', 'current_step_key', 'end_reason', 'id',
    'next_run_at', 'next_send_at', 'next_step_due_at', 'paused_at', 'sequence_id', 'source', 'status', 'updated_at']);
});

test.serial('filters: status, contact_id, and email (case-insensitive, wins over contact_id, unknown: an empty page)', async (t) => {
  const statuses = ['active', 'paused', 'completed', 'cancelled', 'failed'] as const;
  const { sequenceId, enrollments } = await sequenceWith(10, (i) => statuses[i % 5]!);
  for (const [i, status] of statuses.entries()) {
    const res = await list(sequenceId, `?status=${status}`);
    t.is(res.status, 200);
    t.is(res.body.total, 2, status);
    t.deepEqual(ids(res), [enrollments[i + 5], enrollments[i]], status);
    t.true(res.body.items.every((e: { status: string }) => e.status === status));
  }
  t.deepEqual(ids(await list(sequenceId, '?status=paused&limit=1&page=2')), [enrollments[1]]);

  // ann twice in the orgWide sequence (once ended), bob once
  const again = await insertEnrollment(app.db, org(), { sequence_id: data.orgWide, contact_id: acme.ids.ann!, status: 'cancelled',
    created_at: '2025-12-01T00:00:00Z' });
  const byContact = await list(data.orgWide, `?contact_id=${acme.ids.ann}`);
  t.deepEqual(ids(byContact), [data.enrollments['orgWide.ann'], again]);
  t.is(byContact.body.total, 2);
  t.deepEqual(ids(await list(data.orgWide, `?contact_id=${acme.ids.ann}&status=cancelled`)), [again]);
  t.deepEqual(ids(await list(data.orgWide, '?email=ANN@Example.COM')), [data.enrollments['orgWide.ann'], again]);
  t.deepEqual(ids(await list(data.orgWide, '?email=dee@example.com')), [data.enrollments['orgWide.dee']], 'stored as Dee@Example.com');
  t.deepEqual(ids(await list(data.orgWide, `?email=bob@example.com&contact_id=${acme.ids.ann}`)), [data.enrollments['orgWide.bob']],
    'email wins over contact_id');
  for (const q of ['?email=nobody@example.com', `?email=nobody@example.com&contact_id=${acme.ids.ann}`, `?contact_id=${missing}`]) {
    const res = await list(data.orgWide, q);
    t.is(res.status, 200, q);
    t.deepEqual(res.body, { items: [], total: 0, page: 1, limit: 25 }, q);
  }
  // another organization's contact, by id or by email: nothing of it
  t.is((await list(data.orgWide, `?contact_id=${other.ids.ann}`)).body.total, 0);
  t.is((await list(data.orgWide, `?contact_id=${acme.ids.ann}`, other.keys.org)).status, 404, 'the sequence is not theirs');
  await app.db.owner.query(`delete from app_public.enrollments where id = $1`, [again]);
});

test.serial('malformed queries are 400 and unknown sequences 404, changing nothing', async (t) => {
  for (const q of ['?status=done', '?status=ACTIVE', '?contact_id=x', '?email=not-an-email', '?limit=0', '?limit=101', '?page=0',
    '?page=x', '?emial=a@b.co', '?status=active&status=paused']) {
    await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => list(data.orgWide, q));
  }
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => list('nope'));
  for (const sequenceId of [missing, (await app.db.owner.query(`select id from app_public.sequences where organization_id = $1 limit 1`,
    [other.organization_id])).rows[0].id]) {
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => list(sequenceId));
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => app.request('GET', `/api/v1/sequences/${sequenceId}/analytics`, { key: key() }));
  }
});

test.serial('one enrollment: its step runs, and its events in order of occurrence', async (t) => {
  const sequenceId = await insertSequence(app.db, org(), { name: 'Detail' });
  const id = await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: acme.ids.ann!, created_at: '2026-01-01T00:00:00Z' });
  const message = '11111111-1111-4111-8111-111111111111';
  await insertStepRun(app.db, org(), id, { step_key: 'hello', status: 'sent', message_id: message, created_at: '2026-01-01T00:00:01Z' });
  await insertStepRun(app.db, org(), id, { step_key: 'pause', step_type: 'wait', status: 'waited', created_at: '2026-01-01T00:00:02Z' });
  await insertStepRun(app.db, org(), id, { step_key: 'nudge', step_type: 'sms', status: 'skipped', reason: 'no_consent',
    created_at: '2026-01-02T00:00:00Z' });
  // written out of time order on purpose: the order is the order of occurrence (insertion), even at equal times
  await insertEvents(app.db, org(), id, [
    { type: 'enrolled', at: '2026-01-01T00:00:00Z' },
    { type: 'sent', at: '2026-01-01T00:00:01Z', step_key: 'hello', message_id: message },
    { type: 'delivered', at: '2026-01-01T00:00:01Z', step_key: 'hello', message_id: message },
    { type: 'bounced', at: '2026-01-01T00:00:01Z', step_key: 'hello', message_id: message, reason: 'soft' },
    { type: 'replied', at: '2026-01-01T00:00:00Z', step_key: 'hello' },
    { type: 'skipped', at: '2026-01-02T00:00:00Z', step_key: 'nudge', reason: 'no_consent' },
  ]);
  const res = await get(sequenceId, id);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { id, sequence_id: sequenceId, contact_id: acme.ids.ann, status: 'active' });
  t.deepEqual(res.body.step_runs.map((r: { step_key: string; status: string }) => [r.step_key, r.status]),
    [['hello', 'sent'], ['pause', 'waited'], ['nudge', 'skipped']]);
  t.like(res.body.step_runs[0], { step_type: 'email', message_id: message, reason: null });
  t.like(res.body.step_runs[2], { step_type: 'sms', message_id: null, reason: 'no_consent' });
  t.deepEqual(res.body.events.map((v: { type: string }) => v.type), ['enrolled', 'sent', 'delivered', 'bounced', 'replied', 'skipped']);
  t.deepEqual(Object.keys(res.body.events[0]).sort(), ['at', 'type'], 'absent fields are left out');
  t.deepEqual(Object.keys(res.body.events[3]).sort(), ['at', 'message_id', 'reason', 'step_key', 'type']);
  t.like(res.body.events[1], { step_key: 'hello', message_id: message });

  t.is((await get(data.orgWide, id)).status, 404, 'not of that sequence');
  t.is((await get(sequenceId, missing)).status, 404);
  t.is((await get(sequenceId, id, other.keys.org)).status, 404, 'another organization');
  t.is((await get(sequenceId, 'x')).status, 400);
});

test.serial('cancel: a live enrollment becomes cancelled with one event; again, the same row', async (t) => {
  const sequenceId = await insertSequence(app.db, org(), { name: 'Cancel' });
  const active = await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: acme.ids.ann!, current_step_key: 'hello' });
  const first = await cancel(sequenceId, active);
  t.is(first.status, 200, JSON.stringify(first.body));
  t.like(first.body, { id: active, status: 'cancelled', end_reason: 'cancelled', next_step_due_at: null, next_run_at: null,
    current_step_key: 'hello' });
  const again = await unchanged(t, app, org(), () => cancel(sequenceId, active), 'a repeat changes nothing');
  t.is(again.status, 200);
  t.deepEqual(again.body, first.body, 'the same row');
  const events = (await get(sequenceId, active)).body.events;
  t.deepEqual(events.map((v: { type: string; reason?: string; step_key?: string }) => [v.type, v.reason, v.step_key]),
    [['cancelled', 'cancelled', 'hello']]);
  t.true(Date.parse(first.body.updated_at) > Date.parse(first.body.created_at), 'updated_at is when it ended');

  const paused = await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: acme.ids.bob!, status: 'paused' });
  t.like((await cancel(sequenceId, paused)).body, { status: 'cancelled', paused_at: null });
  // completed and failed are answered as they are: cancel does not rewrite how an enrollment ended
  for (const status of ['completed', 'failed'] as const) {
    const ended = await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: acme.ids.cy!, status });
    const before = (await list(sequenceId, `?contact_id=${acme.ids.cy}&status=${status}`)).body.items[0];
    const res = await unchanged(t, app, org(), () => cancel(sequenceId, ended));
    t.is(res.status, 200);
    const { next_send_at: _, ...row } = before;
    t.deepEqual(res.body, row, status);
  }
});

test.serial('cancel refusals change nothing: another sequence, unknown ids, another organization', async (t) => {
  const id = data.enrollments['north.ann']!;
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => cancel(data.orgWide, id));
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => cancel(data.north, missing));
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => cancel(missing, id));
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => cancel(data.north, id, other.keys.org));
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => cancel(data.north, 'x'));
  t.is((await get(data.north, id)).body.status, 'active');
});

test.serial('concurrent cancels of one enrollment: all answer the cancelled row, one event', async (t) => {
  const sequenceId = await insertSequence(app.db, org(), { name: 'Racing cancels' });
  const id = await insertEnrollment(app.db, org(), { sequence_id: sequenceId, contact_id: acme.ids.dee! });
  const answers = await Promise.all(Array.from({ length: 12 }, () => cancel(sequenceId, id)));
  t.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
  t.is(new Set(answers.map((a) => JSON.stringify(a.body))).size, 1, 'every answer is the same row');
  t.is(answers[0]!.body.status, 'cancelled');
  const { rows } = await app.db.owner.query(`select type from app_public.enrollment_events where enrollment_id = $1`, [id]);
  t.deepEqual(rows.map((r) => r.type), ['cancelled']);
});

test.serial('a contact\'s enrollments: newest first, with sequence_name and next_send_at = next_run_at', async (t) => {
  const res = await ofContact(acme.ids.ann!);
  t.is(res.status, 200, JSON.stringify(res.body));
  const own = [data.enrollments['orgWide.ann'], data.enrollments['north.ann'], data.enrollments['south.ann']];
  t.deepEqual(ids(res).filter((id) => own.includes(id)), [...own].reverse(), 'newest first');
  const north = res.body.items.find((e: { id: string }) => e.id === data.enrollments['north.ann']);
  t.is(north.sequence_name, 'North follow-up');
  t.is(Date.parse(north.next_send_at), Date.parse(north.next_run_at));
  t.not(north.next_run_at, north.next_step_due_at);
  const paged = await ofContact(acme.ids.ann!, '?limit=1&page=2');
  t.is(paged.body.items.length, 1);
  t.is(paged.body.total, res.body.total);
  t.is(paged.body.items[0].id, res.body.items[1].id);
  t.deepEqual((await ofContact(acme.ids.cy!, '?page=50')).body.items, []);
  for (const [contactId, k] of [[missing, key()], [acme.ids.ann!, other.keys.org!], [other.ids.ann!, key()]]) {
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => ofContact(contactId!, '', k));
  }
  for (const q of ['?limit=0', '?page=-1', '?status=active']) await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => ofContact(acme.ids.ann!, q));
});

test.serial('over MCP: the same answers and errors', async (t) => {
  const listed = await callTool(app, key(), 'sequences_list_enrollments', { sequenceId: data.south, email: 'BOB@example.com' });
  t.false(listed.isError);
  t.deepEqual(ids({ body: listed.body }), [data.enrollments['south.bob']]);
  const one = await callTool(app, key(), 'sequences_get_enrollment', { sequenceId: data.south, enrollmentId: data.enrollments['south.cy'] });
  t.like(one.body, { id: data.enrollments['south.cy'], step_runs: [], events: [] });
  const contact = await callTool(app, key(), 'contacts_list_enrollments', { contactId: acme.ids.bob, limit: 2 });
  t.like(contact.body, { limit: 2, page: 1 });
  const analytics = await callTool(app, key(), 'sequences_analytics', { sequenceId: data.south });
  t.like(analytics.body, { email_delivery_reporting: 'supported', rollup: { enrolled: 4 } });
  const id = await insertEnrollment(app.db, org(), { sequence_id: data.south, contact_id: acme.ids.bob!, status: 'paused',
    created_at: '2025-01-01T00:00:00Z' }).catch(() => undefined);
  t.is(id, undefined, 'bob is already live in South: the one-live index refuses a second');
  const cancelled = await callTool(app, key(), 'sequences_cancel_enrollment', { sequenceId: data.south, enrollmentId: data.enrollments['south.cy'] });
  t.like(cancelled.body, { status: 'cancelled' });
  const again = await callTool(app, key(), 'sequences_cancel_enrollment', { sequenceId: data.south, enrollmentId: data.enrollments['south.cy'] });
  t.deepEqual(again.body, cancelled.body);
  const notFound = await callTool(app, key(), 'sequences_get_enrollment', { sequenceId: data.north, enrollmentId: data.enrollments['south.cy'] });
  t.true(notFound.isError);
  t.like(notFound.body, { statusCode: 404, error: 'not_found' });
  const bad = await callTool(app, key(), 'sequences_list_enrollments', { sequenceId: data.south, status: 'gone' });
  t.like(bad.body, { statusCode: 400 });
});

test.serial('the counts behind total stay exact through inserts, status changes, folds and deletes', async (t) => {
  const { sequenceId, enrollments } = await sequenceWith(40);
  const exact = async () => (await app.db.owner.query(`select status, count(*)::int as n from app_public.enrollments
    where sequence_id = $1 group by 1 order by 1`, [sequenceId])).rows;
  const counted = async () => (await app.db.owner.query(`select status, sum(n)::int as n from app_private.enrollment_counts
    where sequence_id = $1 group by 1 having sum(n) <> 0 order by 1`, [sequenceId])).rows;
  t.deepEqual(await counted(), await exact());
  for (const id of enrollments.slice(0, 15)) await cancel(sequenceId, id);
  await app.db.owner.query(`update app_public.enrollments set status = 'completed', end_reason = 'exit_condition'
    where id = any($1::uuid[])`, [enrollments.slice(15, 20)]);
  await app.db.owner.query(`update app_public.enrollments set status = 'paused', paused_at = now() where id = any($1::uuid[])`,
    [enrollments.slice(20, 25)]);
  await app.db.owner.query(`update app_public.enrollments set next_run_at = now() where id = any($1::uuid[])`, [enrollments.slice(25)]);
  t.deepEqual(await counted(), await exact());
  await app.db.owner.query(`select app_private.fold_enrollment_counts($1, $2)`, [org(), sequenceId]);
  t.is((await app.db.owner.query(`select count(*)::int as n from app_private.enrollment_counts where sequence_id = $1`, [sequenceId])).rows[0].n,
    4, 'folded: one row per status');
  await app.db.owner.query(`delete from app_public.enrollments where id = any($1::uuid[])`, [enrollments.slice(0, 3)]);
  t.deepEqual(await counted(), await exact());
  t.is((await list(sequenceId)).body.total, 37);
  t.is((await list(sequenceId, '?status=cancelled')).body.total, 12);
  t.is((await list(sequenceId, '?status=paused', acme.keys.north_seq_mgr)).body.total, 0, 'limited callers count what they see');
});
