-- Sequences: a sequence's SMS goes from the number people text the contact from (the
-- conversation rule: the number of the contact's location, else the organization's default),
-- not from the sequence's location or the default alone. A contact texted by a sequence from
-- the default number and by a person from its location's number had two threads on two
-- numbers, and its answer to the sequence landed in neither person's thread. Among the
-- contact's locations with a number, the sequence's own comes first; a location-bound sequence
-- whose contact is linked nowhere with a number sends from that location's number. The two
-- functions below are as they were but for the sender (build_sequence_message's `sender`,
-- claim_enrollment_messages' `sms_from` per recipient).

set local role svc_owner;

create or replace function app_private.contact_sms_sender(org uuid, contact uuid, preferred_location uuid)
returns text language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(
    (select l.sms_number from app_public.contact_locations cl
       join app_public.locations l on l.organization_id = cl.organization_id and l.id = cl.location_id
      where cl.organization_id = org and cl.contact_id = contact and l.sms_number is not null
      order by l.id is not distinct from preferred_location desc, l.created_at, l.id limit 1),
    (select l.sms_number from app_public.locations l where l.organization_id = org and l.id = preferred_location),
    (select o.default_sms_number from app_public.organizations o where o.id = org))
$$;
comment on function app_private.contact_sms_sender(uuid, uuid, uuid) is
  'The number a sequence texts a contact from, as people do (conversation_sms_send): a number of the contact''s locations (the preferred one first), else the preferred location''s, else the organization''s default.';

create or replace function app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text DEFAULT 'queued'::text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org app_public.organizations;
  message_id uuid := gen_random_uuid();
  channel text := step->>'type';
  domain text;
  sender text;
  unsubscribe_url text;
  vars jsonb;
  is_html boolean := coalesce(step->>'format' = 'html', coalesce(step->>'body', '') ~* '<(html|body|p|br|div|a|table|span|strong|em)[\s/>]');
  subject text;
  body text;
  headers jsonb := '{}';
  meta jsonb;
begin
  select * into org from app_public.organizations o where o.id = build_sequence_message.organization_id;
  if channel = 'email' then
    domain := coalesce(org.sending_email_domain, 'localhost');
    sender := 'no-reply@' || domain;
    if unsubscribe then
      unsubscribe_url := rtrim(base_url, '/') || '/unsubscribe/'
        || app_private.new_unsubscribe_token(org.id, recipient, contact_id, enrollment_id, message_id);
      headers := jsonb_build_object('List-Unsubscribe', '<' || unsubscribe_url || '>',
                                    'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click');
    end if;
    headers := jsonb_build_object('Message-ID', '<' || message_id || '@' || domain || '>') || headers;
  else
    sender := app_private.contact_sms_sender(org.id, contact_id, s.location_id);
  end if;
  vars := coalesce(app_hidden.sequence_message_variables(org.id, contact_id, s.location_id, unsubscribe_url), '{}');
  if contact_id is null then
    vars := vars || jsonb_build_object('unsubscribe_url', unsubscribe_url);
  end if;
  subject := case when channel = 'email' then app_hidden.render_template(coalesce(step->>'subject', ''), vars, false) end;
  body := app_hidden.render_template(coalesce(step->>'body', ''), vars, channel = 'email' and is_html);
  meta := jsonb_strip_nulls(jsonb_build_object('sequence_id', s.id, 'enrollment_id', enrollment_id, 'step_key', step->>'step_key',
    'message_id', message_id, 'html', case when channel = 'email' and is_html then true end))
    || case when channel = 'email' then jsonb_build_object('headers', headers) else '{}' end;
  insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
  values (org.id, message_id, channel, sender, recipient, subject, body, meta, build_sequence_message.status,
          case when build_sequence_message.status = 'sent' then now() end);
  return jsonb_build_object('organization_id', org.id, 'id', message_id, 'channel', channel, 'sender', sender,
    'recipient', recipient, 'subject', subject, 'body', body, 'meta', meta);
end $$;


create or replace function app_private.claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[], base_url text, sink_channels text[], for_run uuid DEFAULT NULL::uuid, OUT messages jsonb, OUT flight uuid[], OUT sent_count integer, OUT skipped_count integer) returns record
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  org app_public.organizations;
  step jsonb;
  slow uuid[];
  message_keys text[];
  one uuid;
  key text;
  claim jsonb;
  outcome text;
  stored uuid;
  queued uuid[] := '{}';
  sunk uuid[] := '{}';
  g record;
  channel text;
  to_sink boolean;
  is_html boolean;
  domain text;
  sms_sender text;
  location_name text;
  passing uuid[];
  skipped_ids uuid[];
  batch_messages jsonb;
  moved uuid[] := '{}';
  sent_now int := 0;
  skipped_now int := 0;
begin
  messages := '[]';
  flight := '{}';
  -- the keys whose (first) step is an email or an SMS
  message_keys := array(select k.key from (
      select distinct on (t.v->>'step_key') t.v->>'step_key' as key, t.v->>'type' as type
        from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' is not null
       order by t.v->>'step_key', t.o) k
     where k.type in ('email', 'sms'));
  -- what the per-message claim decides before its send-time checks: a step run already there
  -- (sending: unknown, or wait for it), an exit condition holding, a step removed or not a message
  slow := array(
    select e.id from app_public.enrollments e
     where e.organization_id = org_id and e.id = any(ids)
       and (exists (select 1 from app_public.step_runs sr
                    where sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key)
        or not coalesce(e.current_step_key = any(message_keys), false)
        or (jsonb_array_length(s.exit_conditions) > 0 and app_private.exit_condition_holding(e, s.exit_conditions) is not null)));
  foreach one in array slow loop
    select e.current_step_key into key from app_public.enrollments e where e.organization_id = org_id and e.id = one;
    claim := app_private.sequence_step_claim(org_id, one, key, base_url, sink_channels);
    if claim->>'action' = 'send' then
      messages := messages || jsonb_build_object('enrollment_id', one, 'step_key', key, 'message',
        case when for_run is null then claim->'message' else jsonb_set(claim->'message', '{meta,run_id}', to_jsonb(for_run)) end);
      flight := flight || one;
      queued := queued || (claim->'message'->>'id')::uuid;
    elsif claim->>'action' = 'done' then
      -- skipped (with its reason) or sent through the sink; an exit or a wait leaves no such step
      -- run and counts as cancelled when the run ends
      select sr.status, sr.message_id into outcome, stored from app_public.step_runs sr
       where sr.organization_id = org_id and sr.enrollment_id = one and sr.step_key = key;
      if outcome = 'sent' then
        sent_now := sent_now + 1;
        sunk := sunk || stored;
      elsif outcome = 'skipped' then skipped_now := skipped_now + 1; end if;
    end if;
  end loop;
  if cardinality(queued || sunk) > 0 then
    update app_private.outgoing_messages m set meta = m.meta || jsonb_strip_nulls(jsonb_build_object('run_id', for_run))
     where m.organization_id = org_id and m.id = any(queued || sunk);
    update app_private.outbox x set meta = x.meta || jsonb_strip_nulls(jsonb_build_object('run_id', for_run))
     where x.organization_id = org_id and x.id = any(sunk);
  end if;

  select * into org from app_public.organizations x where x.id = org_id;
  domain := coalesce(org.sending_email_domain, 'localhost');
  select l.name, coalesce(l.sms_number, org.default_sms_number) into location_name, sms_sender
    from (select 1) one_row left join app_public.locations l on l.organization_id = org.id and l.id = s.location_id;

  for g in
    select e.current_step_key as key, array_agg(e.id order by e.id) as ids
      from app_public.enrollments e
     where e.organization_id = org_id and e.id = any(ids) and not e.id = any(slow)
     group by e.current_step_key
  loop
    select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = g.key limit 1;
    channel := step->>'type';
    to_sink := channel = any(sink_channels);
    is_html := coalesce(step->>'format' = 'html', coalesce(step->>'body', '') ~* '<(html|body|p|br|div|a|table|span|strong|em)[\s/>]');

    -- the send-time refusals, as app_private.send_refusal and the SMS consent of the claim
    with checked as (
      select e.id, case
          when a.address is null or a.address = '' then 'missing_address'
          when channel = 'email' and exists (select 1 from app_public.email_suppressions x
                                              where x.organization_id = e.organization_id and x.email = lower(a.address)) then 'suppressed'
          when channel <> 'email' and exists (select 1 from app_public.sms_opt_outs x
                                               where x.organization_id = e.organization_id and x.phone = a.address and x.ended_at is null) then 'opted_out'
          when channel = 'sms' and not c.sms_consent then 'no_consent'
        end as refusal
        from app_public.enrollments e
        join app_public.contacts c on c.organization_id = e.organization_id and c.id = e.contact_id
       cross join lateral (select case when channel = 'email' then c.email::text else c.phone end as address) a
       where e.organization_id = org_id and e.id = any(g.ids)
    ), skipped as (
      insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
      select org_id, checked.id, g.key, channel, 'skipped', checked.refusal from checked where checked.refusal is not null
      returning enrollment_id, reason
    ), logged as (
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
      select org_id, skipped.enrollment_id, 'skipped', g.key, skipped.reason from skipped
    )
    select coalesce((select array_agg(checked.id order by checked.id) from checked where checked.refusal is null), '{}'),
           coalesce((select array_agg(skipped.enrollment_id) from skipped), '{}')
      into passing, skipped_ids;
    skipped_now := skipped_now + cardinality(skipped_ids);
    moved := moved || skipped_ids;
    continue when cardinality(passing) = 0;

    -- every message of the group rendered and written in one statement (the variables of
    -- app_hidden.sequence_message_variables, the templates and headers of build_sequence_message)
    with recipient as materialized (
      select e.id as enrollment_id, c.id as contact_id, gen_random_uuid() as message_id,
             case when channel = 'email' then c.email::text else c.phone end as address,
             c.email::text as email, c.phone,
             -- the number people text this contact from (contact_sms_sender), so replies share one thread
             case when channel = 'sms' then app_private.contact_sms_sender(org_id, c.id, s.location_id) end as sms_from,
             nullif(btrim(regexp_replace(coalesce(c.name, ''), '\s+', ' ', 'g')), '') as full_name,
             case when channel = 'email'
                  then rtrim(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=')
             end as token
        from app_public.enrollments e
        join app_public.contacts c on c.organization_id = e.organization_id and c.id = e.contact_id
       where e.organization_id = org_id and e.id = any(passing)
    ), linked as (
      select recipient.*, rtrim(base_url, '/') || '/unsubscribe/' || recipient.token as unsubscribe_url from recipient
    ), rendered as materialized (
      select linked.*,
             case when channel = 'email' then app_hidden.render_template(coalesce(step->>'subject', ''), vars.v, false) end as subject,
             app_hidden.render_template(coalesce(step->>'body', ''), vars.v, channel = 'email' and is_html) as body,
             jsonb_strip_nulls(jsonb_build_object('sequence_id', s.id, 'enrollment_id', linked.enrollment_id, 'step_key', g.key,
               'message_id', linked.message_id, 'html', case when channel = 'email' and is_html then true end))
             || case when channel = 'email'
                     then jsonb_build_object('headers', jsonb_build_object('Message-ID', '<' || linked.message_id || '@' || domain || '>',
                            'List-Unsubscribe', '<' || linked.unsubscribe_url || '>', 'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click'))
                     else '{}' end
             || jsonb_strip_nulls(jsonb_build_object('run_id', for_run)) as meta
        from linked
       cross join lateral (select jsonb_build_object(
               'contact.first_name', split_part(linked.full_name, ' ', 1),
               'contact.last_name', nullif(substr(linked.full_name, length(split_part(linked.full_name, ' ', 1)) + 2), ''),
               'contact.name', linked.full_name,
               'contact.email', linked.email,
               'contact.phone', linked.phone,
               'location.name', location_name,
               'location.phone', sms_sender,
               'organization.name', org.name,
               'unsubscribe_url', linked.unsubscribe_url) as v) vars
    ), tokens as (
      insert into app_private.unsubscribe_tokens (token_hash, organization_id, email, contact_id, enrollment_id, message_id)
      select sha256(convert_to(rendered.token, 'UTF8')), org_id, lower(rendered.address), rendered.contact_id,
             rendered.enrollment_id, rendered.message_id
        from rendered where rendered.token is not null
    ), stored_messages as (
      insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
      select org_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else coalesce(rendered.sms_from, sms_sender) end,
             rendered.address, rendered.subject, rendered.body, rendered.meta,
             case when to_sink then 'sent' else 'queued' end, case when to_sink then now() end
        from rendered
    ), sink as (
      insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
      select org_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else coalesce(rendered.sms_from, sms_sender) end,
             rendered.address, rendered.subject, rendered.body, rendered.meta
        from rendered where to_sink
    ), runs as (
      insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
      select org_id, rendered.enrollment_id, g.key, channel, case when to_sink then 'sent' else 'sending' end, rendered.message_id
        from rendered
    ), logged as (
      -- the sink reports every message delivered as it stores it (sequences.md, Analytics)
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
      select org_id, rendered.enrollment_id, t.type, g.key, rendered.message_id
        from rendered cross join unnest(array['sent', 'delivered']) with ordinality t(type, o)
       where to_sink
       order by rendered.enrollment_id, t.o
    )
    select coalesce(jsonb_agg(jsonb_build_object('enrollment_id', rendered.enrollment_id, 'step_key', g.key, 'message',
             jsonb_build_object('organization_id', org_id, 'id', rendered.message_id, 'channel', channel,
               'sender', case when channel = 'email' then 'no-reply@' || domain else coalesce(rendered.sms_from, sms_sender) end,
               'recipient', rendered.address, 'subject', rendered.subject, 'body', rendered.body, 'meta', rendered.meta))
             order by rendered.enrollment_id) filter (where not to_sink), '[]')
      into batch_messages from rendered;
    if to_sink then
      sent_now := sent_now + cardinality(passing);
      moved := moved || passing;
    else
      messages := messages || batch_messages;
      flight := flight || passing;
    end if;
  end loop;

  perform app_private.advance_enrollments(org_id, moved);
  sent_count := sent_now;
  skipped_count := skipped_now;
end $$;

reset role;
