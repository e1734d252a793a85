-- The receptionist: the AI (or the built-in dialogue) that answers SMS and chat, acting through
-- the same operations, SQL functions and row-level security as any key. src/receptionist/ runs
-- it; docs/receptionist.md describes it.
--
-- It acts under claims of its own, bound to one conversation: a MANAGER with the appointments
-- and contacts powers, limited to the conversation's location, whose credential id is the
-- conversation's (so an idempotency key it derives from an inbound message replays the first
-- answer after a crash). Only the owner may take these claims: the background job that answers
-- the message calls app_hidden.receptionist_authenticate as the owner, then becomes svc_request.

-- The job's connection (the owner's) becomes svc_request for the tool calls, as a request does.
do $$
begin
  if not pg_has_role('svc_owner', 'svc_request', 'member') then
    grant svc_request to svc_owner;
  end if;
end $$;

-- Everything else is the owner's (functions security definer as the owner, never a superuser).
set local role svc_owner;

-- What the organization tells its receptionist (all optional): instructions for the model, the
-- message a contact gets when a person takes over, and FAQ entries answered by keyword.
alter table app_public.organizations add column if not exists receptionist jsonb not null default '{}';
alter table app_public.organizations drop constraint if exists organizations_receptionist_check;
alter table app_public.organizations add constraint organizations_receptionist_check
  check (jsonb_typeof(receptionist) = 'object' and octet_length(receptionist::text) <= 65536);
comment on column app_public.organizations.receptionist is
  'The receptionist''s settings: {instructions, handover_message, faq: [{question, keywords, answer}]} (all optional).';

-- The built-in dialogue's memory of a conversation: the last thing it offered (services, slots,
-- a cancellation to confirm), so that a number or YES answers it. Written with the answer.
create table if not exists app_private.receptionist_states (
  organization_id uuid not null references app_public.organizations (id) on delete cascade,
  conversation_id uuid not null,
  state jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (organization_id, conversation_id),
  foreign key (organization_id, conversation_id) references app_public.conversations (organization_id, id) on delete cascade
);
comment on table app_private.receptionist_states is
  'The built-in receptionist''s pending offer per conversation (offerings, slots, or a cancellation awaiting YES).';

-- A hand-over the receptionist made (the inbox lists why; the loop guard and "once" read it).
create table if not exists app_private.receptionist_handovers (
  organization_id uuid not null references app_public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  conversation_id uuid not null,
  message_id uuid not null,
  reason text not null check (length(reason) between 1 and 500),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, message_id),
  foreign key (organization_id, conversation_id) references app_public.conversations (organization_id, id) on delete cascade
);
comment on table app_private.receptionist_handovers is
  'Each hand-over of a conversation to a person by the receptionist, with its reason: once per inbound message.';

-- The webhook event of a hand-over joins the catalog (src/webhooks/events.ts).
alter table app_public.webhook_subscriptions drop constraint if exists webhook_subscriptions_events_check;
alter table app_public.webhook_subscriptions add constraint webhook_subscriptions_events_check
  check (cardinality(events) between 1 and 8 and array_position(events, null) is null
         and events <@ array['contact.created', 'contact.updated', 'enrollment.completed', 'appointment.booked',
                             'appointment.cancelled', 'message.received', 'form.submitted', 'conversation.handed_over']);

-- The receptionist's claims for one tool call of one conversation. `tool_input` is the call's
-- input as the service will run it: the binding is checked here, before anything is read or
-- written: a contact_id other than the conversation's, a location_id other than its location, or
-- an appointment_id that is not this contact's is 403 not_allowed. contacts_update may change
-- only the name and email. Then the operation's own requirement applies (requirement_refusal).
create or replace function app_hidden.receptionist_authenticate(organization_id uuid, conversation_id uuid, operation_id text,
  tool_input jsonb, required_scope text, member_access text, manager_power text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  cv app_public.conversations;
  settings jsonb;
  refusal jsonb;
  loc_ids uuid[];
  scopes text[] := array['appointments:read', 'appointments:write', 'contacts:read', 'contacts:write'];
  powers text[] := array['appointments', 'contacts'];
begin
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_authenticate.organization_id and x.id = receptionist_authenticate.conversation_id;
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'No such conversation');
  end if;
  if jsonb_typeof(tool_input) is distinct from 'object' then
    perform app_hidden.raise_error(400, 'bad_request', 'The input must be an object');
  end if;
  if tool_input ? 'contact_id' and tool_input->>'contact_id' is distinct from cv.contact_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only for the contact of its conversation');
  end if;
  if tool_input ? 'location_id' and tool_input->>'location_id' is distinct from cv.location_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only at the location of its conversation');
  end if;
  if tool_input ? 'locationId' and tool_input->>'locationId' is distinct from cv.location_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only at the location of its conversation');
  end if;
  if tool_input ? 'appointmentId' and not exists (
       select 1 from app_public.appointments a
        where a.organization_id = cv.organization_id and a.contact_id = cv.contact_id
          and a.id::text = tool_input->>'appointmentId') then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only on appointments of the contact of its conversation');
  end if;
  if operation_id = 'contacts_update' and (select count(*) from jsonb_object_keys(tool_input - 'contactId' - 'name' - 'email' - 'idempotency_key')) > 0 then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist changes only the contact''s name and email');
  end if;
  if operation_id = 'contacts_update' and tool_input->>'contactId' is distinct from cv.contact_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only for the contact of its conversation');
  end if;

  loc_ids := case when cv.location_id is null then '{}'::uuid[] else array[cv.location_id] end;
  settings := jsonb_build_object(
    'svc.organization_id', cv.organization_id::text,
    'svc.credential_id', cv.id::text,
    'svc.user_id', '',
    'svc.role', 'manager',
    'svc.location_ids', loc_ids::text,
    'svc.powers', powers::text,
    'svc.scopes', scopes::text,
    'svc.records_level', 'all',
    'svc.sms_enabled', 'false');
  perform set_config(s.key, s.value, true) from jsonb_each_text(settings) s;

  refusal := app_hidden.requirement_refusal(required_scope, member_access, manager_power);
  if refusal is not null then
    perform app_hidden.raise_error((refusal->>'status')::int, refusal->>'error', refusal->>'message', refusal->'extra');
  end if;
  return jsonb_build_object(
    'organization_id', cv.organization_id, 'credential_id', cv.id, 'kind', 'organization', 'user_id', null,
    'role', 'manager', 'key_role', 'MANAGER', 'location_ids', to_jsonb(loc_ids), 'powers', to_jsonb(powers),
    'scopes', to_jsonb(scopes), 'records_level', 'all', 'sms_enabled', false, 'settings', settings);
end $$;
revoke all on function app_hidden.receptionist_authenticate(uuid, uuid, text, jsonb, text, text, text) from public;
comment on function app_hidden.receptionist_authenticate(uuid, uuid, text, jsonb, text, text, text) is
  'The receptionist''s claims for one tool call of a conversation (a MANAGER of its location with the appointments and contacts powers), after refusing (403 not_allowed) an input naming another contact, location or appointment. Owner only: called by the answering job before it becomes svc_request.';

-- What the receptionist knows when it answers: the conversation's context (as
-- conversation_ai_context gives it) with the ids it acts on, the offerings in booking order with
-- their ids, the organization's receptionist settings, the dialogue's pending offer, whether the
-- contact opted out, and how many AI answers the conversation had in 24 hours (the loop guard).
create or replace function app_private.receptionist_context(organization_id uuid, conversation_id uuid, message_id uuid)
returns jsonb language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  base jsonb := app_private.conversation_ai_context(organization_id, conversation_id, message_id);
  cv app_public.conversations;
begin
  if base is null then
    return null;
  end if;
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_context.organization_id and x.id = receptionist_context.conversation_id;
  return base || jsonb_build_object(
    'organization_id', cv.organization_id,
    'conversation_id', cv.id,
    'message_id', message_id,
    'contact_id', cv.contact_id,
    'location_id', cv.location_id,
    'receptionist', (select o.receptionist from app_public.organizations o where o.id = cv.organization_id),
    'offerings', coalesce((select jsonb_agg(jsonb_build_object('id', f.id, 'name', f.name, 'duration_minutes', f.duration_minutes)
                                            order by f.name, f.id)
                             from app_public.offerings f
                            where f.organization_id = cv.organization_id and f.location_id = cv.location_id), '[]'),
    'state', (select jsonb_build_object('state', s.state, 'at', s.updated_at) from app_private.receptionist_states s
               where s.organization_id = cv.organization_id and s.conversation_id = cv.id),
    'opted_out', cv.channel = 'sms' and exists (
      select 1 from app_public.contacts c
       where c.organization_id = cv.organization_id and c.id = cv.contact_id
         and app_private.conversation_sms_refusal(c, cv) is not null),
    'ai_answers_24h', (select count(*) from app_public.conversation_messages m
                        where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                          and m.author = 'ai' and m.created_at > now() - interval '24 hours'),
    'now', now());
end $$;
revoke all on function app_private.receptionist_context(uuid, uuid, uuid) from public;
comment on function app_private.receptionist_context(uuid, uuid, uuid) is
  'What the receptionist answers from (conversation_ai_context plus the ids, offerings, settings, pending offer, opt-out and loop count), or NULL when nothing is owed.';

-- The people a hand-over of this conversation is for: owners and admins, managers with the
-- contacts power at its location (or, for a conversation of no location, none).
create or replace function app_private.receptionist_handover_people(cv app_public.conversations)
returns setof app_public.people language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select p.* from app_public.people p
   where p.organization_id = cv.organization_id and p.active
     and (p.role in ('owner', 'admin')
          or (p.role = 'manager' and 'contacts' = any(p.powers)
              and exists (select 1 from app_public.person_locations pl
                           where pl.organization_id = p.organization_id and pl.person_id = p.id and pl.location_id = cv.location_id)))
   order by p.created_at, p.id
$$;
revoke all on function app_private.receptionist_handover_people(app_public.conversations) from public;

-- Writes the receptionist's turn, once, under the conversation's lock (conversation_ai_record):
-- a reply with the dialogue's new pending offer; or a hand-over: the thread held, the contact
-- told once (the organization's handover_message), an email to each person who may answer with
-- a link to the inbox, and the conversation.handed_over event. `state` null clears the offer.
create or replace function app_private.receptionist_record(organization_id uuid, conversation_id uuid, message_id uuid,
  answer jsonb, sinks text[], state jsonb, inbox_url text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  done jsonb;
  cv app_public.conversations;
  c app_public.contacts;
  org app_public.organizations;
  p app_public.people;
  told app_public.conversation_messages;
  out_id uuid;
  reason text := left(coalesce(nullif(btrim(answer->>'reason'), ''), 'the receptionist handed over'), 500);
begin
  done := app_private.conversation_ai_record(organization_id, conversation_id, message_id, answer, sinks);
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_record.organization_id and x.id = receptionist_record.conversation_id;
  if done->>'action' = 'reply' then
    if state is null then
      delete from app_private.receptionist_states s where s.organization_id = cv.organization_id and s.conversation_id = cv.id;
    else
      insert into app_private.receptionist_states as s (organization_id, conversation_id, state)
      values (cv.organization_id, cv.id, state)
      on conflict on constraint receptionist_states_pkey do update set state = excluded.state, updated_at = now();
    end if;
    -- the conversation's interaction names the appointment the turn booked or moved
    if answer->>'appointment_id' is not null then
      update app_public.interactions i set appointment_id = (answer->>'appointment_id')::uuid
       where i.organization_id = cv.organization_id and i.conversation_id = cv.id;
    end if;
    return done;
  end if;
  if done->>'action' <> 'handover' then
    return done;
  end if;

  delete from app_private.receptionist_states s where s.organization_id = cv.organization_id and s.conversation_id = cv.id;
  insert into app_private.receptionist_handovers (organization_id, conversation_id, message_id, reason)
  values (cv.organization_id, cv.id, receptionist_record.message_id, reason)
  on conflict do nothing;
  select * into org from app_public.organizations o where o.id = cv.organization_id;
  select * into c from app_public.contacts x where x.organization_id = cv.organization_id and x.id = cv.contact_id;

  -- the contact hears that a person will answer (never over SMS to a number that opted out)
  if cv.channel = 'chat' or (c.phone is not null and app_private.conversation_sms_refusal(c, cv) is null) then
    told := app_private.conversation_append_outbound(cv, 'ai', null,
      left(coalesce(nullif(btrim(org.receptionist->>'handover_message'), ''),
                    'Thanks for your message! A person from our team will answer you here soon.'), 1600),
      cv.business_address, c.phone, null, null, case when cv.channel = any(sinks) then 'sink' else 'job' end);
  end if;

  -- the people who may answer: an email each, through the delivery path
  for p in select * from app_private.receptionist_handover_people(cv) loop
    insert into app_private.outgoing_messages (organization_id, channel, sender, recipient, subject, body, meta)
    values (cv.organization_id, 'email', 'no-reply@' || coalesce(org.sending_email_domain, 'localhost'), p.email::text,
            left('A conversation is waiting for you: ' || coalesce(c.name, c.phone, c.email::text, 'a contact'), 300),
            format(E'The receptionist handed a conversation to a person.\n\nContact: %s\nChannel: %s\nReason: %s\n\nAnswer it in the inbox: %s\n',
                   coalesce(c.name, c.phone, c.email::text, 'unknown'), cv.channel, reason,
                   coalesce(inbox_url, '/dashboard/inbox') || '/' || cv.id),
            jsonb_build_object('conversation_id', cv.id, 'handover', true))
    returning id into out_id;
    perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', cv.organization_id, 'message_id', out_id),
      job_key => 'message:' || out_id);
  end loop;

  perform app_private.webhook_emit(cv.organization_id, 'conversation.handed_over', now(),
    jsonb_build_object('conversation_id', cv.id, 'contact_id', cv.contact_id, 'location_id', cv.location_id, 'reason', reason));
  return done || jsonb_build_object('told', told.id is not null);
end $$;
revoke all on function app_private.receptionist_record(uuid, uuid, uuid, jsonb, text[], jsonb, text) from public;
comment on function app_private.receptionist_record(uuid, uuid, uuid, jsonb, text[], jsonb, text) is
  'Writes the receptionist''s turn once: a reply with its pending offer, or a hand-over (hold, the contact told once, an email to each person who may answer, the conversation.handed_over event).';

reset role;
