-- Enrolling a contact in a sequence: one core (app_private.enroll_contact) behind every way in
-- (sequences_enroll, event and tag triggers, later broadcast runs), and the sequences_enroll
-- operation.
--
-- A contact is in a sequence at most once at a time: the partial unique index
-- enrollments_one_live decides it, so two concurrent enrolls of one contact make one enrollment
-- (the second waits for the first's insert, finds the conflict and answers the first one as
-- skipped, already_enrolled).
set local role svc_owner;

-- Which event an enrollment entered by (event triggers), so that cancel_events of that event
-- cancel it and nothing else.
alter table app_public.enrollments add column if not exists entry_event text;
comment on column app_public.enrollments.entry_event is
  'The contacts_upsert event the contact entered by (source event); cancel_events of that name cancel the enrollment.';

-- A step's delay as an interval ({minutes|hours|days: n}; absent: none).
create or replace function app_hidden.step_delay(step jsonb) returns interval
language sql immutable parallel safe as $$
  select coalesce((step->'delay'->>'days')::numeric, 0) * interval '1 day'
       + coalesce((step->'delay'->>'hours')::numeric, 0) * interval '1 hour'
       + coalesce((step->'delay'->>'minutes')::numeric, 0) * interval '1 minute'
$$;
comment on function app_hidden.step_delay(jsonb) is 'The delay of a step ({days, hours, minutes}) as an interval; none is zero.';

-- When a step due at `due` runs: moved forward into the sequence's send schedule (its own, else
-- the organization's default); with no schedule at all, when it is due.
create or replace function app_hidden.sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamptz)
returns timestamptz
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_public.send_schedules := app_hidden.sequence_send_schedule(organization_id, send_schedule_id);
begin
  if s.id is null then
    return due;
  end if;
  return coalesce(app_hidden.next_send_time(s.timezone, s.windows, due), due);
end $$;
comment on function app_hidden.sequence_next_run(uuid, uuid, timestamptz) is
  'When a step due at `due` runs: the next opening of the sequence''s send schedule (DST included), or `due` without one.';
grant execute on function app_hidden.step_delay(jsonb), app_hidden.sequence_next_run(uuid, uuid, timestamptz) to svc_request, svc_worker;

-- The one way contacts enter a sequence, set-based (a tag or a form enrolls one contact, an event
-- fired for thousands in one statement or a broadcast run many): the caller has checked what its
-- way in requires (the sequence active, the contacts at its location, the start step known).
-- Each contact gets an enrollment on the first step (or start_step_key), due `at` + the step's
-- delay, run at the next opening of the send window, an `enrolled` event, and its step's job
-- (one add_jobs call for all), in the caller's transaction. A contact already live (active or
-- paused) in the sequence is answered with that enrollment (out_enrolled false). No step at all:
-- no rows.
create or replace function app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[],
  start_step_key text default null, source text default 'manual', entry_event text default null, at timestamptz default now())
returns table (out_contact_id uuid, out_enrolled boolean, out_enrollment_id uuid)
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  s app_public.sequences;
  idx int;
  step jsonb;
  due timestamptz;
  run_at timestamptz;
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
  if start_step_key is null then
    idx := 0;
  else
    select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = start_step_key limit 1;
  end if;
  step := s.steps->idx;
  if step is null then
    return;
  end if;
  due := at + app_hidden.step_delay(step);
  run_at := app_hidden.sequence_next_run(enroll_contacts.organization_id, s.send_schedule_id, due);
  while cardinality(pending) > 0 loop
    for r in
      with ins as (
        insert into app_public.enrollments as x (organization_id, sequence_id, contact_id, status, current_step_index,
          current_step_key, next_step_due_at, next_run_at, source, entry_event, created_at, updated_at)
        select enroll_contacts.organization_id, enroll_contacts.sequence_id, c, 'active', idx, step->>'step_key', due, run_at,
               enroll_contacts.source, enroll_contacts.entry_event, at, at
          from unnest(pending) c
        on conflict (organization_id, sequence_id, contact_id) where status in ('active', 'paused') do nothing
        returning x.id, x.contact_id
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, at, step_key, reason)
        select enroll_contacts.organization_id, ins.id, 'enrolled', at, step->>'step_key', enroll_contacts.source from ins
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
  if cardinality(new_ids) > 0 then
    perform app_private.schedule_enrollment_steps(enroll_contacts.organization_id, new_ids);
  end if;
end $$;
comment on function app_private.enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamptz) is
  'Enrolls contacts (the one core of every way in, set-based): enrollment on the first or given step, due at + delay, run in '
  'the send window, enrolled event, jobs scheduled in one call; a contact already live answers its enrollment (not enrolled).';
revoke execute on function app_private.enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamptz) from public;

-- One contact: {status: enrolled, enrollment} or {status: skipped, reason: already_enrolled,
-- enrollment} (no_steps without a step).
create or replace function app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid,
  start_step_key text default null, source text default 'manual', entry_event text default null, at timestamptz default now())
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r record;
  e app_public.enrollments;
begin
  select * into r from app_private.enroll_contacts(organization_id, sequence_id, array[contact_id], start_step_key, source,
    entry_event, at);
  if not found then
    return jsonb_build_object('status', 'skipped', 'reason', 'no_steps');
  end if;
  select * into e from app_public.enrollments x where x.organization_id = enroll_contact.organization_id and x.id = r.out_enrollment_id;
  return case when r.out_enrolled then jsonb_build_object('status', 'enrolled', 'enrollment', app_hidden.enrollment_json(e))
              else jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e)) end;
end $$;
comment on function app_private.enroll_contact(uuid, uuid, uuid, text, text, text, timestamptz) is
  'Enrolls one contact through app_private.enroll_contacts; answers {status: enrolled|skipped, reason?, enrollment}.';
revoke execute on function app_private.enroll_contact(uuid, uuid, uuid, text, text, text, timestamptz) from public;

-- The write half of sequences_enroll, run as the owner once the caller's own policies found the
-- sequence and the contact: checks again that the credential may write the sequence, then the
-- state rules (409) and the location rule, and enrolls.
create or replace function app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text)
returns jsonb
language plpgsql volatile security definer
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
  -- Enrolling again while active or paused (the spec's enrollment table) answers the existing
  -- enrollment, before the sequence's own state: a contact held in a paused sequence is skipped
  -- as already enrolled, not refused as if it were new.
  select * into e from app_public.enrollments x
   where x.organization_id = org and x.sequence_id = s.id and x.contact_id = sequences_enroll_write.contact_id
     and x.status in ('active', 'paused');
  if found then
    return jsonb_build_object('status', 'skipped', 'reason', 'already_enrolled', 'enrollment', app_hidden.enrollment_json(e));
  end if;
  if s.status = 'inactive' then
    perform app_hidden.raise_error(409, 'sequence_inactive', 'The sequence is not active; activate it first');
  elsif s.status = 'paused' then
    perform app_hidden.raise_error(409, 'sequence_paused', 'The sequence is paused; resume it first');
  end if;
  if s.location_id is not null and not exists (
      select 1 from app_public.contact_locations cl
       where cl.organization_id = org and cl.contact_id = sequences_enroll_write.contact_id and cl.location_id = s.location_id) then
    perform app_hidden.raise_error(409, 'contact_not_at_location',
      'The sequence belongs to a location and the contact is not linked to it');
  end if;
  return app_private.enroll_contact(org, s.id, sequences_enroll_write.contact_id, start_step_key, 'manual', null);
end $$;
comment on function app_hidden.sequences_enroll_write(uuid, uuid, text) is
  'sequences_enroll''s write as the owner: the credential may write the sequence; a live enrollment answers skipped '
  '(already_enrolled); 409 sequence_inactive, sequence_paused, contact_not_at_location; then app_private.enroll_contact.';
grant execute on function app_hidden.sequences_enroll_write(uuid, uuid, text) to svc_request;

create or replace function app_public.sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text)
returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  s record;
  who uuid;
begin
  -- read as the caller: a sequence or contact out of reach is absent (404)
  select x.id, x.kind, x.location_id, x.steps into s from app_public.sequences x
   where x.organization_id = org and x.id = sequences_enroll.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  if not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'This sequence belongs to the whole organization; a manager enrolls only in sequences of its own locations');
  end if;
  if (sequences_enroll.contact_id is null) = (sequences_enroll.email is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'body: send exactly one of contact_id or email');
  end if;
  if s.kind = 'broadcast' then
    perform app_hidden.raise_error(400, 'bad_request',
      'A broadcast takes its contacts from its audience when its schedule fires; it cannot be enrolled into');
  end if;
  if start_step_key is not null
     and not exists (select 1 from jsonb_array_elements(s.steps) v where v->>'step_key' = start_step_key) then
    perform app_hidden.raise_error(400, 'bad_request', 'body.start_step_key: the sequence has no step "' || left(start_step_key, 100) || '"');
  end if;
  if sequences_enroll.email is not null then
    select c.id into who from app_public.contacts c where c.organization_id = org and c.email_key = lower(sequences_enroll.email);
  else
    select c.id into who from app_public.contacts c where c.organization_id = org and c.id = sequences_enroll.contact_id;
  end if;
  if who is null then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return app_hidden.sequences_enroll_write(s.id, who, start_step_key);
end $$;
comment on function app_public.sequences_enroll(uuid, uuid, text, text) is
  'sequences_enroll: enrolls one contact (by id or email) in an active automation; answers {status: enrolled|skipped, reason?, '
  'enrollment}. 400 neither/both identifiers, unknown start step, broadcast; 404 sequence or contact; 409 sequence_inactive, '
  'sequence_paused, contact_not_at_location; 403 for a manager on an organization-wide sequence.';
grant execute on function app_public.sequences_enroll(uuid, uuid, text, text) to svc_request;

reset role;
