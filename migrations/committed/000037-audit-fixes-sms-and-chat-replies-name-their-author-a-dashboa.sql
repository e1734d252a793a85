--! Previous: sha1:af20a22ba0b3fe8885cc6c084a52713b5d7cb2e3
--! Hash: sha1:fccba25f1dbd28ff57443d851376faec86627436
--! Message: Audit fixes: SMS and chat replies name their author; a dashboard key racing its creator's demotion; enrolls wait for a pause or change of steps; a removed webhook never fails a write; racing upserts of one new person; 92 local days; day delays on the schedule's calendar; next_send_at; offering_required's booking_options

--! split: 010-audit-fixes.sql
-- Fixes found by audits of concurrency, authorship and time (each with its tests):
--   * an SMS or chat reply written with a personal key names its author, as an email reply does;
--   * an organization key created in the dashboard while its creator is demoted is revoked too;
--   * an enrollment racing a pause, a deactivation or a change of steps waits for it;
--   * removing a webhook subscription never fails a customer's write that emits an event;
--   * two upserts of one new person (same email and phone) at once both answer the contact;
--   * an appointments window of 92 local days across the autumn clock change is allowed;
--   * a step's delay in days is counted on the send schedule's calendar (the same local time a
--     day later, across a clock change too), and never by the server's time zone;
--   * next_send_at is when the step is sent (next_run_at) in both enrollment lists;
--   * a booking refused with offering_required carries the whole booking_options object.
set local role svc_owner;


create or replace function app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
  person app_public.people;
  domain text;
  sender text;
  recipient text;
  subject text;
  headers jsonb := '{}';
  refusal text;
begin
  cv := app_private.conversation_locked_for_write(conversation_id);
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  -- the person a personal key acts for is the message's author on every channel (none for other keys)
  select * into person from app_public.people p where p.organization_id = org and p.id = app_hidden.current_user_id() and p.active;
  if cv.channel = 'email' then
    -- rule 3: an email goes out as a person
    if person.id is null then
      perform app_hidden.raise_error(422, 'no_acting_user',
        'An email reply goes out as a person: use a personal key (this credential acts for no one)');
    end if;
    if c.email is null then
      perform app_hidden.raise_error(422, 'channel_not_supported', 'The contact has no email address to reply to');
    end if;
    if exists (select 1 from app_public.email_suppressions s where s.organization_id = org and s.email = c.email_key) then
      perform app_hidden.raise_error(409, 'email_suppressed', 'The contact''s address is suppressed: no email goes to it');
    end if;
    select coalesce(o.sending_email_domain, 'localhost') into domain from app_public.organizations o where o.id = org;
    -- from the address the contact wrote to; who wrote it is the message's author (author_person_id)
    sender := coalesce(cv.business_address, 'inbox@' || domain);
    recipient := c.email::text;
    subject := case when coalesce(cv.subject, '') ~* '^\s*re\s*:' then cv.subject else 'Re: ' || coalesce(cv.subject, '(no subject)') end;
    headers := coalesce((select jsonb_build_object('In-Reply-To', m.provider_message_id)
                           from app_public.conversation_messages m
                          where m.organization_id = org and m.conversation_id = cv.id and m.direction = 'inbound'
                            and m.provider_message_id is not null
                          order by m.created_at desc, m.id desc limit 1), '{}');
  elsif cv.channel = 'sms' then
    if c.phone is null then
      perform app_hidden.raise_error(422, 'no_sms_number', 'The contact has no phone number to text');
    end if;
    refusal := app_private.conversation_sms_refusal(c, cv);
    if refusal is not null then
      perform app_hidden.raise_error(409, 'sms_not_permitted', refusal);
    end if;
    sender := cv.business_address;
    recipient := c.phone;
  end if;
  perform app_private.conversation_hold_for_person(cv);
  return app_private.conversation_send_answer(app_private.conversation_append_outbound(cv, 'person', person.id, body, sender, recipient,
    subject, headers, case when cv.channel = any(sinks) then 'sink' else 'caller' end));
end $$;


create or replace function app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people;
  locs uuid[] := coalesce(location_ids, '{}');
  own_locs uuid[];
  k_kind text;
  k_role text := key_role;
  k_powers text[] := coalesce(powers, '{}');
  new_id uuid;
begin
  -- The person's row is locked first, then read afresh: a change of role committing meanwhile
  -- (which revokes the person's organization keys by trigger, migration 000001) is waited for
  -- and seen, and one that comes later waits for this key and revokes it too.
  perform 1 from app_public.people p
   where p.organization_id = app_hidden.current_org_id() and p.id = app_hidden.current_user_id() for share;
  me := app_hidden.dashboard_actor();
  if kind not in ('personal', 'organization', 'organization_role', 'location_limited') then
    perform app_hidden.raise_error(400, 'bad_request', 'Choose a kind of key');
  end if;
  if not (kind = any(app_hidden.dashboard_key_kinds(me))) then
    perform app_hidden.raise_error(403, 'insufficient_role', format('Your role may not create a %s key', replace(kind, '_', ' ')));
  end if;
  if coalesce(cardinality(scopes), 0) = 0 then
    perform app_hidden.raise_error(422, 'scopes_required', 'Choose at least one scope');
  end if;
  if kind = 'personal' then
    k_kind := 'personal'; k_role := null; k_powers := '{}'; locs := '{}';
  elsif kind = 'organization' then
    k_kind := 'organization'; k_role := null; k_powers := '{}'; locs := '{}';
  else
    k_kind := 'organization';
    k_role := coalesce(k_role, 'MANAGER');
    if k_role not in ('MANAGER', 'MEMBER') then
      perform app_hidden.raise_error(400, 'bad_request', 'A key''s role is MANAGER or MEMBER');
    end if;
    if kind = 'organization_role' then locs := '{}'; end if;
    if kind = 'location_limited' and cardinality(locs) = 0 then
      perform app_hidden.raise_error(422, 'locations_required', 'Choose at least one location');
    end if;
    if k_role = 'MEMBER' then k_powers := '{}'; end if;
  end if;
  if cardinality(locs) > 0 and (select count(*) from app_public.locations l
                                 where l.organization_id = me.organization_id and l.id = any(locs)) <> cardinality(locs) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if me.role = 'manager' then
    select coalesce(array_agg(pl.location_id), '{}') into own_locs from app_public.person_locations pl
     where pl.organization_id = me.organization_id and pl.person_id = me.id;
    if k_kind = 'organization' and not (locs <@ own_locs) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager limits a key to their own locations');
    end if;
    if not (k_powers <@ me.powers) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager gives a key only powers they hold');
    end if;
  end if;
  insert into app_private.api_keys (organization_id, kind, name, created_by, role, scopes, powers, key_hash)
  values (me.organization_id, k_kind, nullif(btrim(name), ''), me.id, k_role, scopes, k_powers, key_hash)
  returning id into new_id;
  insert into app_private.api_key_locations (organization_id, api_key_id, location_id)
  select me.organization_id, new_id, l from unnest(locs) l group by l;
  -- the same rule that revokes a key when its creator changes (migration 000001)
  if k_kind = 'organization' and not (select app_private.person_may_hold_key(me, k) from app_private.api_keys k
                                        where k.organization_id = me.organization_id and k.id = new_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Your role may not create this key');
  end if;
  return new_id;
end $$;


create or replace function app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  e app_public.enrollments;
begin
  -- for share: a pause, deactivation or change of steps committing meanwhile is waited for and
  -- seen, and one that comes later waits for this enrollment and takes it along
  select * into s from app_public.sequences x where x.organization_id = org and x.id = sequences_enroll_write.sequence_id for share;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not enroll contacts in this sequence');
  end if;
  if s.status <> 'active' then
    select * into e from app_public.enrollments x
     where x.organization_id = org and x.sequence_id = s.id and x.contact_id = sequences_enroll_write.contact_id
       and x.status in ('active', 'paused');
    if found then
      return jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e));
    elsif s.status = 'inactive' then
      perform app_hidden.raise_error(409, 'sequence_inactive', 'The sequence is not active; activate it first');
    else
      perform app_hidden.raise_error(409, 'sequence_paused', 'The sequence is paused; resume it first');
    end if;
  end if;
  if s.location_id is not null and not exists (
      select 1 from app_public.contact_locations cl
       where cl.organization_id = org and cl.contact_id = sequences_enroll_write.contact_id and cl.location_id = s.location_id) then
    -- unlinked since it was enrolled: still answered as already enrolled
    select * into e from app_public.enrollments x
     where x.organization_id = org and x.sequence_id = s.id and x.contact_id = sequences_enroll_write.contact_id
       and x.status in ('active', 'paused');
    if found then
      return jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e));
    end if;
    perform app_hidden.raise_error(409, 'contact_not_at_location',
      'The sequence belongs to a location and the contact is not linked to it');
  end if;
  return app_private.enroll_one(s, sequences_enroll_write.contact_id, start_step_key, 'manual', null, now());
end $$;


create or replace function app_private.enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text, entry_event text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_by_trigger.organization_id and x.id = enroll_by_trigger.sequence_id
   for share; -- as sequences_enroll_write: a concurrent pause or change of steps is waited for
  if not found or s.status <> 'active' or s.kind <> 'automation' or jsonb_array_length(s.steps) = 0 then
    return;
  end if;
  if s.location_id is not null and not exists (
      select 1 from app_public.contact_locations cl
       where cl.organization_id = s.organization_id and cl.contact_id = enroll_by_trigger.contact_id and cl.location_id = s.location_id) then
    return;
  end if;
  perform app_private.enroll_contact(s.organization_id, s.id, enroll_by_trigger.contact_id, null, source, entry_event);
end $$;


create or replace function app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text DEFAULT NULL::text, source text DEFAULT 'manual'::text, entry_event text DEFAULT NULL::text, at timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_contact.organization_id and x.id = enroll_contact.sequence_id
   for share;
  if not found then
    raise exception 'enroll_contact: no sequence %', enroll_contact.sequence_id;
  end if;
  return app_private.enroll_one(s, contact_id, start_step_key, source, entry_event, at);
end $$;


create or replace function app_private.tg_contact_events__sequences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  g record;
begin
  for g in
    select f.organization_id, f.event, array_agg(distinct e.id) as ids
      from inserted f
      join app_public.enrollments e on e.organization_id = f.organization_id and e.contact_id = f.contact_id
       and e.entry_event = f.event and e.status in ('active', 'paused')
     where f.kind = 'cancel'
     group by f.organization_id, f.event
  loop
    perform app_private.end_enrollments(g.organization_id, g.ids, 'cancelled', 'cancel_event:' || g.event);
  end loop;
  for g in
    select f.organization_id, s.id as sequence_id, f.event, array_agg(distinct f.contact_id) as contacts
      from inserted f
      join app_private.event_subscriptions es on es.organization_id = f.organization_id and es.id = any(f.subscription_ids)
       and es.subscriber_kind = 'sequence'
      join app_public.sequences s on s.organization_id = f.organization_id and s.id = es.subscriber_id
       and s.status = 'active' and s.kind = 'automation'
     where f.kind = 'fire'
       and (s.location_id is null or exists (
             select 1 from app_public.contact_locations cl
              where cl.organization_id = f.organization_id and cl.contact_id = f.contact_id and cl.location_id = s.location_id))
     group by f.organization_id, s.id, f.event
     order by f.organization_id, s.id, f.event
  loop
    -- still active once a pause or deactivation committing meanwhile is waited for (for share)
    perform 1 from app_public.sequences x
     where x.organization_id = g.organization_id and x.id = g.sequence_id and x.status = 'active' for share;
    continue when not found;
    perform count(*) from app_private.enroll_contacts(g.organization_id, g.sequence_id, g.contacts, null, 'event', g.event);
  end loop;
  return null;
end $$;


create or replace function app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  d record;
begin
  for d in
    insert into app_public.webhook_deliveries (organization_id, subscription_id, event, occurred_at, data)
    select s.organization_id, s.id, webhook_emit.event, webhook_emit.occurred_at, webhook_emit.data
      from app_public.webhook_subscriptions s
     where s.organization_id = webhook_emit.organization_id and s.status = 'active' and webhook_emit.event = any(s.events)
    -- a subscription being removed is passed over: its delivery's foreign key would wait for the
    -- removal and then fail the customer's write (key share is what that key's check takes anyway)
    for key share of s skip locked
    returning webhook_deliveries.organization_id, webhook_deliveries.id
  loop
    perform app_private.add_job('webhook_deliver', jsonb_build_object('organization_id', d.organization_id, 'delivery_id', d.id),
      'webhook:' || d.id);
  end loop;
end $$;


create or replace function app_hidden.contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb) RETURNS app_public.contacts
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
begin
  if org is null or not app_hidden.current_reaches_all_locations() or app_hidden.current_records_level() <> 'all'
     or not app_hidden.current_has_power('contacts') then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Upserting contacts needs a credential that reaches the whole organization with the contacts power');
  end if;
  if contacts_upsert_row.phone is not null and exists (
      select 1 from app_public.contacts x
       where x.organization_id = org and x.phone = contacts_upsert_row.phone
         and x.email_key is distinct from lower(contacts_upsert_row.email::text)) then
    perform app_hidden.raise_error(409, 'conflict', 'Another contact already uses this phone number');
  end if;

  for attempt in 1..2 loop
    begin
      insert into app_public.contacts as x (organization_id, email, name, phone, field_values)
      values (org, contacts_upsert_row.email, contacts_upsert_row.name, contacts_upsert_row.phone,
              jsonb_strip_nulls(coalesce(custom_fields, '{}')))
      on conflict (organization_id, email_key) do update
         set name = coalesce(excluded.name, x.name),
             phone = coalesce(excluded.phone, x.phone),
             field_values = jsonb_strip_nulls(x.field_values || coalesce(custom_fields, '{}')),
             last_seen_at = now(),
             updated_at = now()
      returning * into c;
      return c;
    exception when unique_violation then
      -- Two upserts of one new person at once: ON CONFLICT resolves only the email, so the phone's
      -- unique index can refuse the second once the first commits. Once more, the email finds that
      -- contact and updates it; the phone on a contact of another email is the 409 above.
      if attempt = 2 or (contacts_upsert_row.phone is not null and exists (
          select 1 from app_public.contacts x
           where x.organization_id = org and x.phone = contacts_upsert_row.phone
             and x.email_key is distinct from lower(contacts_upsert_row.email::text))) then
        perform app_hidden.raise_error(409, 'conflict', 'Another contact already uses this phone number');
      end if;
    end;
  end loop;
  return c;
end $$;


create or replace function app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  total bigint;
  items jsonb;
  c_phone text;
  c_email text;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  -- spec: from defaults to now, to to 30 days after from; the window is not empty and at most 92 days
  window_from := coalesce(window_from, now());
  window_to := coalesce(window_to, window_from + interval '30 days');
  if window_to <= window_from then
    perform app_hidden.page_error('to', 'must be after from (the window is empty)');
  -- 92 days of 24 hours, and the hour an autumn clock change adds to 92 local days
  elsif window_to > window_from + interval '92 days 1 hour' then
    perform app_hidden.page_error('to', 'at most 92 days after from');
  end if;
  if contact_id is not null then
    select c.phone, c.email_key into c_phone, c_email from app_public.contacts c
     where c.organization_id = app_hidden.current_org_id() and c.id = appointments_list.contact_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
    end if;
  end if;
  select count(*) into total from app_hidden.listed_appointments(window_from, window_to, c_phone, c_email, contact_id);
  select coalesce(jsonb_agg(app_hidden.appointment_json(p.a, p.occurrence_start) order by p.starts_at, (p.a).id), '[]') into items
    from (select * from app_hidden.listed_appointments(window_from, window_to, c_phone, c_email, contact_id) x
           order by x.starts_at, (x.a).id limit page_size offset (page - 1)::bigint * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size,
                            'from', window_from, 'to', window_to);
end $$;


-- A step's delay: days as 24 hours (used where no calendar applies), hours and minutes elapsed.

create or replace function app_hidden.step_delay(step jsonb) RETURNS interval
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select coalesce((step->'delay'->>'days')::numeric, 0) * interval '24 hours'
       + coalesce((step->'delay'->>'hours')::numeric, 0) * interval '1 hour'
       + coalesce((step->'delay'->>'minutes')::numeric, 0) * interval '1 minute'
$$;


comment on function app_hidden.step_delay(jsonb) is
  'The delay of a step ({days, hours, minutes}) as elapsed time, a day as 24 hours; none is zero. app_hidden.step_due counts days on a calendar.';

-- When a step is due: days on the calendar of the sequence's send schedule (the same local time
-- that many days later, 23 or 25 hours across a clock change, as its window is read in that
-- zone; a local time the change skips moves forward by the gap), then hours and minutes as
-- elapsed time. Without a schedule a day is 24 hours. Never the session's TimeZone, which
-- interval '1 day' arithmetic on a timestamptz would follow.
create or replace function app_hidden.step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamptz)
returns timestamptz language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  days numeric := coalesce((step->'delay'->>'days')::numeric, 0);
  zone text;
begin
  if days = 0 then
    return at + app_hidden.step_delay(step);
  end if;
  zone := (app_hidden.sequence_send_schedule(step_due.organization_id, step_due.send_schedule_id)).timezone;
  if zone is null then
    return at + app_hidden.step_delay(step);
  end if;
  return ((at at time zone zone) + days * interval '1 day') at time zone zone
       + coalesce((step->'delay'->>'hours')::numeric, 0) * interval '1 hour'
       + coalesce((step->'delay'->>'minutes')::numeric, 0) * interval '1 minute';
end $$;
comment on function app_hidden.step_due(uuid, uuid, jsonb, timestamptz) is
  'When a step given at `at` is due: its days on the send schedule''s calendar (the same local time), its hours and minutes elapsed; days of 24 hours without a schedule.';
revoke execute on function app_hidden.step_due(uuid, uuid, jsonb, timestamptz) from public;
grant execute on function app_hidden.step_due(uuid, uuid, jsonb, timestamptz) to svc_request, svc_worker;


create or replace function app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  e app_public.enrollments;
  s app_public.sequences;
  next_key text;
  idx int;
  step jsonb;
  due timestamptz;
  edge jsonb;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = advance_enrollment.organization_id and x.id = advance_enrollment.enrollment_id;
  if e.status <> 'active' then
    return;
  end if;
  select * into s from app_public.sequences x where x.organization_id = e.organization_id and x.id = e.sequence_id;
  if jsonb_array_length(s.edges) > 0 then
    for edge in select value from jsonb_array_elements(s.edges) loop
      if edge->>'from' = e.current_step_key
         and (edge->'condition' is null or jsonb_typeof(edge->'condition') = 'null'
              or app_hidden.condition_holds(e.organization_id, e.contact_id, e.id, edge->'condition')) then
        next_key := edge->>'to';
        exit;
      end if;
    end loop;
    if next_key is not null then
      select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = next_key limit 1;
    end if;
  else
    select t.o into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = e.current_step_key limit 1;
  end if;
  step := case when idx is not null then s.steps->idx end;
  if step is null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'completed', 'last_step');
    return;
  end if;
  due := app_hidden.step_due(e.organization_id, s.send_schedule_id, step, at);
  update app_public.enrollments x
     set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
         next_run_at = app_hidden.sequence_next_run(e.organization_id, s.send_schedule_id, due), updated_at = at
   where x.organization_id = e.organization_id and x.id = e.id;
  perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id]);
end $$;


create or replace function app_private.advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  g record;
  s app_public.sequences;
  one uuid;
  idx int;
  step jsonb;
  due timestamptz;
begin
  for g in
    select x.sequence_id, x.current_step_key, array_agg(x.id order by x.id) as ids
      from (select y.id, y.sequence_id, y.current_step_key, y.status from app_public.enrollments y
             where y.organization_id = advance_enrollments.organization_id and y.id = any(enrollment_ids)
            offset 0) x
     where x.status = 'active'
     group by x.sequence_id, x.current_step_key
  loop
    select * into s from app_public.sequences x where x.organization_id = advance_enrollments.organization_id and x.id = g.sequence_id;
    if jsonb_array_length(s.edges) > 0 then
      foreach one in array g.ids loop
        perform app_private.advance_enrollment(advance_enrollments.organization_id, one, at);
      end loop;
      continue;
    end if;
    idx := null;
    select t.o into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = g.current_step_key limit 1;
    step := case when idx is not null then s.steps->idx end;
    if step is null then
      perform app_private.end_enrollments_set(advance_enrollments.organization_id, g.ids, 'completed', 'last_step');
      continue;
    end if;
    due := app_hidden.step_due(advance_enrollments.organization_id, s.send_schedule_id, step, at);
    update app_public.enrollments x
       set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
           next_run_at = app_hidden.sequence_next_run(advance_enrollments.organization_id, s.send_schedule_id, due), updated_at = at
     where x.organization_id = advance_enrollments.organization_id and x.id = any(g.ids);
    perform app_private.schedule_enrollment_steps(advance_enrollments.organization_id, g.ids);
  end loop;
end $$;


create or replace function app_private.enrollment_start(s app_public.sequences, start_step_key text, at timestamp with time zone, OUT idx integer, OUT step jsonb, OUT due timestamp with time zone, OUT run_at timestamp with time zone) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if start_step_key is null then
    idx := 0;
  else
    select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o)
     where t.v->>'step_key' = start_step_key limit 1;
  end if;
  step := s.steps->idx;
  if step is not null then
    due := app_hidden.step_due(s.organization_id, s.send_schedule_id, step, at);
    run_at := app_hidden.sequence_next_run(s.organization_id, s.send_schedule_id, due);
  end if;
end $$;


create or replace function app_hidden.sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid, page_size integer, skip bigint) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  ids uuid[];
  total bigint;
begin
  if not (app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all') then
    return null;
  end if;
  -- separate statements, so that each keeps its own index in a generic plan
  if contact_id is not null then
    -- one contact's enrollments are few: its index, then the sequence
    select count(*) into total from app_public.enrollments x
     where x.organization_id = org and x.contact_id = sequence_enrollments_page.contact_id
       and x.sequence_id = sequence_enrollments_page.sequence_id
       and (sequence_enrollments_page.status is null or x.status = sequence_enrollments_page.status);
    ids := array(select x.id from app_public.enrollments x
                  where x.organization_id = org and x.contact_id = sequence_enrollments_page.contact_id
                    and x.sequence_id = sequence_enrollments_page.sequence_id
                    and (sequence_enrollments_page.status is null or x.status = sequence_enrollments_page.status)
                  order by x.created_at desc, x.id limit page_size offset skip);
  elsif status is null then
    ids := array(select e.id from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = sequence_enrollments_page.sequence_id
                  order by e.created_at desc, e.id limit page_size offset skip);
  else
    ids := array(select e.id from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = sequence_enrollments_page.sequence_id
                    and e.status = sequence_enrollments_page.status
                  order by e.created_at desc, e.id limit page_size offset skip);
  end if;
  if contact_id is null then
    select coalesce(sum(c.n), 0) into total from app_private.enrollment_counts c
     where c.organization_id = org and c.sequence_id = sequence_enrollments_page.sequence_id
       and (sequence_enrollments_page.status is null or c.status = sequence_enrollments_page.status);
  end if;
  return jsonb_build_object(
    'total', total,
    'items', (select coalesce(jsonb_agg(app_hidden.enrollment_json(e)
                       || jsonb_build_object('next_send_at', coalesce(e.next_run_at, e.next_step_due_at))
                       order by e.created_at desc, e.id), '[]')
                from app_public.enrollments e where e.organization_id = org and e.id = any(ids)));
end $$;


create or replace function app_public.sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid, email text, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  who uuid := contact_id;
  page_json jsonb;
  skip bigint;
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  skip := (page - 1)::bigint * page_size;
  s := app_hidden.sequence_for_read(sequence_id);
  if status is not null and status not in ('active', 'paused', 'completed', 'cancelled', 'failed') then
    perform app_hidden.raise_error(400, 'bad_request', 'query.status: one of active, paused, completed, cancelled, failed');
  end if;
  -- email wins over contact_id. An address is carried by at most one contact of an
  -- organization (its identity: contacts_org_email_key), read under the caller's policies; an
  -- address nobody the caller sees carries is an empty page.
  if email is not null then
    select c.id into who from app_public.contacts c where c.organization_id = org and c.email_key = lower(sequences_list_enrollments.email);
    if who is null then
      return jsonb_build_object('items', '[]'::jsonb, 'total', 0, 'page', page, 'limit', page_size);
    end if;
  end if;
  -- a caller that reaches every contact: one owner's read (NULL for others, counted and paged below)
  page_json := app_hidden.sequence_enrollments_page(s.id, status, who, page_size, skip);
  if page_json is not null then
    return page_json || jsonb_build_object('page', page, 'limit', page_size);
  end if;
  if who is not null then
    select count(*) into total from app_public.enrollments e
     where e.organization_id = org and e.contact_id = who and e.sequence_id = s.id
       and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status);
    select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
             || jsonb_build_object('next_send_at', coalesce(p.next_run_at, p.next_step_due_at))
             order by p.created_at desc, p.id), '[]')
      into items
      from (select * from app_public.enrollments e
             where e.organization_id = org and e.contact_id = who and e.sequence_id = s.id
               and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status)
             order by e.created_at desc, e.id limit page_size offset skip) p;
  else
    total := app_hidden.sequence_enrollment_count(s.id, status);
    select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
             || jsonb_build_object('next_send_at', coalesce(p.next_run_at, p.next_step_due_at))
             order by p.created_at desc, p.id), '[]')
      into items
      from (select * from app_public.enrollments e
             where e.organization_id = org and e.sequence_id = s.id
               and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status)
             order by e.created_at desc, e.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;


create or replace function app_public.contacts_list_enrollments(contact_id uuid, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.enrollments e
   where e.organization_id = org and e.contact_id = contacts_list_enrollments.contact_id;
  select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
           || jsonb_build_object('sequence_name', s.name, 'next_send_at', coalesce(p.next_run_at, p.next_step_due_at))
           order by p.created_at desc, p.id), '[]')
    into items
    from (select * from app_public.enrollments e
           where e.organization_id = org and e.contact_id = contacts_list_enrollments.contact_id
           order by e.created_at desc, e.id limit page_size offset (page - 1)::bigint * page_size) p
    join app_public.sequences s on s.organization_id = p.organization_id and s.id = p.sequence_id;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;


-- The 409 offering_required's booking_options: the same object as locations_booking_options.
create or replace function app_hidden.booking_options(organization_id uuid, location_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select app_hidden.location_booking_options(booking_options.organization_id, booking_options.location_id)
$$;

reset role;
