-- What a sequence step costs per message (docs/sequences-engine.md, "Performance"), cut where the
-- engine bench's profile (auto_explain, nested statements) found the time.
set local role svc_owner;

-- Ends live enrollments, as 000014 (part 120) does, each found by its primary key only: the live
-- test is made on the row read, not in the UPDATE's WHERE. With `e.status in ('active',
-- 'paused')` in the WHERE, the cached generic plan still took the partial unique index
-- enrollments_one_live (whose predicate that test implies) on organization_id alone, and read
-- every live enrollment of the organization for each one it ended: 0.9 ms a step at 5,000 live
-- enrollments, growing with them.
create or replace function app_private.end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text)
returns setof app_public.enrollments
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  one uuid;
  was text;
  ended app_public.enrollments;
begin
  if status not in ('cancelled', 'completed', 'failed') then
    raise exception 'end_enrollments: % is not an end status', status;
  end if;
  foreach one in array coalesce(enrollment_ids, '{}') loop
    select e.status into was from app_public.enrollments e
     where e.organization_id = end_enrollments.organization_id and e.id = one
       for update;
    continue when not found or was not in ('active', 'paused');
    update app_public.enrollments e
       set status = end_enrollments.status, end_reason = end_enrollments.reason, next_step_due_at = null,
           next_run_at = null, paused_at = null, updated_at = now()
     where e.organization_id = end_enrollments.organization_id and e.id = one
    returning e.* into ended;
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    values (ended.organization_id, ended.id, end_enrollments.status, ended.current_step_key, end_enrollments.reason);
    return next ended;
  end loop;
end $$;
comment on function app_private.end_enrollments(uuid, uuid[], text, text) is
  'Ends the live enrollments listed (cancelled, completed or failed, with a reason) and logs the event; returns those it ended.';
revoke execute on function app_private.end_enrollments(uuid, uuid[], text, text) from public;

reset role;
