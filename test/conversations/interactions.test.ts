// SMS threads the AI receptionist handles are interactions (spec: Interaction), as calls are:
// one per conversation, in_progress while the AI answers, completed when it hands over or a
// person takes over (hold, or a person's reply), reopened when the AI answers again after a
// resume. Email never is. contacts_list_interactions lists them under its usual reach.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inboundEmail, inboundSms } from '../../src/conversations/inbound.ts';
import { inboxFixture } from './fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  delete process.env.AI_BASE_URL; // the deterministic responder
  ({ app, tenant: acme } = await startWithTenant(inboxFixture()));
});
test.after.always(async () => { await app?.close(); });

const drain = () => runJobs(app.db, sinkOnly);
const interactionsOf = async (conversationId: string) => (await app.db.owner.query(
  `select channel, status, location_id, contact_id, started_at, ended_at from app_public.interactions where conversation_id = $1`,
  [conversationId])).rows;
const listed = (key: string, contactId: string, query = '') =>
  app.request('GET', `/api/v1/contacts/${contactId}/interactions${query}`, { key });

test.serial('an SMS thread the AI answers is an interaction: opened, completed by a person, reopened after resume', async (t) => {
  const conversation = acme.ids.ann_sms!;
  t.deepEqual(await interactionsOf(conversation), [], 'a fixture thread nobody answered yet is none');
  await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230001', body: 'When are you open?' });
  await drain();
  const [opened] = await interactionsOf(conversation);
  t.like(opened, { channel: 'sms', status: 'in_progress', location_id: acme.ids.north, contact_id: acme.ids.ann, ended_at: null });
  const rest = await listed(acme.keys.org!, acme.ids.ann!, '?channel=sms');
  t.like(rest.body, { total: 1, items: [{ channel: 'sms', status: 'in_progress' }] });
  // a location-limited MEMBER at North sees it; South's manager does not reach the contact
  t.is((await listed(acme.keys.north_member!, acme.ids.ann!, '?channel=sms')).body.total, 1);
  t.is((await listed(acme.keys.south_mgr!, acme.ids.ann!)).status, 404);

  // a person's reply holds the thread: the AI's interaction ends
  const reply = await app.request('POST', `/api/v1/conversations/${conversation}/reply`,
    { key: acme.keys.owner_personal, body: { body: 'Monday 9 to 5, Ann.' } });
  t.is(reply.status, 201, JSON.stringify(reply.body));
  const [closed] = await interactionsOf(conversation);
  t.like(closed, { status: 'completed' });
  t.true(closed.ended_at >= closed.started_at);
  // back to the AI: the next answer reopens the same interaction
  t.is((await app.request('POST', `/api/v1/conversations/${conversation}/resume`, { key: acme.keys.org! })).status, 200);
  await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230001', body: 'Are you open Monday?' });
  await drain();
  const again = await interactionsOf(conversation);
  t.is(again.length, 1);
  t.like(again[0], { status: 'in_progress', ended_at: null });
  // hold: completed again
  t.is((await app.request('POST', `/api/v1/conversations/${conversation}/hold`, { key: acme.keys.org! })).status, 200);
  t.like((await interactionsOf(conversation))[0], { status: 'completed' });
  t.like((await listed(acme.keys.org!, acme.ids.ann!, '?status=completed&channel=sms')).body, { total: 1 });
});

test.serial('a hand-over on the AI\'s first turn is a completed interaction; email is never one', async (t) => {
  const conversation = acme.ids.bob_sms!;
  await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230002', body: 'Can I bring my dog?' });
  await drain();
  const { rows: [cv] } = await app.db.owner.query('select id, ai_held from app_public.conversations where organization_id = $1 and contact_id = $2 and channel = $3 and business_address = $4',
    [acme.organization_id, acme.ids.bob, 'sms', '+15550000001']);
  t.true(cv.ai_held, 'the deterministic responder handed it over');
  t.like(await interactionsOf(cv.id), [{ channel: 'sms', status: 'completed' }]);
  t.not(cv.id, conversation);
  await inboundEmail(app.db.owner, { to: 'inbox@acme.example', from: 'cy@example.com', subject: 'Invoice', body: 'Any news?' });
  await drain();
  t.deepEqual(await interactionsOf(acme.ids.cy_email!), []);
  t.like((await listed(acme.keys.org!, acme.ids.cy!)).body, { total: 0 });
});
