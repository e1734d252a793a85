// Crash safety of web chat for real: a visitor's messages are stored with their AI jobs; `svc
// worker` runs as a child process against a local OpenAI-compatible server that holds its first
// answers, and is SIGKILLed while the AI is being asked, then restarted. Every visitor message
// is answered exactly once, and the chat's interaction is one row.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { tokenHash, newVisitorToken } from '../../src/conversations/chat.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { inboxFixture } from './fixture.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

/** A chat-completions server that holds requests while `hold` is true, counting what it was asked. */
async function fakeAi() {
  const asked: string[] = [];
  let hold = true;
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const last = (JSON.parse(text) as { messages: { content: string }[] }).messages.at(-1)!.content;
    asked.push(last);
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: `Answer to ${last}` } }] }));
    };
    if (!hold) answer();
    else req.socket.on('close', () => undefined); // never answered: the worker dies waiting
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { url, asked, release: () => { hold = false; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

test('SIGKILL while the AI is asked: after a restart the thread is answered once, to its latest message', async (t) => {
  t.timeout(120_000);
  const db = await createTestDatabase();
  const ai = await fakeAi();
  const children: ChildProcess[] = [];
  try {
    const tenant = await adminApply(db.owner, { ...inboxFixture('Crash Dental'), chat_widgets: [{ ref: 'w', name: 'Site', location_ref: 'north' }] },
      AREAS);
    const widget = tenant.ids.w!;
    const { token, hash } = newVisitorToken();
    t.is(hash, tokenHash(token));
    const { rows: [{ result: started }] } = await db.owner.query(
      `select app_hidden.chat_start($1, $2, '{"name": "Vera"}', 'First question', null) as result`, [widget, hash]);
    const conversation = started.conversation_id as string;

    const start = () => {
      const child = spawn(process.execPath, [bin, 'worker'], {
        env: { ...process.env, DATABASE_URL: db.ownerUrl, AI_BASE_URL: ai.url, AI_API_KEY: 'sk-test', LOG_LEVEL: 'warn', NODE_ENV: 'production' },
      });
      children.push(child);
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      return { child, exited };
    };
    const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 60_000) => {
      const end = Date.now() + ms;
      while (!(await ok())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    const first = start();
    await until('the AI to be asked', () => ai.asked.length >= 1);
    first.child.kill('SIGKILL');
    t.is(await first.exited, 'SIGKILL');
    // the visitor writes again while no worker runs
    await db.owner.query(`select app_hidden.chat_post($1, $2, $3, 'Second question')`, [widget, conversation, hash]);
    // graphile-worker frees a dead worker's job after four hours: here, at once
    await db.owner.query(`update graphile_worker._private_jobs set locked_at = null, locked_by = null, run_at = now() where locked_at is not null`);
    ai.release();
    const second = start();
    const answers = async () => (await db.owner.query(`select body from app_public.conversation_messages
      where conversation_id = $1 and author = 'ai' order by created_at, id`, [conversation])).rows.map((r) => r.body as string);
    await until('the answer', async () => (await answers()).length >= 1);
    // and nothing more comes: the jobs are done
    await until('the queue to empty', async () => (await db.owner.query(`select count(*)::int as n from graphile_worker._private_jobs`)).rows[0].n === 0);
    second.child.kill('SIGTERM');
    await second.exited;

    // the first message's job finds a newer message waiting (its own job answers the thread): one answer, to the last
    t.deepEqual(await answers(), ['Answer to Second question']);
    const { rows: thread } = await db.owner.query(`select app_hidden.chat_thread($1, $2, $3, null) as t`, [widget, conversation, hash]);
    t.deepEqual(thread[0].t.messages.map((m: { from: string }) => m.from), ['visitor', 'visitor', 'assistant']);
    const { rows: interactions } = await db.owner.query(`select channel, status from app_public.interactions where conversation_id = $1`,
      [conversation]);
    t.deepEqual(interactions, [{ channel: 'chat', status: 'in_progress' }]);
    t.log(`AI asked ${ai.asked.length} times: ${JSON.stringify(ai.asked)}`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await ai.close();
    await db.drop();
  }
});
