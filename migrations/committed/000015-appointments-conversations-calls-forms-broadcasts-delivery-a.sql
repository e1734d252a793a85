--! Previous: sha1:504c880a42eba9799a3ecff804b8c22c6980dde0
--! Hash: sha1:3d12e31a06a36fd94f2dd4cba55379e3d3a3d21a
--! Message: Appointments, conversations, calls, forms, broadcasts, delivery, analysts, the dashboard and OAuth; the sequences sweep

--! split: 500-appointments-tables.sql
-- Appointments: the booking resources of a location and the bookings themselves (spec:
-- Appointment, Location; ../shared/design/operator-cli.md, "Booking … in fixtures").
--
--   locations (+ columns)   slot interval and street address beside the hours they had
--   staff_profiles (+)      a team member's working hours (NULL: the location's)
--   offerings               the services a location books, each with its length, and the team
--                           members who do it (none listed: every team member of the location)
--   territories             postal codes a location's team members visit (home visits)
--   calendars               what an unstaffed location books instead of a person
--   appointments            bookings and blocks (time off), one row each; a repeating series is
--                           one row with its rrule, its occurrences in appointment_occurrences
--
-- Race-free: two live bookings (or a booking and a block) of one team member, or of one
-- calendar, can never overlap. The database says so with exclusion constraints over the
-- booked range (btree_gist), so concurrent bookings need no read-then-write in application
-- code: the second insert fails with 23P01 and the booking function answers slot_taken.
--
-- A team member of a location is a staff profile whose person works there (person_locations)
-- and is active: app_hidden.location_team_members(location).
--
-- Reach: everything of a location is visible to credentials that reach the location. A MEMBER
-- at the own-records level sees only the appointments where it is the team member. Writes go
-- through the functions of 510-… (booking rules raise 403/404/409 there).
set local role svc_owner;

create extension if not exists btree_gist with schema public;

--------------------------------------------------------------------------------
-- Locations and team members
--------------------------------------------------------------------------------
alter table app_public.locations
  add column if not exists slot_interval_minutes int not null default 15 check (slot_interval_minutes between 5 and 240),
  add column if not exists address jsonb check (address is null or jsonb_typeof(address) = 'object');
comment on column app_public.locations.slot_interval_minutes is 'Spacing of the starts of offered slots (minutes from each opening).';
comment on column app_public.locations.address is 'Street address: {line1, line2, city, region, postal_code, country_code}.';

alter table app_public.staff_profiles
  add column if not exists working_hours jsonb check (working_hours is null or jsonb_typeof(working_hours) = 'array');
comment on column app_public.staff_profiles.working_hours is
  'The team member''s weekly hours [{day: mon..sun, open: HH:MM, close: HH:MM|24:00}] in each location''s time zone; NULL: the location''s hours.';

-- The active team members of a location, by staff profile id.
create or replace function app_hidden.location_team_members(organization_id uuid, location_id uuid) returns setof uuid
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select sp.id
    from app_public.staff_profiles sp
    join app_public.people p on p.organization_id = sp.organization_id and p.id = sp.person_id and p.active
    join app_public.person_locations pl on pl.organization_id = sp.organization_id and pl.person_id = sp.person_id
   where sp.organization_id = location_team_members.organization_id and pl.location_id = location_team_members.location_id
   order by sp.created_at, sp.id
$$;
comment on function app_hidden.location_team_members(uuid, uuid) is
  'Staff profile ids of the active people who work at the location, oldest first (the order "first free team member" follows).';
grant execute on function app_hidden.location_team_members(uuid, uuid) to svc_request, svc_worker;

-- The acting person's staff profile (NULL for keys without a person, or people without one).
create or replace function app_hidden.current_staff_profile_id() returns uuid
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select sp.id from app_public.staff_profiles sp
   where sp.organization_id = app_hidden.current_org_id() and sp.person_id = app_hidden.current_user_id()
$$;
comment on function app_hidden.current_staff_profile_id() is 'The staff profile (team member id) of the person the credential acts for, or NULL.';
grant execute on function app_hidden.current_staff_profile_id() to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Offerings
--------------------------------------------------------------------------------
create table if not exists app_public.offerings (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  location_id uuid not null,
  name text not null check (length(name) between 1 and 200),
  duration_minutes int not null check (duration_minutes between 5 and 1440),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.offerings is
  'A service a location books, with its length. A location with offerings requires one on booking (offering_required).';
create index if not exists offerings_by_location on app_public.offerings (organization_id, location_id, name);

create table if not exists app_public.offering_team_members (
  organization_id uuid not null,
  offering_id uuid not null,
  staff_profile_id uuid not null,
  primary key (organization_id, offering_id, staff_profile_id),
  foreign key (organization_id, offering_id) references app_public.offerings on delete cascade,
  foreign key (organization_id, staff_profile_id) references app_public.staff_profiles on delete cascade
);
comment on table app_public.offering_team_members is
  'Who does an offering; an offering with no rows here can be done by every team member of its location.';

--------------------------------------------------------------------------------
-- Territories
--------------------------------------------------------------------------------
-- Postal codes are kept normalized (spaces removed, upper case): app_hidden.postal_code_key.
create or replace function app_hidden.postal_code_key(code text) returns text
language sql immutable parallel safe as $$
  select upper(regexp_replace(code, '\s', '', 'g'))
$$;
comment on function app_hidden.postal_code_key(text) is 'A postal code as territories compare it: spaces removed, case ignored.';
grant execute on function app_hidden.postal_code_key(text) to svc_request, svc_worker;

create table if not exists app_public.territories (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  location_id uuid not null,
  name text not null check (length(name) between 1 and 200),
  country_code text not null check (country_code ~ '^[A-Z]{2}$'),
  postal_codes text[] not null default '{}'
    check (array_position(postal_codes, null) is null and cardinality(postal_codes) <= 10000),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.territories is
  'Postal codes (normalized by app_hidden.postal_code_key) in one country that a location''s team members visit.';
create index if not exists territories_by_location on app_public.territories (organization_id, location_id, name);
create index if not exists territories_postal_codes on app_public.territories using gin (postal_codes);

create table if not exists app_public.territory_team_members (
  organization_id uuid not null,
  territory_id uuid not null,
  staff_profile_id uuid not null,
  primary key (organization_id, territory_id, staff_profile_id),
  foreign key (organization_id, territory_id) references app_public.territories on delete cascade,
  foreign key (organization_id, staff_profile_id) references app_public.staff_profiles on delete cascade
);
comment on table app_public.territory_team_members is
  'Who covers a territory; a territory with no rows here is covered by every team member of its location.';

--------------------------------------------------------------------------------
-- Calendars
--------------------------------------------------------------------------------
create table if not exists app_public.calendars (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  location_id uuid not null,
  name text not null check (length(name) between 1 and 200),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.calendars is
  'What a location that is not staffed books: busy while it holds an appointment, open during its location''s hours.';
create index if not exists calendars_by_location on app_public.calendars (organization_id, location_id, name);

--------------------------------------------------------------------------------
-- Appointments and blocks
--------------------------------------------------------------------------------
create table if not exists app_public.appointments (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- appointment: a booking for a contact; block: time off, location-wide (no team member) or one team member's
  kind text not null default 'appointment' check (kind in ('appointment', 'block')),
  location_id uuid not null,
  staff_profile_id uuid,
  calendar_id uuid,
  offering_id uuid,
  contact_id uuid,
  title text check (length(title) <= 500),
  description text check (length(description) <= 10000),
  attendee_name text check (length(attendee_name) <= 200),
  attendee_phone text check (attendee_phone ~ '^\+[1-9][0-9]{6,14}$'),
  attendee_email text check (length(attendee_email) <= 320),
  attendee_notes text check (length(attendee_notes) <= 10000),
  service_address jsonb check (service_address is null or jsonb_typeof(service_address) = 'object'),
  starts_at timestamptz not null,
  ends_at timestamptz not null,
  during tstzrange generated always as (tstzrange(starts_at, ends_at, '[)')) stored,
  status text not null default 'booked' check (status in ('booked', 'cancelled')),
  cancelled_at timestamptz,
  -- a repeating series (fixtures only; the API cannot change one): the rule and its last day
  rrule text check (length(rrule) <= 500),
  recurrence_ends_on date,
  -- who booked it: the acting person (NULL for a key without one) and the credential
  created_by uuid,
  created_by_credential uuid,
  -- how it was made: api, fixture
  source text not null default 'api' check (source in ('api', 'fixture')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations on delete cascade,
  foreign key (organization_id, staff_profile_id) references app_public.staff_profiles on delete cascade,
  foreign key (organization_id, calendar_id) references app_public.calendars on delete cascade,
  foreign key (organization_id, offering_id) references app_public.offerings on delete set null (offering_id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  foreign key (organization_id, created_by) references app_public.people on delete set null (created_by),
  check (ends_at > starts_at),
  check (staff_profile_id is null or calendar_id is null),
  check ((kind = 'appointment') = (contact_id is not null)),
  check ((status = 'cancelled') = (cancelled_at is not null)),
  check (rrule is not null or recurrence_ends_on is null)
);
comment on table app_public.appointments is
  'A booking (kind appointment: a contact with a team member or a calendar at a location) or a block (time off of a '
  'location or of one team member). A repeating series is one row with rrule; its occurrences are in '
  'app_public.appointment_occurrences. Cancelled rows stay, left out of lists.';
comment on column app_public.appointments.during is 'The booked range [starts_at, ends_at): what the exclusion constraints compare.';

-- The race-free rule: one team member, one calendar, never two live overlapping rows.
alter table app_public.appointments drop constraint if exists appointments_no_overlap_team_member;
alter table app_public.appointments add constraint appointments_no_overlap_team_member
  exclude using gist (organization_id with =, staff_profile_id with =, during with &&)
  where (status = 'booked' and staff_profile_id is not null and rrule is null);
alter table app_public.appointments drop constraint if exists appointments_no_overlap_calendar;
alter table app_public.appointments add constraint appointments_no_overlap_calendar
  exclude using gist (organization_id with =, calendar_id with =, during with &&)
  where (status = 'booked' and calendar_id is not null and rrule is null);

create index if not exists appointments_by_location_time on app_public.appointments using gist (organization_id, location_id, during)
  where status = 'booked';
create index if not exists appointments_by_contact on app_public.appointments (organization_id, contact_id, starts_at);
create index if not exists appointments_by_start on app_public.appointments (organization_id, starts_at, id) where status = 'booked';

-- The occurrences of a repeating series, written when the series is (the fixture expands its
-- rrule up to recurrence_ends_on, or two years when it has none). Lists and availability read
-- them as they read single appointments.
create table if not exists app_public.appointment_occurrences (
  organization_id uuid not null,
  appointment_id uuid not null,
  occurrence_start timestamptz not null,
  during tstzrange not null,
  primary key (organization_id, appointment_id, occurrence_start),
  foreign key (organization_id, appointment_id) references app_public.appointments on delete cascade
);
comment on table app_public.appointment_occurrences is
  'Each occurrence of a repeating appointment (its series'' row in app_public.appointments holds the rest).';
create index if not exists appointment_occurrences_by_time on app_public.appointment_occurrences using gist (organization_id, during);

--------------------------------------------------------------------------------
-- Reach
--------------------------------------------------------------------------------
-- Whether the credential reads appointments of this team member: everyone who reaches the
-- location, except a MEMBER at the own-records level, who reads only its own.
create or replace function app_hidden.current_reads_team_member(staff_profile_id uuid) returns boolean
language sql stable parallel safe as $$
  select app_hidden.current_role() is distinct from 'member'
      or app_hidden.current_records_level() <> 'own'
      or (staff_profile_id is not null and staff_profile_id = (select app_hidden.current_staff_profile_id()))
$$;
comment on function app_hidden.current_reads_team_member(uuid) is
  'Whether the credential reads appointments of this team member (own-records MEMBERs only their own).';
grant execute on function app_hidden.current_reads_team_member(uuid) to svc_request, svc_worker;

do $$
declare t text;
begin
  foreach t in array array['offerings', 'territories', 'calendars'] loop
    execute format('alter table app_public.%I enable row level security', t);
    execute format('drop policy if exists select_in_reach on app_public.%I', t);
    execute format($p$create policy select_in_reach on app_public.%I for select using (
        organization_id = (select app_hidden.current_org_id())
        and ((select app_hidden.current_reaches_all_locations())
             or location_id = any((select app_hidden.current_location_ids())::uuid[])))$p$, t);
    execute format('grant select on app_public.%I to svc_request, svc_worker', t);
  end loop;
end $$;

alter table app_public.offering_team_members enable row level security;
drop policy if exists select_own_org on app_public.offering_team_members;
create policy select_own_org on app_public.offering_team_members for select
  using (organization_id = (select app_hidden.current_org_id()));
grant select on app_public.offering_team_members to svc_request, svc_worker;

alter table app_public.territory_team_members enable row level security;
drop policy if exists select_own_org on app_public.territory_team_members;
create policy select_own_org on app_public.territory_team_members for select
  using (organization_id = (select app_hidden.current_org_id()));
grant select on app_public.territory_team_members to svc_request, svc_worker;

alter table app_public.appointments enable row level security;
drop policy if exists select_in_reach on app_public.appointments;
create policy select_in_reach on app_public.appointments for select using (
  organization_id = (select app_hidden.current_org_id())
  and ((select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[]))
  and app_hidden.current_reads_team_member(staff_profile_id));
grant select on app_public.appointments to svc_request, svc_worker;

alter table app_public.appointment_occurrences enable row level security;
drop policy if exists select_with_series on app_public.appointment_occurrences;
create policy select_with_series on app_public.appointment_occurrences for select using (
  exists (select 1 from app_public.appointments a
           where a.organization_id = appointment_occurrences.organization_id and a.id = appointment_occurrences.appointment_id));
grant select on app_public.appointment_occurrences to svc_request, svc_worker;

reset role;

--------------------------------------------------------------------------------
-- The appointment as the API shows it
--------------------------------------------------------------------------------
-- One shape for every operation that answers an appointment (list, get, create, update,
-- reschedule, cancel). For an occurrence of a repeating series, `id` is the series' id,
-- `recurring` true and start_time/end_time those of the occurrence.
set local role svc_owner;
create or replace function app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamptz default null)
returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object(
    'id', a.id,
    'kind', a.kind,
    'recurring', a.rrule is not null,
    'occurrence_start', case when a.rrule is not null then coalesce(occurrence_start, a.starts_at) end,
    'location_id', a.location_id,
    'team_member_id', a.staff_profile_id,
    'calendar_id', a.calendar_id,
    'offering_id', a.offering_id,
    'contact_id', a.contact_id,
    'title', a.title,
    'description', a.description,
    'attendee_name', a.attendee_name,
    'attendee_phone', a.attendee_phone,
    'attendee_email', a.attendee_email,
    'attendee_notes', a.attendee_notes,
    'service_address', a.service_address,
    'start_time', case when a.rrule is not null and occurrence_start is not null then occurrence_start else a.starts_at end,
    'end_time', case when a.rrule is not null and occurrence_start is not null
                     then occurrence_start + (a.ends_at - a.starts_at) else a.ends_at end,
    'status', a.status,
    'rrule', a.rrule,
    'recurrence_ends_on', a.recurrence_ends_on,
    'created_at', a.created_at,
    'updated_at', a.updated_at)
$$;
comment on function app_hidden.appointment_json(app_public.appointments, timestamptz) is
  'An appointment (or one occurrence of a repeating series) as the API answers it.';
grant execute on function app_hidden.appointment_json(app_public.appointments, timestamptz) to svc_request, svc_worker;
reset role;

--! split: 520-appointments-reads.sql
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

--! split: 540-appointments-availability.sql
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

--! split: 550-appointments-booking.sql
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

--! split: 560-appointments-own-clients-and-sequences.sql
-- What a booking does beyond its row:
--   own clients   a live booking (kind appointment, status booked, with a team member) makes its
--                 contact an own client of the team member's person (app_private.own_clients,
--                 source 'appointments'), whoever wrote it (API or fixture); the row goes when
--                 the last such booking is cancelled, moved to another team member, or deleted.
--   sequences     appointment_booked is a trigger type (optional location_id) and an exit type
--                 (optional location_id) of sequences. A booking made through the API
--                 (source 'api') enrolls its contact in the active automations it triggers and
--                 ends the contact's enrollments whose exit conditions now hold.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Own clients
--------------------------------------------------------------------------------
create or replace function app_private.refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid)
returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  person uuid;
begin
  if staff_profile_id is null or contact_id is null then
    return;
  end if;
  select sp.person_id into person from app_public.staff_profiles sp
   where sp.organization_id = refresh_appointment_own_client.organization_id and sp.id = refresh_appointment_own_client.staff_profile_id;
  if person is null then
    return;
  end if;
  if exists (select 1 from app_public.appointments a
              where a.organization_id = refresh_appointment_own_client.organization_id
                and a.staff_profile_id = refresh_appointment_own_client.staff_profile_id
                and a.contact_id = refresh_appointment_own_client.contact_id
                and a.kind = 'appointment' and a.status = 'booked') then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    values (refresh_appointment_own_client.organization_id, person, refresh_appointment_own_client.contact_id, 'appointments')
    on conflict do nothing;
  else
    delete from app_private.own_clients oc
     where oc.organization_id = refresh_appointment_own_client.organization_id and oc.person_id = person
       and oc.contact_id = refresh_appointment_own_client.contact_id and oc.source = 'appointments';
  end if;
end $$;
comment on function app_private.refresh_appointment_own_client(uuid, uuid, uuid) is
  'Keeps the own_clients row (source appointments) of a team member''s person and a contact: present while a live booking joins them.';
revoke execute on function app_private.refresh_appointment_own_client(uuid, uuid, uuid) from public;

create or replace function app_private.tg_appointments__own_clients() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.refresh_appointment_own_client(old.organization_id, old.staff_profile_id, old.contact_id);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform app_private.refresh_appointment_own_client(new.organization_id, new.staff_profile_id, new.contact_id);
  end if;
  return null;
end $$;
comment on function app_private.tg_appointments__own_clients() is
  'After a booking is written, moved, cancelled or deleted: the own clients of its team member(s) follow.';
revoke execute on function app_private.tg_appointments__own_clients() from public;
drop trigger if exists _500_own_clients on app_public.appointments;
create trigger _500_own_clients after insert or delete or update of status, staff_profile_id, contact_id, kind on app_public.appointments
  for each row execute function app_private.tg_appointments__own_clients();

--------------------------------------------------------------------------------
-- appointment_booked for sequences
--------------------------------------------------------------------------------
insert into app_private.sequence_trigger_types (type, area, description, fields, position) values
  ('appointment_booked', 'appointments', 'Contacts enter when an appointment is booked for them through the API (appointments_create).',
   '{"location_id": {"type": "uuid", "required": false,
                     "description": "Only bookings at this location (locations_list); absent: at any location."}}', 5)
on conflict (type) do update set area = excluded.area, description = excluded.description, fields = excluded.fields,
  position = excluded.position;

-- Holds when the contact has a live booking made since it enrolled (at the location, when the
-- exit names one).
create or replace function app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) returns boolean
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.appointments a
                  where a.organization_id = e.organization_id and a.contact_id = e.contact_id
                    and a.kind = 'appointment' and a.status = 'booked' and a.created_at >= e.created_at
                    and (exit->>'location_id' is null or a.location_id::text = exit->>'location_id'))
$$;
comment on function app_private.appointment_booked_holds(app_public.enrollments, jsonb) is
  'The appointment_booked exit: the contact has a live booking made since it enrolled (at exit.location_id when given).';
revoke execute on function app_private.appointment_booked_holds(app_public.enrollments, jsonb) from public;

insert into app_private.sequence_exit_types (type, area, description, fields, position, holds) values
  ('appointment_booked', 'appointments', 'An appointment was booked for the contact after it enrolled.',
   '{"location_id": {"type": "uuid", "required": false,
                     "description": "Only bookings at this location; absent: at any location."}}', 5,
   'app_private.appointment_booked_holds(app_public.enrollments, jsonb)'::regprocedure)
on conflict (type) do update set area = excluded.area, description = excluded.description, fields = excluded.fields,
  position = excluded.position, holds = excluded.holds;

-- A booking through the API: exits first (the contact's enrollments that appointment_booked
-- ends), then the automations it starts.
create or replace function app_private.tg_appointments__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s record;
begin
  perform app_private.check_contact_exits(new.organization_id, new.contact_id);
  for s in
    select x.id from app_public.sequences x
     where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
       and x.trigger->>'type' = 'appointment_booked'
       and (x.trigger->>'location_id' is null or x.trigger->>'location_id' = new.location_id::text)
     order by x.id
  loop
    perform app_private.enroll_by_trigger(new.organization_id, s.id, new.contact_id, 'appointment_booked', null);
  end loop;
  return null;
end $$;
comment on function app_private.tg_appointments__sequences() is
  'appointment_booked: after an API booking, the contact''s exits are checked and the automations it triggers enroll it.';
revoke execute on function app_private.tg_appointments__sequences() from public;
drop trigger if exists _510_sequences on app_public.appointments;
create trigger _510_sequences after insert on app_public.appointments
  for each row when (new.source = 'api' and new.kind = 'appointment' and new.status = 'booked')
  execute function app_private.tg_appointments__sequences();

reset role;

--! split: 600-sequences-step-sweep.sql
-- The enrollment is the durable unit of work of the engine; its step's graphile-worker job is
-- added only when the step comes near (docs/sequences-engine.md, "When a step's job is added").
--
-- Before, every write that set an enrollment's next step (an enroll, a resume, the engine moving
-- on) added the step's job in its own transaction, through graphile_worker.add_jobs, which
-- always pg_notify's: alone that capped sequences_enroll at about 1,200 requests/s on the bench
-- server, well under half of what a read answers, for a job due in an hour or in a week.
--
-- Now:
--   * An enrollment whose step runs later than now + app_hidden.sequence_sweep_horizon() (two
--     minutes) gets no job in the writer's transaction. The sweep (task sequence_step_sweep,
--     cron each minute) adds, in one add_jobs call, the job of every active enrollment that runs
--     within the horizon and has none; its key (sequence_step:<enrollment id>) makes a second
--     sweep, or a sweep racing a writer, add nothing twice.
--   * A request that enrolls one contact into a step running within the horizon does not add its
--     job either: it makes sure its organization has one sequence_step_sweep job waiting to run
--     now (key sequence_step_sweep:<organization id>), so a burst of requests shares one job and
--     one notification, and the sweep picks them up within moments. A set enrolled into a step
--     running within the horizon (an event fired for thousands of contacts) gets its jobs in one
--     add_jobs call, as before: one notification for all.
--   * The other writers (app_private.schedule_enrollment_steps: a resume, the engine moving an
--     enrollment on in the worker) add the job of a step running within the horizon themselves,
--     as before (a step with no delay goes out at once), and move a job already waiting for the
--     enrollment to its new run time, so a job never runs a step early.
-- Crash safety is unchanged: an enrollment committed is found by the next sweep whatever happened
-- to the process that wrote it; the step run's uniqueness still keeps a step from running twice.
set local role svc_owner;

create or replace function app_hidden.sequence_sweep_horizon() returns interval
language sql immutable parallel safe as $$ select interval '2 minutes' $$;
comment on function app_hidden.sequence_sweep_horizon() is
  'How far ahead the sequence_step_sweep adds step jobs: more than its cron period (one minute), so a step gets its job '
  'before it is due.';

-- The sweep reads, per organization, the active enrollments that run within the horizon.
create index if not exists enrollments_due on app_public.enrollments (organization_id, next_run_at)
  where status = 'active';

-- The advisory lock a request holds (shared, until it commits) while it relies on a waiting
-- sweep job of its organization, and the sweep takes (exclusive) before it reads.
create or replace function app_hidden.sequence_sweep_lock_key(organization_id uuid) returns int
language sql immutable parallel safe as $$ select hashtext('sequence_step_sweep:' || organization_id) $$;
comment on function app_hidden.sequence_sweep_lock_key(uuid) is
  'The second key of the advisory lock (first key 7613) that orders requests relying on a waiting sweep job before that sweep.';

-- Makes sure the organization has a sequence_step_sweep job waiting to run now. Called by a
-- transaction that wrote enrollments running within the horizon, and adds nothing when a job is
-- waiting (not yet taken by a worker): that job's sweep will see this transaction's enrollments,
-- because the sweep first waits for every transaction holding the shared lock taken here, and
-- the lock is held until commit. When the waiting job has been taken already (or there is none),
-- a new one is added (graphile-worker gives a key held by a running job to a new job).
create or replace function app_private.kick_step_sweep(organization_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform pg_advisory_xact_lock_shared(7613, app_hidden.sequence_sweep_lock_key(kick_step_sweep.organization_id));
  if not exists (select 1 from graphile_worker._private_jobs j
                  where j.key = 'sequence_step_sweep:' || kick_step_sweep.organization_id and j.locked_at is null
                    and j.attempts < j.max_attempts) then
    perform graphile_worker.add_job('sequence_step_sweep', json_build_object('organization_id', kick_step_sweep.organization_id),
      job_key => 'sequence_step_sweep:' || kick_step_sweep.organization_id);
  end if;
end $$;
comment on function app_private.kick_step_sweep(uuid) is
  'Makes sure the organization has a sequence_step_sweep job waiting to run now (one for a burst of writers).';
revoke execute on function app_private.kick_step_sweep(uuid) from public;

-- Adds the job of every active enrollment (of one organization, or all) that runs by `until`
-- (default now + the horizon) and has no job, at its next_run_at, in one add_jobs call. Rows a
-- writer holds are skipped (that writer schedules them itself, or the next sweep finds them);
-- rows are read locked (for share), so a writer that changes one after waits for the job added
-- here and then moves it. Answers how many jobs it added.
create or replace function app_private.sweep_enrollment_steps(organization_id uuid default null, until timestamptz default null)
returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  upto timestamptz := coalesce(until, now() + app_hidden.sequence_sweep_horizon());
  specs graphile_worker.job_spec[];
begin
  if organization_id is not null then
    -- every request that saw this organization's sweep job waiting has committed once this lock
    -- is granted, and the statement below (a new snapshot) sees its enrollments. Held to the end
    -- of this transaction (a lock taken and let go at once would stay taken were the statement
    -- cancelled in between): requests kicking meanwhile wait for this sweep, milliseconds.
    perform pg_advisory_xact_lock(7613, app_hidden.sequence_sweep_lock_key(sweep_enrollment_steps.organization_id));
  end if;
  specs := array(
    select row('sequence_step',
               json_build_object('organization_id', e.organization_id, 'enrollment_id', e.id, 'step_key', e.current_step_key),
               null, e.next_run_at, null, 'sequence_step:' || e.id, null, null)::graphile_worker.job_spec
      from app_public.organizations o
     cross join lateral (
       select x.organization_id, x.id, x.current_step_key, x.next_run_at from app_public.enrollments x
        where x.organization_id = o.id and x.status = 'active' and x.next_run_at <= upto and x.current_step_key is not null
          and not exists (select 1 from graphile_worker._private_jobs j where j.key = 'sequence_step:' || x.id)
          for share of x skip locked) e
     where sweep_enrollment_steps.organization_id is null or o.id = sweep_enrollment_steps.organization_id);
  if cardinality(specs) = 0 then
    return 0;
  end if;
  return (select count(*)::int from graphile_worker.add_jobs(specs, false));
end $$;
comment on function app_private.sweep_enrollment_steps(uuid, timestamptz) is
  'Adds the sequence_step job (key sequence_step:<id>, at next_run_at) of each active enrollment that runs by `until` '
  '(default now + the sweep horizon) and has none; one organization or all. Answers how many it added.';
revoke execute on function app_private.sweep_enrollment_steps(uuid, timestamptz) from public;

-- (Re)schedules the pending step of each live, active enrollment listed, in the transaction that
-- changed them (a resume, the engine moving on, a claim that finds its message still with the
-- transport): a job waiting for one of them is moved to its next_run_at, as before; one without a
-- job gets it now when it runs within the sweep horizon (a step with no delay goes out at once),
-- and from the sweep otherwise. The enrollments are looked up by primary key, one probe per id, and
-- only then tested (the fence: see 000014, part 110). Answers how many jobs it added or moved.
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
     where e.status = 'active' and e.current_step_key is not null and e.next_run_at is not null
       and (e.next_run_at <= now() + app_hidden.sequence_sweep_horizon()
            or exists (select 1 from graphile_worker._private_jobs j where j.key = 'sequence_step:' || e.id and j.locked_at is null)));
  if cardinality(specs) = 0 then
    return 0;
  end if;
  return (select count(*)::int from graphile_worker.add_jobs(specs, false));
end $$;
comment on function app_private.schedule_enrollment_steps(uuid, uuid[]) is
  'Moves the waiting sequence_step job of each listed active enrollment to its next_run_at, or adds it when it runs within the '
  'sweep horizon; later steps get theirs from sequence_step_sweep. Job key sequence_step:<id>.';
revoke execute on function app_private.schedule_enrollment_steps(uuid, uuid[]) from public;

-- The one way contacts enter a sequence, as 000014 (part 300) has it, but the enrollment is the
-- unit of work. All the new enrollments run at the same time: later than the sweep horizon, no
-- job is added here (the cron sweep adds them when it comes near); within it, one contact (a
-- request) kicks its organization's sweep (one waiting job for a burst of requests), and a set
-- (an event fired for thousands) gets its jobs in one add_jobs call, as before: one notification
-- for all, and every worker has jobs at once.
create or replace function app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[],
  start_step_key text default null, source text default 'manual', entry_event text default null, at timestamptz default now())
returns table (out_contact_id uuid, out_enrolled boolean, out_enrollment_id uuid)
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  s app_public.sequences;
  idx int;
  step jsonb;
  due timestamptz;
  run_at timestamptz;
  pending uuid[] := array(select distinct c from unnest(contact_ids) c where c is not null);
  answered uuid[] := '{}';
  new_ids uuid[] := '{}';
  r record;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_contacts.organization_id and x.id = enroll_contacts.sequence_id;
  if not found then
    raise exception 'enroll_contacts: no sequence %', enroll_contacts.sequence_id;
  end if;
  if start_step_key is null then
    idx := 0;
  else
    select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = start_step_key limit 1;
  end if;
  step := s.steps->idx;
  if step is null then
    return;
  end if;
  due := at + app_hidden.step_delay(step);
  run_at := app_hidden.sequence_next_run(enroll_contacts.organization_id, s.send_schedule_id, due);
  while cardinality(pending) > 0 loop
    for r in
      with ins as (
        insert into app_public.enrollments as x (organization_id, sequence_id, contact_id, status, current_step_index,
          current_step_key, next_step_due_at, next_run_at, source, entry_event, created_at, updated_at)
        select enroll_contacts.organization_id, enroll_contacts.sequence_id, c, 'active', idx, step->>'step_key', due, run_at,
               enroll_contacts.source, enroll_contacts.entry_event, at, at
          from unnest(pending) c
        on conflict (organization_id, sequence_id, contact_id) where status in ('active', 'paused') do nothing
        returning x.id, x.contact_id
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, at, step_key, reason)
        select enroll_contacts.organization_id, ins.id, 'enrolled', at, step->>'step_key', enroll_contacts.source from ins
      )
      select ins.id, ins.contact_id from ins
    loop
      new_ids := new_ids || r.id;
      answered := answered || r.contact_id;
      out_contact_id := r.contact_id; out_enrolled := true; out_enrollment_id := r.id;
      return next;
    end loop;
    pending := array(select c from unnest(pending) c where not c = any(answered));
    exit when cardinality(pending) = 0;
    -- those that conflicted: the live enrollment (committed by now), one index probe each
    for r in
      select x.id, x.contact_id from unnest(pending) c
        join app_public.enrollments x on x.organization_id = enroll_contacts.organization_id
         and x.sequence_id = enroll_contacts.sequence_id and x.contact_id = c and x.status in ('active', 'paused')
    loop
      answered := answered || r.contact_id;
      out_contact_id := r.contact_id; out_enrolled := false; out_enrollment_id := r.id;
      return next;
    end loop;
    -- a live enrollment that ended between the two: try those again
    pending := array(select c from unnest(pending) c where not c = any(answered));
  end loop;
  if cardinality(new_ids) > 0 and run_at <= now() + app_hidden.sequence_sweep_horizon() then
    if cardinality(new_ids) = 1 then
      perform app_private.kick_step_sweep(enroll_contacts.organization_id);
    else
      -- a set (an event fired for many contacts): their jobs in one add_jobs call, one notification
      perform graphile_worker.add_jobs(array(
        select row('sequence_step', json_build_object('organization_id', enroll_contacts.organization_id, 'enrollment_id', i,
                   'step_key', step->>'step_key'), null, run_at, null, 'sequence_step:' || i, null, null)::graphile_worker.job_spec
          from unnest(new_ids) i), false);
    end if;
  end if;
end $$;
comment on function app_private.enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamptz) is
  'Enrolls contacts (the one core of every way in, set-based): enrollment on the first or given step, due at + delay, run in '
  'the send window, enrolled event; step jobs added at once for a set due within the sweep horizon, else from the sweep (one '
  'contact due within it kicks it); a contact already live answers its enrollment (not enrolled).';
revoke execute on function app_private.enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamptz) from public;

reset role;

--! split: 610-sequences-step-cost.sql
-- What a sequence step costs per message (docs/sequences-engine.md, "Performance"), cut where the
-- engine bench's profile (auto_explain, nested statements) found the time.
set local role svc_owner;

-- Ends live enrollments, as 000014 (part 120) does, each found by its primary key only: the live
-- test is made on the row read, not in the UPDATE's WHERE. With `e.status in ('active',
-- 'paused')` in the WHERE, the cached generic plan still took the partial unique index
-- enrollments_one_live (whose predicate that test implies) on organization_id alone, and read
-- every live enrollment of the organization for each one it ended: 0.9 ms a step at 5,000 live
-- enrollments, growing with them.
create or replace function app_private.end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text)
returns setof app_public.enrollments
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  one uuid;
  was text;
  ended app_public.enrollments;
begin
  if status not in ('cancelled', 'completed', 'failed') then
    raise exception 'end_enrollments: % is not an end status', status;
  end if;
  foreach one in array coalesce(enrollment_ids, '{}') loop
    select e.status into was from app_public.enrollments e
     where e.organization_id = end_enrollments.organization_id and e.id = one
       for update;
    continue when not found or was not in ('active', 'paused');
    update app_public.enrollments e
       set status = end_enrollments.status, end_reason = end_enrollments.reason, next_step_due_at = null,
           next_run_at = null, paused_at = null, updated_at = now()
     where e.organization_id = end_enrollments.organization_id and e.id = one
    returning e.* into ended;
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    values (ended.organization_id, ended.id, end_enrollments.status, ended.current_step_key, end_enrollments.reason);
    return next ended;
  end loop;
end $$;
comment on function app_private.end_enrollments(uuid, uuid[], text, text) is
  'Ends the live enrollments listed (cancelled, completed or failed, with a reason) and logs the event; returns those it ended.';
revoke execute on function app_private.end_enrollments(uuid, uuid[], text, text) from public;

reset role;

--! split: 700-conversations-tables.sql
-- Conversations: the receptionist's inbox (spec: "Conversation, call, form"; issue 15).
--
--   conversations           one thread with one contact on one channel (email, sms, chat), at a
--                           location (NULL: the organization's, visible organization-wide only).
--                           An SMS thread is the contact's on one of the business's numbers
--                           (business_address): a second thread on the same number is never opened.
--                           ai_held: a person answers, the AI does not (response_mode human).
--   conversation_messages   what was said, in order: inbound from the contact, outbound from the
--                           AI, a person, or the service itself (keyword answers: STOP, HELP…).
--                           An outbound message that leaves by email or SMS is also an outgoing
--                           message (app_private.outgoing_messages) with the same id, so delivery
--                           events and outbox lines (meta.message_id) name the message itself.
--
-- Reach (reads, `scoped`): a conversation is visible at the credential's locations and only
-- while its contact is (the contacts policy applies inside, own-records members included);
-- its messages are visible with it. Writes go through the functions of 702-… (definer helpers
-- that check the same reach from the claims, plus the SMS rules of the spec).
set local role svc_owner;

create table if not exists app_public.conversations (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  contact_id uuid not null,
  location_id uuid,
  channel text not null check (channel in ('email', 'sms', 'chat')),
  business_address text check (length(business_address) <= 320),
  subject text check (length(subject) <= 998),
  ai_held boolean not null default false,
  held_at timestamptz,
  last_message_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  foreign key (organization_id, location_id) references app_public.locations,
  -- an email conversation has no AI to hold (spec: conversation rule 2)
  check (channel <> 'email' or not ai_held),
  check (channel <> 'sms' or business_address ~ '^\+[1-9][0-9]{6,14}$')
);
comment on table app_public.conversations is
  'A thread with one contact on one channel (email, sms, chat) at a location; ai_held: a person answers instead of the AI.';
comment on column app_public.conversations.business_address is
  'The business''s side of the thread: the SMS number it texts from, or the email address the contact wrote to.';
comment on column app_public.conversations.ai_held is 'True while a person answers (response_mode human); always false for email.';
-- one SMS thread per contact and number: an inbound text and an outbound one meet in it
create unique index if not exists conversations_sms_thread on app_public.conversations (organization_id, contact_id, business_address)
  where channel = 'sms';
-- conversations_list's order (newest first, keyset paging)
create index if not exists conversations_recent on app_public.conversations (organization_id, created_at desc, id desc);
create index if not exists conversations_by_contact on app_public.conversations (organization_id, contact_id);

create table if not exists app_public.conversation_messages (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  conversation_id uuid not null,
  channel text not null check (channel in ('email', 'sms', 'chat')),
  direction text not null check (direction in ('inbound', 'outbound')),
  author text not null check (author in ('contact', 'ai', 'person', 'system')),
  author_person_id uuid,
  body text not null check (length(body) between 1 and 20000),
  subject text check (length(subject) <= 998),
  status text not null check (status in ('received', 'queued', 'sent', 'failed')),
  error text,
  provider_message_id text check (length(provider_message_id) <= 998),
  -- the clock, not the transaction's start: an inbound message and the answer written in the
  -- same transaction keep their order
  created_at timestamptz not null default clock_timestamp(),
  primary key (organization_id, id),
  foreign key (organization_id, conversation_id) references app_public.conversations on delete cascade,
  foreign key (organization_id, author_person_id) references app_public.people,
  check ((direction = 'inbound') = (author = 'contact')),
  check ((direction = 'inbound') = (status = 'received')),
  check (author = 'person' or author_person_id is null)
);
comment on table app_public.conversation_messages is
  'The messages of a conversation. Outbound ones that leave by email or SMS share their id with the outgoing message '
  '(outbox meta.message_id); status follows its delivery.';
comment on column app_public.conversation_messages.channel is 'The conversation''s channel, copied so search can skip chat by index.';
comment on column app_public.conversation_messages.author is
  'contact (inbound), ai (the responder), person (a team member or an organization key through the API), system (keyword answers).';
comment on column app_public.conversation_messages.provider_message_id is
  'The provider''s id of an inbound message (the SMS provider''s, an email''s Message-ID), for replies that refer to it.';
create index if not exists conversation_messages_thread on app_public.conversation_messages (organization_id, conversation_id, created_at, id);
-- q of conversations_list: substrings of bodies by trigram, chat left out of the index as of the search
create index if not exists conversation_messages_body_trgm on app_public.conversation_messages
  using gin (body gin_trgm_ops) where channel <> 'chat';

alter table app_public.conversations enable row level security;
alter table app_public.conversation_messages enable row level security;

drop policy if exists select_in_reach on app_public.conversations;
-- A credential of the whole organization at the all-records level sees every contact (and the
-- foreign key says the contact is there): the contact's policy is asked only of the others, so
-- the inbox of an organization-wide key does not read every contact per query.
create policy select_in_reach on app_public.conversations for select
  using (organization_id = (select app_hidden.current_org_id())
         and ((select app_hidden.current_reaches_all_locations())
              or location_id = any((select app_hidden.current_location_ids())::uuid[]))
         and (((select app_hidden.current_reaches_all_locations()) and (select app_hidden.current_records_level()) = 'all')
              or exists (select 1 from app_public.contacts c
                          where c.organization_id = conversations.organization_id and c.id = conversations.contact_id)));

drop policy if exists select_with_conversation on app_public.conversation_messages;
create policy select_with_conversation on app_public.conversation_messages for select
  using (organization_id = (select app_hidden.current_org_id())
         and (((select app_hidden.current_reaches_all_locations()) and (select app_hidden.current_records_level()) = 'all')
              or exists (select 1 from app_public.conversations cv
                          where cv.organization_id = conversation_messages.organization_id
                            and cv.id = conversation_messages.conversation_id)));

grant select on app_public.conversations, app_public.conversation_messages to svc_request, svc_worker, svc_analyst;

-- A message's status follows its delivery: deliver_message marks the outgoing message sent or
-- failed, and the conversation's copy says the same.
create or replace function app_private.tg_outgoing_messages__conversation_status() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_public.conversation_messages m set status = new.status, error = new.error
   where m.organization_id = new.organization_id and m.id = new.id and m.direction = 'outbound'
     and (m.status, m.error) is distinct from (new.status, new.error);
  return null;
end $$;
revoke execute on function app_private.tg_outgoing_messages__conversation_status() from public;
drop trigger if exists _700_conversation_status on app_private.outgoing_messages;
create trigger _700_conversation_status after update of status, error on app_private.outgoing_messages
  for each row when (new.meta ? 'conversation_id')
  execute function app_private.tg_outgoing_messages__conversation_status();

--------------------------------------------------------------------------------
-- Shapes
--------------------------------------------------------------------------------
create or replace function app_hidden.conversation_response_mode(cv app_public.conversations) returns text
language sql immutable parallel safe as $$
  select case when cv.channel = 'email' or cv.ai_held then 'human' else 'ai' end
$$;
comment on function app_hidden.conversation_response_mode(app_public.conversations) is
  'Who answers the conversation: ai, or human (held, and always for email, which has no AI).';

create or replace function app_hidden.conversation_message_json(m app_public.conversation_messages) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('id', m.id, 'conversation_id', m.conversation_id, 'direction', m.direction, 'author', m.author,
    'author_person_id', m.author_person_id, 'body', m.body, 'subject', m.subject, 'status', m.status, 'error', m.error,
    'created_at', m.created_at)
$$;
comment on function app_hidden.conversation_message_json(app_public.conversation_messages) is 'One message as the API shows it.';

create or replace function app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('id', cv.id, 'channel', cv.channel, 'contact', app_hidden.contact_card(c),
    'location_id', cv.location_id, 'business_address', cv.business_address, 'subject', cv.subject,
    'response_mode', app_hidden.conversation_response_mode(cv), 'ai_held', cv.ai_held, 'held_at', cv.held_at,
    'last_message_at', cv.last_message_at, 'created_at', cv.created_at, 'updated_at', cv.updated_at)
$$;
comment on function app_hidden.conversation_json(app_public.conversations, app_public.contacts) is
  'A conversation as the API shows it (without messages), its contact as a card.';

grant execute on function app_hidden.conversation_response_mode(app_public.conversations),
  app_hidden.conversation_message_json(app_public.conversation_messages),
  app_hidden.conversation_json(app_public.conversations, app_public.contacts) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Reads
--------------------------------------------------------------------------------
-- The newest `n` conversations (not chat) of the current organization after a cursor whose
-- messages or contact contain a LIKE pattern: conversations_list's candidates for q. It runs as
-- the owner because ILIKE may not use an index under row security (it is not leakproof); it
-- answers only ids, which conversations_list reads under the caller's policies. Two ways, the
-- cheaper first:
--   1. the newest 300 conversations, each asked whether a message of it matches (by the thread
--      index): enough when the pattern is common, whatever its trigrams cost;
--   2. otherwise every match by id (cheap when matches are few): the bodies' trigram index,
--      and the conversations of the contacts contacts_search's own helper finds; newest first.
drop function if exists app_hidden.conversation_ids_matching(text);
drop function if exists app_hidden.conversations_matching(text, timestamptz, uuid, int);
create or replace function app_hidden.conversations_matching(pattern text, after_at timestamptz, after_id uuid, n int)
returns table (id uuid, created_at timestamptz)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  contacts uuid[] := array(select x.id from app_hidden.contacts_matching(pattern, null) x);
  matched uuid[];
  ids uuid[];
begin
  ids := array(
    select w.id
      from (select cv.id, cv.created_at, cv.contact_id from app_public.conversations cv
             where cv.organization_id = org and cv.channel <> 'chat'
               and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
             order by cv.created_at desc, cv.id desc limit 300) w
     where w.contact_id = any(contacts)
        or exists (select 1 from app_public.conversation_messages m
                    where m.organization_id = org and m.conversation_id = w.id and m.channel <> 'chat' and m.body ilike pattern)
     order by w.created_at desc, w.id desc limit n);
  if cardinality(ids) < n then
    -- every match, by id: the bodies' trigram index, then the matching contacts' conversations
    matched := array(select distinct m.conversation_id from app_public.conversation_messages m
                      where m.body ilike pattern and m.channel <> 'chat' and m.organization_id = org)
            || array(select cv.id from app_public.conversations cv
                      where cv.organization_id = org and cv.contact_id = any(contacts));
    ids := array(
      select cv.id from app_public.conversations cv
       where cv.organization_id = org and cv.id = any(matched) and cv.channel <> 'chat'
         and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
       order by cv.created_at desc, cv.id desc limit n);
  end if;
  return query select cv.id, cv.created_at from app_public.conversations cv
                where cv.organization_id = org and cv.id = any(ids) order by cv.created_at desc, cv.id desc;
end $$;
comment on function app_hidden.conversations_matching(text, timestamptz, uuid, int) is
  'Candidates of conversations_list q: the newest n conversations (not chat) of the current organization after the cursor '
  'whose messages or contact contain the pattern (ids only; the caller''s policies filter them).';
grant execute on function app_hidden.conversations_matching(text, timestamptz, uuid, int) to svc_request;

-- conversations_list: newest first by when the conversation opened (created_at, id): a key that
-- never changes, so paging with the cursor of the last row is complete and without duplicates
-- while conversations open and messages arrive. `q` (a substring, case-insensitive) matches a
-- message body or the contact's name, email or phone, and leaves chat conversations out.
drop function if exists app_public.conversations_list(text, int, timestamptz, uuid);
create or replace function app_public.conversations_list(q text, page_size int, after_at timestamptz, after_id uuid)
returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  pattern text := case when q is null then null
                       else '%' || replace(replace(replace(q, chr(92), chr(92) || chr(92)), '%', chr(92) || '%'), '_', chr(92) || '_') || '%' end;
  -- a caller that reaches every conversation of the organization (the policies keep every candidate)
  whole boolean := app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all';
  ids uuid[];
  candidates uuid[];
  batch int;
  from_at timestamptz;
  from_id uuid;
  rows jsonb;
  last record;
  n int;
begin
  if page_size is null or page_size not between 1 and 100 then
    perform app_hidden.raise_error(400, 'bad_request', 'limit: between 1 and 100');
  end if;
  if pattern is null then
    ids := array(select cv.id from app_public.conversations cv
                  where cv.organization_id = org and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
                  order by cv.created_at desc, cv.id desc limit page_size + 1);
  else
    -- candidates as the owner finds them, kept when the caller may read them; a caller that
    -- reads every conversation keeps them all, others ask again past the last candidate
    ids := '{}';
    from_at := after_at;
    from_id := after_id;
    batch := case when whole then page_size + 1 else (page_size + 1) * 4 end;
    loop
      select coalesce(array_agg(x.id order by x.created_at desc, x.id desc), '{}'),
             (array_agg(x.created_at order by x.created_at, x.id))[1], (array_agg(x.id order by x.created_at, x.id))[1]
        into candidates, from_at, from_id
        from app_hidden.conversations_matching(pattern, from_at, from_id, batch) x;
      ids := ids || array(select cv.id from app_public.conversations cv
                           where cv.organization_id = org and cv.id = any(candidates)
                           order by cv.created_at desc, cv.id desc);
      exit when cardinality(ids) > page_size or cardinality(candidates) < batch;
      -- on past the last candidate, in larger steps
      batch := least(batch * 4, 2000);
    end loop;
    ids := ids[1:page_size + 1];
  end if;
  with page as (
    select cv, c
      from app_public.conversations cv
      join app_public.contacts c on c.organization_id = org and c.id = cv.contact_id
     where cv.organization_id = org and cv.id = any(ids))
  select coalesce(jsonb_agg(app_hidden.conversation_json(p.cv, p.c)
           || jsonb_build_object('last_message', (select app_hidden.conversation_message_json(m)
                                                    from app_public.conversation_messages m
                                                   where m.organization_id = org and m.conversation_id = (p.cv).id
                                                   order by m.created_at desc, m.id desc limit 1))
           order by (p.cv).created_at desc, (p.cv).id desc), '[]'),
         count(*)
    into rows, n
    from page p;
  if n > page_size then
    rows := rows - page_size;
    select (x->>'id')::uuid as id into last from jsonb_array_elements(rows) with ordinality e(x, i) where i = page_size;
    return jsonb_build_object('items', rows, 'next', (
      select jsonb_build_object('at', to_char(cv.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'id', cv.id)
        from app_public.conversations cv where cv.organization_id = org and cv.id = last.id));
  end if;
  return jsonb_build_object('items', rows, 'next', null);
end $$;
comment on function app_public.conversations_list(text, int, timestamptz, uuid) is
  'conversations_list: the conversations in reach, newest opened first, page_size at a time after (after_at, after_id); '
  'q matches message bodies and the contact''s name, email, phone, never chat. Answers {items, next: {at, id}|null}.';
grant execute on function app_public.conversations_list(text, int, timestamptz, uuid) to svc_request;

create or replace function app_public.conversations_get(conversation_id uuid) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
begin
  select * into cv from app_public.conversations x where x.organization_id = org and x.id = conversations_get.conversation_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  return app_hidden.conversation_json(cv, c) || jsonb_build_object('messages', coalesce((
    select jsonb_agg(app_hidden.conversation_message_json(m) order by m.created_at, m.id)
      from app_public.conversation_messages m
     where m.organization_id = org and m.conversation_id = cv.id), '[]'));
end $$;
comment on function app_public.conversations_get(uuid) is
  'conversations_get: one conversation in reach with its messages, oldest first, and response_mode; 404 otherwise.';
grant execute on function app_public.conversations_get(uuid) to svc_request;

reset role;

--! split: 701-conversations-inbound.sql
-- Messages from outside: an SMS or an email arrives (today from `svc admin inbound sms|email`;
-- the Delivery issue's signed webhooks call the same functions). Owner-only: the organization is
-- found by the number or address written to, never by a credential.
--
-- SMS: the number is a location's sms_number (that location) or an organization's default
-- number; the contact is matched by phone or created; the contact's thread on that number is
-- continued or opened. Carrier keywords, the whole message alone (case and trailing punctuation
-- ignored): STOP (STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT) records an opt-out, revokes consent
-- and stops SMS sequences (the opt-out trigger of the sequences area); START (UNSTOP) ends the
-- opt-out and records consent; HELP (INFO) asks for help. Each is answered once by the service
-- (author system), the STOP confirmation included, as carriers expect. Any other message is
-- answered by the AI while the thread's response_mode is ai: its job (conversation_ai_reply,
-- 703-…) is queued in this transaction, keyed by the message.
set local role svc_owner;

-- A provider's id is recorded once per organization: a webhook delivered twice is one message.
create unique index if not exists conversation_messages_provider_id on app_public.conversation_messages (organization_id, provider_message_id)
  where provider_message_id is not null;

-- An outbound message of a conversation: the message row and, for email and SMS, the outgoing
-- message with the same id (meta conversation_id, message_id). `deliver`:
--   job     queued with its deliver_message job (this transaction's commit sends it)
--   sink    stored in the local sink's outbox and marked sent now (the API's sends with the sink)
--   caller  queued without a job: the caller hands it to its transport and records the outcome
-- A chat message has no transport: it is stored as sent (the web chat reads it from the thread).
create or replace function app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid,
  body text, sender text, recipient text, subject text, headers jsonb, deliver text) returns app_public.conversation_messages
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  m app_public.conversation_messages;
  message_id uuid := gen_random_uuid();
  meta jsonb := jsonb_build_object('conversation_id', cv.id, 'message_id', message_id);
begin
  if deliver not in ('job', 'sink', 'caller') then
    raise exception 'conversation_append_outbound: deliver is job, sink or caller, not %', deliver;
  end if;
  if cv.channel = 'email' then
    -- the id a reply's In-Reply-To names (conversations_inbound_email finds the thread by it)
    headers := jsonb_build_object('Message-ID', '<' || message_id || '@' || coalesce((select o.sending_email_domain
      from app_public.organizations o where o.id = cv.organization_id), 'localhost') || '>') || coalesce(headers, '{}');
  end if;
  if headers is not null and headers <> '{}' then
    meta := meta || jsonb_build_object('headers', headers);
  end if;
  insert into app_public.conversation_messages (organization_id, id, conversation_id, channel, direction, author, author_person_id,
    body, subject, status)
  values (cv.organization_id, message_id, cv.id, cv.channel, 'outbound', author, person, body, subject,
          case when cv.channel = 'chat' or deliver = 'sink' then 'sent' else 'queued' end)
  returning * into m;
  if cv.channel <> 'chat' then
    insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
    values (cv.organization_id, message_id, cv.channel, sender, recipient, coalesce(subject, case when cv.channel = 'email' then '' end),
            body, meta, case when deliver = 'sink' then 'sent' else 'queued' end, case when deliver = 'sink' then now() end);
    if deliver = 'sink' then
      insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
      values (cv.organization_id, message_id, cv.channel, sender, recipient, subject, body, meta);
    elsif deliver = 'job' then
      perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', cv.organization_id, 'message_id', message_id),
        job_key => 'message:' || message_id);
    end if;
  end if;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id;
  return m;
end $$;
comment on function app_private.conversation_append_outbound(app_public.conversations, text, uuid, text, text, text, text, jsonb, text) is
  'An outbound message of a conversation and its outgoing message (same id; meta conversation_id, message_id), delivered by '
  'job, by the local sink now, or by the caller; chat messages are stored as sent.';
revoke execute on function app_private.conversation_append_outbound(app_public.conversations, text, uuid, text, text, text, text, jsonb, text)
  from public;

-- The answer carriers expect to a keyword, or NULL for an ordinary message.
create or replace function app_private.sms_keyword(body text) returns text
language sql immutable as $$
  select case upper(regexp_replace(btrim(body), '[[:space:][:punct:]]+$', ''))
    when 'STOP' then 'stop' when 'STOPALL' then 'stop' when 'UNSUBSCRIBE' then 'stop' when 'CANCEL' then 'stop'
    when 'END' then 'stop' when 'QUIT' then 'stop'
    when 'START' then 'start' when 'UNSTOP' then 'start'
    when 'HELP' then 'help' when 'INFO' then 'help'
  end
$$;
revoke execute on function app_private.sms_keyword(text) from public;

-- The contact an inbound message comes from, matched by phone or email, or created (at the
-- location written to, when known); linked to that location.
drop function if exists app_private.inbound_contact(uuid, uuid, text, text);
create or replace function app_private.inbound_contact(org uuid, location uuid, phone text, email text)
returns table (contact_id uuid, created boolean)
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  c app_public.contacts;
  made boolean := false;
begin
  if phone is not null then
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = inbound_contact.phone;
  else
    select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(inbound_contact.email);
  end if;
  if c.id is null then
    insert into app_public.contacts (organization_id, phone, email) values (org, inbound_contact.phone, inbound_contact.email)
    on conflict do nothing
    returning * into c;
    made := c.id is not null;
    if not made then
      -- created at the same moment by another message from the same sender
      select * into c from app_public.contacts x
       where x.organization_id = org and (x.phone = inbound_contact.phone or x.email_key = lower(inbound_contact.email));
    end if;
  else
    update app_public.contacts x set last_seen_at = greatest(x.last_seen_at, now())
     where x.organization_id = org and x.id = c.id;
  end if;
  if location is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, location)
    on conflict do nothing;
  end if;
  return query select c.id, made;
end $$;
revoke execute on function app_private.inbound_contact(uuid, uuid, text, text) from public;

-- A new conversation's location when the address written to names none: the contact's only location, if it has one.
create or replace function app_private.contact_only_location(org uuid, contact_id uuid) returns uuid
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select case when count(*) = 1 then min(cl.location_id::text)::uuid end
    from app_public.contact_locations cl where cl.organization_id = org and cl.contact_id = contact_only_location.contact_id
$$;
revoke execute on function app_private.contact_only_location(uuid, uuid) from public;

-- A contact's answer to a sequence's message is the enrollment's `replied` event (the exit
-- `replied` and analytics read it): the message answered is the one an email's In-Reply-To
-- names, or for an SMS the last sequence text from that number to that phone (30 days back).
-- Recorded once per message answered.
create or replace function app_private.conversation_sequence_reply(org uuid, channel text, contact_address text,
  business_address text, replied_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  om app_private.outgoing_messages;
begin
  if replied_id is not null then
    select * into om from app_private.outgoing_messages x
     where x.organization_id = org and x.id = replied_id and x.meta ? 'enrollment_id';
  elsif channel = 'sms' then
    select * into om from app_private.outgoing_messages x
     where x.organization_id = org and x.channel = 'sms' and x.recipient = contact_address and x.sender = business_address
       and x.meta ? 'enrollment_id' and x.created_at > now() - interval '30 days'
     order by x.created_at desc, x.id desc limit 1;
  end if;
  if om.id is null or exists (select 1 from app_public.enrollment_events v
                               where v.organization_id = org and v.enrollment_id = (om.meta->>'enrollment_id')::uuid
                                 and v.type = 'replied' and v.message_id = om.id) then
    return;
  end if;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
  select org, e.id, 'replied', om.meta->>'step_key', om.id
    from app_public.enrollments e where e.organization_id = org and e.id = (om.meta->>'enrollment_id')::uuid;
end $$;
comment on function app_private.conversation_sequence_reply(uuid, text, text, text, uuid) is
  'Records an inbound message as the replied event of the sequence message it answers (In-Reply-To, or the last sequence '
  'SMS from that number to that phone), once per message.';
revoke execute on function app_private.conversation_sequence_reply(uuid, text, text, text, uuid) from public;

drop function if exists app_private.conversations_inbound_sms(text, text, text, text);
create or replace function app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid;
  org_name text;
  location uuid;
  c app_public.contacts;
  made boolean;
  cv app_public.conversations;
  m app_public.conversation_messages;
  keyword text := app_private.sms_keyword(body);
  answer text;
  reply app_public.conversation_messages;
  ai_queued boolean := false;
begin
  if to_number !~ '^\+[1-9][0-9]{6,14}$' or from_number !~ '^\+[1-9][0-9]{6,14}$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are E.164 numbers');
  end if;
  if body is null or length(body) not between 1 and 20000 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: 1 to 20000 characters');
  end if;
  select l.organization_id, l.id into org, location from app_public.locations l
   where l.sms_number = to_number order by l.created_at, l.id limit 1;
  if org is null then
    select o.id into org from app_public.organizations o where o.default_sms_number = to_number order by o.created_at, o.id limit 1;
  end if;
  if org is null then
    perform app_hidden.raise_error(404, 'not_found', 'No organization texts from ' || to_number);
  end if;
  select o.name into org_name from app_public.organizations o where o.id = org;

  if provider_id is not null then
    select * into m from app_public.conversation_messages x where x.organization_id = org and x.provider_message_id = provider_id;
    if found then
      select * into cv from app_public.conversations x where x.organization_id = org and x.id = m.conversation_id;
      return jsonb_build_object('organization_id', org, 'conversation_id', m.conversation_id, 'message_id', m.id,
        'contact_id', cv.contact_id, 'duplicate', true);
    end if;
  end if;

  select x.created into made from app_private.inbound_contact(org, location, from_number, null) x;
  select * into c from app_public.contacts x where x.organization_id = org and x.phone = from_number;

  insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
  values (org, c.id, coalesce(location, app_private.contact_only_location(org, c.id)), 'sms', to_number)
  on conflict (organization_id, contact_id, business_address) where channel = 'sms' do nothing;
  select * into cv from app_public.conversations x
   where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = to_number
     for update;

  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status,
    provider_message_id)
  values (org, cv.id, 'sms', 'inbound', 'contact', body, 'received', provider_id)
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = org and x.id = cv.id;

  if keyword = 'stop' then
    insert into app_public.sms_opt_outs (organization_id, phone, contact_id, source) values (org, c.phone, c.id, 'keyword')
    on conflict (organization_id, phone) where ended_at is null do nothing;
    update app_public.contacts x set sms_consent = false, sms_consent_at = null, sms_consent_source = null, updated_at = now()
     where x.organization_id = org and x.id = c.id;
    answer := org_name || ': you are unsubscribed and will get no more messages from us. Reply START to resubscribe.';
  elsif keyword = 'start' then
    update app_public.sms_opt_outs o set ended_at = greatest(o.created_at, now())
     where o.organization_id = org and o.phone = c.phone and o.ended_at is null;
    update app_public.contacts x set sms_consent = true, sms_consent_at = now(), sms_consent_source = 'SMS keyword START',
           updated_at = now()
     where x.organization_id = org and x.id = c.id;
    answer := org_name || ': you are resubscribed to our messages. Reply HELP for help, STOP to unsubscribe. '
      || 'Msg & data rates may apply.';
  elsif keyword = 'help' then
    answer := org_name || ': reply STOP to unsubscribe, START to resubscribe. Msg & data rates may apply. '
      || 'Reply with your question and we will get back to you.';
  end if;

  if keyword is null then
    perform app_private.conversation_sequence_reply(org, 'sms', c.phone, to_number, null);
  end if;
  if answer is not null then
    reply := app_private.conversation_append_outbound(cv, 'system', null, answer, to_number, c.phone, null, null, 'job');
  elsif app_hidden.conversation_response_mode(cv) = 'ai' then
    perform app_private.add_job('conversation_ai_reply',
      jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id),
      job_key => 'conversation_ai:' || m.id);
    ai_queued := true;
  end if;
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id, 'contact_id', c.id,
    'contact_created', made, 'keyword', keyword, 'reply_message_id', reply.id, 'ai_queued', ai_queued);
end $$;
comment on function app_private.conversations_inbound_sms(text, text, text, text) is
  'An SMS arrives at one of the organization''s numbers: the contact matched by phone or created, the thread continued or '
  'opened, STOP/START/HELP recorded and answered, anything else left to the AI while it answers. Idempotent on provider_id.';
revoke execute on function app_private.conversations_inbound_sms(text, text, text, text) from public;

-- An email arrives. The organization and thread come from In-Reply-To when it names a message
-- the service sent (<message id@domain>), else from the domain written to (the organization's
-- sending domain); the contact is matched by email or created. The thread: the one replied to,
-- else the contact's latest email thread to that address with the same subject (Re:/Fwd:
-- aside), else a new one. Email has no AI: nothing answers it but a person.
drop function if exists app_private.conversations_inbound_email(text, text, text, text, text, text);
create or replace function app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text,
  in_reply_to text, provider_id text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid;
  replied_id uuid;
  c app_public.contacts;
  made boolean;
  cv app_public.conversations;
  m app_public.conversation_messages;
  topic text := nullif(btrim(regexp_replace(coalesce(subject, ''), '^\s*((re|fwd?|aw|sv)\s*:\s*)+', '', 'i')), '');
begin
  if to_address !~ '^[^@\s]+@[^@\s]+$' or from_address !~ '^[^@\s]+@[^@\s]+$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are email addresses');
  end if;
  if body is null or length(body) not between 1 and 20000 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: 1 to 20000 characters');
  end if;
  replied_id := substring(in_reply_to from '^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@')::uuid;
  if replied_id is not null then
    select om.organization_id, (om.meta->>'conversation_id')::uuid into org, cv.id
      from app_private.outgoing_messages om where om.id = replied_id and om.channel = 'email';
  end if;
  if org is null then
    select o.id into org from app_public.organizations o
     where lower(o.sending_email_domain) = lower(split_part(to_address, '@', 2)) order by o.created_at, o.id limit 1;
  end if;
  if org is null then
    perform app_hidden.raise_error(404, 'not_found', 'No organization receives email at ' || to_address);
  end if;
  if provider_id is not null then
    select * into m from app_public.conversation_messages x where x.organization_id = org and x.provider_message_id = provider_id;
    if found then
      return jsonb_build_object('organization_id', org, 'conversation_id', m.conversation_id, 'message_id', m.id, 'duplicate', true);
    end if;
  end if;

  select x.created into made from app_private.inbound_contact(org, null, null, lower(from_address)) x;
  select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(from_address);
  if cv.id is not null then
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.id = cv.id and x.contact_id = c.id and x.channel = 'email' for update;
  end if;
  if cv.id is null then
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.contact_id = c.id and x.channel = 'email' and x.business_address = lower(to_address)
       and x.subject is not distinct from topic
     order by x.last_message_at desc, x.id desc limit 1 for update;
  end if;
  if cv.id is null then
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address, subject)
    values (org, c.id, app_private.contact_only_location(org, c.id), 'email', lower(to_address), topic)
    returning * into cv;
  end if;
  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, subject, status,
    provider_message_id)
  values (org, cv.id, 'email', 'inbound', 'contact', body, subject, 'received', provider_id)
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = org and x.id = cv.id;
  perform app_private.conversation_sequence_reply(org, 'email', c.email_key, null, replied_id);
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id, 'contact_id', c.id,
    'contact_created', made);
end $$;
comment on function app_private.conversations_inbound_email(text, text, text, text, text, text) is
  'An email arrives: organization and thread by In-Reply-To or the domain written to, contact by email or created, the '
  'thread continued (replied to, or same address and subject) or opened. No AI answers email.';
revoke execute on function app_private.conversations_inbound_email(text, text, text, text, text, text) from public;

reset role;

--! split: 702-conversations-writes.sql
-- A person's writes in the inbox (spec: "Conversation and SMS rules" 1-6): conversations_reply,
-- conversations_send_sms, conversations_hold, conversations_resume.
--
-- Each app_public function runs as the caller, so the reach policies answer 404 for what the
-- credential cannot see; a MEMBER (sms_setting) also only writes to its own clients (404
-- otherwise; its SMS setting off is authenticate's 403). The write itself is an app_hidden
-- definer helper (it writes app_private's outgoing messages and the outbox), which checks the
-- same reach from the claims again before it writes anything.
--
-- Sending: the message goes out on the conversation's own channel (rule 1), through the
-- delivery transports: with the local sink it is stored and marked sent in this transaction;
-- with another transport the operation hands it over itself before answering and records the
-- outcome (src/conversations/send.ts). It is never queued for a retry: after a 5xx the message
-- may have gone. A person's reply or text puts the AI on hold (response_mode human).
set local role svc_owner;

-- Whether the credential may write to a conversation of this contact at this location: in
-- reach as the policies would say, and for a MEMBER its own client.
create or replace function app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) returns boolean
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select app_hidden.current_org_id() is not null
     and (app_hidden.current_reaches_all_locations() or location_id = any(app_hidden.current_location_ids()))
     and (app_hidden.current_reaches_all_locations()
          or exists (select 1 from app_public.contact_locations cl
                      where cl.organization_id = app_hidden.current_org_id() and cl.contact_id = conversation_write_reach.contact_id
                        and cl.location_id = any(app_hidden.current_location_ids())))
     and ((app_hidden.current_records_level() = 'all' and app_hidden.current_role() <> 'member')
          or conversation_write_reach.contact_id = any(app_hidden.current_own_client_ids()))
$$;
comment on function app_hidden.conversation_write_reach(uuid, uuid) is
  'Whether the current credential may write to a conversation of the contact at the location (NULL: the organization''s): '
  'in reach, and for a MEMBER (or an own-records one) the contact is its own client.';
grant execute on function app_hidden.conversation_write_reach(uuid, uuid) to svc_request;

-- 409 sms_not_permitted unless the number may get this text: never to an opted-out number;
-- a new text needs the contact's consent; an answer in a thread the contact wrote in is
-- permitted by its own message (rule 6; the AI's answers follow the same rule).
create or replace function app_private.conversation_sms_refusal(c app_public.contacts, cv app_public.conversations) returns text
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if exists (select 1 from app_public.sms_opt_outs o
              where o.organization_id = c.organization_id and o.phone = c.phone and o.ended_at is null) then
    return 'The contact opted out of SMS';
  end if;
  if not c.sms_consent and (cv.id is null or not exists (
       select 1 from app_public.conversation_messages m
        where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.direction = 'inbound')) then
    return 'The contact has not consented to SMS';
  end if;
  return null;
end $$;
revoke execute on function app_private.conversation_sms_refusal(app_public.contacts, app_public.conversations) from public;

-- What a send answers: the message, the conversation after it, and for a caller-delivered
-- message the outgoing message to hand to the transport.
-- volatile: a stable function would read the snapshot of its caller's statement, from before the message was written
create or replace function app_private.conversation_send_answer(m app_public.conversation_messages) returns jsonb
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'message', app_hidden.conversation_message_json(m),
    'conversation', (select app_hidden.conversation_json(cv, c) from app_public.conversations cv
                       join app_public.contacts c on c.organization_id = cv.organization_id and c.id = cv.contact_id
                      where cv.organization_id = m.organization_id and cv.id = m.conversation_id),
    'outgoing', (select jsonb_build_object('organization_id', om.organization_id, 'id', om.id, 'channel', om.channel,
                   'sender', om.sender, 'recipient', om.recipient, 'subject', om.subject, 'body', om.body, 'meta', om.meta)
                   from app_private.outgoing_messages om
                  where om.organization_id = m.organization_id and om.id = m.id and om.status = 'queued'))
$$;
revoke execute on function app_private.conversation_send_answer(app_public.conversation_messages) from public;

create or replace function app_private.conversation_hold_for_person(cv app_public.conversations) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_public.conversations x set ai_held = true, held_at = coalesce(x.held_at, now()), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id and x.channel <> 'email' and not x.ai_held
$$;
revoke execute on function app_private.conversation_hold_for_person(app_public.conversations) from public;

-- The conversation a definer helper is about to write to, locked: 404 unless the current
-- credential may write to it (app_hidden.conversation_write_reach).
create or replace function app_private.conversation_locked_for_write(conversation_id uuid) returns app_public.conversations
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = app_hidden.current_org_id() and x.id = conversation_locked_for_write.conversation_id for update;
  if not found or not app_hidden.conversation_write_reach(cv.contact_id, cv.location_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  return cv;
end $$;
revoke execute on function app_private.conversation_locked_for_write(uuid) from public;

--------------------------------------------------------------------------------
-- conversations_reply
--------------------------------------------------------------------------------
create or replace function app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
  person app_public.people;
  domain text;
  sender text;
  recipient text;
  subject text;
  headers jsonb := '{}';
  refusal text;
begin
  cv := app_private.conversation_locked_for_write(conversation_id);
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  if cv.channel = 'email' then
    -- rule 3: an email goes out as a person
    select * into person from app_public.people p where p.organization_id = org and p.id = app_hidden.current_user_id() and p.active;
    if person.id is null then
      perform app_hidden.raise_error(422, 'no_acting_user',
        'An email reply goes out as a person: use a personal key (this credential acts for no one)');
    end if;
    if c.email is null then
      perform app_hidden.raise_error(422, 'channel_not_supported', 'The contact has no email address to reply to');
    end if;
    if exists (select 1 from app_public.email_suppressions s where s.organization_id = org and s.email = c.email_key) then
      perform app_hidden.raise_error(409, 'email_suppressed', 'The contact''s address is suppressed: no email goes to it');
    end if;
    select coalesce(o.sending_email_domain, 'localhost') into domain from app_public.organizations o where o.id = org;
    -- from the address the contact wrote to; who wrote it is the message's author (author_person_id)
    sender := coalesce(cv.business_address, 'inbox@' || domain);
    recipient := c.email::text;
    subject := case when coalesce(cv.subject, '') ~* '^\s*re\s*:' then cv.subject else 'Re: ' || coalesce(cv.subject, '(no subject)') end;
    headers := coalesce((select jsonb_build_object('In-Reply-To', m.provider_message_id)
                           from app_public.conversation_messages m
                          where m.organization_id = org and m.conversation_id = cv.id and m.direction = 'inbound'
                            and m.provider_message_id is not null
                          order by m.created_at desc, m.id desc limit 1), '{}');
  elsif cv.channel = 'sms' then
    if c.phone is null then
      perform app_hidden.raise_error(422, 'no_sms_number', 'The contact has no phone number to text');
    end if;
    refusal := app_private.conversation_sms_refusal(c, cv);
    if refusal is not null then
      perform app_hidden.raise_error(409, 'sms_not_permitted', refusal);
    end if;
    sender := cv.business_address;
    recipient := c.phone;
  end if;
  perform app_private.conversation_hold_for_person(cv);
  return app_private.conversation_send_answer(app_private.conversation_append_outbound(cv, 'person', person.id, body, sender, recipient,
    subject, headers, case when cv.channel = any(sinks) then 'sink' else 'caller' end));
end $$;
comment on function app_hidden.conversation_reply_send(uuid, text, text[]) is
  'conversations_reply''s write: the rules of the conversation''s channel (email as a person; SMS consent and opt-out), the '
  'message stored and, for channels in sinks, delivered to the local sink; the AI put on hold.';
grant execute on function app_hidden.conversation_reply_send(uuid, text, text[]) to svc_request;

-- The conversation a person may write to, or 404: visible to the credential (the policies), and
-- for a MEMBER its own client's.
create or replace function app_hidden.conversation_for_write(conversation_id uuid) returns app_public.conversations
language plpgsql stable as $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = app_hidden.current_org_id() and x.id = conversation_for_write.conversation_id;
  if not found or not app_hidden.conversation_write_reach(cv.contact_id, cv.location_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  return cv;
end $$;
comment on function app_hidden.conversation_for_write(uuid) is
  'The conversation by id as the caller sees it (policies) and may write to it (a MEMBER: own clients), else 404.';
grant execute on function app_hidden.conversation_for_write(uuid) to svc_request;

create or replace function app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) returns jsonb
language sql volatile as $$
  select app_hidden.conversation_reply_send((app_hidden.conversation_for_write(conversation_id)).id, body, sinks)
$$;
comment on function app_public.conversations_reply(uuid, text, text[]) is
  'conversations_reply: answers on the conversation''s own channel (rules 1, 3, 5, 6) and puts the AI on hold; answers '
  '{message, conversation, outgoing} (outgoing: for the caller''s transport, when not a sink).';
grant execute on function app_public.conversations_reply(uuid, text, text[]) to svc_request;

--------------------------------------------------------------------------------
-- conversations_send_sms
--------------------------------------------------------------------------------
create or replace function app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
-- ON CONFLICT names columns that share the parameters' names
#variable_conflict use_column
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
  loc uuid := location_id;
  number text;
  cv app_public.conversations;
  refusal text;
begin
  select * into c from app_public.contacts x where x.organization_id = org and x.id = conversation_sms_send.contact_id;
  if not found or not app_hidden.conversation_write_reach(c.id, coalesce(loc, (
       select cl.location_id from app_public.contact_locations cl
        where cl.organization_id = org and cl.contact_id = c.id and app_hidden.current_in_reach(cl.location_id) limit 1))) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  -- rule 4: the number of the contact's location (one in reach), else the organization's default
  if loc is null then
    select l.id into loc from app_public.contact_locations cl
      join app_public.locations l on l.organization_id = cl.organization_id and l.id = cl.location_id
     where cl.organization_id = org and cl.contact_id = c.id and app_hidden.current_in_reach(l.id)
     order by l.sms_number is null, l.created_at, l.id limit 1;
  end if;
  select coalesce((select l.sms_number from app_public.locations l where l.organization_id = org and l.id = loc), o.default_sms_number)
    into number from app_public.organizations o where o.id = org;
  if number is null then
    perform app_hidden.raise_error(422, 'no_sms_number',
      'No number can text this contact: its location has no SMS number and the organization has no default number');
  end if;
  if c.phone is null then
    perform app_hidden.raise_error(422, 'no_sms_number', 'The contact has no phone number to text');
  end if;
  select * into cv from app_public.conversations x
   where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = number for update;
  if cv.id is not null and not app_hidden.current_in_reach(cv.location_id) then
    if app_hidden.current_role() = 'member' then
      perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
    end if;
    perform app_hidden.raise_error(422, 'thread_at_other_location',
      'The contact''s SMS thread on ' || number || ' belongs to another location');
  end if;
  refusal := app_private.conversation_sms_refusal(c, null);
  if refusal is not null then
    perform app_hidden.raise_error(409, 'sms_not_permitted', refusal);
  end if;
  if cv.id is null then
    -- a concurrent first text opens the same thread: both continue the one that won
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
    values (org, c.id, loc, 'sms', number)
    on conflict (organization_id, contact_id, business_address) where channel = 'sms' do nothing;
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = number for update;
  end if;
  perform app_private.conversation_hold_for_person(cv);
  return app_private.conversation_send_answer(app_private.conversation_append_outbound(cv, 'person', app_hidden.current_user_id(), body,
    number, c.phone, null, null, case when 'sms' = any(sinks) then 'sink' else 'caller' end));
end $$;
comment on function app_hidden.conversation_sms_send(uuid, text, uuid, text[]) is
  'conversations_send_sms''s write: the number (rule 4), the thread on it (another location''s: 422, a MEMBER 404), consent '
  '(rule 6); the text stored in the contact''s thread on that number and, with the sink, delivered.';
grant execute on function app_hidden.conversation_sms_send(uuid, text, uuid, text[]) to svc_request;

create or replace function app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
begin
  select * into c from app_public.contacts x where x.organization_id = org and x.id = conversations_send_sms.contact_id;
  if not found or (app_hidden.current_role() = 'member' and not c.id = any(app_hidden.current_own_client_ids())) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  if location_id is not null then
    if not exists (select 1 from app_public.locations l where l.organization_id = org and l.id = conversations_send_sms.location_id) then
      perform app_hidden.raise_error(404, 'not_found', 'Location not found');
    end if;
    if not exists (select 1 from app_public.contact_locations cl
                    where cl.organization_id = org and cl.contact_id = c.id and cl.location_id = conversations_send_sms.location_id) then
      perform app_hidden.raise_error(409, 'contact_not_at_location', 'The contact is not linked to that location');
    end if;
  end if;
  return app_hidden.conversation_sms_send(c.id, body, location_id, sinks);
end $$;
comment on function app_public.conversations_send_sms(uuid, text, uuid, text[]) is
  'conversations_send_sms: texts a contact from its location''s number (else the default) in its thread on that number '
  '(rules 4-6) and puts the AI on hold; answers {message, conversation, outgoing}.';
grant execute on function app_public.conversations_send_sms(uuid, text, uuid, text[]) to svc_request;

--------------------------------------------------------------------------------
-- conversations_hold, conversations_resume
--------------------------------------------------------------------------------
-- Resuming hands the AI the contact's last message when nothing answered it yet: its job is
-- queued like an inbound message's (job key per message, so never twice at once).
create or replace function app_hidden.conversation_set_held(conversation_id uuid, held boolean) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
  last app_public.conversation_messages;
  queued boolean := false;
begin
  cv := app_private.conversation_locked_for_write(conversation_id);
  if cv.channel = 'email' then
    perform app_hidden.raise_error(422, 'channel_not_supported', 'An email conversation has no AI to hold or resume');
  end if;
  if cv.ai_held is distinct from held then
    update app_public.conversations x set ai_held = held, held_at = case when held then now() end, updated_at = now()
     where x.organization_id = org and x.id = cv.id
    returning * into cv;
    if not held then
      select * into last from app_public.conversation_messages m
       where m.organization_id = org and m.conversation_id = cv.id order by m.created_at desc, m.id desc limit 1;
      if last.direction = 'inbound' then
        perform app_private.add_job('conversation_ai_reply',
          jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', last.id),
          job_key => 'conversation_ai:' || last.id);
        queued := true;
      end if;
    end if;
  end if;
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  return app_hidden.conversation_json(cv, c) || jsonb_build_object('ai_queued', queued);
end $$;
comment on function app_hidden.conversation_set_held(uuid, boolean) is
  'conversations_hold/resume''s write: 422 channel_not_supported for email; resuming queues the AI''s answer to an '
  'unanswered last message.';
grant execute on function app_hidden.conversation_set_held(uuid, boolean) to svc_request;

create or replace function app_public.conversations_hold(conversation_id uuid) returns jsonb
language sql volatile as $$
  select app_hidden.conversation_set_held((app_hidden.conversation_for_write(conversation_id)).id, true)
$$;
comment on function app_public.conversations_hold(uuid) is
  'conversations_hold: the AI stops answering the SMS or chat conversation until resumed (422 for email).';
grant execute on function app_public.conversations_hold(uuid) to svc_request;

create or replace function app_public.conversations_resume(conversation_id uuid) returns jsonb
language sql volatile as $$
  select app_hidden.conversation_set_held((app_hidden.conversation_for_write(conversation_id)).id, false)
$$;
comment on function app_public.conversations_resume(uuid) is
  'conversations_resume: the AI answers the SMS or chat conversation again, starting with an unanswered last message (422 for email).';
grant execute on function app_public.conversations_resume(uuid) to svc_request;

-- What the transport answered for a message the operation handed over itself.
create or replace function app_hidden.conversation_message_record(message_id uuid, error text) returns text
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.outgoing_messages m
     set status = case when conversation_message_record.error is null then 'sent' else 'failed' end,
         sent_at = case when conversation_message_record.error is null then now() end,
         error = left(conversation_message_record.error, 1000)
   where m.organization_id = app_hidden.current_org_id() and m.id = conversation_message_record.message_id
     and m.status = 'queued' and m.meta ? 'conversation_id'
  returning m.status
$$;
comment on function app_hidden.conversation_message_record(uuid, text) is
  'Records what the transport answered for a conversation message of the current organization the API sent itself.';
grant execute on function app_hidden.conversation_message_record(uuid, text) to svc_request;

reset role;

--! split: 703-conversations-ai.sql
-- The AI receptionist's turn: task conversation_ai_reply (src/conversations/ai_reply.ts), queued
-- with the inbound message that asks for it (job key conversation_ai:<message id>), runs in
-- three steps so that a crash anywhere sends nothing twice:
--   1. conversation_ai_context: what the responder needs (organization, location with hours,
--      address and booking options, the thread), or NULL when the AI has nothing to do;
--   2. the responder answers, outside any transaction (it may be a remote model);
--   3. conversation_ai_record: one transaction that checks again, under the conversation's lock,
--      that the message is still the AI's to answer, then writes the answer and queues its
--      delivery (deliver_message: exactly once with the sink), or puts the thread on hold when
--      the responder hands over to a person. With the local sink the answer is stored there in
--      that same transaction.
-- A rerun after 3 committed finds the message answered (or the thread held) and does nothing;
-- a rerun before it asks the responder again, and nothing had been sent.
set local role svc_owner;

-- Whether the AI still owes an answer to this message: the thread answers by AI, the message is
-- the contact's, nothing went out after it, and no newer message of the contact waits (its own
-- job answers the thread then).
create or replace function app_private.conversation_ai_due(cv app_public.conversations, message_id uuid) returns boolean
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select cv.id is not null and app_hidden.conversation_response_mode(cv) = 'ai'
     and exists (select 1 from app_public.conversation_messages m
                  where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                    and m.id = conversation_ai_due.message_id and m.direction = 'inbound'
                    and not exists (select 1 from app_public.conversation_messages later
                                     where later.organization_id = m.organization_id and later.conversation_id = m.conversation_id
                                       and (later.created_at, later.id) > (m.created_at, m.id)))
$$;
revoke execute on function app_private.conversation_ai_due(app_public.conversations, uuid) from public;

create or replace function app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = conversation_ai_context.organization_id and x.id = conversation_ai_context.conversation_id;
  if not app_private.conversation_ai_due(cv, message_id) then
    return null;
  end if;
  return jsonb_build_object(
    'organization', (select jsonb_build_object('name', o.name) from app_public.organizations o where o.id = cv.organization_id),
    'location', (select jsonb_build_object('name', l.name, 'timezone', l.timezone, 'hours', l.hours,
                   'address', to_jsonb(l)->'address',
                   'offerings', coalesce((select jsonb_agg(jsonb_build_object('name', f.name, 'duration_minutes', f.duration_minutes)
                                                           order by f.name)
                                            from app_public.offerings f
                                           where f.organization_id = l.organization_id and f.location_id = l.id), '[]'))
                   from app_public.locations l where l.organization_id = cv.organization_id and l.id = cv.location_id),
    'channel', cv.channel,
    'contact', (select jsonb_build_object('name', c.name) from app_public.contacts c
                 where c.organization_id = cv.organization_id and c.id = cv.contact_id),
    'thread', coalesce((select jsonb_agg(jsonb_build_object('author', t.author, 'body', t.body) order by t.created_at, t.id)
                          from (select m.author, m.body, m.created_at, m.id from app_public.conversation_messages m
                                 where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                                 order by m.created_at desc, m.id desc limit 20) t), '[]'));
end $$;
comment on function app_private.conversation_ai_context(uuid, uuid, uuid) is
  'What the AI responder is given for an inbound message (organization, location with hours, address and offerings, the '
  'last 20 messages), or NULL when the AI owes it no answer.';
revoke execute on function app_private.conversation_ai_context(uuid, uuid, uuid) from public;

-- answer: {kind: reply, text} or {kind: handover}. Answers {action: none|handover|refused|reply, …}.
-- sinks: the channels whose transport is the local sink, a table: their answer is stored there
-- in this transaction (exactly once, no second job); other channels get a deliver_message job.
drop function if exists app_private.conversation_ai_record(uuid, uuid, uuid, jsonb);
create or replace function app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb,
  sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  cv app_public.conversations;
  c app_public.contacts;
  refusal text;
  m app_public.conversation_messages;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = conversation_ai_record.organization_id and x.id = conversation_ai_record.conversation_id for update;
  if not app_private.conversation_ai_due(cv, message_id) then
    return jsonb_build_object('action', 'none');
  end if;
  if answer->>'kind' = 'handover' or coalesce(btrim(answer->>'text'), '') = '' then
    update app_public.conversations x set ai_held = true, held_at = now(), updated_at = now()
     where x.organization_id = cv.organization_id and x.id = cv.id;
    return jsonb_build_object('action', 'handover');
  end if;
  select * into c from app_public.contacts x where x.organization_id = cv.organization_id and x.id = cv.contact_id;
  if cv.channel = 'sms' then
    -- the same rules as a person's answer (rule 6): never to an opted-out number
    refusal := case when c.phone is null then 'The contact has no phone number' else app_private.conversation_sms_refusal(c, cv) end;
    if refusal is not null then
      return jsonb_build_object('action', 'refused', 'reason', refusal);
    end if;
  end if;
  m := app_private.conversation_append_outbound(cv, 'ai', null, left(btrim(answer->>'text'), 1600), cv.business_address, c.phone,
    null, null, case when cv.channel = any(sinks) then 'sink' else 'job' end);
  return jsonb_build_object('action', 'reply', 'message_id', m.id);
end $$;
comment on function app_private.conversation_ai_record(uuid, uuid, uuid, jsonb, text[]) is
  'Writes the AI''s answer to an inbound message (queued for delivery) or hands the thread to a person (hold), once: '
  'nothing when the message is no longer the AI''s to answer.';
revoke execute on function app_private.conversation_ai_record(uuid, uuid, uuid, jsonb, text[]) from public;

reset role;

--! split: 720-calls.sql
-- Calls: the phone calls the receptionist (the voice platform's assistant, or a team member)
-- had with contacts, each with its transcript (spec: Conversation, call, form; Authentication 7;
-- ../shared/design/operator-cli.md, `contacts[].calls`).
--
--   calls                   one row per call: who (contact), where (location), who took it
--                           (team member = staff profile), when, how long, the platform's call id
--   call_transcript_lines   the transcript, one row per line in order (caller, assistant, staff)
--
-- Reach: a call is visible to credentials that reach its location (a call of no location only
-- organization-wide). A MEMBER reads only the calls of its own clients (app_private.own_clients,
-- any source), and only while it has a staff profile: a MEMBER key, or a member without a
-- profile, reads none. A call taken by a team member makes its contact that person's own client
-- (source 'calls'), kept by the trigger below.
--
-- Writes come from the fixture (as the owner) and from the voice webhook (722-calls-webhook.sql);
-- the API only reads.
set local role svc_owner;

create table if not exists app_public.calls (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  contact_id uuid not null,
  location_id uuid,
  staff_profile_id uuid,
  direction text not null default 'inbound' check (direction in ('inbound', 'outbound')),
  status text not null default 'completed' check (status in ('completed', 'missed', 'voicemail', 'in_progress', 'failed')),
  from_number text check (from_number ~ '^\+[1-9][0-9]{6,14}$'),
  to_number text check (to_number ~ '^\+[1-9][0-9]{6,14}$'),
  started_at timestamptz not null default now(),
  duration_seconds int check (duration_seconds between 0 and 86400),
  summary text check (length(summary) <= 20000),
  -- the voice platform's id of the call: a second delivery of the same call records nothing new
  external_id text check (length(external_id) between 1 and 200),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  foreign key (organization_id, location_id) references app_public.locations on delete set null (location_id),
  foreign key (organization_id, staff_profile_id) references app_public.staff_profiles on delete set null (staff_profile_id)
);
comment on table app_public.calls is
  'A phone call with a contact (taken by the assistant, or by a team member: staff_profile_id), with its transcript in '
  'app_public.call_transcript_lines. external_id is the voice platform''s call id (unique per organization).';
comment on column app_public.calls.location_id is 'Where it was taken; NULL: visible only to credentials that reach the whole organization.';
create unique index if not exists calls_by_external_id on app_public.calls (organization_id, external_id) where external_id is not null;
-- calls_list: newest first, keyset over (started_at, id), optionally for one contact
create index if not exists calls_by_start on app_public.calls (organization_id, started_at desc, id desc);
create index if not exists calls_by_contact on app_public.calls (organization_id, contact_id, started_at desc, id desc);

create table if not exists app_public.call_transcript_lines (
  organization_id uuid not null,
  call_id uuid not null,
  position int not null check (position >= 0),
  speaker text not null check (speaker in ('caller', 'assistant', 'staff')),
  text text not null check (length(text) <= 20000),
  primary key (organization_id, call_id, position),
  foreign key (organization_id, call_id) references app_public.calls on delete cascade
);
comment on table app_public.call_transcript_lines is 'A call''s transcript, one line per row in the order spoken (position from 0).';

--------------------------------------------------------------------------------
-- Own clients: a call taken by a team member makes its contact that person's client
--------------------------------------------------------------------------------
-- Keeps (person of the staff profile, contact, 'calls') in app_private.own_clients while at
-- least one call of that team member with that contact remains.
create or replace function app_private.tg_calls__own_clients() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.staff_profile_id is not null
     and (tg_op = 'DELETE' or old.staff_profile_id is distinct from new.staff_profile_id or old.contact_id <> new.contact_id)
     and not exists (select 1 from app_public.calls c
                      where c.organization_id = old.organization_id and c.contact_id = old.contact_id
                        and c.staff_profile_id = old.staff_profile_id and c.id <> old.id) then
    delete from app_private.own_clients o
     using app_public.staff_profiles sp
     where sp.organization_id = old.organization_id and sp.id = old.staff_profile_id
       and o.organization_id = old.organization_id and o.person_id = sp.person_id and o.contact_id = old.contact_id
       and o.source = 'calls';
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.staff_profile_id is not null then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'calls'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id
    on conflict do nothing;
  end if;
  return null;
end $$;
comment on function app_private.tg_calls__own_clients() is
  'The calls area''s rows of app_private.own_clients: a contact is the own client of the team member who took a call with it.';
revoke execute on function app_private.tg_calls__own_clients() from public;
drop trigger if exists _500_own_clients on app_public.calls;
create trigger _500_own_clients after insert or delete or update of staff_profile_id, contact_id on app_public.calls
  for each row execute function app_private.tg_calls__own_clients();

--------------------------------------------------------------------------------
-- Reach
--------------------------------------------------------------------------------
-- Whether the credential reads the calls of this contact: everyone but a MEMBER; a MEMBER only
-- those of its own clients, and only with a staff profile (spec: Authentication 7).
create or replace function app_hidden.current_reads_calls_of(contact_id uuid) returns boolean
language sql stable parallel safe as $$
  select app_hidden.current_role() is distinct from 'member'
      or ((select app_hidden.current_staff_profile_id()) is not null
          and contact_id = any((select app_hidden.current_own_client_ids())::uuid[]))
$$;
comment on function app_hidden.current_reads_calls_of(uuid) is
  'Whether the credential reads calls with this contact (a MEMBER: only its own clients'', and only with a staff profile).';
grant execute on function app_hidden.current_reads_calls_of(uuid) to svc_request, svc_worker;

alter table app_public.calls enable row level security;
drop policy if exists select_in_reach on app_public.calls;
create policy select_in_reach on app_public.calls for select using (
  organization_id = (select app_hidden.current_org_id())
  and ((select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[]))
  and app_hidden.current_reads_calls_of(contact_id));
grant select on app_public.calls to svc_request, svc_worker;

alter table app_public.call_transcript_lines enable row level security;
drop policy if exists select_with_call on app_public.call_transcript_lines;
create policy select_with_call on app_public.call_transcript_lines for select using (
  organization_id = (select app_hidden.current_org_id())
  and exists (select 1 from app_public.calls c
               where c.organization_id = call_transcript_lines.organization_id and c.id = call_transcript_lines.call_id));
grant select on app_public.call_transcript_lines to svc_request, svc_worker;

reset role;

--! split: 721-calls-reads.sql
-- calls_list and calls_get: read as the caller, so the policies of 720-calls.sql decide which
-- calls a credential sees (a call out of reach is absent: 404 on get, missing from lists).
set local role svc_owner;

-- The call as the API shows it (the transcript only on calls_get).
create or replace function app_hidden.call_json(c app_public.calls) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object(
    'id', c.id,
    'contact_id', c.contact_id,
    'location_id', c.location_id,
    'team_member_id', c.staff_profile_id,
    'direction', c.direction,
    'status', c.status,
    'from', c.from_number,
    'to', c.to_number,
    'started_at', c.started_at,
    'duration_seconds', c.duration_seconds,
    'summary', c.summary,
    'created_at', c.created_at)
$$;
comment on function app_hidden.call_json(app_public.calls) is 'A call as calls_list and calls_get answer it (without its transcript).';
grant execute on function app_hidden.call_json(app_public.calls) to svc_request, svc_worker;

-- A page of calls, newest first, after the keyset position (after_at, after_id) of the previous
-- page's last call: complete and without duplicates while calls arrive (keyset, not offset).
-- next_after is the last call's position, or null on the last page. A contact_id out of reach
-- answers 404 (a contact in reach with no call readable: an empty page).
create or replace function app_public.calls_list(contact_id uuid, after_at timestamptz, after_id uuid, lim int) returns jsonb
language plpgsql stable as $$
declare
  page app_public.calls[];
  last app_public.calls;
begin
  -- the page size first, before anything is read (NULL: 25; outside 1 to 100: 400, as over REST)
  lim := app_hidden.page_limit(lim);
  if (after_at is null) <> (after_id is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'query.cursor: not a cursor from this list: pass next_cursor back unchanged');
  end if;
  if calls_list.contact_id is not null and not exists (
      select 1 from app_public.contacts x where x.organization_id = app_hidden.current_org_id() and x.id = calls_list.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  select coalesce(array_agg(x order by x.started_at desc, x.id desc), '{}') into page
    from (select c.* from app_public.calls c
           where c.organization_id = app_hidden.current_org_id()
             and (calls_list.contact_id is null or c.contact_id = calls_list.contact_id)
             and (after_at is null or (c.started_at, c.id) < (after_at, after_id))
           order by c.started_at desc, c.id desc
           limit lim + 1) x;
  if cardinality(page) > lim then
    page := page[1:lim];
    last := page[lim];
  end if;
  return jsonb_build_object(
    'items', (select coalesce(jsonb_agg(app_hidden.call_json(page[i]) order by i), '[]') from generate_subscripts(page, 1) i),
    'next_after', case when last.id is not null then jsonb_build_object(
      'at', to_char(last.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'id', last.id) end);
end $$;
comment on function app_public.calls_list(uuid, timestamptz, uuid, int) is
  'calls_list: a page of the calls the credential reads, newest first, after a keyset position; 404 for a contact out of reach.';

create or replace function app_public.calls_get(call_id uuid) returns jsonb
language plpgsql stable as $$
declare
  c app_public.calls;
begin
  select * into c from app_public.calls x where x.organization_id = app_hidden.current_org_id() and x.id = calls_get.call_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return app_hidden.call_json(c) || jsonb_build_object('transcript', coalesce((
    select jsonb_agg(jsonb_build_object('speaker', l.speaker, 'text', l.text) order by l.position)
      from app_public.call_transcript_lines l
     where l.organization_id = c.organization_id and l.call_id = c.id), '[]'));
end $$;
comment on function app_public.calls_get(uuid) is 'calls_get: one call the credential reads, with its transcript; 404 otherwise.';

grant execute on function app_public.calls_list(uuid, timestamptz, uuid, int), app_public.calls_get(uuid) to svc_request;

reset role;

--! split: 722-calls-webhook.sql
-- The voice platform's webhook (src/calls/webhook.ts checks its signature and the payload's
-- shape): a call recorded once per platform call id. No credential: the called number names the
-- organization (a location's sms_number, else the organization's default number), so the
-- function is security definer and trusts nothing else of the caller.
set local role svc_owner;

-- The organization and location of one of the service's numbers: a location's number first,
-- else an organization's default (location NULL). 404 when none; 409 when the number is
-- another organization's too (which one the call was for is unknowable).
create or replace function app_hidden.number_owner(number text, out organization_id uuid, out location_id uuid)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  orgs uuid[];
begin
  select array_agg(distinct x.org) into orgs
    from (select l.organization_id as org from app_public.locations l where l.sms_number = number_owner.number
          union all
          select o.id from app_public.organizations o where o.default_sms_number = number_owner.number) x;
  if orgs is null then
    perform app_hidden.raise_error(404, 'unknown_number', 'No organization uses this number');
  end if;
  if cardinality(orgs) > 1 then
    perform app_hidden.raise_error(409, 'number_ambiguous', 'More than one organization uses this number');
  end if;
  organization_id := orgs[1];
  select l.id into location_id from app_public.locations l
   where l.organization_id = orgs[1] and l.sms_number = number_owner.number
   order by l.created_at, l.id limit 1;
end $$;
comment on function app_hidden.number_owner(text) is
  'The organization (and location, when it is a location''s) of one of the service''s numbers; 404 unknown, 409 shared by organizations.';
revoke execute on function app_hidden.number_owner(text) from public;

-- Records a call from the voice platform, once per call id: the contact matched by phone or
-- created (linked to the location), its total_calls counted, the call and its transcript, and
-- an interaction (channel voice). A second delivery answers the first's ids with duplicate true.
-- `payload` is the body as src/calls/webhook.ts checked it: phones in E.164.
create or replace function app_hidden.voice_call_record(payload jsonb) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  inbound boolean := coalesce(payload->>'direction', 'inbound') = 'inbound';
  ours text := case when inbound then payload->>'to' else payload->>'from' end;
  theirs text := case when inbound then payload->>'from' else payload->>'to' end;
  org uuid;
  loc uuid;
  c app_public.contacts;
  existing app_public.calls;
  v_call_id uuid;
  started timestamptz := coalesce((payload->>'started_at')::timestamptz, now());
  v_status text := coalesce(payload->>'status', 'completed');
begin
  select n.organization_id, n.location_id into org, loc from app_hidden.number_owner(ours) n;
  -- one delivery of a call at a time: a retry racing the first waits, then finds it
  perform pg_advisory_xact_lock(hashtextextended(org::text || '|voice|' || (payload->>'call_id'), 0));
  select * into existing from app_public.calls x where x.organization_id = org and x.external_id = payload->>'call_id';
  if found then
    return jsonb_build_object('call_id', existing.id, 'contact_id', existing.contact_id, 'duplicate', true);
  end if;

  select * into c from app_public.contacts x where x.organization_id = org and x.phone = theirs;
  if not found then
    insert into app_public.contacts (organization_id, phone, name)
    values (org, theirs, nullif(payload->>'caller_name', ''))
    on conflict (organization_id, phone) where phone is not null do update set updated_at = now()
    returning * into c;
  end if;
  update app_public.contacts x set total_calls = x.total_calls + 1, last_seen_at = greatest(x.last_seen_at, started),
         name = coalesce(x.name, nullif(payload->>'caller_name', '')), updated_at = now()
   where x.organization_id = org and x.id = c.id;
  if loc is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, loc) on conflict do nothing;
  end if;

  insert into app_public.calls (organization_id, contact_id, location_id, direction, status, from_number, to_number, started_at,
                                duration_seconds, summary, external_id)
  values (org, c.id, loc, case when inbound then 'inbound' else 'outbound' end, v_status, payload->>'from', payload->>'to', started,
          (payload->>'duration_seconds')::int, payload->>'summary', payload->>'call_id')
  returning id into v_call_id;
  insert into app_public.call_transcript_lines (organization_id, call_id, position, speaker, text)
  select org, v_call_id, l.ordinality - 1, l.value->>'speaker', l.value->>'text'
    from jsonb_array_elements(coalesce(payload->'transcript', '[]')) with ordinality l;

  insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, summary, started_at, ended_at)
  values (org, c.id, loc, 'voice',
          case v_status when 'completed' then 'completed' when 'in_progress' then 'in_progress' else 'abandoned' end,
          payload->>'summary', started,
          case when v_status <> 'in_progress' then started + make_interval(secs => coalesce((payload->>'duration_seconds')::int, 0)) end);
  return jsonb_build_object('call_id', v_call_id, 'contact_id', c.id, 'duplicate', false);
end $$;
comment on function app_hidden.voice_call_record(jsonb) is
  'Records a voice platform call once per call id: contact by phone (or created), total_calls, call, transcript, interaction.';
revoke execute on function app_hidden.voice_call_record(jsonb) from public;
grant execute on function app_hidden.voice_call_record(jsonb) to svc_request;

reset role;

--! split: 740-forms.sql
-- Forms: the web forms of the organization's sites and what visitors sent through them (spec:
-- Conversation, call, form; Authentication 7; ../shared/design/operator-cli.md, `forms`).
--
--   forms              a form of one location (or of the whole organization), with the origins
--                      (sites) allowed to post to it from a browser
--   form_fields        its fields, in order, each with a key the submissions' payloads use
--   form_submissions   each submission: the payload by field key, the contact created or
--                      updated (accepted ones), accepted or spam (and why)
--   app_private.form_secrets   the key that signs a form's render-time tokens (742-forms-public.sql)
--
-- Reach: a form of a location is visible to credentials that reach the location; a form of no
-- location to every credential of the organization; submissions with their form. A MEMBER
-- reads forms but not submissions: the operation says so (member access deny).
set local role svc_owner;

create table if not exists app_public.forms (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  location_id uuid,
  name text not null check (length(name) between 1 and 200),
  allowed_origins text[] not null default '{}'
    check (cardinality(allowed_origins) <= 50 and array_position(allowed_origins, null) is null
           -- each an http(s) origin: an opaque origin ("null") would admit any sandboxed page
           and array_to_string(allowed_origins, ' ') ~ '^(https?://[^ /]+( |$))*$'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.forms is 'A web form of a location (NULL: of the whole organization), posted to without a key.';
comment on column app_public.forms.allowed_origins is
  'The sites (scheme://host[:port]) whose pages may post to the form from a browser (CORS); a plain HTML form post needs none.';
create index if not exists forms_by_location on app_public.forms (organization_id, location_id, name);

create table if not exists app_public.form_fields (
  organization_id uuid not null,
  form_id uuid not null,
  key text not null check (key ~ '^[A-Za-z][A-Za-z0-9_]{0,99}$'),
  position int not null check (position >= 0),
  label text not null check (length(label) between 1 and 200),
  type text not null check (type in ('text', 'email', 'phone', 'textarea', 'select', 'checkbox', 'number', 'date')),
  required boolean not null default false,
  options jsonb check (options is null or (jsonb_typeof(options) = 'array' and jsonb_array_length(options) between 1 and 500)),
  primary key (organization_id, form_id, key),
  unique (organization_id, form_id, position),
  foreign key (organization_id, form_id) references app_public.forms on delete cascade,
  check ((type = 'select') = (options is not null))
);
comment on table app_public.form_fields is
  'A form''s fields in order; key names the value in submissions'' payloads. A select field lists its options.';

create table if not exists app_public.form_submissions (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  form_id uuid not null,
  contact_id uuid,
  payload jsonb not null check (jsonb_typeof(payload) = 'object'),
  status text not null check (status in ('accepted', 'spam')),
  -- why a spam one is spam: honeypot, too_fast, bad_token, links, rate
  spam_reason text check (spam_reason ~ '^[a-z_]{1,50}$'),
  -- the email of the payload, lower case: what `search` matches
  email_key text check (length(email_key) <= 320),
  -- the client address of a web submission (rate per address); NULL from fixtures and the CLI
  client_address text check (length(client_address) <= 100),
  submitted_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, form_id) references app_public.forms on delete cascade,
  foreign key (organization_id, contact_id) references app_public.contacts on delete set null (contact_id),
  check ((status = 'spam') = (spam_reason is not null)),
  check (status = 'accepted' or contact_id is null)
);
comment on table app_public.form_submissions is
  'A submission of a form: payload by field key, the contact it created or updated (accepted only), accepted or spam.';
create index if not exists form_submissions_by_form on app_public.form_submissions (organization_id, form_id, submitted_at desc, id desc);
create index if not exists form_submissions_by_address on app_public.form_submissions (organization_id, client_address, submitted_at)
  where client_address is not null;

create table if not exists app_private.form_secrets (
  organization_id uuid not null,
  form_id uuid not null,
  secret text not null default replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''),
  primary key (organization_id, form_id),
  foreign key (organization_id, form_id) references app_public.forms on delete cascade
);
comment on table app_private.form_secrets is
  'The key that signs a form''s render-time tokens (two random UUIDs: 244 random bits). Read only by the public form''s definer functions.';
alter table app_private.form_secrets enable row level security;

create or replace function app_private.tg_forms__secret() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  insert into app_private.form_secrets (organization_id, form_id) values (new.organization_id, new.id) on conflict do nothing;
  return null;
end $$;
comment on function app_private.tg_forms__secret() is 'Gives every new form the key its render-time tokens are signed with.';
revoke execute on function app_private.tg_forms__secret() from public;
drop trigger if exists _500_secret on app_public.forms;
create trigger _500_secret after insert on app_public.forms for each row execute function app_private.tg_forms__secret();

--------------------------------------------------------------------------------
-- Reach
--------------------------------------------------------------------------------
alter table app_public.forms enable row level security;
drop policy if exists select_in_reach on app_public.forms;
create policy select_in_reach on app_public.forms for select using (
  organization_id = (select app_hidden.current_org_id())
  and (location_id is null
       or (select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[])));
grant select on app_public.forms to svc_request, svc_worker;

alter table app_public.form_fields enable row level security;
drop policy if exists select_with_form on app_public.form_fields;
create policy select_with_form on app_public.form_fields for select using (
  organization_id = (select app_hidden.current_org_id())
  and exists (select 1 from app_public.forms f where f.organization_id = form_fields.organization_id and f.id = form_fields.form_id));
grant select on app_public.form_fields to svc_request, svc_worker;

alter table app_public.form_submissions enable row level security;
drop policy if exists select_with_form on app_public.form_submissions;
create policy select_with_form on app_public.form_submissions for select using (
  organization_id = (select app_hidden.current_org_id())
  and exists (select 1 from app_public.forms f where f.organization_id = form_submissions.organization_id and f.id = form_submissions.form_id));
grant select on app_public.form_submissions to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- form_submitted: sequences can start when a form is submitted
--------------------------------------------------------------------------------
insert into app_private.sequence_trigger_types (type, area, description, fields, position) values
  ('form_submitted', 'forms', 'Contacts enter when they submit the form and the submission is accepted (not spam).',
   '{"form_id": {"type": "uuid", "required": true, "description": "A form of forms_list."}}', 4)
on conflict (type) do update set area = excluded.area, description = excluded.description, fields = excluded.fields,
  position = excluded.position;

reset role;

--! split: 741-forms-reads.sql
-- forms_list, forms_get and forms_list_submissions: read as the caller, so the policies of
-- 740-forms.sql decide what a credential sees (a form out of reach: 404).
set local role svc_owner;

-- The form as the API shows it, with its fields in order.
create or replace function app_hidden.form_json(f app_public.forms) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object(
    'id', f.id,
    'name', f.name,
    'location_id', f.location_id,
    'allowed_origins', to_jsonb(f.allowed_origins),
    'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                            'required', x.required, 'options', x.options) order by x.position)
                          from app_public.form_fields x
                         where x.organization_id = f.organization_id and x.form_id = f.id), '[]'),
    'created_at', f.created_at,
    'updated_at', f.updated_at)
$$;
comment on function app_hidden.form_json(app_public.forms) is 'A form with its fields, as forms_list and forms_get answer it.';
grant execute on function app_hidden.form_json(app_public.forms) to svc_request, svc_worker;

create or replace function app_public.forms_list() returns jsonb
language sql stable as $$
  select jsonb_build_object('items', coalesce(jsonb_agg(app_hidden.form_json(f) order by f.name, f.id), '[]'))
    from app_public.forms f
   where f.organization_id = app_hidden.current_org_id()
$$;
comment on function app_public.forms_list() is 'forms_list: the forms the credential reaches, by name, with their fields.';

-- The credential's form, or 404.
create or replace function app_hidden.form_for(form_id uuid) returns app_public.forms
language plpgsql stable as $$
declare
  f app_public.forms;
begin
  select * into f from app_public.forms x where x.organization_id = app_hidden.current_org_id() and x.id = form_for.form_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Form not found');
  end if;
  return f;
end $$;
comment on function app_hidden.form_for(uuid) is 'The form, when the credential reaches it; 404 otherwise.';
grant execute on function app_hidden.form_for(uuid) to svc_request, svc_worker;

create or replace function app_public.forms_get(form_id uuid) returns jsonb
language sql stable as $$
  select app_hidden.form_json(app_hidden.form_for(form_id))
$$;
comment on function app_public.forms_get(uuid) is 'forms_get: one form with its fields; 404 when out of reach.';

drop function if exists app_public.forms_list_submissions(uuid, int, int, text, timestamptz, timestamptz, text);
-- A page of a form's submissions, newest first, filtered by status, a time range [from, to)
-- and part of the email. `contact` is the contact as the caller sees it (null when it sees none).
create or replace function app_public.forms_list_submissions(form_id uuid, page int, page_size int, status text,
  from_at timestamptz, to_at timestamptz, search text) returns jsonb
language plpgsql stable as $$
declare
  -- the page first, before anything is read (NULL: page 1 of 25; out of range: 400, as over REST)
  pg int := app_hidden.page_number(page);
  lim int := app_hidden.page_limit(page_size);
  f app_public.forms := app_hidden.form_for(form_id);
  -- part of the email: a plain substring test (no pattern characters to escape)
  part text := lower(search);
  total int;
  items jsonb;
begin
  if forms_list_submissions.status not in ('accepted', 'spam') then
    perform app_hidden.raise_error(400, 'bad_request', 'query.status: expected accepted or spam');
  end if;
  select count(*) into total from app_public.form_submissions s
   where s.organization_id = f.organization_id and s.form_id = f.id
     and (forms_list_submissions.status is null or s.status = forms_list_submissions.status)
     and (from_at is null or s.submitted_at >= from_at)
     and (to_at is null or s.submitted_at < to_at)
     and (part is null or strpos(s.email_key, part) > 0);
  select coalesce(jsonb_agg(x.j order by x.submitted_at desc, x.id desc), '[]') into items
    from (select s.submitted_at, s.id, jsonb_build_object(
                   'id', s.id,
                   'form_id', s.form_id,
                   'payload', s.payload,
                   'status', s.status,
                   'spam_reason', s.spam_reason,
                   'contact_id', s.contact_id,
                   'contact', (select jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone)
                                 from app_public.contacts c where c.organization_id = s.organization_id and c.id = s.contact_id),
                   'submitted_at', s.submitted_at) as j
            from app_public.form_submissions s
           where s.organization_id = f.organization_id and s.form_id = f.id
             and (forms_list_submissions.status is null or s.status = forms_list_submissions.status)
             and (from_at is null or s.submitted_at >= from_at)
             and (to_at is null or s.submitted_at < to_at)
             and (part is null or strpos(s.email_key, part) > 0)
           order by s.submitted_at desc, s.id desc
           limit lim offset (pg - 1)::bigint * lim) x;
  return jsonb_build_object('items', items, 'total', total, 'page', pg, 'limit', lim);
end $$;
comment on function app_public.forms_list_submissions(uuid, int, int, text, timestamptz, timestamptz, text) is
  'forms_list_submissions: a page of the form''s submissions, newest first, by status, time range [from, to) and part of the email.';

grant execute on function app_public.forms_list(), app_public.forms_get(uuid),
  app_public.forms_list_submissions(uuid, int, int, text, timestamptz, timestamptz, text) to svc_request;

reset role;

--! split: 742-forms-public.sql
-- The public form endpoint's database half (src/forms/public.ts validates the payload against
-- the fields and runs the checks that need only the request; `svc admin form submit` goes the
-- same way). No credential: the form's id in the URL is the only input naming an organization,
-- so these functions are security definer and take nothing else from the caller.
--
--   app_hidden.public_form(form)        the form's fields and allowed origins, or NULL (404)
--   app_hidden.form_token(form)         a render-time token: when it was issued, signed with the
--                                       form's secret (which never leaves the database)
--   app_hidden.form_submit(…)           the token's age (too fast: spam), the rate per client
--                                       address (spam beyond it), the submission stored, and for
--                                       an accepted one the contact upserted and form_submitted fired
set local role svc_owner;

-- Seconds a person needs at least to fill a form, and submissions per client address per
-- organization in ten minutes before the next is spam; tokens older than a day are refused.
create or replace function app_hidden.form_limits() returns jsonb
language sql immutable parallel safe as $$
  select '{"min_elapsed_ms": 3000, "token_max_age_ms": 86400000, "rate_per_address": 5, "rate_window_minutes": 10}'::jsonb
$$;
comment on function app_hidden.form_limits() is 'The spam thresholds of public form submissions.';
grant execute on function app_hidden.form_limits() to svc_request, svc_worker;

create or replace function app_hidden.public_form(form_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', f.id, 'organization_id', f.organization_id, 'allowed_origins', to_jsonb(f.allowed_origins),
           'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                                   'required', x.required, 'options', x.options) order by x.position)
                                 from app_public.form_fields x
                                where x.organization_id = f.organization_id and x.form_id = f.id), '[]'))
    from app_public.forms f where f.id = public_form.form_id
$$;
comment on function app_hidden.public_form(uuid) is 'A form as its public endpoint needs it (fields, allowed origins), or NULL: no credential involved.';
revoke execute on function app_hidden.public_form(uuid) from public;
grant execute on function app_hidden.public_form(uuid) to svc_request;

-- The signature of a token's issue time: SHA-256 of the secret around the message (the secret
-- on both sides: no length extension can forge another issue time).
create or replace function app_hidden.form_token_mac(secret text, form_id uuid, issued_ms bigint) returns text
language sql immutable parallel safe as $$
  select encode(sha256(convert_to(secret || '|' || form_id::text || '|' || issued_ms::text || '|' || secret, 'UTF8')), 'hex')
$$;
comment on function app_hidden.form_token_mac(text, uuid, bigint) is 'The MAC of a form''s render-time token.';
revoke execute on function app_hidden.form_token_mac(text, uuid, bigint) from public;

create or replace function app_hidden.form_token(form_id uuid) returns text
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  select t.ms::text || '.' || app_hidden.form_token_mac(s.secret, s.form_id, t.ms)
    from app_private.form_secrets s,
         lateral (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) t
   where s.form_id = form_token.form_id
$$;
comment on function app_hidden.form_token(uuid) is
  'A render-time token of the form (`<issued ms>.<mac>`), sent back as the hidden field _token; NULL when no such form.';
revoke execute on function app_hidden.form_token(uuid) from public;
grant execute on function app_hidden.form_token(uuid) to svc_request;

-- How long ago the token was issued (ms), or NULL when it is not a valid token of this form.
create or replace function app_hidden.form_token_age(form_id uuid, token text) returns bigint
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  m text[] := regexp_match(token, '^([0-9]{1,15})\.([0-9a-f]{64})$');
  secret text;
begin
  if m is null then
    return null;
  end if;
  select s.secret into secret from app_private.form_secrets s where s.form_id = form_token_age.form_id;
  if secret is null or app_hidden.form_token_mac(secret, form_id, m[1]::bigint) <> m[2] then
    return null;
  end if;
  return (extract(epoch from clock_timestamp()) * 1000)::bigint - m[1]::bigint;
end $$;
comment on function app_hidden.form_token_age(uuid, text) is 'Milliseconds since a valid token of the form was issued; NULL for anything else.';
revoke execute on function app_hidden.form_token_age(uuid, text) from public;

-- Stores a submission. `spam_reason` is what the request's own checks found (honeypot, links) or
-- NULL; then, when it is NULL: the token (elapsed_ms, when given, stands for it: the CLI), then
-- the rate per client address. `contact` is {email, phone, name} as validated, for an accepted one.
create or replace function app_hidden.form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint,
  client_address text, spam_reason text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  f app_public.forms;
  lim jsonb := app_hidden.form_limits();
  reason text := spam_reason;
  age bigint := elapsed_ms;
  c app_public.contacts;
  v_email text := nullif(lower(contact->>'email'), '');
  v_phone text := nullif(contact->>'phone', '');
  sub_id uuid;
  s record;
begin
  select * into f from app_public.forms x where x.id = form_submit.form_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Form not found');
  end if;
  if reason is null and age is null then
    age := app_hidden.form_token_age(f.id, token);
    if age is null or age > (lim->>'token_max_age_ms')::bigint or age < 0 then
      reason := 'bad_token';
    end if;
  end if;
  if reason is null and age < (lim->>'min_elapsed_ms')::bigint then
    reason := 'too_fast';
  end if;
  if client_address is not null then
    -- one client address at a time per organization, so that concurrent posts count each other
    perform pg_advisory_xact_lock(hashtextextended(f.organization_id::text || '|form-rate|' || client_address, 0));
    if reason is null and (select count(*) from app_public.form_submissions x
                            where x.organization_id = f.organization_id and x.client_address = form_submit.client_address
                              and x.submitted_at > now() - make_interval(mins => (lim->>'rate_window_minutes')::int))
                          >= (lim->>'rate_per_address')::int then
      reason := 'rate';
    end if;
  end if;

  if reason is null and (v_email is not null or v_phone is not null) then
    -- the contact: by email, else by phone; created when neither matches
    select * into c from app_public.contacts x where x.organization_id = f.organization_id and x.email_key = v_email;
    if not found and v_phone is not null then
      select * into c from app_public.contacts x
       where x.organization_id = f.organization_id and x.phone = v_phone and (v_email is null or x.email is null);
    end if;
    if c.id is null then
      insert into app_public.contacts (organization_id, email, name, phone)
      values (f.organization_id, v_email, nullif(contact->>'name', ''),
              case when not exists (select 1 from app_public.contacts x
                                     where x.organization_id = f.organization_id and x.phone = v_phone) then v_phone end)
      -- the same new email posted twice at once: the second finds the first's contact
      on conflict (organization_id, email_key) do update set last_seen_at = now(), updated_at = now()
      returning * into c;
    else
      update app_public.contacts x
         set name = coalesce(x.name, nullif(contact->>'name', '')),
             email = coalesce(x.email, v_email::citext),
             phone = coalesce(x.phone, case when not exists (select 1 from app_public.contacts y
                                                            where y.organization_id = f.organization_id and y.phone = v_phone)
                                           then v_phone end),
             last_seen_at = now(),
             updated_at = now()
       where x.organization_id = c.organization_id and x.id = c.id
      returning * into c;
    end if;
    if f.location_id is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id)
      values (f.organization_id, c.id, f.location_id) on conflict do nothing;
    end if;
  end if;

  insert into app_public.form_submissions (organization_id, form_id, contact_id, payload, status, spam_reason, email_key,
                                           client_address)
  values (f.organization_id, f.id, c.id, payload, case when reason is null then 'accepted' else 'spam' end, reason,
          left(v_email, 320), client_address)
  returning id into sub_id;

  -- form_submitted: the active automations this form starts
  if reason is null and c.id is not null then
    for s in
      select x.id from app_public.sequences x
       where x.organization_id = f.organization_id and x.status = 'active' and x.kind = 'automation'
         and x.trigger->>'type' = 'form_submitted' and x.trigger->>'form_id' = f.id::text
       order by x.id
    loop
      perform app_private.enroll_by_trigger(f.organization_id, s.id, c.id, 'form_submitted', null);
    end loop;
  end if;
  return jsonb_build_object('submission_id', sub_id, 'status', case when reason is null then 'accepted' else 'spam' end,
                            'spam_reason', reason, 'contact_id', c.id, 'organization_id', f.organization_id);
end $$;
comment on function app_hidden.form_submit(uuid, jsonb, jsonb, text, bigint, text, text) is
  'Stores a public form submission after the token and rate checks; an accepted one upserts its contact (linked to the '
  'form''s location) and enrolls it in the automations triggered by form_submitted for this form.';
revoke execute on function app_hidden.form_submit(uuid, jsonb, jsonb, text, bigint, text, text) from public;
grant execute on function app_hidden.form_submit(uuid, jsonb, jsonb, text, bigint, text, text) to svc_request;

reset role;

--! split: 800-broadcasts-schedules.sql
-- Broadcasts: the schedule of a `kind: broadcast` sequence and its runs (docs/broadcasts.md).
--
--   broadcast_schedules  one per broadcast: once (send_at) or recurring (rrule, timezone,
--                        ends_on), status draft | scheduled | paused, next_fire_at
--   broadcast_runs       one per fired occurrence (unique (sequence, fire_at): an occurrence
--                        fires once however many workers look), its counts and its checkpoint
--
-- A run's recipients are enrollments of the broadcast (source 'broadcast', run_id), made when
-- the run fires with next_run_at NULL: the sweep of the sequences engine never queues them; the
-- run's job sends them in batches (810-broadcasts-runs.sql). Occurrences are computed in
-- TypeScript with Temporal (src/broadcasts/occurrences.ts), never with AT TIME ZONE: the
-- functions here take next_fire_at as computed there.
set local role svc_owner;

create table if not exists app_public.broadcast_schedules (
  organization_id uuid not null references app_public.organizations on delete cascade,
  sequence_id uuid not null,
  schedule_kind text not null check (schedule_kind in ('once', 'recurring')),
  send_at timestamptz,
  rrule text check (length(rrule) <= 500),
  timezone text check (length(timezone) <= 64),
  ends_on date,
  -- DTSTART of the rule: when the schedule was set (INTERVAL counts from it; BYHOUR and
  -- BYMINUTE default to its local time)
  anchor timestamptz not null default now(),
  status text not null default 'draft' check (status in ('draft', 'scheduled', 'paused')),
  next_fire_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, sequence_id),
  foreign key (organization_id, sequence_id) references app_public.sequences on delete cascade,
  check ((schedule_kind = 'once') = (send_at is not null)),
  check ((schedule_kind = 'recurring') = (rrule is not null)),
  check (schedule_kind = 'once' or timezone is not null),
  check (status = 'scheduled' or next_fire_at is null)
);
comment on table app_public.broadcast_schedules is
  'When a broadcast sends: once at send_at, or on each occurrence of rrule in timezone until ends_on. draft (set, sends '
  'nothing), scheduled (next_fire_at is the next occurrence), paused.';
-- the scheduler's question: which scheduled broadcasts are due
create index if not exists broadcast_schedules_due on app_public.broadcast_schedules (next_fire_at)
  where status = 'scheduled' and next_fire_at is not null;

create table if not exists app_public.broadcast_runs (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  sequence_id uuid not null,
  fire_at timestamptz not null,
  status text not null default 'sending' check (status in ('sending', 'completed', 'cancelled', 'failed')),
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  recipients int not null default 0,
  sent int not null default 0,
  skipped int not null default 0,
  failed int not null default 0,
  unknown int not null default 0,
  cancelled int not null default 0,
  -- the checkpoint: enrollments whose messages are with the transport and not yet recorded.
  -- Set in the transaction that claims a batch, emptied in the one that records it; a job that
  -- finds it set knows the process that claimed it died: those are unknown, never sent again.
  in_flight uuid[] not null default '{}',
  -- when a batch was last claimed or recorded: a run sending with no progress for minutes lost
  -- its worker (app_private.broadcast_requeue_stalled)
  progress_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, sequence_id) references app_public.sequences on delete cascade,
  check ((status = 'sending') = (finished_at is null))
);
comment on table app_public.broadcast_runs is
  'One fired occurrence of a broadcast schedule: its recipients (enrollments with this run_id), counts and the batch in flight.';
-- an occurrence fires once, whatever number of workers look at the same moment
create unique index if not exists broadcast_runs_one_per_occurrence on app_public.broadcast_runs (organization_id, sequence_id, fire_at);
alter table app_public.broadcast_runs add column if not exists progress_at timestamptz not null default now();
-- the last recipient (enrollment id, in id order) a batch claimed: the next batch starts after
-- it, so a batch reads only what is left, not the index entries of those already sent
alter table app_public.broadcast_runs add column if not exists claimed_through uuid;
create index if not exists broadcast_runs_sending on app_public.broadcast_runs (progress_at) where status = 'sending';
create index if not exists broadcast_runs_by_sequence on app_public.broadcast_runs (organization_id, sequence_id, started_at desc, id);

-- A run's recipients still to send: its batches read them in id order
create index if not exists enrollments_run_pending on app_public.enrollments (organization_id, run_id, id)
  where run_id is not null and status = 'active' and next_run_at is null;

alter table app_public.broadcast_schedules enable row level security;
alter table app_public.broadcast_runs enable row level security;

-- Seen with their sequence (its own policy: organization and locations); a schedule is written
-- by the sequence's writers through app_public.sequences_*_schedule, runs only by the owner.
drop policy if exists select_with_sequence on app_public.broadcast_schedules;
create policy select_with_sequence on app_public.broadcast_schedules for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.sequences s
                      where s.organization_id = broadcast_schedules.organization_id and s.id = broadcast_schedules.sequence_id));
-- whether the credential may write the broadcast a schedule belongs to (its sequence's rule)
create or replace function app_hidden.broadcast_writable(organization_id uuid, sequence_id uuid) returns boolean
language sql stable as $$
  select exists (select 1 from app_public.sequences s
                  where s.organization_id = broadcast_writable.organization_id and s.id = broadcast_writable.sequence_id
                    and app_hidden.current_may_write_sequence(s.location_id))
$$;
grant execute on function app_hidden.broadcast_writable(uuid, uuid) to svc_request;
drop policy if exists insert_writable on app_public.broadcast_schedules;
create policy insert_writable on app_public.broadcast_schedules for insert
  with check (organization_id = (select app_hidden.current_org_id()) and app_hidden.broadcast_writable(organization_id, sequence_id));
drop policy if exists update_writable on app_public.broadcast_schedules;
create policy update_writable on app_public.broadcast_schedules for update
  using (organization_id = (select app_hidden.current_org_id()) and app_hidden.broadcast_writable(organization_id, sequence_id))
  with check (organization_id = (select app_hidden.current_org_id()));
drop policy if exists select_with_sequence on app_public.broadcast_runs;
create policy select_with_sequence on app_public.broadcast_runs for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.sequences s
                      where s.organization_id = broadcast_runs.organization_id and s.id = broadcast_runs.sequence_id));

grant select on app_public.broadcast_schedules, app_public.broadcast_runs to svc_request;
grant insert (organization_id, sequence_id, schedule_kind, send_at, rrule, timezone, ends_on, anchor, status, next_fire_at)
  on app_public.broadcast_schedules to svc_request;
grant update (schedule_kind, send_at, rrule, timezone, ends_on, anchor, status, next_fire_at, updated_at)
  on app_public.broadcast_schedules to svc_request;

--------------------------------------------------------------------------------
-- How a schedule and a run read
--------------------------------------------------------------------------------
create or replace function app_hidden.broadcast_run_json(r app_public.broadcast_runs) returns jsonb
language sql stable as $$
  select jsonb_build_object('id', r.id, 'status', r.status, 'fire_at', r.fire_at, 'started_at', r.started_at,
    'finished_at', r.finished_at, 'recipients', r.recipients, 'sent', r.sent, 'skipped', r.skipped, 'failed', r.failed,
    'unknown', r.unknown, 'cancelled', r.cancelled)
$$;
grant execute on function app_hidden.broadcast_run_json(app_public.broadcast_runs) to svc_request, svc_worker;

-- The schedule with a page of its runs, newest first.
create or replace function app_hidden.broadcast_schedule_json(b app_public.broadcast_schedules, page int, page_size int)
returns jsonb
language plpgsql stable as $$
declare
  runs jsonb;
  total int;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  select count(*) into total from app_public.broadcast_runs r
   where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id;
  select coalesce(jsonb_agg(app_hidden.broadcast_run_json(r) order by r.started_at desc, r.id), '[]') into runs
    from (select * from app_public.broadcast_runs r
           where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id
           order by r.started_at desc, r.id
           limit page_size offset (page - 1) * page_size) r;
  return jsonb_build_object('sequence_id', b.sequence_id, 'schedule_kind', b.schedule_kind, 'send_at', b.send_at,
    'rrule', b.rrule, 'timezone', b.timezone, 'ends_on', b.ends_on, 'status', b.status, 'next_fire_at', b.next_fire_at,
    'created_at', b.created_at, 'updated_at', b.updated_at,
    'runs', runs, 'runs_total', total, 'page', page, 'limit', page_size);
end $$;
grant execute on function app_hidden.broadcast_schedule_json(app_public.broadcast_schedules, int, int) to svc_request;

-- The broadcast a schedule operation names: 404 out of reach, 403 not writable (for_write),
-- 400 when it is an automation.
create or replace function app_hidden.broadcast_for(sequence_id uuid, for_write boolean) returns app_public.sequences
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, for_write);
begin
  if s.kind <> 'broadcast' then
    perform app_hidden.sequence_bad('sequenceId', 'an automation has no schedule: only a broadcast (kind broadcast) is scheduled');
  end if;
  return s;
end $$;
grant execute on function app_hidden.broadcast_for(uuid, boolean) to svc_request;

-- The schedule of a broadcast in reach; 404 when none was set. for_write locks it.
create or replace function app_hidden.broadcast_schedule_of(s app_public.sequences, for_write boolean)
returns app_public.broadcast_schedules
language plpgsql volatile as $$
declare
  b app_public.broadcast_schedules;
begin
  if for_write then
    select * into b from app_public.broadcast_schedules x
     where x.organization_id = s.organization_id and x.sequence_id = s.id for update;
  else
    select * into b from app_public.broadcast_schedules x where x.organization_id = s.organization_id and x.sequence_id = s.id;
  end if;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'This broadcast has no schedule yet: set one with sequences_set_schedule');
  end if;
  return b;
end $$;
grant execute on function app_hidden.broadcast_schedule_of(app_public.sequences, boolean) to svc_request;

--------------------------------------------------------------------------------
-- Cancelling runs
--------------------------------------------------------------------------------
-- Stops runs of a broadcast that have not ended (one run, or all of them): their enrollments not
-- yet sent are cancelled (with their events), the run `cancelled` with the count. A batch
-- already with the transport is recorded when its job comes back (or unknown): it was handed
-- over. Runs as the owner (enrollment events are the owner's), for a credential that may write
-- the sequence, checked again here. Answers the number of enrollments stopped.
create or replace function app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  s app_public.sequences;
  r app_public.broadcast_runs;
  n int;
  total int := 0;
begin
  select * into s from app_public.sequences x
   where x.organization_id = app_hidden.current_org_id() and x.id = broadcast_cancel_runs.sequence_id;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    raise exception 'broadcast_cancel_runs: sequence % not writable', broadcast_cancel_runs.sequence_id;
  end if;
  for r in
    select * from app_public.broadcast_runs x
     where x.organization_id = s.organization_id and x.sequence_id = s.id and x.status = 'sending'
       and (broadcast_cancel_runs.run_id is null or x.id = broadcast_cancel_runs.run_id)
     for update
  loop
    select count(*) into n from app_private.end_enrollments(s.organization_id, array(
      select e.id from app_public.enrollments e
       where e.organization_id = s.organization_id and e.run_id = r.id and e.status = 'active' and e.next_run_at is null
         and not e.id = any(r.in_flight)), 'cancelled', 'run_cancelled');
    update app_public.broadcast_runs x set status = 'cancelled', finished_at = now(), cancelled = x.cancelled + n
     where x.organization_id = r.organization_id and x.id = r.id;
    total := total + n;
  end loop;
  return total;
end $$;
comment on function app_hidden.broadcast_cancel_runs(uuid, uuid) is
  'Cancels the runs of a broadcast that have not ended (or one): unsent enrollments cancelled, run cancelled with the count.';
revoke all on function app_hidden.broadcast_cancel_runs(uuid, uuid) from public;
grant execute on function app_hidden.broadcast_cancel_runs(uuid, uuid) to svc_request;

--------------------------------------------------------------------------------
-- The operations
--------------------------------------------------------------------------------
-- body: {schedule_kind: once, send_at} or {schedule_kind: recurring, rrule, timezone, ends_on?},
-- its grammar checked by the operation (src/broadcasts/schemas.ts); checked here: what needs the
-- clock. Saved as draft; runs that have not ended are cancelled.
create or replace function app_public.sequences_set_schedule(sequence_id uuid, body jsonb) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules;
  kind text := body->>'schedule_kind';
  at timestamptz;
  last_day date;
begin
  if kind = 'once' then
    at := (body->>'send_at')::timestamptz;
    if at <= now() then
      perform app_hidden.sequence_bad('body.send_at', 'must be in the future');
    end if;
  elsif kind = 'recurring' then
    -- the rule, the zone and ends_on (not in the past in the zone) are checked by the operation
    last_day := (body->>'ends_on')::date;
  else
    perform app_hidden.sequence_bad('body.schedule_kind', 'expected once or recurring');
  end if;
  perform app_hidden.broadcast_cancel_runs(s.id, null);
  insert into app_public.broadcast_schedules as x (organization_id, sequence_id, schedule_kind, send_at, rrule, timezone,
    ends_on, anchor, status, next_fire_at)
  values (s.organization_id, s.id, kind, at, case when kind = 'recurring' then body->>'rrule' end,
          body->>'timezone', last_day, now(), 'draft', null)
  on conflict on constraint broadcast_schedules_pkey do update
     set schedule_kind = excluded.schedule_kind, send_at = excluded.send_at, rrule = excluded.rrule,
         timezone = excluded.timezone, ends_on = excluded.ends_on, anchor = excluded.anchor, status = 'draft',
         next_fire_at = null, updated_at = now()
  returning x.* into b;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;
comment on function app_public.sequences_set_schedule(uuid, jsonb) is
  'sequences_set_schedule: a broadcast''s schedule saved as draft (sends nothing); runs not ended are cancelled.';

create or replace function app_public.sequences_get_schedule(sequence_id uuid, page int, "limit" int) returns jsonb
language plpgsql volatile as $$
begin
  return app_hidden.broadcast_schedule_json(
    app_hidden.broadcast_schedule_of(app_hidden.broadcast_for(sequence_id, false), false), page, "limit");
end $$;
comment on function app_public.sequences_get_schedule(uuid, int, int) is
  'sequences_get_schedule: the schedule with a page of runs (newest first) and runs_total; 404 before one is set.';

-- First statement of sequences_start_schedule: the schedule, locked for the transaction, and
-- `now` on the database's clock, from which the operation computes next_fire_at.
create or replace function app_public.sequences_schedule_for_start(sequence_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  perform app_hidden.sequence_require_no_blockers(s);
  return jsonb_build_object('schedule_kind', b.schedule_kind, 'send_at', b.send_at, 'rrule', b.rrule, 'timezone', b.timezone,
    'ends_on', b.ends_on, 'anchor', b.anchor, 'status', b.status, 'next_fire_at', b.next_fire_at, 'now', now(),
    -- the latest run since the schedule was set (a once schedule that has fired fires no more)
    'last_fire_at', (select max(r.fire_at) from app_public.broadcast_runs r
                      where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id and r.started_at >= b.anchor));
end $$;
comment on function app_public.sequences_schedule_for_start(uuid) is
  'sequences_start_schedule, first statement: the broadcast''s schedule locked (404 none; 400 with blockers) and the clock.';

-- Second statement: scheduled with next_fire_at as computed (NULL: nothing left to fire). An
-- inactive broadcast is activated (the blockers were checked by the first statement); the
-- scheduler's job is queued for next_fire_at. Already scheduled: unchanged.
create or replace function app_public.sequences_start_schedule(sequence_id uuid, next_fire_at timestamptz) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  if b.status <> 'scheduled' then
    if s.status = 'inactive' then
      perform app_hidden.sequence_activate(s);
    end if;
    update app_public.broadcast_schedules x
       set status = 'scheduled', next_fire_at = sequences_start_schedule.next_fire_at, updated_at = now()
     where x.organization_id = b.organization_id and x.sequence_id = b.sequence_id
    returning x.* into b;
    if b.next_fire_at is not null then
      perform app_hidden.broadcast_queue_fire(b.organization_id, b.sequence_id);
    end if;
  end if;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;
comment on function app_public.sequences_start_schedule(uuid, timestamptz) is
  'sequences_start_schedule, second statement: scheduled with next_fire_at (an inactive broadcast is activated).';

create or replace function app_public.sequences_pause_schedule(sequence_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  if b.status = 'scheduled' then
    update app_public.broadcast_schedules x set status = 'paused', next_fire_at = null, updated_at = now()
     where x.organization_id = b.organization_id and x.sequence_id = b.sequence_id
    returning x.* into b;
  end if;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;
comment on function app_public.sequences_pause_schedule(uuid) is
  'sequences_pause_schedule: a scheduled broadcast paused (later occurrences do not fire; a run sending goes on); else unchanged.';

create or replace function app_public.sequences_cancel_schedule_run(sequence_id uuid, run_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  r app_public.broadcast_runs;
  n int;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = s.organization_id and x.sequence_id = s.id and x.id = run_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Run not found');
  end if;
  if r.status = 'cancelled' then
    return jsonb_build_object('run_id', r.id, 'status', 'cancelled', 'cancelled', r.cancelled);
  end if;
  if r.status <> 'sending' then
    perform app_hidden.raise_error(409, 'run_finished',
      format('The run has ended (%s): nothing is left to cancel', r.status));
  end if;
  n := app_hidden.broadcast_cancel_runs(s.id, r.id);
  return jsonb_build_object('run_id', r.id, 'status', 'cancelled', 'cancelled', n);
end $$;
comment on function app_public.sequences_cancel_schedule_run(uuid, uuid) is
  'sequences_cancel_schedule_run: the run''s unsent enrollments cancelled; answers {run_id, status, cancelled}. 409 run_finished.';

-- The scheduler's job for a broadcast at its next_fire_at (job key broadcast_fire:<sequence id>:
-- setting it again moves it). The cron line each minute is the safety net.
create or replace function app_hidden.broadcast_queue_fire(organization_id uuid, sequence_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  at timestamptz;
begin
  select b.next_fire_at into at from app_public.broadcast_schedules b
   where b.organization_id = broadcast_queue_fire.organization_id and b.sequence_id = broadcast_queue_fire.sequence_id
     and b.status = 'scheduled'
     -- a request queues only for its own organization (the owner, with no claims, for any)
     and (app_hidden.current_org_id() is null or b.organization_id = app_hidden.current_org_id());
  if at is not null then
    perform app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || broadcast_queue_fire.sequence_id, at);
  end if;
end $$;
revoke all on function app_hidden.broadcast_queue_fire(uuid, uuid) from public;
grant execute on function app_hidden.broadcast_queue_fire(uuid, uuid) to svc_request;

grant execute on function app_public.sequences_set_schedule(uuid, jsonb), app_public.sequences_get_schedule(uuid, int, int),
  app_public.sequences_schedule_for_start(uuid), app_public.sequences_start_schedule(uuid, timestamptz),
  app_public.sequences_pause_schedule(uuid), app_public.sequences_cancel_schedule_run(uuid, uuid) to svc_request;

reset role;

--! split: 810-broadcasts-runs.sql
-- Broadcasts: firing an occurrence and sending a run in checkpointed batches (docs/broadcasts.md,
-- "Runs" and "Crash safety"). Called by the worker's tasks broadcast_fire and broadcast_run
-- (src/broadcasts/), on graphile-worker's owner connection.
--
-- A batch is three steps, as a sequence step is (src/sequences/sequence_step.ts), for many
-- enrollments at once, through the same SQL: app_private.sequence_step_claim renders and claims
-- each message (or skips it, with the reason, or stores it in the local sink at once), and
-- app_private.sequence_step_record records what the transport answered.
--   1. broadcast_claim_batch: one transaction claims the next enrollments of the run in id
--      order and writes the checkpoint (the run's in_flight: the enrollments handed over next);
--   2. the transport gets the messages, after that commit;
--   3. broadcast_record_batch: the answers recorded, counts moved, in_flight emptied.
-- The checkpoint moves only after the transport answered. A process that dies between 1 and 3
-- leaves in_flight set: the next claim marks those step runs `unknown` (never handed over
-- again) and goes on with the recipients after them.
set local role svc_owner;

-- Fires one occurrence of a scheduled broadcast, once: only while the schedule is scheduled and
-- still waits for exactly this fire_at (the row locked), and the run's unique
-- (sequence, fire_at) stops any second run of it. The schedule moves to next_fire_at (computed by
-- the caller with Temporal; NULL: the series has ended). The audience's members now become the
-- run's recipients: enrollments on the first step with next_run_at NULL (the run's job sends
-- them, the engine's sweep does not), each contact once; a location-bound broadcast takes the
-- contacts linked to its location; a contact still live in an earlier run is not enrolled
-- twice. Opt-outs and suppressions are checked when each message goes (skipped, with reason).
-- Answers the run's id, or NULL when nothing fired.
create or replace function app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamptz,
  next_fire_at timestamptz) returns uuid
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  b app_public.broadcast_schedules;
  s app_public.sequences;
  a app_public.audiences;
  f app_hidden.audience_filter;
  run uuid;
  first_key text;
  members uuid[];
  n int;
begin
  select * into b from app_public.broadcast_schedules x
   where x.organization_id = broadcast_fire.organization_id and x.sequence_id = broadcast_fire.sequence_id for update;
  if not found or b.status <> 'scheduled' or b.next_fire_at is distinct from broadcast_fire.fire_at then
    return null;
  end if;
  update app_public.broadcast_schedules x set next_fire_at = broadcast_fire.next_fire_at, updated_at = now()
   where x.organization_id = b.organization_id and x.sequence_id = b.sequence_id;
  if broadcast_fire.next_fire_at is not null then
    perform app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || b.sequence_id, broadcast_fire.next_fire_at);
  end if;
  select * into s from app_public.sequences x where x.organization_id = b.organization_id and x.id = b.sequence_id;
  -- a deactivated broadcast sends nothing: the occurrence passes
  if s.status <> 'active' then
    return null;
  end if;
  insert into app_public.broadcast_runs (organization_id, sequence_id, fire_at)
  values (b.organization_id, b.sequence_id, broadcast_fire.fire_at)
  on conflict do nothing
  returning id into run;
  if run is null then
    return null;
  end if;
  select * into a from app_public.audiences x where x.organization_id = s.organization_id and x.id = s.audience_id;
  first_key := s.steps->0->>'step_key';
  if a.id is null or a.archived_at is not null or first_key is null then
    update app_public.broadcast_runs x set status = 'failed', finished_at = now()
     where x.organization_id = b.organization_id and x.id = run;
    return run;
  end if;
  -- the members as of now, as one list, so both kinds of audience enroll through one statement
  if a.kind = 'dynamic' then
    -- the audience's own rule compiler (no SQL from input: values go as parameters), as
    -- app_hidden.audience_count runs it, for this organization
    f := app_hidden.audience_filter(a.definition, 'definition.rules');
    execute 'select coalesce(array_agg(c.id), ''{}'') from app_public.contacts c where c.organization_id = $6 and ('
            || f.condition || ')'
      into members using f.texts, f.numbers, f.times, f.ids, f.bools, s.organization_id;
  else
    members := array(select m.contact_id from app_public.audience_members m
                      where m.organization_id = a.organization_id and m.audience_id = a.id);
  end if;
  with ins as (
    insert into app_public.enrollments as x (organization_id, sequence_id, contact_id, status, current_step_index,
      current_step_key, next_step_due_at, next_run_at, source, run_id)
    select s.organization_id, s.id, m.contact_id, 'active', 0, first_key, broadcast_fire.fire_at, null, 'broadcast', run
      from unnest(members) m(contact_id)
     where s.location_id is null
        or exists (select 1 from app_public.contact_locations l
                    where l.organization_id = s.organization_id and l.contact_id = m.contact_id and l.location_id = s.location_id)
    on conflict (organization_id, sequence_id, contact_id) where status in ('active', 'paused') do nothing
    returning x.id
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    select s.organization_id, ins.id, 'enrolled', first_key, 'broadcast' from ins
  )
  select count(*) into n from ins;
  update app_public.broadcast_runs x set recipients = n where x.organization_id = b.organization_id and x.id = run;
  perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', s.organization_id, 'run_id', run),
    'broadcast_run:' || run, now());
  return run;
end $$;
comment on function app_private.broadcast_fire(uuid, uuid, timestamptz, timestamptz) is
  'Fires one occurrence once (schedule locked, still waiting for fire_at; unique run per occurrence): schedule moved on, '
  'the audience snapshotted into enrollments of the run, the run''s job queued. Answers the run id or NULL.';
revoke execute on function app_private.broadcast_fire(uuid, uuid, timestamptz, timestamptz) from public;

-- Ends a run whose recipients are all handled: completed, and `cancelled` the enrollments ended
-- meanwhile by something else (deactivation, a suppression, an exit).
create or replace function app_private.broadcast_finish(organization_id uuid, run_id uuid) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_public.broadcast_runs x
     set status = 'completed', finished_at = now(),
         cancelled = greatest(0, x.recipients - x.sent - x.skipped - x.failed - x.unknown)
   where x.organization_id = broadcast_finish.organization_id and x.id = broadcast_finish.run_id and x.status = 'sending'
$$;
revoke execute on function app_private.broadcast_finish(uuid, uuid) from public;

-- Step 1 of a batch. First the checkpoint left by a process that died: those step runs become
-- unknown (their messages may have gone) and their enrollments move on. Then the next `size`
-- pending recipients, each through app_private.sequence_step_claim: skipped with its reason,
-- sent at once when its channel is the local sink (stored and recorded in this transaction), or
-- claimed (step run `sending`, message queued) and put in in_flight for the transport.
-- Answers {action: none (run not sending) | done (nothing left: run completed) | batch,
--          messages: [{enrollment_id, step_key, message}], handled: n}.
create or replace function app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size int, base_url text,
  sink_channels text[] default '{}') returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  r app_public.broadcast_runs;
  ids uuid[];
  one uuid;
  key text;
  claim jsonb;
  messages jsonb := '[]';
  flight uuid[] := '{}';
  lost int := 0;
  outcome text;
  stored uuid;
  queued uuid[] := '{}';
  sunk uuid[] := '{}';
  sent_now int := 0;
  skipped_now int := 0;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = broadcast_claim_batch.organization_id and x.id = broadcast_claim_batch.run_id for update;
  if not found or r.status <> 'sending' then
    return jsonb_build_object('action', 'none');
  end if;
  if cardinality(r.in_flight) > 0 then
    for one, key in
      select e.id, e.current_step_key from app_public.enrollments e
       where e.organization_id = r.organization_id and e.id = any(r.in_flight)
    loop
      update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
       where sr.organization_id = r.organization_id and sr.enrollment_id = one and sr.step_key = key and sr.status = 'sending';
      if found then
        lost := lost + 1;
        update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
         where m.organization_id = r.organization_id and m.status = 'queued'
           and m.id = (select sr.message_id from app_public.step_runs sr
                        where sr.organization_id = r.organization_id and sr.enrollment_id = one and sr.step_key = key);
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
        values (r.organization_id, one, 'unknown', key, 'interrupted');
        perform app_private.advance_enrollment(r.organization_id, one);
      end if;
    end loop;
    update app_public.broadcast_runs x set in_flight = '{}', unknown = x.unknown + lost
     where x.organization_id = r.organization_id and x.id = r.id;
  end if;

  ids := array(select e.id from app_public.enrollments e
                where e.organization_id = r.organization_id and e.run_id = r.id and e.status = 'active' and e.next_run_at is null
                  and e.id > coalesce(r.claimed_through, '00000000-0000-0000-0000-000000000000')
                order by e.id limit size);
  if cardinality(ids) = 0 then
    perform app_private.broadcast_finish(r.organization_id, r.id);
    return jsonb_build_object('action', 'done');
  end if;
  foreach one in array ids loop
    select e.current_step_key into key from app_public.enrollments e where e.organization_id = r.organization_id and e.id = one;
    claim := app_private.sequence_step_claim(r.organization_id, one, key, base_url, sink_channels);
    if claim->>'action' = 'send' then
      -- the message's meta names the run (as its stored row does, below)
      messages := messages || jsonb_build_object('enrollment_id', one, 'step_key', key, 'message',
        jsonb_set(claim->'message', '{meta,run_id}', to_jsonb(r.id)));
      flight := flight || one;
      queued := queued || (claim->'message'->>'id')::uuid;
    elsif claim->>'action' = 'none' then
      -- the sequence is no longer active (deactivated): what is left of the run is cancelled
      perform app_private.end_enrollments(r.organization_id, array[one], 'cancelled', 'sequence_inactive');
    else
      -- finished by the claim: skipped (with its reason) or sent through the sink; an exit
      -- condition or a wait leaves no such step run and counts as cancelled when the run ends
      select sr.status, sr.message_id into outcome, stored from app_public.step_runs sr
       where sr.organization_id = r.organization_id and sr.enrollment_id = one and sr.step_key = key;
      if outcome = 'sent' then
        sent_now := sent_now + 1;
        sunk := sunk || stored;
      elsif outcome = 'skipped' then skipped_now := skipped_now + 1; end if;
    end if;
  end loop;
  -- the run's id in the meta of the batch's messages (the outbox rows the sink wrote, too), one
  -- statement each, so that a message says which run sent it
  update app_private.outgoing_messages m set meta = m.meta || jsonb_build_object('run_id', r.id)
   where m.organization_id = r.organization_id and m.id = any(queued || sunk);
  update app_private.outbox o set meta = o.meta || jsonb_build_object('run_id', r.id)
   where o.organization_id = r.organization_id and o.id = any(sunk);
  update app_public.broadcast_runs x
     set in_flight = flight, progress_at = now(), claimed_through = ids[cardinality(ids)], sent = x.sent + sent_now, skipped = x.skipped + skipped_now
   where x.organization_id = r.organization_id and x.id = r.id;
  return jsonb_build_object('action', 'batch', 'messages', messages, 'handled', cardinality(ids));
end $$;
comment on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]) is
  'A run''s next batch: a dead process''s in_flight made unknown, then up to `size` recipients claimed through '
  'sequence_step_claim (skips and sink sends finished here); the claimed ones become the new in_flight checkpoint.';
revoke execute on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]) from public;

-- Step 3: what the transport answered for each message of the batch ({enrollment_id, step_key,
-- message_id, error}), recorded through app_private.sequence_step_record; counts moved and the
-- checkpoint emptied in the same transaction.
create or replace function app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  x jsonb;
  ok int := 0;
  bad int := 0;
begin
  perform 1 from app_public.broadcast_runs r
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id for update;
  for x in select value from jsonb_array_elements(results) loop
    -- only what is still `sending` is this batch's to record
    perform 1 from app_public.step_runs sr
     where sr.organization_id = broadcast_record_batch.organization_id and sr.enrollment_id = (x->>'enrollment_id')::uuid
       and sr.step_key = x->>'step_key' and sr.message_id = (x->>'message_id')::uuid and sr.status = 'sending';
    continue when not found;
    perform app_private.sequence_step_record(broadcast_record_batch.organization_id, (x->>'enrollment_id')::uuid,
      x->>'step_key', (x->>'message_id')::uuid, x->>'error');
    if x->>'error' is null then ok := ok + 1; else bad := bad + 1; end if;
  end loop;
  update app_public.broadcast_runs r set in_flight = '{}', progress_at = now(), sent = r.sent + ok, failed = r.failed + bad
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id;
end $$;
comment on function app_private.broadcast_record_batch(uuid, uuid, jsonb) is
  'A batch''s transport answers recorded (sequence_step_record each), counts moved, the in_flight checkpoint emptied.';
revoke execute on function app_private.broadcast_record_batch(uuid, uuid, jsonb) from public;

-- A run sending whose job died with its worker: graphile-worker frees a dead worker's job only
-- after four hours. A run with no batch claimed or recorded for five minutes (a batch's
-- transport gives up well within that: SMTP 20 s idle, HTTP 15 s) gets a new job (the cron of
-- broadcast_fire calls this each minute); should its worker be alive after all, the new job finds
-- the run's advisory lock held and retries later. Answers the runs queued.
create or replace function app_private.broadcast_requeue_stalled() returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r record;
  n int := 0;
begin
  for r in
    select x.organization_id, x.id from app_public.broadcast_runs x
     where x.status = 'sending' and x.progress_at < now() - interval '5 minutes'
     for update skip locked
  loop
    update app_public.broadcast_runs x set progress_at = now() where x.organization_id = r.organization_id and x.id = r.id;
    perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', r.organization_id, 'run_id', r.id),
      'broadcast_run:' || r.id, now());
    n := n + 1;
  end loop;
  return n;
end $$;
comment on function app_private.broadcast_requeue_stalled() is
  'Queues a new broadcast_run job for each run sending without progress for five minutes (its worker died).';
revoke execute on function app_private.broadcast_requeue_stalled() from public;

reset role;

--! split: 850-delivery-sms.sql
-- Delivery, SMS: what a Twilio-compatible provider tells us back (src/delivery/twilio.ts,
-- src/delivery/webhooks.ts). The provider's message id (SID) is kept on the outgoing message;
-- each status callback is recorded once per (SID, status) and moves the message's delivery
-- status, and a sequence text's `delivered`/`bounced` enrollment event. Inbound SMS goes through
-- the conversations area's own function (701-…), so a webhook and `svc admin inbound sms` take
-- the same path. The carrier keyword list and the plain-language opt-out live here too, in
-- app_private.sms_keyword, which that function reads.
set local role svc_owner;

alter table app_private.outgoing_messages add column if not exists provider_id text;
alter table app_private.outgoing_messages add column if not exists delivery_status text;
comment on column app_private.outgoing_messages.provider_id is
  'The provider''s id of the message once it accepted it (Twilio''s MessageSid): status callbacks name it.';
comment on column app_private.outgoing_messages.delivery_status is
  'The provider''s last reported status (queued, sent, delivered, undelivered, failed; bounced, complained for email).';
create unique index if not exists outgoing_messages_provider_id on app_private.outgoing_messages (provider_id)
  where provider_id is not null;

-- What providers reported, once each: the key is the provider's (Twilio: SID and status, since
-- every status of a message is a callback of its own), so a redelivered webhook records nothing.
create table if not exists app_private.delivery_events (
  id bigint generated always as identity primary key,
  organization_id uuid not null references app_public.organizations on delete cascade,
  message_id uuid not null,
  event_key text not null unique check (length(event_key) between 1 and 400),
  type text not null,
  detail jsonb not null default '{}',
  created_at timestamptz not null default now(),
  foreign key (organization_id, message_id) references app_private.outgoing_messages on delete cascade
);
comment on table app_private.delivery_events is
  'Delivery reports from providers (status callbacks, bounces, complaints), each recorded once by its provider key.';
alter table app_private.delivery_events drop constraint if exists delivery_events_type_check;
alter table app_private.delivery_events add constraint delivery_events_type_check
  check (type in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied'));
alter table app_private.delivery_events enable row level security;
create index if not exists delivery_events_by_message on app_private.delivery_events (organization_id, message_id, id);

-- Since April 2025 US rules count an opt-out "by any reasonable method". Detected
-- conservatively: the WHOLE message, once lower-cased with apostrophes dropped and punctuation
-- made spaces, must be one of these requests, with an optional "please" before and
-- "please/thanks" after. Anything more ("stop texting me after 8pm", "don't stop texting me",
-- "can you stop by") is an ordinary message for a person or the AI to read: a missed opt-out
-- there is answered by a human, a false one would silence a customer who asked for nothing.
-- test/delivery/opt-out.test.ts lists the phrasings accepted and the near-misses refused.
create or replace function app_private.sms_plain_opt_out(body text) returns boolean
language sql immutable as $$
  select btrim(regexp_replace(regexp_replace(lower(coalesce(body, '')), '[''’‘`]', '', 'g'), '[^a-z0-9]+', ' ', 'g')) ~ (
    '^(hi |hello |hey )?(please |pls |plz )?('
    || '(stop|quit|cease) (texting|txting|messaging|contacting|sending (me )?(texts|messages|text messages|sms|sms messages))( me)?'
    || '|(do not|dont|never) (text|txt|message|sms|contact) (me|this number)'
    || '|no more (texts|text messages|messages|sms)'
    || '|unsubscribe( me)?( from (this|these|your) (list|texts|messages))?'
    || '|(remove|take) (me|my number|this number) (off|from) (your|the|this) (list|texting list|text list|sms list|contact list|mailing list)'
    || '|opt (me )?out|optout me|opt me out of (this|these|your) (texts|messages)'
    || '|(i (want|would like|wish)|id like) to (unsubscribe|opt out|stop (getting|receiving) (texts|messages|these))'
    || '|(leave me alone and )?stop (all )?(texts|messages|text messages)'
    || ')( (again|anymore|any more|ever again|now|at all))?( (please|pls|plz|thanks|thank you|thx))?$')
$$;
comment on function app_private.sms_plain_opt_out(text) is
  'Whether a whole SMS is a plain-language opt-out request ("please stop texting me", "unsubscribe me", "don''t text me '
  'again"); conservative: a longer or conditional message is not one.';
revoke execute on function app_private.sms_plain_opt_out(text) from public;

-- The whole message as a carrier keyword: STOP and the CTIA list (STOPALL, UNSUBSCRIBE, CANCEL,
-- END, QUIT, REVOKE, OPTOUT), START/UNSTOP, HELP/INFO; case and trailing punctuation ignored.
-- Otherwise a plain-language opt-out (app_private.sms_plain_opt_out) is 'stop' too.
create or replace function app_private.sms_keyword(body text) returns text
language sql immutable as $$
  select case upper(regexp_replace(btrim(body), '[[:space:][:punct:]]+$', ''))
    when 'STOP' then 'stop' when 'STOPALL' then 'stop' when 'UNSUBSCRIBE' then 'stop' when 'CANCEL' then 'stop'
    when 'END' then 'stop' when 'QUIT' then 'stop' when 'REVOKE' then 'stop' when 'OPTOUT' then 'stop'
    when 'START' then 'start' when 'UNSTOP' then 'start'
    when 'HELP' then 'help' when 'INFO' then 'help'
    else case when app_private.sms_plain_opt_out(body) then 'stop' end
  end
$$;
revoke execute on function app_private.sms_keyword(text) from public;

-- The provider's id of a message it accepted, stored by deliver_message in its transaction.
-- (Only the worker calls it, as owner; kept a function so the write is in one place.)
create or replace function app_private.delivery_set_provider_id(org uuid, message_id uuid, provider_id text) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.outgoing_messages m set provider_id = delivery_set_provider_id.provider_id
   where m.organization_id = org and m.id = message_id
$$;
revoke execute on function app_private.delivery_set_provider_id(uuid, uuid, text) from public;

-- The same, for a message the API sent itself (conversations_send_sms, _reply): the request's
-- organization's message only.
create or replace function app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.outgoing_messages m set provider_id = delivery_note_provider_id.provider_id
   where m.organization_id = app_hidden.current_org_id() and m.id = message_id
$$;
revoke execute on function app_hidden.delivery_note_provider_id(uuid, text) from public;
grant execute on function app_hidden.delivery_note_provider_id(uuid, text) to svc_request;

-- What a provider reported about one message it sent, recorded once per event_key (a duplicate
-- answers duplicate true and changes nothing): the message's delivery_status (a late 'sent'
-- does not undo a later status), and for a sequence's message the enrollment's `delivered` or
-- `bounced` event (reason the provider's), in the order reports arrive. For email, a hard
-- bounce (detail.bounce = hard) ends the enrollment as failed and suppresses the address, and
-- a complaint suppresses it (the suppression's trigger cancels the contact's email sequences);
-- the suppression is the contact's that carries the address, when one does. An auto-reply
-- (auto_replied) is only recorded: it is not a reply.
create or replace function app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text,
  detail jsonb) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  ev_id bigint;
  enrollment uuid := case when om.meta ? 'enrollment_id' then (om.meta->>'enrollment_id')::uuid end;
  enrollment_event text := case type when 'delivered' then 'delivered' when 'undelivered' then 'bounced'
                                     when 'failed' then 'bounced' when 'bounced' then 'bounced' end;
  hard boolean := om.channel = 'email' and (type = 'complained' or (type = 'bounced' and detail->>'bounce' = 'hard'));
  holder uuid;
begin
  if type is null or type not in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied') then
    perform app_hidden.raise_error(400, 'bad_request', 'Unknown delivery event');
  end if;
  insert into app_private.delivery_events (organization_id, message_id, event_key, type, detail)
  values (om.organization_id, om.id, delivery_message_event.event_key, delivery_message_event.type,
          coalesce(delivery_message_event.detail, '{}'))
  on conflict on constraint delivery_events_event_key_key do nothing
  returning id into ev_id;
  if ev_id is null then
    return jsonb_build_object('known', true, 'recorded', false, 'duplicate', true, 'message_id', om.id);
  end if;
  if type <> 'auto_replied'
     and not (type in ('queued', 'sent') and om.delivery_status in ('delivered', 'undelivered', 'failed', 'bounced', 'complained')) then
    update app_private.outgoing_messages m set delivery_status = delivery_message_event.type
     where m.organization_id = om.organization_id and m.id = om.id;
  end if;
  if enrollment_event is not null and enrollment is not null then
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select om.organization_id, e.id, enrollment_event, om.meta->>'step_key', om.id,
           case when enrollment_event = 'bounced'
                then left(concat_ws(': ', detail->>'bounce', coalesce(detail->>'reason', type)), 500) end
      from app_public.enrollments e
     where e.organization_id = om.organization_id and e.id = enrollment;
  end if;
  if hard then
    if type = 'bounced' and enrollment is not null then
      perform app_private.end_enrollments(om.organization_id, array[enrollment], 'failed', 'hard_bounce');
    end if;
    select c.id into holder from app_public.contacts c
     where c.organization_id = om.organization_id and c.email_key = lower(om.recipient) order by c.created_at, c.id limit 1;
    if holder is not null then
      insert into app_public.email_suppressions (organization_id, email, contact_id, source)
      values (om.organization_id, lower(om.recipient), holder, case when type = 'complained' then 'complaint' else 'bounce' end)
      on conflict do nothing;
    end if;
  end if;
  return jsonb_build_object('known', true, 'recorded', true, 'duplicate', false, 'message_id', om.id,
    'organization_id', om.organization_id, 'type', type, 'suppressed', hard and holder is not null);
end $$;
comment on function app_private.delivery_message_event(app_private.outgoing_messages, text, text, jsonb) is
  'A provider''s report about one message, once per event key: delivery_status, the enrollment''s delivered/bounced event, '
  'and for a hard bounce or complaint the address suppressed (a hard bounce also fails the enrollment).';
revoke execute on function app_private.delivery_message_event(app_private.outgoing_messages, text, text, jsonb) from public;

-- A report naming the message by the provider's id (Twilio's SID: status callbacks) or by ours
-- (the email events webhook, `svc admin delivery`), one of the two. Unknown ids are answered
-- (known false) and not recorded: a provider retrying a report about a message from another
-- system must not fill the table.
drop function if exists app_hidden.delivery_record_event(text, text, text, jsonb);
drop function if exists app_hidden.delivery_record_message_event(uuid, text, text, jsonb);
create or replace function app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  om app_private.outgoing_messages;
begin
  if (provider_id is null) = (message_id is null) or length(provider_id) not between 1 and 200 then
    perform app_hidden.raise_error(400, 'bad_request', 'One message id: the provider''s (1 to 200 characters) or ours');
  end if;
  if provider_id is not null then
    select * into om from app_private.outgoing_messages m where m.provider_id = delivery_record_event.provider_id for update;
  else
    select * into om from app_private.outgoing_messages m where m.id = delivery_record_event.message_id for update;
  end if;
  if not found then
    return jsonb_build_object('known', false, 'recorded', false);
  end if;
  return app_private.delivery_message_event(om, event_key, type, detail);
end $$;
comment on function app_hidden.delivery_record_event(text, uuid, text, text, jsonb) is
  'A provider''s delivery report about a message by its provider id or ours, recorded once per event key.';
revoke execute on function app_hidden.delivery_record_event(text, uuid, text, text, jsonb) from public;
grant execute on function app_hidden.delivery_record_event(text, uuid, text, text, jsonb) to svc_request;

-- Messages are found by their id alone (a reply's In-Reply-To, a delivery report) before the
-- organization is known: the primary key leads with organization_id.
create index if not exists outgoing_messages_by_id on app_private.outgoing_messages (id);

-- An inbound SMS from the provider's webhook: the number's owner (404 unknown_number, 409
-- number_ambiguous), then exactly what `svc admin inbound sms` runs.
drop function if exists app_hidden.delivery_inbound_sms(text, text, text, text);
create or replace function app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text,
  owner_check boolean)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  result jsonb;
begin
  -- the webhook: a number two organizations share is refused (409 number_ambiguous), not guessed;
  -- `svc admin inbound sms` (owner_check false) keeps the conversations area's rule, the first
  -- organization that took the number
  if owner_check then
    perform app_hidden.number_owner(to_number);
  end if;
  -- one delivery of a message at a time: a retry racing the first waits, then finds it recorded
  if provider_id is not null then
    perform pg_advisory_xact_lock(hashtextextended('inbound-sms|' || provider_id, 0));
  end if;
  result := app_private.conversations_inbound_sms(to_number, from_number, body, provider_id);
  -- the `replied` exit holds from this moment (sequences.md: checked when the event arrives)
  if result->>'contact_id' is not null and not coalesce((result->>'duplicate')::boolean, false) then
    perform app_private.check_contact_exits((result->>'organization_id')::uuid, (result->>'contact_id')::uuid);
  end if;
  return result;
end $$;
comment on function app_hidden.delivery_inbound_sms(text, text, text, text, boolean) is
  'An inbound SMS from the provider''s webhook, through conversations_inbound_sms (idempotent on the provider id).';
revoke execute on function app_hidden.delivery_inbound_sms(text, text, text, text, boolean) from public;
grant execute on function app_hidden.delivery_inbound_sms(text, text, text, text, boolean) to svc_request;

reset role;

--! split: 851-delivery-email.sql
-- Delivery, email coming back: an inbound email from the signed MIME webhook
-- (src/delivery/inbound_email.ts) or `svc admin inbound email`, one path for both. The answer to
-- a message the service sent is found by In-Reply-To/References (the webhook picks the id of
-- ours among them) or by the reply+TOKEN@ address our Reply-To names (TOKEN: the message id,
-- hex); it then continues that message's conversation through the conversations area's own
-- function (701-…), which also records the sequence's `replied` event. An auto-reply
-- (Auto-Submitted, out-of-office) is recorded as the message's `auto_replied` delivery event
-- and is not a reply: no conversation message, no `replied`, no exit.
set local role svc_owner;

create or replace function app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text,
  in_reply_to text, provider_id text, auto_reply boolean) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  token text := substring(lower(to_address) from '^reply\+([0-9a-f]{32})@[^@\s]+$');
  replied_id uuid;
  om app_private.outgoing_messages;
  result jsonb;
begin
  if to_address is null or from_address is null or to_address !~ '^[^@\s]+@[^@\s]+$' or from_address !~ '^[^@\s]+@[^@\s]+$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are email addresses');
  end if;
  replied_id := substring(in_reply_to from '^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@')::uuid;
  if replied_id is null and token is not null then
    replied_id := (substr(token, 1, 8) || '-' || substr(token, 9, 4) || '-' || substr(token, 13, 4) || '-'
                   || substr(token, 17, 4) || '-' || substr(token, 21))::uuid;
  end if;
  if replied_id is not null then
    select * into om from app_private.outgoing_messages m where m.id = replied_id and m.channel = 'email';
  end if;
  if token is not null then
    if om.id is null then
      perform app_hidden.raise_error(404, 'not_found', 'No message of ours answers to ' || to_address);
    end if;
    -- the thread's address is the one the message was sent from, not the reply address
    to_address := coalesce(om.sender, to_address);
  end if;
  -- one delivery of a message at a time: a retry racing the first waits, then finds it recorded
  if provider_id is not null then
    perform pg_advisory_xact_lock(hashtextextended('inbound-email|' || provider_id, 0));
  end if;
  if auto_reply then
    if om.id is null then
      return jsonb_build_object('auto_reply', true, 'recorded', false);
    end if;
    return app_private.delivery_message_event(om, 'auto:' || coalesce(provider_id, md5(coalesce(body, ''))) || ':' || om.id,
      'auto_replied', jsonb_build_object('from', lower(from_address), 'subject', left(subject, 500))) || jsonb_build_object('auto_reply', true);
  end if;
  result := app_private.conversations_inbound_email(to_address, from_address, subject, body,
    case when om.id is not null then '<' || om.id || '@reply>' else in_reply_to end, provider_id);
  -- the `replied` exit holds from this moment (sequences.md: checked when the event arrives)
  if result->>'contact_id' is not null then
    perform app_private.check_contact_exits((result->>'organization_id')::uuid, (result->>'contact_id')::uuid);
  end if;
  return result || jsonb_build_object('auto_reply', false);
end $$;
comment on function app_hidden.delivery_inbound_email(text, text, text, text, text, text, boolean) is
  'An inbound email: the message answered by In-Reply-To or reply+TOKEN, the conversation continued (and the sequence''s '
  'replied event) through conversations_inbound_email; an auto-reply is only recorded on the message answered.';
revoke execute on function app_hidden.delivery_inbound_email(text, text, text, text, text, text, boolean) from public;
grant execute on function app_hidden.delivery_inbound_email(text, text, text, text, text, text, boolean) to svc_request;

reset role;

--! split: 900-analysts.sql
-- Analysts: login roles that read replicas under the same row-level policies as the API.
--
-- An analyst's organization and locations come from who the analyst is, not from a setting the
-- analyst could change: `svc admin analyst create` makes a login role (member of svc_analyst)
-- and a row here, keyed by the role's name. The claim helpers (app_hidden.current_org_id() and
-- the others, restated in 901-910) read this row when the session's user is an analyst and the
-- svc.* settings otherwise, so `set svc.organization_id = '…'` in an analyst's session changes
-- nothing. The row is in app_private, which analysts cannot use; app_hidden.analyst_claim (a
-- definer function) is their only way to it, and it answers only their own row.
set local role svc_owner;

create table if not exists app_private.analysts (
  role_name text primary key check (role_name ~ '^svc_analyst_[a-z0-9_]{1,40}$'),
  -- NULL only for the operator's own analysts (all_organizations), who hold BYPASSRLS
  organization_id uuid references app_public.organizations on delete cascade,
  -- NULL: every location of the organization
  location_ids uuid[] check (location_ids is null or cardinality(location_ids) > 0),
  all_organizations boolean not null default false,
  created_at timestamptz not null default now(),
  check (all_organizations = (organization_id is null)),
  check (location_ids is null or organization_id is not null)
);
comment on table app_private.analysts is
  'Who each analyst login role is: its organization (NULL for the operator''s all-organizations analysts) and the '
  'locations it reaches (NULL: all). Keyed by session_user; written by `svc admin analyst create|revoke` only.';
-- like every private table: RLS on, no policies (only its owner, svc_owner, reads it)
alter table app_private.analysts enable row level security;
create index if not exists analysts_by_organization on app_private.analysts (organization_id);

-- An analyst's claim, as text in the format the svc.* setting would hold it, from its own row
-- (session_user's) of app_private.analysts: its organization, and '*' or its locations; every
-- other claim is '' (none). A member of svc_analyst with no row (a role left behind) gets ''
-- for everything and sees nothing.
create or replace function app_hidden.analyst_claim(claim text) returns text
language sql stable parallel safe security definer
set search_path to pg_catalog, public, pg_temp as $$
  select coalesce((
    select case claim
             when 'organization_id' then coalesce(a.organization_id::text, '')
             when 'location_ids' then case when a.location_ids is null then '*' else a.location_ids::text end
           end
      from app_private.analysts a
     where a.role_name = session_user), '')
$$;
comment on function app_hidden.analyst_claim(text) is
  'An analyst''s claim from its own row of app_private.analysts (keyed by session_user); '''' when it has none. '
  'Read through app_hidden.session_claim.';

-- The one place the claim helpers read a claim. A session is an analyst's when its user has
-- svc_analyst's rights and not svc_owner's (a superuser has every role's, so the owner's own
-- sessions, tests and operator tools are not analysts'): it reads app_hidden.analyst_claim.
-- Every other session reads the setting, as before; the API's requests (svc_login) and
-- statements run as svc_request or svc_worker (the worker's tasks) are told apart first, by
-- name, at no extra cost. An analyst cannot take the settings' path: session_user changes only
-- for a superuser (SET ROLE changes current_user), and an analyst's current_user is its own
-- role or svc_analyst, never svc_request or svc_worker. Inside a definer helper (current_user
-- svc_owner) called in an analyst's session, the analyst's claims still apply.
create or replace function app_hidden.session_claim(claim text) returns text
language sql stable parallel safe as $$
  select case when session_user = 'svc_login' or current_user in ('svc_request', 'svc_worker')
                or not pg_catalog.pg_has_role(session_user, 'svc_analyst', 'USAGE')
                or pg_catalog.pg_has_role(session_user, 'svc_owner', 'USAGE')
              then pg_catalog.current_setting('svc.' || claim, true)
              else app_hidden.analyst_claim(claim) end
$$;
comment on function app_hidden.session_claim(text) is
  'The text of claim svc.<claim> for this session: the setting, or for an analyst its own mapping.';

revoke execute on function app_hidden.analyst_claim(text), app_hidden.session_claim(text) from public;
grant execute on function app_hidden.analyst_claim(text), app_hidden.session_claim(text)
  to svc_request, svc_worker, svc_analyst;

reset role;

--! split: 901-current_org_id.sql
-- current_org_id(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_org_id() returns uuid
language sql stable parallel safe as $$
  select nullif(app_hidden.session_claim('organization_id'), '')::uuid
$$;
comment on function app_hidden.current_org_id() is
  'Organization of the current credential (an analyst''s: its mapping); NULL (sees nothing) when unset.';

reset role;

--! split: 902-current_user_id.sql
-- current_user_id(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_user_id() returns uuid
language sql stable parallel safe as $$
  select nullif(app_hidden.session_claim('user_id'), '')::uuid
$$;
comment on function app_hidden.current_user_id() is
  'Person the credential acts for; NULL for organization keys and analysts.';

reset role;

--! split: 903-current_credential_id.sql
-- current_credential_id(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_credential_id() returns uuid
language sql stable parallel safe as $$
  select nullif(app_hidden.session_claim('credential_id'), '')::uuid
$$;
comment on function app_hidden.current_credential_id() is
  'The key of the current request; NULL for analysts.';

reset role;

--! split: 904-current_role.sql
-- current_role(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_role() returns text
language sql stable parallel safe as $$
  select nullif(app_hidden.session_claim('role'), '')
$$;
comment on function app_hidden.current_role() is
  'Effective role: organization (key with no role), owner, admin, manager or member; NULL for analysts.';

reset role;

--! split: 905-current_reaches_all_locations.sql
-- current_reaches_all_locations(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_reaches_all_locations() returns boolean
language sql stable parallel safe as $$
  select coalesce(app_hidden.session_claim('location_ids') = '*', false)
$$;
comment on function app_hidden.current_reaches_all_locations() is
  'True only when the credential (or the analyst''s mapping) explicitly reaches the whole organization.';

reset role;

--! split: 906-current_location_ids.sql
-- current_location_ids(): restated to read its claim through app_hidden.session_claim
-- (900-analysts.sql): the svc.* setting for the API's requests and tasks, exactly as before; an
-- analyst's own mapping for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_location_ids() returns uuid[]
language sql stable parallel safe as $$
  -- one expression (no FROM), so PostgreSQL inlines it into the statement that calls it
  select case
    when app_hidden.session_claim('location_ids') = '*' then null
    else coalesce(nullif(app_hidden.session_claim('location_ids'), '')::uuid[], '{}')
  end
$$;
comment on function app_hidden.current_location_ids() is
  'Locations a location-bound credential (or analyst) reaches; NULL when it reaches the whole organization, empty when unset.';

reset role;

--! split: 907-current_powers.sql
-- current_powers(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_powers() returns text[]
language sql stable parallel safe as $$
  select coalesce(nullif(app_hidden.session_claim('powers'), '')::text[], '{}')
$$;
comment on function app_hidden.current_powers() is
  'Manager powers of the credential; none for analysts.';

reset role;

--! split: 908-current_scopes.sql
-- current_scopes(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_scopes() returns text[]
language sql stable parallel safe as $$
  select coalesce(nullif(app_hidden.session_claim('scopes'), '')::text[], '{}')
$$;
comment on function app_hidden.current_scopes() is
  'Scopes of the key; none for analysts.';

reset role;

--! split: 909-current_records_level.sql
-- current_records_level(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_records_level() returns text
language sql stable parallel safe as $$
  select coalesce(nullif(app_hidden.session_claim('records_level'), ''), 'all')
$$;
comment on function app_hidden.current_records_level() is
  'all, or own for a member who reads only their own clients; all for analysts (their reach is their locations).';

reset role;

--! split: 910-current_sms_enabled.sql
-- current_sms_enabled(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_sms_enabled() returns boolean
language sql stable parallel safe as $$
  select coalesce(nullif(app_hidden.session_claim('sms_enabled'), '')::boolean, false)
$$;
comment on function app_hidden.current_sms_enabled() is
  'Whether the credential may text (a MEMBER''s SMS setting; a MEMBER key never); false when unset and for analysts.';

reset role;

--! split: 911-analytics-views.sql
-- Views for analysts (schema app_analytics), where the raw tables are awkward to join. Each is
-- security_invoker: it reads the tables with the rights and under the row-level policies of the
-- analyst who queries it, so a view shows exactly the rows its tables would (one organization,
-- the analyst's locations). Only svc_analyst may use the schema; the API does not read it.
-- db/README.md (Analysts) has example queries.
set local role svc_owner;

create schema if not exists app_analytics;
comment on schema app_analytics is 'Read-only views for analysts on replicas, under the tables'' row-level policies.';
revoke all on schema app_analytics from public;
grant usage on schema app_analytics to svc_analyst;

-- Contacts with their pipeline stage's name and their tags' names.
create or replace view app_analytics.contacts with (security_invoker = true) as
select c.organization_id, c.id, c.name, c.email::text as email, c.phone,
       c.stage_id, s.name as stage, s.position as stage_position,
       coalesce((select array_agg(t.name::text order by t.name)
                   from app_public.contact_tags ct
                   join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                  where ct.organization_id = c.organization_id and ct.contact_id = c.id), '{}') as tags,
       c.field_values, c.sms_consent, c.total_calls, c.notes_count,
       c.first_seen_at, c.last_seen_at, c.created_at, c.updated_at
  from app_public.contacts c
  left join app_public.pipeline_stages s on s.organization_id = c.organization_id and s.id = c.stage_id;
comment on view app_analytics.contacts is 'Contacts with stage (name) and tags (names, sorted); the contacts an analyst reaches.';

-- Enrollments with their sequence's name, kind and status.
create or replace view app_analytics.enrollments with (security_invoker = true) as
select e.organization_id, e.id, e.sequence_id, q.name as sequence, q.kind as sequence_kind,
       q.status as sequence_status, q.location_id, e.contact_id, e.status, e.current_step_key,
       e.next_step_due_at, e.end_reason, e.source, e.created_at, e.updated_at
  from app_public.enrollments e
  join app_public.sequences q on q.organization_id = e.organization_id and q.id = e.sequence_id;
comment on view app_analytics.enrollments is 'Enrollments with their sequence (name, kind, status, location).';

-- Appointments per location and local day (the location's time zone): a repeating series counts
-- once per occurrence. Blocks (time off) are not appointments and are left out.
create or replace view app_analytics.appointments_per_day with (security_invoker = true) as
with booked as (
  select a.organization_id, a.location_id, a.starts_at, a.status
    from app_public.appointments a
   where a.kind = 'appointment' and a.rrule is null
  union all
  select a.organization_id, a.location_id, o.occurrence_start, a.status
    from app_public.appointments a
    join app_public.appointment_occurrences o on o.organization_id = a.organization_id and o.appointment_id = a.id
   where a.kind = 'appointment' and a.rrule is not null
)
select b.organization_id, b.location_id, l.name as location,
       (b.starts_at at time zone l.timezone)::date as day,
       count(*) filter (where b.status = 'booked') as booked,
       count(*) filter (where b.status = 'cancelled') as cancelled
  from booked b
  join app_public.locations l on l.organization_id = b.organization_id and l.id = b.location_id
 group by b.organization_id, b.location_id, l.name, (b.starts_at at time zone l.timezone)::date;
comment on view app_analytics.appointments_per_day is
  'Booked and cancelled appointments per location and local day (occurrences of a series each count).';

revoke all on all tables in schema app_analytics from public;
grant select on all tables in schema app_analytics to svc_analyst;

reset role;

--! split: 930-dashboard-sessions.sql
-- The dashboard's sign-in and sessions (src/dashboard/session.ts). A person signs in with a
-- one-time link sent to their email address; the link's token and the session's id travel only
-- to the person's browser, and only their SHA-256 hashes are stored here, so a read of these
-- tables gives nobody a way in. The page handlers run as svc_request and call these security
-- definer functions, which take nothing but hashes, an email address and the link text.
--
--   app_hidden.dashboard_link_people(email)          the active people with that address
--   app_hidden.dashboard_issue_link(…)               a link stored and its email queued
--   app_hidden.dashboard_redeem_link(token, session) the link spent, a new session opened
--   app_hidden.dashboard_session(session)            the session's person, claims set as theirs
--   app_hidden.dashboard_end_session(session)        sign-out
set local role svc_owner;

create table if not exists app_private.dashboard_links (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  person_id uuid not null,
  token_hash bytea not null unique check (length(token_hash) = 32),
  return_to text,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);
comment on table app_private.dashboard_links is
  'One-time sign-in links: only the token''s SHA-256 is kept; spent (used_at) at the first use, dead after expires_at.';
alter table app_private.dashboard_links enable row level security;
create index if not exists dashboard_links_person on app_private.dashboard_links (organization_id, person_id);

create table if not exists app_private.dashboard_sessions (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  person_id uuid not null,
  session_hash bytea not null unique check (length(session_hash) = 32),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (organization_id, id),
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);
comment on table app_private.dashboard_sessions is
  'Signed-in browsers: only the SHA-256 of the cookie''s session id is kept. A new row at every sign-in (no fixation).';
alter table app_private.dashboard_sessions enable row level security;
create index if not exists dashboard_sessions_person on app_private.dashboard_sessions (organization_id, person_id);

-- How long a link and a session live.
create or replace function app_hidden.dashboard_lifetimes() returns jsonb
language sql immutable parallel safe as $$
  select '{"link_minutes": 15, "link_burst": 5, "session_hours": 12}'::jsonb
$$;
comment on function app_hidden.dashboard_lifetimes() is 'Lifetimes of sign-in links (minutes) and dashboard sessions (hours); links per person per link lifetime (burst).';
grant execute on function app_hidden.dashboard_lifetimes() to svc_request;

create or replace function app_hidden.dashboard_link_people(email text)
returns table (organization_id uuid, person_id uuid, organization_name text)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select p.organization_id, p.id, o.name
    from app_public.people p
    join app_public.organizations o on o.id = p.organization_id
   where p.email = dashboard_link_people.email::citext and p.active
   order by o.name, p.organization_id
$$;
comment on function app_hidden.dashboard_link_people(text) is
  'The active people with an email address (one per organization), to send each a sign-in link.';
revoke execute on function app_hidden.dashboard_link_people(text) from public;
grant execute on function app_hidden.dashboard_link_people(text) to svc_request;

-- The link's email goes out like every email (queue_message, the organization's transport);
-- the text of the link reaches the database only inside the email's body. At most
-- link_burst links per person in link_minutes: beyond that nothing is stored or sent (false),
-- so a stranger cannot flood a person's mailbox; the page answers the same either way.
drop function if exists app_hidden.dashboard_issue_link(uuid, uuid, bytea, text, text, text, text);
create or replace function app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea,
  return_to text, recipient text, subject text, body text)
returns boolean language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.people p
                  where p.organization_id = org and p.id = person and p.active and p.email = recipient::citext) then
    perform app_hidden.raise_error(404, 'not_found', 'Person not found');
  end if;
  -- one person's links are counted one at a time
  perform pg_advisory_xact_lock(hashtextextended('dashboard_links:' || person::text, 0));
  if (select count(*) from app_private.dashboard_links d
       where d.organization_id = org and d.person_id = person
         and d.created_at > now() - make_interval(mins => (app_hidden.dashboard_lifetimes()->>'link_minutes')::int))
     >= (app_hidden.dashboard_lifetimes()->>'link_burst')::int then
    return false;
  end if;
  insert into app_private.dashboard_links (organization_id, person_id, token_hash, return_to, expires_at)
  values (org, person, token_hash, return_to,
          now() + make_interval(mins => (app_hidden.dashboard_lifetimes()->>'link_minutes')::int));
  perform set_config('svc.organization_id', org::text, true);
  perform app_hidden.queue_message('email', recipient, subject, body, null, jsonb_build_object('kind', 'dashboard_sign_in'));
  perform set_config('svc.organization_id', '', true);
  return true;
end $$;
comment on function app_hidden.dashboard_issue_link(uuid, uuid, bytea, text, text, text, text) is
  'Stores a sign-in link (its token''s hash) for an active person and queues its email to their address.';
revoke execute on function app_hidden.dashboard_issue_link(uuid, uuid, bytea, text, text, text, text) from public;
grant execute on function app_hidden.dashboard_issue_link(uuid, uuid, bytea, text, text, text, text) to svc_request;

-- Spends the link (once, before it expires, for a person still active) and opens a session
-- under a hash the caller chose fresh: the session id is never one the browser brought along.
create or replace function app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea)
returns table (organization_id uuid, person_id uuid, return_to text)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  l app_private.dashboard_links;
begin
  update app_private.dashboard_links d set used_at = now()
   where d.token_hash = dashboard_redeem_link.token_hash and d.used_at is null and d.expires_at > now()
  returning d.* into l;
  if not found or not exists (select 1 from app_public.people p
                               where p.organization_id = l.organization_id and p.id = l.person_id and p.active) then
    return;
  end if;
  -- the person's dead sessions and old links go at each sign-in, so neither table only grows
  delete from app_private.dashboard_sessions d
   where d.organization_id = l.organization_id and d.person_id = l.person_id and d.expires_at <= now();
  delete from app_private.dashboard_links d
   where d.organization_id = l.organization_id and d.person_id = l.person_id and d.expires_at < now() - interval '1 day';
  insert into app_private.dashboard_sessions (organization_id, person_id, session_hash, expires_at)
  values (l.organization_id, l.person_id, session_hash,
          now() + make_interval(hours => (app_hidden.dashboard_lifetimes()->>'session_hours')::int));
  return query select l.organization_id, l.person_id, l.return_to;
end $$;
comment on function app_hidden.dashboard_redeem_link(bytea, bytea) is
  'Spends a sign-in link and opens a session under a fresh hash; no row when the link is unknown, spent, expired or its person inactive.';
revoke execute on function app_hidden.dashboard_redeem_link(bytea, bytea) from public;
grant execute on function app_hidden.dashboard_redeem_link(bytea, bytea) to svc_request;

-- The session's person as they are now, with the claims of the transaction set as theirs, the
-- way app_hidden.authenticate sets a personal key's: the dashboard's writes then check the same
-- claims the API's do. Agent access is not consulted: it governs agents (keys, tokens), not the
-- person in their browser. NULL (and no claims) when the session is unknown, expired, or its
-- person deactivated.
create or replace function app_hidden.dashboard_session(session_hash bytea) returns jsonb
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_private.dashboard_sessions;
  p app_public.people;
  loc_ids uuid[];
  settings jsonb;
begin
  select * into s from app_private.dashboard_sessions d
   where d.session_hash = dashboard_session.session_hash and d.expires_at > now();
  if not found then return null; end if;
  select * into p from app_public.people x where x.organization_id = s.organization_id and x.id = s.person_id and x.active;
  if not found then return null; end if;
  if p.role in ('manager', 'member') then
    select coalesce(array_agg(location_id order by location_id), '{}') into loc_ids
      from app_public.person_locations where organization_id = p.organization_id and person_id = p.id;
  end if;
  settings := jsonb_build_object(
    'svc.organization_id', p.organization_id::text,
    'svc.credential_id', s.id::text,
    'svc.user_id', p.id::text,
    'svc.role', p.role,
    'svc.location_ids', coalesce(loc_ids::text, '*'),
    'svc.powers', (case when p.role = 'manager' then p.powers else '{}' end)::text,
    'svc.scopes', '{}',
    'svc.records_level', case when p.role = 'member' then p.records_level else 'all' end,
    'svc.sms_enabled', p.sms_enabled::text);
  perform set_config(x.key, x.value, true) from jsonb_each_text(settings) x;
  return jsonb_build_object('organization_id', p.organization_id, 'person_id', p.id, 'session_id', s.id,
    'name', p.name, 'email', p.email, 'role', p.role,
    'powers', to_jsonb(case when p.role = 'manager' then p.powers else '{}' end),
    'location_ids', to_jsonb(loc_ids));
end $$;
comment on function app_hidden.dashboard_session(bytea) is
  'The signed-in person of a live session (claims set for the transaction as theirs), or NULL.';
revoke execute on function app_hidden.dashboard_session(bytea) from public;
grant execute on function app_hidden.dashboard_session(bytea) to svc_request;

create or replace function app_hidden.dashboard_end_session(session_hash bytea) returns void
language sql security definer
set search_path to pg_catalog, public, pg_temp as $$
  delete from app_private.dashboard_sessions d where d.session_hash = dashboard_end_session.session_hash
$$;
comment on function app_hidden.dashboard_end_session(bytea) is 'Sign-out: the session is gone.';
revoke execute on function app_hidden.dashboard_end_session(bytea) from public;
grant execute on function app_hidden.dashboard_end_session(bytea) to svc_request;

-- Deactivation ends the person's sessions and unspent links at once (dashboard_session also
-- checks, for a session read in the same instant).
create or replace function app_private.tg_people__end_dashboard_sessions() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  delete from app_private.dashboard_sessions d where d.organization_id = new.organization_id and d.person_id = new.id;
  delete from app_private.dashboard_links d where d.organization_id = new.organization_id and d.person_id = new.id and d.used_at is null;
  return null;
end $$;
revoke execute on function app_private.tg_people__end_dashboard_sessions() from public;
drop trigger if exists _930_end_dashboard_sessions on app_public.people;
create trigger _930_end_dashboard_sessions after update of active on app_public.people
  for each row when (old.active and not new.active)
  execute function app_private.tg_people__end_dashboard_sessions();

reset role;

--! split: 931-dashboard-keys.sql
-- The dashboard's keys page: list, create and revoke API keys as the signed-in person, with the
-- spec's rules on who may create which (Authentication 3) checked here, from the person's row as
-- it is now, never from the form:
--   personal key                       any active person (acts for them, follows their role)
--   organization key, with or without  an owner or admin
--   a role (MANAGER / MEMBER)
--   location-limited key (always a     an owner or admin for any locations; a manager with the
--   role, MANAGER unless MEMBER)       staff power for their own locations, within their powers
-- A key takes effect, or stops, at the next API request: app_hidden.authenticate reads the row.
set local role svc_owner;

-- The signed-in person of this dashboard transaction (the claims app_hidden.dashboard_session
-- set), as they are now; 401 when the claims are not a live dashboard session's (an API key's
-- claims never are: its credential id names no session).
create or replace function app_hidden.dashboard_actor() returns app_public.people
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  p app_public.people;
begin
  select x.* into p
    from app_private.dashboard_sessions s
    join app_public.people x on x.organization_id = s.organization_id and x.id = s.person_id
   where s.id = app_hidden.current_credential_id() and s.organization_id = app_hidden.current_org_id()
     and s.person_id = app_hidden.current_user_id() and s.expires_at > now() and x.active;
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'Sign in again');
  end if;
  return p;
end $$;
comment on function app_hidden.dashboard_actor() is
  'The signed-in person of the current dashboard transaction, read afresh; 401 unless the claims are a live session''s.';
revoke execute on function app_hidden.dashboard_actor() from public;
grant execute on function app_hidden.dashboard_actor() to svc_request;

-- What kinds of key the person may create now: the page shows only these, and
-- dashboard_create_key refuses the others whatever is posted.
create or replace function app_hidden.dashboard_key_kinds(p app_public.people) returns text[]
language sql stable
set search_path to pg_catalog, public, pg_temp as $$
  select case
    when p.role in ('owner', 'admin') then array['personal', 'organization', 'organization_role', 'location_limited']
    when p.role = 'manager' and 'staff' = any(p.powers) then array['personal', 'location_limited']
    else array['personal'] end
$$;
comment on function app_hidden.dashboard_key_kinds(app_public.people) is
  'The kinds of key a person may create: personal, organization, organization_role, location_limited.';
revoke execute on function app_hidden.dashboard_key_kinds(app_public.people) from public;
grant execute on function app_hidden.dashboard_key_kinds(app_public.people) to svc_request;

-- The keys the person sees: an owner or admin every key of the organization, anyone else the
-- keys they created. Never a secret (only hashes exist).
create or replace function app_hidden.dashboard_keys()
returns table (id uuid, kind text, name text, role text, scopes text[], powers text[], locations text[],
               created_by text, created_at timestamptz, revoked_at timestamptz)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select k.id, k.kind, k.name, k.role, k.scopes, k.powers,
         array(select l.name from app_private.api_key_locations kl
                 join app_public.locations l on l.organization_id = kl.organization_id and l.id = kl.location_id
                where kl.organization_id = k.organization_id and kl.api_key_id = k.id order by l.name),
         c.name, k.created_at, k.revoked_at
    from app_hidden.dashboard_actor() me
    join app_private.api_keys k on k.organization_id = me.organization_id
    join app_public.people c on c.organization_id = k.organization_id and c.id = k.created_by
   where me.role in ('owner', 'admin') or k.created_by = me.id
   order by k.revoked_at is not null, k.created_at desc, k.id
$$;
comment on function app_hidden.dashboard_keys() is 'The keys the signed-in person sees (all for an owner or admin, else their own), without secrets.';
revoke execute on function app_hidden.dashboard_keys() from public;
grant execute on function app_hidden.dashboard_keys() to svc_request;

create or replace function app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[],
  powers text[], location_ids uuid[], key_hash bytea)
returns uuid language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_actor();
  locs uuid[] := coalesce(location_ids, '{}');
  own_locs uuid[];
  k_kind text;
  k_role text := key_role;
  k_powers text[] := coalesce(powers, '{}');
  new_id uuid;
begin
  if kind not in ('personal', 'organization', 'organization_role', 'location_limited') then
    perform app_hidden.raise_error(400, 'bad_request', 'Choose a kind of key');
  end if;
  if not (kind = any(app_hidden.dashboard_key_kinds(me))) then
    perform app_hidden.raise_error(403, 'insufficient_role', format('Your role may not create a %s key', replace(kind, '_', ' ')));
  end if;
  if coalesce(cardinality(scopes), 0) = 0 then
    perform app_hidden.raise_error(422, 'scopes_required', 'Choose at least one scope');
  end if;
  if kind = 'personal' then
    k_kind := 'personal'; k_role := null; k_powers := '{}'; locs := '{}';
  elsif kind = 'organization' then
    k_kind := 'organization'; k_role := null; k_powers := '{}'; locs := '{}';
  else
    k_kind := 'organization';
    k_role := coalesce(k_role, 'MANAGER');
    if k_role not in ('MANAGER', 'MEMBER') then
      perform app_hidden.raise_error(400, 'bad_request', 'A key''s role is MANAGER or MEMBER');
    end if;
    if kind = 'organization_role' then locs := '{}'; end if;
    if kind = 'location_limited' and cardinality(locs) = 0 then
      perform app_hidden.raise_error(422, 'locations_required', 'Choose at least one location');
    end if;
    if k_role = 'MEMBER' then k_powers := '{}'; end if;
  end if;
  if cardinality(locs) > 0 and (select count(*) from app_public.locations l
                                 where l.organization_id = me.organization_id and l.id = any(locs)) <> cardinality(locs) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if me.role = 'manager' then
    select coalesce(array_agg(pl.location_id), '{}') into own_locs from app_public.person_locations pl
     where pl.organization_id = me.organization_id and pl.person_id = me.id;
    if k_kind = 'organization' and not (locs <@ own_locs) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager limits a key to their own locations');
    end if;
    if not (k_powers <@ me.powers) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager gives a key only powers they hold');
    end if;
  end if;
  insert into app_private.api_keys (organization_id, kind, name, created_by, role, scopes, powers, key_hash)
  values (me.organization_id, k_kind, nullif(btrim(name), ''), me.id, k_role, scopes, k_powers, key_hash)
  returning id into new_id;
  insert into app_private.api_key_locations (organization_id, api_key_id, location_id)
  select me.organization_id, new_id, l from unnest(locs) l group by l;
  -- the same rule that revokes a key when its creator changes (migration 000001)
  if k_kind = 'organization' and not (select app_private.person_may_hold_key(me, k) from app_private.api_keys k
                                        where k.organization_id = me.organization_id and k.id = new_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Your role may not create this key');
  end if;
  return new_id;
end $$;
comment on function app_hidden.dashboard_create_key(text, text, text, text[], text[], uuid[], bytea) is
  'Creates a key (kind: personal, organization, organization_role, location_limited) as the signed-in person, within the spec''s rules; only its hash is stored.';
revoke execute on function app_hidden.dashboard_create_key(text, text, text, text[], text[], uuid[], bytea) from public;
grant execute on function app_hidden.dashboard_create_key(text, text, text, text[], text[], uuid[], bytea) to svc_request;

-- Revocation is permanent. An owner or admin revokes any key of the organization, anyone else
-- their own; another key is 404, as if absent.
create or replace function app_hidden.dashboard_revoke_key(key_id uuid) returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  update app_private.api_keys k set revoked_at = coalesce(k.revoked_at, now())
   where k.organization_id = me.organization_id and k.id = key_id
     and (me.role in ('owner', 'admin') or k.created_by = me.id);
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Key not found');
  end if;
end $$;
comment on function app_hidden.dashboard_revoke_key(uuid) is 'Revokes a key the signed-in person may revoke (any for an owner or admin, else their own).';
revoke execute on function app_hidden.dashboard_revoke_key(uuid) from public;
grant execute on function app_hidden.dashboard_revoke_key(uuid) to svc_request;

-- The locations the person may limit a key to: all for an owner or admin, their own for a manager.
create or replace function app_hidden.dashboard_key_locations() returns table (id uuid, name text)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select l.id, l.name
    from app_hidden.dashboard_actor() me
    join app_public.locations l on l.organization_id = me.organization_id
   where me.role in ('owner', 'admin') or exists (select 1 from app_public.person_locations pl
           where pl.organization_id = l.organization_id and pl.person_id = me.id and pl.location_id = l.id)
   order by l.name, l.id
$$;
revoke execute on function app_hidden.dashboard_key_locations() from public;
grant execute on function app_hidden.dashboard_key_locations() to svc_request;

reset role;

--! split: 932-dashboard-team.sql
-- The dashboard's people, agent access and organization pages. Only an owner or admin changes
-- them (checked here from the signed-in person's row as it is now, never from the form), and
-- the rules the operator CLI follows apply (src/admin/commands.ts): powers belong to managers
-- (a new role clears them), locations are the organization's, an owner's agent access is
-- always on. Beyond the CLI, which the operator runs as the owner of everything, the dashboard
-- keeps people from locking the organization out: an admin neither changes an owner nor makes
-- one, and the last active owner stays an active owner. Every change is read by the next API
-- request (app_hidden.authenticate reads people, person_locations and role_agent_access), and
-- the triggers of migration 000001 revoke the organization keys a person can no longer hold.
set local role svc_owner;

-- 403 unless the signed-in person is an owner or admin; the person otherwise.
create or replace function app_hidden.dashboard_manager_of_team() returns app_public.people
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  if me.role not in ('owner', 'admin') then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner or admin manages the team and the organization');
  end if;
  return me;
end $$;
revoke execute on function app_hidden.dashboard_manager_of_team() from public;
grant execute on function app_hidden.dashboard_manager_of_team() to svc_request;

-- The people the signed-in person sees: everyone for an owner or admin, else themselves.
create or replace function app_hidden.dashboard_people()
returns table (id uuid, name text, email text, role text, powers text[], sms_enabled boolean, records_level text,
               agent_access boolean, active boolean, location_ids uuid[])
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select p.id, p.name, p.email::text, p.role, p.powers, p.sms_enabled, p.records_level, p.agent_access, p.active,
         array(select pl.location_id from app_public.person_locations pl
                where pl.organization_id = p.organization_id and pl.person_id = p.id order by pl.location_id)
    from app_hidden.dashboard_actor() me
    join app_public.people p on p.organization_id = me.organization_id
   where me.role in ('owner', 'admin') or p.id = me.id
   order by p.active desc, p.name, p.id
$$;
revoke execute on function app_hidden.dashboard_people() from public;
grant execute on function app_hidden.dashboard_people() to svc_request;

create or replace function app_hidden.dashboard_locations() returns table (id uuid, name text)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select l.id, l.name from app_hidden.dashboard_actor() me
    join app_public.locations l on l.organization_id = me.organization_id
   order by l.name, l.id
$$;
revoke execute on function app_hidden.dashboard_locations() from public;
grant execute on function app_hidden.dashboard_locations() to svc_request;

create or replace function app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[],
  new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean)
returns void language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
  p app_public.people;
  locs uuid[] := coalesce(location_ids, '{}');
begin
  select * into p from app_public.people x where x.organization_id = me.organization_id and x.id = person_id for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Person not found');
  end if;
  if new_role not in ('owner', 'admin', 'manager', 'member') or new_records_level not in ('all', 'own')
     or not (coalesce(new_powers, '{}') <@ array['contacts', 'sequences', 'appointments', 'staff']) then
    perform app_hidden.raise_error(400, 'bad_request', 'Choose a role, powers and records level the service knows');
  end if;
  if me.role <> 'owner' and (p.role = 'owner' or new_role = 'owner') then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner changes an owner or makes one');
  end if;
  if p.role = 'owner' and p.active and (new_role <> 'owner' or not new_active)
     and not exists (select 1 from app_public.people o where o.organization_id = p.organization_id
                      and o.id <> p.id and o.role = 'owner' and o.active) then
    perform app_hidden.raise_error(409, 'last_owner', 'The organization keeps at least one active owner');
  end if;
  if new_role = 'owner' and not new_agent_access then
    perform app_hidden.raise_error(422, 'owner_agent_access', 'An owner''s agent access is always on');
  end if;
  if (select count(*) from app_public.locations l where l.organization_id = p.organization_id and l.id = any(locs))
     <> (select count(distinct x) from unnest(locs) x) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  -- locations first: their trigger revokes the organization keys the person can no longer hold
  delete from app_public.person_locations pl
   where pl.organization_id = p.organization_id and pl.person_id = p.id and pl.location_id <> all(locs);
  insert into app_public.person_locations (organization_id, person_id, location_id)
  select p.organization_id, p.id, x from unnest(locs) x group by x
  on conflict do nothing;
  update app_public.people x set
    role = new_role,
    powers = case when new_role = 'manager' then coalesce(new_powers, '{}') else '{}' end,
    sms_enabled = new_sms_enabled,
    records_level = new_records_level,
    agent_access = new_role = 'owner' or new_agent_access,
    active = new_active,
    updated_at = now()
   where x.organization_id = p.organization_id and x.id = p.id;
end $$;
comment on function app_hidden.dashboard_update_person(uuid, text, uuid[], text[], boolean, text, boolean, boolean) is
  'An owner or admin sets a person''s role, locations, powers, SMS setting, records level, agent access and activity.';
revoke execute on function app_hidden.dashboard_update_person(uuid, text, uuid[], text[], boolean, text, boolean, boolean) from public;
grant execute on function app_hidden.dashboard_update_person(uuid, text, uuid[], text[], boolean, text, boolean, boolean) to svc_request;

-- Agent access per role (absent row: on). An owner's is always on, so there is no owner row.
create or replace function app_hidden.dashboard_role_access() returns table (role text, agent_access boolean)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select r.role, coalesce(a.agent_access, true)
    from app_hidden.dashboard_manager_of_team() me
   cross join unnest(array['admin', 'manager', 'member']) with ordinality r(role, n)
    left join app_public.role_agent_access a on a.organization_id = me.organization_id and a.role = r.role
   order by r.n
$$;
revoke execute on function app_hidden.dashboard_role_access() from public;
grant execute on function app_hidden.dashboard_role_access() to svc_request;

create or replace function app_hidden.dashboard_set_role_access(for_role text, on_off boolean) returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  if for_role not in ('admin', 'manager', 'member') then
    perform app_hidden.raise_error(422, 'owner_agent_access', 'An owner''s agent access is always on');
  end if;
  insert into app_public.role_agent_access (organization_id, role, agent_access) values (me.organization_id, for_role, on_off)
  on conflict (organization_id, role) do update set agent_access = excluded.agent_access;
end $$;
revoke execute on function app_hidden.dashboard_set_role_access(text, boolean) from public;
grant execute on function app_hidden.dashboard_set_role_access(text, boolean) to svc_request;

create or replace function app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text,
  new_default_sms_number text) returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  update app_public.organizations o set mcp_enabled = new_mcp_enabled,
         sending_email_domain = nullif(btrim(new_sending_email_domain), ''),
         default_sms_number = nullif(btrim(new_default_sms_number), '')
   where o.id = me.organization_id;
end $$;
comment on function app_hidden.dashboard_update_organization(boolean, text, text) is
  'An owner or admin turns MCP on or off and sets the sending domain and default SMS number (validated by the page).';
revoke execute on function app_hidden.dashboard_update_organization(boolean, text, text) from public;
grant execute on function app_hidden.dashboard_update_organization(boolean, text, text) to svc_request;

reset role;

--! split: 950-oauth-tables.sql
-- The OAuth 2.1 authorization server for MCP clients (src/oauth/): clients, grants (one per
-- approval: a "connected app"), authorization codes and tokens. Everything secret is stored as
-- a SHA-256 hash; the tables are app_private and reached only through the security-definer
-- functions of 951-oauth-flow.sql, called by the server's OAuth endpoints with values it has
-- validated. A token is never more than a pointer to its grant: what it may do is resolved on
-- every request by app_hidden.authenticate from the person's current role, locations and switches.
set local role svc_owner;

create table if not exists app_private.oauth_clients (
  -- a generated id for a registered client, the document's https URL for a metadata document
  client_id text primary key check (length(client_id) between 1 and 2048),
  registration text not null check (registration in ('dynamic', 'metadata_document')),
  client_name text check (length(client_name) <= 200),
  client_uri text check (length(client_uri) <= 2048),
  redirect_uris text[] not null check (cardinality(redirect_uris) between 1 and 20),
  -- when a metadata document was last fetched (its cache entry); null for a registered client
  fetched_at timestamptz,
  created_at timestamptz not null default now()
);
comment on table app_private.oauth_clients is
  'OAuth clients: registered through RFC 7591 (public clients, no secret) or described by a client ID metadata document (cached copy).';

create table if not exists app_private.oauth_grants (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null,
  person_id uuid not null,
  client_id text not null references app_private.oauth_clients on delete cascade,
  scopes text[] not null,
  -- the RFC 8707 resource the person approved; every code and token of the grant is bound to it
  resource text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);
create index if not exists oauth_grants_person on app_private.oauth_grants (organization_id, person_id);
comment on table app_private.oauth_grants is
  'One approval of a client by a person (a connected app). Revoking it (the person, a reused code or refresh token) ends every token of it.';

-- A consent in progress: the validated authorization request, for the person who is signed in.
create table if not exists app_private.oauth_requests (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null,
  person_id uuid not null,
  client_id text not null references app_private.oauth_clients on delete cascade,
  redirect_uri text not null,
  state text,
  code_challenge text not null,
  resource text not null,
  scopes text[] not null,
  expires_at timestamptz not null,
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);

create table if not exists app_private.oauth_codes (
  code_hash bytea primary key check (length(code_hash) = 32),
  grant_id uuid not null references app_private.oauth_grants on delete cascade,
  redirect_uri text not null,
  code_challenge text not null,
  expires_at timestamptz not null,
  used_at timestamptz
);

create table if not exists app_private.oauth_tokens (
  -- access tokens: sha256(resource || LF || token), so a token only resolves where it was issued for;
  -- refresh tokens: sha256(token)
  token_hash bytea primary key check (length(token_hash) = 32),
  grant_id uuid not null references app_private.oauth_grants on delete cascade,
  kind text not null check (kind in ('access', 'refresh')),
  expires_at timestamptz not null,
  -- a refresh token once exchanged; presenting it again revokes the grant
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index if not exists oauth_tokens_grant on app_private.oauth_tokens (grant_id);
comment on table app_private.oauth_tokens is
  'Opaque OAuth tokens by hash. Access tokens live at most an hour; refresh tokens rotate on every use.';

-- Deactivation ends a person's OAuth grants for good (leaving deletes them with the person);
-- while inactive, app_hidden.authenticate refuses their tokens anyway.
create or replace function app_hidden.oauth_revoke_on_deactivation() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_private.oauth_grants set revoked_at = now()
   where organization_id = new.organization_id and person_id = new.id and revoked_at is null;
  return null;
end $$;
drop trigger if exists oauth_revoke_on_deactivation on app_public.people;
create trigger oauth_revoke_on_deactivation after update of active on app_public.people
  for each row when (old.active and not new.active) execute function app_hidden.oauth_revoke_on_deactivation();

-- No policies: svc_request reads and writes none of these rows itself; the security-definer
-- functions of 951-953 (owned by svc_owner) are the only way in.
alter table app_private.oauth_clients enable row level security;
alter table app_private.oauth_grants enable row level security;
alter table app_private.oauth_requests enable row level security;
alter table app_private.oauth_codes enable row level security;
alter table app_private.oauth_tokens enable row level security;

--! split: 951-oauth-flow.sql
-- The OAuth flow's database half. The endpoints (src/oauth/) validate every parameter first
-- and hash every secret; these functions keep the rules that need the rows: a code is used
-- once (a second use revokes its grant), PKCE and redirect URI match the code, a refresh token
-- rotates (a second use revokes its grant), the resource matches the grant. Refusals are
-- answered as {error, error_description} rather than raised, so that a revocation they make
-- is committed.
set local role svc_owner;

create or replace function app_hidden.oauth_save_client(
  client_id text, registration text, client_name text, client_uri text, redirect_uris text[]
) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  insert into app_private.oauth_clients (client_id, registration, client_name, client_uri, redirect_uris, fetched_at)
  values ($1, $2, $3, $4, $5, case when $2 = 'metadata_document' then now() end)
  on conflict (client_id) do update
     set client_name = excluded.client_name, client_uri = excluded.client_uri,
         redirect_uris = excluded.redirect_uris, fetched_at = excluded.fetched_at
   where oauth_clients.registration = 'metadata_document'
$$;
comment on function app_hidden.oauth_save_client(text, text, text, text, text[]) is
  'Registers a client, or refreshes the cached copy of a client ID metadata document.';
revoke execute on function app_hidden.oauth_save_client(text, text, text, text, text[]) from public;
grant execute on function app_hidden.oauth_save_client(text, text, text, text, text[]) to svc_request;

create or replace function app_hidden.oauth_client(client_id text) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('client_id', c.client_id, 'registration', c.registration, 'client_name', c.client_name,
           'client_uri', c.client_uri, 'redirect_uris', to_jsonb(c.redirect_uris),
           'fetched_age_s', extract(epoch from now() - c.fetched_at))
    from app_private.oauth_clients c where c.client_id = oauth_client.client_id
$$;
comment on function app_hidden.oauth_client(text) is 'A client as the authorization endpoint needs it, or NULL.';
revoke execute on function app_hidden.oauth_client(text) from public;
grant execute on function app_hidden.oauth_client(text) to svc_request;

-- The signed-in person as consent needs them: null when they may not use agents now.
create or replace function app_hidden.oauth_person(organization_id uuid, person_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('organization_id', p.organization_id, 'person_id', p.id, 'organization_name', o.name,
           'role', p.role, 'powers', to_jsonb(case when p.role = 'manager' then p.powers else '{}' end),
           'sms_enabled', p.sms_enabled)
    from app_public.people p
    join app_public.organizations o on o.id = p.organization_id
    left join app_public.role_agent_access r on r.organization_id = p.organization_id and r.role = p.role
   where p.organization_id = oauth_person.organization_id and p.id = oauth_person.person_id and p.active
     and (p.role = 'owner' or (p.agent_access and coalesce(r.agent_access, true)))
$$;
comment on function app_hidden.oauth_person(uuid, uuid) is
  'The person about to approve a client (role, powers, SMS setting), or NULL when inactive or agent access is off.';
revoke execute on function app_hidden.oauth_person(uuid, uuid) from public;
grant execute on function app_hidden.oauth_person(uuid, uuid) to svc_request;

create or replace function app_hidden.oauth_begin(
  organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text,
  code_challenge text, resource text, scopes text[]
) returns uuid
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  delete from app_private.oauth_requests where expires_at < now();
  insert into app_private.oauth_requests (organization_id, person_id, client_id, redirect_uri, state, code_challenge, resource, scopes, expires_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8, now() + interval '10 minutes')
  returning id
$$;
comment on function app_hidden.oauth_begin(uuid, uuid, text, text, text, text, text, text[]) is
  'Keeps a validated authorization request for ten minutes while its person decides.';
revoke execute on function app_hidden.oauth_begin(uuid, uuid, text, text, text, text, text, text[]) from public;
grant execute on function app_hidden.oauth_begin(uuid, uuid, text, text, text, text, text, text[]) to svc_request;

-- The person's decision on their own pending request (taken once): on approval, the grant and
-- its code (sixty seconds). Answers the request (redirect_uri, state) or NULL when there is no
-- such pending request of this person.
create or replace function app_hidden.oauth_decide(
  organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea
) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r app_private.oauth_requests;
  g uuid;
begin
  delete from app_private.oauth_requests q
   where q.id = oauth_decide.request_id and q.organization_id = oauth_decide.organization_id
     and q.person_id = oauth_decide.person_id and q.expires_at >= now()
  returning * into r;
  if not found then return null; end if;
  if approve then
    insert into app_private.oauth_grants (organization_id, person_id, client_id, scopes, resource)
    values (r.organization_id, r.person_id, r.client_id, r.scopes, r.resource) returning id into g;
    insert into app_private.oauth_codes (code_hash, grant_id, redirect_uri, code_challenge, expires_at)
    values (oauth_decide.code_hash, g, r.redirect_uri, r.code_challenge, now() + interval '60 seconds');
  end if;
  return jsonb_build_object('redirect_uri', r.redirect_uri, 'state', r.state);
end $$;
revoke execute on function app_hidden.oauth_decide(uuid, uuid, uuid, boolean, bytea) from public;
grant execute on function app_hidden.oauth_decide(uuid, uuid, uuid, boolean, bytea) to svc_request;

-- A new access and refresh token for the grant; its tokens expired over a day ago go (a used
-- refresh token is kept until then, for reuse detection).
create or replace function app_hidden.oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds int, refresh_seconds int)
returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  delete from app_private.oauth_tokens t where t.grant_id = $1 and t.expires_at < now() - interval '1 day';
  delete from app_private.oauth_codes c where c.grant_id = $1 and c.expires_at < now() - interval '1 day';
  insert into app_private.oauth_tokens (token_hash, grant_id, kind, expires_at)
  values ($2, $1, 'access', now() + make_interval(secs => $4)),
         ($3, $1, 'refresh', now() + make_interval(secs => $5))
$$;
revoke execute on function app_hidden.oauth_issue(uuid, bytea, bytea, int, int) from public;

create or replace function app_hidden.oauth_refusal(error text, description text) returns jsonb
language sql immutable as $$ select jsonb_build_object('error', error, 'error_description', description) $$;

-- What a code and a refresh token are both checked for first: issued to this client, and not
-- presented before (OAuth 2.1 4.1.3 and 4.3.1: a second presentation revokes the grant, since
-- one of the two presenters is not who the grant was for).
create or replace function app_hidden.oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamptz, what text)
returns jsonb
language plpgsql volatile
set search_path to pg_catalog, public, pg_temp as $$
begin
  if g.client_id <> oauth_presented.client_id then
    return app_hidden.oauth_refusal('invalid_grant', format('The %s was issued to another client', what));
  end if;
  if used_at is not null then
    update app_private.oauth_grants set revoked_at = coalesce(revoked_at, now()) where id = g.id;
    return app_hidden.oauth_refusal('invalid_grant', format('The %s was already used: the grant is revoked', what));
  end if;
  return null;
end $$;
revoke execute on function app_hidden.oauth_presented(app_private.oauth_grants, text, timestamptz, text) from public;

-- authorization_code: the code once, for its client, redirect URI, PKCE challenge and resource.
create or replace function app_hidden.oauth_exchange_code(
  code_hash bytea, client_id text, redirect_uri text, challenge text, resource text,
  access_hash bytea, refresh_hash bytea, access_seconds int, refresh_seconds int
) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  c app_private.oauth_codes;
  g app_private.oauth_grants;
  refusal jsonb;
begin
  select * into c from app_private.oauth_codes where oauth_codes.code_hash = oauth_exchange_code.code_hash for update;
  if not found then return app_hidden.oauth_refusal('invalid_grant', 'Unknown authorization code'); end if;
  select * into g from app_private.oauth_grants where id = c.grant_id;
  refusal := app_hidden.oauth_presented(g, oauth_exchange_code.client_id, c.used_at, 'authorization code');
  if refusal is not null then return refusal; end if;
  update app_private.oauth_codes set used_at = now() where oauth_codes.code_hash = c.code_hash;
  if c.expires_at < now() or g.revoked_at is not null then
    return app_hidden.oauth_refusal('invalid_grant', 'The authorization code has expired');
  end if;
  if c.redirect_uri <> oauth_exchange_code.redirect_uri then
    return app_hidden.oauth_refusal('invalid_grant', 'redirect_uri does not match the authorization request');
  end if;
  if c.code_challenge <> oauth_exchange_code.challenge then
    return app_hidden.oauth_refusal('invalid_grant', 'code_verifier does not match the code challenge');
  end if;
  if g.resource <> oauth_exchange_code.resource then
    return app_hidden.oauth_refusal('invalid_target', 'resource does not match the authorization request');
  end if;
  perform app_hidden.oauth_issue(g.id, access_hash, refresh_hash, access_seconds, refresh_seconds);
  return jsonb_build_object('scopes', to_jsonb(g.scopes), 'resource', g.resource);
end $$;
revoke execute on function app_hidden.oauth_exchange_code(bytea, text, text, text, text, bytea, bytea, int, int) from public;
grant execute on function app_hidden.oauth_exchange_code(bytea, text, text, text, text, bytea, bytea, int, int) to svc_request;

-- refresh_token: rotation; a token presented a second time revokes the grant (it was stolen, or
-- its holder was). The person must still be allowed agents, else invalid_grant.
create or replace function app_hidden.oauth_refresh(
  refresh_hash bytea, client_id text, resource text,
  access_hash bytea, new_refresh_hash bytea, access_seconds int, refresh_seconds int
) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  t app_private.oauth_tokens;
  g app_private.oauth_grants;
  refusal jsonb;
begin
  select * into t from app_private.oauth_tokens
   where token_hash = oauth_refresh.refresh_hash and kind = 'refresh' for update;
  if not found then return app_hidden.oauth_refusal('invalid_grant', 'Unknown refresh token'); end if;
  select * into g from app_private.oauth_grants where id = t.grant_id;
  refusal := app_hidden.oauth_presented(g, oauth_refresh.client_id, t.used_at, 'refresh token');
  if refusal is not null then return refusal; end if;
  if g.revoked_at is not null then return app_hidden.oauth_refusal('invalid_grant', 'The grant was revoked'); end if;
  if t.expires_at < now() then return app_hidden.oauth_refusal('invalid_grant', 'The refresh token has expired'); end if;
  if g.resource <> oauth_refresh.resource then
    return app_hidden.oauth_refusal('invalid_target', 'resource does not match the grant');
  end if;
  if app_hidden.oauth_person(g.organization_id, g.person_id) is null then
    return app_hidden.oauth_refusal('invalid_grant', 'The person may not use agents now');
  end if;
  update app_private.oauth_tokens set used_at = now() where token_hash = t.token_hash;
  perform app_hidden.oauth_issue(g.id, access_hash, new_refresh_hash, access_seconds, refresh_seconds);
  return jsonb_build_object('scopes', to_jsonb(g.scopes), 'resource', g.resource);
end $$;
revoke execute on function app_hidden.oauth_refresh(bytea, text, text, bytea, bytea, int, int) from public;
grant execute on function app_hidden.oauth_refresh(bytea, text, text, bytea, bytea, int, int) to svc_request;

--! split: 952-oauth-authenticate.sql
-- app_hidden.authenticate, as committed in 000013, plus OAuth access tokens: a hash that is no
-- API key's may be a live access token of a live grant, which then acts exactly as a personal
-- key of the person who approved it (their current role, locations, powers, SMS setting and
-- agent access switches), with the grant's scopes, and carries oauth_client in its claims.
-- API keys resolve exactly as before. The token's resource is in its hash (950-oauth-tables.sql):
-- the server hashes what it is sent with its own resource, so a token for another resource
-- finds no row.
set local role svc_owner;

create or replace function app_hidden.authenticate(
  key_hash bytea,
  required_scope text,
  member_access text,
  manager_power text
) returns jsonb
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  k app_private.api_keys;
  p app_public.people;
  eff_role text;
  loc_ids uuid[];
  powers text[];
  sms_enabled boolean := true;
  records_level text := 'all';
  role_switch boolean;
  settings jsonb;
  refusal jsonb;
  oauth_client jsonb;
begin
  select * into k from app_private.api_keys where api_keys.key_hash = authenticate.key_hash;
  if not found then
    -- an OAuth access token: the grant seen as a personal key of its person
    select g.organization_id, g.id, 'personal', g.person_id, g.scopes,
           jsonb_build_object('client_id', c.client_id, 'client_name', c.client_name, 'scopes', to_jsonb(g.scopes))
      into k.organization_id, k.id, k.kind, k.created_by, k.scopes, oauth_client
      from app_private.oauth_tokens t
      join app_private.oauth_grants g on g.id = t.grant_id
      join app_private.oauth_clients c on c.client_id = g.client_id
     where t.token_hash = authenticate.key_hash and t.kind = 'access'
       and t.expires_at > now() and g.revoked_at is null;
    if not found then
      perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
    end if;
  elsif k.revoked_at is not null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;

  select * into p from app_public.people
   where organization_id = k.organization_id and id = k.created_by;

  if k.kind = 'personal' then
    select r.agent_access into role_switch from app_public.role_agent_access r
     where r.organization_id = p.organization_id and r.role = p.role;
    if p.id is null or not p.active
       or (p.role <> 'owner' and (not p.agent_access or not coalesce(role_switch, true))) then
      perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
    end if;
    eff_role := p.role;
    sms_enabled := p.sms_enabled;
    if p.role in ('manager', 'member') then
      select coalesce(array_agg(location_id order by location_id), '{}') into loc_ids
        from app_public.person_locations
       where organization_id = p.organization_id and person_id = p.id;
      records_level := case when p.role = 'member' then p.records_level else 'all' end;
      powers := case when p.role = 'manager' then p.powers else '{}' end;
    end if;
  else
    eff_role := coalesce(lower(k.role), 'organization');
    select array_agg(location_id order by location_id) into loc_ids
      from app_private.api_key_locations
     where organization_id = k.organization_id and api_key_id = k.id;
    powers := case when k.role = 'MANAGER' then k.powers else '{}' end;
    -- a Member key sends no SMS
    sms_enabled := k.role is distinct from 'MEMBER';
  end if;

  -- Every claim as the text of its setting, set from this one object and answered with it.
  settings := jsonb_build_object(
    'svc.organization_id', k.organization_id::text,
    'svc.credential_id', k.id::text,
    'svc.user_id', case when k.kind = 'personal' then p.id::text else '' end,
    'svc.role', eff_role,
    'svc.location_ids', coalesce(loc_ids::text, '*'),
    'svc.powers', coalesce(powers, '{}')::text,
    'svc.scopes', k.scopes::text,
    'svc.records_level', records_level,
    'svc.sms_enabled', sms_enabled::text);
  perform set_config(s.key, s.value, true) from jsonb_each_text(settings) s;

  refusal := app_hidden.requirement_refusal(required_scope, member_access, manager_power);
  if refusal is not null then
    perform app_hidden.raise_error((refusal->>'status')::int, refusal->>'error', refusal->>'message', refusal->'extra');
  end if;

  return jsonb_build_object(
    'organization_id', k.organization_id,
    'credential_id', k.id,
    'kind', k.kind,
    'user_id', case when k.kind = 'personal' then p.id end,
    'role', eff_role,
    'key_role', case when eff_role in ('manager', 'member') then upper(eff_role) end,
    'location_ids', to_jsonb(loc_ids),
    'powers', case when eff_role = 'manager' then to_jsonb(powers) end,
    'scopes', to_jsonb(k.scopes),
    'records_level', records_level,
    'sms_enabled', sms_enabled,
    'settings', settings
  ) || case when oauth_client is not null then jsonb_build_object('oauth_client', oauth_client) else '{}' end;
end $$;
comment on function app_hidden.authenticate(bytea, text, text, text) is
  'Resolves a key hash (an API key''s, or an OAuth access token''s as a personal key of its grant''s person), sets the svc.* claims for the transaction, enforces the operation''s requirements '
  '(app_hidden.requirement_refusal), and answers the claims with the exact settings it set (settings).';
grant execute on function app_hidden.authenticate(bytea, text, text, text) to svc_request;

--! split: 953-oauth-connected-apps.sql
-- The dashboard's connected apps page (src/oauth/connected-apps.ts): the OAuth grants a person
-- sees, and revoking one. Run in a dashboard transaction under the signed-in person's session
-- claims (app_hidden.dashboard_actor, 931-dashboard-keys.sql): a person sees and revokes their
-- own grants; an owner or admin also everyone's in the organization.
set local role svc_owner;

create or replace function app_hidden.oauth_connected_apps()
returns table (id uuid, client_id text, client_name text, person_name text, own boolean, scopes text[], created_at timestamptz)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  return query
    select g.id, c.client_id, c.client_name, p.name, p.id = me.id, g.scopes, g.created_at
      from app_private.oauth_grants g
      join app_private.oauth_clients c on c.client_id = g.client_id
      join app_public.people p on p.organization_id = g.organization_id and p.id = g.person_id
     where g.organization_id = me.organization_id and g.revoked_at is null
       and (g.person_id = me.id or me.role in ('owner', 'admin'))
     order by p.id = me.id desc, p.name, g.created_at desc;
end $$;
comment on function app_hidden.oauth_connected_apps() is
  'The live OAuth grants the signed-in person may see: their own, and for an owner or admin everyone''s in the organization.';
revoke execute on function app_hidden.oauth_connected_apps() from public;
grant execute on function app_hidden.oauth_connected_apps() to svc_request;

create or replace function app_hidden.oauth_revoke_grant(grant_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  update app_private.oauth_grants g set revoked_at = now()
   where g.id = oauth_revoke_grant.grant_id and g.organization_id = me.organization_id and g.revoked_at is null
     and (g.person_id = me.id or me.role in ('owner', 'admin'));
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Connected app not found');
  end if;
end $$;
comment on function app_hidden.oauth_revoke_grant(uuid) is
  'Revokes a grant the signed-in person may see: its tokens get 401 and its refresh tokens invalid_grant from now on.';
revoke execute on function app_hidden.oauth_revoke_grant(uuid) from public;
grant execute on function app_hidden.oauth_revoke_grant(uuid) to svc_request;

--! split: 990-analyst-grants.sql
-- What the analyst role may reach, settled after the tables of the migration in progress exist
-- (the last file of the migration, so that every table created before it is covered; a table
-- created later needs the same grant, and test/platform/analysts.test.ts fails until it has it):
--
--   every table of app_public, under its row-level policies (RLS is on for each of them:
--   test/platform/rls.test.ts), and the views of app_analytics (911);
--   the app_hidden helpers those tables' SELECT policies call, found in the catalog as
--   000012's last file finds them, and nothing else to execute;
--   no app_private (key hashes, idempotency records, form and OAuth secrets, the outbox, the
--   analysts mapping itself), no graphile_worker, no write anywhere.
--
-- Each analyst login role gets, from `svc admin analyst create`, a connection limit, a
-- statement_timeout and default_transaction_read_only of its own (role attributes and settings,
-- written on the primary and replayed by replicas); svc_analyst itself is nologin.
set local role svc_owner;

revoke all on schema app_private from svc_analyst;
revoke all on all tables in schema app_private from svc_analyst;
revoke insert, update, delete, truncate, references, trigger on all tables in schema app_public from svc_analyst;
grant select on all tables in schema app_public to svc_analyst;
revoke all on schema app_analytics from svc_request, svc_worker;

do $$
declare
  helper record;
begin
  for helper in
    with recursive used (fn) as (
      select p.oid
        from pg_catalog.pg_policy pol
        join pg_catalog.pg_class c on c.oid = pol.polrelid
        cross join lateral regexp_matches(pg_catalog.pg_get_expr(pol.polqual, pol.polrelid), 'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
       where c.relnamespace = 'app_public'::regnamespace and pol.polcmd in ('r', '*') and pol.polqual is not null
      union
      select p.oid
        from used
        join pg_catalog.pg_proc caller on caller.oid = used.fn and not caller.prosecdef
        cross join lateral regexp_matches(caller.prosrc, 'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
    )
    select distinct fn::regprocedure as fn from used
  loop
    execute format('grant execute on function %s to svc_analyst', helper.fn);
  end loop;
end $$;

reset role;
