-- app_private.schedule_enrollment_steps, restated (first in 110-sequences-send-windows.sql):
-- its enrollments are now looked up by primary key, one probe per id, and only then tested. Written as
-- `e.id = any(ids) and e.status = 'active'`, the planner took the partial unique index
-- enrollments_one_live (whose predicate the status implies) on organization_id alone and read
-- every live enrollment of the organization for each call: 3 ms at 6,000 enrollments, and every
-- enroll and every step moving on calls it (bench/sequences-enroll.ts). And plpgsql, so that its
-- plan is made once per connection rather than on every call.
set local role svc_owner;

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
     where e.status = 'active' and e.current_step_key is not null and e.next_run_at is not null);
  if cardinality(specs) = 0 then
    return 0;
  end if;
  return (select count(*)::int from graphile_worker.add_jobs(specs, false));
end $$;
comment on function app_private.schedule_enrollment_steps(uuid, uuid[]) is
  'Adds (or moves) the sequence_step job of each listed active enrollment to its next_run_at; job key sequence_step:<id>.';
revoke execute on function app_private.schedule_enrollment_steps(uuid, uuid[]) from public;

reset role;
