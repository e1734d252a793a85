// A tenant with every kind of credential, shaped like operator-cli.md's example.

/** A custom field definition of a fixture. */
export interface CustomField { key: string; label: string; type: string; enabled?: boolean; options?: string[] }

/** A tenant fixture as `svc admin apply` takes it: acmeFixture's shape, which the areas' suites extend. */
export type Fixture = ReturnType<typeof acmeFixture>;

/**
 * A sending domain and two numbers of the organization's own: a domain or number belongs to one
 * organization (app_private.inbound_claims), so every other organization of a suite gets its
 * own, made from its name and a count (the same fixture applied twice gets two sets).
 * 'Acme Dental', each suite's first tenant, keeps acme.example and +1555000000x.
 */
let applied = 0;
function identifiers(name: string) {
  if (name === 'Acme Dental') return { domain: 'acme.example', number: '+15550000000', north: '+15550000001' };
  const n = 100000 + ((process.pid * 7919 + ++applied * 104729) % 900000);
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'org';
  return { domain: `${slug}-${n}.example`, number: `+1555${n}0`, north: `+1555${n}1` };
}

export function acmeFixture(name = 'Acme Dental') {
  const ids = identifiers(name);
  return {
    organization: { name, mcp_enabled: true, tag_limit: 100, sending_email_domain: ids.domain, default_sms_number: ids.number },
    locations: [
      { ref: 'north', name: 'North', timezone: 'America/New_York', staffed: true, sms_number: ids.north,
        hours: [{ day: 'mon', open: '09:00', close: '17:00' }] },
      { ref: 'south', name: 'South', timezone: 'America/Chicago' },
    ],
    users: [
      { ref: 'owner', name: 'Olive Owner', email: 'olive@acme.example', role: 'owner' },
      { ref: 'admin', name: 'Adam Admin', email: 'adam@acme.example', role: 'admin' },
      { ref: 'mgr', name: 'Max Manager', email: 'max@acme.example', role: 'manager',
        location_refs: ['north'], powers: ['contacts', 'sequences', 'appointments', 'staff'] },
      { ref: 'weak_mgr', name: 'Wes Manager', email: 'wes@acme.example', role: 'manager', location_refs: ['south'], powers: [] },
      { ref: 'staff', name: 'Sam Staff', email: 'sam@acme.example', role: 'member',
        location_refs: ['north'], sms_enabled: true, records_level: 'all', staff_profile: true, agent_access: true },
      { ref: 'quiet', name: 'Quinn Quiet', email: 'quinn@acme.example', role: 'member', location_refs: ['south'], sms_enabled: false },
    ],
    api_keys: [
      { ref: 'org', kind: 'organization', created_by_ref: 'owner' },
      { ref: 'admin_org', kind: 'organization', created_by_ref: 'admin' },
      { ref: 'org_reader', kind: 'organization', created_by_ref: 'owner', scopes: ['contacts:read'] },
      { ref: 'north_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['north'], powers: ['contacts'] },
      { ref: 'mgr_key', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER' },
      { ref: 'member_key', kind: 'organization', created_by_ref: 'owner', role: 'MEMBER' },
      { ref: 'north_member', kind: 'organization', created_by_ref: 'owner', role: 'MEMBER', location_refs: ['north'] },
      { ref: 'staff_mgr_key', kind: 'organization', created_by_ref: 'mgr', role: 'MANAGER', location_refs: ['north'], powers: ['contacts'] },
      { ref: 'owner_personal', kind: 'personal', user_ref: 'owner' },
      { ref: 'admin_personal', kind: 'personal', user_ref: 'admin' },
      { ref: 'mgr_personal', kind: 'personal', user_ref: 'mgr' },
      { ref: 'weak_mgr_personal', kind: 'personal', user_ref: 'weak_mgr' },
      { ref: 'sam_personal', kind: 'personal', user_ref: 'staff' },
      { ref: 'quiet_personal', kind: 'personal', user_ref: 'quiet' },
    ],
    stages: [{ ref: 'lead', name: 'Lead' }, { ref: 'won', name: 'Won' }],
    custom_fields: [{ key: 'plan', label: 'Plan', type: 'text', enabled: true }] as CustomField[],
    contacts: [
      { ref: 'ann', name: 'Ann Lee', email: 'ann@example.com', phone: '+15551230001', location_refs: ['north'], stage_ref: 'lead',
        tags: ['vip'], custom_fields: { plan: 'gold' }, sms_consent: true, total_calls: 2,
        notes: [{ body: 'Prefers mornings', source: 'user' },
                { body: 'Dashboard note', source: 'location_private', location_ref: 'north' }] },
      { ref: 'bob', name: 'Bob South', email: 'bob@example.com', phone: '+15551230002', location_refs: ['south'] },
      { ref: 'cy', name: 'Cy Nowhere', email: 'cy@example.com' },
    ],
  };
}

let renumbered = 0;
/**
 * The fixture with a sending domain and SMS numbers of its own: a domain or number belongs to one
 * organization, so a suite that applies the same fixture more than once into one database gives
 * each copy its own (the rest of the fixture is unchanged).
 */
export function withOwnIdentifiers<T>(fixture: T): T {
  const f = structuredClone(fixture) as Record<string, any>;
  const n = 100000 + ((process.pid * 7919 + ++renumbered * 104729) % 900000);
  const org = f.organization;
  if (org?.sending_email_domain) org.sending_email_domain = `o${n}.${org.sending_email_domain}`;
  if (org?.default_sms_number) org.default_sms_number = `+1556${n}0`;
  (f.locations ?? []).forEach((l: Record<string, unknown>, i: number) => { if (l.sms_number) l.sms_number = `+1556${n}${(i + 1) % 10}`; });
  return f as T;
}
