-- db/schema/calls.sql: what src/calls/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: calls; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.calls (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    contact_id uuid NOT NULL,
    location_id uuid,
    staff_profile_id uuid,
    direction text DEFAULT 'inbound'::text NOT NULL,
    status text DEFAULT 'completed'::text NOT NULL,
    from_number text,
    to_number text,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    duration_seconds integer,
    summary text,
    external_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT calls_direction_check CHECK ((direction = ANY (ARRAY['inbound'::text, 'outbound'::text]))),
    CONSTRAINT calls_duration_seconds_check CHECK (((duration_seconds >= 0) AND (duration_seconds <= 86400))),
    CONSTRAINT calls_external_id_check CHECK (((length(external_id) >= 1) AND (length(external_id) <= 200))),
    CONSTRAINT calls_from_number_check CHECK ((from_number ~ '^\+[1-9][0-9]{6,14}$'::text)),
    CONSTRAINT calls_status_check CHECK ((status = ANY (ARRAY['completed'::text, 'missed'::text, 'voicemail'::text, 'in_progress'::text, 'failed'::text]))),
    CONSTRAINT calls_summary_check CHECK ((length(summary) <= 20000)),
    CONSTRAINT calls_to_number_check CHECK ((to_number ~ '^\+[1-9][0-9]{6,14}$'::text))
);

ALTER TABLE app_public.calls OWNER TO svc_owner;

--
-- Name: TABLE calls; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.calls IS 'A phone call with a contact (taken by the assistant, or by a team member: staff_profile_id), with its transcript in app_public.call_transcript_lines. external_id is the voice platform''s call id (unique per organization).';

--
-- Name: COLUMN calls.location_id; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.calls.location_id IS 'Where it was taken; NULL: visible only to credentials that reach the whole organization.';

--
-- Name: call_json(app_public.calls); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.call_json(c app_public.calls) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object(
    'id', c.id,
    'contact_id', c.contact_id,
    'location_id', c.location_id,
    'team_member_id', c.staff_profile_id,
    'direction', c.direction,
    'status', c.status,
    'from', c.from_number,
    'to', c.to_number,
    'started_at', c.started_at,
    'duration_seconds', c.duration_seconds,
    'summary', c.summary,
    'created_at', c.created_at) || app_hidden.call_voice_links(c.organization_id, c.external_id)
$$;

ALTER FUNCTION app_hidden.call_json(c app_public.calls) OWNER TO svc_owner;

--
-- Name: FUNCTION call_json(c app_public.calls); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.call_json(c app_public.calls) IS 'A call as calls_list and calls_get answer it (without its transcript), with the conversation the receptionist had on it and the appointments it booked.';

--
-- Name: call_voice_links(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.call_voice_links(organization_id uuid, external_id text) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('conversation_id', v.conversation_id,
    'appointment_ids', coalesce((select jsonb_agg(distinct i.appointment_id)
                                   from app_public.interactions i
                                  where i.organization_id = call_voice_links.organization_id and i.conversation_id = v.conversation_id
                                    and i.appointment_id is not null), '[]'))
    from (select (select x.conversation_id from app_private.voice_calls x
                   where x.organization_id = call_voice_links.organization_id and x.call_id = call_voice_links.external_id)
                 as conversation_id) v
$$;

ALTER FUNCTION app_hidden.call_voice_links(organization_id uuid, external_id text) OWNER TO svc_owner;

--
-- Name: current_reads_calls_of(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_role() is distinct from 'member'
      or ((select app_hidden.current_staff_profile_id()) is not null
          and contact_id = any((select app_hidden.current_own_client_ids())::uuid[]))
$$;

ALTER FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_reads_calls_of(contact_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) IS 'Whether the credential reads calls with this contact (a MEMBER: only its own clients'', and only with a staff profile).';

--
-- Name: voice_call_record(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.voice_call_record(payload jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  inbound boolean := coalesce(payload->>'direction', 'inbound') = 'inbound';
  ours text := case when inbound then payload->>'to' else payload->>'from' end;
  theirs text := case when inbound then payload->>'from' else payload->>'to' end;
  org uuid;
  loc uuid;
  c app_public.contacts;
  existing app_public.calls;
  v_call_id uuid;
  started timestamptz := coalesce((payload->>'started_at')::timestamptz, now());
  v_status text := coalesce(payload->>'status', 'completed');
begin
  select n.organization_id, n.location_id into org, loc from app_hidden.number_owner(ours) n;
  -- one delivery of a call at a time: a retry racing the first waits, then finds it
  perform pg_advisory_xact_lock(hashtextextended(org::text || '|voice|' || (payload->>'call_id'), 0));
  select * into existing from app_public.calls x where x.organization_id = org and x.external_id = payload->>'call_id';
  if found then
    return jsonb_build_object('call_id', existing.id, 'contact_id', existing.contact_id, 'duplicate', true);
  end if;

  select * into c from app_public.contacts x where x.organization_id = org and x.phone = theirs;
  if not found then
    insert into app_public.contacts (organization_id, phone, name)
    values (org, theirs, nullif(payload->>'caller_name', ''))
    on conflict (organization_id, phone) where phone is not null do update set updated_at = now()
    returning * into c;
  end if;
  update app_public.contacts x set total_calls = x.total_calls + 1, last_seen_at = greatest(x.last_seen_at, started),
         name = coalesce(x.name, nullif(payload->>'caller_name', '')), updated_at = now()
   where x.organization_id = org and x.id = c.id;
  if loc is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, loc) on conflict do nothing;
  end if;

  insert into app_public.calls (organization_id, contact_id, location_id, direction, status, from_number, to_number, started_at,
                                duration_seconds, summary, external_id)
  values (org, c.id, loc, case when inbound then 'inbound' else 'outbound' end, v_status, payload->>'from', payload->>'to', started,
          (payload->>'duration_seconds')::int, payload->>'summary', payload->>'call_id')
  returning id into v_call_id;
  insert into app_public.call_transcript_lines (organization_id, call_id, position, speaker, text)
  select org, v_call_id, l.ordinality - 1, l.value->>'speaker', l.value->>'text'
    from jsonb_array_elements(coalesce(payload->'transcript', '[]')) with ordinality l;

  insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, summary, started_at, ended_at)
  values (org, c.id, loc, 'voice',
          case v_status when 'completed' then 'completed' when 'in_progress' then 'in_progress' else 'abandoned' end,
          payload->>'summary', started,
          case when v_status <> 'in_progress' then started + make_interval(secs => coalesce((payload->>'duration_seconds')::int, 0)) end);
  return jsonb_build_object('call_id', v_call_id, 'contact_id', c.id, 'duplicate', false);
end $$;

ALTER FUNCTION app_hidden.voice_call_record(payload jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION voice_call_record(payload jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.voice_call_record(payload jsonb) IS 'Records a voice platform call once per call id: contact by phone (or created), total_calls, call, transcript, interaction.';

--
-- Name: tg_calls__own_clients(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_calls__own_clients() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.staff_profile_id is not null
     and (tg_op = 'DELETE' or old.staff_profile_id is distinct from new.staff_profile_id or old.contact_id <> new.contact_id)
     and not exists (select 1 from app_public.calls c
                      where c.organization_id = old.organization_id and c.contact_id = old.contact_id
                        and c.staff_profile_id = old.staff_profile_id and c.id <> old.id) then
    delete from app_private.own_clients o
     using app_public.staff_profiles sp
     where sp.organization_id = old.organization_id and sp.id = old.staff_profile_id
       and o.organization_id = old.organization_id and o.person_id = sp.person_id and o.contact_id = old.contact_id
       and o.source = 'calls';
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.staff_profile_id is not null then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'calls'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id
    on conflict do nothing;
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_calls__own_clients() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_calls__own_clients(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_calls__own_clients() IS 'The calls area''s rows of app_private.own_clients: a contact is the own client of the team member who took a call with it.';

--
-- Name: calls_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.calls_get(call_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  c app_public.calls;
begin
  select * into c from app_public.calls x where x.organization_id = app_hidden.current_org_id() and x.id = calls_get.call_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return app_hidden.call_json(c) || jsonb_build_object('transcript', coalesce((
    select jsonb_agg(jsonb_build_object('speaker', l.speaker, 'text', l.text) order by l.position)
      from app_public.call_transcript_lines l
     where l.organization_id = c.organization_id and l.call_id = c.id), '[]'));
end $$;

ALTER FUNCTION app_public.calls_get(call_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION calls_get(call_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.calls_get(call_id uuid) IS 'calls_get: one call the credential reads, with its transcript; 404 otherwise.';

--
-- Name: calls_list(uuid, timestamp with time zone, uuid, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  page app_public.calls[];
  last app_public.calls;
begin
  -- the page size first, before anything is read (NULL: 25; outside 1 to 100: 400, as over REST)
  lim := app_hidden.page_limit(lim);
  if (after_at is null) <> (after_id is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'query.cursor: not a cursor from this list: pass next_cursor back unchanged');
  end if;
  if calls_list.contact_id is not null and not exists (
      select 1 from app_public.contacts x where x.organization_id = app_hidden.current_org_id() and x.id = calls_list.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  select coalesce(array_agg(x order by x.started_at desc, x.id desc), '{}') into page
    from (select c.* from app_public.calls c
           where c.organization_id = app_hidden.current_org_id()
             and (calls_list.contact_id is null or c.contact_id = calls_list.contact_id)
             and (after_at is null or (c.started_at, c.id) < (after_at, after_id))
           order by c.started_at desc, c.id desc
           limit lim + 1) x;
  if cardinality(page) > lim then
    page := page[1:lim];
    last := page[lim];
  end if;
  return jsonb_build_object(
    'items', (select coalesce(jsonb_agg(app_hidden.call_json(page[i]) order by i), '[]') from generate_subscripts(page, 1) i),
    'next_after', case when last.id is not null then jsonb_build_object(
      'at', to_char(last.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'id', last.id) end);
end $$;

ALTER FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) OWNER TO svc_owner;

--
-- Name: FUNCTION calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) IS 'calls_list: a page of the calls the credential reads, newest first, after a keyset position; 404 for a contact out of reach.';

--
-- Name: call_transcript_lines; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.call_transcript_lines (
    organization_id uuid NOT NULL,
    call_id uuid NOT NULL,
    "position" integer NOT NULL,
    speaker text NOT NULL,
    text text NOT NULL,
    CONSTRAINT call_transcript_lines_position_check CHECK (("position" >= 0)),
    CONSTRAINT call_transcript_lines_speaker_check CHECK ((speaker = ANY (ARRAY['caller'::text, 'assistant'::text, 'staff'::text]))),
    CONSTRAINT call_transcript_lines_text_check CHECK ((length(text) <= 20000))
);

ALTER TABLE app_public.call_transcript_lines OWNER TO svc_owner;

--
-- Name: TABLE call_transcript_lines; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.call_transcript_lines IS 'A call''s transcript, one line per row in the order spoken (position from 0).';

--
-- Name: call_transcript_lines call_transcript_lines_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.call_transcript_lines
    ADD CONSTRAINT call_transcript_lines_pkey PRIMARY KEY (organization_id, call_id, "position");

--
-- Name: calls calls_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_pkey PRIMARY KEY (organization_id, id);

--
-- Name: calls_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX calls_by_contact ON app_public.calls USING btree (organization_id, contact_id, started_at DESC, id DESC);

--
-- Name: calls_by_external_id; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX calls_by_external_id ON app_public.calls USING btree (organization_id, external_id) WHERE (external_id IS NOT NULL);

--
-- Name: calls_by_start; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX calls_by_start ON app_public.calls USING btree (organization_id, started_at DESC, id DESC);

--
-- Name: calls _500_own_clients; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_own_clients AFTER INSERT OR DELETE OR UPDATE OF staff_profile_id, contact_id ON app_public.calls FOR EACH ROW EXECUTE FUNCTION app_private.tg_calls__own_clients();

--
-- Name: call_transcript_lines call_transcript_lines_organization_id_call_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.call_transcript_lines
    ADD CONSTRAINT call_transcript_lines_organization_id_call_id_fkey FOREIGN KEY (organization_id, call_id) REFERENCES app_public.calls(organization_id, id) ON DELETE CASCADE;

--
-- Name: calls calls_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: calls calls_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: calls calls_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE SET NULL (location_id);

--
-- Name: calls calls_organization_id_staff_profile_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_organization_id_staff_profile_id_fkey FOREIGN KEY (organization_id, staff_profile_id) REFERENCES app_public.staff_profiles(organization_id, id) ON DELETE SET NULL (staff_profile_id);

--
-- Name: call_transcript_lines; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.call_transcript_lines ENABLE ROW LEVEL SECURITY;

--
-- Name: calls; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.calls ENABLE ROW LEVEL SECURITY;

--
-- Name: calls select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.calls FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND app_hidden.current_reads_calls_of(contact_id)));

--
-- Name: call_transcript_lines select_with_call; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_call ON app_public.call_transcript_lines FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.calls c
  WHERE ((c.organization_id = call_transcript_lines.organization_id) AND (c.id = call_transcript_lines.call_id))))));

--
-- Name: TABLE calls; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.calls TO svc_request;
GRANT SELECT ON TABLE app_public.calls TO svc_worker;
GRANT SELECT ON TABLE app_public.calls TO svc_analyst;

--
-- Name: FUNCTION call_json(c app_public.calls); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.call_json(c app_public.calls) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.call_json(c app_public.calls) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.call_json(c app_public.calls) TO svc_worker;

--
-- Name: FUNCTION call_voice_links(organization_id uuid, external_id text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.call_voice_links(organization_id uuid, external_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.call_voice_links(organization_id uuid, external_id text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.call_voice_links(organization_id uuid, external_id text) TO svc_worker;

--
-- Name: FUNCTION current_reads_calls_of(contact_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) TO svc_analyst;

--
-- Name: FUNCTION voice_call_record(payload jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.voice_call_record(payload jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.voice_call_record(payload jsonb) TO svc_request;

--
-- Name: FUNCTION tg_calls__own_clients(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_calls__own_clients() FROM PUBLIC;

--
-- Name: FUNCTION calls_get(call_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.calls_get(call_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.calls_get(call_id uuid) TO svc_request;

--
-- Name: FUNCTION calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) TO svc_request;

--
-- Name: TABLE call_transcript_lines; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.call_transcript_lines TO svc_request;
GRANT SELECT ON TABLE app_public.call_transcript_lines TO svc_worker;
GRANT SELECT ON TABLE app_public.call_transcript_lines TO svc_analyst;
