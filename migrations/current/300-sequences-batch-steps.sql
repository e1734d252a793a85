-- The sequences engine's moves for many enrollments at once (docs/broadcasts.md, "Crash safety:
-- checkpointed batches"): a broadcast batch finishes hundreds of step runs in one transaction, and
-- the per-enrollment functions (app_private.advance_enrollment, app_private.end_enrollments) cost
-- a few statements each. These do the same in a few statements for the whole set, and leave what
-- only a per-enrollment evaluation can decide (edges with conditions) to those functions.
set local role svc_owner;

-- The per-row count of a status change (000014 part 400) costs a PL/pgSQL call and a two-row
-- insert for each enrollment; a statement that ends hundreds counts them itself, grouped, and
-- says so for the length of that statement with the transaction-local setting
-- svc.enrollment_counts = 'batched' (set just before its UPDATE and cleared just after).
drop trigger if exists _500_count_status on app_public.enrollments;
create trigger _500_count_status after update of status, sequence_id on app_public.enrollments
  for each row when ((old.status is distinct from new.status or old.sequence_id is distinct from new.sequence_id)
                     and current_setting('svc.enrollment_counts', true) is distinct from 'batched')
  execute function app_private.tg_enrollments__count_status();

-- Ends the live enrollments listed, as app_private.end_enrollments does (status, reason, the
-- schedule cleared, an event each), in one statement, the counts moved per (sequence, status)
-- rather than per row. Each row is found by its primary key and only then tested live (the
-- fence, as in 000015 part 610). Answers how many it ended.
create or replace function app_private.end_enrollments_set(organization_id uuid, enrollment_ids uuid[], status text, reason text)
returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  n int;
begin
  if status not in ('cancelled', 'completed', 'failed') then
    raise exception 'end_enrollments_set: % is not an end status', status;
  end if;
  if coalesce(cardinality(enrollment_ids), 0) = 0 then
    return 0;
  end if;
  perform set_config('svc.enrollment_counts', 'batched', true);
  with live as (
    select x.id, x.sequence_id, x.status from (
      select y.id, y.sequence_id, y.status from app_public.enrollments y
       where y.organization_id = end_enrollments_set.organization_id and y.id = any(enrollment_ids)
      offset 0) x
     where x.status in ('active', 'paused')
  ), ended as (
    update app_public.enrollments e
       set status = end_enrollments_set.status, end_reason = end_enrollments_set.reason, next_step_due_at = null,
           next_run_at = null, paused_at = null, updated_at = now()
      from live
     where e.organization_id = end_enrollments_set.organization_id and e.id = live.id
    returning e.organization_id, e.id, e.sequence_id, e.current_step_key, live.status as was
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    select ended.organization_id, ended.id, end_enrollments_set.status, ended.current_step_key, end_enrollments_set.reason from ended
  ), counted as (
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select ended.organization_id, ended.sequence_id, t.status, sum(t.n)
      from ended cross join lateral (values (ended.was, -1), (end_enrollments_set.status, 1)) t(status, n)
     group by ended.organization_id, ended.sequence_id, t.status
  )
  select count(*) into n from ended;
  perform set_config('svc.enrollment_counts', '', true);
  if n > 0 and random() < 1.0 / 32 then
    perform app_private.fold_enrollment_counts(s.organization_id, s.sequence_id)
       from (select distinct e.organization_id, e.sequence_id from app_public.enrollments e
              where e.organization_id = end_enrollments_set.organization_id and e.id = any(enrollment_ids)) s;
  end if;
  return n;
end $$;
comment on function app_private.end_enrollments_set(uuid, uuid[], text, text) is
  'Ends the live enrollments listed (cancelled, completed or failed, with a reason), set-based, with their events; answers how many.';
revoke execute on function app_private.end_enrollments_set(uuid, uuid[], text, text) from public;

-- Moves the active enrollments listed on from the step each stands on, as
-- app_private.advance_enrollment does for one: grouped by (sequence, step), a sequence without
-- edges moves the whole group in one statement (the next step in list order, due at + its delay in
-- the send window, jobs scheduled; none: completed, last_step); a sequence with edges (whose
-- conditions hold per contact) moves each through app_private.advance_enrollment.
create or replace function app_private.advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamptz default now())
returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  g record;
  s app_public.sequences;
  one uuid;
  idx int;
  step jsonb;
  due timestamptz;
begin
  for g in
    select x.sequence_id, x.current_step_key, array_agg(x.id order by x.id) as ids
      from (select y.id, y.sequence_id, y.current_step_key, y.status from app_public.enrollments y
             where y.organization_id = advance_enrollments.organization_id and y.id = any(enrollment_ids)
            offset 0) x
     where x.status = 'active'
     group by x.sequence_id, x.current_step_key
  loop
    select * into s from app_public.sequences x where x.organization_id = advance_enrollments.organization_id and x.id = g.sequence_id;
    if jsonb_array_length(s.edges) > 0 then
      foreach one in array g.ids loop
        perform app_private.advance_enrollment(advance_enrollments.organization_id, one, at);
      end loop;
      continue;
    end if;
    idx := null;
    select t.o into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = g.current_step_key limit 1;
    step := case when idx is not null then s.steps->idx end;
    if step is null then
      perform app_private.end_enrollments_set(advance_enrollments.organization_id, g.ids, 'completed', 'last_step');
      continue;
    end if;
    due := at + app_hidden.step_delay(step);
    update app_public.enrollments x
       set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
           next_run_at = app_hidden.sequence_next_run(advance_enrollments.organization_id, s.send_schedule_id, due), updated_at = at
     where x.organization_id = advance_enrollments.organization_id and x.id = any(g.ids);
    perform app_private.schedule_enrollment_steps(advance_enrollments.organization_id, g.ids);
  end loop;
end $$;
comment on function app_private.advance_enrollments(uuid, uuid[], timestamptz) is
  'advance_enrollment for a set: each (sequence, step) group moved in one statement (next step in list order, or completed); '
  'sequences with edges one enrollment at a time.';
revoke execute on function app_private.advance_enrollments(uuid, uuid[], timestamptz) from public;

reset role;
