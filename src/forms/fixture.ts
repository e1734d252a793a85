// The forms area's part of the tenant fixture (operator-cli.md): `forms`, each with its fields
// and, for tests and demos, submissions as stored (default status accepted, submitted now).
import { z } from 'zod';
import { FixtureError, instant, ref, type FixtureSection } from '../admin/fixture.ts';
import { FIELD_TYPES } from './schemas.ts';

const Field = z.strictObject({
  key: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,99}$/, 'a letter, then letters, digits and underscores (at most 100)'),
  label: z.string().min(1).max(200).optional(),
  type: z.enum(FIELD_TYPES).default('text'),
  required: z.boolean().default(false),
  options: z.array(z.string().min(1).max(200)).min(1).max(500).optional(),
});

const SubmissionEntry = z.strictObject({
  ref: ref.optional(),
  payload: z.record(z.string(), z.unknown()).default({}),
  contact_ref: ref.optional(),
  status: z.enum(['accepted', 'spam']).default('accepted'),
  spam_reason: z.enum(['honeypot', 'too_fast', 'bad_token', 'links', 'rate']).optional(),
  submitted_at: instant.optional(),
});

const FormEntry = {
  ref: ref.optional(),
  name: z.string().min(1).max(200),
  location_ref: ref.optional(),
  // sites: http or https (an opaque origin, "null", would admit any sandboxed page)
  allowed_origins: z.array(z.url({ protocol: /^https?$/ }).max(200)).max(50).default([]),
  // where a browser's plain HTML post goes after it (303); absent: the endpoint's thank-you page
  redirect_url: z.url({ protocol: /^https?$/ }).max(2000).optional(),
  fields: z.array(Field).max(100).default([]),
  submissions: z.array(SubmissionEntry).default([]),
};

type Part = { forms: z.output<z.ZodObject<typeof FormEntry>>[] };

export const formsFixture: FixtureSection = {
  keys: { forms: { list: FormEntry } },
  // the demo organization's web form, with one submission of its contact ann
  demo: {
    forms: [{ ref: 'contact_us', name: 'Contact us', location_ref: 'downtown', allowed_origins: ['http://localhost:8080'],
      fields: [{ key: 'name', label: 'Name', type: 'text' }, { key: 'email', label: 'Email', type: 'email', required: true },
        { key: 'phone', label: 'Phone', type: 'phone' }, { key: 'message', label: 'How can we help?', type: 'textarea' }],
      submissions: [{ payload: { name: 'Ann Lee', email: 'ann.lee@example.com', message: 'Do you take new patients?' }, contact_ref: 'ann' }] }],
  },
  async apply(ctx, fixture) {
    const org = ctx.organizationId;
    for (const [i, f] of (fixture as Part).forms.entries()) {
      const where = `forms[${i}]`;
      const [form] = await ctx.q<{ id: string }>(
        `insert into app_public.forms (organization_id, location_id, name, allowed_origins, redirect_url)
         values ($1, $2, $3, $4, $5) returning id`,
        [org, f.location_ref ? ctx.resolve('location', f.location_ref, `${where}.location_ref`) : null, f.name,
          f.allowed_origins.map((o) => new URL(o).origin), f.redirect_url ?? null]);
      const formId = form!.id;
      ctx.remember('form', f.ref, formId, where);
      const keys = new Set<string>();
      for (const [j, field] of f.fields.entries()) {
        const fWhere = `${where}.fields[${j}]`;
        if (keys.has(field.key)) throw new FixtureError(`${fWhere}: key "${field.key}" is used twice`);
        keys.add(field.key);
        if ((field.type === 'select') !== Boolean(field.options)) {
          throw new FixtureError(`${fWhere}: options go with a select field, and a select field needs them`);
        }
        await ctx.q(`insert into app_public.form_fields (organization_id, form_id, key, position, label, type, required, options)
                     values ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [org, formId, field.key, j, field.label ?? field.key, field.type, field.required,
          field.options ? JSON.stringify(field.options) : null]);
      }
      for (const [j, s] of f.submissions.entries()) {
        const sWhere = `${where}.submissions[${j}]`;
        if (s.status === 'spam' && s.contact_ref) throw new FixtureError(`${sWhere}: a spam submission has no contact`);
        const email = Object.entries(s.payload).find(([k]) => f.fields.find((x) => x.key === k)?.type === 'email')?.[1];
        const [row] = await ctx.q<{ id: string }>(
          `insert into app_public.form_submissions (organization_id, form_id, contact_id, payload, status, spam_reason, email_key,
             submitted_at)
           values ($1, $2, $3, $4, $5, $6, lower($7), coalesce($8::timestamptz, now())) returning id`,
          [org, formId, s.contact_ref ? ctx.resolve('contact', s.contact_ref, `${sWhere}.contact_ref`) : null, JSON.stringify(s.payload),
            s.status, s.status === 'spam' ? (s.spam_reason ?? 'honeypot') : null, typeof email === 'string' ? email : null,
            s.submitted_at ?? null]);
        ctx.remember('submission', s.ref, row!.id, sWhere);
      }
    }
  },
};
