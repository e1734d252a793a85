// The form, its fields and its submissions as the API shows them.
import { z } from 'zod';
import { ContactCard } from '../contacts/schemas.ts';
import { timestamp, uuid } from '../platform/schemas.ts';

export const FIELD_TYPES = ['text', 'email', 'phone', 'textarea', 'select', 'checkbox', 'number', 'date'] as const;

export const FormPath = z.object({ formId: uuid.describe('The form\'s id') });

export const FormField = z.object({
  key: z.string().describe('Names the value in a submission\'s payload'),
  label: z.string(),
  type: z.enum(FIELD_TYPES),
  required: z.boolean(),
  options: z.array(z.string()).nullable().describe('The choices of a select field; null for other types'),
});

export const Form = z.object({
  id: uuid,
  name: z.string(),
  location_id: uuid.nullable().describe('The form\'s location; null: the whole organization'),
  allowed_origins: z.array(z.string()).describe('Sites whose pages may post to the form from a browser (CORS)'),
  redirect_url: z.string().nullable().describe('Where a browser\'s plain HTML post is sent after a submission (303); null: a thank-you page'),
  fields: z.array(FormField),
  created_at: timestamp,
  updated_at: timestamp,
});

export const Submission = z.object({
  id: uuid,
  form_id: uuid,
  payload: z.record(z.string(), z.unknown()).describe('The values sent, by field key'),
  status: z.enum(['accepted', 'spam']),
  spam_reason: z.string().nullable().describe('Why a spam submission is spam: honeypot, too_fast, bad_token, links, rate'),
  contact_id: uuid.nullable().describe('The contact the accepted submission created or updated'),
  contact: ContactCard.nullable().describe('That contact, when the credential sees it'),
  submitted_at: timestamp,
});
