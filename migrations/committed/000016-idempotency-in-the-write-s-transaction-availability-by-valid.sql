--! Previous: sha1:3d12e31a06a36fd94f2dd4cba55379e3d3a3d21a
--! Hash: sha1:9433f2404afe72c0656f9a83d133d3ebdd54dfcf
--! Message: Idempotency in the write's transaction, availability by valid starts, outbound webhooks, web chat and AI threads as interactions, trigger references, form redirects, set-based broadcast batches, SMS HELP text and the SMTP listener, metrics, OAuth metadata caching

--! split: 050-idempotency-in-the-write-transaction.sql
-- Idempotency: the key is claimed inside the write's own transaction.
--
-- Until now a call claimed its key in a short transaction of its own (idempotency_begin), ran
-- its write in a second one, and held a session-level advisory lock between the two so that a
-- retry could tell a live first call from a dead one. Every idempotent write paid two commits
-- (two WAL flushes), and a process that died between them left the key `running`, to be
-- settled as idempotency_outcome_unknown.
--
-- Every idempotent operation acts only inside the database: what it causes outside (a message,
-- a webhook) is a job enqueued in the same transaction. So the claim, the write and the stored
-- answer can commit together, or not at all:
--   * the claim takes a transaction-level advisory lock on the key. A concurrent call with the
--     same key cannot take it while the first call's transaction is open, and answers
--     idempotency_in_progress at once; after the first call commits (the lock is released
--     after the commit is visible), a retry finds the stored answer;
--   * a write that is refused or fails rolls back with its claim: the key stays free;
--   * a process killed mid-write, or a commit whose answer was lost, leaves either nothing (the
--     retry runs the call) or the committed answer (the retry gets it). Neither can be
--     mistaken, so no call is recorded as unknown any more.
-- Records left `running` or `failed` by the earlier protocol answer
-- idempotency_outcome_unknown until they expire (24 h).
--
-- Lock keys are app_private.idempotency_lock_key's, as before (same key space, see 000012
-- part 400).

set local role svc_owner;

-- The fingerprint: a hash of the request's details (computed by the caller, key left out)
-- and of the caller's access, read here from the settings authenticate made for this
-- transaction. A replay after the caller's access changed is idempotency_key_reused.
create or replace function app_hidden.idempotency_fingerprint(details text)
returns text language sql stable parallel safe
set search_path to pg_catalog, public, pg_temp as $$
  select encode(sha256(convert_to(details
    || '|' || current_setting('svc.role') || '|' || current_setting('svc.location_ids')
    || '|' || current_setting('svc.powers') || '|' || current_setting('svc.scopes'), 'UTF8')), 'hex')
$$;
comment on function app_hidden.idempotency_fingerprint(text) is
  'Fingerprint of an idempotent call: the details'' hash and the current credential''s access.';

-- In the write's transaction, before the write. Returns the stored answer of a first call
-- (response_status set), or nothing stored (the caller writes, then calls
-- idempotency_record in the same transaction); raises the 409 that applies otherwise.
-- `at` is the caller's clock, so tests can move it.
create or replace function app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamptz,
  out response_status int, out response_body jsonb)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r app_private.idempotency_keys;
  cred uuid := app_hidden.current_credential_id();
begin
  if cred is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  -- held to the end of this transaction, so until its answer is committed and visible
  if not pg_try_advisory_xact_lock(app_private.idempotency_lock_key(cred, idempotency_claim.operation_id, idempotency_claim.key)) then
    perform app_hidden.raise_error(409, 'idempotency_in_progress',
      'The first call with this idempotency_key is still running; retry shortly');
  end if;
  select * into r from app_private.idempotency_keys k
   where k.credential_id = cred and k.operation_id = idempotency_claim.operation_id and k.key = idempotency_claim.key
     and k.created_at > at - interval '24 hours';
  if not found then
    return;
  end if;
  if r.fingerprint <> app_hidden.idempotency_fingerprint(details) then
    perform app_hidden.raise_error(409, 'idempotency_key_reused',
      'This idempotency_key was used with other details (or different access); use a new key');
  elsif r.state <> 'done' then
    -- 'failed', or 'running' while this transaction holds the key's lock: a first call of the
    -- earlier protocol that died after starting
    perform app_hidden.raise_error(409, 'idempotency_outcome_unknown',
      'The first call with this idempotency_key failed after starting and may have taken effect; read the state before retrying with a new key');
  end if;
  response_status := r.response_status;
  response_body := r.response_body;
end $$;
comment on function app_hidden.idempotency_claim(text, text, text, timestamptz) is
  'Claims an idempotency key for the current transaction (advisory xact lock), or returns the stored answer, or raises the 409 that applies.';

-- After the write, in its transaction: the answer commits with it. An expired record of the
-- same key is replaced. PL/pgSQL so that its insert's plan is kept by the connection (a SQL
-- function that cannot be inlined is planned at every call).
drop function if exists app_hidden.idempotency_record(text, text, text, timestamptz, int, jsonb);
create function app_hidden.idempotency_record(operation_id text, key text, details text, at timestamptz,
  status int, body jsonb)
returns void language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  insert into app_private.idempotency_keys as k
    (credential_id, operation_id, key, organization_id, fingerprint, state, response_status, response_body, created_at)
  values (app_hidden.current_credential_id(), idempotency_record.operation_id, idempotency_record.key,
          app_hidden.current_org_id(), app_hidden.idempotency_fingerprint(details), 'done', status, body, at)
  on conflict on constraint idempotency_keys_pkey do update
     set fingerprint = excluded.fingerprint, state = 'done', response_status = excluded.response_status,
         response_body = excluded.response_body, created_at = excluded.created_at, updated_at = now();
end $$;
comment on function app_hidden.idempotency_record(text, text, text, timestamptz, int, jsonb) is
  'Stores the answer of an idempotent call in the transaction of its write.';

-- The two-transaction protocol's functions go.
drop function if exists app_hidden.idempotency_begin(text, text, text, timestamptz);
drop function if exists app_hidden.idempotency_finish(text, text, int, jsonb);
drop function if exists app_hidden.idempotency_release(text, text, boolean);

revoke execute on function app_hidden.idempotency_fingerprint(text),
  app_hidden.idempotency_claim(text, text, text, timestamptz),
  app_hidden.idempotency_record(text, text, text, timestamptz, int, jsonb) from public;
grant execute on function app_hidden.idempotency_claim(text, text, text, timestamptz),
  app_hidden.idempotency_record(text, text, text, timestamptz, int, jsonb) to svc_request;

reset role;

--! split: 060-appointments-availability-start-windows.sql
-- appointments_availability: the valid starts as one multirange.
--
-- A start s suits a free range r of some team member (or calendar) when [s, s + len) lies within
-- r, that is s in [lower(r), upper(r) - len]. The windows of every team member merged are the
-- valid starts, and each start of the day's grid is one lookup in them. Until now every start
-- was tested against every team member's open and busy multiranges (20 team members and 40
-- starts: 800 tests a call). Same answers (compared over 240 calls of the appointments bench's
-- location: days with and without bookings, DST, every offering, named team members,
-- durations); about a tenth less PostgreSQL CPU a call.
set local role svc_owner;

create or replace function app_public.appointments_availability(location_id uuid, day date, offering_id uuid default null,
  team_member_id uuid default null, postal_code text default null, country_code text default null,
  duration_minutes int default null)
returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  loc app_public.locations;
  o app_public.offerings;
  len interval;
  cc text := country_code;
  members uuid[] := '{}';
  cals uuid[] := '{}';
  slots jsonb;
begin
  select * into loc from app_public.locations l where l.organization_id = org and l.id = appointments_availability.location_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if offering_id is not null then
    select * into o from app_public.offerings x
     where x.organization_id = org and x.id = appointments_availability.offering_id and x.location_id = loc.id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
    end if;
  end if;
  len := make_interval(mins => coalesce(o.duration_minutes, appointments_availability.duration_minutes, loc.slot_interval_minutes));
  if postal_code is not null and cc is null then
    cc := upper(loc.address->>'country_code');
    if cc is null then
      perform app_hidden.raise_error(400, 'bad_request', 'query.country_code: send the country of postal_code (this location has no address to take it from)');
    end if;
  end if;
  if loc.staffed then
    members := app_hidden.eligible_team_members(org, loc.id, o.id, postal_code, cc);
    if team_member_id is not null then
      if not team_member_id = any(app_hidden.eligible_team_members(org, loc.id, null, null, null)) then
        perform app_hidden.raise_error(404, 'not_found', 'Team member not found at this location');
      end if;
      members := case when team_member_id = any(members) then array[team_member_id] else '{}' end;
    end if;
  else
    if team_member_id is not null then
      perform app_hidden.raise_error(404, 'not_found', 'Team member not found at this location (it is not staffed: it books calendars)');
    end if;
    select coalesce(array_agg(c.id order by c.name, c.id), '{}') into cals
      from app_public.calendars c where c.organization_id = org and c.location_id = loc.id;
  end if;

  -- A start s suits a free range r of some team member (or calendar) when [s, s + len) lies
  -- within r: s in [lower(r), upper(r) - len]. Those windows of every one merged are the
  -- valid starts, and each start of the grid is one lookup in them (testing every start against
  -- every team member's open and busy multiranges cost most of the call).
  with free as (
    select r
      from app_hidden.team_time(loc, members, cals, app_hidden.local_day(day, loc.timezone)) t
      cross join lateral unnest(t.open - t.busy) r
     where upper(r) - len >= lower(r)
  ), valid as (
    select coalesce(range_agg(tstzrange(lower(r), upper(r) - len, case when lower_inc(r) then '[]' else '(]' end)),
                    '{}'::tstzmultirange) as starts
      from free
  ), starts as (
    -- each opening of the location's hours on that day starts a grid of slots
    select distinct s
      from app_hidden.opening_ranges(loc.hours, loc.timezone, app_hidden.local_day(day, loc.timezone)) w
      cross join lateral generate_series(lower(w.opening), upper(w.opening) - len, make_interval(mins => loc.slot_interval_minutes)) s
     where (s at time zone loc.timezone)::date = day
  )
  select coalesce(jsonb_agg(jsonb_build_object('start', x.s, 'end', x.s + len) order by x.s), '[]')
    into slots
    from starts x, valid
   where valid.starts @> x.s;

  return jsonb_build_object(
    'location_id', loc.id,
    'date', day,
    'timezone', loc.timezone,
    'offering_id', o.id,
    'duration_minutes', extract(epoch from len)::int / 60,
    'slot_interval_minutes', loc.slot_interval_minutes,
    'team_member_ids', to_jsonb(members),
    'calendar_ids', to_jsonb(cals),
    'slots', slots);
end $$;
comment on function app_public.appointments_availability(uuid, date, uuid, uuid, text, text, int) is
  'appointments_availability: the starts on a local day where some eligible team member (or calendar) is free for the '
  'whole length, stepped by the slot interval from each opening of the location''s hours; 404 for a location, offering '
  'or team member out of reach.';
reset role;

--! split: 100-webhooks.sql
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

--! split: 101-webhooks-dashboard.sql
-- The dashboard's webhooks page (src/webhooks/dashboard.ts): an organization's owners and
-- admins list, add and remove its subscriptions, each action deciding from the signed-in
-- person's row as it is now (app_hidden.dashboard_manager_of_team: 403 for anyone else).
set local role svc_owner;

create or replace function app_hidden.dashboard_webhooks()
returns table (id uuid, url text, events text[], status text, disabled_reason text, created_at timestamptz,
               pending bigint, delivered bigint, failed bigint)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select s.id, s.url, s.events, s.status, s.disabled_reason, s.created_at,
         count(d.id) filter (where d.status = 'pending'), count(d.id) filter (where d.status = 'delivered'),
         count(d.id) filter (where d.status = 'failed')
    from app_hidden.dashboard_manager_of_team() me
    join app_public.webhook_subscriptions s on s.organization_id = me.organization_id
    left join app_public.webhook_deliveries d on d.organization_id = s.organization_id and d.subscription_id = s.id
   group by s.organization_id, s.id
   order by s.created_at, s.id
$$;
comment on function app_hidden.dashboard_webhooks() is
  'The organization''s webhook subscriptions with their deliveries counted, for an owner or admin signed in to the dashboard (never a secret).';
revoke execute on function app_hidden.dashboard_webhooks() from public;
grant execute on function app_hidden.dashboard_webhooks() to svc_request;

create or replace function app_hidden.dashboard_add_webhook(url text, events text[], secret text) returns uuid
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  return (app_private.webhook_subscribe(me.organization_id, url, events, secret)).id;
end $$;
comment on function app_hidden.dashboard_add_webhook(text, text[], text) is
  'Subscribes an URL (checked by the page: https, public addresses) to events of the signed-in owner''s or admin''s organization.';
revoke execute on function app_hidden.dashboard_add_webhook(text, text[], text) from public;
grant execute on function app_hidden.dashboard_add_webhook(text, text[], text) to svc_request;

create or replace function app_hidden.dashboard_remove_webhook(webhook_id uuid) returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  if not app_private.webhook_unsubscribe(me.organization_id, webhook_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Webhook not found');
  end if;
end $$;
comment on function app_hidden.dashboard_remove_webhook(uuid) is
  'Removes a subscription of the signed-in owner''s or admin''s organization (404 for any other id).';
revoke execute on function app_hidden.dashboard_remove_webhook(uuid) from public;
grant execute on function app_hidden.dashboard_remove_webhook(uuid) to svc_request;

reset role;

--! split: 200-sequences-trigger-references.sql
-- A sequence's trigger or exit condition that names an object by id (form_submitted's form_id,
-- appointment_booked's location_id) names one of the organization's, in the caller's reach:
-- anything else is 404 not_found, as for an unknown audience, location or send schedule
-- (sequences_create), and nothing is written. Runs as the caller, so the policies of forms and
-- locations decide reach (the operator's fixtures run as the owner: the organization only).
set local role svc_owner;

create or replace function app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) RETURNS text
language plpgsql stable
as $_$
declare
  k text;
  spec jsonb;
  v jsonb;
  cond text;
begin
  for k in select jsonb_object_keys(obj) loop
    if k <> 'type' and not fields ? k then
      return format('%s: not a field of this type (it takes %s)', left(k, 50),
        coalesce((select string_agg(f, ', ') from jsonb_object_keys(fields) f), 'no other field'));
    end if;
  end loop;
  for k, spec in select * from jsonb_each(fields) loop
    v := obj->k;
    if v is null or v = 'null' then
      if (spec->>'required')::boolean then
        return format('%s: required', k);
      end if;
      continue;
    end if;
    if spec ? 'only_when' and exists (select 1 from jsonb_each(spec->'only_when') w where obj->w.key is distinct from w.value) then
      return format('%s: only with %s', k, (select string_agg(format('%s %s', w.key, w.value #>> '{}'), ', ')
                                              from jsonb_each(spec->'only_when') w));
    end if;
    case spec->>'type'
      when 'string' then
        if jsonb_typeof(v) <> 'string' or length(v #>> '{}') < 1 then
          return format('%s: expected a non-empty string', k);
        elsif spec ? 'max_length' and length(v #>> '{}') > (spec->>'max_length')::int then
          return format('%s: at most %s characters', k, spec->>'max_length');
        elsif spec ? 'pattern' and (v #>> '{}') !~ (spec->>'pattern') then
          return format('%s: must match %s', k, spec->>'pattern');
        end if;
      when 'uuid' then
        if jsonb_typeof(v) <> 'string' or (v #>> '{}') !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
          return format('%s: expected a uuid', k);
        end if;
        if k = 'stage_id' and not exists (select 1 from app_public.pipeline_stages ps
                                            where ps.organization_id = sequence_fields_problem.organization_id
                                              and ps.id = (v #>> '{}')::uuid) then
          return format('%s: not a stage of the organization''s pipeline (contacts_list_stages lists them)', k);
        end if;
        -- another organization's form, or one out of the caller's reach: as if it did not exist
        if k = 'form_id' and not exists (select 1 from app_public.forms f
                                           where f.organization_id = sequence_fields_problem.organization_id
                                             and f.id = (v #>> '{}')::uuid) then
          perform app_hidden.raise_error(404, 'not_found', 'Form not found (forms_list lists them)');
        end if;
        if k = 'location_id' and not exists (select 1 from app_public.locations l
                                               where l.organization_id = sequence_fields_problem.organization_id
                                                 and l.id = (v #>> '{}')::uuid
                                                 and (app_hidden.current_org_id() is null or app_hidden.current_in_reach(l.id))) then
          perform app_hidden.raise_error(404, 'not_found', 'Location not found (locations_list lists them)');
        end if;
      when 'enum' then
        if jsonb_typeof(v) <> 'string' or not (spec->'values') ? (v #>> '{}') then
          return format('%s: one of %s', k, (select string_agg(x, ', ') from jsonb_array_elements_text(spec->'values') x));
        end if;
      when 'condition' then
        cond := app_hidden.condition_problem(organization_id, v);
        if cond is not null then
          return format('%s: %s', k, cond);
        end if;
      else
        return format('%s: this field''s type is not known', k);
    end case;
  end loop;
  return null;
end $_$;

grant execute on function app_hidden.sequence_fields_problem(uuid, jsonb, jsonb) to svc_request, svc_worker;

reset role;

--! split: 201-conversations-interactions.sql
-- SMS and chat threads the AI receptionist handled are interactions (spec: Interaction; what
-- contacts_list_interactions lists beside the calls of the voice webhook): one interaction per
-- conversation, written by the AI's own turn (conversation_ai_record) in the transaction that
-- records its answer or its hand-over.
--
--   the AI answers           the interaction is opened (status in_progress, started at the
--                            message answered), or reopened after a person gave the thread back
--   the AI hands over        completed, ended now (opened first when it was the AI's first turn)
--   a person takes over      (hold, or a person's reply, which holds) completed, ended now
--
-- interactions.conversation_id names the thread; REST and GraphQL do not show it (the spec's
-- Interaction shows no other field).
set local role svc_owner;

alter table app_public.interactions add column if not exists conversation_id uuid;
comment on column app_public.interactions.conversation_id is
  'The SMS or chat conversation the AI handled (NULL for calls and recorded interactions); one interaction per conversation.';
do $$
begin
  if not exists (select 1 from pg_constraint where conname = 'interactions_conversation_fk') then
    alter table app_public.interactions add constraint interactions_conversation_fk
      foreign key (organization_id, conversation_id) references app_public.conversations on delete set null (conversation_id);
  end if;
end $$;
create unique index if not exists interactions_by_conversation on app_public.interactions (organization_id, conversation_id)
  where conversation_id is not null;

-- The conversation's interaction, opened or reopened (in_progress) or completed now. `since`:
-- when a new interaction starts (the contact's message the AI took).
create or replace function app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamptz)
returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if cv.channel not in ('sms', 'chat') or status not in ('in_progress', 'completed') then
    return;
  end if;
  insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, started_at, ended_at, conversation_id)
  values (cv.organization_id, cv.contact_id, cv.location_id, cv.channel, status, coalesce(since, now()),
          case when status = 'completed' then greatest(now(), coalesce(since, now())) end, cv.id)
  on conflict (organization_id, conversation_id) where conversation_id is not null do update
    set status = excluded.status,
        ended_at = case when excluded.status = 'completed' then greatest(now(), interactions.started_at) end;
end $$;
comment on function app_private.conversation_ai_interaction(app_public.conversations, text, timestamptz) is
  'Records the AI''s handling of an SMS or chat conversation as its interaction: in_progress while it answers, completed when '
  'it hands over or a person takes over.';
revoke execute on function app_private.conversation_ai_interaction(app_public.conversations, text, timestamptz) from public;

-- A person takes the thread (hold, or a reply that holds it): the AI's interaction ends.
create or replace function app_private.tg_conversations__ai_interaction_ends() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_public.interactions i set status = 'completed', ended_at = greatest(now(), i.started_at)
   where i.organization_id = new.organization_id and i.conversation_id = new.id and i.status = 'in_progress';
  return null;
end $$;
revoke execute on function app_private.tg_conversations__ai_interaction_ends() from public;
drop trigger if exists _201_ai_interaction_ends on app_public.conversations;
create trigger _201_ai_interaction_ends after update of ai_held on app_public.conversations
  for each row when (new.ai_held and not old.ai_held)
  execute function app_private.tg_conversations__ai_interaction_ends();

-- 703's function, with the interaction recorded in the same transaction as the answer or hand-over.
create or replace function app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb,
  sinks text[]) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  cv app_public.conversations;
  c app_public.contacts;
  refusal text;
  m app_public.conversation_messages;
  asked_at timestamptz;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = conversation_ai_record.organization_id and x.id = conversation_ai_record.conversation_id for update;
  if not app_private.conversation_ai_due(cv, message_id) then
    return jsonb_build_object('action', 'none');
  end if;
  select x.created_at into asked_at from app_public.conversation_messages x
   where x.organization_id = cv.organization_id and x.id = conversation_ai_record.message_id;
  if answer->>'kind' = 'handover' or coalesce(btrim(answer->>'text'), '') = '' then
    update app_public.conversations x set ai_held = true, held_at = now(), updated_at = now()
     where x.organization_id = cv.organization_id and x.id = cv.id;
    perform app_private.conversation_ai_interaction(cv, 'completed', asked_at);
    return jsonb_build_object('action', 'handover');
  end if;
  select * into c from app_public.contacts x where x.organization_id = cv.organization_id and x.id = cv.contact_id;
  if cv.channel = 'sms' then
    -- the same rules as a person's answer (rule 6): never to an opted-out number
    refusal := case when c.phone is null then 'The contact has no phone number' else app_private.conversation_sms_refusal(c, cv) end;
    if refusal is not null then
      return jsonb_build_object('action', 'refused', 'reason', refusal);
    end if;
  end if;
  m := app_private.conversation_append_outbound(cv, 'ai', null, left(btrim(answer->>'text'), 1600), cv.business_address, c.phone,
    null, null, case when cv.channel = any(sinks) then 'sink' else 'job' end);
  perform app_private.conversation_ai_interaction(cv, 'in_progress', asked_at);
  return jsonb_build_object('action', 'reply', 'message_id', m.id);
end $$;
comment on function app_private.conversation_ai_record(uuid, uuid, uuid, jsonb, text[]) is
  'Writes the AI''s answer to an inbound message (queued for delivery) or hands the thread to a person (hold), once, and '
  'records the conversation''s interaction: nothing when the message is no longer the AI''s to answer.';
revoke execute on function app_private.conversation_ai_record(uuid, uuid, uuid, jsonb, text[]) from public;

reset role;

--! split: 202-conversations-web-chat.sql
-- Web chat from the organization's sites (src/conversations/chat.ts; docs/conversations.md,
-- "Web chat"): a visitor starts a chat conversation through a chat widget and posts messages to
-- it; the AI receptionist answers (conversation_ai_reply, queued with each message, job key
-- conversation_ai:<message id>) until a person takes over; the visitor reads the thread back.
--
--   chat_widgets               a widget of one location (or of the whole organization): its id is
--                              public (the site's page carries it), allowed_origins its sites (CORS)
--   app_private.chat_sessions  one per chat conversation the widget opened: the hash (sha-256) of
--                              the visitor's token, which the visitor shows to post and to read;
--                              the client address, for the rate of new chats per address
--
-- No credential: the public functions below are security definer and trust only the widget id,
-- the conversation id and the token's hash.
set local role svc_owner;

create table if not exists app_public.chat_widgets (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  location_id uuid,
  name text not null check (length(name) between 1 and 200),
  allowed_origins text[] not null default '{}'
    check (cardinality(allowed_origins) <= 50 and array_position(allowed_origins, null) is null
           and array_to_string(allowed_origins, ' ') ~ '^(https?://[^ /]+( |$))*$'),
  greeting text check (length(greeting) between 1 and 1000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.chat_widgets is
  'A web chat widget of a location (NULL: of the whole organization); visitors chat through it without a key.';
comment on column app_public.chat_widgets.allowed_origins is 'The sites (scheme://host[:port]) whose pages may chat through the widget (CORS).';
-- the public endpoint finds a widget by its id alone
create index if not exists chat_widgets_by_id on app_public.chat_widgets (id);

alter table app_public.chat_widgets enable row level security;
drop policy if exists select_in_reach on app_public.chat_widgets;
create policy select_in_reach on app_public.chat_widgets for select
  using (organization_id = (select app_hidden.current_org_id())
         and (location_id is null or (select app_hidden.current_reaches_all_locations())
              or location_id = any((select app_hidden.current_location_ids())::uuid[])));
grant select on app_public.chat_widgets to svc_request, svc_worker, svc_analyst;

create table if not exists app_private.chat_sessions (
  organization_id uuid not null,
  conversation_id uuid not null,
  widget_id uuid not null,
  token_hash text not null check (token_hash ~ '^[0-9a-f]{64}$'),
  client_address text check (length(client_address) <= 100),
  created_at timestamptz not null default now(),
  primary key (organization_id, conversation_id),
  foreign key (organization_id, conversation_id) references app_public.conversations on delete cascade,
  foreign key (organization_id, widget_id) references app_public.chat_widgets on delete cascade
);
comment on table app_private.chat_sessions is
  'The visitor''s side of a web chat conversation: its widget, the sha-256 of the visitor''s token, the client address.';
create index if not exists chat_sessions_by_address on app_private.chat_sessions (organization_id, client_address, created_at)
  where client_address is not null;
alter table app_private.chat_sessions enable row level security;

create or replace function app_hidden.chat_limits() returns jsonb
language sql immutable parallel safe as $$
  select jsonb_build_object('chats_per_address', 5, 'chats_window_minutes', 10, 'messages_per_minute', 10,
    'message_max_length', 2000, 'thread_max_messages', 200)
$$;
comment on function app_hidden.chat_limits() is
  'Web chat limits: new chats per client address in a window, visitor messages per conversation per minute, lengths.';
grant execute on function app_hidden.chat_limits() to svc_request;

-- What a page needs of a widget: organization (never shown), allowed origins, greeting. NULL when none.
create or replace function app_hidden.chat_widget(widget_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', w.id, 'organization_id', w.organization_id, 'allowed_origins', to_jsonb(w.allowed_origins),
    'greeting', w.greeting, 'name', w.name)
    from app_public.chat_widgets w where w.id = chat_widget.widget_id
$$;
revoke execute on function app_hidden.chat_widget(uuid) from public;
grant execute on function app_hidden.chat_widget(uuid) to svc_request;

-- A visitor's message into a conversation (locked by the caller): checked (400, in the caller's
-- transaction: nothing written), stored, and the AI's answer queued when the AI answers the thread.
create or replace function app_private.chat_inbound(cv app_public.conversations, body text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  lim jsonb := app_hidden.chat_limits();
  m app_public.conversation_messages;
  queued boolean := false;
begin
  if body is null or length(btrim(body)) < 1 or length(body) > (lim->>'message_max_length')::int then
    perform app_hidden.raise_error(400, 'bad_request', format('body.message: 1 to %s characters', lim->>'message_max_length'));
  end if;
  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
  values (cv.organization_id, cv.id, 'chat', 'inbound', 'contact', body, 'received')
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id;
  update app_public.contacts c set last_seen_at = greatest(c.last_seen_at, now())
   where c.organization_id = cv.organization_id and c.id = cv.contact_id;
  if app_hidden.conversation_response_mode(cv) = 'ai' then
    perform app_private.add_job('conversation_ai_reply',
      jsonb_build_object('organization_id', cv.organization_id, 'conversation_id', cv.id, 'message_id', m.id),
      job_key => 'conversation_ai:' || m.id);
    queued := true;
  end if;
  return jsonb_build_object('message_id', m.id, 'created_at', m.created_at, 'ai_queued', queued);
end $$;
revoke execute on function app_private.chat_inbound(app_public.conversations, text) from public;

-- A visitor starts a chat: visitor {name?, email?, phone?} (checked by src/conversations/chat.ts;
-- phone in E.164), the first message, the hash of the token the visitor got. The contact is
-- matched by phone, else email, or created (with neither: a contact with no address, named
-- when a name is given), linked to the widget's location. 429 rate_limited after
-- chats_per_address new chats from one client address in chats_window_minutes.
create or replace function app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
    -- one count per (organization, address) at a time: concurrent starts cannot all pass
    perform pg_advisory_xact_lock(hashtextextended(w.organization_id::text || '|chat|' || client_address, 0));
    if (select count(*) from app_private.chat_sessions s
         where s.organization_id = w.organization_id and s.client_address = chat_start.client_address
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
end $$;
comment on function app_hidden.chat_start(uuid, text, jsonb, text, text) is
  'A web chat visitor starts a conversation through a widget: contact matched or created, the conversation, the visitor''s '
  'token hash, the first message and the AI''s answer queued. 404 unknown widget, 429 too many chats from the address.';
revoke execute on function app_hidden.chat_start(uuid, text, jsonb, text, text) from public;
grant execute on function app_hidden.chat_start(uuid, text, jsonb, text, text) to svc_request;

-- The conversation a visitor's token opens, locked when asked; 404 for anything else (another
-- widget's conversation, a wrong token, no such conversation: the same answer).
create or replace function app_private.chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean)
returns app_public.conversations
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_private.chat_sessions;
  cv app_public.conversations;
begin
  select x.* into s from app_private.chat_sessions x
    join app_public.chat_widgets w on w.organization_id = x.organization_id and w.id = x.widget_id
   where w.id = chat_session_conversation.widget_id and x.conversation_id = chat_session_conversation.conversation_id;
  if not found or token_hash is null or s.token_hash <> token_hash then
    perform app_hidden.raise_error(404, 'not_found', 'Chat not found');
  end if;
  if lock then
    select * into cv from app_public.conversations x
     where x.organization_id = s.organization_id and x.id = s.conversation_id for update;
  else
    select * into cv from app_public.conversations x where x.organization_id = s.organization_id and x.id = s.conversation_id;
  end if;
  return cv;
end $$;
revoke execute on function app_private.chat_session_conversation(uuid, uuid, text, boolean) from public;

-- A visitor's next message. 429 rate_limited past messages_per_minute in the conversation.
create or replace function app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  lim jsonb := app_hidden.chat_limits();
  cv app_public.conversations := app_private.chat_session_conversation(widget_id, conversation_id, token_hash, true);
begin
  if (select count(*) from app_public.conversation_messages m
       where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.direction = 'inbound'
         and m.created_at > now() - interval '1 minute') >= (lim->>'messages_per_minute')::int then
    perform app_hidden.raise_error(429, 'rate_limited', 'Too many messages; wait a minute');
  end if;
  return jsonb_build_object('conversation_id', cv.id, 'response_mode', app_hidden.conversation_response_mode(cv))
    || app_private.chat_inbound(cv, body);
end $$;
comment on function app_hidden.chat_post(uuid, uuid, text, text) is
  'A web chat visitor''s message into its conversation (the token''s hash opens it), the AI''s answer queued while it answers.';
revoke execute on function app_hidden.chat_post(uuid, uuid, text, text) from public;
grant execute on function app_hidden.chat_post(uuid, uuid, text, text) to svc_request;

-- The thread as the visitor sees it: messages oldest first, after the message `after` when given
-- (a message of the thread; an unknown one is 400), at most thread_max_messages (the newest).
-- Who wrote: visitor, assistant (the AI), staff (a person), system. No people's ids, no statuses.
create or replace function app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  lim jsonb := app_hidden.chat_limits();
  cv app_public.conversations := app_private.chat_session_conversation(widget_id, conversation_id, token_hash, false);
  since app_public.conversation_messages;
begin
  if after is not null then
    select * into since from app_public.conversation_messages m
     where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.id = chat_thread.after;
    if not found then
      perform app_hidden.raise_error(400, 'bad_request', 'query.after: not a message of this chat');
    end if;
  end if;
  return jsonb_build_object('conversation_id', cv.id, 'response_mode', app_hidden.conversation_response_mode(cv),
    'messages', coalesce((
      select jsonb_agg(jsonb_build_object('id', t.id,
               'from', case t.author when 'contact' then 'visitor' when 'ai' then 'assistant' when 'person' then 'staff' else 'system' end,
               'body', t.body, 'created_at', t.created_at) order by t.created_at, t.id)
        from (select m.id, m.author, m.body, m.created_at from app_public.conversation_messages m
               where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                 and (since.id is null or (m.created_at, m.id) > (since.created_at, since.id))
               order by m.created_at desc, m.id desc limit (lim->>'thread_max_messages')::int) t), '[]'));
end $$;
comment on function app_hidden.chat_thread(uuid, uuid, text, uuid) is
  'A web chat thread as its visitor reads it (the token''s hash opens it): messages oldest first, after a message when given.';
revoke execute on function app_hidden.chat_thread(uuid, uuid, text, uuid) from public;
grant execute on function app_hidden.chat_thread(uuid, uuid, text, uuid) to svc_request;

reset role;

--! split: 203-forms-redirect.sql
-- A form's thank-you address: a plain HTML form post (a browser's, Accept: text/html) that
-- succeeds is answered 303 See Other to it; without one, the endpoint answers a short thank-you
-- page (src/forms/public.ts). forms_list and forms_get show it.
set local role svc_owner;

alter table app_public.forms add column if not exists redirect_url text;
alter table app_public.forms drop constraint if exists forms_redirect_url_check;
alter table app_public.forms add constraint forms_redirect_url_check
  check (length(redirect_url) <= 2000 and redirect_url ~ '^https?://[^\s/?#]+([/?#]\S*)?$');
comment on column app_public.forms.redirect_url is
  'Where a browser''s plain HTML post goes after a submission (303); NULL: the endpoint''s own thank-you page.';

create or replace function app_hidden.form_json(f app_public.forms) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object(
    'id', f.id,
    'name', f.name,
    'location_id', f.location_id,
    'allowed_origins', to_jsonb(f.allowed_origins),
    'redirect_url', f.redirect_url,
    'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                            'required', x.required, 'options', x.options) order by x.position)
                          from app_public.form_fields x
                         where x.organization_id = f.organization_id and x.form_id = f.id), '[]'),
    'created_at', f.created_at,
    'updated_at', f.updated_at)
$$;

create or replace function app_hidden.public_form(form_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', f.id, 'organization_id', f.organization_id, 'name', f.name,
           'allowed_origins', to_jsonb(f.allowed_origins), 'redirect_url', f.redirect_url,
           'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                                   'required', x.required, 'options', x.options) order by x.position)
                                 from app_public.form_fields x
                                where x.organization_id = f.organization_id and x.form_id = f.id), '[]'))
    from app_public.forms f where f.id = public_form.form_id
$$;

reset role;

--! split: 300-sequences-batch-steps.sql
-- The sequences engine's moves for many enrollments at once (docs/broadcasts.md, "Crash safety:
-- checkpointed batches"): a broadcast batch finishes hundreds of step runs in one transaction, and
-- the per-enrollment functions (app_private.advance_enrollment, app_private.end_enrollments) cost
-- a few statements each. These do the same in a few statements for the whole set, and leave what
-- only a per-enrollment evaluation can decide (edges with conditions) to those functions.
set local role svc_owner;

-- The per-row count of a status change (000014 part 400) costs a PL/pgSQL call and a two-row
-- insert for each enrollment; a statement that ends hundreds counts them itself, grouped, and
-- says so for the length of that statement with the transaction-local setting
-- svc.enrollment_counts = 'batched' (set just before its UPDATE and cleared just after).
drop trigger if exists _500_count_status on app_public.enrollments;
create trigger _500_count_status after update of status, sequence_id on app_public.enrollments
  for each row when ((old.status is distinct from new.status or old.sequence_id is distinct from new.sequence_id)
                     and current_setting('svc.enrollment_counts', true) is distinct from 'batched')
  execute function app_private.tg_enrollments__count_status();

-- Ends the live enrollments listed, as app_private.end_enrollments does (status, reason, the
-- schedule cleared, an event each), in one statement, the counts moved per (sequence, status)
-- rather than per row. Each row is found by its primary key and only then tested live (the
-- fence, as in 000015 part 610). Answers how many it ended.
create or replace function app_private.end_enrollments_set(organization_id uuid, enrollment_ids uuid[], status text, reason text)
returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  n int;
begin
  if status not in ('cancelled', 'completed', 'failed') then
    raise exception 'end_enrollments_set: % is not an end status', status;
  end if;
  if coalesce(cardinality(enrollment_ids), 0) = 0 then
    return 0;
  end if;
  perform set_config('svc.enrollment_counts', 'batched', true);
  with live as (
    select x.id, x.sequence_id, x.status from (
      select y.id, y.sequence_id, y.status from app_public.enrollments y
       where y.organization_id = end_enrollments_set.organization_id and y.id = any(enrollment_ids)
      offset 0) x
     where x.status in ('active', 'paused')
  ), ended as (
    update app_public.enrollments e
       set status = end_enrollments_set.status, end_reason = end_enrollments_set.reason, next_step_due_at = null,
           next_run_at = null, paused_at = null, updated_at = now()
      from live
     where e.organization_id = end_enrollments_set.organization_id and e.id = live.id
    returning e.organization_id, e.id, e.sequence_id, e.current_step_key, live.status as was
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    select ended.organization_id, ended.id, end_enrollments_set.status, ended.current_step_key, end_enrollments_set.reason from ended
  ), counted as (
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select ended.organization_id, ended.sequence_id, t.status, sum(t.n)
      from ended cross join lateral (values (ended.was, -1), (end_enrollments_set.status, 1)) t(status, n)
     group by ended.organization_id, ended.sequence_id, t.status
  )
  select count(*) into n from ended;
  perform set_config('svc.enrollment_counts', '', true);
  if n > 0 and random() < 1.0 / 32 then
    perform app_private.fold_enrollment_counts(s.organization_id, s.sequence_id)
       from (select distinct e.organization_id, e.sequence_id from app_public.enrollments e
              where e.organization_id = end_enrollments_set.organization_id and e.id = any(enrollment_ids)) s;
  end if;
  return n;
end $$;
comment on function app_private.end_enrollments_set(uuid, uuid[], text, text) is
  'Ends the live enrollments listed (cancelled, completed or failed, with a reason), set-based, with their events; answers how many.';
revoke execute on function app_private.end_enrollments_set(uuid, uuid[], text, text) from public;

-- Moves the active enrollments listed on from the step each stands on, as
-- app_private.advance_enrollment does for one: grouped by (sequence, step), a sequence without
-- edges moves the whole group in one statement (the next step in list order, due at + its delay in
-- the send window, jobs scheduled; none: completed, last_step); a sequence with edges (whose
-- conditions hold per contact) moves each through app_private.advance_enrollment.
create or replace function app_private.advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamptz default now())
returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
    due := at + app_hidden.step_delay(step);
    update app_public.enrollments x
       set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
           next_run_at = app_hidden.sequence_next_run(advance_enrollments.organization_id, s.send_schedule_id, due), updated_at = at
     where x.organization_id = advance_enrollments.organization_id and x.id = any(g.ids);
    perform app_private.schedule_enrollment_steps(advance_enrollments.organization_id, g.ids);
  end loop;
end $$;
comment on function app_private.advance_enrollments(uuid, uuid[], timestamptz) is
  'advance_enrollment for a set: each (sequence, step) group moved in one statement (next step in list order, or completed); '
  'sequences with edges one enrollment at a time.';
revoke execute on function app_private.advance_enrollments(uuid, uuid[], timestamptz) from public;

reset role;

--! split: 310-broadcasts-batch-claim.sql
-- Broadcasts: a run's batch claimed, stored and recorded set-based (docs/broadcasts.md, "Crash
-- safety: checkpointed batches"). Before, each recipient of a batch went through the engine's
-- per-message functions (app_private.sequence_step_claim, app_private.sequence_step_record), about
-- 2 ms of PL/pgSQL each; now a batch is a few statements whatever its size:
--   * broadcast_claim_batch applies the per-message claim's rules to the whole batch as joins: the
--     send-time refusals (missing_address, suppressed, opted_out, no_consent) become skipped step
--     runs with their events; the rest are rendered (the same variables and templates as
--     app_private.build_sequence_message), their unsubscribe tokens, messages and step runs
--     inserted in one statement; on a sink channel stored and recorded sent in that statement too.
--     What the per-message claim decides from state a batch rarely has (a step run already there,
--     an exit condition holding, a step removed or not a message) still goes through
--     app_private.sequence_step_claim, recipient by recipient, so every rule stays one rule.
--   * broadcast_record_batch records the transport's answers in one statement (step runs,
--     messages, events) and moves the enrollments on with app_private.advance_enrollments.
--   * the checkpoint (in_flight) is unchanged: a batch claimed and not recorded becomes `unknown`
--     (broadcast_settle_in_flight), never handed over again; now also when the run is cancelled.
set local role svc_owner;

-- The in_flight checkpoint of a run whose sender died (the caller holds the run's row, and knows no
-- process is sending it: it holds the run's advisory lock): each step run still `sending` becomes
-- `unknown` (its message may have gone), its message too, with an `unknown` event; the enrollments
-- move on (a claim) or end cancelled (the run cancelled). The checkpoint emptied, unknown counted.
-- Answers how many became unknown.
create or replace function app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean)
returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  flight uuid[];
  lost uuid[];
begin
  select r.in_flight into flight from app_public.broadcast_runs r
   where r.organization_id = broadcast_settle_in_flight.organization_id and r.id = broadcast_settle_in_flight.run_id;
  if cardinality(flight) = 0 then
    return 0;
  end if;
  with gone as (
    update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
      from app_public.enrollments e
     where e.organization_id = broadcast_settle_in_flight.organization_id and e.id = any(flight)
       and sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key
       and sr.status = 'sending'
    returning sr.enrollment_id, sr.step_key, sr.message_id
  ), messages as (
    update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
      from gone
     where m.organization_id = broadcast_settle_in_flight.organization_id and m.id = gone.message_id and m.status = 'queued'
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select broadcast_settle_in_flight.organization_id, gone.enrollment_id, 'unknown', gone.step_key, gone.message_id, 'interrupted'
      from gone
  )
  select coalesce(array_agg(gone.enrollment_id), '{}') into lost from gone;
  if cancelling then
    perform app_private.end_enrollments_set(broadcast_settle_in_flight.organization_id, lost, 'cancelled', 'run_cancelled');
  else
    perform app_private.advance_enrollments(broadcast_settle_in_flight.organization_id, lost);
  end if;
  update app_public.broadcast_runs r set in_flight = '{}', unknown = r.unknown + cardinality(lost)
   where r.organization_id = broadcast_settle_in_flight.organization_id and r.id = broadcast_settle_in_flight.run_id;
  return cardinality(lost);
end $$;
comment on function app_private.broadcast_settle_in_flight(uuid, uuid, boolean) is
  'A dead sender''s in_flight checkpoint: step runs still sending (and their messages) become unknown with an event, the '
  'enrollments moved on (or cancelled with the run), the checkpoint emptied; answers how many.';
revoke execute on function app_private.broadcast_settle_in_flight(uuid, uuid, boolean) from public;

-- Step 1 of a batch. First the checkpoint left by a process that died (broadcast_settle_in_flight).
-- Then the next `size` pending recipients (locked, in id order) are claimed as
-- app_private.sequence_step_claim claims one, for all at once:
--   * the sequence no longer active: they are cancelled (sequence_inactive);
--   * a step run already there for the step, an exit condition holding, a step removed or not an
--     email or SMS: through app_private.sequence_step_claim itself, one by one;
--   * the others, per step (a run's recipients all stand on its first one): a missing address,
--     a suppressed email address, an opted-out number or an SMS without consent is a skipped step
--     run with the reason and its event, and the enrollment moves on; every other is rendered and
--     inserted in one statement: unsubscribe token (email), message, step run `sending` (the
--     message answered for the transport and put in in_flight) or, on a sink channel, the outbox
--     row with the step run `sent` and its sent and delivered events (and the enrollment moves on).
-- The run's id is in every message's meta. Answers {action: none (run not sending) | done (nothing
-- left: run completed) | batch, messages: [{enrollment_id, step_key, message}], handled: n}.
create or replace function app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size int, base_url text,
  sink_channels text[] default '{}') returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  r app_public.broadcast_runs;
  s app_public.sequences;
  org app_public.organizations;
  step jsonb;
  ids uuid[];
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
  messages jsonb := '[]';
  flight uuid[] := '{}';
  sent_now int := 0;
  skipped_now int := 0;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = broadcast_claim_batch.organization_id and x.id = broadcast_claim_batch.run_id for update;
  if not found or r.status <> 'sending' then
    return jsonb_build_object('action', 'none');
  end if;
  if cardinality(r.in_flight) > 0 then
    perform app_private.broadcast_settle_in_flight(r.organization_id, r.id, false);
  end if;
  if r.claimed_through is null and r.recipients >= 1000 then
    -- the run's first batch: its enrollments were written a moment ago, thousands at once, and
    -- autovacuum has not sampled them yet; planned with statistics that say the organization has
    -- few enrollments, each batch's statements would read all of them rather than its own by key
    analyze app_public.enrollments;
  end if;

  ids := array(select e.id from app_public.enrollments e
                where e.organization_id = r.organization_id and e.run_id = r.id and e.status = 'active' and e.next_run_at is null
                  and e.id > coalesce(r.claimed_through, '00000000-0000-0000-0000-000000000000')
                order by e.id limit size
                  for update of e);
  if cardinality(ids) = 0 then
    perform app_private.broadcast_finish(r.organization_id, r.id);
    return jsonb_build_object('action', 'done');
  end if;
  select * into s from app_public.sequences x where x.organization_id = r.organization_id and x.id = r.sequence_id;
  if s.status <> 'active' then
    -- deactivated: what is left of the run is cancelled (the per-message claim answers none)
    perform app_private.end_enrollments_set(r.organization_id, ids, 'cancelled', 'sequence_inactive');
    update app_public.broadcast_runs x set progress_at = now(), claimed_through = ids[cardinality(ids)]
     where x.organization_id = r.organization_id and x.id = r.id;
    return jsonb_build_object('action', 'batch', 'messages', '[]'::jsonb, 'handled', cardinality(ids));
  end if;

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
     where e.organization_id = r.organization_id and e.id = any(ids)
       and (exists (select 1 from app_public.step_runs sr
                    where sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key)
        or not coalesce(e.current_step_key = any(message_keys), false)
        or (jsonb_array_length(s.exit_conditions) > 0 and app_private.exit_condition_holding(e, s.exit_conditions) is not null)));
  foreach one in array slow loop
    select e.current_step_key into key from app_public.enrollments e where e.organization_id = r.organization_id and e.id = one;
    claim := app_private.sequence_step_claim(r.organization_id, one, key, base_url, sink_channels);
    if claim->>'action' = 'send' then
      messages := messages || jsonb_build_object('enrollment_id', one, 'step_key', key, 'message',
        jsonb_set(claim->'message', '{meta,run_id}', to_jsonb(r.id)));
      flight := flight || one;
      queued := queued || (claim->'message'->>'id')::uuid;
    elsif claim->>'action' = 'done' then
      -- skipped (with its reason) or sent through the sink; an exit or a wait leaves no such step
      -- run and counts as cancelled when the run ends
      select sr.status, sr.message_id into outcome, stored from app_public.step_runs sr
       where sr.organization_id = r.organization_id and sr.enrollment_id = one and sr.step_key = key;
      if outcome = 'sent' then
        sent_now := sent_now + 1;
        sunk := sunk || stored;
      elsif outcome = 'skipped' then skipped_now := skipped_now + 1; end if;
    end if;
  end loop;
  if cardinality(queued || sunk) > 0 then
    update app_private.outgoing_messages m set meta = m.meta || jsonb_build_object('run_id', r.id)
     where m.organization_id = r.organization_id and m.id = any(queued || sunk);
    update app_private.outbox x set meta = x.meta || jsonb_build_object('run_id', r.id)
     where x.organization_id = r.organization_id and x.id = any(sunk);
  end if;

  select * into org from app_public.organizations x where x.id = r.organization_id;
  domain := coalesce(org.sending_email_domain, 'localhost');
  select l.name, coalesce(l.sms_number, org.default_sms_number) into location_name, sms_sender
    from (select 1) one_row left join app_public.locations l on l.organization_id = org.id and l.id = s.location_id;

  for g in
    select e.current_step_key as key, array_agg(e.id order by e.id) as ids
      from app_public.enrollments e
     where e.organization_id = r.organization_id and e.id = any(ids) and not e.id = any(slow)
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
       where e.organization_id = r.organization_id and e.id = any(g.ids)
    ), skipped as (
      insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
      select r.organization_id, checked.id, g.key, channel, 'skipped', checked.refusal from checked where checked.refusal is not null
      returning enrollment_id, reason
    ), logged as (
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
      select r.organization_id, skipped.enrollment_id, 'skipped', g.key, skipped.reason from skipped
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
             nullif(btrim(regexp_replace(coalesce(c.name, ''), '\s+', ' ', 'g')), '') as full_name,
             case when channel = 'email'
                  then rtrim(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=')
             end as token
        from app_public.enrollments e
        join app_public.contacts c on c.organization_id = e.organization_id and c.id = e.contact_id
       where e.organization_id = r.organization_id and e.id = any(passing)
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
             || jsonb_build_object('run_id', r.id) as meta
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
      select sha256(convert_to(rendered.token, 'UTF8')), r.organization_id, lower(rendered.address), rendered.contact_id,
             rendered.enrollment_id, rendered.message_id
        from rendered where rendered.token is not null
    ), stored_messages as (
      insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
      select r.organization_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else sms_sender end,
             rendered.address, rendered.subject, rendered.body, rendered.meta,
             case when to_sink then 'sent' else 'queued' end, case when to_sink then now() end
        from rendered
    ), sink as (
      insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
      select r.organization_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else sms_sender end,
             rendered.address, rendered.subject, rendered.body, rendered.meta
        from rendered where to_sink
    ), runs as (
      insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
      select r.organization_id, rendered.enrollment_id, g.key, channel, case when to_sink then 'sent' else 'sending' end, rendered.message_id
        from rendered
    ), logged as (
      -- the sink reports every message delivered as it stores it (sequences.md, Analytics)
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
      select r.organization_id, rendered.enrollment_id, t.type, g.key, rendered.message_id
        from rendered cross join unnest(array['sent', 'delivered']) with ordinality t(type, o)
       where to_sink
       order by rendered.enrollment_id, t.o
    )
    select coalesce(jsonb_agg(jsonb_build_object('enrollment_id', rendered.enrollment_id, 'step_key', g.key, 'message',
             jsonb_build_object('organization_id', r.organization_id, 'id', rendered.message_id, 'channel', channel,
               'sender', case when channel = 'email' then 'no-reply@' || domain else sms_sender end,
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

  perform app_private.advance_enrollments(r.organization_id, moved);
  update app_public.broadcast_runs x
     set in_flight = flight, progress_at = now(), claimed_through = ids[cardinality(ids)],
         sent = x.sent + sent_now, skipped = x.skipped + skipped_now
   where x.organization_id = r.organization_id and x.id = r.id;
  if cardinality(flight) = 0 then
    -- nothing handed over: as the per-message claim on a sink channel, the commit need not wait
    -- for the disk (a lost commit is a batch not claimed, claimed again)
    perform set_config('synchronous_commit', 'off', true);
  else
    -- the checkpoint must be on disk before the transport gets the messages
    perform set_config('synchronous_commit', 'on', true);
  end if;
  return jsonb_build_object('action', 'batch', 'messages', messages, 'handled', cardinality(ids));
end $$;
comment on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]) is
  'A run''s next batch: a dead process''s in_flight made unknown, then up to `size` recipients claimed set-based with the '
  'rules of sequence_step_claim (refusals skipped, messages rendered and written, sink sends recorded; rare cases through '
  'sequence_step_claim itself); the claimed ones become the new in_flight checkpoint.';
revoke execute on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]) from public;

-- Step 3: what the transport answered for each message of the batch ({enrollment_id, step_key,
-- message_id, error, provider_id?}), as app_private.sequence_step_record records one, for all at
-- once: only step runs still `sending` are this batch's to record; step run and message sent or
-- failed (the provider's id kept, for its delivery reports), the sent or failed event; the
-- enrollments still on that step move on; counts moved and the checkpoint emptied. The commit
-- need not wait for the disk: a lost record leaves in_flight set, and those become unknown.
create or replace function app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  eids uuid[];
  ok int;
  bad int;
  moved uuid[];
begin
  perform set_config('synchronous_commit', 'off', true);
  perform 1 from app_public.broadcast_runs r
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id for update;
  eids := array(select (x->>'enrollment_id')::uuid from jsonb_array_elements(results) x);
  perform 1 from app_public.enrollments e
   where e.organization_id = broadcast_record_batch.organization_id and e.id = any(eids) order by e.id for update;
  with answer as (
    select (x->>'enrollment_id')::uuid as enrollment_id, x->>'step_key' as step_key, (x->>'message_id')::uuid as message_id,
           x->>'error' as error, nullif(x->>'provider_id', '') as provider_id
      from jsonb_array_elements(results) x
  ), recorded as (
    update app_public.step_runs sr
       set status = case when answer.error is null then 'sent' else 'failed' end, reason = left(answer.error, 500), updated_at = now()
      from answer
     where sr.organization_id = broadcast_record_batch.organization_id and sr.enrollment_id = answer.enrollment_id
       and sr.step_key = answer.step_key and sr.message_id = answer.message_id and sr.status = 'sending'
    returning sr.enrollment_id, sr.step_key, sr.message_id, answer.error, answer.provider_id
  ), messages as (
    update app_private.outgoing_messages m
       set status = case when recorded.error is null then 'sent' else 'failed' end,
           sent_at = case when recorded.error is null then now() end, error = left(recorded.error, 1000),
           provider_id = coalesce(recorded.provider_id, m.provider_id)
      from recorded
     where m.organization_id = broadcast_record_batch.organization_id and m.id = recorded.message_id
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select broadcast_record_batch.organization_id, recorded.enrollment_id, case when recorded.error is null then 'sent' else 'failed' end,
           recorded.step_key, recorded.message_id, case when recorded.error is not null then 'transport_error' end
      from recorded
  )
  select count(*) filter (where recorded.error is null), count(*) filter (where recorded.error is not null),
         coalesce(array_agg(recorded.enrollment_id) filter (where e.status = 'active' and e.current_step_key = recorded.step_key), '{}')
    into ok, bad, moved
    from recorded
    join app_public.enrollments e on e.organization_id = broadcast_record_batch.organization_id and e.id = recorded.enrollment_id
   where e.organization_id = broadcast_record_batch.organization_id and e.id = any(eids);
  perform app_private.advance_enrollments(broadcast_record_batch.organization_id, moved);
  update app_public.broadcast_runs r set in_flight = '{}', progress_at = now(), sent = r.sent + ok, failed = r.failed + bad
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id;
end $$;
comment on function app_private.broadcast_record_batch(uuid, uuid, jsonb) is
  'A batch''s transport answers recorded set-based (step runs, messages, events; the provider''s id kept), the enrollments '
  'moved on, counts moved, the in_flight checkpoint emptied.';
revoke execute on function app_private.broadcast_record_batch(uuid, uuid, jsonb) from public;

-- Cancelling runs (sequences_cancel_schedule_run, and a schedule set again), as 000015 part 800,
-- with the batch a dead sender left: when no process holds the run (its advisory lock, which a
-- sender holds on its connection while it sends, is free), that batch's step runs still `sending`
-- become `unknown` (their messages may have gone; never handed over again) and their enrollments
-- end cancelled; a live sender records its batch itself. The rest not sent is cancelled and counted.
create or replace function app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  s app_public.sequences;
  r app_public.broadcast_runs;
  n int;
  total int := 0;
begin
  select * into s from app_public.sequences x
   where x.organization_id = app_hidden.current_org_id() and x.id = broadcast_cancel_runs.sequence_id;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    raise exception 'broadcast_cancel_runs: sequence % not writable', broadcast_cancel_runs.sequence_id;
  end if;
  for r in
    select * from app_public.broadcast_runs x
     where x.organization_id = s.organization_id and x.sequence_id = s.id and x.status = 'sending'
       and (broadcast_cancel_runs.run_id is null or x.id = broadcast_cancel_runs.run_id)
     for update
  loop
    if cardinality(r.in_flight) > 0 and pg_try_advisory_xact_lock(hashtextextended('svc.broadcast_run:' || r.id, 0)) then
      perform app_private.broadcast_settle_in_flight(r.organization_id, r.id, true);
    end if;
    n := app_private.end_enrollments_set(s.organization_id, array(
      select e.id from app_public.enrollments e
       where e.organization_id = s.organization_id and e.run_id = r.id and e.status = 'active' and e.next_run_at is null
         and not e.id = any(r.in_flight)), 'cancelled', 'run_cancelled');
    update app_public.broadcast_runs x set status = 'cancelled', finished_at = now(), cancelled = x.cancelled + n
     where x.organization_id = r.organization_id and x.id = r.id;
    total := total + n;
  end loop;
  return total;
end $$;
comment on function app_hidden.broadcast_cancel_runs(uuid, uuid) is
  'Cancels the runs sending of a broadcast (or one run): a dead sender''s in_flight batch made unknown, what has not gone '
  'cancelled and counted; answers how many were cancelled.';
revoke all on function app_hidden.broadcast_cancel_runs(uuid, uuid) from public;
grant execute on function app_hidden.broadcast_cancel_runs(uuid, uuid) to svc_request;

reset role;

--! split: 410-delivery-sms-help.sql
-- Delivery, SMS HELP: an organization's own answer to HELP (and INFO). Carriers expect the
-- answer to name the program and how to reach it, and to say how to opt out. The setting is
-- app_public.organizations.sms_help_text (fixture `organization.sms_help_text`, `svc admin org
-- update --sms-help TEXT`, '' for the default); app_private.sms_help_reply makes sure the answer
-- carries both: the business's name is put first when the text does not name it, and "Reply
-- STOP to unsubscribe." is added when it says nothing of STOP. Without a setting the default
-- names the business, the number texted and STOP/START. conversations_inbound_sms (the
-- conversations area's, 701-…) is restated here only to answer HELP through it.
set local role svc_owner;

alter table app_public.organizations add column if not exists sms_help_text text
  constraint organizations_sms_help_text_check check (sms_help_text is null or length(sms_help_text) between 1 and 300);
comment on column app_public.organizations.sms_help_text is
  'The answer to an SMS HELP/INFO (1 to 300 characters); null: the default, with the business''s name, the number and STOP.';

create or replace function app_private.sms_help_reply(org uuid, business_number text) returns text
language sql stable
set search_path to pg_catalog, public, pg_temp as $$
  select case
    when o.sms_help_text is null then
      o.name || ': for help, call or text ' || business_number || ' or reply with your question. '
        || 'Msg & data rates may apply; reply STOP to unsubscribe, START to resubscribe.'
    else
      case when strpos(lower(o.sms_help_text), lower(o.name)) > 0 then '' else o.name || ': ' end
        || o.sms_help_text
        || case when o.sms_help_text ~* '\mstop\M' then '' else ' Reply STOP to unsubscribe.' end
  end
  from app_public.organizations o where o.id = org
$$;
comment on function app_private.sms_help_reply(uuid, text) is
  'The answer to HELP/INFO sent from business_number: the organization''s sms_help_text, named and with STOP, or the default.';
revoke execute on function app_private.sms_help_reply(uuid, text) from public;

create or replace function app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid;
  org_name text;
  location uuid;
  c app_public.contacts;
  made boolean;
  cv app_public.conversations;
  m app_public.conversation_messages;
  keyword text := app_private.sms_keyword(body);
  answer text;
  reply app_public.conversation_messages;
  ai_queued boolean := false;
begin
  if to_number !~ '^\+[1-9][0-9]{6,14}$' or from_number !~ '^\+[1-9][0-9]{6,14}$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are E.164 numbers');
  end if;
  if body is null or length(body) not between 1 and 20000 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: 1 to 20000 characters');
  end if;
  select l.organization_id, l.id into org, location from app_public.locations l
   where l.sms_number = to_number order by l.created_at, l.id limit 1;
  if org is null then
    select o.id into org from app_public.organizations o where o.default_sms_number = to_number order by o.created_at, o.id limit 1;
  end if;
  if org is null then
    perform app_hidden.raise_error(404, 'not_found', 'No organization texts from ' || to_number);
  end if;
  select o.name into org_name from app_public.organizations o where o.id = org;

  if provider_id is not null then
    select * into m from app_public.conversation_messages x where x.organization_id = org and x.provider_message_id = provider_id;
    if found then
      select * into cv from app_public.conversations x where x.organization_id = org and x.id = m.conversation_id;
      return jsonb_build_object('organization_id', org, 'conversation_id', m.conversation_id, 'message_id', m.id,
        'contact_id', cv.contact_id, 'duplicate', true);
    end if;
  end if;

  select x.created into made from app_private.inbound_contact(org, location, from_number, null) x;
  select * into c from app_public.contacts x where x.organization_id = org and x.phone = from_number;

  insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
  values (org, c.id, coalesce(location, app_private.contact_only_location(org, c.id)), 'sms', to_number)
  on conflict (organization_id, contact_id, business_address) where channel = 'sms' do nothing;
  select * into cv from app_public.conversations x
   where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = to_number
     for update;

  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status,
    provider_message_id)
  values (org, cv.id, 'sms', 'inbound', 'contact', body, 'received', provider_id)
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = org and x.id = cv.id;

  if keyword = 'stop' then
    insert into app_public.sms_opt_outs (organization_id, phone, contact_id, source) values (org, c.phone, c.id, 'keyword')
    on conflict (organization_id, phone) where ended_at is null do nothing;
    update app_public.contacts x set sms_consent = false, sms_consent_at = null, sms_consent_source = null, updated_at = now()
     where x.organization_id = org and x.id = c.id;
    answer := org_name || ': you are unsubscribed and will get no more messages from us. Reply START to resubscribe.';
  elsif keyword = 'start' then
    update app_public.sms_opt_outs o set ended_at = greatest(o.created_at, now())
     where o.organization_id = org and o.phone = c.phone and o.ended_at is null;
    update app_public.contacts x set sms_consent = true, sms_consent_at = now(), sms_consent_source = 'SMS keyword START',
           updated_at = now()
     where x.organization_id = org and x.id = c.id;
    answer := org_name || ': you are resubscribed to our messages. Reply HELP for help, STOP to unsubscribe. '
      || 'Msg & data rates may apply.';
  elsif keyword = 'help' then
    answer := app_private.sms_help_reply(org, to_number);
  end if;

  if keyword is null then
    perform app_private.conversation_sequence_reply(org, 'sms', c.phone, to_number, null);
  end if;
  if answer is not null then
    reply := app_private.conversation_append_outbound(cv, 'system', null, answer, to_number, c.phone, null, null, 'job');
  elsif app_hidden.conversation_response_mode(cv) = 'ai' then
    perform app_private.add_job('conversation_ai_reply',
      jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id),
      job_key => 'conversation_ai:' || m.id);
    ai_queued := true;
  end if;
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id, 'contact_id', c.id,
    'contact_created', made, 'keyword', keyword, 'reply_message_id', reply.id, 'ai_queued', ai_queued);
end $$;
comment on function app_private.conversations_inbound_sms(text, text, text, text) is
  'An SMS arrives at one of the organization''s numbers: the contact matched by phone or created, the thread continued or '
  'opened, STOP/START/HELP recorded and answered, anything else left to the AI while it answers. Idempotent on provider_id.';
revoke execute on function app_private.conversations_inbound_sms(text, text, text, text) from public;

reset role;

--! split: 420-delivery-smtp-listener.sql
-- Delivery, the optional SMTP listener (src/delivery/smtp_listener.ts, SVC_SMTP_LISTEN): at RCPT
-- TO it accepts only an address our Reply-To named, reply+TOKEN@ the domain the message was sent
-- from, TOKEN an email message of ours (its id, hex). Anything else is refused there (550): the
-- listener relays nothing and takes no mail for unknown tokens. What it accepts then goes through
-- app_hidden.delivery_inbound_email, as the signed MIME webhook's mail does.
set local role svc_owner;

create or replace function app_hidden.delivery_reply_address_known(address text) returns boolean
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select exists (
    select 1
      from (select substring(lower(address) from '^reply\+([0-9a-f]{32})@[^@\s]+$') as token) t
      join app_private.outgoing_messages m
        on m.id = (substr(t.token, 1, 8) || '-' || substr(t.token, 9, 4) || '-' || substr(t.token, 13, 4) || '-'
                   || substr(t.token, 17, 4) || '-' || substr(t.token, 21))::uuid
     where t.token is not null and m.channel = 'email'
       and lower(split_part(address, '@', 2)) = coalesce(nullif(lower(split_part(m.sender, '@', 2)), ''), 'localhost'))
$$;
comment on function app_hidden.delivery_reply_address_known(text) is
  'Whether an address is the reply+TOKEN@domain of an email the service sent from that domain (the SMTP listener''s RCPT TO check).';
revoke execute on function app_hidden.delivery_reply_address_known(text) from public;
grant execute on function app_hidden.delivery_reply_address_known(text) to svc_request;

reset role;

--! split: 500-ops-metrics.sql
-- What /metrics reads at scrape time (src/ops/metrics.ts), through two definer functions that
-- svc_worker may call (the request pool takes that role for them, as for the rate-limit store).
-- Both answer counts only: no tenant's data leaves them.

-- Outgoing emails and SMS by channel and status, over every organization.
set local role svc_owner;

create or replace function app_hidden.ops_message_counts()
returns table (channel text, status text, n bigint)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select m.channel, m.status, count(*) from app_private.outgoing_messages m group by 1, 2
$$;
comment on function app_hidden.ops_message_counts() is
  'Outgoing messages by channel and status, every organization (for /metrics).';
revoke execute on function app_hidden.ops_message_counts() from public;
grant execute on function app_hidden.ops_message_counts() to svc_worker;

-- Background jobs by task and state (svc_owner reads graphile-worker's tables through the
-- policies of 000012). A job is running while locked, failed once out of attempts, and queued
-- otherwise (due now, later, or waiting for a retry).
create or replace function app_hidden.ops_job_counts()
returns table (task text, state text, n bigint)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return query
  select t.identifier,
         case when j.locked_at is not null then 'running'
              when j.attempts >= j.max_attempts then 'failed'
              else 'queued' end,
         count(*)
    from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
   group by 1, 2;
end $$;
comment on function app_hidden.ops_job_counts() is
  'Background jobs by task and state (queued, running, failed), for /metrics.';
revoke execute on function app_hidden.ops_job_counts() from public;
grant execute on function app_hidden.ops_job_counts() to svc_worker;

reset role;

--! split: 600-oauth-metadata-cache.sql
-- A client ID metadata document is cached as long as its HTTP cache headers say (RFC 9111,
-- within the bounds src/oauth/clients.ts sets: none with no-store or no-cache, at most a day),
-- rather than a fixed hour (CIMD draft section 4.3: the authorization server SHOULD respect
-- HTTP cache headers). The lifetime is kept with the cached copy.
set local role svc_owner;

alter table app_private.oauth_clients add column if not exists cache_seconds int
  check (cache_seconds between 0 and 86400);
comment on column app_private.oauth_clients.cache_seconds is
  'How long the fetched metadata document may be used from fetched_at; null for a registered client.';

drop function if exists app_hidden.oauth_save_client(text, text, text, text, text[]);
create or replace function app_hidden.oauth_save_client(
  client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds int
) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  insert into app_private.oauth_clients (client_id, registration, client_name, client_uri, redirect_uris, fetched_at, cache_seconds)
  values ($1, $2, $3, $4, $5, case when $2 = 'metadata_document' then now() end, case when $2 = 'metadata_document' then $6 end)
  on conflict (client_id) do update
     set client_name = excluded.client_name, client_uri = excluded.client_uri,
         redirect_uris = excluded.redirect_uris, fetched_at = excluded.fetched_at, cache_seconds = excluded.cache_seconds
   where oauth_clients.registration = 'metadata_document'
$$;
comment on function app_hidden.oauth_save_client(text, text, text, text, text[], int) is
  'Registers a client, or refreshes the cached copy of a client ID metadata document (with its cache lifetime).';
revoke execute on function app_hidden.oauth_save_client(text, text, text, text, text[], int) from public;
grant execute on function app_hidden.oauth_save_client(text, text, text, text, text[], int) to svc_request;

create or replace function app_hidden.oauth_client(client_id text) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('client_id', c.client_id, 'registration', c.registration, 'client_name', c.client_name,
           'client_uri', c.client_uri, 'redirect_uris', to_jsonb(c.redirect_uris),
           'fetched_age_s', extract(epoch from now() - c.fetched_at), 'cache_seconds', c.cache_seconds)
    from app_private.oauth_clients c where c.client_id = oauth_client.client_id
$$;
comment on function app_hidden.oauth_client(text) is 'A client as the authorization endpoint needs it (with its cache age and lifetime), or NULL.';
revoke execute on function app_hidden.oauth_client(text) from public;
grant execute on function app_hidden.oauth_client(text) to svc_request;

reset role;

--! split: 990-analyst-grants.sql
-- What the analyst role may reach, settled after the tables of the migration in progress exist
-- (the last file of the migration, so that every table created before it is covered; a table
-- created later needs the same grant, and test/platform/analysts.test.ts fails until it has it):
--
--   every table of app_public, under its row-level policies (RLS is on for each of them:
--   test/platform/rls.test.ts), and the views of app_analytics (911);
--   the app_hidden helpers those tables' SELECT policies call, found in the catalog as
--   000012's last file finds them, and nothing else to execute;
--   no app_private (key hashes, idempotency records, form and OAuth secrets, the outbox, the
--   analysts mapping itself), no graphile_worker, no write anywhere.
--
-- Each analyst login role gets, from `svc admin analyst create`, a connection limit, a
-- statement_timeout and default_transaction_read_only of its own (role attributes and settings,
-- written on the primary and replayed by replicas); svc_analyst itself is nologin.
set local role svc_owner;

revoke all on schema app_private from svc_analyst;
revoke all on all tables in schema app_private from svc_analyst;
revoke insert, update, delete, truncate, references, trigger on all tables in schema app_public from svc_analyst;
grant select on all tables in schema app_public to svc_analyst;
revoke all on schema app_analytics from svc_request, svc_worker;

do $$
declare
  helper record;
begin
  for helper in
    with recursive used (fn) as (
      select p.oid
        from pg_catalog.pg_policy pol
        join pg_catalog.pg_class c on c.oid = pol.polrelid
        cross join lateral regexp_matches(pg_catalog.pg_get_expr(pol.polqual, pol.polrelid), 'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
       where c.relnamespace = 'app_public'::regnamespace and pol.polcmd in ('r', '*') and pol.polqual is not null
      union
      select p.oid
        from used
        join pg_catalog.pg_proc caller on caller.oid = used.fn and not caller.prosecdef
        cross join lateral regexp_matches(caller.prosrc, 'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
    )
    select distinct fn::regprocedure as fn from used
  loop
    execute format('grant execute on function %s to svc_analyst', helper.fn);
  end loop;
end $$;

reset role;
