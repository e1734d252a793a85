-- db/schema/platform.sql: the shared machinery: tenancy, credentials and claims, idempotency, paging, jobs, analysts.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: app_analytics; Type: SCHEMA; Schema: -; Owner: svc_owner
--

CREATE SCHEMA app_analytics;

ALTER SCHEMA app_analytics OWNER TO svc_owner;

--
-- Name: SCHEMA app_analytics; Type: COMMENT; Schema: -; Owner: svc_owner
--

COMMENT ON SCHEMA app_analytics IS 'Read-only views for analysts on replicas, under the tables'' row-level policies.';

--
-- Name: app_hidden; Type: SCHEMA; Schema: -; Owner: svc_owner
--

CREATE SCHEMA app_hidden;

ALTER SCHEMA app_hidden OWNER TO svc_owner;

--
-- Name: SCHEMA app_hidden; Type: COMMENT; Schema: -; Owner: svc_owner
--

COMMENT ON SCHEMA app_hidden IS 'Helpers callable by the request role (claim readers, predicates); not data.';

--
-- Name: app_private; Type: SCHEMA; Schema: -; Owner: svc_owner
--

CREATE SCHEMA app_private;

ALTER SCHEMA app_private OWNER TO svc_owner;

--
-- Name: SCHEMA app_private; Type: COMMENT; Schema: -; Owner: svc_owner
--

COMMENT ON SCHEMA app_private IS 'Secrets and internals; no grants to request or analyst roles.';

--
-- Name: app_public; Type: SCHEMA; Schema: -; Owner: svc_owner
--

CREATE SCHEMA app_public;

ALTER SCHEMA app_public OWNER TO svc_owner;

--
-- Name: SCHEMA app_public; Type: COMMENT; Schema: -; Owner: svc_owner
--

COMMENT ON SCHEMA app_public IS 'Tenant data, visible to the request and analyst roles through row-level security.';

--
-- Name: btree_gin; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;

--
-- Name: EXTENSION btree_gin; Type: COMMENT; Schema: -; Owner:
--

COMMENT ON EXTENSION btree_gin IS 'support for indexing common datatypes in GIN';

--
-- Name: btree_gist; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public;

--
-- Name: EXTENSION btree_gist; Type: COMMENT; Schema: -; Owner:
--

COMMENT ON EXTENSION btree_gist IS 'support for indexing common datatypes in GiST';

--
-- Name: citext; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public;

--
-- Name: EXTENSION citext; Type: COMMENT; Schema: -; Owner:
--

COMMENT ON EXTENSION citext IS 'data type for case-insensitive character strings';

--
-- Name: pg_trgm; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

--
-- Name: EXTENSION pg_trgm; Type: COMMENT; Schema: -; Owner:
--

COMMENT ON EXTENSION pg_trgm IS 'text similarity measurement and index searching based on trigrams';

--
-- Name: analyst_claim(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.analyst_claim(claim text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select coalesce((
    select case claim
             when 'organization_id' then coalesce(a.organization_id::text, '')
             when 'location_ids' then case when a.location_ids is null then '*' else a.location_ids::text end
           end
      from app_private.analysts a
     where a.role_name = session_user), '')
$$;

ALTER FUNCTION app_hidden.analyst_claim(claim text) OWNER TO svc_owner;

--
-- Name: FUNCTION analyst_claim(claim text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.analyst_claim(claim text) IS 'An analyst''s claim from its own row of app_private.analysts (keyed by session_user); '''' when it has none. Read through app_hidden.session_claim.';

--
-- Name: authenticate(bytea, text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) OWNER TO svc_owner;

--
-- Name: FUNCTION authenticate(key_hash bytea, required_scope text, member_access text, manager_power text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) IS 'Resolves a key hash (an API key''s, or an OAuth access token''s as a personal key of its grant''s person), sets the svc.* claims for the transaction, enforces the operation''s requirements (app_hidden.requirement_refusal), and answers the claims with the exact settings it set (settings).';

--
-- Name: authorize_internal_graphql(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.authorize_internal_graphql() RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
  -- the read scopes of the catalog (src/auth/scopes.ts), in its order
  read_scopes constant text[] := array['contacts:read', 'sequences:read', 'appointments:read',
    'conversations:read', 'calls:read', 'audiences:read', 'forms:read'];
  missing text;
begin
  select s into missing from unnest(read_scopes) with ordinality as r(s, n)
   where not (s = any(app_hidden.current_scopes()))
   order by n
   limit 1;
  if missing is not null then
    perform app_hidden.raise_error(403, 'insufficient_scope',
      format('Internal GraphQL needs every read scope; this credential lacks %s', missing),
      jsonb_build_object('required', missing));
  end if;

  if not (coalesce(app_hidden.current_role() in ('organization', 'owner', 'admin'), false)
          and app_hidden.current_reaches_all_locations()
          and app_hidden.current_records_level() = 'all'
          and coalesce(app_hidden.current_sees_contact_details(), false)
          and app_hidden.current_has_power('contacts')
          and app_hidden.current_has_power('sequences')
          and app_hidden.current_has_power('appointments')
          and app_hidden.current_has_power('staff')) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Internal GraphQL is for credentials that reach the whole organization with every field: '
      || 'an organization key without a role or location limits, or an owner''s or admin''s personal key');
  end if;
end $$;

ALTER FUNCTION app_hidden.authorize_internal_graphql() OWNER TO svc_owner;

--
-- Name: FUNCTION authorize_internal_graphql(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.authorize_internal_graphql() IS 'Raises 403 unless the current credential may use internal GraphQL over HTTP: every read scope (insufficient_scope, naming the first missing), and the whole organization, all records, contact details and every manager power (insufficient_role). Called right after app_hidden.authenticate.';

--
-- Name: authorize_mcp(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.authorize_mcp(requirements jsonb) RETURNS text[]
    LANGUAGE plpgsql STABLE
    AS $$
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

ALTER FUNCTION app_hidden.authorize_mcp(requirements jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION authorize_mcp(requirements jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.authorize_mcp(requirements jsonb) IS 'Raises 404 while the current organization has MCP turned off; else answers the operation ids of requirements ([{operation_id, scope, member_access, manager_power}]) the current claims meet. Called right after app_hidden.authenticate.';

--
-- Name: current_credential_id(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_credential_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select nullif(app_hidden.session_claim('credential_id'), '')::uuid
$$;

ALTER FUNCTION app_hidden.current_credential_id() OWNER TO svc_owner;

--
-- Name: FUNCTION current_credential_id(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_credential_id() IS 'The key of the current request; NULL for analysts.';

--
-- Name: current_has_power(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_has_power(power text) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_role() in ('organization', 'owner', 'admin')
      or (app_hidden.current_role() = 'manager' and power = any(app_hidden.current_powers()))
$$;

ALTER FUNCTION app_hidden.current_has_power(power text) OWNER TO svc_owner;

--
-- Name: FUNCTION current_has_power(power text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_has_power(power text) IS 'Whether the credential holds a manager power (organization-wide credentials hold them all).';

--
-- Name: current_in_reach(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_in_reach(location_id uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_reaches_all_locations()
      or location_id = any(app_hidden.current_location_ids())
$$;

ALTER FUNCTION app_hidden.current_in_reach(location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_in_reach(location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_in_reach(location_id uuid) IS 'Whether a location is within the credential''s reach.';

--
-- Name: current_key_creator_left(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_key_creator_left() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if coalesce(current_setting('svc.user_id', true), '') <> '' then
    return false;  -- a personal key (or an OAuth token): its person is the one using it
  end if;
  return coalesce((select not p.active
                     from app_private.api_keys k
                     join app_public.people p on p.organization_id = k.organization_id and p.id = k.created_by
                    where k.id = app_hidden.current_credential_id() and k.organization_id = app_hidden.current_org_id()
                      and k.kind = 'organization'), false);
end $$;

ALTER FUNCTION app_hidden.current_key_creator_left() OWNER TO svc_owner;

--
-- Name: FUNCTION current_key_creator_left(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_key_creator_left() IS 'Whether the credential is an organization key whose creator is no longer active.';

--
-- Name: current_location_ids(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_location_ids() RETURNS uuid[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  -- one expression (no FROM), so PostgreSQL inlines it into the statement that calls it
  select case
    when app_hidden.session_claim('location_ids') = '*' then null
    else coalesce(nullif(app_hidden.session_claim('location_ids'), '')::uuid[], '{}')
  end
$$;

ALTER FUNCTION app_hidden.current_location_ids() OWNER TO svc_owner;

--
-- Name: FUNCTION current_location_ids(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_location_ids() IS 'Locations a location-bound credential (or analyst) reaches; NULL when it reaches the whole organization, empty when unset.';

--
-- Name: current_org_id(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_org_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select nullif(app_hidden.session_claim('organization_id'), '')::uuid
$$;

ALTER FUNCTION app_hidden.current_org_id() OWNER TO svc_owner;

--
-- Name: FUNCTION current_org_id(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_org_id() IS 'Organization of the current credential (an analyst''s: its mapping); NULL (sees nothing) when unset.';

--
-- Name: current_powers(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_powers() RETURNS text[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(nullif(app_hidden.session_claim('powers'), '')::text[], '{}')
$$;

ALTER FUNCTION app_hidden.current_powers() OWNER TO svc_owner;

--
-- Name: FUNCTION current_powers(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_powers() IS 'Manager powers of the credential; none for analysts.';

--
-- Name: current_reaches_all_locations(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_reaches_all_locations() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(app_hidden.session_claim('location_ids') = '*', false)
$$;

ALTER FUNCTION app_hidden.current_reaches_all_locations() OWNER TO svc_owner;

--
-- Name: FUNCTION current_reaches_all_locations(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_reaches_all_locations() IS 'True only when the credential (or the analyst''s mapping) explicitly reaches the whole organization.';

--
-- Name: current_records_level(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_records_level() RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(nullif(app_hidden.session_claim('records_level'), ''), 'all')
$$;

ALTER FUNCTION app_hidden.current_records_level() OWNER TO svc_owner;

--
-- Name: FUNCTION current_records_level(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_records_level() IS 'all, or own for a member who reads only their own clients; all for analysts (their reach is their locations).';

--
-- Name: current_role(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden."current_role"() RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select nullif(app_hidden.session_claim('role'), '')
$$;

ALTER FUNCTION app_hidden."current_role"() OWNER TO svc_owner;

--
-- Name: FUNCTION "current_role"(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden."current_role"() IS 'Effective role: organization (key with no role), owner, admin, manager or member; NULL for analysts.';

--
-- Name: current_scopes(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_scopes() RETURNS text[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(nullif(app_hidden.session_claim('scopes'), '')::text[], '{}')
$$;

ALTER FUNCTION app_hidden.current_scopes() OWNER TO svc_owner;

--
-- Name: FUNCTION current_scopes(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_scopes() IS 'Scopes of the key; none for analysts.';

--
-- Name: current_user_id(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_user_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select nullif(app_hidden.session_claim('user_id'), '')::uuid
$$;

ALTER FUNCTION app_hidden.current_user_id() OWNER TO svc_owner;

--
-- Name: FUNCTION current_user_id(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_user_id() IS 'Person the credential acts for; NULL for organization keys and analysts.';

--
-- Name: people; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.people (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    email public.citext NOT NULL,
    role text NOT NULL,
    powers text[] DEFAULT '{}'::text[] NOT NULL,
    sms_enabled boolean DEFAULT true NOT NULL,
    records_level text DEFAULT 'all'::text NOT NULL,
    active boolean DEFAULT true NOT NULL,
    agent_access boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT people_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT people_powers_check CHECK ((powers <@ ARRAY['contacts'::text, 'sequences'::text, 'appointments'::text, 'staff'::text])),
    CONSTRAINT people_records_level_check CHECK ((records_level = ANY (ARRAY['all'::text, 'own'::text]))),
    CONSTRAINT people_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'manager'::text, 'member'::text])))
);

ALTER TABLE app_public.people OWNER TO svc_owner;

--
-- Name: TABLE people; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.people IS 'A person and their membership of the organization: role, powers, settings.';

--
-- Name: COLUMN people.powers; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.people.powers IS 'Manager powers: contacts, sequences, appointments, staff (meaningful for managers only).';

--
-- Name: COLUMN people.records_level; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.people.records_level IS 'all, or own: a member who reads only their own appointments and clients.';

--
-- Name: COLUMN people.agent_access; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.people.agent_access IS 'While false, this person''s personal keys and OAuth tokens get 401 (an owner''s is always on).';

--
-- Name: locations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.locations (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    timezone text DEFAULT 'UTC'::text NOT NULL,
    staffed boolean DEFAULT true NOT NULL,
    sms_number text,
    hours jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    slot_interval_minutes integer DEFAULT 15 NOT NULL,
    address jsonb,
    CONSTRAINT locations_address_check CHECK (((address IS NULL) OR (jsonb_typeof(address) = 'object'::text))),
    CONSTRAINT locations_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT locations_slot_interval_minutes_check CHECK (((slot_interval_minutes >= 5) AND (slot_interval_minutes <= 240)))
);

ALTER TABLE app_public.locations OWNER TO svc_owner;

--
-- Name: TABLE locations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.locations IS 'A place of business with its IANA time zone and opening hours.';

--
-- Name: COLUMN locations.hours; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.locations.hours IS 'Opening hours: [{day: mon..sun, open: HH:MM, close: HH:MM}].';

--
-- Name: COLUMN locations.slot_interval_minutes; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.locations.slot_interval_minutes IS 'Spacing of the starts of offered slots (minutes from each opening).';

--
-- Name: COLUMN locations.address; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.locations.address IS 'Street address: {line1, line2, city, region, postal_code, country_code}.';

--
-- Name: html_escape(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.html_escape(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
  select replace(replace(replace(replace(replace(value, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')
$$;

ALTER FUNCTION app_hidden.html_escape(value text) OWNER TO svc_owner;

--
-- Name: FUNCTION html_escape(value text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.html_escape(value text) IS 'Text made safe inside HTML (& < > " '').';

--
-- Name: idempotency_claim(text, text, text, timestamp with time zone); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  r app_private.idempotency_keys;
  cred uuid := app_hidden.current_credential_id();
begin
  if cred is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  -- held to the end of this transaction, so until its answer is committed and visible
  if not pg_try_advisory_xact_lock(app_private.idempotency_lock_key(cred, idempotency_claim.operation_id, idempotency_claim.key)) then
    perform app_hidden.raise_error(409, 'idempotency_in_progress',
      'The first call with this idempotency_key is still running; retry shortly');
  end if;
  select * into r from app_private.idempotency_keys k
   where k.credential_id = cred and k.operation_id = idempotency_claim.operation_id and k.key = idempotency_claim.key
     and k.created_at > at - interval '24 hours';
  if not found then
    return;
  end if;
  if r.fingerprint <> app_hidden.idempotency_fingerprint(details) then
    perform app_hidden.raise_error(409, 'idempotency_key_reused',
      'This idempotency_key was used with other details (or different access); use a new key');
  elsif r.state <> 'done' then
    -- 'failed', or 'running' while this transaction holds the key's lock: a first call of the
    -- earlier protocol that died after starting
    perform app_hidden.raise_error(409, 'idempotency_outcome_unknown',
      'The first call with this idempotency_key failed after starting and may have taken effect; read the state before retrying with a new key');
  end if;
  response_status := r.response_status;
  response_body := r.response_body;
end $$;

ALTER FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) IS 'Claims an idempotency key for the current transaction (advisory xact lock), or returns the stored answer, or raises the 409 that applies.';

--
-- Name: idempotency_fingerprint(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.idempotency_fingerprint(details text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select encode(sha256(convert_to(details
    || '|' || current_setting('svc.role') || '|' || current_setting('svc.location_ids')
    || '|' || current_setting('svc.powers') || '|' || current_setting('svc.scopes'), 'UTF8')), 'hex')
$$;

ALTER FUNCTION app_hidden.idempotency_fingerprint(details text) OWNER TO svc_owner;

--
-- Name: FUNCTION idempotency_fingerprint(details text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.idempotency_fingerprint(details text) IS 'Fingerprint of an idempotent call: the details'' hash and the current credential''s access (inlined: no SET clause).';

--
-- Name: idempotency_record(text, text, text, timestamp with time zone, integer, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  insert into app_private.idempotency_keys as k
    (credential_id, operation_id, key, organization_id, fingerprint, state, response_status, response_body, created_at)
  values (app_hidden.current_credential_id(), idempotency_record.operation_id, idempotency_record.key,
          app_hidden.current_org_id(), app_hidden.idempotency_fingerprint(details), 'done', status, body, at)
  on conflict on constraint idempotency_keys_pkey do update
     set fingerprint = excluded.fingerprint, state = 'done', response_status = excluded.response_status,
         response_body = excluded.response_body, created_at = excluded.created_at, updated_at = now();
end $$;

ALTER FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) IS 'Stores the answer of an idempotent call in the transaction of its write.';

--
-- Name: is_date(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.is_date(value text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  perform value::date;
  return true;
exception when others then
  return false;
end $$;

ALTER FUNCTION app_hidden.is_date(value text) OWNER TO svc_owner;

--
-- Name: is_time_zone(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.is_time_zone(name text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select exists (select 1 from pg_catalog.pg_timezone_names z where z.name = is_time_zone.name)
$$;

ALTER FUNCTION app_hidden.is_time_zone(name text) OWNER TO svc_owner;

--
-- Name: FUNCTION is_time_zone(name text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.is_time_zone(name text) IS 'Whether a name is an IANA time zone this server knows (not an abbreviation or offset).';

--
-- Name: is_timestamptz(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.is_timestamptz(value text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform value::timestamptz;
  return true;
exception when others then
  return false;
end $$;

ALTER FUNCTION app_hidden.is_timestamptz(value text) OWNER TO svc_owner;

--
-- Name: like_anywhere(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.like_anywhere(value text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select '%' || replace(replace(replace(value, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

ALTER FUNCTION app_hidden.like_anywhere(value text) OWNER TO svc_owner;

--
-- Name: location_json(app_public.locations); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.location_json(l app_public.locations) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('id', l.id, 'name', l.name, 'timezone', l.timezone, 'staffed', l.staffed, 'hours', l.hours,
                            'slot_interval_minutes', l.slot_interval_minutes, 'address', l.address)
$$;

ALTER FUNCTION app_hidden.location_json(l app_public.locations) OWNER TO svc_owner;

--
-- Name: FUNCTION location_json(l app_public.locations); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.location_json(l app_public.locations) IS 'A location as locations_list answers it.';

--
-- Name: ops_job_counts(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.ops_job_counts() RETURNS TABLE(task text, state text, n bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return query
  select t.identifier,
         case when j.locked_at is not null then 'running'
              when j.attempts >= j.max_attempts then 'failed'
              else 'queued' end,
         count(*)
    from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
   group by 1, 2;
end $$;

ALTER FUNCTION app_hidden.ops_job_counts() OWNER TO svc_owner;

--
-- Name: FUNCTION ops_job_counts(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.ops_job_counts() IS 'Background jobs by task and state (queued, running, failed), for /metrics.';

--
-- Name: page_error(text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.page_error(param text, message text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform app_hidden.raise_error(400, 'bad_request', format('query.%s: %s', param, message),
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', 'query.' || param, 'message', message))));
end $$;

ALTER FUNCTION app_hidden.page_error(param text, message text) OWNER TO svc_owner;

--
-- Name: FUNCTION page_error(param text, message text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.page_error(param text, message text) IS 'Raises 400 bad_request naming query.<param>, with the issues list a validation error carries.';

--
-- Name: page_limit(integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.page_limit(page_size integer) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  if page_size < 1 then
    perform app_hidden.page_error('limit', 'Too small: expected number to be >=1');
  elsif page_size > 100 then
    perform app_hidden.page_error('limit', 'Too big: expected number to be <=100');
  end if;
  return coalesce(page_size, 25);
end $$;

ALTER FUNCTION app_hidden.page_limit(page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION page_limit(page_size integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.page_limit(page_size integer) IS 'The page size to answer: 25 when NULL; 400 naming query.limit outside 1 to 100 (spec: Limits).';

--
-- Name: page_number(integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.page_number(page integer) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  if page < 1 then
    perform app_hidden.page_error('page', 'Too small: expected number to be >=1');
  end if;
  return coalesce(page, 1);
end $$;

ALTER FUNCTION app_hidden.page_number(page integer) OWNER TO svc_owner;

--
-- Name: FUNCTION page_number(page integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.page_number(page integer) IS 'The page to answer: 1 when NULL; 400 naming query.page below 1 (spec: Limits).';

--
-- Name: page_of(jsonb, integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
  select jsonb_build_object(
    'items', coalesce((select jsonb_agg(e.v order by e.i) from jsonb_array_elements(items) with ordinality e(v, i)
                        where e.i > (page - 1)::bigint * page_size and e.i <= page::bigint * page_size), '[]'),
    'total', jsonb_array_length(items), 'page', page, 'limit', page_size)
$$;

ALTER FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION page_of(items jsonb, page integer, page_size integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) IS 'The page of a JSON array, with total, page and limit (pages checked by the caller).';

--
-- Name: raise_error(integer, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb DEFAULT NULL::jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  raise exception using
    errcode = 'SV' || status::text,
    message = code,
    detail = message,
    hint = coalesce(extra::text, '');
end $$;

ALTER FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION raise_error(status integer, code text, message text, extra jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) IS 'Raises an API error: SQLSTATE SV<status>, message = error code, detail = human message, hint = extra envelope fields as JSON.';

--
-- Name: rate_limit_add(timestamp with time zone, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.rate_limit_add(window_start timestamp with time zone, counts jsonb) RETURNS TABLE(client text, route text, hits integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  delete from app_private.rate_limit_windows w where w.window_start < rate_limit_add.window_start - interval '2 minutes';
  return query
  insert into app_private.rate_limit_windows as w (window_start, client, route, hits)
  select rate_limit_add.window_start, c.client, c.route, c.hits
    from jsonb_to_recordset(counts) as c (client text, route text, hits int)
  on conflict on constraint rate_limit_windows_pkey do update set hits = w.hits + excluded.hits
  returning w.client, w.route, w.hits;
end $$;

ALTER FUNCTION app_hidden.rate_limit_add(window_start timestamp with time zone, counts jsonb) OWNER TO svc_owner;

--
-- Name: require_location(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.require_location(location_id uuid) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
begin
  if location_id is null then
    return;
  end if;
  perform 1 from app_public.locations l where l.organization_id = app_hidden.current_org_id() and l.id = require_location.location_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.require_location(location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION require_location(location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.require_location(location_id uuid) IS 'Raises 404 unless the credential reaches the location.';

--
-- Name: requirement_refusal(text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.requirement_refusal_for(app_hidden.current_role(), app_hidden.current_powers(),
    app_hidden.current_sms_enabled(), app_hidden.current_scopes(), required_scope, member_access, manager_power)
$$;

ALTER FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) OWNER TO svc_owner;

--
-- Name: FUNCTION requirement_refusal(required_scope text, member_access text, manager_power text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) IS 'Whether the current claims meet an operation''s requirements (app_hidden.requirement_refusal_for asked about them): null, or the refusal as {status, error, message, extra}.';

--
-- Name: requirement_refusal_for(text, text[], boolean, text[], text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.requirement_refusal_for(acting text, powers text[], sms_enabled boolean, scopes text[], required_scope text, member_access text, manager_power text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
begin
  if required_scope is not null and not (required_scope = any(scopes)) then
    return jsonb_build_object('status', 403, 'error', 'insufficient_scope',
      'message', format('This credential lacks the %s scope', required_scope),
      'extra', jsonb_build_object('required', required_scope));
  end if;
  if acting = 'manager' then
    if manager_power is not null and not (manager_power = any(powers)) then
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
    elsif member_access = 'sms_setting' and not sms_enabled then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'Texting is turned off for this member');
    end if;
  end if;
  return null;
end $$;

ALTER FUNCTION app_hidden.requirement_refusal_for(acting text, powers text[], sms_enabled boolean, scopes text[], required_scope text, member_access text, manager_power text) OWNER TO svc_owner;

--
-- Name: FUNCTION requirement_refusal_for(acting text, powers text[], sms_enabled boolean, scopes text[], required_scope text, member_access text, manager_power text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.requirement_refusal_for(acting text, powers text[], sms_enabled boolean, scopes text[], required_scope text, member_access text, manager_power text) IS 'The rule of who may call an operation: whether a credential acting as `acting` (owner, admin, manager, member, organization), with these powers, SMS setting and scopes, meets the operation''s requirements (scope, member access, manager power): null, or the refusal as {status, error, message, extra}. Scope is checked first, so insufficient_scope names the scope.';

--
-- Name: add_job(text, jsonb, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.add_job(identifier text, payload jsonb, job_key text DEFAULT NULL::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform graphile_worker.add_job(identifier, payload::json, job_key => job_key, run_at => run_at);
end $$;

ALTER FUNCTION app_private.add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone) IS 'graphile_worker.add_job for our own security-definer functions; owned by svc_owner, never granted to request roles.';

--
-- Name: analysts_lock_down_database(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.analysts_lock_down_database() RETURNS boolean
    LANGUAGE plpgsql
    AS $$
begin
  -- the database's owner or a superuser may change its privileges; anyone else leaves them
  if not (select rolsuper from pg_roles where rolname = current_user)
     and not pg_has_role(current_user, (select datdba from pg_database where datname = current_database()), 'member') then
    return false;
  end if;
  execute format('revoke temporary on database %I from public', current_database());
  execute format('grant temporary on database %I to svc_owner, svc_login, svc_request, svc_worker', current_database());
  return true;
end $$;

ALTER FUNCTION app_private.analysts_lock_down_database() OWNER TO svc_owner;

--
-- Name: FUNCTION analysts_lock_down_database(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.analysts_lock_down_database() IS 'Takes TEMP on the current database from PUBLIC (analysts make no temporary table), gives it to the service''s roles; false when the caller may not.';

--
-- Name: claim_inbound_identifier(uuid, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.claim_inbound_identifier(org uuid, kind text, value text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  ident text := app_private.inbound_identifier(kind, value);
  holder uuid;
begin
  if ident is null then return; end if;
  insert into app_private.inbound_claims as c (identifier, kind, organization_id) values (ident, kind, org)
  on conflict (identifier) do update set organization_id = c.organization_id
  returning c.organization_id into holder;
  if holder <> org then
    if kind = 'email_domain' then
      perform app_hidden.raise_error(409, 'domain_in_use',
        format('The sending domain %s is in use by another organization', ident), jsonb_build_object('identifier', ident));
    else
      perform app_hidden.raise_error(409, 'number_in_use',
        format('The number %s is in use by another organization', ident), jsonb_build_object('identifier', ident));
    end if;
  end if;
end $$;

ALTER FUNCTION app_private.claim_inbound_identifier(org uuid, kind text, value text) OWNER TO svc_owner;

--
-- Name: FUNCTION claim_inbound_identifier(org uuid, kind text, value text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.claim_inbound_identifier(org uuid, kind text, value text) IS 'Claims a sending domain or phone number for an organization; 409 domain_in_use / number_in_use when another organization holds it.';

--
-- Name: idempotency_lock_key(uuid, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  -- operation ids hold no ':', so the parts cannot run into each other
  select hashtextextended('svc.idempotency:' || credential_id::text || ':' || operation_id || ':' || key, 0)
$$;

ALTER FUNCTION app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text) OWNER TO svc_owner;

--
-- Name: FUNCTION idempotency_lock_key(credential_id uuid, operation_id text, key text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text) IS 'Advisory-lock key held by the connection running the first call of (credential, operation, idempotency key).';

--
-- Name: inbound_identifier(text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.inbound_identifier(kind text, value text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select case when nullif(btrim(value), '') is null then null
              when kind = 'email_domain' then lower(btrim(value)) else btrim(value) end
$$;

ALTER FUNCTION app_private.inbound_identifier(kind text, value text) OWNER TO svc_owner;

--
-- Name: inbound_identifier_held(uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.inbound_identifier_held(org uuid, ident text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select exists (select 1 from app_public.organizations o
                  where o.id = org and (app_private.inbound_identifier('email_domain', o.sending_email_domain) = ident
                                        or o.default_sms_number = ident))
      or exists (select 1 from app_public.locations l where l.organization_id = org and l.sms_number = ident)
$$;

ALTER FUNCTION app_private.inbound_identifier_held(org uuid, ident text) OWNER TO svc_owner;

--
-- Name: locations_claim_number(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.locations_claim_number() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' or new.sms_number is distinct from old.sms_number or new.organization_id <> old.organization_id then
    perform app_private.claim_inbound_identifier(new.organization_id, 'phone_number', new.sms_number);
  end if;
  return new;
end $$;

ALTER FUNCTION app_private.locations_claim_number() OWNER TO svc_owner;

--
-- Name: locations_release_number(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.locations_release_number() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op = 'DELETE' or new.sms_number is distinct from old.sms_number or new.organization_id <> old.organization_id then
    perform app_private.release_inbound_identifier(old.organization_id, 'phone_number', old.sms_number);
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.locations_release_number() OWNER TO svc_owner;

--
-- Name: move_inbound_identifier(text, text, uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.move_inbound_identifier(kind text, value text, to_org uuid, to_location uuid DEFAULT NULL::uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  ident text := app_private.inbound_identifier(kind, value);
  old_org uuid;
begin
  if ident is null or kind not in ('email_domain', 'phone_number') then
    perform app_hidden.raise_error(422, 'invalid_identifier', 'Name a sending domain or a phone number');
  end if;
  if kind = 'email_domain' and to_location is not null then
    perform app_hidden.raise_error(422, 'invalid_identifier', 'A sending domain belongs to an organization, not a location');
  end if;
  perform 1 from app_public.organizations o where o.id = to_org for update;
  if not found then perform app_hidden.raise_error(404, 'not_found', 'No such organization'); end if;
  if to_location is not null then
    perform 1 from app_public.locations l where l.organization_id = to_org and l.id = to_location;
    if not found then perform app_hidden.raise_error(404, 'not_found', 'No such location in that organization'); end if;
  end if;
  select c.organization_id into old_org from app_private.inbound_claims c where c.identifier = ident for update;
  if old_org is not null and old_org <> to_org then
    update app_public.organizations o set sending_email_domain = null
     where o.id = old_org and app_private.inbound_identifier('email_domain', o.sending_email_domain) = ident;
    update app_public.organizations o set default_sms_number = null where o.id = old_org and o.default_sms_number = ident;
    update app_public.locations l set sms_number = null where l.organization_id = old_org and l.sms_number = ident;
  end if;
  if kind = 'email_domain' then
    update app_public.organizations o set sending_email_domain = ident where o.id = to_org;
  elsif to_location is null then
    update app_public.organizations o set default_sms_number = ident where o.id = to_org;
  else
    update app_public.locations l set sms_number = ident where l.organization_id = to_org and l.id = to_location;
  end if;
  return jsonb_build_object('identifier', ident, 'kind', kind, 'from_organization_id', old_org,
                            'to_organization_id', to_org, 'to_location_id', to_location);
end $$;

ALTER FUNCTION app_private.move_inbound_identifier(kind text, value text, to_org uuid, to_location uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION move_inbound_identifier(kind text, value text, to_org uuid, to_location uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.move_inbound_identifier(kind text, value text, to_org uuid, to_location uuid) IS 'Operators only (svc admin org move): moves a sending domain or number to another organization (or one of its locations) in one transaction.';

--
-- Name: organizations_claim_identifiers(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.organizations_claim_identifiers() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' or new.sending_email_domain is distinct from old.sending_email_domain then
    perform app_private.claim_inbound_identifier(new.id, 'email_domain', new.sending_email_domain);
  end if;
  if tg_op = 'INSERT' or new.default_sms_number is distinct from old.default_sms_number then
    perform app_private.claim_inbound_identifier(new.id, 'phone_number', new.default_sms_number);
  end if;
  return new;
end $$;

ALTER FUNCTION app_private.organizations_claim_identifiers() OWNER TO svc_owner;

--
-- Name: organizations_release_identifiers(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.organizations_release_identifiers() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if new.sending_email_domain is distinct from old.sending_email_domain then
    perform app_private.release_inbound_identifier(old.id, 'email_domain', old.sending_email_domain);
  end if;
  if new.default_sms_number is distinct from old.default_sms_number then
    perform app_private.release_inbound_identifier(old.id, 'phone_number', old.default_sms_number);
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.organizations_release_identifiers() OWNER TO svc_owner;

--
-- Name: api_keys; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.api_keys (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    kind text NOT NULL,
    name text,
    created_by uuid NOT NULL,
    role text,
    scopes text[] NOT NULL,
    powers text[] DEFAULT '{}'::text[] NOT NULL,
    key_hash bytea NOT NULL,
    revoked_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT api_keys_check CHECK (((kind = 'organization'::text) OR (role IS NULL))),
    CONSTRAINT api_keys_key_hash_check CHECK ((length(key_hash) = 32)),
    CONSTRAINT api_keys_kind_check CHECK ((kind = ANY (ARRAY['personal'::text, 'organization'::text]))),
    CONSTRAINT api_keys_powers_check CHECK ((powers <@ ARRAY['contacts'::text, 'sequences'::text, 'appointments'::text, 'staff'::text])),
    CONSTRAINT api_keys_role_check CHECK ((role = ANY (ARRAY['MANAGER'::text, 'MEMBER'::text])))
);

ALTER TABLE app_private.api_keys OWNER TO svc_owner;

--
-- Name: TABLE api_keys; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.api_keys IS 'Credentials. A personal key follows its person''s current role and locations; an organization key carries its own role, powers and locations, fixed at creation.';

--
-- Name: COLUMN api_keys.key_hash; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.api_keys.key_hash IS 'sha256 of the whole key (svc_sk_ + 32 characters); the key itself is never stored.';

--
-- Name: person_may_hold_key(app_public.people, app_private.api_keys); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.person_may_hold_key(p app_public.people, k app_private.api_keys) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.person_may_hold_key(p app_public.people, k app_private.api_keys) OWNER TO svc_owner;

--
-- Name: release_inbound_identifier(uuid, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.release_inbound_identifier(org uuid, kind text, value text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  ident text := app_private.inbound_identifier(kind, value);
begin
  if ident is null then return; end if;
  delete from app_private.inbound_claims c
   where c.identifier = ident and c.organization_id = org
     and not app_private.inbound_identifier_held(org, ident);
end $$;

ALTER FUNCTION app_private.release_inbound_identifier(org uuid, kind text, value text) OWNER TO svc_owner;

--
-- Name: tg_people__end_dashboard_sessions(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_people__end_dashboard_sessions() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  delete from app_private.dashboard_sessions d where d.organization_id = new.organization_id and d.person_id = new.id;
  delete from app_private.dashboard_links d where d.organization_id = new.organization_id and d.person_id = new.id and d.used_at is null;
  return null;
end $$;

ALTER FUNCTION app_private.tg_people__end_dashboard_sessions() OWNER TO svc_owner;

--
-- Name: tg_people__revoke_keys(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_people__revoke_keys() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_private.api_keys k set revoked_at = now()
   where k.organization_id = new.organization_id and k.created_by = new.id
     and k.revoked_at is null
     and ((k.kind = 'personal' and not new.active)
          or (k.kind = 'organization' and not app_private.person_may_hold_key(new, k)));
  return new;
end $$;

ALTER FUNCTION app_private.tg_people__revoke_keys() OWNER TO svc_owner;

--
-- Name: tg_person_locations__revoke_keys(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_person_locations__revoke_keys() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_private.api_keys k set revoked_at = now()
    from app_public.people p
   where p.organization_id = old.organization_id and p.id = old.person_id
     and k.organization_id = p.organization_id and k.created_by = p.id
     and k.kind = 'organization' and k.revoked_at is null
     and not app_private.person_may_hold_key(p, k);
  return null;
end $$;

ALTER FUNCTION app_private.tg_person_locations__revoke_keys() OWNER TO svc_owner;

--
-- Name: worker_process_announce(text, text[], text, integer); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.worker_process_announce(id text, pool_ids text[], host text, pid integer) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform pg_advisory_lock(app_private.worker_process_key(worker_process_announce.id));
  insert into app_private.worker_processes as p (id, pool_ids, host, pid)
  values (worker_process_announce.id, worker_process_announce.pool_ids, worker_process_announce.host, worker_process_announce.pid)
  on conflict on constraint worker_processes_pkey do update
     set pool_ids = (select array_agg(distinct x) from unnest(p.pool_ids || excluded.pool_ids) x),
         locked_at = now(), seen_at = now();
end $$;

ALTER FUNCTION app_private.worker_process_announce(id text, pool_ids text[], host text, pid integer) OWNER TO svc_owner;

--
-- Name: FUNCTION worker_process_announce(id text, pool_ids text[], host text, pid integer); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.worker_process_announce(id text, pool_ids text[], host text, pid integer) IS 'A worker process takes its advisory lock and writes (or renews) its row, with its graphile-worker pool ids; on its own connection, at start and after each reconnect.';

--
-- Name: worker_process_gone(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.worker_process_gone(id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  delete from app_private.worker_processes p where p.id = worker_process_gone.id;
  perform pg_advisory_unlock(app_private.worker_process_key(worker_process_gone.id));
end $$;

ALTER FUNCTION app_private.worker_process_gone(id text) OWNER TO svc_owner;

--
-- Name: worker_process_key(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.worker_process_key(id text) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$ select hashtextextended('svc.worker_process:' || id, 0) $$;

ALTER FUNCTION app_private.worker_process_key(id text) OWNER TO svc_owner;

--
-- Name: worker_process_seen(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.worker_process_seen(id text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  with seen as (update app_private.worker_processes p set seen_at = now() where p.id = worker_process_seen.id returning 1)
  select exists (select 1 from seen)
$$;

ALTER FUNCTION app_private.worker_process_seen(id text) OWNER TO svc_owner;

--
-- Name: worker_processes_sweep(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.worker_processes_sweep(self text) RETURNS text[]
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  p app_private.worker_processes;
  db_up_since timestamptz := pg_postmaster_start_time();
  dead text[] := '{}';
  pools text[] := '{}';
  g record;
begin
  for p in select * from app_private.worker_processes x where x.id is distinct from self order by x.id for update skip locked loop
    -- the lock is taken for this transaction only when free: held by a live process, it is not
    if (p.locked_at > db_up_since and pg_try_advisory_xact_lock(app_private.worker_process_key(p.id)))
       or (p.seen_at < now() - interval '30 seconds' and db_up_since < now() - interval '30 seconds') then
      dead := dead || p.id;
      pools := pools || p.pool_ids;
    end if;
  end loop;
  if cardinality(dead) = 0 then
    return dead;
  end if;
  -- The sequence messages a dead process held with the transport: unknown (never handed over
  -- again), their enrollments moved on, as the step's claim does for a run sending past its
  -- bound. A broadcast run settles its own (app_private.broadcast_claim_batch, when its job runs
  -- again).
  for g in
    with gone as (
      update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
        from app_public.enrollments e
       where sr.claimed_by = any(dead) and sr.status = 'sending'
         and e.organization_id = sr.organization_id and e.id = sr.enrollment_id and e.run_id is null
         and e.current_step_key = sr.step_key
      returning sr.organization_id, sr.enrollment_id, sr.step_key, sr.message_id
    ), messages as (
      update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
        from gone
       where m.organization_id = gone.organization_id and m.id = gone.message_id and m.status = 'queued'
    ), logged as (
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
      select gone.organization_id, gone.enrollment_id, 'unknown', gone.step_key, gone.message_id, 'interrupted' from gone
    )
    select gone.organization_id, array_agg(gone.enrollment_id) as ids from gone group by gone.organization_id
  loop
    perform app_private.advance_enrollments(g.organization_id, g.ids);
  end loop;
  -- their jobs run again now, rather than when graphile-worker's four-hour lock expires
  perform graphile_worker.force_unlock_workers(pools);
  delete from app_private.worker_processes x where x.id = any(dead);
  return dead;
end $$;

ALTER FUNCTION app_private.worker_processes_sweep(self text) OWNER TO svc_owner;

--
-- Name: FUNCTION worker_processes_sweep(self text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.worker_processes_sweep(self text) IS 'Finds the worker processes that died (lock free since taken, or unseen for 30 s) and frees their work: sequence messages they held with the transport made unknown and their enrollments moved on, their graphile-worker jobs unlocked, their rows deleted. Answers their ids.';

--
-- Name: analysts; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.analysts (
    role_name text NOT NULL,
    organization_id uuid,
    location_ids uuid[],
    all_organizations boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT analysts_check CHECK ((all_organizations = (organization_id IS NULL))),
    CONSTRAINT analysts_check1 CHECK (((location_ids IS NULL) OR (organization_id IS NOT NULL))),
    CONSTRAINT analysts_location_ids_check CHECK (((location_ids IS NULL) OR (cardinality(location_ids) > 0))),
    CONSTRAINT analysts_role_name_check CHECK ((role_name ~ '^svc_analyst_[a-z0-9_]{1,40}$'::text))
);

ALTER TABLE app_private.analysts OWNER TO svc_owner;

--
-- Name: TABLE analysts; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.analysts IS 'Who each analyst login role is: its organization (NULL for the operator''s all-organizations analysts) and the locations it reaches (NULL: all). Keyed by session_user; written by `svc admin analyst create|revoke` only.';

--
-- Name: api_key_locations; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.api_key_locations (
    organization_id uuid NOT NULL,
    api_key_id uuid NOT NULL,
    location_id uuid NOT NULL
);

ALTER TABLE app_private.api_key_locations OWNER TO svc_owner;

--
-- Name: TABLE api_key_locations; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.api_key_locations IS 'Locations of a location-limited organization key.';

--
-- Name: idempotency_keys; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.idempotency_keys (
    credential_id uuid NOT NULL,
    operation_id text NOT NULL,
    key text NOT NULL,
    organization_id uuid NOT NULL,
    fingerprint text NOT NULL,
    state text NOT NULL,
    response_status integer,
    response_body jsonb,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((length(key) >= 1) AND (length(key) <= 255))),
    CONSTRAINT idempotency_keys_state_check CHECK ((state = ANY (ARRAY['running'::text, 'done'::text, 'failed'::text])))
);

ALTER TABLE app_private.idempotency_keys OWNER TO svc_owner;

--
-- Name: TABLE idempotency_keys; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.idempotency_keys IS 'Replay store for operations that take an idempotency_key: 24 h, per credential, operation and key.';

--
-- Name: COLUMN idempotency_keys.fingerprint; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.idempotency_keys.fingerprint IS 'Hash of the request details and the caller''s access; another fingerprint under the same key is a 409.';

--
-- Name: inbound_claims; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.inbound_claims (
    identifier text NOT NULL,
    kind text NOT NULL,
    organization_id uuid NOT NULL,
    claimed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT inbound_claims_kind_check CHECK ((kind = ANY (ARRAY['email_domain'::text, 'phone_number'::text])))
);

ALTER TABLE app_private.inbound_claims OWNER TO svc_owner;

--
-- Name: TABLE inbound_claims; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.inbound_claims IS 'Every sending domain (lower case) and phone number (E.164) in use, with the one organization that holds it; kept by app_private.claim_inbound_identifiers.';

--
-- Name: rate_limit_windows; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.rate_limit_windows (
    window_start timestamp with time zone NOT NULL,
    client text NOT NULL,
    route text NOT NULL,
    hits integer NOT NULL
);

ALTER TABLE app_private.rate_limit_windows OWNER TO svc_owner;

--
-- Name: TABLE rate_limit_windows; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.rate_limit_windows IS 'Requests per client address and route in one 60 s window, summed over every API process.';

--
-- Name: worker_processes; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.worker_processes (
    id text NOT NULL,
    pool_ids text[] DEFAULT '{}'::text[] NOT NULL,
    host text,
    pid integer,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    locked_at timestamp with time zone DEFAULT now() NOT NULL,
    seen_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE app_private.worker_processes OWNER TO svc_owner;

--
-- Name: TABLE worker_processes; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.worker_processes IS 'Worker processes alive (or not yet known dead): each holds an advisory lock on its id and renews seen_at; app_private.worker_processes_sweep frees the work of a dead one.';

--
-- Name: organizations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.organizations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    mcp_enabled boolean DEFAULT true NOT NULL,
    tag_limit integer DEFAULT 500 NOT NULL,
    sending_email_domain text,
    default_sms_number text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sms_help_text text,
    receptionist jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT organizations_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT organizations_receptionist_check CHECK (((jsonb_typeof(receptionist) = 'object'::text) AND (octet_length((receptionist)::text) <= 65536))),
    CONSTRAINT organizations_sms_help_text_check CHECK (((sms_help_text IS NULL) OR ((length(sms_help_text) >= 1) AND (length(sms_help_text) <= 300)))),
    CONSTRAINT organizations_tag_limit_check CHECK ((tag_limit >= 0))
);

ALTER TABLE app_public.organizations OWNER TO svc_owner;

--
-- Name: TABLE organizations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.organizations IS 'A business using the service; every tenant row belongs to one.';

--
-- Name: COLUMN organizations.mcp_enabled; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.organizations.mcp_enabled IS 'Feature flag: the MCP entry point answers 404 while false.';

--
-- Name: COLUMN organizations.tag_limit; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.organizations.tag_limit IS 'Most distinct tags the organization may hold.';

--
-- Name: COLUMN organizations.sms_help_text; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.organizations.sms_help_text IS 'The answer to an SMS HELP/INFO (1 to 300 characters); null: the default, with the business''s name, the number and STOP.';

--
-- Name: COLUMN organizations.receptionist; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.organizations.receptionist IS 'The receptionist''s settings: {instructions, handover_message, faq: [{question, keywords, answer}]} (all optional).';

--
-- Name: person_locations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.person_locations (
    organization_id uuid NOT NULL,
    person_id uuid NOT NULL,
    location_id uuid NOT NULL
);

ALTER TABLE app_public.person_locations OWNER TO svc_owner;

--
-- Name: TABLE person_locations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.person_locations IS 'Locations a manager or member works at; owners and admins reach every location.';

--
-- Name: role_agent_access; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.role_agent_access (
    organization_id uuid NOT NULL,
    role text NOT NULL,
    agent_access boolean NOT NULL,
    CONSTRAINT role_agent_access_role_check CHECK ((role = ANY (ARRAY['admin'::text, 'manager'::text, 'member'::text])))
);

ALTER TABLE app_public.role_agent_access OWNER TO svc_owner;

--
-- Name: TABLE role_agent_access; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.role_agent_access IS 'Agent access switch for a whole role; absent means on. Owners are always on.';

--
-- Name: analysts analysts_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.analysts
    ADD CONSTRAINT analysts_pkey PRIMARY KEY (role_name);

--
-- Name: api_key_locations api_key_locations_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_key_locations
    ADD CONSTRAINT api_key_locations_pkey PRIMARY KEY (organization_id, api_key_id, location_id);

--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);

--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (organization_id, id);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (credential_id, operation_id, key);

--
-- Name: inbound_claims inbound_claims_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.inbound_claims
    ADD CONSTRAINT inbound_claims_pkey PRIMARY KEY (identifier);

--
-- Name: rate_limit_windows rate_limit_windows_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.rate_limit_windows
    ADD CONSTRAINT rate_limit_windows_pkey PRIMARY KEY (window_start, client, route);

--
-- Name: worker_processes worker_processes_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.worker_processes
    ADD CONSTRAINT worker_processes_pkey PRIMARY KEY (id);

--
-- Name: locations locations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.locations
    ADD CONSTRAINT locations_pkey PRIMARY KEY (organization_id, id);

--
-- Name: organizations organizations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);

--
-- Name: people people_organization_id_email_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.people
    ADD CONSTRAINT people_organization_id_email_key UNIQUE (organization_id, email);

--
-- Name: people people_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.people
    ADD CONSTRAINT people_pkey PRIMARY KEY (organization_id, id);

--
-- Name: person_locations person_locations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.person_locations
    ADD CONSTRAINT person_locations_pkey PRIMARY KEY (organization_id, person_id, location_id);

--
-- Name: role_agent_access role_agent_access_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.role_agent_access
    ADD CONSTRAINT role_agent_access_pkey PRIMARY KEY (organization_id, role);

--
-- Name: analysts_by_organization; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX analysts_by_organization ON app_private.analysts USING btree (organization_id);

--
-- Name: idempotency_keys_created; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX idempotency_keys_created ON app_private.idempotency_keys USING btree (created_at);

--
-- Name: inbound_claims_by_organization; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX inbound_claims_by_organization ON app_private.inbound_claims USING btree (organization_id);

--
-- Name: INDEX appointments_location_blocks; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON INDEX app_public.appointments_location_blocks IS 'Booked one-off blocks of a whole location (no team member, no calendar): what closes a location''s time for everyone.';

--
-- Name: organizations _300_claim_identifiers; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _300_claim_identifiers BEFORE INSERT OR UPDATE OF sending_email_domain, default_sms_number ON app_public.organizations FOR EACH ROW EXECUTE FUNCTION app_private.organizations_claim_identifiers();

--
-- Name: locations _300_claim_number; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _300_claim_number BEFORE INSERT OR UPDATE OF sms_number, organization_id ON app_public.locations FOR EACH ROW EXECUTE FUNCTION app_private.locations_claim_number();

--
-- Name: organizations _300_release_identifiers; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _300_release_identifiers AFTER UPDATE OF sending_email_domain, default_sms_number ON app_public.organizations FOR EACH ROW EXECUTE FUNCTION app_private.organizations_release_identifiers();

--
-- Name: locations _300_release_number; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _300_release_number AFTER DELETE OR UPDATE OF sms_number, organization_id ON app_public.locations FOR EACH ROW EXECUTE FUNCTION app_private.locations_release_number();

--
-- Name: people _500_revoke_keys; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_revoke_keys AFTER UPDATE OF role, powers, active ON app_public.people FOR EACH ROW EXECUTE FUNCTION app_private.tg_people__revoke_keys();

--
-- Name: person_locations _500_revoke_keys; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_revoke_keys AFTER DELETE ON app_public.person_locations FOR EACH ROW EXECUTE FUNCTION app_private.tg_person_locations__revoke_keys();

--
-- Name: locations _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.locations FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: people _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE ON app_public.people FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: person_locations _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.person_locations FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: people _700_availability_active; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_active AFTER UPDATE OF active ON app_public.people FOR EACH ROW WHEN ((old.active IS DISTINCT FROM new.active)) EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: locations _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.locations FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: person_locations _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.person_locations FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: people _930_end_dashboard_sessions; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _930_end_dashboard_sessions AFTER UPDATE OF active ON app_public.people FOR EACH ROW WHEN ((old.active AND (NOT new.active))) EXECUTE FUNCTION app_private.tg_people__end_dashboard_sessions();

--
-- Name: people oauth_revoke_on_deactivation; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER oauth_revoke_on_deactivation AFTER UPDATE OF active ON app_public.people FOR EACH ROW WHEN ((old.active AND (NOT new.active))) EXECUTE FUNCTION app_hidden.oauth_revoke_on_deactivation();

--
-- Name: analysts analysts_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.analysts
    ADD CONSTRAINT analysts_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: api_key_locations api_key_locations_organization_id_api_key_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_key_locations
    ADD CONSTRAINT api_key_locations_organization_id_api_key_id_fkey FOREIGN KEY (organization_id, api_key_id) REFERENCES app_private.api_keys(organization_id, id) ON DELETE CASCADE;

--
-- Name: api_key_locations api_key_locations_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_key_locations
    ADD CONSTRAINT api_key_locations_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_organization_id_created_by_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_keys
    ADD CONSTRAINT api_keys_organization_id_created_by_fkey FOREIGN KEY (organization_id, created_by) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_keys
    ADD CONSTRAINT api_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: idempotency_keys idempotency_keys_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: inbound_claims inbound_claims_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.inbound_claims
    ADD CONSTRAINT inbound_claims_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;

--
-- Name: locations locations_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.locations
    ADD CONSTRAINT locations_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: people people_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.people
    ADD CONSTRAINT people_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: person_locations person_locations_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.person_locations
    ADD CONSTRAINT person_locations_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: person_locations person_locations_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.person_locations
    ADD CONSTRAINT person_locations_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: role_agent_access role_agent_access_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.role_agent_access
    ADD CONSTRAINT role_agent_access_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: analysts; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.analysts ENABLE ROW LEVEL SECURITY;

--
-- Name: api_key_locations; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.api_key_locations ENABLE ROW LEVEL SECURITY;

--
-- Name: api_keys; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.api_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: idempotency_keys; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.idempotency_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: inbound_claims; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.inbound_claims ENABLE ROW LEVEL SECURITY;

--
-- Name: rate_limit_windows; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.rate_limit_windows ENABLE ROW LEVEL SECURITY;

--
-- Name: worker_processes; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.worker_processes ENABLE ROW LEVEL SECURITY;

--
-- Name: locations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.locations ENABLE ROW LEVEL SECURITY;

--
-- Name: organizations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.organizations ENABLE ROW LEVEL SECURITY;

--
-- Name: people; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.people ENABLE ROW LEVEL SECURITY;

--
-- Name: person_locations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.person_locations ENABLE ROW LEVEL SECURITY;

--
-- Name: role_agent_access; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.role_agent_access ENABLE ROW LEVEL SECURITY;

--
-- Name: locations select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.locations FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: organizations select_own; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own ON app_public.organizations FOR SELECT USING ((id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: people select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.people FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: person_locations select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.person_locations FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: role_agent_access select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.role_agent_access FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: SCHEMA app_analytics; Type: ACL; Schema: -; Owner: svc_owner
--

GRANT USAGE ON SCHEMA app_analytics TO svc_analyst;

--
-- Name: SCHEMA app_hidden; Type: ACL; Schema: -; Owner: svc_owner
--

GRANT USAGE ON SCHEMA app_hidden TO svc_request;
GRANT USAGE ON SCHEMA app_hidden TO svc_worker;
GRANT USAGE ON SCHEMA app_hidden TO svc_analyst;

--
-- Name: SCHEMA app_public; Type: ACL; Schema: -; Owner: svc_owner
--

GRANT USAGE ON SCHEMA app_public TO svc_request;
GRANT USAGE ON SCHEMA app_public TO svc_worker;
GRANT USAGE ON SCHEMA app_public TO svc_analyst;

--
-- Name: FUNCTION analyst_claim(claim text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.analyst_claim(claim text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.analyst_claim(claim text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.analyst_claim(claim text) TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.analyst_claim(claim text) TO svc_analyst;

--
-- Name: FUNCTION authenticate(key_hash bytea, required_scope text, member_access text, manager_power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) TO svc_request;

--
-- Name: FUNCTION authorize_internal_graphql(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.authorize_internal_graphql() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.authorize_internal_graphql() TO svc_request;

--
-- Name: FUNCTION authorize_mcp(requirements jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.authorize_mcp(requirements jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.authorize_mcp(requirements jsonb) TO svc_request;

--
-- Name: FUNCTION current_credential_id(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_credential_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_credential_id() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_credential_id() TO svc_worker;

--
-- Name: FUNCTION current_has_power(power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_has_power(power text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_has_power(power text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_has_power(power text) TO svc_worker;

--
-- Name: FUNCTION current_in_reach(location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_in_reach(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_in_reach(location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_in_reach(location_id uuid) TO svc_worker;

--
-- Name: FUNCTION current_key_creator_left(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_key_creator_left() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_key_creator_left() TO svc_request;

--
-- Name: FUNCTION current_location_ids(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_location_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_location_ids() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_location_ids() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_location_ids() TO svc_analyst;

--
-- Name: FUNCTION current_org_id(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_org_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_org_id() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_org_id() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_org_id() TO svc_analyst;

--
-- Name: FUNCTION current_powers(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_powers() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_powers() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_powers() TO svc_worker;

--
-- Name: FUNCTION current_reaches_all_locations(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_reaches_all_locations() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_reaches_all_locations() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_reaches_all_locations() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_reaches_all_locations() TO svc_analyst;

--
-- Name: FUNCTION current_records_level(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_records_level() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_records_level() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_records_level() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_records_level() TO svc_analyst;

--
-- Name: FUNCTION "current_role"(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden."current_role"() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden."current_role"() TO svc_request;
GRANT ALL ON FUNCTION app_hidden."current_role"() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden."current_role"() TO svc_analyst;

--
-- Name: FUNCTION current_scopes(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_scopes() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_scopes() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_scopes() TO svc_worker;

--
-- Name: FUNCTION current_user_id(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_user_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_user_id() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_user_id() TO svc_worker;

--
-- Name: TABLE people; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.people TO svc_request;
GRANT SELECT ON TABLE app_public.people TO svc_worker;
GRANT SELECT ON TABLE app_public.people TO svc_analyst;

--
-- Name: TABLE locations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.locations TO svc_request;
GRANT SELECT ON TABLE app_public.locations TO svc_worker;
GRANT SELECT ON TABLE app_public.locations TO svc_analyst;

--
-- Name: FUNCTION html_escape(value text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.html_escape(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.html_escape(value text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.html_escape(value text) TO svc_worker;

--
-- Name: FUNCTION idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) TO svc_request;

--
-- Name: FUNCTION idempotency_fingerprint(details text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_fingerprint(details text) FROM PUBLIC;

--
-- Name: FUNCTION idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) TO svc_request;

--
-- Name: FUNCTION is_date(value text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.is_date(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.is_date(value text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.is_date(value text) TO svc_worker;

--
-- Name: FUNCTION is_time_zone(name text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.is_time_zone(name text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.is_time_zone(name text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.is_time_zone(name text) TO svc_worker;

--
-- Name: FUNCTION is_timestamptz(value text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.is_timestamptz(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.is_timestamptz(value text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.is_timestamptz(value text) TO svc_worker;

--
-- Name: FUNCTION like_anywhere(value text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.like_anywhere(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.like_anywhere(value text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.like_anywhere(value text) TO svc_worker;

--
-- Name: FUNCTION location_json(l app_public.locations); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.location_json(l app_public.locations) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.location_json(l app_public.locations) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.location_json(l app_public.locations) TO svc_worker;

--
-- Name: FUNCTION ops_job_counts(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.ops_job_counts() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.ops_job_counts() TO svc_worker;

--
-- Name: FUNCTION page_error(param text, message text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.page_error(param text, message text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.page_error(param text, message text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.page_error(param text, message text) TO svc_worker;

--
-- Name: FUNCTION page_limit(page_size integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.page_limit(page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.page_limit(page_size integer) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.page_limit(page_size integer) TO svc_worker;

--
-- Name: FUNCTION page_number(page integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.page_number(page integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.page_number(page integer) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.page_number(page integer) TO svc_worker;

--
-- Name: FUNCTION page_of(items jsonb, page integer, page_size integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) TO svc_worker;

--
-- Name: FUNCTION raise_error(status integer, code text, message text, extra jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) TO svc_worker;

--
-- Name: FUNCTION rate_limit_add(window_start timestamp with time zone, counts jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.rate_limit_add(window_start timestamp with time zone, counts jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.rate_limit_add(window_start timestamp with time zone, counts jsonb) TO svc_worker;

--
-- Name: FUNCTION require_location(location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.require_location(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_location(location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.require_location(location_id uuid) TO svc_worker;

--
-- Name: FUNCTION requirement_refusal(required_scope text, member_access text, manager_power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) TO svc_request;

--
-- Name: FUNCTION requirement_refusal_for(acting text, powers text[], sms_enabled boolean, scopes text[], required_scope text, member_access text, manager_power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.requirement_refusal_for(acting text, powers text[], sms_enabled boolean, scopes text[], required_scope text, member_access text, manager_power text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.requirement_refusal_for(acting text, powers text[], sms_enabled boolean, scopes text[], required_scope text, member_access text, manager_power text) TO svc_request;

--
-- Name: FUNCTION add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION analysts_lock_down_database(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.analysts_lock_down_database() FROM PUBLIC;

--
-- Name: FUNCTION claim_inbound_identifier(org uuid, kind text, value text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.claim_inbound_identifier(org uuid, kind text, value text) FROM PUBLIC;

--
-- Name: FUNCTION idempotency_lock_key(credential_id uuid, operation_id text, key text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text) FROM PUBLIC;

--
-- Name: FUNCTION inbound_identifier(kind text, value text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.inbound_identifier(kind text, value text) FROM PUBLIC;

--
-- Name: FUNCTION inbound_identifier_held(org uuid, ident text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.inbound_identifier_held(org uuid, ident text) FROM PUBLIC;

--
-- Name: FUNCTION locations_claim_number(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.locations_claim_number() FROM PUBLIC;

--
-- Name: FUNCTION locations_release_number(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.locations_release_number() FROM PUBLIC;

--
-- Name: FUNCTION move_inbound_identifier(kind text, value text, to_org uuid, to_location uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.move_inbound_identifier(kind text, value text, to_org uuid, to_location uuid) FROM PUBLIC;

--
-- Name: FUNCTION organizations_claim_identifiers(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.organizations_claim_identifiers() FROM PUBLIC;

--
-- Name: FUNCTION organizations_release_identifiers(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.organizations_release_identifiers() FROM PUBLIC;

--
-- Name: FUNCTION person_may_hold_key(p app_public.people, k app_private.api_keys); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.person_may_hold_key(p app_public.people, k app_private.api_keys) FROM PUBLIC;

--
-- Name: FUNCTION release_inbound_identifier(org uuid, kind text, value text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.release_inbound_identifier(org uuid, kind text, value text) FROM PUBLIC;

--
-- Name: FUNCTION tg_people__end_dashboard_sessions(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_people__end_dashboard_sessions() FROM PUBLIC;

--
-- Name: FUNCTION tg_people__revoke_keys(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_people__revoke_keys() FROM PUBLIC;

--
-- Name: FUNCTION tg_person_locations__revoke_keys(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_person_locations__revoke_keys() FROM PUBLIC;

--
-- Name: FUNCTION worker_process_announce(id text, pool_ids text[], host text, pid integer); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.worker_process_announce(id text, pool_ids text[], host text, pid integer) FROM PUBLIC;

--
-- Name: FUNCTION worker_process_gone(id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.worker_process_gone(id text) FROM PUBLIC;

--
-- Name: FUNCTION worker_process_key(id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.worker_process_key(id text) FROM PUBLIC;

--
-- Name: FUNCTION worker_process_seen(id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.worker_process_seen(id text) FROM PUBLIC;

--
-- Name: FUNCTION worker_processes_sweep(self text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.worker_processes_sweep(self text) FROM PUBLIC;

--
-- Name: FUNCTION lo_creat(integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_creat(integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_create(oid); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_create(oid) FROM PUBLIC;

--
-- Name: FUNCTION lo_from_bytea(oid, bytea); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_from_bytea(oid, bytea) FROM PUBLIC;

--
-- Name: FUNCTION lo_put(oid, bigint, bytea); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_put(oid, bigint, bytea) FROM PUBLIC;

--
-- Name: FUNCTION lo_truncate(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_truncate(integer, integer) FROM PUBLIC;

--
-- Name: FUNCTION lo_truncate64(integer, bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_truncate64(integer, bigint) FROM PUBLIC;

--
-- Name: FUNCTION lo_unlink(oid); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lo_unlink(oid) FROM PUBLIC;

--
-- Name: FUNCTION lowrite(integer, bytea); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.lowrite(integer, bytea) FROM PUBLIC;

--
-- Name: FUNCTION pg_advisory_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_unlock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_unlock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_unlock_all(); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() TO svc_worker;

--
-- Name: FUNCTION pg_advisory_unlock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_unlock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_try_advisory_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_try_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_try_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_try_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_try_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_try_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) TO svc_worker;

--
-- Name: FUNCTION pg_try_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) TO svc_worker;

--
-- Name: FUNCTION pg_try_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: postgres
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) TO svc_owner;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) TO svc_login;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) TO svc_request;
GRANT ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) TO svc_worker;

--
-- Name: TABLE organizations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.organizations TO svc_request;
GRANT SELECT ON TABLE app_public.organizations TO svc_worker;
GRANT SELECT ON TABLE app_public.organizations TO svc_analyst;

--
-- Name: TABLE person_locations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.person_locations TO svc_request;
GRANT SELECT ON TABLE app_public.person_locations TO svc_worker;
GRANT SELECT ON TABLE app_public.person_locations TO svc_analyst;

--
-- Name: TABLE role_agent_access; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.role_agent_access TO svc_request;
GRANT SELECT ON TABLE app_public.role_agent_access TO svc_worker;
GRANT SELECT ON TABLE app_public.role_agent_access TO svc_analyst;

--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: -; Owner: svc_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE svc_owner REVOKE ALL ON FUNCTIONS  FROM PUBLIC;

--
-- Our grants on graphile_worker and our policies on its tables: svc_owner adds jobs
-- through graphile_worker.add_job and add_jobs; PUBLIC executes none of its functions.
--

--
-- Name: _private_job_queues svc_owner_adds_jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY svc_owner_adds_jobs ON graphile_worker._private_job_queues TO svc_owner USING (true) WITH CHECK (true);

--
-- Name: _private_jobs svc_owner_adds_jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY svc_owner_adds_jobs ON graphile_worker._private_jobs TO svc_owner USING (true) WITH CHECK (true);

--
-- Name: _private_tasks svc_owner_adds_jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY svc_owner_adds_jobs ON graphile_worker._private_tasks TO svc_owner USING (true) WITH CHECK (true);

--
-- Name: SCHEMA graphile_worker; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA graphile_worker TO svc_owner;

--
-- Name: TABLE _private_jobs; Type: ACL; Schema: graphile_worker; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE graphile_worker._private_jobs TO svc_owner;

--
-- Name: FUNCTION add_job(identifier text, payload json, queue_name text, run_at timestamp with time zone, max_attempts integer, job_key text, priority integer, flags text[], job_key_mode text); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.add_job(identifier text, payload json, queue_name text, run_at timestamp with time zone, max_attempts integer, job_key text, priority integer, flags text[], job_key_mode text) FROM PUBLIC;
GRANT ALL ON FUNCTION graphile_worker.add_job(identifier text, payload json, queue_name text, run_at timestamp with time zone, max_attempts integer, job_key text, priority integer, flags text[], job_key_mode text) TO svc_owner;

--
-- Name: FUNCTION add_jobs(specs graphile_worker.job_spec[], job_key_preserve_run_at boolean); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.add_jobs(specs graphile_worker.job_spec[], job_key_preserve_run_at boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION graphile_worker.add_jobs(specs graphile_worker.job_spec[], job_key_preserve_run_at boolean) TO svc_owner;

--
-- Name: FUNCTION complete_jobs(job_ids bigint[]); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.complete_jobs(job_ids bigint[]) FROM PUBLIC;

--
-- Name: FUNCTION force_unlock_workers(worker_ids text[]); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.force_unlock_workers(worker_ids text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION graphile_worker.force_unlock_workers(worker_ids text[]) TO svc_owner;

--
-- Name: FUNCTION permanently_fail_jobs(job_ids bigint[], error_message text); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.permanently_fail_jobs(job_ids bigint[], error_message text) FROM PUBLIC;

--
-- Name: FUNCTION remove_job(job_key text); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.remove_job(job_key text) FROM PUBLIC;

--
-- Name: FUNCTION reschedule_jobs(job_ids bigint[], run_at timestamp with time zone, priority integer, attempts integer, max_attempts integer); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.reschedule_jobs(job_ids bigint[], run_at timestamp with time zone, priority integer, attempts integer, max_attempts integer) FROM PUBLIC;

--
-- Name: TABLE _private_job_queues; Type: ACL; Schema: graphile_worker; Owner: -
--

GRANT SELECT,INSERT,UPDATE ON TABLE graphile_worker._private_job_queues TO svc_owner;

--
-- Name: TABLE _private_tasks; Type: ACL; Schema: graphile_worker; Owner: -
--

GRANT SELECT,INSERT ON TABLE graphile_worker._private_tasks TO svc_owner;
