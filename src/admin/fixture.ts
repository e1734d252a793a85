// The tenant fixture of `svc admin apply` (docs: operator-cli.md). Everything it creates is
// written in one transaction as the owner: operators create tenants, the public API never does.
import { z } from 'zod';
import type pg from 'pg';
import { ALL_SCOPES, POWERS, type Power, type Scope } from '../auth/scopes.ts';
import { generateKey, hashKey } from '../auth/keys.ts';
import { toE164 } from '../platform/phone.ts';

const ref = z.string().min(1).max(200);
const refs = z.array(ref);
const time = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM');
const power = z.enum(POWERS);

const Organization = z.strictObject({
  name: z.string().min(1).max(200),
  mcp_enabled: z.boolean().default(true),
  tag_limit: z.int().min(0).default(500),
  sending_email_domain: z.string().min(1).max(253).nullish(),
  default_sms_number: z.string().nullish(),
});

const Location = z.strictObject({
  ref: ref.optional(),
  name: z.string().min(1).max(200),
  timezone: z.string().default('UTC').refine(validTimeZone, 'unknown IANA time zone'),
  staffed: z.boolean().default(true),
  sms_number: z.string().nullish(),
  hours: z.array(z.strictObject({
    day: z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']),
    open: time,
    close: time,
  })).default([]),
});

const User = z.strictObject({
  ref: ref.optional(),
  name: z.string().min(1).max(200),
  email: z.email(),
  role: z.enum(['owner', 'admin', 'manager', 'member']),
  location_refs: refs.default([]),
  powers: z.array(power).default([]),
  sms_enabled: z.boolean().default(true),
  records_level: z.enum(['all', 'own']).default('all'),
  staff_profile: z.boolean().optional(),
  agent_access: z.boolean().default(true),
  active: z.boolean().default(true),
});

const ApiKey = z.strictObject({
  ref: ref.optional(),
  name: z.string().max(200).optional(),
  kind: z.enum(['personal', 'organization']),
  user_ref: ref.optional(),
  created_by_ref: ref.optional(),
  scopes: z.array(z.enum(ALL_SCOPES as [Scope, ...Scope[]])).optional(),
  role: z.enum(['MANAGER', 'MEMBER']).nullish(),
  location_refs: refs.optional(),
  powers: z.array(power).optional(),
});

const Stage = z.strictObject({ ref: ref.optional(), name: z.string().min(1).max(200) });

const CustomField = z.strictObject({
  ref: ref.optional(),
  key: z.string().regex(/^[A-Za-z0-9_]{1,100}$/, 'letters, digits and underscore only'),
  label: z.string().min(1).max(200).optional(),
  type: z.enum(['text', 'number', 'currency', 'date', 'datetime', 'boolean', 'select']).default('text'),
  options: z.array(z.string()).optional(),
  enabled: z.boolean().default(true),
});

const Note = z.strictObject({
  body: z.string().min(1).max(20000),
  source: z.enum(['user', 'system', 'integration', 'location_private']).default('user'),
  location_ref: ref.optional(),
  author_ref: ref.optional(),
  created_at: z.iso.datetime({ offset: true }).optional(),
});

const Interaction = z.strictObject({
  ref: ref.optional(),
  channel: z.enum(['voice', 'chat', 'sms']),
  status: z.enum(['in_progress', 'completed', 'abandoned']).default('completed'),
  location_ref: ref.optional(),
  summary: z.string().max(20000).optional(),
  captured_fields: z.record(z.string(), z.unknown()).default({}),
  started_at: z.iso.datetime({ offset: true }).optional(),
  ended_at: z.iso.datetime({ offset: true }).optional(),
});

const Contact = z.strictObject({
  ref: ref.optional(),
  name: z.string().max(200).nullish(),
  email: z.email().nullish(),
  phone: z.string().nullish(),
  location_refs: refs.default([]),
  stage_ref: ref.optional(),
  tags: z.array(z.string().min(1).max(120)).default([]),
  custom_fields: z.record(z.string(), z.unknown()).default({}),
  sms_consent: z.boolean().default(false),
  sms_consent_source: z.string().min(1).max(200).optional(),
  email_suppressed: z.boolean().default(false),
  sms_opted_out: z.boolean().default(false),
  total_calls: z.int().min(0).default(0),
  first_seen_at: z.iso.datetime({ offset: true }).optional(),
  last_seen_at: z.iso.datetime({ offset: true }).optional(),
  notes: z.array(Note).default([]),
  interactions: z.array(Interaction).default([]),
});

export const Fixture = z.strictObject({
  organization: Organization,
  locations: z.array(Location).default([]),
  users: z.array(User).default([]),
  api_keys: z.array(ApiKey).default([]),
  stages: z.array(Stage).default([]),
  custom_fields: z.array(CustomField).default([]),
  contacts: z.array(Contact).default([]),
});
export type Fixture = z.infer<typeof Fixture>;

export interface Applied {
  organization_id: string;
  ids: Record<string, string>;
  keys: Record<string, string>;
  key_ids: Record<string, string>;
}

export class FixtureError extends Error {}

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** E.164 form of a phone number (platform/phone.ts), or a FixtureError naming where it came from. */
export function normalizePhone(raw: string, where: string): string {
  const e164 = toE164(raw);
  if (!e164) throw new FixtureError(`${where}: "${raw}" is not a valid phone number with country code`);
  return e164;
}

function checkFieldValue(type: string, options: string[] | undefined, value: unknown, where: string): void {
  const ok = (() => {
    switch (type) {
      case 'number':
      case 'currency': return typeof value === 'number' && Number.isFinite(value);
      case 'boolean': return typeof value === 'boolean';
      case 'date': return typeof value === 'string' && z.iso.date().safeParse(value).success;
      case 'datetime': return typeof value === 'string' && z.iso.datetime({ offset: true }).safeParse(value).success;
      case 'select': return typeof value === 'string' && (!options || options.includes(value));
      default: return typeof value === 'string';
    }
  })();
  if (!ok) throw new FixtureError(`${where}: value does not fit a ${type} field`);
}

export function parseFixture(json: unknown): Fixture {
  const parsed = Fixture.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FixtureError(`${issue.path.join('.') || 'fixture'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Creates one tenant. Applying the same fixture twice creates a second organization. */
export async function applyFixture(client: pg.ClientBase, f: Fixture): Promise<Applied> {
  const ids: Record<string, string> = {};
  const keys: Record<string, string> = {};
  const keyIds: Record<string, string> = {};

  const seen = new Set<string>();
  const remember = (r: string | undefined, id: string, where: string) => {
    if (r === undefined) return;
    if (seen.has(r)) throw new FixtureError(`${where}: ref "${r}" is used twice`);
    seen.add(r);
    ids[r] = id;
  };
  const resolve = (r: string, where: string, kind: Map<string, unknown>) => {
    const id = ids[r];
    if (!id || !kind.has(id)) throw new FixtureError(`${where}: unknown ref "${r}"`);
    return id;
  };
  const q = async <T = Record<string, unknown>>(text: string, values: unknown[]) =>
    (await client.query(text, values)).rows as T[];

  const o = f.organization;
  const [org] = await q<{ id: string }>(
    `insert into app_public.organizations (name, mcp_enabled, tag_limit, sending_email_domain, default_sms_number)
     values ($1, $2, $3, $4, $5) returning id`,
    [o.name, o.mcp_enabled, o.tag_limit, o.sending_email_domain ?? null,
      o.default_sms_number ? normalizePhone(o.default_sms_number, 'organization.default_sms_number') : null],
  );
  const orgId = org!.id;

  const locations = new Map<string, unknown>();
  for (const [i, l] of f.locations.entries()) {
    const [row] = await q<{ id: string }>(
      `insert into app_public.locations (organization_id, name, timezone, staffed, sms_number, hours)
       values ($1, $2, $3, $4, $5, $6) returning id`,
      [orgId, l.name, l.timezone, l.staffed, l.sms_number ? normalizePhone(l.sms_number, `locations[${i}].sms_number`) : null,
        JSON.stringify(l.hours)],
    );
    locations.set(row!.id, l);
    remember(l.ref, row!.id, `locations[${i}]`);
  }

  interface Person { id: string; role: string; powers: Power[]; locationIds: string[] }
  const people = new Map<string, Person>();
  for (const [i, u] of f.users.entries()) {
    const where = `users[${i}]`;
    const powers = u.role === 'manager' ? u.powers : [];
    const [row] = await q<{ id: string }>(
      `insert into app_public.people (organization_id, name, email, role, powers, sms_enabled, records_level, active, agent_access)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning id`,
      [orgId, u.name, u.email, u.role, powers, u.sms_enabled, u.role === 'member' ? u.records_level : 'all', u.active, u.agent_access],
    );
    const id = row!.id;
    const locationIds = u.location_refs.map((r) => resolve(r, `${where}.location_refs`, locations));
    for (const loc of locationIds) {
      await q(`insert into app_public.person_locations (organization_id, person_id, location_id) values ($1, $2, $3)`, [orgId, id, loc]);
    }
    if (u.staff_profile ?? (u.role === 'manager' || u.role === 'member')) {
      await q(`insert into app_public.staff_profiles (organization_id, person_id, display_name) values ($1, $2, $3)`, [orgId, id, u.name]);
    }
    people.set(id, { id, role: u.role, powers, locationIds });
    remember(u.ref, id, where);
  }

  for (const [i, k] of f.api_keys.entries()) {
    const where = `api_keys[${i}]`;
    let creator: Person;
    let role: 'MANAGER' | 'MEMBER' | null = null;
    let powers: Power[] = [];
    const locationIds = (k.location_refs ?? []).map((r) => resolve(r, `${where}.location_refs`, locations));
    if (k.kind === 'personal') {
      const r = k.user_ref ?? k.created_by_ref;
      if (!r) throw new FixtureError(`${where}: a personal key needs user_ref`);
      creator = people.get(resolve(r, `${where}.user_ref`, people))!;
      if (k.role || k.location_refs || k.powers) {
        throw new FixtureError(`${where}: a personal key follows its person; role, location_refs and powers do not apply`);
      }
    } else {
      const creatorId = k.created_by_ref
        ? resolve(k.created_by_ref, `${where}.created_by_ref`, people)
        : [...people.values()].find((p) => p.role === 'owner' || p.role === 'admin')?.id;
      if (!creatorId) throw new FixtureError(`${where}: an organization key needs created_by_ref (an owner or admin)`);
      creator = people.get(creatorId)!;
      role = k.role ?? (locationIds.length ? 'MANAGER' : null);
      const creatorPowers: Power[] = creator.role === 'manager' ? creator.powers : [...POWERS];
      powers = role === 'MANAGER' ? (k.powers ?? creatorPowers) : [];
      if (role !== 'MANAGER' && k.powers?.length) throw new FixtureError(`${where}: only a MANAGER key holds powers`);
      const byAdmin = creator.role === 'owner' || creator.role === 'admin';
      const byStaffManager = creator.role === 'manager' && creator.powers.includes('staff') && locationIds.length > 0
        && locationIds.every((l) => creator.locationIds.includes(l)) && powers.every((p) => creator.powers.includes(p));
      if (!byAdmin && !byStaffManager) {
        throw new FixtureError(`${where}: only an owner or admin, or a manager with the staff power for their own locations, creates organization keys`);
      }
    }
    const key = generateKey();
    const [row] = await q<{ id: string }>(
      `insert into app_private.api_keys (organization_id, kind, name, created_by, role, scopes, powers, key_hash)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning id`,
      [orgId, k.kind, k.name ?? k.ref ?? null, creator.id, role, k.scopes ?? ALL_SCOPES, powers, hashKey(key)],
    );
    for (const loc of locationIds) {
      await q(`insert into app_private.api_key_locations (organization_id, api_key_id, location_id) values ($1, $2, $3)`, [orgId, row!.id, loc]);
    }
    if (k.ref !== undefined) {
      if (seen.has(k.ref)) throw new FixtureError(`${where}: ref "${k.ref}" is used twice`);
      seen.add(k.ref);
      keys[k.ref] = key;
      keyIds[k.ref] = row!.id;
    }
  }

  const stages = new Map<string, unknown>();
  for (const [i, s] of f.stages.entries()) {
    const [row] = await q<{ id: string }>(
      `insert into app_public.pipeline_stages (organization_id, name, position) values ($1, $2, $3) returning id`,
      [orgId, s.name, i + 1],
    );
    stages.set(row!.id, s);
    remember(s.ref, row!.id, `stages[${i}]`);
  }

  const fields = new Map<string, (typeof f.custom_fields)[number]>();
  for (const [i, c] of f.custom_fields.entries()) {
    if (c.type === 'select' && !c.options?.length) throw new FixtureError(`custom_fields[${i}]: a select field needs options`);
    const [row] = await q<{ id: string }>(
      `insert into app_public.custom_fields (organization_id, key, label, type, options, enabled)
       values ($1, $2, $3, $4, $5, $6) returning id`,
      [orgId, c.key, c.label ?? c.key, c.type, c.options ? JSON.stringify(c.options) : null, c.enabled],
    );
    if (fields.has(c.key)) throw new FixtureError(`custom_fields[${i}]: key "${c.key}" is defined twice`);
    fields.set(c.key, c);
    remember(c.ref, row!.id, `custom_fields[${i}]`);
  }

  const tagIds = new Map<string, string>();
  const contactIds = new Map<string, unknown>();
  for (const [i, c] of f.contacts.entries()) {
    const where = `contacts[${i}]`;
    for (const [key, value] of Object.entries(c.custom_fields)) {
      const field = fields.get(key);
      if (!field) throw new FixtureError(`${where}.custom_fields: "${key}" is not a custom field of the organization`);
      checkFieldValue(field.type, field.options, value, `${where}.custom_fields.${key}`);
    }
    const stageId = c.stage_ref ? resolve(c.stage_ref, `${where}.stage_ref`, stages) : null;
    const phone = c.phone ? normalizePhone(c.phone, `${where}.phone`) : null;
    if (c.sms_consent && c.sms_opted_out) throw new FixtureError(`${where}: a contact cannot both consent to SMS and be opted out`);
    if (c.email_suppressed && !c.email) throw new FixtureError(`${where}: email_suppressed needs an email`);
    if ((c.sms_opted_out || c.sms_consent_source) && !phone) throw new FixtureError(`${where}: SMS consent and opt-out need a phone`);
    const seenAt = c.last_seen_at ?? c.first_seen_at;
    let row: { id: string } | undefined;
    try {
      [row] = await q<{ id: string }>(
        `insert into app_public.contacts (organization_id, name, email, phone, stage_id, field_values, sms_consent,
           sms_consent_at, sms_consent_source, total_calls, first_seen_at, last_seen_at)
         values ($1, $2, $3, $4, $5, $6, $7, case when $7 then now() end, $11, $8,
           coalesce($9::timestamptz, now()), coalesce($10::timestamptz, $9::timestamptz, now()))
         returning id`,
        [orgId, c.name ?? null, c.email ?? null, phone, stageId, JSON.stringify(c.custom_fields), c.sms_consent,
          c.total_calls, c.first_seen_at ?? null, seenAt ?? null, c.sms_consent_source ?? null],
      );
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw new FixtureError(`${where}: another contact already uses this email or phone`);
      throw e;
    }
    const id = row!.id;
    contactIds.set(id, c);
    remember(c.ref, id, where);
    for (const loc of c.location_refs) {
      await q(`insert into app_public.contact_locations (organization_id, contact_id, location_id) values ($1, $2, $3)`,
        [orgId, id, resolve(loc, `${where}.location_refs`, locations)]);
    }
    for (const name of c.tags) {
      const lower = name.toLowerCase();
      let tagId = tagIds.get(lower);
      if (!tagId) {
        [{ id: tagId }] = await q<{ id: string }>(
          `insert into app_public.tags (organization_id, name) values ($1, $2) returning id`, [orgId, name]) as [{ id: string }];
        tagIds.set(lower, tagId);
      }
      await q(`insert into app_public.contact_tags (organization_id, contact_id, tag_id) values ($1, $2, $3) on conflict do nothing`,
        [orgId, id, tagId]);
    }
    if (c.email_suppressed) {
      await q(`insert into app_public.email_suppressions (organization_id, email, contact_id)
               select organization_id, email_key, id from app_public.contacts where organization_id = $1 and id = $2
               on conflict do nothing`, [orgId, id]);
    }
    if (c.sms_opted_out) {
      await q(`insert into app_public.sms_opt_outs (organization_id, phone, contact_id) values ($1, $2, $3)`, [orgId, phone, id]);
    }
    for (const [j, n] of c.notes.entries()) {
      const nWhere = `${where}.notes[${j}]`;
      if (n.source === 'location_private' && !n.location_ref) throw new FixtureError(`${nWhere}: a location_private note needs location_ref`);
      await q(
        `insert into app_public.contact_notes (organization_id, contact_id, body, source, location_id, author_id, created_at)
         values ($1, $2, $3, $4, $5, $6, coalesce($7::timestamptz, now()))`,
        [orgId, id, n.body, n.source, n.location_ref ? resolve(n.location_ref, `${nWhere}.location_ref`, locations) : null,
          n.author_ref ? resolve(n.author_ref, `${nWhere}.author_ref`, people) : null, n.created_at ?? null],
      );
    }
    for (const [j, it] of c.interactions.entries()) {
      const iWhere = `${where}.interactions[${j}]`;
      if (it.started_at && it.ended_at && Date.parse(it.ended_at) < Date.parse(it.started_at)) {
        throw new FixtureError(`${iWhere}: ended_at is before started_at`);
      }
      const [row] = await q<{ id: string }>(
        `insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, summary,
           captured_fields, started_at, ended_at)
         values ($1, $2, $3, $4, $5, $6, $7, coalesce($8::timestamptz, now()), $9) returning id`,
        [orgId, id, it.location_ref ? resolve(it.location_ref, `${iWhere}.location_ref`, locations) : null, it.channel,
          it.status, it.summary ?? null, JSON.stringify(it.captured_fields), it.started_at ?? null, it.ended_at ?? null],
      );
      remember(it.ref, row!.id, iWhere);
    }
  }
  if (tagIds.size > f.organization.tag_limit) {
    throw new FixtureError(`contacts: ${tagIds.size} tags exceed the organization's tag limit of ${f.organization.tag_limit}`);
  }

  return { organization_id: orgId, ids, keys, key_ids: keyIds };
}
