-- Delivery: a report about a message is recorded once per message and kind, whatever path it
-- came by (the Twilio status callback, the email events webhook, `svc admin delivery`) and
-- whatever id the provider gave it. Providers repeat their reports under new ids, and the sink
-- already reports `delivered` as it stores a message: keying reports on the provider's id alone
-- recorded the same delivery twice and analytics counted it twice. The rule lives in unique
-- indexes, so no path can write around it. A provider's `failed` or `undelivered` is the
-- enrollment's `failed` event after `sent`, counted in the step's `failed` analytics.

-- What two reports of the same kind left behind before the indexes: the first one stays.
set local role svc_owner;

delete from app_private.delivery_events d
 using app_private.delivery_events k
 where k.organization_id = d.organization_id and k.message_id = d.message_id and k.type = d.type
   and coalesce(k.detail->>'bounce', '') = coalesce(d.detail->>'bounce', '') and k.id < d.id;

-- One report per message, kind and bounce class: a soft bounce and a later hard one are two
-- reports (the hard one suppresses the address), a second soft bounce is not.
create unique index if not exists delivery_events_once_per_kind
  on app_private.delivery_events (organization_id, message_id, type, (coalesce(detail->>'bounce', '')));

delete from app_public.enrollment_events d
 using app_public.enrollment_events k
 where d.message_id is not null and k.organization_id = d.organization_id and k.enrollment_id = d.enrollment_id
   and k.message_id = d.message_id and k.type = d.type and k.id < d.id;

-- One enrollment event per message and kind: `sent`, `delivered`, `bounced`, `opened`,
-- `clicked`, `replied`, `failed`, `unknown` each happen to a message once (analytics count
-- them). Events without a message (`enrolled`, `paused`, `completed`, …) are not concerned.
create unique index if not exists enrollment_events_once_per_message
  on app_public.enrollment_events (organization_id, message_id, type) where message_id is not null;

create or replace function app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb)
returns jsonb language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  ev_id bigint;
  enrollment uuid := case when om.meta ? 'enrollment_id' then (om.meta->>'enrollment_id')::uuid end;
  -- a provider that could not deliver (Twilio's `undelivered` and `failed`, a `failed` report) is
  -- the enrollment's `failed` after `sent`; `bounced` is an email bounce
  enrollment_event text := case type when 'delivered' then 'delivered' when 'undelivered' then 'failed'
                                     when 'failed' then 'failed' when 'bounced' then 'bounced'
                                     when 'opened' then 'opened' when 'clicked' then 'clicked'
                                     -- an out-of-office answer: shown, never a reply (353-delivery-auto-replies.sql)
                                     when 'auto_replied' then 'auto_replied' end;
  hard boolean := om.channel = 'email' and (type = 'complained' or (type = 'bounced' and detail->>'bounce' = 'hard'));
  holder uuid;
begin
  if type is null or type not in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied',
                                  'opened', 'clicked') then
    perform app_hidden.raise_error(400, 'bad_request', 'Unknown delivery event');
  end if;
  -- either the same provider key again or the same kind of report for this message: nothing new
  insert into app_private.delivery_events (organization_id, message_id, event_key, type, detail)
  values (om.organization_id, om.id, delivery_message_event.event_key, delivery_message_event.type,
          coalesce(delivery_message_event.detail, '{}'))
  on conflict do nothing
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
    -- a soft bounce then a hard one: one `bounced` event (enrollment_events_once_per_message)
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select om.organization_id, e.id, enrollment_event, om.meta->>'step_key', om.id,
           case when enrollment_event = 'bounced'
                then left(concat_ws(': ', detail->>'bounce', coalesce(detail->>'reason', type)), 500)
                when enrollment_event = 'failed' then left(coalesce(detail->>'reason', detail->>'error_code', type), 500) end
      from app_public.enrollments e
     where e.organization_id = om.organization_id and e.id = enrollment
    on conflict do nothing;
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
  'A provider''s report about one message, once per event key and once per kind (delivery_events_once_per_kind): delivery_status, the enrollment''s delivered/bounced/failed/opened/clicked event (once per message), and for a hard bounce or complaint the address suppressed (a hard bounce also fails the enrollment).';

reset role;
