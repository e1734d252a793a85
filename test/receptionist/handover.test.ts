// Hand-over: the contact is told once, the people who may answer get an email through the
// delivery path with a link to the inbox, the conversation.handed_over webhook event is queued,
// the AI stays silent until resumed; the loop guard; a contact who opted out gets no answer.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { answers, clinicFixture, drain, sms } from './helpers.ts';

let app: TestApp;
let acme: Applied;

test.before(async () => {
  delete process.env.AI_BASE_URL;
  const f = clinicFixture() as ReturnType<typeof clinicFixture> & { contacts: unknown[] };
  ({ app, tenant: acme } = await startWithTenant({ ...f, contacts: [...f.contacts,
    { ref: 'eve', name: 'Eve Stopped', phone: '+15551230005', location_refs: ['north'], sms_opted_out: true }] }));
  await app.db.owner.query(`insert into app_public.webhook_subscriptions (organization_id, url, events)
    values ($1, 'http://127.0.0.1:9/hook', '{conversation.handed_over}')`, [acme.organization_id]);
});
test.after.always(async () => { await app?.close(); });

const emails = async (conversationId: string) => (await app.db.owner.query(`select recipient, subject, body from app_private.outbox
   where channel = 'email' and meta->>'conversation_id' = $1 order by recipient`, [conversationId])).rows;
const events = async (conversationId: string) => (await app.db.owner.query(`select data from app_public.webhook_deliveries
   where event = 'conversation.handed_over' and data->>'conversation_id' = $1`, [conversationId])).rows.map((r) => r.data);
const held = async (conversationId: string) =>
  (await app.db.owner.query('select ai_held from app_public.conversations where id = $1', [conversationId])).rows[0].ai_held as boolean;

test.serial('asking for a person: told once, an email to each person who may answer, the webhook event, then silence', async (t) => {
  const r = await sms(app, '+15551230001', 'Can I talk to a person please?');
  await drain(app);
  const conversation = r.conversation_id as string;
  t.true(await held(conversation));
  t.deepEqual(await answers(app, conversation), ['Thanks! Someone from our team will text you shortly.']);
  const sent = await emails(conversation);
  // owners and admins, and the manager with the contacts power at North; not South's manager, not members
  t.deepEqual(sent.map((e) => e.recipient), ['adam@acme.example', 'max@acme.example', 'olive@acme.example']);
  t.regex(sent[0].subject, /A conversation is waiting for you: Ann Lee/);
  t.true(sent[0].body.includes(`/dashboard/inbox/${conversation}`));
  t.regex(sent[0].body, /Reason: the contact asked for a person/);
  t.deepEqual(await events(conversation), [{ conversation_id: conversation, contact_id: acme.ids.ann, location_id: acme.ids.north,
    reason: 'the contact asked for a person' }]);

  // held: nothing more is answered, nobody is emailed again
  const again = await sms(app, '+15551230001', 'Hello?? Anyone?');
  await drain(app);
  await app.db.owner.query(`select app_private.add_job('conversation_ai_reply', $1::jsonb)`,
    [JSON.stringify({ organization_id: acme.organization_id, conversation_id: conversation, message_id: r.message_id })]);
  await drain(app);
  t.is(again.conversation_id, conversation);
  t.is((await answers(app, conversation)).length, 1);
  t.is((await emails(conversation)).length, 3);
  t.is((await events(conversation)).length, 1);

  // "Let the AI answer": the receptionist answers the last message again
  const resumed = await app.request('POST', `/api/v1/conversations/${conversation}/resume`, { key: acme.keys.owner_personal! });
  t.is(resumed.status, 200);
  await drain(app);
  t.is((await answers(app, conversation)).length, 2);
});

test.serial('the loop guard: more than 20 AI answers in 24 hours hand the conversation over', async (t) => {
  const first = await sms(app, '+15551230002', 'What are your hours?', '+15550000002');
  await drain(app);
  const conversation = first.conversation_id as string;
  t.false(await held(conversation));
  await app.db.owner.query(`insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
    select organization_id, id, channel, 'outbound', 'ai', 'again', 'sent' from app_public.conversations, generate_series(1, 20) where id = $1`,
  [conversation]);
  await sms(app, '+15551230002', 'What are your hours?', '+15550000002');
  await drain(app);
  t.true(await held(conversation));
  t.like((await events(conversation))[0], { reason: 'more than 20 answers in 24 hours' });
});

test.serial('a contact who opted out gets no answer, books nothing and hands nothing over', async (t) => {
  const r = await sms(app, '+15551230005', 'I want to book an appointment');
  await drain(app);
  const conversation = r.conversation_id as string;
  t.deepEqual(await answers(app, conversation), []);
  t.false(await held(conversation));
  t.deepEqual(await emails(conversation), []);
});
