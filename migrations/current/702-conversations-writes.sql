-- A person's writes in the inbox (spec: "Conversation and SMS rules" 1-6): conversations_reply,
-- conversations_send_sms, conversations_hold, conversations_resume.
--
-- Each app_public function runs as the caller, so the reach policies answer 404 for what the
-- credential cannot see; a MEMBER (sms_setting) also only writes to its own clients (404
-- otherwise; its SMS setting off is authenticate's 403). The write itself is an app_hidden
-- definer helper (it writes app_private's outgoing messages and the outbox), which checks the
-- same reach from the claims again before it writes anything.
--
-- Sending: the message goes out on the conversation's own channel (rule 1), through the
-- delivery transports: with the local sink it is stored and marked sent in this transaction;
-- with another transport the operation hands it over itself before answering and records the
-- outcome (src/conversations/send.ts). It is never queued for a retry: after a 5xx the message
-- may have gone. A person's reply or text puts the AI on hold (response_mode human).
set local role svc_owner;

-- Whether the credential may write to a conversation of this contact at this location: in
-- reach as the policies would say, and for a MEMBER its own client.
create or replace function app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) returns boolean
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select app_hidden.current_org_id() is not null
     and (app_hidden.current_reaches_all_locations() or location_id = any(app_hidden.current_location_ids()))
     and (app_hidden.current_reaches_all_locations()
          or exists (select 1 from app_public.contact_locations cl
                      where cl.organization_id = app_hidden.current_org_id() and cl.contact_id = conversation_write_reach.contact_id
                        and cl.location_id = any(app_hidden.current_location_ids())))
     and ((app_hidden.current_records_level() = 'all' and app_hidden.current_role() <> 'member')
          or conversation_write_reach.contact_id = any(app_hidden.current_own_client_ids()))
$$;
comment on function app_hidden.conversation_write_reach(uuid, uuid) is
  'Whether the current credential may write to a conversation of the contact at the location (NULL: the organization''s): '
  'in reach, and for a MEMBER (or an own-records one) the contact is its own client.';
grant execute on function app_hidden.conversation_write_reach(uuid, uuid) to svc_request;

-- 409 sms_not_permitted unless the number may get this text: never to an opted-out number;
-- a new text needs the contact's consent; an answer in a thread the contact wrote in is
-- permitted by its own message (rule 6; the AI's answers follow the same rule).
create or replace function app_private.conversation_sms_refusal(c app_public.contacts, cv app_public.conversations) returns text
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
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
revoke execute on function app_private.conversation_sms_refusal(app_public.contacts, app_public.conversations) from public;

-- What a send answers: the message, the conversation after it, and for a caller-delivered
-- message the outgoing message to hand to the transport.
-- volatile: a stable function would read the snapshot of its caller's statement, from before the message was written
create or replace function app_private.conversation_send_answer(m app_public.conversation_messages) returns jsonb
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
revoke execute on function app_private.conversation_send_answer(app_public.conversation_messages) from public;

create or replace function app_private.conversation_hold_for_person(cv app_public.conversations) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_public.conversations x set ai_held = true, held_at = coalesce(x.held_at, now()), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id and x.channel <> 'email' and not x.ai_held
$$;
revoke execute on function app_private.conversation_hold_for_person(app_public.conversations) from public;

-- The conversation a definer helper is about to write to, locked: 404 unless the current
-- credential may write to it (app_hidden.conversation_write_reach).
create or replace function app_private.conversation_locked_for_write(conversation_id uuid) returns app_public.conversations
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
revoke execute on function app_private.conversation_locked_for_write(uuid) from public;

--------------------------------------------------------------------------------
-- conversations_reply
--------------------------------------------------------------------------------
create or replace function app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
  if cv.channel = 'email' then
    -- rule 3: an email goes out as a person
    select * into person from app_public.people p where p.organization_id = org and p.id = app_hidden.current_user_id() and p.active;
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
comment on function app_hidden.conversation_reply_send(uuid, text, text[]) is
  'conversations_reply''s write: the rules of the conversation''s channel (email as a person; SMS consent and opt-out), the '
  'message stored and, for channels in sinks, delivered to the local sink; the AI put on hold.';
grant execute on function app_hidden.conversation_reply_send(uuid, text, text[]) to svc_request;

-- The conversation a person may write to, or 404: visible to the credential (the policies), and
-- for a MEMBER its own client's.
create or replace function app_hidden.conversation_for_write(conversation_id uuid) returns app_public.conversations
language plpgsql stable as $$
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
comment on function app_hidden.conversation_for_write(uuid) is
  'The conversation by id as the caller sees it (policies) and may write to it (a MEMBER: own clients), else 404.';
grant execute on function app_hidden.conversation_for_write(uuid) to svc_request;

create or replace function app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) returns jsonb
language sql volatile as $$
  select app_hidden.conversation_reply_send((app_hidden.conversation_for_write(conversation_id)).id, body, sinks)
$$;
comment on function app_public.conversations_reply(uuid, text, text[]) is
  'conversations_reply: answers on the conversation''s own channel (rules 1, 3, 5, 6) and puts the AI on hold; answers '
  '{message, conversation, outgoing} (outgoing: for the caller''s transport, when not a sink).';
grant execute on function app_public.conversations_reply(uuid, text, text[]) to svc_request;

--------------------------------------------------------------------------------
-- conversations_send_sms
--------------------------------------------------------------------------------
create or replace function app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_hidden.conversation_sms_send(uuid, text, uuid, text[]) is
  'conversations_send_sms''s write: the number (rule 4), the thread on it (another location''s: 422, a MEMBER 404), consent '
  '(rule 6); the text stored in the contact''s thread on that number and, with the sink, delivered.';
grant execute on function app_hidden.conversation_sms_send(uuid, text, uuid, text[]) to svc_request;

create or replace function app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) returns jsonb
language plpgsql volatile as $$
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
comment on function app_public.conversations_send_sms(uuid, text, uuid, text[]) is
  'conversations_send_sms: texts a contact from its location''s number (else the default) in its thread on that number '
  '(rules 4-6) and puts the AI on hold; answers {message, conversation, outgoing}.';
grant execute on function app_public.conversations_send_sms(uuid, text, uuid, text[]) to svc_request;

--------------------------------------------------------------------------------
-- conversations_hold, conversations_resume
--------------------------------------------------------------------------------
-- Resuming hands the AI the contact's last message when nothing answered it yet: its job is
-- queued like an inbound message's (job key per message, so never twice at once).
create or replace function app_hidden.conversation_set_held(conversation_id uuid, held boolean) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_hidden.conversation_set_held(uuid, boolean) is
  'conversations_hold/resume''s write: 422 channel_not_supported for email; resuming queues the AI''s answer to an '
  'unanswered last message.';
grant execute on function app_hidden.conversation_set_held(uuid, boolean) to svc_request;

create or replace function app_public.conversations_hold(conversation_id uuid) returns jsonb
language sql volatile as $$
  select app_hidden.conversation_set_held((app_hidden.conversation_for_write(conversation_id)).id, true)
$$;
comment on function app_public.conversations_hold(uuid) is
  'conversations_hold: the AI stops answering the SMS or chat conversation until resumed (422 for email).';
grant execute on function app_public.conversations_hold(uuid) to svc_request;

create or replace function app_public.conversations_resume(conversation_id uuid) returns jsonb
language sql volatile as $$
  select app_hidden.conversation_set_held((app_hidden.conversation_for_write(conversation_id)).id, false)
$$;
comment on function app_public.conversations_resume(uuid) is
  'conversations_resume: the AI answers the SMS or chat conversation again, starting with an unanswered last message (422 for email).';
grant execute on function app_public.conversations_resume(uuid) to svc_request;

-- What the transport answered for a message the operation handed over itself.
create or replace function app_hidden.conversation_message_record(message_id uuid, error text) returns text
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.outgoing_messages m
     set status = case when conversation_message_record.error is null then 'sent' else 'failed' end,
         sent_at = case when conversation_message_record.error is null then now() end,
         error = left(conversation_message_record.error, 1000)
   where m.organization_id = app_hidden.current_org_id() and m.id = conversation_message_record.message_id
     and m.status = 'queued' and m.meta ? 'conversation_id'
  returning m.status
$$;
comment on function app_hidden.conversation_message_record(uuid, text) is
  'Records what the transport answered for a conversation message of the current organization the API sent itself.';
grant execute on function app_hidden.conversation_message_record(uuid, text) to svc_request;

reset role;
