--! Previous: sha1:3033385d36994bb611df65cb3f7b094350fc97de
--! Hash: sha1:3323735033b32e914e19f239c509e7b05713618f
--! Message: Team time reads the window's appointments in one index descent: availability about a sixth cheaper

--! split: 010-team-time-window-read-once.sql
--! split: 010-team-time-window-read-once.sql
-- Team time reads the window's appointments in one index descent (docs/appointments-booking.md,
-- "Performance"). Its `taken` rows were one statement whose condition the planner could answer
-- with a BitmapOr: the location's blocks through their GiST index, then one GiST descent of
-- appointments_no_overlap_team_member per team member (`staff_profile_id = any(team_members)`)
-- and one per calendar. That is the plan PL/pgSQL settles on once it keeps a generic plan, and
-- with 20 team members it was half of team_time's CPU (perf: gistgetbitmap 46%; 265 against
-- 150 µs a call with the change, alternated). The rows of the window are now read first, as a
-- materialized CTE over the organization's booked one-offs (one descent of
-- appointments_by_location_time on organization and time), and only then kept when they are the
-- location's blocks or the team members' or calendars' own. Same rows, read differently: the
-- answers of the availability tests and of the booking property tests do not change. The cost
-- now grows with the organization's bookings of that window rather than with its team members
-- asked about; a day of a business with a few locations is a few hundred rows at most.
set local role svc_owner;

create or replace function app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange)
returns table (staff_profile_id uuid, calendar_id uuid, ord int, open tstzmultirange, busy tstzmultirange)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return query
  with window_rows as materialized (
    -- one pass over the organization's booked one-offs of the window (one descent of
    -- appointments_by_location_time), before anything asks whose they are
    select a.location_id, a.kind, a.staff_profile_id, a.calendar_id, a.during
      from app_public.appointments a
     where a.organization_id = loc.organization_id and a.status = 'booked' and a.rrule is null and a.during && within
  ), taken as materialized (
    select a.staff_profile_id, a.calendar_id, a.during,
           a.staff_profile_id is null and a.calendar_id is null as everyone
      from window_rows a
     where (a.location_id = loc.id and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null)
        or a.staff_profile_id = any(team_members) or a.calendar_id = any(calendars)
    union all
    select a.staff_profile_id, a.calendar_id, o.during,
           a.staff_profile_id is null and a.calendar_id is null
      from app_public.appointment_occurrences o
      join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
     where o.organization_id = loc.organization_id and o.during && within and a.status = 'booked'
       and ((a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null)
            or a.staff_profile_id = any(team_members) or a.calendar_id = any(calendars))
  ), open_location as materialized (
    -- the location's hours less its blocks and location-wide series
    select app_hidden.opening_multirange(loc.hours, loc.timezone, within)
             - coalesce((select range_agg(t.during) from taken t where t.everyone), '{}') as r
  ), members as (
    select m.id, m.n, sp.working_hours
      from unnest(team_members) with ordinality m(id, n)
      join app_public.staff_profiles sp on sp.organization_id = loc.organization_id and sp.id = m.id
  ), own_hours as materialized (
    -- each distinct week of working hours once (most team members keep the location's: NULL)
    select h.working_hours, case when h.working_hours is null then ol.r
                                 else ol.r * app_hidden.opening_multirange(h.working_hours, loc.timezone, within) end as r
      from (select distinct working_hours from members) h, open_location ol
  ), busy as (
    select t.staff_profile_id, t.calendar_id, range_agg(t.during) as r
      from taken t
     where not t.everyone
     group by t.staff_profile_id, t.calendar_id
  )
  select m.id, null::uuid, m.n::int, oh.r, coalesce(b.r, '{}')
    from members m
    join own_hours oh on oh.working_hours is not distinct from m.working_hours
    left join busy b on b.staff_profile_id = m.id
  union all
  select null::uuid, c.id, c.n::int, ol.r, coalesce(b.r, '{}')
    from unnest(calendars) with ordinality c(id, n)
    cross join open_location ol
    left join busy b on b.calendar_id = c.id;
end $$;


reset role;
