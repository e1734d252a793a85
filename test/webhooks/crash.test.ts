// Crash safety for real: `svc worker` runs as a child process delivering five events to a
// receiver that holds every request unanswered; it is SIGKILLed with deliveries in flight. Nothing
// is lost: each delivery stays pending with its job, and a new worker delivers every one, a
// delivery the dead worker had sent going out again with the same webhook-id and body (at least
// once: the receiver drops the repeat by webhook-id).
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { deliveries, receiver, subscribe, verified, webhooksFixture } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

test('SIGKILL with deliveries in flight: every delivery pending with its job, then delivered with the same webhook-id', async (t) => {
  t.timeout(120_000);
  const db = await createTestDatabase();
  let hold = true;
  const rx = await receiver(() => (hold ? null : 200));
  const children: ChildProcess[] = [];
  try {
    const tenant = await adminApply(db.owner, webhooksFixture(), AREAS);
    const org = tenant.organization_id;
    const s = await subscribe(db.owner, org, `${rx.base}/crash`, 'contact.created');
    await db.owner.query(`insert into app_public.contacts (organization_id, name, email)
      select $1, 'Person ' || i, 'p' || i || '@example.com' from generate_series(1, 5) i`, [org]);
    const ids = (await deliveries(db.owner, org)).map((d) => d.id as string);
    t.is(ids.length, 5);

    const start = () => {
      const child = spawn(process.execPath, [bin, 'worker'], {
        env: { ...process.env, DATABASE_URL: db.ownerUrl, SVC_WEBHOOKS_ALLOW_PRIVATE: '1', LOG_LEVEL: 'warn', NODE_ENV: 'production' },
      });
      children.push(child);
      child.stdout!.resume();
      child.stderr!.resume();
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
    await until('deliveries in flight', () => rx.received.length >= 4); // the worker runs four jobs at a time
    const inFlight = new Set(rx.received.map((r) => String(r.headers['webhook-id'])));
    first.child.kill('SIGKILL');
    t.is(await first.exited, 'SIGKILL');

    // nothing lost: every delivery pending, unattempted as far as the database knows, its job there
    const rows = await deliveries(db.owner, org);
    t.true(rows.every((d) => d.status === 'pending' && d.attempts === 0), JSON.stringify(rows.map((d) => [d.status, d.attempts])));
    const { rows: jobs } = await db.owner.query(`select key from graphile_worker._private_jobs where key = any($1)`, [ids.map((id) => `webhook:${id}`)]);
    t.is(jobs.length, 5);
    // graphile-worker frees a dead worker's jobs after four hours: here, at once
    await db.owner.query(`update graphile_worker._private_jobs set locked_at = null, locked_by = null, run_at = now() where locked_at is not null`);

    hold = false;
    const second = start();
    await until('every delivery delivered', async () => (await deliveries(db.owner, org)).every((d) => d.status === 'delivered'));
    second.child.kill('SIGTERM');
    await second.exited;

    const byId = new Map<string, string[]>();
    for (const r of rx.at('/crash')) {
      t.is(verified(s.secret, r).type, 'contact.created');
      const id = String(r.headers['webhook-id']);
      byId.set(id, [...(byId.get(id) ?? []), r.body]);
    }
    t.deepEqual([...byId.keys()].sort(), ids.map((id) => `msg_${id.replaceAll('-', '')}`).sort(), 'every event reached the receiver');
    for (const [id, bodies] of byId) {
      t.is(new Set(bodies).size, 1, `${id}: one body on every attempt`);
      if (inFlight.has(id)) t.true(bodies.length >= 2, `${id} was in flight at the kill: sent again`);
    }
    t.true((await deliveries(db.owner, org)).every((d) => d.attempts === 1 && d.last_status === 200));
    t.log(`in flight at the kill: ${inFlight.size}; requests received: ${rx.received.length} for 5 deliveries`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await rx.close();
    await db.drop();
  }
});
