-- The dashboard's connected apps page (src/oauth/connected-apps.ts): the OAuth grants a person
-- sees, and revoking one. Run in a dashboard transaction under the signed-in person's session
-- claims (app_hidden.dashboard_actor, 931-dashboard-keys.sql): a person sees and revokes their
-- own grants; an owner or admin also everyone's in the organization.
set local role svc_owner;

create or replace function app_hidden.oauth_connected_apps()
returns table (id uuid, client_id text, client_name text, person_name text, own boolean, scopes text[], created_at timestamptz)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  return query
    select g.id, c.client_id, c.client_name, p.name, p.id = me.id, g.scopes, g.created_at
      from app_private.oauth_grants g
      join app_private.oauth_clients c on c.client_id = g.client_id
      join app_public.people p on p.organization_id = g.organization_id and p.id = g.person_id
     where g.organization_id = me.organization_id and g.revoked_at is null
       and (g.person_id = me.id or me.role in ('owner', 'admin'))
     order by p.id = me.id desc, p.name, g.created_at desc;
end $$;
comment on function app_hidden.oauth_connected_apps() is
  'The live OAuth grants the signed-in person may see: their own, and for an owner or admin everyone''s in the organization.';
revoke execute on function app_hidden.oauth_connected_apps() from public;
grant execute on function app_hidden.oauth_connected_apps() to svc_request;

create or replace function app_hidden.oauth_revoke_grant(grant_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  update app_private.oauth_grants g set revoked_at = now()
   where g.id = oauth_revoke_grant.grant_id and g.organization_id = me.organization_id and g.revoked_at is null
     and (g.person_id = me.id or me.role in ('owner', 'admin'));
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Connected app not found');
  end if;
end $$;
comment on function app_hidden.oauth_revoke_grant(uuid) is
  'Revokes a grant the signed-in person may see: its tokens get 401 and its refresh tokens invalid_grant from now on.';
revoke execute on function app_hidden.oauth_revoke_grant(uuid) from public;
grant execute on function app_hidden.oauth_revoke_grant(uuid) to svc_request;
