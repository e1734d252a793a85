// Runs end to end, with the scheduler and the run jobs in-process: the audience snapshotted when
// the schedule fires (static members, dynamic rules, a location's contacts), send-time refusals
// skipped with their reason, each contact once, per-run counts, the run in the meta of every
// message, recurring fires, one run per occurrence with several workers, cancel and pause.
import test from 'ava';
import pg from 'pg';
import type { TestApp } from '../helpers/app.ts';
import { svc } from '../helpers/cli.ts';
import { recording, runJobs, sinkOnly } from '../helpers/messages.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { fireDue } from '../../src/broadcasts/fire.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { drainBroadcasts, insertAudience, insertBroadcast, makeScheduleDue, outboxOf, runsOf, scheduleRow, schedulePath, startBroadcastsApp } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let everyone: string[];
test.before(async () => {
  ({ app, acme } = await startBroadcastsApp());
  everyone = ['ann', 'bob', 'cy', 'dee', 'eve'].map((c) => acme.ids[c]!);
});
test.after.always(async () => { await app?.close(); });

const key = () => acme.keys.org!;
const org = () => acme.organization_id;
const inAYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString();
const request = (method: string, id: string, rest: string, body?: unknown) => app.request(method, schedulePath(id, rest), { key: key(), body });

/** A broadcast with this schedule, started and made due now. */
async function dueBroadcast(audience: string | null, schedule: unknown = { schedule_kind: 'once', send_at: inAYear() },
  over: Parameters<typeof insertBroadcast>[3] = {}): Promise<string> {
  const id = await insertBroadcast(app.db, org(), audience, over);
  t_ok(await request('PUT', id, '', schedule));
  t_ok(await request('POST', id, '/start'));
  await makeScheduleDue(app.db, id);
  return id;
}
function t_ok(res: { status: number; body: unknown }) {
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
}

test.serial('a once broadcast: every member once, the suppressed skipped, counts, run_id in the meta, nothing left to fire', async (t) => {
  const audience = await insertAudience(app.db, org(), everyone, 'Everyone');
  const id = await dueBroadcast(audience);
  await drainBroadcasts(app.db);
  const [run, ...more] = await runsOf(app.db, id);
  t.is(more.length, 0);
  t.like(run, { status: 'completed', recipients: 5, sent: 4, skipped: 1, failed: 0, unknown: 0, cancelled: 0 });
  const sent = await outboxOf(app.db, id);
  t.deepEqual(sent.map((m) => m.recipient), ['ann@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com']);
  t.like(sent[0], { subject: 'News for Ann', body: 'Hello Ann Lee' });
  for (const m of sent) t.is(m.meta.run_id, run.id);
  const { rows: skipped } = await app.db.owner.query(`select sr.reason from app_public.step_runs sr
    join app_public.enrollments e on e.id = sr.enrollment_id where e.run_id = $1 and sr.status = 'skipped'`, [run.id]);
  t.deepEqual(skipped.map((r) => r.reason), ['suppressed']);
  // nothing left to send once its run has ended: the spec's `draft` (sends nothing), not `scheduled`
  const read = await request('GET', id, '');
  t.like(read.body, { status: 'draft', next_fire_at: null, runs_total: 1 });
  t.like(read.body.runs[0], { id: run.id, status: 'completed', recipients: 5, sent: 4, skipped: 1, cancelled: 0 });
  const { rows: enrollments } = await app.db.owner.query(`select status, source from app_public.enrollments where run_id = $1`, [run.id]);
  t.true(enrollments.every((e) => e.status === 'completed' && e.source === 'broadcast'));
  // fire again: nothing (the once schedule has fired)
  t.deepEqual(await app.db.owner.connect().then(async (c) => { try { return await fireDue(c); } finally { c.release(); } }), []);
  // start again: nothing left to fire
  t.like((await request('POST', id, '/pause')).body, { status: 'draft' });
  const restarted = await request('POST', id, '/start');
  t.like(restarted.body, { status: 'scheduled', next_fire_at: null });
});

test.serial('SMS: no consent, opted out and no number are skipped with their reason at send time', async (t) => {
  const audience = await insertAudience(app.db, org(), everyone, 'Texts');
  const id = await dueBroadcast(audience, undefined, { steps: [{ step_key: 'text', type: 'sms', body: 'Sale today, {{contact.first_name}}' }] });
  // ann's consent is withdrawn after the schedule was started: checked when the message goes
  await app.db.owner.query(`update app_public.contacts set sms_consent = true where id = $1`, [acme.ids.bob]);
  await drainBroadcasts(app.db);
  const [run] = await runsOf(app.db, id);
  const { rows } = await app.db.owner.query(`select c.name, sr.status, sr.reason from app_public.step_runs sr
    join app_public.enrollments e on e.id = sr.enrollment_id join app_public.contacts c on c.id = e.contact_id
    where e.run_id = $1 order by c.name`, [run.id]);
  t.deepEqual(rows.map((r) => [r.name, r.status, r.reason]), [
    ['Ann Lee', 'sent', null], ['Bob South', 'sent', null], ['Cy Nowhere', 'skipped', 'missing_address'],
    ['Dee Noconsent', 'skipped', 'no_consent'], ['Eve Stopped', 'skipped', 'opted_out']]);
  t.like(run, { recipients: 5, sent: 2, skipped: 3 });
});

test.serial('a dynamic audience is taken as its rules select when the schedule fires; a north broadcast sends to north contacts only', async (t) => {
  const { rows: [dyn] } = await app.db.owner.query(`insert into app_public.audiences (organization_id, name, kind, definition)
    values ($1, 'Example people', 'dynamic', $2) returning id`,
    [org(), JSON.stringify({ match: 'all', rules: [{ field: 'email', op: 'contains', value: 'example.com' }] })]);
  const id = await dueBroadcast(dyn.id);
  // a contact added after the schedule was set, before it fires, is a recipient
  await app.db.owner.query(`insert into app_public.contacts (organization_id, name, email) values ($1, 'Late Larry', 'larry@example.com')`, [org()]);
  await drainBroadcasts(app.db);
  const [run] = await runsOf(app.db, id);
  t.like(run, { recipients: 6, sent: 5, skipped: 1 });
  t.true((await outboxOf(app.db, id)).some((m) => m.recipient === 'larry@example.com'));

  const audience = await insertAudience(app.db, org(), everyone, 'All for north');
  const north = await dueBroadcast(audience, undefined, { name: 'North only', location_id: acme.ids.north });
  await drainBroadcasts(app.db);
  const [northRun] = await runsOf(app.db, north);
  // north: ann, dee and eve (suppressed)
  t.like(northRun, { recipients: 3, sent: 2, skipped: 1 });
  t.deepEqual((await outboxOf(app.db, north)).map((m) => m.recipient), ['ann@example.com', 'dee@example.com']);
});

test.serial('recurring: each fire moves next_fire_at to the next occurrence and sends again', async (t) => {
  const audience = await insertAudience(app.db, org(), [acme.ids.ann!, acme.ids.bob!], 'Weekly');
  const id = await dueBroadcast(audience, { schedule_kind: 'recurring', rrule: 'FREQ=DAILY;BYHOUR=9;BYMINUTE=0', timezone: 'America/New_York' });
  await drainBroadcasts(app.db);
  const next = new Date((await scheduleRow(app.db, id)).next_fire_at);
  t.true(next.getTime() > Date.now());
  t.is(new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit', hour12: false }).format(next), '09:00');
  await makeScheduleDue(app.db, id);
  await drainBroadcasts(app.db);
  const runs = await runsOf(app.db, id);
  t.is(runs.length, 2);
  for (const r of runs) t.like(r, { status: 'completed', recipients: 2, sent: 2 });
  t.is((await outboxOf(app.db, id)).length, 4);
});

test.serial('several workers at the same moment: one run per occurrence', async (t) => {
  const audience = await insertAudience(app.db, org(), everyone, 'Raced');
  const id = await dueBroadcast(audience, { schedule_kind: 'recurring', rrule: 'FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=8;BYMINUTE=30', timezone: 'Europe/Berlin' });
  const pools = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: app.db.ownerUrl, max: 1 }));
  try {
    const started = await Promise.all(pools.map(async (p) => {
      const c = await p.connect();
      try { return await fireDue(c); } finally { c.release(); }
    }));
    t.is(started.flat().length, 1, 'one worker fired it');
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
  // and graphile-worker with several concurrent jobs (the cron's and the schedule's) sends it once
  await runJobs(app.db, sinkOnly, 4);
  const runs = await runsOf(app.db, id);
  t.is(runs.length, 1);
  t.like(runs[0], { recipients: 5, sent: 4, skipped: 1 });
  const sent = await outboxOf(app.db, id);
  t.is(new Set(sent.map((m) => m.recipient)).size, sent.length, 'nobody twice');
  // the unique (sequence, occurrence) refuses a second run even without the schedule's lock
  const dup = await app.db.owner.query(`insert into app_public.broadcast_runs (organization_id, sequence_id, fire_at)
    select organization_id, sequence_id, fire_at from app_public.broadcast_runs where id = $1 on conflict do nothing returning id`, [runs[0].id]);
  t.is(dup.rowCount, 0);
});

test.serial('cancel a run: what has not gone is stopped and counted; again answers the same; the job sends nothing', async (t) => {
  const audience = await insertAudience(app.db, org(), everyone, 'Cancelled');
  const id = await dueBroadcast(audience);
  const c = await app.db.owner.connect();
  try { await fireDue(c); } finally { c.release(); }
  const [run] = await runsOf(app.db, id);
  t.like(run, { status: 'sending', recipients: 5 });
  const res = await request('POST', id, `/runs/${run.id}/cancel`);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body, { run_id: run.id, status: 'cancelled', cancelled: 5 });
  t.deepEqual((await request('POST', id, `/runs/${run.id}/cancel`)).body, { run_id: run.id, status: 'cancelled', cancelled: 5 });
  await drainBroadcasts(app.db);
  t.is((await outboxOf(app.db, id)).length, 0);
  t.like((await runsOf(app.db, id))[0], { status: 'cancelled', sent: 0, cancelled: 5 });
  const { rows } = await app.db.owner.query(`select distinct status, end_reason from app_public.enrollments where run_id = $1`, [run.id]);
  t.deepEqual(rows, [{ status: 'cancelled', end_reason: 'run_cancelled' }]);
});

test.serial('a run part sent, then cancelled: the count is what was left', async (t) => {
  const audience = await insertAudience(app.db, org(), everyone, 'Half');
  const id = await dueBroadcast(audience);
  const c = await app.db.owner.connect();
  try {
    await fireDue(c);
    const [run] = await runsOf(app.db, id);
    // one batch of two, as a worker would, then the cancel
    await c.query(`select app_private.broadcast_claim_batch($1, $2, 2, 'http://localhost', '{email,sms}')`, [org(), run.id]);
    const res = await request('POST', id, `/runs/${run.id}/cancel`);
    t.like(res.body, { status: 'cancelled', cancelled: 3 });
    t.like((await runsOf(app.db, id))[0], { status: 'cancelled', recipients: 5, cancelled: 3 });
    t.is((await outboxOf(app.db, id)).length + (await runsOf(app.db, id))[0].skipped, 2);
  } finally {
    c.release();
  }
});

test.serial('setting the schedule again cancels the run sending; pausing lets a run sending go on', async (t) => {
  const audience = await insertAudience(app.db, org(), everyone, 'Reset');
  const id = await dueBroadcast(audience);
  const c = await app.db.owner.connect();
  try { await fireDue(c); } finally { c.release(); }
  t_ok(await request('PUT', id, '', { schedule_kind: 'once', send_at: inAYear() }));
  t.like((await runsOf(app.db, id))[0], { status: 'cancelled', cancelled: 5 });
  t.like(await scheduleRow(app.db, id), { status: 'draft', next_fire_at: null });

  t_ok(await request('POST', id, '/start'));
  await app.db.owner.query(`update app_public.broadcast_schedules set next_fire_at = now() - interval '1 minute' where sequence_id = $1`, [id]);
  const c2 = await app.db.owner.connect();
  try { await fireDue(c2); } finally { c2.release(); }
  t_ok(await request('POST', id, '/pause'));
  const slow = recording(sinkTransport);
  await drainBroadcasts(app.db, { email: slow, sms: slow });
  const runs = await runsOf(app.db, id);
  t.like(runs[1], { status: 'completed', sent: 4, skipped: 1 });
  t.is(slow.sent.length, 4, 'the paused schedule\'s run went on');
  t.like(await scheduleRow(app.db, id), { status: 'paused' });
});

test.serial('a deactivated broadcast sends nothing more: its run ends with the rest cancelled', async (t) => {
  const audience = await insertAudience(app.db, org(), everyone, 'Deactivated');
  const id = await dueBroadcast(audience);
  const c = await app.db.owner.connect();
  try { await fireDue(c); } finally { c.release(); }
  const off = await app.request('PATCH', `/api/v1/sequences/${id}`, { key: key(), body: { is_active: false } });
  t.is(off.status, 200, JSON.stringify(off.body));
  await drainBroadcasts(app.db);
  t.like((await runsOf(app.db, id))[0], { status: 'completed', sent: 0, cancelled: 5 });
  t.is((await outboxOf(app.db, id)).length, 0);
});

test.serial('svc admin jobs drain fires a schedule that came due with no job queued for it (as the every-minute cron would), and sends the run', async (t) => {
  const audience = await insertAudience(app.db, org(), [acme.ids.ann!, acme.ids.bob!], 'Drained');
  const id = await insertBroadcast(app.db, org(), audience, { name: 'Drained news' });
  t_ok(await request('PUT', id, '', { schedule_kind: 'once', send_at: inAYear() }));
  t_ok(await request('POST', id, '/start'));
  // its time has come, and nothing was queued for it: only the cron's fire finds it
  await app.db.owner.query(`update app_public.broadcast_schedules set next_fire_at = clock_timestamp() - interval '1 second' where sequence_id = $1`, [id]);
  await app.db.owner.query(`delete from graphile_worker._private_jobs j using graphile_worker._private_tasks k
     where k.id = j.task_id and k.identifier = 'broadcast_fire'`);
  const res = await svc(['admin', 'jobs', 'drain', '--timeout', '60'], { databaseUrl: app.db.ownerUrl });
  t.is(res.code, 0, res.stderr);
  const [run] = await runsOf(app.db, id);
  t.like(run, { status: 'completed', recipients: 2, sent: 2 });
  t.deepEqual((await outboxOf(app.db, id)).map((m) => m.recipient), ['ann@example.com', 'bob@example.com']);
});
