--! Previous: sha1:2fa543ceb4029e8ebfa4529e8582e6ca62f2eb84
--! Hash: sha1:95b08036aaef70f5fd845a39d3e2e227ae731835
--! Message: Booking write path: a named team member's eligibility looked up alone, hours tested against the day's opening first, the fingerprint inlined, a new booking's own client inserted without asking

--! split: 010-booking-write-path.sql
-- What a booking paid for beyond its row (docs/appointments-booking.md, "Performance"; a function
-- profile of 8 connections booking through the API, track_functions = all):
--  - app_hidden.idempotency_fingerprint, a SQL function with a SET clause, is never inlined and
--    was planned again at every call (65 µs of every idempotent write). It reads only
--    pg_catalog functions, so it needs no search_path of its own: without the clause it is
--    inlined into the claim and the record that call it.
--  - app_hidden.current_key_creator_left read the key and its creator for every booking; only an
--    organization key has a creator who may leave, and a personal key (svc.user_id set) answers
--    at once.
--  - A named team member's eligibility was the whole eligible list (every team member of the
--    location through four tables, aggregated) searched for one id: eligible_team_members takes
--    the team member to look up alone.
--  - within_hours built the week's openings around the booking twice (the location's, the team
--    member's; 47 µs each): a booking inside one opening of its day is found by testing that
--    day's entries; the merged openings decide only the rest (app_hidden.hours_hold).
--  - A new booking's own-client row was refreshed by asking whether a live booking joins the
--    contact and the team member; the new row is one, so the row is inserted (or found there).
-- Tried and left out: INSERT … ON CONFLICT DO NOTHING in place of the exception block that turns
-- a lost race into 409 slot_taken (the exclusion constraints can be its arbiters). The
-- speculative insertion it takes cost more (15–40 µs a booking, measured alternating in one
-- session) than the subtransaction it saves.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Idempotency: the fingerprint, inlined
--------------------------------------------------------------------------------
create or replace function app_hidden.idempotency_fingerprint(details text)
returns text language sql stable parallel safe as $$
  select encode(sha256(convert_to(details
    || '|' || current_setting('svc.role') || '|' || current_setting('svc.location_ids')
    || '|' || current_setting('svc.powers') || '|' || current_setting('svc.scopes'), 'UTF8')), 'hex')
$$;
comment on function app_hidden.idempotency_fingerprint(text) is
  'Fingerprint of an idempotent call: the details'' hash and the current credential''s access (inlined: no SET clause).';

--------------------------------------------------------------------------------
-- The creator of an organization key
--------------------------------------------------------------------------------
create or replace function app_hidden.current_key_creator_left() returns boolean
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if coalesce(current_setting('svc.user_id', true), '') <> '' then
    return false;  -- a personal key (or an OAuth token): its person is the one using it
  end if;
  return coalesce((select not p.active
                     from app_private.api_keys k
                     join app_public.people p on p.organization_id = k.organization_id and p.id = k.created_by
                    where k.id = app_hidden.current_credential_id() and k.organization_id = app_hidden.current_org_id()
                      and k.kind = 'organization'), false);
end $$;

--------------------------------------------------------------------------------
-- Who may do a booking: one team member looked up alone
--------------------------------------------------------------------------------
-- The rule, once: an SQL table function, inlined into the two statements that use it (so the
-- team member's id reaches the scan), run only inside eligible_team_members (a definer).
create or replace function app_hidden.eligible_team_member_rows(organization_id uuid, location_id uuid, offering_id uuid,
  postal_code text, country_code text)
returns table (id uuid, created_at timestamptz)
language sql stable as $$
  select sp.id, sp.created_at
    from app_public.staff_profiles sp
    join app_public.people p on p.organization_id = sp.organization_id and p.id = sp.person_id and p.active
    join app_public.person_locations pl on pl.organization_id = sp.organization_id and pl.person_id = sp.person_id
   where sp.organization_id = eligible_team_member_rows.organization_id and pl.location_id = eligible_team_member_rows.location_id
     and (eligible_team_member_rows.offering_id is null
          or not exists (select 1 from app_public.offering_team_members ot
                          where ot.organization_id = eligible_team_member_rows.organization_id
                            and ot.offering_id = eligible_team_member_rows.offering_id)
          or exists (select 1 from app_public.offering_team_members ot
                      where ot.organization_id = eligible_team_member_rows.organization_id
                        and ot.offering_id = eligible_team_member_rows.offering_id and ot.staff_profile_id = sp.id))
     and (eligible_team_member_rows.postal_code is null
          or exists (select 1 from app_public.territories t
                      where t.organization_id = eligible_team_member_rows.organization_id
                        and t.location_id = eligible_team_member_rows.location_id
                        and t.country_code = upper(eligible_team_member_rows.country_code)
                        and app_hidden.postal_code_key(eligible_team_member_rows.postal_code) = any(t.postal_codes)
                        and (not exists (select 1 from app_public.territory_team_members tt
                                          where tt.organization_id = t.organization_id and tt.territory_id = t.id)
                             or exists (select 1 from app_public.territory_team_members tt
                                         where tt.organization_id = t.organization_id and tt.territory_id = t.id
                                           and tt.staff_profile_id = sp.id))))
$$;
comment on function app_hidden.eligible_team_member_rows(uuid, uuid, uuid, text, text) is
  'The rule of eligible_team_members as rows (inlined into it; reads past the policies, so not granted).';
revoke all on function app_hidden.eligible_team_member_rows(uuid, uuid, uuid, text, text) from public;

-- Two statements, not one with "only is null or id = only": that one had no plan good for both,
-- and was planned again at every call (70–100 µs against 37 for the list).
drop function if exists app_hidden.eligible_team_members(uuid, uuid, uuid, text, text);
drop function if exists app_hidden.eligible_team_members(uuid, uuid, uuid, text, text, uuid);
create function app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid,
  postal_code text, country_code text, only_team_member_id uuid default null)
returns uuid[]
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if only_team_member_id is null then
    return (select coalesce(array_agg(e.id order by e.created_at, e.id), '{}')
              from app_hidden.eligible_team_member_rows(organization_id, location_id, offering_id, postal_code, country_code) e);
  end if;
  return (select coalesce(array_agg(e.id), '{}')
            from app_hidden.eligible_team_member_rows(organization_id, location_id, offering_id, postal_code, country_code) e
           where e.id = only_team_member_id);
end $$;
comment on function app_hidden.eligible_team_members(uuid, uuid, uuid, text, text, uuid) is
  'Team members of the location who do the offering and cover the postal code (each filter skipped when NULL), oldest first; '
  'only_team_member_id: that one alone (an empty array when it is not eligible).';
revoke all on function app_hidden.eligible_team_members(uuid, uuid, uuid, text, text, uuid) from public;
grant execute on function app_hidden.eligible_team_members(uuid, uuid, uuid, text, text, uuid) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Hours: one opening of the day first
--------------------------------------------------------------------------------
-- Whether `during` lies inside the weekly hours (in zone tz). An opening of the day `during`
-- starts on that holds it all answers at once; otherwise the merged openings around it decide
-- (a booking across two adjacent openings, across midnight, or outside the hours). The first
-- test is one of the ranges the second merges, so both agree.
create or replace function app_hidden.hours_hold(hours jsonb, tz text, during tstzrange) returns boolean
language plpgsql stable parallel safe as $$
declare
  d date := (lower(during) at time zone tz)::date;
begin
  if exists (select 1 from jsonb_array_elements(case when jsonb_typeof(hours) = 'array' then hours else '[]' end) h(e)
              where h.e->>'day' = lower(to_char(d, 'dy'))
                and (h.e->>'close')::time > (h.e->>'open')::time
                and tstzrange((d + (h.e->>'open')::time) at time zone tz, (d + (h.e->>'close')::time) at time zone tz, '[)')
                    @> during) then
    return true;
  end if;
  return app_hidden.opening_multirange(hours, tz, during) @> during;
end $$;
comment on function app_hidden.hours_hold(jsonb, text, tstzrange) is
  'Whether a range lies inside weekly hours (in a time zone): one opening of its first day, else the merged openings around it.';
revoke all on function app_hidden.hours_hold(jsonb, text, tstzrange) from public;
grant execute on function app_hidden.hours_hold(jsonb, text, tstzrange) to svc_request, svc_worker;

-- Whether the range lies inside the location's hours (and the team member's own, when named:
-- a team member without hours of its own keeps the location's).
create or replace function app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) returns boolean
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  own jsonb;
begin
  if not app_hidden.hours_hold(loc.hours, loc.timezone, within_hours.during) then
    return false;
  end if;
  if within_hours.staff_profile_id is null then
    return true;
  end if;
  select sp.working_hours into own from app_public.staff_profiles sp
   where sp.organization_id = loc.organization_id and sp.id = within_hours.staff_profile_id;
  return own is null or app_hidden.hours_hold(own, loc.timezone, within_hours.during);
end $$;

--------------------------------------------------------------------------------
-- Own clients of a new booking
--------------------------------------------------------------------------------
create or replace function app_private.tg_appointments__own_clients() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.refresh_appointment_own_client(old.organization_id, old.staff_profile_id, old.contact_id);
  end if;
  if tg_op = 'INSERT' and new.kind = 'appointment' and new.status = 'booked' then
    -- the new row is a live booking joining them: nothing to ask
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'appointments'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id and new.contact_id is not null
    on conflict do nothing;
  elsif tg_op in ('INSERT', 'UPDATE') then
    perform app_private.refresh_appointment_own_client(new.organization_id, new.staff_profile_id, new.contact_id);
  end if;
  return null;
end $$;

--------------------------------------------------------------------------------
-- appointments_create
--------------------------------------------------------------------------------
-- Checks in this order: what is named exists in reach (404), the creator of an organization key
-- is still here (422), who may book whom (403), then the booking rules (409): offering_required,
-- duration_mismatch, team_member_not_eligible, address_out_of_area, outside_hours,
-- no_team_member_available, slot_taken. The write is the insert; the exclusion constraint
-- decides a race.
create or replace function app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid,
  team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamptz, end_time timestamptz, title text)
returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  loc app_public.locations;
  cal app_public.calendars;
  o app_public.offerings;
  c record;
  during tstzrange;
  postal text := nullif(btrim(service_address->>'postal_code'), '');
  country text := upper(nullif(btrim(service_address->>'country_code'), ''));
  tm uuid := team_member_id;
  candidates uuid[];
  chosen uuid;
  a app_public.appointments;
begin
  if (location_id is null) = (calendar_id is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'Send exactly one of location_id and calendar_id');
  end if;
  if calendar_id is not null and (offering_id is not null or team_member_id is not null or service_address is not null) then
    perform app_hidden.raise_error(400, 'bad_request',
      'offering_id, team_member_id and service_address go with location_id; a calendar is booked with none of them');
  end if;
  if end_time <= start_time then
    perform app_hidden.raise_error(400, 'bad_request', 'body.end_time: must be after start_time');
  end if;
  during := tstzrange(start_time, end_time, '[)');

  -- what the request names, found through the caller's policies
  if calendar_id is not null then
    select * into cal from app_public.calendars x where x.organization_id = org and x.id = appointments_create.calendar_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Calendar not found');
    end if;
  end if;
  select * into loc from app_public.locations l where l.organization_id = org and l.id = coalesce(appointments_create.location_id, cal.location_id);
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  select x.id, x.name, x.phone, x.email::text as email into c from app_public.contacts x where x.organization_id = org and x.id = appointments_create.contact_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  if offering_id is not null then
    select * into o from app_public.offerings x where x.organization_id = org and x.id = appointments_create.offering_id and x.location_id = loc.id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
    end if;
  end if;
  if tm is not null and not exists (select 1 from app_public.staff_profiles sp where sp.organization_id = org and sp.id = tm) then
    perform app_hidden.raise_error(404, 'not_found', 'Team member not found');
  end if;
  if app_hidden.current_key_creator_left() then
    perform app_hidden.raise_error(422, 'key_creator_left',
      'The person who created this organization key has left the organization; bookings need a key of someone still here');
  end if;

  if cal.id is not null then
    -- a calendar: an unstaffed location's resource, bookable by anyone who reaches it
    if loc.staffed then
      perform app_hidden.raise_error(400, 'bad_request', 'body.calendar_id: this location is staffed; book it by location_id (and a team member)');
    end if;
    if not app_hidden.within_hours(loc, null, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the location''s hours');
    end if;
    if app_hidden.held_by_blocks_or_series(loc, null, cal.id, during) then
      perform app_hidden.slot_taken();
    end if;
    perform app_hidden.lock_booking_target(org, cal.id);
    begin
      insert into app_public.appointments (organization_id, kind, location_id, calendar_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, cal.id, c.id, title, c.name, c.phone, c.email,
        start_time, end_time, app_hidden.current_user_id(), app_hidden.current_credential_id(), 'api')
      returning * into a;
    exception when exclusion_violation then
      perform app_hidden.slot_taken();
    end;
    return app_hidden.appointment_json(a);
  end if;

  if not loc.staffed then
    perform app_hidden.raise_error(400, 'bad_request', 'body.location_id: this location is not staffed; book one of its calendars by calendar_id (calendars_list)');
  end if;

  -- who may book whom
  if tm is null and app_hidden.current_role() in ('manager', 'member')
     and not (app_hidden.current_role() = 'manager' and 'appointments' = any(app_hidden.current_powers())) then
    -- a member (or a manager without the power) books itself
    tm := app_hidden.current_staff_profile_id();
    if tm is null then
      perform app_hidden.raise_error(403, 'insufficient_role',
        'This credential books only its own time and has no staff profile; book a calendar, or use a credential that may book team members');
    end if;
  elsif app_hidden.current_role() not in ('owner', 'admin', 'manager', 'member')
        or (tm is not null and not app_hidden.current_may_book_team_member(tm)) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'This credential may not book appointments for this team member (a member books only itself; keys without a role book calendars only)');
  end if;

  -- the booking rules
  if o.id is null and exists (select 1 from app_public.offerings x where x.organization_id = org and x.location_id = loc.id) then
    perform app_hidden.raise_error(409, 'offering_required', 'This location books offerings: send offering_id (booking_options lists them)',
      jsonb_build_object('booking_options', app_hidden.booking_options(org, loc.id)));
  end if;
  if o.id is not null and end_time - start_time <> make_interval(mins => o.duration_minutes) then
    perform app_hidden.raise_error(409, 'duration_mismatch',
      format('The offering takes %s minutes: end_time must be start_time + %s minutes', o.duration_minutes, o.duration_minutes));
  end if;
  if postal is not null and not app_hidden.territory_covers(org, loc.id, postal, country) then
    perform app_hidden.raise_error(409, 'address_out_of_area', 'No territory of this location covers the service address''s postal code');
  end if;
  -- a named team member is looked up alone; the list is needed only to choose one
  candidates := app_hidden.eligible_team_members(org, loc.id, o.id, postal, country, tm);
  if tm is not null and cardinality(candidates) = 0 then
    perform app_hidden.raise_error(409, 'team_member_not_eligible',
      'The team member does not work at this location, does not do this offering, or does not cover this address');
  end if;
  if not app_hidden.within_hours(loc, tm, during) then
    perform app_hidden.raise_error(409, 'outside_hours',
      case when tm is null then 'The time is outside the location''s hours' else 'The time is outside the team member''s working hours' end);
  end if;

  if tm is not null then
    candidates := array[tm];
  else
    -- the first eligible team member (oldest first) who works then and is free
    candidates := array(select m.id from unnest(candidates) with ordinality m(id, n)
                         where app_hidden.within_hours(loc, m.id, during) order by m.n);
    if cardinality(candidates) = 0 then
      perform app_hidden.raise_error(409, 'no_team_member_available', 'No team member who may take this booking works at that time');
    end if;
    candidates := array(select t.staff_profile_id from app_hidden.team_time(loc, candidates, '{}', during) t
                         where t.open @> during and not t.busy && during order by t.ord);
  end if;
  foreach chosen in array candidates loop
    continue when app_hidden.held_by_blocks_or_series(loc, chosen, null, during);
    perform app_hidden.lock_booking_target(org, chosen);
    begin
      insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id, offering_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, service_address, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, chosen, o.id, c.id, title, c.name, c.phone, c.email,
        service_address, start_time, end_time, app_hidden.current_user_id(), app_hidden.current_credential_id(), 'api')
      returning * into a;
      return app_hidden.appointment_json(a);
    exception when exclusion_violation then
      -- someone else took this team member's time meanwhile: the next one, if any
      null;
    end;
  end loop;
  perform app_hidden.slot_taken();
  return null;
end $$;
comment on function app_public.appointments_create(uuid, uuid, uuid, uuid, jsonb, uuid, timestamptz, timestamptz, text) is
  'appointments_create: books a team member (named, or the first free eligible one) at a staffed location, or a calendar '
  'of an unstaffed one; the exclusion constraints decide races (409 slot_taken).';
grant execute on function app_public.appointments_create(uuid, uuid, uuid, uuid, jsonb, uuid, timestamptz, timestamptz, text) to svc_request;

reset role;
