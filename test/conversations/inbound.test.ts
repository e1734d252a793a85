// Messages from outside: `svc admin inbound sms|email` and the functions behind them. The
// thread is found or opened, the contact matched or created, carrier keywords recorded and
// answered, and the AI's turn queued only while it answers.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { svc } from '../helpers/cli.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';
import { unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { AdminError } from '../../src/admin/commands.ts';
import { inboundEmail, inboundSms } from '../../src/conversations/inbound.ts';
import { inboxFixture } from './fixture.ts';

let app: TestApp;
let acme: Applied;

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(inboxFixture()));
});
test.after.always(async () => { await app?.close(); });

const sms = (from: string, body: string, to = '+15550000001', providerId?: string) =>
  inboundSms(app.db.owner, { to, from, body, providerId });
const q = async (text: string, values: unknown[] = []) => (await app.db.owner.query(text, values)).rows;
const aiJobs = (messageId: string) => q(`select j.key from graphile_worker._private_jobs j join graphile_worker._private_tasks t
  on t.id = j.task_id where t.identifier = 'conversation_ai_reply' and j.payload->>'message_id' = $1`, [messageId]);
const messages = (conversationId: string) => q(`select direction, author, body, status from app_public.conversation_messages
  where conversation_id = $1 order by created_at, id`, [conversationId]);

test.serial('an SMS from a known contact continues its thread on that number and queues the AI\'s answer', async (t) => {
  const r = await sms('+1 555 123 0001', 'Can I come on Tuesday?');
  t.like(r, { organization_id: acme.organization_id, conversation_id: acme.ids.ann_sms, contact_id: acme.ids.ann,
    contact_created: false, keyword: null, ai_queued: true });
  t.deepEqual((await messages(acme.ids.ann_sms!)).at(-1), { direction: 'inbound', author: 'contact', body: 'Can I come on Tuesday?', status: 'received' });
  t.deepEqual(await aiJobs(r.message_id as string), [{ key: `conversation_ai:${r.message_id}` }]);
});

test.serial('an SMS from a new number creates the contact and opens a thread; the next one continues it', async (t) => {
  const first = await sms('+15557770001', 'Hello, are you open Saturday?', '+15550000000');
  t.true(first.contact_created as boolean);
  const [contact] = await q(`select phone, name from app_public.contacts where id = $1`, [first.contact_id]);
  t.deepEqual(contact, { phone: '+15557770001', name: null });
  const [cv] = await q(`select channel, location_id, business_address, ai_held from app_public.conversations where id = $1`, [first.conversation_id]);
  t.deepEqual(cv, { channel: 'sms', location_id: null, business_address: '+15550000000', ai_held: false }, 'the default number names no location');
  const second = await sms('+15557770001', 'Or Sunday?', '+15550000000');
  t.is(second.conversation_id, first.conversation_id);
  t.false(second.contact_created as boolean);
  const third = await sms('+15557770001', 'Or at North?', '+15550000001');
  t.not(third.conversation_id, first.conversation_id, 'another number, another thread');
  const [north] = await q(`select location_id from app_public.conversations where id = $1`, [third.conversation_id]);
  t.is(north.location_id, acme.ids.north);
  t.deepEqual(await q(`select location_id from app_public.contact_locations where contact_id = $1`, [first.contact_id]),
    [{ location_id: acme.ids.north }], 'texting a location\'s number links the contact to it');
});

test.serial('STOP records an opt-out, revokes consent and is confirmed once; START undoes it; HELP answers', async (t) => {
  const stop = await sms('+15551230001', ' stop. ');
  t.like(stop, { keyword: 'stop', ai_queued: false, conversation_id: acme.ids.ann_sms });
  t.deepEqual(await q(`select source, ended_at from app_public.sms_opt_outs where contact_id = $1`, [acme.ids.ann]),
    [{ source: 'keyword', ended_at: null }]);
  t.like((await q(`select sms_consent from app_public.contacts where id = $1`, [acme.ids.ann]))[0], { sms_consent: false });
  t.deepEqual(await aiJobs(stop.message_id as string), []);
  await runJobs(app.db, sinkOnly);
  const [confirmation] = await q(`select sender, recipient, body, meta from app_private.outbox where id = $1`, [stop.reply_message_id]);
  t.like(confirmation, { sender: '+15550000001', recipient: '+15551230001' });
  t.regex(confirmation.body, /^Acme Dental: you are unsubscribed.*START/);
  t.deepEqual(confirmation.meta, { conversation_id: acme.ids.ann_sms, message_id: stop.reply_message_id });
  t.deepEqual((await messages(acme.ids.ann_sms!)).slice(-2).map((m) => [m.author, m.status]), [['contact', 'received'], ['system', 'sent']]);

  const again = await sms('+15551230001', 'STOP');
  t.is((await q(`select count(*)::int as n from app_public.sms_opt_outs where contact_id = $1`, [acme.ids.ann]))[0].n, 1, 'one opt-out');
  t.truthy(again.reply_message_id, 'carriers expect each STOP confirmed');

  const start = await sms('+15551230001', 'Start');
  t.is(start.keyword, 'start');
  t.deepEqual((await q(`select ended_at is not null as ended from app_public.sms_opt_outs where contact_id = $1`, [acme.ids.ann])), [{ ended: true }]);
  t.like((await q(`select sms_consent, sms_consent_source from app_public.contacts where id = $1`, [acme.ids.ann]))[0],
    { sms_consent: true, sms_consent_source: 'SMS keyword START' });

  const help = await sms('+15551230001', 'help');
  t.is(help.keyword, 'help');
  t.like((await q(`select sms_consent from app_public.contacts where id = $1`, [acme.ids.ann]))[0], { sms_consent: true }, 'help changes nothing');
  await runJobs(app.db, sinkOnly);
  const [helpText] = await q(`select body from app_private.outbox where id = $1`, [help.reply_message_id]);
  t.regex(helpText.body, /STOP.*START/);
  t.deepEqual(await aiJobs(help.message_id as string), []);
  t.is((await sms('+15551230001', 'please stop calling me on Mondays')).keyword, null, 'only the keyword alone counts');
});

test.serial('a held thread is not handed to the AI', async (t) => {
  await q(`update app_public.conversations set ai_held = true, held_at = now() where id = $1`, [acme.ids.bob_sms]);
  // south has no number of its own: bob's thread is on the organization's default number
  const held = await sms('+15551230002', 'Anyone?', '+15550000000');
  t.is(held.conversation_id, acme.ids.bob_sms);
  t.false(held.ai_queued as boolean);
  t.deepEqual(await aiJobs(held.message_id as string), []);
});

test.serial('a provider id is recorded once: the same message delivered twice is one message', async (t) => {
  const first = await sms('+15551230004', 'Is my crown ready?', '+15550000001', 'SM123');
  const second = await sms('+15551230004', 'Is my crown ready?', '+15550000001', 'SM123');
  t.is(second.message_id, first.message_id);
  t.true(second.duplicate as boolean);
  t.is((await q(`select count(*)::int as n from app_public.conversation_messages where provider_message_id = 'SM123'`))[0].n, 1);
});

test.serial('unknown numbers and malformed input are refused and write nothing', async (t) => {
  const cases: [() => Promise<unknown>, RegExp][] = [
    [() => sms('+15551230001', 'hi', '+15559999999'), /No organization texts from/],
    [() => sms('555-1234', 'hi'), /--from/],
    [() => inboundSms(app.db.owner, { to: '+15550000001', from: '+15551230001' }), /--body is required/],
    [() => sms('+15551230001', 'x'.repeat(20001)), /longer than 20000/],
    [() => sms('+15551230001', 'a\u0000b'), /NUL/],
    [() => inboundEmail(app.db.owner, { to: 'inbox@nowhere.example', from: 'x@example.com', body: 'hi' }), /No organization receives email/],
    [() => inboundEmail(app.db.owner, { to: 'not-an-address', from: 'x@example.com', body: 'hi' }), /email addresses/],
  ];
  for (const [run, message] of cases) {
    await unchanged(t, app, acme.organization_id, async () => {
      const e = await t.throwsAsync(run);
      t.true(e instanceof AdminError, String(e));
      t.regex(e!.message, message);
    });
  }
});

test.serial('an email continues the contact\'s thread with the same subject, or opens one; nothing answers it', async (t) => {
  const reply = await inboundEmail(app.db.owner, { to: 'INBOX@acme.example', from: 'Cy@Example.com', subject: 'Re: Invoice', body: 'Thanks!' });
  t.like(reply, { organization_id: acme.organization_id, conversation_id: acme.ids.cy_email, contact_id: acme.ids.cy, contact_created: false });
  const fresh = await inboundEmail(app.db.owner, { to: 'inbox@acme.example', from: 'new.person@example.com', subject: 'Prices', body: 'How much?' });
  t.true(fresh.contact_created as boolean);
  const [cv] = await q(`select channel, subject, business_address, ai_held from app_public.conversations where id = $1`, [fresh.conversation_id]);
  t.deepEqual(cv, { channel: 'email', subject: 'Prices', business_address: 'inbox@acme.example', ai_held: false });
  const other = await inboundEmail(app.db.owner, { to: 'inbox@acme.example', from: 'new.person@example.com', subject: 'Parking', body: '?' });
  t.not(other.conversation_id, fresh.conversation_id, 'another subject, another thread');
  t.deepEqual(await q(`select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
    where t.identifier = 'conversation_ai_reply' and j.payload->>'conversation_id' = any($1)`, [[fresh.conversation_id, reply.conversation_id]]),
    [{ n: 0 }]);
});

test.serial('svc admin inbound sms and email print the conversation, message and contact; bad flags are one line', async (t) => {
  const r = await svc(['admin', 'inbound', 'sms', '--to', '+15550000001', '--from', '+15551230004', '--body', 'Thanks'],
    { databaseUrl: app.db.ownerUrl });
  t.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.like(out, { contact_id: acme.ids.dee, conversation_id: acme.ids.dee_sms });
  t.regex(out.message_id, /^[0-9a-f-]{36}$/);
  const e = await svc(['admin', 'inbound', 'email', '--to', 'inbox@acme.example', '--from', 'cy@example.com', '--subject', 'Invoice',
    '--body', 'One more thing'], { databaseUrl: app.db.ownerUrl });
  t.is(e.code, 0, e.stderr);
  t.is(JSON.parse(e.stdout).conversation_id, acme.ids.cy_email);
  const bad = await svc(['admin', 'inbound', 'sms', '--to', '+15550000001', '--from', 'nope', '--body', 'x'], { databaseUrl: app.db.ownerUrl });
  t.not(bad.code, 0);
  t.is(bad.stderr.trim().split('\n').length, 1);
  t.regex(bad.stderr, /--from/);
});
