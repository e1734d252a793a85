// appointment_booked for sequences: a trigger type (automations enroll the contact of a booking
// made through the API, at any location or at the one the trigger names) and an exit type (a
// booking ends the contact's enrollments that list it), offered by discovery and accepted by
// sequences_create. Bookings written by fixtures fire nothing.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { insertSequence } from '../sequences/helpers.ts';
import { book, dstFixture, northCleaning } from './booking-helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(dstFixture())); });
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;
async function enrollments(sequenceId: string) {
  const { rows } = await app.db.owner.query(
    `select contact_id, status, source, end_reason from app_public.enrollments where organization_id = $1 and sequence_id = $2 order by created_at`,
    [org(), sequenceId]);
  return rows;
}

test.serial('discovery lists appointment_booked as a trigger and as an exit condition, and sequences_create accepts both', async (t) => {
  const triggers = await app.request('GET', '/api/v1/sequences/triggers', { key: acme.keys.owner_personal });
  t.is(triggers.status, 200);
  t.true(JSON.stringify(triggers.body).includes('appointment_booked'));
  const created = await app.request('POST', '/api/v1/sequences', { key: acme.keys.owner_personal, body: {
    name: 'After a booking', trigger: { type: 'appointment_booked', location_id: acme.ids.north },
    steps: [{ step_key: 'thanks', type: 'email', delay: { minutes: 0 }, subject: 'See you soon', body: 'Thanks for booking' }],
    exit_conditions: [{ type: 'appointment_booked' }],
  } });
  t.is(created.status, 201, JSON.stringify(created.body));
});

test.serial('an API booking enrolls its contact in active automations triggered by appointment_booked (the location\'s, or any)', async (t) => {
  const anywhere = await insertSequence(app.db, org(), { trigger: { type: 'appointment_booked' } });
  const atNorth = await insertSequence(app.db, org(), { trigger: { type: 'appointment_booked', location_id: acme.ids.north } });
  const atSouth = await insertSequence(app.db, org(), { trigger: { type: 'appointment_booked', location_id: acme.ids.south } });
  const inactive = await insertSequence(app.db, org(), { trigger: { type: 'appointment_booked' }, status: 'inactive' });
  const res = await book(app, acme.keys.owner_personal, northCleaning(acme, 60));
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like((await enrollments(anywhere))[0], { contact_id: acme.ids.ann, status: 'active', source: 'appointment_booked' });
  t.is((await enrollments(atNorth)).length, 1);
  t.deepEqual(await enrollments(atSouth), []);
  t.deepEqual(await enrollments(inactive), []);
  // a refused booking enrolls nobody
  const taken = await book(app, acme.keys.owner_personal, { ...northCleaning(acme, 60), contact_id: acme.ids.dee });
  t.is(taken.status, 409);
  t.is((await enrollments(anywhere)).length, 1);
});

test.serial('a booking ends the contact\'s enrollments whose exit conditions list appointment_booked', async (t) => {
  const nurture = await insertSequence(app.db, org(), { exit_conditions: [{ type: 'appointment_booked' }] });
  const elsewhere = await insertSequence(app.db, org(), { exit_conditions: [{ type: 'appointment_booked', location_id: acme.ids.south }] });
  for (const s of [nurture, elsewhere]) {
    const enrolled = await app.request('POST', `/api/v1/sequences/${s}/enrollments`, { key: acme.keys.owner_personal, body: { contact_id: acme.ids.dee } });
    t.true([200, 201].includes(enrolled.status), JSON.stringify(enrolled.body));
  }
  const res = await book(app, acme.keys.owner_personal, { ...northCleaning(acme, 120), contact_id: acme.ids.dee });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like((await enrollments(nurture))[0], { status: 'completed', end_reason: 'exit_condition:appointment_booked' });
  t.like((await enrollments(elsewhere))[0], { status: 'active' }, 'its exit names another location');
});

test.serial('rows a fixture writes fire nothing', async (t) => {
  const anywhere = await insertSequence(app.db, org(), { trigger: { type: 'appointment_booked' } });
  await app.db.owner.query(
    `insert into app_public.appointments (organization_id, location_id, staff_profile_id, contact_id, starts_at, ends_at, source)
     select $1, $2, sp.id, $3, '2030-03-07T20:00:00Z', '2030-03-07T20:30:00Z', 'fixture'
       from app_public.staff_profiles sp join app_public.people p on p.id = sp.person_id where p.email = 'sam@acme.example' and sp.organization_id = $1`,
    [org(), acme.ids.north, acme.ids.eve]);
  t.deepEqual(await enrollments(anywhere), []);
});
