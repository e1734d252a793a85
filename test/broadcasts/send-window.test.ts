// A broadcast that fires while its send window is closed: the run waits for the opening,
// `sending` with its recipients counted as waiting (never `completed` with nothing sent), the
// stalled-run recovery leaves it waiting, a cancel stops all of it, and at the opening it sends
// and completes; a completed run then answers 409 run_finished.
import test from 'ava';
import type { TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { fireDue } from '../../src/broadcasts/fire.ts';
import { insertSendSchedule } from '../sequences/helpers.ts';
import { drainBroadcasts, insertAudience, insertBroadcast, makeScheduleDue, outboxOf, runsOf, schedulePath, startBroadcastsApp } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let everyone: string[];
let closed: string;
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
test.before(async () => {
  ({ app, acme } = await startBroadcastsApp());
  everyone = ['ann', 'bob', 'cy', 'dee', 'eve'].map((c) => acme.ids[c]!);
  // open only the whole of the day after tomorrow (UTC): closed now, whatever the time
  const day = DAYS[(new Date().getUTCDay() + 2) % 7]!;
  closed = await insertSendSchedule(app.db, acme.organization_id, { name: 'Later', is_default: false, windows: [{ day, start: '00:00', end: '24:00' }] });
});
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;
const request = (method: string, id: string, rest: string, body?: unknown) =>
  app.request(method, schedulePath(id, rest), { key: acme.keys.org!, body });
const inAYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString();
const opening = () => {
  const d = new Date();
  d.setUTCHours(0, 0, 0, 0);
  return new Date(d.getTime() + 2 * 86_400_000);
};

/** A broadcast on the closed schedule to everyone, fired now; its id and its run. */
async function firedWhileClosed(name: string) {
  const audience = await insertAudience(app.db, org(), everyone, name);
  const id = await insertBroadcast(app.db, org(), audience, { name, send_schedule_id: closed });
  for (const [m, rest, body] of [['PUT', '', { schedule_kind: 'once', send_at: inAYear() }], ['POST', '/start', undefined]] as const) {
    const res = await request(m, id, rest, body);
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  }
  await makeScheduleDue(app.db, id);
  const c = await app.db.owner.connect();
  try { await fireDue(c); } finally { c.release(); }
  // whatever is due now runs (the run's job is not: it waits for the opening)
  await drainBroadcasts(app.db);
  const [run] = await runsOf(app.db, id);
  return { id, run };
}

/** As if the window had opened: the schedule open now, the jobs waiting for it due. */
async function openTheWindow(runId: string) {
  await app.db.owner.query(`update app_public.send_schedules set windows = $2::jsonb where id = $1`,
    [closed, JSON.stringify(DAYS.map((day) => ({ day, start: '00:00', end: '24:00' })))]);
  await app.db.owner.query(`update app_public.broadcast_runs set held_until = now() where id = $1`, [runId]);
  await app.db.owner.query(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`broadcast_run:${runId}`]);
}

test.serial('a run fired while the window is closed waits, sending, with its recipients counted as waiting', async (t) => {
  const { id, run } = await firedWhileClosed('Held');
  t.like(run, { status: 'sending', recipients: 5, sent: 0, skipped: 0, cancelled: 0, finished_at: null });
  t.is(new Date(run.held_until).getTime(), opening().getTime());
  t.is((await outboxOf(app.db, id)).length, 0, 'nothing went out of the window');
  const read = await request('GET', id, '');
  t.is(read.status, 200, JSON.stringify(read.body));
  t.like(read.body.runs[0], { id: run.id, status: 'sending', recipients: 5, sent: 0, waiting: 5 });
  t.is(new Date(read.body.runs[0].held_until).getTime(), opening().getTime());
  // the stalled-run recovery does not take a run waiting for its window for a dead one
  await app.db.owner.query(`update app_public.broadcast_runs set progress_at = now() - interval '10 minutes' where id = $1`, [run.id]);
  await app.db.owner.query('select app_private.broadcast_requeue_stalled()');
  await drainBroadcasts(app.db);
  t.is((await outboxOf(app.db, id)).length, 0);
  t.like((await runsOf(app.db, id))[0], { status: 'sending', sent: 0 });
  await request('POST', id, `/runs/${run.id}/cancel`);
});

test.serial('cancelling a run waiting for its window stops every recipient; nothing goes at the opening', async (t) => {
  const { id, run } = await firedWhileClosed('Held then cancelled');
  const res = await request('POST', id, `/runs/${run.id}/cancel`);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body, { run_id: run.id, status: 'cancelled', cancelled: 5 });
  await openTheWindow(run.id);
  await drainBroadcasts(app.db);
  t.is((await outboxOf(app.db, id)).length, 0);
  const [after] = await runsOf(app.db, id);
  t.like(after, { status: 'cancelled', sent: 0, cancelled: 5 });
  const read = await request('GET', id, '');
  t.like(read.body.runs[0], { status: 'cancelled', waiting: 0, held_until: null });
  const { rows } = await app.db.owner.query(`select distinct status, end_reason from app_public.enrollments where run_id = $1`, [run.id]);
  t.deepEqual(rows, [{ status: 'cancelled', end_reason: 'run_cancelled' }]);
});

test.serial('at the opening the run sends and completes; then a cancel answers 409 run_finished and changes nothing', async (t) => {
  const { id, run } = await firedWhileClosed('Held then sent');
  await openTheWindow(run.id);
  await drainBroadcasts(app.db);
  const [done] = await runsOf(app.db, id);
  t.like(done, { status: 'completed', recipients: 5, sent: 4, skipped: 1, cancelled: 0 });
  t.is((await outboxOf(app.db, id)).length, 4);
  const read = await request('GET', id, '');
  t.like(read.body.runs[0], { status: 'completed', waiting: 0, held_until: null });
  const res = await request('POST', id, `/runs/${run.id}/cancel`);
  t.is(res.status, 409, JSON.stringify(res.body));
  t.is(res.body.error, 'run_finished');
  t.like((await runsOf(app.db, id))[0], { status: 'completed', sent: 4, cancelled: 0 });
});
