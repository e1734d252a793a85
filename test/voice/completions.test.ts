// The receptionist on the phone, played as a voice platform plays it: chat-completions requests
// a call makes, streamed and not; the secret, the numbers, the protocol's 400s, the bounds, a
// repeated turn, a hang-up mid-stream.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { adminVoiceSecret } from '../../src/voice/secret.ts';
import { COMPLETIONS_PATH, HANDOVER_CALLBACK, HANDOVER_TRANSFER } from '../../src/voice/completions.ts';
import { signVoiceBody } from '../../src/calls/webhook.ts';
import { call, chunksOf, post, wordsOf, type Platform } from './helpers.ts';

process.env.VOICE_WEBHOOK_SECRET = 'voice-webhook-test-secret';

let app: TestApp;
let tenant: Applied;
let platform: Platform;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture()));
  const fx = acmeFixture('Other Co');
  fx.organization.default_sms_number = '+15559990000';
  fx.locations[0]!.sms_number = '+15559990001';
  await app.apply(fx);
  platform = { url: app.url, secret: (await adminVoiceSecret(app.db.owner, tenant.organization_id)).secret };
});
test.after.always(async () => { await app?.close(); });

const count = async (table: string) => (await app.db.owner.query(`select count(*)::int as n from ${table}`)).rows[0].n;
const writes = async () => ({ messages: await count('app_public.conversation_messages'), calls: await count('app_private.voice_calls'),
  contacts: await count('app_public.contacts'), conversations: await count('app_public.conversations') });
const body = (over: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content: 'hours?' }],
  metadata: { call_id: 'call-x', from: '+15557770009', to: '+15550000001' }, ...over });

test.serial('a call: hours non-streamed, then a hand-over streamed; one conversation on channel chat at the called location', async (t) => {
  const c = call(platform, { call_id: 'call-hours', from: '+15557770001', to: '+15550000001' });
  const first = await c.say('What are your opening hours?');
  t.is(first.status, 200, first.text);
  t.is(first.body.object, 'chat.completion');
  t.is(first.body.model, 'svc-receptionist');
  t.is(first.body.choices[0].message.role, 'assistant');
  t.regex(first.body.choices[0].message.content, /North is open Mon 09:00-17:00/);
  t.is(first.body.choices[0].finish_reason, 'stop');

  const second = await c.say('Can I speak to a person?', { stream: true });
  t.is(second.status, 200);
  t.regex(second.headers.get('content-type')!, /text\/event-stream/);
  t.true(second.text.trimEnd().endsWith('data: [DONE]'));
  const chunks = chunksOf(second.text);
  t.true(chunks.every((ch) => ch.object === 'chat.completion.chunk' && ch.id === chunks[0].id && ch.model === 'svc-receptionist'
    && Number.isInteger(ch.created) && ch.choices[0].index === 0));
  t.is(chunks[0].choices[0].delta.role, 'assistant');
  t.is(chunks.at(-1).choices[0].finish_reason, 'stop');
  t.is(wordsOf(second), HANDOVER_CALLBACK);

  const { rows: [cv] } = await app.db.owner.query(
    `select cv.channel, cv.location_id, cv.ai_held, cv.business_address, c.phone from app_private.voice_calls v
       join app_public.conversations cv on cv.organization_id = v.organization_id and cv.id = v.conversation_id
       join app_public.contacts c on c.organization_id = cv.organization_id and c.id = cv.contact_id where v.call_id = 'call-hours'`);
  t.like(cv, { channel: 'chat', location_id: tenant.ids.north, ai_held: true, business_address: '+15550000001', phone: '+15557770001' });
  const { rows: thread } = await app.db.owner.query(
    `select m.author, m.body from app_public.conversation_messages m join app_private.voice_calls v on v.conversation_id = m.conversation_id
      where v.call_id = 'call-hours' order by m.created_at, m.id`);
  // the hand-over tells the contact once, in the thread, as for SMS and chat
  t.deepEqual(thread.map((m) => m.author), ['contact', 'ai', 'contact', 'ai']);

  // held: the next turn hands over again; with a transfer number the platform is asked to transfer
  const c2 = call(platform, { call_id: 'call-hours', from: '+15557770001', to: '+15550000001', transfer_number: '+15550001111' });
  c2.messages.push(...c.messages.slice(1));
  const third = await c2.say('Hello?');
  t.is(third.body.choices[0].message.content, HANDOVER_TRANSFER);
  t.is(third.body.choices[0].finish_reason, 'tool_calls');
  t.like(third.body.choices[0].message.tool_calls[0], { type: 'function', function: { name: 'transferCall' } });
  t.deepEqual(JSON.parse(third.body.choices[0].message.tool_calls[0].function.arguments), { destination: '+15550001111' });
  t.like(third.body.handover, { transfer_to: '+15550001111' });
});

test.serial('the contact is the caller\'s (matched by number), and the default number reaches the organization with no location', async (t) => {
  const r = await post(platform, body({ metadata: { call_id: 'call-ann', from: '+15551230001', to: '+15550000000' } }));
  t.is(r.status, 200);
  const { rows: [v] } = await app.db.owner.query(`select contact_id, location_id from app_private.voice_calls where call_id = 'call-ann'`);
  t.is(v.contact_id, tenant.ids.ann);
  t.is(v.location_id, null);
});

test.serial('a repeated turn gets the same answer and writes nothing more', async (t) => {
  const req = body({ metadata: { call_id: 'call-again', from: '+15557770002', to: '+15550000001' } });
  const a = await post(platform, req);
  const before = await writes();
  const b = await post(platform, { ...req, stream: true });
  t.is(wordsOf(b), a.body.choices[0].message.content);
  t.deepEqual(await writes(), before);
});

test.serial('a wrong, revoked or missing secret: 401 with no detail, nothing written', async (t) => {
  const before = await writes();
  const old = platform.secret;
  for (const secret of [null, 'svc_voice_' + 'x'.repeat(40), 'Basic abc', 'svc_sk_' + 'A'.repeat(32)]) {
    const r = await post(platform, body(), { secret });
    t.is(r.status, 401);
    t.deepEqual(r.body, { error: { message: 'Unauthorized', type: 'authentication_error', param: null, code: null } });
  }
  platform.secret = (await adminVoiceSecret(app.db.owner, tenant.organization_id)).secret;
  t.is((await post(platform, body(), { secret: old })).status, 401, 'a rotated secret stops working');
  t.deepEqual(await writes(), before);
});

test.serial('a number that is not the organization\'s: 404, nothing written', async (t) => {
  const before = await writes();
  for (const to of ['+15559990001', '+15559990000', '+15551112222']) {
    const r = await post(platform, body({ metadata: { call_id: 'call-404', from: '+15557770003', to } }));
    t.is(r.status, 404);
    t.like(r.body.error, { type: 'invalid_request_error', param: 'metadata.to' });
  }
  t.deepEqual(await writes(), before);
});

test.serial('bodies that are not the protocol: 400 in OpenAI\'s shape, nothing written', async (t) => {
  const before = await writes();
  const cases: [unknown, string | null][] = [
    [{}, 'messages'],
    [body({ messages: [] }), 'messages'],
    [body({ messages: [{ role: 'robot', content: 'x' }] }), 'messages.0.role'],
    [body({ messages: 'hello' }), 'messages'],
    [body({ stream: 'yes' }), 'stream'],
    [body({ metadata: undefined }), 'metadata'],
    [body({ metadata: { call_id: '', from: '+15557770004', to: '+15550000001' } }), 'metadata.call_id'],
    [body({ metadata: { call_id: 'c', from: 'nobody', to: '+15550000001' } }), 'metadata.from'],
    [body({ metadata: { call_id: 'c', from: '+15557770004', to: '+15550000001', transfer_number: 'x' } }), 'metadata.transfer_number'],
    [body({ messages: [{ role: 'user', content: '   ' }] }), 'messages'],
    [body({ messages: [{ role: 'user', content: 'x'.repeat(2001) }] }), 'messages'],
    [[1, 2], null],
  ];
  for (const [b, param] of cases) {
    const r = await post(platform, b);
    t.is(r.status, 400, JSON.stringify(b).slice(0, 100));
    t.is(r.body.error.type, 'invalid_request_error');
    t.is(r.body.error.param, param);
    t.is(typeof r.body.error.message, 'string');
  }
  t.is((await post(platform, null, { raw: '{"messages": [' })).status, 400);
  t.is((await post(platform, null, { raw: 'messages=1', contentType: 'text/plain' })).status, 400);
  t.deepEqual(await writes(), before);
});

test.serial('an opening request with no caller words gets a greeting and writes nothing', async (t) => {
  const before = await writes();
  const r = await post(platform, body({ messages: [{ role: 'system', content: 'Be nice' }], stream: true }));
  t.is(r.status, 200);
  t.regex(wordsOf(r), /How can I help/);
  t.deepEqual(await writes(), before);
});

test.serial('a call past its bound of turns is handed over without writing the turn', async (t) => {
  const metadata = { call_id: 'call-long', from: '+15557770005', to: '+15550000001' };
  await post(platform, body({ metadata }));
  await app.db.owner.query(`update app_private.voice_calls set turns = 60 where call_id = 'call-long'`);
  const before = await writes();
  const r = await post(platform, body({ metadata, messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'hours?' }] }));
  t.is(wordsOf(r), HANDOVER_CALLBACK);
  t.deepEqual(await writes(), before);
});

test.serial('a platform that hangs up mid-stream leaves the turn whole: asked again, the same answer', async (t) => {
  const req = body({ stream: true, metadata: { call_id: 'call-hangup', from: '+15557770006', to: '+15550000001' } });
  const ctl = new AbortController();
  const res = await fetch(platform.url + COMPLETIONS_PATH, { method: 'POST', signal: ctl.signal,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${platform.secret}` }, body: JSON.stringify(req) });
  ctl.abort();
  await res.body?.cancel().catch(() => undefined);
  await new Promise((r) => setTimeout(r, 300));
  const { rows } = await app.db.owner.query(
    `select t.answer, (select count(*)::int from app_public.conversation_messages m where m.conversation_id = v.conversation_id) as n
       from app_private.voice_turns t join app_private.voice_calls v using (organization_id, call_id) where t.call_id = 'call-hangup'`);
  t.is(rows.length, 1);
  t.truthy(rows[0].answer);
  t.is(rows[0].n, 2, 'the caller\'s words and the answer');
  const again = await post(platform, req);
  t.is(wordsOf(again), rows[0].answer.spoken);
});

test.serial('the call\'s record from the voice webhook shows the call\'s conversation and what it booked; a repeat changes nothing', async (t) => {
  const metadata = { call_id: 'call-linked', from: '+15557770007', to: '+15550000001' };
  t.is((await post(platform, body({ metadata }))).status, 200);
  const { rows: [v] } = await app.db.owner.query(`select organization_id, conversation_id, contact_id, location_id from app_private.voice_calls
    where call_id = 'call-linked'`);
  // an appointment booked during the call: the receptionist links it through the conversation's interaction
  const { rows: [appt] } = await app.db.owner.query(`select id from app_public.appointments where organization_id = $1 limit 1`, [v.organization_id]);
  if (appt) {
    await app.db.owner.query(`update app_public.interactions set appointment_id = $2 where conversation_id = $1`, [v.conversation_id, appt.id]);
  }
  const raw = JSON.stringify({ call_id: 'call-linked', from: metadata.from, to: metadata.to, duration_seconds: 42,
    transcript: [{ speaker: 'caller', text: 'hours?' }] });
  const hook = () => fetch(`${app.url}/webhooks/voice`, { method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-signature': signVoiceBody('voice-webhook-test-secret', raw) }, body: raw });
  const recorded = await (await hook()).json() as { call_id: string; contact_id: string };
  t.is(recorded.contact_id, v.contact_id);
  const again = await (await hook()).json() as { call_id: string; duplicate: boolean };
  t.like(again, { call_id: recorded.call_id, duplicate: true });
  const got = await app.request('GET', `/api/v1/calls/${recorded.call_id}`, { key: tenant.keys.org });
  t.is(got.status, 200, JSON.stringify(got.body));
  t.is(got.body.conversation_id, v.conversation_id);
  t.deepEqual(got.body.appointment_ids, appt ? [appt.id] : []);
  const conv = await app.request('GET', `/api/v1/conversations/${v.conversation_id}`, { key: tenant.keys.org });
  t.is(conv.status, 200);
  t.is(conv.body.channel, 'chat');
  const list = await app.request('GET', `/api/v1/calls?contact_id=${v.contact_id}`, { key: tenant.keys.org });
  t.is(list.body.items[0].conversation_id, v.conversation_id);
});
