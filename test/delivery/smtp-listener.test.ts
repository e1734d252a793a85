// The optional SMTP listener (SVC_SMTP_LISTEN): nodemailer sends a reply to a reply+TOKEN@
// address and it takes the inbound MIME webhook's path (the conversation continued, the sequence's
// replied event, once per Message-ID); unknown tokens, other domains and relaying are refused at
// RCPT TO with 550, a message over the size limit with 552, and neither records anything.
import test from 'ava';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { sentStep } from './helpers.ts';
import { unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { replyAddress } from '../../src/delivery/index.ts';
import { parseSmtpListen, startSmtpListener, type SmtpListener } from '../../src/delivery/smtp_listener.ts';
import { insertSendSchedule, insertSequence } from '../sequences/helpers.ts';
import { events } from '../sequences/engine-helpers.ts';


let app: TestApp;
let acme: Applied;
let seq: string;
let listener: SmtpListener;
let small: SmtpListener;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture()));
  await insertSendSchedule(app.db, acme.organization_id);
  seq = await insertSequence(app.db, acme.organization_id, { exit_conditions: [{ type: 'replied' }], steps: [
    { step_key: 'mail', type: 'email', subject: 'Your visit', body: 'How was it?' },
    { step_key: 'later', type: 'email', subject: 'Again', body: 'Still there?', delay: { days: 2 } }] });
  listener = await startSmtpListener({ pool: app.pool, host: '127.0.0.1', port: 0 });
  small = await startSmtpListener({ pool: app.pool, host: '127.0.0.1', port: 0, maxBytes: 2000 });
});
test.after.always(async () => {
  await listener?.close();
  await small?.close();
  await app?.close();
});

const sent = (contactId: string) => sentStep(app, acme.keys.org!, seq, contactId);

/** Sends one message to `to` through the listener at `port` with nodemailer, one connection. */
async function mailTo(port: number, to: string, opts: { text?: string; messageId?: string; subject?: string; headers?: Record<string, string> } = {}) {
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    return await mailer.sendMail({ from: 'Ann Lee <ann@example.com>', to, subject: opts.subject ?? 'Re: Your visit',
      text: opts.text ?? 'It was great, thanks!', messageId: opts.messageId, headers: opts.headers });
  } finally {
    mailer.close();
  }
}
/** The email messages a contact sent us, as recorded in its conversations. */
const inboundBodies = async (contactId: string) => (await app.db.owner.query(
  `select m.body from app_public.conversation_messages m join app_public.conversations c on c.id = m.conversation_id
    where c.contact_id = $1 and m.direction = 'inbound' and m.channel = 'email' order by m.created_at`, [contactId])).rows.map((r) => r.body);

test.serial('a reply sent with nodemailer to reply+TOKEN@ continues the conversation and ends the enrollment, once per Message-ID', async (t) => {
  const { enrollment, message } = await sent(acme.ids.ann!);
  const to = replyAddress(message, 'acme.example');
  const messageId = `<smtp-${Date.now()}@mail.example.com>`;
  const info = await mailTo(listener.port, to, { messageId });
  t.deepEqual(info.accepted, [to]);
  const types = (await events(app.db, enrollment)).map((e) => e.type);
  t.true(types.includes('replied'), types.join());
  t.deepEqual(await inboundBodies(acme.ids.ann!), ['It was great, thanks!']);
  // the same message again (a sending server retrying): accepted, recorded once
  await unchanged(t, app, acme.organization_id, () => mailTo(listener.port, to, { messageId }));
  t.deepEqual(await inboundBodies(acme.ids.ann!), ['It was great, thanks!']);
});

test.serial('an auto-reply over SMTP, by its headers or its subject alone, is auto_replied: no reply, the enrollment goes on', async (t) => {
  for (const opts of [{ headers: { 'Auto-Submitted': 'auto-replied' } }, { subject: 'Abwesenheitsnotiz: Your visit' }]) {
    const { enrollment, message } = await sent(acme.ids.bob!);
    const to = replyAddress(message, 'acme.example');
    const info = await mailTo(listener.port, to, { ...opts, text: 'I am away.' });
    t.deepEqual(info.accepted, [to]);
    const types = (await events(app.db, enrollment)).map((e) => e.type);
    t.deepEqual(types, ['enrolled', 'sent', 'auto_replied'], JSON.stringify(opts));
    t.false((await inboundBodies(acme.ids.bob!)).includes('I am away.'));
  }
});

test.serial('RCPT TO: an unknown token, a known token at another domain, any other address: 550, nothing recorded', async (t) => {
  const { message } = await sent(acme.ids.bob!);
  for (const to of [`reply+${'0'.repeat(32)}@acme.example`, replyAddress(message, 'other.example'), 'ann@example.com', 'no-reply@acme.example',
    `reply+${message.replace(/-/g, '').slice(0, 31)}@acme.example`]) {
    const err = await unchanged(t, app, acme.organization_id, () => t.throwsAsync(mailTo(listener.port, to)), to);
    t.is((err as { responseCode?: number }).responseCode, 550, to);
  }
});

test.serial('a message over the size limit: 552, nothing recorded', async (t) => {
  const { enrollment, message } = await sent(acme.ids.cy!);
  const to = replyAddress(message, 'acme.example');
  const err = await unchanged(t, app, acme.organization_id, () => t.throwsAsync(mailTo(small.port, to, { text: 'x'.repeat(5000) })));
  t.is((err as { responseCode?: number }).responseCode, 552);
  t.false((await events(app.db, enrollment)).some((e) => e.type === 'replied'));
  // under the limit, the same listener takes it
  await mailTo(small.port, to);
  t.true((await events(app.db, enrollment)).some((e) => e.type === 'replied'));
});

test('SVC_SMTP_LISTEN is host:port; unset is off; anything else is refused at start', (t) => {
  t.is(parseSmtpListen(undefined), undefined);
  t.is(parseSmtpListen(''), undefined);
  t.deepEqual(parseSmtpListen('0.0.0.0:2525'), { host: '0.0.0.0', port: 2525 });
  t.deepEqual(parseSmtpListen('[::1]:25'), { host: '::1', port: 25 });
  for (const bad of ['2525', 'localhost', 'host:99999', 'host:port', 'a b:25']) t.throws(() => parseSmtpListen(bad), { message: /SVC_SMTP_LISTEN/ }, bad);
});

test('svc serve runs the listener when SVC_SMTP_LISTEN is set, stops it on SIGTERM, and refuses to start with a bad setting', async (t) => {
  const db = await createTestDatabase();
  const serve = (listen: string) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('../../bin/svc.js', import.meta.url)), 'serve', '--port', '0', '--no-worker'],
      { env: { ...process.env, DATABASE_URL: db.ownerUrl, LOG_LEVEL: 'info', SVC_SMTP_LISTEN: listen } });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const listening = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listener: ${output}`)), 60_000);
      const read = (d: Buffer) => {
        output += d;
        const m = /"port":(\d+)[^\n]*"msg":"SMTP listener started"/.exec(output);
        if (m && /"msg":"serving"/.test(output)) { clearTimeout(timer); resolve(Number(m[1])); }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      void exited.then(() => { clearTimeout(timer); reject(new Error(`exited: ${output}`)); });
    });
    listening.catch(() => undefined); // awaited where it should start; a refused start is checked by its exit
    return { child, exited, listening, output: () => output };
  };
  try {
    const running = serve('127.0.0.1:0');
    const port = await running.listening;
    const err = await t.throwsAsync(mailTo(port, `reply+${'0'.repeat(32)}@acme.example`));
    t.is((err as { responseCode?: number }).responseCode, 550);
    running.child.kill('SIGTERM');
    t.is(await running.exited, 0);
    const bad = serve('nowhere');
    t.not(await bad.exited, 0);
    t.regex(bad.output(), /SVC_SMTP_LISTEN must be host:port/);
  } finally {
    await db.drop();
  }
});

test.serial('a NUL in the mail is dropped, not a failure: the reply is recorded without it', async (t) => {
  const { enrollment, message } = await sent(acme.ids.ann!);
  await mailTo(listener.port, replyAddress(message, 'acme.example'), { text: 'See you\u0000 soon' });
  t.true((await events(app.db, enrollment)).some((e) => e.type === 'replied'));
  t.is((await inboundBodies(acme.ids.ann!)).at(-1), 'See you soon');
});
