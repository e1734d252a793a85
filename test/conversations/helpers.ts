// The conversations area's part of the malformed-input suite (test/platform/malformed.test.ts):
// a conversation on each channel for the suite's contacts (ann consents to SMS and is at North,
// bob is South's without consent, cy has only an email), and values that fit them: texts,
// searches, and cursors of real rows or out of PostgreSQL's range.
import { pick, type MalformedInput } from '../helpers/fuzz.ts';
import type { Fixture } from '../helpers/fixtures.ts';
import { encodeCursor } from '../../src/conversations/schemas.ts';

const CONVERSATIONS: Record<string, unknown[]> = {
  ann: [
    { channel: 'sms', location_ref: 'north', messages: [{ direction: 'inbound', body: 'Do you have a slot on Monday?' },
      { direction: 'outbound', body: 'Yes, 10:00 is free.' }] },
    { channel: 'chat', location_ref: 'north', messages: [{ direction: 'inbound', body: 'Chat about Monday' }] },
  ],
  bob: [{ channel: 'sms', location_ref: 'south', messages: [{ direction: 'inbound', body: 'I need to reschedule' }] }],
  cy: [{ channel: 'email', subject: 'Invoice', messages: [{ direction: 'inbound', body: 'Where is my invoice?' }] }],
};

export const malformedInput: MalformedInput = {
  fixture: (base: Fixture) => ({
    ...base,
    contacts: base.contacts.map((c) => (CONVERSATIONS[c.ref] ? { ...c, conversations: CONVERSATIONS[c.ref] } : c)),
  }) as Fixture,
  values: {
    body: (r) => pick(r, ['See you Monday!', 'Thanks', ' ', 'x'.repeat(1600), 'Reply STOP to opt out']),
    q: (r) => pick(r, ['monday', 'Invoice', 'ann', '100%', '_', 'zzz']),
    cursor: (r, pools) => pick(r, [
      encodeCursor({ at: '2026-11-20T10:00:00.000000Z', id: pick(r, pools.ids('conversation_id').own) }),
      // a cursor of the right shape at a time PostgreSQL cannot hold: the database refuses it
      encodeCursor({ at: '0000-01-01T00:00:00.000000Z', id: pick(r, pools.ids('conversation_id').own) })]),
  },
};
