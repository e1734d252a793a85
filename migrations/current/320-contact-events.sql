-- Events of contacts_upsert, extended by data: who listens to an event is a row of
-- app_private.event_subscriptions, and every event accepted is a row of
-- app_private.contact_events, which the listener's trigger (or job) reacts to.
--
-- Until now app_hidden.contacts_process_events answered no_subscriber and waited for the
-- sequences area to redefine it. Now it is the contacts area's for good (spec: Events;
-- ../shared/design/sequences.md, "Events fired by contacts_upsert"):
--   - cancel_events are processed first: each name some subscription listens to is recorded
--     (kind cancel), for the listeners to cancel what that event started for the contact;
--   - then each event: an (event, key) already accepted in the organization answers its first
--     receipt again and records nothing; an event no subscription takes (after the filters)
--     answers no_subscriber and records nothing, so its key stays unspent and a retry may still
--     enroll; otherwise it is recorded (kind fire, with the subscriptions it matched) and answers
--     accepted, or legacy_unverified when it came without a key (older clients: recorded every
--     time, never deduplicated);
--   - the one filter of the spec: a subscription to assessment_abandoned may carry an
--     assessment_audience, started (fields.user_message_count > 0) or never_started (= 0); an
--     event without a count matches only subscriptions without it.
-- Everything is written in the upsert's transaction: an upsert that fails or rolls back spends
-- no key and records nothing. With no subscriptions (today) every answer is what it was.
set local role svc_owner;

create table if not exists app_private.event_subscriptions (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  event text not null check (event ~ '^[a-z][a-z0-9_]{0,99}$'),
  subscriber_kind text not null check (subscriber_kind ~ '^[a-z][a-z0-9_]{0,49}$'),
  subscriber_id uuid not null,
  assessment_audience text check (assessment_audience in ('started', 'never_started')),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, event, subscriber_kind, subscriber_id),
  check (assessment_audience is null or event = 'assessment_abandoned')
);
comment on table app_private.event_subscriptions is
  'Who listens to an event of contacts_upsert: one row per (event, subscriber), written by the subscriber''s area '
  '(an active sequence with an event trigger). assessment_audience filters assessment_abandoned by fields.user_message_count.';
alter table app_private.event_subscriptions enable row level security;

create table if not exists app_private.contact_events (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- the order of recording, across one upsert's cancels and events
  seq bigint generated always as identity,
  contact_id uuid not null,
  kind text not null check (kind in ('cancel', 'fire')),
  event text not null check (event ~ '^[a-z][a-z0-9_]{0,99}$'),
  key text check (length(key) between 1 and 255),
  fields jsonb not null default '{}' check (jsonb_typeof(fields) = 'object'),
  subscription_ids uuid[] not null check (cardinality(subscription_ids) > 0),
  receipt jsonb,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  check ((kind = 'fire') = (receipt is not null)),
  check (kind = 'fire' or key is null)
);
comment on table app_private.contact_events is
  'Events of contacts_upsert that some subscription took (kind fire, with its receipt) and cancels of events some '
  'subscription listens to (kind cancel), in order (seq), with the subscriptions they matched. Listeners react by '
  'trigger or job; a fired (event, key) is accepted once per organization.';
create unique index if not exists contact_events_once on app_private.contact_events (organization_id, event, key)
  where kind = 'fire' and key is not null;
create index if not exists contact_events_by_contact on app_private.contact_events (organization_id, contact_id);
alter table app_private.contact_events enable row level security;

-- The subscriptions of the current organization an event (or a cancel: count_filter false)
-- reaches, in a stable order.
create or replace function app_private.event_subscribers(event text, fields jsonb, count_filter boolean) returns uuid[]
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
     order by s.id);
end $$;
comment on function app_private.event_subscribers(text, jsonb, boolean) is
  'Subscriptions of the current organization to an event; with count_filter, those whose assessment_audience the '
  'fields'' user_message_count meets.';
revoke execute on function app_private.event_subscribers(text, jsonb, boolean) from public;

-- Runs as the owner (it reads and writes app_private) for the credentials that may upsert,
-- as app_hidden.contacts_upsert_row does, and only for a contact of the current organization.
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
    subscribers := app_private.event_subscribers(cancelled, given, false);
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
      subscribers := app_private.event_subscribers(e->>'name', given, true);
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

reset role;
