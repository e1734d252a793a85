// The AI receptionist: an inbound SMS answered through a fake OpenAI-compatible server, hold →
// not answered → resume → answered, hand-over, the deterministic responder, and the job's
// crash safety (a failing AI retried, a job run twice answering once).
import test from 'ava';
import { createServer, type Server } from 'node:http';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inboundSms } from '../../src/conversations/inbound.ts';
import { inboxFixture } from './fixture.ts';

interface Seen { path: string; authorization?: string; body: { model: string; messages: { role: string; content: string }[] } }

/** A fake chat-completions server: answers what `reply` says, records every request. */
let fake: Server;
let fakeUrl: string;
const seen: Seen[] = [];
let reply: (last: string) => { status: number; content?: string } = () => ({ status: 200, content: 'Happy to help!' });

let app: TestApp;
let acme: Applied;

test.before(async () => {
  fake = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const body = JSON.parse(raw) as Seen['body'];
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const answer = reply(body.messages.at(-1)?.content ?? '');
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.status === 200
        ? { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: answer.content } }] }
        : { error: { message: 'overloaded' } }));
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const address = fake.address();
  fakeUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
  ({ app, tenant: acme } = await startWithTenant(inboxFixture()));
});
test.after.always(async () => {
  await app?.close();
  await new Promise<void>((resolve) => (fake ? fake.close(() => resolve()) : resolve()));
});

const useFakeAi = () => {
  process.env.AI_BASE_URL = fakeUrl;
  process.env.AI_API_KEY = 'sk-test';
  process.env.AI_MODEL = 'receptionist-1';
};
const useNoAi = () => { delete process.env.AI_BASE_URL; delete process.env.AI_API_KEY; delete process.env.AI_MODEL; };
const sms = (from: string, body: string, to = '+15550000001') => inboundSms(app.db.owner, { to, from, body });
const drain = () => runJobs(app.db, sinkOnly);
const outboxOf = async (conversationId: string) => (await app.db.owner.query(
  `select sender, recipient, body, meta from app_private.outbox where meta->>'conversation_id' = $1 order by created_at, id`,
  [conversationId])).rows;
const lastMessage = async (conversationId: string) => (await app.db.owner.query(
  `select direction, author, body, status from app_public.conversation_messages where conversation_id = $1
    order by created_at desc, id desc limit 1`, [conversationId])).rows[0];
const held = async (conversationId: string) => (await app.db.owner.query(
  `select ai_held from app_public.conversations where id = $1`, [conversationId])).rows[0].ai_held as boolean;

test.serial('an inbound SMS is answered by the AI service, with the organization, the location\'s hours and the thread as context', async (t) => {
  useFakeAi();
  seen.length = 0;
  reply = () => ({ status: 200, content: 'We are open Monday 9 to 5.' });
  const inbound = await sms('+15551230001', 'When are you open?');
  await drain();
  t.is(seen.length, 1);
  const [call] = seen;
  t.is(call!.path, '/v1/chat/completions');
  t.is(call!.authorization, 'Bearer sk-test');
  t.is(call!.body.model, 'receptionist-1');
  const [system, ...thread] = call!.body.messages;
  t.is(system!.role, 'system');
  t.regex(system!.content, /Acme Dental/);
  t.regex(system!.content, /North/);
  t.regex(system!.content, /Mon 09:00-17:00/);
  t.regex(system!.content, /handover/);
  t.deepEqual(thread.slice(-3), [
    { role: 'user', content: 'Do you have a slot on Monday?' }, { role: 'assistant', content: 'Yes, 10:00 is free.' },
    { role: 'user', content: 'When are you open?' }]);
  const sent = await outboxOf(acme.ids.ann_sms!);
  t.is(sent.length, 1);
  t.like(sent[0], { sender: '+15550000001', recipient: '+15551230001', body: 'We are open Monday 9 to 5.' });
  t.is(sent[0].meta.conversation_id, acme.ids.ann_sms);
  t.deepEqual(await lastMessage(acme.ids.ann_sms!), { direction: 'outbound', author: 'ai', body: 'We are open Monday 9 to 5.', status: 'sent' });
  t.not(sent[0].meta.message_id, inbound.message_id);
});

test.serial('hold: the next message is not answered; resume: the AI answers it', async (t) => {
  useFakeAi();
  seen.length = 0;
  reply = () => ({ status: 200, content: 'Yes, Tuesday works.' });
  const res = await app.request('POST', `/api/v1/conversations/${acme.ids.ann_sms}/hold`, { key: acme.keys.org! });
  t.is(res.status, 200);
  const before = (await outboxOf(acme.ids.ann_sms!)).length;
  await sms('+15551230001', 'Can I come Tuesday instead?');
  await drain();
  t.is(seen.length, 0, 'the AI was not asked');
  t.is((await outboxOf(acme.ids.ann_sms!)).length, before, 'nothing answered');
  const back = await app.request('POST', `/api/v1/conversations/${acme.ids.ann_sms}/resume`, { key: acme.keys.org! });
  t.like(back.body, { response_mode: 'ai', ai_queued: true });
  await drain();
  t.is(seen.length, 1);
  t.is(seen[0]!.body.messages.at(-1)!.content, 'Can I come Tuesday instead?');
  t.like((await outboxOf(acme.ids.ann_sms!)).at(-1), { body: 'Yes, Tuesday works.' });
});

test.serial('HANDOVER from the AI puts the thread on hold; the contact is told a person will answer', async (t) => {
  useFakeAi();
  reply = () => ({ status: 200, content: 'HANDOVER' });
  const before = (await outboxOf(acme.ids.ann_sms!)).filter((m) => m.recipient === '+15551230001').length;
  await sms('+15551230001', 'I want to talk about my bill');
  await drain();
  t.true(await held(acme.ids.ann_sms!));
  const toAnn = (await outboxOf(acme.ids.ann_sms!)).filter((m) => m.recipient === '+15551230001');
  t.is(toAnn.length, before + 1);
  t.regex(toAnn.at(-1)!.body, /A person from our team will answer you here soon/);
  const thread = await app.request('GET', `/api/v1/conversations/${acme.ids.ann_sms}`, { key: acme.keys.org! });
  t.is(thread.body.response_mode, 'human');
  reply = () => ({ status: 200, content: 'A colleague will call you about it.' });
  await app.request('POST', `/api/v1/conversations/${acme.ids.ann_sms}/resume`, { key: acme.keys.org! });
  await drain();
});

test.serial('a failing AI service sends nothing; the retried job answers once', async (t) => {
  useFakeAi();
  seen.length = 0;
  reply = () => ({ status: 503 });
  const inbound = await sms('+15551230001', 'Is parking free?');
  await drain();
  t.is(seen.length, 1);
  const { rows: [job] } = await app.db.owner.query(`select attempts, last_error from graphile_worker._private_jobs where key = $1`,
    [`conversation_ai:${inbound.message_id}`]);
  t.is(job.attempts, 1);
  t.regex(job.last_error, /503/);
  t.is((await lastMessage(acme.ids.ann_sms!)).direction, 'inbound', 'nothing answered');
  reply = () => ({ status: 200, content: 'Yes, parking is free.' });
  await app.db.owner.query(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`conversation_ai:${inbound.message_id}`]);
  await drain();
  t.like(await lastMessage(acme.ids.ann_sms!), { author: 'ai', body: 'Yes, parking is free.', status: 'sent' });
  // the same job again (a duplicate, or a rerun after a crash): the message is answered, nothing more
  await app.db.owner.query(`select app_private.add_job('conversation_ai_reply', $1::jsonb)`,
    [JSON.stringify({ organization_id: acme.organization_id, conversation_id: acme.ids.ann_sms, message_id: inbound.message_id })]);
  const count = (await outboxOf(acme.ids.ann_sms!)).length;
  await drain();
  t.is((await outboxOf(acme.ids.ann_sms!)).length, count, 'answered once');
  t.is(seen.length, 2, 'the rerun did not even ask the AI');
});

test.serial('the AI\'s answer keeps the SMS rules: an opted-out number gets nothing', async (t) => {
  useFakeAi();
  reply = () => ({ status: 200, content: 'Hello Eve!' });
  const before = (await app.db.owner.query(`select count(*)::int as n from app_private.outbox where organization_id = $1`,
    [acme.organization_id])).rows[0].n;
  await sms('+15551230005', 'Hello?');
  await drain();
  t.is((await lastMessage(acme.ids.eve_sms!)).direction, 'inbound');
  t.is((await app.db.owner.query(`select count(*)::int as n from app_private.outbox where organization_id = $1`,
    [acme.organization_id])).rows[0].n, before);
});

test.serial('with no AI configured the built-in receptionist answers hours and booking, and hands the rest to a person', async (t) => {
  useNoAi();
  seen.length = 0;
  const first = await sms('+15557770010', 'What are your opening hours?');
  await drain();
  t.like(await lastMessage(first.conversation_id as string), { author: 'ai', status: 'sent' });
  t.regex((await lastMessage(first.conversation_id as string)).body, /North is open Mon 09:00-17:00 \(America\/New_York time\)/);
  await sms('+15557770010', 'Can I book an appointment?');
  await drain();
  t.regex((await lastMessage(first.conversation_id as string)).body, /^1\) .*Reply 1, 2 or 3 to book\.$/s);
  await sms('+15557770010', 'My tooth hurts a lot');
  await drain();
  t.like(await lastMessage(first.conversation_id as string), { direction: 'outbound', author: 'ai' });
  t.true(await held(first.conversation_id as string), 'handed to a person');
  t.is(seen.length, 0);
});
