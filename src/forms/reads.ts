// forms_list, forms_get and forms_list_submissions: one SQL function each, of the same name
// (app_public.forms_*, db/schema/forms.sql), read as the caller so the forms' reach policies
// decide what a credential sees.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { Page, paging, result } from '../platform/schemas.ts';
import { Form, FormPath, Submission } from './schemas.ts';

export const formsList = defineOperation({
  operationId: 'forms_list',
  method: 'GET',
  path: '/api/v1/forms',
  tag: 'Forms',
  summary: 'List forms',
  description: 'The organization\'s web forms the credential reaches (those of its locations and those of no location), by '
    + 'name, each with its fields (`key`, `label`, `type`, `required`, `options`).',
  scope: 'forms:read',
  memberAccess: 'open',
  managerPower: null,
  response: z.object({ items: z.array(Form) }),
  run: {
    statement: () => sql`select app_public.forms_list() as result`,
    shape: result,
  },
});

export const formsGet = defineOperation({
  operationId: 'forms_get',
  method: 'GET',
  path: '/api/v1/forms/{formId}',
  tag: 'Forms',
  summary: 'Read a form',
  description: 'One form with its fields in order; a submission\'s `payload` is keyed by the fields\' `key`. 404 when the '
    + 'form is not the organization\'s or is at a location out of reach.',
  scope: 'forms:read',
  memberAccess: 'open',
  managerPower: null,
  params: FormPath,
  response: Form,
  run: {
    statement: ({ formId }) => sql`select app_public.forms_get(${formId}::uuid) as result`,
    shape: result,
  },
});

// ISO 8601 with a time and an offset (a date alone is ambiguous: which day, in which zone?)
const instant = z.iso.datetime({ offset: true, error: 'an ISO 8601 date-time with a time and an offset, for example 2026-11-20T10:00:00Z' });

export const formsListSubmissions = defineOperation({
  operationId: 'forms_list_submissions',
  method: 'GET',
  path: '/api/v1/forms/{formId}/submissions',
  tag: 'Forms',
  summary: 'List a form\'s submissions',
  description: 'A page of the form\'s submissions, newest first: `status` accepted or spam, submitted in [`from`, `to`) '
    + '(ISO 8601 date-times with a time; a date alone is a 400), `search` part of the submitted email (case-insensitive). '
    + 'Each has its `payload` by field key, `status` and the `contact` it created or updated. A staff member (MEMBER) '
    + 'gets 403 insufficient_role; 404 when the form is out of reach.',
  scope: 'forms:read',
  memberAccess: 'deny',
  managerPower: null,
  params: FormPath,
  query: z.object({
    ...paging,
    status: z.enum(['accepted', 'spam']).optional().describe('Only submissions with this status'),
    from: instant.optional().describe('Submitted at or after this time'),
    to: instant.optional().describe('Submitted before this time'),
    search: z.string().min(1).max(320).optional().describe('Part of the submitted email, case-insensitive')
      .meta({ examples: ['ann@', 'example.com'] }),
  }).refine((q) => !q.from || !q.to || Date.parse(q.from) <= Date.parse(q.to), { message: 'from is after to', path: ['from'] }),
  response: Page(Submission),
  run: {
    statement: (q) => sql`select app_public.forms_list_submissions(${q.formId}::uuid, ${q.page}::int, ${q.limit}::int,
      ${q.status ?? null}::text, ${q.from ?? null}::timestamptz, ${q.to ?? null}::timestamptz, ${q.search ?? null}::text) as result`,
    shape: result,
  },
});

export const readOperations = [formsList, formsGet, formsListSubmissions];
