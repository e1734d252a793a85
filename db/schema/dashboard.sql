-- db/schema/dashboard.sql: what src/dashboard/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: dashboard_actor(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_actor() RETURNS app_public.people
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  p app_public.people;
begin
  select x.* into p
    from app_private.dashboard_sessions s
    join app_public.people x on x.organization_id = s.organization_id and x.id = s.person_id
   where s.id = app_hidden.current_credential_id() and s.organization_id = app_hidden.current_org_id()
     and s.person_id = app_hidden.current_user_id() and s.expires_at > now() and x.active;
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'Sign in again');
  end if;
  return p;
end $$;

ALTER FUNCTION app_hidden.dashboard_actor() OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_actor(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_actor() IS 'The signed-in person of the current dashboard transaction, read afresh; 401 unless the claims are a live session''s.';

--
-- Name: dashboard_add_webhook(text, text[], text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  return (app_private.webhook_subscribe(me.organization_id, url, events, secret)).id;
end $$;

ALTER FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_add_webhook(url text, events text[], secret text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) IS 'Subscribes an URL (checked by the page: https, public addresses) to events of the signed-in owner''s or admin''s organization.';

--
-- Name: dashboard_create_key(text, text, text, text[], text[], uuid[], bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people;
  locs uuid[] := coalesce(location_ids, '{}');
  own_locs uuid[];
  k_kind text;
  k_role text := key_role;
  k_powers text[] := coalesce(powers, '{}');
  new_id uuid;
begin
  -- The person's row is locked first, then read afresh: a change of role committing meanwhile
  -- (which revokes the person's organization keys by trigger, migration 000001) is waited for
  -- and seen, and one that comes later waits for this key and revokes it too.
  perform 1 from app_public.people p
   where p.organization_id = app_hidden.current_org_id() and p.id = app_hidden.current_user_id() for share;
  me := app_hidden.dashboard_actor();
  if kind not in ('personal', 'organization', 'organization_role', 'location_limited') then
    perform app_hidden.raise_error(400, 'bad_request', 'Choose a kind of key');
  end if;
  if not (kind = any(app_hidden.dashboard_key_kinds(me))) then
    perform app_hidden.raise_error(403, 'insufficient_role', format('Your role may not create a %s key', replace(kind, '_', ' ')));
  end if;
  if coalesce(cardinality(scopes), 0) = 0 then
    perform app_hidden.raise_error(422, 'scopes_required', 'Choose at least one scope');
  end if;
  if kind = 'personal' then
    k_kind := 'personal'; k_role := null; k_powers := '{}'; locs := '{}';
  elsif kind = 'organization' then
    k_kind := 'organization'; k_role := null; k_powers := '{}'; locs := '{}';
  else
    k_kind := 'organization';
    k_role := coalesce(k_role, 'MANAGER');
    if k_role not in ('MANAGER', 'MEMBER') then
      perform app_hidden.raise_error(400, 'bad_request', 'A key''s role is MANAGER or MEMBER');
    end if;
    if kind = 'organization_role' then locs := '{}'; end if;
    if kind = 'location_limited' and cardinality(locs) = 0 then
      perform app_hidden.raise_error(422, 'locations_required', 'Choose at least one location');
    end if;
    if k_role = 'MEMBER' then k_powers := '{}'; end if;
  end if;
  if cardinality(locs) > 0 and (select count(*) from app_public.locations l
                                 where l.organization_id = me.organization_id and l.id = any(locs)) <> cardinality(locs) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if me.role = 'manager' then
    select coalesce(array_agg(pl.location_id), '{}') into own_locs from app_public.person_locations pl
     where pl.organization_id = me.organization_id and pl.person_id = me.id;
    if k_kind = 'organization' and not (locs <@ own_locs) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager limits a key to their own locations');
    end if;
    if not (k_powers <@ me.powers) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager gives a key only powers they hold');
    end if;
  end if;
  insert into app_private.api_keys (organization_id, kind, name, created_by, role, scopes, powers, key_hash)
  values (me.organization_id, k_kind, nullif(btrim(name), ''), me.id, k_role, scopes, k_powers, key_hash)
  returning id into new_id;
  insert into app_private.api_key_locations (organization_id, api_key_id, location_id)
  select me.organization_id, new_id, l from unnest(locs) l group by l;
  -- the same rule that revokes a key when its creator changes (migration 000001)
  if k_kind = 'organization' and not (select app_private.person_may_hold_key(me, k) from app_private.api_keys k
                                        where k.organization_id = me.organization_id and k.id = new_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Your role may not create this key');
  end if;
  return new_id;
end $$;

ALTER FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) IS 'Creates a key (kind: personal, organization, organization_role, location_limited) as the signed-in person, within the spec''s rules; only its hash is stored.';

--
-- Name: dashboard_end_session(bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_end_session(session_hash bytea) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  delete from app_private.dashboard_sessions d where d.session_hash = dashboard_end_session.session_hash
$$;

ALTER FUNCTION app_hidden.dashboard_end_session(session_hash bytea) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_end_session(session_hash bytea); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_end_session(session_hash bytea) IS 'Sign-out: the session is gone.';

--
-- Name: dashboard_issue_link(uuid, uuid, bytea, text, text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not exists (select 1 from app_public.people p
                  where p.organization_id = org and p.id = person and p.active and p.email = recipient::citext) then
    perform app_hidden.raise_error(404, 'not_found', 'Person not found');
  end if;
  -- one person's links are counted one at a time
  perform pg_advisory_xact_lock(hashtextextended('dashboard_links:' || person::text, 0));
  if (select count(*) from app_private.dashboard_links d
       where d.organization_id = org and d.person_id = person
         and d.created_at > now() - make_interval(mins => (app_hidden.dashboard_lifetimes()->>'link_minutes')::int))
     >= (app_hidden.dashboard_lifetimes()->>'link_burst')::int then
    return false;
  end if;
  insert into app_private.dashboard_links (organization_id, person_id, token_hash, return_to, expires_at)
  values (org, person, token_hash, return_to,
          now() + make_interval(mins => (app_hidden.dashboard_lifetimes()->>'link_minutes')::int));
  perform set_config('svc.organization_id', org::text, true);
  perform app_hidden.queue_message('email', recipient, subject, body, null, jsonb_build_object('kind', 'dashboard_sign_in'));
  perform set_config('svc.organization_id', '', true);
  return true;
end $$;

ALTER FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) IS 'Stores a sign-in link (its token''s hash) for an active person and queues its email to their address.';

--
-- Name: dashboard_key_kinds(app_public.people); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select case
    when p.role in ('owner', 'admin') then array['personal', 'organization', 'organization_role', 'location_limited']
    when p.role = 'manager' and 'staff' = any(p.powers) then array['personal', 'location_limited']
    else array['personal'] end
$$;

ALTER FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_key_kinds(p app_public.people); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) IS 'The kinds of key a person may create: personal, organization, organization_role, location_limited.';

--
-- Name: dashboard_key_locations(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_key_locations() RETURNS TABLE(id uuid, name text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select l.id, l.name
    from app_hidden.dashboard_actor() me
    join app_public.locations l on l.organization_id = me.organization_id
   where me.role in ('owner', 'admin') or exists (select 1 from app_public.person_locations pl
           where pl.organization_id = l.organization_id and pl.person_id = me.id and pl.location_id = l.id)
   order by l.name, l.id
$$;

ALTER FUNCTION app_hidden.dashboard_key_locations() OWNER TO svc_owner;

--
-- Name: dashboard_keys(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_keys() RETURNS TABLE(id uuid, kind text, name text, role text, scopes text[], powers text[], locations text[], created_by text, created_at timestamp with time zone, revoked_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select k.id, k.kind, k.name, k.role, k.scopes, k.powers,
         array(select l.name from app_private.api_key_locations kl
                 join app_public.locations l on l.organization_id = kl.organization_id and l.id = kl.location_id
                where kl.organization_id = k.organization_id and kl.api_key_id = k.id order by l.name),
         c.name, k.created_at, k.revoked_at
    from app_hidden.dashboard_actor() me
    join app_private.api_keys k on k.organization_id = me.organization_id
    join app_public.people c on c.organization_id = k.organization_id and c.id = k.created_by
   where me.role in ('owner', 'admin') or k.created_by = me.id
   order by k.revoked_at is not null, k.created_at desc, k.id
$$;

ALTER FUNCTION app_hidden.dashboard_keys() OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_keys(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_keys() IS 'The keys the signed-in person sees (all for an owner or admin, else their own), without secrets.';

--
-- Name: dashboard_lifetimes(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_lifetimes() RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select '{"link_minutes": 15, "link_burst": 5, "session_hours": 12}'::jsonb
$$;

ALTER FUNCTION app_hidden.dashboard_lifetimes() OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_lifetimes(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_lifetimes() IS 'Lifetimes of sign-in links (minutes) and dashboard sessions (hours); links per person per link lifetime (burst).';

--
-- Name: dashboard_link_people(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_link_people(email text) RETURNS TABLE(organization_id uuid, person_id uuid, organization_name text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select p.organization_id, p.id, o.name
    from app_public.people p
    join app_public.organizations o on o.id = p.organization_id
   where p.email = dashboard_link_people.email::citext and p.active
   order by o.name, p.organization_id
$$;

ALTER FUNCTION app_hidden.dashboard_link_people(email text) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_link_people(email text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_link_people(email text) IS 'The active people with an email address (one per organization), to send each a sign-in link.';

--
-- Name: dashboard_locations(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_locations() RETURNS TABLE(id uuid, name text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select l.id, l.name from app_hidden.dashboard_actor() me
    join app_public.locations l on l.organization_id = me.organization_id
   order by l.name, l.id
$$;

ALTER FUNCTION app_hidden.dashboard_locations() OWNER TO svc_owner;

--
-- Name: dashboard_manager_of_team(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_manager_of_team() RETURNS app_public.people
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  if me.role not in ('owner', 'admin') then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner or admin manages the team and the organization');
  end if;
  return me;
end $$;

ALTER FUNCTION app_hidden.dashboard_manager_of_team() OWNER TO svc_owner;

--
-- Name: dashboard_people(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_people() RETURNS TABLE(id uuid, name text, email text, role text, powers text[], sms_enabled boolean, records_level text, agent_access boolean, active boolean, location_ids uuid[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select p.id, p.name, p.email::text, p.role, p.powers, p.sms_enabled, p.records_level, p.agent_access, p.active,
         array(select pl.location_id from app_public.person_locations pl
                where pl.organization_id = p.organization_id and pl.person_id = p.id order by pl.location_id)
    from app_hidden.dashboard_actor() me
    join app_public.people p on p.organization_id = me.organization_id
   where me.role in ('owner', 'admin') or p.id = me.id
   order by p.active desc, p.name, p.id
$$;

ALTER FUNCTION app_hidden.dashboard_people() OWNER TO svc_owner;

--
-- Name: dashboard_redeem_link(bytea, bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) RETURNS TABLE(organization_id uuid, person_id uuid, return_to text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  l app_private.dashboard_links;
begin
  update app_private.dashboard_links d set used_at = now()
   where d.token_hash = dashboard_redeem_link.token_hash and d.used_at is null and d.expires_at > now()
  returning d.* into l;
  if not found or not exists (select 1 from app_public.people p
                               where p.organization_id = l.organization_id and p.id = l.person_id and p.active) then
    return;
  end if;
  -- the person's dead sessions and old links go at each sign-in, so neither table only grows
  delete from app_private.dashboard_sessions d
   where d.organization_id = l.organization_id and d.person_id = l.person_id and d.expires_at <= now();
  delete from app_private.dashboard_links d
   where d.organization_id = l.organization_id and d.person_id = l.person_id and d.expires_at < now() - interval '1 day';
  insert into app_private.dashboard_sessions (organization_id, person_id, session_hash, expires_at)
  values (l.organization_id, l.person_id, session_hash,
          now() + make_interval(hours => (app_hidden.dashboard_lifetimes()->>'session_hours')::int));
  return query select l.organization_id, l.person_id, l.return_to;
end $$;

ALTER FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_redeem_link(token_hash bytea, session_hash bytea); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) IS 'Spends a sign-in link and opens a session under a fresh hash; no row when the link is unknown, spent, expired or its person inactive.';

--
-- Name: dashboard_remove_webhook(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  if not app_private.webhook_unsubscribe(me.organization_id, webhook_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Webhook not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_remove_webhook(webhook_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) IS 'Removes a subscription of the signed-in owner''s or admin''s organization (404 for any other id).';

--
-- Name: dashboard_revoke_key(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  update app_private.api_keys k set revoked_at = coalesce(k.revoked_at, now())
   where k.organization_id = me.organization_id and k.id = key_id
     and (me.role in ('owner', 'admin') or k.created_by = me.id);
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Key not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_revoke_key(key_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) IS 'Revokes a key the signed-in person may revoke (any for an owner or admin, else their own).';

--
-- Name: dashboard_role_access(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_role_access() RETURNS TABLE(role text, agent_access boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select r.role, coalesce(a.agent_access, true)
    from app_hidden.dashboard_manager_of_team() me
   cross join unnest(array['admin', 'manager', 'member']) with ordinality r(role, n)
    left join app_public.role_agent_access a on a.organization_id = me.organization_id and a.role = r.role
   order by r.n
$$;

ALTER FUNCTION app_hidden.dashboard_role_access() OWNER TO svc_owner;

--
-- Name: dashboard_session(bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_session(session_hash bytea) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_private.dashboard_sessions;
  p app_public.people;
  loc_ids uuid[];
  settings jsonb;
begin
  select * into s from app_private.dashboard_sessions d
   where d.session_hash = dashboard_session.session_hash and d.expires_at > now();
  if not found then return null; end if;
  select * into p from app_public.people x where x.organization_id = s.organization_id and x.id = s.person_id and x.active;
  if not found then return null; end if;
  if p.role in ('manager', 'member') then
    select coalesce(array_agg(location_id order by location_id), '{}') into loc_ids
      from app_public.person_locations where organization_id = p.organization_id and person_id = p.id;
  end if;
  settings := jsonb_build_object(
    'svc.organization_id', p.organization_id::text,
    'svc.credential_id', s.id::text,
    'svc.user_id', p.id::text,
    'svc.role', p.role,
    'svc.location_ids', coalesce(loc_ids::text, '*'),
    'svc.powers', (case when p.role = 'manager' then p.powers else '{}' end)::text,
    'svc.scopes', '{}',
    'svc.records_level', case when p.role = 'member' then p.records_level else 'all' end,
    'svc.sms_enabled', p.sms_enabled::text);
  perform set_config(x.key, x.value, true) from jsonb_each_text(settings) x;
  return jsonb_build_object('organization_id', p.organization_id, 'person_id', p.id, 'session_id', s.id,
    'name', p.name, 'email', p.email, 'role', p.role,
    'powers', to_jsonb(case when p.role = 'manager' then p.powers else '{}' end),
    'location_ids', to_jsonb(loc_ids));
end $$;

ALTER FUNCTION app_hidden.dashboard_session(session_hash bytea) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_session(session_hash bytea); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_session(session_hash bytea) IS 'The signed-in person of a live session (claims set for the transaction as theirs), or NULL.';

--
-- Name: dashboard_set_role_access(text, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_set_role_access(for_role text, on_off boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  if for_role not in ('admin', 'manager', 'member') then
    perform app_hidden.raise_error(422, 'owner_agent_access', 'An owner''s agent access is always on');
  end if;
  insert into app_public.role_agent_access (organization_id, role, agent_access) values (me.organization_id, for_role, on_off)
  on conflict (organization_id, role) do update set agent_access = excluded.agent_access;
end $$;

ALTER FUNCTION app_hidden.dashboard_set_role_access(for_role text, on_off boolean) OWNER TO svc_owner;

--
-- Name: dashboard_update_organization(boolean, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  update app_public.organizations o set mcp_enabled = new_mcp_enabled,
         sending_email_domain = nullif(btrim(new_sending_email_domain), ''),
         default_sms_number = nullif(btrim(new_default_sms_number), '')
   where o.id = me.organization_id;
end $$;

ALTER FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) IS 'An owner or admin turns MCP on or off and sets the sending domain and default SMS number (validated by the page).';

--
-- Name: dashboard_update_person(uuid, text, uuid[], text[], boolean, text, boolean, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
  p app_public.people;
  locs uuid[] := coalesce(location_ids, '{}');
begin
  select * into p from app_public.people x where x.organization_id = me.organization_id and x.id = person_id for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Person not found');
  end if;
  if new_role not in ('owner', 'admin', 'manager', 'member') or new_records_level not in ('all', 'own')
     or not (coalesce(new_powers, '{}') <@ array['contacts', 'sequences', 'appointments', 'staff']) then
    perform app_hidden.raise_error(400, 'bad_request', 'Choose a role, powers and records level the service knows');
  end if;
  if me.role <> 'owner' and (p.role = 'owner' or new_role = 'owner') then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner changes an owner or makes one');
  end if;
  if p.role = 'owner' and p.active and (new_role <> 'owner' or not new_active)
     and not exists (select 1 from app_public.people o where o.organization_id = p.organization_id
                      and o.id <> p.id and o.role = 'owner' and o.active) then
    perform app_hidden.raise_error(409, 'last_owner', 'The organization keeps at least one active owner');
  end if;
  if new_role = 'owner' and not new_agent_access then
    perform app_hidden.raise_error(422, 'owner_agent_access', 'An owner''s agent access is always on');
  end if;
  if (select count(*) from app_public.locations l where l.organization_id = p.organization_id and l.id = any(locs))
     <> (select count(distinct x) from unnest(locs) x) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  -- locations first: their trigger revokes the organization keys the person can no longer hold
  delete from app_public.person_locations pl
   where pl.organization_id = p.organization_id and pl.person_id = p.id and pl.location_id <> all(locs);
  insert into app_public.person_locations (organization_id, person_id, location_id)
  select p.organization_id, p.id, x from unnest(locs) x group by x
  on conflict do nothing;
  update app_public.people x set
    role = new_role,
    powers = case when new_role = 'manager' then coalesce(new_powers, '{}') else '{}' end,
    sms_enabled = new_sms_enabled,
    records_level = new_records_level,
    agent_access = new_role = 'owner' or new_agent_access,
    active = new_active,
    updated_at = now()
   where x.organization_id = p.organization_id and x.id = p.id;
end $$;

ALTER FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) IS 'An owner or admin sets a person''s role, locations, powers, SMS setting, records level, agent access and activity.';

--
-- Name: dashboard_webhooks(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_webhooks() RETURNS TABLE(id uuid, url text, events text[], status text, disabled_reason text, created_at timestamp with time zone, pending bigint, delivered bigint, failed bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select s.id, s.url, s.events, s.status, s.disabled_reason, s.created_at,
         count(d.id) filter (where d.status = 'pending'), count(d.id) filter (where d.status = 'delivered'),
         count(d.id) filter (where d.status = 'failed')
    from app_hidden.dashboard_manager_of_team() me
    join app_public.webhook_subscriptions s on s.organization_id = me.organization_id
    left join app_public.webhook_deliveries d on d.organization_id = s.organization_id and d.subscription_id = s.id
   group by s.organization_id, s.id
   order by s.created_at, s.id
$$;

ALTER FUNCTION app_hidden.dashboard_webhooks() OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_webhooks(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_webhooks() IS 'The organization''s webhook subscriptions with their deliveries counted, for an owner or admin signed in to the dashboard (never a secret).';

--
-- Name: session_claim(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.session_claim(claim text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select case when session_user = 'svc_login' or current_user in ('svc_request', 'svc_worker')
                or not pg_catalog.pg_has_role(session_user, 'svc_analyst', 'USAGE')
                or pg_catalog.pg_has_role(session_user, 'svc_owner', 'USAGE')
              then pg_catalog.current_setting('svc.' || claim, true)
              else app_hidden.analyst_claim(claim) end
$$;

ALTER FUNCTION app_hidden.session_claim(claim text) OWNER TO svc_owner;

--
-- Name: FUNCTION session_claim(claim text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.session_claim(claim text) IS 'The text of claim svc.<claim> for this session: the setting, or for an analyst its own mapping.';

--
-- Name: dashboard_links; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.dashboard_links (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    person_id uuid NOT NULL,
    token_hash bytea NOT NULL,
    return_to text,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT dashboard_links_token_hash_check CHECK ((length(token_hash) = 32))
);

ALTER TABLE app_private.dashboard_links OWNER TO svc_owner;

--
-- Name: TABLE dashboard_links; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.dashboard_links IS 'One-time sign-in links: only the token''s SHA-256 is kept; spent (used_at) at the first use, dead after expires_at.';

--
-- Name: dashboard_sessions; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.dashboard_sessions (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    person_id uuid NOT NULL,
    session_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT dashboard_sessions_session_hash_check CHECK ((length(session_hash) = 32))
);

ALTER TABLE app_private.dashboard_sessions OWNER TO svc_owner;

--
-- Name: TABLE dashboard_sessions; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.dashboard_sessions IS 'Signed-in browsers: only the SHA-256 of the cookie''s session id is kept. A new row at every sign-in (no fixation).';

--
-- Name: dashboard_links dashboard_links_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_links
    ADD CONSTRAINT dashboard_links_pkey PRIMARY KEY (organization_id, id);

--
-- Name: dashboard_links dashboard_links_token_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_links
    ADD CONSTRAINT dashboard_links_token_hash_key UNIQUE (token_hash);

--
-- Name: dashboard_sessions dashboard_sessions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: dashboard_sessions dashboard_sessions_session_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_session_hash_key UNIQUE (session_hash);

--
-- Name: dashboard_links_person; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX dashboard_links_person ON app_private.dashboard_links USING btree (organization_id, person_id);

--
-- Name: dashboard_sessions_person; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX dashboard_sessions_person ON app_private.dashboard_sessions USING btree (organization_id, person_id);

--
-- Name: dashboard_links dashboard_links_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_links
    ADD CONSTRAINT dashboard_links_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: dashboard_sessions dashboard_sessions_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: dashboard_links; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.dashboard_links ENABLE ROW LEVEL SECURITY;

--
-- Name: dashboard_sessions; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.dashboard_sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: FUNCTION dashboard_actor(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_actor() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_actor() TO svc_request;

--
-- Name: FUNCTION dashboard_add_webhook(url text, events text[], secret text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) TO svc_request;

--
-- Name: FUNCTION dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_end_session(session_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_end_session(session_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_end_session(session_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) TO svc_request;

--
-- Name: FUNCTION dashboard_key_kinds(p app_public.people); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) TO svc_request;

--
-- Name: FUNCTION dashboard_key_locations(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_key_locations() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_key_locations() TO svc_request;

--
-- Name: FUNCTION dashboard_keys(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_keys() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_keys() TO svc_request;

--
-- Name: FUNCTION dashboard_lifetimes(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_lifetimes() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_lifetimes() TO svc_request;

--
-- Name: FUNCTION dashboard_link_people(email text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_link_people(email text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_link_people(email text) TO svc_request;

--
-- Name: FUNCTION dashboard_locations(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_locations() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_locations() TO svc_request;

--
-- Name: FUNCTION dashboard_manager_of_team(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_manager_of_team() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_manager_of_team() TO svc_request;

--
-- Name: FUNCTION dashboard_people(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_people() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_people() TO svc_request;

--
-- Name: FUNCTION dashboard_redeem_link(token_hash bytea, session_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_remove_webhook(webhook_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) TO svc_request;

--
-- Name: FUNCTION dashboard_revoke_key(key_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) TO svc_request;

--
-- Name: FUNCTION dashboard_role_access(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_role_access() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_role_access() TO svc_request;

--
-- Name: FUNCTION dashboard_session(session_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_session(session_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_session(session_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_set_role_access(for_role text, on_off boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_set_role_access(for_role text, on_off boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_set_role_access(for_role text, on_off boolean) TO svc_request;

--
-- Name: FUNCTION dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) TO svc_request;

--
-- Name: FUNCTION dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) TO svc_request;

--
-- Name: FUNCTION dashboard_webhooks(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_webhooks() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_webhooks() TO svc_request;

--
-- Name: FUNCTION session_claim(claim text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.session_claim(claim text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.session_claim(claim text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.session_claim(claim text) TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.session_claim(claim text) TO svc_analyst;
