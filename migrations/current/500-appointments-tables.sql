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
