// conversations_reply, conversations_send_sms, conversations_hold, conversations_resume: each
// numbered rule of the spec ("Conversation and SMS rules" 1-6), every refusal checked for its
// status, its code and that nothing was written or sent.
import test from 'ava';
import { startApp, startWithTenant, type TestApp } from '../helpers/app.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inboundEmail, inboundSms } from '../../src/conversations/inbound.ts';
import { inboxFixture, makeOwnClient } from './fixture.ts';

/** inboxFixture with gus: at north and south, consenting, his thread on the default number at north. */
function writesFixture(name = 'Acme Dental') {
  const f = inboxFixture(name);
  return {
    ...f,
    contacts: [...f.contacts,
      { ref: 'gus', name: 'Gus Both', phone: '+15551230007', location_refs: ['north', 'south'], sms_consent: true, conversations: [
        { ref: 'gus_sms', channel: 'sms', location_ref: 'north', business_address: '+15550000000', messages: [
          { direction: 'outbound', author_ref: 'owner', body: 'Welcome!', at: '2026-11-19T09:00:00Z' }] }] }],
  };
}

let app: TestApp;
let acme: Applied;
let other: Applied;

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(writesFixture()));
  other = await app.apply(writesFixture('Other Dental'));
});
test.after.always(async () => { await app?.close(); });

const reply = (key: string, id: string, body: unknown = { body: 'On it!' }) =>
  app.request('POST', `/api/v1/conversations/${id}/reply`, { key, body });
const sendSms = (key: string, body: Record<string, unknown>) => app.request('POST', '/api/v1/conversations/sms', { key, body });
const hold = (key: string, id: string) => app.request('POST', `/api/v1/conversations/${id}/hold`, { key });
const resume = (key: string, id: string) => app.request('POST', `/api/v1/conversations/${id}/resume`, { key });
const outboxRow = async (id: string) => (await app.db.owner.query(
  `select channel, sender, recipient, subject, body, meta from app_private.outbox where id = $1`, [id])).rows[0];
const heldOf = async (id: string) => (await app.db.owner.query(`select ai_held from app_public.conversations where id = $1`, [id])).rows[0].ai_held;
const refused = (status: number, error: string, call: () => Promise<{ status: number; body: any }>, tenant = acme) =>
  (t: import('ava').ExecutionContext) => refusedWithoutWrites(t, app, tenant.organization_id, status, error, call);

// ---------------------------------------------------------------------------------------------
// Rule 1: a reply goes out on the conversation's own channel, once
// ---------------------------------------------------------------------------------------------
test.serial('rule 1: an SMS reply goes from the thread\'s number to the contact, through the sink, and holds the AI', async (t) => {
  const res = await reply(acme.keys.org!, acme.ids.ann_sms!, { body: 'See you Monday!' });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body.message, { direction: 'outbound', author: 'person', author_person_id: null, body: 'See you Monday!', status: 'sent' });
  t.like(res.body.conversation, { id: acme.ids.ann_sms, response_mode: 'human', ai_held: true });
  t.deepEqual(await outboxRow(res.body.message.id), { channel: 'sms', sender: '+15550000001', recipient: '+15551230001', subject: null,
    body: 'See you Monday!', meta: { conversation_id: acme.ids.ann_sms, message_id: res.body.message.id } });
  const thread = await app.request('GET', `/api/v1/conversations/${acme.ids.ann_sms}`, { key: acme.keys.org! });
  t.is(thread.body.messages.at(-1).id, res.body.message.id);
  t.is(thread.body.response_mode, 'human');
});

test.serial('rule 1: an SMS or chat reply written with a personal key names its author, as an email reply does', async (t) => {
  for (const id of [acme.ids.gus_sms!, acme.ids.ann_chat!]) {
    const res = await reply(acme.keys.owner_personal!, id, { body: 'Signed, the owner' });
    t.is(res.status, 201, JSON.stringify(res.body));
    t.like(res.body.message, { author: 'person', author_person_id: acme.ids.owner });
    const thread = await app.request('GET', `/api/v1/conversations/${id}`, { key: acme.keys.org! });
    t.is(thread.body.messages.at(-1).author_person_id, acme.ids.owner);
  }
});

test.serial('rule 1: an email reply goes by email as the person, threaded; the contact\'s answer lands in the same thread', async (t) => {
  const res = await reply(acme.keys.owner_personal!, acme.ids.cy_email!, { body: 'Here it is again.' });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body.message, { author: 'person', author_person_id: acme.ids.owner, subject: 'Re: Invoice', status: 'sent' });
  t.is(res.body.conversation.response_mode, 'human');
  const sent = await outboxRow(res.body.message.id);
  t.like(sent, { channel: 'email', sender: 'inbox@acme.example', recipient: 'cy@example.com', subject: 'Re: Invoice', body: 'Here it is again.' });
  t.like(sent.meta, { conversation_id: acme.ids.cy_email, message_id: res.body.message.id,
    headers: { 'Message-ID': `<${res.body.message.id}@acme.example>` } });
  const answer = await inboundEmail(app.db.owner, { to: 'billing@elsewhere.example', from: 'cy@example.com', subject: 'Re: Re: Invoice',
    body: 'Got it', inReplyTo: `<${res.body.message.id}@acme.example>` });
  t.like(answer, { organization_id: acme.organization_id, conversation_id: acme.ids.cy_email });
});

test.serial('rule 1: a chat reply is stored for the web chat and sends nothing by email or SMS', async (t) => {
  const res = await reply(acme.keys.org!, acme.ids.ann_chat!);
  t.is(res.status, 201);
  t.like(res.body.message, { status: 'sent', author: 'person' });
  t.is(await outboxRow(res.body.message.id), undefined);
  t.deepEqual((await app.db.owner.query(`select count(*)::int as n from app_private.outgoing_messages where id = $1`,
    [res.body.message.id])).rows, [{ n: 0 }]);
  t.true(await heldOf(acme.ids.ann_chat!));
});

test.serial('rule 1: a transport that refuses is tried once: the message is failed, nothing is queued to try again', async (t) => {
  const down = await startApp({ env: { SMS_TRANSPORT: 'http://127.0.0.1:9/sms' } });
  try {
    const tenant = await down.apply(writesFixture('Down Dental'));
    const res = await down.request('POST', `/api/v1/conversations/${tenant.ids.ann_sms}/reply`, { key: tenant.keys.org!, body: { body: 'Hello?' } });
    t.is(res.status, 201, JSON.stringify(res.body));
    t.is(res.body.message.status, 'failed');
    t.truthy(res.body.message.error);
    const { rows } = await down.db.owner.query(`select status, error is not null as has_error from app_private.outgoing_messages
      where organization_id = $1`, [tenant.organization_id]);
    t.deepEqual(rows, [{ status: 'failed', has_error: true }]);
    const { rows: jobs } = await down.db.owner.query(`select count(*)::int as n from graphile_worker._private_jobs
      where payload->>'message_id' = $1`, [res.body.message.id]);
    t.deepEqual(jobs, [{ n: 0 }], 'no delivery job: never retried');
    const thread = await down.request('GET', `/api/v1/conversations/${tenant.ids.ann_sms}`, { key: tenant.keys.org! });
    t.like(thread.body.messages.at(-1), { id: res.body.message.id, status: 'failed' });
  } finally {
    await down.close();
  }
});

// ---------------------------------------------------------------------------------------------
// Rule 2: email has no AI; hold stops the AI until resume
// ---------------------------------------------------------------------------------------------
test.serial('rule 2: hold and resume of an email conversation are 422 channel_not_supported', async (t) => {
  await refused(422, 'channel_not_supported', () => hold(acme.keys.org!, acme.ids.cy_email!))(t);
  await refused(422, 'channel_not_supported', () => resume(acme.keys.owner_personal!, acme.ids.cy_email!))(t);
});

test.serial('rule 2: hold makes response_mode human and the AI leaves new messages alone; resume hands back the unanswered one', async (t) => {
  const held = await hold(acme.keys.org!, acme.ids.eve_sms!);
  t.is(held.status, 200);
  t.like(held.body, { response_mode: 'human', ai_held: true, ai_queued: false });
  t.is((await hold(acme.keys.org!, acme.ids.eve_sms!)).body.response_mode, 'human', 'holding again changes nothing');
  const inbound = await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230005', body: 'Are you there?' });
  t.false(inbound.ai_queued as boolean);
  const back = await resume(acme.keys.org!, acme.ids.eve_sms!);
  t.like(back.body, { response_mode: 'ai', ai_held: false, ai_queued: true });
  const { rows } = await app.db.owner.query(`select j.key from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'conversation_ai_reply' and j.payload->>'message_id' = $1`,
    [inbound.message_id]);
  t.deepEqual(rows, [{ key: `conversation_ai:${inbound.message_id}` }]);
  const again = await resume(acme.keys.org!, acme.ids.eve_sms!);
  t.like(again.body, { response_mode: 'ai', ai_queued: false }, 'resuming an answering AI changes nothing');
});

// ---------------------------------------------------------------------------------------------
// Rule 3: an email reply needs a person to send as
// ---------------------------------------------------------------------------------------------
test.serial('rule 3: an email reply with an organization key (no person behind it) is 422 no_acting_user', async (t) => {
  for (const key of [acme.keys.org!, acme.keys.mgr_key!, acme.keys.admin_org!]) {
    await refused(422, 'no_acting_user', () => reply(key, acme.ids.cy_email!))(t);
  }
});

// ---------------------------------------------------------------------------------------------
// Rule 4: which number texts
// ---------------------------------------------------------------------------------------------
test.serial('rule 4: a text goes from the number of the contact\'s location, else the default number', async (t) => {
  const north = await sendSms(acme.keys.org!, { contact_id: acme.ids.ann, body: 'Reminder: Monday 10:00' });
  t.is(north.status, 201, JSON.stringify(north.body));
  t.like(north.body.conversation, { id: acme.ids.ann_sms, business_address: '+15550000001' }, 'ann\'s thread on north\'s number');
  t.like(await outboxRow(north.body.message.id), { sender: '+15550000001', recipient: '+15551230001' });
  const south = await sendSms(acme.keys.org!, { contact_id: acme.ids.fay_client, body: 'Hi Flo' });
  t.is(south.status, 201, JSON.stringify(south.body));
  t.like(south.body.conversation, { business_address: '+15550000000', location_id: acme.ids.south, channel: 'sms', response_mode: 'human' });
  t.like(await outboxRow(south.body.message.id), { sender: '+15550000000', recipient: '+15551230006' });
  const again = await sendSms(acme.keys.org!, { contact_id: acme.ids.fay_client, body: 'Hi again' });
  t.is(again.body.conversation.id, south.body.conversation.id, 'the same thread');
  const chosen = await sendSms(acme.keys.org!, { contact_id: acme.ids.gus, body: 'From south', location_id: acme.ids.south });
  t.is(chosen.status, 201, JSON.stringify(chosen.body));
  t.is(chosen.body.conversation.id, acme.ids.gus_sms, 'south texts from the default number: gus\'s thread on it');
});

test.serial('rule 4: 422 when no number can text the contact', async (t) => {
  await refused(422, 'no_sms_number', () => sendSms(acme.keys.org!, { contact_id: acme.ids.nora, body: 'Hi' }))(t);
  const f = writesFixture('Numberless Dental');
  const numberless = await app.apply({ ...f, organization: { ...f.organization, default_sms_number: null },
    contacts: f.contacts.filter((c) => ['fay_client'].includes(c.ref as string)) });
  await refused(422, 'no_sms_number', () => sendSms(numberless.keys.org!, { contact_id: numberless.ids.fay_client, body: 'Hi' }),
    numberless)(t);
});

test.serial('rule 4: a manager texting a contact whose thread on that number belongs to another location gets 422', async (t) => {
  await refused(422, 'thread_at_other_location', () => sendSms(acme.keys.south_mgr!, { contact_id: acme.ids.gus, body: 'Hi' }))(t);
  const north = await sendSms(acme.keys.north_mgr!, { contact_id: acme.ids.gus, body: 'Hi from North' });
  t.is(north.status, 201, 'north texts from its own number');
  t.is(north.body.conversation.business_address, '+15550000001');
});

// ---------------------------------------------------------------------------------------------
// Rule 5: who may text
// ---------------------------------------------------------------------------------------------
test.serial('rule 5: a MEMBER with texting off, and a Member key, get 403 insufficient_role on every write', async (t) => {
  for (const key of [acme.keys.quiet_personal!, acme.keys.member_key!, acme.keys.north_member!]) {
    await refused(403, 'insufficient_role', () => sendSms(key, { contact_id: acme.ids.bob, body: 'Hi' }))(t);
    await refused(403, 'insufficient_role', () => reply(key, acme.ids.bob_sms!))(t);
    await refused(403, 'insufficient_role', () => hold(key, acme.ids.bob_sms!))(t);
    await refused(403, 'insufficient_role', () => resume(key, acme.ids.bob_sms!))(t);
  }
});

test.serial('rule 5: a MEMBER texts only its own clients at its own locations (404 otherwise)', async (t) => {
  const sam = acme.keys.sam_personal!;
  await refused(404, 'not_found', () => sendSms(sam, { contact_id: acme.ids.ann, body: 'Hi' }))(t);
  await refused(404, 'not_found', () => reply(sam, acme.ids.ann_sms!))(t);
  await refused(404, 'not_found', () => hold(sam, acme.ids.ann_sms!))(t);
  await refused(404, 'not_found', () => reply(sam, acme.ids.bob_sms!))(t);
  await makeOwnClient(app.db, acme.organization_id, acme.ids.staff!, acme.ids.ann!);
  const sent = await sendSms(sam, { contact_id: acme.ids.ann, body: 'Hi Ann, Sam here' });
  t.is(sent.status, 201, JSON.stringify(sent.body));
  t.is(sent.body.message.author_person_id, acme.ids.staff);
  t.is((await reply(sam, acme.ids.ann_chat!)).status, 201);
  t.is((await resume(sam, acme.ids.ann_chat!)).status, 200);
  await makeOwnClient(app.db, acme.organization_id, acme.ids.staff!, acme.ids.bob!);
  await refused(404, 'not_found', () => reply(sam, acme.ids.bob_sms!))(t);
  // far works at south; gus is its client, but gus's thread on the default number is north's
  await makeOwnClient(app.db, acme.organization_id, acme.ids.far!, acme.ids.gus!);
  await refused(404, 'not_found', () => sendSms(acme.keys.far_personal!, { contact_id: acme.ids.gus, body: 'Hi' }))(t);
  // an own-records member: its clients only, like any member
  await refused(404, 'not_found', () => reply(acme.keys.own_personal!, acme.ids.dee_sms!))(t);
  await makeOwnClient(app.db, acme.organization_id, acme.ids.own!, acme.ids.ann!);
  t.is((await hold(acme.keys.own_personal!, acme.ids.ann_sms!)).status, 200);
});

test.serial('rule 5: a MANAGER needs the contacts power, and reaches only its locations', async (t) => {
  for (const key of [acme.keys.north_weak!, acme.keys.weak_mgr_personal!]) {
    await refused(403, 'insufficient_role', () => reply(key, acme.ids.ann_sms!))(t);
    await refused(403, 'insufficient_role', () => sendSms(key, { contact_id: acme.ids.ann, body: 'Hi' }))(t);
  }
  await refused(404, 'not_found', () => reply(acme.keys.north_mgr!, acme.ids.bob_sms!))(t);
  await refused(404, 'not_found', () => sendSms(acme.keys.north_mgr!, { contact_id: acme.ids.bob, body: 'Hi' }))(t);
  await refused(404, 'not_found', () => hold(acme.keys.north_mgr!, acme.ids.cy_email!))(t);
  t.is((await hold(acme.keys.mgr_personal!, acme.ids.ann_chat!)).status, 200);
});

test.serial('the scope conversations:write is required', async (t) => {
  const res = await refused(403, 'insufficient_scope', () => reply(acme.keys.reader!, acme.ids.ann_sms!))(t);
  t.is(res.body.required, 'conversations:write');
});

test.serial('another organization\'s conversations and contacts are 404', async (t) => {
  await refused(404, 'not_found', () => reply(acme.keys.org!, other.ids.ann_sms!))(t);
  await refused(404, 'not_found', () => hold(acme.keys.org!, other.ids.ann_sms!))(t);
  await refused(404, 'not_found', () => resume(acme.keys.org!, other.ids.ann_chat!))(t);
  await refused(404, 'not_found', () => resume(acme.keys.north_mgr!, acme.ids.bob_sms!))(t);
  await refused(404, 'not_found', () => sendSms(acme.keys.org!, { contact_id: other.ids.ann, body: 'Hi' }))(t);
  await refused(404, 'not_found', () => sendSms(acme.keys.org!, { contact_id: acme.ids.ann, body: 'Hi', location_id: other.ids.north }))(t);
});

// ---------------------------------------------------------------------------------------------
// Rule 6: consent and opt-out
// ---------------------------------------------------------------------------------------------
test.serial('rule 6: no consent, or an opt-out, is 409 sms_not_permitted and nothing is sent', async (t) => {
  await refused(409, 'sms_not_permitted', () => sendSms(acme.keys.org!, { contact_id: acme.ids.dee, body: 'Hi' }))(t);
  await refused(409, 'sms_not_permitted', () => reply(acme.keys.org!, acme.ids.dee_sms!))(t);
  await refused(409, 'sms_not_permitted', () => reply(acme.keys.org!, acme.ids.eve_sms!))(t);
  await refused(409, 'sms_not_permitted', () => sendSms(acme.keys.org!, { contact_id: acme.ids.eve, body: 'Hi' }))(t);
  await refused(409, 'sms_not_permitted', () => sendSms(acme.keys.org!, { contact_id: acme.ids.bob, body: 'Hi' }))(t);
  const answered = await reply(acme.keys.org!, acme.ids.bob_sms!, { body: 'Sure, when suits you?' });
  t.is(answered.status, 201, 'bob wrote in this thread: answering him is permitted');
  await inboundSms(app.db.owner, { to: '+15550000000', from: '+15551230002', body: 'STOP' });
  await refused(409, 'sms_not_permitted', () => reply(acme.keys.org!, acme.ids.bob_sms!))(t);
});

test.serial('bad bodies are 400 and write nothing; a location the contact is not at is 409', async (t) => {
  await refused(400, 'bad_request', () => reply(acme.keys.org!, acme.ids.ann_sms!, { body: '   ' }))(t);
  await refused(400, 'bad_request', () => reply(acme.keys.org!, acme.ids.ann_sms!, { body: 'x'.repeat(1601) }))(t);
  await refused(400, 'bad_request', () => reply(acme.keys.org!, acme.ids.ann_sms!, { body: 'hi', channel: 'email' }))(t);
  await refused(400, 'bad_request', () => sendSms(acme.keys.org!, { contact_id: 'nope', body: 'Hi' }))(t);
  await refused(409, 'contact_not_at_location', () => sendSms(acme.keys.org!, { contact_id: acme.ids.ann, body: 'Hi', location_id: acme.ids.south }))(t);
});

test.serial('an email reply to a suppressed address is 409 email_suppressed and sends nothing', async (t) => {
  await app.db.owner.query(`insert into app_public.email_suppressions (organization_id, email, contact_id) values ($1, 'cy@example.com', $2)`,
    [other.organization_id, other.ids.cy]);
  await refused(409, 'email_suppressed', () => reply(other.keys.owner_personal!, other.ids.cy_email!), other)(t);
});
