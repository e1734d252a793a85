-- db/schema/voice.sql: what src/voice/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: dashboard_rotate_voice_secret(bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_rotate_voice_secret(secret_hash bytea) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  return app_private.voice_secret_rotate(me.organization_id, secret_hash);
end $$;

ALTER FUNCTION app_hidden.dashboard_rotate_voice_secret(secret_hash bytea) OWNER TO svc_owner;

--
-- Name: dashboard_voice_secret_created_at(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_voice_secret_created_at() RETURNS timestamp with time zone
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select s.created_at from app_private.voice_secrets s
   where s.organization_id = app_hidden.current_org_id() and s.revoked_at is null
$$;

ALTER FUNCTION app_hidden.dashboard_voice_secret_created_at() OWNER TO svc_owner;

--
-- Name: voice_authenticate(bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.voice_authenticate(secret_hash bytea) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select app_private.voice_org_or_401(secret_hash)
$$;

ALTER FUNCTION app_hidden.voice_authenticate(secret_hash bytea) OWNER TO svc_owner;

--
-- Name: voice_context(bytea, uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.voice_context(secret_hash bytea, conversation_id uuid, message_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return app_private.receptionist_context(app_private.voice_conversation(secret_hash, conversation_id), conversation_id, message_id);
end $$;

ALTER FUNCTION app_hidden.voice_context(secret_hash bytea, conversation_id uuid, message_id uuid) OWNER TO svc_owner;

--
-- Name: voice_receptionist_authenticate(bytea, uuid, uuid, text, jsonb, text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.voice_receptionist_authenticate(secret_hash bytea, organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if app_private.voice_conversation(secret_hash, conversation_id) is distinct from organization_id then
    perform app_hidden.raise_error(401, 'unauthorized', 'Unauthorized');
  end if;
  return app_hidden.receptionist_authenticate(organization_id, conversation_id, operation_id, tool_input, required_scope,
    member_access, manager_power);
end $$;

ALTER FUNCTION app_hidden.voice_receptionist_authenticate(secret_hash bytea, organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) OWNER TO svc_owner;

--
-- Name: voice_record(bytea, text, integer, jsonb, jsonb, jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.voice_record(secret_hash bytea, call_id text, turn integer, answer jsonb, decided jsonb, state jsonb, inbox_url text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
  vc app_private.voice_calls;
  vt app_private.voice_turns;
begin
  select * into vc from app_private.voice_calls x where x.organization_id = org and x.call_id = voice_record.call_id for update;
  select * into vt from app_private.voice_turns x where x.organization_id = org and x.call_id = voice_record.call_id and x.turn = voice_record.turn
     for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Turn not found');
  end if;
  if vt.answer is not null then
    return vt.answer;
  end if;
  perform app_private.receptionist_record(org, vc.conversation_id, vt.message_id, decided, array['chat'], state, inbox_url);
  update app_private.voice_turns x set answer = voice_record.answer
   where x.organization_id = org and x.call_id = vt.call_id and x.turn = vt.turn;
  return answer;
end $$;

ALTER FUNCTION app_hidden.voice_record(secret_hash bytea, call_id text, turn integer, answer jsonb, decided jsonb, state jsonb, inbox_url text) OWNER TO svc_owner;

--
-- Name: voice_turn(bytea, text, text, text, integer, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.voice_turn(secret_hash bytea, call_id text, from_number text, to_number text, turn integer, body text, bounds jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
  loc uuid;
  vc app_private.voice_calls;
  vt app_private.voice_turns;
  cv app_public.conversations;
  c app_public.contacts;
  m app_public.conversation_messages;
  over text;
begin
  if not exists (select 1 from app_public.organizations o where o.id = org and o.default_sms_number = to_number)
     and not exists (select 1 from app_public.locations l where l.organization_id = org and l.sms_number = to_number) then
    perform app_hidden.raise_error(404, 'not_found', 'metadata.to is not one of this organization''s numbers');
  end if;
  select l.id into loc from app_public.locations l
   where l.organization_id = org and l.sms_number = to_number order by l.created_at, l.id limit 1;
  -- one turn of a call at a time: a repeated request waits for the first, then finds its turn
  perform pg_advisory_xact_lock(hashtextextended(org::text || '|voice-llm|' || call_id, 0));
  select * into vc from app_private.voice_calls x where x.organization_id = org and x.call_id = voice_turn.call_id for update;
  if not found then
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = from_number;
    if not found then
      insert into app_public.contacts (organization_id, phone) values (org, from_number)
      on conflict (organization_id, phone) where phone is not null do update set updated_at = now()
      returning * into c;
    end if;
    if loc is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, loc) on conflict do nothing;
    end if;
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
    values (org, c.id, loc, 'chat', to_number) returning * into cv;
    insert into app_private.voice_calls (organization_id, call_id, conversation_id, contact_id, location_id, from_number, to_number)
    values (org, voice_turn.call_id, cv.id, c.id, loc, from_number, to_number) returning * into vc;
  elsif vc.from_number <> from_number or vc.to_number <> to_number then
    perform app_hidden.raise_error(400, 'bad_request', 'metadata: this call_id was begun with other from and to numbers');
  end if;
  select * into cv from app_public.conversations x where x.organization_id = org and x.id = vc.conversation_id;

  select * into vt from app_private.voice_turns x where x.organization_id = org and x.call_id = vc.call_id and x.turn = voice_turn.turn;
  if not found then
    over := case when vc.turns + 1 > (bounds->>'turns')::int then 'turns'
                 when vc.characters + length(body) > (bounds->>'characters')::int then 'characters'
                 when now() > vc.started_at + make_interval(secs => (bounds->>'seconds')::int) then 'seconds' end;
    if over is not null then
      if not cv.ai_held then
        update app_public.conversations x set ai_held = true, held_at = now(), updated_at = now()
         where x.organization_id = org and x.id = cv.id;
      end if;
      return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'contact_id', cv.contact_id,
        'location_id', cv.location_id, 'over', over, 'held', true);
    end if;
    insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
    values (org, cv.id, 'chat', 'inbound', 'contact', body, 'received') returning * into m;
    update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
     where x.organization_id = org and x.id = cv.id;
    update app_public.contacts x set last_seen_at = greatest(x.last_seen_at, now()) where x.organization_id = org and x.id = cv.contact_id;
    update app_private.voice_calls x set turns = x.turns + 1, characters = x.characters + length(body)
     where x.organization_id = org and x.call_id = vc.call_id;
    insert into app_private.voice_turns (organization_id, call_id, turn, message_id) values (org, vc.call_id, voice_turn.turn, m.id)
    returning * into vt;
  end if;
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'contact_id', cv.contact_id, 'location_id', cv.location_id,
    'message_id', vt.message_id, 'answer', vt.answer, 'held', app_hidden.conversation_response_mode(cv) <> 'ai');
end $$;

ALTER FUNCTION app_hidden.voice_turn(secret_hash bytea, call_id text, from_number text, to_number text, turn integer, body text, bounds jsonb) OWNER TO svc_owner;

--
-- Name: voice_conversation(bytea, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.voice_conversation(secret_hash bytea, conversation_id uuid) RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
begin
  if not exists (select 1 from app_private.voice_calls x where x.organization_id = org and x.conversation_id = voice_conversation.conversation_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return org;
end $$;

ALTER FUNCTION app_private.voice_conversation(secret_hash bytea, conversation_id uuid) OWNER TO svc_owner;

--
-- Name: voice_org_or_401(bytea); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.voice_org_or_401(secret_hash bytea) RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_private.voice_organization(secret_hash);
begin
  if org is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Unauthorized');
  end if;
  return org;
end $$;

ALTER FUNCTION app_private.voice_org_or_401(secret_hash bytea) OWNER TO svc_owner;

--
-- Name: voice_organization(bytea); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.voice_organization(secret_hash bytea) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select s.organization_id from app_private.voice_secrets s
   where s.secret_hash = voice_organization.secret_hash and s.revoked_at is null
$$;

ALTER FUNCTION app_private.voice_organization(secret_hash bytea) OWNER TO svc_owner;

--
-- Name: voice_secret_rotate(uuid, bytea); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.voice_secret_rotate(organization_id uuid, secret_hash bytea) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.voice_secret_rotate(organization_id uuid, secret_hash bytea) OWNER TO svc_owner;

--
-- Name: voice_calls; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.voice_calls (
    organization_id uuid NOT NULL,
    call_id text NOT NULL,
    conversation_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    location_id uuid,
    from_number text NOT NULL,
    to_number text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    turns integer DEFAULT 0 NOT NULL,
    characters integer DEFAULT 0 NOT NULL,
    CONSTRAINT voice_calls_call_id_check CHECK (((length(call_id) >= 1) AND (length(call_id) <= 200)))
);

ALTER TABLE app_private.voice_calls OWNER TO svc_owner;

--
-- Name: TABLE voice_calls; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.voice_calls IS 'A call the receptionist answers on the phone: the platform''s call id, its conversation (channel chat), and what it used of its bounds.';

--
-- Name: voice_secrets; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.voice_secrets (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    organization_id uuid NOT NULL,
    secret_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT voice_secrets_secret_hash_check CHECK ((length(secret_hash) = 32))
);

ALTER TABLE app_private.voice_secrets OWNER TO svc_owner;

--
-- Name: TABLE voice_secrets; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.voice_secrets IS 'An organization''s voice secrets (SHA-256 only); the one with revoked_at NULL is live, at most one per organization.';

--
-- Name: voice_turns; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.voice_turns (
    organization_id uuid NOT NULL,
    call_id text NOT NULL,
    turn integer NOT NULL,
    message_id uuid NOT NULL,
    answer jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT voice_turns_turn_check CHECK ((turn >= 1))
);

ALTER TABLE app_private.voice_turns OWNER TO svc_owner;

--
-- Name: TABLE voice_turns; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.voice_turns IS 'One turn of a voice call: the caller''s words as an inbound message, and the answer once written (a repeated turn replays it).';

--
-- Name: voice_calls voice_calls_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.voice_calls
    ADD CONSTRAINT voice_calls_pkey PRIMARY KEY (organization_id, call_id);

--
-- Name: voice_secrets voice_secrets_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.voice_secrets
    ADD CONSTRAINT voice_secrets_pkey PRIMARY KEY (id);

--
-- Name: voice_secrets voice_secrets_secret_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.voice_secrets
    ADD CONSTRAINT voice_secrets_secret_hash_key UNIQUE (secret_hash);

--
-- Name: voice_turns voice_turns_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.voice_turns
    ADD CONSTRAINT voice_turns_pkey PRIMARY KEY (organization_id, call_id, turn);

--
-- Name: voice_calls_conversation; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE UNIQUE INDEX voice_calls_conversation ON app_private.voice_calls USING btree (organization_id, conversation_id);

--
-- Name: voice_secrets_live; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE UNIQUE INDEX voice_secrets_live ON app_private.voice_secrets USING btree (organization_id) WHERE (revoked_at IS NULL);

--
-- Name: voice_calls voice_calls_organization_id_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.voice_calls
    ADD CONSTRAINT voice_calls_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app_public.conversations(organization_id, id) ON DELETE CASCADE;

--
-- Name: voice_calls voice_calls_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.voice_calls
    ADD CONSTRAINT voice_calls_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: voice_secrets voice_secrets_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.voice_secrets
    ADD CONSTRAINT voice_secrets_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: voice_turns voice_turns_organization_id_call_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.voice_turns
    ADD CONSTRAINT voice_turns_organization_id_call_id_fkey FOREIGN KEY (organization_id, call_id) REFERENCES app_private.voice_calls(organization_id, call_id) ON DELETE CASCADE;

--
-- Name: voice_calls; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.voice_calls ENABLE ROW LEVEL SECURITY;

--
-- Name: voice_secrets; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.voice_secrets ENABLE ROW LEVEL SECURITY;

--
-- Name: voice_turns; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.voice_turns ENABLE ROW LEVEL SECURITY;

--
-- Name: FUNCTION dashboard_rotate_voice_secret(secret_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_rotate_voice_secret(secret_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_rotate_voice_secret(secret_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_voice_secret_created_at(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_voice_secret_created_at() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_voice_secret_created_at() TO svc_request;

--
-- Name: FUNCTION voice_authenticate(secret_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.voice_authenticate(secret_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.voice_authenticate(secret_hash bytea) TO svc_request;

--
-- Name: FUNCTION voice_context(secret_hash bytea, conversation_id uuid, message_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.voice_context(secret_hash bytea, conversation_id uuid, message_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.voice_context(secret_hash bytea, conversation_id uuid, message_id uuid) TO svc_request;

--
-- Name: FUNCTION voice_receptionist_authenticate(secret_hash bytea, organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.voice_receptionist_authenticate(secret_hash bytea, organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.voice_receptionist_authenticate(secret_hash bytea, organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) TO svc_request;

--
-- Name: FUNCTION voice_record(secret_hash bytea, call_id text, turn integer, answer jsonb, decided jsonb, state jsonb, inbox_url text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.voice_record(secret_hash bytea, call_id text, turn integer, answer jsonb, decided jsonb, state jsonb, inbox_url text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.voice_record(secret_hash bytea, call_id text, turn integer, answer jsonb, decided jsonb, state jsonb, inbox_url text) TO svc_request;

--
-- Name: FUNCTION voice_turn(secret_hash bytea, call_id text, from_number text, to_number text, turn integer, body text, bounds jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.voice_turn(secret_hash bytea, call_id text, from_number text, to_number text, turn integer, body text, bounds jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.voice_turn(secret_hash bytea, call_id text, from_number text, to_number text, turn integer, body text, bounds jsonb) TO svc_request;

--
-- Name: FUNCTION voice_conversation(secret_hash bytea, conversation_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.voice_conversation(secret_hash bytea, conversation_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION voice_org_or_401(secret_hash bytea); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.voice_org_or_401(secret_hash bytea) FROM PUBLIC;

--
-- Name: FUNCTION voice_organization(secret_hash bytea); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.voice_organization(secret_hash bytea) FROM PUBLIC;

--
-- Name: FUNCTION voice_secret_rotate(organization_id uuid, secret_hash bytea); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.voice_secret_rotate(organization_id uuid, secret_hash bytea) FROM PUBLIC;
