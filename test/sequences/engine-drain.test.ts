// `svc admin jobs drain [--timeout S]`: does what the every-minute cron would (the step sweep),
// runs every job due now (and what they make due now), leaves later ones queued, and exits; bad
// flags are one line on stderr.
import test from 'ava';
import { adminApply } from '../../src/admin/commands.ts';
import { AREAS } from '../../src/areas.ts';
import { svc } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { engineFixture, enrollment, jobOf } from './engine-helpers.ts';

test('drain sends what is due through the worker\'s tasks into the outbox, and leaves later steps for later', async (t) => {
  const db = await createTestDatabase();
  try {
    const tenant = await adminApply(db.owner, engineFixture(), AREAS);
    const org = tenant.organization_id;
    await insertSendSchedule(db, org);
    const seq = await insertSequence(db, org, {
      steps: [{ step_key: 'now', type: 'email', subject: 'Now', body: 'Now' }, { step_key: 'soon', type: 'sms', body: 'Soon' },
              { step_key: 'later', type: 'email', delay: { days: 3 }, subject: 'Later', body: 'Later' }] });
    const { rows: [{ r }] } = await db.owner.query(`select app_private.enroll_contact($1, $2, $3) as r`, [org, seq, tenant.ids.ann]);
    const res = await svc(['admin', 'jobs', 'drain', '--timeout', '60'], { databaseUrl: db.ownerUrl });
    t.is(res.code, 0, res.stderr);
    // the step due in three days has no job yet (the sweep adds it when it comes near): nothing
    // is queued for later
    t.like(JSON.parse(res.stdout), { drained: true, due_later: 0 });
    const out = await svc(['admin', 'outbox', '--org', org], { databaseUrl: db.ownerUrl });
    const lines = out.stdout.trim().split('\n').map((l) => JSON.parse(l));
    t.deepEqual(lines.map((l) => [l.channel, l.meta.step_key]), [['email', 'now'], ['sms', 'soon']]);
    t.like(lines[0].meta, { sequence_id: seq, enrollment_id: r.enrollment.id });
    const e = await enrollment(db, r.enrollment.id);
    t.like(e, { status: 'active', current_step_key: 'later' });
    t.falsy(await jobOf(db, r.enrollment.id));
    t.true(new Date(e.next_run_at).getTime() > Date.now() + 2 * 86400_000, 'left for later');

    // three days on: the step is due and still has no job (the worker's cron sweep would add it):
    // drain does what that cron does first, then sends it
    await db.owner.query(`update app_public.enrollments set next_step_due_at = now() - interval '1 second',
        next_run_at = now() - interval '1 second' where id = $1`, [r.enrollment.id]);
    t.falsy(await jobOf(db, r.enrollment.id));
    const again = await svc(['admin', 'jobs', 'drain', '--timeout', '60'], { databaseUrl: db.ownerUrl });
    t.is(again.code, 0, again.stderr);
    t.is(again.stderr, '', 'nothing on stderr when all went well');
    const later = (await svc(['admin', 'outbox', '--org', org], { databaseUrl: db.ownerUrl })).stdout.trim().split('\n').map((l) => JSON.parse(l));
    t.deepEqual(later.map((l) => l.meta.step_key), ['now', 'soon', 'later']);
    t.like(await enrollment(db, r.enrollment.id), { status: 'completed' });

    for (const bad of [['--timeout', 'soon'], ['--timeout', '0'], ['--wait']]) {
      const b = await svc(['admin', 'jobs', 'drain', ...bad], { databaseUrl: db.ownerUrl });
      t.not(b.code, 0);
      t.is(b.stderr.trim().split('\n').length, 1, b.stderr);
    }
  } finally {
    await db.drop();
  }
});
