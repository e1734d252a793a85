--! Previous: sha1:a711a4d6bf07f07cd45ab193bbc8872af9334546
--! Hash: sha1:f28b09262d44d9701909ba51bb2117c563e9a586
--! Message: OAuth: a refresh asking for a scope the grant does not hold is invalid_scope

--! split: 010-oauth-refresh-scope.sql
-- The refresh grant reads `scope`: a scope the grant does not hold is 400 invalid_scope (OAuth
-- 2.1, 4.3.1: a refresh may not widen what the person approved); a narrower one is answered with
-- the grant's scopes, which the token answer names (RFC 6749, 5.1). It used to be ignored.
set local role svc_owner;

drop function if exists app_hidden.oauth_refresh(bytea, text, text, bytea, bytea, int, int);
create or replace function app_hidden.oauth_refresh(
  refresh_hash bytea, client_id text, resource text,
  access_hash bytea, new_refresh_hash bytea, access_seconds int, refresh_seconds int, requested text[]
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
  -- a scope asked for here must be one the grant holds (OAuth 2.1, 4.3.1); asking for fewer is
  -- answered with the grant's scopes, which the answer's `scope` names
  if requested is not null and not requested <@ g.scopes then
    return app_hidden.oauth_refusal('invalid_scope', 'scope asks for more than was granted');
  end if;
  if app_hidden.oauth_person(g.organization_id, g.person_id) is null then
    return app_hidden.oauth_refusal('invalid_grant', 'The person may not use agents now');
  end if;
  update app_private.oauth_tokens set used_at = now() where token_hash = t.token_hash;
  perform app_hidden.oauth_issue(g.id, access_hash, new_refresh_hash, access_seconds, refresh_seconds);
  return jsonb_build_object('scopes', to_jsonb(g.scopes), 'resource', g.resource);
end $$;
revoke execute on function app_hidden.oauth_refresh(bytea, text, text, bytea, bytea, int, int, text[]) from public;
grant execute on function app_hidden.oauth_refresh(bytea, text, text, bytea, bytea, int, int, text[]) to svc_request;

reset role;
