--! Previous: sha1:c2c8c657bf2269ec6435646433d84c14625c849d
--! Hash: sha1:7f1cb685521d1984ba95fc443401790a3e41a152
--! Message: Enroll one contact through one insert that answers its row (app_private.enroll_one): sequences_enroll 0.53 of contacts_get

--! split: 010-enroll-one-contact.sql
-- Enrolling one contact (sequences_enroll, and a tag or form that enrolls one contact) without
-- the set machinery: enroll_contacts answers a set, with arrays it rebuilds after each pass,
-- a loop over conflicts and a re-read of each enrollment it made. One contact needs one insert
-- that answers the row. Both ways share what an enrollment starts on (enrollment_start) and what
-- follows the enrollments made (enrollments_made), so they cannot drift apart.
-- bench/sequences-enroll.ts measures it; docs/sequences-engine.md ("Performance") has the profile.
set local role svc_owner;

-- Where an enrollment of sequence s starts: the step (the first, or the one keyed
-- start_step_key), when it is due (at + its delay) and when it runs (in the send window).
-- step is null when the sequence has no such step.
create or replace function app_private.enrollment_start(s app_public.sequences, start_step_key text, at timestamptz,
  out idx int, out step jsonb, out due timestamptz, out run_at timestamptz)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if start_step_key is null then
    idx := 0;
  else
    select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o)
     where t.v->>'step_key' = start_step_key limit 1;
  end if;
  step := s.steps->idx;
  if step is not null then
    due := at + app_hidden.step_delay(step);
    run_at := app_hidden.sequence_next_run(s.organization_id, s.send_schedule_id, due);
  end if;
end $$;
revoke execute on function app_private.enrollment_start(app_public.sequences, text, timestamptz) from public;

-- What follows new enrollments of one sequence: their count row, written once here (the
-- statement trigger _500_count_inserted stands aside while svc.enrollment_counts is 'batched'),
-- and their first step's work. A step due within the sweep horizon is queued now: a set's jobs
-- in one add_jobs call (one notification), one enrollment by kicking the sweep (one job for a
-- burst of single enrolls). A step due later waits for the sweep.
create or replace function app_private.enrollments_made(organization_id uuid, sequence_id uuid, ids uuid[], step_key text,
  run_at timestamptz) returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if cardinality(ids) = 0 then
    return;
  end if;
  insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
  values (enrollments_made.organization_id, enrollments_made.sequence_id, 'active', cardinality(ids));
  if random() < 1.0 / 32 then
    perform app_private.fold_enrollment_counts(enrollments_made.organization_id, enrollments_made.sequence_id);
  end if;
  if run_at <= now() + app_hidden.sequence_sweep_horizon() then
    if cardinality(ids) = 1 then
      perform app_private.kick_step_sweep(enrollments_made.organization_id);
    else
      perform graphile_worker.add_jobs(array(
        select row('sequence_step', json_build_object('organization_id', enrollments_made.organization_id, 'enrollment_id', i,
                   'step_key', enrollments_made.step_key), null, run_at, null, 'sequence_step:' || i, null, null)::graphile_worker.job_spec
          from unnest(ids) i), false);
    end if;
  end if;
end $$;
revoke execute on function app_private.enrollments_made(uuid, uuid, uuid[], text, timestamptz) from public;

-- Enrolls a set (the core of events and broadcasts): one insert for all, the live enrollment of
-- each that conflicted.
create or replace function app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[],
  start_step_key text DEFAULT NULL::text, source text DEFAULT 'manual'::text, entry_event text DEFAULT NULL::text,
  at timestamp with time zone DEFAULT now())
returns table(out_contact_id uuid, out_enrolled boolean, out_enrollment_id uuid)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  s app_public.sequences;
  st record;
  pending uuid[] := array(select distinct c from unnest(contact_ids) c where c is not null);
  answered uuid[] := '{}';
  new_ids uuid[] := '{}';
  r record;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_contacts.organization_id and x.id = enroll_contacts.sequence_id;
  if not found then
    raise exception 'enroll_contacts: no sequence %', enroll_contacts.sequence_id;
  end if;
  st := app_private.enrollment_start(s, start_step_key, at);
  if st.step is null then
    return;
  end if;
  perform set_config('svc.enrollment_counts', 'batched', true);
  while cardinality(pending) > 0 loop
    for r in
      with ins as (
        insert into app_public.enrollments as x (organization_id, sequence_id, contact_id, status, current_step_index,
          current_step_key, next_step_due_at, next_run_at, source, entry_event, created_at, updated_at)
        select enroll_contacts.organization_id, enroll_contacts.sequence_id, c, 'active', st.idx, st.step->>'step_key', st.due,
               st.run_at, enroll_contacts.source, enroll_contacts.entry_event, at, at
          from unnest(pending) c
        on conflict (organization_id, sequence_id, contact_id) where status in ('active', 'paused') do nothing
        returning x.id, x.contact_id
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, at, step_key, reason)
        select enroll_contacts.organization_id, ins.id, 'enrolled', at, st.step->>'step_key', enroll_contacts.source from ins
      )
      select ins.id, ins.contact_id from ins
    loop
      new_ids := new_ids || r.id;
      answered := answered || r.contact_id;
      out_contact_id := r.contact_id; out_enrolled := true; out_enrollment_id := r.id;
      return next;
    end loop;
    pending := array(select c from unnest(pending) c where not c = any(answered));
    exit when cardinality(pending) = 0;
    -- those that conflicted: the live enrollment (committed by now), one index probe each
    for r in
      select x.id, x.contact_id from unnest(pending) c
        join app_public.enrollments x on x.organization_id = enroll_contacts.organization_id
         and x.sequence_id = enroll_contacts.sequence_id and x.contact_id = c and x.status in ('active', 'paused')
    loop
      answered := answered || r.contact_id;
      out_contact_id := r.contact_id; out_enrolled := false; out_enrollment_id := r.id;
      return next;
    end loop;
    -- a live enrollment that ended between the two: try those again
    pending := array(select c from unnest(pending) c where not c = any(answered));
  end loop;
  perform set_config('svc.enrollment_counts', '', true);
  perform app_private.enrollments_made(enroll_contacts.organization_id, enroll_contacts.sequence_id, new_ids,
    st.step->>'step_key', st.run_at);
end $$;

-- Enrolls one contact in sequence s (read by the caller): one insert answering the row, or the
-- contact's live enrollment. Answers {status: enrolled|skipped, reason?, enrollment}.
create or replace function app_private.enroll_one(s app_public.sequences, contact_id uuid, start_step_key text,
  source text, entry_event text, at timestamptz) returns jsonb
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  st record := app_private.enrollment_start(s, start_step_key, at);
  e app_public.enrollments;
begin
  if st.step is null then
    return jsonb_build_object('status', 'skipped', 'reason', 'no_steps');
  end if;
  perform set_config('svc.enrollment_counts', 'batched', true);
  loop
    insert into app_public.enrollments as x (organization_id, sequence_id, contact_id, status, current_step_index,
      current_step_key, next_step_due_at, next_run_at, source, entry_event, created_at, updated_at)
    values (s.organization_id, s.id, enroll_one.contact_id, 'active', st.idx, st.step->>'step_key', st.due, st.run_at,
            enroll_one.source, enroll_one.entry_event, at, at)
    on conflict (organization_id, sequence_id, contact_id) where status in ('active', 'paused') do nothing
    returning * into e;
    exit when e.id is not null;
    select * into e from app_public.enrollments x
     where x.organization_id = s.organization_id and x.sequence_id = s.id and x.contact_id = enroll_one.contact_id
       and x.status in ('active', 'paused');
    if found then
      perform set_config('svc.enrollment_counts', '', true);
      return jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e));
    end if;
    -- the live enrollment it met ended in between: try again
  end loop;
  perform set_config('svc.enrollment_counts', '', true);
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, at, step_key, reason)
  values (s.organization_id, e.id, 'enrolled', at, e.current_step_key, enroll_one.source);
  perform app_private.enrollments_made(s.organization_id, s.id, array[e.id], e.current_step_key, st.run_at);
  return jsonb_build_object('status', 'enrolled', 'enrollment', app_hidden.enrollment_json(e));
end $$;
revoke execute on function app_private.enroll_one(app_public.sequences, uuid, text, text, text, timestamptz) from public;
comment on function app_private.enroll_one(app_public.sequences, uuid, text, text, text, timestamptz) is
  'Enrolls one contact in the sequence row given: one insert answering the enrollment, or the live one (skipped, already_enrolled); its enrolled event, count and first step''s work as enroll_contacts does for a set.';

create or replace function app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid,
  start_step_key text DEFAULT NULL::text, source text DEFAULT 'manual'::text, entry_event text DEFAULT NULL::text,
  at timestamp with time zone DEFAULT now()) returns jsonb
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_contact.organization_id and x.id = enroll_contact.sequence_id;
  if not found then
    raise exception 'enroll_contact: no sequence %', enroll_contact.sequence_id;
  end if;
  return app_private.enroll_one(s, contact_id, start_step_key, source, entry_event, at);
end $$;
comment on function app_private.enroll_contact(uuid, uuid, uuid, text, text, text, timestamptz) is
  'Enrolls one contact through app_private.enroll_one; answers {status: enrolled|skipped, reason?, enrollment}.';

-- sequences_enroll's write: the sequence row it has read goes to enroll_one as it is, and its
-- check for a live enrollment is enroll_one's insert (which answers the live one on conflict).
-- A contact live in a paused or inactive sequence is still answered skipped before the
-- sequence's state refuses it, as the spec's enrollment table has it.
create or replace function app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text)
returns jsonb
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  e app_public.enrollments;
begin
  select * into s from app_public.sequences x where x.organization_id = org and x.id = sequences_enroll_write.sequence_id;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not enroll contacts in this sequence');
  end if;
  if s.status <> 'active' then
    select * into e from app_public.enrollments x
     where x.organization_id = org and x.sequence_id = s.id and x.contact_id = sequences_enroll_write.contact_id
       and x.status in ('active', 'paused');
    if found then
      return jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e));
    elsif s.status = 'inactive' then
      perform app_hidden.raise_error(409, 'sequence_inactive', 'The sequence is not active; activate it first');
    else
      perform app_hidden.raise_error(409, 'sequence_paused', 'The sequence is paused; resume it first');
    end if;
  end if;
  if s.location_id is not null and not exists (
      select 1 from app_public.contact_locations cl
       where cl.organization_id = org and cl.contact_id = sequences_enroll_write.contact_id and cl.location_id = s.location_id) then
    -- unlinked since it was enrolled: still answered as already enrolled
    select * into e from app_public.enrollments x
     where x.organization_id = org and x.sequence_id = s.id and x.contact_id = sequences_enroll_write.contact_id
       and x.status in ('active', 'paused');
    if found then
      return jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e));
    end if;
    perform app_hidden.raise_error(409, 'contact_not_at_location',
      'The sequence belongs to a location and the contact is not linked to it');
  end if;
  return app_private.enroll_one(s, sequences_enroll_write.contact_id, start_step_key, 'manual', null, now());
end $$;

reset role;
