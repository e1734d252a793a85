--! Previous: sha1:9433f2404afe72c0656f9a83d133d3ebdd54dfcf
--! Hash: sha1:c2c8c657bf2269ec6435646433d84c14625c849d
--! Message: Sequence steps taken together; enroll without shared-row key checks or a count trigger; re-planned lookups made PL/pgSQL

--! split: 010-sequence-steps-taken-together.sql
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

--! split: 020-sequences-enroll-cost.sql
-- What an enroll pays that a read does not, made smaller (bench/sequences-enroll.ts; its
-- function profile is in docs/sequences-engine.md, "Performance").

-- Foreign keys whose check locks a row every writer shares. A key check takes FOR KEY SHARE on
-- the parent row; when sixteen transactions at once hold it on the organization's one row, each
-- new locker makes a new MultiXact of all of them and logs the lock: that serialized enrolls.
--  - enrollments: its organization is already vouched for by its sequence and its contact, both
--    keyed by (organization_id, id) and both of that organization; deleting the organization
--    still cascades through them.
--  - enrollment_counts: keyed by sequence, as its rows are; the enrollment's own check has taken
--    the sequence's row already, and a transaction locking a row it holds makes no MultiXact.
set local role svc_owner;

alter table app_public.enrollments drop constraint if exists enrollments_organization_id_fkey;

alter table app_private.enrollment_counts drop constraint if exists enrollment_counts_organization_id_fkey;
alter table app_private.enrollment_counts drop constraint if exists enrollment_counts_sequence_fkey;
alter table app_private.enrollment_counts add constraint enrollment_counts_sequence_fkey
  foreign key (organization_id, sequence_id) references app_public.sequences (organization_id, id) on delete cascade;

-- Asked once per enroll and per step moved on: as a SQL function with a SET clause it could not
-- be inlined and was planned again on every call.
create or replace function app_hidden.sequence_send_schedule(organization_id uuid, send_schedule_id uuid)
returns app_public.send_schedules
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_public.send_schedules;
begin
  select * into s from app_public.send_schedules x
   where x.organization_id = sequence_send_schedule.organization_id
     and (x.id = sequence_send_schedule.send_schedule_id or (sequence_send_schedule.send_schedule_id is null and x.is_default))
   limit 1;
  return s;
end $$;

-- An enroll's count row, written by the enroll itself: a statement trigger with a transition
-- table cost as much as the row it wrote (a tuplestore, a grouped insert, a loop).
create or replace function app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text DEFAULT NULL::text, source text DEFAULT 'manual'::text, entry_event text DEFAULT NULL::text, at timestamp with time zone DEFAULT now()) RETURNS TABLE(out_contact_id uuid, out_enrolled boolean, out_enrollment_id uuid)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  s app_public.sequences;
  idx int;
  step jsonb;
  due timestamptz;
  run_at timestamptz;
  pending uuid[] := array(select distinct c from unnest(contact_ids) c where c is not null);
  answered uuid[] := '{}';
  new_ids uuid[] := '{}';
  r record;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_contacts.organization_id and x.id = enroll_contacts.sequence_id;
  if not found then
    raise exception 'enroll_contacts: no sequence %', enroll_contacts.sequence_id;
  end if;
  if start_step_key is null then
    idx := 0;
  else
    select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = start_step_key limit 1;
  end if;
  step := s.steps->idx;
  if step is null then
    return;
  end if;
  due := at + app_hidden.step_delay(step);
  run_at := app_hidden.sequence_next_run(enroll_contacts.organization_id, s.send_schedule_id, due);
  -- the count of the enrollments made is written once below, not by the statement trigger
  -- (_500_count_inserted) on each insert of the loop
  perform set_config('svc.enrollment_counts', 'batched', true);
  while cardinality(pending) > 0 loop
    for r in
      with ins as (
        insert into app_public.enrollments as x (organization_id, sequence_id, contact_id, status, current_step_index,
          current_step_key, next_step_due_at, next_run_at, source, entry_event, created_at, updated_at)
        select enroll_contacts.organization_id, enroll_contacts.sequence_id, c, 'active', idx, step->>'step_key', due, run_at,
               enroll_contacts.source, enroll_contacts.entry_event, at, at
          from unnest(pending) c
        on conflict (organization_id, sequence_id, contact_id) where status in ('active', 'paused') do nothing
        returning x.id, x.contact_id
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, at, step_key, reason)
        select enroll_contacts.organization_id, ins.id, 'enrolled', at, step->>'step_key', enroll_contacts.source from ins
      )
      select ins.id, ins.contact_id from ins
    loop
      new_ids := new_ids || r.id;
      answered := answered || r.contact_id;
      out_contact_id := r.contact_id; out_enrolled := true; out_enrollment_id := r.id;
      return next;
    end loop;
    pending := array(select c from unnest(pending) c where not c = any(answered));
    exit when cardinality(pending) = 0;
    -- those that conflicted: the live enrollment (committed by now), one index probe each
    for r in
      select x.id, x.contact_id from unnest(pending) c
        join app_public.enrollments x on x.organization_id = enroll_contacts.organization_id
         and x.sequence_id = enroll_contacts.sequence_id and x.contact_id = c and x.status in ('active', 'paused')
    loop
      answered := answered || r.contact_id;
      out_contact_id := r.contact_id; out_enrolled := false; out_enrollment_id := r.id;
      return next;
    end loop;
    -- a live enrollment that ended between the two: try those again
    pending := array(select c from unnest(pending) c where not c = any(answered));
  end loop;
  perform set_config('svc.enrollment_counts', '', true);
  if cardinality(new_ids) > 0 then
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    values (enroll_contacts.organization_id, enroll_contacts.sequence_id, 'active', cardinality(new_ids));
    if random() < 1.0 / 32 then
      perform app_private.fold_enrollment_counts(enroll_contacts.organization_id, enroll_contacts.sequence_id);
    end if;
  end if;
  if cardinality(new_ids) > 0 and run_at <= now() + app_hidden.sequence_sweep_horizon() then
    if cardinality(new_ids) = 1 then
      perform app_private.kick_step_sweep(enroll_contacts.organization_id);
    else
      -- a set (an event fired for many contacts): their jobs in one add_jobs call, one notification
      perform graphile_worker.add_jobs(array(
        select row('sequence_step', json_build_object('organization_id', enroll_contacts.organization_id, 'enrollment_id', i,
                   'step_key', step->>'step_key'), null, run_at, null, 'sequence_step:' || i, null, null)::graphile_worker.job_spec
          from unnest(new_ids) i), false);
    end if;
  end if;
end $$;

drop trigger if exists _500_count_inserted on app_public.enrollments;
create trigger _500_count_inserted after insert on app_public.enrollments
  referencing new table as new_rows for each statement
  when (current_setting('svc.enrollment_counts', true) is distinct from 'batched')
  execute function app_private.tg_enrollments__count_rows();

reset role;
