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
