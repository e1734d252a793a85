-- The voice secret: what a voice platform (Vapi, Retell, …) shows as `Authorization: Bearer`
-- when it calls POST /api/v1/receptionist/chat/completions for an organization (src/voice/).
-- Only the SHA-256 of the secret is kept, as for API keys; an organization has at most one live
-- secret: a new one revokes the one before, at once.

set local role svc_owner;

create table if not exists app_private.voice_secrets (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references app_public.organizations (id) on delete cascade,
  secret_hash bytea not null unique check (length(secret_hash) = 32),
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
comment on table app_private.voice_secrets is
  'An organization''s voice secrets (SHA-256 only); the one with revoked_at NULL is live, at most one per organization.';
create unique index if not exists voice_secrets_live on app_private.voice_secrets (organization_id) where revoked_at is null;

-- A new secret for an organization (its hash), revoking the live one: `svc admin voice secret`
-- and the dashboard's organization page. The organization's row is locked so that two rotations
-- at once end with one live secret.
create or replace function app_private.voice_secret_rotate(organization_id uuid, secret_hash bytea) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  s app_private.voice_secrets;
begin
  perform 1 from app_public.organizations o where o.id = voice_secret_rotate.organization_id for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', format('no organization with id %s', voice_secret_rotate.organization_id));
  end if;
  update app_private.voice_secrets x set revoked_at = now()
   where x.organization_id = voice_secret_rotate.organization_id and x.revoked_at is null;
  insert into app_private.voice_secrets (organization_id, secret_hash)
  values (voice_secret_rotate.organization_id, voice_secret_rotate.secret_hash) returning * into s;
  return jsonb_build_object('id', s.id, 'organization_id', s.organization_id, 'created_at', s.created_at);
end $$;
revoke all on function app_private.voice_secret_rotate(uuid, bytea) from public;

-- The dashboard's "New voice secret": owners and admins of the signed-in person's organization.
create or replace function app_hidden.dashboard_rotate_voice_secret(secret_hash bytea) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  return app_private.voice_secret_rotate(me.organization_id, secret_hash);
end $$;
revoke all on function app_hidden.dashboard_rotate_voice_secret(bytea) from public;
grant execute on function app_hidden.dashboard_rotate_voice_secret(bytea) to svc_request;

-- When the organization's voice secret was made (NULL: it has none), for the dashboard.
create or replace function app_hidden.dashboard_voice_secret_created_at() returns timestamptz
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select s.created_at from app_private.voice_secrets s
   where s.organization_id = app_hidden.current_org_id() and s.revoked_at is null
$$;
revoke all on function app_hidden.dashboard_voice_secret_created_at() from public;
grant execute on function app_hidden.dashboard_voice_secret_created_at() to svc_request;

-- The organization whose live voice secret has this hash, or NULL.
create or replace function app_private.voice_organization(secret_hash bytea) returns uuid
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select s.organization_id from app_private.voice_secrets s
   where s.secret_hash = voice_organization.secret_hash and s.revoked_at is null
$$;
revoke all on function app_private.voice_organization(bytea) from public;

reset role;
