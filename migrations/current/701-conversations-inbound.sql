-- Messages from outside: an SMS or an email arrives (today from `svc admin inbound sms|email`;
-- the Delivery issue's signed webhooks call the same functions). Owner-only: the organization is
-- found by the number or address written to, never by a credential.
--
-- SMS: the number is a location's sms_number (that location) or an organization's default
-- number; the contact is matched by phone or created; the contact's thread on that number is
-- continued or opened. Carrier keywords, the whole message alone (case and trailing punctuation
-- ignored): STOP (STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT) records an opt-out, revokes consent
-- and stops SMS sequences (the opt-out trigger of the sequences area); START (UNSTOP) ends the
-- opt-out and records consent; HELP (INFO) asks for help. Each is answered once by the service
-- (author system), the STOP confirmation included, as carriers expect. Any other message is
-- answered by the AI while the thread's response_mode is ai: its job (conversation_ai_reply,
-- 703-…) is queued in this transaction, keyed by the message.
set local role svc_owner;

-- A provider's id is recorded once per organization: a webhook delivered twice is one message.
create unique index if not exists conversation_messages_provider_id on app_public.conversation_messages (organization_id, provider_message_id)
  where provider_message_id is not null;

-- An outbound message of a conversation: the message row and, for email and SMS, the outgoing
-- message with the same id (meta conversation_id, message_id). `deliver`:
--   job     queued with its deliver_message job (this transaction's commit sends it)
--   sink    stored in the local sink's outbox and marked sent now (the API's sends with the sink)
--   caller  queued without a job: the caller hands it to its transport and records the outcome
-- A chat message has no transport: it is stored as sent (the web chat reads it from the thread).
create or replace function app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid,
  body text, sender text, recipient text, subject text, headers jsonb, deliver text) returns app_public.conversation_messages
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_private.conversation_append_outbound(app_public.conversations, text, uuid, text, text, text, text, jsonb, text) is
  'An outbound message of a conversation and its outgoing message (same id; meta conversation_id, message_id), delivered by '
  'job, by the local sink now, or by the caller; chat messages are stored as sent.';
revoke execute on function app_private.conversation_append_outbound(app_public.conversations, text, uuid, text, text, text, text, jsonb, text)
  from public;

-- The answer carriers expect to a keyword, or NULL for an ordinary message.
create or replace function app_private.sms_keyword(body text) returns text
language sql immutable as $$
  select case upper(regexp_replace(btrim(body), '[[:space:][:punct:]]+$', ''))
    when 'STOP' then 'stop' when 'STOPALL' then 'stop' when 'UNSUBSCRIBE' then 'stop' when 'CANCEL' then 'stop'
    when 'END' then 'stop' when 'QUIT' then 'stop'
    when 'START' then 'start' when 'UNSTOP' then 'start'
    when 'HELP' then 'help' when 'INFO' then 'help'
  end
$$;
revoke execute on function app_private.sms_keyword(text) from public;

-- The contact an inbound message comes from, matched by phone or email, or created (at the
-- location written to, when known); linked to that location.
drop function if exists app_private.inbound_contact(uuid, uuid, text, text);
create or replace function app_private.inbound_contact(org uuid, location uuid, phone text, email text)
returns table (contact_id uuid, created boolean)
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  c app_public.contacts;
  made boolean := false;
begin
  if phone is not null then
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = inbound_contact.phone;
  else
    select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(inbound_contact.email);
  end if;
  if c.id is null then
    insert into app_public.contacts (organization_id, phone, email) values (org, inbound_contact.phone, inbound_contact.email)
    on conflict do nothing
    returning * into c;
    made := c.id is not null;
    if not made then
      -- created at the same moment by another message from the same sender
      select * into c from app_public.contacts x
       where x.organization_id = org and (x.phone = inbound_contact.phone or x.email_key = lower(inbound_contact.email));
    end if;
  else
    update app_public.contacts x set last_seen_at = greatest(x.last_seen_at, now())
     where x.organization_id = org and x.id = c.id;
  end if;
  if location is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, location)
    on conflict do nothing;
  end if;
  return query select c.id, made;
end $$;
revoke execute on function app_private.inbound_contact(uuid, uuid, text, text) from public;

-- A new conversation's location when the address written to names none: the contact's only location, if it has one.
create or replace function app_private.contact_only_location(org uuid, contact_id uuid) returns uuid
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select case when count(*) = 1 then min(cl.location_id::text)::uuid end
    from app_public.contact_locations cl where cl.organization_id = org and cl.contact_id = contact_only_location.contact_id
$$;
revoke execute on function app_private.contact_only_location(uuid, uuid) from public;

-- A contact's answer to a sequence's message is the enrollment's `replied` event (the exit
-- `replied` and analytics read it): the message answered is the one an email's In-Reply-To
-- names, or for an SMS the last sequence text from that number to that phone (30 days back).
-- Recorded once per message answered.
create or replace function app_private.conversation_sequence_reply(org uuid, channel text, contact_address text,
  business_address text, replied_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_private.conversation_sequence_reply(uuid, text, text, text, uuid) is
  'Records an inbound message as the replied event of the sequence message it answers (In-Reply-To, or the last sequence '
  'SMS from that number to that phone), once per message.';
revoke execute on function app_private.conversation_sequence_reply(uuid, text, text, text, uuid) from public;

drop function if exists app_private.conversations_inbound_sms(text, text, text, text);
create or replace function app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
    answer := org_name || ': reply STOP to unsubscribe, START to resubscribe. Msg & data rates may apply. '
      || 'Reply with your question and we will get back to you.';
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
end $$;
comment on function app_private.conversations_inbound_sms(text, text, text, text) is
  'An SMS arrives at one of the organization''s numbers: the contact matched by phone or created, the thread continued or '
  'opened, STOP/START/HELP recorded and answered, anything else left to the AI while it answers. Idempotent on provider_id.';
revoke execute on function app_private.conversations_inbound_sms(text, text, text, text) from public;

-- An email arrives. The organization and thread come from In-Reply-To when it names a message
-- the service sent (<message id@domain>), else from the domain written to (the organization's
-- sending domain); the contact is matched by email or created. The thread: the one replied to,
-- else the contact's latest email thread to that address with the same subject (Re:/Fwd:
-- aside), else a new one. Email has no AI: nothing answers it but a person.
drop function if exists app_private.conversations_inbound_email(text, text, text, text, text, text);
create or replace function app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text,
  in_reply_to text, provider_id text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
end $$;
comment on function app_private.conversations_inbound_email(text, text, text, text, text, text) is
  'An email arrives: organization and thread by In-Reply-To or the domain written to, contact by email or created, the '
  'thread continued (replied to, or same address and subject) or opened. No AI answers email.';
revoke execute on function app_private.conversations_inbound_email(text, text, text, text, text, text) from public;

reset role;
