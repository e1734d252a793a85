// The demo organization: what `svc seed demo` creates and `npm start` seeds on an empty database.
// The tenancy (organization, locations, people, keys) is demo.json; each area adds its part
// (Area.fixture.demo), so the demo grows with the product.
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { adminApply } from '../admin/commands.ts';
import type { Applied } from '../admin/fixture.ts';
import { AREAS } from '../areas.ts';

const tenancy = JSON.parse(readFileSync(new URL('./demo.json', import.meta.url), 'utf8')) as Record<string, unknown>;

export function demoFixture(): Record<string, unknown> {
  const demo = { ...tenancy };
  for (const area of AREAS) {
    for (const [key, value] of Object.entries(area.fixture?.demo ?? {})) {
      if (key in demo) throw new Error(`demo: ${key} is given twice (area ${area.name})`);
      demo[key] = value;
    }
  }
  return demo;
}

export async function seedDemo(pool: pg.Pool): Promise<Applied> {
  return adminApply(pool, await withoutHeldIdentifiers(pool, demoFixture()), AREAS);
}

/**
 * A domain or number belongs to one organization (app_private.inbound_claims): a second demo
 * organization goes without the ones the first holds (`svc admin org move` moves them).
 */
async function withoutHeldIdentifiers(pool: pg.Pool, demo: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { rows } = await pool.query<{ identifier: string }>(`select identifier from app_private.inbound_claims`);
  const held = new Set(rows.map((r) => r.identifier));
  if (!held.size) return demo;
  type Org = { sending_email_domain?: string | null; default_sms_number?: string | null };
  const org = { ...(demo.organization as Org) };
  if (org.sending_email_domain && held.has(org.sending_email_domain.toLowerCase())) org.sending_email_domain = null;
  if (org.default_sms_number && held.has(org.default_sms_number)) org.default_sms_number = null;
  const locations = (demo.locations as { sms_number?: string | null }[] | undefined)?.map((l) =>
    (l.sms_number && held.has(l.sms_number) ? { ...l, sms_number: null } : l));
  return { ...demo, organization: org, ...(locations ? { locations } : {}) };
}

/** Seeds only when no organization exists yet; returns what it created, if anything. */
export async function seedIfEmpty(pool: pg.Pool): Promise<Applied | undefined> {
  const { rows } = await pool.query(`select not exists (select 1 from app_public.organizations) as empty`);
  return rows[0].empty ? seedDemo(pool) : undefined;
}

export function describeSeed(applied: Applied, baseUrl: string): string {
  const lines = [
    'Demo organization created. These keys are shown once; only their hashes are stored:',
    ...Object.entries(applied.keys).map(([ref, key]) => `  ${ref.padEnd(18)} ${key}`),
    '',
    `Try: curl -H "Authorization: Bearer ${applied.keys.organization ?? Object.values(applied.keys)[0]}" ${baseUrl}/api/v1/me`,
    `Book with the appointments_manager key (a MANAGER with the appointments power): organization keys without a role book calendars only.`,
    '',
    'Try the receptionist (it books by number, cancels with YES, answers hours and FAQ):',
    '  npx svc admin inbound sms --to +12125550101 --from +12125551001 --body "I would like to book a cleaning"',
    '  npx svc admin jobs drain && npx svc admin outbox --org ' + applied.organization_id,
    ...(applied.ids.website_chat ? [`  curl -s -X POST ${baseUrl}/chat/${applied.ids.website_chat}/conversations -H 'content-type: application/json' -d '{"message": "Can I book an appointment?"}'`] : []),
  ];
  return lines.join('\n');
}
