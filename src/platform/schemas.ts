// Schemas every area uses: ids, paging, time, email and phone, and how a statement's JSON
// result comes back. Area-specific records live in their area.
import { z } from 'zod';
import { toE164 } from './phone.ts';

export const uuid = z.uuid();

/** Spec: Endpoints — page (min 1, default 1), limit (1 to 100, default 25). */
export const paging = {
  page: z.coerce.number().int().min(1).default(1).describe('Page number, from 1'),
  limit: z.coerce.number().int().min(1).max(100).default(25).describe('Items per page, 1 to 100'),
};

/** A page of `paging`: the items and the echo of total, page and limit. */
export const Page = <T extends z.ZodType>(item: T) => z.object({
  items: z.array(item),
  total: z.int(),
  page: z.int(),
  limit: z.int(),
});

export const timestamp = z.string().describe('ISO 8601 date-time');

export const Email = z.email().max(320).meta({ examples: ['ann@example.com', 'new.person@example.com'] });

// the examples go on the string a caller sends: a transform's examples would be its output's
const PhoneText = z.string().max(40).meta({ examples: ['+15551230001', '+1 (555) 123-0002', '+44 20 7183 8750'] });

/** A phone number with its country code, stored and answered in E.164. */
export const Phone = PhoneText.transform((raw, ctx) => {
  const e164 = toE164(raw);
  if (!e164) {
    ctx.addIssue({ code: 'custom', message: 'not a valid phone number with country code (for example +15551230001)' });
    return z.NEVER;
  }
  return e164;
}).describe('With country code, for example +1 555 123 0001; stored as E.164');

/** Answer of a statement `select app_public.<fn>(…) as result`: the function's JSON. */
export const result = <T>(rows: Record<string, unknown>[]): T => rows[0]!.result as T;

/** A list for a SQL function taking an array: sent as JSON text, whatever the driver does with arrays. */
export const jsonList = (values: readonly string[] | undefined) => (values ? JSON.stringify(values) : null);
