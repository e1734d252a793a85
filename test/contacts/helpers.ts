// The Acme tenant with what the contacts suites need: typed custom fields (one disabled),
// contacts at each location and at none, notes, interactions, suppression.
import { acmeFixture } from '../helpers/fixtures.ts';

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
    custom_fields: [
      ...base.custom_fields,
      { key: 'visits', label: 'Visits', type: 'number' },
      { key: 'ltv', label: 'Lifetime value', type: 'currency' },
      { key: 'vip', label: 'VIP', type: 'boolean' },
      { key: 'birthday', label: 'Birthday', type: 'date' },
      { key: 'last_call', label: 'Last call', type: 'datetime' },
      { key: 'insurance', label: 'Insurance', type: 'select', options: ['Delta', 'Aetna'] },
      { key: 'retired', label: 'Retired field', type: 'text', enabled: false },
    ],
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
