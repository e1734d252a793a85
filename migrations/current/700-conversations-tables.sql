-- Conversations: the receptionist's inbox (spec: "Conversation, call, form"; issue 15).
--
--   conversations           one thread with one contact on one channel (email, sms, chat), at a
--                           location (NULL: the organization's, visible organization-wide only).
--                           An SMS thread is the contact's on one of the business's numbers
--                           (business_address): a second thread on the same number is never opened.
--                           ai_held: a person answers, the AI does not (response_mode human).
--   conversation_messages   what was said, in order: inbound from the contact, outbound from the
--                           AI, a person, or the service itself (keyword answers: STOP, HELP…).
--                           An outbound message that leaves by email or SMS is also an outgoing
--                           message (app_private.outgoing_messages) with the same id, so delivery
--                           events and outbox lines (meta.message_id) name the message itself.
--
-- Reach (reads, `scoped`): a conversation is visible at the credential's locations and only
-- while its contact is (the contacts policy applies inside, own-records members included);
-- its messages are visible with it. Writes go through the functions of 702-… (definer helpers
-- that check the same reach from the claims, plus the SMS rules of the spec).
set local role svc_owner;

create table if not exists app_public.conversations (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  contact_id uuid not null,
  location_id uuid,
  channel text not null check (channel in ('email', 'sms', 'chat')),
  business_address text check (length(business_address) <= 320),
  subject text check (length(subject) <= 998),
  ai_held boolean not null default false,
  held_at timestamptz,
  last_message_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  foreign key (organization_id, location_id) references app_public.locations,
  -- an email conversation has no AI to hold (spec: conversation rule 2)
  check (channel <> 'email' or not ai_held),
  check (channel <> 'sms' or business_address ~ '^\+[1-9][0-9]{6,14}$')
);
comment on table app_public.conversations is
  'A thread with one contact on one channel (email, sms, chat) at a location; ai_held: a person answers instead of the AI.';
comment on column app_public.conversations.business_address is
  'The business''s side of the thread: the SMS number it texts from, or the email address the contact wrote to.';
comment on column app_public.conversations.ai_held is 'True while a person answers (response_mode human); always false for email.';
-- one SMS thread per contact and number: an inbound text and an outbound one meet in it
create unique index if not exists conversations_sms_thread on app_public.conversations (organization_id, contact_id, business_address)
  where channel = 'sms';
-- conversations_list's order (newest first, keyset paging)
create index if not exists conversations_recent on app_public.conversations (organization_id, created_at desc, id desc);
create index if not exists conversations_by_contact on app_public.conversations (organization_id, contact_id);

create table if not exists app_public.conversation_messages (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  conversation_id uuid not null,
  channel text not null check (channel in ('email', 'sms', 'chat')),
  direction text not null check (direction in ('inbound', 'outbound')),
  author text not null check (author in ('contact', 'ai', 'person', 'system')),
  author_person_id uuid,
  body text not null check (length(body) between 1 and 20000),
  subject text check (length(subject) <= 998),
  status text not null check (status in ('received', 'queued', 'sent', 'failed')),
  error text,
  provider_message_id text check (length(provider_message_id) <= 998),
  -- the clock, not the transaction's start: an inbound message and the answer written in the
  -- same transaction keep their order
  created_at timestamptz not null default clock_timestamp(),
  primary key (organization_id, id),
  foreign key (organization_id, conversation_id) references app_public.conversations on delete cascade,
  foreign key (organization_id, author_person_id) references app_public.people,
  check ((direction = 'inbound') = (author = 'contact')),
  check ((direction = 'inbound') = (status = 'received')),
  check (author = 'person' or author_person_id is null)
);
comment on table app_public.conversation_messages is
  'The messages of a conversation. Outbound ones that leave by email or SMS share their id with the outgoing message '
  '(outbox meta.message_id); status follows its delivery.';
comment on column app_public.conversation_messages.channel is 'The conversation''s channel, copied so search can skip chat by index.';
comment on column app_public.conversation_messages.author is
  'contact (inbound), ai (the responder), person (a team member or an organization key through the API), system (keyword answers).';
comment on column app_public.conversation_messages.provider_message_id is
  'The provider''s id of an inbound message (the SMS provider''s, an email''s Message-ID), for replies that refer to it.';
create index if not exists conversation_messages_thread on app_public.conversation_messages (organization_id, conversation_id, created_at, id);
-- q of conversations_list: substrings of bodies by trigram, chat left out of the index as of the search
create index if not exists conversation_messages_body_trgm on app_public.conversation_messages
  using gin (body gin_trgm_ops) where channel <> 'chat';

alter table app_public.conversations enable row level security;
alter table app_public.conversation_messages enable row level security;

drop policy if exists select_in_reach on app_public.conversations;
-- A credential of the whole organization at the all-records level sees every contact (and the
-- foreign key says the contact is there): the contact's policy is asked only of the others, so
-- the inbox of an organization-wide key does not read every contact per query.
create policy select_in_reach on app_public.conversations for select
  using (organization_id = (select app_hidden.current_org_id())
         and ((select app_hidden.current_reaches_all_locations())
              or location_id = any((select app_hidden.current_location_ids())::uuid[]))
         and (((select app_hidden.current_reaches_all_locations()) and (select app_hidden.current_records_level()) = 'all')
              or exists (select 1 from app_public.contacts c
                          where c.organization_id = conversations.organization_id and c.id = conversations.contact_id)));

drop policy if exists select_with_conversation on app_public.conversation_messages;
create policy select_with_conversation on app_public.conversation_messages for select
  using (organization_id = (select app_hidden.current_org_id())
         and (((select app_hidden.current_reaches_all_locations()) and (select app_hidden.current_records_level()) = 'all')
              or exists (select 1 from app_public.conversations cv
                          where cv.organization_id = conversation_messages.organization_id
                            and cv.id = conversation_messages.conversation_id)));

grant select on app_public.conversations, app_public.conversation_messages to svc_request, svc_worker, svc_analyst;

-- A message's status follows its delivery: deliver_message marks the outgoing message sent or
-- failed, and the conversation's copy says the same.
create or replace function app_private.tg_outgoing_messages__conversation_status() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_public.conversation_messages m set status = new.status, error = new.error
   where m.organization_id = new.organization_id and m.id = new.id and m.direction = 'outbound'
     and (m.status, m.error) is distinct from (new.status, new.error);
  return null;
end $$;
revoke execute on function app_private.tg_outgoing_messages__conversation_status() from public;
drop trigger if exists _700_conversation_status on app_private.outgoing_messages;
create trigger _700_conversation_status after update of status, error on app_private.outgoing_messages
  for each row when (new.meta ? 'conversation_id')
  execute function app_private.tg_outgoing_messages__conversation_status();

--------------------------------------------------------------------------------
-- Shapes
--------------------------------------------------------------------------------
create or replace function app_hidden.conversation_response_mode(cv app_public.conversations) returns text
language sql immutable parallel safe as $$
  select case when cv.channel = 'email' or cv.ai_held then 'human' else 'ai' end
$$;
comment on function app_hidden.conversation_response_mode(app_public.conversations) is
  'Who answers the conversation: ai, or human (held, and always for email, which has no AI).';

create or replace function app_hidden.conversation_message_json(m app_public.conversation_messages) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('id', m.id, 'conversation_id', m.conversation_id, 'direction', m.direction, 'author', m.author,
    'author_person_id', m.author_person_id, 'body', m.body, 'subject', m.subject, 'status', m.status, 'error', m.error,
    'created_at', m.created_at)
$$;
comment on function app_hidden.conversation_message_json(app_public.conversation_messages) is 'One message as the API shows it.';

create or replace function app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('id', cv.id, 'channel', cv.channel, 'contact', app_hidden.contact_card(c),
    'location_id', cv.location_id, 'business_address', cv.business_address, 'subject', cv.subject,
    'response_mode', app_hidden.conversation_response_mode(cv), 'ai_held', cv.ai_held, 'held_at', cv.held_at,
    'last_message_at', cv.last_message_at, 'created_at', cv.created_at, 'updated_at', cv.updated_at)
$$;
comment on function app_hidden.conversation_json(app_public.conversations, app_public.contacts) is
  'A conversation as the API shows it (without messages), its contact as a card.';

grant execute on function app_hidden.conversation_response_mode(app_public.conversations),
  app_hidden.conversation_message_json(app_public.conversation_messages),
  app_hidden.conversation_json(app_public.conversations, app_public.contacts) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Reads
--------------------------------------------------------------------------------
-- The newest `n` conversations (not chat) of the current organization after a cursor whose
-- messages or contact contain a LIKE pattern: conversations_list's candidates for q. It runs as
-- the owner because ILIKE may not use an index under row security (it is not leakproof); it
-- answers only ids, which conversations_list reads under the caller's policies. Two ways, the
-- cheaper first:
--   1. the newest 300 conversations, each asked whether a message of it matches (by the thread
--      index): enough when the pattern is common, whatever its trigrams cost;
--   2. otherwise every match by id (cheap when matches are few): the bodies' trigram index,
--      and the conversations of the contacts contacts_search's own helper finds; newest first.
drop function if exists app_hidden.conversation_ids_matching(text);
drop function if exists app_hidden.conversations_matching(text, timestamptz, uuid, int);
create or replace function app_hidden.conversations_matching(pattern text, after_at timestamptz, after_id uuid, n int)
returns table (id uuid, created_at timestamptz)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_hidden.conversations_matching(text, timestamptz, uuid, int) is
  'Candidates of conversations_list q: the newest n conversations (not chat) of the current organization after the cursor '
  'whose messages or contact contain the pattern (ids only; the caller''s policies filter them).';
grant execute on function app_hidden.conversations_matching(text, timestamptz, uuid, int) to svc_request;

-- conversations_list: newest first by when the conversation opened (created_at, id): a key that
-- never changes, so paging with the cursor of the last row is complete and without duplicates
-- while conversations open and messages arrive. `q` (a substring, case-insensitive) matches a
-- message body or the contact's name, email or phone, and leaves chat conversations out.
drop function if exists app_public.conversations_list(text, int, timestamptz, uuid);
create or replace function app_public.conversations_list(q text, page_size int, after_at timestamptz, after_id uuid)
returns jsonb
language plpgsql stable as $$
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
comment on function app_public.conversations_list(text, int, timestamptz, uuid) is
  'conversations_list: the conversations in reach, newest opened first, page_size at a time after (after_at, after_id); '
  'q matches message bodies and the contact''s name, email, phone, never chat. Answers {items, next: {at, id}|null}.';
grant execute on function app_public.conversations_list(text, int, timestamptz, uuid) to svc_request;

create or replace function app_public.conversations_get(conversation_id uuid) returns jsonb
language plpgsql stable as $$
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
comment on function app_public.conversations_get(uuid) is
  'conversations_get: one conversation in reach with its messages, oldest first, and response_mode; 404 otherwise.';
grant execute on function app_public.conversations_get(uuid) to svc_request;

reset role;
