-- What a call did: calls_list and calls_get show the conversation the receptionist had on the
-- call (the voice platform's call id names both: app_private.voice_calls) and the appointments
-- that conversation booked (its interaction's appointment_id, set by the receptionist when it
-- books), so a call recorded by the voice webhook is tied to what it did. Added fields only.
-- The receptionist's conversation on a call and the appointments it booked, by the platform's
-- call id (app_private.voice_calls is no reader's table: this definer reads it for call_json).
set local role svc_owner;

create or replace function app_hidden.call_voice_links(organization_id uuid, external_id text) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object('conversation_id', v.conversation_id,
    'appointment_ids', coalesce((select jsonb_agg(distinct i.appointment_id)
                                   from app_public.interactions i
                                  where i.organization_id = call_voice_links.organization_id and i.conversation_id = v.conversation_id
                                    and i.appointment_id is not null), '[]'))
    from (select (select x.conversation_id from app_private.voice_calls x
                   where x.organization_id = call_voice_links.organization_id and x.call_id = call_voice_links.external_id)
                 as conversation_id) v
$$;
revoke all on function app_hidden.call_voice_links(uuid, text) from public;
grant execute on function app_hidden.call_voice_links(uuid, text) to svc_request, svc_worker;

create or replace function app_hidden.call_json(c app_public.calls) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object(
    'id', c.id,
    'contact_id', c.contact_id,
    'location_id', c.location_id,
    'team_member_id', c.staff_profile_id,
    'direction', c.direction,
    'status', c.status,
    'from', c.from_number,
    'to', c.to_number,
    'started_at', c.started_at,
    'duration_seconds', c.duration_seconds,
    'summary', c.summary,
    'created_at', c.created_at) || app_hidden.call_voice_links(c.organization_id, c.external_id)
$$;
comment on function app_hidden.call_json(app_public.calls) is
  'A call as calls_list and calls_get answer it (without its transcript), with the conversation the receptionist had on it and the appointments it booked.';

reset role;
