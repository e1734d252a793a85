-- Broadcasts: firing an occurrence and sending a run in checkpointed batches (docs/broadcasts.md,
-- "Runs" and "Crash safety"). Called by the worker's tasks broadcast_fire and broadcast_run
-- (src/broadcasts/), on graphile-worker's owner connection.
--
-- A batch is three steps, as a sequence step is (src/sequences/sequence_step.ts), for many
-- enrollments at once, through the same SQL: app_private.sequence_step_claim renders and claims
-- each message (or skips it, with the reason, or stores it in the local sink at once), and
-- app_private.sequence_step_record records what the transport answered.
--   1. broadcast_claim_batch: one transaction claims the next enrollments of the run in id
--      order and writes the checkpoint (the run's in_flight: the enrollments handed over next);
--   2. the transport gets the messages, after that commit;
--   3. broadcast_record_batch: the answers recorded, counts moved, in_flight emptied.
-- The checkpoint moves only after the transport answered. A process that dies between 1 and 3
-- leaves in_flight set: the next claim marks those step runs `unknown` (never handed over
-- again) and goes on with the recipients after them.
set local role svc_owner;

-- Fires one occurrence of a scheduled broadcast, once: only while the schedule is scheduled and
-- still waits for exactly this fire_at (the row locked), and the run's unique
-- (sequence, fire_at) stops any second run of it. The schedule moves to next_fire_at (computed by
-- the caller with Temporal; NULL: the series has ended). The audience's members now become the
-- run's recipients: enrollments on the first step with next_run_at NULL (the run's job sends
-- them, the engine's sweep does not), each contact once; a location-bound broadcast takes the
-- contacts linked to its location; a contact still live in an earlier run is not enrolled
-- twice. Opt-outs and suppressions are checked when each message goes (skipped, with reason).
-- Answers the run's id, or NULL when nothing fired.
create or replace function app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamptz,
  next_fire_at timestamptz) returns uuid
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
    -- app_hidden.audience_count runs it, for this organization
    f := app_hidden.audience_filter(a.definition, 'definition.rules');
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
  update app_public.broadcast_runs x set recipients = n where x.organization_id = b.organization_id and x.id = run;
  perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', s.organization_id, 'run_id', run),
    'broadcast_run:' || run, now());
  return run;
end $$;
comment on function app_private.broadcast_fire(uuid, uuid, timestamptz, timestamptz) is
  'Fires one occurrence once (schedule locked, still waiting for fire_at; unique run per occurrence): schedule moved on, '
  'the audience snapshotted into enrollments of the run, the run''s job queued. Answers the run id or NULL.';
revoke execute on function app_private.broadcast_fire(uuid, uuid, timestamptz, timestamptz) from public;

-- Ends a run whose recipients are all handled: completed, and `cancelled` the enrollments ended
-- meanwhile by something else (deactivation, a suppression, an exit).
create or replace function app_private.broadcast_finish(organization_id uuid, run_id uuid) returns void
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_public.broadcast_runs x
     set status = 'completed', finished_at = now(),
         cancelled = greatest(0, x.recipients - x.sent - x.skipped - x.failed - x.unknown)
   where x.organization_id = broadcast_finish.organization_id and x.id = broadcast_finish.run_id and x.status = 'sending'
$$;
revoke execute on function app_private.broadcast_finish(uuid, uuid) from public;

-- Step 1 of a batch. First the checkpoint left by a process that died: those step runs become
-- unknown (their messages may have gone) and their enrollments move on. Then the next `size`
-- pending recipients, each through app_private.sequence_step_claim: skipped with its reason,
-- sent at once when its channel is the local sink (stored and recorded in this transaction), or
-- claimed (step run `sending`, message queued) and put in in_flight for the transport.
-- Answers {action: none (run not sending) | done (nothing left: run completed) | batch,
--          messages: [{enrollment_id, step_key, message}], handled: n}.
create or replace function app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size int, base_url text,
  sink_channels text[] default '{}') returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  r app_public.broadcast_runs;
  ids uuid[];
  one uuid;
  key text;
  claim jsonb;
  messages jsonb := '[]';
  flight uuid[] := '{}';
  lost int := 0;
  outcome text;
  stored uuid;
  queued uuid[] := '{}';
  sunk uuid[] := '{}';
  sent_now int := 0;
  skipped_now int := 0;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = broadcast_claim_batch.organization_id and x.id = broadcast_claim_batch.run_id for update;
  if not found or r.status <> 'sending' then
    return jsonb_build_object('action', 'none');
  end if;
  if cardinality(r.in_flight) > 0 then
    for one, key in
      select e.id, e.current_step_key from app_public.enrollments e
       where e.organization_id = r.organization_id and e.id = any(r.in_flight)
    loop
      update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
       where sr.organization_id = r.organization_id and sr.enrollment_id = one and sr.step_key = key and sr.status = 'sending';
      if found then
        lost := lost + 1;
        update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
         where m.organization_id = r.organization_id and m.status = 'queued'
           and m.id = (select sr.message_id from app_public.step_runs sr
                        where sr.organization_id = r.organization_id and sr.enrollment_id = one and sr.step_key = key);
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
        values (r.organization_id, one, 'unknown', key, 'interrupted');
        perform app_private.advance_enrollment(r.organization_id, one);
      end if;
    end loop;
    update app_public.broadcast_runs x set in_flight = '{}', unknown = x.unknown + lost
     where x.organization_id = r.organization_id and x.id = r.id;
  end if;

  ids := array(select e.id from app_public.enrollments e
                where e.organization_id = r.organization_id and e.run_id = r.id and e.status = 'active' and e.next_run_at is null
                  and e.id > coalesce(r.claimed_through, '00000000-0000-0000-0000-000000000000')
                order by e.id limit size);
  if cardinality(ids) = 0 then
    perform app_private.broadcast_finish(r.organization_id, r.id);
    return jsonb_build_object('action', 'done');
  end if;
  foreach one in array ids loop
    select e.current_step_key into key from app_public.enrollments e where e.organization_id = r.organization_id and e.id = one;
    claim := app_private.sequence_step_claim(r.organization_id, one, key, base_url, sink_channels);
    if claim->>'action' = 'send' then
      -- the message's meta names the run (as its stored row does, below)
      messages := messages || jsonb_build_object('enrollment_id', one, 'step_key', key, 'message',
        jsonb_set(claim->'message', '{meta,run_id}', to_jsonb(r.id)));
      flight := flight || one;
      queued := queued || (claim->'message'->>'id')::uuid;
    elsif claim->>'action' = 'none' then
      -- the sequence is no longer active (deactivated): what is left of the run is cancelled
      perform app_private.end_enrollments(r.organization_id, array[one], 'cancelled', 'sequence_inactive');
    else
      -- finished by the claim: skipped (with its reason) or sent through the sink; an exit
      -- condition or a wait leaves no such step run and counts as cancelled when the run ends
      select sr.status, sr.message_id into outcome, stored from app_public.step_runs sr
       where sr.organization_id = r.organization_id and sr.enrollment_id = one and sr.step_key = key;
      if outcome = 'sent' then
        sent_now := sent_now + 1;
        sunk := sunk || stored;
      elsif outcome = 'skipped' then skipped_now := skipped_now + 1; end if;
    end if;
  end loop;
  -- the run's id in the meta of the batch's messages (the outbox rows the sink wrote, too), one
  -- statement each, so that a message says which run sent it
  update app_private.outgoing_messages m set meta = m.meta || jsonb_build_object('run_id', r.id)
   where m.organization_id = r.organization_id and m.id = any(queued || sunk);
  update app_private.outbox o set meta = o.meta || jsonb_build_object('run_id', r.id)
   where o.organization_id = r.organization_id and o.id = any(sunk);
  update app_public.broadcast_runs x
     set in_flight = flight, progress_at = now(), claimed_through = ids[cardinality(ids)], sent = x.sent + sent_now, skipped = x.skipped + skipped_now
   where x.organization_id = r.organization_id and x.id = r.id;
  return jsonb_build_object('action', 'batch', 'messages', messages, 'handled', cardinality(ids));
end $$;
comment on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]) is
  'A run''s next batch: a dead process''s in_flight made unknown, then up to `size` recipients claimed through '
  'sequence_step_claim (skips and sink sends finished here); the claimed ones become the new in_flight checkpoint.';
revoke execute on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]) from public;

-- Step 3: what the transport answered for each message of the batch ({enrollment_id, step_key,
-- message_id, error}), recorded through app_private.sequence_step_record; counts moved and the
-- checkpoint emptied in the same transaction.
create or replace function app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  x jsonb;
  ok int := 0;
  bad int := 0;
begin
  perform 1 from app_public.broadcast_runs r
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id for update;
  for x in select value from jsonb_array_elements(results) loop
    -- only what is still `sending` is this batch's to record
    perform 1 from app_public.step_runs sr
     where sr.organization_id = broadcast_record_batch.organization_id and sr.enrollment_id = (x->>'enrollment_id')::uuid
       and sr.step_key = x->>'step_key' and sr.message_id = (x->>'message_id')::uuid and sr.status = 'sending';
    continue when not found;
    perform app_private.sequence_step_record(broadcast_record_batch.organization_id, (x->>'enrollment_id')::uuid,
      x->>'step_key', (x->>'message_id')::uuid, x->>'error');
    if x->>'error' is null then ok := ok + 1; else bad := bad + 1; end if;
  end loop;
  update app_public.broadcast_runs r set in_flight = '{}', progress_at = now(), sent = r.sent + ok, failed = r.failed + bad
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id;
end $$;
comment on function app_private.broadcast_record_batch(uuid, uuid, jsonb) is
  'A batch''s transport answers recorded (sequence_step_record each), counts moved, the in_flight checkpoint emptied.';
revoke execute on function app_private.broadcast_record_batch(uuid, uuid, jsonb) from public;

-- A run sending whose job died with its worker: graphile-worker frees a dead worker's job only
-- after four hours. A run with no batch claimed or recorded for five minutes (a batch's
-- transport gives up well within that: SMTP 20 s idle, HTTP 15 s) gets a new job (the cron of
-- broadcast_fire calls this each minute); should its worker be alive after all, the new job finds
-- the run's advisory lock held and retries later. Answers the runs queued.
create or replace function app_private.broadcast_requeue_stalled() returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r record;
  n int := 0;
begin
  for r in
    select x.organization_id, x.id from app_public.broadcast_runs x
     where x.status = 'sending' and x.progress_at < now() - interval '5 minutes'
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
  'Queues a new broadcast_run job for each run sending without progress for five minutes (its worker died).';
revoke execute on function app_private.broadcast_requeue_stalled() from public;

reset role;
