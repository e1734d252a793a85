-- A burst of enrollments (an import with events, a bulk enroll) makes thousands of steps due at
-- once, each with its own sequence_step job. Running each through graphile-worker costs two
-- round trips of queue bookkeeping per message, as much as the step itself. So a sequence_step
-- job, after its own step, takes a handful of other due steps off the queue and runs them on the
-- same connection.
--
-- The enrollment, with its next_run_at, stays the durable unit of work: a step taken here has
-- no job until it runs, and should the process die first, the sweep (each minute) queues it
-- again, as it does for any due enrollment without a job. Running a step twice is harmless, as
-- ever: sequence_step_claim decides from the enrollment and its step runs, under a row lock.

-- graphile_worker.complete_jobs deletes by id; svc_owner needs the right to delete for the same
-- statement below. (A graphile-worker upgrade that recreates the table drops this; the tests of
-- the engine then fail, and a migration restates it.)
grant delete on graphile_worker._private_jobs to svc_owner;

set local role svc_owner;

create or replace function app_private.sequence_steps_take(size int)
returns table (organization_id uuid, enrollment_id uuid, step_key text)
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp
-- The jobs table's statistics are often those of a quiet moment: planned with them, the next few
-- jobs were found by reading every available one and sorting them (milliseconds in a burst).
-- Reading the (priority, run_at) index in order stops after the first few, as get_job does.
set enable_bitmapscan to off
set enable_sort to off as $$
begin
  -- the next due sequence_step jobs in graphile-worker's own order (priority, run_at), that no
  -- worker holds (graphile_worker.complete_jobs's rule); one a worker is locking at this moment
  -- is left to it, and one that failed before (or is flagged to run alone, having failed when
  -- taken) keeps its attempts and backoff
  return query
  delete from graphile_worker._private_jobs j
   where j.id in (select k.id from graphile_worker._private_jobs k
                   where k.is_available and k.attempts = 0 and k.flags is null and k.job_queue_id is null and k.run_at <= now()
                     and k.task_id = (select t.id from graphile_worker._private_tasks t where t.identifier = 'sequence_step')
                   order by k.priority, k.run_at
                   limit least(greatest(size, 0), 100)
                     for update of k skip locked)
     and j.locked_at is null
  returning (j.payload->>'organization_id')::uuid, (j.payload->>'enrollment_id')::uuid, j.payload->>'step_key';
end $$;
comment on function app_private.sequence_steps_take(int) is
  'Takes the next `size` (at most 100) due sequence_step jobs no worker holds off the queue, for the caller to run now; answers their payloads. A step the caller does not run is queued again by the sweep.';
revoke execute on function app_private.sequence_steps_take(int) from public;

-- Asked by a trigger on every enrollment that completes and every contact written: as a SQL
-- function with a SET clause it could not be inlined, and was planned again on each call.
create or replace function app_private.webhook_wanted(organization_id uuid, event text) returns boolean
language plpgsql stable
set search_path to pg_catalog, public, pg_temp as $$
begin
  return exists (select 1 from app_public.webhook_subscriptions s
                  where s.organization_id = webhook_wanted.organization_id and s.status = 'active'
                    and webhook_wanted.event = any(s.events));
end $$;

reset role;
