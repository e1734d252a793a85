-- db/schema/oauth.sql: what src/oauth/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: oauth_begin(uuid, uuid, text, text, text, text, text, text[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) RETURNS uuid
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
  delete from app_private.oauth_requests where expires_at < now();
  insert into app_private.oauth_requests (organization_id, person_id, client_id, redirect_uri, state, code_challenge, resource, scopes, expires_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8, now() + interval '10 minutes')
  returning id
$_$;

ALTER FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) IS 'Keeps a validated authorization request for ten minutes while its person decides.';

--
-- Name: oauth_client(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_client(client_id text) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('client_id', c.client_id, 'registration', c.registration, 'client_name', c.client_name,
           'client_uri', c.client_uri, 'redirect_uris', to_jsonb(c.redirect_uris),
           'fetched_age_s', extract(epoch from now() - c.fetched_at), 'cache_seconds', c.cache_seconds)
    from app_private.oauth_clients c where c.client_id = oauth_client.client_id
$$;

ALTER FUNCTION app_hidden.oauth_client(client_id text) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_client(client_id text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_client(client_id text) IS 'A client as the authorization endpoint needs it (with its cache age and lifetime), or NULL.';

--
-- Name: oauth_connected_apps(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_connected_apps() RETURNS TABLE(id uuid, client_id text, client_name text, person_name text, own boolean, scopes text[], created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.oauth_connected_apps() OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_connected_apps(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_connected_apps() IS 'The live OAuth grants the signed-in person may see: their own, and for an owner or admin everyone''s in the organization.';

--
-- Name: oauth_decide(uuid, uuid, uuid, boolean, bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea) OWNER TO svc_owner;

--
-- Name: oauth_exchange_code(bytea, text, text, text, text, bytea, bytea, integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) OWNER TO svc_owner;

--
-- Name: oauth_grantable_scopes(uuid, uuid, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb) RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  with p as (select app_hidden.oauth_person(organization_id, person_id) as p)
  select coalesce(array_agg(distinct r->>'scope' order by r->>'scope'), '{}')
    from p, jsonb_array_elements(requirements) r
   where p.p is not null
     and r->>'scope' is not null
     and app_hidden.requirement_refusal_for(p.p->>'role', array(select jsonb_array_elements_text(p.p->'powers')),
           (p.p->>'sms_enabled')::boolean, array[r->>'scope'], r->>'scope', r->>'member_access', r->>'manager_power') is null
     and not (r->>'scope' = 'conversations:write' and p.p->>'role' = 'member' and not (p.p->>'sms_enabled')::boolean)
$$;

ALTER FUNCTION app_hidden.oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb) IS 'The scopes of requirements ([{scope, member_access, manager_power}]) a person may grant an OAuth client: those with an operation their role may call (app_hidden.requirement_refusal_for), without conversations:write for a member whose SMS setting is off; empty when the person may not approve now.';

--
-- Name: oauth_issue(uuid, bytea, bytea, integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
  delete from app_private.oauth_tokens t where t.grant_id = $1 and t.expires_at < now() - interval '1 day';
  delete from app_private.oauth_codes c where c.grant_id = $1 and c.expires_at < now() - interval '1 day';
  insert into app_private.oauth_tokens (token_hash, grant_id, kind, expires_at)
  values ($2, $1, 'access', now() + make_interval(secs => $4)),
         ($3, $1, 'refresh', now() + make_interval(secs => $5))
$_$;

ALTER FUNCTION app_hidden.oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) OWNER TO svc_owner;

--
-- Name: oauth_person(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('organization_id', p.organization_id, 'person_id', p.id, 'organization_name', o.name,
           'role', p.role, 'powers', to_jsonb(case when p.role = 'manager' then p.powers else '{}' end),
           'sms_enabled', p.sms_enabled)
    from app_public.people p
    join app_public.organizations o on o.id = p.organization_id
    left join app_public.role_agent_access r on r.organization_id = p.organization_id and r.role = p.role
   where p.organization_id = oauth_person.organization_id and p.id = oauth_person.person_id and p.active
     and (p.role = 'owner' or (p.agent_access and coalesce(r.agent_access, true)))
$$;

ALTER FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_person(organization_id uuid, person_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) IS 'The person about to approve a client (role, powers, SMS setting), or NULL when inactive or agent access is off.';

--
-- Name: oauth_grants; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_grants (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    organization_id uuid NOT NULL,
    person_id uuid NOT NULL,
    client_id text NOT NULL,
    scopes text[] NOT NULL,
    resource text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone
);

ALTER TABLE app_private.oauth_grants OWNER TO svc_owner;

--
-- Name: TABLE oauth_grants; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.oauth_grants IS 'One approval of a client by a person (a connected app). Revoking it (the person, a reused code or refresh token) ends every token of it.';

--
-- Name: oauth_presented(app_private.oauth_grants, text, timestamp with time zone, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamp with time zone, what text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamp with time zone, what text) OWNER TO svc_owner;

--
-- Name: oauth_refresh(bytea, text, text, bytea, bytea, integer, integer, text[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer, requested text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer, requested text[]) OWNER TO svc_owner;

--
-- Name: oauth_refusal(text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_refusal(error text, description text) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$ select jsonb_build_object('error', error, 'error_description', description) $$;

ALTER FUNCTION app_hidden.oauth_refusal(error text, description text) OWNER TO svc_owner;

--
-- Name: oauth_revoke_grant(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_revoke_grant(grant_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) IS 'Revokes a grant the signed-in person may see: its tokens get 401 and its refresh tokens invalid_grant from now on.';

--
-- Name: oauth_revoke_on_deactivation(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_revoke_on_deactivation() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_private.oauth_grants set revoked_at = now()
   where organization_id = new.organization_id and person_id = new.id and revoked_at is null;
  return null;
end $$;

ALTER FUNCTION app_hidden.oauth_revoke_on_deactivation() OWNER TO svc_owner;

--
-- Name: oauth_save_client(text, text, text, text, text[], integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
  insert into app_private.oauth_clients (client_id, registration, client_name, client_uri, redirect_uris, fetched_at, cache_seconds)
  values ($1, $2, $3, $4, $5, case when $2 = 'metadata_document' then now() end, case when $2 = 'metadata_document' then $6 end)
  on conflict (client_id) do update
     set client_name = excluded.client_name, client_uri = excluded.client_uri,
         redirect_uris = excluded.redirect_uris, fetched_at = excluded.fetched_at, cache_seconds = excluded.cache_seconds
   where oauth_clients.registration = 'metadata_document'
$_$;

ALTER FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) IS 'Registers a client, or refreshes the cached copy of a client ID metadata document (with its cache lifetime).';

--
-- Name: oauth_clients; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_clients (
    client_id text NOT NULL,
    registration text NOT NULL,
    client_name text,
    client_uri text,
    redirect_uris text[] NOT NULL,
    fetched_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    cache_seconds integer,
    CONSTRAINT oauth_clients_cache_seconds_check CHECK (((cache_seconds >= 0) AND (cache_seconds <= 86400))),
    CONSTRAINT oauth_clients_client_id_check CHECK (((length(client_id) >= 1) AND (length(client_id) <= 2048))),
    CONSTRAINT oauth_clients_client_name_check CHECK ((length(client_name) <= 200)),
    CONSTRAINT oauth_clients_client_uri_check CHECK ((length(client_uri) <= 2048)),
    CONSTRAINT oauth_clients_redirect_uris_check CHECK (((cardinality(redirect_uris) >= 1) AND (cardinality(redirect_uris) <= 20))),
    CONSTRAINT oauth_clients_registration_check CHECK ((registration = ANY (ARRAY['dynamic'::text, 'metadata_document'::text])))
);

ALTER TABLE app_private.oauth_clients OWNER TO svc_owner;

--
-- Name: TABLE oauth_clients; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.oauth_clients IS 'OAuth clients: registered through RFC 7591 (public clients, no secret) or described by a client ID metadata document (cached copy).';

--
-- Name: COLUMN oauth_clients.cache_seconds; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.oauth_clients.cache_seconds IS 'How long the fetched metadata document may be used from fetched_at; null for a registered client.';

--
-- Name: oauth_codes; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_codes (
    code_hash bytea NOT NULL,
    grant_id uuid NOT NULL,
    redirect_uri text NOT NULL,
    code_challenge text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    CONSTRAINT oauth_codes_code_hash_check CHECK ((length(code_hash) = 32))
);

ALTER TABLE app_private.oauth_codes OWNER TO svc_owner;

--
-- Name: oauth_requests; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_requests (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    organization_id uuid NOT NULL,
    person_id uuid NOT NULL,
    client_id text NOT NULL,
    redirect_uri text NOT NULL,
    state text,
    code_challenge text NOT NULL,
    resource text NOT NULL,
    scopes text[] NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

ALTER TABLE app_private.oauth_requests OWNER TO svc_owner;

--
-- Name: oauth_tokens; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_tokens (
    token_hash bytea NOT NULL,
    grant_id uuid NOT NULL,
    kind text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT oauth_tokens_kind_check CHECK ((kind = ANY (ARRAY['access'::text, 'refresh'::text]))),
    CONSTRAINT oauth_tokens_token_hash_check CHECK ((length(token_hash) = 32))
);

ALTER TABLE app_private.oauth_tokens OWNER TO svc_owner;

--
-- Name: TABLE oauth_tokens; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.oauth_tokens IS 'Opaque OAuth tokens by hash. Access tokens live at most an hour; refresh tokens rotate on every use.';

--
-- Name: oauth_clients oauth_clients_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_clients
    ADD CONSTRAINT oauth_clients_pkey PRIMARY KEY (client_id);

--
-- Name: oauth_codes oauth_codes_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_codes
    ADD CONSTRAINT oauth_codes_pkey PRIMARY KEY (code_hash);

--
-- Name: oauth_grants oauth_grants_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_grants
    ADD CONSTRAINT oauth_grants_pkey PRIMARY KEY (id);

--
-- Name: oauth_requests oauth_requests_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_requests
    ADD CONSTRAINT oauth_requests_pkey PRIMARY KEY (id);

--
-- Name: oauth_tokens oauth_tokens_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_tokens
    ADD CONSTRAINT oauth_tokens_pkey PRIMARY KEY (token_hash);

--
-- Name: oauth_grants_person; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX oauth_grants_person ON app_private.oauth_grants USING btree (organization_id, person_id);

--
-- Name: oauth_tokens_grant; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX oauth_tokens_grant ON app_private.oauth_tokens USING btree (grant_id);

--
-- Name: oauth_codes oauth_codes_grant_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_codes
    ADD CONSTRAINT oauth_codes_grant_id_fkey FOREIGN KEY (grant_id) REFERENCES app_private.oauth_grants(id) ON DELETE CASCADE;

--
-- Name: oauth_grants oauth_grants_client_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_grants
    ADD CONSTRAINT oauth_grants_client_id_fkey FOREIGN KEY (client_id) REFERENCES app_private.oauth_clients(client_id) ON DELETE CASCADE;

--
-- Name: oauth_grants oauth_grants_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_grants
    ADD CONSTRAINT oauth_grants_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: oauth_requests oauth_requests_client_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_requests
    ADD CONSTRAINT oauth_requests_client_id_fkey FOREIGN KEY (client_id) REFERENCES app_private.oauth_clients(client_id) ON DELETE CASCADE;

--
-- Name: oauth_requests oauth_requests_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_requests
    ADD CONSTRAINT oauth_requests_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: oauth_tokens oauth_tokens_grant_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_tokens
    ADD CONSTRAINT oauth_tokens_grant_id_fkey FOREIGN KEY (grant_id) REFERENCES app_private.oauth_grants(id) ON DELETE CASCADE;

--
-- Name: oauth_clients; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_clients ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_codes; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_codes ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_grants; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_grants ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_requests; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_requests ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_tokens; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: FUNCTION oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) TO svc_request;

--
-- Name: FUNCTION oauth_client(client_id text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_client(client_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_client(client_id text) TO svc_request;

--
-- Name: FUNCTION oauth_connected_apps(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_connected_apps() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_connected_apps() TO svc_request;

--
-- Name: FUNCTION oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea) TO svc_request;

--
-- Name: FUNCTION oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) TO svc_request;

--
-- Name: FUNCTION oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb) TO svc_request;

--
-- Name: FUNCTION oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) FROM PUBLIC;

--
-- Name: FUNCTION oauth_person(organization_id uuid, person_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) TO svc_request;

--
-- Name: FUNCTION oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamp with time zone, what text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamp with time zone, what text) FROM PUBLIC;

--
-- Name: FUNCTION oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer, requested text[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer, requested text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer, requested text[]) TO svc_request;

--
-- Name: FUNCTION oauth_refusal(error text, description text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_refusal(error text, description text) FROM PUBLIC;

--
-- Name: FUNCTION oauth_revoke_grant(grant_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) TO svc_request;

--
-- Name: FUNCTION oauth_revoke_on_deactivation(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_revoke_on_deactivation() FROM PUBLIC;

--
-- Name: FUNCTION oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) TO svc_request;
