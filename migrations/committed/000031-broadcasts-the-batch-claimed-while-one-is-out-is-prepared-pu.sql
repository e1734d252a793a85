--! Previous: sha1:c517834c545d7f538cb2a89c175300c68f00c512
--! Hash: sha1:18b39cb5c9ab507376402fe0bef903d72bcf58f0
--! Message: Broadcasts: the batch claimed while one is out is prepared, put in flight by the record of the one before; a sender that dies leaves at most one batch unknown, and its prepared batch is claimed again

--! split: 010-broadcasts-prepared-batch.sql
-- Broadcasts: at most one batch in flight when a sender dies (docs/broadcasts.md, "Crash safety").
--
-- Since 000024 the sender claims its next batch while the transport still has the one before,
-- and both stood in the run's checkpoint (in_flight): the next batch was handed over as soon as
-- it was claimed, so a process killed outright could leave two batches `unknown`. Now the batch
-- claimed meanwhile is only *prepared*: its step runs `sending` and its messages are written, but
-- it waits in broadcast_runs.prepared until the batch before it is recorded. The record moves it
-- into in_flight in the same transaction, committed to disk before the transport sees it. So
--   * in_flight is never more than one batch: what a dead sender may have handed over, made
--     `unknown` by the next claim (broadcast_settle_in_flight), as before;
--   * a prepared batch was never handed over: the next claim, or a cancel, releases it (its step
--     runs, messages and unsubscribe tokens removed, the run's cursor moved back), and its
--     recipients are claimed again, their send-time checks made again.
-- The claim's database time still overlaps the transport's; between two batches the transport
-- now waits for the record of the first (one short transaction).
set local role svc_owner;

alter table app_public.broadcast_runs add column if not exists prepared uuid[] not null default '{}';
alter table app_public.broadcast_runs add column if not exists prepared_after uuid;
comment on column app_public.broadcast_runs.prepared is
  'Enrollments of the batch claimed while the one before it was with the transport: not handed over until that one is recorded.';
comment on column app_public.broadcast_runs.prepared_after is
  'The cursor (claimed_through) before the prepared batch was claimed: where a release moves it back to.';

-- A prepared batch that will never be handed over (its sender died, or the run was cancelled):
-- its step runs still `sending`, their messages still queued and their unsubscribe tokens are
-- removed, as if the claim had not happened; the cursor moves back so that the recipients are
-- claimed again. What the claim finished for good (skips, sink sends) stays. The caller holds
-- the run's row lock. Answers how many were released.
create or replace function app_private.broadcast_release_prepared(organization_id uuid, run_id uuid) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r app_public.broadcast_runs;
  released int;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = broadcast_release_prepared.organization_id and x.id = broadcast_release_prepared.run_id;
  if cardinality(r.prepared) = 0 then
    return 0;
  end if;
  with runs as (
    delete from app_public.step_runs sr
     using app_public.enrollments e
     where e.organization_id = r.organization_id and e.id = any(r.prepared)
       and sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key
       and sr.status = 'sending'
    returning sr.message_id
  ), tokens as (
    delete from app_private.unsubscribe_tokens t
     using runs where t.organization_id = r.organization_id and t.message_id = runs.message_id
  ), messages as (
    delete from app_private.outgoing_messages m
     using runs where m.organization_id = r.organization_id and m.id = runs.message_id and m.status = 'queued'
  )
  select count(*) into released from runs;
  update app_public.broadcast_runs x set prepared = '{}', prepared_after = null, claimed_through = r.prepared_after
   where x.organization_id = r.organization_id and x.id = r.id;
  return released;
end $$;
comment on function app_private.broadcast_release_prepared(uuid, uuid) is
  'A prepared batch never handed over: its step runs sending, messages and unsubscribe tokens removed, the cursor moved '
  'back so its recipients are claimed again; answers how many.';
revoke execute on function app_private.broadcast_release_prepared(uuid, uuid) from public;

-- Step 1 of a broadcast batch, as 000024 has it, but a claim `following` the caller's own batch
-- still out prepares the new batch instead of putting it in flight, and commits without waiting
-- for the disk (nothing of it is handed over yet; a lost commit is a batch not claimed). A first
-- claim (not following) settles what a process that died left: its batch in flight `unknown`, its
-- prepared batch released and claimed again. Answers {action: none (run not sending) | done
-- (nothing left: run completed) | wait (nothing left, but the caller's batch is out) | batch,
-- messages: [{enrollment_id, step_key, message}], handled: n}.
create or replace function app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size int, base_url text,
  sink_channels text[] default '{}', following boolean default false) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  r app_public.broadcast_runs;
  s app_public.sequences;
  ids uuid[];
  c record;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = broadcast_claim_batch.organization_id and x.id = broadcast_claim_batch.run_id for update;
  if not found or r.status <> 'sending' then
    return jsonb_build_object('action', 'none');
  end if;
  if not following then
    if cardinality(r.in_flight) > 0 then
      perform app_private.broadcast_settle_in_flight(r.organization_id, r.id, false);
    end if;
    if cardinality(r.prepared) > 0 then
      perform app_private.broadcast_release_prepared(r.organization_id, r.id);
      r.claimed_through := r.prepared_after;
    end if;
  elsif cardinality(r.prepared) > 0 then
    -- a sender records (and so hands over or releases) its prepared batch before it claims again
    raise exception 'broadcast_claim_batch: run % has a prepared batch already', r.id;
  end if;
  if r.claimed_through is null and r.recipients >= 1000 then
    -- the run's first batch: its enrollments were written a moment ago, thousands at once, and
    -- autovacuum has not sampled them yet; planned with statistics that say the organization has
    -- few enrollments, each batch's statements would read all of them rather than its own by key
    analyze app_public.enrollments;
  end if;

  ids := array(select e.id from app_public.enrollments e
                where e.organization_id = r.organization_id and e.run_id = r.id and e.status = 'active' and e.next_run_at is null
                  and e.id > coalesce(r.claimed_through, '00000000-0000-0000-0000-000000000000')
                order by e.id limit size
                  for update of e);
  if cardinality(ids) = 0 then
    if following and cardinality(r.in_flight) > 0 then
      return jsonb_build_object('action', 'wait');
    end if;
    perform app_private.broadcast_finish(r.organization_id, r.id);
    return jsonb_build_object('action', 'done');
  end if;
  select * into s from app_public.sequences x where x.organization_id = r.organization_id and x.id = r.sequence_id;
  if s.status <> 'active' then
    -- deactivated: what is left of the run is cancelled (the per-message claim answers none)
    perform app_private.end_enrollments_set(r.organization_id, ids, 'cancelled', 'sequence_inactive');
    update app_public.broadcast_runs x set progress_at = now(), claimed_through = ids[cardinality(ids)]
     where x.organization_id = r.organization_id and x.id = r.id;
    return jsonb_build_object('action', 'batch', 'messages', '[]'::jsonb, 'handled', cardinality(ids));
  end if;

  select * into c from app_private.claim_enrollment_messages(r.organization_id, s, ids, base_url, sink_channels, r.id);
  update app_public.broadcast_runs x
     set in_flight = case when following then x.in_flight else c.flight end,
         prepared = case when following then c.flight else '{}' end,
         prepared_after = case when following and cardinality(c.flight) > 0 then r.claimed_through end,
         progress_at = now(), claimed_through = ids[cardinality(ids)],
         sent = x.sent + c.sent_count, skipped = x.skipped + c.skipped_count
   where x.organization_id = r.organization_id and x.id = r.id;
  -- a batch in flight must be on disk before the transport gets its messages; a prepared one, or
  -- one with nothing handed over (a sink channel), need not wait for the disk
  perform set_config('synchronous_commit',
    case when not following and cardinality(c.flight) > 0 then 'on' else 'off' end, true);
  return jsonb_build_object('action', 'batch', 'messages', c.messages, 'handled', cardinality(ids));
end $$;
comment on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[], boolean) is
  'A run''s next batch: a dead process''s in_flight made unknown and its prepared batch released (unless following the '
  'caller''s own batch still out: then the new batch is prepared, and `wait` rather than done), then up to `size` recipients '
  'claimed set-based (claim_enrollment_messages): in flight, or prepared when following.';

-- Step 3, as 000024 has it, and the hand-over of the next batch: with `promote`, the prepared
-- batch moves into in_flight in the same transaction, which then waits for the disk (its messages
-- go to the transport once this commits). A run cancelled meanwhile has none left to promote (the
-- cancel released it). Answers how many messages were promoted.
drop function if exists app_private.broadcast_record_batch(uuid, uuid, jsonb);
create or replace function app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb,
  promote boolean default false) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  c record;
  promoted int;
begin
  perform set_config('synchronous_commit', 'off', true);
  select case when promote then cardinality(r.prepared) else 0 end into promoted from app_public.broadcast_runs r
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id for update;
  select * into c from app_private.record_enrollment_messages(broadcast_record_batch.organization_id, results);
  update app_public.broadcast_runs r
     set in_flight = array(select f from unnest(r.in_flight) f
                            where not f = any(array(select (x->>'enrollment_id')::uuid from jsonb_array_elements(results) x)))
                     || case when promote then r.prepared else '{}' end,
         prepared = case when promote then '{}' else r.prepared end,
         prepared_after = case when promote then null else r.prepared_after end,
         progress_at = now(), sent = r.sent + c.sent_count, failed = r.failed + c.failed_count
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id;
  if promoted > 0 then
    perform set_config('synchronous_commit', 'on', true);
  end if;
  return promoted;
end $$;
comment on function app_private.broadcast_record_batch(uuid, uuid, jsonb, boolean) is
  'A batch''s transport answers recorded set-based (record_enrollment_messages), counts moved, the batch taken out of the '
  'in_flight checkpoint; with promote, the prepared batch put in flight (committed to disk); answers how many were promoted.';
revoke execute on function app_private.broadcast_record_batch(uuid, uuid, jsonb, boolean) from public;

-- Cancelling runs, as 000016 part 400, and a prepared batch released whether or not a sender
-- holds the run: it was never handed over, so its recipients are cancelled with the rest, and the
-- sender's record then promotes nothing.
create or replace function app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  s app_public.sequences;
  r app_public.broadcast_runs;
  n int;
  total int := 0;
begin
  select * into s from app_public.sequences x
   where x.organization_id = app_hidden.current_org_id() and x.id = broadcast_cancel_runs.sequence_id;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    raise exception 'broadcast_cancel_runs: sequence % not writable', broadcast_cancel_runs.sequence_id;
  end if;
  for r in
    select * from app_public.broadcast_runs x
     where x.organization_id = s.organization_id and x.sequence_id = s.id and x.status = 'sending'
       and (broadcast_cancel_runs.run_id is null or x.id = broadcast_cancel_runs.run_id)
     for update
  loop
    if cardinality(r.in_flight) > 0 and pg_try_advisory_xact_lock(hashtextextended('svc.broadcast_run:' || r.id, 0)) then
      perform app_private.broadcast_settle_in_flight(r.organization_id, r.id, true);
    end if;
    perform app_private.broadcast_release_prepared(r.organization_id, r.id);
    n := app_private.end_enrollments_set(s.organization_id, array(
      select e.id from app_public.enrollments e
       where e.organization_id = s.organization_id and e.run_id = r.id and e.status = 'active' and e.next_run_at is null
         and not e.id = any(r.in_flight)), 'cancelled', 'run_cancelled');
    update app_public.broadcast_runs x set status = 'cancelled', finished_at = now(), cancelled = x.cancelled + n
     where x.organization_id = r.organization_id and x.id = r.id;
    total := total + n;
  end loop;
  return total;
end $$;

reset role;
