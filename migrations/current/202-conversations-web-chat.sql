-- Web chat from the organization's sites (src/conversations/chat.ts; docs/conversations.md,
-- "Web chat"): a visitor starts a chat conversation through a chat widget and posts messages to
-- it; the AI receptionist answers (conversation_ai_reply, queued with each message, job key
-- conversation_ai:<message id>) until a person takes over; the visitor reads the thread back.
--
--   chat_widgets               a widget of one location (or of the whole organization): its id is
--                              public (the site's page carries it), allowed_origins its sites (CORS)
--   app_private.chat_sessions  one per chat conversation the widget opened: the hash (sha-256) of
--                              the visitor's token, which the visitor shows to post and to read;
--                              the client address, for the rate of new chats per address
--
-- No credential: the public functions below are security definer and trust only the widget id,
-- the conversation id and the token's hash.
set local role svc_owner;

create table if not exists app_public.chat_widgets (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  location_id uuid,
  name text not null check (length(name) between 1 and 200),
  allowed_origins text[] not null default '{}'
    check (cardinality(allowed_origins) <= 50 and array_position(allowed_origins, null) is null
           and array_to_string(allowed_origins, ' ') ~ '^(https?://[^ /]+( |$))*$'),
  greeting text check (length(greeting) between 1 and 1000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.chat_widgets is
  'A web chat widget of a location (NULL: of the whole organization); visitors chat through it without a key.';
comment on column app_public.chat_widgets.allowed_origins is 'The sites (scheme://host[:port]) whose pages may chat through the widget (CORS).';
-- the public endpoint finds a widget by its id alone
create index if not exists chat_widgets_by_id on app_public.chat_widgets (id);

alter table app_public.chat_widgets enable row level security;
drop policy if exists select_in_reach on app_public.chat_widgets;
create policy select_in_reach on app_public.chat_widgets for select
  using (organization_id = (select app_hidden.current_org_id())
         and (location_id is null or (select app_hidden.current_reaches_all_locations())
              or location_id = any((select app_hidden.current_location_ids())::uuid[])));
grant select on app_public.chat_widgets to svc_request, svc_worker, svc_analyst;

create table if not exists app_private.chat_sessions (
  organization_id uuid not null,
  conversation_id uuid not null,
  widget_id uuid not null,
  token_hash text not null check (token_hash ~ '^[0-9a-f]{64}$'),
  client_address text check (length(client_address) <= 100),
  created_at timestamptz not null default now(),
  primary key (organization_id, conversation_id),
  foreign key (organization_id, conversation_id) references app_public.conversations on delete cascade,
  foreign key (organization_id, widget_id) references app_public.chat_widgets on delete cascade
);
comment on table app_private.chat_sessions is
  'The visitor''s side of a web chat conversation: its widget, the sha-256 of the visitor''s token, the client address.';
create index if not exists chat_sessions_by_address on app_private.chat_sessions (organization_id, client_address, created_at)
  where client_address is not null;
alter table app_private.chat_sessions enable row level security;

create or replace function app_hidden.chat_limits() returns jsonb
language sql immutable parallel safe as $$
  select jsonb_build_object('chats_per_address', 5, 'chats_window_minutes', 10, 'messages_per_minute', 10,
    'message_max_length', 2000, 'thread_max_messages', 200)
$$;
comment on function app_hidden.chat_limits() is
  'Web chat limits: new chats per client address in a window, visitor messages per conversation per minute, lengths.';
grant execute on function app_hidden.chat_limits() to svc_request;

-- What a page needs of a widget: organization (never shown), allowed origins, greeting. NULL when none.
create or replace function app_hidden.chat_widget(widget_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', w.id, 'organization_id', w.organization_id, 'allowed_origins', to_jsonb(w.allowed_origins),
    'greeting', w.greeting, 'name', w.name)
    from app_public.chat_widgets w where w.id = chat_widget.widget_id
$$;
revoke execute on function app_hidden.chat_widget(uuid) from public;
grant execute on function app_hidden.chat_widget(uuid) to svc_request;

-- A visitor's message into a conversation (locked by the caller): checked (400, in the caller's
-- transaction: nothing written), stored, and the AI's answer queued when the AI answers the thread.
create or replace function app_private.chat_inbound(cv app_public.conversations, body text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
revoke execute on function app_private.chat_inbound(app_public.conversations, text) from public;

-- A visitor starts a chat: visitor {name?, email?, phone?} (checked by src/conversations/chat.ts;
-- phone in E.164), the first message, the hash of the token the visitor got. The contact is
-- matched by phone, else email, or created (with neither: a contact with no address, named
-- when a name is given), linked to the widget's location. 429 rate_limited after
-- chats_per_address new chats from one client address in chats_window_minutes.
create or replace function app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
    -- one count per (organization, address) at a time: concurrent starts cannot all pass
    perform pg_advisory_xact_lock(hashtextextended(w.organization_id::text || '|chat|' || client_address, 0));
    if (select count(*) from app_private.chat_sessions s
         where s.organization_id = w.organization_id and s.client_address = chat_start.client_address
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
end $$;
comment on function app_hidden.chat_start(uuid, text, jsonb, text, text) is
  'A web chat visitor starts a conversation through a widget: contact matched or created, the conversation, the visitor''s '
  'token hash, the first message and the AI''s answer queued. 404 unknown widget, 429 too many chats from the address.';
revoke execute on function app_hidden.chat_start(uuid, text, jsonb, text, text) from public;
grant execute on function app_hidden.chat_start(uuid, text, jsonb, text, text) to svc_request;

-- The conversation a visitor's token opens, locked when asked; 404 for anything else (another
-- widget's conversation, a wrong token, no such conversation: the same answer).
create or replace function app_private.chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean)
returns app_public.conversations
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
revoke execute on function app_private.chat_session_conversation(uuid, uuid, text, boolean) from public;

-- A visitor's next message. 429 rate_limited past messages_per_minute in the conversation.
create or replace function app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_hidden.chat_post(uuid, uuid, text, text) is
  'A web chat visitor''s message into its conversation (the token''s hash opens it), the AI''s answer queued while it answers.';
revoke execute on function app_hidden.chat_post(uuid, uuid, text, text) from public;
grant execute on function app_hidden.chat_post(uuid, uuid, text, text) to svc_request;

-- The thread as the visitor sees it: messages oldest first, after the message `after` when given
-- (a message of the thread; an unknown one is 400), at most thread_max_messages (the newest).
-- Who wrote: visitor, assistant (the AI), staff (a person), system. No people's ids, no statuses.
create or replace function app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_hidden.chat_thread(uuid, uuid, text, uuid) is
  'A web chat thread as its visitor reads it (the token''s hash opens it): messages oldest first, after a message when given.';
revoke execute on function app_hidden.chat_thread(uuid, uuid, text, uuid) from public;
grant execute on function app_hidden.chat_thread(uuid, uuid, text, uuid) to svc_request;

reset role;
