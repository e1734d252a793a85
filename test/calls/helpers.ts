// The calls suites' tenant: acmeFixture plus calls at each reach and the people the member
// rules are about. Sam (member at North, staff profile) took ann's call; Ora (member at North,
// own-records level) took dee's; Nia (member at North) has no staff profile; bob's call is at
// South, cy's at no location.
import { acmeFixture, type Fixture } from '../helpers/fixtures.ts';
import { pick, type MalformedInput } from '../helpers/fuzz.ts';

const transcript = [
  { speaker: 'caller', text: 'Hi, how much is a cleaning?' },
  { speaker: 'assistant', text: 'A cleaning is $90.' },
  { speaker: 'caller', text: 'Thanks, bye.' },
];

/** The calls' part of a fixture, added to `base` (any fixture shaped like acmeFixture). */
export function withCalls(base: Fixture): Fixture {
  const users = [
    { ref: 'ora', name: 'Ora Own', email: 'ora@acme.example', role: 'member', location_refs: ['north'], records_level: 'own' },
    { ref: 'nia', name: 'Nia Noprofile', email: 'nia@acme.example', role: 'member', location_refs: ['north'], staff_profile: false },
  ].filter((u) => !base.users.some((b) => b.ref === u.ref));
  const keys = [
    { ref: 'ora_personal', kind: 'personal', user_ref: 'ora' },
    { ref: 'nia_personal', kind: 'personal', user_ref: 'nia' },
    { ref: 'south_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['south'] },
  ].filter((k) => !base.api_keys.some((b) => b.ref === k.ref));
  const calls: Record<string, unknown[]> = {
    ann: [{ ref: 'call_ann', location_ref: 'north', started_at: '2026-11-20T09:00:00Z', duration_seconds: 95, from: '+15551230001',
      to: '+15550000001', team_member_ref: 'staff', summary: 'Asked about prices', transcript }],
    bob: [{ ref: 'call_bob', location_ref: 'south', started_at: '2026-11-20T08:00:00Z', from: '+15551230002', to: '+15550000000' }],
    cy: [{ ref: 'call_cy', started_at: '2026-11-20T07:00:00Z', status: 'missed' }],
    dee: [{ ref: 'call_dee', location_ref: 'north', direction: 'outbound', started_at: '2026-11-20T06:00:00Z', team_member_ref: 'ora' }],
  };
  const contacts = base.contacts.some((c) => c.ref === 'dee') ? base.contacts
    : [...base.contacts, { ref: 'dee', name: 'Dee Both', email: 'dee@example.com', phone: '+15551230004', location_refs: ['north', 'south'] }];
  return {
    ...base,
    users: [...base.users, ...users] as Fixture['users'],
    api_keys: [...base.api_keys, ...keys] as Fixture['api_keys'],
    contacts: contacts.map((c) => (calls[c.ref] ? { ...c, calls: calls[c.ref] } : c)) as Fixture['contacts'],
  };
}

export const callsFixture = (name = 'Acme Dental') => withCalls(acmeFixture(name));

// The area's part of the malformed-input suite: calls in both tenants, so that call ids of both
// organizations land in the pools; contact_id draws the fixture's contacts.
export const malformedInput: MalformedInput = {
  fixture: withCalls,
  values: {
    contact_id: (r, pools) => pick(r, [...pools.ids('contact_id').own, ...pools.ids('contact_id').other]),
    limit: (r) => pick(r, [1, 2, 25, 100]),
  },
};
