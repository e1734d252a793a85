-- The voice platform's webhook (src/calls/webhook.ts checks its signature and the payload's
-- shape): a call recorded once per platform call id. No credential: the called number names the
-- organization (a location's sms_number, else the organization's default number), so the
-- function is security definer and trusts nothing else of the caller.
set local role svc_owner;

-- The organization and location of one of the service's numbers: a location's number first,
-- else an organization's default (location NULL). 404 when none; 409 when the number is
-- another organization's too (which one the call was for is unknowable).
create or replace function app_hidden.number_owner(number text, out organization_id uuid, out location_id uuid)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  orgs uuid[];
begin
  select array_agg(distinct x.org) into orgs
    from (select l.organization_id as org from app_public.locations l where l.sms_number = number_owner.number
          union all
          select o.id from app_public.organizations o where o.default_sms_number = number_owner.number) x;
  if orgs is null then
    perform app_hidden.raise_error(404, 'unknown_number', 'No organization uses this number');
  end if;
  if cardinality(orgs) > 1 then
    perform app_hidden.raise_error(409, 'number_ambiguous', 'More than one organization uses this number');
  end if;
  organization_id := orgs[1];
  select l.id into location_id from app_public.locations l
   where l.organization_id = orgs[1] and l.sms_number = number_owner.number
   order by l.created_at, l.id limit 1;
end $$;
comment on function app_hidden.number_owner(text) is
  'The organization (and location, when it is a location''s) of one of the service''s numbers; 404 unknown, 409 shared by organizations.';
revoke execute on function app_hidden.number_owner(text) from public;

-- Records a call from the voice platform, once per call id: the contact matched by phone or
-- created (linked to the location), its total_calls counted, the call and its transcript, and
-- an interaction (channel voice). A second delivery answers the first's ids with duplicate true.
-- `payload` is the body as src/calls/webhook.ts checked it: phones in E.164.
create or replace function app_hidden.voice_call_record(payload jsonb) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  inbound boolean := coalesce(payload->>'direction', 'inbound') = 'inbound';
  ours text := case when inbound then payload->>'to' else payload->>'from' end;
  theirs text := case when inbound then payload->>'from' else payload->>'to' end;
  org uuid;
  loc uuid;
  c app_public.contacts;
  existing app_public.calls;
  v_call_id uuid;
  started timestamptz := coalesce((payload->>'started_at')::timestamptz, now());
  v_status text := coalesce(payload->>'status', 'completed');
begin
  select n.organization_id, n.location_id into org, loc from app_hidden.number_owner(ours) n;
  -- one delivery of a call at a time: a retry racing the first waits, then finds it
  perform pg_advisory_xact_lock(hashtextextended(org::text || '|voice|' || (payload->>'call_id'), 0));
  select * into existing from app_public.calls x where x.organization_id = org and x.external_id = payload->>'call_id';
  if found then
    return jsonb_build_object('call_id', existing.id, 'contact_id', existing.contact_id, 'duplicate', true);
  end if;

  select * into c from app_public.contacts x where x.organization_id = org and x.phone = theirs;
  if not found then
    insert into app_public.contacts (organization_id, phone, name)
    values (org, theirs, nullif(payload->>'caller_name', ''))
    on conflict (organization_id, phone) where phone is not null do update set updated_at = now()
    returning * into c;
  end if;
  update app_public.contacts x set total_calls = x.total_calls + 1, last_seen_at = greatest(x.last_seen_at, started),
         name = coalesce(x.name, nullif(payload->>'caller_name', '')), updated_at = now()
   where x.organization_id = org and x.id = c.id;
  if loc is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, loc) on conflict do nothing;
  end if;

  insert into app_public.calls (organization_id, contact_id, location_id, direction, status, from_number, to_number, started_at,
                                duration_seconds, summary, external_id)
  values (org, c.id, loc, case when inbound then 'inbound' else 'outbound' end, v_status, payload->>'from', payload->>'to', started,
          (payload->>'duration_seconds')::int, payload->>'summary', payload->>'call_id')
  returning id into v_call_id;
  insert into app_public.call_transcript_lines (organization_id, call_id, position, speaker, text)
  select org, v_call_id, l.ordinality - 1, l.value->>'speaker', l.value->>'text'
    from jsonb_array_elements(coalesce(payload->'transcript', '[]')) with ordinality l;

  insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, summary, started_at, ended_at)
  values (org, c.id, loc, 'voice',
          case v_status when 'completed' then 'completed' when 'in_progress' then 'in_progress' else 'abandoned' end,
          payload->>'summary', started,
          case when v_status <> 'in_progress' then started + make_interval(secs => coalesce((payload->>'duration_seconds')::int, 0)) end);
  return jsonb_build_object('call_id', v_call_id, 'contact_id', c.id, 'duplicate', false);
end $$;
comment on function app_hidden.voice_call_record(jsonb) is
  'Records a voice platform call once per call id: contact by phone (or created), total_calls, call, transcript, interaction.';
revoke execute on function app_hidden.voice_call_record(jsonb) from public;
grant execute on function app_hidden.voice_call_record(jsonb) to svc_request;

reset role;
