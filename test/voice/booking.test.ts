// A voice platform books through the receptionist: the built-in dialogue (a call's turns, some
// streamed), then a fake model with tool calls; the appointment is the caller's at the called
// location, booked once even when a turn is repeated; the voice webhook's call record then shows
// the call's conversation and the appointment it booked. A tool call naming another contact is
// refused as over SMS.
import { createServer, type Server } from 'node:http';
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { signVoiceBody } from '../../src/calls/webhook.ts';
import { adminVoiceSecret } from '../../src/voice/secret.ts';
import { appointmentsOf, clinicFixture } from '../receptionist/helpers.ts';
import { call, post, wordsOf, type Platform } from './helpers.ts';

process.env.VOICE_WEBHOOK_SECRET = 'voice-booking-secret';

let app: TestApp;
let acme: Applied;
let platform: Platform;
let fake: Server;
let fakeUrl = '';
type Msg = { role: string; content: string | null; tool_calls?: unknown[] };
let script: (messages: Msg[]) => unknown = () => ({ role: 'assistant', content: 'Hello!' });

test.before(async () => {
  fake = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const body = JSON.parse(raw);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: script(body.messages), finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}/v1`;
  ({ app, tenant: acme } = await startWithTenant(clinicFixture()));
  platform = { url: app.url, secret: (await adminVoiceSecret(app.db.owner, acme.organization_id)).secret };
});
test.after.always(async () => {
  delete process.env.AI_BASE_URL;
  await app?.close();
  await new Promise<void>((resolve) => fake.close(() => resolve()));
});

const callerId = async (phone: string) => (await app.db.owner.query(
  `select id from app_public.contacts where organization_id = $1 and phone = $2`, [acme.organization_id, phone])).rows[0].id as string;

async function webhookAndCall(callId: string, from: string, to: string) {
  const raw = JSON.stringify({ call_id: callId, from, to, duration_seconds: 60 });
  const res = await fetch(`${app.url}/webhooks/voice`, { method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-signature': signVoiceBody('voice-booking-secret', raw) }, body: raw });
  const { call_id } = await res.json() as { call_id: string };
  return (await app.request('GET', `/api/v1/calls/${call_id}`, { key: acme.keys.org })).body;
}

test.serial('the built-in dialogue books on the phone: service, slots, a number; once, even when a turn is repeated', async (t) => {
  const metadata = { call_id: 'book-builtin', from: '+15557772001', to: '+15550000001' };
  const c = call(platform, metadata);
  t.regex(wordsOf(await c.say('I would like to book an appointment')), /Which service\? 1\) Cleaning 2\) Whitening/);
  const slots = await c.say('1', { stream: true });
  t.regex(wordsOf(slots), /1\) .*Reply 1, 2 or 3 to book\./s);
  const booked = await c.say('1');
  t.regex(booked.body.choices[0].message.content, /^Booked: Cleaning on .* at North\./);
  const contact = await callerId(metadata.from);
  let mine = await appointmentsOf(app, contact);
  t.is(mine.length, 1);
  t.is(mine[0].location_id, acme.ids.north);
  // the platform repeats the last turn: the same answer, no second booking
  const again = await post(platform, { messages: c.messages.slice(0, -1), metadata, stream: true });
  t.is(wordsOf(again), booked.body.choices[0].message.content);
  mine = await appointmentsOf(app, contact);
  t.is(mine.length, 1);

  const record = await webhookAndCall(metadata.call_id, metadata.from, metadata.to);
  const { rows: [v] } = await app.db.owner.query(`select conversation_id from app_private.voice_calls where call_id = $1`, [metadata.call_id]);
  t.is(record.conversation_id, v.conversation_id);
  t.deepEqual(record.appointment_ids, [mine[0].id]);
});

test.serial('a model with tool calls books on the phone, bound to the caller and the called location', async (t) => {
  process.env.AI_BASE_URL = fakeUrl;
  try {
    const s = new Date(Date.now() + 2 * 86400000);
    s.setUTCHours(15, 0, 0, 0);
    const when = { start_time: s.toISOString(), end_time: new Date(s.getTime() + 30 * 60000).toISOString() };
    const rounds = (m: Msg[]) => m.filter((x) => x.role === 'assistant' && x.tool_calls).length;
    const calls = (...cs: [string, unknown][]) => ({ role: 'assistant', content: null,
      tool_calls: cs.map(([name, args], i) => ({ id: `call_${i}`, type: 'function', function: { name, arguments: JSON.stringify(args) } })) });
    script = (messages) => {
      const r = rounds(messages);
      if (r === 0) return calls(['appointments_create', { ...when, offering_id: acme.ids.cleaning, contact_id: acme.ids.bob }]);
      if (r === 1) return calls(['appointments_create', { ...when, offering_id: acme.ids.cleaning }]);
      return { role: 'assistant', content: 'You are booked for a cleaning. Goodbye!' };
    };
    const metadata = { call_id: 'book-model', from: '+15557772002', to: '+15550000001' };
    const c = call(platform, metadata);
    const r = await c.say('Book me a cleaning the day after tomorrow at three', { stream: true });
    t.is(wordsOf(r), 'You are booked for a cleaning. Goodbye!');
    t.false(r.text.includes('appointments_create'), 'tool calls are never streamed');
    const mine = await appointmentsOf(app, await callerId(metadata.from));
    t.is(mine.length, 1);
    t.is(mine[0].starts_at.toISOString(), when.start_time);
    t.is(mine[0].location_id, acme.ids.north);
    t.is((await appointmentsOf(app, acme.ids.bob!)).filter((a) => a.starts_at.toISOString() === when.start_time).length, 0,
      'another contact named by the model: refused');
  } finally {
    delete process.env.AI_BASE_URL;
  }
});
