// Sequence email over SMTP (EMAIL_TRANSPORT=smtp://…): the message that leaves carries
// Message-ID on the organization's sending domain and the one-click unsubscribe headers
// (RFC 8058), an HTML body goes as HTML, and the step is recorded sent.
import test from 'ava';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { createTransports } from '../../src/delivery/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { drain, engineFixture, outbox, stepRuns } from './engine-helpers.ts';

test('List-Unsubscribe, List-Unsubscribe-Post and Message-ID go out with the mail', async (t) => {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
    onData(stream, _session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => { raw += chunk.toString('utf8'); });
      stream.on('end', () => { received.push(raw); callback(); });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  const db = await createTestDatabase();
  try {
    const tenant = await adminApply(db.owner, engineFixture(), AREAS);
    const org = tenant.organization_id;
    await insertSendSchedule(db, org);
    const seq = await insertSequence(db, org, {
      steps: [{ step_key: 'hello', type: 'email', subject: 'Hi {{contact.first_name}}', body: '<p>Hello {{contact.name}}</p>' }] });
    const { rows: [{ r }] } = await db.owner.query(`select app_private.enroll_contact($1, $2, $3) as r`, [org, seq, tenant.ids.ann]);
    await drain(db, createTransports({ emailTransport: url, smsTransport: 'sink' }));
    t.is(received.length, 1);
    const [folded, body] = received[0]!.split(/\r\n\r\n/, 2) as [string, string];
    const headers = folded.replace(/\r\n[ \t]+/g, ' '); // long headers are folded (RFC 5322)
    const [run] = await stepRuns(db, r.enrollment.id);
    t.is(run.status, 'sent');
    t.regex(headers, new RegExp(`^Message-ID: <${run.message_id}@acme\\.example>$`, 'm'));
    t.regex(headers, /^List-Unsubscribe: <http[^>]+\/unsubscribe\/[A-Za-z0-9_-]{40,}>$/m);
    t.regex(headers, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    t.regex(headers, /^Content-Type: multipart\/alternative/m, 'the HTML with a plain-text part beside it');
    t.regex(headers, /^Subject: Hi Ann$/m);
    t.true(received[0]!.includes('<p>Hello Ann Lee</p>'), 'the HTML part');
    t.regex(received[0]!, /Content-Type: text\/plain[\s\S]*Hello Ann Lee/, 'the plain-text part');
    t.deepEqual(await outbox(db, org), [], 'a real transport does not write the sink');
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
    await db.drop();
  }
});
