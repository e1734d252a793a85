// The receptionist's tool calls are bound to its conversation: whatever the model asks, a call
// naming another contact, another location, another contact's appointment or another
// organization's records gets a 403 not_allowed result and changes nothing; malformed calls get
// a clear error result. Run through src/receptionist/tools.ts as the answering job runs them
// (app_hidden.receptionist_authenticate, then the operation's own SQL function).
import test from 'ava';
import type pg from 'pg';
import type { Applied } from '../../src/admin/fixture.ts';
import { runTool, TOOLS, type Binding } from '../../src/receptionist/tools.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { clinicFixture, sms } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
let ann: Binding;
let bobAppointment: string;
let otherAppointment: string;

const nextDayAt = (hourUtc: number) => {
  const d = new Date(Date.now() + 2 * 86400000);
  d.setUTCHours(hourUtc, 0, 0, 0);
  return d;
};

async function bookFor(org: Applied, contact: string, location: string, offering: string, start: Date, minutes: number): Promise<string> {
  const res = await app.request('POST', '/api/v1/appointments', { key: org.keys.owner_personal!, body: {
    idempotency_key: `${contact}-${start.toISOString()}`, location_id: location, offering_id: offering, contact_id: contact,
    start_time: start.toISOString(), end_time: new Date(start.getTime() + minutes * 60000).toISOString() } });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body.id as string;
}

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(clinicFixture()));
  other = await app.apply({ ...clinicFixture('Other Co'), organization: { ...clinicFixture('Other Co').organization,
    sending_email_domain: 'other.example', default_sms_number: '+15560000000' },
  locations: clinicFixture().locations.map((l, i) => ({ ...l, sms_number: `+1556000000${i + 1}` })) });
  const r = await sms(app, '+15551230001', 'hello');
  ann = { organization_id: acme.organization_id, conversation_id: r.conversation_id as string, contact_id: acme.ids.ann!,
    location_id: acme.ids.north!, message_id: r.message_id as string };
  bobAppointment = await bookFor(acme, acme.ids.bob!, acme.ids.south!, acme.ids.south_visit!, nextDayAt(15), 60);
  otherAppointment = await bookFor(other, other.ids.ann!, other.ids.north!, other.ids.cleaning!, nextDayAt(15), 30);
});
test.after.always(async () => { await app?.close(); });

async function call(name: string, args: unknown, position = 1) {
  const client: pg.PoolClient = await app.db.owner.connect();
  try {
    return await runTool({ config: app.config }, client, ann, name, args, position);
  } finally {
    client.release();
  }
}
const count = async () => Number((await app.db.owner.query('select count(*) from app_public.appointments')).rows[0].count);
const statusOf = async (id: string) => (await app.db.owner.query('select status from app_public.appointments where id = $1', [id])).rows[0].status;
const slot = () => { const s = nextDayAt(17); return { start_time: s.toISOString(), end_time: new Date(s.getTime() + 30 * 60000).toISOString() }; };

test('the tools are the contract\'s operations and handover, without the fields the service fills in', (t) => {
  t.deepEqual(TOOLS.map((x) => x.function.name), ['locations_booking_options', 'appointments_availability', 'appointments_create',
    'appointments_list', 'appointments_reschedule', 'appointments_cancel', 'contacts_update', 'handover']);
  const create = TOOLS.find((x) => x.function.name === 'appointments_create')!.function.parameters as { properties: object; required: string[] };
  for (const bound of ['contact_id', 'location_id', 'idempotency_key', 'calendar_id']) t.false(bound in create.properties, bound);
  t.deepEqual(create.required.sort(), ['end_time', 'start_time']);
});

test.serial('another contact, another location, another contact\'s appointment, another organization: 403 not_allowed, nothing written', async (t) => {
  const before = await count();
  const refused = [
    await call('appointments_create', { ...slot(), offering_id: acme.ids.cleaning, contact_id: acme.ids.bob }),
    await call('appointments_create', { ...slot(), offering_id: acme.ids.south_visit, location_id: acme.ids.south }),
    await call('appointments_create', { ...slot(), offering_id: other.ids.cleaning, location_id: other.ids.north, contact_id: other.ids.ann }),
    await call('appointments_cancel', { appointmentId: bobAppointment }),
    await call('appointments_cancel', { appointmentId: otherAppointment }),
    await call('appointments_reschedule', { appointmentId: bobAppointment, ...slot() }),
    await call('appointments_list', { contact_id: acme.ids.bob }),
    await call('appointments_availability', { location_id: acme.ids.south, date: '2030-01-07' }),
    await call('locations_booking_options', { locationId: other.ids.north }),
    await call('contacts_update', { contactId: acme.ids.bob, name: 'Mallory' }),
    await call('contacts_update', { phone: '+15559990000' }),
  ];
  for (const r of refused) t.like(r, { ok: false, error: { statusCode: 403, error: 'not_allowed' } });
  t.is(await count(), before);
  t.is(await statusOf(bobAppointment), 'booked');
  t.is(await statusOf(otherAppointment), 'booked');
  t.is((await app.db.owner.query('select name from app_public.contacts where id = $1', [acme.ids.bob])).rows[0].name, 'Bob South');
});

test.serial('its own contact at its own location: booked once, a retry of the same call replays it; its name may change', async (t) => {
  const args = { ...slot(), offering_id: acme.ids.cleaning };
  const first = await call('appointments_create', args, 7);
  t.true(first.ok, JSON.stringify(first));
  const again = await call('appointments_create', JSON.stringify(args), 7);
  t.deepEqual(again, first);
  const body = first.ok ? first.body as { id: string; contact_id: string; location_id: string } : undefined;
  t.like(body, { contact_id: acme.ids.ann, location_id: acme.ids.north });
  const listed = await call('appointments_list', {});
  t.true(listed.ok && (listed.body as { items: { id: string }[] }).items.some((a) => a.id === body!.id));
  t.like(await call('contacts_update', { name: 'Ann Lee-Smith' }), { ok: true });
  t.like(await call('appointments_cancel', { appointmentId: body!.id }), { ok: true, body: { status: 'cancelled' } });
});

test.serial('malformed calls: an unknown tool, arguments that are not JSON or not an object, too large, off the schema', async (t) => {
  const before = await count();
  t.like(await call('drop_tables', {}), { ok: false, error: { statusCode: 404, error: 'unknown_tool' } });
  t.like(await call('constructor', {}), { ok: false, error: { error: 'unknown_tool' } });
  t.like(await call('appointments_create', '{"start_time":'), { ok: false, error: { statusCode: 400 } });
  t.like(await call('appointments_create', '[1,2]'), { ok: false, error: { statusCode: 400 } });
  t.like(await call('appointments_create', 'null'), { ok: false, error: { statusCode: 400 } });
  t.like(await call('appointments_create', JSON.stringify({ title: 'x'.repeat(20000) })), { ok: false, error: { statusCode: 413 } });
  t.like(await call('appointments_create', { start_time: 'tomorrow', end_time: 'later' }), { ok: false, error: { statusCode: 400 } });
  t.like(await call('appointments_cancel', { appointmentId: 'not-a-uuid' }), { ok: false, error: { statusCode: 400 } });
  t.like(await call('appointments_create', { ...slot(), offering_id: acme.ids.cleaning, surprise: true }), { ok: false, error: { statusCode: 400 } });
  t.is(await count(), before);
});
