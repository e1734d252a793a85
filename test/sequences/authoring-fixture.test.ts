// `svc admin apply` with the sequences' part of the fixture (operator-cli.md): send schedules (the
// first is the default when none says so) and sequences as stored, checked by the same SQL as
// the API; ids in the output; and the demo organization's schedule and sequence.
import test from 'ava';
import { svc } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { adminApply } from '../../src/admin/commands.ts';
import { FixtureError } from '../../src/admin/fixture.ts';
import { AREAS } from '../../src/areas.ts';
import { demoFixture } from '../../src/seed/demo.ts';
import { automation, ALWAYS } from './authoring-helpers.ts';
import { withOwnIdentifiers } from '../helpers/fixtures.ts';

let db: TestDatabase;
test.before(async () => { db = await createTestDatabase(); });
test.after.always(async () => { await db?.drop(); });

const base = (more: Record<string, unknown>) => ({
  organization: { name: 'Fixture Co', sending_email_domain: 'fixture.example', default_sms_number: '+15550001111' },
  locations: [{ ref: 'main', name: 'Main' }],
  ...more,
});
// each case is a new organization: its domain and number are its own
const apply = (json: unknown) => adminApply(db.owner, withOwnIdentifiers(json), AREAS);
const organizations = async () => (await db.owner.query('select count(*)::int as n from app_public.organizations')).rows[0].n;

test.serial('svc admin apply: send schedules and sequences with their ids in the output', async (t) => {
  const res = await svc(['admin', 'apply', '-'], { databaseUrl: db.ownerUrl, stdin: JSON.stringify(base({
    send_schedules: [
      { ref: 'always', name: 'Any time', timezone: 'UTC', windows: ALWAYS },
      { ref: 'office', name: 'Office', timezone: 'America/New_York', windows: [{ day: 'mon', start: '09:00', end: '17:00' }] },
    ],
    sequences: [
      { ref: 'follow', ...automation(), location_ref: 'main', send_schedule_ref: 'office', status: 'active' },
      { ref: 'held', ...automation({ name: 'Held' }), status: 'paused' },
      { ref: 'draft', name: 'Draft', steps: [{ step_key: 'x', type: 'sms', body: '{{nope}}' }] },
    ],
  })) });
  t.is(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  for (const r of ['always', 'office', 'follow', 'held', 'draft']) t.truthy(out.ids[r], r);
  const schedules = (await db.owner.query(`select id, is_default, timezone from app_public.send_schedules where organization_id = $1 order by created_at, name`,
    [out.organization_id])).rows;
  t.deepEqual(schedules.map((s) => [s.id, s.is_default]).sort(), [[out.ids.always, true], [out.ids.office, false]].sort(),
    'the first is the default when none says so');
  const seqs = (await db.owner.query(`select id, status, paused_at, location_id, send_schedule_id, steps, trigger from app_public.sequences
    where organization_id = $1`, [out.organization_id])).rows;
  const byId = Object.fromEntries(seqs.map((s) => [s.id, s]));
  t.like(byId[out.ids.follow], { status: 'active', location_id: out.ids.main, send_schedule_id: out.ids.office, trigger: automation().trigger });
  t.deepEqual(byId[out.ids.follow].steps, automation().steps);
  t.is(byId[out.ids.held].status, 'paused');
  t.truthy(byId[out.ids.held].paused_at);
  t.is(byId[out.ids.draft].status, 'inactive');
  t.deepEqual(byId[out.ids.draft].steps, [{ step_key: 'x', type: 'sms', delay: { minutes: 0 }, body: '{{nope}}' }]);
});

test.serial('a default named explicitly wins; two defaults, a bad zone or windows are refused and nothing is applied', async (t) => {
  const out = await apply(base({ send_schedules: [
    { ref: 'a', name: 'A', windows: ALWAYS }, { ref: 'b', name: 'B', is_default: true, windows: ALWAYS }] }));
  const rows = (await db.owner.query(`select id, is_default from app_public.send_schedules where organization_id = $1`, [out.organization_id])).rows;
  t.deepEqual(Object.fromEntries(rows.map((r) => [r.id, r.is_default])), { [out.ids.a!]: false, [out.ids.b!]: true });

  const before = await organizations();
  for (const [bad, message] of [
    [{ send_schedules: [{ name: 'A', is_default: true, windows: ALWAYS }, { name: 'B', is_default: true, windows: ALWAYS }] }, /at most one/],
    [{ send_schedules: [{ name: 'A', timezone: 'Mars/Olympus', windows: ALWAYS }] }, /time zone/],
    [{ send_schedules: [{ name: 'A', windows: [{ day: 'mon', start: '17:00', end: '09:00' }] }] }, /send_schedules\[0\]/],
    [{ send_schedules: [{ name: 'A', windows: [] }] }, /windows/],
    [{ send_schedules: [{ name: 'A', windows: [{ day: 'funday', start: '09:00', end: '10:00' }] }] }, /day/],
  ] as [Record<string, unknown>, RegExp][]) {
    const e = await t.throwsAsync(apply(base(bad)), { instanceOf: FixtureError });
    t.regex(e!.message, message);
  }
  t.is(await organizations(), before, 'nothing applied');
});

test.serial('sequences are checked as the API checks them; an active one must be sendable', async (t) => {
  const before = await organizations();
  const schedules = { send_schedules: [{ ref: 's', name: 'S', windows: ALWAYS }] };
  for (const [seq, message] of [
    [{ name: 'x', steps: [{ step_key: 'a', type: 'fax' }] }, /steps\.0\.type/],
    [{ name: 'x', steps: [{ step_key: 'a', type: 'wait' }], edges: [{ from: 'a', to: 'b' }] }, /edges\.0\.to/],
    [{ name: 'x', trigger: { type: 'no_such_trigger' } }, /trigger\.type/],
    [{ name: 'x', trigger: { type: 'form_submitted' } }, /trigger\.form_id/],
    [{ name: 'x', exit_conditions: [{ type: 'tag_added' }] }, /exit_conditions\.0\.tag/],
    [{ name: 'x', location_ref: 'nowhere' }, /unknown ref "nowhere"/],
    [{ name: 'x', send_schedule_ref: 'main' }, /unknown ref "main"/],
    [{ name: 'x', kind: 'broadcast', trigger: { type: 'manual' } }, /broadcast has no trigger/],
    [{ ...automation(), status: 'active', steps: [] }, /no_steps/],
    [{ ...automation(), status: 'active', steps: [{ step_key: 'a', type: 'sms', body: '{{nope}}' }] }, /unknown_variable \(a\)/],
    [{ name: 'x', kind: 'broadcast', steps: [{ step_key: 'a', type: 'sms', body: 'x' }], status: 'active' }, /audience_missing/],
  ] as [Record<string, unknown>, RegExp][]) {
    const e = await t.throwsAsync(apply(base({ ...schedules, sequences: [seq] })), { instanceOf: FixtureError });
    t.regex(e!.message, message);
    t.regex(e!.message, /sequences\[0\]/);
  }
  const noSchedule = await t.throwsAsync(apply(base({ sequences: [{ ...automation(), status: 'active' }] })), { instanceOf: FixtureError });
  t.regex(noSchedule!.message, /no_send_schedule/);
  t.is(await organizations(), before, 'nothing applied');
});

test.serial('the demo organization has a default send schedule (any time) and one draft sequence that activates', async (t) => {
  const demo = demoFixture();
  const out = await apply(demo);
  t.truthy(out.ids.any_time);
  t.truthy(out.ids.welcome_sequence);
  const [s] = (await db.owner.query(`select s.status, app_hidden.sequence_blockers(s) as blockers from app_public.sequences s where id = $1`,
    [out.ids.welcome_sequence])).rows;
  t.is(s.status, 'inactive');
  t.deepEqual(s.blockers, [], 'it activates as it is');
  const [d] = (await db.owner.query(`select is_default, windows from app_public.send_schedules where id = $1`, [out.ids.any_time])).rows;
  t.true(d.is_default);
  // every day, all day: a sequence tried at night sends at once
  t.is(d.windows.length, 7);
  for (const w of d.windows) t.like(w, { start: '00:00', end: '24:00' });
});
