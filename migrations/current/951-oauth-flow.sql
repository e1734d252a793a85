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
