// The engine end to end: enrollments run through the worker into the outbox, one step at a
// time, in the send window, with waits, branches, exits and the send-time checks.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { PermanentDeliveryError } from '../../src/delivery/transport.ts';
import { crontab } from '../../src/worker.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { drain, engineFixture, enroll, enrollment, events, jobOf, makeDue, outbox, stepRuns, sweep } from './engine-helpers.ts';

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
const sweepJobs = async () => (await app.db.owner.query(`select j.key from graphile_worker._private_jobs j
  join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'sequence_step_sweep' order by j.key`)).rows.map((r) => r.key);

test.serial('requests enrolling into a step due now share one waiting sweep job, whose sweep queues every step', async (t) => {
  const seq = await insertSequence(app.db, org, { name: 'Burst' });
  const contacts = [tenant.ids.bob!, tenant.ids.cy!, tenant.ids.dee!];
  const answers = await Promise.all(contacts.map((c) => enroll(app, key(), seq, { contact_id: c })));
  t.deepEqual(answers.map((a) => a.body.status), ['enrolled', 'enrolled', 'enrolled']);
  const ids = answers.map((a) => a.body.enrollment.id as string);
  t.deepEqual(await sweepJobs(), [`sequence_step_sweep:${org}`]);
  for (const id of ids) t.falsy(await jobOf(app.db, id));
  await drain(app.db);
  for (const id of ids) t.like(await enrollment(app.db, id), { status: 'completed', end_reason: 'last_step' });
  t.is((await outbox(app.db, org)).filter((m) => m.meta.sequence_id === seq).length, 3);
  t.deepEqual(await sweepJobs(), []);
});

test.serial('email, a wait, then SMS: each step once, into the outbox with its meta', async (t) => {
  const seq = await insertSequence(app.db, org, {
    name: 'Welcome',
    steps: [
      { step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Hi {{contact.first_name|there}}', body: 'Welcome, {{contact.name}}!' },
      { step_key: 'pause', type: 'wait', delay: { days: 2 } },
      { step_key: 'nudge', type: 'sms', delay: { minutes: 0 }, body: 'Still there, {{contact.first_name}}?' },
    ],
  });
  const res = await enroll(app, key(), seq, { contact_id: tenant.ids.ann });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.status, 'enrolled');
  const id = res.body.enrollment.id as string;
  t.is(res.body.enrollment.current_step_key, 'hello');
  // due now: the request added no step job but its organization's sweep, waiting to run now
  t.falsy(await jobOf(app.db, id));
  t.deepEqual(await sweepJobs(), [`sequence_step_sweep:${org}`]);

  await drain(app.db);
  let mail = (await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id);
  t.is(mail.length, 1);
  t.is(mail[0].channel, 'email');
  t.is(mail[0].subject, 'Hi Ann');
  t.is(mail[0].body, 'Welcome, Ann Lee!');
  t.is(mail[0].recipient, 'ann@example.com');
  t.is(mail[0].sender, 'no-reply@acme.example');
  t.like(mail[0].meta, { sequence_id: seq, enrollment_id: id, step_key: 'hello', message_id: mail[0].id });
  t.is(mail[0].meta.headers['Message-ID'], `<${mail[0].id}@acme.example>`);
  t.regex(mail[0].meta.headers['List-Unsubscribe'], /^<http.*\/unsubscribe\/[A-Za-z0-9_-]{40,}>$/);
  t.is(mail[0].meta.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');

  // now on the wait step, due in two days: no job until the sweep finds it near; draining again
  // sends nothing
  let e = await enrollment(app.db, id);
  t.is(e.current_step_key, 'pause');
  const due = new Date(e.next_step_due_at).getTime() - Date.now();
  t.true(due > 2 * 86400_000 - 120_000 && due <= 2 * 86400_000, `due in ${due} ms`);
  t.falsy(await jobOf(app.db, id));
  t.deepEqual(await sweepJobs(), []);
  await drain(app.db);
  t.is((await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id).length, 1);

  // its time comes: the wait passes, the SMS (no delay after it) goes out in the same drain
  await makeDue(app.db, [id]);
  await drain(app.db);
  mail = (await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id);
  t.deepEqual(mail.map((m) => m.channel), ['email', 'sms']);
  t.is(mail[1].body, 'Still there, Ann?');
  t.is(mail[1].recipient, '+15551230001');
  t.is(mail[1].sender, '+15550000001', 'the number of the contact\'s location (North), as people text her');
  t.is(mail[1].meta.headers, undefined);
  e = await enrollment(app.db, id);
  t.is(e.status, 'completed');
  t.is(e.end_reason, 'last_step');
  t.deepEqual((await stepRuns(app.db, id)).map((r) => [r.step_key, r.status]), [['hello', 'sent'], ['pause', 'waited'], ['nudge', 'sent']]);
  t.deepEqual((await events(app.db, id)).map((v) => v.type), ['enrolled', 'sent', 'delivered', 'sent', 'delivered', 'completed']);
  // nothing left to run, and running again sends nothing twice
  t.falsy(await jobOf(app.db, id));
  await drain(app.db);
  t.is((await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id).length, 2);
});

test.serial('a branch: the first edge from the step whose condition holds is followed; no edge ends the enrollment', async (t) => {
  const seq = await insertSequence(app.db, org, {
    name: 'Branching',
    steps: [
      { step_key: 'hello', type: 'email', subject: 'Hello', body: 'Hello' },
      { step_key: 'lead_sms', type: 'sms', body: 'For leads' },
      { step_key: 'other_mail', type: 'email', subject: 'Other', body: 'For everyone else' },
    ],
    edges: [
      { from: 'hello', to: 'lead_sms', condition: { field: 'stage_id', op: 'eq', value: tenant.ids.lead } },
      { from: 'hello', to: 'other_mail', condition: null },
    ],
  });
  // ann is a lead (consenting to SMS); dee has no stage
  const ann = (await enroll(app, key(), seq, { contact_id: tenant.ids.ann })).body.enrollment.id;
  const dee = (await enroll(app, key(), seq, { contact_id: tenant.ids.dee })).body.enrollment.id;
  await drain(app.db);
  const sent = await outbox(app.db, org);
  t.deepEqual(sent.filter((m) => m.meta.enrollment_id === ann).map((m) => m.meta.step_key), ['hello', 'lead_sms']);
  t.deepEqual(sent.filter((m) => m.meta.enrollment_id === dee).map((m) => m.meta.step_key), ['hello', 'other_mail']);
  // lead_sms and other_mail have no edge from them: completed
  t.like(await enrollment(app.db, ann), { status: 'completed', end_reason: 'last_step' });
  t.like(await enrollment(app.db, dee), { status: 'completed', end_reason: 'last_step' });
});

test.serial('an exit on a tag, checked again just before each send', async (t) => {
  const seq = await insertSequence(app.db, org, {
    steps: [{ step_key: 'one', type: 'email', subject: 'One', body: 'One' }, { step_key: 'two', type: 'email', delay: { days: 1 }, subject: 'Two', body: 'Two' }],
    exit_conditions: [{ type: 'tag_added', tag: 'booked' }],
  });
  const id = (await enroll(app, key(), seq, { contact_id: tenant.ids.bob })).body.enrollment.id;
  await drain(app.db);
  // the tag arrives without its trigger having run (written as the owner): the check before the send catches it
  await app.db.owner.query(`insert into app_public.tags (organization_id, name) values ($1, 'booked') on conflict do nothing`, [org]);
  await app.db.owner.query(`alter table app_public.contact_tags disable trigger _500_sequences`);
  try {
    await app.db.owner.query(`insert into app_public.contact_tags (organization_id, contact_id, tag_id)
      select $1, $2, id from app_public.tags where organization_id = $1 and name = 'booked'`, [org, tenant.ids.bob]);
  } finally {
    await app.db.owner.query(`alter table app_public.contact_tags enable trigger _500_sequences`);
  }
  t.is((await enrollment(app.db, id)).status, 'active');
  await makeDue(app.db, [id]);
  await drain(app.db);
  t.like(await enrollment(app.db, id), { status: 'completed', end_reason: 'exit_condition:tag_added' });
  t.deepEqual((await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id).map((m) => m.meta.step_key), ['one']);
  t.deepEqual((await events(app.db, id)).map((e) => e.type), ['enrolled', 'sent', 'delivered', 'completed']);
});

test.serial('send-time checks: suppressed, opted out, no consent, no address are skipped with the reason, and the enrollment moves on', async (t) => {
  const seq = await insertSequence(app.db, org, {
    steps: [{ step_key: 'mail', type: 'email', subject: 'S', body: 'B' }, { step_key: 'text', type: 'sms', body: 'T' },
            { step_key: 'done', type: 'wait' }],
  });
  const runsOf = async (contact: string) => {
    const id = (await enroll(app, key(), seq, { contact_id: contact })).body.enrollment.id;
    await drain(app.db);
    return { id, runs: (await stepRuns(app.db, id)).map((r) => [r.step_key, r.status, r.reason]) };
  };
  // eve: suppressed address, opted-out number
  const eve = await runsOf(tenant.ids.eve!);
  t.deepEqual(eve.runs, [['mail', 'skipped', 'suppressed'], ['text', 'skipped', 'opted_out'], ['done', 'waited', null]]);
  t.deepEqual((await events(app.db, eve.id)).map((e) => [e.type, e.reason]),
    [['enrolled', 'manual'], ['skipped', 'suppressed'], ['skipped', 'opted_out'], ['completed', 'last_step']]);
  // dee: no SMS consent
  t.deepEqual((await runsOf(tenant.ids.dee!)).runs, [['mail', 'sent', null], ['text', 'skipped', 'no_consent'], ['done', 'waited', null]]);
  // cy: no phone
  t.deepEqual((await runsOf(tenant.ids.cy!)).runs, [['mail', 'sent', null], ['text', 'skipped', 'missing_address'], ['done', 'waited', null]]);
  t.false((await outbox(app.db, org)).some((m) => m.recipient === 'eve@example.com' || m.recipient === '+15551230005'));

  // checked again at send, not only at enrollment: an address suppressed while the step waits
  const later = await insertSequence(app.db, org, { steps: [{ step_key: 'mail', type: 'email', delay: { hours: 3 }, subject: 'S', body: 'B' }] });
  const id = (await enroll(app, key(), later, { contact_id: tenant.ids.ann })).body.enrollment.id;
  await app.db.owner.query(`alter table app_public.email_suppressions disable trigger _500_sequences`);
  try {
    await app.db.owner.query(`insert into app_public.email_suppressions (organization_id, email, contact_id) values ($1, 'ann@example.com', $2)`,
      [org, tenant.ids.ann]);
  } finally {
    await app.db.owner.query(`alter table app_public.email_suppressions enable trigger _500_sequences`);
  }
  await makeDue(app.db, [id]);
  await drain(app.db);
  t.deepEqual((await stepRuns(app.db, id)).map((r) => [r.status, r.reason]), [['skipped', 'suppressed']]);
  await app.db.owner.query(`delete from app_public.email_suppressions where organization_id = $1 and email = 'ann@example.com'`, [org]);
});

test.serial('HTML bodies get their variables escaped; plain text bodies keep them as written', async (t) => {
  const c = await app.request('POST', '/api/v1/contacts', { key: key(), body: { email: 'html@example.com', name: '<b>Mal</b> & "Co"' } });
  const seq = await insertSequence(app.db, org, {
    steps: [{ step_key: 'h', type: 'email', subject: 'For {{contact.name}}', body: '<p>Hello {{contact.name}}, <a href="{{unsubscribe_url}}">stop</a></p>' },
            { step_key: 'p', type: 'email', subject: 'Plain', body: 'Hello {{contact.name}} {{contact.nope|friend}}' }],
  });
  const id = (await enroll(app, key(), seq, { contact_id: c.body.id })).body.enrollment.id;
  await drain(app.db);
  const [h, p] = (await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id);
  t.is(h.subject, 'For <b>Mal</b> & "Co"');
  t.true(h.body.startsWith('<p>Hello &lt;b&gt;Mal&lt;/b&gt; &amp; &quot;Co&quot;, <a href="http'), h.body);
  t.true(h.body.includes('/unsubscribe/'));
  t.is(h.meta.html, true);
  t.is(`<${h.body.match(/href="([^"]+)"/)[1]}>`, h.meta.headers['List-Unsubscribe']);
  t.is(p.body, 'Hello <b>Mal</b> & "Co" friend');
});

test.serial('a transport that refuses for good: the step run and the message failed, the event failed, and the enrollment moves on', async (t) => {
  const seq = await insertSequence(app.db, org, {
    steps: [{ step_key: 'mail', type: 'email', subject: 'S', body: 'B' }, { step_key: 'text', type: 'sms', body: 'T' }] });
  const id = (await enroll(app, key(), seq, { contact_id: tenant.ids.ann })).body.enrollment.id;
  const failing = { name: 'failing', async send() { throw new PermanentDeliveryError('mailbox unavailable'); } };
  await drain(app.db, { email: failing, sms: sinkTransport });
  t.deepEqual((await stepRuns(app.db, id)).map((r) => [r.step_key, r.status]), [['mail', 'failed'], ['text', 'sent']]);
  t.deepEqual((await events(app.db, id)).map((e) => [e.type, e.reason]),
    [['enrolled', 'manual'], ['failed', 'transport_error'], ['sent', null], ['delivered', null], ['completed', 'last_step']]);
  const [run] = await stepRuns(app.db, id);
  const { rows: [m] } = await app.db.owner.query(`select status, error from app_private.outgoing_messages where id = $1`, [run.message_id]);
  t.like(m, { status: 'failed', error: 'mailbox unavailable' });
});

test.serial('DST: a step due at night before clocks spring forward runs at 08:00 local, 12:00 UTC instead of 13:00', async (t) => {
  const schedule = await insertSendSchedule(app.db, org, {
    name: 'Mornings', timezone: 'America/New_York', is_default: false,
    windows: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '08:00', end: '17:00' })) });
  const seq = await insertSequence(app.db, org, { send_schedule_id: schedule,
    steps: [{ step_key: 'a', type: 'email', delay: { hours: 3 }, subject: 'A', body: 'A' }, { step_key: 'b', type: 'email', delay: { days: 1 }, subject: 'B', body: 'B' }] });
  const at = async (contact: string, when: string) => {
    const { rows: [{ r }] } = await app.db.owner.query(
      `select app_private.enroll_contact($1, $2, $3, null, 'manual', null, $4::timestamptz) as r`, [org, seq, contact, when]);
    return r.enrollment;
  };
  // Saturday 2027-03-13 22:00 EST + 3 h = 01:00 EST Sunday, the day clocks change: runs at 08:00 EDT = 12:00 UTC
  const spring = await at(tenant.ids.ann!, '2027-03-13T22:00:00-05:00');
  t.is(new Date(spring.next_step_due_at).toISOString(), '2027-03-14T06:00:00.000Z');
  t.is(new Date(spring.next_run_at).toISOString(), '2027-03-14T12:00:00.000Z');
  // the Saturday before: 08:00 EST = 13:00 UTC
  const before = await at(tenant.ids.bob!, '2027-03-06T22:00:00-05:00');
  t.is(new Date(before.next_run_at).toISOString(), '2027-03-07T13:00:00.000Z');
  // fall back (2026-11-01): 08:00 EST = 13:00 UTC
  const fall = await at(tenant.ids.cy!, '2026-10-31T22:00:00-04:00');
  t.is(new Date(fall.next_run_at).toISOString(), '2026-11-01T13:00:00.000Z');
  // the sweep adds its job, to run then, once that comes near
  t.falsy(await jobOf(app.db, spring.id));
  await sweep(app.db, '2027-03-14T12:00:00.000Z');
  t.is(new Date((await jobOf(app.db, spring.id)).run_at).toISOString(), '2027-03-14T12:00:00.000Z');
  // moving on after a send keeps the window: from a send at 16:59 EDT on Monday, one day later is 16:59 Tuesday, in the window
  await app.db.owner.query(`select app_private.advance_enrollment($1, $2, '2027-03-15T16:59:00-04:00')`, [org, spring.id]);
  t.like(await enrollment(app.db, spring.id), { current_step_key: 'b' });
  t.is(new Date((await enrollment(app.db, spring.id)).next_run_at).toISOString(), '2027-03-16T20:59:00.000Z');
});

test.serial('the sweep task, as its cron line runs it: the jobs of steps running within two minutes, each once; later ones wait', async (t) => {
  t.true(crontab.split('\n').includes('* * * * * sequence_step_sweep'));
  const seq = await insertSequence(app.db, org, { name: 'Swept', steps: [{ step_key: 'a', type: 'email', subject: 'A', body: 'A' }] });
  // written as a writer that died before its sweep came would leave them: no jobs
  const ids = (await app.db.owner.query(`insert into app_public.enrollments (organization_id, sequence_id, contact_id, current_step_index,
      current_step_key, next_step_due_at, next_run_at)
    select $1, $2, c.id, 0, 'a', now() + d.at, now() + d.at
      from (values ($3::uuid, interval '1 minute'), ($4::uuid, interval '10 minutes')) d(contact, at)
      join app_public.contacts c on c.id = d.contact
    returning id, contact_id`, [org, seq, tenant.ids.ann, tenant.ids.bob])).rows;
  const soon = ids.find((r) => r.contact_id === tenant.ids.ann)!.id;
  const later = ids.find((r) => r.contact_id === tenant.ids.bob)!.id;
  for (const payload of [{}, { organization_id: org }, { _cron: { ts: new Date().toISOString(), backfilled: false } }]) {
    await app.db.owner.query(`select graphile_worker.add_job('sequence_step_sweep', $1::json)`, [JSON.stringify(payload)]);
    await drain(app.db);
    const job = await jobOf(app.db, soon);
    t.truthy(job, 'the step due in a minute has its job');
    t.true(Math.abs(new Date(job.run_at).getTime() - new Date((await enrollment(app.db, soon)).next_run_at).getTime()) < 1);
    t.falsy(await jobOf(app.db, later), 'the step due in ten minutes waits for a later sweep');
  }
  const { rows: [{ n }] } = await app.db.owner.query(`select count(*)::int as n from graphile_worker._private_jobs where key = $1`, [`sequence_step:${soon}`]);
  t.is(n, 1);
  await app.db.owner.query(`update app_public.enrollments set status = 'cancelled', end_reason = 'test', next_step_due_at = null,
    next_run_at = null, updated_at = now() where id = any($1)`, [[soon, later]]);
});
