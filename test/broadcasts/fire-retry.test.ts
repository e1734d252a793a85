// A schedule that fails to fire fails alone: the sweep fires every other organization's schedule
// and queues the stalled runs again; the broken one is retried with backoff, its error and next
// attempt on its schedule (the API read); once it can fire, it fires, and the retry is gone.
import test from 'ava';
import type { TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { fireDue } from '../../src/broadcasts/fire.ts';
import { engineFixture } from '../sequences/engine-helpers.ts';
import { insertSendSchedule } from '../sequences/helpers.ts';
import { drainBroadcasts, insertAudience, insertBroadcast, makeScheduleDue, runsOf, scheduleRow, schedulePath, startBroadcastsApp } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => {
  ({ app, acme } = await startBroadcastsApp());
  other = await app.apply(engineFixture('Other Co'));
  await insertSendSchedule(app.db, other.organization_id);
});
test.after.always(async () => { await app?.close(); });

const ok = <T extends { status: number; body: any }>(res: T): T => {
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res;
};

/** The retry time of a failed schedule come: its retry and its job moved to now. */
async function retryNow(sequenceId: string) {
  await app.db.owner.query(`update app_public.broadcast_schedules set fire_retry_at = now() - interval '1 second' where sequence_id = $1`, [sequenceId]);
  await app.db.owner.query(`select app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || $1, now())`, [sequenceId]);
}

/** One sweep of the due schedules, as the task runs it. */
async function sweepNow(): Promise<string[]> {
  const client = await app.db.owner.connect();
  try { return await fireDue(client); } finally { client.release(); }
}

async function scheduled(tenant: Applied, audience: string, name: string): Promise<string> {
  const id = await insertBroadcast(app.db, tenant.organization_id, audience, { name });
  ok(await app.request('PUT', schedulePath(id), { key: tenant.keys.org!, body: { schedule_kind: 'once', send_at: new Date(Date.now() + 86_400_000).toISOString() } }));
  ok(await app.request('POST', schedulePath(id, '/start'), { key: tenant.keys.org! }));
  return id;
}

test.serial('one broken schedule is retried with backoff and shown; another organization\'s fires, stalled runs are queued again', async (t) => {
  // broken: a dynamic audience whose rule names a custom field disabled after the schedule started
  const { rows: [a] } = await app.db.owner.query(
    `insert into app_public.audiences (organization_id, name, kind, definition)
     values ($1, 'Plan readers', 'dynamic', '{"match": "all", "rules": [{"field": "field_values.plan", "op": "exists"}]}') returning id`,
    [acme.organization_id]);
  const broken = await scheduled(acme, a.id, 'Broken');
  await app.db.owner.query(`update app_public.custom_fields set enabled = false where organization_id = $1 and key = 'plan'`, [acme.organization_id]);
  const healthy = await scheduled(other, await insertAudience(app.db, other.organization_id, [other.ids.ann!, other.ids.bob!]), 'Healthy');
  // a run of the other organization whose worker died: no progress for ten minutes
  const stalledBroadcast = await insertBroadcast(app.db, other.organization_id, null, { name: 'Stalled', status: 'active' });
  const { rows: [stalled] } = await app.db.owner.query(
    `insert into app_public.broadcast_runs (organization_id, sequence_id, fire_at, progress_at)
     values ($1, $2, now() - interval '10 minutes', now() - interval '10 minutes') returning id`, [other.organization_id, stalledBroadcast]);
  // the broken one is due first, so a sweep stopping at it would fire nothing after it
  await makeScheduleDue(app.db, broken);
  await app.db.owner.query(`update app_public.broadcast_schedules set next_fire_at = next_fire_at - interval '1 minute' where sequence_id = $1`, [broken]);
  await makeScheduleDue(app.db, healthy);
  const before = Date.now();
  await drainBroadcasts(app.db);

  t.like((await runsOf(app.db, healthy))[0], { status: 'completed', recipients: 2, sent: 2 });
  // queued again and sent to its end (it had no recipients left)
  t.like((await runsOf(app.db, stalledBroadcast))[0], { id: stalled.id, status: 'completed' });
  t.deepEqual(await runsOf(app.db, broken), []);
  const read = ok(await app.request('GET', schedulePath(broken), { key: acme.keys.org! })).body;
  t.is(read.status, 'scheduled');
  t.is(read.fire_retry.attempts, 1);
  t.regex(read.fire_retry.last_error, /field_values\.plan/);
  const retryAt = Date.parse(read.fire_retry.next_attempt_at);
  t.true(retryAt >= before + 55_000 && retryAt <= Date.now() + 65_000, read.fire_retry.next_attempt_at);
  t.is(ok(await app.request('GET', schedulePath(healthy), { key: other.keys.org! })).body.fire_retry, null);

  // passed by until its retry time, then tried again: the backoff doubles
  t.deepEqual(await sweepNow(), []);
  t.is((await scheduleRow(app.db, broken)).fire_attempts, 1);
  await retryNow(broken);
  const second = Date.now();
  await drainBroadcasts(app.db);
  const again = await scheduleRow(app.db, broken);
  t.is(again.fire_attempts, 2);
  t.true(again.fire_retry_at.getTime() >= second + 115_000, String(again.fire_retry_at));

  // fixed: the next attempt fires it, and the retry is gone
  await app.db.owner.query(`update app_public.custom_fields set enabled = true where organization_id = $1 and key = 'plan'`, [acme.organization_id]);
  await retryNow(broken);
  await drainBroadcasts(app.db);
  t.like((await runsOf(app.db, broken))[0], { status: 'completed', recipients: 1 });
  t.like(ok(await app.request('GET', schedulePath(broken), { key: acme.keys.org! })).body, { status: 'draft', fire_retry: null });
});
