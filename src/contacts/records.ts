// The contact record: upsert, search, read, update. Each runs one SQL function
// (migrations: app_public.contacts_*), which applies the organization, location, own-records
// and field-limiting rules under row-level security.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { Contact, ContactForCaller, ContactName, ContactPath, CustomFieldValues } from './schemas.ts';
import { Email, Page, Phone, jsonList, paging, result, uuid } from '../platform/schemas.ts';
import { toE164 } from '../platform/phone.ts';
import { keepingProtoKey } from '../platform/input.ts';

const EventName = z.string().regex(/^[a-z][a-z0-9_]{0,99}$/, 'lowercase letters, digits and underscores')
  .describe('The kind of event, for example assessment_abandoned').meta({ examples: ['assessment_abandoned', 'assessment_completed'] });

const Event = z.strictObject({
  name: EventName,
  key: z.string().min(1).max(255).optional()
    .describe('A stable id of this occurrence (for example the session id); retries send the same key. Without it an '
      + 'assessment_abandoned event is legacy_unverified: accepted but not deduplicated')
    .meta({ examples: ['session-1'] }),
});

const EventFieldValue = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);

// Free keys: a `__proto__` one is kept like any other (keepingProtoKey), never dropped unseen.
const EventFields = keepingProtoKey(z
  .object({
    user_message_count: z.int().min(0).optional()
      .describe('assessment_abandoned: how many nonempty answers the user gave in the session (0 when none)'),
  })
  .catchall(EventFieldValue), { value: EventFieldValue })
  .refine((o) => Object.keys(o).length <= 50, 'at most 50 fields')
  .describe('Values the events carry, for sequence triggers to test (not stored on the contact)');

const UpsertBody = z
  .strictObject({
    email: Email.describe('The key: the contact with this email (case-insensitive) is updated, else created'),
    name: ContactName.optional(),
    phone: Phone.optional(),
    custom_fields: CustomFieldValues.optional(),
    location_ids: z.array(uuid).max(50).optional()
      .describe('Locations to link the contact to (added to its links; none are removed)'),
    cancel_events: z.array(EventName).max(20).optional()
      .describe('Event names whose enrollments for this contact are cancelled first (best effort)'),
    events: z.array(Event).max(20).optional().describe('Events that fire after cancel_events'),
    fields: EventFields.optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.events ?? []).filter((e) => e.name === 'assessment_abandoned').length > 1) {
      ctx.addIssue({ code: 'custom', path: ['events'], message: 'at most one assessment_abandoned event per request' });
    }
  });

const UpsertResponse = Contact.extend({
  created: z.boolean().describe('true when this call created the contact'),
  assessmentAbandonment: z.object({
    status: z.enum(['accepted', 'no_subscriber', 'legacy_unverified']),
    key: z.string().nullable().describe('The event\'s key; null for an event sent without one (legacy_unverified)'),
  }).optional().describe('Receipt for an assessment_abandoned event: accepted (durable enrollment acceptance), or '
    + 'no_subscriber (no active sequence subscribes; the key stays unspent, so a retry may still enroll)'),
});

export const contactsUpsert = defineOperation({
  operationId: 'contacts_upsert',
  method: 'POST',
  path: '/api/v1/contacts',
  tag: 'Contacts',
  summary: 'Create or update a contact by email, and fire events',
  description:
    'Creates a contact, or updates the one that already has this email (case-insensitive); only the fields sent change, '
    + 'and the contact counts as seen now. The phone is stored in E.164; a phone another contact uses is 409. '
    + '`cancel_events` are processed first, then `events` fire, so one call can replace the journey a contact is on. '
    + 'An `assessment_abandoned` event answers an `assessmentAbandonment` receipt; when its status is no_subscriber the '
    + 'key stays unspent, so retry with the same key rather than inventing a new one. '
    + 'Confirm with the user before sending events: they can enroll the contact in sequences that email or text them.',
  scope: 'contacts:write',
  memberAccess: 'deny',
  managerPower: null,
  confirm: true,
  changes: ['contacts', 'sequences'],
  body: UpsertBody,
  response: UpsertResponse,
  run: {
    statement: (b) => sql`select app_public.contacts_upsert(${b.email}::citext, ${b.name ?? null}::text,
      ${b.phone ?? null}::text, ${b.custom_fields ? JSON.stringify(b.custom_fields) : null}::jsonb,
      (select array_agg(l::uuid) from jsonb_array_elements_text(${jsonList(b.location_ids)}::jsonb) l),
      ${b.events ? JSON.stringify(b.events) : null}::jsonb, ${b.cancel_events ? JSON.stringify(b.cancel_events) : null}::jsonb,
      ${b.fields ? JSON.stringify(b.fields) : null}::jsonb) as result`,
    shape: result,
  },
});

/** Spec: phone search ignores spaces, dashes and brackets; the number needs its country code. */
const SearchPhone = z.string().max(40)
  .regex(/^\s*\+[0-9\s()[\]-]+$/, 'a phone number with country code; only digits, spaces, dashes and brackets')
  .meta({ examples: ['+1 (555) 123-0001', '+15551230002'] })
  .transform((raw, ctx) => {
    const e164 = toE164(raw.replace(/[\s()[\]-]/g, ''));
    if (!e164) {
      ctx.addIssue({ code: 'custom', message: 'not a valid phone number with country code' });
      return z.NEVER;
    }
    return e164;
  });

const SearchQuery = z
  .object({
    ...paging,
    q: z.string().min(1).max(255).optional()
      .describe('Case-insensitive part of the name, email or phone (digits of a phone match however it is punctuated)')
      .meta({ examples: ['ann', 'example.com', '(555) 123'] }),
    email: Email.optional().describe('Exact email, case-insensitive: at most one result'),
    phone: SearchPhone.optional()
      .describe('Exact phone with country code; spaces, dashes and brackets ignored; the contact\'s phone only: at most one result'),
  })
  .superRefine((query, ctx) => {
    const sent = (['q', 'email', 'phone'] as const).filter((k) => query[k] !== undefined);
    if (sent.length > 1) ctx.addIssue({ code: 'custom', path: [sent[1]!], message: `send at most one of q, email and phone (got ${sent.join(', ')})` });
  });

export const contactsSearch = defineOperation({
  operationId: 'contacts_search',
  method: 'GET',
  path: '/api/v1/contacts',
  tag: 'Contacts',
  summary: 'Search contacts',
  description:
    'Finds contacts by at most one filter: `q` (part of the name, email or phone), `email` (exact) or `phone` (exact, '
    + 'with country code). Without a filter it lists every contact the credential can see, most recently seen first. '
    + 'Answers one page with `total`, `page`, `limit`. A MEMBER, and a MANAGER without the contacts power, get only id, '
    + 'name, email and phone, listed by name; a location-limited credential finds only contacts linked to its locations.',
  scope: 'contacts:read',
  memberAccess: 'scoped',
  managerPower: null,
  query: SearchQuery,
  response: Page(ContactForCaller),
  run: {
    statement: (i) => sql`select app_public.contacts_search(${i.q ?? null}::text, ${i.email ?? null}::citext,
      ${i.phone ?? null}::text, ${i.page}::int, ${i.limit}::int) as result`,
    shape: result,
  },
});

export const contactsGet = defineOperation({
  operationId: 'contacts_get',
  method: 'GET',
  path: '/api/v1/contacts/{contactId}',
  tag: 'Contacts',
  summary: 'Read a contact',
  description:
    'Returns one contact with its pipeline stage, tags, custom fields, notes count, locations, SMS consent and '
    + 'suppression state. A MEMBER, and a MANAGER without the contacts power, get only id, name, email and phone. '
    + '404 when the contact is absent or out of the credential\'s reach.',
  scope: 'contacts:read',
  memberAccess: 'scoped',
  managerPower: null,
  params: ContactPath,
  response: ContactForCaller,
  run: {
    statement: ({ contactId }) => sql`select app_public.contacts_get(${contactId}::uuid) as result`,
    shape: result,
  },
});

const UpdateBody = z
  .strictObject({
    name: ContactName.nullable().optional(),
    email: Email.nullable().optional(),
    phone: Phone.nullable().optional(),
    stage_id: uuid.nullable().optional().describe('A stage from contacts_list_stages; null clears the stage'),
    custom_fields: CustomFieldValues.optional().describe('Merged into the contact\'s values; null removes a value'),
  })
  .refine((b) => Object.keys(b).length > 0, 'send at least one field to change');

export const contactsUpdate = defineOperation({
  operationId: 'contacts_update',
  method: 'PATCH',
  path: '/api/v1/contacts/{contactId}',
  tag: 'Contacts',
  summary: 'Update a contact',
  description:
    'Changes only the fields sent: name, email, phone, stage_id, custom_fields (merged; null removes a value). '
    + '`stage_id` must be a stage from contacts_list_stages and every custom field key an enabled custom field with a '
    + 'value of its type, otherwise 400 naming the problem and nothing changes. 409 when another contact already uses '
    + 'the email or phone. Returns the contact as contacts_get does.',
  scope: 'contacts:write',
  memberAccess: 'deny',
  managerPower: 'contacts',
  changes: ['contacts'],
  params: ContactPath,
  body: UpdateBody,
  response: Contact,
  run: {
    statement: ({ contactId, ...patch }) =>
      sql`select app_public.contacts_update(${contactId}::uuid, ${JSON.stringify(patch)}::jsonb) as result`,
    shape: result,
  },
});
