// The schedule operations over HTTP: set (draft), read (404 before), start (blockers, next_fire_at),
// pause, start again from paused; every refusal with its status, code and nothing written;
// other organizations and other locations.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { engineFixture } from '../sequences/engine-helpers.ts';
import { insertSendSchedule, insertSequence } from '../sequences/helpers.ts';
import { insertAudience, insertBroadcast, runsOf, scheduleRow, schedulePath } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
let audience: string;
/** The engine's tenant with a manager of south who has the sequences power. */
function fixture(name?: string) {
  const f = engineFixture(name);
  return {
    ...f,
    users: [...f.users, { ref: 'south_mgr', name: 'Sue South', email: 'sue@acme.example', role: 'manager', location_refs: ['south'], powers: ['sequences'] }],
    api_keys: [...f.api_keys, { ref: 'south_mgr_personal', kind: 'personal', user_ref: 'south_mgr' }],
  };
}

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(fixture()));
  other = await app.apply(fixture('Other Co'));
  for (const t of [acme, other]) await insertSendSchedule(app.db, t.organization_id);
  audience = await insertAudience(app.db, acme.organization_id, [acme.ids.ann!, acme.ids.bob!, acme.ids.cy!]);
});
test.after.always(async () => { await app?.close(); });

const key = () => acme.keys.org!;
const org = () => acme.organization_id;
const inAYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString();
/** The UTC date `days` from now (YYYY-MM-DD), and its weekday as BYDAY spells it. */
const dateIn = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const weekdayIn = (days: number) => ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'][new Date(Date.now() + days * 86_400_000).getUTCDay()];
const put = (id: string, body: unknown, k = key()) => app.request('PUT', schedulePath(id), { key: k, body });
const get = (id: string, k = key(), query = '') => app.request('GET', schedulePath(id) + query, { key: k });
const post = (id: string, what: string, k = key()) => app.request('POST', schedulePath(id, `/${what}`), { key: k });

test.serial('set once: draft, sends nothing; get answers it with no runs; set again replaces it', async (t) => {
  const id = await insertBroadcast(app.db, org(), audience);
  const before = await get(id);
  t.is(before.status, 404);
  t.is(before.body.error, 'not_found');
  const sendAt = inAYear();
  const res = await put(id, { schedule_kind: 'once', send_at: sendAt });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { sequence_id: id, schedule_kind: 'once', status: 'draft', next_fire_at: null, rrule: null, runs: [], runs_total: 0 });
  t.is(new Date(res.body.send_at).getTime(), new Date(sendAt).getTime());
  t.like((await get(id)).body, { status: 'draft', schedule_kind: 'once' });
  const again = await put(id, { schedule_kind: 'recurring', rrule: 'RRULE:FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0', timezone: 'America/New_York', ends_on: '2099-12-31' });
  t.like(again.body, { schedule_kind: 'recurring', send_at: null, timezone: 'America/New_York', ends_on: '2099-12-31', status: 'draft' });
  t.is((await runsOf(app.db, id)).length, 0);
});

test.serial('start: scheduled with next_fire_at (a once schedule at send_at; the broadcast activated); pause; start from paused', async (t) => {
  const id = await insertBroadcast(app.db, org(), audience);
  const sendAt = inAYear();
  await put(id, { schedule_kind: 'once', send_at: sendAt });
  const started = await post(id, 'start');
  t.is(started.status, 200, JSON.stringify(started.body));
  t.like(started.body, { status: 'scheduled' });
  t.is(new Date(started.body.next_fire_at).getTime(), new Date(sendAt).getTime());
  t.is((await app.db.owner.query(`select status from app_public.sequences where id = $1`, [id])).rows[0].status, 'active');
  const job = await app.db.owner.query(`select run_at from graphile_worker._private_jobs where key = $1`, [`broadcast_fire:${id}`]);
  t.is(new Date(job.rows[0].run_at).getTime(), new Date(sendAt).getTime(), 'the scheduler\'s job waits for send_at');
  t.like((await post(id, 'start')).body, { status: 'scheduled' }, 'already scheduled: unchanged');

  const paused = await post(id, 'pause');
  t.is(paused.status, 200);
  t.like(paused.body, { status: 'paused', next_fire_at: null });
  t.like((await post(id, 'pause')).body, { status: 'paused' });

  // a recurring schedule started from paused goes on from the next occurrence after now
  await put(id, { schedule_kind: 'recurring', rrule: 'FREQ=DAILY;BYHOUR=9;BYMINUTE=0', timezone: 'Europe/Berlin' });
  await post(id, 'start');
  await post(id, 'pause');
  const resumed = await post(id, 'start');
  const next = new Date(resumed.body.next_fire_at);
  t.true(next.getTime() > Date.now() && next.getTime() <= Date.now() + 86_400_000 + 3_600_000, resumed.body.next_fire_at);
  t.is(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(next), '09:00');
});

test.serial('get pages the runs, newest first, with runs_total', async (t) => {
  const id = await insertBroadcast(app.db, org(), audience);
  await put(id, { schedule_kind: 'once', send_at: inAYear() });
  await app.db.owner.query(`insert into app_public.broadcast_runs (organization_id, sequence_id, fire_at, started_at, status, finished_at)
    select $1, $2, now() - i * interval '1 day', now() - i * interval '1 day', 'completed', now() from generate_series(1, 3) i`, [org(), id]);
  const page = await get(id, key(), '?page=2&limit=2');
  t.is(page.status, 200);
  t.like(page.body, { runs_total: 3, page: 2, limit: 2 });
  t.is(page.body.runs.length, 1);
  const first = await get(id, key(), '?limit=2');
  t.true(new Date(first.body.runs[0].started_at) > new Date(first.body.runs[1].started_at));
  t.like(first.body.runs[0], { status: 'completed', recipients: 0, sent: 0, skipped: 0, failed: 0, unknown: 0, cancelled: 0 });
});

test.serial('400s name the faulty part, and nothing is written', async (t) => {
  const id = await insertBroadcast(app.db, org(), audience);
  const cases: [unknown, string][] = [
    [{ schedule_kind: 'once', send_at: '2001-01-01T00:00:00Z' }, 'body.send_at'],
    [{ schedule_kind: 'once', send_at: '2031-01-01T00:00:00' }, 'body.send_at'],
    [{ schedule_kind: 'once' }, 'body.send_at'],
    [{ schedule_kind: 'once', send_at: inAYear(), rrule: 'FREQ=DAILY' }, 'body.rrule'],
    [{ schedule_kind: 'once', send_at: inAYear(), ends_on: '2099-01-01' }, 'body.ends_on'],
    [{ schedule_kind: 'once', send_at: inAYear(), timezone: 'Nowhere/Town' }, 'body.timezone'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY;INTERVAL=0', timezone: 'UTC' }, 'body.rrule.INTERVAL'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY;INTERVAL=101', timezone: 'UTC' }, 'body.rrule.INTERVAL'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=YEARLY', timezone: 'UTC' }, 'body.rrule.FREQ'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY;COUNT=5', timezone: 'UTC' }, 'body.rrule.COUNT'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY;UNTIL=20300101T000000Z', timezone: 'UTC' }, 'body.rrule.UNTIL'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY;BYHOUR=9,17', timezone: 'UTC' }, 'body.rrule.BYHOUR'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY;BYMINUTE=61', timezone: 'UTC' }, 'body.rrule.BYMINUTE'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=WEEKLY;BYDAY=2TU', timezone: 'UTC' }, 'body.rrule.BYDAY'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=MONTHLY;BYMONTHDAY=0', timezone: 'UTC' }, 'body.rrule.BYMONTHDAY'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY;BYSETPOS=1', timezone: 'UTC' }, 'body.rrule.BYSETPOS'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY', timezone: 'Mars/Olympus' }, 'body.timezone'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY', timezone: '+02:00' }, 'body.timezone'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY' }, 'body.timezone'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY', timezone: 'UTC', ends_on: '2001-01-01' }, 'body.ends_on'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY', timezone: 'UTC', ends_on: '2031-02-30' }, 'body.ends_on'],
    // parts no date satisfies: the 31st is never a month's first Monday
    [{ schedule_kind: 'recurring', rrule: 'FREQ=MONTHLY;BYMONTHDAY=31;BYDAY=1MO', timezone: 'UTC' }, 'body.rrule'],
    [{ schedule_kind: 'recurring', rrule: 'FREQ=DAILY;BYMONTHDAY=31;BYDAY=MO;BYSETPOS=2', timezone: 'UTC' }, 'body.rrule'],
    // the series ends tomorrow, its first occurrence is in three days
    [{ schedule_kind: 'recurring', rrule: `FREQ=WEEKLY;BYDAY=${weekdayIn(3)}`, timezone: 'UTC', ends_on: dateIn(1) }, 'body.ends_on'],
    [{ schedule_kind: 'recurring', timezone: 'UTC', send_at: inAYear() }, 'body.send_at'],
    [{ schedule_kind: 'weekly' }, 'body.schedule_kind'],
    [{ schedule_kind: 'once', send_at: inAYear(), extra: 1 }, 'body'],
  ];
  for (const [body, part] of cases) {
    const res = await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => put(id, body));
    t.true(res.body.message.startsWith(part), `${JSON.stringify(body)}: ${res.body.message}`);
  }
  // an automation has no schedule
  const automation = await insertSequence(app.db, org(), { name: 'Not a broadcast' });
  const res = await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => put(automation, { schedule_kind: 'once', send_at: inAYear() }));
  t.regex(res.body.message, /^sequenceId: /);
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => get(automation));
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => post(automation, 'start'));
});

test.serial('404 before a schedule exists and for an unknown run; 409 run_finished; nothing written', async (t) => {
  const id = await insertBroadcast(app.db, org(), audience);
  for (const what of ['start', 'pause']) await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => post(id, what));
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => get(id));
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => put('00000000-0000-4000-8000-000000000000', { schedule_kind: 'once', send_at: inAYear() }));
  await refusedWithoutWrites(t, app, org(), 404, 'not_found',
    () => post(id, 'runs/00000000-0000-4000-8000-000000000000/cancel'));
  await put(id, { schedule_kind: 'once', send_at: inAYear() });
  const { rows: [run] } = await app.db.owner.query(`insert into app_public.broadcast_runs (organization_id, sequence_id, fire_at, status, finished_at)
    values ($1, $2, now(), 'completed', now()) returning id`, [org(), id]);
  await refusedWithoutWrites(t, app, org(), 409, 'run_finished', () => post(id, `runs/${run.id}/cancel`));
  // a run of another broadcast is not this one's
  const otherBroadcast = await insertBroadcast(app.db, org(), audience, { name: 'Another' });
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => post(otherBroadcast, `runs/${run.id}/cancel`));
});

test.serial('start with blockers: 400 sequence_activation_blocked listing them, nothing written', async (t) => {
  const id = await insertBroadcast(app.db, org(), null, { name: 'No audience', steps: [{ step_key: 'x', type: 'email', subject: '', body: '' }] });
  await put(id, { schedule_kind: 'once', send_at: inAYear() });
  const res = await refusedWithoutWrites(t, app, org(), 400, 'sequence_activation_blocked', () => post(id, 'start'));
  t.deepEqual(res.body.blockers.map((b: { code: string }) => b.code).sort(), ['audience_missing', 'empty_content']);
  t.like(await scheduleRow(app.db, id), { status: 'draft', next_fire_at: null });
  // an archived audience
  const archived = await insertAudience(app.db, org(), [acme.ids.ann!], 'Archived');
  await app.db.owner.query(`update app_public.audiences set archived_at = now() where id = $1`, [archived]);
  const id2 = await insertBroadcast(app.db, org(), archived, { name: 'Archived audience' });
  await put(id2, { schedule_kind: 'once', send_at: inAYear() });
  const res2 = await refusedWithoutWrites(t, app, org(), 400, 'sequence_activation_blocked', () => post(id2, 'start'));
  t.deepEqual(res2.body.blockers.map((b: { code: string }) => b.code), ['audience_archived']);
});

test.serial('another organization\'s broadcast is 404 to every operation, and nothing is written', async (t) => {
  const theirAudience = await insertAudience(app.db, other.organization_id, [other.ids.ann!]);
  const theirs = await insertBroadcast(app.db, other.organization_id, theirAudience);
  await app.db.owner.query(`insert into app_public.broadcast_schedules (organization_id, sequence_id, schedule_kind, send_at)
    values ($1, $2, 'once', now() + interval '1 day')`, [other.organization_id, theirs]);
  const { rows: [run] } = await app.db.owner.query(`insert into app_public.broadcast_runs (organization_id, sequence_id, fire_at)
    values ($1, $2, now()) returning id`, [other.organization_id, theirs]);
  const orgs = [org(), other.organization_id];
  for (const call of [() => get(theirs), () => put(theirs, { schedule_kind: 'once', send_at: inAYear() }), () => post(theirs, 'start'),
    () => post(theirs, 'pause'), () => post(theirs, `runs/${run.id}/cancel`)]) {
    const before = await Promise.all(orgs.map((o) => app.db.owner.query(`select count(*) from app_public.broadcast_runs where organization_id = $1 and status = 'sending'`, [o])));
    await refusedWithoutWrites(t, app, other.organization_id, 404, 'not_found', call);
    const after = await Promise.all(orgs.map((o) => app.db.owner.query(`select count(*) from app_public.broadcast_runs where organization_id = $1 and status = 'sending'`, [o])));
    t.deepEqual(after.map((r) => r.rows[0].count), before.map((r) => r.rows[0].count));
  }
  // our run id through our own broadcast is still not theirs
  const ours = await insertBroadcast(app.db, org(), audience, { name: 'Ours' });
  await put(ours, { schedule_kind: 'once', send_at: inAYear() });
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => post(ours, `runs/${run.id}/cancel`));
});

test.serial('locations: a manager of another location sees a north broadcast as 404; one of north writes it; a member is 403', async (t) => {
  const north = await insertBroadcast(app.db, org(), audience, { name: 'North news', location_id: acme.ids.north });
  await put(north, { schedule_kind: 'once', send_at: inAYear() });
  // south_mgr manages south: the north broadcast is out of reach
  const south = acme.keys.south_mgr_personal!;
  for (const call of [() => get(north, south), () => post(north, 'pause', south), () => post(north, 'start', south),
    () => put(north, { schedule_kind: 'once', send_at: inAYear() }, south)]) {
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', call);
  }
  // a manager without the sequences power: 403 whatever the broadcast
  await refusedWithoutWrites(t, app, org(), 403, 'insufficient_role', () => get(north, acme.keys.weak_mgr_personal!));
  // the north manager (sequences power) may set it; an organization-wide one is 403 to it
  const mine = await put(north, { schedule_kind: 'once', send_at: inAYear() }, acme.keys.mgr_personal!);
  t.is(mine.status, 200, JSON.stringify(mine.body));
  const orgWide = await insertBroadcast(app.db, org(), audience, { name: 'Everyone' });
  await put(orgWide, { schedule_kind: 'once', send_at: inAYear() });
  await refusedWithoutWrites(t, app, org(), 403, 'insufficient_role', () => post(orgWide, 'pause', acme.keys.mgr_personal!));
  // members may not write sequences (member access deny)
  const member = await refusedWithoutWrites(t, app, org(), 403, 'insufficient_role', () => post(north, 'pause', acme.keys.member_key!));
  t.truthy(member);
});
