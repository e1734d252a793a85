-- app_private.end_enrollments, restated (first in 120-sequences-enrollment-json.sql): the
-- enrollments listed are found by primary key, one probe per id, and only then tested for being
-- live. Written as `e.id = any(ids) and e.status in ('active', 'paused')`, the status test is the
-- predicate of the partial unique index enrollments_one_live, which the planner could take on
-- organization_id alone and read every live enrollment of the organization (as it did for
-- schedule_enrollment_steps: 305). Same semantics otherwise.
set local role svc_owner;

create or replace function app_private.end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text)
returns setof app_public.enrollments
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if status not in ('cancelled', 'completed', 'failed') then
    raise exception 'end_enrollments: % is not an end status', status;
  end if;
  return query
  with listed as (
    select x.organization_id, x.id from unnest(enrollment_ids) as i(id)
      join app_public.enrollments x on x.organization_id = end_enrollments.organization_id and x.id = i.id
    offset 0   -- the fence keeps the status test out of the lookup, so only the primary key fits it
  ), ended as (
    update app_public.enrollments e
       set status = end_enrollments.status, end_reason = end_enrollments.reason, next_step_due_at = null,
           next_run_at = null, paused_at = null, updated_at = now()
      from listed
     where e.organization_id = listed.organization_id and e.id = listed.id
       and e.status in ('active', 'paused')
    returning e.*
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    select ended.organization_id, ended.id, end_enrollments.status, ended.current_step_key, end_enrollments.reason from ended
  )
  select * from ended;
end $$;
comment on function app_private.end_enrollments(uuid, uuid[], text, text) is
  'Ends the live enrollments listed (cancelled, completed or failed, with a reason) and logs the event; returns those it ended.';
revoke execute on function app_private.end_enrollments(uuid, uuid[], text, text) from public;

reset role;
