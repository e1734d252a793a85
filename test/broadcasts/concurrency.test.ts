// Broadcasts under concurrent writers: set, start, pause, cancel and read crossing each other on
// two broadcasts while the scheduler fires and runs send, 16 at a time: no 5xx, and afterwards
// the rules hold (one schedule per broadcast, next_fire_at only when scheduled, one run per
// occurrence, no contact messaged twice by one run, counts adding up).
import test from 'ava';
import pg from 'pg';
import type { TestApp } from '../helpers/app.ts';
import { prng } from '../helpers/random.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { fireDue } from '../../src/broadcasts/fire.ts';
import { sendRun } from '../../src/broadcasts/run.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { insertAudience, insertBroadcast, schedulePath, startBroadcastsApp } from './helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  ({ app, acme } = await startBroadcastsApp());
});
test.after.always(async () => { await app?.close(); });

test('16 concurrent writers and workers on two broadcasts: no 5xx, and the rules still hold', async (t) => {
  const org = acme.organization_id;
  const audience = await insertAudience(app.db, org, ['ann', 'bob', 'cy', 'dee', 'eve'].map((c) => acme.ids[c]!));
  const ids = [await insertBroadcast(app.db, org, audience, { name: 'A' }), await insertBroadcast(app.db, org, audience, { name: 'B' })];
  const r = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const soon = () => new Date(Date.now() + 60_000).toISOString();
  const workers = new pg.Pool({ connectionString: app.db.ownerUrl, max: 4 });
  const statuses = new Map<number, number>();
  let fired = 0;
  const step = async () => {
    const id = pick(ids);
    const roll = r();
    if (roll < 0.25) {
      // a worker: started (when set), made due, fire what is due, send the runs still sending
      await app.request('POST', schedulePath(id, '/start'), { key: acme.keys.org! });
      await app.db.owner.query(`update app_public.broadcast_schedules set next_fire_at = clock_timestamp() where sequence_id = $1 and status = 'scheduled'`, [id]);
      const c = await workers.connect();
      try {
        fired += (await fireDue(c)).length;
        const { rows } = await c.query(`select id from app_public.broadcast_runs where sequence_id = $1 and status = 'sending'`, [id]);
        for (const run of rows) await sendRun(c, org, run.id, { transports: { email: sinkTransport, sms: sinkTransport }, baseUrl: 'http://x', batchSize: 2 });
      } finally {
        c.release();
      }
      return;
    }
    const { rows: runs } = await app.db.owner.query(`select id from app_public.broadcast_runs where sequence_id = $1`, [id]);
    const [method, path, body] = pick<() => [string, string, unknown]>([
      () => ['PUT', schedulePath(id), pick([{ schedule_kind: 'once', send_at: soon() },
        { schedule_kind: 'recurring', rrule: 'FREQ=DAILY;BYHOUR=9;BYMINUTE=0', timezone: 'America/New_York' }])],
      () => ['POST', schedulePath(id, '/start'), undefined],
      () => ['POST', schedulePath(id, '/pause'), undefined],
      () => ['GET', schedulePath(id), undefined],
      () => ['POST', schedulePath(id, `/runs/${runs.length ? pick(runs).id : '00000000-0000-4000-8000-000000000000'}/cancel`), undefined],
    ])();
    const res = await app.request(method, path, { key: acme.keys.org!, body });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    if (res.status >= 500) t.fail(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  try {
    await Promise.all(Array.from({ length: 16 }, async () => { for (let i = 0; i < 12; i++) await step(); }));
    // and once more alone, so that each broadcast has fired at least once whatever the race made of it
    for (const id of ids) {
      await app.request('PUT', schedulePath(id), { key: acme.keys.org!, body: { schedule_kind: 'once', send_at: soon() } });
      await app.request('POST', schedulePath(id, '/start'), { key: acme.keys.org! });
      await app.db.owner.query(`update app_public.broadcast_schedules set next_fire_at = clock_timestamp() where sequence_id = $1`, [id]);
      const c = await workers.connect();
      try {
        const [run] = await fireDue(c);
        t.truthy(run);
        await sendRun(c, org, run!, { transports: { email: sinkTransport, sms: sinkTransport }, baseUrl: 'http://x', batchSize: 2 });
      } finally {
        c.release();
      }
    }
  } finally {
    await workers.end();
  }
  t.log(`fired ${fired}`);
  t.log([...statuses].sort().map(([s, n]) => `${s}: ${n}`).join(', '));
  t.true((statuses.get(200) ?? 0) > 0);
  const { rows: schedules } = await app.db.owner.query(`select * from app_public.broadcast_schedules where sequence_id = any($1)`, [ids]);
  t.is(schedules.length, 2);
  for (const s of schedules) if (s.status !== 'scheduled') t.is(s.next_fire_at, null);
  const { rows: runs } = await app.db.owner.query(`select * from app_public.broadcast_runs where sequence_id = any($1)`, [ids]);
  for (const run of runs) {
    if (run.status === 'completed') t.is(run.sent + run.skipped + run.failed + run.unknown + run.cancelled, run.recipients, JSON.stringify(run));
    t.true(run.sent + run.skipped + run.failed + run.unknown <= run.recipients);
  }
  const { rows: twice } = await app.db.owner.query(`select meta->>'run_id' as run, recipient, count(*)::int as n from app_private.outbox
    where meta->>'sequence_id' = any($1) group by 1, 2 having count(*) > 1`, [ids]);
  t.deepEqual(twice, [], 'no contact messaged twice by one run');
});
