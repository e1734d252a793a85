// The call as the API shows it, and the cursor of calls_list.
import { z } from 'zod';
import { timestamp, uuid } from '../platform/schemas.ts';

export const CallPath = z.object({ callId: uuid.describe('The call\'s id') });

export const Call = z.object({
  id: uuid,
  contact_id: uuid,
  location_id: uuid.nullable().describe('Where it was taken; null: organization-wide'),
  team_member_id: uuid.nullable().describe('The team member (staff profile) who took it; null: the assistant'),
  direction: z.enum(['inbound', 'outbound']),
  status: z.enum(['completed', 'missed', 'voicemail', 'in_progress', 'failed']),
  from: z.string().nullable().describe('E.164'),
  to: z.string().nullable().describe('E.164'),
  started_at: timestamp,
  duration_seconds: z.int().nullable(),
  summary: z.string().nullable(),
  created_at: timestamp,
  conversation_id: uuid.nullable().describe('The conversation the receptionist had on this call (a chat conversation); null: none'),
  appointment_ids: z.array(uuid).describe('The appointments booked during the call'),
});

export const TranscriptLine = z.object({
  speaker: z.enum(['caller', 'assistant', 'staff']),
  text: z.string(),
});

export const CallWithTranscript = Call.extend({
  transcript: z.array(TranscriptLine).describe('The lines in the order spoken'),
});

export const CallPage = z.object({
  items: z.array(Call),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
});

/** A keyset position of calls_list: the last call's start (microseconds, UTC) and id. */
export interface CallPosition { at: string; id: string }

const POSITION = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

// A cursor is the position as base64url text: opaque to callers, checked strictly here so that a
// mangled cursor is a 400, never a wrong page.
export const encodeCursor = (p: CallPosition) => Buffer.from(`${p.at}_${p.id}`).toString('base64url');

export const Cursor = z.string().max(200).transform((raw, ctx): CallPosition => {
  const m = POSITION.exec(Buffer.from(raw, 'base64url').toString('latin1'));
  if (!m || encodeCursor({ at: m[1]!, id: m[2]! }) !== raw || Number.isNaN(Date.parse(m[1]!))) {
    ctx.addIssue({ code: 'custom', message: 'not a cursor from this list: pass next_cursor back unchanged' });
    return z.NEVER;
  }
  return { at: m[1]!, id: m[2]! };
});
