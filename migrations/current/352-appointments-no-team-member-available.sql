-- Appointments: a booking that names no team member, at a time when every eligible team member
-- is booked, blocked or off, answers 409 no_team_member_available (the spec's code for "none
-- named, none free then"), not slot_taken; slot_taken stays for a named team member (or the
-- member itself) and for a calendar. Everything else is appointments_create as it was.
--
-- Checks in this order: what is named exists in reach (404), the creator of an organization key
-- is still here (422), who may book whom (403), then the booking rules (409): offering_required,
-- duration_mismatch, address_out_of_area, team_member_not_eligible, outside_hours,
-- no_team_member_available, slot_taken. The write is the insert; the exclusion constraint
-- decides a race.
set local role svc_owner;

create or replace function app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid,
  team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamptz, end_time timestamptz, title text)
returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  named record;
  loc app_public.locations;
  cal app_public.calendars;
  during tstzrange;
  postal text := nullif(btrim(service_address->>'postal_code'), '');
  country text := upper(nullif(btrim(service_address->>'country_code'), ''));
  tm uuid := team_member_id;
  refusal text;
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

  -- what the request names, found through the caller's policies: one read
  if calendar_id is not null then
    select * into cal from app_public.calendars x where x.organization_id = org and x.id = appointments_create.calendar_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Calendar not found');
    end if;
  end if;
  select l as loc, ct.id as contact_id, ct.name as contact_name, ct.phone as contact_phone, ct.email as contact_email,
         f.id as offering_id, f.duration_minutes,
         appointments_create.team_member_id is null
           or exists (select 1 from app_public.staff_profiles sp
                       where sp.organization_id = org and sp.id = appointments_create.team_member_id) as team_member_found
    into named
    from (select) one
    left join app_public.locations l on l.organization_id = org and l.id = coalesce(appointments_create.location_id, cal.location_id)
    left join lateral (select x.id, x.name, x.phone, x.email::text as email from app_public.contacts x
                        where x.organization_id = org and x.id = appointments_create.contact_id) ct on true
    left join app_public.offerings f on appointments_create.offering_id is not null and f.organization_id = org
                                    and f.id = appointments_create.offering_id and f.location_id = l.id;
  loc := named.loc;
  if loc.id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if named.contact_id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  if offering_id is not null and named.offering_id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
  end if;
  if not named.team_member_found then
    perform app_hidden.raise_error(404, 'not_found', 'Team member not found');
  end if;
  -- only an organization key has a creator who may leave (a personal key's person is its user)
  if app_hidden.current_user_id() is null and app_hidden.current_key_creator_left() then
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
    perform pg_advisory_xact_lock(hashtextextended('appointments:' || org::text || ':' || cal.id::text, 0));
    begin
      insert into app_public.appointments (organization_id, kind, location_id, calendar_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, cal.id, named.contact_id, title, named.contact_name, named.contact_phone,
        named.contact_email, start_time, end_time, app_hidden.current_user_id(), app_hidden.current_credential_id(), 'api')
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
     and not app_hidden.current_may_book_team_member(null) then
    -- a member (or a manager without the appointments power) may not pick among the team: it books itself
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
  if named.offering_id is null then
    if exists (select 1 from app_public.offerings x where x.organization_id = org and x.location_id = loc.id) then
      perform app_hidden.raise_error(409, 'offering_required', 'This location books offerings: send offering_id (booking_options lists them)',
        jsonb_build_object('booking_options', app_hidden.booking_options(org, loc.id)));
    end if;
  elsif end_time - start_time <> make_interval(mins => named.duration_minutes) then
    perform app_hidden.raise_error(409, 'duration_mismatch',
      format('The offering takes %s minutes: end_time must be start_time + %s minutes', named.duration_minutes, named.duration_minutes));
  end if;
  if postal is not null and not app_hidden.territory_covers(org, loc.id, postal, country) then
    perform app_hidden.raise_error(409, 'address_out_of_area', 'No territory of this location covers the service address''s postal code');
  end if;

  if tm is not null then
    -- a named team member (or the member itself): its rules in one statement
    refusal := app_hidden.team_member_refusal(loc, named.offering_id, postal, country, tm, during);
    if refusal = 'team_member_not_eligible' then
      perform app_hidden.raise_error(409, 'team_member_not_eligible',
        'The team member does not work at this location, does not do this offering, or does not cover this address');
    elsif refusal = 'outside_hours' then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the team member''s working hours');
    elsif refusal = 'slot_taken' then
      perform app_hidden.slot_taken();
    end if;
    candidates := array[tm];
  else
    -- the first eligible team member (oldest first) who works then and is free
    candidates := app_hidden.eligible_team_members(org, loc.id, named.offering_id, postal, country, null);
    if not app_hidden.within_hours(loc, null, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the location''s hours');
    end if;
    candidates := array(select m.id from unnest(candidates) with ordinality m(id, n)
                         where app_hidden.within_hours(loc, m.id, during) order by m.n);
    if cardinality(candidates) = 0 then
      perform app_hidden.raise_error(409, 'no_team_member_available', 'No team member who may take this booking works at that time');
    end if;
    candidates := array(select t.staff_profile_id from app_hidden.team_time(loc, candidates, '{}', during) t
                         where t.open @> during and not t.busy && during order by t.ord);
  end if;
  foreach chosen in array candidates loop
    -- (a named team member's blocks and series were asked above)
    continue when tm is null and app_hidden.held_by_blocks_or_series(loc, chosen, null, during);
    -- orders concurrent writers of one team member's time; the exclusion constraint decides
    perform pg_advisory_xact_lock(hashtextextended('appointments:' || org::text || ':' || chosen::text, 0));
    begin
      insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id, offering_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, service_address, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, chosen, named.offering_id, named.contact_id, title, named.contact_name,
        named.contact_phone, named.contact_email, service_address, start_time, end_time, app_hidden.current_user_id(),
        app_hidden.current_credential_id(), 'api')
      returning * into a;
      return app_hidden.appointment_json(a);
    exception when exclusion_violation then
      -- someone else took this team member's time meanwhile: the next one, if any
      null;
    end;
  end loop;
  if tm is null then
    -- none named, and every eligible team member who works then is booked, blocked or off
    perform app_hidden.raise_error(409, 'no_team_member_available',
      'No team member who may take this booking is free at that time; ask appointments_availability for open slots');
  end if;
  perform app_hidden.slot_taken();
  return null;
end $$;
comment on function app_public.appointments_create(uuid, uuid, uuid, uuid, jsonb, uuid, timestamptz, timestamptz, text) is
  'appointments_create: books a team member (named, or the first free eligible one) at a staffed location, or a calendar '
  'of an unstaffed one; the exclusion constraints decide races (409 slot_taken for a named team member or a calendar, '
  'no_team_member_available when none was named and none is free).';

reset role;
