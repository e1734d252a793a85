// The receptionist on the phone with a language model (a fake OpenAI-compatible server): the
// model gets the call's thread and its answer is spoken; a model asking for a person hands the
// call over. And a server killed (SIGKILL) in the middle of a turn: the turn asked again after
// a restart is answered once, nothing half-written, nothing twice.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { startServe } from '../helpers/cli.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { adminVoiceSecret } from '../../src/voice/secret.ts';
import { HANDOVER_CALLBACK } from '../../src/voice/completions.ts';
import { call, post, wordsOf, type Platform } from './helpers.ts';
import { startFakeModel, type FakeModel } from './fake-model.ts';

let app: TestApp;
let tenant: Applied;
let platform: Platform;
let model: FakeModel;
test.before(async () => {
  model = await startFakeModel();
  ({ app, tenant } = await startWithTenant(acmeFixture()));
  platform = { url: app.url, secret: (await adminVoiceSecret(app.db.owner, tenant.organization_id)).secret };
});
test.after.always(async () => {
  delete process.env.AI_BASE_URL;
  await app?.close();
  await model?.close();
});

test.serial('the model answers each turn with the call\'s thread; streamed and not; HANDOVER hands over', async (t) => {
  process.env.AI_BASE_URL = model.url;
  try {
    model.reply = (r) => ({ content: `You said: ${r.messages.at(-1).content}. Anything else?` });
    const c = call(platform, { call_id: 'model-1', from: '+15557771001', to: '+15550000001' });
    const a = await c.say('I would like a cleaning');
    t.is(a.body.choices[0].message.content, 'You said: I would like a cleaning. Anything else?');
    const b = await c.say('Next Tuesday', { stream: true });
    t.is(wordsOf(b), 'You said: Next Tuesday. Anything else?');
    const last = model.requests.at(-1);
    t.deepEqual(last.messages.slice(1).map((m: any) => [m.role, m.content]), [
      ['user', 'I would like a cleaning'], ['assistant', 'You said: I would like a cleaning. Anything else?'], ['user', 'Next Tuesday']]);
    t.regex(last.messages[0].content, /receptionist of Acme Dental/);
    model.reply = () => ({ content: 'HANDOVER' });
    t.is(wordsOf(await c.say('Let me talk to someone')), HANDOVER_CALLBACK);
  } finally {
    delete process.env.AI_BASE_URL;
  }
});

test.serial('SIGKILL in the middle of a turn: asked again after a restart, the turn is answered once', async (t) => {
  const env = { AI_BASE_URL: model.url };
  const metadata = { call_id: 'model-kill', from: '+15557771002', to: '+15550000001' };
  const req = { messages: [{ role: 'user', content: 'Do you do whitening?' }], metadata };
  const before = model.requests.length;
  model.reply = () => 'hang';
  const first = startServe(app.db.ownerUrl, env);
  const { url } = await first.ready;
  const pending = post({ url, secret: platform.secret }, req).catch(() => null);
  while (model.requests.length === before) await new Promise((r) => setTimeout(r, 50));
  first.child.kill('SIGKILL');
  await first.exited;
  await pending;
  const thread = async () => (await app.db.owner.query(
    `select m.author, m.body from app_public.conversation_messages m join app_private.voice_calls v
        on v.organization_id = m.organization_id and v.conversation_id = m.conversation_id
      where v.call_id = 'model-kill' order by m.created_at, m.id`)).rows;
  t.deepEqual((await thread()).map((m) => m.author), ['contact'], 'the caller\'s words, no answer');

  model.reply = () => ({ content: 'Yes, we do whitening.' });
  const second = startServe(app.db.ownerUrl, env);
  try {
    const { url: url2 } = await second.ready;
    const again = await post({ url: url2, secret: platform.secret }, req);
    t.is(again.body.choices[0].message.content, 'Yes, we do whitening.');
    const replay = await post({ url: url2, secret: platform.secret }, { ...req, stream: true });
    t.is(wordsOf(replay), 'Yes, we do whitening.');
    t.deepEqual((await thread()).map((m) => [m.author, m.body]), [['contact', 'Do you do whitening?'], ['ai', 'Yes, we do whitening.']]);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
});
