// What a contact agreed to receive: suppression (email and SMS opt-out) and SMS consent.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { ContactPath } from './schemas.ts';
import { jsonList, result, uuid } from '../platform/schemas.ts';

const timestamp = z.string().describe('ISO 8601 date-time');

const SuppressBody = z
  .strictObject({
    channels: z.array(z.enum(['email', 'sms'])).min(1).max(2)
      .describe('email: no further email to the contact\'s address; sms: opt the contact\'s number out of SMS'),
  })
  .refine((b) => new Set(b.channels).size === b.channels.length, 'name each channel once');

export const contactsSuppress = defineOperation({
  operationId: 'contacts_suppress',
  method: 'POST',
  path: '/api/v1/contacts/{contactId}/suppress',
  tag: 'Contacts',
  summary: 'Suppress email and/or SMS to a contact',
  description:
    'Stops messages to the contact on the channels named. email: blocks every further email to the contact\'s address '
    + '(an address already suppressed keeps its first record) and stops the contact\'s email sequences. sms: records an '
    + 'opt-out of the contact\'s number, revokes SMS consent and stops SMS sequences. The contact is not told. 400 when '
    + 'the contact has no address on a named channel. Confirm with the user first: it cannot be undone through the API '
    + '(only new SMS consent lifts an SMS opt-out).',
  scope: 'contacts:write',
  memberAccess: 'deny',
  managerPower: 'contacts',
  confirm: true,
  changes: ['contacts', 'sequences'],
  params: ContactPath,
  body: SuppressBody,
  response: z.object({
    contact_id: uuid,
    email: z.object({ address: z.string(), suppressed_at: timestamp.describe('When the address was first suppressed') }).optional(),
    sms: z.object({ phone: z.string(), opted_out_at: timestamp, sms_consent: z.literal(false) }).optional(),
  }),
  run: {
    statement: ({ contactId, channels }) => sql`select app_public.contacts_suppress(${contactId}::uuid,
      array(select jsonb_array_elements_text(${jsonList(channels)}::jsonb))) as result`,
    shape: result,
  },
});

export const contactsRecordSmsConsent = defineOperation({
  operationId: 'contacts_record_sms_consent',
  method: 'POST',
  path: '/api/v1/contacts/{contactId}/sms-consent',
  tag: 'Contacts',
  summary: 'Record SMS consent a contact gave',
  description:
    'Records that the contact agreed to receive SMS at their phone number (for example by a web form or by saying so on '
    + 'a call); it ends an earlier SMS opt-out of that number. Only record consent the contact actually gave. '
    + '400 when the contact has no phone number.',
  scope: 'contacts:write',
  memberAccess: 'deny',
  managerPower: 'contacts',
  changes: ['contacts'],
  params: ContactPath,
  body: z.strictObject({
    source: z.string().trim().min(1).max(200).optional().describe('How consent was given, for example "web form" or "phone call"')
      .meta({ examples: ['web form', 'phone call'] }),
    consented_at: z.iso.datetime({ offset: true }).optional().describe('When the contact consented (default now; not in the future)')
      .meta({ examples: ['2026-01-02T03:04:05Z'] }),
  }),
  response: z.object({
    contact_id: uuid,
    phone: z.string(),
    sms_consent: z.literal(true),
    sms_consent_at: timestamp,
    source: z.string().nullable(),
  }),
  run: {
    statement: ({ contactId, source, consented_at }) => sql`select app_public.contacts_record_sms_consent(${contactId}::uuid,
      ${source ?? null}::text, ${consented_at ?? null}::timestamptz) as result`,
    shape: result,
  },
});
