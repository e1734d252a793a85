-- db/schema/broadcasts.sql: what src/broadcasts/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: broadcast_cancel_runs(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_cancel_runs(sequence_id uuid, run_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) IS 'Cancels the runs sending of a broadcast (or one run): a dead sender''s in_flight batch made unknown, what has not gone cancelled and counted; answers how many were cancelled.';

--
-- Name: broadcast_for(uuid, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.broadcast_for(sequence_id uuid, for_write boolean) RETURNS app_public.sequences
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, for_write);
begin
  if s.kind <> 'broadcast' then
    perform app_hidden.sequence_bad('sequenceId', 'an automation has no schedule: only a broadcast (kind broadcast) is scheduled');
  end if;
  return s;
end $$;

ALTER FUNCTION app_hidden.broadcast_for(sequence_id uuid, for_write boolean) OWNER TO svc_owner;

--
-- Name: broadcast_queue_fire(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.broadcast_queue_fire(organization_id uuid, sequence_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  at timestamptz;
begin
  select b.next_fire_at into at from app_public.broadcast_schedules b
   where b.organization_id = broadcast_queue_fire.organization_id and b.sequence_id = broadcast_queue_fire.sequence_id
     and b.status = 'scheduled'
     -- a request queues only for its own organization (the owner, with no claims, for any)
     and (app_hidden.current_org_id() is null or b.organization_id = app_hidden.current_org_id());
  if at is not null then
    perform app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || broadcast_queue_fire.sequence_id, at);
  end if;
end $$;

ALTER FUNCTION app_hidden.broadcast_queue_fire(organization_id uuid, sequence_id uuid) OWNER TO svc_owner;

--
-- Name: broadcast_runs; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.broadcast_runs (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    sequence_id uuid NOT NULL,
    fire_at timestamp with time zone NOT NULL,
    status text DEFAULT 'sending'::text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    recipients integer DEFAULT 0 NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    skipped integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    unknown integer DEFAULT 0 NOT NULL,
    cancelled integer DEFAULT 0 NOT NULL,
    in_flight uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    progress_at timestamp with time zone DEFAULT now() NOT NULL,
    claimed_through uuid,
    prepared uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    prepared_after uuid,
    held_until timestamp with time zone,
    CONSTRAINT broadcast_runs_check CHECK (((status = 'sending'::text) = (finished_at IS NULL))),
    CONSTRAINT broadcast_runs_status_check CHECK ((status = ANY (ARRAY['sending'::text, 'completed'::text, 'cancelled'::text, 'failed'::text])))
);

ALTER TABLE app_public.broadcast_runs OWNER TO svc_owner;

--
-- Name: TABLE broadcast_runs; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.broadcast_runs IS 'One fired occurrence of a broadcast schedule: its recipients (enrollments with this run_id), counts and the batch in flight.';

--
-- Name: COLUMN broadcast_runs.prepared; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.broadcast_runs.prepared IS 'Enrollments of the batch claimed while the one before it was with the transport: not handed over until that one is recorded.';

--
-- Name: COLUMN broadcast_runs.prepared_after; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.broadcast_runs.prepared_after IS 'The cursor (claimed_through) before the prepared batch was claimed: where a release moves it back to.';

--
-- Name: COLUMN broadcast_runs.held_until; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.broadcast_runs.held_until IS 'The send window was closed when the run fired: its next opening, when the run''s job sends it. NULL when it fired inside the window.';

--
-- Name: broadcast_run_json(app_public.broadcast_runs); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.broadcast_run_json(r app_public.broadcast_runs) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('id', r.id, 'status', r.status, 'fire_at', r.fire_at, 'started_at', r.started_at,
    'finished_at', r.finished_at, 'recipients', r.recipients, 'sent', r.sent, 'skipped', r.skipped, 'failed', r.failed,
    'unknown', r.unknown, 'cancelled', r.cancelled,
    -- a sending run's recipients not yet sent, skipped, failed, unknown or cancelled; an ended run has none
    'waiting', case when r.status = 'sending'
                    then greatest(0, r.recipients - r.sent - r.skipped - r.failed - r.unknown - r.cancelled) else 0 end,
    'held_until', case when r.status = 'sending' and r.held_until > now() then r.held_until end)
$$;

ALTER FUNCTION app_hidden.broadcast_run_json(r app_public.broadcast_runs) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_run_json(r app_public.broadcast_runs); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.broadcast_run_json(r app_public.broadcast_runs) IS 'A run as the API shows it: its counts, `waiting` (recipients of a sending run not yet gone) and `held_until` (the send window''s opening a run waits for).';

--
-- Name: broadcast_schedules; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.broadcast_schedules (
    organization_id uuid NOT NULL,
    sequence_id uuid NOT NULL,
    schedule_kind text NOT NULL,
    send_at timestamp with time zone,
    rrule text,
    timezone text,
    ends_on date,
    anchor timestamp with time zone DEFAULT now() NOT NULL,
    status text DEFAULT 'draft'::text NOT NULL,
    next_fire_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    fire_attempts integer DEFAULT 0 NOT NULL,
    fire_error text,
    fire_retry_at timestamp with time zone,
    CONSTRAINT broadcast_schedules_check CHECK (((schedule_kind = 'once'::text) = (send_at IS NOT NULL))),
    CONSTRAINT broadcast_schedules_check1 CHECK (((schedule_kind = 'recurring'::text) = (rrule IS NOT NULL))),
    CONSTRAINT broadcast_schedules_check2 CHECK (((schedule_kind = 'once'::text) OR (timezone IS NOT NULL))),
    CONSTRAINT broadcast_schedules_check3 CHECK (((status = 'scheduled'::text) OR (next_fire_at IS NULL))),
    CONSTRAINT broadcast_schedules_rrule_check CHECK ((length(rrule) <= 500)),
    CONSTRAINT broadcast_schedules_schedule_kind_check CHECK ((schedule_kind = ANY (ARRAY['once'::text, 'recurring'::text]))),
    CONSTRAINT broadcast_schedules_status_check CHECK ((status = ANY (ARRAY['draft'::text, 'scheduled'::text, 'paused'::text]))),
    CONSTRAINT broadcast_schedules_timezone_check CHECK ((length(timezone) <= 64))
);

ALTER TABLE app_public.broadcast_schedules OWNER TO svc_owner;

--
-- Name: TABLE broadcast_schedules; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.broadcast_schedules IS 'When a broadcast sends: once at send_at, or on each occurrence of rrule in timezone until ends_on. draft (set, sends nothing), scheduled (next_fire_at is the next occurrence), paused.';

--
-- Name: COLUMN broadcast_schedules.fire_attempts; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.broadcast_schedules.fire_attempts IS 'Failed attempts to fire the occurrence at next_fire_at (0 when none failed).';

--
-- Name: COLUMN broadcast_schedules.fire_error; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.broadcast_schedules.fire_error IS 'Why the last attempt to fire next_fire_at failed, while it is being retried.';

--
-- Name: COLUMN broadcast_schedules.fire_retry_at; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.broadcast_schedules.fire_retry_at IS 'When the failed occurrence is tried again; the sweep passes the schedule by until then.';

--
-- Name: broadcast_schedule_json(app_public.broadcast_schedules, integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.broadcast_schedule_json(b app_public.broadcast_schedules, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  runs jsonb;
  total int;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  select count(*) into total from app_public.broadcast_runs r
   where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id;
  select coalesce(jsonb_agg(app_hidden.broadcast_run_json(r) order by r.started_at desc, r.id), '[]') into runs
    from (select * from app_public.broadcast_runs r
           where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id
           order by r.started_at desc, r.id
           limit page_size offset (page - 1) * page_size) r;
  return jsonb_build_object('sequence_id', b.sequence_id, 'schedule_kind', b.schedule_kind, 'send_at', b.send_at,
    'rrule', b.rrule, 'timezone', b.timezone, 'ends_on', b.ends_on, 'status', b.status, 'next_fire_at', b.next_fire_at,
    'fire_retry', case when b.fire_attempts > 0 then jsonb_build_object('attempts', b.fire_attempts,
                    'next_attempt_at', b.fire_retry_at, 'last_error', b.fire_error) end,
    'created_at', b.created_at, 'updated_at', b.updated_at,
    'runs', runs, 'runs_total', total, 'page', page, 'limit', page_size);
end $$;

ALTER FUNCTION app_hidden.broadcast_schedule_json(b app_public.broadcast_schedules, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: broadcast_schedule_of(app_public.sequences, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.broadcast_schedule_of(s app_public.sequences, for_write boolean) RETURNS app_public.broadcast_schedules
    LANGUAGE plpgsql
    AS $$
declare
  b app_public.broadcast_schedules;
begin
  if for_write then
    select * into b from app_public.broadcast_schedules x
     where x.organization_id = s.organization_id and x.sequence_id = s.id for update;
  else
    select * into b from app_public.broadcast_schedules x where x.organization_id = s.organization_id and x.sequence_id = s.id;
  end if;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'This broadcast has no schedule yet: set one with sequences_set_schedule');
  end if;
  return b;
end $$;

ALTER FUNCTION app_hidden.broadcast_schedule_of(s app_public.sequences, for_write boolean) OWNER TO svc_owner;

--
-- Name: broadcast_writable(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.broadcast_writable(organization_id uuid, sequence_id uuid) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select exists (select 1 from app_public.sequences s
                  where s.organization_id = broadcast_writable.organization_id and s.id = broadcast_writable.sequence_id
                    and app_hidden.current_may_write_sequence(s.location_id))
$$;

ALTER FUNCTION app_hidden.broadcast_writable(organization_id uuid, sequence_id uuid) OWNER TO svc_owner;

--
-- Name: broadcast_claim_batch(uuid, uuid, integer, text, text[], boolean); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[] DEFAULT '{}'::text[], following boolean DEFAULT false) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[], following boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[], following boolean); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[], following boolean) IS 'A run''s next batch: a dead process''s in_flight made unknown and its prepared batch released (unless following the caller''s own batch still out: then the new batch is prepared, and `wait` rather than done), then up to `size` recipients claimed set-based (claim_enrollment_messages): in flight, or prepared when following.';

--
-- Name: broadcast_finish(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_finish(organization_id uuid, run_id uuid) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_public.broadcast_runs x
     set status = 'completed', finished_at = now(),
         cancelled = greatest(0, x.recipients - x.sent - x.skipped - x.failed - x.unknown)
   where x.organization_id = broadcast_finish.organization_id and x.id = broadcast_finish.run_id and x.status = 'sending'
     and not exists (select 1 from app_public.enrollments e
                       join app_public.step_runs sr on sr.organization_id = e.organization_id and sr.enrollment_id = e.id
                                                   and sr.step_key = e.current_step_key and sr.status = 'retrying'
                      where e.organization_id = x.organization_id and e.run_id = x.id and e.status in ('active', 'paused'))
$$;

ALTER FUNCTION app_private.broadcast_finish(organization_id uuid, run_id uuid) OWNER TO svc_owner;

--
-- Name: broadcast_fire(uuid, uuid, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) RETURNS uuid
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

ALTER FUNCTION app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) IS 'Fires one occurrence once (schedule locked, still waiting for fire_at; unique run per occurrence): schedule moved on, the audience snapshotted into enrollments of the run, the run''s job queued now, or at the send window''s next opening (held_until) when it is closed. Answers the run id or NULL.';

--
-- Name: broadcast_fire_failed(uuid, uuid, timestamp with time zone, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_fire_failed(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, error text) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  retry_at timestamptz;
begin
  update app_public.broadcast_schedules b
     set fire_attempts = b.fire_attempts + 1, fire_error = left(broadcast_fire_failed.error, 1000),
         fire_retry_at = now() + make_interval(secs => least(3600, 60 * power(2, least(b.fire_attempts, 6))))
   where b.organization_id = broadcast_fire_failed.organization_id and b.sequence_id = broadcast_fire_failed.sequence_id
     and b.status = 'scheduled' and b.next_fire_at = broadcast_fire_failed.fire_at
  returning b.fire_retry_at into retry_at;
  if retry_at is not null then
    perform app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || broadcast_fire_failed.sequence_id, retry_at);
  end if;
  return retry_at;
end $$;

ALTER FUNCTION app_private.broadcast_fire_failed(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, error text) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_fire_failed(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, error text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_fire_failed(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, error text) IS 'Records that firing the occurrence fire_at of a schedule failed (attempts, error) and when it is tried again (1 minute doubling to 1 hour), with its job queued then; NULL when the schedule no longer waits for that occurrence.';

--
-- Name: broadcast_mark_handed(uuid, uuid, uuid[], jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_mark_handed(organization_id uuid, run_id uuid, handing uuid[], answers jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_mark_handed(organization_id uuid, run_id uuid, handing uuid[], answers jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_mark_handed(organization_id uuid, run_id uuid, handing uuid[], answers jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_mark_handed(organization_id uuid, run_id uuid, handing uuid[], answers jsonb) IS 'A broadcast sender''s messages about to go to the transport marked handed (committed to disk first), and the answers come meanwhile written to their marks.';

--
-- Name: broadcast_record_batch(uuid, uuid, jsonb, boolean); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb, promote boolean DEFAULT false) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb, promote boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb, promote boolean); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb, promote boolean) IS 'A batch''s transport answers recorded set-based (record_enrollment_messages), counts moved, the batch taken out of the in_flight checkpoint; with promote, the prepared batch put in flight (committed to disk); answers how many were promoted.';

--
-- Name: broadcast_release_prepared(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_release_prepared(organization_id uuid, run_id uuid) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_release_prepared(organization_id uuid, run_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_release_prepared(organization_id uuid, run_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_release_prepared(organization_id uuid, run_id uuid) IS 'A prepared batch never handed over: its step runs sending, messages and unsubscribe tokens removed, the cursor moved back so its recipients are claimed again; answers how many.';

--
-- Name: broadcast_requeue_stalled(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_requeue_stalled() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_requeue_stalled() OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_requeue_stalled(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_requeue_stalled() IS 'Queues a new broadcast_run job for each run sending without progress for five minutes (its worker died); a run waiting for its send window (held_until ahead) is not stalled.';

--
-- Name: broadcast_settle_in_flight(uuid, uuid, boolean); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) IS 'A dead sender''s in_flight batch, message by message: answered marks recorded, handed ones without an answer unknown (event; enrollments moved on, or cancelled with the run), never handed ones released to be claimed again (the cursor back to the start); the checkpoint emptied; answers how many became unknown.';

--
-- Name: tg_broadcast_runs__schedule_done(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_broadcast_runs__schedule_done() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_public.broadcast_schedules b set status = 'draft', updated_at = now()
   where b.organization_id = new.organization_id and b.sequence_id = new.sequence_id
     and b.status = 'scheduled' and b.next_fire_at is null
     and not exists (select 1 from app_public.broadcast_runs r
                      where r.organization_id = new.organization_id and r.sequence_id = new.sequence_id and r.status = 'sending');
  return null;
end $$;

ALTER FUNCTION app_private.tg_broadcast_runs__schedule_done() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_broadcast_runs__schedule_done(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_broadcast_runs__schedule_done() IS 'When a broadcast''s last sending run ends and its schedule has no occurrence left (next_fire_at null), the schedule reads draft.';

--
-- Name: tg_broadcast_schedules__fire_retry_reset(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_broadcast_schedules__fire_retry_reset() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  new.fire_attempts := 0;
  new.fire_error := null;
  new.fire_retry_at := null;
  return new;
end $$;

ALTER FUNCTION app_private.tg_broadcast_schedules__fire_retry_reset() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_broadcast_schedules__fire_retry_reset(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_broadcast_schedules__fire_retry_reset() IS 'A schedule moved to another occurrence or state (fired, set, started, paused) has no failed fire to retry.';

--
-- Name: broadcast_handed; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.broadcast_handed (
    organization_id uuid NOT NULL,
    enrollment_id uuid NOT NULL,
    run_id uuid NOT NULL,
    answer jsonb
);

ALTER TABLE app_private.broadcast_handed OWNER TO svc_owner;

--
-- Name: TABLE broadcast_handed; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.broadcast_handed IS 'Messages of a broadcast run''s batch in flight that its sender handed to the transport, with the answer once it came; deleted when the batch is recorded. What a dead sender leaves: marked without an answer is unknown, unmarked was never handed over.';

--
-- Name: broadcast_handed broadcast_handed_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.broadcast_handed
    ADD CONSTRAINT broadcast_handed_pkey PRIMARY KEY (organization_id, enrollment_id);

--
-- Name: broadcast_runs broadcast_runs_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.broadcast_runs
    ADD CONSTRAINT broadcast_runs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: broadcast_schedules broadcast_schedules_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.broadcast_schedules
    ADD CONSTRAINT broadcast_schedules_pkey PRIMARY KEY (organization_id, sequence_id);

--
-- Name: broadcast_handed_by_run; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX broadcast_handed_by_run ON app_private.broadcast_handed USING btree (organization_id, run_id);

--
-- Name: broadcast_runs_by_sequence; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX broadcast_runs_by_sequence ON app_public.broadcast_runs USING btree (organization_id, sequence_id, started_at DESC, id);

--
-- Name: broadcast_runs_one_per_occurrence; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX broadcast_runs_one_per_occurrence ON app_public.broadcast_runs USING btree (organization_id, sequence_id, fire_at);

--
-- Name: broadcast_runs_sending; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX broadcast_runs_sending ON app_public.broadcast_runs USING btree (progress_at) WHERE (status = 'sending'::text);

--
-- Name: broadcast_schedules_due; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX broadcast_schedules_due ON app_public.broadcast_schedules USING btree (next_fire_at) WHERE ((status = 'scheduled'::text) AND (next_fire_at IS NOT NULL));

--
-- Name: broadcast_schedules _100_fire_retry_reset; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _100_fire_retry_reset BEFORE UPDATE OF next_fire_at, status ON app_public.broadcast_schedules FOR EACH ROW WHEN (((new.next_fire_at IS DISTINCT FROM old.next_fire_at) OR (new.status IS DISTINCT FROM old.status))) EXECUTE FUNCTION app_private.tg_broadcast_schedules__fire_retry_reset();

--
-- Name: broadcast_runs _500_schedule_done; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_schedule_done AFTER INSERT OR UPDATE OF status ON app_public.broadcast_runs FOR EACH ROW WHEN ((new.status <> 'sending'::text)) EXECUTE FUNCTION app_private.tg_broadcast_runs__schedule_done();

--
-- Name: broadcast_runs broadcast_runs_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.broadcast_runs
    ADD CONSTRAINT broadcast_runs_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: broadcast_runs broadcast_runs_organization_id_sequence_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.broadcast_runs
    ADD CONSTRAINT broadcast_runs_organization_id_sequence_id_fkey FOREIGN KEY (organization_id, sequence_id) REFERENCES app_public.sequences(organization_id, id) ON DELETE CASCADE;

--
-- Name: broadcast_schedules broadcast_schedules_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.broadcast_schedules
    ADD CONSTRAINT broadcast_schedules_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: broadcast_schedules broadcast_schedules_organization_id_sequence_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.broadcast_schedules
    ADD CONSTRAINT broadcast_schedules_organization_id_sequence_id_fkey FOREIGN KEY (organization_id, sequence_id) REFERENCES app_public.sequences(organization_id, id) ON DELETE CASCADE;

--
-- Name: broadcast_handed; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.broadcast_handed ENABLE ROW LEVEL SECURITY;

--
-- Name: broadcast_runs; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.broadcast_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: broadcast_schedules; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.broadcast_schedules ENABLE ROW LEVEL SECURITY;

--
-- Name: broadcast_schedules insert_writable; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_writable ON app_public.broadcast_schedules FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.broadcast_writable(organization_id, sequence_id)));

--
-- Name: broadcast_runs select_with_sequence; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_sequence ON app_public.broadcast_runs FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.sequences s
  WHERE ((s.organization_id = broadcast_runs.organization_id) AND (s.id = broadcast_runs.sequence_id))))));

--
-- Name: broadcast_schedules select_with_sequence; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_sequence ON app_public.broadcast_schedules FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.sequences s
  WHERE ((s.organization_id = broadcast_schedules.organization_id) AND (s.id = broadcast_schedules.sequence_id))))));

--
-- Name: broadcast_schedules update_writable; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_writable ON app_public.broadcast_schedules FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.broadcast_writable(organization_id, sequence_id))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: FUNCTION broadcast_cancel_runs(sequence_id uuid, run_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) TO svc_request;

--
-- Name: FUNCTION broadcast_for(sequence_id uuid, for_write boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.broadcast_for(sequence_id uuid, for_write boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.broadcast_for(sequence_id uuid, for_write boolean) TO svc_request;

--
-- Name: FUNCTION broadcast_queue_fire(organization_id uuid, sequence_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.broadcast_queue_fire(organization_id uuid, sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.broadcast_queue_fire(organization_id uuid, sequence_id uuid) TO svc_request;

--
-- Name: TABLE broadcast_runs; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.broadcast_runs TO svc_request;
GRANT SELECT ON TABLE app_public.broadcast_runs TO svc_analyst;

--
-- Name: FUNCTION broadcast_run_json(r app_public.broadcast_runs); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.broadcast_run_json(r app_public.broadcast_runs) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.broadcast_run_json(r app_public.broadcast_runs) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.broadcast_run_json(r app_public.broadcast_runs) TO svc_worker;

--
-- Name: TABLE broadcast_schedules; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.broadcast_schedules TO svc_request;
GRANT SELECT ON TABLE app_public.broadcast_schedules TO svc_analyst;

--
-- Name: COLUMN broadcast_schedules.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.sequence_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(sequence_id) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.schedule_kind; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(schedule_kind),UPDATE(schedule_kind) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.send_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(send_at),UPDATE(send_at) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.rrule; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(rrule),UPDATE(rrule) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.timezone; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(timezone),UPDATE(timezone) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.ends_on; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(ends_on),UPDATE(ends_on) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.anchor; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(anchor),UPDATE(anchor) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.status; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(status),UPDATE(status) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.next_fire_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(next_fire_at),UPDATE(next_fire_at) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: COLUMN broadcast_schedules.updated_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(updated_at) ON TABLE app_public.broadcast_schedules TO svc_request;

--
-- Name: FUNCTION broadcast_schedule_json(b app_public.broadcast_schedules, page integer, page_size integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.broadcast_schedule_json(b app_public.broadcast_schedules, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.broadcast_schedule_json(b app_public.broadcast_schedules, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION broadcast_schedule_of(s app_public.sequences, for_write boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.broadcast_schedule_of(s app_public.sequences, for_write boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.broadcast_schedule_of(s app_public.sequences, for_write boolean) TO svc_request;

--
-- Name: FUNCTION broadcast_writable(organization_id uuid, sequence_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.broadcast_writable(organization_id uuid, sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.broadcast_writable(organization_id uuid, sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[], following boolean); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[], following boolean) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_finish(organization_id uuid, run_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_finish(organization_id uuid, run_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_fire_failed(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, error text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_fire_failed(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, error text) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_mark_handed(organization_id uuid, run_id uuid, handing uuid[], answers jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_mark_handed(organization_id uuid, run_id uuid, handing uuid[], answers jsonb) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb, promote boolean); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb, promote boolean) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_release_prepared(organization_id uuid, run_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_release_prepared(organization_id uuid, run_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_requeue_stalled(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_requeue_stalled() FROM PUBLIC;

--
-- Name: FUNCTION broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) FROM PUBLIC;

--
-- Name: FUNCTION tg_broadcast_runs__schedule_done(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_broadcast_runs__schedule_done() FROM PUBLIC;

--
-- Name: FUNCTION tg_broadcast_schedules__fire_retry_reset(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_broadcast_schedules__fire_retry_reset() FROM PUBLIC;
