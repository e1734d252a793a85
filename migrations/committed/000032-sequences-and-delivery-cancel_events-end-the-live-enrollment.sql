--! Previous: sha1:18b39cb5c9ab507376402fe0bef903d72bcf58f0
--! Hash: sha1:6b8f2b4083f8a6bf76db9080f5c1d8b0de51a56f
--! Message: Sequences and delivery: cancel_events end the live enrollments that entered by the event even when no subscription listens to it now (a paused sequence); providers' opens and clicks are the enrollment's opened and clicked events

--! split: 010-cancel-events-without-subscription.sql
-- cancel_events reach every live enrollment that entered by the event (spec: Enrollment status,
-- "any live | event in cancel_events of contacts_upsert | cancelled").
--
-- A cancel was recorded (app_private.contact_events, whose trigger ends the enrollments) only
-- when some subscription listened to the event at that moment, and a sequence subscribes only
-- while it is active. So an enrollment of a paused sequence, or of one whose trigger changed
-- since the contact entered, stayed live, and a paused one sent again on resume. A cancel that
-- no subscription takes now ends those enrollments itself, with the same reason.
set local role svc_owner;

create or replace function app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  given jsonb := coalesce(fields, '{}');
  cancelled text;
  e jsonb;
  subscribers uuid[];
  live uuid[];
  receipt jsonb;
  answer jsonb := '{}';
begin
  if org is null or not app_hidden.current_reaches_all_locations() or app_hidden.current_records_level() <> 'all'
     or not app_hidden.current_has_power('contacts') then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Upserting contacts needs a credential that reaches the whole organization with the contacts power');
  end if;
  if not exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = contacts_process_events.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;

  for cancelled in select value from jsonb_array_elements_text(coalesce(cancel_events, '[]')) loop
    subscribers := app_private.event_subscribers(cancelled, given, false, contacts_process_events.contact_id);
    if cardinality(subscribers) > 0 then
      insert into app_private.contact_events (organization_id, contact_id, kind, event, fields, subscription_ids)
      values (org, contacts_process_events.contact_id, 'cancel', cancelled, given, subscribers);
    else
      -- nothing listens to the event now (the sequence it entered is paused, or its trigger
      -- changed since), yet the enrollments that entered by it are still live: cancelled all
      -- the same, or a paused one would send again on resume
      live := array(select e.id from app_public.enrollments e
                     where e.organization_id = org and e.contact_id = contacts_process_events.contact_id
                       and e.entry_event = cancelled and e.status in ('active', 'paused'));
      if cardinality(live) > 0 then
        perform app_private.end_enrollments(org, live, 'cancelled', 'cancel_event:' || cancelled);
      end if;
    end if;
  end loop;

  for e in select value from jsonb_array_elements(coalesce(events, '[]')) loop
    receipt := null;
    if e->>'key' is not null then
      select ce.receipt into receipt from app_private.contact_events ce
       where ce.organization_id = org and ce.kind = 'fire' and ce.event = e->>'name' and ce.key = e->>'key';
    end if;
    if receipt is null then
      subscribers := app_private.event_subscribers(e->>'name', given, true, contacts_process_events.contact_id);
      if cardinality(subscribers) = 0 then
        receipt := jsonb_build_object('status', 'no_subscriber', 'key', e->>'key');
      elsif e->>'key' is null then
        receipt := jsonb_build_object('status', 'legacy_unverified', 'key', null);
        insert into app_private.contact_events (organization_id, contact_id, kind, event, fields, subscription_ids, receipt)
        values (org, contacts_process_events.contact_id, 'fire', e->>'name', given, subscribers, receipt);
      else
        insert into app_private.contact_events (organization_id, contact_id, kind, event, key, fields, subscription_ids, receipt)
        values (org, contacts_process_events.contact_id, 'fire', e->>'name', e->>'key', given, subscribers,
                jsonb_build_object('status', 'accepted', 'key', e->>'key'))
        on conflict (organization_id, event, key) where kind = 'fire' and key is not null do nothing
        returning contact_events.receipt into receipt;
        -- a concurrent upsert accepted the same key first (and has committed)
        if receipt is null then
          select ce.receipt into receipt from app_private.contact_events ce
           where ce.organization_id = org and ce.kind = 'fire' and ce.event = e->>'name' and ce.key = e->>'key';
        end if;
      end if;
    end if;
    if e->>'name' = 'assessment_abandoned' and not answer ? 'assessmentAbandonment' then
      answer := jsonb_build_object('assessmentAbandonment', receipt);
    end if;
  end loop;
  return answer;
end $$;
comment on function app_hidden.contacts_process_events(uuid, jsonb, jsonb, jsonb) is
  'Processes the cancel_events, then the events, of a contacts_upsert against app_private.event_subscriptions, '
  'recording what some subscription takes in app_private.contact_events (a cancel no subscription listens to still '
  'cancels the live enrollments that entered by it); answers receipts to merge into its response '
  '(assessmentAbandonment: accepted, no_subscriber, legacy_unverified).';

reset role;

--! split: 020-delivery-opens-and-clicks.sql
-- Opens and clicks, as the provider reports them (its email events webhook, `svc admin delivery`):
-- recorded as the message's delivery events and, for a sequence's message, as the enrollment's
-- `opened` / `clicked` events, which the conditions `event.opened` / `event.clicked` and the
-- analytics' opened and clicked counts read (sequences.md). They leave the message's
-- delivery_status as it is: an open says nothing a `delivered` report would not, and a late
-- one must not undo a bounce.
set local role svc_owner;

alter table app_private.delivery_events drop constraint if exists delivery_events_type_check;
alter table app_private.delivery_events add constraint delivery_events_type_check
  check (type in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied',
                  'opened', 'clicked'));

create or replace function app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text,
  detail jsonb) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  ev_id bigint;
  enrollment uuid := case when om.meta ? 'enrollment_id' then (om.meta->>'enrollment_id')::uuid end;
  enrollment_event text := case type when 'delivered' then 'delivered' when 'undelivered' then 'bounced'
                                     when 'failed' then 'bounced' when 'bounced' then 'bounced'
                                     when 'opened' then 'opened' when 'clicked' then 'clicked' end;
  hard boolean := om.channel = 'email' and (type = 'complained' or (type = 'bounced' and detail->>'bounce' = 'hard'));
  holder uuid;
begin
  if type is null or type not in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied',
                                  'opened', 'clicked') then
    perform app_hidden.raise_error(400, 'bad_request', 'Unknown delivery event');
  end if;
  insert into app_private.delivery_events (organization_id, message_id, event_key, type, detail)
  values (om.organization_id, om.id, delivery_message_event.event_key, delivery_message_event.type,
          coalesce(delivery_message_event.detail, '{}'))
  on conflict on constraint delivery_events_event_key_key do nothing
  returning id into ev_id;
  if ev_id is null then
    return jsonb_build_object('known', true, 'recorded', false, 'duplicate', true, 'message_id', om.id);
  end if;
  if type not in ('auto_replied', 'opened', 'clicked')
     and not (type in ('queued', 'sent') and om.delivery_status in ('delivered', 'undelivered', 'failed', 'bounced', 'complained')) then
    update app_private.outgoing_messages m set delivery_status = delivery_message_event.type
     where m.organization_id = om.organization_id and m.id = om.id;
  end if;
  if enrollment_event is not null and enrollment is not null then
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select om.organization_id, e.id, enrollment_event, om.meta->>'step_key', om.id,
           case when enrollment_event = 'bounced'
                then left(concat_ws(': ', detail->>'bounce', coalesce(detail->>'reason', type)), 500) end
      from app_public.enrollments e
     where e.organization_id = om.organization_id and e.id = enrollment;
  end if;
  if hard then
    if type = 'bounced' and enrollment is not null then
      perform app_private.end_enrollments(om.organization_id, array[enrollment], 'failed', 'hard_bounce');
    end if;
    select c.id into holder from app_public.contacts c
     where c.organization_id = om.organization_id and c.email_key = lower(om.recipient) order by c.created_at, c.id limit 1;
    if holder is not null then
      insert into app_public.email_suppressions (organization_id, email, contact_id, source)
      values (om.organization_id, lower(om.recipient), holder, case when type = 'complained' then 'complaint' else 'bounce' end)
      on conflict do nothing;
    end if;
  end if;
  return jsonb_build_object('known', true, 'recorded', true, 'duplicate', false, 'message_id', om.id,
    'organization_id', om.organization_id, 'type', type, 'suppressed', hard and holder is not null);
end $$;
comment on function app_private.delivery_message_event(app_private.outgoing_messages, text, text, jsonb) is
  'A provider''s report about one message, once per event key: delivery_status, the enrollment''s delivered/bounced/opened/clicked event, '
  'and for a hard bounce or complaint the address suppressed (a hard bounce also fails the enrollment).';
revoke execute on function app_private.delivery_message_event(app_private.outgoing_messages, text, text, jsonb) from public;

reset role;
