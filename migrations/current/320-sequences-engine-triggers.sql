-- How contacts enter and leave sequences without sequences_enroll: events of contacts_upsert
-- (through the contacts area's extension point, app_private.event_subscriptions and
-- contact_events: db/README.md, Extension points), tags added to a contact, exits checked when
-- the event arrives, and suppressions cancelling the sequences of their channel. Every trigger
-- acts in the transaction of the write that caused it, so a receipt of contacts_upsert
-- (`accepted`) means the enrollment is committed.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Subscriptions follow the sequences
--------------------------------------------------------------------------------
-- An active automation with an event trigger subscribes to its event (with its
-- assessmentAudience filter for assessment_abandoned); any other state or trigger subscribes to
-- nothing. Kept by a trigger on the table, so every way a sequence changes (activate, pause,
-- update, deactivate) keeps it right.
-- A location-bound sequence takes only contacts linked to its location: its subscription says
-- so, and an event of a contact elsewhere finds no subscriber (receipt no_subscriber, key
-- unspent), instead of an `accepted` that enrolls nobody.
alter table app_private.event_subscriptions add column if not exists location_id uuid;
comment on column app_private.event_subscriptions.location_id is
  'The subscriber takes only contacts linked to this location (NULL: any contact of the organization).';

create or replace function app_private.tg_sequences__subscriptions() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  wanted text := case when new.status = 'active' and new.kind = 'automation' and new.trigger->>'type' = 'event'
                       and coalesce(new.trigger->>'event', '') ~ '^[a-z][a-z0-9_]{0,99}$' then new.trigger->>'event' end;
  audience text := case when new.trigger->>'event' = 'assessment_abandoned'
                         and new.trigger->>'assessmentAudience' in ('started', 'never_started') then new.trigger->>'assessmentAudience' end;
begin
  delete from app_private.event_subscriptions es
   where es.organization_id = new.organization_id and es.subscriber_kind = 'sequence' and es.subscriber_id = new.id
     and es.event is distinct from wanted;
  if wanted is not null then
    insert into app_private.event_subscriptions (organization_id, event, subscriber_kind, subscriber_id, assessment_audience,
                                                 location_id)
    values (new.organization_id, wanted, 'sequence', new.id, audience, new.location_id)
    on conflict (organization_id, event, subscriber_kind, subscriber_id)
    do update set assessment_audience = excluded.assessment_audience, location_id = excluded.location_id;
  end if;
  return null;
end $$;
comment on function app_private.tg_sequences__subscriptions() is
  'Keeps the sequence''s row of app_private.event_subscriptions: present while it is an active automation with an event trigger.';
revoke execute on function app_private.tg_sequences__subscriptions() from public;
drop trigger if exists _500_subscriptions on app_public.sequences;
create trigger _500_subscriptions after insert or update of status, kind, trigger, location_id on app_public.sequences
  for each row execute function app_private.tg_sequences__subscriptions();

create or replace function app_private.tg_sequences__unsubscribe() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  delete from app_private.event_subscriptions es
   where es.organization_id = old.organization_id and es.subscriber_kind = 'sequence' and es.subscriber_id = old.id;
  return null;
end $$;
comment on function app_private.tg_sequences__unsubscribe() is 'Drops the subscription of a deleted sequence.';
revoke execute on function app_private.tg_sequences__unsubscribe() from public;
drop trigger if exists _500_unsubscribe on app_public.sequences;
create trigger _500_unsubscribe after delete on app_public.sequences
  for each row execute function app_private.tg_sequences__unsubscribe();

--------------------------------------------------------------------------------
-- Entering: events and tags
--------------------------------------------------------------------------------
-- Enrolls the contact in an automation a trigger chose, if it is still active and the contact
-- is linked to its location (a location-bound sequence takes only those); already live in it:
-- nothing new (enroll_contact answers skipped).
create or replace function app_private.enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text,
  entry_event text) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_by_trigger.organization_id and x.id = enroll_by_trigger.sequence_id;
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
comment on function app_private.enroll_by_trigger(uuid, uuid, uuid, text, text) is
  'Enrolls a contact a trigger chose, when the sequence is an active automation with steps and the contact is at its location.';
revoke execute on function app_private.enroll_by_trigger(uuid, uuid, uuid, text, text) from public;

-- The listener of contacts_upsert's events, once per statement over the rows it inserted (an
-- upsert inserts one row per event; a bulk load thousands): `cancel` rows cancel the contacts'
-- live enrollments that entered by that event; `fire` rows enroll each contact in each active
-- automation among the subscriptions it matched (a location-bound one only contacts linked to
-- its location), one enroll_contacts call per (sequence, event).
drop trigger if exists _500_sequences on app_private.contact_events;
drop function if exists app_private.tg_contact_events__sequences();
create or replace function app_private.tg_contact_events__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
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
    perform count(*) from app_private.enroll_contacts(g.organization_id, g.sequence_id, g.contacts, null, 'event', g.event);
  end loop;
  return null;
end $$;
comment on function app_private.tg_contact_events__sequences() is
  'Sequences'' listener of contacts_upsert events, per statement: cancel rows cancel the contacts'' enrollments that entered '
  'by that event; fire rows enroll them in the subscribed sequences.';
revoke execute on function app_private.tg_contact_events__sequences() from public;
create trigger _500_sequences after insert on app_private.contact_events
  referencing new table as inserted
  for each statement execute function app_private.tg_contact_events__sequences();

-- Ends the contact's live enrollments whose exit conditions hold now (completed, with the exit
-- as reason): run when something an exit looks at arrives (a tag, a change of the contact).
create or replace function app_private.check_contact_exits(organization_id uuid, contact_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r record;
  exiting text;
begin
  for r in
    select e as enrollment, s.exit_conditions from app_public.enrollments e
      join app_public.sequences s on s.organization_id = e.organization_id and s.id = e.sequence_id
     where e.organization_id = check_contact_exits.organization_id and e.contact_id = check_contact_exits.contact_id
       and e.status in ('active', 'paused') and jsonb_array_length(s.exit_conditions) > 0
  loop
    exiting := app_private.exit_condition_holding(r.enrollment, r.exit_conditions);
    if exiting is not null then
      perform app_private.end_enrollments(check_contact_exits.organization_id, array[(r.enrollment).id], 'completed',
        'exit_condition:' || exiting);
    end if;
  end loop;
end $$;
comment on function app_private.check_contact_exits(uuid, uuid) is
  'Completes the contact''s live enrollments whose exit conditions hold now; run when a tag or a change of the contact arrives.';
revoke execute on function app_private.check_contact_exits(uuid, uuid) from public;

-- A tag added to a contact: exits on it, then automations triggered by it.
create or replace function app_private.tg_contact_tags__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  tag_name citext;
  s record;
begin
  select t.name into tag_name from app_public.tags t where t.organization_id = new.organization_id and t.id = new.tag_id;
  perform app_private.check_contact_exits(new.organization_id, new.contact_id);
  for s in
    select x.id from app_public.sequences x
     where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
       and x.trigger->>'type' = 'tag_added' and (x.trigger->>'tag')::citext = tag_name
     order by x.id
  loop
    perform app_private.enroll_by_trigger(new.organization_id, s.id, new.contact_id, 'tag_added', null);
  end loop;
  return null;
end $$;
comment on function app_private.tg_contact_tags__sequences() is
  'A tag added to a contact: completes enrollments whose exit it is, and enrolls the contact in active automations triggered by it.';
revoke execute on function app_private.tg_contact_tags__sequences() from public;
drop trigger if exists _500_sequences on app_public.contact_tags;
create trigger _500_sequences after insert on app_public.contact_tags
  for each row execute function app_private.tg_contact_tags__sequences();

-- A change of the contact (its stage, its fields): exits on it. Cheap when the contact is in no
-- sequence (one index probe).
create or replace function app_private.tg_contacts__sequence_exits() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if exists (select 1 from app_public.enrollments e
              where e.organization_id = new.organization_id and e.contact_id = new.id and e.status in ('active', 'paused')) then
    perform app_private.check_contact_exits(new.organization_id, new.id);
  end if;
  return null;
end $$;
comment on function app_private.tg_contacts__sequence_exits() is
  'A contact''s stage or fields changed: completes its live enrollments whose exit conditions now hold.';
revoke execute on function app_private.tg_contacts__sequence_exits() from public;
drop trigger if exists _500_sequence_exits on app_public.contacts;
create trigger _500_sequence_exits after update of stage_id, field_values, name, email, phone on app_public.contacts
  for each row when (old.stage_id is distinct from new.stage_id or old.field_values is distinct from new.field_values
                     or old.name is distinct from new.name or old.email is distinct from new.email or old.phone is distinct from new.phone)
  execute function app_private.tg_contacts__sequence_exits();

--------------------------------------------------------------------------------
-- Leaving: suppressions
--------------------------------------------------------------------------------
-- The triggers run before insert: contacts_suppress inserts with ON CONFLICT DO NOTHING, so an
-- address already suppressed (a contact enrolled after its suppression) inserts nothing, and
-- only a before-insert trigger sees every suppression asked for. A refused insert rolls the
-- whole write back, the cancellations with it.
-- Cancels ('suppressed') the live enrollments of the contacts listed in sequences that send on
-- the channel (an email step for email, an SMS step for sms).
create or replace function app_private.cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text)
returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  select count(*) from app_private.end_enrollments(organization_id, array(
    select e.id from app_public.enrollments e
      join app_public.sequences s on s.organization_id = e.organization_id and s.id = e.sequence_id
     where e.organization_id = cancel_channel_enrollments.organization_id and e.contact_id = any(contact_ids)
       and e.status in ('active', 'paused')
       and exists (select 1 from jsonb_array_elements(s.steps) v where v->>'type' = channel)), 'cancelled', 'suppressed');
$$;
comment on function app_private.cancel_channel_enrollments(uuid, uuid[], text) is
  'Cancels (reason suppressed) the contacts'' live enrollments in sequences with a step on the channel.';
revoke execute on function app_private.cancel_channel_enrollments(uuid, uuid[], text) from public;

create or replace function app_private.tg_email_suppressions__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform app_private.cancel_channel_enrollments(new.organization_id, array(
    select c.id from app_public.contacts c where c.organization_id = new.organization_id and c.email_key = new.email
    union select new.contact_id), 'email');
  return new;
end $$;
comment on function app_private.tg_email_suppressions__sequences() is 'An address suppressed: its contacts'' email sequences are cancelled.';
revoke execute on function app_private.tg_email_suppressions__sequences() from public;
drop trigger if exists _500_sequences on app_public.email_suppressions;
create trigger _500_sequences before insert on app_public.email_suppressions
  for each row execute function app_private.tg_email_suppressions__sequences();

create or replace function app_private.tg_sms_opt_outs__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform app_private.cancel_channel_enrollments(new.organization_id, array(
    select c.id from app_public.contacts c where c.organization_id = new.organization_id and c.phone = new.phone
    union select new.contact_id), 'sms');
  return new;
end $$;
comment on function app_private.tg_sms_opt_outs__sequences() is 'A number opted out: its contacts'' SMS sequences are cancelled.';
revoke execute on function app_private.tg_sms_opt_outs__sequences() from public;
drop trigger if exists _500_sequences on app_public.sms_opt_outs;
create trigger _500_sequences before insert on app_public.sms_opt_outs
  for each row execute function app_private.tg_sms_opt_outs__sequences();

reset role;
