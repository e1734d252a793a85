// The demo organization as `npm start` seeds it: the receptionist books over its chat widget and
// over an inbound SMS with no configuration; the printed manager key with the appointments power
// books; every demo contact is at a location; the start-up banner says how to try it.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Applied } from '../../src/admin/fixture.ts';
import { describeSeed, seedDemo } from '../../src/seed/demo.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { answers, drain, sms } from './helpers.ts';

let app: TestApp;
let demo: Applied;

test.before(async () => {
  delete process.env.AI_BASE_URL;
  app = await startApp();
  demo = await seedDemo(app.db.owner);
});
test.after.always(async () => { await app?.close(); });

test.serial('an inbound SMS books a cleaning at Downtown by numbers', async (t) => {
  let r = await sms(app, '+12125551001', 'I would like to book a cleaning', '+12125550101');
  await drain(app);
  const conversation = r.conversation_id as string;
  t.is((await answers(app, conversation)).at(-1), 'Which service? 1) Checkup 2) Cleaning');
  r = await sms(app, '+12125551001', '2', '+12125550101');
  await drain(app);
  t.regex((await answers(app, conversation)).at(-1)!, /^1\) /);
  r = await sms(app, '+12125551001', '1', '+12125550101');
  await drain(app);
  t.regex((await answers(app, conversation)).at(-1)!, /^Booked: Cleaning on .* at Downtown\./);
  r = await sms(app, '+12125551001', 'How much does a cleaning cost?', '+12125550101');
  await drain(app);
  t.regex((await answers(app, conversation)).at(-1)!, /\$90/);
});

test.serial('the website chat books with no configuration', async (t) => {
  const start = await app.request('POST', `/chat/${demo.ids.website_chat}/conversations`, { body: { message: 'Can I book an appointment?' } });
  t.is(start.status, 201);
  await drain(app);
  t.is((await answers(app, start.body.conversation_id)).at(-1), 'Which service? 1) Checkup 2) Cleaning');
});

test.serial('the printed appointments_manager key books; every demo contact is at a location; the banner says how to try', async (t) => {
  const key = demo.keys.appointments_manager!;
  const slots = await app.db.owner.query(`select id from app_public.offerings where organization_id = $1 and name = 'Checkup'`,
    [demo.organization_id]);
  const avail = await app.request('GET', `/api/v1/appointments/availability?location_id=${demo.ids.downtown}&date=${
    new Date(Date.now() + 7 * 86400000).toISOString().slice(0, 10)}&offering_id=${slots.rows[0].id}`, { key });
  t.is(avail.status, 200);
  const ann = (await app.db.owner.query(`select id from app_public.contacts where organization_id = $1 and phone = '+12125551002'`,
    [demo.organization_id])).rows[0].id;
  const slot = avail.body.slots.at(-1);
  const booked = await app.request('POST', '/api/v1/appointments', { key, body: { idempotency_key: randomUUID(),
    location_id: demo.ids.downtown, offering_id: slots.rows[0].id, contact_id: ann, start_time: slot.start, end_time: slot.end } });
  t.is(booked.status, 201, JSON.stringify(booked.body));
  const nowhere = (await app.db.owner.query(`select count(*)::int as n from app_public.contacts c where organization_id = $1
    and not exists (select 1 from app_public.contact_locations l where l.contact_id = c.id)`, [demo.organization_id])).rows[0].n;
  t.is(nowhere, 0);
  const banner = describeSeed(demo, 'http://127.0.0.1:3000');
  t.regex(banner, /appointments_manager/);
  t.regex(banner, /svc admin inbound sms --to \+12125550101/);
  t.regex(banner, new RegExp(`/chat/${demo.ids.website_chat}/conversations`));
});
