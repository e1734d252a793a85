-- The receptionist on the phone is the receptionist of SMS and chat: the same context
-- (app_private.receptionist_context), the same claims for its tool calls
-- (app_hidden.receptionist_authenticate: a MANAGER of the called location, bound to the caller's
-- contact), the same record of its turn (app_private.receptionist_record: the pending offer, the
-- booked appointment's interaction, the hand-over's hold, email and event). The phone's request
-- holds no owner connection: each of these is reached through a function that first checks the
-- voice secret's hash and that the conversation is one of that organization's calls.

-- The call's conversation of this secret's organization, or 404.
set local role svc_owner;

create or replace function app_private.voice_conversation(secret_hash bytea, conversation_id uuid) returns uuid
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
begin
  if not exists (select 1 from app_private.voice_calls x where x.organization_id = org and x.conversation_id = voice_conversation.conversation_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return org;
end $$;
revoke all on function app_private.voice_conversation(bytea, uuid) from public;

create or replace function app_hidden.voice_context(secret_hash bytea, conversation_id uuid, message_id uuid) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.receptionist_context(app_private.voice_conversation(secret_hash, conversation_id), conversation_id, message_id);
end $$;

-- The receptionist's claims for one tool call of a call (receptionist_authenticate's), for the
-- holder of the organization's voice secret only.
create or replace function app_hidden.voice_receptionist_authenticate(secret_hash bytea, organization_id uuid, conversation_id uuid,
  operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_private.voice_conversation(secret_hash, conversation_id) is distinct from organization_id then
    perform app_hidden.raise_error(401, 'unauthorized', 'Unauthorized');
  end if;
  return app_hidden.receptionist_authenticate(organization_id, conversation_id, operation_id, tool_input, required_scope,
    member_access, manager_power);
end $$;
revoke all on function app_hidden.voice_receptionist_authenticate(bytea, uuid, uuid, text, jsonb, text, text, text) from public;
grant execute on function app_hidden.voice_receptionist_authenticate(bytea, uuid, uuid, text, jsonb, text, text, text) to svc_request;

-- Writes a turn's answer once: the receptionist's turn as for SMS and chat (`decided`: its
-- answer, `state`: the dialogue's pending offer), and the words spoken (`answer`), kept with the
-- turn so a repeated turn replays them.
drop function if exists app_hidden.voice_record(bytea, text, int, jsonb);
create or replace function app_hidden.voice_record(secret_hash bytea, call_id text, turn int, answer jsonb, decided jsonb,
  state jsonb, inbox_url text) returns jsonb
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
  perform app_private.receptionist_record(org, vc.conversation_id, vt.message_id, decided, array['chat'], state, inbox_url);
  update app_private.voice_turns x set answer = voice_record.answer
   where x.organization_id = org and x.call_id = vt.call_id and x.turn = vt.turn;
  return answer;
end $$;
revoke all on function app_hidden.voice_record(bytea, text, int, jsonb, jsonb, jsonb, text) from public;
grant execute on function app_hidden.voice_record(bytea, text, int, jsonb, jsonb, jsonb, text) to svc_request;

reset role;
