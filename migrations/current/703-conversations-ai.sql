-- The AI receptionist's turn: task conversation_ai_reply (src/conversations/ai_reply.ts), queued
-- with the inbound message that asks for it (job key conversation_ai:<message id>), runs in
-- three steps so that a crash anywhere sends nothing twice:
--   1. conversation_ai_context: what the responder needs (organization, location with hours,
--      address and booking options, the thread), or NULL when the AI has nothing to do;
--   2. the responder answers, outside any transaction (it may be a remote model);
--   3. conversation_ai_record: one transaction that checks again, under the conversation's lock,
--      that the message is still the AI's to answer, then writes the answer and queues its
--      delivery (deliver_message: exactly once with the sink), or puts the thread on hold when
--      the responder hands over to a person. With the local sink the answer is stored there in
--      that same transaction.
-- A rerun after 3 committed finds the message answered (or the thread held) and does nothing;
-- a rerun before it asks the responder again, and nothing had been sent.
set local role svc_owner;

-- Whether the AI still owes an answer to this message: the thread answers by AI, the message is
-- the contact's, nothing went out after it, and no newer message of the contact waits (its own
-- job answers the thread then).
create or replace function app_private.conversation_ai_due(cv app_public.conversations, message_id uuid) returns boolean
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select cv.id is not null and app_hidden.conversation_response_mode(cv) = 'ai'
     and exists (select 1 from app_public.conversation_messages m
                  where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                    and m.id = conversation_ai_due.message_id and m.direction = 'inbound'
                    and not exists (select 1 from app_public.conversation_messages later
                                     where later.organization_id = m.organization_id and later.conversation_id = m.conversation_id
                                       and (later.created_at, later.id) > (m.created_at, m.id)))
$$;
revoke execute on function app_private.conversation_ai_due(app_public.conversations, uuid) from public;

create or replace function app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_private.conversation_ai_context(uuid, uuid, uuid) is
  'What the AI responder is given for an inbound message (organization, location with hours, address and offerings, the '
  'last 20 messages), or NULL when the AI owes it no answer.';
revoke execute on function app_private.conversation_ai_context(uuid, uuid, uuid) from public;

-- answer: {kind: reply, text} or {kind: handover}. Answers {action: none|handover|refused|reply, …}.
-- sinks: the channels whose transport is the local sink, a table: their answer is stored there
-- in this transaction (exactly once, no second job); other channels get a deliver_message job.
drop function if exists app_private.conversation_ai_record(uuid, uuid, uuid, jsonb);
create or replace function app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb,
  sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  cv app_public.conversations;
  c app_public.contacts;
  refusal text;
  m app_public.conversation_messages;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = conversation_ai_record.organization_id and x.id = conversation_ai_record.conversation_id for update;
  if not app_private.conversation_ai_due(cv, message_id) then
    return jsonb_build_object('action', 'none');
  end if;
  if answer->>'kind' = 'handover' or coalesce(btrim(answer->>'text'), '') = '' then
    update app_public.conversations x set ai_held = true, held_at = now(), updated_at = now()
     where x.organization_id = cv.organization_id and x.id = cv.id;
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
  return jsonb_build_object('action', 'reply', 'message_id', m.id);
end $$;
comment on function app_private.conversation_ai_record(uuid, uuid, uuid, jsonb, text[]) is
  'Writes the AI''s answer to an inbound message (queued for delivery) or hands the thread to a person (hold), once: '
  'nothing when the message is no longer the AI''s to answer.';
revoke execute on function app_private.conversation_ai_record(uuid, uuid, uuid, jsonb, text[]) from public;

reset role;
