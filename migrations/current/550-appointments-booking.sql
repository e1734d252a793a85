-- Booking and changing bookings: appointments_create, appointments_update, appointments_reschedule,
-- appointments_cancel (spec: Appointments; issue "Rules to get exactly right").
--
-- Race-free: the insert (or the reschedule's update) is what claims the time. The exclusion
-- constraints of 500 refuse a second live overlapping row of a team member or a calendar with
-- 23P01, which these functions answer as 409 slot_taken; nothing reads-then-writes in the
-- application. Location-wide blocks and occurrences of repeating series are not under the
-- constraints (they are written by fixtures, not raced for) and are checked before the write.
--
-- Who may book or change what (app_hidden.current_may_book_team_member):
--   owner, admin                 any team member
--   MANAGER with appointments    any team member at its locations (the location's policy: 404 elsewhere)
--   MANAGER without, MEMBER      only itself (its staff profile); another → 403 insufficient_role
--   no role (organization key), Member key, Manager key without the power and without a person:
--                                no team member at all (403): they book calendars only
-- A calendar is booked by anyone with appointments:write who reaches its location. A
-- location-wide block may be changed only by owner, admin and organization keys (403 else).
--
-- The functions run as the caller (its policies: another location's appointment, location,
-- contact or calendar is 404); the busy time of others is read through definer helpers that answer
-- ranges only (app_hidden.team_time, app_hidden.held_by_blocks_or_series).
set local role svc_owner;

--------------------------------------------------------------------------------
-- Writes under the policies
--------------------------------------------------------------------------------
drop policy if exists insert_in_reach on app_public.appointments;
create policy insert_in_reach on app_public.appointments for insert with check (
  organization_id = (select app_hidden.current_org_id())
  and ((select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[])));
drop policy if exists update_in_reach on app_public.appointments;
create policy update_in_reach on app_public.appointments for update using (
  organization_id = (select app_hidden.current_org_id())
  and ((select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[]))
  and app_hidden.current_reads_team_member(staff_profile_id))
  with check (organization_id = (select app_hidden.current_org_id()));
grant insert, update on app_public.appointments to svc_request;

--------------------------------------------------------------------------------
-- Claim helpers
--------------------------------------------------------------------------------
create or replace function app_hidden.current_may_book_team_member(staff_profile_id uuid) returns boolean
language plpgsql stable parallel safe as $$
begin
  return coalesce(case app_hidden.current_role()
    when 'owner' then true
    when 'admin' then true
    when 'manager' then 'appointments' = any(app_hidden.current_powers())
                        or current_may_book_team_member.staff_profile_id = app_hidden.current_staff_profile_id()
    when 'member' then current_may_book_team_member.staff_profile_id = app_hidden.current_staff_profile_id()
    else false end, false);
end $$;
comment on function app_hidden.current_may_book_team_member(uuid) is
  'Whether the credential may book or change an appointment of this team member: owner and admin any; a manager with '
  'the appointments power any (at its locations); a manager without it and a member only itself; keys with no role, '
  'and Member or Manager keys without the power, none. Stricter than current_has_power, which grants organization keys all.';
grant execute on function app_hidden.current_may_book_team_member(uuid) to svc_request, svc_worker;

-- An organization key whose creator has left (deactivated) cannot book: the booking would have
-- no one answerable for it (spec: 422 "creator of key left the organization").
create or replace function app_hidden.current_key_creator_left() returns boolean
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return coalesce((select not p.active
                     from app_private.api_keys k
                     join app_public.people p on p.organization_id = k.organization_id and p.id = k.created_by
                    where k.id = app_hidden.current_credential_id() and k.organization_id = app_hidden.current_org_id()
                      and k.kind = 'organization'), false);
end $$;
comment on function app_hidden.current_key_creator_left() is 'Whether the credential is an organization key whose creator is no longer active.';
grant execute on function app_hidden.current_key_creator_left() to svc_request;

--------------------------------------------------------------------------------
-- Shared checks
--------------------------------------------------------------------------------
-- The location's booking options, carried by offering_required.
create or replace function app_hidden.booking_options(organization_id uuid, location_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'location_id', booking_options.location_id,
    'offerings', coalesce((select jsonb_agg(jsonb_build_object('id', o.id, 'name', o.name, 'duration_minutes', o.duration_minutes)
                                            order by o.name, o.id)
                             from app_public.offerings o
                            where o.organization_id = booking_options.organization_id and o.location_id = booking_options.location_id), '[]'),
    'team_member_ids', coalesce(to_jsonb(array(select app_hidden.location_team_members(booking_options.organization_id,
                                                                                       booking_options.location_id))), '[]'))
$$;
grant execute on function app_hidden.booking_options(uuid, uuid) to svc_request;

-- Whether location-wide blocks or occurrences of repeating series hold any of the range for
-- this team member or calendar (single bookings are the exclusion constraints' business).
create or replace function app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid,
  during tstzrange, except_id uuid default null)
returns boolean
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return exists (
    select 1 from app_public.appointments a
     where a.organization_id = loc.organization_id and a.location_id = loc.id and a.status = 'booked' and a.rrule is null
       and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null and a.during && held_by_blocks_or_series.during
       and a.id is distinct from held_by_blocks_or_series.except_id)
  or exists (
    select 1 from app_public.appointment_occurrences o
      join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
     where o.organization_id = loc.organization_id and o.during && held_by_blocks_or_series.during and a.status = 'booked'
       and (a.staff_profile_id = held_by_blocks_or_series.staff_profile_id or a.calendar_id = held_by_blocks_or_series.calendar_id
            or (a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null)));
end $$;
grant execute on function app_hidden.held_by_blocks_or_series(app_public.locations, uuid, uuid, tstzrange, uuid) to svc_request;

-- Whether the range lies inside the location's hours (and the team member's own, when named).
create or replace function app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) returns boolean
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return app_hidden.opening_multirange(loc.hours, loc.timezone, within_hours.during) @> within_hours.during
     and (within_hours.staff_profile_id is null
          or app_hidden.opening_multirange(
               coalesce((select sp.working_hours from app_public.staff_profiles sp
                          where sp.organization_id = loc.organization_id and sp.id = within_hours.staff_profile_id), loc.hours),
               loc.timezone, within_hours.during) @> within_hours.during);
end $$;
grant execute on function app_hidden.within_hours(app_public.locations, uuid, tstzrange) to svc_request;

-- Concurrent inserts of overlapping ranges for one team member or calendar can deadlock inside
-- the exclusion constraint's check (each waits for the other's still-running transaction, a
-- known trait of exclusion constraints). Writers of one team member's (or calendar's) time
-- take this transaction lock first, so they meet one at a time: the second finds the first's
-- row committed and gets 23P01 at once. The constraint stays what decides; the lock only orders
-- the waiters. Taken by every booking write, always one target at a time in the order of
-- location_team_members, so two of these locks never wait on each other in a cycle.
create or replace function app_hidden.lock_booking_target(organization_id uuid, target uuid) returns void
language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('appointments:' || lock_booking_target.organization_id::text || ':'
                                                 || lock_booking_target.target::text, 0));
end $$;
comment on function app_hidden.lock_booking_target(uuid, uuid) is
  'Orders concurrent writers of one team member''s or calendar''s time (see above); the exclusion constraint decides.';
grant execute on function app_hidden.lock_booking_target(uuid, uuid) to svc_request;

create or replace function app_hidden.slot_taken() returns void
language plpgsql as $$
begin
  perform app_hidden.raise_error(409, 'slot_taken', 'This time is already booked; ask appointments_availability for open slots');
end $$;
grant execute on function app_hidden.slot_taken() to svc_request;

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
  free record;
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
  candidates := app_hidden.eligible_team_members(org, loc.id, o.id, postal, country);
  if tm is not null and not tm = any(candidates) then
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

--------------------------------------------------------------------------------
-- Changing one: update, reschedule, cancel
--------------------------------------------------------------------------------
-- The appointment (or block) the caller may change, locked: 404 out of reach, 403 for a team
-- member's row the caller may not book or a location-wide block for a manager or member, 409
-- for a repeating series.
create or replace function app_hidden.appointment_for_change(appointment_id uuid) returns app_public.appointments
language plpgsql volatile as $$
declare
  a app_public.appointments;
begin
  select * into a from app_public.appointments x
   where x.organization_id = app_hidden.current_org_id() and x.id = appointment_id
   for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Appointment not found');
  end if;
  if a.staff_profile_id is not null then
    if not app_hidden.current_may_book_team_member(a.staff_profile_id) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not change appointments of this team member');
    end if;
  elsif a.kind = 'block' and a.calendar_id is null then
    if app_hidden.current_role() not in ('owner', 'admin', 'organization') then
      perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner, an admin or an organization key may change a location-wide block');
    end if;
  end if;
  if a.rrule is not null then
    perform app_hidden.raise_error(409, 'recurring_series_not_supported',
      'This is a repeating series; the API cannot change one (change it where it was set up)');
  end if;
  return a;
end $$;
grant execute on function app_hidden.appointment_for_change(uuid) to svc_request;

-- patch: the fields sent (title, description, attendee_*); null clears.
create or replace function app_public.appointments_update(appointment_id uuid, patch jsonb) returns jsonb
language plpgsql volatile as $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
begin
  update app_public.appointments x set
    title = case when patch ? 'title' then patch->>'title' else x.title end,
    description = case when patch ? 'description' then patch->>'description' else x.description end,
    attendee_name = case when patch ? 'attendee_name' then patch->>'attendee_name' else x.attendee_name end,
    attendee_phone = case when patch ? 'attendee_phone' then patch->>'attendee_phone' else x.attendee_phone end,
    attendee_email = case when patch ? 'attendee_email' then patch->>'attendee_email' else x.attendee_email end,
    attendee_notes = case when patch ? 'attendee_notes' then patch->>'attendee_notes' else x.attendee_notes end,
    updated_at = now()
   where x.organization_id = a.organization_id and x.id = a.id
  returning * into a;
  return app_hidden.appointment_json(a);
end $$;
comment on function app_public.appointments_update(uuid, jsonb) is
  'appointments_update: title, description and attendee fields only (times: appointments_reschedule; status: appointments_cancel).';
grant execute on function app_public.appointments_update(uuid, jsonb) to svc_request;

-- The same rules as a booking for the new time: inside hours (a booking; a block may be set
-- anywhere), the offering's length, free of blocks and series, and the constraint for the rest.
create or replace function app_public.appointments_reschedule(appointment_id uuid, start_time timestamptz, end_time timestamptz)
returns jsonb
language plpgsql volatile as $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
  loc app_public.locations;
  minutes int;
  during tstzrange;
begin
  if a.status = 'cancelled' then
    perform app_hidden.raise_error(409, 'appointment_cancelled', 'This appointment is cancelled; book a new one');
  end if;
  if end_time <= start_time then
    perform app_hidden.raise_error(400, 'bad_request', 'body.end_time: must be after start_time');
  end if;
  during := tstzrange(start_time, end_time, '[)');
  select * into loc from app_public.locations l where l.organization_id = a.organization_id and l.id = a.location_id;
  if a.kind = 'appointment' then
    select o.duration_minutes into minutes from app_public.offerings o where o.organization_id = a.organization_id and o.id = a.offering_id;
    if minutes is not null and end_time - start_time <> make_interval(mins => minutes) then
      perform app_hidden.raise_error(409, 'duration_mismatch',
        format('The offering takes %s minutes: end_time must be start_time + %s minutes', minutes, minutes));
    end if;
    if not app_hidden.within_hours(loc, a.staff_profile_id, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The new time is outside the hours of the location or the team member');
    end if;
    if app_hidden.held_by_blocks_or_series(loc, a.staff_profile_id, a.calendar_id, during, a.id) then
      perform app_hidden.slot_taken();
    end if;
  end if;
  if coalesce(a.staff_profile_id, a.calendar_id) is not null then
    perform app_hidden.lock_booking_target(a.organization_id, coalesce(a.staff_profile_id, a.calendar_id));
  end if;
  begin
    update app_public.appointments x set starts_at = start_time, ends_at = end_time, updated_at = now()
     where x.organization_id = a.organization_id and x.id = a.id
    returning * into a;
  exception when exclusion_violation then
    perform app_hidden.slot_taken();
  end;
  return app_hidden.appointment_json(a);
end $$;
comment on function app_public.appointments_reschedule(uuid, timestamptz, timestamptz) is
  'appointments_reschedule: moves a live appointment or block, re-checking hours, length and availability (409 slot_taken).';
grant execute on function app_public.appointments_reschedule(uuid, timestamptz, timestamptz) to svc_request;

-- Cancelling a cancelled one answers it as it is.
create or replace function app_public.appointments_cancel(appointment_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
begin
  if a.status = 'booked' then
    update app_public.appointments x set status = 'cancelled', cancelled_at = now(), updated_at = now()
     where x.organization_id = a.organization_id and x.id = a.id
    returning * into a;
  end if;
  return app_hidden.appointment_json(a);
end $$;
comment on function app_public.appointments_cancel(uuid) is 'appointments_cancel: frees the time; a cancelled one answers as it is.';
grant execute on function app_public.appointments_cancel(uuid) to svc_request;

reset role;
