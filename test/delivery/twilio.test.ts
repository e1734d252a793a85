// The Twilio-compatible SMS provider (issue: Delivery): messages leave through the Messages
// resource of a local fake of Twilio's API and keep its SID; status callbacks and inbound SMS
// come back signed with X-Twilio-Signature (valid, invalid, missing, replayed), each recorded
// once; inbound SMS take the conversations area's path, keywords included; an opted-out number
// gets nothing on any path.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { runJobs } from '../helpers/messages.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { createTransports, type OutgoingMessage, type Transports } from '../../src/delivery/index.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { parseTwilioSetting, twilioSignature, twilioSignatureValid, twilioSmsTransport } from '../../src/delivery/twilio.ts';
import { signedUrl } from '../../src/delivery/webhooks.ts';
import { adminDelivery } from '../../src/delivery/admin.ts';
import type { Request } from 'express';
import { insertSendSchedule, insertSequence } from '../sequences/helpers.ts';
import { enroll, events, stepRuns } from '../sequences/engine-helpers.ts';

const SID = 'ACfake0000000000000000000000000001';
const TOKEN = 'twilio-test-token';
process.env.TWILIO_AUTH_TOKEN = TOKEN;
delete process.env.SVC_BASE_URL;

// --- the fake of Twilio's Messages resource ---------------------------------------------------
interface FakeRequest { path: string; authorization: string | undefined; form: Record<string, string> }
const received: FakeRequest[] = [];
let fakeStatus = 201;
let sidCounter = 0;
/** When set: the request received at this index is answered only once `until` resolves. */
let hold: { index: number; until: Promise<void> } | undefined;
const fake = createServer(async (req: IncomingMessage, res) => {
  let text = '';
  for await (const chunk of req) text += chunk;
  const form = Object.fromEntries(new URLSearchParams(text));
  received.push({ path: req.url!, authorization: req.headers.authorization, form });
  if (hold && received.length - 1 === hold.index) await hold.until;
  const auth = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;
  res.setHeader('content-type', 'application/json');
  if (req.headers.authorization !== auth) {
    res.statusCode = 401;
    res.end(JSON.stringify({ code: 20003, message: 'Authenticate', status: 401 }));
    return;
  }
  if (fakeStatus !== 201) {
    res.statusCode = fakeStatus;
    res.end(JSON.stringify({ code: 21211, message: 'Invalid To number', status: fakeStatus }));
    return;
  }
  const sid = `SM${String(++sidCounter).padStart(32, '0')}`;
  res.statusCode = 201;
  res.end(JSON.stringify({ sid, account_sid: SID, to: form.To, from: form.From, body: form.Body, status: 'queued' }));
});

/** acmeFixture with numbers of its own, so that a number names one organization. */
function smsFixture(name: string, n: number) {
  const base = acmeFixture(name);
  const num = (x: number) => `+1555${300 + n}000${x}`;
  return {
    ...base,
    organization: { ...base.organization, default_sms_number: num(0) },
    locations: base.locations.map((l, i) => ({ ...l, sms_number: num(i + 1) })),
  };
}
const NORTH = '+15553010001';
const ANN = '+15551230001';

let app: TestApp;
let acme: Applied;
let other: Applied;
let transports: Transports;
let setting: string;
test.before(async () => {
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  setting = `twilio+http://${SID}:${TOKEN}@127.0.0.1:${(fake.address() as AddressInfo).port}`;
  ({ app, tenant: acme } = await startWithTenant(smsFixture('Acme Dental', 1), { env: { SMS_TRANSPORT: setting } }));
  other = await app.apply(smsFixture('Other Co', 2));
  transports = { ...createTransports({ emailTransport: 'sink', smsTransport: setting, baseUrl: 'https://svc.example' }), email: sinkTransport };
  await insertSendSchedule(app.db, acme.organization_id);
});
test.after.always(async () => {
  await app?.close();
  fake.closeAllConnections();
  await new Promise<void>((r) => fake.close(() => r()));
});

const orgs = () => [acme.organization_id, other.organization_id];
const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
/** A provider's POST to one of our webhooks, signed as Twilio signs it unless told otherwise. */
const post = (path: string, params: Record<string, string>, signature?: string | null) =>
  app.request('POST', path, { rawBody: form(params), headers: {
    'content-type': 'application/x-www-form-urlencoded',
    ...(signature === null ? {} : { 'x-twilio-signature': signature ?? twilioSignature(TOKEN, app.url + path, params) }) } });
let msgSeq = 0;
const inboundSid = () => `SMin${Date.now()}${++msgSeq}`;
const inbound = (from: string, body: string, sid = inboundSid(), to = NORTH) =>
  post('/webhooks/twilio/sms', { MessageSid: sid, AccountSid: SID, From: from, To: to, Body: body, NumMedia: '0' });
const status = (sid: string, s: string, extra: Record<string, string> = {}) =>
  post('/webhooks/twilio/status', { MessageSid: sid, MessageStatus: s, AccountSid: SID, ...extra });
const outgoing = async (id: string) =>
  (await app.db.owner.query('select * from app_private.outgoing_messages where id = $1', [id])).rows[0];

test('the signature is Twilio\'s: HMAC-SHA1 of the URL and the sorted parameters, base64 (Twilio\'s documented example)', (t) => {
  // https://www.twilio.com/docs/usage/security#validating-requests
  const params = { CallSid: 'CA1234567890ABCDE', Caller: '+14158675310', Digits: '1234', From: '+14158675310', To: '+18005551212' };
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  t.is(twilioSignature('12345', url, params), 'GvWf1cFY/Q7PnoempGyD5oXAezc=');
  t.true(twilioSignatureValid('12345', url, params, 'GvWf1cFY/Q7PnoempGyD5oXAezc='));
  t.false(twilioSignatureValid('12345', url, { ...params, Digits: '1235' }, 'GvWf1cFY/Q7PnoempGyD5oXAezc='));
  t.false(twilioSignatureValid('12345', `${url}&x=1`, params, 'GvWf1cFY/Q7PnoempGyD5oXAezc='));
  t.false(twilioSignatureValid('12345', url, params, undefined));
});

test('SMS_TRANSPORT=twilio://SID:TOKEN@HOST is read; a setting without its parts is refused at start', (t) => {
  t.deepEqual(parseTwilioSetting('twilio://AC1:tok@api.twilio.com'), { accountSid: 'AC1', authToken: 'tok', apiBase: 'https://api.twilio.com' });
  t.is(parseTwilioSetting('https://sms.example/send'), undefined);
  t.throws(() => createTransports({ emailTransport: 'sink', smsTransport: 'twilio://api.twilio.com' }), { message: /account SID/ });
  const err = t.throws(() => createTransports({ emailTransport: 'sink', smsTransport: 'ftp://AC1:secret@x' }));
  t.false(err!.message.includes('secret'), 'the token is not in the message');
});

test.serial('a message leaves through the Messages resource, form-encoded with Basic auth and StatusCallback; the SID is kept', async (t) => {
  const before = received.length;
  const res = await app.request('POST', '/api/v1/conversations/sms', { key: acme.keys.org, body: { contact_id: acme.ids.ann, body: 'See you Monday' } });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.is(res.body.message.status, 'sent');
  const [call] = received.slice(before);
  t.is(call!.path, `/2010-04-01/Accounts/${SID}/Messages.json`);
  t.is(call!.authorization, `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
  t.like(call!.form, { To: ANN, Body: 'See you Monday' });
  t.regex(call!.form.From!, /^\+1555301000[01]$/);
  t.is(call!.form.StatusCallback, `${app.config.baseUrl.replace(/\/+$/, '')}/webhooks/twilio/status`);
  t.is((await outgoing(res.body.message.id)).provider_id, `SM${String(sidCounter).padStart(32, '0')}`);
});

test.serial('a provider refusal is the transport\'s error (the worker retries it), with the provider\'s answer', async (t) => {
  fakeStatus = 400;
  try {
    const res = await app.request('POST', '/api/v1/conversations/sms', { key: acme.keys.org, body: { contact_id: acme.ids.ann, body: 'Hi' } });
    t.is(res.status, 201, JSON.stringify(res.body));
    t.is(res.body.message.status, 'failed');
    t.regex(res.body.message.error, /Twilio answered 400: .*Invalid To number/);
    t.is((await outgoing(res.body.message.id)).provider_id, null);
  } finally {
    fakeStatus = 201;
  }
});

test.serial('a service under a path (SVC_BASE_URL https://host/svc/) asks for its status callbacks there, the URL their signatures are checked against', async (t) => {
  for (const base of ['https://svc.example/svc', 'https://svc.example/svc/']) {
    const transport = twilioSmsTransport(parseTwilioSetting(setting)!, base);
    const m: OutgoingMessage = { organization_id: acme.organization_id, id: randomUUID(), channel: 'sms', sender: NORTH, recipient: ANN,
      subject: null, body: 'Path?', meta: {} };
    await transport.send(m, app.db.owner as never); // (the Twilio transport does not use the transaction)
    t.is(received.at(-1)!.form.StatusCallback, 'https://svc.example/svc/webhooks/twilio/status', base);
    t.is(signedUrl({ originalUrl: '/webhooks/twilio/status' } as Request, { SVC_BASE_URL: base }), 'https://svc.example/svc/webhooks/twilio/status');
  }
});

test.serial('status callbacks: signed ones recorded once per status; invalid, missing or foreign signatures are 403 with nothing recorded', async (t) => {
  const sent = await app.request('POST', '/api/v1/conversations/sms', { key: acme.keys.org, body: { contact_id: acme.ids.ann, body: 'Status?' } });
  const { provider_id: sid, id } = await outgoing(sent.body.message.id);
  const params = { MessageSid: sid, MessageStatus: 'delivered', AccountSid: SID };
  const path = '/webhooks/twilio/status';
  const good = twilioSignature(TOKEN, app.url + path, params);
  for (const [what, signature] of [['missing', null], ['invalid', 'bm90IGEgc2lnbmF0dXJl'], ['of other parameters', twilioSignature(TOKEN, app.url + path, { ...params, MessageStatus: 'failed' })],
    ['under another token', twilioSignature('another-token', app.url + path, params)], ['of another URL', twilioSignature(TOKEN, `${app.url}/webhooks/twilio/sms`, params)]] as const) {
    const res = await unchanged(t, app, orgs(), () => post(path, params, signature), `${what}: nothing recorded`);
    t.is(res.status, 403, what);
    t.is(res.body.error, 'invalid_signature', what);
  }
  const first = await status(sid, 'sent');
  t.is(first.status, 200, JSON.stringify(first.body));
  t.like(first.body, { known: true, recorded: true, message_id: id, type: 'sent' });
  const delivered = await post(path, params, good);
  t.like(delivered.body, { recorded: true, type: 'delivered' });
  // replayed: the same signed request again records nothing
  const replay = await unchanged(t, app, orgs(), () => post(path, params, good));
  t.is(replay.status, 200);
  t.like(replay.body, { known: true, recorded: false, duplicate: true });
  // a late 'sent' does not undo 'delivered'
  const { rows } = await app.db.owner.query(`select type from app_private.delivery_events where message_id = $1 order by id`, [id]);
  t.deepEqual(rows.map((r) => r.type), ['sent', 'delivered']);
  t.is((await outgoing(id)).delivery_status, 'delivered');
  // a message of another system: answered, nothing recorded
  const foreign = await unchanged(t, app, orgs(), () => status('SMnotours', 'delivered'));
  t.like(foreign.body, { known: false, recorded: false });
  // malformed: 400, nothing recorded
  for (const bad of [{ MessageSid: sid, MessageStatus: 'exploded' }, { MessageStatus: 'delivered' }, { MessageSid: '', MessageStatus: 'sent' }] as Record<string, string>[]) {
    const res = await unchanged(t, app, orgs(), () => post(path, bad));
    t.is(res.status, 400, JSON.stringify(bad));
  }
});

test.serial('texts sent together: each provider id is kept as its text is accepted, so a status callback that comes before the batch is recorded finds it', async (t) => {
  const seq = await insertSequence(app.db, acme.organization_id, { steps: [{ step_key: 'text', type: 'sms', body: 'Hi' }] });
  const { rows: contacts } = await app.db.owner.query<{ id: string }>(`insert into app_public.contacts (organization_id, name, phone, sms_consent)
     select $1, 'Batch ' || i, '+1555888000' || i, true from generate_series(1, 2) i returning id`, [acme.organization_id]);
  await app.db.owner.query(`select * from app_private.enroll_contacts($1, $2, $3)`, [acme.organization_id, seq, contacts.map((c) => c.id)]);
  const before = received.length;
  let release!: () => void;
  hold = { index: before + 1, until: new Promise<void>((r) => { release = r; }) };
  const running = runJobs(app.db, transports);
  try {
    const until = async (what: string, check: () => Promise<boolean> | boolean) => {
      for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 25));
      t.true(await check(), what);
    };
    // one text answered, the other held by the provider: the batch is not recorded yet
    await until('both texts at the provider', () => received.length >= before + 2);
    const kept = async () => (await app.db.owner.query(`select m.provider_id, r.status from app_private.outgoing_messages m
       join app_public.step_runs r on r.message_id = m.id where m.organization_id = $1 and m.meta->>'sequence_id' = $2 and m.provider_id is not null`,
    [acme.organization_id, seq])).rows;
    await until('the answered one\'s provider id kept', async () => (await kept()).length === 1);
    const [answered] = await kept();
    t.is(answered.status, 'sending', 'kept before its batch is recorded');
    t.like((await status(answered.provider_id, 'sent')).body, { known: true, recorded: true, type: 'sent' });
  } finally {
    release();
    await running;
    hold = undefined;
  }
  const { rows: runs } = await app.db.owner.query(`select r.status, m.provider_id from app_public.step_runs r join app_private.outgoing_messages m on m.id = r.message_id
     join app_public.enrollments e on e.id = r.enrollment_id where e.sequence_id = $1`, [seq]);
  t.is(runs.length, 2);
  for (const r of runs) t.like(r, { status: 'sent', provider_id: r.provider_id });
  t.true(runs.every((r) => /^SM\d{32}$/.test(r.provider_id)));
});

test.serial('a sequence text leaves through the provider; its status callbacks are the enrollment\'s delivered or failed, in order', async (t) => {
  const seq = await insertSequence(app.db, acme.organization_id, { steps: [{ step_key: 'text', type: 'sms', body: 'Hello {{contact.first_name}}' },
    { step_key: 'done', type: 'wait' }] });
  const enrolled = await enroll(app, acme.keys.org!, seq, { contact_id: acme.ids.ann });
  t.is(enrolled.status, 200, JSON.stringify(enrolled.body));
  const eid = enrolled.body.enrollment.id;
  await runJobs(app.db, transports);
  const [run] = await stepRuns(app.db, eid);
  t.like(run, { step_key: 'text', status: 'sent' });
  const om = await outgoing(run.message_id);
  t.regex(om.provider_id, /^SM\d{32}$/);
  t.is(received.at(-1)!.form.StatusCallback, 'https://svc.example/webhooks/twilio/status');
  t.like((await status(om.provider_id, 'delivered')).body, { recorded: true });
  t.like((await status(om.provider_id, 'delivered')).body, { duplicate: true });
  const types = (await events(app.db, eid)).map((e) => e.type);
  t.deepEqual(types.filter((x) => x === 'delivered'), ['delivered'], 'recorded once');
  t.true(types.indexOf('sent') < types.indexOf('delivered'), types.join());
  // a second enrollment's text undelivered: failed with the provider's error (then failed too: once)
  await app.db.owner.query('delete from app_public.enrollments where id = $1', [eid]);
  const again = await enroll(app, acme.keys.org!, seq, { contact_id: acme.ids.ann });
  await runJobs(app.db, transports);
  const [run2] = await stepRuns(app.db, again.body.enrollment.id);
  const om2 = await outgoing(run2.message_id);
  await status(om2.provider_id, 'undelivered', { ErrorCode: '30003', ErrorMessage: 'Unreachable destination handset' });
  await status(om2.provider_id, 'failed', { ErrorCode: '30003' });
  const evs = await events(app.db, again.body.enrollment.id);
  const types2 = evs.map((e) => e.type);
  t.false(types2.includes('bounced'), types2.join());
  t.true(types2.indexOf('sent') < types2.indexOf('failed'), types2.join());
  t.deepEqual(evs.filter((e) => e.type === 'failed').map((e) => [e.step_key, e.reason, e.message_id]),
    [['text', '30003: Unreachable destination handset', om2.id]]);
  // and through the command: the same kind again for that message is recorded once
  t.like(await adminDelivery(app.db.owner, { messageId: om2.id, event: 'delivered' }), { recorded: true });
  t.like((await status(om2.provider_id, 'delivered')).body, { duplicate: true });
  t.is((await events(app.db, again.body.enrollment.id)).filter((e) => e.type === 'delivered').length, 1);
});

test.serial('a sequence texts from the number people text the contact from (its location\'s), and the answer lands in that one thread', async (t) => {
  // a person texts Ann (linked to North): North's number, one thread
  const person = await app.request('POST', '/api/v1/conversations/sms', { key: acme.keys.org, body: { contact_id: acme.ids.ann, body: 'Your visit is booked' } });
  t.is(person.status, 201, JSON.stringify(person.body));
  const { rows: [thread] } = await app.db.owner.query('select c.id, c.business_address from app_public.conversations c join app_public.conversation_messages m on m.conversation_id = c.id where m.id = $1',
    [person.body.message.id]);
  t.is(thread.business_address, NORTH);
  // an organization-wide sequence texts her: from North's number too, not the default
  const seq = await insertSequence(app.db, acme.organization_id, { exit_conditions: [{ type: 'replied' }],
    steps: [{ step_key: 'hi', type: 'sms', body: 'How was it?' }, { step_key: 'later', type: 'sms', body: 'Again?', delay: { days: 2 } }] });
  const enrolled = await enroll(app, acme.keys.org!, seq, { contact_id: acme.ids.ann });
  t.is(enrolled.status, 200, JSON.stringify(enrolled.body));
  const before = received.length;
  await runJobs(app.db, transports);
  const [run] = await stepRuns(app.db, enrolled.body.enrollment.id);
  t.like(run, { step_key: 'hi', status: 'sent' });
  t.is((await outgoing(run.message_id)).sender, NORTH);
  t.like(received.slice(before).at(-1)!.form, { From: NORTH, To: ANN, Body: 'How was it?' });
  // Ann answers the text she got: the person's thread, and the sequence's reply
  const answer = await inbound(ANN, 'It was great');
  t.is(answer.status, 200, JSON.stringify(answer.body));
  const { rows } = await app.db.owner.query(`select conversation_id from app_public.conversation_messages where body = 'It was great'`);
  t.deepEqual(rows.map((r) => r.conversation_id), [thread.id]);
  const types = (await events(app.db, enrolled.body.enrollment.id)).map((e) => e.type);
  t.true(types.includes('replied'), types.join());
  // the rule itself: a contact linked nowhere with a number gets the sequence location's, else the default
  const { rows: [n] } = await app.db.owner.query(`select app_private.contact_sms_sender($1, $2, null) as own,
      app_private.contact_sms_sender($1, gen_random_uuid(), $3) as loc, app_private.contact_sms_sender($1, gen_random_uuid(), null) as dflt`,
    [acme.organization_id, acme.ids.ann, acme.ids.south]);
  t.deepEqual(n, { own: NORTH, loc: '+15553010002', dflt: '+15553010000' });
});

test.serial('an inbound SMS opens the contact\'s conversation at the number\'s location, once per MessageSid; refusals record nothing', async (t) => {
  const sid = inboundSid();
  const res = await inbound('+15557770001', 'Do you open on Saturdays?', sid);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.regex(String(res.body), /<Response><\/Response>/);
  const { rows: [m] } = await app.db.owner.query(`select m.*, c.location_id, c.business_address, c.contact_id from app_public.conversation_messages m
      join app_public.conversations c on c.organization_id = m.organization_id and c.id = m.conversation_id where m.provider_message_id = $1`, [sid]);
  t.like(m, { organization_id: acme.organization_id, direction: 'inbound', body: 'Do you open on Saturdays?', location_id: acme.ids.north,
    business_address: NORTH });
  // the same delivery again: recorded once
  const again = await unchanged(t, app, orgs(), () => inbound('+15557770001', 'Do you open on Saturdays?', sid));
  t.is(again.status, 200);
  // the same delivery five times at once: recorded once
  const racing = inboundSid();
  const answers = await Promise.all(Array.from({ length: 5 }, () => inbound('+15557770003', 'Are you open?', racing)));
  t.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200]);
  const { rows: [{ n }] } = await app.db.owner.query('select count(*)::int as n from app_public.conversation_messages where provider_message_id = $1', [racing]);
  t.is(n, 1);
  // bad, missing signature; unknown number; malformed
  const params = { MessageSid: inboundSid(), From: '+15557770002', To: NORTH, Body: 'Hello' };
  for (const signature of [null, 'AAAA', twilioSignature('wrong', `${app.url}/webhooks/twilio/sms`, params)]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 403, 'invalid_signature', () => post('/webhooks/twilio/sms', params, signature));
  }
  const nobody = await unchanged(t, app, orgs(), () => inbound('+15557770002', 'Hello', inboundSid(), '+15559999999'));
  t.is(nobody.status, 404);
  t.is(nobody.body.error, 'unknown_number');
  for (const bad of [{ ...params, From: 'not a number' }, { ...params, Body: '' }, { ...params, MessageSid: '' }, { ...params, MessageSid: 'SM\u0000x' }, { ...params, Body: 'hi\u0000' }, { From: params.From }]) {
    const r = await unchanged(t, app, orgs(), () => post('/webhooks/twilio/sms', bad));
    t.is(r.status, 400, JSON.stringify(bad));
  }
});

const optedOut = async (org: string, phone: string) => (await app.db.owner.query(
  'select count(*)::int as n from app_public.sms_opt_outs where organization_id = $1 and phone = $2 and ended_at is null', [org, phone])).rows[0].n === 1;
const systemReplies = async (org: string, phone: string) => (await app.db.owner.query(
  `select body from app_private.outgoing_messages where organization_id = $1 and recipient = $2 and channel = 'sms'
     and meta ? 'conversation_id' and body like 'Acme Dental:%' order by created_at, id`, [org, phone])).rows.map((r) => r.body);

test.serial('every carrier keyword, any case and whole message: STOP opts out with one confirmation, START resubscribes, HELP helps', async (t) => {
  let n = 10;
  for (const word of ['STOP', 'stopall', 'Unsubscribe', 'CANCEL', 'end', 'QUIT', 'revoke', 'OptOut', 'stop.']) {
    const phone = `+155577710${n++}`;
    const res = await inbound(phone, word);
    t.is(res.status, 200, word);
    t.true(await optedOut(acme.organization_id, phone), `${word} opts out`);
    const replies = await systemReplies(acme.organization_id, phone);
    t.is(replies.length, 1, `${word}: one confirmation`);
    t.regex(replies[0]!, /unsubscribed/);
    const back = await inbound(phone, n % 2 ? 'START' : 'unstop');
    t.is(back.status, 200);
    t.false(await optedOut(acme.organization_id, phone), `${word}: START ends the opt-out`);
  }
  const help = await inbound('+15557771099', 'help');
  t.is(help.status, 200);
  t.false(await optedOut(acme.organization_id, '+15557771099'));
  t.regex((await systemReplies(acme.organization_id, '+15557771099'))[0]!, /reply STOP to unsubscribe/);
  // a keyword inside a sentence is not one
  await inbound('+15557771098', 'I will stop by at noon');
  t.false(await optedOut(acme.organization_id, '+15557771098'));
});

test.serial('a number opted out by a plain-language text gets nothing on any path: API send, sequence step, test_step', async (t) => {
  const res = await inbound(ANN, 'Please stop texting me.');
  t.is(res.status, 200);
  t.true(await optedOut(acme.organization_id, ANN));
  t.is((await systemReplies(acme.organization_id, ANN)).filter((b) => /unsubscribed/.test(b)).length, 1, 'one confirmation');
  // what reaches the provider for that number, but the opt-out's own confirmation (delivered by the jobs run below)
  const toAnn = () => received.filter((r) => r.form.To === ANN && !/unsubscribed/.test(r.form.Body!)).length;
  const before = toAnn();
  // the API
  await refusedWithoutWrites(t, app, acme.organization_id, 409, 'sms_not_permitted',
    () => app.request('POST', '/api/v1/conversations/sms', { key: acme.keys.org, body: { contact_id: acme.ids.ann, body: 'Are you sure?' } }));
  // a sequence step: skipped, opted_out
  const seq = await insertSequence(app.db, acme.organization_id, { steps: [{ step_key: 'text', type: 'sms', body: 'Hi' }, { step_key: 'done', type: 'wait' }] });
  const e = await enroll(app, acme.keys.org!, seq, { contact_id: acme.ids.ann });
  t.is(e.status, 200, JSON.stringify(e.body));
  await runJobs(app.db, transports);
  t.deepEqual((await stepRuns(app.db, e.body.enrollment.id)).filter((r) => r.step_key === 'text').map((r) => [r.status, r.reason]),
    [['skipped', 'opted_out']]);
  // sequences_test_step
  const tested = await app.request('POST', `/api/v1/sequences/${seq}/steps/text/test`, { key: acme.keys.org, body: { contact_id: acme.ids.ann } });
  t.like(tested.body, { success: false, reason_code: 'opted_out' });
  const byPhone = await app.request('POST', `/api/v1/sequences/${seq}/steps/text/test`, { key: acme.keys.org, body: { to_phone: ANN } });
  t.like(byPhone.body, { success: false, reason_code: 'opted_out' });
  t.is(toAnn(), before, 'nothing reached the provider for that number');
  // the other organization's contact with the same number is not opted out
  t.false(await optedOut(other.organization_id, ANN));
});
