// Schemas the contacts operations share: ids, paging, contact fields and the contact record
// as the SQL functions answer it.
import { z } from 'zod';
import { toE164 } from './phone.ts';
import { keepingProtoKey } from '../http/input.ts';

export const uuid = z.uuid();
export const ContactPath = z.object({ contactId: uuid.describe('The contact\'s id') });

/** Spec: Endpoints — page (min 1, default 1), limit (1 to 100, default 25). */
export const paging = {
  page: z.coerce.number().int().min(1).default(1).describe('Page number, from 1'),
  limit: z.coerce.number().int().min(1).max(100).default(25).describe('Items per page, 1 to 100'),
};

export const Email = z.email().max(320);

/** A phone number with its country code, stored and answered in E.164. */
export const Phone = z.string().max(40).transform((raw, ctx) => {
  const e164 = toE164(raw);
  if (!e164) {
    ctx.addIssue({ code: 'custom', message: 'not a valid phone number with country code (for example +15551230001)' });
    return z.NEVER;
  }
  return e164;
}).describe('With country code, for example +1 555 123 0001; stored as E.164');

export const ContactName = z.string().trim().min(1).max(200);

const CustomFieldValue = z.union([z.string().max(10000), z.number(), z.boolean(), z.null()]);
const CustomFieldKey = z.string().max(100);

/**
 * Custom field values by key; the database checks each key and type (400 naming the key). Every
 * key sent gets there, `__proto__`, `constructor` and `prototype` included: they are names like
 * any other, unknown unless the organization defined them.
 */
export const CustomFieldValues = keepingProtoKey(z.record(CustomFieldKey, CustomFieldValue), { key: CustomFieldKey, value: CustomFieldValue })
  .refine((o) => Object.keys(o).length <= 100, 'at most 100 custom fields at once')
  .describe('Values by custom field key: each key must be an enabled custom field and the value fit its type '
    + '(number/currency a number, boolean, date YYYY-MM-DD, datetime ISO 8601 with offset, select one of its options, '
    + 'text a string); null removes the value');

export const Page = <T extends z.ZodType>(item: T) => z.object({
  items: z.array(item),
  total: z.int(),
  page: z.int(),
  limit: z.int(),
});

const timestamp = z.string().describe('ISO 8601 date-time');

export const ContactCard = z.object({
  id: uuid,
  name: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable().describe('E.164'),
});

export const Contact = ContactCard.extend({
  stage_id: uuid.nullable(),
  stage: z.object({ id: uuid, name: z.string() }).nullable(),
  tags: z.array(z.string()),
  custom_fields: z.record(z.string(), z.unknown()),
  notes_count: z.int().describe('Every note, location-private ones included; can exceed the total of contacts_list_notes'),
  location_ids: z.array(uuid).describe('The contact\'s locations within the credential\'s reach; empty = organization-wide'),
  sms_consent: z.boolean(),
  sms_consent_at: timestamp.nullable(),
  email_suppressed: z.boolean().describe('No email goes to this address'),
  sms_opted_out: z.boolean().describe('No SMS goes to this number'),
  total_calls: z.int(),
  first_seen_at: timestamp,
  last_seen_at: timestamp,
  created_at: timestamp,
  updated_at: timestamp,
});

export const ContactForCaller = z.union([Contact, ContactCard])
  .describe('The whole contact; only id, name, email and phone for a MEMBER or a MANAGER without the contacts power');

export const Tags = z.object({ contact_id: uuid, tags: z.array(z.string()).describe('The contact\'s tags, by name') });

/** Answer of a statement `select app_public.<fn>(…) as result`: the function's JSON. */
export const result = <T>(rows: Record<string, unknown>[]): T => rows[0]!.result as T;

/** A list for a SQL function taking an array: sent as JSON text, whatever the driver does with arrays. */
export const jsonList = (values: readonly string[] | undefined) => (values ? JSON.stringify(values) : null);
