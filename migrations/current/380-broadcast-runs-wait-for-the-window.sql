-- A broadcast fired while its send window is closed waits for the opening, `sending`.
--
-- A broadcast's messages go out inside the send schedule of its sequence, as every step of the
-- sequences engine does. A run that fires outside it is held: `held_until` is the schedule's next
-- opening, and the run's job is queued for then, not for now. Until then the run reads `sending`
-- with its recipients counted as `waiting` (none has gone, none is finished), so
-- sequences_cancel_schedule_run stops all of them and answers the count; at the opening the job
-- sends the run and it completes. The stalled-run recovery (broadcast_requeue_stalled) passes a
-- held run by: no progress before its window is not a dead worker.

set local role svc_owner;

alter table app_public.broadcast_runs add column if not exists held_until timestamptz;

comment on column app_public.broadcast_runs.held_until is
  'The send window was closed when the run fired: its next opening, when the run''s job sends it. NULL when it fired inside the window.';

create or replace function app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
#variable_conflict use_column
declare
  b app_public.broadcast_schedules;
  s app_public.sequences;
  a app_public.audiences;
  f app_hidden.audience_filter;
  run uuid;
  first_key text;
  members uuid[];
  n int;
  held timestamptz;
begin
  select * into b from app_public.broadcast_schedules x
   where x.organization_id = broadcast_fire.organization_id and x.sequence_id = broadcast_fire.sequence_id for update;
  if not found or b.status <> 'scheduled' or b.next_fire_at is distinct from broadcast_fire.fire_at then
    return null;
  end if;
  update app_public.broadcast_schedules x set next_fire_at = broadcast_fire.next_fire_at, updated_at = now()
   where x.organization_id = b.organization_id and x.sequence_id = b.sequence_id;
  if broadcast_fire.next_fire_at is not null then
    perform app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || b.sequence_id, broadcast_fire.next_fire_at);
  end if;
  select * into s from app_public.sequences x where x.organization_id = b.organization_id and x.id = b.sequence_id;
  -- a deactivated broadcast sends nothing: the occurrence passes
  if s.status <> 'active' then
    return null;
  end if;
  insert into app_public.broadcast_runs (organization_id, sequence_id, fire_at)
  values (b.organization_id, b.sequence_id, broadcast_fire.fire_at)
  on conflict do nothing
  returning id into run;
  if run is null then
    return null;
  end if;
  select * into a from app_public.audiences x where x.organization_id = s.organization_id and x.id = s.audience_id;
  first_key := s.steps->0->>'step_key';
  if a.id is null or a.archived_at is not null or first_key is null then
    update app_public.broadcast_runs x set status = 'failed', finished_at = now()
     where x.organization_id = b.organization_id and x.id = run;
    return run;
  end if;
  -- the members as of now, as one list, so both kinds of audience enroll through one statement
  if a.kind = 'dynamic' then
    -- the audience's own rule compiler (no SQL from input: values go as parameters), as
    -- app_hidden.audience_count runs it, for the schedule's organization and with every field
    -- readable: a fire has no request, so no credential's claims to read them from
    f := app_hidden.audience_filter_of(s.organization_id, true, a.definition, 'definition.rules');
    execute 'select coalesce(array_agg(c.id), ''{}'') from app_public.contacts c where c.organization_id = $6 and ('
            || f.condition || ')'
      into members using f.texts, f.numbers, f.times, f.ids, f.bools, s.organization_id;
  else
    members := array(select m.contact_id from app_public.audience_members m
                      where m.organization_id = a.organization_id and m.audience_id = a.id);
  end if;
  with ins as (
    insert into app_public.enrollments as x (organization_id, sequence_id, contact_id, status, current_step_index,
      current_step_key, next_step_due_at, next_run_at, source, run_id)
    select s.organization_id, s.id, m.contact_id, 'active', 0, first_key, broadcast_fire.fire_at, null, 'broadcast', run
      from unnest(members) m(contact_id)
     where s.location_id is null
        or exists (select 1 from app_public.contact_locations l
                    where l.organization_id = s.organization_id and l.contact_id = m.contact_id and l.location_id = s.location_id)
    on conflict (organization_id, sequence_id, contact_id) where status in ('active', 'paused') do nothing
    returning x.id
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    select s.organization_id, ins.id, 'enrolled', first_key, 'broadcast' from ins
  )
  select count(*) into n from ins;
  -- outside the send window, the run waits for its opening (the sequences engine's rule for a
  -- step due outside it); its recipients stay the run's to send, and to cancel
  held := app_hidden.sequence_next_run(s.organization_id, s.send_schedule_id, now());
  update app_public.broadcast_runs x set recipients = n, held_until = case when held > now() then held end
   where x.organization_id = b.organization_id and x.id = run;
  perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', s.organization_id, 'run_id', run),
    'broadcast_run:' || run, greatest(held, now()));
  return run;
end $_$;

comment on function app_private.broadcast_fire(uuid, uuid, timestamptz, timestamptz) is
  'Fires one occurrence once (schedule locked, still waiting for fire_at; unique run per occurrence): schedule moved on, the audience snapshotted into enrollments of the run, the run''s job queued now, or at the send window''s next opening (held_until) when it is closed. Answers the run id or NULL.';
revoke all on function app_private.broadcast_fire(uuid, uuid, timestamptz, timestamptz) from public;

create or replace function app_private.broadcast_requeue_stalled() returns integer
    language plpgsql security definer
    set search_path to 'pg_catalog', 'public', 'pg_temp'
    as $$
declare
  r record;
  n int := 0;
begin
  for r in
    select x.organization_id, x.id from app_public.broadcast_runs x
     where x.status = 'sending' and x.progress_at < now() - interval '5 minutes'
       -- waiting for its send window: its job is queued for the opening
       and not coalesce(x.held_until > now(), false)
     for update skip locked
  loop
    update app_public.broadcast_runs x set progress_at = now() where x.organization_id = r.organization_id and x.id = r.id;
    perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', r.organization_id, 'run_id', r.id),
      'broadcast_run:' || r.id, now());
    n := n + 1;
  end loop;
  return n;
end $$;

comment on function app_private.broadcast_requeue_stalled() is
  'Queues a new broadcast_run job for each run sending without progress for five minutes (its worker died); a run waiting for its send window (held_until ahead) is not stalled.';
revoke all on function app_private.broadcast_requeue_stalled() from public;

create or replace function app_hidden.broadcast_run_json(r app_public.broadcast_runs) returns jsonb
    language sql stable
    as $$
  select jsonb_build_object('id', r.id, 'status', r.status, 'fire_at', r.fire_at, 'started_at', r.started_at,
    'finished_at', r.finished_at, 'recipients', r.recipients, 'sent', r.sent, 'skipped', r.skipped, 'failed', r.failed,
    'unknown', r.unknown, 'cancelled', r.cancelled,
    -- a sending run's recipients not yet sent, skipped, failed, unknown or cancelled; an ended run has none
    'waiting', case when r.status = 'sending'
                    then greatest(0, r.recipients - r.sent - r.skipped - r.failed - r.unknown - r.cancelled) else 0 end,
    'held_until', case when r.status = 'sending' and r.held_until > now() then r.held_until end)
$$;

comment on function app_hidden.broadcast_run_json(app_public.broadcast_runs) is
  'A run as the API shows it: its counts, `waiting` (recipients of a sending run not yet gone) and `held_until` (the send window''s opening a run waits for).';

reset role;
