-- Delivery, SMS: what a Twilio-compatible provider tells us back (src/delivery/twilio.ts,
-- src/delivery/webhooks.ts). The provider's message id (SID) is kept on the outgoing message;
-- each status callback is recorded once per (SID, status) and moves the message's delivery
-- status, and a sequence text's `delivered`/`bounced` enrollment event. Inbound SMS goes through
-- the conversations area's own function (701-…), so a webhook and `svc admin inbound sms` take
-- the same path. The carrier keyword list and the plain-language opt-out live here too, in
-- app_private.sms_keyword, which that function reads.
set local role svc_owner;

alter table app_private.outgoing_messages add column if not exists provider_id text;
alter table app_private.outgoing_messages add column if not exists delivery_status text;
comment on column app_private.outgoing_messages.provider_id is
  'The provider''s id of the message once it accepted it (Twilio''s MessageSid): status callbacks name it.';
comment on column app_private.outgoing_messages.delivery_status is
  'The provider''s last reported status (queued, sent, delivered, undelivered, failed; bounced, complained for email).';
create unique index if not exists outgoing_messages_provider_id on app_private.outgoing_messages (provider_id)
  where provider_id is not null;

-- What providers reported, once each: the key is the provider's (Twilio: SID and status, since
-- every status of a message is a callback of its own), so a redelivered webhook records nothing.
create table if not exists app_private.delivery_events (
  id bigint generated always as identity primary key,
  organization_id uuid not null references app_public.organizations on delete cascade,
  message_id uuid not null,
  event_key text not null unique check (length(event_key) between 1 and 400),
  type text not null,
  detail jsonb not null default '{}',
  created_at timestamptz not null default now(),
  foreign key (organization_id, message_id) references app_private.outgoing_messages on delete cascade
);
comment on table app_private.delivery_events is
  'Delivery reports from providers (status callbacks, bounces, complaints), each recorded once by its provider key.';
alter table app_private.delivery_events drop constraint if exists delivery_events_type_check;
alter table app_private.delivery_events add constraint delivery_events_type_check
  check (type in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied'));
alter table app_private.delivery_events enable row level security;
create index if not exists delivery_events_by_message on app_private.delivery_events (organization_id, message_id, id);

-- Since April 2025 US rules count an opt-out "by any reasonable method". Detected
-- conservatively: the WHOLE message, once lower-cased with apostrophes dropped and punctuation
-- made spaces, must be one of these requests, with an optional "please" before and
-- "please/thanks" after. Anything more ("stop texting me after 8pm", "don't stop texting me",
-- "can you stop by") is an ordinary message for a person or the AI to read: a missed opt-out
-- there is answered by a human, a false one would silence a customer who asked for nothing.
-- test/delivery/opt-out.test.ts lists the phrasings accepted and the near-misses refused.
create or replace function app_private.sms_plain_opt_out(body text) returns boolean
language sql immutable as $$
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
$$;
comment on function app_private.sms_plain_opt_out(text) is
  'Whether a whole SMS is a plain-language opt-out request ("please stop texting me", "unsubscribe me", "don''t text me '
  'again"); conservative: a longer or conditional message is not one.';
revoke execute on function app_private.sms_plain_opt_out(text) from public;

-- The whole message as a carrier keyword: STOP and the CTIA list (STOPALL, UNSUBSCRIBE, CANCEL,
-- END, QUIT, REVOKE, OPTOUT), START/UNSTOP, HELP/INFO; case and trailing punctuation ignored.
-- Otherwise a plain-language opt-out (app_private.sms_plain_opt_out) is 'stop' too.
create or replace function app_private.sms_keyword(body text) returns text
language sql immutable as $$
  select case upper(regexp_replace(btrim(body), '[[:space:][:punct:]]+$', ''))
    when 'STOP' then 'stop' when 'STOPALL' then 'stop' when 'UNSUBSCRIBE' then 'stop' when 'CANCEL' then 'stop'
    when 'END' then 'stop' when 'QUIT' then 'stop' when 'REVOKE' then 'stop' when 'OPTOUT' then 'stop'
    when 'START' then 'start' when 'UNSTOP' then 'start'
    when 'HELP' then 'help' when 'INFO' then 'help'
    else case when app_private.sms_plain_opt_out(body) then 'stop' end
  end
$$;
revoke execute on function app_private.sms_keyword(text) from public;

-- The provider's id of a message it accepted, stored by deliver_message in its transaction.
-- (Only the worker calls it, as owner; kept a function so the write is in one place.)
create or replace function app_private.delivery_set_provider_id(org uuid, message_id uuid, provider_id text) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.outgoing_messages m set provider_id = delivery_set_provider_id.provider_id
   where m.organization_id = org and m.id = message_id
$$;
revoke execute on function app_private.delivery_set_provider_id(uuid, uuid, text) from public;

-- The same, for a message the API sent itself (conversations_send_sms, _reply): the request's
-- organization's message only.
create or replace function app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.outgoing_messages m set provider_id = delivery_note_provider_id.provider_id
   where m.organization_id = app_hidden.current_org_id() and m.id = message_id
$$;
revoke execute on function app_hidden.delivery_note_provider_id(uuid, text) from public;
grant execute on function app_hidden.delivery_note_provider_id(uuid, text) to svc_request;

-- What a provider reported about one message it sent, recorded once per event_key (a duplicate
-- answers duplicate true and changes nothing): the message's delivery_status (a late 'sent'
-- does not undo a later status), and for a sequence's message the enrollment's `delivered` or
-- `bounced` event (reason the provider's), in the order reports arrive. For email, a hard
-- bounce (detail.bounce = hard) ends the enrollment as failed and suppresses the address, and
-- a complaint suppresses it (the suppression's trigger cancels the contact's email sequences);
-- the suppression is the contact's that carries the address, when one does. An auto-reply
-- (auto_replied) is only recorded: it is not a reply.
create or replace function app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text,
  detail jsonb) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  ev_id bigint;
  enrollment uuid := case when om.meta ? 'enrollment_id' then (om.meta->>'enrollment_id')::uuid end;
  enrollment_event text := case type when 'delivered' then 'delivered' when 'undelivered' then 'bounced'
                                     when 'failed' then 'bounced' when 'bounced' then 'bounced' end;
  hard boolean := om.channel = 'email' and (type = 'complained' or (type = 'bounced' and detail->>'bounce' = 'hard'));
  holder uuid;
begin
  if type is null or type not in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied') then
    perform app_hidden.raise_error(400, 'bad_request', 'Unknown delivery event');
  end if;
  insert into app_private.delivery_events (organization_id, message_id, event_key, type, detail)
  values (om.organization_id, om.id, delivery_message_event.event_key, delivery_message_event.type,
          coalesce(delivery_message_event.detail, '{}'))
  on conflict on constraint delivery_events_event_key_key do nothing
  returning id into ev_id;
  if ev_id is null then
    return jsonb_build_object('known', true, 'recorded', false, 'duplicate', true, 'message_id', om.id);
  end if;
  if type <> 'auto_replied'
     and not (type in ('queued', 'sent') and om.delivery_status in ('delivered', 'undelivered', 'failed', 'bounced', 'complained')) then
    update app_private.outgoing_messages m set delivery_status = delivery_message_event.type
     where m.organization_id = om.organization_id and m.id = om.id;
  end if;
  if enrollment_event is not null and enrollment is not null then
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select om.organization_id, e.id, enrollment_event, om.meta->>'step_key', om.id,
           case when enrollment_event = 'bounced'
                then left(concat_ws(': ', detail->>'bounce', coalesce(detail->>'reason', type)), 500) end
      from app_public.enrollments e
     where e.organization_id = om.organization_id and e.id = enrollment;
  end if;
  if hard then
    if type = 'bounced' and enrollment is not null then
      perform app_private.end_enrollments(om.organization_id, array[enrollment], 'failed', 'hard_bounce');
    end if;
    select c.id into holder from app_public.contacts c
     where c.organization_id = om.organization_id and c.email_key = lower(om.recipient) order by c.created_at, c.id limit 1;
    if holder is not null then
      insert into app_public.email_suppressions (organization_id, email, contact_id, source)
      values (om.organization_id, lower(om.recipient), holder, case when type = 'complained' then 'complaint' else 'bounce' end)
      on conflict do nothing;
    end if;
  end if;
  return jsonb_build_object('known', true, 'recorded', true, 'duplicate', false, 'message_id', om.id,
    'organization_id', om.organization_id, 'type', type, 'suppressed', hard and holder is not null);
end $$;
comment on function app_private.delivery_message_event(app_private.outgoing_messages, text, text, jsonb) is
  'A provider''s report about one message, once per event key: delivery_status, the enrollment''s delivered/bounced event, '
  'and for a hard bounce or complaint the address suppressed (a hard bounce also fails the enrollment).';
revoke execute on function app_private.delivery_message_event(app_private.outgoing_messages, text, text, jsonb) from public;

-- A report naming the message by the provider's id (Twilio's SID: status callbacks) or by ours
-- (the email events webhook, `svc admin delivery`), one of the two. Unknown ids are answered
-- (known false) and not recorded: a provider retrying a report about a message from another
-- system must not fill the table.
drop function if exists app_hidden.delivery_record_event(text, text, text, jsonb);
drop function if exists app_hidden.delivery_record_message_event(uuid, text, text, jsonb);
create or replace function app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  om app_private.outgoing_messages;
begin
  if (provider_id is null) = (message_id is null) or length(provider_id) not between 1 and 200 then
    perform app_hidden.raise_error(400, 'bad_request', 'One message id: the provider''s (1 to 200 characters) or ours');
  end if;
  if provider_id is not null then
    select * into om from app_private.outgoing_messages m where m.provider_id = delivery_record_event.provider_id for update;
  else
    select * into om from app_private.outgoing_messages m where m.id = delivery_record_event.message_id for update;
  end if;
  if not found then
    return jsonb_build_object('known', false, 'recorded', false);
  end if;
  return app_private.delivery_message_event(om, event_key, type, detail);
end $$;
comment on function app_hidden.delivery_record_event(text, uuid, text, text, jsonb) is
  'A provider''s delivery report about a message by its provider id or ours, recorded once per event key.';
revoke execute on function app_hidden.delivery_record_event(text, uuid, text, text, jsonb) from public;
grant execute on function app_hidden.delivery_record_event(text, uuid, text, text, jsonb) to svc_request;

-- Messages are found by their id alone (a reply's In-Reply-To, a delivery report) before the
-- organization is known: the primary key leads with organization_id.
create index if not exists outgoing_messages_by_id on app_private.outgoing_messages (id);

-- An inbound SMS from the provider's webhook: the number's owner (404 unknown_number, 409
-- number_ambiguous), then exactly what `svc admin inbound sms` runs.
drop function if exists app_hidden.delivery_inbound_sms(text, text, text, text);
create or replace function app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text,
  owner_check boolean)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  result jsonb;
begin
  -- the webhook: a number two organizations share is refused (409 number_ambiguous), not guessed;
  -- `svc admin inbound sms` (owner_check false) keeps the conversations area's rule, the first
  -- organization that took the number
  if owner_check then
    perform app_hidden.number_owner(to_number);
  end if;
  -- one delivery of a message at a time: a retry racing the first waits, then finds it recorded
  if provider_id is not null then
    perform pg_advisory_xact_lock(hashtextextended('inbound-sms|' || provider_id, 0));
  end if;
  result := app_private.conversations_inbound_sms(to_number, from_number, body, provider_id);
  -- the `replied` exit holds from this moment (sequences.md: checked when the event arrives)
  if result->>'contact_id' is not null and not coalesce((result->>'duplicate')::boolean, false) then
    perform app_private.check_contact_exits((result->>'organization_id')::uuid, (result->>'contact_id')::uuid);
  end if;
  return result;
end $$;
comment on function app_hidden.delivery_inbound_sms(text, text, text, text, boolean) is
  'An inbound SMS from the provider''s webhook, through conversations_inbound_sms (idempotent on the provider id).';
revoke execute on function app_hidden.delivery_inbound_sms(text, text, text, text, boolean) from public;
grant execute on function app_hidden.delivery_inbound_sms(text, text, text, text, boolean) to svc_request;

reset role;
