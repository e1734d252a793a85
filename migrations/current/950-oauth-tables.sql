-- The OAuth 2.1 authorization server for MCP clients (src/oauth/): clients, grants (one per
-- approval: a "connected app"), authorization codes and tokens. Everything secret is stored as
-- a SHA-256 hash; the tables are app_private and reached only through the security-definer
-- functions of 951-oauth-flow.sql, called by the server's OAuth endpoints with values it has
-- validated. A token is never more than a pointer to its grant: what it may do is resolved on
-- every request by app_hidden.authenticate from the person's current role, locations and switches.
set local role svc_owner;

create table if not exists app_private.oauth_clients (
  -- a generated id for a registered client, the document's https URL for a metadata document
  client_id text primary key check (length(client_id) between 1 and 2048),
  registration text not null check (registration in ('dynamic', 'metadata_document')),
  client_name text check (length(client_name) <= 200),
  client_uri text check (length(client_uri) <= 2048),
  redirect_uris text[] not null check (cardinality(redirect_uris) between 1 and 20),
  -- when a metadata document was last fetched (its cache entry); null for a registered client
  fetched_at timestamptz,
  created_at timestamptz not null default now()
);
comment on table app_private.oauth_clients is
  'OAuth clients: registered through RFC 7591 (public clients, no secret) or described by a client ID metadata document (cached copy).';

create table if not exists app_private.oauth_grants (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null,
  person_id uuid not null,
  client_id text not null references app_private.oauth_clients on delete cascade,
  scopes text[] not null,
  -- the RFC 8707 resource the person approved; every code and token of the grant is bound to it
  resource text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);
create index if not exists oauth_grants_person on app_private.oauth_grants (organization_id, person_id);
comment on table app_private.oauth_grants is
  'One approval of a client by a person (a connected app). Revoking it (the person, a reused code or refresh token) ends every token of it.';

-- A consent in progress: the validated authorization request, for the person who is signed in.
create table if not exists app_private.oauth_requests (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null,
  person_id uuid not null,
  client_id text not null references app_private.oauth_clients on delete cascade,
  redirect_uri text not null,
  state text,
  code_challenge text not null,
  resource text not null,
  scopes text[] not null,
  expires_at timestamptz not null,
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);

create table if not exists app_private.oauth_codes (
  code_hash bytea primary key check (length(code_hash) = 32),
  grant_id uuid not null references app_private.oauth_grants on delete cascade,
  redirect_uri text not null,
  code_challenge text not null,
  expires_at timestamptz not null,
  used_at timestamptz
);

create table if not exists app_private.oauth_tokens (
  -- access tokens: sha256(resource || LF || token), so a token only resolves where it was issued for;
  -- refresh tokens: sha256(token)
  token_hash bytea primary key check (length(token_hash) = 32),
  grant_id uuid not null references app_private.oauth_grants on delete cascade,
  kind text not null check (kind in ('access', 'refresh')),
  expires_at timestamptz not null,
  -- a refresh token once exchanged; presenting it again revokes the grant
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index if not exists oauth_tokens_grant on app_private.oauth_tokens (grant_id);
comment on table app_private.oauth_tokens is
  'Opaque OAuth tokens by hash. Access tokens live at most an hour; refresh tokens rotate on every use.';

-- Deactivation ends a person's OAuth grants for good (leaving deletes them with the person);
-- while inactive, app_hidden.authenticate refuses their tokens anyway.
create or replace function app_hidden.oauth_revoke_on_deactivation() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_private.oauth_grants set revoked_at = now()
   where organization_id = new.organization_id and person_id = new.id and revoked_at is null;
  return null;
end $$;
drop trigger if exists oauth_revoke_on_deactivation on app_public.people;
create trigger oauth_revoke_on_deactivation after update of active on app_public.people
  for each row when (old.active and not new.active) execute function app_hidden.oauth_revoke_on_deactivation();

-- No policies: svc_request reads and writes none of these rows itself; the security-definer
-- functions of 951-953 (owned by svc_owner) are the only way in.
alter table app_private.oauth_clients enable row level security;
alter table app_private.oauth_grants enable row level security;
alter table app_private.oauth_requests enable row level security;
alter table app_private.oauth_codes enable row level security;
alter table app_private.oauth_tokens enable row level security;
