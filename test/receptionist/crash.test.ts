// Crash safety of the receptionist for real: `svc worker` runs as a child process against a
// fake model that books (appointments_create) and then holds its next answer; the worker is
// SIGKILLed between the booking and the answer, then restarted. Exactly one appointment and
// exactly one confirmation: the rerun's booking replays the first by its idempotency key.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { inboundSms } from '../../src/conversations/inbound.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { clinicFixture } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

test('SIGKILL between the model\'s appointments_create and the answer: one appointment, one confirmation', async (t) => {
  t.timeout(120_000);
  const db = await createTestDatabase();
  const start = new Date(Date.now() + 2 * 86400000);
  start.setUTCHours(15, 0, 0, 0);
  const when = { start_time: start.toISOString(), end_time: new Date(start.getTime() + 30 * 60000).toISOString() };
  let hold = true;
  let held = 0;
  let offering = '';
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const messages = (JSON.parse(text) as { messages: { role: string }[] }).messages;
    const answer = (message: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message }] }));
    };
    if (!messages.some((m) => m.role === 'tool')) {
      answer({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function',
        function: { name: 'appointments_create', arguments: JSON.stringify({ ...when, offering_id: offering }) } }] });
    } else if (hold) {
      held++; // never answered: the worker dies waiting
    } else {
      answer({ role: 'assistant', content: 'Booked for you.' });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const children: ChildProcess[] = [];
  try {
    const fixture = clinicFixture('Crash Dental');
    const tenant = await adminApply(db.owner, fixture, AREAS);
    offering = tenant.ids.cleaning!;
    const run = () => {
      const child = spawn(process.execPath, [bin, 'worker'], {
        env: { ...process.env, DATABASE_URL: db.ownerUrl, AI_BASE_URL: url, LOG_LEVEL: 'warn', NODE_ENV: 'production' },
      });
      children.push(child);
      return { child, exited: new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, signal) => resolve(signal))) };
    };
    const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 60_000) => {
      const end = Date.now() + ms;
      while (!(await ok())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const inbound = await inboundSms(db.owner, { to: fixture.locations[0]!.sms_number, from: '+15551230001', body: 'Book me a cleaning' });
    const appointments = async () => (await db.owner.query(`select id from app_public.appointments where contact_id = $1`,
      [tenant.ids.ann])).rows;
    const first = run();
    await until('the booking, then the held answer', () => held >= 1);
    t.is((await appointments()).length, 1, 'booked before the crash');
    first.child.kill('SIGKILL');
    t.is(await first.exited, 'SIGKILL');
    await db.owner.query(`update graphile_worker._private_jobs set locked_at = null, locked_by = null, run_at = now() where locked_at is not null`);
    hold = false;
    const second = run();
    const replies = async () => (await db.owner.query(`select body from app_public.conversation_messages
      where conversation_id = $1 and author = 'ai'`, [inbound.conversation_id])).rows.map((r) => r.body as string);
    await until('the answer', async () => (await replies()).length >= 1);
    await until('the queue to empty', async () => (await db.owner.query(
      `select count(*)::int as n from graphile_worker._private_jobs where task_id in (select id from graphile_worker._private_tasks where identifier = 'conversation_ai_reply')`)).rows[0].n === 0);
    second.child.kill('SIGTERM');
    await second.exited;
    t.is((await appointments()).length, 1, 'exactly one appointment');
    t.deepEqual(await replies(), ['Booked for you.']);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await db.drop();
  }
});
