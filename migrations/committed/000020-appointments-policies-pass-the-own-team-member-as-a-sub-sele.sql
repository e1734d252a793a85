--! Previous: sha1:8caa7de75430521b59e8da9b2e1ed378f0c891a6
--! Hash: sha1:2fa543ceb4029e8ebfa4529e8582e6ca62f2eb84
--! Message: Appointments policies pass the own team member as a sub-select, so their helper is inlined; location-wide blocks get their own index

--! split: 010-booking-path.sql
-- What a booking paid for helpers on its path (docs/appointments-booking.md, "Performance"; a
-- function profile of appointments_create on one connection):
--  - app_hidden.current_reads_team_member, in the appointments policies that a booking meets
--    through INSERT … RETURNING, took 0.1 ms a call: a SQL function whose body holds a sub-select
--    is never inlined, so it was planned again in every statement that met it. The sub-select
--    (the credential's own team member) moves into the policies, where it is an InitPlan run at
--    most once a statement and only when the rest does not already decide; the function, now
--    without it, is inlined.
--  - app_hidden.current_staff_profile_id, a SQL definer (never inlined: planned at each call),
--    is PL/pgSQL, its plan cached.
--  - The check for a location-wide block over a booking's time (held_by_blocks_or_series)
--    searched the GiST index of every booked appointment of the location (30 pages of 96 for an
--    empty window); location-wide blocks are few and get an index of their own.
set local role svc_owner;

create or replace function app_hidden.current_staff_profile_id() returns uuid
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return (select sp.id from app_public.staff_profiles sp
           where sp.organization_id = app_hidden.current_org_id() and sp.person_id = app_hidden.current_user_id());
end $$;

create or replace function app_hidden.current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid)
returns boolean
language sql stable parallel safe as $$
  select app_hidden.current_role() is distinct from 'member'
      or app_hidden.current_records_level() <> 'own'
      or (staff_profile_id is not null and staff_profile_id = own_staff_profile_id)
$$;
comment on function app_hidden.current_reads_team_member(uuid, uuid) is
  'Whether the credential reads appointments of this team member (own-records MEMBERs only their own: own_staff_profile_id, '
  'the credential''s app_hidden.current_staff_profile_id(), which a policy passes as a sub-select run once).';
revoke execute on function app_hidden.current_reads_team_member(uuid, uuid) from public;
grant execute on function app_hidden.current_reads_team_member(uuid, uuid) to svc_request, svc_worker, svc_analyst;

drop policy if exists select_in_reach on app_public.appointments;
create policy select_in_reach on app_public.appointments for select using (
  organization_id = (select app_hidden.current_org_id())
  and ((select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[]))
  and app_hidden.current_reads_team_member(staff_profile_id, (select app_hidden.current_staff_profile_id())));
drop policy if exists update_in_reach on app_public.appointments;
create policy update_in_reach on app_public.appointments for update using (
  organization_id = (select app_hidden.current_org_id())
  and ((select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[]))
  and app_hidden.current_reads_team_member(staff_profile_id, (select app_hidden.current_staff_profile_id())))
  with check (organization_id = (select app_hidden.current_org_id()));

drop function if exists app_hidden.current_reads_team_member(uuid);

create index if not exists appointments_location_blocks on app_public.appointments
  using gist (organization_id, location_id, during)
  where status = 'booked' and kind = 'block' and rrule is null and staff_profile_id is null and calendar_id is null;
comment on index app_public.appointments_location_blocks is
  'Booked one-off blocks of a whole location (no team member, no calendar): what closes a location''s time for everyone.';

reset role;
