-- A call answered by the receptionist on the phone (src/voice/): the voice platform asks
-- POST /api/v1/receptionist/chat/completions once per turn of the call, with the whole
-- transcript so far and metadata {call_id, from, to}.
--
-- A call is one conversation on channel `chat`: the spec's conversation channels are email,
-- sms and chat, and a call's transcript is a live two-way text thread answered as it happens,
-- which is what a chat is; an `sms` conversation would text the caller every answer. The
-- conversation's business_address is the number that was called, so the inbox and
-- conversations_get show where it came from. app_private.voice_calls maps the platform's call
-- id to it; app_private.voice_turns keeps each turn's inbound message and, once written, its
-- answer, so a platform that repeats a turn (a retry, or after a crash of ours) gets the same
-- answer or has the same message answered, never a second one.

set local role svc_owner;

create table if not exists app_private.voice_calls (
  organization_id uuid not null references app_public.organizations (id) on delete cascade,
  call_id text not null check (length(call_id) between 1 and 200),
  conversation_id uuid not null,
  contact_id uuid not null,
  location_id uuid,
  from_number text not null,
  to_number text not null,
  started_at timestamptz not null default now(),
  turns int not null default 0,
  characters int not null default 0,
  primary key (organization_id, call_id),
  foreign key (organization_id, conversation_id) references app_public.conversations (organization_id, id) on delete cascade
);
comment on table app_private.voice_calls is
  'A call the receptionist answers on the phone: the platform''s call id, its conversation (channel chat), and what it used of its bounds.';
create unique index if not exists voice_calls_conversation on app_private.voice_calls (organization_id, conversation_id);

create table if not exists app_private.voice_turns (
  organization_id uuid not null,
  call_id text not null,
  turn int not null check (turn >= 1),
  message_id uuid not null,
  answer jsonb,
  created_at timestamptz not null default now(),
  primary key (organization_id, call_id, turn),
  foreign key (organization_id, call_id) references app_private.voice_calls (organization_id, call_id) on delete cascade
);
comment on table app_private.voice_turns is
  'One turn of a voice call: the caller''s words as an inbound message, and the answer once written (a repeated turn replays it).';

-- The organization of a voice secret, or 401 (no detail: whether such a secret ever existed is no
-- one's business).
create or replace function app_private.voice_org_or_401(secret_hash bytea) returns uuid
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_organization(secret_hash);
begin
  if org is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Unauthorized');
  end if;
  return org;
end $$;
revoke all on function app_private.voice_org_or_401(bytea) from public;

-- One turn of a call, written before anything answers it. `to` must be one of the organization's
-- numbers (a location's SMS number, or its default number; 404 otherwise); the location is the one
-- whose number it is. The caller is the contact with the `from` number (created when none). The
-- first turn makes the call's conversation. `bounds` ({turns, characters, seconds}) cap a call:
-- past one, the answer is `{"over": "<which>"}` and nothing is written but the hold.
-- Answers {organization_id, conversation_id, contact_id, location_id, message_id, answer, held, over}.
create or replace function app_hidden.voice_turn(secret_hash bytea, call_id text, from_number text, to_number text, turn int,
  body text, bounds jsonb) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
  loc uuid;
  vc app_private.voice_calls;
  vt app_private.voice_turns;
  cv app_public.conversations;
  c app_public.contacts;
  m app_public.conversation_messages;
  over text;
begin
  if not exists (select 1 from app_public.organizations o where o.id = org and o.default_sms_number = to_number)
     and not exists (select 1 from app_public.locations l where l.organization_id = org and l.sms_number = to_number) then
    perform app_hidden.raise_error(404, 'not_found', 'metadata.to is not one of this organization''s numbers');
  end if;
  select l.id into loc from app_public.locations l
   where l.organization_id = org and l.sms_number = to_number order by l.created_at, l.id limit 1;
  -- one turn of a call at a time: a repeated request waits for the first, then finds its turn
  perform pg_advisory_xact_lock(hashtextextended(org::text || '|voice-llm|' || call_id, 0));
  select * into vc from app_private.voice_calls x where x.organization_id = org and x.call_id = voice_turn.call_id for update;
  if not found then
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = from_number;
    if not found then
      insert into app_public.contacts (organization_id, phone) values (org, from_number)
      on conflict (organization_id, phone) where phone is not null do update set updated_at = now()
      returning * into c;
    end if;
    if loc is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, loc) on conflict do nothing;
    end if;
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
    values (org, c.id, loc, 'chat', to_number) returning * into cv;
    insert into app_private.voice_calls (organization_id, call_id, conversation_id, contact_id, location_id, from_number, to_number)
    values (org, voice_turn.call_id, cv.id, c.id, loc, from_number, to_number) returning * into vc;
  elsif vc.from_number <> from_number or vc.to_number <> to_number then
    perform app_hidden.raise_error(400, 'bad_request', 'metadata: this call_id was begun with other from and to numbers');
  end if;
  select * into cv from app_public.conversations x where x.organization_id = org and x.id = vc.conversation_id;

  select * into vt from app_private.voice_turns x where x.organization_id = org and x.call_id = vc.call_id and x.turn = voice_turn.turn;
  if not found then
    over := case when vc.turns + 1 > (bounds->>'turns')::int then 'turns'
                 when vc.characters + length(body) > (bounds->>'characters')::int then 'characters'
                 when now() > vc.started_at + make_interval(secs => (bounds->>'seconds')::int) then 'seconds' end;
    if over is not null then
      if not cv.ai_held then
        update app_public.conversations x set ai_held = true, held_at = now(), updated_at = now()
         where x.organization_id = org and x.id = cv.id;
      end if;
      return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'contact_id', cv.contact_id,
        'location_id', cv.location_id, 'over', over, 'held', true);
    end if;
    insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
    values (org, cv.id, 'chat', 'inbound', 'contact', body, 'received') returning * into m;
    update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
     where x.organization_id = org and x.id = cv.id;
    update app_public.contacts x set last_seen_at = greatest(x.last_seen_at, now()) where x.organization_id = org and x.id = cv.contact_id;
    update app_private.voice_calls x set turns = x.turns + 1, characters = x.characters + length(body)
     where x.organization_id = org and x.call_id = vc.call_id;
    insert into app_private.voice_turns (organization_id, call_id, turn, message_id) values (org, vc.call_id, voice_turn.turn, m.id)
    returning * into vt;
  end if;
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'contact_id', cv.contact_id, 'location_id', cv.location_id,
    'message_id', vt.message_id, 'answer', vt.answer, 'held', app_hidden.conversation_response_mode(cv) <> 'ai');
end $$;
revoke all on function app_hidden.voice_turn(bytea, text, text, text, int, text, jsonb) from public;
grant execute on function app_hidden.voice_turn(bytea, text, text, text, int, text, jsonb) to svc_request;

-- What the receptionist knows to answer a turn (conversation_ai_context), for the holder of the
-- organization's voice secret and a conversation of one of its calls only. NULL: not the
-- receptionist's to answer (held, or a later message came).
create or replace function app_hidden.voice_context(secret_hash bytea, conversation_id uuid, message_id uuid) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
begin
  if not exists (select 1 from app_private.voice_calls x where x.organization_id = org and x.conversation_id = voice_context.conversation_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return app_private.conversation_ai_context(org, conversation_id, message_id);
end $$;
revoke all on function app_hidden.voice_context(bytea, uuid, uuid) from public;
grant execute on function app_hidden.voice_context(bytea, uuid, uuid) to svc_request;

-- Writes a turn's answer once: the receptionist's reply as the conversation's message (or the
-- hand-over's hold), and the words spoken, kept with the turn so a repeated turn replays them.
-- `answer` is {kind: reply|handover, text, reason?, spoken}. Answers the turn's answer as kept.
create or replace function app_hidden.voice_record(secret_hash bytea, call_id text, turn int, answer jsonb) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
  vc app_private.voice_calls;
  vt app_private.voice_turns;
begin
  select * into vc from app_private.voice_calls x where x.organization_id = org and x.call_id = voice_record.call_id for update;
  select * into vt from app_private.voice_turns x where x.organization_id = org and x.call_id = voice_record.call_id and x.turn = voice_record.turn
     for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Turn not found');
  end if;
  if vt.answer is not null then
    return vt.answer;
  end if;
  perform app_private.conversation_ai_record(org, vc.conversation_id, vt.message_id,
    jsonb_build_object('kind', answer->>'kind', 'text', answer->>'text', 'reason', answer->>'reason'), array['chat']);
  update app_private.voice_turns x set answer = voice_record.answer
   where x.organization_id = org and x.call_id = vt.call_id and x.turn = vt.turn;
  return answer;
end $$;
revoke all on function app_hidden.voice_record(bytea, text, int, jsonb) from public;
grant execute on function app_hidden.voice_record(bytea, text, int, jsonb) to svc_request;

-- The organization of a voice secret for the endpoint's first check, before the body is read
-- (401 otherwise): a wrong secret learns nothing about its body.
create or replace function app_hidden.voice_authenticate(secret_hash bytea) returns uuid
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_private.voice_org_or_401(secret_hash)
$$;
revoke all on function app_hidden.voice_authenticate(bytea) from public;
grant execute on function app_hidden.voice_authenticate(bytea) to svc_request;

reset role;
