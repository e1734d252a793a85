--! Previous: sha1:38cad242b784ed9f6a3ca86d53a3e08f2a146974
--! Hash: sha1:3033385d36994bb611df65cb3f7b094350fc97de
--! Message: Sequence steps claimed and recorded together: the broadcast batch claim and record made helpers for any set of enrollments, a job's due steps through them in one statement each, broadcast batches pipelined

--! split: 100-sequence-steps-claimed-together.sql
-- The sequences engine's due steps claimed and recorded many at a time, as broadcasts claim their
-- batches (docs/sequences-engine.md, "Steps taken together"). A sequence_step job already took
-- other due steps off the queue (000017, app_private.sequence_steps_take) and ran them one by
-- one: two PL/pgSQL transactions a message (sequence_step_claim, then sequence_step_record), about
-- 1.7 ms of database time each. Now the job claims its whole batch in one statement and records
-- the transport's answers in another:
--   * app_private.claim_enrollment_messages is the body of broadcast_claim_batch (000016 part 310)
--     made a helper for any set of locked enrollments of one sequence: the per-message claim's rules
--     as joins (refusals skipped; the rest rendered, stored and either claimed `sending` or, on a
--     sink channel, recorded sent), the rare cases through sequence_step_claim itself;
--     broadcast_claim_batch now calls it.
--   * app_private.record_enrollment_messages is the body of broadcast_record_batch made a helper;
--     broadcast_record_batch now calls it.
--   * app_private.sequence_steps_claim / sequence_steps_record take a job's steps of any
--     organizations and sequences: each (organization, sequence) group through the helpers.
-- Crash safety is the per-message claim's: a step run left `sending` by a dead worker is found by
-- the next claim of its enrollment (queued again by the sweep) and becomes `unknown`.
set local role svc_owner;

-- The claim of a set of enrollments of one sequence, all locked by the caller, active and standing
-- on the step they were claimed for; the sequence active. As app_private.sequence_step_claim claims
-- one, for all at once:
--   * a step run already there for the step, an exit condition holding, a step removed or not an
--     email or SMS: through app_private.sequence_step_claim itself, one by one;
--   * the others, per step: a missing address, a suppressed email address, an opted-out number or
--     an SMS without consent is a skipped step run with the reason and its event, and the
--     enrollment moves on; every other is rendered and inserted in one statement: unsubscribe
--     token (email), message, step run `sending` (the message answered for the transport) or, on
--     a sink channel, the outbox row with the step run `sent` and its sent and delivered events
--     (and the enrollment moves on).
-- With for_run (a broadcast run) the run's id is in every message's meta. Answers the messages
-- for the transport ([{enrollment_id, step_key, message}]), the enrollments they hold (flight), and
-- how many were sent (sink) and skipped.
create or replace function app_private.claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[],
  base_url text, sink_channels text[], for_run uuid default null,
  out messages jsonb, out flight uuid[], out sent_count int, out skipped_count int)
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  org app_public.organizations;
  step jsonb;
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
  sent_now int := 0;
  skipped_now int := 0;
begin
  messages := '[]';
  flight := '{}';
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
     where e.organization_id = org_id and e.id = any(ids)
       and (exists (select 1 from app_public.step_runs sr
                    where sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key)
        or not coalesce(e.current_step_key = any(message_keys), false)
        or (jsonb_array_length(s.exit_conditions) > 0 and app_private.exit_condition_holding(e, s.exit_conditions) is not null)));
  foreach one in array slow loop
    select e.current_step_key into key from app_public.enrollments e where e.organization_id = org_id and e.id = one;
    claim := app_private.sequence_step_claim(org_id, one, key, base_url, sink_channels);
    if claim->>'action' = 'send' then
      messages := messages || jsonb_build_object('enrollment_id', one, 'step_key', key, 'message',
        case when for_run is null then claim->'message' else jsonb_set(claim->'message', '{meta,run_id}', to_jsonb(for_run)) end);
      flight := flight || one;
      queued := queued || (claim->'message'->>'id')::uuid;
    elsif claim->>'action' = 'done' then
      -- skipped (with its reason) or sent through the sink; an exit or a wait leaves no such step
      -- run and counts as cancelled when the run ends
      select sr.status, sr.message_id into outcome, stored from app_public.step_runs sr
       where sr.organization_id = org_id and sr.enrollment_id = one and sr.step_key = key;
      if outcome = 'sent' then
        sent_now := sent_now + 1;
        sunk := sunk || stored;
      elsif outcome = 'skipped' then skipped_now := skipped_now + 1; end if;
    end if;
  end loop;
  if cardinality(queued || sunk) > 0 then
    update app_private.outgoing_messages m set meta = m.meta || jsonb_strip_nulls(jsonb_build_object('run_id', for_run))
     where m.organization_id = org_id and m.id = any(queued || sunk);
    update app_private.outbox x set meta = x.meta || jsonb_strip_nulls(jsonb_build_object('run_id', for_run))
     where x.organization_id = org_id and x.id = any(sunk);
  end if;

  select * into org from app_public.organizations x where x.id = org_id;
  domain := coalesce(org.sending_email_domain, 'localhost');
  select l.name, coalesce(l.sms_number, org.default_sms_number) into location_name, sms_sender
    from (select 1) one_row left join app_public.locations l on l.organization_id = org.id and l.id = s.location_id;

  for g in
    select e.current_step_key as key, array_agg(e.id order by e.id) as ids
      from app_public.enrollments e
     where e.organization_id = org_id and e.id = any(ids) and not e.id = any(slow)
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
       where e.organization_id = org_id and e.id = any(g.ids)
    ), skipped as (
      insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
      select org_id, checked.id, g.key, channel, 'skipped', checked.refusal from checked where checked.refusal is not null
      returning enrollment_id, reason
    ), logged as (
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
      select org_id, skipped.enrollment_id, 'skipped', g.key, skipped.reason from skipped
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
       where e.organization_id = org_id and e.id = any(passing)
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
             || jsonb_strip_nulls(jsonb_build_object('run_id', for_run)) as meta
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
      select sha256(convert_to(rendered.token, 'UTF8')), org_id, lower(rendered.address), rendered.contact_id,
             rendered.enrollment_id, rendered.message_id
        from rendered where rendered.token is not null
    ), stored_messages as (
      insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
      select org_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else sms_sender end,
             rendered.address, rendered.subject, rendered.body, rendered.meta,
             case when to_sink then 'sent' else 'queued' end, case when to_sink then now() end
        from rendered
    ), sink as (
      insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
      select org_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else sms_sender end,
             rendered.address, rendered.subject, rendered.body, rendered.meta
        from rendered where to_sink
    ), runs as (
      insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
      select org_id, rendered.enrollment_id, g.key, channel, case when to_sink then 'sent' else 'sending' end, rendered.message_id
        from rendered
    ), logged as (
      -- the sink reports every message delivered as it stores it (sequences.md, Analytics)
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
      select org_id, rendered.enrollment_id, t.type, g.key, rendered.message_id
        from rendered cross join unnest(array['sent', 'delivered']) with ordinality t(type, o)
       where to_sink
       order by rendered.enrollment_id, t.o
    )
    select coalesce(jsonb_agg(jsonb_build_object('enrollment_id', rendered.enrollment_id, 'step_key', g.key, 'message',
             jsonb_build_object('organization_id', org_id, 'id', rendered.message_id, 'channel', channel,
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


  perform app_private.advance_enrollments(org_id, moved);
  sent_count := sent_now;
  skipped_count := skipped_now;
end $$;
comment on function app_private.claim_enrollment_messages(uuid, app_public.sequences, uuid[], text, text[], uuid) is
  'Claims the locked, active enrollments of one sequence at their steps set-based with the rules of sequence_step_claim '
  '(refusals skipped, messages rendered and written, sink sends recorded; rare cases through sequence_step_claim itself); '
  'answers the messages for the transport, the enrollments they hold, and counts sent and skipped.';
revoke execute on function app_private.claim_enrollment_messages(uuid, app_public.sequences, uuid[], text, text[], uuid) from public;

-- Step 1 of a broadcast batch (000016 part 310), its claim now app_private.claim_enrollment_messages,
-- and pipelined: the sender claims its next batch while the transport still has the one before
-- (src/broadcasts/run.ts), so the claim's database time no longer stands between two batches'
-- messages. The checkpoint (in_flight) holds both. A first claim settles what a process that died
-- left in it (broadcast_settle_in_flight); a claim `following` the caller's own batch still out
-- appends to it, and answers `wait` rather than finishing the run while that batch is out (the
-- caller records it, then asks again). Then the next `size` pending recipients (locked, in id
-- order): cancelled when the sequence is no longer active (sequence_inactive), else claimed.
-- Answers {action: none (run not sending) | done (nothing left: run completed) | wait | batch,
-- messages: [{enrollment_id, step_key, message}], handled: n}. A process killed leaves at most
-- two batches `unknown`.
drop function if exists app_private.broadcast_claim_batch(uuid, uuid, int, text, text[]);
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
  if cardinality(r.in_flight) > 0 and not following then
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
     set in_flight = x.in_flight || c.flight, progress_at = now(), claimed_through = ids[cardinality(ids)],
         sent = x.sent + c.sent_count, skipped = x.skipped + c.skipped_count
   where x.organization_id = r.organization_id and x.id = r.id;
  -- the checkpoint must be on disk before the transport gets the messages; with nothing handed
  -- over, as the per-message claim on a sink channel, the commit need not wait for the disk (a
  -- lost commit is a batch not claimed, claimed again)
  perform set_config('synchronous_commit', case when cardinality(c.flight) = 0 then 'off' else 'on' end, true);
  return jsonb_build_object('action', 'batch', 'messages', c.messages, 'handled', cardinality(ids));
end $$;
comment on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[], boolean) is
  'A run''s next batch: a dead process''s in_flight made unknown (unless following the caller''s own batch still out: '
  'then appended to, and `wait` rather than done), then up to `size` recipients claimed set-based '
  '(claim_enrollment_messages); the claimed ones join the in_flight checkpoint.';
revoke execute on function app_private.broadcast_claim_batch(uuid, uuid, int, text, text[], boolean) from public;

-- What the transport answered for messages of one organization ({enrollment_id, step_key,
-- message_id, error, provider_id?}), as app_private.sequence_step_record records one, for all at
-- once: only step runs still `sending` with that message are the caller's to record (one made
-- `unknown` meanwhile is not); step run and message sent or failed (the provider's id kept, for
-- its delivery reports), the sent or failed event; the enrollments still on that step move on.
-- Answers how many were recorded sent and failed.
create or replace function app_private.record_enrollment_messages(org_id uuid, results jsonb,
  out sent_count int, out failed_count int)
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  eids uuid[];
  moved uuid[];
begin
  eids := array(select (x->>'enrollment_id')::uuid from jsonb_array_elements(results) x);
  perform 1 from app_public.enrollments e
   where e.organization_id = org_id and e.id = any(eids) order by e.id for update;
  with answer as (
    select (x->>'enrollment_id')::uuid as enrollment_id, x->>'step_key' as step_key, (x->>'message_id')::uuid as message_id,
           x->>'error' as error, nullif(x->>'provider_id', '') as provider_id
      from jsonb_array_elements(results) x
  ), recorded as (
    update app_public.step_runs sr
       set status = case when answer.error is null then 'sent' else 'failed' end, reason = left(answer.error, 500), updated_at = now()
      from answer
     where sr.organization_id = org_id and sr.enrollment_id = answer.enrollment_id
       and sr.step_key = answer.step_key and sr.message_id = answer.message_id and sr.status = 'sending'
    returning sr.enrollment_id, sr.step_key, sr.message_id, answer.error, answer.provider_id
  ), messages as (
    update app_private.outgoing_messages m
       set status = case when recorded.error is null then 'sent' else 'failed' end,
           sent_at = case when recorded.error is null then now() end, error = left(recorded.error, 1000),
           provider_id = coalesce(recorded.provider_id, m.provider_id)
      from recorded
     where m.organization_id = org_id and m.id = recorded.message_id
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select org_id, recorded.enrollment_id, case when recorded.error is null then 'sent' else 'failed' end,
           recorded.step_key, recorded.message_id, case when recorded.error is not null then 'transport_error' end
      from recorded
  )
  select count(*) filter (where recorded.error is null), count(*) filter (where recorded.error is not null),
         coalesce(array_agg(recorded.enrollment_id) filter (where e.status = 'active' and e.current_step_key = recorded.step_key), '{}')
    into sent_count, failed_count, moved
    from recorded
    join app_public.enrollments e on e.organization_id = org_id and e.id = recorded.enrollment_id
   where e.organization_id = org_id and e.id = any(eids);
  perform app_private.advance_enrollments(org_id, moved);
end $$;
comment on function app_private.record_enrollment_messages(uuid, jsonb) is
  'Transport answers for messages of one organization recorded set-based (step runs still sending with that message, '
  'messages, events; the provider''s id kept), the enrollments still on the step moved on; answers counts sent and failed.';
revoke execute on function app_private.record_enrollment_messages(uuid, jsonb) from public;

-- Step 3 of a broadcast batch (000016 part 310), its record now app_private.record_enrollment_messages:
-- counts moved and the batch's enrollments taken out of the checkpoint (the next batch may be in
-- it already). The commit need not wait for the disk: a lost record leaves in_flight set, and
-- those become unknown.
create or replace function app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  c record;
begin
  perform set_config('synchronous_commit', 'off', true);
  perform 1 from app_public.broadcast_runs r
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id for update;
  select * into c from app_private.record_enrollment_messages(broadcast_record_batch.organization_id, results);
  update app_public.broadcast_runs r
     set in_flight = array(select f from unnest(r.in_flight) f
                            where not f = any(array(select (x->>'enrollment_id')::uuid from jsonb_array_elements(results) x))),
         progress_at = now(), sent = r.sent + c.sent_count, failed = r.failed + c.failed_count
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id;
end $$;
comment on function app_private.broadcast_record_batch(uuid, uuid, jsonb) is
  'A batch''s transport answers recorded set-based (record_enrollment_messages), counts moved, the batch''s enrollments '
  'taken out of the in_flight checkpoint.';

-- The first transaction of a job's steps ([{organization_id, enrollment_id, step_key}], the job's
-- own and those it took off the queue), as app_private.sequence_step_claim for each: an
-- enrollment no longer active, moved to another step since, or of a sequence not active is left
-- as it is (the claim's `none`); the others are locked in id order and claimed per (organization,
-- sequence) by app_private.claim_enrollment_messages. Answers the messages for the transport:
-- [{organization_id, enrollment_id, step_key, message}]. The commit waits for the disk only when
-- some are answered: their step runs `sending` must outlive a crash before the transport has them.
create or replace function app_private.sequence_steps_claim(steps jsonb, base_url text, sink_channels text[] default '{}')
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  g record;
  s app_public.sequences;
  c record;
  answer jsonb := '[]';
begin
  for g in
    with wanted as (
      select (x->>'organization_id')::uuid as organization_id, (x->>'enrollment_id')::uuid as enrollment_id, x->>'step_key' as step_key
        from jsonb_array_elements(steps) x
    ), locked as (
      select e.organization_id, e.id, e.sequence_id
        from app_public.enrollments e
        join wanted w on w.organization_id = e.organization_id and w.enrollment_id = e.id
       where e.status = 'active' and e.current_step_key = w.step_key
       order by e.organization_id, e.id
         for update of e
    )
    select locked.organization_id, locked.sequence_id, array_agg(locked.id order by locked.id) as ids
      from locked group by locked.organization_id, locked.sequence_id
  loop
    select * into s from app_public.sequences x where x.organization_id = g.organization_id and x.id = g.sequence_id;
    continue when s.status <> 'active';
    select * into c from app_private.claim_enrollment_messages(g.organization_id, s, g.ids, base_url, sink_channels);
    answer := answer || coalesce((select jsonb_agg(m || jsonb_build_object('organization_id', g.organization_id))
                                    from jsonb_array_elements(c.messages) m), '[]');
  end loop;
  perform set_config('synchronous_commit', case when jsonb_array_length(answer) = 0 then 'off' else 'on' end, true);
  return answer;
end $$;
comment on function app_private.sequence_steps_claim(jsonb, text, text[]) is
  'First transaction of a job''s sequence steps, set-based: each step as sequence_step_claim decides it (waits, exits, '
  'skips, sink sends done; messages claimed sending), per (organization, sequence) through claim_enrollment_messages; '
  'answers [{organization_id, enrollment_id, step_key, message}] for the transport.';
revoke execute on function app_private.sequence_steps_claim(jsonb, text, text[]) from public;

-- The second: the transport's answers ([{organization_id, enrollment_id, step_key, message_id,
-- error, provider_id?}]) recorded per organization by app_private.record_enrollment_messages. As
-- sequence_step_record, the commit need not wait for the disk: a lost record leaves the step runs
-- `sending`, later `unknown`.
create or replace function app_private.sequence_steps_record(results jsonb) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  g record;
begin
  perform set_config('synchronous_commit', 'off', true);
  for g in
    select (x->>'organization_id')::uuid as organization_id, jsonb_agg(x) as results
      from jsonb_array_elements(sequence_steps_record.results) x
     group by 1 order by 1
  loop
    perform app_private.record_enrollment_messages(g.organization_id, g.results);
  end loop;
end $$;
comment on function app_private.sequence_steps_record(jsonb) is
  'Second transaction of a job''s sequence steps: the transport''s answers recorded set-based per organization '
  '(record_enrollment_messages). Commits without waiting for the disk.';
revoke execute on function app_private.sequence_steps_record(jsonb) from public;

reset role;
