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
