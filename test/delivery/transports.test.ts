// The transports: SMTP against a local smtp-server, SMS against a local HTTP provider, each
// through the real deliver_message task; and the settings that choose them. Serial: the tests
// share one job queue.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { adminApply } from '../../src/admin/commands.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { createTransports } from '../../src/delivery/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { jobsFor, messageRow, queueMessage, runJobs } from '../helpers/messages.ts';
import { AREAS } from '../../src/areas.ts';

let db: TestDatabase;
let a: Applied;
test.before(async () => {
  db = await createTestDatabase();
  // this suite's own database: its first organization keeps the default domain and number the checks name
  const fa = acmeFixture('Delivery A');
  a = await adminApply(db.owner, { ...fa, organization: { ...fa.organization, sending_email_domain: 'acme.example', default_sms_number: '+15550000000' } }, AREAS);
});
test.after.always(async () => { await db?.drop(); });

const outboxCount = async (id: string) =>
  (await db.owner.query(`select count(*)::int as n from app_private.outbox where id = $1`, [id])).rows[0].n as number;

/** An SMTP server on a free port that keeps what it receives and refuses @rejected.example. */
async function smtpServer() {
  const received: { from: string; to: string[]; raw: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'], // plain SMTP on 127.0.0.1; its self-signed certificate would not verify
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith('@rejected.example')) callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => { raw += chunk.toString('utf8'); });
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        received.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** An SMS provider on a free port that keeps each request and answers `status`. */
async function smsProvider(status: number) {
  const requests: { headers: Record<string, string | string[] | undefined>; path: string; body: any }[] = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    requests.push({ headers: req.headers, path: req.url ?? '', body: JSON.parse(text) });
    res.statusCode = status;
    res.end(status < 300 ? '{"id":"provider-1"}' : '{"error":"number not reachable"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { port, requests, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

test.serial('EMAIL_TRANSPORT=smtp://… delivers through SMTP with the right envelope, headers and body', async (t) => {
  const smtp = await smtpServer();
  try {
    const id = await queueMessage(db, a.keys.org!, { channel: 'email', recipient: 'ann@example.com', subject: 'Your appointment', body: 'See you on Monday at 9.' });
    await runJobs(db, createTransports({ emailTransport: smtp.url, smsTransport: 'sink' }));

    t.is(smtp.received.length, 1);
    const [mail] = smtp.received;
    t.is(mail!.from, 'no-reply@acme.example');
    t.deepEqual(mail!.to, ['ann@example.com']);
    const [headers, body] = mail!.raw.split(/\r\n\r\n/, 2) as [string, string];
    t.regex(headers, /^From: Delivery A <no-reply@acme\.example>$/m); // the organization's name as display name
    t.regex(headers, /^To: ann@example\.com$/m);
    t.regex(headers, /^Subject: Your appointment$/m);
    t.regex(headers, new RegExp(`^Message-ID: <${id}@acme\\.example>$`, 'm'));
    t.is(body.trim(), 'See you on Monday at 9.');

    t.like(await messageRow(db, id), { status: 'sent', error: null });
    t.is(await outboxCount(id), 0, 'a real transport does not write the sink');
  } finally {
    await smtp.close();
  }
});

test.serial('a recipient the SMTP server refuses for good (5xx) fails the message with the reason, never retried', async (t) => {
  const smtp = await smtpServer();
  try {
    const id = await queueMessage(db, a.keys.org!, { channel: 'email', recipient: 'nobody@rejected.example', subject: 'Hi', body: 'Hello' });
    await runJobs(db, createTransports({ emailTransport: smtp.url, smsTransport: 'sink' }));
    t.is(smtp.received.length, 0);
    const row = await messageRow(db, id);
    t.is(row?.status, 'failed');
    t.regex(row?.error ?? '', /550/);
    t.deepEqual(await jobsFor(db, id), [], 'the job is done: no retry');
  } finally {
    await smtp.close();
  }
});

test.serial('SMS_TRANSPORT=http(s)://… posts {from, to, body} as JSON, with URL credentials as Basic auth', async (t) => {
  const provider = await smsProvider(202);
  try {
    const id = await queueMessage(db, a.keys.org!, { channel: 'sms', recipient: '+15551230001', body: 'Reply YES to confirm' });
    await runJobs(db, createTransports({ emailTransport: 'sink', smsTransport: `http://acct:s%3Acret@127.0.0.1:${provider.port}/v1/sms` }));

    t.is(provider.requests.length, 1);
    const [req] = provider.requests;
    t.is(req!.path, '/v1/sms');
    t.deepEqual(req!.body, { from: '+15550000000', to: '+15551230001', body: 'Reply YES to confirm' });
    t.is(req!.headers['content-type'], 'application/json');
    t.is(req!.headers.authorization, `Basic ${Buffer.from('acct:s:cret').toString('base64')}`);
    t.is(req!.headers['idempotency-key'], id);
    t.like(await messageRow(db, id), { status: 'sent', error: null });
  } finally {
    await provider.close();
  }
});

test.serial('an SMS provider answering a permanent 4xx fails the message with the answer, no retry', async (t) => {
  const provider = await smsProvider(422);
  try {
    const id = await queueMessage(db, a.keys.org!, { channel: 'sms', recipient: '+15551230009', body: 'Hello' });
    await runJobs(db, createTransports({ emailTransport: 'sink', smsTransport: `http://127.0.0.1:${provider.port}/sms` }));
    t.is(provider.requests.length, 1);
    // 422 is the provider refusing this message for good (a 429 or 5xx would be retried: retries.test.ts)
    t.like(await messageRow(db, id), { status: 'failed', error: 'SMS provider answered 422: {"error":"number not reachable"}' });
    t.deepEqual(await jobsFor(db, id), [], 'the job is done: no retry');
  } finally {
    await provider.close();
  }
});

test('transport settings: sink, SMTP and HTTP URLs are accepted; anything else is refused by name, password hidden', (t) => {
  t.like(createTransports({ emailTransport: 'sink', smsTransport: 'sink' }), { email: { name: 'sink' }, sms: { name: 'sink' } });
  t.like(createTransports({ emailTransport: 'smtps://u:p@smtp.example:465', smsTransport: 'https://sms.example/send' }),
    { email: { name: 'smtp' }, sms: { name: 'sms-http' } });
  for (const [emailTransport, smsTransport, pattern] of [
    ['smtp', 'sink', /^EMAIL_TRANSPORT must be "sink" or an smtp:\/\/ or smtps:\/\/ URL, got "smtp"$/],
    ['https://mail.example', 'sink', /^EMAIL_TRANSPORT/],
    ['ftp://mailer:hunter2@mail.example', 'sink', /got "ftp:\/\/mailer:\*\*\*@mail\.example\/"$/],
    ['sink', 'SINK', /^SMS_TRANSPORT must be "sink", twilio:\/\/SID:TOKEN@HOST or an http:\/\/ or https:\/\/ provider URL, got "SINK"$/],
    ['sink', 'smtp://127.0.0.1:25', /^SMS_TRANSPORT/],
  ] as const) {
    t.throws(() => createTransports({ emailTransport, smsTransport }), { message: pattern });
  }
});
