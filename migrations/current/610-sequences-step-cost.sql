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

-- Moves an enrollment on from the step it stands on, as 000014 (part 310): with edges, the first
-- edge from that step whose condition holds (none: completed); without, the next step in list
-- order (none: completed). The next step is due now + its delay, run at the next opening of the
-- send window. Its job is added here (queue_now: this runs in the worker, not in a request) when
-- it runs within the sweep horizon, so a step with no delay goes out at once; later, the sweep
-- adds it (600-sequences-step-sweep.sql).
create or replace function app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamptz default now())
returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  e app_public.enrollments;
  s app_public.sequences;
  next_key text;
  idx int;
  step jsonb;
  due timestamptz;
  edge jsonb;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = advance_enrollment.organization_id and x.id = advance_enrollment.enrollment_id;
  if e.status <> 'active' then
    return;
  end if;
  select * into s from app_public.sequences x where x.organization_id = e.organization_id and x.id = e.sequence_id;
  if jsonb_array_length(s.edges) > 0 then
    for edge in select value from jsonb_array_elements(s.edges) loop
      if edge->>'from' = e.current_step_key
         and (edge->'condition' is null or jsonb_typeof(edge->'condition') = 'null'
              or app_hidden.condition_holds(e.organization_id, e.contact_id, e.id, edge->'condition')) then
        next_key := edge->>'to';
        exit;
      end if;
    end loop;
    if next_key is not null then
      select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = next_key limit 1;
    end if;
  else
    select t.o into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = e.current_step_key limit 1;
  end if;
  step := case when idx is not null then s.steps->idx end;
  if step is null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'completed', 'last_step');
    return;
  end if;
  due := at + app_hidden.step_delay(step);
  update app_public.enrollments x
     set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
         next_run_at = app_hidden.sequence_next_run(e.organization_id, s.send_schedule_id, due), updated_at = at
   where x.organization_id = e.organization_id and x.id = e.id;
  perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id], queue_now => true);
end $$;
comment on function app_private.advance_enrollment(uuid, uuid, timestamptz) is
  'Moves an active enrollment to its next step (edges: first whose condition holds; else list order), due at + delay, in the '
  'send window, job scheduled; no next step: completed.';
revoke execute on function app_private.advance_enrollment(uuid, uuid, timestamptz) from public;

-- First transaction of a step, as 000014 (part 310) (a run found `sending` is looked at again by
-- the sweep, five minutes after its claim): nothing unless the enrollment is active, its sequence
-- active, and it stands on step_key. A step run already `sending` becomes `unknown` (event unknown) and
-- the enrollment moves on. Exit conditions first (completed); a wait step is `waited`; an email
-- or SMS the contact may not get now is `skipped` with the reason; otherwise the step run
-- `sending` and the message are written and the message answered for the transport.
-- Answers {action: none|done|send, message?}.
create or replace function app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text,
  sink_channels text[] default '{}')
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  e app_public.enrollments;
  s app_public.sequences;
  c app_public.contacts;
  step jsonb;
  run app_public.step_runs;
  exiting text;
  address text;
  refusal text;
  message jsonb;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = sequence_step_claim.organization_id and x.id = sequence_step_claim.enrollment_id
     for update;
  if not found or e.status <> 'active' or e.current_step_key is distinct from sequence_step_claim.step_key then
    return jsonb_build_object('action', 'none');
  end if;
  select * into s from app_public.sequences x where x.organization_id = e.organization_id and x.id = e.sequence_id;
  if s.status <> 'active' then
    return jsonb_build_object('action', 'none');
  end if;

  select * into run from app_public.step_runs r
   where r.organization_id = e.organization_id and r.enrollment_id = e.id and r.step_key = e.current_step_key;
  if found then
    -- Claimed under five minutes ago: its job may still be waiting for the transport (a resume
    -- scheduled a second job for the enrollment meanwhile). The transports give up well within
    -- that (SMTP 20 s idle, HTTP 15 s), so look again once it has passed.
    if run.status = 'sending' and run.updated_at > now() - interval '5 minutes' then
      update app_public.enrollments x set next_run_at = run.updated_at + interval '5 minutes'
       where x.organization_id = e.organization_id and x.id = e.id;
      perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id], queue_now => true);
      return jsonb_build_object('action', 'none');
    end if;
    if run.status = 'sending' then
      update app_public.step_runs r set status = 'unknown', reason = 'interrupted', updated_at = now()
       where r.organization_id = run.organization_id and r.id = run.id;
      update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
       where m.organization_id = run.organization_id and m.id = run.message_id and m.status = 'queued';
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
      values (e.organization_id, e.id, 'unknown', run.step_key, run.message_id, 'interrupted');
    end if;
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  exiting := case when jsonb_array_length(s.exit_conditions) > 0 then app_private.exit_condition_holding(e, s.exit_conditions) end;
  if exiting is not null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'completed', 'exit_condition:' || exiting);
    return jsonb_build_object('action', 'done');
  end if;

  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = e.current_step_key limit 1;
  if step is null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'failed', 'step_removed');
    return jsonb_build_object('action', 'done');
  end if;

  if step->>'type' not in ('email', 'sms') then
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status)
    values (e.organization_id, e.id, e.current_step_key, 'wait', 'waited');
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  select * into c from app_public.contacts x where x.organization_id = e.organization_id and x.id = e.contact_id;
  address := case step->>'type' when 'email' then c.email::text else c.phone end;
  refusal := app_private.send_refusal(e.organization_id, step->>'type', address);
  if refusal is null and step->>'type' = 'sms' and not c.sms_consent then
    refusal := 'no_consent';
  end if;
  if refusal is not null then
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
    values (e.organization_id, e.id, e.current_step_key, step->>'type', 'skipped', refusal);
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    values (e.organization_id, e.id, 'skipped', e.current_step_key, refusal);
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  if step->>'type' = any(sink_channels) then
    -- The local sink is a table: nothing leaves the database, so storing the message and
    -- recording it sent commit together (exactly once). Should a crash lose the commit, nothing
    -- happened and the job runs again; so it need not wait for the disk.
    perform set_config('synchronous_commit', 'off', true);
    message := app_private.build_sequence_message(e.organization_id, s, step, c.id, address, e.id, base_url, true, 'sent');
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    values (e.organization_id, (message->>'id')::uuid, message->>'channel', message->>'sender', message->>'recipient',
            message->>'subject', message->>'body', message->'meta');
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
    values (e.organization_id, e.id, e.current_step_key, step->>'type', 'sent', (message->>'id')::uuid);
    -- the sink reports every message delivered as it stores it (sequences.md, Analytics)
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
    values (e.organization_id, e.id, 'sent', e.current_step_key, (message->>'id')::uuid),
           (e.organization_id, e.id, 'delivered', e.current_step_key, (message->>'id')::uuid);
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;
  message := app_private.build_sequence_message(e.organization_id, s, step, c.id, address, e.id, base_url, true);
  insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
  values (e.organization_id, e.id, e.current_step_key, step->>'type', 'sending', (message->>'id')::uuid);
  return jsonb_build_object('action', 'send', 'message', message);
end $$;
comment on function app_private.sequence_step_claim(uuid, uuid, text, text, text[]) is
  'First transaction of a sequence step: checks, exits, waits, skips (with reason) or claims the message (step run sending); '
  'a step run found sending becomes unknown; on a channel of sink_channels the message is stored and recorded at once. '
  'Answers {action: none|done|send, message?}.';
revoke execute on function app_private.sequence_step_claim(uuid, uuid, text, text, text[]) from public;

reset role;
