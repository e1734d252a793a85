// The audience rule language's shape, the audience record and the member cursor. zod checks
// the structure (ops, value shapes, limits, the field's format); what a rule means — whether
// its field resolves, whether the op suits the field's type, whether a value fits it — is
// decided by the database when the rules are evaluated (app_hidden.audience_filter), which
// answers 400 naming the rule part to fix.
import { z } from 'zod';
import { ContactCard } from '../contacts/schemas.ts';
import { timestamp, uuid } from '../platform/schemas.ts';
import { STAGE_AUDIENCE_FIELD } from '../contacts/activity.ts';

export const AudiencePath = z.object({ audienceId: uuid.describe('The audience\'s id') });

export const RULE_OPS = ['eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'contains_any', 'exists', 'not_exists'] as const;
const LIST_OPS: readonly string[] = ['in', 'not_in', 'contains_any'];
const NO_VALUE_OPS: readonly string[] = ['exists', 'not_exists'];

/**
 * Spec: Limits — at most 50 rules, 500 values in a list, 1000 characters in a string, 200 in a field. Beyond the spec,
 * the evaluation bound: contains and contains_any values in all (each is a scan of every contact's text). The database
 * enforces all of them (app_hidden.audience_definition_check); zod checks the spec's here so REST names them first.
 */
export const LIMITS = { rules: 50, values: 500, string: 1000, field: 200, substrings: 500, substringCharacters: 10_000 } as const;

const FIELD_FORMAT = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?$/;

const Scalar = z.union([z.string().max(LIMITS.string), z.number(), z.boolean()]);
const VALUE_SHAPE = `a string (at most ${LIMITS.string} characters), a number or a boolean, or for in, not_in and `
  + `contains_any a list of 1 to ${LIMITS.values} of those; objects and nested lists are not rule values`;

export const Rule = z
  .strictObject({
    field: z.string().min(1).max(LIMITS.field)
      .regex(FIELD_FORMAT, 'a field name: letters, digits and underscores, or field_values.<key>')
      .describe('display_name, email, phone_number (text); total_calls (number); first_seen_at, last_seen_at, created_at, '
        + `updated_at (date-time); field_values.<key> of an enabled custom field; or ${STAGE_AUDIENCE_FIELD} (the audience_field `
        + 'of contacts_list_stages, with stage ids as values)')
      .meta({ examples: ['display_name', 'email', 'phone_number', 'total_calls', 'last_seen_at', 'field_values.plan', 'stage_id'] }),
    op: z.enum(RULE_OPS).describe('eq, neq, in, not_in and exists, not_exists work on every field; gt, gte, lt, lte on numbers '
      + 'and dates; contains, contains_any on display_name, email, phone_number and custom fields'),
    value: z.union([Scalar, z.array(Scalar).min(1).max(LIMITS.values)], { error: VALUE_SHAPE }).optional()
      .describe('Omitted for exists and not_exists; a list for in, not_in and contains_any; one value otherwise. Text compares '
        + 'case-insensitively; a number field takes numbers or numeric strings; a date-time field an ISO 8601 date-time with '
        + 'offset, or a date (YYYY-MM-DD) to compare whole UTC days; a date field a date; a boolean field true or false')
      .meta({ examples: ['gold', 3, '2026-01-05', true, ['gold', 'silver']] }),
  })
  .superRefine((rule, ctx) => {
    const listed = Array.isArray(rule.value);
    if (NO_VALUE_OPS.includes(rule.op)) {
      if (rule.value !== undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: `omit value for ${rule.op}` });
    } else if (rule.value === undefined) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `${rule.op} needs a value` });
    } else if (LIST_OPS.includes(rule.op) !== listed) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: listed
        ? `${rule.op} takes one value (in, not_in and contains_any take lists)`
        : `${rule.op} takes a list of 1 to ${LIMITS.values} values` });
    }
  });

const definitionShape = {
  match: z.enum(['all', 'any']).default('all').describe('all: every rule must hold (AND); any: at least one (OR)'),
  rules: z.array(Rule).max(LIMITS.rules).default([])
    .describe(`At most ${LIMITS.rules} rules, flat; empty or absent selects every contact. The contains and contains_any `
      + `rules together hold at most ${LIMITS.substrings} values of at most ${LIMITS.substringCharacters} characters in all `
      + '(in and eq are not limited so). A MEMBER, and a MANAGER without the contacts power, test only display_name, email '
      + 'and phone_number'),
};

export const Definition = z.strictObject(definitionShape)
  .describe('Which contacts a dynamic audience holds: match all/any over flat rules')
  .meta({ examples: [{ match: 'all', rules: [
    { field: 'field_values.plan', op: 'eq', value: 'gold' }, { field: 'email', op: 'exists' }] }] });

/** The preview body: a definition's fields, plus exclude_opted_out as a definition carries it. */
export const PreviewBody = z.strictObject({
  ...definitionShape,
  exclude_opted_out: z.boolean().optional().describe('Accepted as in an audience; counts include opted-out contacts'),
});

export const AudienceName = z.string().trim().min(1).max(200).meta({ examples: ['Gold plan customers'] });
export const Description = z.string().max(2000).meta({ examples: ['Everyone on the gold plan'] });
export const Kind = z.enum(['static', 'dynamic']);
export const Channel = z.enum(['any', 'email', 'sms']);


export const Audience = z.object({
  id: uuid,
  name: z.string(),
  description: z.string().nullable(),
  kind: Kind.describe('static: members are added and removed; dynamic: the definition selects them. Fixed at creation'),
  channel: Channel.describe('What the audience is for; applied when sending, not by counts'),
  definition: Definition.nullable().describe('The dynamic audience\'s rules; null for a static audience'),
  exclude_opted_out: z.boolean().describe('Stored for sends: counts and member lists include opted-out contacts'),
  is_archived: z.boolean(),
  archived_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const MemberPage = z.object({
  items: z.array(ContactCard),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
});

// A cursor is the last contact id of a page, as 22 base64url characters: opaque to callers,
// checked strictly here so a mangled cursor is a 400, never a wrong page.
export const encodeCursor = (contactId: string) => Buffer.from(contactId.replace(/-/g, ''), 'hex').toString('base64url');

export const Cursor = z.string().max(64).transform((raw, ctx) => {
  const hex = Buffer.from(raw, 'base64url').toString('hex');
  if (hex.length !== 32 || encodeCursor(hex) !== raw) {
    ctx.addIssue({ code: 'custom', message: 'not a cursor from this list: pass next_cursor back unchanged' });
    return z.NEVER;
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
});
