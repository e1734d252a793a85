-- Sequences: automations that follow up by email and SMS (spec: Sequence, Enrollment, States
-- and transitions, Events; ../shared/design/sequences.md for the shapes the spec leaves open).
-- This file holds the tables, their policies and the claim helpers they need; the operations
-- and the engine are functions of their own files.
--
--   send_schedules     when messages may go out, in a time zone (one is the default)
--   sequences          the automation (or broadcast) as authored: trigger, steps, edges, exits
--   enrollments        one contact's way through one sequence
--   step_runs          each (enrollment, step) the engine reached, at most once: the unit of
--                      work whose uniqueness keeps a retried job from sending twice
--   enrollment_events  what happened to an enrollment, in order (sent, delivered, replied, …)
--
-- Reach: a sequence with a location belongs to that location, one without to the whole
-- organization. Whoever reads sequences sees the organization-wide ones and those of the
-- locations in reach (a MEMBER too: sequences_list is open); an enrollment is visible with its
-- sequence and its contact. Writes are for credentials with the sequences power, and a
-- MANAGER writes only sequences of its own locations (an organization-wide one is 403 to it,
-- which the functions raise: the row is visible, the policy alone would answer 404).
set local role svc_owner;

--------------------------------------------------------------------------------
-- Claim helpers
--------------------------------------------------------------------------------
create or replace function app_hidden.current_may_write_sequence(location_id uuid) returns boolean
language sql stable parallel safe as $$
  select coalesce(app_hidden.current_role() in ('organization', 'owner', 'admin')
      or (app_hidden.current_role() = 'manager' and 'sequences' = any(app_hidden.current_powers())
          and location_id is not null and app_hidden.current_in_reach(location_id)), false)
$$;
comment on function app_hidden.current_may_write_sequence(uuid) is
  'Whether the credential may change a sequence of this location (NULL: organization-wide): organization-wide '
  'credentials any; a manager with the sequences power only those of its own locations.';
grant execute on function app_hidden.current_may_write_sequence(uuid) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Send schedules
--------------------------------------------------------------------------------
create table if not exists app_public.send_schedules (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  timezone text not null,
  is_default boolean not null default false,
  windows jsonb not null default '[]' check (jsonb_typeof(windows) = 'array'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id)
);
comment on table app_public.send_schedules is
  'When sequence and broadcast messages may go out: weekly windows [{day: mon..sun, start: HH:MM, end: HH:MM|24:00}] '
  'in an IANA time zone. A sequence without send_schedule_id uses the organization''s default.';
comment on column app_public.send_schedules.windows is
  'Weekly windows, local to timezone: [{day, start, end}], start before end, end 24:00 allowed.';
create unique index if not exists send_schedules_one_default on app_public.send_schedules (organization_id) where is_default;

--------------------------------------------------------------------------------
-- Sequences
--------------------------------------------------------------------------------
create table if not exists app_public.sequences (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  kind text not null default 'automation' check (kind in ('automation', 'broadcast')),
  name text not null check (length(name) between 1 and 200),
  location_id uuid,
  send_schedule_id uuid,
  audience_id uuid,
  trigger jsonb check (jsonb_typeof(trigger) = 'object'),
  steps jsonb not null default '[]' check (jsonb_typeof(steps) = 'array'),
  edges jsonb not null default '[]' check (jsonb_typeof(edges) = 'array'),
  exit_conditions jsonb not null default '[]' check (jsonb_typeof(exit_conditions) = 'array'),
  status text not null default 'inactive' check (status in ('inactive', 'active', 'paused')),
  paused_at timestamptz,
  created_by uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations,
  foreign key (organization_id, send_schedule_id) references app_public.send_schedules,
  foreign key (organization_id, audience_id) references app_public.audiences,
  foreign key (organization_id, created_by) references app_public.people,
  check (kind = 'broadcast' or audience_id is null),
  check ((status = 'paused') = (paused_at is not null))
);
comment on table app_public.sequences is
  'An automation (or a broadcast) as authored: trigger, ordered steps (each with a step_key), edges, exit conditions, '
  'send schedule; status inactive (draft), active or paused. location_id NULL: the whole organization.';
comment on column app_public.sequences.trigger is 'How contacts enter (automation only): {type: manual|event|tag_added|…, …}.';
comment on column app_public.sequences.steps is '[{step_key, type: email|sms|wait, delay: {minutes|hours|days: n}, subject?, body?}].';
comment on column app_public.sequences.edges is '[{from, to, condition}]; empty: the steps run in list order.';
comment on column app_public.sequences.exit_conditions is '[{type: replied|appointment_booked|tag_added|stage_changed|condition, …}].';
comment on column app_public.sequences.paused_at is 'When the sequence was paused (status paused): resume moves every due time forward by the time held.';
create index if not exists sequences_org_created on app_public.sequences (organization_id, created_at desc, id);

--------------------------------------------------------------------------------
-- Enrollments
--------------------------------------------------------------------------------
create table if not exists app_public.enrollments (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  sequence_id uuid not null,
  contact_id uuid not null,
  status text not null default 'active' check (status in ('active', 'paused', 'completed', 'cancelled', 'failed')),
  current_step_index int check (current_step_index >= 0),
  current_step_key text,
  next_step_due_at timestamptz,
  next_run_at timestamptz,
  paused_at timestamptz,
  end_reason text,
  -- where the contact came from: manual (sequences_enroll), an event, a tag, a broadcast run, …
  source text not null default 'manual' check (length(source) between 1 and 50),
  run_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, sequence_id) references app_public.sequences on delete cascade,
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  check ((status = 'paused') = (paused_at is not null))
);
comment on table app_public.enrollments is
  'One contact''s way through one sequence. current_step_key is the step due next (NULL once ended); next_step_due_at '
  'when it is due, next_run_at when the engine runs it (moved into the send window). updated_at is the end time of an '
  'ended enrollment.';
-- A contact is in a sequence at most once at a time: enrolling it again while active or paused
-- answers the existing enrollment (skipped, already_enrolled).
create unique index if not exists enrollments_one_live on app_public.enrollments (organization_id, sequence_id, contact_id)
  where status in ('active', 'paused');
create index if not exists enrollments_by_sequence on app_public.enrollments (organization_id, sequence_id, created_at desc, id);
create index if not exists enrollments_by_contact on app_public.enrollments (organization_id, contact_id, created_at desc, id);

--------------------------------------------------------------------------------
-- Step runs and enrollment events
--------------------------------------------------------------------------------
create table if not exists app_public.step_runs (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  enrollment_id uuid not null,
  step_key text not null,
  step_type text not null check (step_type in ('email', 'sms', 'wait')),
  status text not null check (status in ('sending', 'sent', 'skipped', 'failed', 'unknown', 'waited')),
  message_id uuid,
  reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, enrollment_id, step_key),
  foreign key (organization_id, enrollment_id) references app_public.enrollments on delete cascade
);
comment on table app_public.step_runs is
  'Each (enrollment, step) the engine reached, at most once: sending while its message is with the transport, then '
  'sent, failed or unknown (the process died in between: never sent again), skipped (with reason: suppressed, '
  'opted_out, no_consent, missing_address) or waited.';

create table if not exists app_public.enrollment_events (
  organization_id uuid not null,
  id bigint generated always as identity,
  enrollment_id uuid not null,
  type text not null check (type in ('enrolled', 'sent', 'delivered', 'bounced', 'opened', 'clicked', 'replied',
    'skipped', 'failed', 'unknown', 'paused', 'resumed', 'completed', 'cancelled')),
  at timestamptz not null default now(),
  step_key text,
  message_id uuid,
  reason text,
  primary key (organization_id, id),
  foreign key (organization_id, enrollment_id) references app_public.enrollments on delete cascade
);
comment on table app_public.enrollment_events is
  'What happened to an enrollment, in order of occurrence (id): {type, at, step_key?, message_id?, reason?}.';
create index if not exists enrollment_events_by_enrollment on app_public.enrollment_events (organization_id, enrollment_id, id);

--------------------------------------------------------------------------------
-- Policies
--------------------------------------------------------------------------------
alter table app_public.send_schedules enable row level security;
alter table app_public.sequences enable row level security;
alter table app_public.enrollments enable row level security;
alter table app_public.step_runs enable row level security;
alter table app_public.enrollment_events enable row level security;

drop policy if exists select_own_org on app_public.send_schedules;
create policy select_own_org on app_public.send_schedules for select
  using (organization_id = (select app_hidden.current_org_id()));

drop policy if exists select_in_reach on app_public.sequences;
create policy select_in_reach on app_public.sequences for select
  using (organization_id = (select app_hidden.current_org_id())
         and (location_id is null
              or (select app_hidden.current_reaches_all_locations())
              or location_id = any((select app_hidden.current_location_ids())::uuid[])));
drop policy if exists insert_writable on app_public.sequences;
create policy insert_writable on app_public.sequences for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and app_hidden.current_may_write_sequence(location_id));
drop policy if exists update_writable on app_public.sequences;
create policy update_writable on app_public.sequences for update
  using (organization_id = (select app_hidden.current_org_id()) and app_hidden.current_may_write_sequence(location_id))
  with check (organization_id = (select app_hidden.current_org_id()) and app_hidden.current_may_write_sequence(location_id));

-- An enrollment is seen with its sequence and its contact (both under their own policies); it is
-- written by the functions of the sequence's writers and by the engine (as the owner).
drop policy if exists select_with_sequence on app_public.enrollments;
create policy select_with_sequence on app_public.enrollments for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.sequences s
                      where s.organization_id = enrollments.organization_id and s.id = enrollments.sequence_id)
         and exists (select 1 from app_public.contacts c
                      where c.organization_id = enrollments.organization_id and c.id = enrollments.contact_id));
drop policy if exists insert_with_sequence on app_public.enrollments;
create policy insert_with_sequence on app_public.enrollments for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and exists (select 1 from app_public.sequences s
                           where s.organization_id = enrollments.organization_id and s.id = enrollments.sequence_id
                             and app_hidden.current_may_write_sequence(s.location_id)));
drop policy if exists update_with_sequence on app_public.enrollments;
create policy update_with_sequence on app_public.enrollments for update
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.sequences s
                      where s.organization_id = enrollments.organization_id and s.id = enrollments.sequence_id
                        and app_hidden.current_may_write_sequence(s.location_id)))
  with check (organization_id = (select app_hidden.current_org_id()));

drop policy if exists select_with_enrollment on app_public.step_runs;
create policy select_with_enrollment on app_public.step_runs for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.enrollments e
                      where e.organization_id = step_runs.organization_id and e.id = step_runs.enrollment_id));
drop policy if exists select_with_enrollment on app_public.enrollment_events;
create policy select_with_enrollment on app_public.enrollment_events for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.enrollments e
                      where e.organization_id = enrollment_events.organization_id and e.id = enrollment_events.enrollment_id));

grant select on app_public.send_schedules, app_public.sequences, app_public.enrollments, app_public.step_runs,
  app_public.enrollment_events to svc_request, svc_worker, svc_analyst;
grant insert (organization_id, kind, name, location_id, send_schedule_id, audience_id, trigger, steps, edges,
  exit_conditions, created_by) on app_public.sequences to svc_request;
grant update (name, location_id, send_schedule_id, audience_id, trigger, steps, edges, exit_conditions, status,
  paused_at, updated_at) on app_public.sequences to svc_request;
grant insert (organization_id, sequence_id, contact_id, status, current_step_index, current_step_key,
  next_step_due_at, next_run_at, source), update (status, current_step_index, current_step_key, next_step_due_at,
  next_run_at, paused_at, end_reason, updated_at) on app_public.enrollments to svc_request;

reset role;
