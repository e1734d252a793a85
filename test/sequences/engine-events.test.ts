// How contacts enter and leave sequences without sequences_enroll: contacts_upsert events (keys
// spent once, receipts, assessmentAudience, cancel_events), tags, exits when the event arrives,
// and suppressions. Serial: they share the organization's sequences and subscriptions.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { drain, engineFixture, enroll, enrollment, enrollmentsOf, events, outbox } from './engine-helpers.ts';

let app: TestApp;
let tenant: Applied;
let org: string;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(engineFixture()));
  org = tenant.organization_id;
  await insertSendSchedule(app.db, org);
});
test.after.always(async () => {
  await app?.close();
});

const key = () => tenant.keys.org!;
const upsert = (body: Record<string, unknown>) => app.request('POST', '/api/v1/contacts', { key: key(), body });
const setStatus = (id: string, status: string) =>
  app.db.owner.query(`update app_public.sequences set status = $2, paused_at = case when $2 = 'paused' then now() end where id = $1`, [id, status]);

test.serial('an event enrolls in the active sequences it triggers; its key is spent once per organization', async (t) => {
  const seq = await insertSequence(app.db, org, { trigger: { type: 'event', event: 'quote_requested' } });
  const first = await upsert({ email: 'new1@example.com', name: 'New One', events: [{ name: 'quote_requested', key: 'q-1' }] });
  t.is(first.status, 200, JSON.stringify(first.body));
  let rows = await enrollmentsOf(app.db, seq);
  t.is(rows.length, 1);
  t.like(rows[0], { contact_id: first.body.id, source: 'event', entry_event: 'quote_requested', status: 'active' });
  // the same key again, even for another contact: nobody new
  await upsert({ email: 'new2@example.com', events: [{ name: 'quote_requested', key: 'q-1' }] });
  rows = await enrollmentsOf(app.db, seq);
  t.is(rows.length, 1);
  // a new key for the second contact enrolls it
  await upsert({ email: 'new2@example.com', events: [{ name: 'quote_requested', key: 'q-2' }] });
  t.is((await enrollmentsOf(app.db, seq)).length, 2);
  await setStatus(seq, 'inactive');
});

test.serial('assessment_abandoned: accepted with a key; the same key answers the first receipt; no subscriber leaves it unspent', async (t) => {
  const none = await upsert({ email: 'aa@example.com', events: [{ name: 'assessment_abandoned', key: 'sess-1' }], fields: { user_message_count: 2 } });
  t.deepEqual(none.body.assessmentAbandonment, { status: 'no_subscriber', key: 'sess-1' });

  const started = await insertSequence(app.db, org, { trigger: { type: 'event', event: 'assessment_abandoned', assessmentAudience: 'started' } });
  const never = await insertSequence(app.db, org, { trigger: { type: 'event', event: 'assessment_abandoned', assessmentAudience: 'never_started' } });
  const any = await insertSequence(app.db, org, { trigger: { type: 'event', event: 'assessment_abandoned' } });
  // the unspent key now enrolls: started (count 2) and the unfiltered one, not never_started
  const retry = await upsert({ email: 'aa@example.com', events: [{ name: 'assessment_abandoned', key: 'sess-1' }], fields: { user_message_count: 2 } });
  t.deepEqual(retry.body.assessmentAbandonment, { status: 'accepted', key: 'sess-1' });
  t.is((await enrollmentsOf(app.db, started)).length, 1);
  t.is((await enrollmentsOf(app.db, never)).length, 0);
  t.is((await enrollmentsOf(app.db, any)).length, 1);
  // the same key again: the first receipt, and nobody new (even with another count)
  const again = await upsert({ email: 'bb@example.com', events: [{ name: 'assessment_abandoned', key: 'sess-1' }], fields: { user_message_count: 0 } });
  t.deepEqual(again.body.assessmentAbandonment, { status: 'accepted', key: 'sess-1' });
  t.is((await enrollmentsOf(app.db, never)).length, 0);
  // count zero: never_started and the unfiltered one
  await upsert({ email: 'cc@example.com', events: [{ name: 'assessment_abandoned', key: 'sess-2' }], fields: { user_message_count: 0 } });
  t.is((await enrollmentsOf(app.db, never)).length, 1);
  t.is((await enrollmentsOf(app.db, started)).length, 1);
  // no count: only triggers without the filter
  await upsert({ email: 'dd@example.com', events: [{ name: 'assessment_abandoned', key: 'sess-3' }] });
  t.is((await enrollmentsOf(app.db, any)).length, 3);
  t.is((await enrollmentsOf(app.db, never)).length, 1);
  t.is((await enrollmentsOf(app.db, started)).length, 1);
  // no key (older clients): legacy_unverified, enrolled, not deduplicated (but one live enrollment per contact)
  const legacy = await upsert({ email: 'ee@example.com', events: [{ name: 'assessment_abandoned' }], fields: { user_message_count: 1 } });
  t.like(legacy.body.assessmentAbandonment, { status: 'legacy_unverified' });
  t.is((await enrollmentsOf(app.db, started)).length, 2);
  // a paused sequence subscribes to nothing
  for (const id of [started, never, any]) await setStatus(id, 'paused');
  const paused = await upsert({ email: 'ff@example.com', events: [{ name: 'assessment_abandoned', key: 'sess-4' }], fields: { user_message_count: 1 } });
  t.deepEqual(paused.body.assessmentAbandonment, { status: 'no_subscriber', key: 'sess-4' });
  for (const id of [started, never, any]) await setStatus(id, 'inactive');
});

test.serial('concurrent duplicate events with one key make one enrollment', async (t) => {
  const seq = await insertSequence(app.db, org, { trigger: { type: 'event', event: 'assessment_abandoned' } });
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => upsert({
    email: `dup${i % 3}@example.com`, events: [{ name: 'assessment_abandoned', key: 'same-session' }], fields: { user_message_count: 1 } })));
  t.true(answers.every((r) => r.status === 200), JSON.stringify(answers.map((r) => r.body)).slice(0, 500));
  t.true(answers.every((r) => r.body.assessmentAbandonment.status === 'accepted'));
  t.is((await enrollmentsOf(app.db, seq)).length, 1);
  await setStatus(seq, 'inactive');
});

test.serial('cancel_events cancels the contact\'s enrollments that entered by that event, then events fire', async (t) => {
  const byEvent = await insertSequence(app.db, org, { trigger: { type: 'event', event: 'trial_started' } });
  const manual = await insertSequence(app.db, org);
  const c = await upsert({ email: 'journey@example.com', events: [{ name: 'trial_started', key: 't-1' }] });
  await enroll(app, key(), manual, { contact_id: c.body.id });
  const [first] = await enrollmentsOf(app.db, byEvent);
  // one call replaces the journey: the old enrollment cancelled, a new one made
  await upsert({ email: 'journey@example.com', cancel_events: ['trial_started'], events: [{ name: 'trial_started', key: 't-2' }] });
  const rows = await enrollmentsOf(app.db, byEvent);
  t.is(rows.length, 2);
  t.like(await enrollment(app.db, first.id), { status: 'cancelled', end_reason: 'cancel_event:trial_started' });
  t.is(rows[1].status, 'active');
  t.is((await enrollmentsOf(app.db, manual))[0].status, 'active', 'an enrollment that did not enter by the event stays');
  t.deepEqual((await events(app.db, first.id)).map((e) => e.type), ['enrolled', 'cancelled']);
  await setStatus(byEvent, 'inactive');
});

test.serial('cancel_events also cancels an enrollment of a paused sequence, which nothing subscribes for meanwhile: resuming sends it nothing', async (t) => {
  const seq = await insertSequence(app.db, org, { trigger: { type: 'event', event: 'renewal_due' } });
  const c = await upsert({ email: 'renewal@example.com', events: [{ name: 'renewal_due', key: 'r-1' }] });
  const [e] = await enrollmentsOf(app.db, seq);
  t.like(e, { contact_id: c.body.id, status: 'active' });
  t.is((await app.request('POST', `/api/v1/sequences/${seq}/pause`, { key: key() })).status, 200);
  const { rows: [{ n: subscribed }] } = await app.db.owner.query(`select count(*)::int as n from app_private.event_subscriptions
     where organization_id = $1 and subscriber_id = $2`, [org, seq]);
  t.is(subscribed, 0, 'a paused sequence subscribes to nothing');
  const res = await upsert({ email: 'renewal@example.com', cancel_events: ['renewal_due'] });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(await enrollment(app.db, e.id), { status: 'cancelled', end_reason: 'cancel_event:renewal_due' });
  // a cancel of an event nothing entered by changes nothing
  const other = await upsert({ email: 'renewal@example.com', cancel_events: ['never_fired'] });
  t.is(other.status, 200);
  t.is((await app.request('POST', `/api/v1/sequences/${seq}/resume`, { key: key() })).status, 200);
  await drain(app.db);
  t.is((await outbox(app.db, org)).filter((o) => o.meta.enrollment_id === e.id).length, 0);
  t.like(await enrollment(app.db, e.id), { status: 'cancelled' });
  await setStatus(seq, 'inactive');
});

test.serial('tag_added: adding the tag enrolls; an exit on a tag completes the enrollment when the tag arrives', async (t) => {
  const byTag = await insertSequence(app.db, org, { trigger: { type: 'tag_added', tag: 'Hot Lead' } });
  const exits = await insertSequence(app.db, org, { exit_conditions: [{ type: 'tag_added', tag: 'booked' }] });
  const cy = tenant.ids.cy!;
  const e = await enroll(app, key(), exits, { contact_id: cy });
  const tag = (name: string) => app.request('POST', `/api/v1/contacts/${cy}/tags`, { key: key(), body: { name } });
  t.is((await tag('hot lead')).status, 200);
  t.like((await enrollmentsOf(app.db, byTag))[0], { contact_id: cy, source: 'tag_added', status: 'active' });
  t.is((await enrollment(app.db, e.body.enrollment.id)).status, 'active');
  await tag('Booked');
  t.like(await enrollment(app.db, e.body.enrollment.id), { status: 'completed', end_reason: 'exit_condition:tag_added' });
  // nothing more goes out for it
  await drain(app.db);
  t.false((await outbox(app.db, org)).some((m) => m.meta.enrollment_id === e.body.enrollment.id));
  await setStatus(byTag, 'inactive');
});

test.serial('a stage change and a condition end enrollments when they arrive', async (t) => {
  const won = tenant.ids.won!;
  const byStage = await insertSequence(app.db, org, { exit_conditions: [{ type: 'stage_changed', stage_id: won }] });
  const byCondition = await insertSequence(app.db, org, {
    exit_conditions: [{ type: 'condition', condition: { field: 'field_values.plan', op: 'eq', value: 'platinum' } }] });
  const ann = tenant.ids.ann!;
  const s = (await enroll(app, key(), byStage, { contact_id: ann })).body.enrollment.id;
  const c = (await enroll(app, key(), byCondition, { contact_id: ann })).body.enrollment.id;
  await app.request('PATCH', `/api/v1/contacts/${ann}`, { key: key(), body: { custom_fields: { plan: 'platinum' } } });
  t.is((await enrollment(app.db, s)).status, 'active');
  t.like(await enrollment(app.db, c), { status: 'completed', end_reason: 'exit_condition:condition' });
  await app.request('PATCH', `/api/v1/contacts/${ann}`, { key: key(), body: { stage_id: won } });
  t.like(await enrollment(app.db, s), { status: 'completed', end_reason: 'exit_condition:stage_changed' });
});

test.serial('a contact already on the stage when enrolled does not exit by another edit; moving away and back ends it', async (t) => {
  const won = tenant.ids.won!;
  const lead = tenant.ids.lead!;
  const bob = tenant.ids.bob!;
  await app.request('PATCH', `/api/v1/contacts/${bob}`, { key: key(), body: { stage_id: won } });
  const byStage = await insertSequence(app.db, org, { exit_conditions: [{ type: 'stage_changed', stage_id: won }] });
  try {
    const e = (await enroll(app, key(), byStage, { contact_id: bob })).body.enrollment.id;
    await app.request('PATCH', `/api/v1/contacts/${bob}`, { key: key(), body: { name: 'Bob Renamed', custom_fields: { plan: 'silver' } } });
    t.is((await enrollment(app.db, e)).status, 'active', 'an edit of another field is no stage change');
    await drain(app.db); // and the check before the send does not end it either
    t.not((await enrollment(app.db, e)).end_reason, 'exit_condition:stage_changed');
    const again = (await enroll(app, key(), byStage, { contact_id: bob })).body;
    const live = again.enrollment.id; // a new enrollment once the first finished its one step, else the same
    await app.request('PATCH', `/api/v1/contacts/${bob}`, { key: key(), body: { stage_id: lead } });
    await app.request('PATCH', `/api/v1/contacts/${bob}`, { key: key(), body: { stage_id: won } });
    t.like(await enrollment(app.db, live), { status: 'completed', end_reason: 'exit_condition:stage_changed' });
  } finally {
    await setStatus(byStage, 'inactive');
  }
});

test.serial('contacts_suppress cancels the contact\'s sequences of that channel, and only those', async (t) => {
  const emailSeq = await insertSequence(app.db, org);
  const smsSeq = await insertSequence(app.db, org, { steps: [{ step_key: 'text', type: 'sms', body: 'Hi' }] });
  const dee = tenant.ids.dee!;
  const m = (await enroll(app, key(), emailSeq, { contact_id: dee })).body.enrollment.id;
  const s = (await enroll(app, key(), smsSeq, { contact_id: dee })).body.enrollment.id;
  const sup = await app.request('POST', `/api/v1/contacts/${dee}/suppress`, { key: key(), body: { channels: ['email'] } });
  t.is(sup.status, 200, JSON.stringify(sup.body));
  t.like(await enrollment(app.db, m), { status: 'cancelled', end_reason: 'suppressed' });
  t.is((await enrollment(app.db, s)).status, 'active');
  await app.request('POST', `/api/v1/contacts/${dee}/suppress`, { key: key(), body: { channels: ['sms'] } });
  t.like(await enrollment(app.db, s), { status: 'cancelled', end_reason: 'suppressed' });
});

test.serial('authored through the API: created, activated, an event enrolls, the worker sends; paused, nothing subscribes; resumed, it does', async (t) => {
  const created = await app.request('POST', '/api/v1/sequences', { key: key(), body: {
    name: 'Quote follow-up', trigger: { type: 'event', event: 'quote_sent' },
    steps: [{ step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Your quote, {{contact.first_name|there}}', body: 'Here it is.' }],
  } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const none = await upsert({ email: 'q1@example.com', name: 'Quinn One', events: [{ name: 'quote_sent', key: 'qs-1' }] });
  t.is(none.status, 200);
  t.is((await enrollmentsOf(app.db, id)).length, 0, 'a draft subscribes to nothing');
  const activated = await app.request('POST', `/api/v1/sequences/${id}/activate`, { key: key() });
  t.is(activated.status, 200, JSON.stringify(activated.body));
  // the key was not spent: the retry enrolls
  await upsert({ email: 'q1@example.com', events: [{ name: 'quote_sent', key: 'qs-1' }] });
  const [e] = await enrollmentsOf(app.db, id);
  t.like(e, { source: 'event', status: 'active' });
  await drain(app.db);
  const [m] = (await outbox(app.db, org)).filter((o) => o.meta.enrollment_id === e.id);
  t.like(m, { recipient: 'q1@example.com', subject: 'Your quote, Quinn' });
  t.is((await app.request('POST', `/api/v1/sequences/${id}/pause`, { key: key() })).status, 200);
  await upsert({ email: 'q2@example.com', events: [{ name: 'quote_sent', key: 'qs-2' }] });
  t.is((await enrollmentsOf(app.db, id)).length, 1);
  t.is((await app.request('POST', `/api/v1/sequences/${id}/resume`, { key: key() })).status, 200);
  await upsert({ email: 'q2@example.com', events: [{ name: 'quote_sent', key: 'qs-2' }] });
  t.is((await enrollmentsOf(app.db, id)).length, 2);
  await app.request('PATCH', `/api/v1/sequences/${id}`, { key: key(), body: { is_active: false } });
});

test.serial('suppressing a contact already suppressed still cancels the sequences of that channel it was enrolled in since', async (t) => {
  const emailSeq = await insertSequence(app.db, org);
  const smsSeq = await insertSequence(app.db, org, { steps: [{ step_key: 'text', type: 'sms', body: 'Hi' }] });
  const eve = tenant.ids.eve!; // suppressed and opted out in the fixture
  const m = (await enroll(app, key(), emailSeq, { contact_id: eve })).body.enrollment.id;
  const s = (await enroll(app, key(), smsSeq, { contact_id: eve })).body.enrollment.id;
  t.is((await app.request('POST', `/api/v1/contacts/${eve}/suppress`, { key: key(), body: { channels: ['email'] } })).status, 200);
  t.like(await enrollment(app.db, m), { status: 'cancelled', end_reason: 'suppressed' });
  t.is((await enrollment(app.db, s)).status, 'active');
  t.is((await app.request('POST', `/api/v1/contacts/${eve}/suppress`, { key: key(), body: { channels: ['sms'] } })).status, 200);
  t.like(await enrollment(app.db, s), { status: 'cancelled', end_reason: 'suppressed' });
});

test.serial('an event of a contact a location-bound sequence cannot take: no_subscriber, key unspent; at the location: accepted and enrolled', async (t) => {
  const seq = await insertSequence(app.db, org, { location_id: tenant.ids.north, trigger: { type: 'event', event: 'assessment_abandoned' } });
  try {
    // bob is linked to south only
    const elsewhere = await upsert({ email: 'bob@example.com', events: [{ name: 'assessment_abandoned', key: 'loc-1' }] });
    t.is(elsewhere.status, 200, JSON.stringify(elsewhere.body));
    t.deepEqual(elsewhere.body.assessmentAbandonment, { status: 'no_subscriber', key: 'loc-1' });
    t.is((await enrollmentsOf(app.db, seq)).length, 0);
    // the key was not spent: ann, at north, is accepted with it
    const north = await upsert({ email: 'ann@example.com', events: [{ name: 'assessment_abandoned', key: 'loc-1' }] });
    t.deepEqual(north.body.assessmentAbandonment, { status: 'accepted', key: 'loc-1' });
    const rows = await enrollmentsOf(app.db, seq);
    t.is(rows.length, 1);
    t.is(rows[0].contact_id, tenant.ids.ann);
  } finally {
    await setStatus(seq, 'inactive');
  }
});

test.serial('an exit type another area adds holds when the function its row names says so', async (t) => {
  await app.db.owner.query(`create function public.test_exit_flagged(e app_public.enrollments, x jsonb) returns boolean
    language sql stable as $$ select exists (select 1 from app_public.contacts c where c.id = e.contact_id and c.field_values->>'plan' = x->>'plan') $$`);
  await app.db.owner.query(`insert into app_private.sequence_exit_types (type, area, description, fields, holds)
    values ('plan_reached', 'test', 'The contact reached a plan.', '{"plan": {"type": "string", "required": true}}',
            'public.test_exit_flagged(app_public.enrollments, jsonb)')`);
  const seq = await insertSequence(app.db, org, { exit_conditions: [{ type: 'plan_reached', plan: 'diamond' }] });
  try {
    const cy = tenant.ids.cy!;
    const e = (await enroll(app, key(), seq, { contact_id: cy })).body.enrollment.id;
    t.is((await enrollment(app.db, e)).status, 'active');
    t.is((await app.request('PATCH', `/api/v1/contacts/${cy}`, { key: key(), body: { custom_fields: { plan: 'diamond' } } })).status, 200);
    t.like(await enrollment(app.db, e), { status: 'completed', end_reason: 'exit_condition:plan_reached' });
  } finally {
    await setStatus(seq, 'inactive');
    await app.db.owner.query(`delete from app_private.sequence_exit_types where type = 'plan_reached'`);
  }
});
