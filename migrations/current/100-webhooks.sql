-- Outbound webhooks for integrations (the spec's automation-platform integration; README,
-- Outbound webhooks; docs/webhooks.md): an organization subscribes an URL to events, and each
-- event the organization's data goes through is delivered to it, signed as the Standard
-- Webhooks specification says.
--
--   webhook_subscriptions        an URL and the events it takes (active, or disabled by a 410)
--   app_private.webhook_secrets  the signing secret of each (whsec_…), readable by the owner only
--   webhook_deliveries           one row per (event, subscription): what is sent (the same body,
--                                and the same webhook-id, on every attempt), attempts, next try,
--                                last answer
--
-- Events come from triggers on the tables whose rows they describe, so that every write that
-- causes one (API, public form, inbound SMS or email, the engine, an operator command) produces
-- it in its own transaction, with the delivery's graphile-worker job (key webhook:<delivery id>):
-- a committed write always has its deliveries, a rolled-back one never does.
set local role svc_owner;

create table if not exists app_public.webhook_subscriptions (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  url text not null check (length(url) <= 2000 and url ~ '^https?://[^/?#\s]+([/?#]\S*)?$'),
  events text[] not null check (
    cardinality(events) between 1 and 7 and array_position(events, null) is null
    and events <@ array['contact.created', 'contact.updated', 'enrollment.completed', 'appointment.booked',
                        'appointment.cancelled', 'message.received', 'form.submitted']),
  status text not null default 'active' check (status in ('active', 'disabled')),
  disabled_reason text check (length(disabled_reason) <= 200),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  check ((status = 'disabled') = (disabled_reason is not null))
);
comment on table app_public.webhook_subscriptions is
  'An URL of an integration that receives the organization''s events it lists, signed (Standard Webhooks). Disabled when the receiver answers 410 Gone.';
comment on column app_public.webhook_subscriptions.events is
  'The event types delivered: contact.created, contact.updated, enrollment.completed, appointment.booked, appointment.cancelled, message.received, form.submitted.';

create table if not exists app_private.webhook_secrets (
  organization_id uuid not null,
  subscription_id uuid not null,
  secret text not null check (secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'),
  primary key (organization_id, subscription_id),
  foreign key (organization_id, subscription_id) references app_public.webhook_subscriptions on delete cascade
);
comment on table app_private.webhook_secrets is
  'The signing secret of a subscription (whsec_ + 32 random bytes in base64, as Standard Webhooks writes it). Kept raw, since signing needs it; only svc_owner (the worker, operator commands, definer functions) reads it.';
alter table app_private.webhook_secrets enable row level security;

create table if not exists app_public.webhook_deliveries (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  subscription_id uuid not null,
  event text not null,
  occurred_at timestamptz not null,
  data jsonb not null check (jsonb_typeof(data) = 'object'),
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed', 'cancelled')),
  attempts int not null default 0 check (attempts >= 0),
  next_attempt_at timestamptz default now(),
  last_status int,
  last_error text check (length(last_error) <= 1000),
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, subscription_id) references app_public.webhook_subscriptions on delete cascade,
  check ((status = 'pending') = (next_attempt_at is not null)),
  check ((status = 'delivered') = (delivered_at is not null))
);
comment on table app_public.webhook_deliveries is
  'One event for one subscription: its body is {type: event, timestamp: occurred_at, data}, its webhook-id msg_<id> on every attempt. pending until a 2xx (delivered), a 410 or three days of failures (failed), or its subscription disabled (cancelled).';
create index if not exists webhook_deliveries_by_subscription
  on app_public.webhook_deliveries (organization_id, subscription_id, created_at desc);

--------------------------------------------------------------------------------
-- Reach: the organization's owners and admins (and keys without a role); nobody else, analysts
-- included (their role claim is empty). Writes only through the functions below.
--------------------------------------------------------------------------------
alter table app_public.webhook_subscriptions enable row level security;
drop policy if exists select_org_admin on app_public.webhook_subscriptions;
create policy select_org_admin on app_public.webhook_subscriptions for select using (
  organization_id = (select app_hidden.current_org_id())
  and (select coalesce(app_hidden.current_role() in ('organization', 'owner', 'admin'), false)));
grant select on app_public.webhook_subscriptions to svc_request, svc_worker;

alter table app_public.webhook_deliveries enable row level security;
drop policy if exists select_org_admin on app_public.webhook_deliveries;
create policy select_org_admin on app_public.webhook_deliveries for select using (
  organization_id = (select app_hidden.current_org_id())
  and (select coalesce(app_hidden.current_role() in ('organization', 'owner', 'admin'), false)));
grant select on app_public.webhook_deliveries to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Subscribing (svc admin webhook add|remove; the caller checked the URL's addresses)
--------------------------------------------------------------------------------
create or replace function app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text)
returns app_public.webhook_subscriptions
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_public.webhook_subscriptions;
begin
  insert into app_public.webhook_subscriptions (organization_id, url, events)
  values (webhook_subscribe.organization_id, webhook_subscribe.url,
          array(select distinct e from unnest(webhook_subscribe.events) e order by e))
  returning * into s;
  insert into app_private.webhook_secrets (organization_id, subscription_id, secret)
  values (s.organization_id, s.id, webhook_subscribe.secret);
  return s;
end $$;
comment on function app_private.webhook_subscribe(uuid, text, text[], text) is
  'Adds a subscription with its signing secret; events after the commit are delivered to it.';
revoke execute on function app_private.webhook_subscribe(uuid, text, text[], text) from public;

create or replace function app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) returns boolean
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  -- its secret and deliveries go with it: a delivery job that runs later finds nothing to send
  delete from app_public.webhook_subscriptions s
   where s.organization_id = webhook_unsubscribe.organization_id and s.id = webhook_unsubscribe.subscription_id;
  return found;
end $$;
comment on function app_private.webhook_unsubscribe(uuid, uuid) is
  'Removes a subscription, its secret and its deliveries: nothing more is sent to it, pending retries included.';
revoke execute on function app_private.webhook_unsubscribe(uuid, uuid) from public;

--------------------------------------------------------------------------------
-- Events
--------------------------------------------------------------------------------
create or replace function app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamptz, data jsonb)
returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  d record;
begin
  for d in
    insert into app_public.webhook_deliveries (organization_id, subscription_id, event, occurred_at, data)
    select s.organization_id, s.id, webhook_emit.event, webhook_emit.occurred_at, webhook_emit.data
      from app_public.webhook_subscriptions s
     where s.organization_id = webhook_emit.organization_id and s.status = 'active' and webhook_emit.event = any(s.events)
    returning webhook_deliveries.organization_id, webhook_deliveries.id
  loop
    perform app_private.add_job('webhook_deliver', jsonb_build_object('organization_id', d.organization_id, 'delivery_id', d.id),
      'webhook:' || d.id);
  end loop;
end $$;
comment on function app_private.webhook_emit(uuid, text, timestamptz, jsonb) is
  'An event of the organization: a delivery, and its job, for each active subscription that takes it, in the caller''s transaction.';
revoke execute on function app_private.webhook_emit(uuid, text, timestamptz, jsonb) from public;

create or replace function app_private.webhook_wanted(organization_id uuid, event text) returns boolean
language sql stable
set search_path to pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.webhook_subscriptions s
                  where s.organization_id = webhook_wanted.organization_id and s.status = 'active' and webhook_wanted.event = any(s.events))
$$;
comment on function app_private.webhook_wanted(uuid, text) is
  'Whether some active subscription of the organization takes the event: triggers ask before building an event''s data.';
revoke execute on function app_private.webhook_wanted(uuid, text) from public;

create or replace function app_private.webhook_contact_data(c app_public.contacts) returns jsonb
language sql stable
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone, 'stage_id', c.stage_id,
    'custom_fields', c.field_values, 'sms_consent', c.sms_consent, 'created_at', c.created_at, 'updated_at', c.updated_at)
$$;
comment on function app_private.webhook_contact_data(app_public.contacts) is 'The data of a contact.created or contact.updated event.';
revoke execute on function app_private.webhook_contact_data(app_public.contacts) from public;

create or replace function app_private.tg_contacts__webhooks_created() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not app_private.webhook_wanted(new.organization_id, 'contact.created') then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, 'contact.created', new.created_at, app_private.webhook_contact_data(new));
  return null;
end $$;
comment on function app_private.tg_contacts__webhooks_created() is 'contact.created for every new contact.';
revoke execute on function app_private.tg_contacts__webhooks_created() from public;
-- per row, asking first whether anyone listens: with no subscription that costs one index probe
-- per contact, measured cheaper than a per-statement trigger's transition table (docs/webhooks.md)
drop trigger if exists _900_webhooks_created on app_public.contacts;
create trigger _900_webhooks_created after insert on app_public.contacts
  for each row execute function app_private.tg_contacts__webhooks_created();

create or replace function app_private.tg_contacts__webhooks_updated() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  -- a contact created earlier in this same transaction (contacts_upsert filling in what it
  -- inserted) is one contact.created, not also an update
  if old.created_at = now() or not app_private.webhook_wanted(new.organization_id, 'contact.updated') then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, 'contact.updated', new.updated_at, app_private.webhook_contact_data(new));
  return null;
end $$;
comment on function app_private.tg_contacts__webhooks_updated() is
  'contact.updated when a contact''s name, email, phone, stage, custom fields or SMS consent change.';
revoke execute on function app_private.tg_contacts__webhooks_updated() from public;
drop trigger if exists _900_webhooks_updated on app_public.contacts;
create trigger _900_webhooks_updated after update of name, email, phone, stage_id, field_values, sms_consent on app_public.contacts
  for each row when (old.name is distinct from new.name or old.email is distinct from new.email or old.phone is distinct from new.phone
    or old.stage_id is distinct from new.stage_id or old.field_values is distinct from new.field_values
    or old.sms_consent is distinct from new.sms_consent)
  execute function app_private.tg_contacts__webhooks_updated();

create or replace function app_private.tg_enrollments__webhooks() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not app_private.webhook_wanted(new.organization_id, 'enrollment.completed') then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, 'enrollment.completed', new.updated_at, jsonb_build_object(
    'id', new.id, 'sequence_id', new.sequence_id, 'contact_id', new.contact_id, 'status', new.status,
    'enrolled_at', new.created_at, 'completed_at', new.updated_at));
  return null;
end $$;
comment on function app_private.tg_enrollments__webhooks() is 'enrollment.completed when an enrollment completes its sequence.';
revoke execute on function app_private.tg_enrollments__webhooks() from public;
drop trigger if exists _900_webhooks on app_public.enrollments;
create trigger _900_webhooks after update of status on app_public.enrollments
  for each row when (new.status = 'completed' and old.status is distinct from 'completed')
  execute function app_private.tg_enrollments__webhooks();

create or replace function app_private.tg_appointments__webhooks() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  event text := case when new.status = 'cancelled' then 'appointment.cancelled' else 'appointment.booked' end;
begin
  if not app_private.webhook_wanted(new.organization_id, event) then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, event,
    coalesce(new.cancelled_at, new.created_at),
    jsonb_build_object('id', new.id, 'location_id', new.location_id, 'calendar_id', new.calendar_id,
      'team_member_id', new.staff_profile_id, 'offering_id', new.offering_id, 'contact_id', new.contact_id,
      'title', new.title, 'start_time', new.starts_at, 'end_time', new.ends_at, 'recurring', new.rrule is not null,
      'status', new.status, 'cancelled_at', new.cancelled_at,
      'attendee_name', new.attendee_name, 'attendee_phone', new.attendee_phone, 'attendee_email', new.attendee_email));
  return null;
end $$;
comment on function app_private.tg_appointments__webhooks() is 'appointment.booked when an appointment is booked, appointment.cancelled when it is cancelled (blocks of time off are neither).';
revoke execute on function app_private.tg_appointments__webhooks() from public;
drop trigger if exists _900_webhooks_booked on app_public.appointments;
create trigger _900_webhooks_booked after insert on app_public.appointments
  for each row when (new.kind = 'appointment' and new.status = 'booked')
  execute function app_private.tg_appointments__webhooks();
drop trigger if exists _900_webhooks_cancelled on app_public.appointments;
create trigger _900_webhooks_cancelled after update of status on app_public.appointments
  for each row when (new.kind = 'appointment' and new.status = 'cancelled' and old.status is distinct from 'cancelled')
  execute function app_private.tg_appointments__webhooks();

create or replace function app_private.tg_conversation_messages__webhooks() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  cv app_public.conversations;
begin
  if not app_private.webhook_wanted(new.organization_id, 'message.received') then
    return null;
  end if;
  select * into cv from app_public.conversations x where x.organization_id = new.organization_id and x.id = new.conversation_id;
  perform app_private.webhook_emit(new.organization_id, 'message.received', new.created_at, jsonb_build_object(
    'id', new.id, 'conversation_id', new.conversation_id, 'contact_id', cv.contact_id, 'location_id', cv.location_id,
    'channel', new.channel, 'subject', new.subject, 'body', new.body, 'received_at', new.created_at));
  return null;
end $$;
comment on function app_private.tg_conversation_messages__webhooks() is 'message.received when a contact''s SMS, email or chat message arrives.';
revoke execute on function app_private.tg_conversation_messages__webhooks() from public;
drop trigger if exists _900_webhooks on app_public.conversation_messages;
create trigger _900_webhooks after insert on app_public.conversation_messages
  for each row when (new.direction = 'inbound')
  execute function app_private.tg_conversation_messages__webhooks();

create or replace function app_private.tg_form_submissions__webhooks() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not app_private.webhook_wanted(new.organization_id, 'form.submitted') then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, 'form.submitted', new.submitted_at, jsonb_build_object(
    'id', new.id, 'form_id', new.form_id, 'contact_id', new.contact_id, 'payload', new.payload, 'submitted_at', new.submitted_at));
  return null;
end $$;
comment on function app_private.tg_form_submissions__webhooks() is 'form.submitted when a submission is accepted (spam is not an event).';
revoke execute on function app_private.tg_form_submissions__webhooks() from public;
drop trigger if exists _900_webhooks on app_public.form_submissions;
create trigger _900_webhooks after insert on app_public.form_submissions
  for each row when (new.status = 'accepted')
  execute function app_private.tg_form_submissions__webhooks();

reset role;
