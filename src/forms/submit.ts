// A public form submission, whatever brought it (the web endpoint or `svc admin form submit`):
// the payload checked against the form's fields (400 naming the field: nothing stored), the
// checks that need only the request (honeypot, link stuffing), then the database's half
// (app_hidden.form_submit: the render-time token or elapsed time, the rate per client address,
// the submission, the contact and form_submitted for an accepted one).
import type pg from 'pg';
import { z } from 'zod';
import { AdminError } from '../admin/commands.ts';
import { publicStatement } from '../db/request.ts';
import { ApiError, badRequest, notFound } from '../platform/errors.ts';
import { toE164 } from '../platform/phone.ts';
import type { FIELD_TYPES } from './schemas.ts';

/** The hidden fields a form page carries: the render-time token and the honeypot (left empty by people). */
export const TOKEN_FIELD = '_token';
export const HONEYPOT_FIELD = '_hp';
/** More links than this in a submission's text is link stuffing. */
export const MAX_LINKS = 2;

export interface PublicForm {
  id: string;
  organization_id: string;
  name: string;
  allowed_origins: string[];
  /** Where a browser's plain HTML post goes after it (303); null: the thank-you page. */
  redirect_url: string | null;
  fields: { key: string; label: string; type: (typeof FIELD_TYPES)[number]; required: boolean; options: string[] | null }[];
}

export interface SubmitResult {
  submission_id: string;
  status: 'accepted' | 'spam';
  spam_reason: string | null;
  contact_id: string | null;
  organization_id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const Email = z.email().max(320);
const DATE = /^\d{4}-\d\d-\d\d$/;
const TRUE = new Set([true, 'true', 'on', '1', 'yes']);
const FALSE = new Set([false, 'false', 'off', '0', 'no', '']);

/** The form behind a public URL, or 404 (an id that is not one included). */
export async function publicForm(pool: pg.Pool, formId: string): Promise<PublicForm> {
  if (!UUID.test(formId)) throw notFound('Form');
  const [row] = await publicStatement<{ form: PublicForm | null }>(pool, 'select app_hidden.public_form($1::uuid) as form', [formId]);
  if (!row?.form) throw notFound('Form');
  return row.form;
}

/** A fresh render-time token of the form. */
export async function formToken(pool: pg.Pool, formId: string): Promise<string> {
  const [row] = await publicStatement<{ token: string }>(pool, 'select app_hidden.form_token($1::uuid) as token', [formId]);
  return row!.token;
}

/** One value as its field's type keeps it, or the problem with it. */
function fieldValue(field: PublicForm['fields'][number], raw: unknown): { value?: unknown; problem?: string } {
  if (Array.isArray(raw) || (raw !== null && typeof raw === 'object')) return { problem: 'expected one value' };
  const text = typeof raw === 'string' ? raw.trim() : raw;
  switch (field.type) {
    case 'checkbox':
      if (TRUE.has(text as never)) return { value: true };
      if (FALSE.has(text as never) || text === null || text === undefined) return { value: false };
      return { problem: 'expected true or false' };
    case 'number': {
      const n = typeof text === 'number' ? text : typeof text === 'string' && text !== '' ? Number(text) : NaN;
      return Number.isFinite(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER ? { value: n } : { problem: 'expected a number' };
    }
    default:
      break;
  }
  if (typeof text !== 'string') return { problem: 'expected text' };
  switch (field.type) {
    case 'email':
      return Email.safeParse(text).success ? { value: text } : { problem: 'not a valid email address' };
    case 'phone': {
      const e164 = text.length <= 40 ? toE164(text) : undefined;
      return e164 ? { value: e164 } : { problem: 'not a valid phone number with country code' };
    }
    case 'select':
      return field.options?.includes(text) ? { value: text } : { problem: `one of ${field.options?.join(', ')}` };
    case 'date':
      return DATE.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) && new Date(`${text}T00:00:00Z`).toISOString().startsWith(text)
        ? { value: text } : { problem: 'expected a date YYYY-MM-DD' };
    case 'textarea':
      return text.length <= 10_000 ? { value: text } : { problem: 'at most 10000 characters' };
    default:
      return text.length <= 1000 ? { value: text } : { problem: 'at most 1000 characters' };
  }
}

const empty = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/**
 * The payload as stored (values by field key, typed; keys that are no field left out) and the
 * contact it names, or a 400 naming every field that does not fit.
 */
export function checkPayload(form: PublicForm, raw: Record<string, unknown>): {
  payload: Record<string, unknown>; contact: { email?: string; phone?: string; name?: string };
} {
  const payload: Record<string, unknown> = {};
  const issues: { path: string; message: string }[] = [];
  for (const field of form.fields) {
    const v = Object.hasOwn(raw, field.key) ? raw[field.key] : undefined;
    if (empty(v) && field.type !== 'checkbox') {
      if (field.required) issues.push({ path: `body.${field.key}`, message: `${field.label} is required` });
      continue;
    }
    const { value, problem } = fieldValue(field, v);
    if (problem) issues.push({ path: `body.${field.key}`, message: problem });
    else if (field.required && value === false) issues.push({ path: `body.${field.key}`, message: `${field.label} must be checked` });
    else payload[field.key] = value;
  }
  if (issues.length) throw badRequest(`${issues[0]!.path}: ${issues[0]!.message}`, { issues });
  const first = (type: string) => form.fields.find((f) => f.type === type && typeof payload[f.key] === 'string')?.key;
  const email = first('email');
  const phone = first('phone');
  const str = (k: string) => (typeof payload[k] === 'string' ? (payload[k] as string) : undefined);
  const name = str('name') ?? str('full_name') ?? ([str('first_name'), str('last_name')].filter(Boolean).join(' ') || undefined);
  return { payload, contact: { email: email && str(email), phone: phone && str(phone), name: name?.slice(0, 200) } };
}

/** The links in the submission's text (http://, https://, www.). */
export const linkCount = (payload: Record<string, unknown>) =>
  Object.values(payload).reduce<number>((n, v) => n + (typeof v === 'string' ? (v.match(/https?:\/\/|www\./gi) ?? []).length : 0), 0);

/**
 * Submits `raw` (field values plus the hidden _token and _hp) to the form. `elapsedMs` stands for
 * the token (the CLI, which renders no page); `clientAddress` is counted against the rate.
 */
export async function submitForm(pool: pg.Pool, form: PublicForm, raw: Record<string, unknown>,
  opts: { elapsedMs?: number; clientAddress?: string }): Promise<SubmitResult> {
  const { payload, contact } = checkPayload(form, raw);
  const hp = raw[HONEYPOT_FIELD];
  const token = raw[TOKEN_FIELD];
  let spam: string | null = null;
  if (!empty(hp)) spam = 'honeypot';
  else if (linkCount(payload) > MAX_LINKS) spam = 'links';
  const [row] = await publicStatement<{ result: SubmitResult }>(pool,
    'select app_hidden.form_submit($1::uuid, $2::jsonb, $3::jsonb, $4::text, $5::bigint, $6::text, $7::text) as result',
    [form.id, JSON.stringify(payload), JSON.stringify(contact), typeof token === 'string' ? token : null,
      opts.elapsedMs ?? null, opts.clientAddress ?? null, spam]);
  return row!.result;
}

/**
 * `svc admin form submit --form FORM_ID --payload JSON [--elapsed-ms N]`: the payload (field
 * values, and _hp when a bot is simulated) through the same checks as the web endpoint; without
 * --elapsed-ms the submission is taken as a person's (no token to time). No client address: the
 * rate per address does not apply.
 */
export async function adminFormSubmit(pool: pg.Pool, formId: string | undefined, payloadJson: string | undefined,
  elapsedMs: string | undefined): Promise<SubmitResult> {
  if (!formId || !UUID.test(formId)) throw new AdminError('--form must be a form id (uuid)');
  let raw: unknown;
  try {
    raw = JSON.parse(payloadJson ?? '');
  } catch {
    throw new AdminError('--payload must be a JSON object of field values');
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new AdminError('--payload must be a JSON object of field values');
  const elapsed = elapsedMs === undefined ? 60_000 : Number(elapsedMs);
  if (!Number.isSafeInteger(elapsed) || elapsed < 0) throw new AdminError('--elapsed-ms must be a whole number of milliseconds');
  try {
    return await submitForm(pool, await publicForm(pool, formId), raw as Record<string, unknown>, { elapsedMs: elapsed });
  } catch (e) {
    if (e instanceof ApiError) throw new AdminError(`${e.statusCode} ${e.code}: ${e.message}`);
    throw e;
  }
}
