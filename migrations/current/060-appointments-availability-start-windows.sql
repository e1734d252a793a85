-- appointments_availability: the valid starts as one multirange.
--
-- A start s suits a free range r of some team member (or calendar) when [s, s + len) lies within
-- r, that is s in [lower(r), upper(r) - len]. The windows of every team member merged are the
-- valid starts, and each start of the day's grid is one lookup in them. Until now every start
-- was tested against every team member's open and busy multiranges (20 team members and 40
-- starts: 800 tests a call). Same answers (compared over 240 calls of the appointments bench's
-- location: days with and without bookings, DST, every offering, named team members,
-- durations); about a tenth less PostgreSQL CPU a call.
set local role svc_owner;

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
reset role;
