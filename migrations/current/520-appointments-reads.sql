-- Appointments: the reads (spec: "### Appointments", Location; issue 14, "List").
--
--   locations_list, locations_booking_options, territories_list, calendars_list
--   appointments_list, appointments_get
--
-- Every function is security invoker: the policies of 000001 (locations) and 500 (offerings,
-- territories, calendars, appointments, occurrences) decide what a credential sees, so another
-- organization's or another location's row is simply absent (404 for one asked by id), and an
-- own-records MEMBER sees only its own appointments. Team members are read through
-- app_hidden.location_team_members (active people with a staff profile linked to the location).
set local role svc_owner;

-- The appointments area fills in the link interactions had waiting (000004: "the appointments
-- area adds the foreign key"): an interaction names the appointment it booked.
alter table app_public.interactions drop constraint if exists interactions_appointment_fk;
alter table app_public.interactions add constraint interactions_appointment_fk
  foreign key (organization_id, appointment_id) references app_public.appointments on delete set null (appointment_id);

-- contacts_list's contact_id also finds bookings whose attendee phone or email is the contact's
create index if not exists appointments_by_attendee_phone on app_public.appointments (organization_id, attendee_phone)
  where attendee_phone is not null;
create index if not exists appointments_by_attendee_email on app_public.appointments (organization_id, lower(attendee_email))
  where attendee_email is not null;
create index if not exists appointment_occurrences_by_start on app_public.appointment_occurrences (organization_id, occurrence_start);

--------------------------------------------------------------------------------
-- Shapes
--------------------------------------------------------------------------------
create or replace function app_hidden.location_json(l app_public.locations) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('id', l.id, 'name', l.name, 'timezone', l.timezone, 'staffed', l.staffed, 'hours', l.hours,
                            'slot_interval_minutes', l.slot_interval_minutes, 'address', l.address)
$$;
comment on function app_hidden.location_json(app_public.locations) is 'A location as locations_list answers it.';

-- Who does an offering, or covers a territory: the team members it lists that still work at its
-- location, or every team member of the location when it lists none.
create or replace function app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) returns uuid[]
language sql stable as $$
  select coalesce(array_agg(m order by ord), '{}')
    from app_hidden.location_team_members(organization_id, location_id) with ordinality t(m, ord)
   where cardinality(listed) = 0 or m = any(listed)
$$;
comment on function app_hidden.listed_team_member_ids(uuid, uuid, uuid[]) is
  'The listed team members still at the location (all of its team members when none is listed), oldest first.';

create or replace function app_hidden.offering_team_member_ids(o app_public.offerings) returns uuid[]
language sql stable as $$
  select app_hidden.listed_team_member_ids(o.organization_id, o.location_id,
    array(select x.staff_profile_id from app_public.offering_team_members x where x.organization_id = o.organization_id and x.offering_id = o.id))
$$;
comment on function app_hidden.offering_team_member_ids(app_public.offerings) is 'Team members who do the offering, oldest first.';

create or replace function app_hidden.territory_team_member_ids(t app_public.territories) returns uuid[]
language sql stable as $$
  select app_hidden.listed_team_member_ids(t.organization_id, t.location_id,
    array(select x.staff_profile_id from app_public.territory_team_members x where x.organization_id = t.organization_id and x.territory_id = t.id))
$$;
comment on function app_hidden.territory_team_member_ids(app_public.territories) is 'Team members who cover the territory, oldest first.';

-- A location's booking options: what appointments_create needs to book there. Also the body of
-- the 409 offering_required (booking_options). Reads as the caller: call it for a location the
-- caller reaches.
create or replace function app_hidden.location_booking_options(organization_id uuid, location_id uuid) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'location_id', l.id,
    'timezone', l.timezone,
    'staffed', l.staffed,
    'slot_interval_minutes', l.slot_interval_minutes,
    'offerings', coalesce((select jsonb_agg(jsonb_build_object('id', o.id, 'name', o.name, 'duration_minutes', o.duration_minutes,
                                                               'team_member_ids', to_jsonb(app_hidden.offering_team_member_ids(o)))
                                            order by o.name, o.id)
                             from app_public.offerings o where o.organization_id = l.organization_id and o.location_id = l.id), '[]'),
    'team_member_ids', coalesce((select jsonb_agg(m order by ord)
                                   from app_hidden.location_team_members(l.organization_id, l.id) with ordinality t(m, ord)), '[]'),
    'team_members', coalesce((select jsonb_agg(jsonb_build_object('id', sp.id, 'name', sp.display_name,
                                                                  'working_hours', coalesce(sp.working_hours, l.hours)) order by t.ord)
                                from app_hidden.location_team_members(l.organization_id, l.id) with ordinality t(m, ord)
                                join app_public.staff_profiles sp on sp.organization_id = l.organization_id and sp.id = t.m), '[]'),
    'calendars', coalesce((select jsonb_agg(jsonb_build_object('id', c.id, 'name', c.name) order by c.name, c.id)
                             from app_public.calendars c where c.organization_id = l.organization_id and c.location_id = l.id), '[]'))
    from app_public.locations l
   where l.organization_id = location_booking_options.organization_id and l.id = location_booking_options.location_id
$$;
comment on function app_hidden.location_booking_options(uuid, uuid) is
  'A location''s offerings (with duration and team members), team members (with working hours), and calendars; NULL when out of reach.';

create or replace function app_hidden.territory_json(t app_public.territories) returns jsonb
language sql stable as $$
  select jsonb_build_object('id', t.id, 'location_id', t.location_id, 'name', t.name, 'country_code', t.country_code,
                            'postal_codes', to_jsonb(t.postal_codes), 'team_member_ids', to_jsonb(app_hidden.territory_team_member_ids(t)))
$$;

--------------------------------------------------------------------------------
-- Locations and their booking resources
--------------------------------------------------------------------------------
-- 404 unless the credential reaches the location (an id elsewhere is as absent as none); NULL
-- (no location filter) has nothing to check.
create or replace function app_hidden.require_location(location_id uuid) returns void
language plpgsql stable as $$
begin
  if location_id is null then
    return;
  end if;
  perform 1 from app_public.locations l where l.organization_id = app_hidden.current_org_id() and l.id = require_location.location_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
end $$;
comment on function app_hidden.require_location(uuid) is 'Raises 404 unless the credential reaches the location.';

-- A page of a small ordered list (a location's resources: tens of rows), sliced from all of it.
create or replace function app_hidden.page_of(items jsonb, page int, page_size int) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'items', coalesce((select jsonb_agg(e.v order by e.i) from jsonb_array_elements(items) with ordinality e(v, i)
                        where e.i > (page - 1)::bigint * page_size and e.i <= page::bigint * page_size), '[]'),
    'total', jsonb_array_length(items), 'page', page, 'limit', page_size)
$$;
comment on function app_hidden.page_of(jsonb, int, int) is 'The page of a JSON array, with total, page and limit (pages checked by the caller).';

create or replace function app_public.locations_list(page int, page_size int) returns jsonb
language plpgsql stable as $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  return app_hidden.page_of((select coalesce(jsonb_agg(app_hidden.location_json(l) order by l.name, l.id), '[]')
                               from app_public.locations l where l.organization_id = app_hidden.current_org_id()), page, page_size);
end $$;
comment on function app_public.locations_list(int, int) is 'locations_list: the locations the credential reaches, by name.';

create or replace function app_public.locations_booking_options(location_id uuid) returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.require_location(location_id);
  return app_hidden.location_booking_options(app_hidden.current_org_id(), location_id);
end $$;
comment on function app_public.locations_booking_options(uuid) is 'locations_booking_options: what a booking at the location may name.';

create or replace function app_public.territories_list(location_id uuid, postal_code text, country_code text, page int, page_size int)
returns jsonb
language plpgsql stable as $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_location(location_id);
  return app_hidden.page_of((
    select coalesce(jsonb_agg(app_hidden.territory_json(t) order by t.name, t.id), '[]')
      from app_public.territories t
     where t.organization_id = app_hidden.current_org_id()
       and (territories_list.location_id is null or t.location_id = territories_list.location_id)
       and (territories_list.postal_code is null or t.postal_codes @> array[app_hidden.postal_code_key(territories_list.postal_code)])
       and (territories_list.country_code is null or t.country_code = upper(territories_list.country_code))), page, page_size);
end $$;
comment on function app_public.territories_list(uuid, text, text, int, int) is
  'territories_list: territories in reach, optionally of one location and covering one postal code (spaces and case ignored).';

create or replace function app_public.calendars_list(location_id uuid, page int, page_size int) returns jsonb
language plpgsql stable as $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_location(location_id);
  return app_hidden.page_of((
    select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'location_id', c.location_id, 'name', c.name) order by c.name, c.id), '[]')
      from app_public.calendars c
     where c.organization_id = app_hidden.current_org_id()
       and (calendars_list.location_id is null or c.location_id = calendars_list.location_id)), page, page_size);
end $$;
comment on function app_public.calendars_list(uuid, int, int) is 'calendars_list: calendars in reach, optionally of one location.';

--------------------------------------------------------------------------------
-- Appointments
--------------------------------------------------------------------------------
-- The bookings (kind appointment, not cancelled) starting in [from, to), one row per occurrence
-- of a repeating series, optionally of one contact (its own bookings, and those whose attendee
-- phone or email is the contact's). Policies apply: reach by location, own-records MEMBERs only
-- their own.
create or replace function app_hidden.listed_appointments(window_start timestamptz, window_end timestamptz,
  contact_phone text, contact_email text, contact_id uuid)
returns table (a app_public.appointments, starts_at timestamptz, occurrence_start timestamptz)
language sql stable as $$
  select a, a.starts_at, null::timestamptz
    from app_public.appointments a
   where a.organization_id = app_hidden.current_org_id() and a.kind = 'appointment' and a.status = 'booked' and a.rrule is null
     and a.starts_at >= window_start and a.starts_at < window_end
     and (listed_appointments.contact_id is null or a.contact_id = listed_appointments.contact_id
          or a.attendee_phone = contact_phone or lower(a.attendee_email) = contact_email)
  union all
  select a, o.occurrence_start, o.occurrence_start
    from app_public.appointment_occurrences o
    join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
   where o.organization_id = app_hidden.current_org_id() and a.kind = 'appointment' and a.status = 'booked' and a.rrule is not null
     and o.occurrence_start >= window_start and o.occurrence_start < window_end
     and (listed_appointments.contact_id is null or a.contact_id = listed_appointments.contact_id
          or a.attendee_phone = contact_phone or lower(a.attendee_email) = contact_email)
$$;
comment on function app_hidden.listed_appointments(timestamptz, timestamptz, text, text, uuid) is
  'The live bookings starting in a window, one row per occurrence of a series, optionally of one contact (by id, attendee phone or email).';

create or replace function app_public.appointments_list(window_from timestamptz, window_to timestamptz, contact_id uuid, page int, page_size int)
returns jsonb
language plpgsql stable as $$
declare
  total bigint;
  items jsonb;
  c_phone text;
  c_email text;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  -- spec: from defaults to now, to to 30 days after from; the window is not empty and at most 92 days
  window_from := coalesce(window_from, now());
  window_to := coalesce(window_to, window_from + interval '30 days');
  if window_to <= window_from then
    perform app_hidden.page_error('to', 'must be after from (the window is empty)');
  elsif window_to > window_from + interval '92 days' then
    perform app_hidden.page_error('to', 'at most 92 days after from');
  end if;
  if contact_id is not null then
    select c.phone, c.email_key into c_phone, c_email from app_public.contacts c
     where c.organization_id = app_hidden.current_org_id() and c.id = appointments_list.contact_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
    end if;
  end if;
  select count(*) into total from app_hidden.listed_appointments(window_from, window_to, c_phone, c_email, contact_id);
  select coalesce(jsonb_agg(app_hidden.appointment_json(p.a, p.occurrence_start) order by p.starts_at, (p.a).id), '[]') into items
    from (select * from app_hidden.listed_appointments(window_from, window_to, c_phone, c_email, contact_id) x
           order by x.starts_at, (x.a).id limit page_size offset (page - 1)::bigint * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size,
                            'from', window_from, 'to', window_to);
end $$;
comment on function app_public.appointments_list(timestamptz, timestamptz, uuid, int, int) is
  'appointments_list: live bookings starting in [from, to), earliest first, one row per occurrence of a repeating series.';

create or replace function app_public.appointments_get(appointment_id uuid) returns jsonb
language plpgsql stable as $$
declare
  a app_public.appointments;
begin
  select * into a from app_public.appointments x
   where x.organization_id = app_hidden.current_org_id() and x.id = appointments_get.appointment_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Appointment not found');
  end if;
  return app_hidden.appointment_json(a);
end $$;
comment on function app_public.appointments_get(uuid) is
  'appointments_get: one appointment or block in reach (a series: recurring, its first start), cancelled ones too.';

grant execute on function app_hidden.location_json(app_public.locations), app_hidden.listed_team_member_ids(uuid, uuid, uuid[]),
  app_hidden.offering_team_member_ids(app_public.offerings),
  app_hidden.territory_team_member_ids(app_public.territories), app_hidden.location_booking_options(uuid, uuid),
  app_hidden.territory_json(app_public.territories), app_hidden.require_location(uuid), app_hidden.page_of(jsonb, int, int),
  app_hidden.listed_appointments(timestamptz, timestamptz, text, text, uuid)
  to svc_request, svc_worker;
grant execute on function app_public.locations_list(int, int), app_public.locations_booking_options(uuid),
  app_public.territories_list(uuid, text, text, int, int), app_public.calendars_list(uuid, int, int),
  app_public.appointments_list(timestamptz, timestamptz, uuid, int, int), app_public.appointments_get(uuid)
  to svc_request;

reset role;
