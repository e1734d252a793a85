// The forms area: the web forms of the organization's sites, their submissions (accepted or
// spam), and the public endpoint visitors post to.
import type { Area } from '../registry/area.ts';
import { formsFixture } from './fixture.ts';
import { formPages } from './public.ts';
import { readOperations } from './reads.ts';

export const forms: Area = {
  name: 'forms',
  operations: readOperations,
  fixture: formsFixture,
  pages: formPages,
  graphql: {
    // what forms_get and forms_list_submissions show (a field's position is its place in the
    // form's fields). Not a submission's client address, its lower-cased email (email_key) or
    // created_at; the key that signs render-time tokens is app_private's.
    tables: {
      forms: ['organization_id', 'id', 'location_id', 'name', 'allowed_origins', 'redirect_url', 'created_at', 'updated_at'],
      form_fields: ['organization_id', 'form_id', 'key', 'position', 'label', 'type', 'required', 'options'],
      form_submissions: ['organization_id', 'id', 'form_id', 'contact_id', 'payload', 'status', 'spam_reason', 'submitted_at'],
    },
    groupBy: ['form_id'],
  },
};
