--! Previous: -
--! Hash: sha1:c3c9b7598e2b6670c99da9b5a7737a28323c265b
--! Message: foundation: roles, claims, tenancy, credentials

-- Foundation: roles, schemas, request claims, tenancy and credentials.
--
-- Roles (cluster-wide, so they are created only when absent; several databases of one
-- cluster share them):
--   svc_owner    owns every object; runs security-definer helpers. Never used by a request.
--   svc_login    the service pool's login role: no data rights of its own, it only
--                `set local role`s into svc_request or svc_worker per transaction.
--   svc_request  what every API request runs as; row-level security applies.
--   svc_worker   what background tasks run as when they act on tenant data.
--   svc_analyst  read-only role for analysts on replicas; the same policies apply.
create function pg_temp.ensure_role(role_name text, options text) returns void
language plpgsql as $$
begin
  if not exists (select from pg_roles where rolname = role_name) then
    execute format('create role %I %s', role_name, options);
  end if;
exception when duplicate_object or unique_violation then
  -- another database of this cluster created it at the same moment
  null;
end $$;

select pg_temp.ensure_role('svc_owner', 'nologin');
select pg_temp.ensure_role('svc_login', 'login noinherit');
select pg_temp.ensure_role('svc_request', 'nologin');
select pg_temp.ensure_role('svc_worker', 'nologin');
select pg_temp.ensure_role('svc_analyst', 'nologin');

do $$
begin
  if not pg_has_role(current_user, 'svc_owner', 'member') then
    execute format('grant svc_owner to %I', current_user);
  end if;
  if not pg_has_role('svc_login', 'svc_request', 'member') then
    grant svc_request to svc_login;
  end if;
  if not pg_has_role('svc_login', 'svc_worker', 'member') then
    grant svc_worker to svc_login;
  end if;
end $$;

grant connect, create, temporary on database :DATABASE_NAME to svc_owner;
grant connect on database :DATABASE_NAME to svc_login, svc_analyst;

-- Extensions the schema uses: case-insensitive text for emails, trigram indexes for
-- substring search.
create extension if not exists citext;
create extension if not exists pg_trgm;

-- Everything below is owned by svc_owner.
set local role svc_owner;

-- app_public: tables and functions the API role may use (RLS on every tenant table).
-- app_hidden: helpers the API role may call but that are not part of the data model.
-- app_private: secrets (key hashes), idempotency records, security-definer internals.
create schema app_public;
create schema app_hidden;
create schema app_private;
comment on schema app_public is 'Tenant data, visible to the request and analyst roles through row-level security.';
comment on schema app_hidden is 'Helpers callable by the request role (claim readers, predicates); not data.';
comment on schema app_private is 'Secrets and internals; no grants to request or analyst roles.';

grant usage on schema app_public, app_hidden to svc_request, svc_worker, svc_analyst;
alter default privileges in schema app_public, app_hidden revoke execute on functions from public;
alter default privileges in schema app_private revoke execute on functions from public;

--------------------------------------------------------------------------------
-- Errors
--------------------------------------------------------------------------------
-- Functions raise the API's errors with SQLSTATE class SV: 'SV' followed by the HTTP
-- status ('SV404'), the machine code as the message ('not_found'), a human sentence as
-- the detail, and extra envelope fields (required, blockers) as JSON in the hint.
-- src/http/errors.ts maps them in one place.
create function app_hidden.raise_error(status int, code text, message text, extra jsonb default null)
returns void language plpgsql as $$
begin
  raise exception using
    errcode = 'SV' || status::text,
    message = code,
    detail = message,
    hint = coalesce(extra::text, '');
end $$;
comment on function app_hidden.raise_error(int, text, text, jsonb) is
  'Raises an API error: SQLSTATE SV<status>, message = error code, detail = human message, hint = extra envelope fields as JSON.';

--------------------------------------------------------------------------------
-- Request claims
--------------------------------------------------------------------------------
-- Every request sets these with set_config(..., true) inside its transaction (see
-- app_hidden.authenticate). After a transaction a setting reads back as '' rather than
-- NULL, hence nullif everywhere. A missing claim must mean "nothing", never "everything":
-- the whole organization is the explicit value '*' of svc.location_ids.
create function app_hidden.current_org_id() returns uuid
language sql stable parallel safe as $$
  select nullif(current_setting('svc.organization_id', true), '')::uuid
$$;
comment on function app_hidden.current_org_id() is 'Organization of the current credential; NULL (sees nothing) when unset.';

create function app_hidden.current_user_id() returns uuid
language sql stable parallel safe as $$
  select nullif(current_setting('svc.user_id', true), '')::uuid
$$;
comment on function app_hidden.current_user_id() is 'Person the credential acts for; NULL for organization keys.';

create function app_hidden.current_credential_id() returns uuid
language sql stable parallel safe as $$
  select nullif(current_setting('svc.credential_id', true), '')::uuid
$$;

create function app_hidden.current_role() returns text
language sql stable parallel safe as $$
  select nullif(current_setting('svc.role', true), '')
$$;
comment on function app_hidden.current_role() is
  'Effective role: organization (key with no role), owner, admin, manager or member.';

create function app_hidden.current_reaches_all_locations() returns boolean
language sql stable parallel safe as $$
  select coalesce(current_setting('svc.location_ids', true) = '*', false)
$$;
comment on function app_hidden.current_reaches_all_locations() is
  'True only when the credential explicitly reaches the whole organization.';

create function app_hidden.current_location_ids() returns uuid[]
language sql stable parallel safe as $$
  select case
    when current_setting('svc.location_ids', true) = '*' then null
    else coalesce(nullif(current_setting('svc.location_ids', true), '')::uuid[], '{}')
  end
$$;
comment on function app_hidden.current_location_ids() is
  'Locations a location-bound credential reaches; NULL when it reaches the whole organization, empty when unset.';

create function app_hidden.current_powers() returns text[]
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('svc.powers', true), '')::text[], '{}')
$$;

create function app_hidden.current_scopes() returns text[]
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('svc.scopes', true), '')::text[], '{}')
$$;

create function app_hidden.current_records_level() returns text
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('svc.records_level', true), ''), 'all')
$$;

create function app_hidden.current_has_power(power text) returns boolean
language sql stable parallel safe as $$
  select app_hidden.current_role() in ('organization', 'owner', 'admin')
      or (app_hidden.current_role() = 'manager' and power = any(app_hidden.current_powers()))
$$;
comment on function app_hidden.current_has_power(text) is
  'Whether the credential holds a manager power (organization-wide credentials hold them all).';

create function app_hidden.current_in_reach(location_id uuid) returns boolean
language sql stable parallel safe as $$
  select app_hidden.current_reaches_all_locations()
      or location_id = any(app_hidden.current_location_ids())
$$;
comment on function app_hidden.current_in_reach(uuid) is 'Whether a location is within the credential''s reach.';

grant execute on all functions in schema app_hidden to svc_request, svc_worker, svc_analyst;

--------------------------------------------------------------------------------
-- Organizations and locations
--------------------------------------------------------------------------------
create table app_public.organizations (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  mcp_enabled boolean not null default true,
  tag_limit int not null default 500 check (tag_limit >= 0),
  sending_email_domain text,
  default_sms_number text,
  created_at timestamptz not null default now()
);
comment on table app_public.organizations is 'A business using the service; every tenant row belongs to one.';
comment on column app_public.organizations.mcp_enabled is 'Feature flag: the MCP entry point answers 404 while false.';
comment on column app_public.organizations.tag_limit is 'Most distinct tags the organization may hold.';

alter table app_public.organizations enable row level security;
create policy select_own on app_public.organizations for select
  using (id = (select app_hidden.current_org_id()));
grant select on app_public.organizations to svc_request, svc_worker, svc_analyst;

create table app_public.locations (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  timezone text not null default 'UTC',
  staffed boolean not null default true,
  sms_number text,
  hours jsonb not null default '[]',
  created_at timestamptz not null default now(),
  primary key (organization_id, id)
);
comment on table app_public.locations is 'A place of business with its IANA time zone and opening hours.';
comment on column app_public.locations.hours is 'Opening hours: [{day: mon..sun, open: HH:MM, close: HH:MM}].';

alter table app_public.locations enable row level security;
create policy select_in_reach on app_public.locations for select
  using (organization_id = (select app_hidden.current_org_id())
         and ((select app_hidden.current_reaches_all_locations())
              or id = any((select app_hidden.current_location_ids())::uuid[])));
grant select on app_public.locations to svc_request, svc_worker, svc_analyst;

--------------------------------------------------------------------------------
-- People (members of an organization) and their access
--------------------------------------------------------------------------------
create table app_public.people (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  email citext not null,
  role text not null check (role in ('owner', 'admin', 'manager', 'member')),
  powers text[] not null default '{}'
    check (powers <@ array['contacts', 'sequences', 'appointments', 'staff']),
  sms_enabled boolean not null default true,
  records_level text not null default 'all' check (records_level in ('all', 'own')),
  active boolean not null default true,
  agent_access boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, email)
);
comment on table app_public.people is 'A person and their membership of the organization: role, powers, settings.';
comment on column app_public.people.powers is 'Manager powers: contacts, sequences, appointments, staff (meaningful for managers only).';
comment on column app_public.people.records_level is 'all, or own: a member who reads only their own appointments and clients.';
comment on column app_public.people.agent_access is 'While false, this person''s personal keys and OAuth tokens get 401 (an owner''s is always on).';

create table app_public.person_locations (
  organization_id uuid not null,
  person_id uuid not null,
  location_id uuid not null,
  primary key (organization_id, person_id, location_id),
  foreign key (organization_id, person_id) references app_public.people on delete cascade,
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.person_locations is 'Locations a manager or member works at; owners and admins reach every location.';

create table app_public.role_agent_access (
  organization_id uuid not null references app_public.organizations on delete cascade,
  role text not null check (role in ('admin', 'manager', 'member')),
  agent_access boolean not null,
  primary key (organization_id, role)
);
comment on table app_public.role_agent_access is 'Agent access switch for a whole role; absent means on. Owners are always on.';

create table app_public.staff_profiles (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  person_id uuid not null,
  display_name text not null,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, person_id),
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);
comment on table app_public.staff_profiles is 'A team member who can be booked and who owns client relationships.';

alter table app_public.people enable row level security;
alter table app_public.person_locations enable row level security;
alter table app_public.role_agent_access enable row level security;
alter table app_public.staff_profiles enable row level security;
create policy select_own_org on app_public.people for select
  using (organization_id = (select app_hidden.current_org_id()));
create policy select_own_org on app_public.person_locations for select
  using (organization_id = (select app_hidden.current_org_id()));
create policy select_own_org on app_public.role_agent_access for select
  using (organization_id = (select app_hidden.current_org_id()));
create policy select_own_org on app_public.staff_profiles for select
  using (organization_id = (select app_hidden.current_org_id()));
grant select on app_public.people, app_public.person_locations, app_public.role_agent_access,
  app_public.staff_profiles to svc_request, svc_worker, svc_analyst;

--------------------------------------------------------------------------------
-- API keys (private: only their SHA-256 hash is stored)
--------------------------------------------------------------------------------
create table app_private.api_keys (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  kind text not null check (kind in ('personal', 'organization')),
  name text,
  -- personal keys act for this person; organization keys record their creator here too
  created_by uuid not null,
  role text check (role in ('MANAGER', 'MEMBER')),
  scopes text[] not null,
  powers text[] not null default '{}'
    check (powers <@ array['contacts', 'sequences', 'appointments', 'staff']),
  key_hash bytea not null unique check (length(key_hash) = 32),
  revoked_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, created_by) references app_public.people on delete cascade,
  check (kind = 'organization' or role is null)
);
comment on table app_private.api_keys is
  'Credentials. A personal key follows its person''s current role and locations; an organization key carries its own role, powers and locations, fixed at creation.';
comment on column app_private.api_keys.key_hash is 'sha256 of the whole key (svc_sk_ + 32 characters); the key itself is never stored.';

create table app_private.api_key_locations (
  organization_id uuid not null,
  api_key_id uuid not null,
  location_id uuid not null,
  primary key (organization_id, api_key_id, location_id),
  foreign key (organization_id, api_key_id) references app_private.api_keys on delete cascade,
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_private.api_key_locations is 'Locations of a location-limited organization key.';

-- No grants: only security-definer functions owned by svc_owner read these. RLS with no
-- policy is a second lock on the door.
alter table app_private.api_keys enable row level security;
alter table app_private.api_key_locations enable row level security;

--------------------------------------------------------------------------------
-- Key revocation follows people
--------------------------------------------------------------------------------
-- Whether a person, as they are now, could create an organization key: owners and admins
-- any; a manager with the staff power a location-limited key within their own locations
-- and powers.
create function app_private.person_may_hold_key(p app_public.people, k app_private.api_keys)
returns boolean language sql stable
set search_path to pg_catalog, public, pg_temp as $$
  select p.active and (
    p.role in ('owner', 'admin')
    or (p.role = 'manager' and 'staff' = any(p.powers)
        and k.role is not null
        and k.powers <@ p.powers
        and exists (select 1 from app_private.api_key_locations kl
                    where kl.organization_id = k.organization_id and kl.api_key_id = k.id)
        and not exists (
          select 1 from app_private.api_key_locations kl
          where kl.organization_id = k.organization_id and kl.api_key_id = k.id
            and kl.location_id not in (select pl.location_id from app_public.person_locations pl
                                        where pl.organization_id = p.organization_id
                                          and pl.person_id = p.id))))
$$;

-- Deactivation revokes personal keys; an organization key is revoked when its creator
-- loses what it carries (demotion, lost power, deactivation). Revocation is permanent.
create function app_private.tg_people__revoke_keys() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_private.api_keys k set revoked_at = now()
   where k.organization_id = new.organization_id and k.created_by = new.id
     and k.revoked_at is null
     and ((k.kind = 'personal' and not new.active)
          or (k.kind = 'organization' and not app_private.person_may_hold_key(new, k)));
  return new;
end $$;
create trigger _500_revoke_keys after update of role, powers, active on app_public.people
  for each row execute function app_private.tg_people__revoke_keys();

create function app_private.tg_person_locations__revoke_keys() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_private.api_keys k set revoked_at = now()
    from app_public.people p
   where p.organization_id = old.organization_id and p.id = old.person_id
     and k.organization_id = p.organization_id and k.created_by = p.id
     and k.kind = 'organization' and k.revoked_at is null
     and not app_private.person_may_hold_key(p, k);
  return null;
end $$;
create trigger _500_revoke_keys after delete on app_public.person_locations
  for each row execute function app_private.tg_person_locations__revoke_keys();

--------------------------------------------------------------------------------
-- Authentication and authorization of one request
--------------------------------------------------------------------------------
-- Resolves a key hash, checks the operation's requirements from the registry, and sets
-- the request's claims for the rest of the transaction. Every failure to authenticate is
-- the same 401. Returns the claims and what me_get shows of the credential.
create function app_hidden.authenticate(
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
begin
  select * into k from app_private.api_keys where api_keys.key_hash = authenticate.key_hash;
  if not found or k.revoked_at is not null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;

  select * into p from app_public.people
   where organization_id = k.organization_id and id = k.created_by;

  if k.kind = 'personal' then
    select r.agent_access into role_switch from app_public.role_agent_access r
     where r.organization_id = p.organization_id and r.role = p.role;
    if not p.active
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

  perform set_config('svc.organization_id', k.organization_id::text, true),
          set_config('svc.credential_id', k.id::text, true),
          set_config('svc.user_id', case when k.kind = 'personal' then p.id::text else '' end, true),
          set_config('svc.role', eff_role, true),
          set_config('svc.location_ids', coalesce(loc_ids::text, '*'), true),
          set_config('svc.powers', coalesce(powers, '{}')::text, true),
          set_config('svc.scopes', k.scopes::text, true),
          set_config('svc.records_level', records_level, true),
          set_config('svc.sms_enabled', sms_enabled::text, true);

  -- Scope first, then role: 403 insufficient_scope names the scope.
  if required_scope is not null and not (required_scope = any(k.scopes)) then
    perform app_hidden.raise_error(403, 'insufficient_scope',
      format('This credential lacks the %s scope', required_scope),
      jsonb_build_object('required', required_scope));
  end if;

  if eff_role = 'manager' then
    if manager_power is not null and not (manager_power = any(powers)) then
      perform app_hidden.raise_error(403, 'insufficient_role',
        format('A manager needs the %s power for this operation', manager_power));
    elsif manager_power is null and member_access = 'deny' then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager cannot call this operation');
    end if;
  elsif eff_role = 'member' then
    if member_access = 'deny' then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A member cannot call this operation');
    elsif member_access = 'sms_setting' and not sms_enabled then
      perform app_hidden.raise_error(403, 'insufficient_role', 'Texting is turned off for this member');
    end if;
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
    'sms_enabled', sms_enabled
  );
end $$;
comment on function app_hidden.authenticate(bytea, text, text, text) is
  'Resolves a key hash, enforces the operation''s scope, member access and manager power, and sets the svc.* claims for the transaction.';
grant execute on function app_hidden.authenticate(bytea, text, text, text) to svc_request;

--------------------------------------------------------------------------------
-- Local delivery sink
--------------------------------------------------------------------------------
create table app_private.outbox (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  channel text not null check (channel in ('email', 'sms')),
  sender text,
  recipient text not null,
  subject text,
  body text not null,
  meta jsonb not null default '{}',
  created_at timestamptz not null default now(),
  primary key (organization_id, id)
);
comment on table app_private.outbox is
  'Every email and SMS handed to the local delivery sink (EMAIL_TRANSPORT/SMS_TRANSPORT = sink).';
create index outbox_org_created on app_private.outbox (organization_id, created_at);
alter table app_private.outbox enable row level security;

reset role;
