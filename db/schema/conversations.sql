-- db/schema/conversations.sql: what src/conversations/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: chat_limits(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_limits() RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('chats_per_address', 5, 'chats_window_minutes', 10, 'messages_per_minute', 10,
    'message_max_length', 2000, 'thread_max_messages', 200)
$$;

ALTER FUNCTION app_hidden.chat_limits() OWNER TO svc_owner;

--
-- Name: FUNCTION chat_limits(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.chat_limits() IS 'Web chat limits: new chats per client address in a window, visitor messages per conversation per minute, lengths.';

--
-- Name: chat_post(uuid, uuid, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  lim jsonb := app_hidden.chat_limits();
  cv app_public.conversations := app_private.chat_session_conversation(widget_id, conversation_id, token_hash, true);
begin
  if (select count(*) from app_public.conversation_messages m
       where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.direction = 'inbound'
         and m.created_at > now() - interval '1 minute') >= (lim->>'messages_per_minute')::int then
    perform app_hidden.raise_error(429, 'rate_limited', 'Too many messages; wait a minute');
  end if;
  return jsonb_build_object('conversation_id', cv.id, 'response_mode', app_hidden.conversation_response_mode(cv))
    || app_private.chat_inbound(cv, body);
end $$;

ALTER FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) OWNER TO svc_owner;

--
-- Name: FUNCTION chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) IS 'A web chat visitor''s message into its conversation (the token''s hash opens it), the AI''s answer queued while it answers.';

--
-- Name: chat_start(uuid, text, jsonb, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  w app_public.chat_widgets;
  lim jsonb := app_hidden.chat_limits();
  v_email text := nullif(lower(visitor->>'email'), '');
  v_phone text := nullif(visitor->>'phone', '');
  v_name text := nullif(btrim(visitor->>'name'), '');
  v_contact uuid;
  cv app_public.conversations;
  sent jsonb;
begin
  select * into w from app_public.chat_widgets x where x.id = chat_start.widget_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Chat widget not found');
  end if;
  if token_hash is null or token_hash !~ '^[0-9a-f]{64}$' then
    raise exception 'chat_start: token_hash is the hex sha-256 of the visitor token';
  end if;
  if client_address is not null then
    -- one count per address at a time, whichever organization's widget: concurrent starts
    -- cannot all pass
    perform pg_advisory_xact_lock(hashtextextended('svc.chat_address:' || client_address, 0));
    if (select count(*) from app_private.chat_sessions s
         where s.client_address = chat_start.client_address
           and s.created_at > now() - make_interval(mins => (lim->>'chats_window_minutes')::int))
       >= (lim->>'chats_per_address')::int then
      perform app_hidden.raise_error(429, 'rate_limited', 'Too many new chats from this address; try again later');
    end if;
  end if;

  if v_phone is not null or v_email is not null then
    select x.contact_id into v_contact from app_private.inbound_contact(w.organization_id, w.location_id, v_phone, v_email) x;
  else
    insert into app_public.contacts (organization_id, name) values (w.organization_id, v_name) returning id into v_contact;
    if w.location_id is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id)
      values (w.organization_id, v_contact, w.location_id) on conflict do nothing;
    end if;
  end if;
  if v_name is not null then
    update app_public.contacts c set name = v_name, updated_at = now()
     where c.organization_id = w.organization_id and c.id = v_contact and c.name is null;
  end if;

  insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
  values (w.organization_id, v_contact, coalesce(w.location_id, app_private.contact_only_location(w.organization_id, v_contact)),
          'chat', null)
  returning * into cv;
  insert into app_private.chat_sessions (organization_id, conversation_id, widget_id, token_hash, client_address)
  values (w.organization_id, cv.id, w.id, token_hash, client_address);
  sent := app_private.chat_inbound(cv, body);
  return jsonb_build_object('conversation_id', cv.id, 'contact_id', v_contact, 'organization_id', w.organization_id,
    'response_mode', app_hidden.conversation_response_mode(cv)) || sent;
end $_$;

ALTER FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) OWNER TO svc_owner;

--
-- Name: FUNCTION chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) IS 'A web chat visitor starts a conversation through a widget: contact matched or created, the conversation, the visitor''s token hash, the first message and the AI''s answer queued. 404 unknown widget, 429 too many chats from the address.';

--
-- Name: chat_thread(uuid, uuid, text, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  lim jsonb := app_hidden.chat_limits();
  cv app_public.conversations := app_private.chat_session_conversation(widget_id, conversation_id, token_hash, false);
  since app_public.conversation_messages;
begin
  if after is not null then
    select * into since from app_public.conversation_messages m
     where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.id = chat_thread.after;
    if not found then
      perform app_hidden.raise_error(400, 'bad_request', 'query.after: not a message of this chat');
    end if;
  end if;
  return jsonb_build_object('conversation_id', cv.id, 'response_mode', app_hidden.conversation_response_mode(cv),
    'messages', coalesce((
      select jsonb_agg(jsonb_build_object('id', t.id,
               'from', case t.author when 'contact' then 'visitor' when 'ai' then 'assistant' when 'person' then 'staff' else 'system' end,
               'body', t.body, 'created_at', t.created_at) order by t.created_at, t.id)
        from (select m.id, m.author, m.body, m.created_at from app_public.conversation_messages m
               where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                 and (since.id is null or (m.created_at, m.id) > (since.created_at, since.id))
               order by m.created_at desc, m.id desc limit (lim->>'thread_max_messages')::int) t), '[]'));
end $$;

ALTER FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) IS 'A web chat thread as its visitor reads it (the token''s hash opens it): messages oldest first, after a message when given.';

--
-- Name: chat_widget(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_widget(widget_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('id', w.id, 'organization_id', w.organization_id, 'allowed_origins', to_jsonb(w.allowed_origins),
    'greeting', w.greeting, 'name', w.name)
    from app_public.chat_widgets w where w.id = chat_widget.widget_id
$$;

ALTER FUNCTION app_hidden.chat_widget(widget_id uuid) OWNER TO svc_owner;

--
-- Name: conversations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.conversations (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    contact_id uuid NOT NULL,
    location_id uuid,
    channel text NOT NULL,
    business_address text,
    subject text,
    ai_held boolean DEFAULT false NOT NULL,
    held_at timestamp with time zone,
    last_message_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT conversations_business_address_check CHECK ((length(business_address) <= 320)),
    CONSTRAINT conversations_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'sms'::text, 'chat'::text]))),
    CONSTRAINT conversations_check CHECK (((channel <> 'email'::text) OR (NOT ai_held))),
    CONSTRAINT conversations_check1 CHECK (((channel <> 'sms'::text) OR (business_address ~ '^\+[1-9][0-9]{6,14}$'::text))),
    CONSTRAINT conversations_subject_check CHECK ((length(subject) <= 998))
);

ALTER TABLE app_public.conversations OWNER TO svc_owner;

--
-- Name: TABLE conversations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.conversations IS 'A thread with one contact on one channel (email, sms, chat) at a location; ai_held: a person answers instead of the AI.';

--
-- Name: COLUMN conversations.business_address; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversations.business_address IS 'The business''s side of the thread: the SMS number it texts from, or the email address the contact wrote to.';

--
-- Name: COLUMN conversations.ai_held; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversations.ai_held IS 'True while a person answers (response_mode human); always false for email.';

--
-- Name: conversation_for_write(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_for_write(conversation_id uuid) RETURNS app_public.conversations
    LANGUAGE plpgsql STABLE
    AS $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = app_hidden.current_org_id() and x.id = conversation_for_write.conversation_id;
  if not found or not app_hidden.conversation_write_reach(cv.contact_id, cv.location_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  return cv;
end $$;

ALTER FUNCTION app_hidden.conversation_for_write(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_for_write(conversation_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_for_write(conversation_id uuid) IS 'The conversation by id as the caller sees it (policies) and may write to it (a MEMBER: own clients), else 404.';

--
-- Name: conversation_json(app_public.conversations, app_public.contacts); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('id', cv.id, 'channel', cv.channel, 'contact', app_hidden.contact_card(c),
    'location_id', cv.location_id, 'business_address', cv.business_address, 'subject', cv.subject,
    'response_mode', app_hidden.conversation_response_mode(cv), 'ai_held', cv.ai_held, 'held_at', cv.held_at,
    'last_message_at', cv.last_message_at, 'created_at', cv.created_at, 'updated_at', cv.updated_at)
$$;

ALTER FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_json(cv app_public.conversations, c app_public.contacts); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) IS 'A conversation as the API shows it (without messages), its contact as a card.';

--
-- Name: conversation_messages; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.conversation_messages (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    conversation_id uuid NOT NULL,
    channel text NOT NULL,
    direction text NOT NULL,
    author text NOT NULL,
    author_person_id uuid,
    body text NOT NULL,
    subject text,
    status text NOT NULL,
    error text,
    provider_message_id text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT conversation_messages_author_check CHECK ((author = ANY (ARRAY['contact'::text, 'ai'::text, 'person'::text, 'system'::text]))),
    CONSTRAINT conversation_messages_body_check CHECK (((length(body) >= 1) AND (length(body) <= 20000))),
    CONSTRAINT conversation_messages_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'sms'::text, 'chat'::text]))),
    CONSTRAINT conversation_messages_check CHECK (((direction = 'inbound'::text) = (author = 'contact'::text))),
    CONSTRAINT conversation_messages_check1 CHECK (((direction = 'inbound'::text) = (status = 'received'::text))),
    CONSTRAINT conversation_messages_check2 CHECK (((author = 'person'::text) OR (author_person_id IS NULL))),
    CONSTRAINT conversation_messages_direction_check CHECK ((direction = ANY (ARRAY['inbound'::text, 'outbound'::text]))),
    CONSTRAINT conversation_messages_provider_message_id_check CHECK ((length(provider_message_id) <= 998)),
    CONSTRAINT conversation_messages_status_check CHECK ((status = ANY (ARRAY['received'::text, 'queued'::text, 'sent'::text, 'failed'::text]))),
    CONSTRAINT conversation_messages_subject_check CHECK ((length(subject) <= 998))
);

ALTER TABLE app_public.conversation_messages OWNER TO svc_owner;

--
-- Name: TABLE conversation_messages; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.conversation_messages IS 'The messages of a conversation. Outbound ones that leave by email or SMS share their id with the outgoing message (outbox meta.message_id); status follows its delivery.';

--
-- Name: COLUMN conversation_messages.channel; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversation_messages.channel IS 'The conversation''s channel, copied so search can skip chat by index.';

--
-- Name: COLUMN conversation_messages.author; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversation_messages.author IS 'contact (inbound), ai (the responder), person (a team member or an organization key through the API), system (keyword answers).';

--
-- Name: COLUMN conversation_messages.provider_message_id; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversation_messages.provider_message_id IS 'The provider''s id of an inbound message (the SMS provider''s, an email''s Message-ID), for replies that refer to it.';

--
-- Name: conversation_message_json(app_public.conversation_messages); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('id', m.id, 'conversation_id', m.conversation_id, 'direction', m.direction, 'author', m.author,
    'author_person_id', m.author_person_id, 'body', m.body, 'subject', m.subject, 'status', m.status, 'error', m.error,
    'created_at', m.created_at)
$$;

ALTER FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_message_json(m app_public.conversation_messages); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) IS 'One message as the API shows it.';

--
-- Name: conversation_message_record(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_private.outgoing_messages m
     set status = case when conversation_message_record.error is null then 'sent' else 'failed' end,
         sent_at = case when conversation_message_record.error is null then now() end,
         error = left(conversation_message_record.error, 1000)
   where m.organization_id = app_hidden.current_org_id() and m.id = conversation_message_record.message_id
     and m.status = 'queued' and m.meta ? 'conversation_id'
  returning m.status
$$;

ALTER FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_message_record(message_id uuid, error text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) IS 'Records what the transport answered for a conversation message of the current organization the API sent itself.';

--
-- Name: conversation_reply_send(uuid, text, text[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
  person app_public.people;
  domain text;
  sender text;
  recipient text;
  subject text;
  headers jsonb := '{}';
  refusal text;
begin
  cv := app_private.conversation_locked_for_write(conversation_id);
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  -- the person a personal key acts for is the message's author on every channel (none for other keys)
  select * into person from app_public.people p where p.organization_id = org and p.id = app_hidden.current_user_id() and p.active;
  if cv.channel = 'email' then
    -- rule 3: an email goes out as a person
    if person.id is null then
      perform app_hidden.raise_error(422, 'no_acting_user',
        'An email reply goes out as a person: use a personal key (this credential acts for no one)');
    end if;
    if c.email is null then
      perform app_hidden.raise_error(422, 'channel_not_supported', 'The contact has no email address to reply to');
    end if;
    if exists (select 1 from app_public.email_suppressions s where s.organization_id = org and s.email = c.email_key) then
      perform app_hidden.raise_error(409, 'email_suppressed', 'The contact''s address is suppressed: no email goes to it');
    end if;
    select coalesce(o.sending_email_domain, 'localhost') into domain from app_public.organizations o where o.id = org;
    -- from the address the contact wrote to; who wrote it is the message's author (author_person_id)
    sender := coalesce(cv.business_address, 'inbox@' || domain);
    recipient := c.email::text;
    subject := case when coalesce(cv.subject, '') ~* '^\s*re\s*:' then cv.subject else 'Re: ' || coalesce(cv.subject, '(no subject)') end;
    headers := coalesce((select jsonb_build_object('In-Reply-To', m.provider_message_id)
                           from app_public.conversation_messages m
                          where m.organization_id = org and m.conversation_id = cv.id and m.direction = 'inbound'
                            and m.provider_message_id is not null
                          order by m.created_at desc, m.id desc limit 1), '{}');
  elsif cv.channel = 'sms' then
    if c.phone is null then
      perform app_hidden.raise_error(422, 'no_sms_number', 'The contact has no phone number to text');
    end if;
    refusal := app_private.conversation_sms_refusal(c, cv);
    if refusal is not null then
      perform app_hidden.raise_error(409, 'sms_not_permitted', refusal);
    end if;
    sender := cv.business_address;
    recipient := c.phone;
  end if;
  perform app_private.conversation_hold_for_person(cv);
  return app_private.conversation_send_answer(app_private.conversation_append_outbound(cv, 'person', person.id, body, sender, recipient,
    subject, headers, case when cv.channel = any(sinks) then 'sink' else 'caller' end));
end $$;

ALTER FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_reply_send(conversation_id uuid, body text, sinks text[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) IS 'conversations_reply''s write: the rules of the conversation''s channel (email as a person; SMS consent and opt-out), the message stored and, for channels in sinks, delivered to the local sink; the AI put on hold.';

--
-- Name: conversation_response_mode(app_public.conversations); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select case when cv.channel = 'email' or cv.ai_held then 'human' else 'ai' end
$$;

ALTER FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_response_mode(cv app_public.conversations); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) IS 'Who answers the conversation: ai, or human (held, and always for email, which has no AI).';

--
-- Name: conversation_set_held(uuid, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
  last app_public.conversation_messages;
  queued boolean := false;
begin
  cv := app_private.conversation_locked_for_write(conversation_id);
  if cv.channel = 'email' then
    perform app_hidden.raise_error(422, 'channel_not_supported', 'An email conversation has no AI to hold or resume');
  end if;
  if cv.ai_held is distinct from held then
    update app_public.conversations x set ai_held = held, held_at = case when held then now() end, updated_at = now()
     where x.organization_id = org and x.id = cv.id
    returning * into cv;
    if not held then
      select * into last from app_public.conversation_messages m
       where m.organization_id = org and m.conversation_id = cv.id order by m.created_at desc, m.id desc limit 1;
      if last.direction = 'inbound' then
        perform app_private.add_job('conversation_ai_reply',
          jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', last.id),
          job_key => 'conversation_ai:' || last.id);
        queued := true;
      end if;
    end if;
  end if;
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  return app_hidden.conversation_json(cv, c) || jsonb_build_object('ai_queued', queued);
end $$;

ALTER FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_set_held(conversation_id uuid, held boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) IS 'conversations_hold/resume''s write: 422 channel_not_supported for email; resuming queues the AI''s answer to an unanswered last message.';

--
-- Name: conversation_sms_send(uuid, text, uuid, text[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
-- ON CONFLICT names columns that share the parameters' names
#variable_conflict use_column
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
  loc uuid := location_id;
  number text;
  cv app_public.conversations;
  refusal text;
begin
  select * into c from app_public.contacts x where x.organization_id = org and x.id = conversation_sms_send.contact_id;
  if not found or not app_hidden.conversation_write_reach(c.id, coalesce(loc, (
       select cl.location_id from app_public.contact_locations cl
        where cl.organization_id = org and cl.contact_id = c.id and app_hidden.current_in_reach(cl.location_id) limit 1))) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  -- rule 4: the number of the contact's location (one in reach), else the organization's default
  if loc is null then
    select l.id into loc from app_public.contact_locations cl
      join app_public.locations l on l.organization_id = cl.organization_id and l.id = cl.location_id
     where cl.organization_id = org and cl.contact_id = c.id and app_hidden.current_in_reach(l.id)
     order by l.sms_number is null, l.created_at, l.id limit 1;
  end if;
  select coalesce((select l.sms_number from app_public.locations l where l.organization_id = org and l.id = loc), o.default_sms_number)
    into number from app_public.organizations o where o.id = org;
  if number is null then
    perform app_hidden.raise_error(422, 'no_sms_number',
      'No number can text this contact: its location has no SMS number and the organization has no default number');
  end if;
  if c.phone is null then
    perform app_hidden.raise_error(422, 'no_sms_number', 'The contact has no phone number to text');
  end if;
  select * into cv from app_public.conversations x
   where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = number for update;
  if cv.id is not null and not app_hidden.current_in_reach(cv.location_id) then
    if app_hidden.current_role() = 'member' then
      perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
    end if;
    perform app_hidden.raise_error(422, 'thread_at_other_location',
      'The contact''s SMS thread on ' || number || ' belongs to another location');
  end if;
  refusal := app_private.conversation_sms_refusal(c, null);
  if refusal is not null then
    perform app_hidden.raise_error(409, 'sms_not_permitted', refusal);
  end if;
  if cv.id is null then
    -- a concurrent first text opens the same thread: both continue the one that won
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
    values (org, c.id, loc, 'sms', number)
    on conflict (organization_id, contact_id, business_address) where channel = 'sms' do nothing;
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = number for update;
  end if;
  perform app_private.conversation_hold_for_person(cv);
  return app_private.conversation_send_answer(app_private.conversation_append_outbound(cv, 'person', app_hidden.current_user_id(), body,
    number, c.phone, null, null, case when 'sms' = any(sinks) then 'sink' else 'caller' end));
end $$;

ALTER FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) IS 'conversations_send_sms''s write: the number (rule 4), the thread on it (another location''s: 422, a MEMBER 404), consent (rule 6); the text stored in the contact''s thread on that number and, with the sink, delivered.';

--
-- Name: conversation_write_reach(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select app_hidden.current_org_id() is not null
     and (app_hidden.current_reaches_all_locations() or location_id = any(app_hidden.current_location_ids()))
     and (app_hidden.current_reaches_all_locations()
          or exists (select 1 from app_public.contact_locations cl
                      where cl.organization_id = app_hidden.current_org_id() and cl.contact_id = conversation_write_reach.contact_id
                        and cl.location_id = any(app_hidden.current_location_ids())))
     and ((app_hidden.current_records_level() = 'all' and app_hidden.current_role() <> 'member')
          or conversation_write_reach.contact_id = any(app_hidden.current_own_client_ids()))
$$;

ALTER FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_write_reach(contact_id uuid, location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) IS 'Whether the current credential may write to a conversation of the contact at the location (NULL: the organization''s): in reach, and for a MEMBER (or an own-records one) the contact is its own client.';

--
-- Name: conversations_matching(text, timestamp with time zone, uuid, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) RETURNS TABLE(id uuid, created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  contacts uuid[] := array(select x.id from app_hidden.contacts_matching(pattern, null) x);
  matched uuid[];
  ids uuid[];
begin
  ids := array(
    select w.id
      from (select cv.id, cv.created_at, cv.contact_id from app_public.conversations cv
             where cv.organization_id = org and cv.channel <> 'chat'
               and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
             order by cv.created_at desc, cv.id desc limit 300) w
     where w.contact_id = any(contacts)
        or exists (select 1 from app_public.conversation_messages m
                    where m.organization_id = org and m.conversation_id = w.id and m.channel <> 'chat' and m.body ilike pattern)
     order by w.created_at desc, w.id desc limit n);
  if cardinality(ids) < n then
    -- every match, by id: the bodies' trigram index, then the matching contacts' conversations
    matched := array(select distinct m.conversation_id from app_public.conversation_messages m
                      where m.body ilike pattern and m.channel <> 'chat' and m.organization_id = org)
            || array(select cv.id from app_public.conversations cv
                      where cv.organization_id = org and cv.contact_id = any(contacts));
    ids := array(
      select cv.id from app_public.conversations cv
       where cv.organization_id = org and cv.id = any(matched) and cv.channel <> 'chat'
         and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
       order by cv.created_at desc, cv.id desc limit n);
  end if;
  return query select cv.id, cv.created_at from app_public.conversations cv
                where cv.organization_id = org and cv.id = any(ids) order by cv.created_at desc, cv.id desc;
end $$;

ALTER FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) IS 'Candidates of conversations_list q: the newest n conversations (not chat) of the current organization after the cursor whose messages or contact contain the pattern (ids only; the caller''s policies filter them).';

--
-- Name: current_sms_enabled(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_sms_enabled() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(nullif(app_hidden.session_claim('sms_enabled'), '')::boolean, false)
$$;

ALTER FUNCTION app_hidden.current_sms_enabled() OWNER TO svc_owner;

--
-- Name: FUNCTION current_sms_enabled(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_sms_enabled() IS 'Whether the credential may text (a MEMBER''s SMS setting; a MEMBER key never); false when unset and for analysts.';

--
-- Name: chat_inbound(app_public.conversations, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.chat_inbound(cv app_public.conversations, body text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  lim jsonb := app_hidden.chat_limits();
  m app_public.conversation_messages;
  queued boolean := false;
begin
  if body is null or length(btrim(body)) < 1 or length(body) > (lim->>'message_max_length')::int then
    perform app_hidden.raise_error(400, 'bad_request', format('body.message: 1 to %s characters', lim->>'message_max_length'));
  end if;
  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
  values (cv.organization_id, cv.id, 'chat', 'inbound', 'contact', body, 'received')
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id;
  update app_public.contacts c set last_seen_at = greatest(c.last_seen_at, now())
   where c.organization_id = cv.organization_id and c.id = cv.contact_id;
  if app_hidden.conversation_response_mode(cv) = 'ai' then
    perform app_private.add_job('conversation_ai_reply',
      jsonb_build_object('organization_id', cv.organization_id, 'conversation_id', cv.id, 'message_id', m.id),
      job_key => 'conversation_ai:' || m.id);
    queued := true;
  end if;
  return jsonb_build_object('message_id', m.id, 'created_at', m.created_at, 'ai_queued', queued);
end $$;

ALTER FUNCTION app_private.chat_inbound(cv app_public.conversations, body text) OWNER TO svc_owner;

--
-- Name: chat_session_conversation(uuid, uuid, text, boolean); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean) RETURNS app_public.conversations
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_private.chat_sessions;
  cv app_public.conversations;
begin
  select x.* into s from app_private.chat_sessions x
    join app_public.chat_widgets w on w.organization_id = x.organization_id and w.id = x.widget_id
   where w.id = chat_session_conversation.widget_id and x.conversation_id = chat_session_conversation.conversation_id;
  if not found or token_hash is null or s.token_hash <> token_hash then
    perform app_hidden.raise_error(404, 'not_found', 'Chat not found');
  end if;
  if lock then
    select * into cv from app_public.conversations x
     where x.organization_id = s.organization_id and x.id = s.conversation_id for update;
  else
    select * into cv from app_public.conversations x where x.organization_id = s.organization_id and x.id = s.conversation_id;
  end if;
  return cv;
end $$;

ALTER FUNCTION app_private.chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean) OWNER TO svc_owner;

--
-- Name: conversation_ai_context(uuid, uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = conversation_ai_context.organization_id and x.id = conversation_ai_context.conversation_id;
  if not app_private.conversation_ai_due(cv, message_id) then
    return null;
  end if;
  return jsonb_build_object(
    'organization', (select jsonb_build_object('name', o.name) from app_public.organizations o where o.id = cv.organization_id),
    'location', (select jsonb_build_object('name', l.name, 'timezone', l.timezone, 'hours', l.hours,
                   'address', to_jsonb(l)->'address',
                   'offerings', coalesce((select jsonb_agg(jsonb_build_object('name', f.name, 'duration_minutes', f.duration_minutes)
                                                           order by f.name)
                                            from app_public.offerings f
                                           where f.organization_id = l.organization_id and f.location_id = l.id), '[]'))
                   from app_public.locations l where l.organization_id = cv.organization_id and l.id = cv.location_id),
    'channel', cv.channel,
    'contact', (select jsonb_build_object('name', c.name) from app_public.contacts c
                 where c.organization_id = cv.organization_id and c.id = cv.contact_id),
    'thread', coalesce((select jsonb_agg(jsonb_build_object('author', t.author, 'body', t.body) order by t.created_at, t.id)
                          from (select m.author, m.body, m.created_at, m.id from app_public.conversation_messages m
                                 where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                                 order by m.created_at desc, m.id desc limit 20) t), '[]'));
end $$;

ALTER FUNCTION app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) IS 'What the AI responder is given for an inbound message (organization, location with hours, address and offerings, the last 20 messages), or NULL when the AI owes it no answer.';

--
-- Name: conversation_ai_due(app_public.conversations, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_ai_due(cv app_public.conversations, message_id uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select cv.id is not null and app_hidden.conversation_response_mode(cv) = 'ai'
     and exists (select 1 from app_public.conversation_messages m
                  where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                    and m.id = conversation_ai_due.message_id and m.direction = 'inbound'
                    and not exists (select 1 from app_public.conversation_messages later
                                     where later.organization_id = m.organization_id and later.conversation_id = m.conversation_id
                                       and (later.created_at, later.id) > (m.created_at, m.id)))
$$;

ALTER FUNCTION app_private.conversation_ai_due(cv app_public.conversations, message_id uuid) OWNER TO svc_owner;

--
-- Name: conversation_ai_interaction(app_public.conversations, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if cv.channel not in ('sms', 'chat') or status not in ('in_progress', 'completed') then
    return;
  end if;
  insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, started_at, ended_at, conversation_id)
  values (cv.organization_id, cv.contact_id, cv.location_id, cv.channel, status, coalesce(since, now()),
          case when status = 'completed' then greatest(now(), coalesce(since, now())) end, cv.id)
  on conflict (organization_id, conversation_id) where conversation_id is not null do update
    set status = excluded.status,
        ended_at = case when excluded.status = 'completed' then greatest(now(), interactions.started_at) end;
end $$;

ALTER FUNCTION app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone) IS 'Records the AI''s handling of an SMS or chat conversation as its interaction: in_progress while it answers, completed when it hands over or a person takes over.';

--
-- Name: conversation_ai_record(uuid, uuid, uuid, jsonb, text[]); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
  c app_public.contacts;
  refusal text;
  m app_public.conversation_messages;
  asked_at timestamptz;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = conversation_ai_record.organization_id and x.id = conversation_ai_record.conversation_id for update;
  if not app_private.conversation_ai_due(cv, message_id) then
    return jsonb_build_object('action', 'none');
  end if;
  select x.created_at into asked_at from app_public.conversation_messages x
   where x.organization_id = cv.organization_id and x.id = conversation_ai_record.message_id;
  if answer->>'kind' = 'handover' or coalesce(btrim(answer->>'text'), '') = '' then
    update app_public.conversations x set ai_held = true, held_at = now(), updated_at = now()
     where x.organization_id = cv.organization_id and x.id = cv.id;
    perform app_private.conversation_ai_interaction(cv, 'completed', asked_at);
    return jsonb_build_object('action', 'handover');
  end if;
  select * into c from app_public.contacts x where x.organization_id = cv.organization_id and x.id = cv.contact_id;
  if cv.channel = 'sms' then
    -- the same rules as a person's answer (rule 6): never to an opted-out number
    refusal := case when c.phone is null then 'The contact has no phone number' else app_private.conversation_sms_refusal(c, cv) end;
    if refusal is not null then
      return jsonb_build_object('action', 'refused', 'reason', refusal);
    end if;
  end if;
  m := app_private.conversation_append_outbound(cv, 'ai', null, left(btrim(answer->>'text'), 1600), cv.business_address, c.phone,
    null, null, case when cv.channel = any(sinks) then 'sink' else 'job' end);
  perform app_private.conversation_ai_interaction(cv, 'in_progress', asked_at);
  return jsonb_build_object('action', 'reply', 'message_id', m.id);
end $$;

ALTER FUNCTION app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]) IS 'Writes the AI''s answer to an inbound message (queued for delivery) or hands the thread to a person (hold), once, and records the conversation''s interaction: nothing when the message is no longer the AI''s to answer.';

--
-- Name: conversation_append_outbound(app_public.conversations, text, uuid, text, text, text, text, jsonb, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text) RETURNS app_public.conversation_messages
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  m app_public.conversation_messages;
  message_id uuid := gen_random_uuid();
  meta jsonb := jsonb_build_object('conversation_id', cv.id, 'message_id', message_id);
begin
  if deliver not in ('job', 'sink', 'caller') then
    raise exception 'conversation_append_outbound: deliver is job, sink or caller, not %', deliver;
  end if;
  if cv.channel = 'email' then
    -- the id a reply's In-Reply-To names (conversations_inbound_email finds the thread by it)
    headers := jsonb_build_object('Message-ID', '<' || message_id || '@' || coalesce((select o.sending_email_domain
      from app_public.organizations o where o.id = cv.organization_id), 'localhost') || '>') || coalesce(headers, '{}');
  end if;
  if headers is not null and headers <> '{}' then
    meta := meta || jsonb_build_object('headers', headers);
  end if;
  insert into app_public.conversation_messages (organization_id, id, conversation_id, channel, direction, author, author_person_id,
    body, subject, status)
  values (cv.organization_id, message_id, cv.id, cv.channel, 'outbound', author, person, body, subject,
          case when cv.channel = 'chat' or deliver = 'sink' then 'sent' else 'queued' end)
  returning * into m;
  if cv.channel <> 'chat' then
    insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
    values (cv.organization_id, message_id, cv.channel, sender, recipient, coalesce(subject, case when cv.channel = 'email' then '' end),
            body, meta, case when deliver = 'sink' then 'sent' else 'queued' end, case when deliver = 'sink' then now() end);
    if deliver = 'sink' then
      insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
      values (cv.organization_id, message_id, cv.channel, sender, recipient, subject, body, meta);
    elsif deliver = 'job' then
      perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', cv.organization_id, 'message_id', message_id),
        job_key => 'message:' || message_id);
    end if;
  end if;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id;
  return m;
end $$;

ALTER FUNCTION app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text) IS 'An outbound message of a conversation and its outgoing message (same id; meta conversation_id, message_id), delivered by job, by the local sink now, or by the caller; chat messages are stored as sent.';

--
-- Name: conversation_hold_for_person(app_public.conversations); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_hold_for_person(cv app_public.conversations) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_public.conversations x set ai_held = true, held_at = coalesce(x.held_at, now()), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id and x.channel <> 'email' and not x.ai_held
$$;

ALTER FUNCTION app_private.conversation_hold_for_person(cv app_public.conversations) OWNER TO svc_owner;

--
-- Name: conversation_locked_for_write(uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_locked_for_write(conversation_id uuid) RETURNS app_public.conversations
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = app_hidden.current_org_id() and x.id = conversation_locked_for_write.conversation_id for update;
  if not found or not app_hidden.conversation_write_reach(cv.contact_id, cv.location_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  return cv;
end $$;

ALTER FUNCTION app_private.conversation_locked_for_write(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: conversation_send_answer(app_public.conversation_messages); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_send_answer(m app_public.conversation_messages) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object(
    'message', app_hidden.conversation_message_json(m),
    'conversation', (select app_hidden.conversation_json(cv, c) from app_public.conversations cv
                       join app_public.contacts c on c.organization_id = cv.organization_id and c.id = cv.contact_id
                      where cv.organization_id = m.organization_id and cv.id = m.conversation_id),
    'outgoing', (select jsonb_build_object('organization_id', om.organization_id, 'id', om.id, 'channel', om.channel,
                   'sender', om.sender, 'recipient', om.recipient, 'subject', om.subject, 'body', om.body, 'meta', om.meta)
                   from app_private.outgoing_messages om
                  where om.organization_id = m.organization_id and om.id = m.id and om.status = 'queued'))
$$;

ALTER FUNCTION app_private.conversation_send_answer(m app_public.conversation_messages) OWNER TO svc_owner;

--
-- Name: conversation_sequence_reply(uuid, text, text, text, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  om app_private.outgoing_messages;
begin
  if replied_id is not null then
    select * into om from app_private.outgoing_messages x
     where x.organization_id = org and x.id = replied_id and x.meta ? 'enrollment_id';
  elsif channel = 'sms' then
    select * into om from app_private.outgoing_messages x
     where x.organization_id = org and x.channel = 'sms' and x.recipient = contact_address and x.sender = business_address
       and x.meta ? 'enrollment_id' and x.created_at > now() - interval '30 days'
     order by x.created_at desc, x.id desc limit 1;
  end if;
  if om.id is null or exists (select 1 from app_public.enrollment_events v
                               where v.organization_id = org and v.enrollment_id = (om.meta->>'enrollment_id')::uuid
                                 and v.type = 'replied' and v.message_id = om.id) then
    return;
  end if;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
  select org, e.id, 'replied', om.meta->>'step_key', om.id
    from app_public.enrollments e where e.organization_id = org and e.id = (om.meta->>'enrollment_id')::uuid;
end $$;

ALTER FUNCTION app_private.conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid) IS 'Records an inbound message as the replied event of the sequence message it answers (In-Reply-To, or the last sequence SMS from that number to that phone), once per message.';

--
-- Name: conversation_sms_refusal(app_public.contacts, app_public.conversations); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_sms_refusal(c app_public.contacts, cv app_public.conversations) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if exists (select 1 from app_public.sms_opt_outs o
              where o.organization_id = c.organization_id and o.phone = c.phone and o.ended_at is null) then
    return 'The contact opted out of SMS';
  end if;
  if not c.sms_consent and (cv.id is null or not exists (
       select 1 from app_public.conversation_messages m
        where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.direction = 'inbound')) then
    return 'The contact has not consented to SMS';
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.conversation_sms_refusal(c app_public.contacts, cv app_public.conversations) OWNER TO svc_owner;

--
-- Name: conversations_inbound_email(text, text, text, text, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  org uuid;
  replied_id uuid;
  c app_public.contacts;
  made boolean;
  cv app_public.conversations;
  m app_public.conversation_messages;
  topic text := nullif(btrim(regexp_replace(coalesce(subject, ''), '^\s*((re|fwd?|aw|sv)\s*:\s*)+', '', 'i')), '');
begin
  if to_address !~ '^[^@\s]+@[^@\s]+$' or from_address !~ '^[^@\s]+@[^@\s]+$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are email addresses');
  end if;
  if body is null or length(body) not between 1 and 20000 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: 1 to 20000 characters');
  end if;
  replied_id := substring(in_reply_to from '^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@')::uuid;
  if replied_id is not null then
    select om.organization_id, (om.meta->>'conversation_id')::uuid into org, cv.id
      from app_private.outgoing_messages om where om.id = replied_id and om.channel = 'email';
  end if;
  if org is null then
    select o.id into org from app_public.organizations o
     where lower(o.sending_email_domain) = lower(split_part(to_address, '@', 2)) order by o.created_at, o.id limit 1;
  end if;
  if org is null then
    perform app_hidden.raise_error(404, 'not_found', 'No organization receives email at ' || to_address);
  end if;
  if provider_id is not null then
    select * into m from app_public.conversation_messages x where x.organization_id = org and x.provider_message_id = provider_id;
    if found then
      return jsonb_build_object('organization_id', org, 'conversation_id', m.conversation_id, 'message_id', m.id, 'duplicate', true);
    end if;
  end if;

  select x.created into made from app_private.inbound_contact(org, null, null, lower(from_address)) x;
  select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(from_address);
  if cv.id is not null then
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.id = cv.id and x.contact_id = c.id and x.channel = 'email' for update;
  end if;
  if cv.id is null then
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.contact_id = c.id and x.channel = 'email' and x.business_address = lower(to_address)
       and x.subject is not distinct from topic
     order by x.last_message_at desc, x.id desc limit 1 for update;
  end if;
  if cv.id is null then
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address, subject)
    values (org, c.id, app_private.contact_only_location(org, c.id), 'email', lower(to_address), topic)
    returning * into cv;
  end if;
  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, subject, status,
    provider_message_id)
  values (org, cv.id, 'email', 'inbound', 'contact', body, subject, 'received', provider_id)
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = org and x.id = cv.id;
  perform app_private.conversation_sequence_reply(org, 'email', c.email_key, null, replied_id);
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id, 'contact_id', c.id,
    'contact_created', made);
end $_$;

ALTER FUNCTION app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text) IS 'An email arrives: organization and thread by In-Reply-To or the domain written to, contact by email or created, the thread continued (replied to, or same address and subject) or opened. No AI answers email.';

--
-- Name: conversations_inbound_sms(text, text, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  org uuid;
  org_name text;
  location uuid;
  c app_public.contacts;
  made boolean;
  cv app_public.conversations;
  m app_public.conversation_messages;
  keyword text := app_private.sms_keyword(body);
  answer text;
  reply app_public.conversation_messages;
  ai_queued boolean := false;
begin
  if to_number !~ '^\+[1-9][0-9]{6,14}$' or from_number !~ '^\+[1-9][0-9]{6,14}$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are E.164 numbers');
  end if;
  if body is null or length(body) not between 1 and 20000 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: 1 to 20000 characters');
  end if;
  select l.organization_id, l.id into org, location from app_public.locations l
   where l.sms_number = to_number order by l.created_at, l.id limit 1;
  if org is null then
    select o.id into org from app_public.organizations o where o.default_sms_number = to_number order by o.created_at, o.id limit 1;
  end if;
  if org is null then
    perform app_hidden.raise_error(404, 'not_found', 'No organization texts from ' || to_number);
  end if;
  select o.name into org_name from app_public.organizations o where o.id = org;

  if provider_id is not null then
    select * into m from app_public.conversation_messages x where x.organization_id = org and x.provider_message_id = provider_id;
    if found then
      select * into cv from app_public.conversations x where x.organization_id = org and x.id = m.conversation_id;
      return jsonb_build_object('organization_id', org, 'conversation_id', m.conversation_id, 'message_id', m.id,
        'contact_id', cv.contact_id, 'duplicate', true);
    end if;
  end if;

  select x.created into made from app_private.inbound_contact(org, location, from_number, null) x;
  select * into c from app_public.contacts x where x.organization_id = org and x.phone = from_number;

  insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
  values (org, c.id, coalesce(location, app_private.contact_only_location(org, c.id)), 'sms', to_number)
  on conflict (organization_id, contact_id, business_address) where channel = 'sms' do nothing;
  select * into cv from app_public.conversations x
   where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = to_number
     for update;

  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status,
    provider_message_id)
  values (org, cv.id, 'sms', 'inbound', 'contact', body, 'received', provider_id)
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = org and x.id = cv.id;

  if keyword = 'stop' then
    insert into app_public.sms_opt_outs (organization_id, phone, contact_id, source) values (org, c.phone, c.id, 'keyword')
    on conflict (organization_id, phone) where ended_at is null do nothing;
    update app_public.contacts x set sms_consent = false, sms_consent_at = null, sms_consent_source = null, updated_at = now()
     where x.organization_id = org and x.id = c.id;
    answer := org_name || ': you are unsubscribed and will get no more messages from us. Reply START to resubscribe.';
  elsif keyword = 'start' then
    update app_public.sms_opt_outs o set ended_at = greatest(o.created_at, now())
     where o.organization_id = org and o.phone = c.phone and o.ended_at is null;
    update app_public.contacts x set sms_consent = true, sms_consent_at = now(), sms_consent_source = 'SMS keyword START',
           updated_at = now()
     where x.organization_id = org and x.id = c.id;
    answer := org_name || ': you are resubscribed to our messages. Reply HELP for help, STOP to unsubscribe. '
      || 'Msg & data rates may apply.';
  elsif keyword = 'help' then
    answer := app_private.sms_help_reply(org, to_number);
  end if;

  if keyword is null then
    perform app_private.conversation_sequence_reply(org, 'sms', c.phone, to_number, null);
  end if;
  if answer is not null then
    reply := app_private.conversation_append_outbound(cv, 'system', null, answer, to_number, c.phone, null, null, 'job');
  elsif app_hidden.conversation_response_mode(cv) = 'ai' then
    perform app_private.add_job('conversation_ai_reply',
      jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id),
      job_key => 'conversation_ai:' || m.id);
    ai_queued := true;
  end if;
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id, 'contact_id', c.id,
    'contact_created', made, 'keyword', keyword, 'reply_message_id', reply.id, 'ai_queued', ai_queued);
end $_$;

ALTER FUNCTION app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_inbound_sms(to_number text, from_number text, body text, provider_id text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text) IS 'An SMS arrives at one of the organization''s numbers: the contact matched by phone or created, the thread continued or opened, STOP/START/HELP recorded and answered, anything else left to the AI while it answers. Idempotent on provider_id.';

--
-- Name: sms_help_reply(uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sms_help_reply(org uuid, business_number text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select case
    when o.sms_help_text is null then
      o.name || ': for help, call or text ' || business_number || ' or reply with your question. '
        || 'Msg & data rates may apply; reply STOP to unsubscribe, START to resubscribe.'
    else
      case when strpos(lower(o.sms_help_text), lower(o.name)) > 0 then '' else o.name || ': ' end
        || o.sms_help_text
        || case when o.sms_help_text ~* '\mstop\M' then '' else ' Reply STOP to unsubscribe.' end
  end
  from app_public.organizations o where o.id = org
$$;

ALTER FUNCTION app_private.sms_help_reply(org uuid, business_number text) OWNER TO svc_owner;

--
-- Name: FUNCTION sms_help_reply(org uuid, business_number text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sms_help_reply(org uuid, business_number text) IS 'The answer to HELP/INFO sent from business_number: the organization''s sms_help_text, named and with STOP, or the default.';

--
-- Name: sms_keyword(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sms_keyword(body text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$
  select case upper(regexp_replace(btrim(body), '[[:space:][:punct:]]+$', ''))
    when 'STOP' then 'stop' when 'STOPALL' then 'stop' when 'UNSUBSCRIBE' then 'stop' when 'CANCEL' then 'stop'
    when 'END' then 'stop' when 'QUIT' then 'stop' when 'REVOKE' then 'stop' when 'OPTOUT' then 'stop'
    when 'START' then 'start' when 'UNSTOP' then 'start'
    when 'HELP' then 'help' when 'INFO' then 'help'
    else case when app_private.sms_plain_opt_out(body) then 'stop' end
  end
$_$;

ALTER FUNCTION app_private.sms_keyword(body text) OWNER TO svc_owner;

--
-- Name: sms_plain_opt_out(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sms_plain_opt_out(body text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $_$
  select btrim(regexp_replace(regexp_replace(lower(coalesce(body, '')), '[''’‘`]', '', 'g'), '[^a-z0-9]+', ' ', 'g')) ~ (
    '^(hi |hello |hey )?(please |pls |plz )?('
    || '(stop|quit|cease) (texting|txting|messaging|contacting|sending (me )?(texts|messages|text messages|sms|sms messages))( me)?'
    || '|(do not|dont|never) (text|txt|message|sms|contact) (me|this number)'
    || '|no more (texts|text messages|messages|sms)'
    || '|unsubscribe( me)?( from (this|these|your) (list|texts|messages))?'
    || '|(remove|take) (me|my number|this number) (off|from) (your|the|this) (list|texting list|text list|sms list|contact list|mailing list)'
    || '|opt (me )?out|optout me|opt me out of (this|these|your) (texts|messages)'
    || '|(i (want|would like|wish)|id like) to (unsubscribe|opt out|stop (getting|receiving) (texts|messages|these))'
    || '|(leave me alone and )?stop (all )?(texts|messages|text messages)'
    || ')( (again|anymore|any more|ever again|now|at all))?( (please|pls|plz|thanks|thank you|thx))?$')
$_$;

ALTER FUNCTION app_private.sms_plain_opt_out(body text) OWNER TO svc_owner;

--
-- Name: FUNCTION sms_plain_opt_out(body text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sms_plain_opt_out(body text) IS 'Whether a whole SMS is a plain-language opt-out request ("please stop texting me", "unsubscribe me", "don''t text me again"); conservative: a longer or conditional message is not one.';

--
-- Name: tg_conversation_messages__webhooks(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_conversation_messages__webhooks() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
begin
  if not app_private.webhook_wanted(new.organization_id, 'message.received') then
    return null;
  end if;
  select * into cv from app_public.conversations x where x.organization_id = new.organization_id and x.id = new.conversation_id;
  perform app_private.webhook_emit(new.organization_id, 'message.received', new.created_at, jsonb_build_object(
    'id', new.id, 'conversation_id', new.conversation_id, 'contact_id', cv.contact_id, 'location_id', cv.location_id,
    'channel', new.channel, 'subject', new.subject, 'body', new.body, 'received_at', new.created_at));
  return null;
end $$;

ALTER FUNCTION app_private.tg_conversation_messages__webhooks() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_conversation_messages__webhooks(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_conversation_messages__webhooks() IS 'message.received when a contact''s SMS, email or chat message arrives.';

--
-- Name: tg_conversations__ai_interaction_ends(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_conversations__ai_interaction_ends() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_public.interactions i set status = 'completed', ended_at = greatest(now(), i.started_at)
   where i.organization_id = new.organization_id and i.conversation_id = new.id and i.status = 'in_progress';
  return null;
end $$;

ALTER FUNCTION app_private.tg_conversations__ai_interaction_ends() OWNER TO svc_owner;

--
-- Name: conversations_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_get(conversation_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
begin
  select * into cv from app_public.conversations x where x.organization_id = org and x.id = conversations_get.conversation_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  return app_hidden.conversation_json(cv, c) || jsonb_build_object('messages', coalesce((
    select jsonb_agg(app_hidden.conversation_message_json(m) order by m.created_at, m.id)
      from app_public.conversation_messages m
     where m.organization_id = org and m.conversation_id = cv.id), '[]'));
end $$;

ALTER FUNCTION app_public.conversations_get(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_get(conversation_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_get(conversation_id uuid) IS 'conversations_get: one conversation in reach with its messages, oldest first, and response_mode; 404 otherwise.';

--
-- Name: conversations_hold(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_hold(conversation_id uuid) RETURNS jsonb
    LANGUAGE sql
    AS $$
  select app_hidden.conversation_set_held((app_hidden.conversation_for_write(conversation_id)).id, true)
$$;

ALTER FUNCTION app_public.conversations_hold(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_hold(conversation_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_hold(conversation_id uuid) IS 'conversations_hold: the AI stops answering the SMS or chat conversation until resumed (422 for email).';

--
-- Name: conversations_list(text, integer, timestamp with time zone, uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  pattern text := case when q is null then null
                       else '%' || replace(replace(replace(q, chr(92), chr(92) || chr(92)), '%', chr(92) || '%'), '_', chr(92) || '_') || '%' end;
  -- a caller that reaches every conversation of the organization (the policies keep every candidate)
  whole boolean := app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all';
  ids uuid[];
  candidates uuid[];
  batch int;
  from_at timestamptz;
  from_id uuid;
  rows jsonb;
  last record;
  n int;
begin
  if page_size is null or page_size not between 1 and 100 then
    perform app_hidden.raise_error(400, 'bad_request', 'limit: between 1 and 100');
  end if;
  if pattern is null then
    ids := array(select cv.id from app_public.conversations cv
                  where cv.organization_id = org and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
                  order by cv.created_at desc, cv.id desc limit page_size + 1);
  else
    -- candidates as the owner finds them, kept when the caller may read them; a caller that
    -- reads every conversation keeps them all, others ask again past the last candidate
    ids := '{}';
    from_at := after_at;
    from_id := after_id;
    batch := case when whole then page_size + 1 else (page_size + 1) * 4 end;
    loop
      select coalesce(array_agg(x.id order by x.created_at desc, x.id desc), '{}'),
             (array_agg(x.created_at order by x.created_at, x.id))[1], (array_agg(x.id order by x.created_at, x.id))[1]
        into candidates, from_at, from_id
        from app_hidden.conversations_matching(pattern, from_at, from_id, batch) x;
      ids := ids || array(select cv.id from app_public.conversations cv
                           where cv.organization_id = org and cv.id = any(candidates)
                           order by cv.created_at desc, cv.id desc);
      exit when cardinality(ids) > page_size or cardinality(candidates) < batch;
      -- on past the last candidate, in larger steps
      batch := least(batch * 4, 2000);
    end loop;
    ids := ids[1:page_size + 1];
  end if;
  with page as (
    select cv, c
      from app_public.conversations cv
      join app_public.contacts c on c.organization_id = org and c.id = cv.contact_id
     where cv.organization_id = org and cv.id = any(ids))
  select coalesce(jsonb_agg(app_hidden.conversation_json(p.cv, p.c)
           || jsonb_build_object('last_message', (select app_hidden.conversation_message_json(m)
                                                    from app_public.conversation_messages m
                                                   where m.organization_id = org and m.conversation_id = (p.cv).id
                                                   order by m.created_at desc, m.id desc limit 1))
           order by (p.cv).created_at desc, (p.cv).id desc), '[]'),
         count(*)
    into rows, n
    from page p;
  if n > page_size then
    rows := rows - page_size;
    select (x->>'id')::uuid as id into last from jsonb_array_elements(rows) with ordinality e(x, i) where i = page_size;
    return jsonb_build_object('items', rows, 'next', (
      select jsonb_build_object('at', to_char(cv.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'id', cv.id)
        from app_public.conversations cv where cv.organization_id = org and cv.id = last.id));
  end if;
  return jsonb_build_object('items', rows, 'next', null);
end $$;

ALTER FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) IS 'conversations_list: the conversations in reach, newest opened first, page_size at a time after (after_at, after_id); q matches message bodies and the contact''s name, email, phone, never chat. Answers {items, next: {at, id}|null}.';

--
-- Name: conversations_reply(uuid, text, text[]); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) RETURNS jsonb
    LANGUAGE sql
    AS $$
  select app_hidden.conversation_reply_send((app_hidden.conversation_for_write(conversation_id)).id, body, sinks)
$$;

ALTER FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_reply(conversation_id uuid, body text, sinks text[]); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) IS 'conversations_reply: answers on the conversation''s own channel (rules 1, 3, 5, 6) and puts the AI on hold; answers {message, conversation, outgoing} (outgoing: for the caller''s transport, when not a sink).';

--
-- Name: conversations_resume(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_resume(conversation_id uuid) RETURNS jsonb
    LANGUAGE sql
    AS $$
  select app_hidden.conversation_set_held((app_hidden.conversation_for_write(conversation_id)).id, false)
$$;

ALTER FUNCTION app_public.conversations_resume(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_resume(conversation_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_resume(conversation_id uuid) IS 'conversations_resume: the AI answers the SMS or chat conversation again, starting with an unanswered last message (422 for email).';

--
-- Name: conversations_send_sms(uuid, text, uuid, text[]); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
begin
  select * into c from app_public.contacts x where x.organization_id = org and x.id = conversations_send_sms.contact_id;
  if not found or (app_hidden.current_role() = 'member' and not c.id = any(app_hidden.current_own_client_ids())) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  if location_id is not null then
    if not exists (select 1 from app_public.locations l where l.organization_id = org and l.id = conversations_send_sms.location_id) then
      perform app_hidden.raise_error(404, 'not_found', 'Location not found');
    end if;
    if not exists (select 1 from app_public.contact_locations cl
                    where cl.organization_id = org and cl.contact_id = c.id and cl.location_id = conversations_send_sms.location_id) then
      perform app_hidden.raise_error(409, 'contact_not_at_location', 'The contact is not linked to that location');
    end if;
  end if;
  return app_hidden.conversation_sms_send(c.id, body, location_id, sinks);
end $$;

ALTER FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) IS 'conversations_send_sms: texts a contact from its location''s number (else the default) in its thread on that number (rules 4-6) and puts the AI on hold; answers {message, conversation, outgoing}.';

--
-- Name: chat_sessions; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.chat_sessions (
    organization_id uuid NOT NULL,
    conversation_id uuid NOT NULL,
    widget_id uuid NOT NULL,
    token_hash text NOT NULL,
    client_address text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chat_sessions_client_address_check CHECK ((length(client_address) <= 100)),
    CONSTRAINT chat_sessions_token_hash_check CHECK ((token_hash ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE app_private.chat_sessions OWNER TO svc_owner;

--
-- Name: TABLE chat_sessions; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.chat_sessions IS 'The visitor''s side of a web chat conversation: its widget, the sha-256 of the visitor''s token, the client address.';

--
-- Name: chat_widgets; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.chat_widgets (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid,
    name text NOT NULL,
    allowed_origins text[] DEFAULT '{}'::text[] NOT NULL,
    greeting text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chat_widgets_allowed_origins_check CHECK (((cardinality(allowed_origins) <= 50) AND (array_position(allowed_origins, NULL::text) IS NULL) AND (array_to_string(allowed_origins, ' '::text) ~ '^(https?://[^ /]+( |$))*$'::text))),
    CONSTRAINT chat_widgets_greeting_check CHECK (((length(greeting) >= 1) AND (length(greeting) <= 1000))),
    CONSTRAINT chat_widgets_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE app_public.chat_widgets OWNER TO svc_owner;

--
-- Name: TABLE chat_widgets; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.chat_widgets IS 'A web chat widget of a location (NULL: of the whole organization); visitors chat through it without a key.';

--
-- Name: COLUMN chat_widgets.allowed_origins; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.chat_widgets.allowed_origins IS 'The sites (scheme://host[:port]) whose pages may chat through the widget (CORS).';

--
-- Name: chat_sessions chat_sessions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.chat_sessions
    ADD CONSTRAINT chat_sessions_pkey PRIMARY KEY (organization_id, conversation_id);

--
-- Name: chat_widgets chat_widgets_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.chat_widgets
    ADD CONSTRAINT chat_widgets_pkey PRIMARY KEY (organization_id, id);

--
-- Name: conversation_messages conversation_messages_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversation_messages
    ADD CONSTRAINT conversation_messages_pkey PRIMARY KEY (organization_id, id);

--
-- Name: conversations conversations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (organization_id, id);

--
-- Name: chat_sessions_by_client_address; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX chat_sessions_by_client_address ON app_private.chat_sessions USING btree (client_address, created_at) WHERE (client_address IS NOT NULL);

--
-- Name: chat_widgets_id_key; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX chat_widgets_id_key ON app_public.chat_widgets USING btree (id);

--
-- Name: conversation_messages_body_trgm; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX conversation_messages_body_trgm ON app_public.conversation_messages USING gin (body public.gin_trgm_ops) WHERE (channel <> 'chat'::text);

--
-- Name: conversation_messages_provider_id; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX conversation_messages_provider_id ON app_public.conversation_messages USING btree (organization_id, provider_message_id) WHERE (provider_message_id IS NOT NULL);

--
-- Name: conversation_messages_thread; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX conversation_messages_thread ON app_public.conversation_messages USING btree (organization_id, conversation_id, created_at, id);

--
-- Name: conversations_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX conversations_by_contact ON app_public.conversations USING btree (organization_id, contact_id);

--
-- Name: conversations_recent; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX conversations_recent ON app_public.conversations USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: conversations_sms_thread; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX conversations_sms_thread ON app_public.conversations USING btree (organization_id, contact_id, business_address) WHERE (channel = 'sms'::text);

--
-- Name: conversations _201_ai_interaction_ends; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _201_ai_interaction_ends AFTER UPDATE OF ai_held ON app_public.conversations FOR EACH ROW WHEN ((new.ai_held AND (NOT old.ai_held))) EXECUTE FUNCTION app_private.tg_conversations__ai_interaction_ends();

--
-- Name: conversation_messages _900_webhooks; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks AFTER INSERT ON app_public.conversation_messages FOR EACH ROW WHEN ((new.direction = 'inbound'::text)) EXECUTE FUNCTION app_private.tg_conversation_messages__webhooks();

--
-- Name: chat_sessions chat_sessions_organization_id_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.chat_sessions
    ADD CONSTRAINT chat_sessions_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app_public.conversations(organization_id, id) ON DELETE CASCADE;

--
-- Name: chat_sessions chat_sessions_organization_id_widget_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.chat_sessions
    ADD CONSTRAINT chat_sessions_organization_id_widget_id_fkey FOREIGN KEY (organization_id, widget_id) REFERENCES app_public.chat_widgets(organization_id, id) ON DELETE CASCADE;

--
-- Name: chat_widgets chat_widgets_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.chat_widgets
    ADD CONSTRAINT chat_widgets_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: chat_widgets chat_widgets_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.chat_widgets
    ADD CONSTRAINT chat_widgets_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: conversation_messages conversation_messages_organization_id_author_person_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversation_messages
    ADD CONSTRAINT conversation_messages_organization_id_author_person_id_fkey FOREIGN KEY (organization_id, author_person_id) REFERENCES app_public.people(organization_id, id);

--
-- Name: conversation_messages conversation_messages_organization_id_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversation_messages
    ADD CONSTRAINT conversation_messages_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app_public.conversations(organization_id, id) ON DELETE CASCADE;

--
-- Name: conversations conversations_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversations
    ADD CONSTRAINT conversations_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: conversations conversations_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversations
    ADD CONSTRAINT conversations_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: conversations conversations_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversations
    ADD CONSTRAINT conversations_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id);

--
-- Name: chat_sessions; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.chat_sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: chat_widgets; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.chat_widgets ENABLE ROW LEVEL SECURITY;

--
-- Name: conversation_messages; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.conversation_messages ENABLE ROW LEVEL SECURITY;

--
-- Name: conversations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.conversations ENABLE ROW LEVEL SECURITY;

--
-- Name: chat_widgets select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.chat_widgets FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ((location_id IS NULL) OR ( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: conversations select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.conversations FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND ((( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) AND (( SELECT app_hidden.current_records_level() AS current_records_level) = 'all'::text)) OR (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = conversations.organization_id) AND (c.id = conversations.contact_id)))))));

--
-- Name: conversation_messages select_with_conversation; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_conversation ON app_public.conversation_messages FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ((( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) AND (( SELECT app_hidden.current_records_level() AS current_records_level) = 'all'::text)) OR (EXISTS ( SELECT 1
   FROM app_public.conversations cv
  WHERE ((cv.organization_id = conversation_messages.organization_id) AND (cv.id = conversation_messages.conversation_id)))))));

--
-- Name: FUNCTION chat_limits(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_limits() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_limits() TO svc_request;

--
-- Name: FUNCTION chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) TO svc_request;

--
-- Name: FUNCTION chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) TO svc_request;

--
-- Name: FUNCTION chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) TO svc_request;

--
-- Name: FUNCTION chat_widget(widget_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_widget(widget_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_widget(widget_id uuid) TO svc_request;

--
-- Name: TABLE conversations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.conversations TO svc_request;
GRANT SELECT ON TABLE app_public.conversations TO svc_worker;
GRANT SELECT ON TABLE app_public.conversations TO svc_analyst;

--
-- Name: FUNCTION conversation_for_write(conversation_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_for_write(conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_for_write(conversation_id uuid) TO svc_request;

--
-- Name: FUNCTION conversation_json(cv app_public.conversations, c app_public.contacts); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) TO svc_worker;

--
-- Name: TABLE conversation_messages; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.conversation_messages TO svc_request;
GRANT SELECT ON TABLE app_public.conversation_messages TO svc_worker;
GRANT SELECT ON TABLE app_public.conversation_messages TO svc_analyst;

--
-- Name: FUNCTION conversation_message_json(m app_public.conversation_messages); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) TO svc_worker;

--
-- Name: FUNCTION conversation_message_record(message_id uuid, error text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) TO svc_request;

--
-- Name: FUNCTION conversation_reply_send(conversation_id uuid, body text, sinks text[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) TO svc_request;

--
-- Name: FUNCTION conversation_response_mode(cv app_public.conversations); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) TO svc_worker;

--
-- Name: FUNCTION conversation_set_held(conversation_id uuid, held boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) TO svc_request;

--
-- Name: FUNCTION conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) TO svc_request;

--
-- Name: FUNCTION conversation_write_reach(contact_id uuid, location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) TO svc_request;

--
-- Name: FUNCTION current_sms_enabled(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_sms_enabled() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_sms_enabled() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_sms_enabled() TO svc_worker;

--
-- Name: FUNCTION chat_inbound(cv app_public.conversations, body text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.chat_inbound(cv app_public.conversations, body text) FROM PUBLIC;

--
-- Name: FUNCTION chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean) FROM PUBLIC;

--
-- Name: FUNCTION conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_ai_due(cv app_public.conversations, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_ai_due(cv app_public.conversations, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]) FROM PUBLIC;

--
-- Name: FUNCTION conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text) FROM PUBLIC;

--
-- Name: FUNCTION conversation_hold_for_person(cv app_public.conversations); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_hold_for_person(cv app_public.conversations) FROM PUBLIC;

--
-- Name: FUNCTION conversation_locked_for_write(conversation_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_locked_for_write(conversation_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_send_answer(m app_public.conversation_messages); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_send_answer(m app_public.conversation_messages) FROM PUBLIC;

--
-- Name: FUNCTION conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_sms_refusal(c app_public.contacts, cv app_public.conversations); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_sms_refusal(c app_public.contacts, cv app_public.conversations) FROM PUBLIC;

--
-- Name: FUNCTION conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text) FROM PUBLIC;

--
-- Name: FUNCTION conversations_inbound_sms(to_number text, from_number text, body text, provider_id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text) FROM PUBLIC;

--
-- Name: FUNCTION sms_help_reply(org uuid, business_number text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sms_help_reply(org uuid, business_number text) FROM PUBLIC;

--
-- Name: FUNCTION sms_keyword(body text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sms_keyword(body text) FROM PUBLIC;

--
-- Name: FUNCTION sms_plain_opt_out(body text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sms_plain_opt_out(body text) FROM PUBLIC;

--
-- Name: FUNCTION tg_conversation_messages__webhooks(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_conversation_messages__webhooks() FROM PUBLIC;

--
-- Name: FUNCTION tg_conversations__ai_interaction_ends(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_conversations__ai_interaction_ends() FROM PUBLIC;

--
-- Name: FUNCTION conversations_get(conversation_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_get(conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_get(conversation_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_hold(conversation_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_hold(conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_hold(conversation_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_reply(conversation_id uuid, body text, sinks text[]); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) TO svc_request;

--
-- Name: FUNCTION conversations_resume(conversation_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_resume(conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_resume(conversation_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) TO svc_request;

--
-- Name: TABLE chat_widgets; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.chat_widgets TO svc_request;
GRANT SELECT ON TABLE app_public.chat_widgets TO svc_worker;
GRANT SELECT ON TABLE app_public.chat_widgets TO svc_analyst;
