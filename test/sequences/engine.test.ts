// The engine end to end: enrollments run through the worker into the outbox, one step at a
// time, in the send window, with waits, branches, exits and the send-time checks.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { drain, engineFixture, enroll, enrollment, events, jobOf, makeDue, outbox, stepRuns } from './engine-helpers.ts';

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

  // now on the wait step, due in two days: draining again sends nothing
  let e = await enrollment(app.db, id);
  t.is(e.current_step_key, 'pause');
  const due = new Date(e.next_step_due_at).getTime() - Date.now();
  t.true(due > 2 * 86400_000 - 120_000 && due <= 2 * 86400_000, `due in ${due} ms`);
  t.truthy(await jobOf(app.db, id));
  await drain(app.db);
  t.is((await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id).length, 1);

  // its time comes: the wait passes, the SMS (no delay after it) goes out in the same drain
  await makeDue(app.db, [id]);
  await drain(app.db);
  mail = (await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id);
  t.deepEqual(mail.map((m) => m.channel), ['email', 'sms']);
  t.is(mail[1].body, 'Still there, Ann?');
  t.is(mail[1].recipient, '+15551230001');
  t.is(mail[1].sender, '+15550000000');
  t.is(mail[1].meta.headers, undefined);
  e = await enrollment(app.db, id);
  t.is(e.status, 'completed');
  t.is(e.end_reason, 'last_step');
  t.deepEqual((await stepRuns(app.db, id)).map((r) => [r.step_key, r.status]), [['hello', 'sent'], ['pause', 'waited'], ['nudge', 'sent']]);
  t.deepEqual((await events(app.db, id)).map((v) => v.type), ['enrolled', 'sent', 'sent', 'completed']);
  // nothing left to run, and running again sends nothing twice
  t.falsy(await jobOf(app.db, id));
  await drain(app.db);
  t.is((await outbox(app.db, org)).filter((m) => m.meta.enrollment_id === id).length, 2);
});
