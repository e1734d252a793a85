// A mail server and an SMS provider that go away for a few seconds and come back: every message
// (a reply queued through app_hidden.queue_message, a sequence step, a broadcast) waits, retried
// on the retry schedule (shortened here through app_private.delivery_retry_settings), and is
// delivered exactly once; a recipient the server refuses for good (550) fails alone. While
// retrying, the message shows its attempts, last error and next attempt, the step run is
// `retrying`, the enrollment stays on its step and the broadcast run stays `sending`.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { createTransports, type Transports } from '../../src/delivery/index.ts';
import { queueMessage, runJobs } from '../helpers/messages.ts';
import { enroll, enrollmentsOf, makeDue } from '../sequences/engine-helpers.ts';
import { insertSequence } from '../sequences/helpers.ts';
import { insertAudience, insertBroadcast, makeScheduleDue, runsOf, schedulePath, startBroadcastsApp } from '../broadcasts/helpers.ts';

/** Every message the SMTP server accepted: recipient and Message-ID. */
const mail: { to: string; messageId: string }[] = [];
// a closed SMTPServer does not listen again: each coming back is a new one on the same port
const smtpServer = () => new SMTPServer({
  authOptional: true, disabledCommands: ['STARTTLS'], logger: false, closeTimeout: 100,
  onRcptTo(address, _session, callback) {
    if (address.address.endsWith('@rejected.example')) return callback(Object.assign(new Error('5.1.1 No such mailbox'), { responseCode: 550 }));
    callback();
  },
  onData(stream, session, callback) {
    let raw = '';
    stream.on('data', (c: Buffer) => { raw += c.toString('utf8'); });
    stream.on('end', () => {
      const messageId = /^Message-ID:\s*(\S+)/im.exec(raw)?.[1] ?? '';
      for (const r of session.envelope.rcptTo) mail.push({ to: r.address, messageId });
      callback();
    });
  },
});
let smtp = smtpServer();
/** Every SMS the fake Twilio accepted, by idempotency token (the message id). */
const texts: { to: string; token: string }[] = [];
let sid = 0;
const twilio: Server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    texts.push({ to: new URLSearchParams(body).get('To')!, token: String(req.headers['i-twilio-idempotency-token']) });
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ sid: `SM${++sid}` }));
  });
});
let smtpPort = 0;
let twilioPort = 0;
const listen = (s: { listen: (port: number, host: string, cb: () => void) => unknown }, port: number) =>
  new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
const down = async () => {
  await new Promise<void>((r) => smtp.close(() => r()));
  twilio.closeAllConnections();
  await new Promise<void>((r) => twilio.close(() => r()));
};
const up = async () => {
  smtp = smtpServer();
  await listen(smtp, smtpPort);
  await listen(twilio, twilioPort);
};

let app: TestApp;
let acme: Applied;
let transports: Transports;
test.before(async () => {
  await listen(smtp, 0);
  await listen(twilio, 0);
  smtpPort = (smtp.server.address() as AddressInfo).port;
  twilioPort = (twilio.address() as AddressInfo).port;
  transports = createTransports({ emailTransport: `smtp://127.0.0.1:${smtpPort}`, smsTransport: `twilio+http://AC1:token@127.0.0.1:${twilioPort}` });
  ({ app, acme } = await startBroadcastsApp());
  // the real schedule is 1 minute doubling to an hour for five days; here a second
  await app.db.owner.query(`update app_private.delivery_retry_settings set first_seconds = 1, max_seconds = 1`);
});
test.after.always(async () => {
  transports?.email.close?.();
  await app?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
  twilio.closeAllConnections();
  twilio.close();
});

const ok = <T extends { status: number; body: any }>(res: T): T => {
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res;
};

test.serial('an outage of the mail server and the SMS provider: everything waits, then goes exactly once; a 550 fails alone', async (t) => {
  const org = acme.organization_id;
  const key = acme.keys.org!;
  await app.db.owner.query(`update app_public.contacts set email = 'cy@rejected.example' where id = $1`, [acme.ids.cy]);
  await down();

  // a reply and a text, as conversations and the receptionist queue them
  const reply = await queueMessage(app.db, key, { channel: 'email', recipient: 'reply@example.com', subject: 'Re: hours', body: 'We open at 9' });
  const text = await queueMessage(app.db, key, { channel: 'sms', recipient: '+15551239999', body: 'See you at 9' });
  // a sequence step for ann and bob
  const sequence = await insertSequence(app.db, org, { name: 'Follow-up' });
  for (const c of ['ann', 'bob']) ok(await enroll(app, key, sequence, { contact_id: acme.ids[c] }));
  await makeDue(app.db);
  // a broadcast to ann, bob and cy (whose address the server refuses for good)
  const broadcast = await insertBroadcast(app.db, org, await insertAudience(app.db, org, ['ann', 'bob', 'cy'].map((c) => acme.ids[c]!)));
  ok(await app.request('PUT', schedulePath(broadcast), { key, body: { schedule_kind: 'once', send_at: new Date(Date.now() + 86_400_000).toISOString() } }));
  ok(await app.request('POST', schedulePath(broadcast, '/start'), { key }));
  await makeScheduleDue(app.db, broadcast);

  await runJobs(app.db, transports);
  // nothing failed: every message waits, its retry state visible
  const { rows: waiting } = await app.db.owner.query(
    `select id, status, attempts, error, next_attempt_at from app_private.outgoing_messages where organization_id = $1`, [org]);
  t.is(waiting.length, 2 + 2 + 3);
  for (const m of waiting) {
    // at least once (a retry a second later may come due while the jobs still run)
    t.like(m, { status: 'queued' }, m.id);
    t.true(m.attempts >= 1, m.id);
    t.truthy(m.error, m.id);
    t.truthy(m.next_attempt_at, m.id);
  }
  const { rows: steps } = await app.db.owner.query(
    `select sr.status, e.status as enrollment, e.current_step_key from app_public.step_runs sr
       join app_public.enrollments e on e.organization_id = sr.organization_id and e.id = sr.enrollment_id
      where sr.organization_id = $1`, [org]);
  t.is(steps.length, 5);
  t.true(steps.every((s) => s.status === 'retrying' && s.enrollment === 'active' && s.current_step_key !== null), JSON.stringify(steps));
  t.like((await runsOf(app.db, broadcast))[0], { status: 'sending', sent: 0, failed: 0 });
  // through the API: the enrollment's step run retrying, the last refusal as its reason
  const [first] = await enrollmentsOf(app.db, sequence);
  const read = ok(await app.request('GET', `/api/v1/sequences/${sequence}/enrollments/${first.id}`, { key })).body;
  t.like(read, { status: 'active', step_runs: [{ status: 'retrying' }] });
  t.regex(read.step_runs[0].reason, /ECONNREFUSED/);
  const schedule = ok(await app.request('GET', schedulePath(broadcast), { key })).body;
  t.like(schedule.runs[0], { status: 'sending', sent: 0, failed: 0 });

  // back after a few seconds: the retries deliver
  await new Promise((r) => setTimeout(r, 1500));
  await up();
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 1100));
    await runJobs(app.db, transports);
    const { rows: [left] } = await app.db.owner.query(
      `select count(*)::int as n from app_private.outgoing_messages where organization_id = $1 and status = 'queued'`, [org]);
    if (left.n === 0) break;
  }
  const { rows: done } = await app.db.owner.query(
    `select id, recipient, status, error, meta from app_private.outgoing_messages where organization_id = $1 order by recipient`, [org]);
  t.deepEqual(done.filter((m) => m.status !== 'sent').map((m) => [m.recipient, m.status]), [['cy@rejected.example', 'failed']]);
  t.regex(done.find((m) => m.recipient === 'cy@rejected.example').error, /550/);
  // exactly once each: by Message-ID for mail, by idempotency token for texts
  const ids = mail.map((m) => m.messageId);
  t.is(new Set(ids).size, ids.length, 'no message twice');
  t.deepEqual(mail.map((m) => m.to).sort(),
    ['ann@example.com', 'ann@example.com', 'bob@example.com', 'bob@example.com', 'reply@example.com']);
  t.deepEqual(texts.map((x) => x.token), [text]);
  t.true(done.some((m) => m.id === reply && m.status === 'sent'));
  // the sequence moved on (its one step done), the broadcast run ended with its counts
  t.true((await enrollmentsOf(app.db, sequence)).every((e) => e.status === 'completed'));
  t.like((await runsOf(app.db, broadcast))[0], { status: 'completed', recipients: 3, sent: 2, failed: 1, cancelled: 0 });
  const { rows: runs } = await app.db.owner.query(`select status, count(*)::int as n from app_public.step_runs where organization_id = $1 group by 1 order by 1`, [org]);
  t.deepEqual(runs, [{ status: 'failed', n: 1 }, { status: 'sent', n: 4 }]);
});
