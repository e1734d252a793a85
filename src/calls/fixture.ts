// The calls area's part of the tenant fixture (operator-cli.md): `contacts[].calls`, each with
// its transcript. A call's `team_member_ref` names a user with a staff profile; the database's
// trigger makes the contact that person's own client. `total_calls` stays the contacts area's.
import { z } from 'zod';
import { FixtureError, instant, normalizePhone, ref, type FixtureContext, type FixtureSection } from '../admin/fixture.ts';

const TranscriptLine = z.strictObject({
  speaker: z.enum(['caller', 'assistant', 'staff']),
  text: z.string().max(20000),
});

const CallEntry = z.strictObject({
  ref: ref.optional(),
  location_ref: ref.optional(),
  direction: z.enum(['inbound', 'outbound']).default('inbound'),
  status: z.enum(['completed', 'missed', 'voicemail', 'in_progress', 'failed']).default('completed'),
  started_at: instant.optional(),
  duration_seconds: z.int().min(0).max(86400).optional(),
  from: z.string().nullish(),
  to: z.string().nullish(),
  team_member_ref: ref.nullish(),
  summary: z.string().max(20000).nullish(),
  external_id: z.string().min(1).max(200).optional(),
  transcript: z.array(TranscriptLine).default([]),
});

type ContactEntry = { ref?: string; email?: string | null; phone?: string | null; calls: z.output<typeof CallEntry>[] };

/**
 * The id of a fixture contact written by the contacts part: by its ref, else by its email or
 * phone (each unique in the organization).
 */
export async function fixtureContactId(ctx: FixtureContext, c: { ref?: string; email?: string | null; phone?: string | null },
  where: string): Promise<string> {
  if (c.ref) return ctx.resolve('contact', c.ref, `${where}.ref`);
  const phone = c.phone ? normalizePhone(c.phone, `${where}.phone`) : null;
  const [row] = await ctx.q<{ id: string }>(
    `select id from app_public.contacts where organization_id = $1 and (email_key = lower($2) or phone = $3) limit 1`,
    [ctx.organizationId, c.email ?? null, phone]);
  if (!row) throw new FixtureError(`${where}: give the contact a ref, an email or a phone`);
  return row.id;
}

/** The staff profile of a user ref (a team member), or a FixtureError. */
export async function staffProfileOf(ctx: FixtureContext, userRef: string, where: string): Promise<string> {
  const personId = ctx.resolve('person', userRef, where);
  const [row] = await ctx.q<{ id: string }>(
    'select id from app_public.staff_profiles where organization_id = $1 and person_id = $2', [ctx.organizationId, personId]);
  if (!row) throw new FixtureError(`${where}: "${userRef}" has no staff profile (staff_profile: true)`);
  return row.id;
}

export const callsFixture: FixtureSection = {
  keys: {},
  extend: { contacts: { calls: z.array(CallEntry).default([]) } },
  async apply(ctx, fixture) {
    const contacts = (fixture as { contacts: ContactEntry[] }).contacts;
    for (const [i, c] of contacts.entries()) {
      if (!c.calls.length) continue;
      const contactId = await fixtureContactId(ctx, c, `contacts[${i}]`);
      for (const [j, call] of c.calls.entries()) {
        const where = `contacts[${i}].calls[${j}]`;
        const [row] = await ctx.q<{ id: string }>(
          `insert into app_public.calls (organization_id, contact_id, location_id, staff_profile_id, direction, status,
             from_number, to_number, started_at, duration_seconds, summary, external_id)
           values ($1, $2, $3, $4, $5, $6, $7, $8, coalesce($9::timestamptz, now()), $10, $11, $12) returning id`,
          [ctx.organizationId, contactId,
            call.location_ref ? ctx.resolve('location', call.location_ref, `${where}.location_ref`) : null,
            call.team_member_ref ? await staffProfileOf(ctx, call.team_member_ref, `${where}.team_member_ref`) : null,
            call.direction, call.status,
            call.from ? normalizePhone(call.from, `${where}.from`) : null, call.to ? normalizePhone(call.to, `${where}.to`) : null,
            call.started_at ?? null, call.duration_seconds ?? null, call.summary ?? null, call.external_id ?? null]);
        const callId = row!.id;
        ctx.remember('call', call.ref, callId, where);
        if (call.transcript.length) {
          await ctx.q(
            `insert into app_public.call_transcript_lines (organization_id, call_id, position, speaker, text)
             select $1, $2, l.ordinality - 1, l.value->>'speaker', l.value->>'text'
               from jsonb_array_elements($3::jsonb) with ordinality l`,
            [ctx.organizationId, callId, JSON.stringify(call.transcript)]);
        }
      }
    }
  },
};
