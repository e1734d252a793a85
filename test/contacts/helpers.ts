// The Acme tenant with what the contacts suites need: typed custom fields (one disabled),
// contacts at each location and at none, notes, interactions, suppression; and the contacts'
// part of the malformed-input suite.
import { acmeFixture, type CustomField } from '../helpers/fixtures.ts';
import { pick, type MalformedInput } from '../helpers/fuzz.ts';

/** Custom fields of every type, one of them disabled (acmeFixture has the text field plan). */
export const CUSTOM_FIELDS: CustomField[] = [
  { key: 'visits', label: 'Visits', type: 'number' },
  { key: 'ltv', label: 'Lifetime value', type: 'currency' },
  { key: 'vip', label: 'VIP', type: 'boolean' },
  { key: 'birthday', label: 'Birthday', type: 'date' },
  { key: 'last_call', label: 'Last call', type: 'datetime' },
  { key: 'insurance', label: 'Insurance', type: 'select', options: ['Delta', 'Aetna'] },
  { key: 'retired', label: 'Retired field', type: 'text', enabled: false },
];

export function contactsFixture(name = 'Acme Dental', opts: { tagLimit?: number } = {}) {
  const base = acmeFixture(name);
  return {
    ...base,
    organization: { ...base.organization, tag_limit: opts.tagLimit ?? base.organization.tag_limit },
    users: [
      ...base.users,
      { ref: 'own', name: 'Olga Own', email: 'olga@acme.example', role: 'member', location_refs: ['north'], records_level: 'own' },
    ],
    api_keys: [
      ...base.api_keys,
      { ref: 'own_personal', kind: 'personal', user_ref: 'own' },
      { ref: 'south_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['south'], powers: ['contacts'] },
      { ref: 'north_mgr_nopower', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['north'], powers: ['sequences'] },
    ],
    custom_fields: [...base.custom_fields, ...CUSTOM_FIELDS],
    contacts: [
      {
        ...base.contacts[0]!,
        interactions: [
          { ref: 'ann_call', channel: 'voice', status: 'completed', location_ref: 'north', summary: 'Booked a cleaning',
            captured_fields: { reason: 'cleaning' }, started_at: '2026-01-05T10:00:00Z', ended_at: '2026-01-05T10:04:00Z' },
          { ref: 'ann_chat', channel: 'chat', status: 'abandoned', location_ref: 'north',
            captured_fields: { question: 'price' }, started_at: '2026-01-06T10:00:00Z' },
          { ref: 'ann_sms_south', channel: 'sms', status: 'completed', location_ref: 'south', started_at: '2026-01-07T10:00:00Z' },
          { ref: 'ann_sms_org', channel: 'sms', status: 'in_progress', started_at: '2026-01-08T10:00:00Z' },
        ],
      },
      base.contacts[1]!,
      base.contacts[2]!,
      { ref: 'dee', name: 'Dee Both', email: 'dee@example.com', phone: '+15551230004', location_refs: ['north', 'south'],
        last_seen_at: '2025-06-01T00:00:00Z', interactions: [{ channel: 'voice', location_ref: 'south' }] },
      { ref: 'eve', name: 'Eve Opted', email: 'eve@example.com', phone: '+15551230005', location_refs: ['north'],
        email_suppressed: true, sms_opted_out: true },
      { ref: 'phil', name: 'Phil Phoneonly', phone: '+447700900123', location_refs: ['north'] },
    ],
  };
}

/** Values of the fixture's custom fields, of their types and not: a custom field's key is the organization's. */
const CUSTOM_FIELD_VALUES = [
  { plan: 'silver' }, { plan: null }, { plan: 5 }, { visits: 3 }, { visits: '3' }, { ltv: 12.5 }, { vip: true }, { vip: 'yes' },
  { birthday: '1990-02-28' }, { birthday: '1990-02-30' }, { last_call: '2026-11-01T09:00:00Z' }, { last_call: '2026-11-01 09:00' },
  { insurance: 'Delta' }, { insurance: 'Cigna' }, { retired: 'x' }, { nope: 'x' }, { visits: 2, plan: 'gold', vip: false },
];

export const malformedInput: MalformedInput = {
  fixture: (base) => ({ ...base, custom_fields: [...base.custom_fields, ...CUSTOM_FIELDS] }),
  values: { custom_fields: (r) => structuredClone(pick(r, CUSTOM_FIELD_VALUES)) },
};
