-- Broadcasts: the schedule of a `kind: broadcast` sequence and its runs (docs/broadcasts.md).
--
--   broadcast_schedules  one per broadcast: once (send_at) or recurring (rrule, timezone,
--                        ends_on), status draft | scheduled | paused, next_fire_at
--   broadcast_runs       one per fired occurrence (unique (sequence, fire_at): an occurrence
--                        fires once however many workers look), its counts and its checkpoint
--
-- A run's recipients are enrollments of the broadcast (source 'broadcast', run_id), made when
-- the run fires with next_run_at NULL: the sweep of the sequences engine never queues them; the
-- run's job sends them in batches (810-broadcasts-runs.sql). Occurrences are computed in
-- TypeScript with Temporal (src/broadcasts/occurrences.ts), never with AT TIME ZONE: the
-- functions here take next_fire_at as computed there.
set local role svc_owner;

create table if not exists app_public.broadcast_schedules (
  organization_id uuid not null references app_public.organizations on delete cascade,
  sequence_id uuid not null,
  schedule_kind text not null check (schedule_kind in ('once', 'recurring')),
  send_at timestamptz,
  rrule text check (length(rrule) <= 500),
  timezone text check (length(timezone) <= 64),
  ends_on date,
  -- DTSTART of the rule: when the schedule was set (INTERVAL counts from it; BYHOUR and
  -- BYMINUTE default to its local time)
  anchor timestamptz not null default now(),
  status text not null default 'draft' check (status in ('draft', 'scheduled', 'paused')),
  next_fire_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, sequence_id),
  foreign key (organization_id, sequence_id) references app_public.sequences on delete cascade,
  check ((schedule_kind = 'once') = (send_at is not null)),
  check ((schedule_kind = 'recurring') = (rrule is not null)),
  check (schedule_kind = 'once' or timezone is not null),
  check (status = 'scheduled' or next_fire_at is null)
);
comment on table app_public.broadcast_schedules is
  'When a broadcast sends: once at send_at, or on each occurrence of rrule in timezone until ends_on. draft (set, sends '
  'nothing), scheduled (next_fire_at is the next occurrence), paused.';
-- the scheduler's question: which scheduled broadcasts are due
create index if not exists broadcast_schedules_due on app_public.broadcast_schedules (next_fire_at)
  where status = 'scheduled' and next_fire_at is not null;

create table if not exists app_public.broadcast_runs (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  sequence_id uuid not null,
  fire_at timestamptz not null,
  status text not null default 'sending' check (status in ('sending', 'completed', 'cancelled', 'failed')),
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  recipients int not null default 0,
  sent int not null default 0,
  skipped int not null default 0,
  failed int not null default 0,
  unknown int not null default 0,
  cancelled int not null default 0,
  -- the checkpoint: enrollments whose messages are with the transport and not yet recorded.
  -- Set in the transaction that claims a batch, emptied in the one that records it; a job that
  -- finds it set knows the process that claimed it died: those are unknown, never sent again.
  in_flight uuid[] not null default '{}',
  -- when a batch was last claimed or recorded: a run sending with no progress for minutes lost
  -- its worker (app_private.broadcast_requeue_stalled)
  progress_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, sequence_id) references app_public.sequences on delete cascade,
  check ((status = 'sending') = (finished_at is null))
);
comment on table app_public.broadcast_runs is
  'One fired occurrence of a broadcast schedule: its recipients (enrollments with this run_id), counts and the batch in flight.';
-- an occurrence fires once, whatever number of workers look at the same moment
create unique index if not exists broadcast_runs_one_per_occurrence on app_public.broadcast_runs (organization_id, sequence_id, fire_at);
alter table app_public.broadcast_runs add column if not exists progress_at timestamptz not null default now();
-- the last recipient (enrollment id, in id order) a batch claimed: the next batch starts after
-- it, so a batch reads only what is left, not the index entries of those already sent
alter table app_public.broadcast_runs add column if not exists claimed_through uuid;
create index if not exists broadcast_runs_sending on app_public.broadcast_runs (progress_at) where status = 'sending';
create index if not exists broadcast_runs_by_sequence on app_public.broadcast_runs (organization_id, sequence_id, started_at desc, id);

-- A run's recipients still to send: its batches read them in id order
create index if not exists enrollments_run_pending on app_public.enrollments (organization_id, run_id, id)
  where run_id is not null and status = 'active' and next_run_at is null;

alter table app_public.broadcast_schedules enable row level security;
alter table app_public.broadcast_runs enable row level security;

-- Seen with their sequence (its own policy: organization and locations); a schedule is written
-- by the sequence's writers through app_public.sequences_*_schedule, runs only by the owner.
drop policy if exists select_with_sequence on app_public.broadcast_schedules;
create policy select_with_sequence on app_public.broadcast_schedules for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.sequences s
                      where s.organization_id = broadcast_schedules.organization_id and s.id = broadcast_schedules.sequence_id));
-- whether the credential may write the broadcast a schedule belongs to (its sequence's rule)
create or replace function app_hidden.broadcast_writable(organization_id uuid, sequence_id uuid) returns boolean
language sql stable as $$
  select exists (select 1 from app_public.sequences s
                  where s.organization_id = broadcast_writable.organization_id and s.id = broadcast_writable.sequence_id
                    and app_hidden.current_may_write_sequence(s.location_id))
$$;
grant execute on function app_hidden.broadcast_writable(uuid, uuid) to svc_request;
drop policy if exists insert_writable on app_public.broadcast_schedules;
create policy insert_writable on app_public.broadcast_schedules for insert
  with check (organization_id = (select app_hidden.current_org_id()) and app_hidden.broadcast_writable(organization_id, sequence_id));
drop policy if exists update_writable on app_public.broadcast_schedules;
create policy update_writable on app_public.broadcast_schedules for update
  using (organization_id = (select app_hidden.current_org_id()) and app_hidden.broadcast_writable(organization_id, sequence_id))
  with check (organization_id = (select app_hidden.current_org_id()));
drop policy if exists select_with_sequence on app_public.broadcast_runs;
create policy select_with_sequence on app_public.broadcast_runs for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.sequences s
                      where s.organization_id = broadcast_runs.organization_id and s.id = broadcast_runs.sequence_id));

grant select on app_public.broadcast_schedules, app_public.broadcast_runs to svc_request;
grant insert (organization_id, sequence_id, schedule_kind, send_at, rrule, timezone, ends_on, anchor, status, next_fire_at)
  on app_public.broadcast_schedules to svc_request;
grant update (schedule_kind, send_at, rrule, timezone, ends_on, anchor, status, next_fire_at, updated_at)
  on app_public.broadcast_schedules to svc_request;

--------------------------------------------------------------------------------
-- How a schedule and a run read
--------------------------------------------------------------------------------
create or replace function app_hidden.broadcast_run_json(r app_public.broadcast_runs) returns jsonb
language sql stable as $$
  select jsonb_build_object('id', r.id, 'status', r.status, 'fire_at', r.fire_at, 'started_at', r.started_at,
    'finished_at', r.finished_at, 'recipients', r.recipients, 'sent', r.sent, 'skipped', r.skipped, 'failed', r.failed,
    'unknown', r.unknown, 'cancelled', r.cancelled)
$$;
grant execute on function app_hidden.broadcast_run_json(app_public.broadcast_runs) to svc_request, svc_worker;

-- The schedule with a page of its runs, newest first.
create or replace function app_hidden.broadcast_schedule_json(b app_public.broadcast_schedules, page int, page_size int)
returns jsonb
language plpgsql stable as $$
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
    'created_at', b.created_at, 'updated_at', b.updated_at,
    'runs', runs, 'runs_total', total, 'page', page, 'limit', page_size);
end $$;
grant execute on function app_hidden.broadcast_schedule_json(app_public.broadcast_schedules, int, int) to svc_request;

-- The broadcast a schedule operation names: 404 out of reach, 403 not writable (for_write),
-- 400 when it is an automation.
create or replace function app_hidden.broadcast_for(sequence_id uuid, for_write boolean) returns app_public.sequences
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, for_write);
begin
  if s.kind <> 'broadcast' then
    perform app_hidden.sequence_bad('sequenceId', 'an automation has no schedule: only a broadcast (kind broadcast) is scheduled');
  end if;
  return s;
end $$;
grant execute on function app_hidden.broadcast_for(uuid, boolean) to svc_request;

-- The schedule of a broadcast in reach; 404 when none was set. for_write locks it.
create or replace function app_hidden.broadcast_schedule_of(s app_public.sequences, for_write boolean)
returns app_public.broadcast_schedules
language plpgsql volatile as $$
declare
  b app_public.broadcast_schedules;
begin
  if for_write then
    select * into b from app_public.broadcast_schedules x
     where x.organization_id = s.organization_id and x.sequence_id = s.id for update;
  else
    select * into b from app_public.broadcast_schedules x where x.organization_id = s.organization_id and x.sequence_id = s.id;
  end if;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'This broadcast has no schedule yet: set one with sequences_set_schedule');
  end if;
  return b;
end $$;
grant execute on function app_hidden.broadcast_schedule_of(app_public.sequences, boolean) to svc_request;

--------------------------------------------------------------------------------
-- Cancelling runs
--------------------------------------------------------------------------------
-- Stops runs of a broadcast that have not ended (one run, or all of them): their enrollments not
-- yet sent are cancelled (with their events), the run `cancelled` with the count. A batch
-- already with the transport is recorded when its job comes back (or unknown): it was handed
-- over. Runs as the owner (enrollment events are the owner's), for a credential that may write
-- the sequence, checked again here. Answers the number of enrollments stopped.
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
    select count(*) into n from app_private.end_enrollments(s.organization_id, array(
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
  'Cancels the runs of a broadcast that have not ended (or one): unsent enrollments cancelled, run cancelled with the count.';
revoke all on function app_hidden.broadcast_cancel_runs(uuid, uuid) from public;
grant execute on function app_hidden.broadcast_cancel_runs(uuid, uuid) to svc_request;

--------------------------------------------------------------------------------
-- The operations
--------------------------------------------------------------------------------
-- body: {schedule_kind: once, send_at} or {schedule_kind: recurring, rrule, timezone, ends_on?},
-- its grammar checked by the operation (src/broadcasts/schemas.ts); checked here: what needs the
-- clock. Saved as draft; runs that have not ended are cancelled.
create or replace function app_public.sequences_set_schedule(sequence_id uuid, body jsonb) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules;
  kind text := body->>'schedule_kind';
  at timestamptz;
  last_day date;
begin
  if kind = 'once' then
    at := (body->>'send_at')::timestamptz;
    if at <= now() then
      perform app_hidden.sequence_bad('body.send_at', 'must be in the future');
    end if;
  elsif kind = 'recurring' then
    -- the rule, the zone and ends_on (not in the past in the zone) are checked by the operation
    last_day := (body->>'ends_on')::date;
  else
    perform app_hidden.sequence_bad('body.schedule_kind', 'expected once or recurring');
  end if;
  perform app_hidden.broadcast_cancel_runs(s.id, null);
  insert into app_public.broadcast_schedules as x (organization_id, sequence_id, schedule_kind, send_at, rrule, timezone,
    ends_on, anchor, status, next_fire_at)
  values (s.organization_id, s.id, kind, at, case when kind = 'recurring' then body->>'rrule' end,
          body->>'timezone', last_day, now(), 'draft', null)
  on conflict on constraint broadcast_schedules_pkey do update
     set schedule_kind = excluded.schedule_kind, send_at = excluded.send_at, rrule = excluded.rrule,
         timezone = excluded.timezone, ends_on = excluded.ends_on, anchor = excluded.anchor, status = 'draft',
         next_fire_at = null, updated_at = now()
  returning x.* into b;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;
comment on function app_public.sequences_set_schedule(uuid, jsonb) is
  'sequences_set_schedule: a broadcast''s schedule saved as draft (sends nothing); runs not ended are cancelled.';

create or replace function app_public.sequences_get_schedule(sequence_id uuid, page int, "limit" int) returns jsonb
language plpgsql volatile as $$
begin
  return app_hidden.broadcast_schedule_json(
    app_hidden.broadcast_schedule_of(app_hidden.broadcast_for(sequence_id, false), false), page, "limit");
end $$;
comment on function app_public.sequences_get_schedule(uuid, int, int) is
  'sequences_get_schedule: the schedule with a page of runs (newest first) and runs_total; 404 before one is set.';

-- First statement of sequences_start_schedule: the schedule, locked for the transaction, and
-- `now` on the database's clock, from which the operation computes next_fire_at.
create or replace function app_public.sequences_schedule_for_start(sequence_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  perform app_hidden.sequence_require_no_blockers(s);
  return jsonb_build_object('schedule_kind', b.schedule_kind, 'send_at', b.send_at, 'rrule', b.rrule, 'timezone', b.timezone,
    'ends_on', b.ends_on, 'anchor', b.anchor, 'status', b.status, 'next_fire_at', b.next_fire_at, 'now', now(),
    -- the latest run since the schedule was set (a once schedule that has fired fires no more)
    'last_fire_at', (select max(r.fire_at) from app_public.broadcast_runs r
                      where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id and r.started_at >= b.anchor));
end $$;
comment on function app_public.sequences_schedule_for_start(uuid) is
  'sequences_start_schedule, first statement: the broadcast''s schedule locked (404 none; 400 with blockers) and the clock.';

-- Second statement: scheduled with next_fire_at as computed (NULL: nothing left to fire). An
-- inactive broadcast is activated (the blockers were checked by the first statement); the
-- scheduler's job is queued for next_fire_at. Already scheduled: unchanged.
create or replace function app_public.sequences_start_schedule(sequence_id uuid, next_fire_at timestamptz) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  if b.status <> 'scheduled' then
    if s.status = 'inactive' then
      perform app_hidden.sequence_activate(s);
    end if;
    update app_public.broadcast_schedules x
       set status = 'scheduled', next_fire_at = sequences_start_schedule.next_fire_at, updated_at = now()
     where x.organization_id = b.organization_id and x.sequence_id = b.sequence_id
    returning x.* into b;
    if b.next_fire_at is not null then
      perform app_hidden.broadcast_queue_fire(b.organization_id, b.sequence_id);
    end if;
  end if;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;
comment on function app_public.sequences_start_schedule(uuid, timestamptz) is
  'sequences_start_schedule, second statement: scheduled with next_fire_at (an inactive broadcast is activated).';

create or replace function app_public.sequences_pause_schedule(sequence_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  if b.status = 'scheduled' then
    update app_public.broadcast_schedules x set status = 'paused', next_fire_at = null, updated_at = now()
     where x.organization_id = b.organization_id and x.sequence_id = b.sequence_id
    returning x.* into b;
  end if;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;
comment on function app_public.sequences_pause_schedule(uuid) is
  'sequences_pause_schedule: a scheduled broadcast paused (later occurrences do not fire; a run sending goes on); else unchanged.';

create or replace function app_public.sequences_cancel_schedule_run(sequence_id uuid, run_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  r app_public.broadcast_runs;
  n int;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = s.organization_id and x.sequence_id = s.id and x.id = run_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Run not found');
  end if;
  if r.status = 'cancelled' then
    return jsonb_build_object('run_id', r.id, 'status', 'cancelled', 'cancelled', r.cancelled);
  end if;
  if r.status <> 'sending' then
    perform app_hidden.raise_error(409, 'run_finished',
      format('The run has ended (%s): nothing is left to cancel', r.status));
  end if;
  n := app_hidden.broadcast_cancel_runs(s.id, r.id);
  return jsonb_build_object('run_id', r.id, 'status', 'cancelled', 'cancelled', n);
end $$;
comment on function app_public.sequences_cancel_schedule_run(uuid, uuid) is
  'sequences_cancel_schedule_run: the run''s unsent enrollments cancelled; answers {run_id, status, cancelled}. 409 run_finished.';

-- The scheduler's job for a broadcast at its next_fire_at (job key broadcast_fire:<sequence id>:
-- setting it again moves it). The cron line each minute is the safety net.
create or replace function app_hidden.broadcast_queue_fire(organization_id uuid, sequence_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  at timestamptz;
begin
  select b.next_fire_at into at from app_public.broadcast_schedules b
   where b.organization_id = broadcast_queue_fire.organization_id and b.sequence_id = broadcast_queue_fire.sequence_id
     and b.status = 'scheduled'
     -- a request queues only for its own organization (the owner, with no claims, for any)
     and (app_hidden.current_org_id() is null or b.organization_id = app_hidden.current_org_id());
  if at is not null then
    perform app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || broadcast_queue_fire.sequence_id, at);
  end if;
end $$;
revoke all on function app_hidden.broadcast_queue_fire(uuid, uuid) from public;
grant execute on function app_hidden.broadcast_queue_fire(uuid, uuid) to svc_request;

grant execute on function app_public.sequences_set_schedule(uuid, jsonb), app_public.sequences_get_schedule(uuid, int, int),
  app_public.sequences_schedule_for_start(uuid), app_public.sequences_start_schedule(uuid, timestamptz),
  app_public.sequences_pause_schedule(uuid), app_public.sequences_cancel_schedule_run(uuid, uuid) to svc_request;

reset role;
