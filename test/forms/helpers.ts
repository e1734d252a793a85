// The forms suites' tenant: acmeFixture plus a form at North with submissions (accepted and
// spam, on several days), one at South and one of no location.
import { acmeFixture, type Fixture } from '../helpers/fixtures.ts';
import { pick, type MalformedInput } from '../helpers/fuzz.ts';

export const intakeFields = [
  { key: 'email', label: 'Email', type: 'email', required: true },
  { key: 'name', label: 'Name', type: 'text' },
  { key: 'phone', label: 'Phone', type: 'phone' },
  { key: 'message', label: 'Message', type: 'textarea' },
  { key: 'plan', label: 'Plan', type: 'select', options: ['basic', 'gold'] },
  { key: 'visits', label: 'Visits a year', type: 'number' },
  { key: 'first_visit', label: 'First visit', type: 'date' },
  { key: 'newsletter', label: 'Newsletter', type: 'checkbox' },
];

/** The forms' part of a fixture, added to `base` (any fixture shaped like acmeFixture). */
export function withForms(base: Fixture): Fixture {
  const keys = [{ ref: 'south_mgr', kind: 'organization', created_by_ref: 'owner', role: 'MANAGER', location_refs: ['south'] }]
    .filter((k) => !base.api_keys.some((b) => b.ref === k.ref));
  return {
    ...base,
    api_keys: [...base.api_keys, ...keys] as Fixture['api_keys'],
    forms: [
      { ref: 'intake', name: 'Intake', location_ref: 'north', allowed_origins: ['https://acme.example'], fields: intakeFields,
        submissions: [
          { ref: 's_ann', payload: { email: 'ann@example.com', name: 'Ann Lee' }, contact_ref: 'ann', submitted_at: '2026-11-20T10:00:00Z' },
          { ref: 's_bob', payload: { email: 'Bob@Example.com' }, contact_ref: 'bob', submitted_at: '2026-11-19T10:00:00Z' },
          { ref: 's_spam', payload: { email: 'buy@spam.example', message: 'http://a http://b' }, status: 'spam', spam_reason: 'links',
            submitted_at: '2026-11-18T10:00:00Z' },
          { ref: 's_odd', payload: { email: 'under_score%pct@example.com' }, submitted_at: '2026-11-17T10:00:00Z' },
        ] },
      { ref: 'south_form', name: 'South contact', location_ref: 'south', redirect_url: 'https://south.example/thanks?from=form', fields: [{ key: 'email', type: 'email', required: true }],
        submissions: [{ ref: 's_south', payload: { email: 'bob@example.com' }, contact_ref: 'bob' }] },
      { ref: 'org_form', name: 'Newsletter', fields: [{ key: 'email', type: 'email', required: true }] },
    ],
  } as Fixture;
}

export const formsFixture = (name = 'Acme Dental') => withForms(acmeFixture(name));

// The area's part of the malformed-input suite: forms in both tenants (their ids join the pools).
export const malformedInput: MalformedInput = {
  fixture: withForms,
  values: {
    status: (r) => pick(r, ['accepted', 'spam']),
    search: (r) => pick(r, ['ann', 'EXAMPLE.COM', '%', '_', 'nobody']),
    from: (r) => pick(r, ['2026-11-18T00:00:00Z', '2026-11-20T10:00:00+01:00']),
    to: (r) => pick(r, ['2026-11-21T00:00:00Z', '2030-01-01T00:00:00-05:00']),
  },
};
