-- Worker processes that announce themselves, so that a live one can free the work of a dead one.
--
-- graphile-worker locks a job with its pool's id (locked_by) and frees a lock only after four
-- hours: a worker killed outright (SIGKILL, out of memory, the machine lost) would leave its jobs,
-- and the sequence steps and broadcast runs behind them, waiting that long. Each worker process
-- (src/worker.ts) therefore:
--   * holds a session advisory lock on its own id (app_private.worker_process_key) on a connection
--     of its own, for as long as it lives: the lock goes when its connection closes, which the
--     operating system does at once for a killed process;
--   * keeps a row here (app_private.worker_processes) naming its graphile-worker pools, seen_at
--     renewed every few seconds;
--   * every few seconds, and once when it starts, runs app_private.worker_processes_sweep, which
--     finds the processes that died and frees what they held.
-- A process is dead when its lock is free although it took it since the database last started
-- (a database restart frees every lock: a live process takes its lock again when it reconnects,
-- so a lock taken before the restart proves nothing), or when it has not been seen for 30 seconds
-- while the database has been up for longer than that.

-- The sweep frees a dead process's jobs through graphile-worker's own function, as svc_owner.
grant execute on function graphile_worker.force_unlock_workers(text[]) to svc_owner;
grant update on graphile_worker._private_job_queues to svc_owner;

set local role svc_owner;

create table if not exists app_private.worker_processes (
  id text primary key,
  -- graphile-worker's pool ids (the locked_by of the jobs this process runs)
  pool_ids text[] not null default '{}',
  host text,
  pid int,
  started_at timestamptz not null default now(),
  -- when this process last took its advisory lock (at start and after each reconnect)
  locked_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);
comment on table app_private.worker_processes is
  'Worker processes alive (or not yet known dead): each holds an advisory lock on its id and renews seen_at; app_private.worker_processes_sweep frees the work of a dead one.';

-- The step run's claimer: the worker process whose connection inserted it (its connections carry
-- the setting svc.worker_process), so that the sweep can settle the messages a dead process held.
alter table app_public.step_runs add column if not exists claimed_by text default nullif(current_setting('svc.worker_process', true), '');
comment on column app_public.step_runs.claimed_by is
  'The worker process (app_private.worker_processes) that claimed the step run; NULL when claimed outside a worker.';
create index if not exists step_runs_sending_by_claimer on app_public.step_runs (claimed_by) where status = 'sending';

-- The advisory lock key of a worker process.
create or replace function app_private.worker_process_key(id text) returns bigint
  language sql immutable as $$ select hashtextextended('svc.worker_process:' || id, 0) $$;

-- A process announces itself on its own connection: its lock taken (waits for none: the id is
-- new, or its own after a reconnect), its row written or renewed.
create or replace function app_private.worker_process_announce(id text, pool_ids text[], host text, pid int) returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform pg_advisory_lock(app_private.worker_process_key(worker_process_announce.id));
  insert into app_private.worker_processes as p (id, pool_ids, host, pid)
  values (worker_process_announce.id, worker_process_announce.pool_ids, worker_process_announce.host, worker_process_announce.pid)
  on conflict on constraint worker_processes_pkey do update
     set pool_ids = (select array_agg(distinct x) from unnest(p.pool_ids || excluded.pool_ids) x),
         locked_at = now(), seen_at = now();
end $$;
comment on function app_private.worker_process_announce(text, text[], text, int) is
  'A worker process takes its advisory lock and writes (or renews) its row, with its graphile-worker pool ids; on its own connection, at start and after each reconnect.';

-- Answers false when the row is gone (the process was taken for dead): it announces itself again.
create or replace function app_private.worker_process_seen(id text) returns boolean
  language sql security definer set search_path = pg_catalog, public, pg_temp as $$
  with seen as (update app_private.worker_processes p set seen_at = now() where p.id = worker_process_seen.id returning 1)
  select exists (select 1 from seen)
$$;

-- A process stopped cleanly: nothing of its is left to free.
create or replace function app_private.worker_process_gone(id text) returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  delete from app_private.worker_processes p where p.id = worker_process_gone.id;
  perform pg_advisory_unlock(app_private.worker_process_key(worker_process_gone.id));
end $$;

-- `self`: the caller, which runs it on the connection holding its own lock (where its lock would
-- look free, a session's advisory locks being its own to take again).
create or replace function app_private.worker_processes_sweep(self text) returns text[]
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  p app_private.worker_processes;
  db_up_since timestamptz := pg_postmaster_start_time();
  dead text[] := '{}';
  pools text[] := '{}';
  g record;
begin
  for p in select * from app_private.worker_processes x where x.id is distinct from self order by x.id for update skip locked loop
    -- the lock is taken for this transaction only when free: held by a live process, it is not
    if (p.locked_at > db_up_since and pg_try_advisory_xact_lock(app_private.worker_process_key(p.id)))
       or (p.seen_at < now() - interval '30 seconds' and db_up_since < now() - interval '30 seconds') then
      dead := dead || p.id;
      pools := pools || p.pool_ids;
    end if;
  end loop;
  if cardinality(dead) = 0 then
    return dead;
  end if;
  -- The sequence messages a dead process held with the transport: unknown (never handed over
  -- again), their enrollments moved on, as the step's claim does for a run sending past its
  -- bound. A broadcast run settles its own (app_private.broadcast_claim_batch, when its job runs
  -- again).
  for g in
    with gone as (
      update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
        from app_public.enrollments e
       where sr.claimed_by = any(dead) and sr.status = 'sending'
         and e.organization_id = sr.organization_id and e.id = sr.enrollment_id and e.run_id is null
         and e.current_step_key = sr.step_key
      returning sr.organization_id, sr.enrollment_id, sr.step_key, sr.message_id
    ), messages as (
      update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
        from gone
       where m.organization_id = gone.organization_id and m.id = gone.message_id and m.status = 'queued'
    ), logged as (
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
      select gone.organization_id, gone.enrollment_id, 'unknown', gone.step_key, gone.message_id, 'interrupted' from gone
    )
    select gone.organization_id, array_agg(gone.enrollment_id) as ids from gone group by gone.organization_id
  loop
    perform app_private.advance_enrollments(g.organization_id, g.ids);
  end loop;
  -- their jobs run again now, rather than when graphile-worker's four-hour lock expires
  perform graphile_worker.force_unlock_workers(pools);
  delete from app_private.worker_processes x where x.id = any(dead);
  return dead;
end $$;
comment on function app_private.worker_processes_sweep(text) is
  'Finds the worker processes that died (lock free since taken, or unseen for 30 s) and frees their work: sequence messages they held with the transport made unknown and their enrollments moved on, their graphile-worker jobs unlocked, their rows deleted. Answers their ids.';

revoke all on table app_private.worker_processes from public;
revoke execute on function app_private.worker_process_announce(text, text[], text, int) from public;
revoke execute on function app_private.worker_process_seen(text) from public;
revoke execute on function app_private.worker_process_gone(text) from public;
revoke execute on function app_private.worker_processes_sweep(text) from public;

reset role;
