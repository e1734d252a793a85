--! Previous: sha1:fa5ae6451142651d76b97830a0b774c1a10c129b
--! Hash: sha1:504c880a42eba9799a3ecff804b8c22c6980dde0
--! Message: Sequences: send schedules, sequences, enrollments, step runs and events; the template and condition language; authoring, the engine and the enrollment reads

--! split: 100-sequences-tables.sql
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

--! split: 110-sequences-send-windows.sql
-- When a sequence message may go out, and how a due step becomes a job.
--
-- A send schedule is a set of weekly windows in an IANA time zone. A step due at some instant
-- runs at the first instant, at or after it, that falls inside a window, counted on the local
-- calendar of the schedule's zone: a window of 09:00-17:00 in New York is 14:00-22:00 UTC in
-- January and 13:00-21:00 UTC in July. PostgreSQL's `timestamp AT TIME ZONE zone` does the
-- conversion, DST included: a local time the spring change skips (02:30 on the second Sunday
-- of March in New York) is read as the instant it would have been, that is moved forward by
-- the gap, and a window that closes at 24:00 ends at the next local midnight, however long that
-- day was (23 or 25 hours).
--
-- The engine runs each due step as one graphile-worker job: task `sequence_step`, payload
-- {organization_id, enrollment_id, step_key}, job key `sequence_step:<enrollment id>`, so an
-- enrollment has at most one pending job; rescheduling it (pause, resume, a step moved into the
-- next window) replaces that job's run_at.
set local role svc_owner;

create or replace function app_hidden.is_time_zone(name text) returns boolean
language sql stable as $$
  select exists (select 1 from pg_catalog.pg_timezone_names z where z.name = is_time_zone.name)
$$;
comment on function app_hidden.is_time_zone(text) is 'Whether a name is an IANA time zone this server knows (not an abbreviation or offset).';

create or replace function app_hidden.send_windows_valid(windows jsonb) returns boolean
language sql immutable as $$
  select jsonb_typeof(windows) = 'array' and jsonb_array_length(windows) between 1 and 100
     and not exists (
       select 1 from jsonb_array_elements(windows) w
        where jsonb_typeof(w) <> 'object'
           or not (w ?& array['day', 'start', 'end'])
           or exists (select 1 from jsonb_object_keys(w) k where k not in ('day', 'start', 'end'))
           or w->>'day' not in ('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun')
           or coalesce(w->>'start', '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
           or coalesce(w->>'end', '') !~ '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$'
           or (w->>'start') >= (w->>'end'))
$$;
comment on function app_hidden.send_windows_valid(jsonb) is
  'Whether windows is 1 to 100 weekly windows {day: mon..sun, start: HH:MM, end: HH:MM or 24:00}, each starting before it ends.';

alter table app_public.send_schedules drop constraint if exists send_schedules_windows_valid;
alter table app_public.send_schedules add constraint send_schedules_windows_valid check (app_hidden.send_windows_valid(windows));

-- The first instant at or after `at` inside one of the windows, local to `timezone`. Looks at
-- most eight local days ahead (the day of `at` and the seven after it), which holds every
-- weekly window; NULL only for no windows at all.
create or replace function app_hidden.next_send_time(timezone text, windows jsonb, at timestamptz) returns timestamptz
language plpgsql stable as $$
declare
  local_day date := (at at time zone timezone)::date;
  day date;
  w record;
  opens timestamptz;
  closes timestamptz;
begin
  for offset_days in 0..7 loop
    day := local_day + offset_days;
    for w in
      select (x->>'start')::time as starts, x->>'end' as ends
        from jsonb_array_elements(windows) x
       where x->>'day' = lower(to_char(day, 'dy'))
       order by x->>'start'
    loop
      opens := (day + w.starts) at time zone timezone;
      closes := case when w.ends = '24:00' then (day + 1)::timestamp at time zone timezone
                     else (day + w.ends::time) at time zone timezone end;
      if at < closes then
        return greatest(at, opens);
      end if;
    end loop;
  end loop;
  return null;
end $$;
comment on function app_hidden.next_send_time(text, jsonb, timestamptz) is
  'The first instant at or after `at` inside one of the weekly windows, on the local calendar of timezone (DST included).';

-- The schedule a sequence sends by: its own, else the organization's default (NULL: none).
create or replace function app_hidden.sequence_send_schedule(organization_id uuid, send_schedule_id uuid)
returns app_public.send_schedules
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select s.* from app_public.send_schedules s
   where s.organization_id = sequence_send_schedule.organization_id
     and (s.id = sequence_send_schedule.send_schedule_id or (sequence_send_schedule.send_schedule_id is null and s.is_default))
   limit 1
$$;
comment on function app_hidden.sequence_send_schedule(uuid, uuid) is
  'The send schedule of a sequence: the one it names, or the organization''s default; NULL when there is none.';

-- (Re)schedules the pending step of each live, active enrollment listed, at its next_run_at,
-- replacing any job the enrollment already has. Called in the transaction that changed the
-- enrollments (enroll, resume, the engine moving on), so a committed change always has its job.
-- The enrollments are looked up by primary key, one probe per id, and only then tested: written
-- as `e.id = any(ids) and e.status = 'active'`, the planner took the partial unique index
-- enrollments_one_live (whose predicate the status implies) on organization_id alone and read
-- every live enrollment of the organization for each call (3 ms at 6,000 enrollments, on every
-- enroll and every step). plpgsql, so that its plan is made once per connection.
create or replace function app_private.schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  specs graphile_worker.job_spec[];
begin
  specs := array(
    select row('sequence_step',
               json_build_object('organization_id', e.organization_id, 'enrollment_id', e.id, 'step_key', e.current_step_key),
               null, e.next_run_at, null, 'sequence_step:' || e.id, null, null)::graphile_worker.job_spec
      from (select x.* from unnest(enrollment_ids) as i(id)
              join app_public.enrollments x on x.organization_id = schedule_enrollment_steps.organization_id and x.id = i.id
            offset 0) e   -- the fence keeps the status test out of the lookup, so only the primary key fits it
     where e.status = 'active' and e.current_step_key is not null and e.next_run_at is not null);
  if cardinality(specs) = 0 then
    return 0;
  end if;
  return (select count(*)::int from graphile_worker.add_jobs(specs, false));
end $$;
comment on function app_private.schedule_enrollment_steps(uuid, uuid[]) is
  'Adds (or moves) the sequence_step job of each listed active enrollment to its next_run_at; job key sequence_step:<id>.';
revoke execute on function app_private.schedule_enrollment_steps(uuid, uuid[]) from public;

grant execute on function app_hidden.is_time_zone(text), app_hidden.send_windows_valid(jsonb),
  app_hidden.next_send_time(text, jsonb, timestamptz), app_hidden.sequence_send_schedule(uuid, uuid)
  to svc_request, svc_worker;

reset role;

--! split: 120-sequences-enrollment-json.sql
-- How an enrollment reads in every answer that carries one (sequences_enroll, the enrollment
-- lists, sequences_get_enrollment, sequences_cancel_enrollment): one renderer, so the shapes agree.
set local role svc_owner;

create or replace function app_hidden.enrollment_json(e app_public.enrollments) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', e.id,
    'sequence_id', e.sequence_id,
    'contact_id', e.contact_id,
    'status', e.status,
    'current_step_index', e.current_step_index,
    'current_step_key', e.current_step_key,
    'next_step_due_at', e.next_step_due_at,
    'next_run_at', e.next_run_at,
    'paused_at', e.paused_at,
    'end_reason', e.end_reason,
    'source', e.source,
    'created_at', e.created_at,
    'updated_at', e.updated_at)
$$;
comment on function app_hidden.enrollment_json(app_public.enrollments) is
  'An enrollment as the API shows it: created_at is when the contact was enrolled, updated_at (once ended) when it ended.';
grant execute on function app_hidden.enrollment_json(app_public.enrollments) to svc_request, svc_worker;

-- Ends live enrollments (active or paused): cancelled (sequences_cancel_enrollment, a suppression,
-- deactivation of the sequence), completed (an exit condition, the last step) or failed (a hard
-- bounce). The step they stood on stays in current_step_index/current_step_key, to show where
-- they stopped; nothing is due any more. Each gets its event. A pending sequence_step job finds
-- the enrollment ended and does nothing. Enrollments already ended are left as they are (a
-- second cancel answers the same row), and are not returned.
-- One enrollment at a time, each found by its primary key. A set-based UPDATE joined to the
-- list, with the live-status test, let the planner drive it from the partial unique index
-- enrollments_one_live (whose predicate that test is) on organization_id alone: it read every
-- live enrollment of the organization on each call (0.7 s at 90,000 live enrollments, on every
-- step that ends one), whatever fence the list had.
create or replace function app_private.end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text)
returns setof app_public.enrollments
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  one uuid;
  ended app_public.enrollments;
begin
  if status not in ('cancelled', 'completed', 'failed') then
    raise exception 'end_enrollments: % is not an end status', status;
  end if;
  foreach one in array coalesce(enrollment_ids, '{}') loop
    update app_public.enrollments e
       set status = end_enrollments.status, end_reason = end_enrollments.reason, next_step_due_at = null,
           next_run_at = null, paused_at = null, updated_at = now()
     where e.organization_id = end_enrollments.organization_id and e.id = one and e.status in ('active', 'paused')
    returning e.* into ended;
    if found then
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
      values (ended.organization_id, ended.id, end_enrollments.status, ended.current_step_key, end_enrollments.reason);
      return next ended;
    end if;
  end loop;
end $$;
comment on function app_private.end_enrollments(uuid, uuid[], text, text) is
  'Ends the live enrollments listed (cancelled, completed or failed, with a reason) and logs the event; returns those it ended.';
revoke execute on function app_private.end_enrollments(uuid, uuid[], text, text) from public;

reset role;

--! split: 200-sequences-language.sql
-- Sequences: the template and condition language (../shared/design/sequences.md).
--
-- Templates: a message's subject and body hold placeholders `{{ name }}` or `{{ name|default }}`
-- (spaces around the name and the default allowed). The variables are the rows of
-- app_hidden.sequence_variables(); a step naming any other one is refused at activation
-- (unknown_variable), so render_template meets only known names in practice and renders an unknown
-- one empty. A `{{` that does not open a placeholder (no `}}`, or no variable name inside) is
-- reported by template_unknown_variables as well: it would otherwise reach the contact as written.
-- Rendering substitutes text and nothing else: no expression, no nesting, no evaluation; in an
-- HTML body values and defaults are HTML-escaped.
--
-- Conditions (edges and exit conditions): one rule {field, op, value?} over the contact, with the
-- fields and ops of the audience rule language (its shape checked by
-- app_hidden.audience_definition_check), or over the enrollment's own events: event.replied,
-- event.clicked, event.opened with exists / not_exists. A rule is evaluated for one contact in
-- plpgsql (no SQL is built from it), the way app_hidden.audience_filter compares for many:
-- text case-insensitively, a date value against the UTC day of a date-time field, neq, not_in
-- and not_exists true for a contact without a value.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Variables
--------------------------------------------------------------------------------
create or replace function app_hidden.sequence_variables()
returns table (name text, description text, example text)
language sql immutable parallel safe as $$
  values
    ('contact.first_name', 'The contact''s first name: the first word of its name.', 'Maria'),
    ('contact.last_name', 'The contact''s last name: its name after the first word.', 'Lopez'),
    ('contact.name', 'The contact''s full name.', 'Maria Lopez'),
    ('contact.email', 'The contact''s email address.', 'maria@example.com'),
    ('contact.phone', 'The contact''s phone number (E.164).', '+15551234567'),
    ('location.name', 'The name of the sequence''s location (empty for an organization-wide sequence).', 'Downtown'),
    ('location.phone', 'The SMS number of the sequence''s location, else the organization''s.', '+15557654321'),
    ('organization.name', 'The business''s name.', 'Acme Plumbing'),
    ('unsubscribe_url', 'The link that unsubscribes the contact from this kind of message.', 'https://example.com/u/abc')
$$;
comment on function app_hidden.sequence_variables() is
  'The variables a sequence message may name as {{name}} or {{name|default}} (sequences_list_variables).';
grant execute on function app_hidden.sequence_variables() to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Rendering
--------------------------------------------------------------------------------
create or replace function app_hidden.html_escape(value text) returns text
language sql immutable parallel safe strict as $$
  select replace(replace(replace(replace(replace(value, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')
$$;
comment on function app_hidden.html_escape(text) is 'Text made safe inside HTML (& < > " '').';
grant execute on function app_hidden.html_escape(text) to svc_request, svc_worker;

-- One pass from left to right: each `{{` either opens a placeholder closed by the next `}}`
-- or is copied as it is. A value is never read again as a template.
create or replace function app_hidden.render_template(template text, vars jsonb, html boolean) returns text
language plpgsql immutable parallel safe as $$
declare
  out text := '';
  rest text := template;
  opens int;
  closes int;
  m text[];
  value text;
begin
  if template is null then
    return null;
  end if;
  loop
    opens := strpos(rest, '{{');
    exit when opens = 0;
    out := out || left(rest, opens - 1);
    rest := substr(rest, opens);
    closes := strpos(substr(rest, 3), '}}');
    m := case when closes > 0
              then regexp_match(substr(rest, 3, closes - 1), '^\s*([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\s*(?:\|(.*))?$', 's') end;
    if m is null then
      out := out || '{{';
      rest := substr(rest, 3);
      continue;
    end if;
    value := nullif(case when jsonb_typeof(vars) = 'object' then vars->>m[1] end, '');
    if value is null then
      value := coalesce(btrim(m[2], E' \t\r\n'), '');
    end if;
    out := out || case when html then app_hidden.html_escape(value) else value end;
    rest := substr(rest, closes + 4);
  end loop;
  return out || rest;
end $$;
comment on function app_hidden.render_template(text, jsonb, boolean) is
  'A message with its {{name}} / {{name|default}} placeholders replaced by vars->>name, or the default when that is null '
  'or empty; unknown names render empty; with html, values and defaults are HTML-escaped. Substitution only.';
grant execute on function app_hidden.render_template(text, jsonb, boolean) to svc_request, svc_worker;

-- The names a template uses that are not variables, in order of appearance, each once; a `{{`
-- that opens no placeholder is listed as its text (up to 40 characters), so an author sees it.
create or replace function app_hidden.template_unknown_variables(template text) returns text[]
language plpgsql stable parallel safe as $$
declare
  known text[] := array(select v.name from app_hidden.sequence_variables() v);
  found text[] := '{}';
  rest text := coalesce(template, '');
  opens int;
  closes int;
  m text[];
  bad text;
begin
  loop
    opens := strpos(rest, '{{');
    exit when opens = 0;
    rest := substr(rest, opens);
    closes := strpos(substr(rest, 3), '}}');
    m := case when closes > 0
              then regexp_match(substr(rest, 3, closes - 1), '^\s*([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\s*(?:\|(.*))?$', 's') end;
    if m is null then
      bad := case when closes > 0 and closes <= 40 then left(rest, closes + 3) else left(rest, 40) end;
      if not bad = any(found) then
        found := found || bad;
      end if;
      rest := substr(rest, 3);
      continue;
    end if;
    if not m[1] = any(known) and not m[1] = any(found) then
      found := found || m[1];
    end if;
    rest := substr(rest, closes + 4);
  end loop;
  return found;
end $$;
comment on function app_hidden.template_unknown_variables(text) is
  'The placeholder names of a template that are not sequence variables, and any {{ that opens no placeholder (as its text).';
grant execute on function app_hidden.template_unknown_variables(text) to svc_request, svc_worker;

-- The variables of one message, read as the owner: the engine renders for contacts whatever the
-- reach of whoever enrolled them. first_name / last_name split the contact's one name column.
create or replace function app_hidden.sequence_message_variables(organization_id uuid, contact_id uuid,
  location_id uuid, unsubscribe_url text) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  c record;
  l record;
  o record;
  full_name text;
begin
  select ct.name, ct.email::text as email, ct.phone into c
    from app_public.contacts ct
   where ct.organization_id = sequence_message_variables.organization_id and ct.id = sequence_message_variables.contact_id;
  select lo.name, lo.sms_number into l
    from app_public.locations lo
   where lo.organization_id = sequence_message_variables.organization_id and lo.id = sequence_message_variables.location_id;
  select og.name, og.default_sms_number into o
    from app_public.organizations og where og.id = sequence_message_variables.organization_id;
  full_name := nullif(btrim(regexp_replace(coalesce(c.name, ''), '\s+', ' ', 'g')), '');
  return jsonb_build_object(
    'contact.first_name', split_part(full_name, ' ', 1),
    'contact.last_name', nullif(substr(full_name, length(split_part(full_name, ' ', 1)) + 2), ''),
    'contact.name', full_name,
    'contact.email', c.email,
    'contact.phone', c.phone,
    'location.name', l.name,
    'location.phone', coalesce(l.sms_number, o.default_sms_number),
    'organization.name', o.name,
    'unsubscribe_url', unsubscribe_url);
end $$;
comment on function app_hidden.sequence_message_variables(uuid, uuid, uuid, text) is
  'The variables of one sequence message, keyed by name (render_template''s vars).';
revoke all on function app_hidden.sequence_message_variables(uuid, uuid, uuid, text) from public;
grant execute on function app_hidden.sequence_message_variables(uuid, uuid, uuid, text) to svc_worker;

--------------------------------------------------------------------------------
-- Conditions
--------------------------------------------------------------------------------
-- The contact fields a condition may test: the audience rule language's (app_hidden.audience_filter),
-- with field_values.<key> for custom fields.
create or replace function app_hidden.condition_contact_fields()
returns table (field text, kind text, description text)
language sql immutable parallel safe as $$
  values
    ('display_name', 'text', 'The contact''s name.'),
    ('email', 'text', 'The contact''s email address.'),
    ('phone_number', 'text', 'The contact''s phone number (E.164).'),
    ('total_calls', 'number', 'How many calls the contact made.'),
    ('first_seen_at', 'datetime', 'When the contact was first seen.'),
    ('last_seen_at', 'datetime', 'When the contact was last seen.'),
    ('created_at', 'datetime', 'When the contact was created.'),
    ('updated_at', 'datetime', 'When the contact last changed.'),
    ('stage_id', 'stage', 'The contact''s pipeline stage (an id of contacts_list_stages).')
$$;
comment on function app_hidden.condition_contact_fields() is
  'The contact fields a sequence condition may test (besides field_values.<key>), with their kind.';
grant execute on function app_hidden.condition_contact_fields() to svc_request, svc_worker;

create or replace function app_hidden.condition_event_fields()
returns table (field text, event text, description text)
language sql immutable parallel safe as $$
  values
    ('event.replied', 'replied', 'The contact replied to a message of this enrollment.'),
    ('event.clicked', 'clicked', 'The contact clicked a link of a message of this enrollment.'),
    ('event.opened', 'opened', 'The contact opened an email of this enrollment.')
$$;
comment on function app_hidden.condition_event_fields() is
  'The enrollment events a sequence condition may test, with exists / not_exists.';
grant execute on function app_hidden.condition_event_fields() to svc_request, svc_worker;

-- Whether a condition is well formed, independently of the organization: a rule of the audience
-- language over a known contact field (or field_values.<key>) with a value of the field's kind,
-- or an event field with exists / not_exists. Whether field_values.<key> names a custom field of
-- the organization is for the caller to check (app_hidden.condition_problem).
create or replace function app_hidden.condition_valid(condition jsonb) returns boolean
language plpgsql stable as $$
begin
  return app_hidden.condition_problem(null, condition) is null;
end $$;
comment on function app_hidden.condition_valid(jsonb) is
  'Whether a sequence condition {field, op, value?} is well formed (sequences_get_condition_vocabulary).';
grant execute on function app_hidden.condition_valid(jsonb) to svc_request, svc_worker;

-- What is wrong with a condition, in a sentence (NULL: nothing). With an organization, a
-- field_values.<key> must also name one of its enabled custom fields.
-- Invoker: the custom fields and stages are read with the caller's rights.
create or replace function app_hidden.condition_problem(organization_id uuid, condition jsonb) returns text
language plpgsql stable as $$
declare
  fld text;
  op text;
  v jsonb;
  kind text;
  vals jsonb;
  s text;
  why text;
begin
  if condition is null or jsonb_typeof(condition) <> 'object' then
    return 'a condition is an object {field, op, value}';
  end if;
  fld := condition->>'field';
  op := condition->>'op';
  v := condition->'value';
  if jsonb_typeof(condition->'field') is distinct from 'string' then
    return 'field: expected a string';
  end if;
  if starts_with(fld, 'event.') then
    if exists (select 1 from jsonb_object_keys(condition) k where k not in ('field', 'op', 'value')) then
      return 'unrecognized keys: a condition has field, op and value';
    end if;
    if not exists (select 1 from app_hidden.condition_event_fields() e where e.field = fld) then
      return format('%s is not an event a condition can test (event.replied, event.clicked, event.opened)', left(fld, 100));
    end if;
    if jsonb_typeof(condition->'op') is distinct from 'string' or op not in ('exists', 'not_exists') then
      return format('%s takes op exists or not_exists', fld);
    end if;
    if v is not null then
      return format('omit value for %s', op);
    end if;
    return null;
  end if;
  -- the shape (ops, value types and sizes, unknown keys) as the audience rules check it
  begin
    perform app_hidden.audience_definition_check(jsonb_build_object('rules', jsonb_build_array(condition)), 'condition');
  exception when others then
    -- app_hidden.raise_error carries the sentence in the detail
    get stacked diagnostics why = pg_exception_detail;
    return coalesce(nullif(regexp_replace(why, '^condition\.rules\.0', 'condition'), ''), 'invalid condition');
  end;
  select f.kind into kind from app_hidden.condition_contact_fields() f where f.field = fld;
  if kind is null then
    if fld !~ '^field_values\.[A-Za-z0-9_]+$' then
      return format('%s is not a field conditions can test: use event.replied, event.clicked, event.opened, display_name, '
        'email, phone_number, total_calls, first_seen_at, last_seen_at, created_at, updated_at, stage_id or '
        'field_values.<key>', left(fld, 100));
    end if;
    if organization_id is not null and not exists (
         select 1 from app_public.custom_fields cf
          where cf.organization_id = condition_problem.organization_id and cf.enabled
            and cf.key = substr(fld, length('field_values.') + 1)) then
      return format('%s names no enabled custom field of the organization', left(fld, 100));
    end if;
    return null;   -- a custom field's value is compared as its type says when the condition is evaluated
  end if;
  if op in ('gt', 'gte', 'lt', 'lte') and kind not in ('number', 'datetime') then
    return format('%s compares numbers and dates, and %s is neither', op, fld);
  elsif op in ('contains', 'contains_any') and kind <> 'text' then
    return format('%s matches text, and %s is not text', op, fld);
  end if;
  if op in ('exists', 'not_exists') then
    return null;
  end if;
  vals := case when jsonb_typeof(v) = 'array' then v else jsonb_build_array(v) end;
  for j in 0 .. jsonb_array_length(vals) - 1 loop
    s := vals->j #>> '{}';
    if kind = 'number' and not (jsonb_typeof(vals->j) = 'number'
        or s ~ '^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?\s*$') then
      return format('%s is a number field: give a number', fld);
    elsif kind = 'datetime' and not (jsonb_typeof(vals->j) = 'string'
        and ((s ~ '^\d{4}-\d{2}-\d{2}$' and app_hidden.is_date(s))
             or (s ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$' and app_hidden.is_timestamptz(s)))) then
      return format('%s is a date-time field: give an ISO 8601 date (2026-01-31) or a date-time with offset', fld);
    elsif kind = 'stage' and not (jsonb_typeof(vals->j) = 'string'
        and s ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
        and (organization_id is null or exists (select 1 from app_public.pipeline_stages ps
                                                  where ps.organization_id = condition_problem.organization_id
                                                    and ps.id = s::uuid))) then
      return format('%s is not a stage of the organization''s pipeline', left(s, 100));
    end if;
  end loop;
  return null;
end $$;
comment on function app_hidden.condition_problem(uuid, jsonb) is
  'What is wrong with a sequence condition (NULL: nothing); with an organization, custom fields and stages are resolved.';
grant execute on function app_hidden.condition_problem(uuid, jsonb) to svc_request, svc_worker;

-- One comparison of a contact's value (as text, NULL: none) with a condition's values (checked
-- when the condition was written). Text, numbers, stages and booleans compare without a cast that
-- can fail (numbers are matched first), so this path needs no exception block, which would cost a
-- subtransaction per evaluation; date-times and custom fields go through condition_compare_safe.
create or replace function app_hidden.condition_compare(kind text, have text, op text, vals jsonb) returns boolean
language plpgsql immutable as $$
declare
  numeric_text constant text := '^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?\s*$';
  s text;
  one boolean;
begin
  if have is null then
    return null;
  end if;
  for j in 0 .. jsonb_array_length(vals) - 1 loop
    s := vals->j #>> '{}';
    if op in ('contains', 'contains_any') then
      one := strpos(lower(have), lower(s)) > 0;
    elsif kind = 'number' then
      one := have ~ numeric_text and s ~ numeric_text
             and case op when 'gt' then have::numeric > s::numeric when 'gte' then have::numeric >= s::numeric
                         when 'lt' then have::numeric < s::numeric when 'lte' then have::numeric <= s::numeric
                         else have::numeric = s::numeric end;
    elsif kind = 'datetime' and s ~ '^\d{4}-\d{2}-\d{2}$' then
      -- a day is the UTC day of the instant
      one := case op when 'gt' then (have::timestamptz at time zone 'UTC')::date > s::date
                     when 'gte' then (have::timestamptz at time zone 'UTC')::date >= s::date
                     when 'lt' then (have::timestamptz at time zone 'UTC')::date < s::date
                     when 'lte' then (have::timestamptz at time zone 'UTC')::date <= s::date
                     else (have::timestamptz at time zone 'UTC')::date = s::date end;
    elsif kind = 'datetime' then
      one := case op when 'gt' then have::timestamptz > s::timestamptz when 'gte' then have::timestamptz >= s::timestamptz
                     when 'lt' then have::timestamptz < s::timestamptz when 'lte' then have::timestamptz <= s::timestamptz
                     else have::timestamptz = s::timestamptz end;
    elsif kind = 'date' then
      one := case op when 'gt' then have > s when 'gte' then have >= s when 'lt' then have < s when 'lte' then have <= s
                     else have = s end;
    else
      -- text (case-insensitive), stage ids, booleans
      one := lower(have) = lower(s);
    end if;
    if coalesce(one, false) then
      return true;
    end if;
  end loop;
  return false;
end $$;
grant execute on function app_hidden.condition_compare(text, text, text, jsonb) to svc_request, svc_worker;

-- The same, where a stored value may not read as its field's type (a custom field whose type
-- changed, a malformed date): such a value matches nothing.
create or replace function app_hidden.condition_compare_safe(kind text, have text, op text, vals jsonb) returns boolean
language plpgsql immutable as $$
begin
  return app_hidden.condition_compare(kind, have, op, vals);
exception when data_exception then
  return false;
end $$;
grant execute on function app_hidden.condition_compare_safe(text, text, text, jsonb) to svc_request, svc_worker;

-- Whether a condition holds for a contact in an enrollment, read as the owner (the engine asks).
-- A condition that is not well formed holds for nobody.
create or replace function app_hidden.condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid,
  condition jsonb) returns boolean
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  field text := condition->>'field';
  op text := condition->>'op';
  kind text;
  have text;
  present boolean;
  positive boolean;
  vals jsonb;
  base_op text;
  c app_public.contacts;
begin
  -- Conditions are checked when written (app_hidden.condition_problem); here only what keeps a
  -- stray one from failing: a malformed one holds for nobody.
  if jsonb_typeof(condition) is distinct from 'object' or jsonb_typeof(condition->'field') is distinct from 'string'
     or op is null or op not in ('eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'contains_any', 'exists', 'not_exists')
     or (op not in ('exists', 'not_exists') and jsonb_typeof(condition->'value') not in ('string', 'number', 'boolean', 'array'))
     or (starts_with(field, 'event.') and op not in ('exists', 'not_exists')) then
    return false;
  end if;
  if starts_with(field, 'event.') then
    present := exists (select 1 from app_public.enrollment_events ev
                        where ev.organization_id = condition_holds.organization_id
                          and ev.enrollment_id = condition_holds.enrollment_id
                          and ev.type = substr(field, length('event.') + 1));
    return case when op = 'exists' then present else not present end;
  end if;
  select * into c from app_public.contacts ct
   where ct.organization_id = condition_holds.organization_id and ct.id = condition_holds.contact_id;
  if not found then
    return false;
  end if;
  case field
    when 'display_name' then kind := 'text'; have := c.name;
    when 'email' then kind := 'text'; have := c.email::text;
    when 'phone_number' then kind := 'text'; have := c.phone;
    when 'total_calls' then kind := 'number'; have := c.total_calls::text;
    when 'first_seen_at' then kind := 'datetime'; have := c.first_seen_at::text;
    when 'last_seen_at' then kind := 'datetime'; have := c.last_seen_at::text;
    when 'created_at' then kind := 'datetime'; have := c.created_at::text;
    when 'updated_at' then kind := 'datetime'; have := c.updated_at::text;
    when 'stage_id' then kind := 'stage'; have := c.stage_id::text;
    else
      select case cf.type when 'number' then 'number' when 'currency' then 'number' when 'datetime' then 'datetime'
                          when 'date' then 'date' when 'boolean' then 'boolean' else 'text' end
        into kind from app_public.custom_fields cf
       where cf.organization_id = condition_holds.organization_id and cf.enabled
         and cf.key = substr(field, length('field_values.') + 1);
      if kind is null then
        return false;   -- no such custom field (any more): the condition holds for nobody
      end if;
      have := c.field_values ->> substr(field, length('field_values.') + 1);
  end case;
  if op in ('exists', 'not_exists') then
    present := have is not null;
    return case when op = 'exists' then present else not present end;
  end if;
  vals := case when jsonb_typeof(condition->'value') = 'array' then condition->'value' else jsonb_build_array(condition->'value') end;
  base_op := case op when 'neq' then 'eq' when 'not_in' then 'in' else op end;
  -- built-in text, number and stage columns always read as their type: no exception block needed
  positive := case when kind in ('text', 'number', 'stage') and not starts_with(field, 'field_values.')
                   then app_hidden.condition_compare(kind, have, base_op, vals)
                   else app_hidden.condition_compare_safe(kind, have, base_op, vals) end;
  return case when op in ('neq', 'not_in') then not coalesce(positive, false) else coalesce(positive, false) end;
end $$;
comment on function app_hidden.condition_holds(uuid, uuid, uuid, jsonb) is
  'Whether a sequence condition holds for a contact in an enrollment (event.* over that enrollment''s events).';
revoke all on function app_hidden.condition_holds(uuid, uuid, uuid, jsonb) from public;
grant execute on function app_hidden.condition_holds(uuid, uuid, uuid, jsonb) to svc_worker;

reset role;

--! split: 210-sequences-authoring.sql
-- Writing sequences: the record, its checks, the transitions (activate, pause, resume, deactivate),
-- duplicate, and the discovery an agent authors from (../shared/design/sequences.md).
--
-- Trigger types and exit-condition types are rows (app_private.sequence_trigger_types,
-- app_private.sequence_exit_types), each with the fields it takes: discovery lists the rows and
-- the checks read the same rows, so an area that brings a new trigger (form_submitted with the
-- forms, appointment_booked with the appointments) plugs in by inserting its row, and discovery
-- never offers what the service would refuse.
--
-- A field spec is {"type": "string"|"uuid"|"enum"|"condition", "required": bool, "max_length": n,
-- "pattern": regex, "values": [...], "only_when": {"<other field>": "<value>"}, "description": …}.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Trigger and exit types, as data
--------------------------------------------------------------------------------
create table if not exists app_private.sequence_trigger_types (
  type text primary key check (type ~ '^[a-z][a-z0-9_]{0,49}$'),
  area text not null,
  description text not null,
  fields jsonb not null default '{}' check (jsonb_typeof(fields) = 'object'),
  position int not null default 100
);
comment on table app_private.sequence_trigger_types is
  'The trigger types sequences accept, with the fields each takes; an area adds its own row when it goes live.';

create table if not exists app_private.sequence_exit_types (
  type text primary key check (type ~ '^[a-z][a-z0-9_]{0,49}$'),
  area text not null,
  description text not null,
  fields jsonb not null default '{}' check (jsonb_typeof(fields) = 'object'),
  position int not null default 100
);
comment on table app_private.sequence_exit_types is
  'The exit-condition types sequences accept, with the fields each takes; an area adds its own row when it goes live.';

-- Read only through the definer functions below (no policy: no request role reads them directly).
alter table app_private.sequence_trigger_types enable row level security;
alter table app_private.sequence_exit_types enable row level security;

insert into app_private.sequence_trigger_types (type, area, description, fields, position) values
  ('manual', 'sequences', 'Contacts enter only through sequences_enroll.', '{}', 1),
  ('event', 'sequences', 'Contacts enter when contacts_upsert fires the named event for them (events[].name).',
   '{"event": {"type": "string", "required": true, "pattern": "^[a-z][a-z0-9_]{0,99}$", "max_length": 100,
               "description": "The event name, as contacts_upsert sends it (for example assessment_abandoned)."},
     "assessmentAudience": {"type": "enum", "values": ["started", "never_started"], "only_when": {"event": "assessment_abandoned"},
               "description": "Only with assessment_abandoned: started needs a positive fields.user_message_count, never_started zero."}}', 2),
  ('tag_added', 'sequences', 'Contacts enter when the tag is added to them.',
   '{"tag": {"type": "string", "required": true, "max_length": 120, "description": "The tag''s name (case-insensitive)."}}', 3)
on conflict (type) do update set area = excluded.area, description = excluded.description, fields = excluded.fields,
  position = excluded.position;

insert into app_private.sequence_exit_types (type, area, description, fields, position) values
  ('replied', 'sequences', 'The contact replied on one of the sequence''s channels (auto-replies such as out-of-office do not count).', '{}', 1),
  ('tag_added', 'sequences', 'The tag was added to the contact.',
   '{"tag": {"type": "string", "required": true, "max_length": 120, "description": "The tag''s name (case-insensitive)."}}', 2),
  ('stage_changed', 'sequences', 'The contact moved to the pipeline stage.',
   '{"stage_id": {"type": "uuid", "required": true, "description": "A stage of contacts_list_stages."}}', 3),
  ('condition', 'sequences', 'The condition holds (checked when an event arrives and before each send).',
   '{"condition": {"type": "condition", "required": true, "description": "A condition of sequences_get_condition_vocabulary."}}', 4)
on conflict (type) do update set area = excluded.area, description = excluded.description, fields = excluded.fields,
  position = excluded.position;

create or replace function app_hidden.sequence_trigger_types()
returns table (type text, area text, description text, fields jsonb)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select t.type, t.area, t.description, t.fields from app_private.sequence_trigger_types t order by t.position, t.type
$$;
comment on function app_hidden.sequence_trigger_types() is 'The trigger types sequences accept (sequences_list_triggers).';
grant execute on function app_hidden.sequence_trigger_types() to svc_request, svc_worker;

create or replace function app_hidden.sequence_exit_types()
returns table (type text, area text, description text, fields jsonb)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select t.type, t.area, t.description, t.fields from app_private.sequence_exit_types t order by t.position, t.type
$$;
comment on function app_hidden.sequence_exit_types() is 'The exit-condition types sequences accept.';
grant execute on function app_hidden.sequence_exit_types() to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Limits
--------------------------------------------------------------------------------
-- One place for the numbers: the checks below read them, and sequences_capabilities shows them.
create or replace function app_hidden.sequence_limits() returns jsonb
language sql immutable parallel safe as $$
  select jsonb_build_object(
    'name_max_length', 200,
    'steps_per_sequence', 50,
    'edges_per_sequence', 200,
    'exit_conditions_per_sequence', 20,
    'step_key_pattern', '^[A-Za-z0-9_-]{1,50}$',
    'subject_max_length', 300,
    'email_body_max_length', 50000,
    'sms_body_max_length', 1600,
    'delay_max', jsonb_build_object('minutes', 525600, 'hours', 8760, 'days', 365))
$$;
comment on function app_hidden.sequence_limits() is 'The limits of a sequence''s definition (sequences_capabilities).';
grant execute on function app_hidden.sequence_limits() to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Checks
--------------------------------------------------------------------------------
create or replace function app_hidden.sequence_bad(at text, message text) returns void
language plpgsql as $$
begin
  perform app_hidden.raise_error(400, 'bad_request', at || ': ' || message,
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', at, 'message', message))));
end $$;
comment on function app_hidden.sequence_bad(text, text) is 'Raises 400 bad_request naming the part of a sequence to fix.';
grant execute on function app_hidden.sequence_bad(text, text) to svc_request, svc_worker;

-- An object against a field spec of a trigger or exit type (see the top of this file); the
-- first problem, NULL for none.
drop function if exists app_hidden.sequence_fields_problem(uuid, jsonb, jsonb);
create or replace function app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) returns text
language plpgsql stable as $$
declare
  k text;
  spec jsonb;
  v jsonb;
  cond text;
begin
  for k in select jsonb_object_keys(obj) loop
    if k <> 'type' and not fields ? k then
      return format('%s: not a field of this type (it takes %s)', left(k, 50),
        coalesce((select string_agg(f, ', ') from jsonb_object_keys(fields) f), 'no other field'));
    end if;
  end loop;
  for k, spec in select * from jsonb_each(fields) loop
    v := obj->k;
    if v is null or v = 'null' then
      if (spec->>'required')::boolean then
        return format('%s: required', k);
      end if;
      continue;
    end if;
    if spec ? 'only_when' and exists (select 1 from jsonb_each(spec->'only_when') w where obj->w.key is distinct from w.value) then
      return format('%s: only with %s', k, (select string_agg(format('%s %s', w.key, w.value #>> '{}'), ', ')
                                              from jsonb_each(spec->'only_when') w));
    end if;
    case spec->>'type'
      when 'string' then
        if jsonb_typeof(v) <> 'string' or length(v #>> '{}') < 1 then
          return format('%s: expected a non-empty string', k);
        elsif spec ? 'max_length' and length(v #>> '{}') > (spec->>'max_length')::int then
          return format('%s: at most %s characters', k, spec->>'max_length');
        elsif spec ? 'pattern' and (v #>> '{}') !~ (spec->>'pattern') then
          return format('%s: must match %s', k, spec->>'pattern');
        end if;
      when 'uuid' then
        if jsonb_typeof(v) <> 'string' or (v #>> '{}') !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
          return format('%s: expected a uuid', k);
        end if;
        if k = 'stage_id' and not exists (select 1 from app_public.pipeline_stages ps
                                            where ps.organization_id = sequence_fields_problem.organization_id
                                              and ps.id = (v #>> '{}')::uuid) then
          return format('%s: not a stage of the organization''s pipeline (contacts_list_stages lists them)', k);
        end if;
      when 'enum' then
        if jsonb_typeof(v) <> 'string' or not (spec->'values') ? (v #>> '{}') then
          return format('%s: one of %s', k, (select string_agg(x, ', ') from jsonb_array_elements_text(spec->'values') x));
        end if;
      when 'condition' then
        cond := app_hidden.condition_problem(organization_id, v);
        if cond is not null then
          return format('%s: %s', k, cond);
        end if;
      else
        return format('%s: this field''s type is not known', k);
    end case;
  end loop;
  return null;
end $$;
grant execute on function app_hidden.sequence_fields_problem(uuid, jsonb, jsonb) to svc_request, svc_worker;

-- The trigger of an automation: NULL (a draft without one; activation says trigger_missing) or
-- an object of a type of app_private.sequence_trigger_types with that type's fields.
create or replace function app_hidden.sequence_check_trigger(organization_id uuid, trigger jsonb, at text) returns void
language plpgsql stable as $$
declare
  t record;
  why text;
begin
  if trigger is null or trigger = 'null' then
    return;
  end if;
  if jsonb_typeof(trigger) <> 'object' then
    perform app_hidden.sequence_bad(at, 'expected an object {type, …} (sequences_list_triggers lists the types)');
  end if;
  select * into t from app_hidden.sequence_trigger_types() x where x.type = trigger->>'type';
  if not found or jsonb_typeof(trigger->'type') <> 'string' then
    perform app_hidden.sequence_bad(at || '.type', format('expected one of %s', (select string_agg(x.type, ', ') from app_hidden.sequence_trigger_types() x)));
  end if;
  why := app_hidden.sequence_fields_problem(organization_id, trigger, t.fields);
  if why is not null then
    perform app_hidden.sequence_bad(at || '.' || split_part(why, ':', 1), substr(why, strpos(why, ':') + 2));
  end if;
end $$;
grant execute on function app_hidden.sequence_check_trigger(uuid, jsonb, text) to svc_request, svc_worker;

-- Steps, as stored: [{step_key, type, delay, subject?, body?}] with one delay unit; a draft may
-- leave subject and body empty (activation says empty_content). Returns the steps normalized
-- (delay {minutes: 0} when none is given).
create or replace function app_hidden.sequence_check_steps(steps jsonb, at text) returns jsonb
language plpgsql stable as $$
declare
  lim jsonb := app_hidden.sequence_limits();
  step jsonb;
  sat text;
  keys text[] := '{}';
  k text;
  typ text;
  delay jsonb;
  unit text;
  n jsonb;
  out jsonb := '[]';
begin
  if steps is null or jsonb_typeof(steps) <> 'array' then
    perform app_hidden.sequence_bad(at, 'expected an array of steps');
  end if;
  if jsonb_array_length(steps) > (lim->>'steps_per_sequence')::int then
    perform app_hidden.sequence_bad(at, format('at most %s steps', lim->>'steps_per_sequence'));
  end if;
  for i in 0 .. jsonb_array_length(steps) - 1 loop
    step := steps->i;
    sat := format('%s.%s', at, i);
    if jsonb_typeof(step) <> 'object' then
      perform app_hidden.sequence_bad(sat, 'expected an object {step_key, type, delay, subject?, body?}');
    end if;
    select min(x) into k from jsonb_object_keys(step) x where x not in ('step_key', 'type', 'delay', 'subject', 'body');
    if k is not null then
      perform app_hidden.sequence_bad(sat, format('unrecognized key "%s"', left(k, 50)));
    end if;
    if jsonb_typeof(step->'step_key') is distinct from 'string' or (step->>'step_key') !~ (lim->>'step_key_pattern') then
      perform app_hidden.sequence_bad(sat || '.step_key', '1 to 50 letters, digits, _ or -');
    end if;
    if (step->>'step_key') = any(keys) then
      perform app_hidden.sequence_bad(sat || '.step_key', format('%s is used by another step: step keys are unique', step->>'step_key'));
    end if;
    keys := keys || (step->>'step_key');
    typ := step->>'type';
    if jsonb_typeof(step->'type') is distinct from 'string' or typ not in ('email', 'sms', 'wait') then
      perform app_hidden.sequence_bad(sat || '.type', 'expected one of email, sms, wait');
    end if;
    delay := coalesce(nullif(step->'delay', 'null'), '{"minutes": 0}');
    if jsonb_typeof(delay) <> 'object' then
      perform app_hidden.sequence_bad(sat || '.delay', 'expected one of {minutes: n}, {hours: n}, {days: n}');
    end if;
    if (select count(*) from jsonb_object_keys(delay)) <> 1 then
      perform app_hidden.sequence_bad(sat || '.delay', 'expected one of {minutes: n}, {hours: n}, {days: n}');
    end if;
    unit := (select x from jsonb_object_keys(delay) x);
    n := delay->unit;
    if not (lim->'delay_max') ? unit then
      perform app_hidden.sequence_bad(sat || '.delay', 'expected one of {minutes: n}, {hours: n}, {days: n}');
    end if;
    if jsonb_typeof(n) <> 'number' then
      perform app_hidden.sequence_bad(sat || '.delay.' || unit, format('a whole number from 0 to %s', lim->'delay_max'->>unit));
    end if;
    if (n #>> '{}')::numeric <> trunc((n #>> '{}')::numeric)
       or (n #>> '{}')::numeric < 0 or (n #>> '{}')::numeric > (lim->'delay_max'->>unit)::numeric then
      perform app_hidden.sequence_bad(sat || '.delay.' || unit, format('a whole number from 0 to %s', lim->'delay_max'->>unit));
    end if;
    if step ? 'subject' and step->'subject' <> 'null' then
      if typ <> 'email' then
        perform app_hidden.sequence_bad(sat || '.subject', 'only an email step has a subject');
      elsif jsonb_typeof(step->'subject') <> 'string' or length(step->>'subject') > (lim->>'subject_max_length')::int then
        perform app_hidden.sequence_bad(sat || '.subject', format('a string of at most %s characters', lim->>'subject_max_length'));
      end if;
    end if;
    if step ? 'body' and step->'body' <> 'null' then
      if typ = 'wait' then
        perform app_hidden.sequence_bad(sat || '.body', 'a wait step has no body (only a delay)');
      elsif jsonb_typeof(step->'body') <> 'string'
            or length(step->>'body') > (lim->>(case typ when 'email' then 'email_body_max_length' else 'sms_body_max_length' end))::int then
        perform app_hidden.sequence_bad(sat || '.body', format('a string of at most %s characters',
          lim->>(case typ when 'email' then 'email_body_max_length' else 'sms_body_max_length' end)));
      end if;
    end if;
    out := out || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
      'step_key', step->'step_key', 'type', typ, 'delay', jsonb_build_object(unit, (n #>> '{}')::bigint),
      'subject', case when typ = 'email' then step->'subject' end,
      'body', case when typ <> 'wait' then step->'body' end)));
  end loop;
  return out;
end $$;
grant execute on function app_hidden.sequence_check_steps(jsonb, text) to svc_request, svc_worker;

-- Edges [{from, to, condition?}] between the steps' keys; the condition well formed for the
-- organization (custom fields, stages).
create or replace function app_hidden.sequence_check_edges(organization_id uuid, edges jsonb, steps jsonb, at text) returns jsonb
language plpgsql stable as $$
declare
  lim jsonb := app_hidden.sequence_limits();
  keys text[] := array(select x->>'step_key' from jsonb_array_elements(steps) x);
  edge jsonb;
  eat text;
  k text;
  why text;
  out jsonb := '[]';
begin
  if edges is null or jsonb_typeof(edges) <> 'array' then
    perform app_hidden.sequence_bad(at, 'expected an array of edges');
  end if;
  if jsonb_array_length(edges) > (lim->>'edges_per_sequence')::int then
    perform app_hidden.sequence_bad(at, format('at most %s edges', lim->>'edges_per_sequence'));
  end if;
  for i in 0 .. jsonb_array_length(edges) - 1 loop
    edge := edges->i;
    eat := format('%s.%s', at, i);
    if jsonb_typeof(edge) <> 'object' then
      perform app_hidden.sequence_bad(eat, 'expected an object {from, to, condition}');
    end if;
    select min(x) into k from jsonb_object_keys(edge) x where x not in ('from', 'to', 'condition');
    if k is not null then
      perform app_hidden.sequence_bad(eat, format('unrecognized key "%s"', left(k, 50)));
    end if;
    foreach k in array array['from', 'to'] loop
      if jsonb_typeof(edge->k) is distinct from 'string' then
        perform app_hidden.sequence_bad(eat || '.' || k, 'expected a step_key');
      elsif not (edge->>k) = any(keys) then
        perform app_hidden.sequence_bad(eat || '.' || k, format('%s is not the step_key of a step', left(edge->>k, 50)));
      end if;
    end loop;
    if edge->'condition' is not null and edge->'condition' <> 'null' then
      why := app_hidden.condition_problem(organization_id, edge->'condition');
      if why is not null then
        perform app_hidden.sequence_bad(eat || '.condition', why);
      end if;
    end if;
    out := out || jsonb_build_array(jsonb_build_object('from', edge->'from', 'to', edge->'to',
      'condition', coalesce(edge->'condition', 'null')));
  end loop;
  return out;
end $$;
grant execute on function app_hidden.sequence_check_edges(uuid, jsonb, jsonb, text) to svc_request, svc_worker;

create or replace function app_hidden.sequence_check_exits(organization_id uuid, exits jsonb, at text) returns void
language plpgsql stable as $$
declare
  lim jsonb := app_hidden.sequence_limits();
  x jsonb;
  xat text;
  t record;
  why text;
begin
  if exits is null or jsonb_typeof(exits) <> 'array' then
    perform app_hidden.sequence_bad(at, 'expected an array of exit conditions');
  end if;
  if jsonb_array_length(exits) > (lim->>'exit_conditions_per_sequence')::int then
    perform app_hidden.sequence_bad(at, format('at most %s exit conditions', lim->>'exit_conditions_per_sequence'));
  end if;
  for i in 0 .. jsonb_array_length(exits) - 1 loop
    x := exits->i;
    xat := format('%s.%s', at, i);
    if jsonb_typeof(x) <> 'object' then
      perform app_hidden.sequence_bad(xat, 'expected an object {type, …}');
    end if;
    select * into t from app_hidden.sequence_exit_types() e where e.type = x->>'type';
    if not found or jsonb_typeof(x->'type') <> 'string' then
      perform app_hidden.sequence_bad(xat || '.type', format('expected one of %s',
        (select string_agg(e.type, ', ') from app_hidden.sequence_exit_types() e)));
    end if;
    why := app_hidden.sequence_fields_problem(organization_id, x, t.fields);
    if why is not null then
      perform app_hidden.sequence_bad(xat || '.' || split_part(why, ':', 1), substr(why, strpos(why, ':') + 2));
    end if;
  end loop;
end $$;
grant execute on function app_hidden.sequence_check_exits(uuid, jsonb, text) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- The record
--------------------------------------------------------------------------------
create or replace function app_hidden.sequence_json(s app_public.sequences) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', s.id,
    'kind', s.kind,
    'status', s.status,
    'is_active', s.status <> 'inactive',
    'name', s.name,
    'location_id', s.location_id,
    'send_schedule_id', s.send_schedule_id,
    'trigger', s.trigger,
    'steps', s.steps,
    'edges', s.edges,
    'exit_conditions', s.exit_conditions,
    'audience', case when s.audience_id is not null then jsonb_build_object('id', s.audience_id) end,
    'created_at', s.created_at,
    'updated_at', s.updated_at)
$$;
comment on function app_hidden.sequence_json(app_public.sequences) is 'A sequence as the API shows it (sequences.md, "The sequence record").';
grant execute on function app_hidden.sequence_json(app_public.sequences) to svc_request, svc_worker;

-- The sequence, within the credential's reach (404 otherwise); for a write, locked, and 403 when
-- the credential sees it but may not change it (a manager and an organization-wide sequence).
-- (A locking read under row security sees only the rows the update policy lets the credential
-- change, so the sequence is read first, then checked, then locked.)
create or replace function app_hidden.sequence_for(sequence_id uuid, for_write boolean) returns app_public.sequences
language plpgsql volatile as $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x where x.organization_id = app_hidden.current_org_id() and x.id = sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  if for_write then
    if not app_hidden.current_may_write_sequence(s.location_id) then
      perform app_hidden.raise_error(403, 'insufficient_role',
        'This credential may change only the sequences of its own locations, not an organization-wide one');
    end if;
    select * into s from app_public.sequences x
     where x.organization_id = app_hidden.current_org_id() and x.id = sequence_id for no key update;
  end if;
  return s;
end $$;
grant execute on function app_hidden.sequence_for(uuid, boolean) to svc_request;

-- A location a sequence may be written for: the organization's, in reach (404), and for a
-- manager one of its own (an organization-wide sequence is 403).
create or replace function app_hidden.sequence_check_location(location_id uuid) returns void
language plpgsql stable as $$
begin
  if location_id is not null and not exists (
       select 1 from app_public.locations l
        where l.organization_id = app_hidden.current_org_id() and l.id = location_id
          and app_hidden.current_in_reach(l.id)) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if not app_hidden.current_may_write_sequence(location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'A manager writes only sequences of its own locations: send location_id, one of yours');
  end if;
end $$;
grant execute on function app_hidden.sequence_check_location(uuid) to svc_request;

create or replace function app_hidden.sequence_check_send_schedule(send_schedule_id uuid) returns void
language plpgsql stable as $$
begin
  if send_schedule_id is not null and not exists (
       select 1 from app_public.send_schedules x
        where x.organization_id = app_hidden.current_org_id() and x.id = send_schedule_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Send schedule not found');
  end if;
end $$;
grant execute on function app_hidden.sequence_check_send_schedule(uuid) to svc_request;

-- audience as the body gives it: {"id": uuid}, the id itself, or null.
create or replace function app_hidden.sequence_audience_id(audience jsonb) returns uuid
language plpgsql stable as $$
declare
  raw text := case jsonb_typeof(audience) when 'string' then audience #>> '{}' when 'object' then audience->>'id' end;
begin
  if audience is null or audience = 'null' then
    return null;
  end if;
  if raw is null or raw !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     or (jsonb_typeof(audience) = 'object' and exists (select 1 from jsonb_object_keys(audience) k where k <> 'id')) then
    perform app_hidden.sequence_bad('body.audience', 'expected {"id": "<audience id>"}, the id, or null');
  end if;
  if not exists (select 1 from app_public.audiences a where a.organization_id = app_hidden.current_org_id() and a.id = raw::uuid) then
    perform app_hidden.raise_error(404, 'not_found', 'Audience not found');
  end if;
  return raw::uuid;
end $$;
grant execute on function app_hidden.sequence_audience_id(jsonb) to svc_request;

--------------------------------------------------------------------------------
-- Activation blockers
--------------------------------------------------------------------------------
-- Every reason the sequence cannot send, at once: [{code, message, step_key?}] (codes of
-- sequences.md). Read as the owner, since the organization's sending domain and numbers are not
-- the credential's to read; the caller has already read the sequence within its reach.
create or replace function app_hidden.sequence_blockers(s app_public.sequences) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  b jsonb := '[]';
  o record;
  sms_number text;
  step jsonb;
  unknown text[];
  keys text[] := array(select x->>'step_key' from jsonb_array_elements(s.steps) x);
  edge jsonb;
  a record;
begin
  select og.sending_email_domain, og.default_sms_number into o from app_public.organizations og where og.id = s.organization_id;
  select coalesce((select l.sms_number from app_public.locations l
                    where l.organization_id = s.organization_id and l.id = s.location_id), o.default_sms_number)
    into sms_number;
  if jsonb_array_length(s.steps) = 0 then
    b := b || jsonb_build_object('code', 'no_steps', 'message', 'The sequence has no steps: add at least one');
  end if;
  if exists (select 1 from jsonb_array_elements(s.steps) x where x->>'type' = 'email') and o.sending_email_domain is null then
    b := b || jsonb_build_object('code', 'missing_sending_domain',
      'message', 'The sequence sends email and the organization has no sending domain');
  end if;
  if exists (select 1 from jsonb_array_elements(s.steps) x where x->>'type' = 'sms') and sms_number is null then
    b := b || jsonb_build_object('code', 'missing_sms_number',
      'message', 'The sequence sends SMS and neither its location nor the organization has a number');
  end if;
  for step in select x from jsonb_array_elements(s.steps) x loop
    if (step->>'type' = 'email' and (coalesce(btrim(step->>'subject'), '') = '' or coalesce(btrim(step->>'body'), '') = ''))
       or (step->>'type' = 'sms' and coalesce(btrim(step->>'body'), '') = '') then
      b := b || jsonb_build_object('code', 'empty_content', 'step_key', step->>'step_key',
        'message', case when step->>'type' = 'email' then 'An email step needs a subject and a body'
                        else 'An SMS step needs a body' end);
    end if;
    unknown := app_hidden.template_unknown_variables(coalesce(step->>'subject', '') || ' ' || coalesce(step->>'body', ''));
    if cardinality(unknown) > 0 then
      b := b || jsonb_build_object('code', 'unknown_variable', 'step_key', step->>'step_key',
        'message', format('Not a variable of sequences_list_variables: %s', array_to_string(unknown, ', ')),
        'variables', to_jsonb(unknown));
    end if;
  end loop;
  for edge in select x from jsonb_array_elements(s.edges) x loop
    if not (edge->>'from') = any(keys) then
      b := b || jsonb_build_object('code', 'unknown_step_key', 'step_key', edge->>'from',
        'message', format('An edge starts at %s, which is no step of the sequence', edge->>'from'));
    end if;
    if not (edge->>'to') = any(keys) then
      b := b || jsonb_build_object('code', 'unknown_step_key', 'step_key', edge->>'to',
        'message', format('An edge leads to %s, which is no step of the sequence', edge->>'to'));
    end if;
  end loop;
  if app_hidden.sequence_send_schedule(s.organization_id, s.send_schedule_id) is null then
    b := b || jsonb_build_object('code', 'no_send_schedule',
      'message', 'The sequence names no send schedule and the organization has no default one');
  end if;
  if s.kind = 'broadcast' then
    select x.archived_at into a from app_public.audiences x where x.organization_id = s.organization_id and x.id = s.audience_id;
    if s.audience_id is null or not found then
      b := b || jsonb_build_object('code', 'audience_missing', 'message', 'A broadcast needs an audience');
    elsif a.archived_at is not null then
      b := b || jsonb_build_object('code', 'audience_archived', 'message', 'The broadcast''s audience is archived: restore it or name another');
    end if;
  elsif s.trigger is null or s.trigger = 'null' then
    b := b || jsonb_build_object('code', 'trigger_missing', 'message', 'An automation needs a trigger (sequences_list_triggers)');
  end if;
  return b;
end $$;
comment on function app_hidden.sequence_blockers(app_public.sequences) is
  'Every reason a sequence cannot be activated: [{code, message, step_key?}] ([] when none).';
revoke all on function app_hidden.sequence_blockers(app_public.sequences) from public;
grant execute on function app_hidden.sequence_blockers(app_public.sequences) to svc_request, svc_worker;

create or replace function app_hidden.sequence_require_no_blockers(s app_public.sequences) returns void
language plpgsql stable as $$
declare
  b jsonb := app_hidden.sequence_blockers(s);
begin
  if jsonb_array_length(b) > 0 then
    perform app_hidden.raise_error(400, 'sequence_activation_blocked',
      format('The sequence cannot be activated: %s', (select string_agg(x->>'code', ', ') from jsonb_array_elements(b) x)),
      jsonb_build_object('blockers', b));
  end if;
end $$;
grant execute on function app_hidden.sequence_require_no_blockers(app_public.sequences) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- What a transition does to the enrollments
--------------------------------------------------------------------------------
-- Enrollment events are written by the owner only; this helper acts for the current credential
-- on a sequence it may write (checked again here, as it runs as the owner):
--   pause:      every active enrollment paused (paused_at now), with a 'paused' event
--   resume:     every paused enrollment active again, its due time moved forward by the time it
--               was held (now - paused_at) and its run time that moved due time in the send
--               window, a 'resumed' event, and its step job scheduled
--   deactivate: every live enrollment cancelled (reason sequence_deactivated)
-- A pending sequence_step job of a paused or cancelled enrollment finds it so and does nothing.
create or replace function app_hidden.sequence_move_enrollments(sequence_id uuid, action text) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  ids uuid[];
  n int;
begin
  if not exists (select 1 from app_public.sequences s where s.organization_id = org and s.id = sequence_id
                   and (s.location_id is null or app_hidden.current_in_reach(s.location_id))
                   and app_hidden.current_may_write_sequence(s.location_id)) then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  case action
    when 'pause' then
      with held as (
        update app_public.enrollments e set status = 'paused', paused_at = now(), updated_at = now()
         where e.organization_id = org and e.sequence_id = sequence_move_enrollments.sequence_id and e.status = 'active'
        returning e.id, e.current_step_key
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key)
        select org, held.id, 'paused', held.current_step_key from held
      )
      select count(*) into n from held;
    when 'resume' then
      with resumed as (
        update app_public.enrollments e
           set status = 'active', next_step_due_at = e.next_step_due_at + (now() - e.paused_at),
               -- the moved due time, into the send window again: a step moved past the window's
               -- close waits for its next opening instead of going out at night
               next_run_at = app_hidden.sequence_next_run(org, s.send_schedule_id,
                                                          coalesce(e.next_step_due_at, e.next_run_at) + (now() - e.paused_at)),
               paused_at = null, updated_at = now()
          from app_public.sequences s
         where s.organization_id = org and s.id = sequence_move_enrollments.sequence_id
           and e.organization_id = org and e.sequence_id = sequence_move_enrollments.sequence_id and e.status = 'paused'
        returning e.id, e.current_step_key
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key)
        select org, resumed.id, 'resumed', resumed.current_step_key from resumed
      )
      select array_agg(resumed.id) into ids from resumed;
      n := coalesce(cardinality(ids), 0);
      if n > 0 then
        perform app_private.schedule_enrollment_steps(org, ids);
      end if;
    when 'deactivate' then
      select count(*) into n from app_private.end_enrollments(org,
        array(select e.id from app_public.enrollments e
               where e.organization_id = org and e.sequence_id = sequence_move_enrollments.sequence_id
                 and e.status in ('active', 'paused')),
        'cancelled', 'sequence_deactivated');
    else
      raise exception 'sequence_move_enrollments: unknown action %', action;
  end case;
  return n;
end $$;
comment on function app_hidden.sequence_move_enrollments(uuid, text) is
  'Pauses, resumes (due times moved by the time held, jobs scheduled) or cancels (deactivation) the live enrollments of '
  'a sequence the current credential may write; returns how many moved.';
revoke all on function app_hidden.sequence_move_enrollments(uuid, text) from public;
grant execute on function app_hidden.sequence_move_enrollments(uuid, text) to svc_request;

--------------------------------------------------------------------------------
-- Operations
--------------------------------------------------------------------------------
create or replace function app_public.sequences_list() returns jsonb
language sql stable as $$
  -- the spec: "Returns an array of sequence summaries, newest first" (a bare array, unpaged)
  select coalesce(jsonb_agg(app_hidden.sequence_json(s) order by s.created_at desc, s.id desc), '[]')
    from app_public.sequences s
   where s.organization_id = app_hidden.current_org_id()
$$;
comment on function app_public.sequences_list() is
  'sequences_list: the sequences in reach (organization-wide ones and those of the credential''s locations), newest first.';

create or replace function app_public.sequences_get(sequence_id uuid) returns jsonb
language plpgsql stable as $$
begin
  return app_hidden.sequence_json(app_hidden.sequence_for(sequence_id, false));
end $$;
comment on function app_public.sequences_get(uuid) is 'sequences_get: one sequence in reach, or 404.';

-- body: {name, kind?, location_id?, send_schedule_id?, audience?, trigger?, steps?, edges?, exit_conditions?, is_active?}
create or replace function app_public.sequences_create(body jsonb) returns jsonb
language plpgsql as $$
declare
  org uuid := app_hidden.current_org_id();
  k text := coalesce(body->>'kind', 'automation');
  loc uuid;
  sched uuid;
  aud uuid;
  new_steps jsonb;
  new_edges jsonb;
  s app_public.sequences;
begin
  if body ? 'is_active' and body->'is_active' = 'true' then
    perform app_hidden.sequence_bad('body.is_active', 'a sequence is created inactive: create it, then call sequences_activate');
  end if;
  if k not in ('automation', 'broadcast') then
    perform app_hidden.sequence_bad('body.kind', 'expected automation or broadcast');
  end if;
  if jsonb_typeof(body->'name') is distinct from 'string' or length(btrim(body->>'name')) not between 1 and 200 then
    perform app_hidden.sequence_bad('body.name', 'a name of 1 to 200 characters');
  end if;
  loc := nullif(body->>'location_id', '')::uuid;
  sched := nullif(body->>'send_schedule_id', '')::uuid;
  perform app_hidden.sequence_check_location(loc);
  if k = 'broadcast' and body->'trigger' is not null and body->'trigger' <> 'null' then
    perform app_hidden.sequence_bad('body.trigger', 'a broadcast has no trigger: it sends to its audience when its schedule fires');
  end if;
  if k = 'automation' and body->'audience' is not null and body->'audience' <> 'null' then
    perform app_hidden.sequence_bad('body.audience', 'only a broadcast has an audience; an automation has a trigger');
  end if;
  if k = 'automation' then
    perform app_hidden.sequence_check_trigger(org, body->'trigger', 'body.trigger');
  end if;
  new_steps := app_hidden.sequence_check_steps(coalesce(body->'steps', '[]'), 'body.steps');
  new_edges := app_hidden.sequence_check_edges(org, coalesce(body->'edges', '[]'), new_steps, 'body.edges');
  perform app_hidden.sequence_check_exits(org, coalesce(body->'exit_conditions', '[]'), 'body.exit_conditions');
  perform app_hidden.sequence_check_send_schedule(sched);
  aud := app_hidden.sequence_audience_id(body->'audience');
  insert into app_public.sequences (organization_id, kind, name, location_id, send_schedule_id, audience_id, trigger,
                                    steps, edges, exit_conditions, created_by)
  values (org, k, btrim(body->>'name'), loc, sched, aud, nullif(body->'trigger', 'null'), new_steps, new_edges,
          coalesce(body->'exit_conditions', '[]'), app_hidden.current_user_id())
  returning * into s;
  return app_hidden.sequence_json(s);
end $$;
comment on function app_public.sequences_create(jsonb) is
  'sequences_create: an inactive draft (is_active true is 400); 404 for an unknown audience, location or send schedule; '
  'a manager gives one of its own locations.';

create or replace function app_hidden.sequence_activate(s app_public.sequences) returns app_public.sequences
language plpgsql as $$
declare
  r app_public.sequences := s;
begin
  if s.status = 'active' then
    return s;
  end if;
  if s.status = 'paused' then
    perform app_hidden.raise_error(409, 'sequence_paused', 'The sequence is paused: sequences_resume continues it');
  end if;
  perform app_hidden.sequence_require_no_blockers(s);
  update app_public.sequences x set status = 'active', paused_at = null, updated_at = now()
   where x.organization_id = s.organization_id and x.id = s.id
  returning * into r;
  return r;
end $$;
grant execute on function app_hidden.sequence_activate(app_public.sequences) to svc_request;

-- patch: the fields sent, each replacing what is stored (steps, edges, exit_conditions whole).
create or replace function app_public.sequences_update(sequence_id uuid, patch jsonb) returns jsonb
language plpgsql as $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, true);
  org uuid := s.organization_id;
  loc uuid := s.location_id;
  new_steps jsonb := s.steps;
  new_edges jsonb := s.edges;
  standing text;
begin
  if patch ? 'kind' and patch->>'kind' is distinct from s.kind then
    perform app_hidden.sequence_bad('body.kind', format('a sequence''s kind is fixed at creation (this one is %s)', s.kind));
  end if;
  if patch ? 'name' and (jsonb_typeof(patch->'name') is distinct from 'string' or length(btrim(patch->>'name')) not between 1 and 200) then
    perform app_hidden.sequence_bad('body.name', 'a name of 1 to 200 characters');
  end if;
  if patch ? 'location_id' then
    loc := nullif(patch->>'location_id', '')::uuid;
    perform app_hidden.sequence_check_location(loc);
  end if;
  if patch ? 'trigger' and s.kind = 'broadcast' and patch->'trigger' <> 'null' then
    perform app_hidden.sequence_bad('body.trigger', 'a broadcast has no trigger: it sends to its audience when its schedule fires');
  end if;
  if patch ? 'audience' and s.kind = 'automation' and patch->'audience' <> 'null' then
    perform app_hidden.sequence_bad('body.audience', 'only a broadcast has an audience; an automation has a trigger');
  end if;
  if patch ? 'trigger' then
    perform app_hidden.sequence_check_trigger(org, patch->'trigger', 'body.trigger');
  end if;
  if patch ? 'steps' then
    new_steps := app_hidden.sequence_check_steps(patch->'steps', 'body.steps');
    -- a live enrollment stands on its current step: that step must stay (unless the same change
    -- deactivates the sequence, which cancels them)
    select min(e.current_step_key) into standing from app_public.enrollments e
     where e.organization_id = org and e.sequence_id = s.id and e.status in ('active', 'paused')
       and e.current_step_key is not null and patch->'is_active' is distinct from 'false'
       and not e.current_step_key = any(array(select x->>'step_key' from jsonb_array_elements(new_steps) x));
    if standing is not null then
      perform app_hidden.sequence_bad('body.steps', format('step %s has enrollments standing on it: keep a step with that '
        'step_key (or cancel those enrollments first)', standing));
    end if;
  end if;
  if patch ? 'edges' then
    new_edges := app_hidden.sequence_check_edges(org, patch->'edges', new_steps, 'body.edges');
  end if;
  if patch ? 'exit_conditions' then
    perform app_hidden.sequence_check_exits(org, patch->'exit_conditions', 'body.exit_conditions');
  end if;
  if patch ? 'send_schedule_id' then
    perform app_hidden.sequence_check_send_schedule(nullif(patch->>'send_schedule_id', '')::uuid);
  end if;

  update app_public.sequences x
     set name = case when patch ? 'name' then btrim(patch->>'name') else x.name end,
         location_id = loc,
         send_schedule_id = case when patch ? 'send_schedule_id' then nullif(patch->>'send_schedule_id', '')::uuid else x.send_schedule_id end,
         audience_id = case when patch ? 'audience' then app_hidden.sequence_audience_id(patch->'audience') else x.audience_id end,
         trigger = case when patch ? 'trigger' then nullif(patch->'trigger', 'null') else x.trigger end,
         steps = new_steps,
         edges = new_edges,
         exit_conditions = case when patch ? 'exit_conditions' then patch->'exit_conditions' else x.exit_conditions end,
         status = case when patch->'is_active' = 'false' then 'inactive' else x.status end,
         paused_at = case when patch->'is_active' = 'false' then null else x.paused_at end,
         updated_at = now()
   where x.organization_id = org and x.id = s.id
  returning * into s;

  if patch->'is_active' = 'false' then
    perform app_hidden.sequence_move_enrollments(s.id, 'deactivate');
  elsif patch->'is_active' = 'true' then
    s := app_hidden.sequence_activate(s);
  elsif s.status <> 'inactive' then
    -- a live sequence stays sendable: what would block its activation blocks the change
    perform app_hidden.sequence_require_no_blockers(s);
  end if;
  return app_hidden.sequence_json(s);
end $$;
comment on function app_public.sequences_update(uuid, jsonb) is
  'sequences_update: changes the fields sent (steps, edges, exit_conditions whole; a step enrollments stand on stays); '
  'is_active false deactivates and cancels every live enrollment, true activates.';

create or replace function app_public.sequences_activate(sequence_id uuid) returns jsonb
language plpgsql as $$
begin
  return app_hidden.sequence_json(app_hidden.sequence_activate(app_hidden.sequence_for(sequence_id, true)));
end $$;
comment on function app_public.sequences_activate(uuid) is
  'sequences_activate: inactive to active, or 400 sequence_activation_blocked with every blocker; active stays as it is.';

create or replace function app_public.sequences_pause(sequence_id uuid) returns jsonb
language plpgsql as $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, true);
begin
  if s.kind = 'broadcast' then
    perform app_hidden.sequence_bad('sequenceId', 'a broadcast is not paused: sequences_pause_schedule stops its sends');
  end if;
  if s.status = 'inactive' then
    perform app_hidden.raise_error(409, 'sequence_inactive', 'The sequence is inactive: there is nothing to pause');
  end if;
  if s.status = 'active' then
    update app_public.sequences x set status = 'paused', paused_at = now(), updated_at = now()
     where x.organization_id = s.organization_id and x.id = s.id
    returning * into s;
    perform app_hidden.sequence_move_enrollments(s.id, 'pause');
  end if;
  return app_hidden.sequence_json(s);
end $$;
comment on function app_public.sequences_pause(uuid) is
  'sequences_pause: an active automation paused with every enrollment held; a broadcast is 400, an inactive one 409.';

create or replace function app_public.sequences_resume(sequence_id uuid) returns jsonb
language plpgsql as $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, true);
begin
  if s.status <> 'paused' then
    perform app_hidden.raise_error(409, 'sequence_not_paused', format('The sequence is %s, not paused: nothing to resume', s.status));
  end if;
  update app_public.sequences x set status = 'active', paused_at = null, updated_at = now()
   where x.organization_id = s.organization_id and x.id = s.id
  returning * into s;
  perform app_hidden.sequence_move_enrollments(s.id, 'resume');
  return app_hidden.sequence_json(s);
end $$;
comment on function app_public.sequences_resume(uuid) is
  'sequences_resume: a paused sequence active again, each enrollment''s due times moved forward by the time held; '
  '409 sequence_not_paused otherwise.';

create or replace function app_public.sequences_duplicate(sequence_id uuid) returns jsonb
language plpgsql as $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, true);
  c app_public.sequences;
begin
  insert into app_public.sequences (organization_id, kind, name, location_id, send_schedule_id, audience_id, trigger,
                                    steps, edges, exit_conditions, created_by)
  values (s.organization_id, s.kind, left(s.name, 193) || ' (copy)', s.location_id, s.send_schedule_id, s.audience_id,
          s.trigger, s.steps, s.edges, s.exit_conditions, app_hidden.current_user_id())
  returning * into c;
  return app_hidden.sequence_json(c);
end $$;
comment on function app_public.sequences_duplicate(uuid) is 'sequences_duplicate: an inactive copy named "… (copy)".';

--------------------------------------------------------------------------------
-- Discovery
--------------------------------------------------------------------------------
create or replace function app_public.sequences_capabilities() returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'kinds', jsonb_build_array('automation', 'broadcast'),
    'step_types', jsonb_build_array(
      jsonb_build_object('type', 'email', 'fields', jsonb_build_array('subject', 'body'),
        'description', 'Sends an email: subject and body with {{variable}} placeholders; values are HTML-escaped in the body.'),
      jsonb_build_object('type', 'sms', 'fields', jsonb_build_array('body'),
        'description', 'Sends an SMS: body with {{variable}} placeholders.'),
      jsonb_build_object('type', 'wait', 'fields', jsonb_build_array(),
        'description', 'Sends nothing: only its delay passes.')),
    'delay', jsonb_build_object('units', jsonb_build_array('minutes', 'hours', 'days'), 'min', 0,
      'max', app_hidden.sequence_limits()->'delay_max',
      'description', 'One unit, {"days": 2}: counted from the previous step''s send (from enrollment for the first step), '
        || 'then moved forward into the send window.'),
    'limits', app_hidden.sequence_limits() - 'delay_max',
    'trigger_types', (select jsonb_agg(t.type) from app_hidden.sequence_trigger_types() t),
    'exit_condition_types', (select jsonb_agg(t.type) from app_hidden.sequence_exit_types() t),
    'activation_blockers', jsonb_build_array('no_steps', 'missing_sending_domain', 'missing_sms_number', 'empty_content',
      'unknown_variable', 'unknown_step_key', 'no_send_schedule', 'audience_missing', 'audience_archived', 'trigger_missing'),
    'template', jsonb_build_object('placeholder', '{{name}}', 'with_default', '{{name|default text}}',
      'description', 'Names from sequences_list_variables; the default is used when the value is empty. Nothing in a '
        || 'template is evaluated; an unknown name or a malformed {{ blocks activation (unknown_variable).'))
$$;
comment on function app_public.sequences_capabilities() is 'sequences_capabilities: kinds, step types, delay units and bounds, limits.';

create or replace function app_public.sequences_list_triggers() returns jsonb
language sql stable as $$
  select jsonb_build_object('items', coalesce(jsonb_agg(jsonb_build_object('type', t.type, 'description', t.description,
    'fields', t.fields)), '[]'))
    from app_hidden.sequence_trigger_types() t
$$;
comment on function app_public.sequences_list_triggers() is 'sequences_list_triggers: the trigger types accepted now, with their fields.';

create or replace function app_public.sequences_list_variables() returns jsonb
language sql stable as $$
  select jsonb_build_object('items', jsonb_agg(jsonb_build_object('name', v.name, 'description', v.description,
    'example', v.example)))
    from app_hidden.sequence_variables() v
$$;
comment on function app_public.sequences_list_variables() is 'sequences_list_variables: the {{variables}} a message may use.';

create or replace function app_public.sequences_get_condition_vocabulary() returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'shape', '{"field": "<field>", "op": "<op>", "value": "<value; omitted for exists and not_exists>"}'::jsonb,
    'ops', jsonb_build_array('eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'contains_any', 'exists', 'not_exists'),
    'contact_fields', (select jsonb_agg(jsonb_build_object('field', f.field, 'kind', f.kind, 'description', f.description,
        'ops', case f.kind
          when 'text' then jsonb_build_array('eq', 'neq', 'in', 'not_in', 'contains', 'contains_any', 'exists', 'not_exists')
          when 'stage' then jsonb_build_array('eq', 'neq', 'in', 'not_in', 'exists', 'not_exists')
          else jsonb_build_array('eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists') end))
      from app_hidden.condition_contact_fields() f),
    'custom_fields', coalesce((select jsonb_agg(jsonb_build_object('field', 'field_values.' || cf.key, 'kind', cf.type,
        'label', cf.label) order by cf.key)
      from app_public.custom_fields cf where cf.organization_id = app_hidden.current_org_id() and cf.enabled), '[]'),
    'event_fields', (select jsonb_agg(jsonb_build_object('field', e.field, 'description', e.description,
        'ops', jsonb_build_array('exists', 'not_exists')))
      from app_hidden.condition_event_fields() e),
    'exit_conditions', (select jsonb_agg(jsonb_build_object('type', t.type, 'description', t.description, 'fields', t.fields))
      from app_hidden.sequence_exit_types() t),
    'notes', 'Text compares case-insensitively; a date-time field takes an ISO 8601 date-time with offset, or a date to '
      || 'compare whole UTC days; in, not_in and contains_any take a list of 1 to 500 values; neq, not_in and not_exists '
      || 'hold for a contact without a value. Conditions go in edges ({from, to, condition}) and in exit_conditions '
      || '({"type": "condition", "condition": …}).')
$$;
comment on function app_public.sequences_get_condition_vocabulary() is
  'sequences_get_condition_vocabulary: the fields, ops and events a condition may use, and the exit-condition types.';

create or replace function app_public.sequences_list_send_schedules(page int, "limit" int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'items', coalesce((select jsonb_agg(jsonb_build_object('id', x.id, 'name', x.name, 'timezone', x.timezone,
        'is_default', x.is_default, 'windows', x.windows, 'created_at', x.created_at, 'updated_at', x.updated_at)
        order by x.is_default desc, x.created_at, x.id)
      from (select * from app_public.send_schedules s where s.organization_id = app_hidden.current_org_id()
             order by s.is_default desc, s.created_at, s.id
             offset (page - 1) * "limit" limit "limit") x), '[]'),
    'total', (select count(*) from app_public.send_schedules s where s.organization_id = app_hidden.current_org_id()),
    'page', page,
    'limit', "limit")
$$;
comment on function app_public.sequences_list_send_schedules(int, int) is
  'sequences_list_send_schedules: a page of the organization''s send schedules, the default first, with their windows.';

revoke all on function app_public.sequences_list(), app_public.sequences_get(uuid), app_public.sequences_create(jsonb),
  app_public.sequences_update(uuid, jsonb), app_public.sequences_activate(uuid), app_public.sequences_pause(uuid),
  app_public.sequences_resume(uuid), app_public.sequences_duplicate(uuid), app_public.sequences_capabilities(),
  app_public.sequences_list_triggers(), app_public.sequences_list_variables(),
  app_public.sequences_get_condition_vocabulary(), app_public.sequences_list_send_schedules(int, int) from public;
grant execute on function app_public.sequences_list(), app_public.sequences_get(uuid), app_public.sequences_create(jsonb),
  app_public.sequences_update(uuid, jsonb), app_public.sequences_activate(uuid), app_public.sequences_pause(uuid),
  app_public.sequences_resume(uuid), app_public.sequences_duplicate(uuid), app_public.sequences_capabilities(),
  app_public.sequences_list_triggers(), app_public.sequences_list_variables(),
  app_public.sequences_get_condition_vocabulary(), app_public.sequences_list_send_schedules(int, int) to svc_request;

reset role;

--! split: 300-sequences-engine-enroll.sql
-- Enrolling a contact in a sequence: one core (app_private.enroll_contact) behind every way in
-- (sequences_enroll, event and tag triggers, later broadcast runs), and the sequences_enroll
-- operation.
--
-- A contact is in a sequence at most once at a time: the partial unique index
-- enrollments_one_live decides it, so two concurrent enrolls of one contact make one enrollment
-- (the second waits for the first's insert, finds the conflict and answers the first one as
-- skipped, already_enrolled).
set local role svc_owner;

-- Which event an enrollment entered by (event triggers), so that cancel_events of that event
-- cancel it and nothing else.
alter table app_public.enrollments add column if not exists entry_event text;
comment on column app_public.enrollments.entry_event is
  'The contacts_upsert event the contact entered by (source event); cancel_events of that name cancel the enrollment.';

-- A step's delay as an interval ({minutes|hours|days: n}; absent: none).
create or replace function app_hidden.step_delay(step jsonb) returns interval
language sql immutable parallel safe as $$
  select coalesce((step->'delay'->>'days')::numeric, 0) * interval '1 day'
       + coalesce((step->'delay'->>'hours')::numeric, 0) * interval '1 hour'
       + coalesce((step->'delay'->>'minutes')::numeric, 0) * interval '1 minute'
$$;
comment on function app_hidden.step_delay(jsonb) is 'The delay of a step ({days, hours, minutes}) as an interval; none is zero.';

-- When a step due at `due` runs: moved forward into the sequence's send schedule (its own, else
-- the organization's default); with no schedule at all, when it is due.
create or replace function app_hidden.sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamptz)
returns timestamptz
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_public.send_schedules := app_hidden.sequence_send_schedule(organization_id, send_schedule_id);
begin
  if s.id is null then
    return due;
  end if;
  return coalesce(app_hidden.next_send_time(s.timezone, s.windows, due), due);
end $$;
comment on function app_hidden.sequence_next_run(uuid, uuid, timestamptz) is
  'When a step due at `due` runs: the next opening of the sequence''s send schedule (DST included), or `due` without one.';
grant execute on function app_hidden.step_delay(jsonb), app_hidden.sequence_next_run(uuid, uuid, timestamptz) to svc_request, svc_worker;

-- The one way contacts enter a sequence, set-based (a tag or a form enrolls one contact, an event
-- fired for thousands in one statement or a broadcast run many): the caller has checked what its
-- way in requires (the sequence active, the contacts at its location, the start step known).
-- Each contact gets an enrollment on the first step (or start_step_key), due `at` + the step's
-- delay, run at the next opening of the send window, an `enrolled` event, and its step's job
-- (one add_jobs call for all), in the caller's transaction. A contact already live (active or
-- paused) in the sequence is answered with that enrollment (out_enrolled false). No step at all:
-- no rows.
create or replace function app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[],
  start_step_key text default null, source text default 'manual', entry_event text default null, at timestamptz default now())
returns table (out_contact_id uuid, out_enrolled boolean, out_enrollment_id uuid)
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  s app_public.sequences;
  idx int;
  step jsonb;
  due timestamptz;
  run_at timestamptz;
  pending uuid[] := array(select distinct c from unnest(contact_ids) c where c is not null);
  answered uuid[] := '{}';
  new_ids uuid[] := '{}';
  r record;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_contacts.organization_id and x.id = enroll_contacts.sequence_id;
  if not found then
    raise exception 'enroll_contacts: no sequence %', enroll_contacts.sequence_id;
  end if;
  if start_step_key is null then
    idx := 0;
  else
    select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = start_step_key limit 1;
  end if;
  step := s.steps->idx;
  if step is null then
    return;
  end if;
  due := at + app_hidden.step_delay(step);
  run_at := app_hidden.sequence_next_run(enroll_contacts.organization_id, s.send_schedule_id, due);
  while cardinality(pending) > 0 loop
    for r in
      with ins as (
        insert into app_public.enrollments as x (organization_id, sequence_id, contact_id, status, current_step_index,
          current_step_key, next_step_due_at, next_run_at, source, entry_event, created_at, updated_at)
        select enroll_contacts.organization_id, enroll_contacts.sequence_id, c, 'active', idx, step->>'step_key', due, run_at,
               enroll_contacts.source, enroll_contacts.entry_event, at, at
          from unnest(pending) c
        on conflict (organization_id, sequence_id, contact_id) where status in ('active', 'paused') do nothing
        returning x.id, x.contact_id
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, at, step_key, reason)
        select enroll_contacts.organization_id, ins.id, 'enrolled', at, step->>'step_key', enroll_contacts.source from ins
      )
      select ins.id, ins.contact_id from ins
    loop
      new_ids := new_ids || r.id;
      answered := answered || r.contact_id;
      out_contact_id := r.contact_id; out_enrolled := true; out_enrollment_id := r.id;
      return next;
    end loop;
    pending := array(select c from unnest(pending) c where not c = any(answered));
    exit when cardinality(pending) = 0;
    -- those that conflicted: the live enrollment (committed by now), one index probe each
    for r in
      select x.id, x.contact_id from unnest(pending) c
        join app_public.enrollments x on x.organization_id = enroll_contacts.organization_id
         and x.sequence_id = enroll_contacts.sequence_id and x.contact_id = c and x.status in ('active', 'paused')
    loop
      answered := answered || r.contact_id;
      out_contact_id := r.contact_id; out_enrolled := false; out_enrollment_id := r.id;
      return next;
    end loop;
    -- a live enrollment that ended between the two: try those again
    pending := array(select c from unnest(pending) c where not c = any(answered));
  end loop;
  if cardinality(new_ids) > 0 then
    perform app_private.schedule_enrollment_steps(enroll_contacts.organization_id, new_ids);
  end if;
end $$;
comment on function app_private.enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamptz) is
  'Enrolls contacts (the one core of every way in, set-based): enrollment on the first or given step, due at + delay, run in '
  'the send window, enrolled event, jobs scheduled in one call; a contact already live answers its enrollment (not enrolled).';
revoke execute on function app_private.enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamptz) from public;

-- One contact: {status: enrolled, enrollment} or {status: skipped, reason: already_enrolled,
-- enrollment} (no_steps without a step).
create or replace function app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid,
  start_step_key text default null, source text default 'manual', entry_event text default null, at timestamptz default now())
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r record;
  e app_public.enrollments;
begin
  select * into r from app_private.enroll_contacts(organization_id, sequence_id, array[contact_id], start_step_key, source,
    entry_event, at);
  if not found then
    return jsonb_build_object('status', 'skipped', 'reason', 'no_steps');
  end if;
  select * into e from app_public.enrollments x where x.organization_id = enroll_contact.organization_id and x.id = r.out_enrollment_id;
  return case when r.out_enrolled then jsonb_build_object('status', 'enrolled', 'enrollment', app_hidden.enrollment_json(e))
              else jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e)) end;
end $$;
comment on function app_private.enroll_contact(uuid, uuid, uuid, text, text, text, timestamptz) is
  'Enrolls one contact through app_private.enroll_contacts; answers {status: enrolled|skipped, reason?, enrollment}.';
revoke execute on function app_private.enroll_contact(uuid, uuid, uuid, text, text, text, timestamptz) from public;

-- The write half of sequences_enroll, run as the owner once the caller's own policies found the
-- sequence and the contact: checks again that the credential may write the sequence, then the
-- state rules (409) and the location rule, and enrolls.
create or replace function app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  e app_public.enrollments;
begin
  select * into s from app_public.sequences x where x.organization_id = org and x.id = sequences_enroll_write.sequence_id;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not enroll contacts in this sequence');
  end if;
  -- Enrolling again while active or paused (the spec's enrollment table) answers the existing
  -- enrollment, before the sequence's own state: a contact held in a paused sequence is skipped
  -- as already enrolled, not refused as if it were new.
  select * into e from app_public.enrollments x
   where x.organization_id = org and x.sequence_id = s.id and x.contact_id = sequences_enroll_write.contact_id
     and x.status in ('active', 'paused');
  if found then
    return jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e));
  end if;
  if s.status = 'inactive' then
    perform app_hidden.raise_error(409, 'sequence_inactive', 'The sequence is not active; activate it first');
  elsif s.status = 'paused' then
    perform app_hidden.raise_error(409, 'sequence_paused', 'The sequence is paused; resume it first');
  end if;
  if s.location_id is not null and not exists (
      select 1 from app_public.contact_locations cl
       where cl.organization_id = org and cl.contact_id = sequences_enroll_write.contact_id and cl.location_id = s.location_id) then
    perform app_hidden.raise_error(409, 'contact_not_at_location',
      'The sequence belongs to a location and the contact is not linked to it');
  end if;
  return app_private.enroll_contact(org, s.id, sequences_enroll_write.contact_id, start_step_key, 'manual', null);
end $$;
comment on function app_hidden.sequences_enroll_write(uuid, uuid, text) is
  'sequences_enroll''s write as the owner: the credential may write the sequence; a live enrollment answers skipped '
  '(already_enrolled); 409 sequence_inactive, sequence_paused, contact_not_at_location; then app_private.enroll_contact.';
grant execute on function app_hidden.sequences_enroll_write(uuid, uuid, text) to svc_request;

create or replace function app_public.sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text)
returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  s record;
  who uuid;
begin
  -- read as the caller: a sequence or contact out of reach is absent (404)
  select x.id, x.kind, x.location_id, x.steps into s from app_public.sequences x
   where x.organization_id = org and x.id = sequences_enroll.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  if not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'This sequence belongs to the whole organization; a manager enrolls only in sequences of its own locations');
  end if;
  if (sequences_enroll.contact_id is null) = (sequences_enroll.email is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'body: send exactly one of contact_id or email');
  end if;
  if s.kind = 'broadcast' then
    perform app_hidden.raise_error(400, 'bad_request',
      'A broadcast takes its contacts from its audience when its schedule fires; it cannot be enrolled into');
  end if;
  if start_step_key is not null
     and not exists (select 1 from jsonb_array_elements(s.steps) v where v->>'step_key' = start_step_key) then
    perform app_hidden.raise_error(400, 'bad_request', 'body.start_step_key: the sequence has no step "' || left(start_step_key, 100) || '"');
  end if;
  if sequences_enroll.email is not null then
    select c.id into who from app_public.contacts c where c.organization_id = org and c.email_key = lower(sequences_enroll.email);
  else
    select c.id into who from app_public.contacts c where c.organization_id = org and c.id = sequences_enroll.contact_id;
  end if;
  if who is null then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return app_hidden.sequences_enroll_write(s.id, who, start_step_key);
end $$;
comment on function app_public.sequences_enroll(uuid, uuid, text, text) is
  'sequences_enroll: enrolls one contact (by id or email) in an active automation; answers {status: enrolled|skipped, reason?, '
  'enrollment}. 400 neither/both identifiers, unknown start step, broadcast; 404 sequence or contact; 409 sequence_inactive, '
  'sequence_paused, contact_not_at_location; 403 for a manager on an organization-wide sequence.';
grant execute on function app_public.sequences_enroll(uuid, uuid, text, text) to svc_request;

reset role;

--! split: 310-sequences-engine-step.sql
-- Running one due step of an enrollment (task sequence_step, src/sequences/sequence_step.ts).
--
-- Each (enrollment, step) is at most one step run (unique). A message is claimed in one
-- transaction (step run `sending` + the message row, app_private.sequence_step_claim), handed
-- to the transport after that commit, and its outcome recorded in a second
-- (app_private.sequence_step_record). A job that finds its step run still `sending` knows the
-- process died between hand-off and record (once the claim is five minutes old, longer than any
-- transport may hold a message): it marks the run `unknown` (with an `unknown` event) and moves
-- on; the message is never handed over again.
set local role svc_owner;

-- A sequence message whose outcome nobody recorded: the process died holding it.
alter table app_private.outgoing_messages drop constraint if exists outgoing_messages_status_check;
alter table app_private.outgoing_messages add constraint outgoing_messages_status_check
  check (status in ('queued', 'sent', 'failed', 'unknown'));

--------------------------------------------------------------------------------
-- Unsubscribe tokens
--------------------------------------------------------------------------------
-- The token in a sequence email's List-Unsubscribe URL: 32 random bytes (two v4 UUIDs' worth of
-- randomness, 244 bits), base64url, shown only in the message; the table keeps its SHA-256.
create table if not exists app_private.unsubscribe_tokens (
  token_hash bytea primary key,
  organization_id uuid not null references app_public.organizations on delete cascade,
  email text not null check (email = lower(email)),
  contact_id uuid,
  enrollment_id uuid,
  message_id uuid,
  created_at timestamptz not null default now(),
  used_at timestamptz
);
alter table app_private.unsubscribe_tokens enable row level security;
comment on table app_private.unsubscribe_tokens is
  'One-click unsubscribe tokens of sequence email (RFC 8058): the SHA-256 of the random token the URL carries, the address it '
  'suppresses, and when it was used.';

create or replace function app_private.new_unsubscribe_token(organization_id uuid, email text, contact_id uuid,
  enrollment_id uuid, message_id uuid) returns text
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  token text := rtrim(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=');
begin
  insert into app_private.unsubscribe_tokens (token_hash, organization_id, email, contact_id, enrollment_id, message_id)
  values (sha256(convert_to(token, 'UTF8')), organization_id, lower(email), contact_id, enrollment_id, message_id);
  return token;
end $$;
comment on function app_private.new_unsubscribe_token(uuid, text, uuid, uuid, uuid) is
  'A new unsubscribe token for an address (random, only its hash kept); answers the token for the URL.';
revoke execute on function app_private.new_unsubscribe_token(uuid, text, uuid, uuid, uuid) from public;

--------------------------------------------------------------------------------
-- When a contact's stage last changed
--------------------------------------------------------------------------------
-- The stage_changed exit asks whether the contact moved to a stage since it enrolled, which
-- updated_at cannot tell (any edit moves it). Set on insert and whenever stage_id changes.
alter table app_public.contacts add column if not exists stage_changed_at timestamptz not null default now();
comment on column app_public.contacts.stage_changed_at is 'When stage_id last changed (or the contact was created).';

create or replace function app_private.tg_contacts__stage_changed_at() returns trigger
language plpgsql as $$
begin
  new.stage_changed_at := now();
  return new;
end $$;
comment on function app_private.tg_contacts__stage_changed_at() is 'Stamps contacts.stage_changed_at when the stage changes.';
revoke execute on function app_private.tg_contacts__stage_changed_at() from public;
drop trigger if exists _200_stage_changed_at on app_public.contacts;
create trigger _200_stage_changed_at before update of stage_id on app_public.contacts
  for each row when (old.stage_id is distinct from new.stage_id)
  execute function app_private.tg_contacts__stage_changed_at();

--------------------------------------------------------------------------------
-- Exits and next steps
--------------------------------------------------------------------------------
-- The first exit condition of the enrollment's sequence that holds now (its type), or NULL.
-- `replied`: the enrollment has a replied event; `tag_added`: the contact carries the tag, added
-- since it enrolled; `stage_changed`: the contact moved to the stage since it enrolled
-- (contacts.stage_changed_at; a contact already on it when enrolled does not exit by another
-- edit); `condition`: app_hidden.condition_holds. Types other areas add (appointment_booked)
-- hold when the function their row names says so.
-- An area that adds an exit type (appointment_booked, …) gives its row the function that tells
-- whether it holds for an enrollment: (app_public.enrollments, the exit condition jsonb) → boolean.
alter table app_private.sequence_exit_types add column if not exists holds regprocedure;
comment on column app_private.sequence_exit_types.holds is
  'For an exit type of another area: its function (enrollment app_public.enrollments, exit jsonb) returns boolean, '
  'asked when an event arrives and before each send. NULL for the sequences'' own types, evaluated here.';

create or replace function app_private.exit_condition_holding(e app_public.enrollments, exits jsonb) returns text
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  x jsonb;
  hook text;
  held boolean;
begin
  for x in select value from jsonb_array_elements(coalesce(exits, '[]')) loop
    if x->>'type' = 'replied' then
      if exists (select 1 from app_public.enrollment_events v
                  where v.organization_id = e.organization_id and v.enrollment_id = e.id and v.type = 'replied') then
        return 'replied';
      end if;
    elsif x->>'type' = 'tag_added' then
      if exists (select 1 from app_public.contact_tags ct join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                  where ct.organization_id = e.organization_id and ct.contact_id = e.contact_id
                    and t.name = (x->>'tag')::citext and ct.created_at >= e.created_at) then
        return 'tag_added';
      end if;
    elsif x->>'type' = 'stage_changed' then
      if exists (select 1 from app_public.contacts c
                  where c.organization_id = e.organization_id and c.id = e.contact_id
                    and c.stage_id::text = x->>'stage_id' and c.stage_changed_at >= e.created_at) then
        return 'stage_changed';
      end if;
    elsif x->>'type' = 'condition' then
      if app_hidden.condition_holds(e.organization_id, e.contact_id, e.id, x->'condition') then
        return 'condition';
      end if;
    else
      -- an exit type another area added: its row names the function that tells (a catalog name,
      -- never input, so the statement is built from the catalog only)
      select format('select %I.%I($1, $2)', n.nspname, p.proname) into hook
        from app_private.sequence_exit_types t
        join pg_catalog.pg_proc p on p.oid = t.holds
        join pg_catalog.pg_namespace n on n.oid = p.pronamespace
       where t.type = x->>'type';
      if hook is not null then
        execute hook into held using e, x;
        if held then
          return x->>'type';
        end if;
      end if;
    end if;
  end loop;
  return null;
end $$;
comment on function app_private.exit_condition_holding(app_public.enrollments, jsonb) is
  'The type of the first exit condition that holds for the enrollment now (replied, tag_added, stage_changed, condition), or NULL.';
revoke execute on function app_private.exit_condition_holding(app_public.enrollments, jsonb) from public;

-- Moves an enrollment on from the step it stands on: with edges, the first edge from that step
-- whose condition holds (none: completed); without, the next step in list order (none:
-- completed). The next step is due now + its delay, run at the next opening of the send
-- window, and its job scheduled.
create or replace function app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamptz default now())
returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  e app_public.enrollments;
  s app_public.sequences;
  next_key text;
  idx int;
  step jsonb;
  due timestamptz;
  edge jsonb;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = advance_enrollment.organization_id and x.id = advance_enrollment.enrollment_id;
  if e.status <> 'active' then
    return;
  end if;
  select * into s from app_public.sequences x where x.organization_id = e.organization_id and x.id = e.sequence_id;
  if jsonb_array_length(s.edges) > 0 then
    for edge in select value from jsonb_array_elements(s.edges) loop
      if edge->>'from' = e.current_step_key
         and (edge->'condition' is null or jsonb_typeof(edge->'condition') = 'null'
              or app_hidden.condition_holds(e.organization_id, e.contact_id, e.id, edge->'condition')) then
        next_key := edge->>'to';
        exit;
      end if;
    end loop;
    if next_key is not null then
      select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = next_key limit 1;
    end if;
  else
    select t.o into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = e.current_step_key limit 1;
  end if;
  step := case when idx is not null then s.steps->idx end;
  if step is null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'completed', 'last_step');
    return;
  end if;
  due := at + app_hidden.step_delay(step);
  update app_public.enrollments x
     set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
         next_run_at = app_hidden.sequence_next_run(e.organization_id, s.send_schedule_id, due), updated_at = at
   where x.organization_id = e.organization_id and x.id = e.id;
  perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id]);
end $$;
comment on function app_private.advance_enrollment(uuid, uuid, timestamptz) is
  'Moves an active enrollment to its next step (edges: first whose condition holds; else list order), due at + delay, in the '
  'send window, job scheduled; no next step: completed.';
revoke execute on function app_private.advance_enrollment(uuid, uuid, timestamptz) from public;

-- Why a message of this channel may not go to the contact now, or NULL: missing_address,
-- suppressed (email), opted_out, no_consent (SMS). Checked at send time, whatever the checks
-- at enrollment said.
create or replace function app_private.send_refusal(organization_id uuid, channel text, address text) returns text
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if address is null or address = '' then
    return 'missing_address';
  end if;
  if channel = 'email' then
    if exists (select 1 from app_public.email_suppressions s
                where s.organization_id = send_refusal.organization_id and s.email = lower(address)) then
      return 'suppressed';
    end if;
  else
    if exists (select 1 from app_public.sms_opt_outs o
                where o.organization_id = send_refusal.organization_id and o.phone = address and o.ended_at is null) then
      return 'opted_out';
    end if;
  end if;
  return null;
end $$;
comment on function app_private.send_refusal(uuid, text, text) is
  'Why an email or SMS may not go to this address now (missing_address, suppressed, opted_out), or NULL. SMS consent is the contact''s and checked beside it.';
revoke execute on function app_private.send_refusal(uuid, text, text) from public;

-- Builds a sequence message (rendered subject and body, sender, headers, meta) and stores it
-- as an outgoing message in `queued` (no delivery job: the caller hands it over itself), or
-- `sent` when the caller stores it in the local sink in the same transaction.
-- `html` bodies have their variables HTML-escaped. Email from the organization's sending domain
-- carries Message-ID on that domain and, when `unsubscribe` is set, List-Unsubscribe with a new
-- one-click token URL and List-Unsubscribe-Post (RFC 8058).
drop function if exists app_private.build_sequence_message(uuid, app_public.sequences, jsonb, uuid, text, uuid, text, boolean);
create or replace function app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb,
  contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text default 'queued') returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org app_public.organizations;
  message_id uuid := gen_random_uuid();
  channel text := step->>'type';
  domain text;
  sender text;
  unsubscribe_url text;
  vars jsonb;
  is_html boolean := coalesce(step->>'format' = 'html', coalesce(step->>'body', '') ~* '<(html|body|p|br|div|a|table|span|strong|em)[\s/>]');
  subject text;
  body text;
  headers jsonb := '{}';
  meta jsonb;
begin
  select * into org from app_public.organizations o where o.id = build_sequence_message.organization_id;
  if channel = 'email' then
    domain := coalesce(org.sending_email_domain, 'localhost');
    sender := 'no-reply@' || domain;
    if unsubscribe then
      unsubscribe_url := rtrim(base_url, '/') || '/unsubscribe/'
        || app_private.new_unsubscribe_token(org.id, recipient, contact_id, enrollment_id, message_id);
      headers := jsonb_build_object('List-Unsubscribe', '<' || unsubscribe_url || '>',
                                    'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click');
    end if;
    headers := jsonb_build_object('Message-ID', '<' || message_id || '@' || domain || '>') || headers;
  else
    sender := coalesce((select l.sms_number from app_public.locations l
                         where l.organization_id = org.id and l.id = s.location_id), org.default_sms_number);
  end if;
  vars := coalesce(app_hidden.sequence_message_variables(org.id, contact_id, s.location_id, unsubscribe_url), '{}');
  if contact_id is null then
    vars := vars || jsonb_build_object('unsubscribe_url', unsubscribe_url);
  end if;
  subject := case when channel = 'email' then app_hidden.render_template(coalesce(step->>'subject', ''), vars, false) end;
  body := app_hidden.render_template(coalesce(step->>'body', ''), vars, channel = 'email' and is_html);
  meta := jsonb_strip_nulls(jsonb_build_object('sequence_id', s.id, 'enrollment_id', enrollment_id, 'step_key', step->>'step_key',
    'message_id', message_id, 'html', case when channel = 'email' and is_html then true end))
    || case when channel = 'email' then jsonb_build_object('headers', headers) else '{}' end;
  insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
  values (org.id, message_id, channel, sender, recipient, subject, body, meta, build_sequence_message.status,
          case when build_sequence_message.status = 'sent' then now() end);
  return jsonb_build_object('organization_id', org.id, 'id', message_id, 'channel', channel, 'sender', sender,
    'recipient', recipient, 'subject', subject, 'body', body, 'meta', meta);
end $$;
comment on function app_private.build_sequence_message(uuid, app_public.sequences, jsonb, uuid, text, uuid, text, boolean, text) is
  'Renders a sequence step''s message for a contact (variables HTML-escaped in HTML bodies), with Message-ID and one-click '
  'List-Unsubscribe headers on email, stores it queued without a delivery job, and answers it as the transports take it.';
revoke execute on function app_private.build_sequence_message(uuid, app_public.sequences, jsonb, uuid, text, uuid, text, boolean, text) from public;

--------------------------------------------------------------------------------
-- The step job
--------------------------------------------------------------------------------
-- First transaction of a step: nothing unless the enrollment is active, its sequence active,
-- and it stands on step_key. A step run already `sending` becomes `unknown` (event unknown) and
-- the enrollment moves on. Exit conditions first (completed); a wait step is `waited`; an email
-- or SMS the contact may not get now is `skipped` with the reason; otherwise the step run
-- `sending` and the message are written and the message answered for the transport.
-- Answers {action: none|done|send, message?}.
drop function if exists app_private.sequence_step_claim(uuid, uuid, text, text);
create or replace function app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text,
  sink_channels text[] default '{}')
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  e app_public.enrollments;
  s app_public.sequences;
  c app_public.contacts;
  step jsonb;
  run app_public.step_runs;
  exiting text;
  address text;
  refusal text;
  message jsonb;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = sequence_step_claim.organization_id and x.id = sequence_step_claim.enrollment_id
     for update;
  if not found or e.status <> 'active' or e.current_step_key is distinct from sequence_step_claim.step_key then
    return jsonb_build_object('action', 'none');
  end if;
  select * into s from app_public.sequences x where x.organization_id = e.organization_id and x.id = e.sequence_id;
  if s.status <> 'active' then
    return jsonb_build_object('action', 'none');
  end if;

  select * into run from app_public.step_runs r
   where r.organization_id = e.organization_id and r.enrollment_id = e.id and r.step_key = e.current_step_key;
  if found then
    -- Claimed under five minutes ago: its job may still be waiting for the transport (a resume
    -- scheduled a second job for the enrollment meanwhile). The transports give up well within
    -- that (SMTP 20 s idle, HTTP 15 s), so look again once it has passed.
    if run.status = 'sending' and run.updated_at > now() - interval '5 minutes' then
      update app_public.enrollments x set next_run_at = run.updated_at + interval '5 minutes'
       where x.organization_id = e.organization_id and x.id = e.id;
      perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id]);
      return jsonb_build_object('action', 'none');
    end if;
    if run.status = 'sending' then
      update app_public.step_runs r set status = 'unknown', reason = 'interrupted', updated_at = now()
       where r.organization_id = run.organization_id and r.id = run.id;
      update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
       where m.organization_id = run.organization_id and m.id = run.message_id and m.status = 'queued';
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
      values (e.organization_id, e.id, 'unknown', run.step_key, run.message_id, 'interrupted');
    end if;
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  exiting := case when jsonb_array_length(s.exit_conditions) > 0 then app_private.exit_condition_holding(e, s.exit_conditions) end;
  if exiting is not null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'completed', 'exit_condition:' || exiting);
    return jsonb_build_object('action', 'done');
  end if;

  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = e.current_step_key limit 1;
  if step is null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'failed', 'step_removed');
    return jsonb_build_object('action', 'done');
  end if;

  if step->>'type' not in ('email', 'sms') then
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status)
    values (e.organization_id, e.id, e.current_step_key, 'wait', 'waited');
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  select * into c from app_public.contacts x where x.organization_id = e.organization_id and x.id = e.contact_id;
  address := case step->>'type' when 'email' then c.email::text else c.phone end;
  refusal := app_private.send_refusal(e.organization_id, step->>'type', address);
  if refusal is null and step->>'type' = 'sms' and not c.sms_consent then
    refusal := 'no_consent';
  end if;
  if refusal is not null then
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
    values (e.organization_id, e.id, e.current_step_key, step->>'type', 'skipped', refusal);
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    values (e.organization_id, e.id, 'skipped', e.current_step_key, refusal);
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  if step->>'type' = any(sink_channels) then
    -- The local sink is a table: nothing leaves the database, so storing the message and
    -- recording it sent commit together (exactly once). Should a crash lose the commit, nothing
    -- happened and the job runs again; so it need not wait for the disk.
    perform set_config('synchronous_commit', 'off', true);
    message := app_private.build_sequence_message(e.organization_id, s, step, c.id, address, e.id, base_url, true, 'sent');
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    values (e.organization_id, (message->>'id')::uuid, message->>'channel', message->>'sender', message->>'recipient',
            message->>'subject', message->>'body', message->'meta');
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
    values (e.organization_id, e.id, e.current_step_key, step->>'type', 'sent', (message->>'id')::uuid);
    -- the sink reports every message delivered as it stores it (sequences.md, Analytics)
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
    values (e.organization_id, e.id, 'sent', e.current_step_key, (message->>'id')::uuid),
           (e.organization_id, e.id, 'delivered', e.current_step_key, (message->>'id')::uuid);
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;
  message := app_private.build_sequence_message(e.organization_id, s, step, c.id, address, e.id, base_url, true);
  insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
  values (e.organization_id, e.id, e.current_step_key, step->>'type', 'sending', (message->>'id')::uuid);
  return jsonb_build_object('action', 'send', 'message', message);
end $$;
comment on function app_private.sequence_step_claim(uuid, uuid, text, text, text[]) is
  'First transaction of a sequence step: checks, exits, waits, skips (with reason) or claims the message (step run sending); '
  'a step run found sending becomes unknown; on a channel of sink_channels the message is stored and recorded at once. '
  'Answers {action: none|done|send, message?}.';
revoke execute on function app_private.sequence_step_claim(uuid, uuid, text, text, text[]) from public;

-- Second transaction: what the transport answered (error NULL: accepted). The step run and the
-- message become sent or failed, with the event; the enrollment moves on either way (a message
-- the transport refused is not tried again: a refusal after a timeout may still have gone out).
-- `sink`: the local sink is a table, so its outbox row is written here, with the record.
-- The commit need not wait for the disk: should a crash lose it, the step run stays `sending`
-- and becomes `unknown` (the sink's row is lost with it); nothing is sent twice.
drop function if exists app_private.sequence_step_record(uuid, uuid, text, uuid, text);
create or replace function app_private.sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text,
  message_id uuid, error text, sink boolean default false) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  e app_public.enrollments;
  ok boolean := sequence_step_record.error is null;
begin
  perform set_config('synchronous_commit', 'off', true);
  select * into e from app_public.enrollments x
   where x.organization_id = sequence_step_record.organization_id and x.id = sequence_step_record.enrollment_id
     for update;
  update app_public.step_runs r
     set status = case when ok then 'sent' else 'failed' end, reason = left(sequence_step_record.error, 500), updated_at = now()
   where r.organization_id = sequence_step_record.organization_id and r.enrollment_id = sequence_step_record.enrollment_id
     and r.step_key = sequence_step_record.step_key and r.message_id = sequence_step_record.message_id and r.status = 'sending';
  if not found then
    return; -- recorded already (unknown, by a job that thought this one dead)
  end if;
  update app_private.outgoing_messages m
     set status = case when ok then 'sent' else 'failed' end, sent_at = case when ok then now() end,
         error = left(sequence_step_record.error, 1000)
   where m.organization_id = sequence_step_record.organization_id and m.id = sequence_step_record.message_id;
  if sink and ok then
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    select m.organization_id, m.id, m.channel, m.sender, m.recipient, m.subject, m.body, m.meta
      from app_private.outgoing_messages m
     where m.organization_id = sequence_step_record.organization_id and m.id = sequence_step_record.message_id
    on conflict do nothing;
  end if;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
  values (sequence_step_record.organization_id, sequence_step_record.enrollment_id,
          case when ok then 'sent' else 'failed' end, sequence_step_record.step_key, sequence_step_record.message_id,
          case when not ok then 'transport_error' end);
  if e.status = 'active' and e.current_step_key = sequence_step_record.step_key then
    perform app_private.advance_enrollment(e.organization_id, e.id);
  end if;
end $$;
comment on function app_private.sequence_step_record(uuid, uuid, text, uuid, text, boolean) is
  'Second transaction of a sequence step: records sent or failed (step run, message, event; with sink, the outbox row) and '
  'moves the enrollment on. Commits without waiting for the disk: a lost record leaves the run sending, later unknown.';
revoke execute on function app_private.sequence_step_record(uuid, uuid, text, uuid, text, boolean) from public;

reset role;

--! split: 320-sequences-engine-triggers.sql
-- How contacts enter and leave sequences without sequences_enroll: events of contacts_upsert
-- (through the contacts area's extension point, app_private.event_subscriptions and
-- contact_events: db/README.md, Extension points), tags added to a contact, exits checked when
-- the event arrives, and suppressions cancelling the sequences of their channel. Every trigger
-- acts in the transaction of the write that caused it, so a receipt of contacts_upsert
-- (`accepted`) means the enrollment is committed.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Subscriptions follow the sequences
--------------------------------------------------------------------------------
-- An active automation with an event trigger subscribes to its event (with its
-- assessmentAudience filter for assessment_abandoned); any other state or trigger subscribes to
-- nothing. Kept by a trigger on the table, so every way a sequence changes (activate, pause,
-- update, deactivate) keeps it right.
-- A location-bound sequence takes only contacts linked to its location: its subscription says
-- so, and an event of a contact elsewhere finds no subscriber (receipt no_subscriber, key
-- unspent), instead of an `accepted` that enrolls nobody.
alter table app_private.event_subscriptions add column if not exists location_id uuid;
comment on column app_private.event_subscriptions.location_id is
  'The subscriber takes only contacts linked to this location (NULL: any contact of the organization).';

create or replace function app_private.tg_sequences__subscriptions() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  wanted text := case when new.status = 'active' and new.kind = 'automation' and new.trigger->>'type' = 'event'
                       and coalesce(new.trigger->>'event', '') ~ '^[a-z][a-z0-9_]{0,99}$' then new.trigger->>'event' end;
  audience text := case when new.trigger->>'event' = 'assessment_abandoned'
                         and new.trigger->>'assessmentAudience' in ('started', 'never_started') then new.trigger->>'assessmentAudience' end;
begin
  delete from app_private.event_subscriptions es
   where es.organization_id = new.organization_id and es.subscriber_kind = 'sequence' and es.subscriber_id = new.id
     and es.event is distinct from wanted;
  if wanted is not null then
    insert into app_private.event_subscriptions (organization_id, event, subscriber_kind, subscriber_id, assessment_audience,
                                                 location_id)
    values (new.organization_id, wanted, 'sequence', new.id, audience, new.location_id)
    on conflict (organization_id, event, subscriber_kind, subscriber_id)
    do update set assessment_audience = excluded.assessment_audience, location_id = excluded.location_id;
  end if;
  return null;
end $$;
comment on function app_private.tg_sequences__subscriptions() is
  'Keeps the sequence''s row of app_private.event_subscriptions: present while it is an active automation with an event trigger.';
revoke execute on function app_private.tg_sequences__subscriptions() from public;
drop trigger if exists _500_subscriptions on app_public.sequences;
create trigger _500_subscriptions after insert or update of status, kind, trigger, location_id on app_public.sequences
  for each row execute function app_private.tg_sequences__subscriptions();

create or replace function app_private.tg_sequences__unsubscribe() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  delete from app_private.event_subscriptions es
   where es.organization_id = old.organization_id and es.subscriber_kind = 'sequence' and es.subscriber_id = old.id;
  return null;
end $$;
comment on function app_private.tg_sequences__unsubscribe() is 'Drops the subscription of a deleted sequence.';
revoke execute on function app_private.tg_sequences__unsubscribe() from public;
drop trigger if exists _500_unsubscribe on app_public.sequences;
create trigger _500_unsubscribe after delete on app_public.sequences
  for each row execute function app_private.tg_sequences__unsubscribe();

--------------------------------------------------------------------------------
-- Entering: events and tags
--------------------------------------------------------------------------------
-- Enrolls the contact in an automation a trigger chose, if it is still active and the contact
-- is linked to its location (a location-bound sequence takes only those); already live in it:
-- nothing new (enroll_contact answers skipped).
create or replace function app_private.enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text,
  entry_event text) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_by_trigger.organization_id and x.id = enroll_by_trigger.sequence_id;
  if not found or s.status <> 'active' or s.kind <> 'automation' or jsonb_array_length(s.steps) = 0 then
    return;
  end if;
  if s.location_id is not null and not exists (
      select 1 from app_public.contact_locations cl
       where cl.organization_id = s.organization_id and cl.contact_id = enroll_by_trigger.contact_id and cl.location_id = s.location_id) then
    return;
  end if;
  perform app_private.enroll_contact(s.organization_id, s.id, enroll_by_trigger.contact_id, null, source, entry_event);
end $$;
comment on function app_private.enroll_by_trigger(uuid, uuid, uuid, text, text) is
  'Enrolls a contact a trigger chose, when the sequence is an active automation with steps and the contact is at its location.';
revoke execute on function app_private.enroll_by_trigger(uuid, uuid, uuid, text, text) from public;

-- The listener of contacts_upsert's events, once per statement over the rows it inserted (an
-- upsert inserts one row per event; a bulk load thousands): `cancel` rows cancel the contacts'
-- live enrollments that entered by that event; `fire` rows enroll each contact in each active
-- automation among the subscriptions it matched (a location-bound one only contacts linked to
-- its location), one enroll_contacts call per (sequence, event).
drop trigger if exists _500_sequences on app_private.contact_events;
drop function if exists app_private.tg_contact_events__sequences();
create or replace function app_private.tg_contact_events__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  g record;
begin
  for g in
    select f.organization_id, f.event, array_agg(distinct e.id) as ids
      from inserted f
      join app_public.enrollments e on e.organization_id = f.organization_id and e.contact_id = f.contact_id
       and e.entry_event = f.event and e.status in ('active', 'paused')
     where f.kind = 'cancel'
     group by f.organization_id, f.event
  loop
    perform app_private.end_enrollments(g.organization_id, g.ids, 'cancelled', 'cancel_event:' || g.event);
  end loop;
  for g in
    select f.organization_id, s.id as sequence_id, f.event, array_agg(distinct f.contact_id) as contacts
      from inserted f
      join app_private.event_subscriptions es on es.organization_id = f.organization_id and es.id = any(f.subscription_ids)
       and es.subscriber_kind = 'sequence'
      join app_public.sequences s on s.organization_id = f.organization_id and s.id = es.subscriber_id
       and s.status = 'active' and s.kind = 'automation'
     where f.kind = 'fire'
       and (s.location_id is null or exists (
             select 1 from app_public.contact_locations cl
              where cl.organization_id = f.organization_id and cl.contact_id = f.contact_id and cl.location_id = s.location_id))
     group by f.organization_id, s.id, f.event
     order by f.organization_id, s.id, f.event
  loop
    perform count(*) from app_private.enroll_contacts(g.organization_id, g.sequence_id, g.contacts, null, 'event', g.event);
  end loop;
  return null;
end $$;
comment on function app_private.tg_contact_events__sequences() is
  'Sequences'' listener of contacts_upsert events, per statement: cancel rows cancel the contacts'' enrollments that entered '
  'by that event; fire rows enroll them in the subscribed sequences.';
revoke execute on function app_private.tg_contact_events__sequences() from public;
create trigger _500_sequences after insert on app_private.contact_events
  referencing new table as inserted
  for each statement execute function app_private.tg_contact_events__sequences();

-- Ends the contact's live enrollments whose exit conditions hold now (completed, with the exit
-- as reason): run when something an exit looks at arrives (a tag, a change of the contact).
create or replace function app_private.check_contact_exits(organization_id uuid, contact_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r record;
  exiting text;
begin
  for r in
    select e as enrollment, s.exit_conditions from app_public.enrollments e
      join app_public.sequences s on s.organization_id = e.organization_id and s.id = e.sequence_id
     where e.organization_id = check_contact_exits.organization_id and e.contact_id = check_contact_exits.contact_id
       and e.status in ('active', 'paused') and jsonb_array_length(s.exit_conditions) > 0
  loop
    exiting := app_private.exit_condition_holding(r.enrollment, r.exit_conditions);
    if exiting is not null then
      perform app_private.end_enrollments(check_contact_exits.organization_id, array[(r.enrollment).id], 'completed',
        'exit_condition:' || exiting);
    end if;
  end loop;
end $$;
comment on function app_private.check_contact_exits(uuid, uuid) is
  'Completes the contact''s live enrollments whose exit conditions hold now; run when a tag or a change of the contact arrives.';
revoke execute on function app_private.check_contact_exits(uuid, uuid) from public;

-- A tag added to a contact: exits on it, then automations triggered by it.
create or replace function app_private.tg_contact_tags__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  tag_name citext;
  s record;
begin
  select t.name into tag_name from app_public.tags t where t.organization_id = new.organization_id and t.id = new.tag_id;
  perform app_private.check_contact_exits(new.organization_id, new.contact_id);
  for s in
    select x.id from app_public.sequences x
     where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
       and x.trigger->>'type' = 'tag_added' and (x.trigger->>'tag')::citext = tag_name
     order by x.id
  loop
    perform app_private.enroll_by_trigger(new.organization_id, s.id, new.contact_id, 'tag_added', null);
  end loop;
  return null;
end $$;
comment on function app_private.tg_contact_tags__sequences() is
  'A tag added to a contact: completes enrollments whose exit it is, and enrolls the contact in active automations triggered by it.';
revoke execute on function app_private.tg_contact_tags__sequences() from public;
drop trigger if exists _500_sequences on app_public.contact_tags;
create trigger _500_sequences after insert on app_public.contact_tags
  for each row execute function app_private.tg_contact_tags__sequences();

-- A change of the contact (its stage, its fields): exits on it. Cheap when the contact is in no
-- sequence (one index probe).
create or replace function app_private.tg_contacts__sequence_exits() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if exists (select 1 from app_public.enrollments e
              where e.organization_id = new.organization_id and e.contact_id = new.id and e.status in ('active', 'paused')) then
    perform app_private.check_contact_exits(new.organization_id, new.id);
  end if;
  return null;
end $$;
comment on function app_private.tg_contacts__sequence_exits() is
  'A contact''s stage or fields changed: completes its live enrollments whose exit conditions now hold.';
revoke execute on function app_private.tg_contacts__sequence_exits() from public;
drop trigger if exists _500_sequence_exits on app_public.contacts;
create trigger _500_sequence_exits after update of stage_id, field_values, name, email, phone on app_public.contacts
  for each row when (old.stage_id is distinct from new.stage_id or old.field_values is distinct from new.field_values
                     or old.name is distinct from new.name or old.email is distinct from new.email or old.phone is distinct from new.phone)
  execute function app_private.tg_contacts__sequence_exits();

--------------------------------------------------------------------------------
-- Leaving: suppressions
--------------------------------------------------------------------------------
-- The triggers run before insert: contacts_suppress inserts with ON CONFLICT DO NOTHING, so an
-- address already suppressed (a contact enrolled after its suppression) inserts nothing, and
-- only a before-insert trigger sees every suppression asked for. A refused insert rolls the
-- whole write back, the cancellations with it.
-- Cancels ('suppressed') the live enrollments of the contacts listed in sequences that send on
-- the channel (an email step for email, an SMS step for sms).
create or replace function app_private.cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text)
returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  select count(*) from app_private.end_enrollments(organization_id, array(
    select e.id from app_public.enrollments e
      join app_public.sequences s on s.organization_id = e.organization_id and s.id = e.sequence_id
     where e.organization_id = cancel_channel_enrollments.organization_id and e.contact_id = any(contact_ids)
       and e.status in ('active', 'paused')
       and exists (select 1 from jsonb_array_elements(s.steps) v where v->>'type' = channel)), 'cancelled', 'suppressed');
$$;
comment on function app_private.cancel_channel_enrollments(uuid, uuid[], text) is
  'Cancels (reason suppressed) the contacts'' live enrollments in sequences with a step on the channel.';
revoke execute on function app_private.cancel_channel_enrollments(uuid, uuid[], text) from public;

create or replace function app_private.tg_email_suppressions__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform app_private.cancel_channel_enrollments(new.organization_id, array(
    select c.id from app_public.contacts c where c.organization_id = new.organization_id and c.email_key = new.email
    union select new.contact_id), 'email');
  return new;
end $$;
comment on function app_private.tg_email_suppressions__sequences() is 'An address suppressed: its contacts'' email sequences are cancelled.';
revoke execute on function app_private.tg_email_suppressions__sequences() from public;
drop trigger if exists _500_sequences on app_public.email_suppressions;
create trigger _500_sequences before insert on app_public.email_suppressions
  for each row execute function app_private.tg_email_suppressions__sequences();

create or replace function app_private.tg_sms_opt_outs__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform app_private.cancel_channel_enrollments(new.organization_id, array(
    select c.id from app_public.contacts c where c.organization_id = new.organization_id and c.phone = new.phone
    union select new.contact_id), 'sms');
  return new;
end $$;
comment on function app_private.tg_sms_opt_outs__sequences() is 'A number opted out: its contacts'' SMS sequences are cancelled.';
revoke execute on function app_private.tg_sms_opt_outs__sequences() from public;
drop trigger if exists _500_sequences on app_public.sms_opt_outs;
create trigger _500_sequences before insert on app_public.sms_opt_outs
  for each row execute function app_private.tg_sms_opt_outs__sequences();

reset role;

--! split: 325-event_subscribers-by-location.sql
-- app_private.event_subscribers (000013) restated with the contact: a subscription bound to a
-- location (app_private.event_subscriptions.location_id, which the sequences keep) reaches only
-- contacts linked to that location. An event of a contact that no subscription can take gets
-- the receipt no_subscriber and leaves its key unspent, as the spec says of an event nobody
-- subscribes to; before, it was `accepted` and enrolled nobody. app_hidden.contacts_process_events
-- is restated whole for the one changed call each.
set local role svc_owner;

alter table app_private.event_subscriptions add column if not exists location_id uuid;

create or replace function app_private.event_subscribers(event text, fields jsonb, count_filter boolean, contact_id uuid)
returns uuid[]
language plpgsql stable
set search_path to pg_catalog, public, pg_temp as $$
declare
  answers numeric := case jsonb_typeof(fields->'user_message_count') when 'number' then (fields->>'user_message_count')::numeric end;
begin
  return array(
    select s.id from app_private.event_subscriptions s
     where s.organization_id = app_hidden.current_org_id() and s.event = event_subscribers.event
       and (not count_filter or s.assessment_audience is null
            or (s.assessment_audience = 'started' and answers > 0)
            or (s.assessment_audience = 'never_started' and answers = 0))
       and (s.location_id is null or exists (
             select 1 from app_public.contact_locations cl
              where cl.organization_id = s.organization_id and cl.contact_id = event_subscribers.contact_id
                and cl.location_id = s.location_id))
     order by s.id);
end $$;
comment on function app_private.event_subscribers(text, jsonb, boolean, uuid) is
  'Subscriptions of the current organization to an event that can take this contact (a location-bound one only a contact '
  'linked to its location); with count_filter, those whose assessment_audience the fields'' user_message_count meets.';
revoke execute on function app_private.event_subscribers(text, jsonb, boolean, uuid) from public;

create or replace function app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  given jsonb := coalesce(fields, '{}');
  cancelled text;
  e jsonb;
  subscribers uuid[];
  receipt jsonb;
  answer jsonb := '{}';
begin
  if org is null or not app_hidden.current_reaches_all_locations() or app_hidden.current_records_level() <> 'all'
     or not app_hidden.current_has_power('contacts') then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Upserting contacts needs a credential that reaches the whole organization with the contacts power');
  end if;
  if not exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = contacts_process_events.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;

  for cancelled in select value from jsonb_array_elements_text(coalesce(cancel_events, '[]')) loop
    subscribers := app_private.event_subscribers(cancelled, given, false, contacts_process_events.contact_id);
    if cardinality(subscribers) > 0 then
      insert into app_private.contact_events (organization_id, contact_id, kind, event, fields, subscription_ids)
      values (org, contacts_process_events.contact_id, 'cancel', cancelled, given, subscribers);
    end if;
  end loop;

  for e in select value from jsonb_array_elements(coalesce(events, '[]')) loop
    receipt := null;
    if e->>'key' is not null then
      select ce.receipt into receipt from app_private.contact_events ce
       where ce.organization_id = org and ce.kind = 'fire' and ce.event = e->>'name' and ce.key = e->>'key';
    end if;
    if receipt is null then
      subscribers := app_private.event_subscribers(e->>'name', given, true, contacts_process_events.contact_id);
      if cardinality(subscribers) = 0 then
        receipt := jsonb_build_object('status', 'no_subscriber', 'key', e->>'key');
      elsif e->>'key' is null then
        receipt := jsonb_build_object('status', 'legacy_unverified', 'key', null);
        insert into app_private.contact_events (organization_id, contact_id, kind, event, fields, subscription_ids, receipt)
        values (org, contacts_process_events.contact_id, 'fire', e->>'name', given, subscribers, receipt);
      else
        insert into app_private.contact_events (organization_id, contact_id, kind, event, key, fields, subscription_ids, receipt)
        values (org, contacts_process_events.contact_id, 'fire', e->>'name', e->>'key', given, subscribers,
                jsonb_build_object('status', 'accepted', 'key', e->>'key'))
        on conflict (organization_id, event, key) where kind = 'fire' and key is not null do nothing
        returning contact_events.receipt into receipt;
        -- a concurrent upsert accepted the same key first (and has committed)
        if receipt is null then
          select ce.receipt into receipt from app_private.contact_events ce
           where ce.organization_id = org and ce.kind = 'fire' and ce.event = e->>'name' and ce.key = e->>'key';
        end if;
      end if;
    end if;
    if e->>'name' = 'assessment_abandoned' and not answer ? 'assessmentAbandonment' then
      answer := jsonb_build_object('assessmentAbandonment', receipt);
    end if;
  end loop;
  return answer;
end $$;
comment on function app_hidden.contacts_process_events(uuid, jsonb, jsonb, jsonb) is
  'Processes the cancel_events, then the events, of a contacts_upsert against app_private.event_subscriptions, '
  'recording what some subscription takes in app_private.contact_events; answers receipts to merge into its response '
  '(assessmentAbandonment: accepted, no_subscriber, legacy_unverified).';

drop function if exists app_private.event_subscribers(text, jsonb, boolean);

reset role;

--! split: 330-sequences-engine-unsubscribe.sql
-- One-click unsubscribe (RFC 8058) from sequence email: GET /unsubscribe/<token> shows a
-- confirmation page, POST suppresses the address (email channel), which cancels its email
-- sequences (the suppression trigger of 320). No sign-in: the token is the authority. It is 32
-- random bytes made when the message was built; only its SHA-256 is stored
-- (app_private.unsubscribe_tokens), so the table cannot be turned back into working links.
-- Both functions run with no claims (the page has no credential) and reach one organization's
-- row through the token alone.
set local role svc_owner;

create or replace function app_hidden.unsubscribe_token_row(token text) returns app_private.unsubscribe_tokens
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  t app_private.unsubscribe_tokens;
begin
  if token is null or token !~ '^[A-Za-z0-9_-]{20,100}$' then
    return null;
  end if;
  select * into t from app_private.unsubscribe_tokens x where x.token_hash = sha256(convert_to(token, 'UTF8'));
  return t;
end $$;
revoke execute on function app_hidden.unsubscribe_token_row(text) from public;

-- The address shown on the page, partly hidden (a@… of a forwarded message tells a stranger little).
create or replace function app_hidden.mask_email(email text) returns text
language sql immutable as $$
  select left(split_part(email, '@', 1), 1) || '…@' || split_part(email, '@', 2)
$$;
revoke execute on function app_hidden.mask_email(text) from public;

create or replace function app_hidden.unsubscribe_lookup(token text) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  t app_private.unsubscribe_tokens := app_hidden.unsubscribe_token_row(token);
begin
  if t.token_hash is null then
    return null;
  end if;
  return jsonb_build_object(
    'organization', (select o.name from app_public.organizations o where o.id = t.organization_id),
    'email', app_hidden.mask_email(t.email),
    'unsubscribed', exists (select 1 from app_public.email_suppressions s where s.organization_id = t.organization_id and s.email = t.email));
end $$;
comment on function app_hidden.unsubscribe_lookup(text) is
  'What the unsubscribe page shows for a token: the organization''s name, the address (masked), whether it is suppressed; NULL for an unknown token.';

create or replace function app_hidden.unsubscribe_confirm(token text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  t app_private.unsubscribe_tokens := app_hidden.unsubscribe_token_row(token);
  contact uuid;
begin
  if t.token_hash is null then
    return null;
  end if;
  select c.id into contact from app_public.contacts c where c.organization_id = t.organization_id and c.email_key = t.email;
  contact := coalesce(contact, t.contact_id);
  if contact is not null then
    -- the first record of an address is kept (contacts_suppress's rule)
    insert into app_public.email_suppressions (organization_id, email, contact_id, source)
    values (t.organization_id, t.email, contact, 'unsubscribe')
    on conflict do nothing;
    perform app_private.cancel_channel_enrollments(t.organization_id, array[contact], 'email');
  end if;
  update app_private.unsubscribe_tokens x set used_at = coalesce(x.used_at, now()) where x.token_hash = t.token_hash;
  -- an address no contact carries (a test send to its author) is on no list: nothing to record
  return jsonb_build_object('organization', (select o.name from app_public.organizations o where o.id = t.organization_id),
                            'email', app_hidden.mask_email(t.email), 'unsubscribed', contact is not null);
end $$;
comment on function app_hidden.unsubscribe_confirm(text) is
  'One-click unsubscribe: suppresses the token''s address (source unsubscribe; the first record kept) and cancels its email '
  'enrollments; unsubscribed false for an address no contact carries (nothing to record); NULL for an unknown token. Safe to repeat.';

grant execute on function app_hidden.unsubscribe_lookup(text), app_hidden.unsubscribe_confirm(text) to svc_request;

reset role;

--! split: 340-sequences-engine-test-step.sql
-- sequences_test_step: sends the saved step once, now, to an address or a contact, outside any
-- enrollment, so an author sees what recipients will get. The same renderer and the same
-- send-time checks as the engine (app_private.build_sequence_message, send_refusal): a refused
-- send answers {success: false, reason_code} rather than an error, since the request was
-- valid and nothing went out.
set local role svc_owner;

create or replace function app_hidden.sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid,
  base_url text, sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  step jsonb;
  c app_public.contacts;
  channel text;
  refusal text;
  message jsonb;
begin
  select * into s from app_public.sequences x where x.organization_id = org and x.id = sequences_test_step_send.sequence_id;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not send this sequence''s steps');
  end if;
  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = sequences_test_step_send.step_key limit 1;
  channel := step->>'type';
  if sequences_test_step_send.contact_id is not null then
    select * into c from app_public.contacts x where x.organization_id = org and x.id = sequences_test_step_send.contact_id;
    address := case channel when 'email' then c.email::text else c.phone end;
  elsif channel = 'email' then
    select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(address);
  else
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = address;
  end if;
  refusal := app_private.send_refusal(org, channel, address);
  -- a number no contact carries is the author's own: only a contact's missing consent refuses
  if refusal is null and channel = 'sms' and c.id is not null and not c.sms_consent then
    refusal := 'no_consent';
  end if;
  if refusal is not null then
    return jsonb_build_object('success', false, 'reason_code', refusal, 'error', case refusal
      when 'missing_address' then 'The contact has no ' || case channel when 'email' then 'email address' else 'phone number' end
      when 'suppressed' then 'The address is suppressed: no email goes to it'
      when 'opted_out' then 'The number opted out of SMS'
      else 'The contact has not consented to SMS' end);
  end if;
  message := app_private.build_sequence_message(org, s, step, c.id, address, null, base_url, channel = 'email');
  message := jsonb_set(message, '{meta,test}', 'true');
  update app_private.outgoing_messages m set meta = message->'meta' where m.organization_id = org and m.id = (message->>'id')::uuid;
  if channel = any(sinks) then
    -- the local sink is a table: storing and marking sent commit with this call
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    values (org, (message->>'id')::uuid, channel, message->>'sender', address, message->>'subject', message->>'body', message->'meta');
    update app_private.outgoing_messages m set status = 'sent', sent_at = now()
     where m.organization_id = org and m.id = (message->>'id')::uuid;
    return jsonb_build_object('success', true, 'message_id', message->>'id');
  end if;
  return jsonb_build_object('success', true, 'message_id', message->>'id', 'message', message);
end $$;
comment on function app_hidden.sequences_test_step_send(uuid, text, text, uuid, text, text[]) is
  'sequences_test_step''s send as the owner: send-time checks (reason_code), the rendered message stored; with the sink, '
  'delivered at once; otherwise answered for the caller to hand to its transport.';
grant execute on function app_hidden.sequences_test_step_send(uuid, text, text, uuid, text, text[]) to svc_request;

create or replace function app_hidden.sequences_test_step_record(message_id uuid, error text) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.outgoing_messages m
     set status = case when sequences_test_step_record.error is null then 'sent' else 'failed' end,
         sent_at = case when sequences_test_step_record.error is null then now() end,
         error = left(sequences_test_step_record.error, 1000)
   where m.organization_id = app_hidden.current_org_id() and m.id = sequences_test_step_record.message_id
     and m.status = 'queued' and (m.meta->>'test')::boolean
$$;
comment on function app_hidden.sequences_test_step_record(uuid, text) is 'What the transport answered for a test send of the current organization.';
grant execute on function app_hidden.sequences_test_step_record(uuid, text) to svc_request;

create or replace function app_public.sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text,
  contact_id uuid, base_url text, sinks text[]) returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  s record;
  step jsonb;
  given int := (to_email is not null)::int + (to_phone is not null)::int + (contact_id is not null)::int;
begin
  select x.id, x.location_id, x.steps into s from app_public.sequences x where x.organization_id = org and x.id = sequences_test_step.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  if not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'This sequence belongs to the whole organization; a manager tests only sequences of its own locations');
  end if;
  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = sequences_test_step.step_key limit 1;
  if step is null then
    perform app_hidden.raise_error(404, 'not_found', 'Step not found');
  end if;
  if step->>'type' not in ('email', 'sms') then
    perform app_hidden.raise_error(400, 'bad_request', 'step_key: a ' || coalesce(step->>'type', 'wait') || ' step sends nothing to test');
  end if;
  if given <> 1 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: send exactly one of to_email, to_phone or contact_id');
  end if;
  if to_email is not null and step->>'type' <> 'email' then
    perform app_hidden.raise_error(400, 'bad_request', 'body.to_email: the step is an SMS step; send to_phone or contact_id');
  end if;
  if to_phone is not null and step->>'type' <> 'sms' then
    perform app_hidden.raise_error(400, 'bad_request', 'body.to_phone: the step is an email step; send to_email or contact_id');
  end if;
  if contact_id is not null
     and not exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = sequences_test_step.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return app_hidden.sequences_test_step_send(s.id, step_key, coalesce(to_email, to_phone), contact_id, base_url, sinks);
end $$;
comment on function app_public.sequences_test_step(uuid, text, text, text, uuid, text, text[]) is
  'sequences_test_step: sends the saved email or SMS step once to to_email, to_phone or a contact (whose data fills the '
  'variables); answers {success, reason_code?, error?, message_id?}. 404 sequence, step or contact; 400 for a wait step or '
  'a recipient that does not fit the step.';
grant execute on function app_public.sequences_test_step(uuid, text, text, text, uuid, text, text[]) to svc_request;

reset role;

--! split: 400-sequences-enrollment-counts.sql
-- What the enrollment lists need to stay fast at a million enrollments in one organization:
-- an index per filter they take, and an exact count of a sequence's enrollments by status that
-- does not read them all.
--
-- The lists answer an exact `total` (spec: pages echo total). Counting a sequence of a million
-- enrollments row by row, under the enrollments policy (a probe of the sequence and of the
-- contact per row), takes seconds; a page takes a millisecond. So each change of an
-- enrollment's status is also written as a delta row, (sequence, status, ±n), into
-- app_private.enrollment_counts, and the sum of a sequence's rows is its count. Deltas are
-- appended, never updated: a counter row updated by every enrollment would serialize every
-- transaction that enrolls into, or ends an enrollment of, the same sequence (its row lock is
-- held until commit). Now and then a writer folds a sequence's deltas into one row per status
-- (app_private.fold_enrollment_counts), so a count sums a few dozen rows at most.
--
-- The sum is every enrollment of the sequence: it is the total only for a caller that reaches
-- every contact of the organization (an enrollment is visible with its contact). Other callers
-- are counted row by row under their policies (app_hidden.sequence_enrollment_count).
set local role svc_owner;

--------------------------------------------------------------------------------
-- Indexes of the filters
--------------------------------------------------------------------------------
-- sequences_list_enrollments?status=…: a page of one status, newest first. (Unfiltered pages use
-- enrollments_by_sequence; contact_id and email use enrollments_by_contact: a contact has few.)
create index if not exists enrollments_by_sequence_status
  on app_public.enrollments (organization_id, sequence_id, status, created_at desc, id);

--------------------------------------------------------------------------------
-- Counts
--------------------------------------------------------------------------------
create table if not exists app_private.enrollment_counts (
  organization_id uuid not null references app_public.organizations on delete cascade,
  sequence_id uuid not null,
  status text not null,
  n bigint not null
);
comment on table app_private.enrollment_counts is
  'How many enrollments each sequence has per status, as deltas: the sum of a (sequence, status)''s rows is its count. '
  'Written by the triggers of app_public.enrollments; folded now and then by app_private.fold_enrollment_counts.';
-- no policy: only the owner (the triggers, the count helper) reads and writes it
alter table app_private.enrollment_counts enable row level security;
create index if not exists enrollment_counts_by_sequence
  on app_private.enrollment_counts (organization_id, sequence_id, status) include (n);

-- Folds a sequence's deltas into one row per status. One folder at a time per sequence (others
-- skip: their deltas wait for the next fold); rows written by transactions not yet committed are
-- not seen, so they stay, and each delta is folded exactly once.
create or replace function app_private.fold_enrollment_counts(organization_id uuid, sequence_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not pg_try_advisory_xact_lock(hashtextextended('enrollment_counts:' || organization_id || ':' || sequence_id, 0)) then
    return;
  end if;
  with gone as (
    delete from app_private.enrollment_counts c
     where c.organization_id = fold_enrollment_counts.organization_id and c.sequence_id = fold_enrollment_counts.sequence_id
    returning c.status, c.n
  )
  insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
  select fold_enrollment_counts.organization_id, fold_enrollment_counts.sequence_id, gone.status, sum(gone.n)
    from gone group by gone.status having sum(gone.n) <> 0;
end $$;
comment on function app_private.fold_enrollment_counts(uuid, uuid) is
  'Folds the delta rows of a sequence''s enrollment counts into one row per status (skipped while another fold of it runs).';
revoke execute on function app_private.fold_enrollment_counts(uuid, uuid) from public;

-- One row per (sequence, status) a statement inserted or deleted; the fold runs once in 32
-- statements per sequence touched, on average.
create or replace function app_private.tg_enrollments__count_rows() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s record;
begin
  if tg_op = 'INSERT' then
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select r.organization_id, r.sequence_id, r.status, count(*) from new_rows r group by 1, 2, 3;
    for s in select distinct r.organization_id, r.sequence_id from new_rows r loop
      if random() < 1.0 / 32 then perform app_private.fold_enrollment_counts(s.organization_id, s.sequence_id); end if;
    end loop;
  else
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select r.organization_id, r.sequence_id, r.status, -count(*) from old_rows r group by 1, 2, 3;
  end if;
  return null;
end $$;
comment on function app_private.tg_enrollments__count_rows() is
  'Statement trigger of app_public.enrollments: counts the inserted (or deleted) rows per sequence and status in app_private.enrollment_counts.';
revoke execute on function app_private.tg_enrollments__count_rows() from public;

-- A status change (the update trigger runs only for those): one row out of the old status, one
-- into the new.
create or replace function app_private.tg_enrollments__count_status() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
  values (old.organization_id, old.sequence_id, old.status, -1), (new.organization_id, new.sequence_id, new.status, 1);
  if random() < 1.0 / 32 then perform app_private.fold_enrollment_counts(new.organization_id, new.sequence_id); end if;
  return null;
end $$;
comment on function app_private.tg_enrollments__count_status() is
  'Row trigger of app_public.enrollments on a change of status (or sequence): moves one from the old count to the new.';
revoke execute on function app_private.tg_enrollments__count_status() from public;

drop trigger if exists _500_count_inserted on app_public.enrollments;
create trigger _500_count_inserted after insert on app_public.enrollments
  referencing new table as new_rows for each statement execute function app_private.tg_enrollments__count_rows();
drop trigger if exists _500_count_deleted on app_public.enrollments;
create trigger _500_count_deleted after delete on app_public.enrollments
  referencing old table as old_rows for each statement execute function app_private.tg_enrollments__count_rows();
drop trigger if exists _500_count_status on app_public.enrollments;
create trigger _500_count_status after update of status, sequence_id on app_public.enrollments
  for each row when (old.status is distinct from new.status or old.sequence_id is distinct from new.sequence_id)
  execute function app_private.tg_enrollments__count_status();

-- Counted again from the rows, so a re-run of this file (or rows written before it) leaves the
-- counts exact; the lock keeps writers out meanwhile.
lock table app_public.enrollments in share row exclusive mode;
delete from app_private.enrollment_counts;
insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
select organization_id, sequence_id, status, count(*) from app_public.enrollments group by 1, 2, 3;

--------------------------------------------------------------------------------
-- The count a list answers
--------------------------------------------------------------------------------
-- For a caller that reaches every contact of the organization (whole organization, every
-- record), every enrollment of a sequence it sees is visible to it: the sum of the deltas.
create or replace function app_hidden.sequence_enrollment_total(sequence_id uuid, status text) returns bigint
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not (app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all') then
    return null;
  end if;
  return (select coalesce(sum(c.n), 0) from app_private.enrollment_counts c
           where c.organization_id = app_hidden.current_org_id() and c.sequence_id = sequence_enrollment_total.sequence_id
             and (sequence_enrollment_total.status is null or c.status = sequence_enrollment_total.status));
end $$;
comment on function app_hidden.sequence_enrollment_total(uuid, text) is
  'How many enrollments a sequence of the current organization has (of one status, or all), from app_private.enrollment_counts; '
  'NULL unless the credential reaches every contact of the organization (then the caller counts under its policies).';
revoke execute on function app_hidden.sequence_enrollment_total(uuid, text) from public;
grant execute on function app_hidden.sequence_enrollment_total(uuid, text) to svc_request;

-- The count of a sequence's enrollments the current credential sees (one status, or all).
create or replace function app_hidden.sequence_enrollment_count(sequence_id uuid, status text) returns bigint
language plpgsql stable as $$
declare
  n bigint := app_hidden.sequence_enrollment_total(sequence_id, status);
begin
  if n is null then
    select count(*) into n from app_public.enrollments e
     where e.organization_id = app_hidden.current_org_id() and e.sequence_id = sequence_enrollment_count.sequence_id
       and (sequence_enrollment_count.status is null or e.status = sequence_enrollment_count.status);
  end if;
  return n;
end $$;
comment on function app_hidden.sequence_enrollment_count(uuid, text) is
  'How many enrollments of the sequence (of one status, or all) the credential sees: from the counts when it reaches every '
  'contact, else counted under its policies.';
revoke execute on function app_hidden.sequence_enrollment_count(uuid, text) from public;
grant execute on function app_hidden.sequence_enrollment_count(uuid, text) to svc_request;

reset role;

--! split: 410-sequences-enrollment-reads.sql
-- Reading enrollments (spec: Enrollment; Endpoints → Sequences, Contacts): a sequence's list, a
-- contact's list, one enrollment with its step runs and events, cancelling one, and a
-- sequence's analytics. Every read runs under the caller's policies: an enrollment is visible
-- with its sequence and its contact, so a credential limited to some locations sees the
-- enrollments of its contacts in the sequences it sees, and nothing else.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Helpers
--------------------------------------------------------------------------------
-- The sequence the caller reads, or 404 (absent, another organization's, another location's).
create or replace function app_hidden.sequence_for_read(sequence_id uuid) returns app_public.sequences
language plpgsql stable as $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences
   where organization_id = app_hidden.current_org_id() and id = sequence_for_read.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  return s;
end $$;
comment on function app_hidden.sequence_for_read(uuid) is 'The sequence of the current organization in the caller''s reach, or 404.';
revoke execute on function app_hidden.sequence_for_read(uuid) from public;
grant execute on function app_hidden.sequence_for_read(uuid) to svc_request;

-- An event as the API shows it: {type, at, step_key?, message_id?, reason?}.
create or replace function app_hidden.enrollment_event_json(v app_public.enrollment_events) returns jsonb
language sql stable as $$
  select jsonb_build_object('type', v.type, 'at', v.at)
      || jsonb_strip_nulls(jsonb_build_object('step_key', v.step_key, 'message_id', v.message_id, 'reason', v.reason))
$$;
comment on function app_hidden.enrollment_event_json(app_public.enrollment_events) is
  'An enrollment event as the API shows it: type and at, with step_key, message_id and reason when set.';
revoke execute on function app_hidden.enrollment_event_json(app_public.enrollment_events) from public;
grant execute on function app_hidden.enrollment_event_json(app_public.enrollment_events) to svc_request;

-- Ends one enrollment as cancelled, as the owner (the event is written by the owner only), for
-- a caller whose function checked that it may write the enrollment's sequence; checked again
-- here, reading as the owner, so that this helper cannot end another's enrollment whoever calls it.
create or replace function app_hidden.cancel_enrollment(enrollment_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
begin
  if not exists (select 1 from app_public.enrollments e
                   join app_public.sequences s on s.organization_id = e.organization_id and s.id = e.sequence_id
                  where e.organization_id = org and e.id = cancel_enrollment.enrollment_id
                    and app_hidden.current_may_write_sequence(s.location_id)) then
    perform app_hidden.raise_error(404, 'not_found', 'Enrollment not found');
  end if;
  perform app_private.end_enrollments(org, array[cancel_enrollment.enrollment_id], 'cancelled', 'cancelled');
end $$;
comment on function app_hidden.cancel_enrollment(uuid) is
  'Cancels one live enrollment of the current organization whose sequence the credential may write (app_private.end_enrollments); '
  'an ended one is left as it is. 404 otherwise.';
revoke execute on function app_hidden.cancel_enrollment(uuid) from public;
grant execute on function app_hidden.cancel_enrollment(uuid) to svc_request;

-- A page of a sequence's enrollments (of one status, or all), newest first, with its total, read
-- as the owner: only for a caller that reaches every contact of the organization, to whom every
-- enrollment of a sequence it sees is visible, so the rows are those its policies would give.
-- Under the policies each row of the page, and each row its OFFSET skips, would probe its
-- sequence and its contact, and at a million enrollments the planner prefers to hash every
-- contact of the organization first (a sequential scan of them per request). The rows skipped
-- are read from the index alone (its columns are the sort key), the page's 25 from the table.
-- Answers NULL to other callers.
drop function if exists app_hidden.sequence_enrollments_page(uuid, text, integer, bigint);
create or replace function app_hidden.sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid,
  page_size integer, skip bigint)
returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  ids uuid[];
  total bigint;
begin
  if not (app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all') then
    return null;
  end if;
  -- separate statements, so that each keeps its own index in a generic plan
  if contact_id is not null then
    -- one contact's enrollments are few: its index, then the sequence
    select count(*) into total from app_public.enrollments x
     where x.organization_id = org and x.contact_id = sequence_enrollments_page.contact_id
       and x.sequence_id = sequence_enrollments_page.sequence_id
       and (sequence_enrollments_page.status is null or x.status = sequence_enrollments_page.status);
    ids := array(select x.id from app_public.enrollments x
                  where x.organization_id = org and x.contact_id = sequence_enrollments_page.contact_id
                    and x.sequence_id = sequence_enrollments_page.sequence_id
                    and (sequence_enrollments_page.status is null or x.status = sequence_enrollments_page.status)
                  order by x.created_at desc, x.id limit page_size offset skip);
  elsif status is null then
    ids := array(select e.id from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = sequence_enrollments_page.sequence_id
                  order by e.created_at desc, e.id limit page_size offset skip);
  else
    ids := array(select e.id from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = sequence_enrollments_page.sequence_id
                    and e.status = sequence_enrollments_page.status
                  order by e.created_at desc, e.id limit page_size offset skip);
  end if;
  if contact_id is null then
    select coalesce(sum(c.n), 0) into total from app_private.enrollment_counts c
     where c.organization_id = org and c.sequence_id = sequence_enrollments_page.sequence_id
       and (sequence_enrollments_page.status is null or c.status = sequence_enrollments_page.status);
  end if;
  return jsonb_build_object(
    'total', total,
    'items', (select coalesce(jsonb_agg(app_hidden.enrollment_json(e)
                       || jsonb_build_object('next_send_at', coalesce(e.next_step_due_at, e.next_run_at))
                       order by e.created_at desc, e.id), '[]')
                from app_public.enrollments e where e.organization_id = org and e.id = any(ids)));
end $$;
comment on function app_hidden.sequence_enrollments_page(uuid, text, uuid, integer, bigint) is
  'A page of a sequence''s enrollments (one status or all; one contact''s or all), newest first, with next_send_at, and its '
  'total ({total, items}), read as the owner for a caller that reaches every contact of the organization; NULL for others.';
revoke execute on function app_hidden.sequence_enrollments_page(uuid, text, uuid, integer, bigint) from public;
grant execute on function app_hidden.sequence_enrollments_page(uuid, text, uuid, integer, bigint) to svc_request;
drop function if exists app_hidden.sequence_enrollment_page(uuid, text, integer, bigint);

--------------------------------------------------------------------------------
-- sequences_list_enrollments
--------------------------------------------------------------------------------
create or replace function app_public.sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid,
  email text, page integer, page_size integer) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  who uuid := contact_id;
  page_json jsonb;
  skip bigint;
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  skip := (page - 1)::bigint * page_size;
  s := app_hidden.sequence_for_read(sequence_id);
  if status is not null and status not in ('active', 'paused', 'completed', 'cancelled', 'failed') then
    perform app_hidden.raise_error(400, 'bad_request', 'query.status: one of active, paused, completed, cancelled, failed');
  end if;
  -- email wins over contact_id. An address is carried by at most one contact of an
  -- organization (its identity: contacts_org_email_key), read under the caller's policies; an
  -- address nobody the caller sees carries is an empty page.
  if email is not null then
    select c.id into who from app_public.contacts c where c.organization_id = org and c.email_key = lower(sequences_list_enrollments.email);
    if who is null then
      return jsonb_build_object('items', '[]'::jsonb, 'total', 0, 'page', page, 'limit', page_size);
    end if;
  end if;
  -- a caller that reaches every contact: one owner's read (NULL for others, counted and paged below)
  page_json := app_hidden.sequence_enrollments_page(s.id, status, who, page_size, skip);
  if page_json is not null then
    return page_json || jsonb_build_object('page', page, 'limit', page_size);
  end if;
  if who is not null then
    select count(*) into total from app_public.enrollments e
     where e.organization_id = org and e.contact_id = who and e.sequence_id = s.id
       and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status);
    select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
             || jsonb_build_object('next_send_at', coalesce(p.next_step_due_at, p.next_run_at))
             order by p.created_at desc, p.id), '[]')
      into items
      from (select * from app_public.enrollments e
             where e.organization_id = org and e.contact_id = who and e.sequence_id = s.id
               and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status)
             order by e.created_at desc, e.id limit page_size offset skip) p;
  else
    total := app_hidden.sequence_enrollment_count(s.id, status);
    select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
             || jsonb_build_object('next_send_at', coalesce(p.next_step_due_at, p.next_run_at))
             order by p.created_at desc, p.id), '[]')
      into items
      from (select * from app_public.enrollments e
             where e.organization_id = org and e.sequence_id = s.id
               and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status)
             order by e.created_at desc, e.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;
comment on function app_public.sequences_list_enrollments(uuid, text, uuid, text, integer, integer) is
  'sequences_list_enrollments: one page of the sequence''s enrollments the credential sees, newest first, filtered by status and '
  'by contact (email, case-insensitive, wins over contact_id; an address no contact carries is an empty page); each with '
  'next_send_at (next_step_due_at, else next_run_at). 404 for a sequence out of reach.';

--------------------------------------------------------------------------------
-- sequences_get_enrollment
--------------------------------------------------------------------------------
create or replace function app_public.sequences_get_enrollment(sequence_id uuid, enrollment_id uuid) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  e app_public.enrollments;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = org and x.id = sequences_get_enrollment.enrollment_id
     and x.sequence_id = sequences_get_enrollment.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Enrollment not found');
  end if;
  return app_hidden.enrollment_json(e) || jsonb_build_object(
    'step_runs', (select coalesce(jsonb_agg(jsonb_build_object('step_key', r.step_key, 'step_type', r.step_type,
                     'status', r.status, 'message_id', r.message_id, 'reason', r.reason, 'created_at', r.created_at,
                     'updated_at', r.updated_at) order by r.created_at, r.id), '[]')
                    from app_public.step_runs r where r.organization_id = org and r.enrollment_id = e.id),
    'events', (select coalesce(jsonb_agg(app_hidden.enrollment_event_json(v) order by v.id), '[]')
                 from app_public.enrollment_events v where v.organization_id = org and v.enrollment_id = e.id));
end $$;
comment on function app_public.sequences_get_enrollment(uuid, uuid) is
  'sequences_get_enrollment: the enrollment with its step runs (in the order they started) and its events in order of '
  'occurrence; 404 when it is not of that sequence or out of reach.';

--------------------------------------------------------------------------------
-- sequences_cancel_enrollment
--------------------------------------------------------------------------------
-- Any live enrollment (active, paused) becomes cancelled, with its event. An enrollment that has
-- already ended (cancelled, completed, failed) is answered as it is: a repeat call, or one that
-- crossed the engine completing it, returns the same row and changes nothing.
create or replace function app_public.sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  e app_public.enrollments;
  s app_public.sequences;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = org and x.id = sequences_cancel_enrollment.enrollment_id
     and x.sequence_id = sequences_cancel_enrollment.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Enrollment not found');
  end if;
  select * into s from app_public.sequences x where x.organization_id = org and x.id = e.sequence_id;
  if not app_hidden.current_may_write_sequence(s.location_id) then
    -- seen but not written: a manager and an organization-wide sequence (spec: Authentication 6)
    perform app_hidden.raise_error(403, 'insufficient_role',
      case when s.location_id is null then 'A manager cannot change an organization-wide sequence'
           else 'This credential cannot change this sequence' end);
  end if;
  if e.status in ('active', 'paused') then
    perform app_hidden.cancel_enrollment(e.id);
    -- the row as it is now: ended by this call, or by a concurrent one that got there first
    select * into e from app_public.enrollments x where x.organization_id = org and x.id = e.id;
  end if;
  return app_hidden.enrollment_json(e);
end $$;
comment on function app_public.sequences_cancel_enrollment(uuid, uuid) is
  'sequences_cancel_enrollment: cancels a live enrollment (with its cancelled event); an ended one is answered unchanged. '
  '404 out of reach; 403 for a manager on an organization-wide sequence.';

--------------------------------------------------------------------------------
-- contacts_list_enrollments
--------------------------------------------------------------------------------
create or replace function app_public.contacts_list_enrollments(contact_id uuid, page integer, page_size integer) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.enrollments e
   where e.organization_id = org and e.contact_id = contacts_list_enrollments.contact_id;
  select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
           || jsonb_build_object('sequence_name', s.name, 'next_send_at', p.next_run_at)
           order by p.created_at desc, p.id), '[]')
    into items
    from (select * from app_public.enrollments e
           where e.organization_id = org and e.contact_id = contacts_list_enrollments.contact_id
           order by e.created_at desc, e.id limit page_size offset (page - 1)::bigint * page_size) p
    join app_public.sequences s on s.organization_id = p.organization_id and s.id = p.sequence_id;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;
comment on function app_public.contacts_list_enrollments(uuid, integer, integer) is
  'contacts_list_enrollments: one page of the contact''s enrollments in the sequences the credential sees, newest first, each '
  'with sequence_name and next_send_at (next_run_at). 404 for a contact out of reach.';

--------------------------------------------------------------------------------
-- sequences_analytics
--------------------------------------------------------------------------------
-- Per step, in the sequence's step order (wait steps too): messages sent, skipped, failed or
-- unknown (from the step runs: one per enrollment and step), and enrollments whose message of
-- that step was delivered, bounced, opened, clicked or replied to (from the events, each
-- enrollment once). The rollup counts enrollments by status, the messages sent, delivered and
-- bounced over every step, and the enrollments that replied (a reply need not name a step).
-- email_delivery_reporting is not_applicable without an email step; otherwise the service's
-- email transport decides it (sequences_analytics' shape): the answer here is null then.
create or replace function app_public.sequences_analytics(sequence_id uuid) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences := app_hidden.sequence_for_read(sequence_id);
  steps jsonb;
  statuses jsonb;
  replied bigint;
begin
  with runs as (
    select r.step_key, r.status, count(*) as n
      from app_public.step_runs r
      join app_public.enrollments e on e.organization_id = r.organization_id and e.id = r.enrollment_id
     where r.organization_id = org and e.organization_id = org and e.sequence_id = s.id
     group by 1, 2
  ), events as (
    select v.step_key, v.type, count(distinct v.enrollment_id) as n
      from app_public.enrollment_events v
      join app_public.enrollments e on e.organization_id = v.organization_id and e.id = v.enrollment_id
     where v.organization_id = org and e.organization_id = org and e.sequence_id = s.id
       and v.type in ('delivered', 'bounced', 'opened', 'clicked', 'replied') and v.step_key is not null
     group by 1, 2
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'step_key', st.step ->> 'step_key', 'type', st.step ->> 'type',
           'sent', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'sent'), 0),
           'delivered', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'delivered'), 0),
           'bounced', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'bounced'), 0),
           'opened', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'opened'), 0),
           'clicked', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'clicked'), 0),
           'replied', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'replied'), 0),
           'skipped', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'skipped'), 0),
           'failed', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'failed'), 0),
           'unknown', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'unknown'), 0))
         order by st.i), '[]')
    into steps
    from jsonb_array_elements(s.steps) with ordinality as st(step, i);

  -- enrollments by status: from the counts for a caller that reaches every contact, else
  -- counted once, grouped, under the caller's policies
  if app_hidden.sequence_enrollment_total(s.id, null) is not null then
    select jsonb_object_agg(x.status, app_hidden.sequence_enrollment_total(s.id, x.status)) into statuses
      from unnest(array['active', 'paused', 'completed', 'cancelled', 'failed']) as x(status);
  else
    select jsonb_object_agg(x.status, coalesce(g.n, 0)) into statuses
      from unnest(array['active', 'paused', 'completed', 'cancelled', 'failed']) as x(status)
      left join (select e.status, count(*) as n from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = s.id group by 1) g on g.status = x.status;
  end if;
  select count(distinct v.enrollment_id) into replied
    from app_public.enrollment_events v
    join app_public.enrollments e on e.organization_id = v.organization_id and e.id = v.enrollment_id
   where v.organization_id = org and e.organization_id = org and e.sequence_id = s.id and v.type = 'replied';

  return jsonb_build_object(
    'steps', steps,
    'rollup', jsonb_build_object(
      'enrolled', (select sum(v::bigint) from jsonb_each_text(statuses) as t(k, v)),
      'active', statuses -> 'active', 'paused', statuses -> 'paused', 'completed', statuses -> 'completed',
      'cancelled', statuses -> 'cancelled', 'failed', statuses -> 'failed',
      'sent', (select coalesce(sum((x ->> 'sent')::bigint), 0) from jsonb_array_elements(steps) x),
      'delivered', (select coalesce(sum((x ->> 'delivered')::bigint), 0) from jsonb_array_elements(steps) x),
      'bounced', (select coalesce(sum((x ->> 'bounced')::bigint), 0) from jsonb_array_elements(steps) x),
      'replied', replied),
    'email_delivery_reporting',
      case when exists (select 1 from jsonb_array_elements(s.steps) x where x ->> 'type' = 'email') then null
           else 'not_applicable' end);
end $$;
comment on function app_public.sequences_analytics(uuid) is
  'sequences_analytics: per-step counts in step order (sent, delivered, bounced, opened, clicked, replied, skipped, failed, unknown), '
  'the rollup (enrollments by status; messages sent, delivered, bounced; enrollments that replied) over the enrollments the '
  'credential sees, and email_delivery_reporting (not_applicable without an email step; NULL: the transport decides).';

grant execute on function app_public.sequences_list_enrollments(uuid, text, uuid, text, integer, integer),
  app_public.sequences_get_enrollment(uuid, uuid), app_public.sequences_cancel_enrollment(uuid, uuid),
  app_public.contacts_list_enrollments(uuid, integer, integer), app_public.sequences_analytics(uuid) to svc_request;

reset role;
