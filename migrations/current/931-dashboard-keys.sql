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
