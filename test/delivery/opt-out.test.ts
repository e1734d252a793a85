// The plain-language opt-out (issue: Delivery; US rules since April 2025 count an opt-out "by any
// reasonable method"): the whole message must be a request to stop, detected conservatively.
// These are the phrasings app_private.sms_plain_opt_out accepts and the near-misses it refuses
// (db/schema/conversations.sql), and the same rule through `svc admin inbound sms`'s
// function: the operator's simulation and the provider's webhook take one path.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inboundSms } from '../../src/conversations/inbound.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(acmeFixture())); });
test.after.always(async () => { await app?.close(); });

const ACCEPTED = [
  'Please stop texting me', 'please stop texting me.', 'Stop texting me!', 'STOP TEXTING ME', 'stop messaging me please',
  'Stop sending me texts', 'stop sending messages', 'Please stop contacting me', 'quit texting me', 'Stop texting me, thanks',
  'Unsubscribe me', 'unsubscribe me please', 'Please unsubscribe me', 'unsubscribe me from this list',
  "Don't text me again", 'dont text me anymore', 'Do not text me', 'Do not contact me again', 'Never text me again',
  "don’t message me", 'Please do not text this number', 'No more texts please', 'no more messages',
  'Remove me from your list', 'Please take me off your list', 'take my number off your list', 'remove this number from your texting list',
  'Opt out', 'opt me out', 'opt-out', 'I want to unsubscribe', "I'd like to opt out", 'I would like to stop receiving texts',
  'Hi, please stop texting me', 'stop all texts', 'STOP MESSAGES',
];
const REFUSED = [
  "Don't stop texting me", 'Please don\'t stop', 'Can you stop by tomorrow?', 'I will stop by at noon', 'stop by the office',
  'Please stop texting me after 8pm', 'Do not text me before 9am', "don't text me back, call me instead",
  'Can I unsubscribe my husband?', 'How do I unsubscribe?', 'Should I opt out of the reminders?', 'I can\'t stop smiling',
  'stop', // a keyword, not plain language (sms_keyword answers it)
  'Stopped by yesterday, no one was there', 'texting me is fine', 'Will you stop texting me if I pay?',
  'My brother wants you to stop texting him', 'Remove me from the waitlist for Tuesday', 'No more appointments this week',
  'I never text', 'please text me', 'Yes', 'Thanks!', '', 'Hello, is this Acme Dental?',
];

const plain = async (body: string) => (await app.db.owner.query('select app_private.sms_plain_opt_out($1) as yes', [body])).rows[0].yes as boolean;
const keyword = async (body: string) => (await app.db.owner.query('select app_private.sms_keyword($1) as k', [body])).rows[0].k as string | null;

test('the phrasings accepted as an opt-out', async (t) => {
  for (const body of ACCEPTED) {
    t.true(await plain(body), body);
    t.is(await keyword(body), 'stop', body);
  }
});

test('the near-misses refused: conditional, negated, about someone else, a question, or more than the request', async (t) => {
  for (const body of REFUSED) t.false(await plain(body), body);
  for (const body of REFUSED.filter((b) => b !== 'stop')) t.is(await keyword(body), null, body);
});

test('the CTIA keyword list, whole message, any case, trailing punctuation ignored; nothing else', async (t) => {
  for (const word of ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT', 'stop!', ' Quit ', 'revoke.']) {
    t.is(await keyword(word), 'stop', word);
  }
  for (const word of ['START', 'unstop']) t.is(await keyword(word), 'start', word);
  for (const word of ['HELP', 'info']) t.is(await keyword(word), 'help', word);
  for (const word of ['STOP NOW PLEASE DONT', 'the end', 'cancel my appointment', 'ended', 'quitting', 'START TIME?', 'help me book']) {
    t.is(await keyword(word), null, word);
  }
});

test.serial('`svc admin inbound sms` takes the same path: a plain-language opt-out is recorded and confirmed once', async (t) => {
  const r = await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230001', body: "Please don't text me again", providerId: 'SMcli1' });
  t.is(r.keyword, 'stop');
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_public.sms_opt_outs
     where organization_id = $1 and phone = '+15551230001' and ended_at is null`, [acme.organization_id]);
  t.is(rows[0].n, 1);
  const { rows: [{ sms_consent }] } = await app.db.owner.query('select sms_consent from app_public.contacts where id = $1', [acme.ids.ann]);
  t.false(sms_consent);
  const again = await inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230001', body: "Please don't text me again", providerId: 'SMcli1' });
  t.true(again.duplicate);
  const { rows: replies } = await app.db.owner.query(`select body from app_private.outgoing_messages
     where organization_id = $1 and recipient = '+15551230001' and body like '%unsubscribed%'`, [acme.organization_id]);
  t.is(replies.length, 1, 'one confirmation');
});
