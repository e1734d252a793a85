// The conversations suites' tenant: acme's, with contacts in every SMS situation and a
// conversation on each channel at each kind of place, plus an own-records member.
import { acmeFixture } from '../helpers/fixtures.ts';
import type { TestDatabase } from '../helpers/db.ts';

export function inboxFixture(name = 'Acme Dental') {
  const f = acmeFixture(name);
  const [ann, bob, cy] = f.contacts as unknown as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
  return {
    ...f,
    users: [
      ...f.users,
      { ref: 'own', name: 'Owen Own', email: 'owen@acme.example', role: 'member', location_refs: ['north'], records_level: 'own' },
      { ref: 'far', name: 'Fay Far', email: 'fay@acme.example', role: 'member', location_refs: ['south'] },
    ],
    api_keys: [
      ...f.api_keys,
      { ref: 'own_personal', kind: 'personal', user_ref: 'own' },
      { ref: 'far_personal', kind: 'personal', user_ref: 'far' },
      { ref: 'south_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['south'], powers: ['contacts'] },
      { ref: 'north_weak', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['north'], powers: [] },
      { ref: 'reader', kind: 'organization', created_by_ref: 'owner', scopes: ['conversations:read'] },
    ],
    contacts: [
      { ...ann, conversations: [
        { ref: 'ann_sms', channel: 'sms', location_ref: 'north', messages: [
          { direction: 'inbound', body: 'Do you have a slot on Monday?', at: '2026-11-20T10:00:00Z' },
          { direction: 'outbound', body: 'Yes, 10:00 is free.', at: '2026-11-20T10:00:05Z' }] },
        { ref: 'ann_chat', channel: 'chat', location_ref: 'north', messages: [
          { direction: 'inbound', body: 'A zebra question about Monday', at: '2026-11-20T11:00:00Z' }] }] },
      { ...bob, conversations: [
        { ref: 'bob_sms', channel: 'sms', location_ref: 'south', messages: [
          { direction: 'inbound', body: 'I need to reschedule my appointment (100% sure)', at: '2026-11-21T09:00:00Z' }] }] },
      { ...cy, conversations: [
        { ref: 'cy_email', channel: 'email', subject: 'Invoice', messages: [
          { direction: 'inbound', body: 'Where is my invoice?', subject: 'Invoice', at: '2026-11-21T12:00:00Z' },
          { direction: 'outbound', author_ref: 'owner', body: 'Attached, sorry!', at: '2026-11-21T12:30:00Z' }] }] },
      { ref: 'dee', name: 'Dee Noconsent', email: 'dee@example.com', phone: '+15551230004', location_refs: ['north'], conversations: [
        { ref: 'dee_sms', channel: 'sms', location_ref: 'north', messages: [
          { direction: 'outbound', author_ref: 'owner', body: 'Your crown is ready', at: '2026-11-22T09:00:00Z' }] }] },
      { ref: 'eve', name: 'Eve Stopped', email: 'eve@example.com', phone: '+15551230005', location_refs: ['north'],
        sms_opted_out: true, conversations: [
          { ref: 'eve_sms', channel: 'sms', location_ref: 'north', messages: [
            { direction: 'inbound', body: 'hi', at: '2026-11-22T10:00:00Z' }] }] },
      { ref: 'fay_client', name: 'Flo South', phone: '+15551230006', location_refs: ['south'], sms_consent: true },
      { ref: 'nora', name: 'Nora Nonumber', email: 'nora@example.com', location_refs: ['north'] },
    ],
  };
}

/** The conversation refs of inboxFixture, and where each is. */
export const NORTH = ['ann_sms', 'ann_chat', 'dee_sms', 'eve_sms'];
export const SOUTH = ['bob_sms'];
export const NOWHERE = ['cy_email'];

/** Makes a contact a person's own client, as an appointment with them would. */
export async function makeOwnClient(db: TestDatabase, organizationId: string, personId: string, contactId: string): Promise<void> {
  await db.owner.query(`insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    values ($1, $2, $3, 'appointments') on conflict do nothing`, [organizationId, personId, contactId]);
}
