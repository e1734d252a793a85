// Schemas the contacts operations share: contact fields and the contact record as the SQL
// functions answer it.
import { z } from 'zod';
import { keepingProtoKey } from '../platform/input.ts';
import { timestamp, uuid } from '../platform/schemas.ts';

export const ContactPath = z.object({ contactId: uuid.describe('The contact\'s id') });

export const ContactName = z.string().trim().min(1).max(200).meta({ examples: ['Ann Lee'] });

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
  // a field an organization named __proto__ is answered like any other (zod's record would drop it)
  custom_fields: keepingProtoKey(z.record(z.string(), z.unknown()), { value: z.unknown() }),
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
