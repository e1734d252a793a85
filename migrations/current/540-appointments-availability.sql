-- Open slots (appointments_availability) and the pieces booking shares with it: a location's
-- and a team member's opening ranges on given days, what keeps a team member or a calendar busy,
-- and who may do a booking (offering, territory).
--
-- Hours are weekly lists [{day: mon..sun, open: HH:MM, close: HH:MM|24:00}] in the location's
-- time zone. A day's opening is turned into an absolute range by reading its wall times in the
-- zone (date + time, AT TIME ZONE), so a day with 23 or 25 hours (DST) has ranges of the right
-- length, and slots are stepped in absolute time from each opening of the location's hours.
--
-- Everything is tstzmultirange arithmetic: free = (location hours * the team member's hours)
-- - busy (its live bookings and blocks, the location's blocks, occurrences of repeating series).
-- A start is offered when some eligible team member's free ranges contain [start, start + length).
--
-- Availability reads busy time of every team member, also for an own-records MEMBER who reads
-- only its own appointments: the busy ranges come from definer helpers that answer ranges only,
-- after the caller's own policies found the location (out of reach: 404).
set local role svc_owner;

--------------------------------------------------------------------------------
-- Opening ranges
--------------------------------------------------------------------------------
-- The openings of weekly hours on the local days that `within` touches, one range per entry
-- (not merged: each opening of the location's hours starts its own grid of slots).
create or replace function app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange)
returns table (opening tstzrange)
language sql stable parallel safe as $$
  select r
    from generate_series((lower(within) at time zone tz)::date - 1, (upper(within) at time zone tz)::date, interval '1 day') g(d)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(hours) = 'array' then hours else '[]' end) h(e)
    cross join lateral (select tstzrange((g.d::date + (h.e->>'open')::time) at time zone tz,
                                         (g.d::date + (h.e->>'close')::time) at time zone tz, '[)') as r) x
   where h.e->>'day' = lower(to_char(g.d, 'dy'))
     and (h.e->>'close')::time > (h.e->>'open')::time
     and x.r && within
   order by lower(x.r)
$$;
comment on function app_hidden.opening_ranges(jsonb, text, tstzrange) is
  'Each opening of weekly hours (wall times in the zone, 24:00 = midnight after) on the days `within` touches, as an absolute range.';
grant execute on function app_hidden.opening_ranges(jsonb, text, tstzrange) to svc_request, svc_worker;

create or replace function app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) returns tstzmultirange
language plpgsql stable parallel safe as $$
begin
  return (select coalesce(range_agg(o.opening), '{}'::tstzmultirange)
            from app_hidden.opening_ranges(opening_multirange.hours, opening_multirange.tz, opening_multirange.within) o);
end $$;
comment on function app_hidden.opening_multirange(jsonb, text, tstzrange) is 'The openings of weekly hours around `within`, merged.';
-- The helpers every request calls are plpgsql, not SQL: a SQL function that cannot be inlined
-- (an aggregate, a definer, a SET clause) is planned again at every call from a new statement,
-- which is every request; a plpgsql one keeps its plans for the session. (eligible_team_members
-- as SQL took about 0.5 ms a call, as plpgsql under 0.1.)
grant execute on function app_hidden.opening_multirange(jsonb, text, tstzrange) to svc_request, svc_worker;

-- The local day `d` of a zone as an absolute range (23, 24 or 25 hours long).
create or replace function app_hidden.local_day(d date, tz text) returns tstzrange
language sql stable parallel safe as $$
  select tstzrange(d::timestamp at time zone tz, (d + 1)::timestamp at time zone tz, '[)')
$$;
grant execute on function app_hidden.local_day(date, text) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Free time
--------------------------------------------------------------------------------
-- The time of each team member (or calendar) within `within`, in the order given (`ord`):
--   open   the location's hours, less the location's own blocks and location-wide series (they
--          keep everyone busy), cut to the team member's own hours (NULL: the location's)
--   busy   its live bookings and blocks (at any location: one person is in one place at a time)
--          and the occurrences of its live series
-- A range is free for it when `open @> range and not busy && range`: no multirange is built per
-- team member, and a caller looking for anyone free stops at the first. A definer: it reads the
-- busy time of every team member, also for an own-records MEMBER who cannot read those
-- appointments, and answers ranges only, after the caller's own policies found the location.
-- Each distinct week of working hours is turned into ranges once, and the busy rows are read in
-- one pass (the exclusion constraints' GiST indexes serve them).
drop function if exists app_hidden.busy_ranges(uuid, uuid, uuid[], uuid[], tstzrange);
drop function if exists app_hidden.free_ranges(app_public.locations, uuid[], uuid[], tstzrange);
create or replace function app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange)
returns table (staff_profile_id uuid, calendar_id uuid, ord int, open tstzmultirange, busy tstzmultirange)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  open_location tstzmultirange := app_hidden.opening_multirange(loc.hours, loc.timezone, within);
  everyone tstzmultirange;
begin
  -- the location's blocks and its location-wide series: everyone's busy time
  select coalesce(range_agg(x.during), '{}') into everyone from (
    select a.during from app_public.appointments a
     where a.organization_id = loc.organization_id and a.location_id = loc.id and a.status = 'booked' and a.rrule is null
       and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null and a.during && within
    union all
    select o.during from app_public.appointment_occurrences o
      join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
     where o.organization_id = loc.organization_id and o.during && within and a.status = 'booked'
       and a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null) x;
  open_location := open_location - everyone;
  return query
  with members as (
    select m.id, m.n, sp.working_hours
      from unnest(team_members) with ordinality m(id, n)
      join app_public.staff_profiles sp on sp.organization_id = loc.organization_id and sp.id = m.id
  ), own_hours as (
    -- each distinct week of working hours once (most team members keep the location's: NULL)
    select h.working_hours, case when h.working_hours is null then open_location
                                 else open_location * app_hidden.opening_multirange(h.working_hours, loc.timezone, within) end as r
      from (select distinct working_hours from members) h
  ), busy as (
    select x.staff_profile_id, x.calendar_id, range_agg(x.during) as r from (
      select a.staff_profile_id, a.calendar_id, a.during from app_public.appointments a
       where a.organization_id = loc.organization_id and a.status = 'booked' and a.rrule is null
         and a.staff_profile_id = any(team_members) and a.during && within
      union all
      select a.staff_profile_id, a.calendar_id, a.during from app_public.appointments a
       where a.organization_id = loc.organization_id and a.status = 'booked' and a.rrule is null
         and a.calendar_id = any(calendars) and a.during && within
      union all
      select a.staff_profile_id, a.calendar_id, o.during from app_public.appointment_occurrences o
        join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
       where o.organization_id = loc.organization_id and o.during && within and a.status = 'booked'
         and (a.staff_profile_id = any(team_members) or a.calendar_id = any(calendars))) x
     group by x.staff_profile_id, x.calendar_id
  )
  select m.id, null::uuid, m.n::int, oh.r, coalesce(b.r, '{}')
    from members m
    join own_hours oh on oh.working_hours is not distinct from m.working_hours
    left join busy b on b.staff_profile_id = m.id
  union all
  select null::uuid, c.id, c.n::int, open_location, coalesce(b.r, '{}')
    from unnest(calendars) with ordinality c(id, n)
    left join busy b on b.calendar_id = c.id;
end $$;
comment on function app_hidden.team_time(app_public.locations, uuid[], uuid[], tstzrange) is
  'Open time (location hours less its blocks, * own hours) and busy time (bookings, blocks, series) of each team member '
  'and calendar within a range: free for a range when open @> range and not busy && range.';
grant execute on function app_hidden.team_time(app_public.locations, uuid[], uuid[], tstzrange) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Who may do a booking
--------------------------------------------------------------------------------
-- The team members of a location that may take a booking: those who do the offering (an offering
-- without team members: everyone) and, for a home visit, those who cover the postal code (a
-- territory without team members: everyone of its location). Oldest first.
create or replace function app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid,
  postal_code text, country_code text)
returns uuid[]
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return (
  select coalesce(array_agg(sp.id order by sp.created_at, sp.id), '{}')
    from app_public.staff_profiles sp
    join app_public.people p on p.organization_id = sp.organization_id and p.id = sp.person_id and p.active
    join app_public.person_locations pl on pl.organization_id = sp.organization_id and pl.person_id = sp.person_id
   where sp.organization_id = eligible_team_members.organization_id and pl.location_id = eligible_team_members.location_id
     and (eligible_team_members.offering_id is null
          or not exists (select 1 from app_public.offering_team_members ot
                          where ot.organization_id = eligible_team_members.organization_id and ot.offering_id = eligible_team_members.offering_id)
          or exists (select 1 from app_public.offering_team_members ot
                      where ot.organization_id = eligible_team_members.organization_id and ot.offering_id = eligible_team_members.offering_id
                        and ot.staff_profile_id = sp.id))
     and (eligible_team_members.postal_code is null
          or exists (select 1 from app_public.territories t
                      where t.organization_id = eligible_team_members.organization_id and t.location_id = eligible_team_members.location_id
                        and t.country_code = upper(eligible_team_members.country_code)
                        and app_hidden.postal_code_key(eligible_team_members.postal_code) = any(t.postal_codes)
                        and (not exists (select 1 from app_public.territory_team_members tt
                                          where tt.organization_id = t.organization_id and tt.territory_id = t.id)
                             or exists (select 1 from app_public.territory_team_members tt
                                         where tt.organization_id = t.organization_id and tt.territory_id = t.id
                                           and tt.staff_profile_id = sp.id)))));
end $$;
comment on function app_hidden.eligible_team_members(uuid, uuid, uuid, text, text) is
  'Team members of the location who do the offering and cover the postal code (each filter skipped when NULL), oldest first.';
grant execute on function app_hidden.eligible_team_members(uuid, uuid, uuid, text, text) to svc_request, svc_worker;

-- Whether some territory of the location covers the postal code.
create or replace function app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text)
returns boolean
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return exists (select 1 from app_public.territories t
                  where t.organization_id = territory_covers.organization_id and t.location_id = territory_covers.location_id
                    and t.country_code = upper(territory_covers.country_code)
                    and app_hidden.postal_code_key(territory_covers.postal_code) = any(t.postal_codes));
end $$;
grant execute on function app_hidden.territory_covers(uuid, uuid, text, text) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- appointments_availability
--------------------------------------------------------------------------------
-- The caller's policies find the location and the offering (out of reach or unknown: 404); the
-- slots come from the helpers above. Length: the offering's, else duration_minutes, else the
-- location's slot interval. Unstaffed locations offer their calendars' free time. A slot is a
-- start and an end (the spec's shape); who was considered is said once, beside the slots
-- (team_member_ids, or calendar_ids): naming every free team member in every slot made the
-- answer ten times larger for a location of 20, for what team_member_id asks directly.
create or replace function app_public.appointments_availability(location_id uuid, day date, offering_id uuid default null,
  team_member_id uuid default null, postal_code text default null, country_code text default null,
  duration_minutes int default null)
returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  loc app_public.locations;
  o app_public.offerings;
  len interval;
  cc text := country_code;
  members uuid[] := '{}';
  cals uuid[] := '{}';
  slots jsonb;
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

  with t as materialized (
    select t.open, t.busy from app_hidden.team_time(loc, members, cals, app_hidden.local_day(day, loc.timezone)) t
  ), starts as (
    -- each opening of the location's hours on that day starts a grid of slots
    select distinct s
      from app_hidden.opening_ranges(loc.hours, loc.timezone, app_hidden.local_day(day, loc.timezone)) w
      cross join lateral generate_series(lower(w.opening), upper(w.opening) - len, make_interval(mins => loc.slot_interval_minutes)) s
     where (s at time zone loc.timezone)::date = day
  )
  select coalesce(jsonb_agg(jsonb_build_object('start', x.s, 'end', x.s + len) order by x.s), '[]')
    into slots
    from starts x
   where exists (select 1 from t where t.open @> tstzrange(x.s, x.s + len, '[)') and not t.busy && tstzrange(x.s, x.s + len, '[)'));

  return jsonb_build_object(
    'location_id', loc.id,
    'date', day,
    'timezone', loc.timezone,
    'offering_id', o.id,
    'duration_minutes', extract(epoch from len)::int / 60,
    'slot_interval_minutes', loc.slot_interval_minutes,
    'team_member_ids', to_jsonb(members),
    'calendar_ids', to_jsonb(cals),
    'slots', slots);
end $$;
comment on function app_public.appointments_availability(uuid, date, uuid, uuid, text, text, int) is
  'appointments_availability: the starts on a local day where some eligible team member (or calendar) is free for the '
  'whole length, stepped by the slot interval from each opening of the location''s hours; 404 for a location, offering '
  'or team member out of reach.';
grant execute on function app_public.appointments_availability(uuid, date, uuid, uuid, text, text, int) to svc_request;

reset role;
