--! Previous: sha1:3323735033b32e914e19f239c509e7b05713618f
--! Hash: sha1:4141eb43c25cf6e08271e132bee4f4df05afa0a0
--! Message: Availability answers are kept until a change they read commits: the snapshot of the computing call against a log of changes

--! split: 010-availability-answers.sql
-- Availability answers are kept and reused until something they read changes
-- (docs/appointments-booking.md, "Kept answers"). An AI receptionist asks the same few days of
-- a location again and again between bookings; computing a day costs 2.7 times a contact read
-- (team time, the slot grid), reading a kept answer about what a contact read costs.
--
-- Correctness does not rest on timing. Every write that can change an answer notes what it
-- changed in app_private.availability_changes, in its own transaction: the time range of a
-- booking, block or occurrence (before and after), or everything of the organization for a
-- change to hours, team members, offerings, territories or calendars. A kept answer carries the
-- snapshot it was computed under (taken before the call read anything), and it is used only
-- while no change over its day is missing from that snapshot. A booking committed while an
-- answer was being computed is missing from it, so that answer is never used; one committed
-- before is in it. Booking itself never trusts an answer: the exclusion constraints decide.
--
-- Both tables are unlogged: no WAL for a cache, and after a crash PostgreSQL empties both
-- together. Answers live five minutes at most; the appointments area's cron prunes answers and
-- the changes no live answer can miss (app_private.availability_prune).
set local role svc_owner;

create unlogged table if not exists app_private.availability_answers (
  organization_id uuid not null,
  location_id uuid not null,
  day date not null,
  -- the rest of the question: offering, length in minutes, team member, postal code, country
  variant text not null,
  -- the local day the answer read appointments over
  within tstzrange not null,
  -- when the computing transaction began (before its snapshot was taken) and the snapshot itself
  made_at timestamptz not null,
  snap pg_snapshot not null,
  answer jsonb not null,
  primary key (organization_id, location_id, day, variant)
);
comment on table app_private.availability_answers is
  'Kept appointments_availability answers: used while no change over `within` is missing from `snap` and younger than app_hidden.availability_ttl().';

create unlogged table if not exists app_private.availability_changes (
  organization_id uuid not null,
  -- the time changed; ''(,)'' when hours, team members, offerings, territories or calendars changed
  during tstzrange not null,
  -- the writing transaction: an answer whose snapshot does not see it is stale once it commits
  xid xid8 not null default pg_current_xact_id()
);
create index if not exists availability_changes_by_time on app_private.availability_changes using gist (organization_id, during);
comment on table app_private.availability_changes is
  'What writes changed for availability, by organization and time, with the writing transaction: see app_private.availability_answers.';

-- Snapshots the prune takes, each with when it was taken: a change that one taken at least a
-- time-to-live ago sees committed before every snapshot of a live answer, so no answer needs it.
create unlogged table if not exists app_private.availability_marks (
  taken_at timestamptz primary key,
  snap pg_snapshot not null
);

-- No policy: only their owner reads or writes them, through the functions below.
alter table app_private.availability_answers enable row level security;
alter table app_private.availability_changes enable row level security;
alter table app_private.availability_marks enable row level security;

create or replace function app_hidden.availability_ttl() returns interval
language sql immutable parallel safe as $$ select interval '5 minutes' $$;
comment on function app_hidden.availability_ttl() is 'How long a kept availability answer may be used at most.';

-- ------------------------------------------------------------------------------------------
-- Noting changes
-- ------------------------------------------------------------------------------------------

-- The two functions that read availability_changes keep their plan for the session, and a
-- generic plan made while the table was nearly empty scans it whole: told to use the index, they
-- read only the changes over the time asked about, whatever the table held when they were planned.
create or replace function app_private.note_availability_change(org uuid, span tstzrange) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp set enable_seqscan to off as $$
begin
  -- once per transaction and range: a change the transaction already noted covers it
  insert into app_private.availability_changes (organization_id, during)
  select org, span
   where not exists (select 1 from app_private.availability_changes c
                      where c.organization_id = org and c.during @> span and c.xid = pg_current_xact_id());
end $$;
comment on function app_private.note_availability_change(uuid, tstzrange) is
  'Notes that the transaction changed availability of the organization over `span` (''(,)'': all of it).';

create or replace function app_private.tg_appointments__availability() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  -- a repeating series (rrule) holds time up to its end or forever: all of it
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.note_availability_change(old.organization_id, case when old.rrule is null then old.during else '(,)' end);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform app_private.note_availability_change(new.organization_id, case when new.rrule is null then new.during else '(,)' end);
  end if;
  return null;
end $$;

create or replace function app_private.tg_appointment_occurrences__availability() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.note_availability_change(old.organization_id, old.during);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform app_private.note_availability_change(new.organization_id, new.during);
  end if;
  return null;
end $$;

-- hours, team members (people, staff profiles, their locations), offerings and who does them,
-- territories and who covers them, calendars: all of the organization's answers
create or replace function app_private.tg__availability_everything() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'DELETE' then
    perform app_private.note_availability_change(old.organization_id, '(,)');
  else
    perform app_private.note_availability_change(new.organization_id, '(,)');
  end if;
  return null;
end $$;

-- a truncate names no organization: no kept answer survives it
create or replace function app_private.tg__availability_truncated() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  delete from app_private.availability_answers;
  return null;
end $$;

drop trigger if exists _700_availability on app_public.appointments;
drop trigger if exists _700_availability_update on app_public.appointments;
drop trigger if exists _700_availability_truncate on app_public.appointments;
create trigger _700_availability after insert or delete on app_public.appointments
  for each row execute function app_private.tg_appointments__availability();
-- a title, description or attendee's change leaves every answer as it is
create trigger _700_availability_update after update on app_public.appointments
  for each row when (old.during is distinct from new.during or old.status is distinct from new.status
                     or old.staff_profile_id is distinct from new.staff_profile_id or old.calendar_id is distinct from new.calendar_id
                     or old.location_id is distinct from new.location_id or old.kind is distinct from new.kind
                     or old.rrule is distinct from new.rrule or old.recurrence_ends_on is distinct from new.recurrence_ends_on
                     or old.organization_id is distinct from new.organization_id)
  execute function app_private.tg_appointments__availability();
create trigger _700_availability_truncate after truncate on app_public.appointments
  for each statement execute function app_private.tg__availability_truncated();

drop trigger if exists _700_availability on app_public.appointment_occurrences;
drop trigger if exists _700_availability_truncate on app_public.appointment_occurrences;
create trigger _700_availability after insert or update or delete on app_public.appointment_occurrences
  for each row execute function app_private.tg_appointment_occurrences__availability();
create trigger _700_availability_truncate after truncate on app_public.appointment_occurrences
  for each statement execute function app_private.tg__availability_truncated();

-- The tables eligible_team_members, team_time and appointments_availability read besides
-- appointments; a person counts only while active.
do $$
declare
  t text;
begin
  foreach t in array array['locations', 'offerings', 'offering_team_members', 'territories', 'territory_team_members',
                           'calendars', 'staff_profiles', 'person_locations'] loop
    execute format('drop trigger if exists _700_availability on app_public.%I', t);
    execute format('drop trigger if exists _700_availability_truncate on app_public.%I', t);
    execute format('create trigger _700_availability after insert or update or delete on app_public.%I '
                   'for each row execute function app_private.tg__availability_everything()', t);
    execute format('create trigger _700_availability_truncate after truncate on app_public.%I '
                   'for each statement execute function app_private.tg__availability_truncated()', t);
  end loop;
end $$;
drop trigger if exists _700_availability on app_public.people;
drop trigger if exists _700_availability_active on app_public.people;
create trigger _700_availability after insert or delete on app_public.people
  for each row execute function app_private.tg__availability_everything();
create trigger _700_availability_active after update of active on app_public.people
  for each row when (old.active is distinct from new.active) execute function app_private.tg__availability_everything();

-- ------------------------------------------------------------------------------------------
-- Keeping and finding answers
-- ------------------------------------------------------------------------------------------

create or replace function app_hidden.availability_kept(org uuid, location_id uuid, day date, variant text) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp set enable_seqscan to off as $$
begin
  return (select a.answer
            from app_private.availability_answers a
           where a.organization_id = org and a.location_id = availability_kept.location_id
             and a.day = availability_kept.day and a.variant = availability_kept.variant
             -- the clock read after this statement's snapshot: a prune it sees ran before it
             and a.made_at > clock_timestamp() - app_hidden.availability_ttl()
             -- no committed change over the day that its snapshot did not see
             and not exists (select 1 from app_private.availability_changes c
                              where c.organization_id = org and c.during && a.within
                                and not pg_visible_in_snapshot(c.xid, a.snap)));
end $$;
comment on function app_hidden.availability_kept(uuid, uuid, date, text) is
  'A kept availability answer that is still right, or NULL.';

create or replace function app_hidden.availability_keep(org uuid, location_id uuid, day date, variant text, within tstzrange,
                                                        made_at timestamptz, snap pg_snapshot, answer jsonb) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  insert into app_private.availability_answers as a (organization_id, location_id, day, variant, within, made_at, snap, answer)
  values (org, location_id, day, variant, within, made_at, snap, answer)
  on conflict on constraint availability_answers_pkey do update
    set within = excluded.within, made_at = excluded.made_at, snap = excluded.snap, answer = excluded.answer
    where a.made_at <= excluded.made_at;
end $$;
comment on function app_hidden.availability_keep(uuid, uuid, date, text, tstzrange, timestamptz, pg_snapshot, jsonb) is
  'Keeps an availability answer with the snapshot it was computed under (the later of two for one question).';

revoke all on function app_hidden.availability_kept(uuid, uuid, date, text) from public;
revoke all on function app_hidden.availability_keep(uuid, uuid, date, text, tstzrange, timestamptz, pg_snapshot, jsonb) from public;
grant execute on function app_hidden.availability_ttl() to svc_request, svc_worker;
grant execute on function app_hidden.availability_kept(uuid, uuid, date, text) to svc_request;
grant execute on function app_hidden.availability_keep(uuid, uuid, date, text, tstzrange, timestamptz, pg_snapshot, jsonb) to svc_request;

create or replace function app_private.availability_prune() returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  oldest app_private.availability_marks;
  dropped int;
begin
  -- the snapshot is taken before clock_timestamp() is read: all it sees committed before taken_at
  insert into app_private.availability_marks (taken_at, snap) values (clock_timestamp(), pg_current_snapshot())
  on conflict do nothing;
  delete from app_private.availability_answers where made_at <= now() - app_hidden.availability_ttl();
  get diagnostics dropped = row_count;
  -- A live answer, used only while made_at > (the user's clock) - ttl, and this prune's now() came
  -- before that clock; its snapshot, taken after made_at, is later than every mark at least a
  -- ttl old and sees every change such a mark sees.
  select * into oldest from app_private.availability_marks
   where taken_at <= now() - app_hidden.availability_ttl() order by taken_at desc limit 1;
  if found then
    delete from app_private.availability_changes c where pg_visible_in_snapshot(c.xid, oldest.snap);
    delete from app_private.availability_marks m where m.taken_at < oldest.taken_at;
  end if;
  return dropped;
end $$;
comment on function app_private.availability_prune() is
  'Drops kept availability answers older than their time to live and the changes no live answer can miss; answers how many answers it dropped.';

-- ------------------------------------------------------------------------------------------
-- appointments_availability: a kept answer when one is right, else computed and kept
-- ------------------------------------------------------------------------------------------

-- volatile now: a computed answer is written down (as the caller: its reads stay under the
-- caller's policies; the kept answers are reached only after the location and offering were)
create or replace function app_public.appointments_availability(location_id uuid, day date, offering_id uuid default null,
  team_member_id uuid default null, postal_code text default null, country_code text default null,
  duration_minutes int default null) returns jsonb
language plpgsql volatile as $$
declare
  -- before anything is read: every change this snapshot misses makes the answer stale; the
  -- transaction's start, earlier than any of its snapshots, is when the answer was made
  snap pg_snapshot := pg_current_snapshot();
  made_at timestamptz := now();
  org uuid := app_hidden.current_org_id();
  loc app_public.locations;
  o app_public.offerings;
  len interval;
  cc text := country_code;
  members uuid[] := '{}';
  cals uuid[] := '{}';
  variant text;
  keep boolean := coalesce(current_setting('availability.keep_answers', true), '') <> 'off';
  slots jsonb;
  answer jsonb;
begin
  select * into loc from app_public.locations l where l.organization_id = org and l.id = appointments_availability.location_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if offering_id is not null then
    select * into o from app_public.offerings x
     where x.organization_id = org and x.id = appointments_availability.offering_id and x.location_id = loc.id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
    end if;
  end if;
  len := make_interval(mins => coalesce(o.duration_minutes, appointments_availability.duration_minutes, loc.slot_interval_minutes));
  if postal_code is not null and cc is null then
    cc := upper(loc.address->>'country_code');
    if cc is null then
      perform app_hidden.raise_error(400, 'bad_request', 'query.country_code: send the country of postal_code (this location has no address to take it from)');
    end if;
  end if;

  -- The location and offering are in the caller's reach (its policies found them), and what
  -- follows reads past the policies alike for every caller: an answer kept for one serves all.
  -- Only answers are kept, so a team member found not eligible is looked up again each time.
  variant := concat_ws('|', o.id, extract(epoch from len)::int / 60, team_member_id, postal_code, cc);
  if keep then
    answer := app_hidden.availability_kept(org, loc.id, day, variant);
    if answer is not null then
      return answer;
    end if;
  end if;

  if loc.staffed then
    members := app_hidden.eligible_team_members(org, loc.id, o.id, postal_code, cc);
    if team_member_id is not null then
      if not team_member_id = any(app_hidden.eligible_team_members(org, loc.id, null, null, null)) then
        perform app_hidden.raise_error(404, 'not_found', 'Team member not found at this location');
      end if;
      members := case when team_member_id = any(members) then array[team_member_id] else '{}' end;
    end if;
  else
    if team_member_id is not null then
      perform app_hidden.raise_error(404, 'not_found', 'Team member not found at this location (it is not staffed: it books calendars)');
    end if;
    select coalesce(array_agg(c.id order by c.name, c.id), '{}') into cals
      from app_public.calendars c where c.organization_id = org and c.location_id = loc.id;
  end if;

  -- A start s suits a free range r of some team member (or calendar) when [s, s + len) lies
  -- within r: s in [lower(r), upper(r) - len]. Those windows of every one merged are the
  -- valid starts, and each start of the grid is one lookup in them (testing every start against
  -- every team member's open and busy multiranges cost most of the call).
  with free as (
    select r
      from app_hidden.team_time(loc, members, cals, app_hidden.local_day(day, loc.timezone)) t
      cross join lateral unnest(t.open - t.busy) r
     where upper(r) - len >= lower(r)
  ), valid as (
    select coalesce(range_agg(tstzrange(lower(r), upper(r) - len, case when lower_inc(r) then '[]' else '(]' end)),
                    '{}'::tstzmultirange) as starts
      from free
  ), starts as (
    -- each opening of the location's hours on that day starts a grid of slots
    select distinct s
      from app_hidden.opening_ranges(loc.hours, loc.timezone, app_hidden.local_day(day, loc.timezone)) w
      cross join lateral generate_series(lower(w.opening), upper(w.opening) - len, make_interval(mins => loc.slot_interval_minutes)) s
     where (s at time zone loc.timezone)::date = day
  )
  select coalesce(jsonb_agg(jsonb_build_object('start', x.s, 'end', x.s + len) order by x.s), '[]')
    into slots
    from starts x, valid
   where valid.starts @> x.s;

  answer := jsonb_build_object(
    'location_id', loc.id,
    'date', day,
    'timezone', loc.timezone,
    'offering_id', o.id,
    'duration_minutes', extract(epoch from len)::int / 60,
    'slot_interval_minutes', loc.slot_interval_minutes,
    'team_member_ids', to_jsonb(members),
    'calendar_ids', to_jsonb(cals),
    'slots', slots);
  if keep then
    perform app_hidden.availability_keep(org, loc.id, day, variant, app_hidden.local_day(day, loc.timezone), made_at, snap, answer);
  end if;
  return answer;
end $$;
comment on function app_public.appointments_availability(uuid, date, uuid, uuid, text, text, int) is
  'appointments_availability: the starts on a local day where some eligible team member (or calendar) is free for the whole length, stepped by the slot interval from each opening of the location''s hours; 404 for a location, offering or team member out of reach. An answer is kept and reused until a change it read commits (app_private.availability_answers); availability.keep_answers = off computes every one.';

reset role;
