--! Previous: sha1:49a6304be17e21c75722c036c11a96d000dd4c9c
--! Hash: sha1:c63d6069c2e1e14027752166a06e24e8641ec1e1
--! Message: platform: idempotency, rate-limit windows, jobs from SQL, outgoing messages

-- Platform: idempotency records, shared rate-limit windows, background jobs enqueued from SQL
-- and the outgoing message queue that the delivery worker drains.
--
-- graphile-worker's own schema is installed by src/db/migrate.ts before these migrations run.

set local role svc_owner;

--------------------------------------------------------------------------------
-- Idempotency
--------------------------------------------------------------------------------
-- One record per (credential, operation, key). The first call inserts it as running in its
-- own short transaction; the write and the stored answer then commit together. Within 24 h
-- the same credential, key and details get the first answer again.
create table app_private.idempotency_keys (
  credential_id uuid not null,
  operation_id text not null,
  key text not null check (length(key) between 1 and 255),
  organization_id uuid not null references app_public.organizations on delete cascade,
  fingerprint text not null,
  state text not null check (state in ('running', 'done', 'failed')),
  response_status int,
  response_body jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null default now(),
  primary key (credential_id, operation_id, key)
);
comment on table app_private.idempotency_keys is
  'Replay store for operations that take an idempotency_key: 24 h, per credential, operation and key.';
comment on column app_private.idempotency_keys.fingerprint is
  'Hash of the request details and the caller''s access; another fingerprint under the same key is a 409.';
create index idempotency_keys_created on app_private.idempotency_keys (created_at);
alter table app_private.idempotency_keys enable row level security;

-- Starts a call, or answers for it: NULL when the caller should run the operation now; the
-- stored status and body when it already ran; a 409 otherwise. `at` is the caller's clock,
-- so tests can move it.
create function app_hidden.idempotency_begin(operation_id text, key text, fingerprint text, at timestamptz,
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
  insert into app_private.idempotency_keys as k
    (credential_id, operation_id, key, organization_id, fingerprint, state, created_at)
  values (cred, idempotency_begin.operation_id, idempotency_begin.key, app_hidden.current_org_id(),
          idempotency_begin.fingerprint, 'running', at)
  on conflict on constraint idempotency_keys_pkey do update
     set fingerprint = excluded.fingerprint, state = 'running', response_status = null,
         response_body = null, created_at = excluded.created_at, updated_at = now()
   where k.created_at <= excluded.created_at - interval '24 hours'
  returning * into r;
  if found then
    return; -- a new call (or an expired key started over)
  end if;
  select * into r from app_private.idempotency_keys k
   where k.credential_id = cred and k.operation_id = idempotency_begin.operation_id and k.key = idempotency_begin.key;
  if r.fingerprint <> idempotency_begin.fingerprint then
    perform app_hidden.raise_error(409, 'idempotency_key_reused',
      'This idempotency_key was used with other details (or different access); use a new key');
  elsif r.state = 'running' then
    perform app_hidden.raise_error(409, 'idempotency_in_progress',
      'The first call with this idempotency_key is still running; retry shortly');
  elsif r.state = 'failed' then
    perform app_hidden.raise_error(409, 'idempotency_outcome_unknown',
      'The first call with this idempotency_key failed after starting and may have taken effect; read the state before retrying with a new key');
  end if;
  response_status := r.response_status;
  response_body := r.response_body;
end $$;
comment on function app_hidden.idempotency_begin(text, text, text, timestamptz) is
  'Claims an idempotency key for the current credential, or returns the stored answer, or raises the 409 that applies.';

-- Records the answer; called in the same transaction as the write.
create function app_hidden.idempotency_finish(operation_id text, key text, status int, body jsonb)
returns void language sql security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.idempotency_keys k
     set state = 'done', response_status = status, response_body = body, updated_at = now()
   where k.credential_id = app_hidden.current_credential_id()
     and k.operation_id = idempotency_finish.operation_id and k.key = idempotency_finish.key
$$;

-- After a call that certainly did not take effect (it rolled back): the key is free again.
-- After one whose outcome is unknown: the key answers idempotency_outcome_unknown.
create function app_hidden.idempotency_release(operation_id text, key text, outcome_unknown boolean)
returns void language sql security definer
set search_path to pg_catalog, public, pg_temp as $$
  delete from app_private.idempotency_keys k
   where not outcome_unknown and k.credential_id = app_hidden.current_credential_id()
     and k.operation_id = idempotency_release.operation_id and k.key = idempotency_release.key
     and k.state = 'running';
  update app_private.idempotency_keys k set state = 'failed', updated_at = now()
   where outcome_unknown and k.credential_id = app_hidden.current_credential_id()
     and k.operation_id = idempotency_release.operation_id and k.key = idempotency_release.key
     and k.state = 'running';
$$;

grant execute on function app_hidden.idempotency_begin(text, text, text, timestamptz),
  app_hidden.idempotency_finish(text, text, int, jsonb),
  app_hidden.idempotency_release(text, text, boolean) to svc_request;

--------------------------------------------------------------------------------
-- Rate limiting
--------------------------------------------------------------------------------
-- Fixed 60-second windows per client address and route, shared by every API process. Each
-- process counts in memory and adds its counts here about once a second (never per request).
create table app_private.rate_limit_windows (
  window_start timestamptz not null,
  client text not null,
  route text not null,
  hits int not null,
  primary key (window_start, client, route)
);
comment on table app_private.rate_limit_windows is
  'Requests per client address and route in one 60 s window, summed over every API process.';
alter table app_private.rate_limit_windows enable row level security;

-- Adds one process's counts ([{client, route, hits}]) and answers the totals now; drops
-- windows that ended more than two minutes ago.
create function app_hidden.rate_limit_add(window_start timestamptz, counts jsonb)
returns table (client text, route text, hits int)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  delete from app_private.rate_limit_windows w where w.window_start < rate_limit_add.window_start - interval '2 minutes';
  return query
  insert into app_private.rate_limit_windows as w (window_start, client, route, hits)
  select rate_limit_add.window_start, c.client, c.route, c.hits
    from jsonb_to_recordset(counts) as c (client text, route text, hits int)
  on conflict on constraint rate_limit_windows_pkey do update set hits = w.hits + excluded.hits
  returning w.client, w.route, w.hits;
end $$;
grant execute on function app_hidden.rate_limit_add(timestamptz, jsonb) to svc_worker;

--------------------------------------------------------------------------------
-- Background jobs and outgoing messages
--------------------------------------------------------------------------------
-- Jobs are added inside the transaction of the write that causes them, so a committed write
-- always has its job and a rolled-back one never does.
create function app_private.add_job(identifier text, payload jsonb, job_key text default null,
  run_at timestamptz default null)
returns void language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform graphile_worker.add_job(identifier, payload::json, job_key => job_key, run_at => run_at);
end $$;
comment on function app_private.add_job(text, jsonb, text, timestamptz) is
  'graphile_worker.add_job for our own security-definer functions; never granted to request roles.';

-- graphile-worker guards its private tables with row-level security that only their owner
-- passes, so this one narrow wrapper belongs to the owner of the graphile_worker schema (see
-- the end of this migration); svc_owner may call it, nobody else.
grant execute on function app_private.add_job(text, jsonb, text, timestamptz) to svc_owner;

create table app_private.outgoing_messages (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  channel text not null check (channel in ('email', 'sms')),
  sender text,
  recipient text not null,
  subject text,
  body text not null,
  meta jsonb not null default '{}',
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed')),
  error text,
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  primary key (organization_id, id),
  check (channel <> 'email' or subject is not null)
);
comment on table app_private.outgoing_messages is
  'Every email and SMS the service decided to send; the deliver_message task hands each to its transport once.';
alter table app_private.outgoing_messages enable row level security;

-- The one way SQL sends a message: queue it and its delivery job in the caller's transaction.
-- The sender defaults to the organization's sending domain or SMS number.
create function app_hidden.queue_message(channel text, recipient text, subject text, body text,
  sender text default null, meta jsonb default '{}')
returns uuid language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org app_public.organizations;
  message_id uuid;
begin
  select * into org from app_public.organizations where id = app_hidden.current_org_id();
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  insert into app_private.outgoing_messages (organization_id, channel, sender, recipient, subject, body, meta)
  values (org.id, channel, coalesce(sender, case channel
            when 'email' then 'no-reply@' || coalesce(org.sending_email_domain, 'localhost')
            else org.default_sms_number end),
          recipient, subject, body, coalesce(meta, '{}'))
  returning id into message_id;
  perform app_private.add_job('deliver_message',
    jsonb_build_object('organization_id', org.id, 'message_id', message_id),
    job_key => 'message:' || message_id);
  return message_id;
end $$;
comment on function app_hidden.queue_message(text, text, text, text, text, jsonb) is
  'Queues an email or SMS of the current organization and its delivery job, in the caller''s transaction.';
grant execute on function app_hidden.queue_message(text, text, text, text, text, jsonb) to svc_request, svc_worker;

reset role;

do $$
begin
  execute format('alter function app_private.add_job(text, jsonb, text, timestamptz) owner to %I',
    (select nspowner::regrole::text from pg_namespace where nspname = 'graphile_worker'));
end $$;
