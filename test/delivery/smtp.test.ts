// Email over SMTP against a local smtp-server (issue: Delivery): Message-ID on the sending domain,
// Reply-To reply+TOKEN@ that domain, the one-click unsubscribe pair as built, a plain-text part
// beside HTML; a temporary refusal (4xx) retried with backoff, a permanent one (5xx) failed with
// the server's reason at once, through the transport and through deliver_message.
import test from 'ava';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { adminApply } from '../../src/admin/commands.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { AREAS } from '../../src/areas.ts';
import { createTransports, isPermanentDeliveryError, messageIdOfReplyAddress, type OutgoingMessage } from '../../src/delivery/index.ts';
import { htmlToText, unsubscribeHeaders } from '../../src/delivery/email_headers.ts';
import { smtpTransport } from '../../src/delivery/smtp.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { jobsFor, messageRow, queueMessage, runJobs } from '../helpers/messages.ts';
import { simpleParser, type AddressObject } from 'mailparser';

/** An SMTP server: refuses @rejected.example for good (550); tmp-N@… is refused 451 its first N times. */
const received: { to: string[]; raw: string }[] = [];
const refusals = new Map<string, number>();
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onRcptTo(address, _session, callback) {
    const a = address.address;
    if (a.endsWith('@rejected.example')) return callback(Object.assign(new Error('5.1.1 No such mailbox'), { responseCode: 550 }));
    const m = /^tmp-(\d+)@/.exec(a);
    if (m) {
      const seen = refusals.get(a) ?? 0;
      refusals.set(a, seen + 1);
      if (seen < Number(m[1])) return callback(Object.assign(new Error('4.2.1 Mailbox busy, try later'), { responseCode: 451 }));
    }
    callback();
  },
  onData(stream, session, callback) {
    let raw = '';
    stream.on('data', (c: Buffer) => { raw += c.toString('utf8'); });
    stream.on('end', () => { received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw }); callback(); });
  },
});
let url: string;
let db: TestDatabase;
let a: Applied;
test.before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  db = await createTestDatabase();
  // this suite's own database: its first organization keeps the default domain the checks name
  const fm = acmeFixture('Mail Co');
  a = await adminApply(db.owner, { ...fm, organization: { ...fm.organization, sending_email_domain: 'acme.example' } }, AREAS);
});
test.after.always(async () => {
  await db?.drop();
  await new Promise<void>((r) => server.close(() => r()));
});

let n = 0;
const message = (over: Partial<OutgoingMessage> = {}): OutgoingMessage => ({
  organization_id: '00000000-0000-4000-8000-000000000000', id: `6f1c2d3e-4b5a-4c6d-8e7f-${String(++n).padStart(12, '0')}`,
  channel: 'email', sender: 'no-reply@acme.example', recipient: 'ann@example.com', subject: 'Hello', body: 'Hi Ann', meta: {}, ...over,
});
const fast = () => smtpTransport(url, { retryDelaysMs: [20, 40] });
const headersOf = (raw: string) => raw.split(/\r\n\r\n/, 1)[0]!.replace(/\r\n[ \t]+/g, ' ');

test.serial('Message-ID on the sending domain, Reply-To reply+TOKEN that names the message, the unsubscribe pair as built', async (t) => {
  const m = message({ meta: { headers: unsubscribeHeaders('https://svc.example/unsubscribe/tok123') } });
  await fast().send(m, undefined as never);
  const h = headersOf(received.at(-1)!.raw);
  t.regex(h, new RegExp(`^Message-ID: <${m.id}@acme\\.example>$`, 'm'));
  const replyTo = /^Reply-To: (.+)$/m.exec(h)![1]!.trim();
  t.is(replyTo, `reply+${m.id.replace(/-/g, '')}@acme.example`);
  t.is(messageIdOfReplyAddress(replyTo), m.id);
  t.regex(h, /^List-Unsubscribe: <https:\/\/svc\.example\/unsubscribe\/tok123>$/m);
  t.regex(h, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
  t.is(messageIdOfReplyAddress('reply+nothex@acme.example'), undefined);
  t.is(messageIdOfReplyAddress('ann@example.com'), undefined);
});

test.serial('HTML mail goes with a plain-text part beside it (multipart/alternative)', async (t) => {
  await fast().send(message({ body: '<p>Hi <b>Ann</b> &amp; co,</p><p>See <a href="https://acme.example/x">your booking</a></p>', meta: { html: true } }), undefined as never);
  const raw = received.at(-1)!.raw;
  t.regex(headersOf(raw), /^Content-Type: multipart\/alternative/m);
  t.regex(raw, /Content-Type: text\/plain[\s\S]*Hi Ann & co,\r?\n\r?\nSee your booking \(https:\/\/acme\.example\/x\)[\s\S]*Content-Type: text\/html/);
  t.is(htmlToText('<style>p{}</style><ul><li>One</li><li>Two</li></ul>&#233;&lt;'), '- One\n\n- Two\n\né<');
});

test.serial('a temporary refusal (451) is retried with backoff and then delivered', async (t) => {
  const m = message({ recipient: 'tmp-2@example.com' });
  const started = Date.now();
  await fast().send(m, undefined as never);
  t.is(refusals.get('tmp-2@example.com'), 3, 'refused twice, accepted the third time');
  t.true(Date.now() - started >= 60, 'waited 20 then 40 ms');
  t.deepEqual(received.at(-1)!.to, ['tmp-2@example.com']);
});

test.serial('still refused after the retries: a temporary error (the job tries again later); a 550 is permanent at once', async (t) => {
  const busy = await t.throwsAsync(fast().send(message({ recipient: 'tmp-9@example.com' }), undefined as never));
  t.regex(busy!.message, /temporary failure 451 after 3 attempts/);
  t.false(isPermanentDeliveryError(busy));
  const before = received.length;
  const gone = await t.throwsAsync(fast().send(message({ recipient: 'x@rejected.example' }), undefined as never));
  t.true(isPermanentDeliveryError(gone));
  t.regex(gone!.message, /^SMTP 550: .*No such mailbox/);
  t.is(received.length, before);
});

test.serial('through deliver_message: 4xx leaves the message queued, its next attempt on the retry schedule; 5xx fails it with the reason, no retry', async (t) => {
  const transports = createTransports({ emailTransport: url, smsTransport: 'sink' });
  const busy = await queueMessage(db, a.keys.org!, { channel: 'email', recipient: 'tmp-99@example.com', subject: 'S', body: 'B' });
  const gone = await queueMessage(db, a.keys.org!, { channel: 'email', recipient: 'y@rejected.example', subject: 'S', body: 'B' });
  await runJobs(db, transports);
  t.like(await messageRow(db, busy), { status: 'queued' });
  t.regex((await messageRow(db, busy))!.error!, /451/);
  // one attempt (no retries within a delivery by default), the next one queued a minute later
  const row = (await messageRow(db, busy))!;
  t.like(row, { attempts: 1 });
  const [job] = await jobsFor(db, busy);
  t.like(job, { attempts: 0, locked_at: null });
  t.true(Math.abs(job!.run_at.getTime() - row.next_attempt_at!.getTime()) < 1000);
  t.true(job!.run_at.getTime() > Date.now() + 50_000);
  t.is(refusals.get('tmp-99@example.com'), 1, 'tried once in that attempt');
  t.like(await messageRow(db, gone), { status: 'failed' });
  t.regex((await messageRow(db, gone))!.error!, /^SMTP 550: .*No such mailbox/);
  t.deepEqual(await jobsFor(db, gone), []);
});

/** The display name and address of the From of the last message received. */
const lastFrom = async () => {
  const from = (await simpleParser(received.at(-1)!.raw)).from as AddressObject;
  return { name: from.value[0]!.name, address: from.value[0]!.address, text: /^From: (.+)$/m.exec(headersOf(received.at(-1)!.raw))![1] };
};

test.serial('every email has a display name: the organization\'s, a person\'s reply "<person>, <organization>"; address and Reply-To kept', async (t) => {
  const transports = createTransports({ emailTransport: url, smsTransport: 'sink' });
  // an API send, through deliver_message
  const id = await queueMessage(db, a.keys.org!, { channel: 'email', recipient: 'ann@example.com', subject: 'S', body: 'B' });
  await runJobs(db, transports);
  t.like(await messageRow(db, id), { status: 'sent' });
  t.like(await lastFrom(), { name: 'Mail Co', address: 'no-reply@acme.example', text: 'Mail Co <no-reply@acme.example>' });
  t.regex(headersOf(received.at(-1)!.raw), new RegExp(`^Reply-To: reply\\+${id.replace(/-/g, '')}@acme\\.example$`, 'm'));
  // a person's reply in a conversation
  const { rows: [thread] } = await db.owner.query(`select app_private.conversations_inbound_email('no-reply@acme.example', 'ann@example.com',
    'Question', 'Hello?', null, null) as r`);
  const { rows: [person] } = await db.owner.query(`select id, name from app_public.people where organization_id = $1 and email = 'olive@acme.example'`,
    [a.organization_id]);
  const { rows: [reply] } = await db.owner.query(`select (app_private.conversation_append_outbound(cv, 'person', $2, 'Hi Ann', 'no-reply@acme.example',
    'ann@example.com', 'Re: Question', null, 'job')).id from app_public.conversations cv where cv.id = $1`, [thread.r.conversation_id, person.id]);
  await runJobs(db, transports);
  t.like(await messageRow(db, reply.id), { status: 'sent' });
  t.like(await lastFrom(), { name: `${person.name}, Mail Co`, address: 'no-reply@acme.example', text: `"${person.name}, Mail Co" <no-reply@acme.example>` });
  t.regex(headersOf(received.at(-1)!.raw), new RegExp(`^Reply-To: reply\\+${reply.id.replace(/-/g, '')}@acme\\.example$`, 'm'));
  // a batch's message (handed over with its transaction, as a sequence's or a broadcast's is)
  const client = await db.owner.connect();
  try {
    await fast().send(message({ organization_id: a.organization_id }), client);
  } finally {
    client.release();
  }
  t.like(await lastFrom(), { name: 'Mail Co', address: 'no-reply@acme.example' });
});

test.serial('a display name with quotes, a comma, an angle bracket or accents is escaped, never breaking the address', async (t) => {
  const name = 'Ann "The Boss" O\'Neil, <Ltd> — Zürich';
  const fx = acmeFixture(name);
  const b = await adminApply(db.owner, { ...fx, organization: { ...fx.organization, sending_email_domain: 'tricky.example' } }, AREAS);
  const transports = createTransports({ emailTransport: url, smsTransport: 'sink' });
  await queueMessage(db, b.keys.org!, { channel: 'email', recipient: 'ann@example.com', subject: 'S', body: 'B' });
  await runJobs(db, transports);
  t.like(await lastFrom(), { name, address: 'no-reply@tricky.example' });
  t.deepEqual(received.at(-1)!.to, ['ann@example.com']);
});
