-- A schedule that fails to fire is retried on its own, with backoff, and says so.
--
-- broadcast_fire (src/broadcasts/fire.ts) fires each due schedule in a transaction of its own;
-- one that raises (its audience's rules no longer resolve, a deadlock that outlived the retries,
-- …) no longer stops the sweep: app_private.broadcast_fire_failed records the error on the
-- schedule and when it is tried again (1 minute, doubling to at most an hour), and queues the
-- schedule's own job for then. The sweep passes it by until that time, so it never delays
-- another schedule, another organization's or the stalled-run recovery. The schedule read
-- (app_hidden.broadcast_schedule_json) shows it as `fire_retry`; a fire that succeeds, or any
-- change of the schedule (set, start, pause), clears it.

set local role svc_owner;

alter table app_public.broadcast_schedules
  add column if not exists fire_attempts int not null default 0,
  add column if not exists fire_error text,
  add column if not exists fire_retry_at timestamptz;

comment on column app_public.broadcast_schedules.fire_attempts is 'Failed attempts to fire the occurrence at next_fire_at (0 when none failed).';
comment on column app_public.broadcast_schedules.fire_error is 'Why the last attempt to fire next_fire_at failed, while it is being retried.';
comment on column app_public.broadcast_schedules.fire_retry_at is 'When the failed occurrence is tried again; the sweep passes the schedule by until then.';

create or replace function app_private.broadcast_fire_failed(organization_id uuid, sequence_id uuid, fire_at timestamptz, error text)
  returns timestamptz
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
#variable_conflict use_column
declare
  retry_at timestamptz;
begin
  update app_public.broadcast_schedules b
     set fire_attempts = b.fire_attempts + 1, fire_error = left(broadcast_fire_failed.error, 1000),
         fire_retry_at = now() + make_interval(secs => least(3600, 60 * power(2, least(b.fire_attempts, 6))))
   where b.organization_id = broadcast_fire_failed.organization_id and b.sequence_id = broadcast_fire_failed.sequence_id
     and b.status = 'scheduled' and b.next_fire_at = broadcast_fire_failed.fire_at
  returning b.fire_retry_at into retry_at;
  if retry_at is not null then
    perform app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || broadcast_fire_failed.sequence_id, retry_at);
  end if;
  return retry_at;
end $$;

comment on function app_private.broadcast_fire_failed(uuid, uuid, timestamptz, text) is
  'Records that firing the occurrence fire_at of a schedule failed (attempts, error) and when it is tried again (1 minute doubling to 1 hour), with its job queued then; NULL when the schedule no longer waits for that occurrence.';
revoke all on function app_private.broadcast_fire_failed(uuid, uuid, timestamptz, text) from public;

create or replace function app_private.tg_broadcast_schedules__fire_retry_reset() returns trigger
  language plpgsql
  as $$
begin
  new.fire_attempts := 0;
  new.fire_error := null;
  new.fire_retry_at := null;
  return new;
end $$;

comment on function app_private.tg_broadcast_schedules__fire_retry_reset() is
  'A schedule moved to another occurrence or state (fired, set, started, paused) has no failed fire to retry.';

drop trigger if exists _100_fire_retry_reset on app_public.broadcast_schedules;
create trigger _100_fire_retry_reset
  before update of next_fire_at, status on app_public.broadcast_schedules
  for each row when (new.next_fire_at is distinct from old.next_fire_at or new.status is distinct from old.status)
  execute function app_private.tg_broadcast_schedules__fire_retry_reset();

create or replace function app_hidden.broadcast_schedule_json(b app_public.broadcast_schedules, page integer, page_size integer) returns jsonb
    language plpgsql stable
    as $$
declare
  runs jsonb;
  total int;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  select count(*) into total from app_public.broadcast_runs r
   where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id;
  select coalesce(jsonb_agg(app_hidden.broadcast_run_json(r) order by r.started_at desc, r.id), '[]') into runs
    from (select * from app_public.broadcast_runs r
           where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id
           order by r.started_at desc, r.id
           limit page_size offset (page - 1) * page_size) r;
  return jsonb_build_object('sequence_id', b.sequence_id, 'schedule_kind', b.schedule_kind, 'send_at', b.send_at,
    'rrule', b.rrule, 'timezone', b.timezone, 'ends_on', b.ends_on, 'status', b.status, 'next_fire_at', b.next_fire_at,
    'fire_retry', case when b.fire_attempts > 0 then jsonb_build_object('attempts', b.fire_attempts,
                    'next_attempt_at', b.fire_retry_at, 'last_error', b.fire_error) end,
    'created_at', b.created_at, 'updated_at', b.updated_at,
    'runs', runs, 'runs_total', total, 'page', page, 'limit', page_size);
end $$;

reset role;
