--! Previous: sha1:7f1cb685521d1984ba95fc443401790a3e41a152
--! Hash: sha1:8caa7de75430521b59e8da9b2e1ed378f0c891a6
--! Message: Team time in one scan of the window, its weeks of hours materialized: availability at 2.2 times contacts_get's CPU

--! split: 010-team-time-one-scan.sql
-- Team time in one statement and one scan of the window (availability and "anyone free"
-- bookings both ask it; docs/appointments-booking.md, "Performance"):
--  - The location's blocks (everyone's busy time) and the team members' and calendars' own
--    bookings were two reads of the same GiST index over the same window; one read now takes the
--    rows of both (`taken`), marked by whether they keep everyone busy.
--  - The distinct weeks of working hours (`own_hours`) are materialized: left to the planner, the
--    CTE was re-evaluated for each team member it was joined to, turning the same hours into
--    ranges six times a call instead of twice.
-- Same answers: a location block is a booked one-off `block` of the location with neither a team
-- member nor a calendar, or an occurrence of a booked series of the location with neither;
-- everything else read is a team member's (at any location) or a calendar's.
set local role svc_owner;

create or replace function app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange)
returns table (staff_profile_id uuid, calendar_id uuid, ord int, open tstzmultirange, busy tstzmultirange)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return query
  with taken as materialized (
    select a.staff_profile_id, a.calendar_id, a.during,
           a.staff_profile_id is null and a.calendar_id is null as everyone
      from app_public.appointments a
     where a.organization_id = loc.organization_id and a.status = 'booked' and a.rrule is null and a.during && within
       and ((a.location_id = loc.id and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null)
            or a.staff_profile_id = any(team_members) or a.calendar_id = any(calendars))
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
