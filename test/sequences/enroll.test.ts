// sequences_enroll: every refusal with nothing written, enrolling again, email lookup, start
// step, reach (managers, members, other organizations), MCP, and concurrent enrolls. Serial:
// the refusals check that nothing at all changed in the organization.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { callTool } from '../helpers/mcp.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import { rows } from '../helpers/sql.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { engineFixture, enroll, enrollmentsOf, events, jobOf, sweep } from './engine-helpers.ts';

let app: TestApp;
let tenant: Applied;
let other: Applied;
let org: string;
let active: string;
let north: string;
let south: string;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(engineFixture()));
  other = await app.apply(engineFixture('Other Co'));
  org = tenant.organization_id;
  // a schedule that opens only on Mondays 09:00-10:00 New York: next_run_at moves into it
  await insertSendSchedule(app.db, org, { timezone: 'America/New_York', windows: [{ day: 'mon', start: '09:00', end: '10:00' }] });
  active = await insertSequence(app.db, org, {
    steps: [{ step_key: 'hello', type: 'email', delay: { hours: 1 }, subject: 'Hi', body: 'Hello' },
            { step_key: 'later', type: 'sms', delay: { days: 1 }, body: 'Later' }] });
  north = await insertSequence(app.db, org, { location_id: tenant.ids.north });
  south = await insertSequence(app.db, org, { location_id: tenant.ids.south });
  await insertSendSchedule(app.db, other.organization_id);
});
test.after.always(async () => {
  await app?.close();
});

const key = () => tenant.keys.org!;
const path = (id: string) => `/api/v1/sequences/${id}/enrollments`;

test.serial('enrolled: the first step due after its delay, run at the next opening of the send window, with its event; the sweep adds its job', async (t) => {
  const before = Date.now();
  const res = await enroll(app, key(), active, { contact_id: tenant.ids.cy });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.status, 'enrolled');
  t.is(res.body.reason, undefined);
  const e = res.body.enrollment;
  t.like(e, { sequence_id: active, contact_id: tenant.ids.cy, status: 'active', current_step_index: 0, current_step_key: 'hello',
    source: 'manual', end_reason: null, paused_at: null });
  const due = new Date(e.next_step_due_at).getTime();
  t.true(due >= before + 3600_000 - 5_000 && due <= Date.now() + 3600_000, 'due in an hour');
  const run = new Date(e.next_run_at);
  t.true(run.getTime() >= due);
  // Monday 09:00-10:00 in New York
  const local = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'short', hour: '2-digit', hour12: false }).format(run);
  t.regex(local, /^Mon,? 09$/, local);
  // the enrollment is the unit of work: its step runs later than the sweep's horizon, so the
  // request added no job; the sweep adds it, at next_run_at, once that comes near
  t.falsy(await jobOf(app.db, e.id));
  t.is(await sweep(app.db), 0);
  t.falsy(await jobOf(app.db, e.id));
  t.true(await sweep(app.db, run) >= 1);
  const job = await jobOf(app.db, e.id);
  t.is(job.key, `sequence_step:${e.id}`);
  t.is(new Date(job.run_at).getTime(), run.getTime());
  t.deepEqual(job.payload, { organization_id: org, enrollment_id: e.id, step_key: 'hello' });
  // a second sweep adds nothing twice
  t.is(await sweep(app.db, run), 0);
  t.deepEqual((await events(app.db, e.id)).map((v) => v.type), ['enrolled']);
  // next_send_at is when the step goes out (in the window), in both lists of enrollments
  const bySequence = await app.request('GET', `${path(active)}?contact_id=${tenant.ids.cy}`, { key: key() });
  const byContact = await app.request('GET', `/api/v1/contacts/${tenant.ids.cy}/enrollments`, { key: key() });
  t.is(new Date(bySequence.body.items[0].next_send_at).getTime(), run.getTime());
  t.is(new Date(byContact.body.items.find((i: { id: string }) => i.id === e.id).next_send_at).getTime(), run.getTime());
});

test.serial('enrolling again answers skipped, already_enrolled, with the same enrollment; by email, case-insensitive', async (t) => {
  const first = await enroll(app, key(), active, { email: 'BOB@Example.com' });
  t.is(first.body.status, 'enrolled');
  t.is(first.body.enrollment.contact_id, tenant.ids.bob);
  const again = await enroll(app, key(), active, { contact_id: tenant.ids.bob });
  t.is(again.status, 200);
  t.is(again.body.status, 'skipped');
  t.is(again.body.reason, 'already_enrolled');
  t.deepEqual(again.body.enrollment, first.body.enrollment);
  t.is((await enrollmentsOf(app.db, active)).filter((e) => e.contact_id === tenant.ids.bob).length, 1);
});

test.serial('enrolling again while the enrollment is paused (its sequence paused) answers skipped, already_enrolled, not 409', async (t) => {
  const paused = await insertSequence(app.db, org, { status: 'paused' });
  const [held] = await rows({ db: app.db }, `insert into app_public.enrollments (organization_id, sequence_id, contact_id, status,
      current_step_index, current_step_key, next_step_due_at, next_run_at, paused_at)
    values ($1, $2, $3, 'paused', 0, 'hello', now(), now(), now()) returning id`, [org, paused, tenant.ids.ann]);
  const before = await enrollmentsOf(app.db, paused);
  const again = await enroll(app, key(), paused, { contact_id: tenant.ids.ann });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.like(again.body, { status: 'skipped', reason: 'already_enrolled', enrollment: { id: held.id, status: 'paused' } });
  t.deepEqual(await enrollmentsOf(app.db, paused), before);
  // a contact not in it is refused: the sequence is paused
  await refusedWithoutWrites(t, app, org, 409, 'sequence_paused', () => enroll(app, key(), paused, { contact_id: tenant.ids.cy }));
});

test.serial('enrolling again a contact unlinked from the sequence\'s location since it was enrolled answers skipped, not 409', async (t) => {
  const bound = await insertSequence(app.db, org, { location_id: tenant.ids.north });
  const first = await enroll(app, key(), bound, { contact_id: tenant.ids.ann });
  t.is(first.body.status, 'enrolled', JSON.stringify(first.body));
  await rows({ db: app.db }, `delete from app_public.contact_locations where organization_id = $1 and contact_id = $2 and location_id = $3`,
    [org, tenant.ids.ann, tenant.ids.north]);
  try {
    const again = await enroll(app, key(), bound, { contact_id: tenant.ids.ann });
    t.is(again.status, 200, JSON.stringify(again.body));
    t.like(again.body, { status: 'skipped', reason: 'already_enrolled', enrollment: { id: first.body.enrollment.id } });
    t.is((await enrollmentsOf(app.db, bound)).length, 1);
  } finally {
    await rows({ db: app.db }, `insert into app_public.contact_locations (organization_id, contact_id, location_id) values ($1, $2, $3)`,
      [org, tenant.ids.ann, tenant.ids.north]);
  }
});

test.serial('a start step: the enrollment starts there', async (t) => {
  const seq = await insertSequence(app.db, org, {
    steps: [{ step_key: 'a', type: 'email', subject: 'A', body: 'A' }, { step_key: 'b', type: 'sms', body: 'B', delay: { minutes: 5 } }] });
  const res = await enroll(app, key(), seq, { contact_id: tenant.ids.ann, start_step_key: 'b' });
  t.is(res.status, 200);
  t.like(res.body.enrollment, { current_step_index: 1, current_step_key: 'b' });
});

test.serial('400: neither or both identifiers, an unknown start step, a broadcast, malformed values; nothing written', async (t) => {
  // (insertSequence would store a broadcast's trigger as JSON null, which the table refuses)
  const { rows: [{ id: broadcast }] } = await app.db.owner.query(
    `insert into app_public.sequences (organization_id, kind, name, steps) values ($1, 'broadcast', 'News', $2::jsonb) returning id`,
    [org, JSON.stringify([{ step_key: 'hello', type: 'email', subject: 'News', body: 'News' }])]);
  for (const [body, id] of [
    [{}, active], [{ contact_id: tenant.ids.ann, email: 'ann@example.com' }, active],
    [{ contact_id: tenant.ids.ann, start_step_key: 'nope' }, active], [{ contact_id: tenant.ids.ann }, broadcast],
    [{ contact_id: 'not-a-uuid' }, active], [{ email: 'not an email' }, active], [{ contact_id: tenant.ids.ann, extra: 1 }, active],
    [{ contact_id: tenant.ids.ann, start_step_key: '' }, active],
  ] as const) {
    await refusedWithoutWrites(t, app, org, 400, 'bad_request', () => enroll(app, key(), id, body));
  }
});

test.serial('404: unknown sequence, unknown contact, an email no contact has, another organization\'s; nothing written', async (t) => {
  const otherSeq = await insertSequence(app.db, other.organization_id);
  for (const [id, body] of [
    ['00000000-0000-4000-8000-000000000000', { contact_id: tenant.ids.ann }], [active, { contact_id: '00000000-0000-4000-8000-000000000000' }],
    [active, { email: 'nobody@example.com' }], [otherSeq, { contact_id: tenant.ids.ann }], [active, { contact_id: other.ids.ann }],
    [active, { contact_id: other.ids.cy }],
  ] as const) {
    await refusedWithoutWrites(t, app, org, 404, 'not_found', () => enroll(app, key(), id as string, body as Record<string, unknown>));
  }
  // and the other organization's key cannot reach ours
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => enroll(app, other.keys.org!, active, { contact_id: tenant.ids.ann }));
});

test.serial('409: inactive, paused, a contact not at the sequence\'s location; nothing written', async (t) => {
  const inactive = await insertSequence(app.db, org, { status: 'inactive' });
  const paused = await insertSequence(app.db, org, { status: 'paused' });
  await refusedWithoutWrites(t, app, org, 409, 'sequence_inactive', () => enroll(app, key(), inactive, { contact_id: tenant.ids.ann }));
  await refusedWithoutWrites(t, app, org, 409, 'sequence_paused', () => enroll(app, key(), paused, { contact_id: tenant.ids.ann }));
  // bob is at south, cy nowhere
  await refusedWithoutWrites(t, app, org, 409, 'contact_not_at_location', () => enroll(app, key(), north, { contact_id: tenant.ids.bob }));
  await refusedWithoutWrites(t, app, org, 409, 'contact_not_at_location', () => enroll(app, key(), north, { email: 'cy@example.com' }));
  const ok = await enroll(app, key(), north, { contact_id: tenant.ids.ann });
  t.is(ok.body.status, 'enrolled');
});

test.serial('reach: a manager with the sequences power enrolls at its location; an organization-wide sequence is 403, another location\'s 404', async (t) => {
  const mgr = tenant.keys.mgr_personal!;
  const res = await enroll(app, mgr, north, { contact_id: tenant.ids.dee });
  t.is(res.status, 200, JSON.stringify(res.body));
  await refusedWithoutWrites(t, app, org, 403, 'insufficient_role', () => enroll(app, mgr, active, { contact_id: tenant.ids.dee }));
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => enroll(app, mgr, south, { contact_id: tenant.ids.bob }));
  // a contact out of the manager's reach is absent
  const northAll = await insertSequence(app.db, org, { location_id: tenant.ids.north });
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => enroll(app, mgr, northAll, { contact_id: tenant.ids.cy }));
});

test.serial('members, managers without the sequences power, and keys without the scope are refused', async (t) => {
  for (const k of ['member_key', 'north_member', 'sam_personal', 'quiet_personal', 'weak_mgr_personal', 'north_mgr', 'staff_mgr_key']) {
    await refusedWithoutWrites(t, app, org, 403, 'insufficient_role', () => enroll(app, tenant.keys[k]!, north, { contact_id: tenant.ids.ann }));
  }
  const res = await refusedWithoutWrites(t, app, org, 403, 'insufficient_scope',
    () => enroll(app, tenant.keys.org_reader!, north, { contact_id: tenant.ids.ann }));
  t.is(res.body.required, 'sequences:write');
});

test.serial('MCP: the same operation as a tool; a refusal is a tool error with the envelope', async (t) => {
  const seq = await insertSequence(app.db, org);
  const ok = await callTool(app, key(), 'sequences_enroll', { sequenceId: seq, email: 'dee@example.com' });
  t.false(ok.isError);
  t.is(ok.body.status, 'enrolled');
  const again = await callTool(app, key(), 'sequences_enroll', { sequenceId: seq, contact_id: tenant.ids.dee });
  t.is(again.body.status, 'skipped');
  const bad = await callTool(app, key(), 'sequences_enroll', { sequenceId: seq });
  t.true(bad.isError);
  t.like(bad.body, { statusCode: 400, error: 'bad_request' });
});

test.serial('concurrent enrolls of one contact make one live enrollment; the rest answer it as skipped', async (t) => {
  const seq = await insertSequence(app.db, org);
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) =>
    enroll(app, key(), seq, i % 2 ? { contact_id: tenant.ids.ann } : { email: 'ann@example.com' })));
  t.true(answers.every((r) => r.status === 200), JSON.stringify(answers.map((r) => r.status)));
  t.is(answers.filter((r) => r.body.status === 'enrolled').length, 1);
  t.is(new Set(answers.map((r) => r.body.enrollment.id)).size, 1);
  t.is((await enrollmentsOf(app.db, seq)).length, 1);
});

test.serial('an enroll racing a pause or a change of steps waits for it: 409 sequence_paused, or the step it stands on kept', async (t) => {
  // the pause and the change of steps hold the sequence's row (as sequences_pause and
  // sequences_update do) while an enroll arrives; it answers once they commit
  const held = async (seq: string, change: string, then: () => Promise<{ status: number; body: any }>) => {
    const client = await app.db.owner.connect();
    try {
      await client.query('begin');
      await client.query(`update app_public.sequences set ${change} where id = $1`, [seq]);
      const answer = then();
      await new Promise((r) => setTimeout(r, 300));
      await client.query('commit');
      return await answer;
    } finally {
      client.release();
    }
  };
  const paused = await insertSequence(app.db, org);
  const res = await held(paused, `status = 'paused', paused_at = now()`, () => enroll(app, key(), paused, { contact_id: tenant.ids.ann }));
  t.is(res.status, 409, JSON.stringify(res.body));
  t.is(res.body.error, 'sequence_paused');
  t.is((await enrollmentsOf(app.db, paused)).length, 0);

  const changed = await insertSequence(app.db, org, { steps: [
    { step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Hi', body: 'Hello' },
    { step_key: 'bye', type: 'email', delay: { days: 1 }, subject: 'Bye', body: 'Bye' }] });
  const moved = await held(changed, `steps = steps - 0`, () => enroll(app, key(), changed, { contact_id: tenant.ids.ann }));
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.is(moved.body.enrollment.current_step_key, 'bye', 'enrolled on the steps as changed');
});
