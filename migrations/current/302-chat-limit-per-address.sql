-- Web chat: the new-chat limit counts per client address, across organizations (docs:
-- conversations, Limits). It counted per organization and address, so one address opened five
-- chats at every organization's widgets in turn. The count and its advisory lock are now the
-- address's alone; other addresses, of the same organization or another, are never held up.

set local role svc_owner;

create index if not exists chat_sessions_by_client_address on app_private.chat_sessions (client_address, created_at)
  where client_address is not null;
drop index if exists app_private.chat_sessions_by_address;

create or replace function app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  w app_public.chat_widgets;
  lim jsonb := app_hidden.chat_limits();
  v_email text := nullif(lower(visitor->>'email'), '');
  v_phone text := nullif(visitor->>'phone', '');
  v_name text := nullif(btrim(visitor->>'name'), '');
  v_contact uuid;
  cv app_public.conversations;
  sent jsonb;
begin
  select * into w from app_public.chat_widgets x where x.id = chat_start.widget_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Chat widget not found');
  end if;
  if token_hash is null or token_hash !~ '^[0-9a-f]{64}$' then
    raise exception 'chat_start: token_hash is the hex sha-256 of the visitor token';
  end if;
  if client_address is not null then
    -- one count per address at a time, whichever organization's widget: concurrent starts
    -- cannot all pass
    perform pg_advisory_xact_lock(hashtextextended('svc.chat_address:' || client_address, 0));
    if (select count(*) from app_private.chat_sessions s
         where s.client_address = chat_start.client_address
           and s.created_at > now() - make_interval(mins => (lim->>'chats_window_minutes')::int))
       >= (lim->>'chats_per_address')::int then
      perform app_hidden.raise_error(429, 'rate_limited', 'Too many new chats from this address; try again later');
    end if;
  end if;

  if v_phone is not null or v_email is not null then
    select x.contact_id into v_contact from app_private.inbound_contact(w.organization_id, w.location_id, v_phone, v_email) x;
  else
    insert into app_public.contacts (organization_id, name) values (w.organization_id, v_name) returning id into v_contact;
    if w.location_id is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id)
      values (w.organization_id, v_contact, w.location_id) on conflict do nothing;
    end if;
  end if;
  if v_name is not null then
    update app_public.contacts c set name = v_name, updated_at = now()
     where c.organization_id = w.organization_id and c.id = v_contact and c.name is null;
  end if;

  insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
  values (w.organization_id, v_contact, coalesce(w.location_id, app_private.contact_only_location(w.organization_id, v_contact)),
          'chat', null)
  returning * into cv;
  insert into app_private.chat_sessions (organization_id, conversation_id, widget_id, token_hash, client_address)
  values (w.organization_id, cv.id, w.id, token_hash, client_address);
  sent := app_private.chat_inbound(cv, body);
  return jsonb_build_object('conversation_id', cv.id, 'contact_id', v_contact, 'organization_id', w.organization_id,
    'response_mode', app_hidden.conversation_response_mode(cv)) || sent;
end $_$;

reset role;
