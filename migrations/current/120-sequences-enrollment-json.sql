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

reset role;
