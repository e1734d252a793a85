// Property: whatever mix of creates, reschedules and cancels runs at once, no team member is ever
// left with two live (booked) overlapping rows, and every answer is a success or a 409 of the
// spec, never a 5xx. Rounds of random concurrent operations, seeded (the seed is in the title).
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type Answer, type TestApp } from '../helpers/app.ts';
import { pick } from '../helpers/fuzz.ts';
import { prng } from '../helpers/random.ts';
import { book, cancel, dstFixture, reschedule } from './booking-helpers.ts';
import { teamMember } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(dstFixture())); });
test.after.always(async () => { await app?.close(); });

const SEED = 20300311;
const ROUNDS = 6;
const PER_ROUND = 24;

/** Pairs of live rows of one team member whose ranges overlap (the property: none). */
async function overlaps(organizationId: string): Promise<unknown[]> {
  const { rows } = await app.db.owner.query(
    `select a.id as a, b.id as b, a.staff_profile_id from app_public.appointments a
       join app_public.appointments b on b.organization_id = a.organization_id and b.staff_profile_id = a.staff_profile_id
        and a.id < b.id and a.during && b.during
      where a.organization_id = $1 and a.status = 'booked' and b.status = 'booked' and a.rrule is null and b.rrule is null`, [organizationId]);
  return rows;
}

test(`seed ${SEED}: random concurrent creates, reschedules and cancels never leave two live overlapping bookings of a team member`, async (t) => {
  const r = prng(SEED);
  // Monday 11 Mar 2030, around the clock at ny24 (Tess alone), and North's Sam and Nia (cleanings)
  const day = Date.parse('2030-03-11T04:00:00Z');
  const at = (quarter: number) => new Date(day + quarter * 15 * 60_000).toISOString();
  const tess = teamMember(acme, 'tess');
  const ids: string[] = [];
  const statuses = new Map<string, number>();
  const expected = new Set(['slot_taken', 'duration_mismatch', 'appointment_cancelled', 'outside_hours', 'no_team_member_available', 'team_member_not_eligible']);
  for (let round = 0; round < ROUNDS; round++) {
    const calls: Promise<Answer>[] = [];
    for (let i = 0; i < PER_ROUND; i++) {
      const what = r();
      const q = Math.floor(r() * 24);
      const length = pick(r, [1, 2, 3, 4]);
      if (what < 0.5 || ids.length === 0) {
        const atNorth = r() < 0.4;
        calls.push(atNorth
          ? book(app, acme.keys.owner_personal, { location_id: acme.ids.north, offering_id: acme.ids.cleaning, contact_id: acme.ids.ann,
              ...(r() < 0.5 ? { team_member_id: teamMember(acme, pick(r, ['staff', 'nia'])) } : {}),
              start_time: at(40 + q), end_time: at(40 + q + 2) })
          : book(app, acme.keys.owner_personal, { location_id: acme.ids.ny24, contact_id: acme.ids.dee,
              ...(r() < 0.5 ? { team_member_id: tess } : {}), start_time: at(q), end_time: at(q + length) }));
      } else if (what < 0.8) {
        calls.push(reschedule(app, acme.keys.owner_personal, pick(r, ids), at(q), at(q + length)));
      } else {
        calls.push(cancel(app, acme.keys.owner_personal, pick(r, ids)));
      }
    }
    const answers = await Promise.all(calls);
    for (const a of answers) {
      statuses.set(`${a.status} ${a.status >= 300 ? a.body.error : ''}`, (statuses.get(`${a.status} ${a.status >= 300 ? a.body.error : ''}`) ?? 0) + 1);
      if (a.status === 201) ids.push(a.body.id);
      else if (a.status !== 200) t.true(a.status === 409 && expected.has(a.body.error), `round ${round}: ${a.status} ${JSON.stringify(a.body)}`);
    }
    t.deepEqual(await overlaps(acme.organization_id), [], `round ${round}: no overlapping live bookings`);
  }
  t.log([...statuses].map(([k, n]) => `${k}: ${n}`).join(', '));
  // the run did exercise each kind of answer
  t.true([...statuses.keys()].some((k) => k.startsWith('201')));
  t.true([...statuses.keys()].some((k) => k.startsWith('409 slot_taken')));
  t.true([...statuses.keys()].some((k) => k.startsWith('200')));
});
