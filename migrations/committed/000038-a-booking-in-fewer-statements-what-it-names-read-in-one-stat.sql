--! Previous: sha1:fccba25f1dbd28ff57443d851376faec86627436
--! Hash: sha1:7152d7a262e91554723578285b34209dc3d54560
--! Message: A booking in fewer statements: what it names read in one statement, a named team member's rules in one definer call, one insert trigger, the redundant key to organizations dropped

--! split: 010-booking-in-fewer-statements.sql
-- A booking in fewer statements (docs/appointments-booking.md, "Performance").
--
-- A booking is a short transaction, and in a short transaction what PostgreSQL pays most for is
-- starting things: every statement a PL/pgSQL function runs is started (ExecutorStart: its plan's
-- nodes, its expressions, its subplans) each time it runs, every call of a function with a SET
-- clause saves and restores settings, and every trigger call sets up its function. A profile of
-- a backend booking through the API's statements (perf, pgbench, one connection) put executor
-- start-up at a fifth of its time, and a booking function cut to its insert alone (the contact
-- read, the insert, its answer) ran 1.7 times as many bookings a second as the whole one: the
-- checks cost more than the write. They now run in fewer statements:
--  - what the request names (location, contact, offering, team member) is read in one statement
--    under the caller's policies, instead of four;
--  - a named team member's booking rules (eligible, within the location's and its own hours, not
--    held by a block or a series) are one statement in one definer call
--    (app_hidden.team_member_refusal), instead of three definer calls running four statements;
--  - the offering_required test reads offerings only when no offering was named;
--  - the advisory lock is taken directly, not through a function call;
--  - the four row triggers a new appointment fired (own clients, appointment_booked, the
--    availability note, the booked webhook), each a definer call, are one
--    (app_private.tg_appointments__inserted), doing the same in the same order, with what the
--    last three asked (live enrollments, automations, webhook subscriptions) read in one
--    statement; the triggers of updates and deletes are as they were;
--  - the appointment's foreign key to organizations, which its key to locations implies, is gone.
-- Same answers and the same refusals in the same order: the booking, changes, race and property
-- suites are unchanged.
set local role svc_owner;

--------------------------------------------------------------------------------
-- A named team member's booking rules, in one statement
--------------------------------------------------------------------------------
-- The first rule a booking of `team_member_id` at `loc` over `during` breaks, or NULL:
-- team_member_not_eligible (not at the location, not doing the offering, or not covering the
-- postal code), outside_hours (the location's hours, then the team member's own when it has
-- any), slot_taken (a location-wide block or an occurrence of a series holds the time; the team
-- member's own one-off bookings are the exclusion constraint's business). A definer: it reads
-- past the policies, as eligible_team_members and held_by_blocks_or_series do.
create or replace function app_hidden.team_member_refusal(loc app_public.locations, offering_id uuid, postal_code text,
  country_code text, team_member_id uuid, during tstzrange)
returns text
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  -- the day the booking starts on, where the hours are (hours_hold's first test, inline)
  d date := (lower(during) at time zone loc.timezone)::date;
  eligible boolean;
  own jsonb;
begin
  -- eligible_team_member_rows for this one team member (a booking with no service address is
  -- planned without the territory test)
  if postal_code is null then
    select true, sp.working_hours into eligible, own
      from app_hidden.eligible_team_member_rows(loc.organization_id, loc.id, team_member_refusal.offering_id, null, null) x
      join app_public.staff_profiles sp on sp.organization_id = loc.organization_id and sp.id = x.id
     where x.id = team_member_refusal.team_member_id;
  else
    select true, sp.working_hours into eligible, own
      from app_hidden.eligible_team_member_rows(loc.organization_id, loc.id, team_member_refusal.offering_id,
                                                team_member_refusal.postal_code, team_member_refusal.country_code) x
      join app_public.staff_profiles sp on sp.organization_id = loc.organization_id and sp.id = x.id
     where x.id = team_member_refusal.team_member_id;
  end if;
  if eligible is null then
    return 'team_member_not_eligible';
  end if;
  -- the location's hours, then the team member's own (none: the location's); then blocks and series
  return (
    select case
      when not (exists (select 1 from jsonb_array_elements(case when jsonb_typeof(loc.hours) = 'array' then loc.hours else '[]' end) h(e)
                         where h.e->>'day' = lower(to_char(d, 'dy')) and (h.e->>'close')::time > (h.e->>'open')::time
                           and tstzrange((d + (h.e->>'open')::time) at time zone loc.timezone,
                                         (d + (h.e->>'close')::time) at time zone loc.timezone, '[)') @> team_member_refusal.during)
                or app_hidden.opening_multirange(loc.hours, loc.timezone, team_member_refusal.during) @> team_member_refusal.during)
        or (own is not null
            and not (exists (select 1 from jsonb_array_elements(case when jsonb_typeof(own) = 'array' then own else '[]' end) h(e)
                              where h.e->>'day' = lower(to_char(d, 'dy')) and (h.e->>'close')::time > (h.e->>'open')::time
                                and tstzrange((d + (h.e->>'open')::time) at time zone loc.timezone,
                                              (d + (h.e->>'close')::time) at time zone loc.timezone, '[)') @> team_member_refusal.during)
                     or app_hidden.opening_multirange(own, loc.timezone, team_member_refusal.during) @> team_member_refusal.during))
        then 'outside_hours'
      when exists (
          select 1 from app_public.appointments a
           where a.organization_id = loc.organization_id and a.location_id = loc.id and a.status = 'booked' and a.rrule is null
             and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null
             and a.during && team_member_refusal.during)
        or exists (
          select 1 from app_public.appointment_occurrences o
            join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
           where o.organization_id = loc.organization_id and o.during && team_member_refusal.during and a.status = 'booked'
             and (a.staff_profile_id = team_member_refusal.team_member_id
                  or (a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null)))
        then 'slot_taken'
    end);
end $$;
comment on function app_hidden.team_member_refusal(app_public.locations, uuid, text, text, uuid, tstzrange) is
  'The first booking rule a booking of a named team member breaks (team_member_not_eligible, outside_hours, slot_taken), or NULL: '
  'eligible_team_members, within_hours and held_by_blocks_or_series for one team member, in one statement.';
revoke all on function app_hidden.team_member_refusal(app_public.locations, uuid, text, text, uuid, tstzrange) from public;
grant execute on function app_hidden.team_member_refusal(app_public.locations, uuid, text, text, uuid, tstzrange) to svc_request;

--------------------------------------------------------------------------------
-- appointments_create
--------------------------------------------------------------------------------
-- Checks in this order: what is named exists in reach (404), the creator of an organization key
-- is still here (422), who may book whom (403), then the booking rules (409): offering_required,
-- duration_mismatch, address_out_of_area, team_member_not_eligible, outside_hours,
-- no_team_member_available, slot_taken. The write is the insert; the exclusion constraint
-- decides a race.
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
  perform app_hidden.slot_taken();
  return null;
end $$;
comment on function app_public.appointments_create(uuid, uuid, uuid, uuid, jsonb, uuid, timestamptz, timestamptz, text) is
  'appointments_create: books a team member (named, or the first free eligible one) at a staffed location, or a calendar '
  'of an unstaffed one; the exclusion constraints decide races (409 slot_taken).';

--------------------------------------------------------------------------------
-- A new appointment's triggers, as one
--------------------------------------------------------------------------------
-- What the four row triggers of an insert did, in their order: the own-client row (a live
-- booking joins its contact to its team member), appointment_booked for the automations that
-- listen to it (and exits for a contact already enrolled), the availability note, the booked
-- webhook. Updates and deletes keep their own triggers.
create or replace function app_private.tg_appointments__inserted() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  booked boolean := new.kind = 'appointment' and new.status = 'booked';
  asked record;
  automation uuid;
begin
  -- own clients: the new row is a live booking joining them, nothing to ask; otherwise asked
  if booked then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'appointments'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id and new.contact_id is not null
    on conflict do nothing;

    -- who listens, in one read: the contact's live enrollments (their exits), the automations
    -- appointment_booked starts (a booking made through the API only), the booked webhook
    select exists (select 1 from app_public.enrollments e
                    where e.organization_id = new.organization_id and e.contact_id = new.contact_id
                      and e.status in ('active', 'paused')) as enrolled,
           array(select x.id from app_public.sequences x
                  where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
                    and x.trigger->>'type' = 'appointment_booked'
                    and (x.trigger->>'location_id' is null or x.trigger->>'location_id' = new.location_id::text)
                  order by x.id) as automations,
           exists (select 1 from app_public.webhook_subscriptions ws
                    where ws.organization_id = new.organization_id and ws.status = 'active'
                      and 'appointment.booked' = any(ws.events)) as hooked
      into asked;
  else
    perform app_private.refresh_appointment_own_client(new.organization_id, new.staff_profile_id, new.contact_id);
  end if;

  -- sequences: exits of the contact's enrollments, then the automations it starts
  if booked and new.source = 'api' then
    if asked.enrolled then
      perform app_private.check_contact_exits(new.organization_id, new.contact_id);
    end if;
    foreach automation in array asked.automations loop
      perform app_private.enroll_by_trigger(new.organization_id, automation, new.contact_id, 'appointment_booked', null);
    end loop;
  end if;

  -- the availability note (a repeating series holds time up to its end or forever: all of it)
  insert into app_private.availability_changes (organization_id, during)
  values (new.organization_id, case when new.rrule is null then new.during else '(,)' end);

  -- the booked webhook
  if booked and asked.hooked then
    perform app_private.webhook_emit(new.organization_id, 'appointment.booked', new.created_at,
      jsonb_build_object('id', new.id, 'location_id', new.location_id, 'calendar_id', new.calendar_id,
        'team_member_id', new.staff_profile_id, 'offering_id', new.offering_id, 'contact_id', new.contact_id,
        'title', new.title, 'start_time', new.starts_at, 'end_time', new.ends_at, 'recurring', new.rrule is not null,
        'status', new.status, 'cancelled_at', new.cancelled_at,
        'attendee_name', new.attendee_name, 'attendee_phone', new.attendee_phone, 'attendee_email', new.attendee_email));
  end if;
  return null;
end $$;
comment on function app_private.tg_appointments__inserted() is
  'After a new appointment: own clients, appointment_booked, the availability note and the booked webhook, in that order (one trigger call).';
revoke all on function app_private.tg_appointments__inserted() from public;

drop trigger if exists _500_inserted on app_public.appointments;
create trigger _500_inserted after insert on app_public.appointments
  for each row execute function app_private.tg_appointments__inserted();

-- the others now fire for updates and deletes only
drop trigger if exists _500_own_clients on app_public.appointments;
create trigger _500_own_clients after delete or update of status, staff_profile_id, contact_id, kind on app_public.appointments
  for each row execute function app_private.tg_appointments__own_clients();
drop trigger if exists _700_availability on app_public.appointments;
create trigger _700_availability after delete on app_public.appointments
  for each row execute function app_private.tg_appointments__availability();
drop trigger if exists _510_sequences on app_public.appointments;
drop trigger if exists _900_webhooks_booked on app_public.appointments;
drop function if exists app_private.tg_appointments__sequences();

-- An appointment's organization is its location's (the (organization_id, location_id) key), and
-- a location's is an organization (locations_organization_id_fkey, cascading): the appointment's
-- own key to organizations checked the same thing again at every insert.
alter table app_public.appointments drop constraint if exists appointments_organization_id_fkey;

reset role;
