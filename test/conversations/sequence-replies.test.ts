// A contact answering a sequence's message: the inbound SMS or email is the enrollment's
// `replied` event (what the `replied` exit and analytics read), once per message answered.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inboundEmail, inboundSms } from '../../src/conversations/inbound.ts';
import { insertSendSchedule, insertSequence } from '../sequences/helpers.ts';
import { inboxFixture } from './fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(inboxFixture())); });
test.after.always(async () => { await app?.close(); });

const replied = async (enrollmentId: string) => (await app.db.owner.query(
  `select step_key, message_id from app_public.enrollment_events where enrollment_id = $1 and type = 'replied'`, [enrollmentId])).rows;

async function enrolled(steps: unknown[], contactId: string, locationId: string | null = acme.ids.north!): Promise<{ enrollment: string; message: string }> {
  const schedule = await insertSendSchedule(app.db, acme.organization_id, { name: `Always ${Math.random()}`, is_default: false });
  const seq = await insertSequence(app.db, acme.organization_id, { steps, send_schedule_id: schedule, location_id: locationId,
    exit_conditions: [{ type: 'replied' }] });
  const res = await app.request('POST', `/api/v1/sequences/${seq}/enrollments`, { key: acme.keys.org!, body: { contact_id: contactId } });
  if (res.status >= 300) throw new Error(JSON.stringify(res.body));
  await runJobs(app.db, sinkOnly);
  const { rows: [sent] } = await app.db.owner.query(`select id from app_private.outbox where meta->>'enrollment_id' = $1`,
    [res.body.enrollment.id]);
  return { enrollment: res.body.enrollment.id, message: sent.id };
}

test.serial('an SMS back to the number a sequence texted from is the enrollment\'s replied event, once', async (t) => {
  const { enrollment, message } = await enrolled([{ step_key: 'nudge', type: 'sms', body: 'Still interested?' },
    { step_key: 'later', type: 'sms', body: 'Last call', delay: { days: 2 } }], acme.ids.ann!);
  t.deepEqual(await replied(enrollment), []);
  await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230001', body: 'Yes please' });
  t.deepEqual(await replied(enrollment), [{ step_key: 'nudge', message_id: message }]);
  await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230001', body: 'Hello?' });
  t.is((await replied(enrollment)).length, 1, 'one reply per message answered');
  await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230001', body: 'HELP' });
  t.is((await replied(enrollment)).length, 1);
});

test.serial('an email whose In-Reply-To names a sequence email is its replied event; the thread opens in the inbox', async (t) => {
  const { enrollment, message } = await enrolled([{ step_key: 'hello', type: 'email', subject: 'Checking in', body: 'How are you?' }], acme.ids.cy!, null);
  const { rows: [sent] } = await app.db.owner.query(`select meta->'headers'->>'Message-ID' as id from app_private.outbox where id = $1`, [message]);
  const answer = await inboundEmail(app.db.owner, { to: 'no-reply@acme.example', from: 'cy@example.com', subject: 'Re: Checking in',
    body: 'Fine, thanks', inReplyTo: sent.id });
  t.like(answer, { organization_id: acme.organization_id, contact_id: acme.ids.cy });
  t.deepEqual(await replied(enrollment), [{ step_key: 'hello', message_id: message }]);
  const thread = await app.request('GET', `/api/v1/conversations/${answer.conversation_id}`, { key: acme.keys.org! });
  t.like(thread.body, { channel: 'email', subject: 'Checking in', messages: [{ direction: 'inbound', body: 'Fine, thanks' }] });
});
