// The sequences' part of the tenant fixture (operator-cli.md): send schedules and, for tests and
// demos, sequences as stored. The database checks both as it checks the API's input (the same
// functions: send windows, trigger, steps, edges, exit conditions, activation blockers for an
// active or paused sequence); its refusal becomes a FixtureError naming the entry.
import { z } from 'zod';
import { FixtureError, clockTime, ref, type FixtureContext, type FixtureSection } from '../admin/fixture.ts';

const Window = z.strictObject({
  day: z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']),
  start: clockTime,
  end: z.union([clockTime, z.literal('24:00')]),
});

const SendScheduleEntry = {
  ref: ref.optional(),
  name: z.string().min(1).max(200),
  timezone: z.string().default('UTC'),
  is_default: z.boolean().optional(),
  windows: z.array(Window).min(1).max(100),
};

const SequenceEntry = {
  ref: ref.optional(),
  kind: z.enum(['automation', 'broadcast']).default('automation'),
  name: z.string().min(1).max(200),
  location_ref: ref.optional(),
  send_schedule_ref: ref.optional(),
  audience_ref: ref.optional(),
  trigger: z.record(z.string(), z.unknown()).nullish(),
  steps: z.array(z.unknown()).default([]),
  edges: z.array(z.unknown()).default([]),
  exit_conditions: z.array(z.unknown()).default([]),
  status: z.enum(['inactive', 'active', 'paused']).default('inactive'),
};

type Part = {
  send_schedules: z.output<z.ZodObject<typeof SendScheduleEntry>>[];
  sequences: z.output<z.ZodObject<typeof SequenceEntry>>[];
};

/** The database's refusal of an entry, as the fixture's error. */
async function asFixture<T>(where: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    const err = e as { code?: string; detail?: string; message?: string };
    if (typeof err.code === 'string' && (/^SV4\d\d$/.test(err.code) || err.code.startsWith('22') || err.code.startsWith('23'))) {
      throw new FixtureError(`${where}: ${err.detail || err.message}`);
    }
    throw e;
  }
}

async function applySendSchedules(ctx: FixtureContext, f: Part): Promise<void> {
  const defaults = f.send_schedules.filter((s) => s.is_default).length;
  if (defaults > 1) throw new FixtureError('send_schedules: at most one is_default');
  for (const [i, s] of f.send_schedules.entries()) {
    const where = `send_schedules[${i}]`;
    const isDefault = s.is_default ?? (defaults === 0 && i === 0);
    const [zone] = await ctx.q<{ ok: boolean }>('select app_hidden.is_time_zone($1) as ok', [s.timezone]);
    if (!zone?.ok) throw new FixtureError(`${where}.timezone: "${s.timezone}" is not an IANA time zone`);
    const [row] = await asFixture(where, () => ctx.q<{ id: string }>(
      `insert into app_public.send_schedules (organization_id, name, timezone, is_default, windows)
       values ($1, $2, $3, $4, $5::jsonb) returning id`,
      [ctx.organizationId, s.name, s.timezone, isDefault, JSON.stringify(s.windows)]));
    ctx.remember('send_schedule', s.ref, row!.id, where);
  }
}

async function applySequences(ctx: FixtureContext, f: Part): Promise<void> {
  const org = ctx.organizationId;
  for (const [i, s] of f.sequences.entries()) {
    const where = `sequences[${i}]`;
    const location = s.location_ref ? ctx.resolve('location', s.location_ref, `${where}.location_ref`) : null;
    const schedule = s.send_schedule_ref ? ctx.resolve('send_schedule', s.send_schedule_ref, `${where}.send_schedule_ref`) : null;
    const audience = s.audience_ref ? ctx.resolve('audience', s.audience_ref, `${where}.audience_ref`) : null;
    if (s.kind === 'broadcast' && s.trigger) throw new FixtureError(`${where}.trigger: a broadcast has no trigger`);
    if (s.kind === 'automation' && audience) throw new FixtureError(`${where}.audience_ref: only a broadcast has an audience`);
    const row = await asFixture(where, async () => {
      await ctx.q("select app_hidden.sequence_check_trigger($1, $2::jsonb, 'trigger')", [org, s.trigger ? JSON.stringify(s.trigger) : null]);
      await ctx.q("select app_hidden.sequence_check_exits($1, $2::jsonb, 'exit_conditions')", [org, JSON.stringify(s.exit_conditions)]);
      const [checked] = await ctx.q<{ steps: unknown[]; edges: unknown[] }>(
        `select x.steps, app_hidden.sequence_check_edges($1, $3::jsonb, x.steps, 'edges') as edges
           from (select app_hidden.sequence_check_steps($2::jsonb, 'steps') as steps) x`,
        [org, JSON.stringify(s.steps), JSON.stringify(s.edges)]);
      const [inserted] = await ctx.q<{ id: string; blockers: { code: string; step_key?: string }[] }>(
        `with inserted as (
           insert into app_public.sequences (organization_id, kind, name, location_id, send_schedule_id, audience_id, trigger,
             steps, edges, exit_conditions, status, paused_at)
           values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10::jsonb, $11, case when $11 = 'paused' then now() end)
           returning *)
         select i.id, case when i.status = 'inactive' then '[]'::jsonb else app_hidden.sequence_blockers(i) end as blockers
           from inserted i`,
        [org, s.kind, s.name, location, schedule, audience, s.trigger ? JSON.stringify(s.trigger) : null,
          JSON.stringify(checked!.steps), JSON.stringify(checked!.edges), JSON.stringify(s.exit_conditions), s.status]);
      return inserted!;
    });
    if (row.blockers.length) {
      throw new FixtureError(`${where}: a ${s.status} sequence must be sendable; blocked by `
        + row.blockers.map((b) => b.code + (b.step_key ? ` (${b.step_key})` : '')).join(', '));
    }
    ctx.remember('sequence', s.ref, row.id, where);
  }
}

// every hour of every day: a sequence tried at night sends at once (a business-hours schedule is one edit away)
const ALWAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '00:00', end: '24:00' }));

export const sequencesFixture: FixtureSection = {
  keys: { send_schedules: { list: SendScheduleEntry }, sequences: { list: SequenceEntry } },
  // the demo organization's default schedule and one draft to open, edit and activate
  demo: {
    send_schedules: [{ ref: 'any_time', name: 'Any time', timezone: 'America/New_York', is_default: true, windows: ALWAYS }],
    sequences: [{
      ref: 'welcome_sequence', name: 'New lead follow-up', status: 'inactive',
      trigger: { type: 'tag_added', tag: 'new lead' },
      steps: [
        { step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Thanks for reaching out, {{contact.first_name|there}}',
          body: '<p>Hi {{contact.first_name|there}},</p><p>Thanks for contacting {{organization.name}}. Reply to this email '
            + 'and we will get back to you today.</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>' },
        { step_key: 'nudge', type: 'sms', delay: { days: 2 },
          body: 'Hi {{contact.first_name|there}}, still interested? Reply YES and we will call you. Reply STOP to opt out.' },
      ],
      edges: [],
      exit_conditions: [{ type: 'replied' }],
    }],
  },
  async apply(ctx, fixture) {
    const f = fixture as Part;
    await applySendSchedules(ctx, f);
    await applySequences(ctx, f);
  },
};
