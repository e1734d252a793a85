-- An operation's requirements are checked in one place, and the claims' settings travel as
-- authenticate set them.
--
-- 1. app_hidden.requirement_refusal(scope, member_access, manager_power) is the check
--    app_hidden.authenticate made inline: scope first (403 insufficient_scope, naming it), then
--    role (403 insufficient_role: a MEMBER on a deny operation or on an SMS one with texting
--    off; a MANAGER without the operation's power, or on a deny operation that names none). It
--    reads the claims of the transaction and answers the refusal, or null. authenticate raises
--    what it answers; the MCP endpoint asks it for every operation of the registry at once to
--    list the tools a credential may call (app_hidden.authorize_mcp), so the list can never
--    disagree with what a call would be allowed.
-- 2. app_hidden.authorize_mcp(requirements) is the organization's MCP switch (404 while it is
--    off) and that listing, called right after authenticate in the same round trip.
-- 3. authenticate answers, besides the claims, the exact svc.* settings it set (`settings`). A
--    later transaction of the same call re-applies them instead of resolving the key again (an
--    idempotent write: src/platform/idempotency.ts), and internal GraphQL hands them to
--    PostGraphile as they are: nothing outside this function encodes a claim as a setting.
set local role svc_owner;

create or replace function app_hidden.current_sms_enabled() returns boolean
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('svc.sms_enabled', true), '')::boolean, false)
$$;
comment on function app_hidden.current_sms_enabled() is
  'Whether the credential may text (a MEMBER''s SMS setting; a MEMBER key never); false when unset.';
grant execute on function app_hidden.current_sms_enabled() to svc_request, svc_worker;

-- plpgsql, not SQL: authenticate calls it on every request, and PostgreSQL would plan a SQL
-- function's body on every call.
create or replace function app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text)
returns jsonb
language plpgsql stable as $$
declare
  acting text := app_hidden.current_role();
begin
  if required_scope is not null and not (required_scope = any(app_hidden.current_scopes())) then
    return jsonb_build_object('status', 403, 'error', 'insufficient_scope',
      'message', format('This credential lacks the %s scope', required_scope),
      'extra', jsonb_build_object('required', required_scope));
  end if;
  if acting = 'manager' then
    if manager_power is not null and not (manager_power = any(app_hidden.current_powers())) then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', format('A manager needs the %s power for this operation', manager_power));
    elsif manager_power is null and member_access = 'deny' then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'A manager cannot call this operation');
    end if;
  elsif acting = 'member' then
    if member_access = 'deny' then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'A member cannot call this operation');
    elsif member_access = 'sms_setting' and not app_hidden.current_sms_enabled() then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'Texting is turned off for this member');
    end if;
  end if;
  return null;
end $$;
comment on function app_hidden.requirement_refusal(text, text, text) is
  'Whether the current claims meet an operation''s requirements (scope, member access, manager power): null, or the '
  'refusal as {status, error, message, extra}. Scope is checked first, so insufficient_scope names the scope.';
grant execute on function app_hidden.requirement_refusal(text, text, text) to svc_request;

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
  );
end $$;
comment on function app_hidden.authenticate(bytea, text, text, text) is
  'Resolves a key hash, sets the svc.* claims for the transaction, enforces the operation''s requirements '
  '(app_hidden.requirement_refusal), and answers the claims with the exact settings it set (settings).';

-- The MCP endpoint, after authenticate: 404 while the organization has MCP turned off, else
-- the operations of `requirements` ([{operation_id, scope, member_access, manager_power}], the
-- registry's) this credential may call, in the order given.
create or replace function app_hidden.authorize_mcp(requirements jsonb) returns text[]
language plpgsql stable as $$
begin
  if not exists (select 1 from app_public.organizations o
                  where o.id = app_hidden.current_org_id() and o.mcp_enabled) then
    perform app_hidden.raise_error(404, 'not_found', 'MCP endpoint not found');
  end if;
  return array(
    select r->>'operation_id'
      from jsonb_array_elements(requirements) with ordinality as x(r, n)
     where app_hidden.requirement_refusal(r->>'scope', r->>'member_access', r->>'manager_power') is null
     order by n);
end $$;
comment on function app_hidden.authorize_mcp(jsonb) is
  'Raises 404 while the current organization has MCP turned off; else answers the operation ids of requirements '
  '([{operation_id, scope, member_access, manager_power}]) the current claims meet. Called right after app_hidden.authenticate.';
grant execute on function app_hidden.authorize_mcp(jsonb) to svc_request;

reset role;
