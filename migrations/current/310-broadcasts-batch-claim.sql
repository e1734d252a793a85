-- Broadcasts: a run's batch claimed, stored and recorded set-based (docs/broadcasts.md, "Crash
-- safety: checkpointed batches"). Before, each recipient of a batch went through the engine's
-- per-message functions (app_private.sequence_step_claim, app_private.sequence_step_record), about
-- 2 ms of PL/pgSQL each; now a batch is a few statements whatever its size:
--   * broadcast_claim_batch applies the per-message claim's rules to the whole batch as joins: the
--     send-time refusals (missing_address, suppressed, opted_out, no_consent) become skipped step
--     runs with their events; the rest are rendered (the same variables and templates as
--     app_private.build_sequence_message), their unsubscribe tokens, messages and step runs
--     inserted in one statement; on a sink channel stored and recorded sent in that statement too.
--     What the per-message claim decides from state a batch rarely has (a step run already there,
--     an exit condition holding, a step removed or not a message) still goes through
--     app_private.sequence_step_claim, recipient by recipient, so every rule stays one rule.
--   * broadcast_record_batch records the transport's answers in one statement (step runs,
--     messages, events) and moves the enrollments on with app_private.advance_enrollments.
--   * the checkpoint (in_flight) is unchanged: a batch claimed and not recorded becomes `unknown`
--     (broadcast_settle_in_flight), never handed over again; now also when the run is cancelled.
set local role svc_owner;

-- The in_flight checkpoint of a run whose sender died (the caller holds the run's row, and knows no
-- process is sending it: it holds the run's advisory lock): each step run still `sending` becomes
-- `unknown` (its message may have gone), its message too, with an `unknown` event; the enrollments
-- move on (a claim) or end cancelled (the run cancelled). The checkpoint emptied, unknown counted.
-- Answers how many became unknown.
create or replace function app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean)
returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  flight uuid[];
  lost uuid[];
begin
  select r.in_flight into flight from app_public.broadcast_runs r
   where r.organization_id = broadcast_settle_in_flight.organization_id and r.id = broadcast_settle_in_flight.run_id;
  if cardinality(flight) = 0 then
    return 0;
  end if;
  with gone as (
    update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
      from app_public.enrollments e
     where e.organization_id = broadcast_settle_in_flight.organization_id and e.id = any(flight)
       and sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key
       and sr.status = 'sending'
    returning sr.enrollment_id, sr.step_key, sr.message_id
  ), messages as (
    update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
      from gone
     where m.organization_id = broadcast_settle_in_flight.organization_id and m.id = gone.message_id and m.status = 'queued'
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select broadcast_settle_in_flight.organization_id, gone.enrollment_id, 'unknown', gone.step_key, gone.message_id, 'interrupted'
      from gone
  )
  select coalesce(array_agg(gone.enrollment_id), '{}') into lost from gone;
  if cancelling then
    perform app_private.end_enrollments_set(broadcast_settle_in_flight.organization_id, lost, 'cancelled', 'run_cancelled');
  else
    perform app_private.advance_enrollments(broadcast_settle_in_flight.organization_id, lost);
  end if;
  update app_public.broadcast_runs r set in_flight = '{}', unknown = r.unknown + cardinality(lost)
   where r.organization_id = broadcast_settle_in_flight.organization_id and r.id = broadcast_settle_in_flight.run_id;
  return cardinality(lost);
end $$;
comment on function app_private.broadcast_settle_in_flight(uuid, uuid, boolean) is
  'A dead sender''s in_flight checkpoint: step runs still sending (and their messages) become unknown with an event, the '
  'enrollments moved on (or cancelled with the run), the checkpoint emptied; answers how many.';
revoke execute on function app_private.broadcast_settle_in_flight(uuid, uuid, boolean) from public;

-- Step 1 of a batch. First the checkpoint left by a process that died (broadcast_settle_in_flight).
-- Then the next `size` pending recipients (locked, in id order) are claimed as
-- app_private.sequence_step_claim claims one, for all at once:
--   * the sequence no longer active: they are cancelled (sequence_inactive);
--   * a step run already there for the step, an exit condition holding, a step removed or not an
--     email or SMS: through app_private.sequence_step_claim itself, one by one;
--   * the others, per step (a run's recipients all stand on its first one): a missing address,
--     a suppressed email address, an opted-out number or an SMS without consent is a skipped step
--     run with the reason and its event, and the enrollment moves on; every other is rendered and
--     inserted in one statement: unsubscribe token (email), message, step run `sending` (the
--     message answered for the transport and put in in_flight) or, on a sink channel, the outbox
--     row with the step run `sent` and its sent and delivered events (and the enrollment moves on).
-- The run's id is in every message's meta. Answers {action: none (run not sending) | done (nothing
-- left: run completed) | batch, messages: [{enrollment_id, step_key, message}], handled: n}.
create or replace function app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size int, base_url text,
  sink_channels text[] default '{}') returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  r app_public.broadcast_runs;
  s app_public.sequences;
  org app_public.organizations;
  step jsonb;
  ids uuid[];
  slow uuid[];
  message_keys text[];
  one uuid;
  key text;
  claim jsonb;
  outcome text;
  stored uuid;
  queued uuid[] := '{}';
  sunk uuid[] := '{}';
  g record;
  channel text;
  to_sink boolean;
  is_html boolean;
  domain text;
  sms_sender text;
  location_name text;
  passing uuid[];
  skipped_ids uuid[];
  batch_messages jsonb;
  moved uuid[] := '{}';
  messages jsonb := '[]';
  flight uuid[] := '{}';
  sent_now int := 0;
  skipped_now int := 0;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = broadcast_claim_batch.organization_id and x.id = broadcast_claim_batch.run_id for update;
  if not found or r.status <> 'sending' then
    return jsonb_build_object('action', 'none');
  end if;
  if cardinality(r.in_flight) > 0 then
    perform app_private.broadcast_settle_in_flight(r.organization_id, r.id, false);
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

  -- the keys whose (first) step is an email or an SMS
  message_keys := array(select k.key from (
      select distinct on (t.v->>'step_key') t.v->>'step_key' as key, t.v->>'type' as type
        from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' is not null
       order by t.v->>'step_key', t.o) k
     where k.type in ('email', 'sms'));
  -- what the per-message claim decides before its send-time checks: a step run already there
  -- (sending: unknown, or wait for it), an exit condition holding, a step removed or not a message
  slow := array(
    select e.id from app_public.enrollments e
     where e.organization_id = r.organization_id and e.id = any(ids)
       and (exists (select 1 from app_public.step_runs sr
                    where sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key)
        or not coalesce(e.current_step_key = any(message_keys), false)
        or (jsonb_array_length(s.exit_conditions) > 0 and app_private.exit_condition_holding(e, s.exit_conditions) is not null)));
  foreach one in array slow loop
    select e.current_step_key into key from app_public.enrollments e where e.organization_id = r.organization_id and e.id = one;
    claim := app_private.sequence_step_claim(r.organization_id, one, key, base_url, sink_channels);
    if claim->>'action' = 'send' then
      messages := messages || jsonb_build_object('enrollment_id', one, 'step_key', key, 'message',
        jsonb_set(claim->'message', '{meta,run_id}', to_jsonb(r.id)));
      flight := flight || one;
      queued := queued || (claim->'message'->>'id')::uuid;
    elsif claim->>'action' = 'done' then
      -- skipped (with its reason) or sent through the sink; an exit or a wait leaves no such step
      -- run and counts as cancelled when the run ends
      select sr.status, sr.message_id into outcome, stored from app_public.step_runs sr
       where sr.organization_id = r.organization_id and sr.enrollment_id = one and sr.step_key = key;
      if outcome = 'sent' then
        sent_now := sent_now + 1;
        sunk := sunk || stored;
      elsif outcome = 'skipped' then skipped_now := skipped_now + 1; end if;
    end if;
  end loop;
  if cardinality(queued || sunk) > 0 then
    update app_private.outgoing_messages m set meta = m.meta || jsonb_build_object('run_id', r.id)
     where m.organization_id = r.organization_id and m.id = any(queued || sunk);
    update app_private.outbox x set meta = x.meta || jsonb_build_object('run_id', r.id)
     where x.organization_id = r.organization_id and x.id = any(sunk);
  end if;

  select * into org from app_public.organizations x where x.id = r.organization_id;
  domain := coalesce(org.sending_email_domain, 'localhost');
  select l.name, coalesce(l.sms_number, org.default_sms_number) into location_name, sms_sender
    from (select 1) one_row left join app_public.locations l on l.organization_id = org.id and l.id = s.location_id;

  for g in
    select e.current_step_key as key, array_agg(e.id order by e.id) as ids
      from app_public.enrollments e
     where e.organization_id = r.organization_id and e.id = any(ids) and not e.id = any(slow)
     group by e.current_step_key
  loop
    select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = g.key limit 1;
    channel := step->>'type';
    to_sink := channel = any(sink_channels);
    is_html := coalesce(step->>'format' = 'html', coalesce(step->>'body', '') ~* '<(html|body|p|br|div|a|table|span|strong|em)[\s/>]');

    -- the send-time refusals, as app_private.send_refusal and the SMS consent of the claim
    with checked as (
      select e.id, case
          when a.address is null or a.address = '' then 'missing_address'
          when channel = 'email' and exists (select 1 from app_public.email_suppressions x
                                              where x.organization_id = e.organization_id and x.email = lower(a.address)) then 'suppressed'
          when channel <> 'email' and exists (select 1 from app_public.sms_opt_outs x
                                               where x.organization_id = e.organization_id and x.phone = a.address and x.ended_at is null) then 'opted_out'
          when channel = 'sms' and not c.sms_consent then 'no_consent'
        end as refusal
        from app_public.enrollments e
        join app_public.contacts c on c.organization_id = e.organization_id and c.id = e.contact_id
       cross join lateral (select case when channel = 'email' then c.email::text else c.phone end as address) a
       where e.organization_id = r.organization_id and e.id = any(g.ids)
    ), skipped as (
      insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
      select r.organization_id, checked.id, g.key, channel, 'skipped', checked.refusal from checked where checked.refusal is not null
      returning enrollment_id, reason
    ), logged as (
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
      select r.organization_id, skipped.enrollment_id, 'skipped', g.key, skipped.reason from skipped
    )
    select coalesce((select array_agg(checked.id order by checked.id) from checked where checked.refusal is null), '{}'),
           coalesce((select array_agg(skipped.enrollment_id) from skipped), '{}')
      into passing, skipped_ids;
    skipped_now := skipped_now + cardinality(skipped_ids);
    moved := moved || skipped_ids;
    continue when cardinality(passing) = 0;

    -- every message of the group rendered and written in one statement (the variables of
    -- app_hidden.sequence_message_variables, the templates and headers of build_sequence_message)
    with recipient as materialized (
      select e.id as enrollment_id, c.id as contact_id, gen_random_uuid() as message_id,
             case when channel = 'email' then c.email::text else c.phone end as address,
             c.email::text as email, c.phone,
             nullif(btrim(regexp_replace(coalesce(c.name, ''), '\s+', ' ', 'g')), '') as full_name,
             case when channel = 'email'
                  then rtrim(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=')
             end as token
        from app_public.enrollments e
        join app_public.contacts c on c.organization_id = e.organization_id and c.id = e.contact_id
       where e.organization_id = r.organization_id and e.id = any(passing)
    ), linked as (
      select recipient.*, rtrim(base_url, '/') || '/unsubscribe/' || recipient.token as unsubscribe_url from recipient
    ), rendered as materialized (
      select linked.*,
             case when channel = 'email' then app_hidden.render_template(coalesce(step->>'subject', ''), vars.v, false) end as subject,
             app_hidden.render_template(coalesce(step->>'body', ''), vars.v, channel = 'email' and is_html) as body,
             jsonb_strip_nulls(jsonb_build_object('sequence_id', s.id, 'enrollment_id', linked.enrollment_id, 'step_key', g.key,
               'message_id', linked.message_id, 'html', case when channel = 'email' and is_html then true end))
             || case when channel = 'email'
                     then jsonb_build_object('headers', jsonb_build_object('Message-ID', '<' || linked.message_id || '@' || domain || '>',
                            'List-Unsubscribe', '<' || linked.unsubscribe_url || '>', 'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click'))
                     else '{}' end
             || jsonb_build_object('run_id', r.id) as meta
        from linked
       cross join lateral (select jsonb_build_object(
               'contact.first_name', split_part(linked.full_name, ' ', 1),
               'contact.last_name', nullif(substr(linked.full_name, length(split_part(linked.full_name, ' ', 1)) + 2), ''),
               'contact.name', linked.full_name,
               'contact.email', linked.email,
               'contact.phone', linked.phone,
               'location.name', location_name,
               'location.phone', sms_sender,
               'organization.name', org.name,
               'unsubscribe_url', linked.unsubscribe_url) as v) vars
    ), tokens as (
      insert into app_private.unsubscribe_tokens (token_hash, organization_id, email, contact_id, enrollment_id, message_id)
      select sha256(convert_to(rendered.token, 'UTF8')), r.organization_id, lower(rendered.address), rendered.contact_id,
             rendered.enrollment_id, rendered.message_id
        from rendered where rendered.token is not null
    ), stored_messages as (
      insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
      select r.organization_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else sms_sender end,
             rendered.address, rendered.subject, rendered.body, rendered.meta,
             case when to_sink then 'sent' else 'queued' end, case when to_sink then now() end
        from rendered
    ), sink as (
      insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
      select r.organization_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else sms_sender end,
             rendered.address, rendered.subject, rendered.body, rendered.meta
        from rendered where to_sink
    ), runs as (
      insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
      select r.organization_id, rendered.enrollment_id, g.key, channel, case when to_sink then 'sent' else 'sending' end, rendered.message_id
        from rendered
    ), logged as (
      -- the sink reports every message delivered as it stores it (sequences.md, Analytics)
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
      select r.organization_id, rendered.enrollment_id, t.type, g.key, rendered.message_id
        from rendered cross join unnest(array['sent', 'delivered']) with ordinality t(type, o)
       where to_sink
       order by rendered.enrollment_id, t.o
    )
    select coalesce(jsonb_agg(jsonb_build_object('enrollment_id', rendered.enrollment_id, 'step_key', g.key, 'message',
             jsonb_build_object('organization_id', r.organization_id, 'id', rendered.message_id, 'channel', channel,
               'sender', case when channel = 'email' then 'no-reply@' || domain else sms_sender end,
               'recipient', rendered.address, 'subject', rendered.subject, 'body', rendered.body, 'meta', rendered.meta))
             order by rendered.enrollment_id) filter (where not to_sink), '[]')
      into batch_messages from rendered;
    if to_sink then
      sent_now := sent_now + cardinality(passing);
      moved := moved || passing;
    else
      messages := messages || batch_messages;
      flight := flight || passing;
    end if;
  end loop;

  perform app_private.advance_enrollments(r.organization_id, moved);
  update app_public.broadcast_runs x
     set in_flight = flight, progress_at = now(), claimed_through = ids[cardinality(ids)],
         sent = x.sent + sent_now, skipped = x.skipped + skipped_now
   where x.organization_id = r.organization_id and x.id = r.id;
  if cardinality(flight) = 0 then
    -- nothing handed over: as the per-message claim on a sink channel, the commit need not wait
    -- for the disk (a lost commit is a batch not claimed, claimed again)
    perform set_config('synchronous_commit', 'off', true);
  else
    -- the checkpoint must be on disk before the transport gets the messages
    perform set_config('synchronous_commit', 'on', true);
  end if;
  return jsonb_build_object('action', 'batch', 'messages', messages, 'handled', cardinality(ids));
end $$;
comment on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]) is
  'A run''s next batch: a dead process''s in_flight made unknown, then up to `size` recipients claimed set-based with the '
  'rules of sequence_step_claim (refusals skipped, messages rendered and written, sink sends recorded; rare cases through '
  'sequence_step_claim itself); the claimed ones become the new in_flight checkpoint.';
revoke execute on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]) from public;

-- Step 3: what the transport answered for each message of the batch ({enrollment_id, step_key,
-- message_id, error, provider_id?}), as app_private.sequence_step_record records one, for all at
-- once: only step runs still `sending` are this batch's to record; step run and message sent or
-- failed (the provider's id kept, for its delivery reports), the sent or failed event; the
-- enrollments still on that step move on; counts moved and the checkpoint emptied. The commit
-- need not wait for the disk: a lost record leaves in_flight set, and those become unknown.
create or replace function app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  eids uuid[];
  ok int;
  bad int;
  moved uuid[];
begin
  perform set_config('synchronous_commit', 'off', true);
  perform 1 from app_public.broadcast_runs r
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id for update;
  eids := array(select (x->>'enrollment_id')::uuid from jsonb_array_elements(results) x);
  perform 1 from app_public.enrollments e
   where e.organization_id = broadcast_record_batch.organization_id and e.id = any(eids) order by e.id for update;
  with answer as (
    select (x->>'enrollment_id')::uuid as enrollment_id, x->>'step_key' as step_key, (x->>'message_id')::uuid as message_id,
           x->>'error' as error, nullif(x->>'provider_id', '') as provider_id
      from jsonb_array_elements(results) x
  ), recorded as (
    update app_public.step_runs sr
       set status = case when answer.error is null then 'sent' else 'failed' end, reason = left(answer.error, 500), updated_at = now()
      from answer
     where sr.organization_id = broadcast_record_batch.organization_id and sr.enrollment_id = answer.enrollment_id
       and sr.step_key = answer.step_key and sr.message_id = answer.message_id and sr.status = 'sending'
    returning sr.enrollment_id, sr.step_key, sr.message_id, answer.error, answer.provider_id
  ), messages as (
    update app_private.outgoing_messages m
       set status = case when recorded.error is null then 'sent' else 'failed' end,
           sent_at = case when recorded.error is null then now() end, error = left(recorded.error, 1000),
           provider_id = coalesce(recorded.provider_id, m.provider_id)
      from recorded
     where m.organization_id = broadcast_record_batch.organization_id and m.id = recorded.message_id
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select broadcast_record_batch.organization_id, recorded.enrollment_id, case when recorded.error is null then 'sent' else 'failed' end,
           recorded.step_key, recorded.message_id, case when recorded.error is not null then 'transport_error' end
      from recorded
  )
  select count(*) filter (where recorded.error is null), count(*) filter (where recorded.error is not null),
         coalesce(array_agg(recorded.enrollment_id) filter (where e.status = 'active' and e.current_step_key = recorded.step_key), '{}')
    into ok, bad, moved
    from recorded
    join app_public.enrollments e on e.organization_id = broadcast_record_batch.organization_id and e.id = recorded.enrollment_id
   where e.organization_id = broadcast_record_batch.organization_id and e.id = any(eids);
  perform app_private.advance_enrollments(broadcast_record_batch.organization_id, moved);
  update app_public.broadcast_runs r set in_flight = '{}', progress_at = now(), sent = r.sent + ok, failed = r.failed + bad
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id;
end $$;
comment on function app_private.broadcast_record_batch(uuid, uuid, jsonb) is
  'A batch''s transport answers recorded set-based (step runs, messages, events; the provider''s id kept), the enrollments '
  'moved on, counts moved, the in_flight checkpoint emptied.';
revoke execute on function app_private.broadcast_record_batch(uuid, uuid, jsonb) from public;

-- Cancelling runs (sequences_cancel_schedule_run, and a schedule set again), as 000015 part 800,
-- with the batch a dead sender left: when no process holds the run (its advisory lock, which a
-- sender holds on its connection while it sends, is free), that batch's step runs still `sending`
-- become `unknown` (their messages may have gone; never handed over again) and their enrollments
-- end cancelled; a live sender records its batch itself. The rest not sent is cancelled and counted.
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
comment on function app_hidden.broadcast_cancel_runs(uuid, uuid) is
  'Cancels the runs sending of a broadcast (or one run): a dead sender''s in_flight batch made unknown, what has not gone '
  'cancelled and counted; answers how many were cancelled.';
revoke all on function app_hidden.broadcast_cancel_runs(uuid, uuid) from public;
grant execute on function app_hidden.broadcast_cancel_runs(uuid, uuid) to svc_request;

reset role;
