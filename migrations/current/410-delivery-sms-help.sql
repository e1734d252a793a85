-- Delivery, SMS HELP: an organization's own answer to HELP (and INFO). Carriers expect the
-- answer to name the program and how to reach it, and to say how to opt out. The setting is
-- app_public.organizations.sms_help_text (fixture `organization.sms_help_text`, `svc admin org
-- update --sms-help TEXT`, '' for the default); app_private.sms_help_reply makes sure the answer
-- carries both: the business's name is put first when the text does not name it, and "Reply
-- STOP to unsubscribe." is added when it says nothing of STOP. Without a setting the default
-- names the business, the number texted and STOP/START. conversations_inbound_sms (the
-- conversations area's, 701-…) is restated here only to answer HELP through it.
set local role svc_owner;

alter table app_public.organizations add column if not exists sms_help_text text
  constraint organizations_sms_help_text_check check (sms_help_text is null or length(sms_help_text) between 1 and 300);
comment on column app_public.organizations.sms_help_text is
  'The answer to an SMS HELP/INFO (1 to 300 characters); null: the default, with the business''s name, the number and STOP.';

create or replace function app_private.sms_help_reply(org uuid, business_number text) returns text
language sql stable
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_private.sms_help_reply(uuid, text) is
  'The answer to HELP/INFO sent from business_number: the organization''s sms_help_text, named and with STOP, or the default.';
revoke execute on function app_private.sms_help_reply(uuid, text) from public;

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
revoke execute on function app_private.conversations_inbound_sms(text, text, text, text) from public;

reset role;
