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
