-- A client ID metadata document is cached as long as its HTTP cache headers say (RFC 9111,
-- within the bounds src/oauth/clients.ts sets: none with no-store or no-cache, at most a day),
-- rather than a fixed hour (CIMD draft section 4.3: the authorization server SHOULD respect
-- HTTP cache headers). The lifetime is kept with the cached copy.
set local role svc_owner;

alter table app_private.oauth_clients add column if not exists cache_seconds int
  check (cache_seconds between 0 and 86400);
comment on column app_private.oauth_clients.cache_seconds is
  'How long the fetched metadata document may be used from fetched_at; null for a registered client.';

drop function if exists app_hidden.oauth_save_client(text, text, text, text, text[]);
create or replace function app_hidden.oauth_save_client(
  client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds int
) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  insert into app_private.oauth_clients (client_id, registration, client_name, client_uri, redirect_uris, fetched_at, cache_seconds)
  values ($1, $2, $3, $4, $5, case when $2 = 'metadata_document' then now() end, case when $2 = 'metadata_document' then $6 end)
  on conflict (client_id) do update
     set client_name = excluded.client_name, client_uri = excluded.client_uri,
         redirect_uris = excluded.redirect_uris, fetched_at = excluded.fetched_at, cache_seconds = excluded.cache_seconds
   where oauth_clients.registration = 'metadata_document'
$$;
comment on function app_hidden.oauth_save_client(text, text, text, text, text[], int) is
  'Registers a client, or refreshes the cached copy of a client ID metadata document (with its cache lifetime).';
revoke execute on function app_hidden.oauth_save_client(text, text, text, text, text[], int) from public;
grant execute on function app_hidden.oauth_save_client(text, text, text, text, text[], int) to svc_request;

create or replace function app_hidden.oauth_client(client_id text) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('client_id', c.client_id, 'registration', c.registration, 'client_name', c.client_name,
           'client_uri', c.client_uri, 'redirect_uris', to_jsonb(c.redirect_uris),
           'fetched_age_s', extract(epoch from now() - c.fetched_at), 'cache_seconds', c.cache_seconds)
    from app_private.oauth_clients c where c.client_id = oauth_client.client_id
$$;
comment on function app_hidden.oauth_client(text) is 'A client as the authorization endpoint needs it (with its cache age and lifetime), or NULL.';
revoke execute on function app_hidden.oauth_client(text) from public;
grant execute on function app_hidden.oauth_client(text) to svc_request;

reset role;
