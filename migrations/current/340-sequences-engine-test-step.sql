-- sequences_test_step: sends the saved step once, now, to an address or a contact, outside any
-- enrollment, so an author sees what recipients will get. The same renderer and the same
-- send-time checks as the engine (app_private.build_sequence_message, send_refusal): a refused
-- send answers {success: false, reason_code} rather than an error, since the request was
-- valid and nothing went out.
set local role svc_owner;

create or replace function app_hidden.sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid,
  base_url text, sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  step jsonb;
  c app_public.contacts;
  channel text;
  refusal text;
  message jsonb;
begin
  select * into s from app_public.sequences x where x.organization_id = org and x.id = sequences_test_step_send.sequence_id;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not send this sequence''s steps');
  end if;
  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = sequences_test_step_send.step_key limit 1;
  channel := step->>'type';
  if sequences_test_step_send.contact_id is not null then
    select * into c from app_public.contacts x where x.organization_id = org and x.id = sequences_test_step_send.contact_id;
    address := case channel when 'email' then c.email::text else c.phone end;
  elsif channel = 'email' then
    select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(address);
  else
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = address;
  end if;
  refusal := app_private.send_refusal(org, channel, address);
  -- a number no contact carries is the author's own: only a contact's missing consent refuses
  if refusal is null and channel = 'sms' and c.id is not null and not c.sms_consent then
    refusal := 'no_consent';
  end if;
  if refusal is not null then
    return jsonb_build_object('success', false, 'reason_code', refusal, 'error', case refusal
      when 'missing_address' then 'The contact has no ' || case channel when 'email' then 'email address' else 'phone number' end
      when 'suppressed' then 'The address is suppressed: no email goes to it'
      when 'opted_out' then 'The number opted out of SMS'
      else 'The contact has not consented to SMS' end);
  end if;
  message := app_private.build_sequence_message(org, s, step, c.id, address, null, base_url, channel = 'email');
  message := jsonb_set(message, '{meta,test}', 'true');
  update app_private.outgoing_messages m set meta = message->'meta' where m.organization_id = org and m.id = (message->>'id')::uuid;
  if channel = any(sinks) then
    -- the local sink is a table: storing and marking sent commit with this call
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    values (org, (message->>'id')::uuid, channel, message->>'sender', address, message->>'subject', message->>'body', message->'meta');
    update app_private.outgoing_messages m set status = 'sent', sent_at = now()
     where m.organization_id = org and m.id = (message->>'id')::uuid;
    return jsonb_build_object('success', true, 'message_id', message->>'id');
  end if;
  return jsonb_build_object('success', true, 'message_id', message->>'id', 'message', message);
end $$;
comment on function app_hidden.sequences_test_step_send(uuid, text, text, uuid, text, text[]) is
  'sequences_test_step''s send as the owner: send-time checks (reason_code), the rendered message stored; with the sink, '
  'delivered at once; otherwise answered for the caller to hand to its transport.';
grant execute on function app_hidden.sequences_test_step_send(uuid, text, text, uuid, text, text[]) to svc_request;

create or replace function app_hidden.sequences_test_step_record(message_id uuid, error text) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.outgoing_messages m
     set status = case when sequences_test_step_record.error is null then 'sent' else 'failed' end,
         sent_at = case when sequences_test_step_record.error is null then now() end,
         error = left(sequences_test_step_record.error, 1000)
   where m.organization_id = app_hidden.current_org_id() and m.id = sequences_test_step_record.message_id
     and m.status = 'queued' and (m.meta->>'test')::boolean
$$;
comment on function app_hidden.sequences_test_step_record(uuid, text) is 'What the transport answered for a test send of the current organization.';
grant execute on function app_hidden.sequences_test_step_record(uuid, text) to svc_request;

create or replace function app_public.sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text,
  contact_id uuid, base_url text, sinks text[]) returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  s record;
  step jsonb;
  given int := (to_email is not null)::int + (to_phone is not null)::int + (contact_id is not null)::int;
begin
  select x.id, x.location_id, x.steps into s from app_public.sequences x where x.organization_id = org and x.id = sequences_test_step.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  if not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'This sequence belongs to the whole organization; a manager tests only sequences of its own locations');
  end if;
  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = sequences_test_step.step_key limit 1;
  if step is null then
    perform app_hidden.raise_error(404, 'not_found', 'Step not found');
  end if;
  if step->>'type' not in ('email', 'sms') then
    perform app_hidden.raise_error(400, 'bad_request', 'step_key: a ' || coalesce(step->>'type', 'wait') || ' step sends nothing to test');
  end if;
  if given <> 1 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: send exactly one of to_email, to_phone or contact_id');
  end if;
  if to_email is not null and step->>'type' <> 'email' then
    perform app_hidden.raise_error(400, 'bad_request', 'body.to_email: the step is an SMS step; send to_phone or contact_id');
  end if;
  if to_phone is not null and step->>'type' <> 'sms' then
    perform app_hidden.raise_error(400, 'bad_request', 'body.to_phone: the step is an email step; send to_email or contact_id');
  end if;
  if contact_id is not null
     and not exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = sequences_test_step.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return app_hidden.sequences_test_step_send(s.id, step_key, coalesce(to_email, to_phone), contact_id, base_url, sinks);
end $$;
comment on function app_public.sequences_test_step(uuid, text, text, text, uuid, text, text[]) is
  'sequences_test_step: sends the saved email or SMS step once to to_email, to_phone or a contact (whose data fills the '
  'variables); answers {success, reason_code?, error?, message_id?}. 404 sequence, step or contact; 400 for a wait step or '
  'a recipient that does not fit the step.';
grant execute on function app_public.sequences_test_step(uuid, text, text, text, uuid, text, text[]) to svc_request;

reset role;
