-- How an enrollment reads in every answer that carries one (sequences_enroll, the enrollment
-- lists, sequences_get_enrollment, sequences_cancel_enrollment): one renderer, so the shapes agree.
set local role svc_owner;

create or replace function app_hidden.enrollment_json(e app_public.enrollments) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', e.id,
    'sequence_id', e.sequence_id,
    'contact_id', e.contact_id,
    'status', e.status,
    'current_step_index', e.current_step_index,
    'current_step_key', e.current_step_key,
    'next_step_due_at', e.next_step_due_at,
    'next_run_at', e.next_run_at,
    'paused_at', e.paused_at,
    'end_reason', e.end_reason,
    'source', e.source,
    'created_at', e.created_at,
    'updated_at', e.updated_at)
$$;
comment on function app_hidden.enrollment_json(app_public.enrollments) is
  'An enrollment as the API shows it: created_at is when the contact was enrolled, updated_at (once ended) when it ended.';
grant execute on function app_hidden.enrollment_json(app_public.enrollments) to svc_request, svc_worker;

-- Ends live enrollments (active or paused): cancelled (sequences_cancel_enrollment, a suppression,
-- deactivation of the sequence), completed (an exit condition, the last step) or failed (a hard
-- bounce). The step they stood on stays in current_step_index/current_step_key, to show where
-- they stopped; nothing is due any more. Each gets its event. A pending sequence_step job finds
-- the enrollment ended and does nothing. Enrollments already ended are left as they are (a
-- second cancel answers the same row), and are not returned.
-- The enrollments listed are found by primary key, one probe per id, and only then tested for
-- being live (a status test next to `id = any(ids)` would let the planner read every live
-- enrollment of the organization through enrollments_one_live, as schedule_enrollment_steps did).
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
