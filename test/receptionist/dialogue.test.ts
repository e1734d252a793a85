// The built-in receptionist (no model configured), end to end over SMS and web chat: a booking
// by numbers, a cancellation with YES, a reschedule, FAQ, hours and address, and what it does
// not know handed to a person. Every booking goes through appointments_create's own rules.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { answers, appointmentsOf, clinicFixture, contactByPhone, drain, sms } from './helpers.ts';

let app: TestApp;
let acme: Applied;

test.before(async () => {
  delete process.env.AI_BASE_URL;
  ({ app, tenant: acme } = await startWithTenant(clinicFixture()));
});
test.after.always(async () => { await app?.close(); });

const SLOT_LINE = /^[123]\) (Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} \d{1,2}, \d{1,2}:\d{2} (AM|PM)$/;

async function say(phone: string, body: string, to?: string): Promise<{ conversation: string; answer: string }> {
  const r = await sms(app, phone, body, to);
  await drain(app);
  const all = await answers(app, r.conversation_id as string);
  return { conversation: r.conversation_id as string, answer: all.at(-1) ?? '' };
}

test.serial('over SMS: book → which service → slots → a number books it, with an interaction naming the appointment', async (t) => {
  const phone = '+15551230001';
  let r = await say(phone, "I'd like to book a cleaning");
  t.is(r.answer, 'Which service? 1) Cleaning 2) Whitening');
  r = await say(phone, '1');
  const lines = r.answer.split('\n');
  t.is(lines.length, 4, r.answer);
  for (const line of lines.slice(0, 3)) t.regex(line, SLOT_LINE);
  t.is(lines[3], 'Reply 1, 2 or 3 to book.');
  r = await say(phone, '2');
  t.regex(r.answer, /^Booked: Cleaning on (Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} \d{1,2} at \d{1,2}:\d{2} (AM|PM) at North\. Reply CANCEL APPOINTMENT to cancel\.$/);
  t.true(r.answer.includes(lines[1]!.slice(3).replace(', ', ' at ')), 'the second slot was booked');
  const ann = acme.ids.ann!;
  const booked = await appointmentsOf(app, ann);
  t.is(booked.length, 1);
  t.like(booked[0], { location_id: acme.ids.north, offering_id: acme.ids.cleaning, status: 'booked', created_by_credential: r.conversation });
  const interaction = (await app.db.owner.query(`select appointment_id from app_public.interactions where conversation_id = $1`,
    [r.conversation])).rows[0];
  t.is(interaction.appointment_id, booked[0].id);
});

test.serial('over SMS: cancel asks for YES, YES cancels; reschedule offers slots and a number moves it', async (t) => {
  const phone = '+15551230001';
  const ann = acme.ids.ann!;
  let r = await say(phone, 'I need to reschedule');
  t.regex(r.answer, /^Your Cleaning is on .* New times:\n1\) /);
  const before = (await appointmentsOf(app, ann))[0];
  r = await say(phone, '3');
  t.regex(r.answer, /^Moved: Cleaning on /);
  const moved = await appointmentsOf(app, ann);
  t.is(moved.length, 1);
  t.is(moved[0].id, before.id);
  t.not(moved[0].starts_at.getTime(), before.starts_at.getTime());
  r = await say(phone, 'Please cancel my appointment');
  t.regex(r.answer, /^Reply YES to cancel your Cleaning on (Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} \d{1,2} at \d{1,2}:\d{2} (AM|PM)\.$/);
  r = await say(phone, 'yes');
  t.regex(r.answer, /^Cancelled: Cleaning on /);
  t.is((await appointmentsOf(app, ann))[0].status, 'cancelled');
  r = await say(phone, 'cancel my appointment please');
  t.is(r.answer, 'You have no upcoming appointment to cancel.');
});

test.serial('FAQ, hours and address are answered; a question it does not know goes to a person', async (t) => {
  const phone = '+15551230001';
  let r = await say(phone, 'How much does it cost?');
  t.is(r.answer, 'A cleaning is $90.');
  r = await say(phone, 'What are your hours and your address?');
  t.regex(r.answer, /North is open Mon 00:00-24:00/);
  t.regex(r.answer, /1 Main St, Albany, NY 12207/);
});

test.serial('over the chat widget: book by number with no configuration', async (t) => {
  const start = await app.request('POST', `/chat/${acme.ids.north_chat}/conversations`,
    { body: { message: 'Can I book an appointment?', name: 'Wendy Web', phone: '+15551239999' } });
  t.is(start.status, 201, JSON.stringify(start.body));
  const { conversation_id, token } = start.body;
  const post = async (message: string) => {
    const res = await app.request('POST', `/chat/${acme.ids.north_chat}/conversations/${conversation_id}/messages`,
      { body: { message }, headers: { authorization: `Bearer ${token}` } });
    t.is(res.status, 201);
    await drain(app);
  };
  await drain(app);
  const thread = async () => (await app.request('GET', `/chat/${acme.ids.north_chat}/conversations/${conversation_id}/messages`,
    { headers: { authorization: `Bearer ${token}` } })).body.messages.filter((m: { from: string }) => m.from === 'assistant')
    .map((m: { body: string }) => m.body) as string[];
  t.is((await thread()).at(-1), 'Which service? 1) Cleaning 2) Whitening');
  await post('2');
  t.regex((await thread()).at(-1)!, /^1\) .*\nReply 1, 2 or 3 to book\.$/s);
  await post('1');
  t.regex((await thread()).at(-1)!, /^Booked: Whitening on .* at North\. Reply CANCEL to cancel\.$/);
  const wendy = await contactByPhone(app, acme, '+15551239999');
  t.like((await appointmentsOf(app, wendy))[0], { offering_id: acme.ids.whitening, status: 'booked' });
});

test.serial('a slot taken meanwhile: fresh slots are offered, the booking rules decide', async (t) => {
  const phone = '+15551230002'; // Bob, at South (one offering: the slots at once)
  let r = await say(phone, 'book please', '+15550000002');
  const first = r.answer.split('\n')[0]!;
  t.regex(first, SLOT_LINE);
  // someone else takes every team member's first slot
  const slot = (await app.db.owner.query(`select state from app_private.receptionist_states where conversation_id = $1`,
    [r.conversation])).rows[0].state.slots[0];
  let taken = 0;
  for (let i = 0; i < 10; i++) {
    const res = await app.request('POST', '/api/v1/appointments', { key: acme.keys.owner_personal!, body: {
      idempotency_key: `taken-${i}`, location_id: acme.ids.south, offering_id: acme.ids.south_visit, contact_id: acme.ids.cy,
      start_time: slot.start, end_time: slot.end } });
    if (res.status !== 201) break;
    taken++;
  }
  t.true(taken >= 1);
  r = await say(phone, '1', '+15550000002');
  t.regex(r.answer, /^Sorry, that time was just taken\. 1\) /);
  t.is((await appointmentsOf(app, acme.ids.bob!)).length, 0);
});
