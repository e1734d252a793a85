// The contacts area's part of the tenant fixture (operator-cli.md): the pipeline's stages,
// custom fields, and contacts with their tags, notes, consent, suppression and interactions.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { FixtureError, instant, normalizePhone, ref, refs, type FixtureSection } from '../admin/fixture.ts';
import { keepingProtoKey } from '../platform/input.ts';

const Stage = { ref: ref.optional(), name: z.string().min(1).max(200) };

const CustomField = {
  ref: ref.optional(),
  key: z.string().regex(/^[A-Za-z0-9_]{1,100}$/, 'letters, digits and underscore only'),
  label: z.string().min(1).max(200).optional(),
  type: z.enum(['text', 'number', 'currency', 'date', 'datetime', 'boolean', 'select']).default('text'),
  options: z.array(z.string()).optional(),
  enabled: z.boolean().default(true),
};

const Note = z.strictObject({
  body: z.string().min(1).max(20000),
  source: z.enum(['user', 'system', 'integration', 'location_private']).default('user'),
  location_ref: ref.optional(),
  author_ref: ref.optional(),
  created_at: instant.optional(),
});

const Interaction = z.strictObject({
  ref: ref.optional(),
  channel: z.enum(['voice', 'chat', 'sms']),
  status: z.enum(['in_progress', 'completed', 'abandoned']).default('completed'),
  location_ref: ref.optional(),
  summary: z.string().max(20000).optional(),
  captured_fields: z.record(z.string(), z.unknown()).default({}),
  started_at: instant.optional(),
  ended_at: instant.optional(),
  // the appointment it booked: linked by the appointments part, which is written after contacts
  appointment_ref: ref.optional(),
});

const Contact = {
  ref: ref.optional(),
  name: z.string().max(200).nullish(),
  email: z.email().nullish(),
  phone: z.string().nullish(),
  location_refs: refs.default([]),
  stage_ref: ref.optional(),
  tags: z.array(z.string().min(1).max(120)).default([]),
  // every key reaches the check below, __proto__ too (zod's records drop it)
  custom_fields: keepingProtoKey(z.record(z.string(), z.unknown()), { value: z.unknown() }).default({}),
  sms_consent: z.boolean().default(false),
  sms_consent_source: z.string().min(1).max(200).optional(),
  email_suppressed: z.boolean().default(false),
  sms_opted_out: z.boolean().default(false),
  total_calls: z.int().min(0).default(0),
  first_seen_at: instant.optional(),
  last_seen_at: instant.optional(),
  notes: z.array(Note).default([]),
  interactions: z.array(Interaction).default([]),
};

type Part = {
  organization: { tag_limit: number };
  stages: z.output<z.ZodObject<typeof Stage>>[];
  custom_fields: z.output<z.ZodObject<typeof CustomField>>[];
  contacts: z.output<z.ZodObject<typeof Contact>>[];
};

export const contactsFixture: FixtureSection = {
  keys: { stages: { list: Stage }, custom_fields: { list: CustomField }, contacts: { list: Contact } },
  demo: JSON.parse(readFileSync(new URL('./demo.json', import.meta.url), 'utf8')) as Record<string, unknown>,

  async apply(ctx, fixture) {
    const f = fixture as Part;
    const org = ctx.organizationId;

    for (const [i, s] of f.stages.entries()) {
      const [row] = await ctx.q<{ id: string }>(
        `insert into app_public.pipeline_stages (organization_id, name, position) values ($1, $2, $3) returning id`,
        [org, s.name, i + 1]);
      ctx.remember('stage', s.ref, row!.id, `stages[${i}]`);
    }

    const keys = new Set<string>();
    for (const [i, c] of f.custom_fields.entries()) {
      if (c.type === 'select' && !c.options?.length) throw new FixtureError(`custom_fields[${i}]: a select field needs options`);
      if (keys.has(c.key)) throw new FixtureError(`custom_fields[${i}]: key "${c.key}" is defined twice`);
      keys.add(c.key);
      const [row] = await ctx.q<{ id: string }>(
        `insert into app_public.custom_fields (organization_id, key, label, type, options, enabled)
         values ($1, $2, $3, $4, $5, $6) returning id`,
        [org, c.key, c.label ?? c.key, c.type, c.options ? JSON.stringify(c.options) : null, c.enabled]);
      ctx.remember('custom_field', c.ref, row!.id, `custom_fields[${i}]`);
    }

    const tagIds = new Map<string, string>();
    for (const [i, c] of f.contacts.entries()) {
      const where = `contacts[${i}]`;
      // the type check the API applies (app_hidden.custom_field_value_fits), on the fields as defined above
      const [misfit] = await ctx.q<{ key: string; type: string | null }>(
        `select e.key, f.type from jsonb_each($2::jsonb) e
           left join app_public.custom_fields f on f.organization_id = $1 and f.key = e.key
          where f.id is null or not app_hidden.custom_field_value_fits(f.type, f.options, e.value)
          order by e.key limit 1`,
        [org, JSON.stringify(c.custom_fields)]);
      if (misfit) {
        throw new FixtureError(misfit.type === null
          ? `${where}.custom_fields: "${misfit.key}" is not a custom field of the organization`
          : `${where}.custom_fields.${misfit.key}: value does not fit a ${misfit.type} field`);
      }
      const stageId = c.stage_ref ? ctx.resolve('stage', c.stage_ref, `${where}.stage_ref`) : null;
      const phone = c.phone ? normalizePhone(c.phone, `${where}.phone`) : null;
      if (c.sms_consent && c.sms_opted_out) throw new FixtureError(`${where}: a contact cannot both consent to SMS and be opted out`);
      if (c.email_suppressed && !c.email) throw new FixtureError(`${where}: email_suppressed needs an email`);
      if ((c.sms_opted_out || c.sms_consent_source) && !phone) throw new FixtureError(`${where}: SMS consent and opt-out need a phone`);
      const seenAt = c.last_seen_at ?? c.first_seen_at;
      let row: { id: string } | undefined;
      try {
        [row] = await ctx.q<{ id: string }>(
          `insert into app_public.contacts (organization_id, name, email, phone, stage_id, field_values, sms_consent,
             sms_consent_at, sms_consent_source, total_calls, first_seen_at, last_seen_at)
           values ($1, $2, $3, $4, $5, $6, $7, case when $7 then now() end, $11, $8,
             coalesce($9::timestamptz, now()), coalesce($10::timestamptz, $9::timestamptz, now()))
           returning id`,
          [org, c.name ?? null, c.email ?? null, phone, stageId, JSON.stringify(c.custom_fields), c.sms_consent,
            c.total_calls, c.first_seen_at ?? null, seenAt ?? null, c.sms_consent_source ?? null]);
      } catch (e) {
        if ((e as { code?: string }).code === '23505') throw new FixtureError(`${where}: another contact already uses this email or phone`);
        throw e;
      }
      const id = row!.id;
      ctx.remember('contact', c.ref, id, where);
      for (const loc of c.location_refs) {
        await ctx.q(`insert into app_public.contact_locations (organization_id, contact_id, location_id) values ($1, $2, $3)`,
          [org, id, ctx.resolve('location', loc, `${where}.location_refs`)]);
      }
      for (const name of c.tags) {
        const lower = name.toLowerCase();
        let tagId = tagIds.get(lower);
        if (!tagId) {
          [{ id: tagId }] = await ctx.q<{ id: string }>(
            `insert into app_public.tags (organization_id, name) values ($1, $2) returning id`, [org, name]) as [{ id: string }];
          tagIds.set(lower, tagId);
        }
        await ctx.q(`insert into app_public.contact_tags (organization_id, contact_id, tag_id) values ($1, $2, $3) on conflict do nothing`,
          [org, id, tagId]);
      }
      if (c.email_suppressed) {
        await ctx.q(`insert into app_public.email_suppressions (organization_id, email, contact_id)
                     select organization_id, email_key, id from app_public.contacts where organization_id = $1 and id = $2
                     on conflict do nothing`, [org, id]);
      }
      if (c.sms_opted_out) {
        await ctx.q(`insert into app_public.sms_opt_outs (organization_id, phone, contact_id) values ($1, $2, $3)`, [org, phone, id]);
      }
      for (const [j, n] of c.notes.entries()) {
        const nWhere = `${where}.notes[${j}]`;
        if (n.source === 'location_private' && !n.location_ref) throw new FixtureError(`${nWhere}: a location_private note needs location_ref`);
        await ctx.q(
          `insert into app_public.contact_notes (organization_id, contact_id, body, source, location_id, author_id, created_at)
           values ($1, $2, $3, $4, $5, $6, coalesce($7::timestamptz, now()))`,
          [org, id, n.body, n.source, n.location_ref ? ctx.resolve('location', n.location_ref, `${nWhere}.location_ref`) : null,
            n.author_ref ? ctx.resolve('person', n.author_ref, `${nWhere}.author_ref`) : null, n.created_at ?? null]);
      }
      for (const [j, it] of c.interactions.entries()) {
        const iWhere = `${where}.interactions[${j}]`;
        if (it.started_at && it.ended_at && Date.parse(it.ended_at) < Date.parse(it.started_at)) {
          throw new FixtureError(`${iWhere}: ended_at is before started_at`);
        }
        const [interaction] = await ctx.q<{ id: string }>(
          `insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, summary,
             captured_fields, started_at, ended_at)
           values ($1, $2, $3, $4, $5, $6, $7, coalesce($8::timestamptz, now()), $9) returning id`,
          [org, id, it.location_ref ? ctx.resolve('location', it.location_ref, `${iWhere}.location_ref`) : null, it.channel,
            it.status, it.summary ?? null, JSON.stringify(it.captured_fields), it.started_at ?? null, it.ended_at ?? null]);
        ctx.remember('interaction', it.ref, interaction!.id, iWhere);
      }
    }
    if (tagIds.size > f.organization.tag_limit) {
      throw new FixtureError(`contacts: ${tagIds.size} tags exceed the organization's tag limit of ${f.organization.tag_limit}`);
    }
  },
};
