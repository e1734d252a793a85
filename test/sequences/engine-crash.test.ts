// A worker killed outright (SIGKILL) while the transport holds a sequence message: when its job
// runs again, the step run becomes `unknown` (with an `unknown` event), the enrollment moves on,
// and the message is never handed over a second time.
import test from 'ava';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { httpSmsTransport } from '../../src/delivery/sms_http.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { drain, engineFixture, enrollment, events, makeDue, outbox, stepRuns } from './engine-helpers.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

/** An SMS provider that records every request and holds it until told to answer. */
async function holdingProvider() {
  const requests: { body: any; answer: (status: number) => void }[] = [];
  let arrived!: () => void;
  const first = new Promise<void>((r) => { arrived = r; });
  const server = createServer(async (req: IncomingMessage, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    requests.push({ body: JSON.parse(text), answer: (status) => { res.statusCode = status; res.end('{}'); } });
    arrived();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
  return { url, requests, first, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

test('SIGKILL while the transport holds the message: no message twice, the step run unknown, the enrollment moves on', async (t) => {
  const db = await createTestDatabase();
  const provider = await holdingProvider();
  try {
    const tenant = await adminApply(db.owner, engineFixture(), AREAS);
    const org = tenant.organization_id;
    await insertSendSchedule(db, org);
    const seq = await insertSequence(db, org, {
      steps: [{ step_key: 'text', type: 'sms', body: 'Hello {{contact.first_name}}' },
              { step_key: 'mail', type: 'email', subject: 'After', body: 'After the text' }] });
    const { rows: [{ r }] } = await db.owner.query(`select app_private.enroll_contact($1, $2, $3) as r`, [org, seq, tenant.ids.ann]);
    const id = r.enrollment.id as string;

    const child = spawn(process.execPath, [bin, 'worker'], {
      env: { ...process.env, DATABASE_URL: db.ownerUrl, SMS_TRANSPORT: provider.url, LOG_LEVEL: 'info', NODE_ENV: 'production' },
    });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    try {
      await Promise.race([provider.first, exited.then(() => { throw new Error(`worker exited: ${output}`); })]);
      t.deepEqual((await stepRuns(db, id)).map((s) => s.status), ['sending'], 'claimed before the hand-off');
      child.kill('SIGKILL');
      t.is(await exited, 'SIGKILL');
    } finally {
      child.kill('SIGKILL');
    }
    // the provider accepted it after all; nobody is left to record that
    provider.requests[0]!.answer(200);
    t.is(provider.requests.length, 1);
    t.like(provider.requests[0]!.body, { to: '+15551230001', body: 'Hello Ann' });

    // graphile-worker frees a dead worker's jobs after 4 hours; here, at once
    const { rowCount } = await db.owner.query(
      `update graphile_worker._private_jobs set locked_at = null, locked_by = null, run_at = now() where locked_at is not null`);
    t.is(rowCount, 1, 'the dead worker held the step\'s job');
    // within five minutes of the claim, a job takes a `sending` run for one still with its
    // transport and looks again later
    await drain(db, { email: sinkTransport, sms: httpSmsTransport(provider.url) });
    t.deepEqual((await stepRuns(db, id)).map((s) => s.status), ['sending']);
    const later = new Date((await enrollment(db, id)).next_run_at).getTime();
    t.true(later > Date.now() + 4 * 60_000, 'looked at again five minutes after the claim');
    // hours later, as when graphile-worker frees the job: the enrollment is due again and the
    // sweep queues its step
    await db.owner.query(`update app_public.step_runs set updated_at = now() - interval '4 hours' where enrollment_id = $1`, [id]);
    t.is(await makeDue(db, [id]), 1);

    // the job runs again (a new worker, the same provider, now answering at once)
    const answering = { ...httpSmsTransport(provider.url), name: 'answering' };
    const drained = drain(db, { email: sinkTransport, sms: answering });
    // answer anything that arrives (nothing should)
    const poll = setInterval(() => { for (const q of provider.requests.slice(1)) q.answer(200); }, 20);
    await drained;
    clearInterval(poll);

    t.is(provider.requests.length, 1, 'the SMS was never handed over again');
    t.deepEqual((await stepRuns(db, id)).map((s) => [s.step_key, s.status, s.reason]),
      [['text', 'unknown', 'interrupted'], ['mail', 'sent', null]]);
    t.deepEqual((await events(db, id)).map((e) => e.type), ['enrolled', 'unknown', 'sent', 'delivered', 'completed']);
    t.is((await enrollment(db, id)).status, 'completed');
    const [text] = await stepRuns(db, id);
    const { rows: [m] } = await db.owner.query(`select status from app_private.outgoing_messages where id = $1`, [text.message_id]);
    t.is(m.status, 'unknown');
    t.deepEqual((await outbox(db, org)).map((o) => o.meta.step_key), ['mail']);
  } finally {
    await provider.close();
    await db.drop();
  }
});
