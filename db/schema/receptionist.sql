-- db/schema/receptionist.sql: what src/receptionist/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: receptionist_authenticate(uuid, uuid, text, jsonb, text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.receptionist_authenticate(organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
  settings jsonb;
  refusal jsonb;
  loc_ids uuid[];
  scopes text[] := array['appointments:read', 'appointments:write', 'contacts:read', 'contacts:write'];
  powers text[] := array['appointments', 'contacts'];
begin
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_authenticate.organization_id and x.id = receptionist_authenticate.conversation_id;
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'No such conversation');
  end if;
  if jsonb_typeof(tool_input) is distinct from 'object' then
    perform app_hidden.raise_error(400, 'bad_request', 'The input must be an object');
  end if;
  if tool_input ? 'contact_id' and tool_input->>'contact_id' is distinct from cv.contact_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only for the contact of its conversation');
  end if;
  if tool_input ? 'location_id' and tool_input->>'location_id' is distinct from cv.location_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only at the location of its conversation');
  end if;
  if tool_input ? 'locationId' and tool_input->>'locationId' is distinct from cv.location_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only at the location of its conversation');
  end if;
  if tool_input ? 'appointmentId' and not exists (
       select 1 from app_public.appointments a
        where a.organization_id = cv.organization_id and a.contact_id = cv.contact_id
          and a.id::text = tool_input->>'appointmentId') then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only on appointments of the contact of its conversation');
  end if;
  if operation_id = 'contacts_update' and (select count(*) from jsonb_object_keys(tool_input - 'contactId' - 'name' - 'email' - 'idempotency_key')) > 0 then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist changes only the contact''s name and email');
  end if;
  if operation_id = 'contacts_update' and tool_input->>'contactId' is distinct from cv.contact_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only for the contact of its conversation');
  end if;

  loc_ids := case when cv.location_id is null then '{}'::uuid[] else array[cv.location_id] end;
  settings := jsonb_build_object(
    'svc.organization_id', cv.organization_id::text,
    'svc.credential_id', cv.id::text,
    'svc.user_id', '',
    'svc.role', 'manager',
    'svc.location_ids', loc_ids::text,
    'svc.powers', powers::text,
    'svc.scopes', scopes::text,
    'svc.records_level', 'all',
    'svc.sms_enabled', 'false');
  perform set_config(s.key, s.value, true) from jsonb_each_text(settings) s;

  refusal := app_hidden.requirement_refusal(required_scope, member_access, manager_power);
  if refusal is not null then
    perform app_hidden.raise_error((refusal->>'status')::int, refusal->>'error', refusal->>'message', refusal->'extra');
  end if;
  return jsonb_build_object(
    'organization_id', cv.organization_id, 'credential_id', cv.id, 'kind', 'organization', 'user_id', null,
    'role', 'manager', 'key_role', 'MANAGER', 'location_ids', to_jsonb(loc_ids), 'powers', to_jsonb(powers),
    'scopes', to_jsonb(scopes), 'records_level', 'all', 'sms_enabled', false, 'settings', settings);
end $$;

ALTER FUNCTION app_hidden.receptionist_authenticate(organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) OWNER TO svc_owner;

--
-- Name: FUNCTION receptionist_authenticate(organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.receptionist_authenticate(organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) IS 'The receptionist''s claims for one tool call of a conversation (a MANAGER of its location with the appointments and contacts powers), after refusing (403 not_allowed) an input naming another contact, location or appointment. Owner only: called by the answering job before it becomes svc_request.';

--
-- Name: receptionist_context(uuid, uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.receptionist_context(organization_id uuid, conversation_id uuid, message_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  base jsonb := app_private.conversation_ai_context(organization_id, conversation_id, message_id);
  cv app_public.conversations;
begin
  if base is null then
    return null;
  end if;
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_context.organization_id and x.id = receptionist_context.conversation_id;
  return base || jsonb_build_object(
    'organization_id', cv.organization_id,
    'conversation_id', cv.id,
    'message_id', message_id,
    'contact_id', cv.contact_id,
    'location_id', cv.location_id,
    'receptionist', (select o.receptionist from app_public.organizations o where o.id = cv.organization_id),
    'offerings', coalesce((select jsonb_agg(jsonb_build_object('id', f.id, 'name', f.name, 'duration_minutes', f.duration_minutes)
                                            order by f.name, f.id)
                             from app_public.offerings f
                            where f.organization_id = cv.organization_id and f.location_id = cv.location_id), '[]'),
    'state', (select jsonb_build_object('state', s.state, 'at', s.updated_at) from app_private.receptionist_states s
               where s.organization_id = cv.organization_id and s.conversation_id = cv.id),
    'opted_out', cv.channel = 'sms' and exists (
      select 1 from app_public.contacts c
       where c.organization_id = cv.organization_id and c.id = cv.contact_id
         and app_private.conversation_sms_refusal(c, cv) is not null),
    'ai_answers_24h', (select count(*) from app_public.conversation_messages m
                        where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                          and m.author = 'ai' and m.created_at > now() - interval '24 hours'),
    'now', now());
end $$;

ALTER FUNCTION app_private.receptionist_context(organization_id uuid, conversation_id uuid, message_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION receptionist_context(organization_id uuid, conversation_id uuid, message_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.receptionist_context(organization_id uuid, conversation_id uuid, message_id uuid) IS 'What the receptionist answers from (conversation_ai_context plus the ids, offerings, settings, pending offer, opt-out and loop count), or NULL when nothing is owed.';

--
-- Name: receptionist_handover_people(app_public.conversations); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.receptionist_handover_people(cv app_public.conversations) RETURNS SETOF app_public.people
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select p.* from app_public.people p
   where p.organization_id = cv.organization_id and p.active
     and (p.role in ('owner', 'admin')
          or (p.role = 'manager' and 'contacts' = any(p.powers)
              and exists (select 1 from app_public.person_locations pl
                           where pl.organization_id = p.organization_id and pl.person_id = p.id and pl.location_id = cv.location_id)))
   order by p.created_at, p.id
$$;

ALTER FUNCTION app_private.receptionist_handover_people(cv app_public.conversations) OWNER TO svc_owner;

--
-- Name: receptionist_record(uuid, uuid, uuid, jsonb, text[], jsonb, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.receptionist_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[], state jsonb, inbox_url text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  done jsonb;
  cv app_public.conversations;
  c app_public.contacts;
  org app_public.organizations;
  p app_public.people;
  told app_public.conversation_messages;
  out_id uuid;
  reason text := left(coalesce(nullif(btrim(answer->>'reason'), ''), 'the receptionist handed over'), 500);
begin
  done := app_private.conversation_ai_record(organization_id, conversation_id, message_id, answer, sinks);
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_record.organization_id and x.id = receptionist_record.conversation_id;
  if done->>'action' = 'reply' then
    if state is null then
      delete from app_private.receptionist_states s where s.organization_id = cv.organization_id and s.conversation_id = cv.id;
    else
      insert into app_private.receptionist_states as s (organization_id, conversation_id, state)
      values (cv.organization_id, cv.id, state)
      on conflict on constraint receptionist_states_pkey do update set state = excluded.state, updated_at = now();
    end if;
    -- the conversation's interaction names the appointment the turn booked or moved
    if answer->>'appointment_id' is not null then
      update app_public.interactions i set appointment_id = (answer->>'appointment_id')::uuid
       where i.organization_id = cv.organization_id and i.conversation_id = cv.id;
    end if;
    return done;
  end if;
  if done->>'action' <> 'handover' then
    return done;
  end if;

  delete from app_private.receptionist_states s where s.organization_id = cv.organization_id and s.conversation_id = cv.id;
  insert into app_private.receptionist_handovers (organization_id, conversation_id, message_id, reason)
  values (cv.organization_id, cv.id, receptionist_record.message_id, reason)
  on conflict do nothing;
  select * into org from app_public.organizations o where o.id = cv.organization_id;
  select * into c from app_public.contacts x where x.organization_id = cv.organization_id and x.id = cv.contact_id;

  -- the contact hears that a person will answer (never over SMS to a number that opted out)
  if cv.channel = 'chat' or (c.phone is not null and app_private.conversation_sms_refusal(c, cv) is null) then
    told := app_private.conversation_append_outbound(cv, 'ai', null,
      left(coalesce(nullif(btrim(org.receptionist->>'handover_message'), ''),
                    'Thanks for your message! A person from our team will answer you here soon.'), 1600),
      cv.business_address, c.phone, null, null, case when cv.channel = any(sinks) then 'sink' else 'job' end);
  end if;

  -- the people who may answer: an email each, through the delivery path
  for p in select * from app_private.receptionist_handover_people(cv) loop
    insert into app_private.outgoing_messages (organization_id, channel, sender, recipient, subject, body, meta)
    values (cv.organization_id, 'email', 'no-reply@' || coalesce(org.sending_email_domain, 'localhost'), p.email::text,
            left('A conversation is waiting for you: ' || coalesce(c.name, c.phone, c.email::text, 'a contact'), 300),
            format(E'The receptionist handed a conversation to a person.\n\nContact: %s\nChannel: %s\nReason: %s\n\nAnswer it in the inbox: %s\n',
                   coalesce(c.name, c.phone, c.email::text, 'unknown'), cv.channel, reason,
                   coalesce(inbox_url, '/dashboard/inbox') || '/' || cv.id),
            jsonb_build_object('conversation_id', cv.id, 'handover', true))
    returning id into out_id;
    perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', cv.organization_id, 'message_id', out_id),
      job_key => 'message:' || out_id);
  end loop;

  perform app_private.webhook_emit(cv.organization_id, 'conversation.handed_over', now(),
    jsonb_build_object('conversation_id', cv.id, 'contact_id', cv.contact_id, 'location_id', cv.location_id, 'reason', reason));
  return done || jsonb_build_object('told', told.id is not null);
end $$;

ALTER FUNCTION app_private.receptionist_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[], state jsonb, inbox_url text) OWNER TO svc_owner;

--
-- Name: FUNCTION receptionist_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[], state jsonb, inbox_url text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.receptionist_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[], state jsonb, inbox_url text) IS 'Writes the receptionist''s turn once: a reply with its pending offer, or a hand-over (hold, the contact told once, an email to each person who may answer, the conversation.handed_over event).';

--
-- Name: receptionist_handovers; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.receptionist_handovers (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    conversation_id uuid NOT NULL,
    message_id uuid NOT NULL,
    reason text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT receptionist_handovers_reason_check CHECK (((length(reason) >= 1) AND (length(reason) <= 500)))
);

ALTER TABLE app_private.receptionist_handovers OWNER TO svc_owner;

--
-- Name: TABLE receptionist_handovers; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.receptionist_handovers IS 'Each hand-over of a conversation to a person by the receptionist, with its reason: once per inbound message.';

--
-- Name: receptionist_states; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.receptionist_states (
    organization_id uuid NOT NULL,
    conversation_id uuid NOT NULL,
    state jsonb NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE app_private.receptionist_states OWNER TO svc_owner;

--
-- Name: TABLE receptionist_states; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.receptionist_states IS 'The built-in receptionist''s pending offer per conversation (offerings, slots, or a cancellation awaiting YES).';

--
-- Name: receptionist_handovers receptionist_handovers_organization_id_message_id_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.receptionist_handovers
    ADD CONSTRAINT receptionist_handovers_organization_id_message_id_key UNIQUE (organization_id, message_id);

--
-- Name: receptionist_handovers receptionist_handovers_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.receptionist_handovers
    ADD CONSTRAINT receptionist_handovers_pkey PRIMARY KEY (organization_id, id);

--
-- Name: receptionist_states receptionist_states_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.receptionist_states
    ADD CONSTRAINT receptionist_states_pkey PRIMARY KEY (organization_id, conversation_id);

--
-- Name: receptionist_handovers receptionist_handovers_organization_id_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.receptionist_handovers
    ADD CONSTRAINT receptionist_handovers_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app_public.conversations(organization_id, id) ON DELETE CASCADE;

--
-- Name: receptionist_handovers receptionist_handovers_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.receptionist_handovers
    ADD CONSTRAINT receptionist_handovers_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: receptionist_states receptionist_states_organization_id_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.receptionist_states
    ADD CONSTRAINT receptionist_states_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app_public.conversations(organization_id, id) ON DELETE CASCADE;

--
-- Name: receptionist_states receptionist_states_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.receptionist_states
    ADD CONSTRAINT receptionist_states_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: receptionist_handovers; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.receptionist_handovers ENABLE ROW LEVEL SECURITY;

--
-- Name: receptionist_states; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.receptionist_states ENABLE ROW LEVEL SECURITY;

--
-- Name: FUNCTION receptionist_authenticate(organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.receptionist_authenticate(organization_id uuid, conversation_id uuid, operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) FROM PUBLIC;

--
-- Name: FUNCTION receptionist_context(organization_id uuid, conversation_id uuid, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.receptionist_context(organization_id uuid, conversation_id uuid, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION receptionist_handover_people(cv app_public.conversations); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.receptionist_handover_people(cv app_public.conversations) FROM PUBLIC;

--
-- Name: FUNCTION receptionist_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[], state jsonb, inbox_url text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.receptionist_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[], state jsonb, inbox_url text) FROM PUBLIC;
