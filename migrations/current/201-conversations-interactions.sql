-- SMS and chat threads the AI receptionist handled are interactions (spec: Interaction; what
-- contacts_list_interactions lists beside the calls of the voice webhook): one interaction per
-- conversation, written by the AI's own turn (conversation_ai_record) in the transaction that
-- records its answer or its hand-over.
--
--   the AI answers           the interaction is opened (status in_progress, started at the
--                            message answered), or reopened after a person gave the thread back
--   the AI hands over        completed, ended now (opened first when it was the AI's first turn)
--   a person takes over      (hold, or a person's reply, which holds) completed, ended now
--
-- interactions.conversation_id names the thread; REST and GraphQL do not show it (the spec's
-- Interaction shows no other field).
set local role svc_owner;

alter table app_public.interactions add column if not exists conversation_id uuid;
comment on column app_public.interactions.conversation_id is
  'The SMS or chat conversation the AI handled (NULL for calls and recorded interactions); one interaction per conversation.';
do $$
begin
  if not exists (select 1 from pg_constraint where conname = 'interactions_conversation_fk') then
    alter table app_public.interactions add constraint interactions_conversation_fk
      foreign key (organization_id, conversation_id) references app_public.conversations on delete set null (conversation_id);
  end if;
end $$;
create unique index if not exists interactions_by_conversation on app_public.interactions (organization_id, conversation_id)
  where conversation_id is not null;

-- The conversation's interaction, opened or reopened (in_progress) or completed now. `since`:
-- when a new interaction starts (the contact's message the AI took).
create or replace function app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamptz)
returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_private.conversation_ai_interaction(app_public.conversations, text, timestamptz) is
  'Records the AI''s handling of an SMS or chat conversation as its interaction: in_progress while it answers, completed when '
  'it hands over or a person takes over.';
revoke execute on function app_private.conversation_ai_interaction(app_public.conversations, text, timestamptz) from public;

-- A person takes the thread (hold, or a reply that holds it): the AI's interaction ends.
create or replace function app_private.tg_conversations__ai_interaction_ends() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_public.interactions i set status = 'completed', ended_at = greatest(now(), i.started_at)
   where i.organization_id = new.organization_id and i.conversation_id = new.id and i.status = 'in_progress';
  return null;
end $$;
revoke execute on function app_private.tg_conversations__ai_interaction_ends() from public;
drop trigger if exists _201_ai_interaction_ends on app_public.conversations;
create trigger _201_ai_interaction_ends after update of ai_held on app_public.conversations
  for each row when (new.ai_held and not old.ai_held)
  execute function app_private.tg_conversations__ai_interaction_ends();

-- 703's function, with the interaction recorded in the same transaction as the answer or hand-over.
create or replace function app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb,
  sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_private.conversation_ai_record(uuid, uuid, uuid, jsonb, text[]) is
  'Writes the AI''s answer to an inbound message (queued for delivery) or hands the thread to a person (hold), once, and '
  'records the conversation''s interaction: nothing when the message is no longer the AI''s to answer.';
revoke execute on function app_private.conversation_ai_record(uuid, uuid, uuid, jsonb, text[]) from public;

reset role;
