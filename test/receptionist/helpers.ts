// The receptionist suites' tenant and helpers: a clinic whose North location is open every day
// with two offerings and two team members, a South location with its own number, a chat widget
// at North, and contacts at each; inbound SMS and chat as a contact sends them, the answers as
// the outbox holds them.
import type { Applied } from '../../src/admin/fixture.ts';
import { inboundSms } from '../../src/conversations/inbound.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { runJobs, sinkOnly } from '../helpers/messages.ts';
import type { TestApp } from '../helpers/app.ts';

const ALL_WEEK = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const allDay = ALL_WEEK.map((day) => ({ day, open: '00:00', close: '24:00' }));

export function clinicFixture(name = 'Acme Dental') {
  const f = acmeFixture(name) as unknown as Record<string, any>;
  return {
    ...f,
    organization: { ...f.organization, receptionist: {
      handover_message: 'Thanks! Someone from our team will text you shortly.',
      faq: [{ question: 'How much is a cleaning?', keywords: ['price', 'cost', 'much'], answer: 'A cleaning is $90.' }] } },
    locations: [
      { ...f.locations[0], hours: allDay, slot_interval_minutes: 60,
        address: { line1: '1 Main St', city: 'Albany', region: 'NY', postal_code: '12207', country_code: 'US' } },
      // South's number follows North's (the fixture's own numbers are unique per organization)
      { ...f.locations[1], staffed: true, sms_number: f.locations[0].sms_number.replace(/1$/, '2'), hours: allDay, slot_interval_minutes: 60 },
    ],
    users: [
      ...f.users,
      { ref: 'tina', name: 'Tina Team', email: 'tina@acme.example', role: 'member', location_refs: ['north'], staff_profile: true },
      { ref: 'sid', name: 'Sid South', email: 'sid@acme.example', role: 'member', location_refs: ['south'], staff_profile: true },
    ],
    offerings: [
      { ref: 'cleaning', location_ref: 'north', name: 'Cleaning', duration_minutes: 30 },
      { ref: 'whitening', location_ref: 'north', name: 'Whitening', duration_minutes: 60 },
      { ref: 'south_visit', location_ref: 'south', name: 'Visit', duration_minutes: 60 },
    ],
    chat_widgets: [{ ref: 'north_chat', name: 'North chat', location_ref: 'north', allowed_origins: ['https://acme.example'] }],
  };
}

export const sms = (app: TestApp, from: string, body: string, to = '+15550000001') => inboundSms(app.db.owner, { to, from, body });
export const drain = (app: TestApp) => runJobs(app.db, sinkOnly);

/** The texts the receptionist sent in a conversation, oldest first. */
export async function answers(app: TestApp, conversationId: string): Promise<string[]> {
  return (await app.db.owner.query(`select body from app_public.conversation_messages
     where conversation_id = $1 and direction = 'outbound' order by created_at, id`, [conversationId])).rows.map((r) => r.body as string);
}

export async function appointmentsOf(app: TestApp, contactId: string) {
  return (await app.db.owner.query(`select id, location_id, offering_id, staff_profile_id, starts_at, ends_at, status, created_by_credential
     from app_public.appointments where contact_id = $1 order by starts_at`, [contactId])).rows;
}

export async function contactByPhone(app: TestApp, org: Applied, phone: string): Promise<string> {
  return (await app.db.owner.query(`select id from app_public.contacts where organization_id = $1 and phone = $2`,
    [org.organization_id, phone])).rows[0].id as string;
}
