-- A broadcast run's batch with the transport, message by message: what a crash puts in doubt.
--
-- A run's batch (broadcast_runs.in_flight, up to the batch size) is claimed whole, but its
-- messages go to the transport a few at a time (src/broadcasts/run.ts: at most IN_FLIGHT handed
-- over and not yet answered). Before the sender hands a message over it marks it handed
-- (app_private.broadcast_handed, committed to disk), and each answer is written to its mark as it
-- comes, in the same small transactions (app_private.broadcast_mark_handed), on a connection of
-- their own so that the claim of the next batch never holds them up. The batch's record
-- (broadcast_record_batch) deletes its marks. When a sender died (app_private.broadcast_settle_in_flight):
--   * a message marked with its answer is recorded with that answer (sent or failed);
--   * a message marked without one may have gone: `unknown`, never handed over again;
--   * a message never marked never left: released (its step run, message and unsubscribe token
--     removed) and claimed again, from the start of the run's cursor.
-- So a worker killed outright leaves at most IN_FLIGHT messages `unknown`, and the rest of its
-- batch is sent, once, by whoever sends the run next.

set local role svc_owner;

create table if not exists app_private.broadcast_handed (
  organization_id uuid not null,
  enrollment_id uuid not null,
  run_id uuid not null,
  -- the transport's answer as broadcast_record_batch takes it ({enrollment_id, step_key,
  -- message_id, error, provider_id}); NULL while the transport has the message
  answer jsonb,
  primary key (organization_id, enrollment_id)
);
comment on table app_private.broadcast_handed is
  'Messages of a broadcast run''s batch in flight that its sender handed to the transport, with the answer once it came; deleted when the batch is recorded. What a dead sender leaves: marked without an answer is unknown, unmarked was never handed over.';
create index if not exists broadcast_handed_by_run on app_private.broadcast_handed (organization_id, run_id);
revoke all on table app_private.broadcast_handed from public;

-- One small transaction of the sender's: `handing` marked handed (these go to the transport once
-- it commits: to disk, then), `answers` written to their marks.
create or replace function app_private.broadcast_mark_handed(organization_id uuid, run_id uuid, handing uuid[], answers jsonb)
  returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
begin
  perform set_config('synchronous_commit', case when cardinality(handing) > 0 then 'on' else 'off' end, true);
  insert into app_private.broadcast_handed as h (organization_id, enrollment_id, run_id, answer)
  select broadcast_mark_handed.organization_id, i, broadcast_mark_handed.run_id, null from unnest(handing) i
  union all
  select broadcast_mark_handed.organization_id, (a->>'enrollment_id')::uuid, broadcast_mark_handed.run_id, a
    from jsonb_array_elements(answers) a
  on conflict (organization_id, enrollment_id) do update set answer = excluded.answer;
end $$;
comment on function app_private.broadcast_mark_handed(uuid, uuid, uuid[], jsonb) is
  'A broadcast sender''s messages about to go to the transport marked handed (committed to disk first), and the answers come meanwhile written to their marks.';
revoke execute on function app_private.broadcast_mark_handed(uuid, uuid, uuid[], jsonb) from public;

-- A dead sender's batch in flight, message by message (see above); answers how many became unknown.
create or replace function app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) returns integer
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  org constant uuid := broadcast_settle_in_flight.organization_id;
  run constant uuid := broadcast_settle_in_flight.run_id;
  flight uuid[];
  answered jsonb;
  doubt uuid[];
  unsent uuid[];
  lost uuid[];
  c record;
begin
  select r.in_flight into flight from app_public.broadcast_runs r where r.organization_id = org and r.id = run;
  if cardinality(flight) = 0 then
    delete from app_private.broadcast_handed h where h.organization_id = org and h.run_id = run;
    return 0;
  end if;
  select coalesce(jsonb_agg(h.answer) filter (where h.answer is not null), '[]'),
         coalesce(array_agg(h.enrollment_id) filter (where h.answer is null), '{}')
    into answered, doubt
    from app_private.broadcast_handed h
   where h.organization_id = org and h.run_id = run and h.enrollment_id = any(flight);
  unsent := array(select f from unnest(flight) f
                   where not exists (select 1 from app_private.broadcast_handed h where h.organization_id = org and h.enrollment_id = f));

  -- answered: recorded as the sender would have
  select * into c from app_private.record_enrollment_messages(org, answered);

  -- handed, no answer: may have gone
  with gone as (
    update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
      from app_public.enrollments e
     where e.organization_id = org and e.id = any(doubt)
       and sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key
       and sr.status = 'sending'
    returning sr.enrollment_id, sr.step_key, sr.message_id
  ), messages as (
    update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
      from gone
     where m.organization_id = org and m.id = gone.message_id and m.status = 'queued'
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select org, gone.enrollment_id, 'unknown', gone.step_key, gone.message_id, 'interrupted' from gone
  )
  select coalesce(array_agg(gone.enrollment_id), '{}') into lost from gone;
  if cancelling then
    perform app_private.end_enrollments_set(org, lost, 'cancelled', 'run_cancelled');
  else
    perform app_private.advance_enrollments(org, lost);
  end if;

  -- never handed over: released, to be claimed again (the claim starts over from the run's
  -- first recipient; what was sent is no longer waiting to be)
  with runs as (
    delete from app_public.step_runs sr
     using app_public.enrollments e
     where e.organization_id = org and e.id = any(unsent)
       and sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key
       and sr.status = 'sending'
    returning sr.message_id
  ), tokens as (
    delete from app_private.unsubscribe_tokens t using runs where t.organization_id = org and t.message_id = runs.message_id
  )
  delete from app_private.outgoing_messages m using runs where m.organization_id = org and m.id = runs.message_id and m.status = 'queued';

  delete from app_private.broadcast_handed h where h.organization_id = org and h.run_id = run;
  update app_public.broadcast_runs r
     set in_flight = '{}', unknown = r.unknown + cardinality(lost), sent = r.sent + c.sent_count, failed = r.failed + c.failed_count,
         claimed_through = case when cardinality(unsent) > 0 then null else r.claimed_through end
   where r.organization_id = org and r.id = run;
  return cardinality(lost);
end $$;
comment on function app_private.broadcast_settle_in_flight(uuid, uuid, boolean) is
  'A dead sender''s in_flight batch, message by message: answered marks recorded, handed ones without an answer unknown (event; enrollments moved on, or cancelled with the run), never handed ones released to be claimed again (the cursor back to the start); the checkpoint emptied; answers how many became unknown.';

-- The batch's answers recorded as before (000031), its marks deleted with them.
create or replace function app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb, promote boolean default false)
  returns integer
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  c record;
  promoted int;
  eids uuid[] := array(select (x->>'enrollment_id')::uuid from jsonb_array_elements(results) x);
begin
  perform set_config('synchronous_commit', 'off', true);
  select case when promote then cardinality(r.prepared) else 0 end into promoted from app_public.broadcast_runs r
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id for update;
  select * into c from app_private.record_enrollment_messages(broadcast_record_batch.organization_id, results);
  delete from app_private.broadcast_handed h where h.organization_id = broadcast_record_batch.organization_id and h.enrollment_id = any(eids);
  update app_public.broadcast_runs r
     set in_flight = array(select f from unnest(r.in_flight) f where not f = any(eids))
                     || case when promote then r.prepared else '{}' end,
         prepared = case when promote then '{}' else r.prepared end,
         prepared_after = case when promote then null else r.prepared_after end,
         progress_at = now(), sent = r.sent + c.sent_count, failed = r.failed + c.failed_count
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id;
  return promoted;
end $$;

-- The claim (000031) with a dead sender's batch settled first, message by message: what it never
-- handed over is claimed again, so the cursor may have moved back to the start.
create or replace function app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size int, base_url text,
  sink_channels text[] default '{}', following boolean default false) returns jsonb
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
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
    -- a prepared batch first (its cursor), then the batch in flight (which may move it back)
    if cardinality(r.prepared) > 0 then
      perform app_private.broadcast_release_prepared(r.organization_id, r.id);
    end if;
    if cardinality(r.in_flight) > 0 then
      perform app_private.broadcast_settle_in_flight(r.organization_id, r.id, false);
    end if;
    select * into r from app_public.broadcast_runs x where x.organization_id = r.organization_id and x.id = r.id;
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
  -- nothing goes to the transport before it is marked handed (broadcast_mark_handed, to disk):
  -- the claim need not wait for the disk
  perform set_config('synchronous_commit', 'off', true);
  return jsonb_build_object('action', 'batch', 'messages', c.messages, 'handled', cardinality(ids));
end $$;

-- The cancel (000031) with the run read again after a dead sender's batch is settled: the
-- messages it never handed over are active again and cancelled with the rest (the batch read
-- before the settle would have left them out, neither sent nor cancelled).
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
      -- settled: what it never handed over is active again, to be cancelled below with the rest
      select * into r from app_public.broadcast_runs x where x.organization_id = r.organization_id and x.id = r.id;
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
