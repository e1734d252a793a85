-- A temporary delivery failure is retried as a mail server would, for hours; only a permanent
-- refusal fails the message.
--
-- Temporary: the connection refused, reset or timed out, any SMTP 4xx, an HTTP provider's 429 or
-- 5xx (src/delivery: a transport throws PermanentDeliveryError only for a permanent refusal). The
-- message stays queued with its attempts, last error and next attempt, and the delivery queue
-- (task deliver_message, job key message:<id>) tries it again after 1 minute, doubling up to an
-- hour, for five days from when it was queued (Postfix's maximal_queue_lifetime), then fails it.
-- app_private.delivery_retry_settings holds the schedule (tests shorten it). A sequence or
-- broadcast message refused for now leaves its step run `retrying` and its enrollment on the
-- step; app_private.delivery_settle records the step (sent or failed) and moves the enrollment on
-- when the queue is done with it, and a broadcast run stays `sending` until then.

set local role svc_owner;

alter table app_private.outgoing_messages
  add column if not exists attempts int not null default 0,
  add column if not exists next_attempt_at timestamptz;
comment on column app_private.outgoing_messages.attempts is 'Deliveries refused for now (temporary failures) so far; error holds the last one''s reason.';
comment on column app_private.outgoing_messages.next_attempt_at is 'When a message refused for now is tried again (its deliver_message job runs then).';

alter table app_public.step_runs drop constraint if exists step_runs_status_check;
alter table app_public.step_runs add constraint step_runs_status_check
  check (status in ('sending', 'retrying', 'sent', 'skipped', 'failed', 'unknown', 'waited'));
comment on table app_public.step_runs is 'Each (enrollment, step) the engine reached, at most once: sending while its message is with the transport, retrying while the delivery queue retries a temporary refusal, then sent, failed or unknown (the process died in between: never sent again), skipped (with reason: suppressed, opted_out, no_consent, missing_address) or waited.';

create table if not exists app_private.delivery_retry_settings (
  only_row boolean primary key default true check (only_row),
  first_seconds int not null default 60 check (first_seconds > 0),
  max_seconds int not null default 3600 check (max_seconds > 0),
  lifetime_seconds int not null default 432000 check (lifetime_seconds > 0)
);
comment on table app_private.delivery_retry_settings is 'The retry schedule of temporary delivery failures (one row): first wait, doubling up to max_seconds, for lifetime_seconds after the message was queued (default 1 minute, 1 hour, 5 days).';
insert into app_private.delivery_retry_settings default values on conflict do nothing;

create or replace function app_private.delivery_retry_at(attempts int, queued_at timestamptz) returns timestamptz
  language sql stable
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
  select case when now() < queued_at + make_interval(secs => s.lifetime_seconds)
              then now() + make_interval(secs => least(s.max_seconds, s.first_seconds * power(2, least(greatest(attempts, 1) - 1, 20))))
         end
    from app_private.delivery_retry_settings s
$$;
comment on function app_private.delivery_retry_at(int, timestamptz) is 'When a message refused for now `attempts` times is tried again; NULL once its lifetime (from queued_at) has passed.';

create or replace function app_private.delivery_settle(org_id uuid, message_id uuid, error text) returns void
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
declare
  m app_private.outgoing_messages;
  sr app_public.step_runs;
  e app_public.enrollments;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id;
  if not found or m.meta->>'enrollment_id' is null then
    return;
  end if;
  update app_public.step_runs r
     set status = case when error is null then 'sent' else 'failed' end, reason = left(error, 500), updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = (m.meta->>'enrollment_id')::uuid and r.step_key = m.meta->>'step_key'
     and r.message_id = m.id and r.status = 'retrying'
  returning * into sr;
  if not found then
    return;
  end if;
  select * into e from app_public.enrollments x where x.organization_id = org_id and x.id = sr.enrollment_id for update;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
  values (org_id, sr.enrollment_id, case when error is null then 'sent' else 'failed' end, sr.step_key, m.id,
          case when error is not null then 'transport_error' end);
  if e.status = 'active' and e.current_step_key = sr.step_key then
    perform app_private.advance_enrollment(org_id, e.id);
  end if;
  if e.run_id is not null then
    update app_public.broadcast_runs r
       set sent = r.sent + (error is null)::int, failed = r.failed + (error is not null)::int, progress_at = now()
     where r.organization_id = org_id and r.id = e.run_id;
    -- the run's job ends it once nothing of it is left retrying (app_private.broadcast_finish)
    perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', org_id, 'run_id', e.run_id),
      'broadcast_run:' || e.run_id, now());
  end if;
end $$;
comment on function app_private.delivery_settle(uuid, uuid, text) is 'A message the delivery queue retried is done (sent, or failed with error): its retrying step run recorded, the enrollment moved on, its broadcast run counted and its job queued to end the run.';
revoke all on function app_private.delivery_settle(uuid, uuid, text) from public;

create or replace function app_private.delivery_retry(org_id uuid, message_id uuid, error text) returns timestamptz
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
declare
  m app_private.outgoing_messages;
  at timestamptz;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id for update;
  if not found or m.status <> 'queued' then
    return null;
  end if;
  at := app_private.delivery_retry_at(m.attempts + 1, m.created_at);
  update app_private.outgoing_messages x
     set attempts = x.attempts + 1, error = left(delivery_retry.error, 1000), next_attempt_at = at,
         status = case when at is null then 'failed' else x.status end
   where x.organization_id = org_id and x.id = m.id;
  if at is null then
    perform app_private.delivery_settle(org_id, m.id, 'gave up after ' || (m.attempts + 1) || ' attempts: ' || left(delivery_retry.error, 400));
  else
    perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', org_id, 'message_id', m.id), 'message:' || m.id, at);
  end if;
  return at;
end $$;
comment on function app_private.delivery_retry(uuid, uuid, text) is 'A queued message refused for now: attempts and last error kept, its deliver_message job queued for the next attempt of the retry schedule; past the schedule''s lifetime, failed (and settled). Answers the next attempt, or NULL.';
revoke all on function app_private.delivery_retry(uuid, uuid, text) from public;

create or replace function app_private.delivery_retry_later(org_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text)
  returns void
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
begin
  update app_public.step_runs r set status = 'retrying', reason = left(error, 500), updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = delivery_retry_later.enrollment_id
     and r.step_key = delivery_retry_later.step_key and r.message_id = delivery_retry_later.message_id and r.status = 'sending';
  if found then
    perform app_private.delivery_retry(org_id, message_id, error);
  end if;
end $$;
comment on function app_private.delivery_retry_later(uuid, uuid, text, uuid, text) is 'A sequence or broadcast message refused for now: its step run retrying (the enrollment stays on the step) and the message handed to the delivery queue''s retries.';
revoke all on function app_private.delivery_retry_later(uuid, uuid, text, uuid, text) from public;

create or replace function app_private.delivery_enrollment_ended(org_id uuid, message_id uuid) returns boolean
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
declare
  m app_private.outgoing_messages;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id;
  if m.meta->>'enrollment_id' is null
     or exists (select 1 from app_public.enrollments e where e.organization_id = org_id
                   and e.id = (m.meta->>'enrollment_id')::uuid and e.status in ('active', 'paused')) then
    return false;
  end if;
  update app_private.outgoing_messages x set status = 'failed', error = 'not sent: the enrollment ended while it was retried', next_attempt_at = null
   where x.organization_id = org_id and x.id = m.id and x.status = 'queued';
  update app_public.step_runs r set status = 'failed', reason = 'enrollment ended while retrying', updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = (m.meta->>'enrollment_id')::uuid and r.message_id = m.id and r.status = 'retrying';
  return true;
end $$;
comment on function app_private.delivery_enrollment_ended(uuid, uuid) is 'Before a retry: whether the message belongs to an enrollment that has ended (cancelled, unsubscribed, completed) meanwhile; if so it is failed, never sent.';
revoke all on function app_private.delivery_enrollment_ended(uuid, uuid) from public;

-- a run whose recipients' messages are still retried stays sending; delivery_settle queues its
-- job again when each is done, and the last one's ends it
create or replace function app_private.broadcast_finish(organization_id uuid, run_id uuid) returns void
    language sql security definer
    set search_path to 'pg_catalog', 'public', 'pg_temp'
    as $$
  update app_public.broadcast_runs x
     set status = 'completed', finished_at = now(),
         cancelled = greatest(0, x.recipients - x.sent - x.skipped - x.failed - x.unknown)
   where x.organization_id = broadcast_finish.organization_id and x.id = broadcast_finish.run_id and x.status = 'sending'
     and not exists (select 1 from app_public.enrollments e
                       join app_public.step_runs sr on sr.organization_id = e.organization_id and sr.enrollment_id = e.id
                                                   and sr.step_key = e.current_step_key and sr.status = 'retrying'
                      where e.organization_id = x.organization_id and e.run_id = x.id and e.status in ('active', 'paused'))
$$;

create or replace function app_private.record_enrollment_messages(org_id uuid, results jsonb, OUT sent_count integer, OUT failed_count integer) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  eids uuid[];
  moved uuid[];
begin
  eids := array(select (x->>'enrollment_id')::uuid from jsonb_array_elements(results) x);
  perform 1 from app_public.enrollments e
   where e.organization_id = org_id and e.id = any(eids) order by e.id for update;
  with answer as (
    select (x->>'enrollment_id')::uuid as enrollment_id, x->>'step_key' as step_key, (x->>'message_id')::uuid as message_id,
           x->>'error' as error, nullif(x->>'provider_id', '') as provider_id
      from jsonb_array_elements(results) x
     -- a temporary refusal (not marked permanent) is retried, not recorded: app_private.delivery_retry_later
     where x->>'error' is null or coalesce((x->>'permanent')::boolean, false)
  ), recorded as (
    update app_public.step_runs sr
       set status = case when answer.error is null then 'sent' else 'failed' end, reason = left(answer.error, 500), updated_at = now()
      from answer
     where sr.organization_id = org_id and sr.enrollment_id = answer.enrollment_id
       and sr.step_key = answer.step_key and sr.message_id = answer.message_id and sr.status = 'sending'
    returning sr.enrollment_id, sr.step_key, sr.message_id, answer.error, answer.provider_id
  ), messages as (
    update app_private.outgoing_messages m
       set status = case when recorded.error is null then 'sent' else 'failed' end,
           sent_at = case when recorded.error is null then now() end, error = left(recorded.error, 1000),
           provider_id = coalesce(recorded.provider_id, m.provider_id)
      from recorded
     where m.organization_id = org_id and m.id = recorded.message_id
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select org_id, recorded.enrollment_id, case when recorded.error is null then 'sent' else 'failed' end,
           recorded.step_key, recorded.message_id, case when recorded.error is not null then 'transport_error' end
      from recorded
  )
  select count(*) filter (where recorded.error is null), count(*) filter (where recorded.error is not null),
         coalesce(array_agg(recorded.enrollment_id) filter (where e.status = 'active' and e.current_step_key = recorded.step_key), '{}')
    into sent_count, failed_count, moved
    from recorded
    join app_public.enrollments e on e.organization_id = org_id and e.id = recorded.enrollment_id
   where e.organization_id = org_id and e.id = any(eids);
  perform app_private.advance_enrollments(org_id, moved);
  -- the temporary refusals: the step run waits (retrying) and the message goes to the delivery
  -- queue, which retries it on the retry schedule and settles the step when it ends
  perform app_private.delivery_retry_later(org_id, (x->>'enrollment_id')::uuid, x->>'step_key', (x->>'message_id')::uuid, x->>'error')
     from jsonb_array_elements(results) x
    where x->>'error' is not null and not coalesce((x->>'permanent')::boolean, false);
end $$;

create or replace function app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[] DEFAULT '{}'::text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  e app_public.enrollments;
  s app_public.sequences;
  c app_public.contacts;
  step jsonb;
  run app_public.step_runs;
  exiting text;
  address text;
  refusal text;
  message jsonb;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = sequence_step_claim.organization_id and x.id = sequence_step_claim.enrollment_id
     for update;
  if not found or e.status <> 'active' or e.current_step_key is distinct from sequence_step_claim.step_key then
    return jsonb_build_object('action', 'none');
  end if;
  select * into s from app_public.sequences x where x.organization_id = e.organization_id and x.id = e.sequence_id;
  if s.status <> 'active' then
    return jsonb_build_object('action', 'none');
  end if;

  select * into run from app_public.step_runs r
   where r.organization_id = e.organization_id and r.enrollment_id = e.id and r.step_key = e.current_step_key;
  if found then
    -- Its message is being retried by the delivery queue, which moves the enrollment on once the
    -- message is sent or refused for good (app_private.delivery_settle)
    if run.status = 'retrying' then
      return jsonb_build_object('action', 'none');
    end if;
    -- Claimed under five minutes ago: its job may still be waiting for the transport (a resume
    -- scheduled a second job for the enrollment meanwhile). The transports give up well within
    -- that (SMTP 20 s idle, HTTP 15 s), so look again once it has passed.
    if run.status = 'sending' and run.updated_at > now() - interval '5 minutes' then
      update app_public.enrollments x set next_run_at = run.updated_at + interval '5 minutes'
       where x.organization_id = e.organization_id and x.id = e.id;
      perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id]);
      return jsonb_build_object('action', 'none');
    end if;
    if run.status = 'sending' then
      update app_public.step_runs r set status = 'unknown', reason = 'interrupted', updated_at = now()
       where r.organization_id = run.organization_id and r.id = run.id;
      update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
       where m.organization_id = run.organization_id and m.id = run.message_id and m.status = 'queued';
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
      values (e.organization_id, e.id, 'unknown', run.step_key, run.message_id, 'interrupted');
    end if;
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  exiting := case when jsonb_array_length(s.exit_conditions) > 0 then app_private.exit_condition_holding(e, s.exit_conditions) end;
  if exiting is not null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'completed', 'exit_condition:' || exiting);
    return jsonb_build_object('action', 'done');
  end if;

  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = e.current_step_key limit 1;
  if step is null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'failed', 'step_removed');
    return jsonb_build_object('action', 'done');
  end if;

  if step->>'type' not in ('email', 'sms') then
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status)
    values (e.organization_id, e.id, e.current_step_key, 'wait', 'waited');
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  select * into c from app_public.contacts x where x.organization_id = e.organization_id and x.id = e.contact_id;
  address := case step->>'type' when 'email' then c.email::text else c.phone end;
  refusal := app_private.send_refusal(e.organization_id, step->>'type', address);
  if refusal is null and step->>'type' = 'sms' and not c.sms_consent then
    refusal := 'no_consent';
  end if;
  if refusal is not null then
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
    values (e.organization_id, e.id, e.current_step_key, step->>'type', 'skipped', refusal);
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    values (e.organization_id, e.id, 'skipped', e.current_step_key, refusal);
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  if step->>'type' = any(sink_channels) then
    -- The local sink is a table: nothing leaves the database, so storing the message and
    -- recording it sent commit together (exactly once). Should a crash lose the commit, nothing
    -- happened and the job runs again; so it need not wait for the disk.
    perform set_config('synchronous_commit', 'off', true);
    message := app_private.build_sequence_message(e.organization_id, s, step, c.id, address, e.id, base_url, true, 'sent');
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    values (e.organization_id, (message->>'id')::uuid, message->>'channel', message->>'sender', message->>'recipient',
            message->>'subject', message->>'body', message->'meta');
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
    values (e.organization_id, e.id, e.current_step_key, step->>'type', 'sent', (message->>'id')::uuid);
    -- the sink reports every message delivered as it stores it (sequences.md, Analytics)
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
    values (e.organization_id, e.id, 'sent', e.current_step_key, (message->>'id')::uuid),
           (e.organization_id, e.id, 'delivered', e.current_step_key, (message->>'id')::uuid);
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;
  message := app_private.build_sequence_message(e.organization_id, s, step, c.id, address, e.id, base_url, true);
  insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
  values (e.organization_id, e.id, e.current_step_key, step->>'type', 'sending', (message->>'id')::uuid);
  return jsonb_build_object('action', 'send', 'message', message);
end $$;

reset role;
