-- Reading enrollments (spec: Enrollment; Endpoints → Sequences, Contacts): a sequence's list, a
-- contact's list, one enrollment with its step runs and events, cancelling one, and a
-- sequence's analytics. Every read runs under the caller's policies: an enrollment is visible
-- with its sequence and its contact, so a credential limited to some locations sees the
-- enrollments of its contacts in the sequences it sees, and nothing else.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Helpers
--------------------------------------------------------------------------------
-- The sequence the caller reads, or 404 (absent, another organization's, another location's).
create or replace function app_hidden.sequence_for_read(sequence_id uuid) returns app_public.sequences
language plpgsql stable as $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences
   where organization_id = app_hidden.current_org_id() and id = sequence_for_read.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  return s;
end $$;
comment on function app_hidden.sequence_for_read(uuid) is 'The sequence of the current organization in the caller''s reach, or 404.';
revoke execute on function app_hidden.sequence_for_read(uuid) from public;
grant execute on function app_hidden.sequence_for_read(uuid) to svc_request;

-- An event as the API shows it: {type, at, step_key?, message_id?, reason?}.
create or replace function app_hidden.enrollment_event_json(v app_public.enrollment_events) returns jsonb
language sql stable as $$
  select jsonb_build_object('type', v.type, 'at', v.at)
      || jsonb_strip_nulls(jsonb_build_object('step_key', v.step_key, 'message_id', v.message_id, 'reason', v.reason))
$$;
comment on function app_hidden.enrollment_event_json(app_public.enrollment_events) is
  'An enrollment event as the API shows it: type and at, with step_key, message_id and reason when set.';
revoke execute on function app_hidden.enrollment_event_json(app_public.enrollment_events) from public;
grant execute on function app_hidden.enrollment_event_json(app_public.enrollment_events) to svc_request;

-- Ends one enrollment as cancelled, as the owner (the event is written by the owner only), for
-- a caller whose function checked that it may write the enrollment's sequence; checked again
-- here, reading as the owner, so that this helper cannot end another's enrollment whoever calls it.
create or replace function app_hidden.cancel_enrollment(enrollment_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
begin
  if not exists (select 1 from app_public.enrollments e
                   join app_public.sequences s on s.organization_id = e.organization_id and s.id = e.sequence_id
                  where e.organization_id = org and e.id = cancel_enrollment.enrollment_id
                    and app_hidden.current_may_write_sequence(s.location_id)) then
    perform app_hidden.raise_error(404, 'not_found', 'Enrollment not found');
  end if;
  perform app_private.end_enrollments(org, array[cancel_enrollment.enrollment_id], 'cancelled', 'cancelled');
end $$;
comment on function app_hidden.cancel_enrollment(uuid) is
  'Cancels one live enrollment of the current organization whose sequence the credential may write (app_private.end_enrollments); '
  'an ended one is left as it is. 404 otherwise.';
revoke execute on function app_hidden.cancel_enrollment(uuid) from public;
grant execute on function app_hidden.cancel_enrollment(uuid) to svc_request;

-- A page of a sequence's enrollments (of one status, or all), newest first, with its total, read
-- as the owner: only for a caller that reaches every contact of the organization, to whom every
-- enrollment of a sequence it sees is visible, so the rows are those its policies would give.
-- Under the policies each row of the page, and each row its OFFSET skips, would probe its
-- sequence and its contact, and at a million enrollments the planner prefers to hash every
-- contact of the organization first (a sequential scan of them per request). The rows skipped
-- are read from the index alone (its columns are the sort key), the page's 25 from the table.
-- Answers NULL to other callers.
drop function if exists app_hidden.sequence_enrollments_page(uuid, text, integer, bigint);
create or replace function app_hidden.sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid,
  page_size integer, skip bigint)
returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  ids uuid[];
  total bigint;
begin
  if not (app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all') then
    return null;
  end if;
  -- separate statements, so that each keeps its own index in a generic plan
  if contact_id is not null then
    -- one contact's enrollments are few: its index, then the sequence
    select count(*) into total from app_public.enrollments x
     where x.organization_id = org and x.contact_id = sequence_enrollments_page.contact_id
       and x.sequence_id = sequence_enrollments_page.sequence_id
       and (sequence_enrollments_page.status is null or x.status = sequence_enrollments_page.status);
    ids := array(select x.id from app_public.enrollments x
                  where x.organization_id = org and x.contact_id = sequence_enrollments_page.contact_id
                    and x.sequence_id = sequence_enrollments_page.sequence_id
                    and (sequence_enrollments_page.status is null or x.status = sequence_enrollments_page.status)
                  order by x.created_at desc, x.id limit page_size offset skip);
  elsif status is null then
    ids := array(select e.id from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = sequence_enrollments_page.sequence_id
                  order by e.created_at desc, e.id limit page_size offset skip);
  else
    ids := array(select e.id from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = sequence_enrollments_page.sequence_id
                    and e.status = sequence_enrollments_page.status
                  order by e.created_at desc, e.id limit page_size offset skip);
  end if;
  if contact_id is null then
    select coalesce(sum(c.n), 0) into total from app_private.enrollment_counts c
     where c.organization_id = org and c.sequence_id = sequence_enrollments_page.sequence_id
       and (sequence_enrollments_page.status is null or c.status = sequence_enrollments_page.status);
  end if;
  return jsonb_build_object(
    'total', total,
    'items', (select coalesce(jsonb_agg(app_hidden.enrollment_json(e)
                       || jsonb_build_object('next_send_at', coalesce(e.next_step_due_at, e.next_run_at))
                       order by e.created_at desc, e.id), '[]')
                from app_public.enrollments e where e.organization_id = org and e.id = any(ids)));
end $$;
comment on function app_hidden.sequence_enrollments_page(uuid, text, uuid, integer, bigint) is
  'A page of a sequence''s enrollments (one status or all; one contact''s or all), newest first, with next_send_at, and its '
  'total ({total, items}), read as the owner for a caller that reaches every contact of the organization; NULL for others.';
revoke execute on function app_hidden.sequence_enrollments_page(uuid, text, uuid, integer, bigint) from public;
grant execute on function app_hidden.sequence_enrollments_page(uuid, text, uuid, integer, bigint) to svc_request;
drop function if exists app_hidden.sequence_enrollment_page(uuid, text, integer, bigint);

--------------------------------------------------------------------------------
-- sequences_list_enrollments
--------------------------------------------------------------------------------
create or replace function app_public.sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid,
  email text, page integer, page_size integer) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  who uuid := contact_id;
  page_json jsonb;
  skip bigint;
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  skip := (page - 1)::bigint * page_size;
  s := app_hidden.sequence_for_read(sequence_id);
  if status is not null and status not in ('active', 'paused', 'completed', 'cancelled', 'failed') then
    perform app_hidden.raise_error(400, 'bad_request', 'query.status: one of active, paused, completed, cancelled, failed');
  end if;
  -- email wins over contact_id. An address is carried by at most one contact of an
  -- organization (its identity: contacts_org_email_key), read under the caller's policies; an
  -- address nobody the caller sees carries is an empty page.
  if email is not null then
    select c.id into who from app_public.contacts c where c.organization_id = org and c.email_key = lower(sequences_list_enrollments.email);
    if who is null then
      return jsonb_build_object('items', '[]'::jsonb, 'total', 0, 'page', page, 'limit', page_size);
    end if;
  end if;
  -- a caller that reaches every contact: one owner's read (NULL for others, counted and paged below)
  page_json := app_hidden.sequence_enrollments_page(s.id, status, who, page_size, skip);
  if page_json is not null then
    return page_json || jsonb_build_object('page', page, 'limit', page_size);
  end if;
  if who is not null then
    select count(*) into total from app_public.enrollments e
     where e.organization_id = org and e.contact_id = who and e.sequence_id = s.id
       and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status);
    select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
             || jsonb_build_object('next_send_at', coalesce(p.next_step_due_at, p.next_run_at))
             order by p.created_at desc, p.id), '[]')
      into items
      from (select * from app_public.enrollments e
             where e.organization_id = org and e.contact_id = who and e.sequence_id = s.id
               and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status)
             order by e.created_at desc, e.id limit page_size offset skip) p;
  else
    total := app_hidden.sequence_enrollment_count(s.id, status);
    select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
             || jsonb_build_object('next_send_at', coalesce(p.next_step_due_at, p.next_run_at))
             order by p.created_at desc, p.id), '[]')
      into items
      from (select * from app_public.enrollments e
             where e.organization_id = org and e.sequence_id = s.id
               and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status)
             order by e.created_at desc, e.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;
comment on function app_public.sequences_list_enrollments(uuid, text, uuid, text, integer, integer) is
  'sequences_list_enrollments: one page of the sequence''s enrollments the credential sees, newest first, filtered by status and '
  'by contact (email, case-insensitive, wins over contact_id; an address no contact carries is an empty page); each with '
  'next_send_at (next_step_due_at, else next_run_at). 404 for a sequence out of reach.';

--------------------------------------------------------------------------------
-- sequences_get_enrollment
--------------------------------------------------------------------------------
create or replace function app_public.sequences_get_enrollment(sequence_id uuid, enrollment_id uuid) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  e app_public.enrollments;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = org and x.id = sequences_get_enrollment.enrollment_id
     and x.sequence_id = sequences_get_enrollment.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Enrollment not found');
  end if;
  return app_hidden.enrollment_json(e) || jsonb_build_object(
    'step_runs', (select coalesce(jsonb_agg(jsonb_build_object('step_key', r.step_key, 'step_type', r.step_type,
                     'status', r.status, 'message_id', r.message_id, 'reason', r.reason, 'created_at', r.created_at,
                     'updated_at', r.updated_at) order by r.created_at, r.id), '[]')
                    from app_public.step_runs r where r.organization_id = org and r.enrollment_id = e.id),
    'events', (select coalesce(jsonb_agg(app_hidden.enrollment_event_json(v) order by v.id), '[]')
                 from app_public.enrollment_events v where v.organization_id = org and v.enrollment_id = e.id));
end $$;
comment on function app_public.sequences_get_enrollment(uuid, uuid) is
  'sequences_get_enrollment: the enrollment with its step runs (in the order they started) and its events in order of '
  'occurrence; 404 when it is not of that sequence or out of reach.';

--------------------------------------------------------------------------------
-- sequences_cancel_enrollment
--------------------------------------------------------------------------------
-- Any live enrollment (active, paused) becomes cancelled, with its event. An enrollment that has
-- already ended (cancelled, completed, failed) is answered as it is: a repeat call, or one that
-- crossed the engine completing it, returns the same row and changes nothing.
create or replace function app_public.sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  e app_public.enrollments;
  s app_public.sequences;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = org and x.id = sequences_cancel_enrollment.enrollment_id
     and x.sequence_id = sequences_cancel_enrollment.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Enrollment not found');
  end if;
  select * into s from app_public.sequences x where x.organization_id = org and x.id = e.sequence_id;
  if not app_hidden.current_may_write_sequence(s.location_id) then
    -- seen but not written: a manager and an organization-wide sequence (spec: Authentication 6)
    perform app_hidden.raise_error(403, 'insufficient_role',
      case when s.location_id is null then 'A manager cannot change an organization-wide sequence'
           else 'This credential cannot change this sequence' end);
  end if;
  if e.status in ('active', 'paused') then
    perform app_hidden.cancel_enrollment(e.id);
    -- the row as it is now: ended by this call, or by a concurrent one that got there first
    select * into e from app_public.enrollments x where x.organization_id = org and x.id = e.id;
  end if;
  return app_hidden.enrollment_json(e);
end $$;
comment on function app_public.sequences_cancel_enrollment(uuid, uuid) is
  'sequences_cancel_enrollment: cancels a live enrollment (with its cancelled event); an ended one is answered unchanged. '
  '404 out of reach; 403 for a manager on an organization-wide sequence.';

--------------------------------------------------------------------------------
-- contacts_list_enrollments
--------------------------------------------------------------------------------
create or replace function app_public.contacts_list_enrollments(contact_id uuid, page integer, page_size integer) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.enrollments e
   where e.organization_id = org and e.contact_id = contacts_list_enrollments.contact_id;
  select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
           || jsonb_build_object('sequence_name', s.name, 'next_send_at', p.next_run_at)
           order by p.created_at desc, p.id), '[]')
    into items
    from (select * from app_public.enrollments e
           where e.organization_id = org and e.contact_id = contacts_list_enrollments.contact_id
           order by e.created_at desc, e.id limit page_size offset (page - 1)::bigint * page_size) p
    join app_public.sequences s on s.organization_id = p.organization_id and s.id = p.sequence_id;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;
comment on function app_public.contacts_list_enrollments(uuid, integer, integer) is
  'contacts_list_enrollments: one page of the contact''s enrollments in the sequences the credential sees, newest first, each '
  'with sequence_name and next_send_at (next_run_at). 404 for a contact out of reach.';

--------------------------------------------------------------------------------
-- sequences_analytics
--------------------------------------------------------------------------------
-- Per step, in the sequence's step order (wait steps too): messages sent, skipped, failed or
-- unknown (from the step runs: one per enrollment and step), and enrollments whose message of
-- that step was delivered, bounced, opened, clicked or replied to (from the events, each
-- enrollment once). The rollup counts enrollments by status, the messages sent, delivered and
-- bounced over every step, and the enrollments that replied (a reply need not name a step).
-- email_delivery_reporting is not_applicable without an email step; otherwise the service's
-- email transport decides it (sequences_analytics' shape): the answer here is null then.
create or replace function app_public.sequences_analytics(sequence_id uuid) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences := app_hidden.sequence_for_read(sequence_id);
  steps jsonb;
  statuses jsonb;
  replied bigint;
begin
  with runs as (
    select r.step_key, r.status, count(*) as n
      from app_public.step_runs r
      join app_public.enrollments e on e.organization_id = r.organization_id and e.id = r.enrollment_id
     where r.organization_id = org and e.organization_id = org and e.sequence_id = s.id
     group by 1, 2
  ), events as (
    select v.step_key, v.type, count(distinct v.enrollment_id) as n
      from app_public.enrollment_events v
      join app_public.enrollments e on e.organization_id = v.organization_id and e.id = v.enrollment_id
     where v.organization_id = org and e.organization_id = org and e.sequence_id = s.id
       and v.type in ('delivered', 'bounced', 'opened', 'clicked', 'replied') and v.step_key is not null
     group by 1, 2
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'step_key', st.step ->> 'step_key', 'type', st.step ->> 'type',
           'sent', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'sent'), 0),
           'delivered', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'delivered'), 0),
           'bounced', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'bounced'), 0),
           'opened', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'opened'), 0),
           'clicked', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'clicked'), 0),
           'replied', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'replied'), 0),
           'skipped', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'skipped'), 0),
           'failed', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'failed'), 0),
           'unknown', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'unknown'), 0))
         order by st.i), '[]')
    into steps
    from jsonb_array_elements(s.steps) with ordinality as st(step, i);

  -- enrollments by status: from the counts for a caller that reaches every contact, else
  -- counted once, grouped, under the caller's policies
  if app_hidden.sequence_enrollment_total(s.id, null) is not null then
    select jsonb_object_agg(x.status, app_hidden.sequence_enrollment_total(s.id, x.status)) into statuses
      from unnest(array['active', 'paused', 'completed', 'cancelled', 'failed']) as x(status);
  else
    select jsonb_object_agg(x.status, coalesce(g.n, 0)) into statuses
      from unnest(array['active', 'paused', 'completed', 'cancelled', 'failed']) as x(status)
      left join (select e.status, count(*) as n from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = s.id group by 1) g on g.status = x.status;
  end if;
  select count(distinct v.enrollment_id) into replied
    from app_public.enrollment_events v
    join app_public.enrollments e on e.organization_id = v.organization_id and e.id = v.enrollment_id
   where v.organization_id = org and e.organization_id = org and e.sequence_id = s.id and v.type = 'replied';

  return jsonb_build_object(
    'steps', steps,
    'rollup', jsonb_build_object(
      'enrolled', (select sum(v::bigint) from jsonb_each_text(statuses) as t(k, v)),
      'active', statuses -> 'active', 'paused', statuses -> 'paused', 'completed', statuses -> 'completed',
      'cancelled', statuses -> 'cancelled', 'failed', statuses -> 'failed',
      'sent', (select coalesce(sum((x ->> 'sent')::bigint), 0) from jsonb_array_elements(steps) x),
      'delivered', (select coalesce(sum((x ->> 'delivered')::bigint), 0) from jsonb_array_elements(steps) x),
      'bounced', (select coalesce(sum((x ->> 'bounced')::bigint), 0) from jsonb_array_elements(steps) x),
      'replied', replied),
    'email_delivery_reporting',
      case when exists (select 1 from jsonb_array_elements(s.steps) x where x ->> 'type' = 'email') then null
           else 'not_applicable' end);
end $$;
comment on function app_public.sequences_analytics(uuid) is
  'sequences_analytics: per-step counts in step order (sent, delivered, bounced, opened, clicked, replied, skipped, failed, unknown), '
  'the rollup (enrollments by status; messages sent, delivered, bounced; enrollments that replied) over the enrollments the '
  'credential sees, and email_delivery_reporting (not_applicable without an email step; NULL: the transport decides).';

grant execute on function app_public.sequences_list_enrollments(uuid, text, uuid, text, integer, integer),
  app_public.sequences_get_enrollment(uuid, uuid), app_public.sequences_cancel_enrollment(uuid, uuid),
  app_public.contacts_list_enrollments(uuid, integer, integer), app_public.sequences_analytics(uuid) to svc_request;

reset role;
