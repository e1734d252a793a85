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
