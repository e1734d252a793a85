// The tenant fixture of `svc admin apply` (docs: operator-cli.md). Everything it creates is
// written in one transaction as the owner: operators create tenants, the public API never does.
//
// The tenancy itself (organization, locations, people, keys) is written here; every area adds
// its own part through a FixtureSection (registry/area.ts): the top-level keys it owns, the
// fields it adds to other parts' entries (a later area adds `conversations` to each contact),
// and the step that writes them, run after the parts before it in src/areas.ts. Rules the
// database already knows (who may hold a key, what fits a custom field) are asked of the
// database, never restated here.
import { z } from 'zod';
import type pg from 'pg';
import { ALL_SCOPES, POWERS, type Power, type Scope } from '../auth/scopes.ts';
import { generateKey, hashKey } from '../auth/keys.ts';
import { toE164 } from '../platform/phone.ts';

export const ref = z.string().min(1).max(200);
export const refs = z.array(ref);
export const clockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM');
export const instant = z.iso.datetime({ offset: true });
const power = z.enum(POWERS);

/** A top-level key of the fixture: one object, or a list of entries (absent = empty). */
export type FixtureKey = { object: z.ZodRawShape } | { list: z.ZodRawShape };

/** What an area writes of the fixture. */
export interface FixtureSection {
  /** Top-level keys the area owns. */
  keys: Record<string, FixtureKey>;
  /** Fields the area adds to the entries (or object) of keys that other parts own. */
  extend?: Record<string, z.ZodRawShape>;
  /** Writes the area's part; the parts before it in src/areas.ts are written already. */
  apply(ctx: FixtureContext, fixture: ParsedFixture): Promise<void>;
  /** Its part of the demo organization (`npm start` on an empty database, `svc seed demo`). */
  demo?: Record<string, unknown>;
}

/** The fixture as parsed: each key's entries with every part's fields, defaults applied. */
export type ParsedFixture = Record<string, unknown>;

export interface FixtureContext {
  organizationId: string;
  /** A statement as the owner, in the fixture's transaction. */
  q<T = Record<string, unknown>>(text: string, values: unknown[]): Promise<T[]>;
  /** Records the id of an entity that has a ref; a ref is unique in the whole file. */
  remember(kind: string, ref: string | undefined, id: string, where: string): void;
  /** The id of an entity of that kind by its ref, or a FixtureError naming where the ref was used. */
  resolve(kind: string, ref: string, where: string): string;
  /** The id written for the entry at `where` (`locations[0]`), ref or not: for parts that extend other parts' entries. */
  idAt(where: string): string | undefined;
  /** A map of the output beside `ids` (`team_member_ids`, …), created on first use. */
  output(name: string): Record<string, string>;
}

export interface Applied {
  organization_id: string;
  ids: Record<string, string>;
  keys: Record<string, string>;
  key_ids: Record<string, string>;
  [more: string]: string | Record<string, string>;
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

// ---------------------------------------------------------------------------------------------
// The tenancy: organization, locations, people and keys
// ---------------------------------------------------------------------------------------------
const Organization = {
  name: z.string().min(1).max(200),
  mcp_enabled: z.boolean().default(true),
  tag_limit: z.int().min(0).default(500),
  sending_email_domain: z.string().min(1).max(253).nullish(),
  default_sms_number: z.string().nullish(),
  /** The answer to an SMS HELP/INFO (README: Delivery webhooks); absent: the default. */
  sms_help_text: z.string().min(1).max(300).nullish(),
  /** What the receptionist is told and answers (docs/receptionist.md); all optional. */
  receptionist: z.strictObject({
    instructions: z.string().min(1).max(4000).optional(),
    handover_message: z.string().min(1).max(600).optional(),
    faq: z.array(z.strictObject({
      question: z.string().min(1).max(500),
      keywords: z.array(z.string().min(1).max(60)).min(1).max(20),
      answer: z.string().min(1).max(1000),
    })).max(50).optional(),
  }).default({}),
};

const Location = {
  ref: ref.optional(),
  name: z.string().min(1).max(200),
  timezone: z.string().default('UTC').refine(validTimeZone, 'unknown IANA time zone'),
  staffed: z.boolean().default(true),
  sms_number: z.string().nullish(),
  hours: z.array(z.strictObject({
    day: z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']),
    open: clockTime,
    close: z.union([clockTime, z.literal('24:00')]),
  })).default([]),
};

const User = {
  ref: ref.optional(),
  // optional, as everything but organization.name (operator-cli.md): a user named by its ref alone
  // is a member named after the ref, at an address that is never mailed
  name: z.string().min(1).max(200).optional(),
  email: z.email().optional(),
  role: z.enum(['owner', 'admin', 'manager', 'member']).default('member'),
  location_refs: refs.default([]),
  powers: z.array(power).default([]),
  sms_enabled: z.boolean().default(true),
  records_level: z.enum(['all', 'own']).default('all'),
  staff_profile: z.boolean().optional(),
  agent_access: z.boolean().default(true),
  active: z.boolean().default(true),
};

const ApiKey = {
  ref: ref.optional(),
  name: z.string().max(200).optional(),
  kind: z.enum(['personal', 'organization']),
  user_ref: ref.optional(),
  created_by_ref: ref.optional(),
  scopes: z.array(z.enum(ALL_SCOPES as [Scope, ...Scope[]])).optional(),
  role: z.enum(['MANAGER', 'MEMBER']).nullish(),
  location_refs: refs.optional(),
  powers: z.array(power).optional(),
};

type Tenancy = {
  organization: z.output<z.ZodObject<typeof Organization>>;
  locations: z.output<z.ZodObject<typeof Location>>[];
  users: z.output<z.ZodObject<typeof User>>[];
  api_keys: z.output<z.ZodObject<typeof ApiKey>>[];
};

const tenancy: FixtureSection = {
  keys: { organization: { object: Organization }, locations: { list: Location }, users: { list: User }, api_keys: { list: ApiKey } },
  async apply(ctx, fixture) {
    const f = fixture as Tenancy;
    for (const [i, l] of f.locations.entries()) {
      // as PostgreSQL knows it, since it reads the location's hours in it: an offset such as
      // +05:30 passes Intl but PostgreSQL takes it as a POSIX zone, west of Greenwich
      const [zone] = await ctx.q<{ ok: boolean }>('select app_hidden.is_time_zone($1) as ok', [l.timezone]);
      if (!zone?.ok) throw new FixtureError(`locations[${i}].timezone: "${l.timezone}" is not an IANA time zone`);
      const [row] = await ctx.q<{ id: string }>(
        `insert into app_public.locations (organization_id, name, timezone, staffed, sms_number, hours)
         values ($1, $2, $3, $4, $5, $6) returning id`,
        [ctx.organizationId, l.name, l.timezone, l.staffed,
          l.sms_number ? normalizePhone(l.sms_number, `locations[${i}].sms_number`) : null, JSON.stringify(l.hours)],
      );
      ctx.remember('location', l.ref, row!.id, `locations[${i}]`);
    }

    const people = new Map<string, { role: string; powers: Power[] }>();
    for (const [i, u] of f.users.entries()) {
      const where = `users[${i}]`;
      const powers = u.role === 'manager' ? u.powers : [];
      const name = u.name ?? u.ref ?? `Team member ${i + 1}`;
      const email = u.email ?? `${(u.ref ?? `user-${i + 1}`).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').slice(0, 60) || `user-${i + 1}`}@people.invalid`;
      const [row] = await ctx.q<{ id: string }>(
        `insert into app_public.people (organization_id, name, email, role, powers, sms_enabled, records_level, active, agent_access)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning id`,
        [ctx.organizationId, name, email, u.role, powers, u.sms_enabled, u.role === 'member' ? u.records_level : 'all',
          u.active, u.agent_access],
      );
      const id = row!.id;
      for (const loc of u.location_refs) {
        await ctx.q(`insert into app_public.person_locations (organization_id, person_id, location_id) values ($1, $2, $3)`,
          [ctx.organizationId, id, ctx.resolve('location', loc, `${where}.location_refs`)]);
      }
      if (u.staff_profile ?? (u.role === 'manager' || u.role === 'member')) {
        // clock_timestamp: team members are ordered oldest first, so in file order here
        await ctx.q(`insert into app_public.staff_profiles (organization_id, person_id, display_name, created_at)
                     values ($1, $2, $3, clock_timestamp())`,
          [ctx.organizationId, id, name]);
      }
      people.set(id, { role: u.role, powers });
      ctx.remember('person', u.ref, id, where);
    }

    for (const [i, k] of f.api_keys.entries()) {
      const where = `api_keys[${i}]`;
      let creatorId: string;
      let role: 'MANAGER' | 'MEMBER' | null = null;
      let powers: Power[] = [];
      const locationIds = (k.location_refs ?? []).map((r) => ctx.resolve('location', r, `${where}.location_refs`));
      if (k.kind === 'personal') {
        const r = k.user_ref ?? k.created_by_ref;
        if (!r) throw new FixtureError(`${where}: a personal key needs user_ref`);
        creatorId = ctx.resolve('person', r, `${where}.user_ref`);
        if (k.role || k.location_refs || k.powers) {
          throw new FixtureError(`${where}: a personal key follows its person; role, location_refs and powers do not apply`);
        }
      } else {
        const byDefault = [...people].find(([, p]) => p.role === 'owner' || p.role === 'admin')?.[0];
        const found = k.created_by_ref ? ctx.resolve('person', k.created_by_ref, `${where}.created_by_ref`) : byDefault;
        if (!found) throw new FixtureError(`${where}: an organization key needs created_by_ref (an owner or admin)`);
        creatorId = found;
        const creator = people.get(creatorId)!;
        // defaults of operator-cli.md: a key limited to locations is a MANAGER key unless MEMBER is
        // chosen, and a manager key holds its creator's powers (all, for an owner or admin)
        role = k.role ?? (locationIds.length ? 'MANAGER' : null);
        if (role !== 'MANAGER' && k.powers?.length) throw new FixtureError(`${where}: only a MANAGER key holds powers`);
        powers = role === 'MANAGER' ? (k.powers ?? (creator.role === 'manager' ? creator.powers : [...POWERS])) : [];
      }
      const key = generateKey();
      const [row] = await ctx.q<{ id: string }>(
        `insert into app_private.api_keys (organization_id, kind, name, created_by, role, scopes, powers, key_hash)
         values ($1, $2, $3, $4, $5, $6, $7, $8) returning id`,
        [ctx.organizationId, k.kind, k.name ?? k.ref ?? null, creatorId, role, k.scopes ?? ALL_SCOPES, powers, hashKey(key)],
      );
      const keyId = row!.id;
      for (const loc of locationIds) {
        await ctx.q(`insert into app_private.api_key_locations (organization_id, api_key_id, location_id) values ($1, $2, $3)`,
          [ctx.organizationId, keyId, loc]);
      }
      if (k.kind === 'organization') {
        // the rule that also revokes keys when their creator changes
        // (app_private.person_may_hold_key, which the triggers on app_public.people ask)
        const [may] = await ctx.q<{ ok: boolean }>(
          `select app_private.person_may_hold_key(p, k) as ok
             from app_public.people p, app_private.api_keys k
            where p.organization_id = $1 and p.id = $2 and k.organization_id = $1 and k.id = $3`,
          [ctx.organizationId, creatorId, keyId]);
        if (!may?.ok) {
          throw new FixtureError(`${where}: only an owner or admin, or a manager with the staff power for their own `
            + 'locations and powers, creates organization keys, and only while active');
        }
      }
      ctx.remember('key', k.ref, keyId, where);
      if (k.ref !== undefined) ctx.output('keys')[k.ref] = key;
      if (k.ref !== undefined) ctx.output('key_ids')[k.ref] = keyId;
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Parsing and applying, over the tenancy and the areas' sections
// ---------------------------------------------------------------------------------------------
function schemaOf(sections: readonly FixtureSection[]): z.ZodType<ParsedFixture> {
  const all = [tenancy, ...sections];
  const shape: Record<string, z.ZodType> = {};
  for (const section of all) {
    for (const [name, key] of Object.entries(section.keys)) {
      if (name in shape) throw new Error(`fixture key ${name} is owned twice`);
      const fields: Record<string, z.core.$ZodType> = { ...('object' in key ? key.object : key.list) };
      for (const other of all) Object.assign(fields, other.extend?.[name]);
      shape[name] = 'object' in key ? z.strictObject(fields) : z.array(z.strictObject(fields)).default([]);
    }
  }
  return z.strictObject(shape) as unknown as z.ZodType<ParsedFixture>;
}

export function parseFixture(json: unknown, sections: readonly FixtureSection[]): ParsedFixture {
  const parsed = schemaOf(sections).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FixtureError(`${issue.path.join('.') || 'fixture'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Creates one tenant. Applying the same fixture twice creates a second organization. */
export async function applyFixture(client: pg.ClientBase, fixture: ParsedFixture, sections: readonly FixtureSection[]): Promise<Applied> {
  const o = (fixture as Tenancy).organization;
  const [org] = (await client.query<{ id: string }>(
    `insert into app_public.organizations (name, mcp_enabled, tag_limit, sending_email_domain, default_sms_number, sms_help_text,
       receptionist)
     values ($1, $2, $3, $4, $5, $6, $7) returning id`,
    [o.name, o.mcp_enabled, o.tag_limit, o.sending_email_domain ?? null,
      o.default_sms_number ? normalizePhone(o.default_sms_number, 'organization.default_sms_number') : null, o.sms_help_text ?? null,
      JSON.stringify(o.receptionist ?? {})],
  )).rows;

  const ids: Record<string, string> = {};
  const byRef = new Map<string, { kind: string; id: string }>();
  const byPlace = new Map<string, string>();
  const outputs: Record<string, Record<string, string>> = {};
  const ctx: FixtureContext = {
    organizationId: org!.id,
    q: async (text, values) => (await client.query(text, values)).rows,
    remember(kind, r, id, where) {
      byPlace.set(where, id);
      if (r === undefined) return;
      if (byRef.has(r)) throw new FixtureError(`${where}: ref "${r}" is used twice`);
      byRef.set(r, { kind, id });
      // keys are reported under keys and key_ids, every other entity under ids
      if (kind !== 'key') ids[r] = id;
    },
    resolve(kind, r, where) {
      const found = byRef.get(r);
      if (found?.kind !== kind) throw new FixtureError(`${where}: unknown ref "${r}"`);
      return found.id;
    },
    idAt: (where) => byPlace.get(where),
    output: (name) => (outputs[name] ??= {}),
  };
  for (const section of [tenancy, ...sections]) await section.apply(ctx, fixture);
  const { keys = {}, key_ids: keyIds = {}, ...more } = outputs;
  return { organization_id: org!.id, ids, keys, key_ids: keyIds, ...more };
}
