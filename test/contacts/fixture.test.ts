// `svc admin apply` with what the contacts area adds to the fixture: interactions, SMS consent
// source, email suppression and SMS opt-out (operator-cli.md).
import test from 'ava';
import { svc } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
test.before(async () => { db = await createTestDatabase(); });
test.after.always(async () => { await db?.drop(); });

const tenant = (contact: Record<string, unknown>) => ({
  organization: { name: 'Fixture Co' },
  locations: [{ ref: 'main', name: 'Main' }],
  contacts: [{ ref: 'c', name: 'Cara', email: 'cara@example.com', phone: '+15551110000', ...contact }],
});

test('interactions, consent and suppression are created from a fixture', async (t) => {
  const res = await svc(['admin', 'apply', '-'], { databaseUrl: db.ownerUrl, stdin: JSON.stringify(tenant({
    sms_consent: true, sms_consent_source: 'web form', email_suppressed: true, location_refs: ['main'],
    interactions: [
      { ref: 'call', channel: 'voice', status: 'completed', location_ref: 'main', summary: 'Asked for prices',
        captured_fields: { service: 'whitening' }, started_at: '2026-03-01T09:00:00Z', ended_at: '2026-03-01T09:05:00Z' },
      { channel: 'chat' },
    ],
  })) });
  t.is(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  t.truthy(out.ids.call);
  const { rows } = await db.owner.query(
    `select channel, status, location_id, summary, captured_fields, started_at, ended_at
       from app_public.interactions where organization_id = $1 order by started_at`, [out.organization_id]);
  t.is(rows.length, 2);
  t.like(rows[0], { channel: 'voice', status: 'completed', location_id: out.ids.main, summary: 'Asked for prices',
    captured_fields: { service: 'whitening' } });
  t.like(rows[1], { channel: 'chat', status: 'completed', location_id: null, ended_at: null });
  const { rows: [c] } = await db.owner.query(`select sms_consent, sms_consent_source from app_public.contacts where id = $1`, [out.ids.c]);
  t.deepEqual(c, { sms_consent: true, sms_consent_source: 'web form' });
  const { rows: s } = await db.owner.query(`select email from app_public.email_suppressions where organization_id = $1`, [out.organization_id]);
  t.deepEqual(s, [{ email: 'cara@example.com' }]);
});

test('an SMS opt-out is an open opt-out of the number', async (t) => {
  const res = await svc(['admin', 'apply', '-'], { databaseUrl: db.ownerUrl, stdin: JSON.stringify(tenant({ sms_opted_out: true })) });
  t.is(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  const { rows } = await db.owner.query(`select phone, ended_at from app_public.sms_opt_outs where organization_id = $1`, [out.organization_id]);
  t.deepEqual(rows, [{ phone: '+15551110000', ended_at: null }]);
});

test('bad interactions and contradictory consent are refused with one line naming the place', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ interactions: [{ channel: 'email' }] }, /contacts\.0\.interactions\.0\.channel/],
    [{ interactions: [{ channel: 'voice', status: 'done' }] }, /status/],
    [{ interactions: [{ channel: 'voice', location_ref: 'nowhere' }] }, /contacts\[0\]\.interactions\[0\]\.location_ref: unknown ref "nowhere"/],
    [{ interactions: [{ channel: 'voice', started_at: '2026-03-01T10:00:00Z', ended_at: '2026-03-01T09:00:00Z' }] }, /ended_at is before started_at/],
    [{ interactions: [{ channel: 'voice', captured_fields: [] }] }, /captured_fields/],
    [{ sms_consent: true, sms_opted_out: true }, /cannot both consent/],
    [{ email: null, email_suppressed: true }, /email_suppressed needs an email/],
    [{ phone: null, sms_opted_out: true }, /need a phone/],
  ];
  for (const [contact, message] of cases) {
    const res = await svc(['admin', 'apply', '-'], { databaseUrl: db.ownerUrl, stdin: JSON.stringify(tenant(contact)) });
    t.not(res.code, 0, JSON.stringify(contact));
    t.regex(res.stderr.trim(), message, JSON.stringify(contact));
    t.is(res.stderr.trim().split('\n').length, 1);
  }
});
