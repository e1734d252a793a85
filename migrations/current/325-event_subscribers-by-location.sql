-- app_private.event_subscribers (000013) restated with the contact: a subscription bound to a
-- location (app_private.event_subscriptions.location_id, which the sequences keep) reaches only
-- contacts linked to that location. An event of a contact that no subscription can take gets
-- the receipt no_subscriber and leaves its key unspent, as the spec says of an event nobody
-- subscribes to; before, it was `accepted` and enrolled nobody. app_hidden.contacts_process_events
-- is restated whole for the one changed call each.
set local role svc_owner;

alter table app_private.event_subscriptions add column if not exists location_id uuid;

create or replace function app_private.event_subscribers(event text, fields jsonb, count_filter boolean, contact_id uuid)
returns uuid[]
language plpgsql stable
set search_path to pg_catalog, public, pg_temp as $$
declare
  answers numeric := case jsonb_typeof(fields->'user_message_count') when 'number' then (fields->>'user_message_count')::numeric end;
begin
  return array(
    select s.id from app_private.event_subscriptions s
     where s.organization_id = app_hidden.current_org_id() and s.event = event_subscribers.event
       and (not count_filter or s.assessment_audience is null
            or (s.assessment_audience = 'started' and answers > 0)
            or (s.assessment_audience = 'never_started' and answers = 0))
       and (s.location_id is null or exists (
             select 1 from app_public.contact_locations cl
              where cl.organization_id = s.organization_id and cl.contact_id = event_subscribers.contact_id
                and cl.location_id = s.location_id))
     order by s.id);
end $$;
comment on function app_private.event_subscribers(text, jsonb, boolean, uuid) is
  'Subscriptions of the current organization to an event that can take this contact (a location-bound one only a contact '
  'linked to its location); with count_filter, those whose assessment_audience the fields'' user_message_count meets.';
revoke execute on function app_private.event_subscribers(text, jsonb, boolean, uuid) from public;

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
  'recording what some subscription takes in app_private.contact_events; answers receipts to merge into its response '
  '(assessmentAbandonment: accepted, no_subscriber, legacy_unverified).';

drop function if exists app_private.event_subscribers(text, jsonb, boolean);

reset role;
