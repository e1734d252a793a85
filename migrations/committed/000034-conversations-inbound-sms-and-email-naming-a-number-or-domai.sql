--! Previous: sha1:53b874c97f98adc5a7268402fe9ac0a9b0309e3c
--! Hash: sha1:3eee3d28eacc611ca977a9544d1a399ee7523bb3
--! Message: Conversations: inbound SMS and email naming a number or domain two organizations claim go to the newest of them (the tenant a suite has just applied), not the oldest

--! split: 010-inbound-to-the-newest-organization.sql
-- Inbound SMS and email that name a number or a sending domain two organizations claim go to the
-- newest of them, not the oldest.
--
-- Nothing in the schema stops two organizations from claiming one number or domain, and applying
-- one fixture twice makes exactly that: a second, separate organization with the same numbers
-- (operator-cli.md: "tests rely on that"). A suite that applies its tenant, then simulates a text
-- to its number (`svc admin inbound sms`) meant the tenant it has just made; the oldest one got
-- it. The provider's SMS webhook still refuses such a number (409 number_ambiguous), so only the
-- CLI and the email paths choose, and they now choose the organization made last. A reply to a
-- message the service sent still goes to the organization that sent it.
set local role svc_owner;

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
  -- a number two organizations claim (only `svc admin inbound sms` gets here with one: the
  -- provider's webhook refuses it first): the newest organization's, its oldest location
  select l.organization_id, l.id into org, location from app_public.locations l
    join app_public.organizations o on o.id = l.organization_id
   where l.sms_number = to_number order by o.created_at desc, o.id desc, l.created_at, l.id limit 1;
  if org is null then
    select o.id into org from app_public.organizations o where o.default_sms_number = to_number
     order by o.created_at desc, o.id desc limit 1;
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
end $$;
comment on function app_private.conversations_inbound_sms(text, text, text, text) is
  'An SMS arrives at one of the organization''s numbers: the contact matched by phone or created, the thread continued or '
  'opened, STOP/START/HELP recorded and answered, anything else left to the AI while it answers. Idempotent on provider_id.';

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
     where lower(o.sending_email_domain) = lower(split_part(to_address, '@', 2)) order by o.created_at desc, o.id desc limit 1;
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

reset role;
