-- The enrollment is the durable unit of work of the engine; its step's graphile-worker job is
-- added only when the step comes near (docs/sequences-engine.md, "When a step's job is added").
--
-- Before, every write that set an enrollment's next step (an enroll, a resume, the engine moving
-- on) added the step's job in its own transaction, through graphile_worker.add_jobs, which
-- always pg_notify's: alone that capped sequences_enroll at about 1,200 requests/s on the bench
-- server, well under half of what a read answers, for a job due in an hour or in a week.
--
-- Now:
--   * An enrollment whose step runs later than now + app_hidden.sequence_sweep_horizon() (two
--     minutes) gets no job in the writer's transaction. The sweep (task sequence_step_sweep,
--     cron each minute) adds, in one add_jobs call, the job of every active enrollment that runs
--     within the horizon and has none; its key (sequence_step:<enrollment id>) makes a second
--     sweep, or a sweep racing a writer, add nothing twice.
--   * A request that enrolls one contact into a step running within the horizon does not add its
--     job either: it makes sure its organization has one sequence_step_sweep job waiting to run
--     now (key sequence_step_sweep:<organization id>), so a burst of requests shares one job and
--     one notification, and the sweep picks them up within moments. A set enrolled into a step
--     running within the horizon (an event fired for thousands of contacts) gets its jobs in one
--     add_jobs call, as before: one notification for all.
--   * The other writers (app_private.schedule_enrollment_steps: a resume, the engine moving an
--     enrollment on in the worker) add the job of a step running within the horizon themselves,
--     as before (a step with no delay goes out at once), and move a job already waiting for the
--     enrollment to its new run time, so a job never runs a step early.
-- Crash safety is unchanged: an enrollment committed is found by the next sweep whatever happened
-- to the process that wrote it; the step run's uniqueness still keeps a step from running twice.
set local role svc_owner;

create or replace function app_hidden.sequence_sweep_horizon() returns interval
language sql immutable parallel safe as $$ select interval '2 minutes' $$;
comment on function app_hidden.sequence_sweep_horizon() is
  'How far ahead the sequence_step_sweep adds step jobs: more than its cron period (one minute), so a step gets its job '
  'before it is due.';

-- The sweep reads, per organization, the active enrollments that run within the horizon.
create index if not exists enrollments_due on app_public.enrollments (organization_id, next_run_at)
  where status = 'active';

-- The advisory lock a request holds (shared, until it commits) while it relies on a waiting
-- sweep job of its organization, and the sweep takes (exclusive) before it reads.
create or replace function app_hidden.sequence_sweep_lock_key(organization_id uuid) returns int
language sql immutable parallel safe as $$ select hashtext('sequence_step_sweep:' || organization_id) $$;
comment on function app_hidden.sequence_sweep_lock_key(uuid) is
  'The second key of the advisory lock (first key 7613) that orders requests relying on a waiting sweep job before that sweep.';

-- Makes sure the organization has a sequence_step_sweep job waiting to run now. Called by a
-- transaction that wrote enrollments running within the horizon, and adds nothing when a job is
-- waiting (not yet taken by a worker): that job's sweep will see this transaction's enrollments,
-- because the sweep first waits for every transaction holding the shared lock taken here, and
-- the lock is held until commit. When the waiting job has been taken already (or there is none),
-- a new one is added (graphile-worker gives a key held by a running job to a new job).
create or replace function app_private.kick_step_sweep(organization_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform pg_advisory_xact_lock_shared(7613, app_hidden.sequence_sweep_lock_key(kick_step_sweep.organization_id));
  if not exists (select 1 from graphile_worker._private_jobs j
                  where j.key = 'sequence_step_sweep:' || kick_step_sweep.organization_id and j.locked_at is null
                    and j.attempts < j.max_attempts) then
    perform graphile_worker.add_job('sequence_step_sweep', json_build_object('organization_id', kick_step_sweep.organization_id),
      job_key => 'sequence_step_sweep:' || kick_step_sweep.organization_id);
  end if;
end $$;
comment on function app_private.kick_step_sweep(uuid) is
  'Makes sure the organization has a sequence_step_sweep job waiting to run now (one for a burst of writers).';
revoke execute on function app_private.kick_step_sweep(uuid) from public;

-- Adds the job of every active enrollment (of one organization, or all) that runs by `until`
-- (default now + the horizon) and has no job, at its next_run_at, in one add_jobs call. Rows a
-- writer holds are skipped (that writer schedules them itself, or the next sweep finds them);
-- rows are read locked (for share), so a writer that changes one after waits for the job added
-- here and then moves it. Answers how many jobs it added.
create or replace function app_private.sweep_enrollment_steps(organization_id uuid default null, until timestamptz default null)
returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  upto timestamptz := coalesce(until, now() + app_hidden.sequence_sweep_horizon());
  specs graphile_worker.job_spec[];
begin
  if organization_id is not null then
    -- every request that saw this organization's sweep job waiting has committed once this lock
    -- is granted, and the statement below (a new snapshot) sees its enrollments. Held to the end
    -- of this transaction (a lock taken and let go at once would stay taken were the statement
    -- cancelled in between): requests kicking meanwhile wait for this sweep, milliseconds.
    perform pg_advisory_xact_lock(7613, app_hidden.sequence_sweep_lock_key(sweep_enrollment_steps.organization_id));
  end if;
  specs := array(
    select row('sequence_step',
               json_build_object('organization_id', e.organization_id, 'enrollment_id', e.id, 'step_key', e.current_step_key),
               null, e.next_run_at, null, 'sequence_step:' || e.id, null, null)::graphile_worker.job_spec
      from app_public.organizations o
     cross join lateral (
       select x.organization_id, x.id, x.current_step_key, x.next_run_at from app_public.enrollments x
        where x.organization_id = o.id and x.status = 'active' and x.next_run_at <= upto and x.current_step_key is not null
          and not exists (select 1 from graphile_worker._private_jobs j where j.key = 'sequence_step:' || x.id)
          for share of x skip locked) e
     where sweep_enrollment_steps.organization_id is null or o.id = sweep_enrollment_steps.organization_id);
  if cardinality(specs) = 0 then
    return 0;
  end if;
  return (select count(*)::int from graphile_worker.add_jobs(specs, false));
end $$;
comment on function app_private.sweep_enrollment_steps(uuid, timestamptz) is
  'Adds the sequence_step job (key sequence_step:<id>, at next_run_at) of each active enrollment that runs by `until` '
  '(default now + the sweep horizon) and has none; one organization or all. Answers how many it added.';
revoke execute on function app_private.sweep_enrollment_steps(uuid, timestamptz) from public;

-- (Re)schedules the pending step of each live, active enrollment listed, in the transaction that
-- changed them (a resume, the engine moving on, a claim that finds its message still with the
-- transport): a job waiting for one of them is moved to its next_run_at, as before; one without a
-- job gets it now when it runs within the sweep horizon (a step with no delay goes out at once),
-- and from the sweep otherwise. The enrollments are looked up by primary key, one probe per id, and
-- only then tested (the fence: see 000014, part 110). Answers how many jobs it added or moved.
create or replace function app_private.schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  specs graphile_worker.job_spec[];
begin
  specs := array(
    select row('sequence_step',
               json_build_object('organization_id', e.organization_id, 'enrollment_id', e.id, 'step_key', e.current_step_key),
               null, e.next_run_at, null, 'sequence_step:' || e.id, null, null)::graphile_worker.job_spec
      from (select x.* from unnest(enrollment_ids) as i(id)
              join app_public.enrollments x on x.organization_id = schedule_enrollment_steps.organization_id and x.id = i.id
            offset 0) e   -- the fence keeps the status test out of the lookup, so only the primary key fits it
     where e.status = 'active' and e.current_step_key is not null and e.next_run_at is not null
       and (e.next_run_at <= now() + app_hidden.sequence_sweep_horizon()
            or exists (select 1 from graphile_worker._private_jobs j where j.key = 'sequence_step:' || e.id and j.locked_at is null)));
  if cardinality(specs) = 0 then
    return 0;
  end if;
  return (select count(*)::int from graphile_worker.add_jobs(specs, false));
end $$;
comment on function app_private.schedule_enrollment_steps(uuid, uuid[]) is
  'Moves the waiting sequence_step job of each listed active enrollment to its next_run_at, or adds it when it runs within the '
  'sweep horizon; later steps get theirs from sequence_step_sweep. Job key sequence_step:<id>.';
revoke execute on function app_private.schedule_enrollment_steps(uuid, uuid[]) from public;

-- The one way contacts enter a sequence, as 000014 (part 300) has it, but the enrollment is the
-- unit of work. All the new enrollments run at the same time: later than the sweep horizon, no
-- job is added here (the cron sweep adds them when it comes near); within it, one contact (a
-- request) kicks its organization's sweep (one waiting job for a burst of requests), and a set
-- (an event fired for thousands) gets its jobs in one add_jobs call, as before: one notification
-- for all, and every worker has jobs at once.
create or replace function app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[],
  start_step_key text default null, source text default 'manual', entry_event text default null, at timestamptz default now())
returns table (out_contact_id uuid, out_enrolled boolean, out_enrollment_id uuid)
language plpgsql volatile security definer
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
comment on function app_private.enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamptz) is
  'Enrolls contacts (the one core of every way in, set-based): enrollment on the first or given step, due at + delay, run in '
  'the send window, enrolled event; step jobs added at once for a set due within the sweep horizon, else from the sweep (one '
  'contact due within it kicks it); a contact already live answers its enrollment (not enrolled).';
revoke execute on function app_private.enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamptz) from public;

reset role;
