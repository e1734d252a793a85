-- db/schema/sequences.sql: what src/sequences/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: sequences; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.sequences (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    kind text DEFAULT 'automation'::text NOT NULL,
    name text NOT NULL,
    location_id uuid,
    send_schedule_id uuid,
    audience_id uuid,
    trigger jsonb,
    steps jsonb DEFAULT '[]'::jsonb NOT NULL,
    edges jsonb DEFAULT '[]'::jsonb NOT NULL,
    exit_conditions jsonb DEFAULT '[]'::jsonb NOT NULL,
    status text DEFAULT 'inactive'::text NOT NULL,
    paused_at timestamp with time zone,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT sequences_check CHECK (((kind = 'broadcast'::text) OR (audience_id IS NULL))),
    CONSTRAINT sequences_check1 CHECK (((status = 'paused'::text) = (paused_at IS NOT NULL))),
    CONSTRAINT sequences_edges_check CHECK ((jsonb_typeof(edges) = 'array'::text)),
    CONSTRAINT sequences_exit_conditions_check CHECK ((jsonb_typeof(exit_conditions) = 'array'::text)),
    CONSTRAINT sequences_kind_check CHECK ((kind = ANY (ARRAY['automation'::text, 'broadcast'::text]))),
    CONSTRAINT sequences_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT sequences_status_check CHECK ((status = ANY (ARRAY['inactive'::text, 'active'::text, 'paused'::text]))),
    CONSTRAINT sequences_steps_check CHECK ((jsonb_typeof(steps) = 'array'::text)),
    CONSTRAINT sequences_trigger_check CHECK ((jsonb_typeof(trigger) = 'object'::text))
);

ALTER TABLE app_public.sequences OWNER TO svc_owner;

--
-- Name: TABLE sequences; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.sequences IS 'An automation (or a broadcast) as authored: trigger, ordered steps (each with a step_key), edges, exit conditions, send schedule; status inactive (draft), active or paused. location_id NULL: the whole organization.';

--
-- Name: COLUMN sequences.trigger; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.sequences.trigger IS 'How contacts enter (automation only): {type: manual|event|tag_added|…, …}.';

--
-- Name: COLUMN sequences.steps; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.sequences.steps IS '[{step_key, type: email|sms|wait, delay: {minutes|hours|days: n}, subject?, body?}].';

--
-- Name: COLUMN sequences.edges; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.sequences.edges IS '[{from, to, condition}]; empty: the steps run in list order.';

--
-- Name: COLUMN sequences.exit_conditions; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.sequences.exit_conditions IS '[{type: replied|appointment_booked|tag_added|stage_changed|condition, …}].';

--
-- Name: COLUMN sequences.paused_at; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.sequences.paused_at IS 'When the sequence was paused (status paused): resume moves every due time forward by the time held.';

--
-- Name: cancel_enrollment(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.cancel_enrollment(enrollment_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_hidden.cancel_enrollment(enrollment_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION cancel_enrollment(enrollment_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.cancel_enrollment(enrollment_id uuid) IS 'Cancels one live enrollment of the current organization whose sequence the credential may write (app_private.end_enrollments); an ended one is left as it is. 404 otherwise.';

--
-- Name: condition_compare(text, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.condition_compare(kind text, have text, op text, vals jsonb) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
declare
  numeric_text constant text := '^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?\s*$';
  s text;
  one boolean;
begin
  if have is null then
    return null;
  end if;
  for j in 0 .. jsonb_array_length(vals) - 1 loop
    s := vals->j #>> '{}';
    if op in ('contains', 'contains_any') then
      one := strpos(lower(have), lower(s)) > 0;
    elsif kind = 'number' then
      one := have ~ numeric_text and s ~ numeric_text
             and case op when 'gt' then have::numeric > s::numeric when 'gte' then have::numeric >= s::numeric
                         when 'lt' then have::numeric < s::numeric when 'lte' then have::numeric <= s::numeric
                         else have::numeric = s::numeric end;
    elsif kind = 'datetime' and s ~ '^\d{4}-\d{2}-\d{2}$' then
      -- a day is the UTC day of the instant
      one := case op when 'gt' then (have::timestamptz at time zone 'UTC')::date > s::date
                     when 'gte' then (have::timestamptz at time zone 'UTC')::date >= s::date
                     when 'lt' then (have::timestamptz at time zone 'UTC')::date < s::date
                     when 'lte' then (have::timestamptz at time zone 'UTC')::date <= s::date
                     else (have::timestamptz at time zone 'UTC')::date = s::date end;
    elsif kind = 'datetime' then
      one := case op when 'gt' then have::timestamptz > s::timestamptz when 'gte' then have::timestamptz >= s::timestamptz
                     when 'lt' then have::timestamptz < s::timestamptz when 'lte' then have::timestamptz <= s::timestamptz
                     else have::timestamptz = s::timestamptz end;
    elsif kind = 'date' then
      one := case op when 'gt' then have > s when 'gte' then have >= s when 'lt' then have < s when 'lte' then have <= s
                     else have = s end;
    else
      -- text (case-insensitive), stage ids, booleans
      one := lower(have) = lower(s);
    end if;
    if coalesce(one, false) then
      return true;
    end if;
  end loop;
  return false;
end $_$;

ALTER FUNCTION app_hidden.condition_compare(kind text, have text, op text, vals jsonb) OWNER TO svc_owner;

--
-- Name: condition_compare_safe(text, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.condition_compare_safe(kind text, have text, op text, vals jsonb) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  return app_hidden.condition_compare(kind, have, op, vals);
exception when data_exception then
  return false;
end $$;

ALTER FUNCTION app_hidden.condition_compare_safe(kind text, have text, op text, vals jsonb) OWNER TO svc_owner;

--
-- Name: condition_contact_fields(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.condition_contact_fields() RETURNS TABLE(field text, kind text, description text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  values
    ('display_name', 'text', 'The contact''s name.'),
    ('email', 'text', 'The contact''s email address.'),
    ('phone_number', 'text', 'The contact''s phone number (E.164).'),
    ('total_calls', 'number', 'How many calls the contact made.'),
    ('first_seen_at', 'datetime', 'When the contact was first seen.'),
    ('last_seen_at', 'datetime', 'When the contact was last seen.'),
    ('created_at', 'datetime', 'When the contact was created.'),
    ('updated_at', 'datetime', 'When the contact last changed.'),
    ('stage_id', 'stage', 'The contact''s pipeline stage (an id of contacts_list_stages).')
$$;

ALTER FUNCTION app_hidden.condition_contact_fields() OWNER TO svc_owner;

--
-- Name: FUNCTION condition_contact_fields(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.condition_contact_fields() IS 'The contact fields a sequence condition may test (besides field_values.<key>), with their kind.';

--
-- Name: condition_event_fields(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.condition_event_fields() RETURNS TABLE(field text, event text, description text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  values
    ('event.replied', 'replied', 'The contact replied to a message of this enrollment.'),
    ('event.clicked', 'clicked', 'The contact clicked a link of a message of this enrollment.'),
    ('event.opened', 'opened', 'The contact opened an email of this enrollment.')
$$;

ALTER FUNCTION app_hidden.condition_event_fields() OWNER TO svc_owner;

--
-- Name: FUNCTION condition_event_fields(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.condition_event_fields() IS 'The enrollment events a sequence condition may test, with exists / not_exists.';

--
-- Name: condition_holds(uuid, uuid, uuid, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid, condition jsonb) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  field text := condition->>'field';
  op text := condition->>'op';
  kind text;
  have text;
  present boolean;
  positive boolean;
  vals jsonb;
  base_op text;
  c app_public.contacts;
begin
  -- Conditions are checked when written (app_hidden.condition_problem); here only what keeps a
  -- stray one from failing: a malformed one holds for nobody.
  if jsonb_typeof(condition) is distinct from 'object' or jsonb_typeof(condition->'field') is distinct from 'string'
     or op is null or op not in ('eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'contains_any', 'exists', 'not_exists')
     or (op not in ('exists', 'not_exists') and jsonb_typeof(condition->'value') not in ('string', 'number', 'boolean', 'array'))
     or (starts_with(field, 'event.') and op not in ('exists', 'not_exists')) then
    return false;
  end if;
  if starts_with(field, 'event.') then
    present := exists (select 1 from app_public.enrollment_events ev
                        where ev.organization_id = condition_holds.organization_id
                          and ev.enrollment_id = condition_holds.enrollment_id
                          and ev.type = substr(field, length('event.') + 1));
    return case when op = 'exists' then present else not present end;
  end if;
  select * into c from app_public.contacts ct
   where ct.organization_id = condition_holds.organization_id and ct.id = condition_holds.contact_id;
  if not found then
    return false;
  end if;
  case field
    when 'display_name' then kind := 'text'; have := c.name;
    when 'email' then kind := 'text'; have := c.email::text;
    when 'phone_number' then kind := 'text'; have := c.phone;
    when 'total_calls' then kind := 'number'; have := c.total_calls::text;
    when 'first_seen_at' then kind := 'datetime'; have := c.first_seen_at::text;
    when 'last_seen_at' then kind := 'datetime'; have := c.last_seen_at::text;
    when 'created_at' then kind := 'datetime'; have := c.created_at::text;
    when 'updated_at' then kind := 'datetime'; have := c.updated_at::text;
    when 'stage_id' then kind := 'stage'; have := c.stage_id::text;
    else
      select case cf.type when 'number' then 'number' when 'currency' then 'number' when 'datetime' then 'datetime'
                          when 'date' then 'date' when 'boolean' then 'boolean' else 'text' end
        into kind from app_public.custom_fields cf
       where cf.organization_id = condition_holds.organization_id and cf.enabled
         and cf.key = substr(field, length('field_values.') + 1);
      if kind is null then
        return false;   -- no such custom field (any more): the condition holds for nobody
      end if;
      have := c.field_values ->> substr(field, length('field_values.') + 1);
  end case;
  if op in ('exists', 'not_exists') then
    present := have is not null;
    return case when op = 'exists' then present else not present end;
  end if;
  vals := case when jsonb_typeof(condition->'value') = 'array' then condition->'value' else jsonb_build_array(condition->'value') end;
  base_op := case op when 'neq' then 'eq' when 'not_in' then 'in' else op end;
  -- built-in text, number and stage columns always read as their type: no exception block needed
  positive := case when kind in ('text', 'number', 'stage') and not starts_with(field, 'field_values.')
                   then app_hidden.condition_compare(kind, have, base_op, vals)
                   else app_hidden.condition_compare_safe(kind, have, base_op, vals) end;
  return case when op in ('neq', 'not_in') then not coalesce(positive, false) else coalesce(positive, false) end;
end $$;

ALTER FUNCTION app_hidden.condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid, condition jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid, condition jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid, condition jsonb) IS 'Whether a sequence condition holds for a contact in an enrollment (event.* over that enrollment''s events).';

--
-- Name: condition_problem(uuid, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.condition_problem(organization_id uuid, condition jsonb) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  fld text;
  op text;
  v jsonb;
  kind text;
  vals jsonb;
  s text;
  why text;
begin
  if condition is null or jsonb_typeof(condition) <> 'object' then
    return 'a condition is an object {field, op, value}';
  end if;
  fld := condition->>'field';
  op := condition->>'op';
  v := condition->'value';
  if jsonb_typeof(condition->'field') is distinct from 'string' then
    return 'field: expected a string';
  end if;
  if starts_with(fld, 'event.') then
    if exists (select 1 from jsonb_object_keys(condition) k where k not in ('field', 'op', 'value')) then
      return 'unrecognized keys: a condition has field, op and value';
    end if;
    if not exists (select 1 from app_hidden.condition_event_fields() e where e.field = fld) then
      return format('%s is not an event a condition can test (event.replied, event.clicked, event.opened)', left(fld, 100));
    end if;
    if jsonb_typeof(condition->'op') is distinct from 'string' or op not in ('exists', 'not_exists') then
      return format('%s takes op exists or not_exists', fld);
    end if;
    if v is not null then
      return format('omit value for %s', op);
    end if;
    return null;
  end if;
  -- the shape (ops, value types and sizes, unknown keys) as the audience rules check it
  begin
    perform app_hidden.audience_definition_check(jsonb_build_object('rules', jsonb_build_array(condition)), 'condition');
  exception when others then
    -- app_hidden.raise_error carries the sentence in the detail
    get stacked diagnostics why = pg_exception_detail;
    return coalesce(nullif(regexp_replace(why, '^condition\.rules\.0', 'condition'), ''), 'invalid condition');
  end;
  select f.kind into kind from app_hidden.condition_contact_fields() f where f.field = fld;
  if kind is null then
    if fld !~ '^field_values\.[A-Za-z0-9_]+$' then
      return format('%s is not a field conditions can test: use event.replied, event.clicked, event.opened, display_name, '
        'email, phone_number, total_calls, first_seen_at, last_seen_at, created_at, updated_at, stage_id or '
        'field_values.<key>', left(fld, 100));
    end if;
    if organization_id is not null and not exists (
         select 1 from app_public.custom_fields cf
          where cf.organization_id = condition_problem.organization_id and cf.enabled
            and cf.key = substr(fld, length('field_values.') + 1)) then
      return format('%s names no enabled custom field of the organization', left(fld, 100));
    end if;
    return null;   -- a custom field's value is compared as its type says when the condition is evaluated
  end if;
  if op in ('gt', 'gte', 'lt', 'lte') and kind not in ('number', 'datetime') then
    return format('%s compares numbers and dates, and %s is neither', op, fld);
  elsif op in ('contains', 'contains_any') and kind <> 'text' then
    return format('%s matches text, and %s is not text', op, fld);
  end if;
  if op in ('exists', 'not_exists') then
    return null;
  end if;
  vals := case when jsonb_typeof(v) = 'array' then v else jsonb_build_array(v) end;
  for j in 0 .. jsonb_array_length(vals) - 1 loop
    s := vals->j #>> '{}';
    if kind = 'number' and not (jsonb_typeof(vals->j) = 'number'
        or s ~ '^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?\s*$') then
      return format('%s is a number field: give a number', fld);
    elsif kind = 'datetime' and not (jsonb_typeof(vals->j) = 'string'
        and ((s ~ '^\d{4}-\d{2}-\d{2}$' and app_hidden.is_date(s))
             or (s ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$' and app_hidden.is_timestamptz(s)))) then
      return format('%s is a date-time field: give an ISO 8601 date (2026-01-31) or a date-time with offset', fld);
    elsif kind = 'stage' and not (jsonb_typeof(vals->j) = 'string'
        and s ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
        and (organization_id is null or exists (select 1 from app_public.pipeline_stages ps
                                                  where ps.organization_id = condition_problem.organization_id
                                                    and ps.id = s::uuid))) then
      return format('%s is not a stage of the organization''s pipeline', left(s, 100));
    end if;
  end loop;
  return null;
end $_$;

ALTER FUNCTION app_hidden.condition_problem(organization_id uuid, condition jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION condition_problem(organization_id uuid, condition jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.condition_problem(organization_id uuid, condition jsonb) IS 'What is wrong with a sequence condition (NULL: nothing); with an organization, custom fields and stages are resolved.';

--
-- Name: condition_valid(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.condition_valid(condition jsonb) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
begin
  return app_hidden.condition_problem(null, condition) is null;
end $$;

ALTER FUNCTION app_hidden.condition_valid(condition jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION condition_valid(condition jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.condition_valid(condition jsonb) IS 'Whether a sequence condition {field, op, value?} is well formed (sequences_get_condition_vocabulary).';

--
-- Name: current_may_write_sequence(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_may_write_sequence(location_id uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(app_hidden.current_role() in ('organization', 'owner', 'admin')
      or (app_hidden.current_role() = 'manager' and 'sequences' = any(app_hidden.current_powers())
          and location_id is not null and app_hidden.current_in_reach(location_id)), false)
$$;

ALTER FUNCTION app_hidden.current_may_write_sequence(location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_may_write_sequence(location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_may_write_sequence(location_id uuid) IS 'Whether the credential may change a sequence of this location (NULL: organization-wide): organization-wide credentials any; a manager with the sequences power only those of its own locations.';

--
-- Name: enrollment_events; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.enrollment_events (
    organization_id uuid NOT NULL,
    id bigint NOT NULL,
    enrollment_id uuid NOT NULL,
    type text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    step_key text,
    message_id uuid,
    reason text,
    CONSTRAINT enrollment_events_type_check CHECK ((type = ANY (ARRAY['enrolled'::text, 'sent'::text, 'delivered'::text, 'bounced'::text, 'opened'::text, 'clicked'::text, 'replied'::text, 'auto_replied'::text, 'skipped'::text, 'failed'::text, 'unknown'::text, 'paused'::text, 'resumed'::text, 'completed'::text, 'cancelled'::text])))
);

ALTER TABLE app_public.enrollment_events OWNER TO svc_owner;

--
-- Name: TABLE enrollment_events; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.enrollment_events IS 'What happened to an enrollment, in order of occurrence (id): {type, at, step_key?, message_id?, reason?}.';

--
-- Name: enrollment_event_json(app_public.enrollment_events); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.enrollment_event_json(v app_public.enrollment_events) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('type', v.type, 'at', v.at)
      || jsonb_strip_nulls(jsonb_build_object('step_key', v.step_key, 'message_id', v.message_id, 'reason', v.reason))
$$;

ALTER FUNCTION app_hidden.enrollment_event_json(v app_public.enrollment_events) OWNER TO svc_owner;

--
-- Name: FUNCTION enrollment_event_json(v app_public.enrollment_events); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.enrollment_event_json(v app_public.enrollment_events) IS 'An enrollment event as the API shows it: type and at, with step_key, message_id and reason when set.';

--
-- Name: enrollments; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.enrollments (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    sequence_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    current_step_index integer,
    current_step_key text,
    next_step_due_at timestamp with time zone,
    next_run_at timestamp with time zone,
    paused_at timestamp with time zone,
    end_reason text,
    source text DEFAULT 'manual'::text NOT NULL,
    run_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    entry_event text,
    CONSTRAINT enrollments_check CHECK (((status = 'paused'::text) = (paused_at IS NOT NULL))),
    CONSTRAINT enrollments_current_step_index_check CHECK ((current_step_index >= 0)),
    CONSTRAINT enrollments_source_check CHECK (((length(source) >= 1) AND (length(source) <= 50))),
    CONSTRAINT enrollments_status_check CHECK ((status = ANY (ARRAY['active'::text, 'paused'::text, 'completed'::text, 'cancelled'::text, 'failed'::text])))
);

ALTER TABLE app_public.enrollments OWNER TO svc_owner;

--
-- Name: TABLE enrollments; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.enrollments IS 'One contact''s way through one sequence. current_step_key is the step due next (NULL once ended); next_step_due_at when it is due, next_run_at when the engine runs it (moved into the send window). updated_at is the end time of an ended enrollment.';

--
-- Name: COLUMN enrollments.entry_event; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.enrollments.entry_event IS 'The contacts_upsert event the contact entered by (source event); cancel_events of that name cancel the enrollment.';

--
-- Name: enrollment_json(app_public.enrollments); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.enrollment_json(e app_public.enrollments) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', e.id,
    'sequence_id', e.sequence_id,
    'contact_id', e.contact_id,
    'status', e.status,
    'current_step_index', e.current_step_index,
    'current_step_key', e.current_step_key,
    'next_step_due_at', e.next_step_due_at,
    'next_run_at', e.next_run_at,
    'paused_at', e.paused_at,
    'end_reason', e.end_reason,
    'source', e.source,
    'created_at', e.created_at,
    'updated_at', e.updated_at)
$$;

ALTER FUNCTION app_hidden.enrollment_json(e app_public.enrollments) OWNER TO svc_owner;

--
-- Name: FUNCTION enrollment_json(e app_public.enrollments); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.enrollment_json(e app_public.enrollments) IS 'An enrollment as the API shows it: created_at is when the contact was enrolled, updated_at (once ended) when it ended.';

--
-- Name: next_send_time(text, jsonb, timestamp with time zone); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $$
declare
  local_day date := (at at time zone timezone)::date;
  day date;
  w record;
  opens timestamptz;
  closes timestamptz;
begin
  for offset_days in 0..7 loop
    day := local_day + offset_days;
    for w in
      select (x->>'start')::time as starts, x->>'end' as ends
        from jsonb_array_elements(windows) x
       where x->>'day' = lower(to_char(day, 'dy'))
       order by x->>'start'
    loop
      opens := (day + w.starts) at time zone timezone;
      closes := case when w.ends = '24:00' then (day + 1)::timestamp at time zone timezone
                     else (day + w.ends::time) at time zone timezone end;
      if at < closes then
        return greatest(at, opens);
      end if;
    end loop;
  end loop;
  return null;
end $$;

ALTER FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION next_send_time(timezone text, windows jsonb, at timestamp with time zone); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) IS 'The first instant at or after `at` inside one of the weekly windows, on the local calendar of timezone (DST included).';

--
-- Name: render_template(text, jsonb, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $_$
declare
  out text := '';
  rest text := template;
  opens int;
  closes int;
  m text[];
  value text;
begin
  if template is null then
    return null;
  end if;
  loop
    opens := strpos(rest, '{{');
    exit when opens = 0;
    out := out || left(rest, opens - 1);
    rest := substr(rest, opens);
    closes := strpos(substr(rest, 3), '}}');
    m := case when closes > 0
              then regexp_match(substr(rest, 3, closes - 1), '^\s*([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\s*(?:\|(.*))?$', 's') end;
    if m is null then
      out := out || '{{';
      rest := substr(rest, 3);
      continue;
    end if;
    value := nullif(case when jsonb_typeof(vars) = 'object' then vars->>m[1] end, '');
    if value is null then
      value := coalesce(btrim(m[2], E' \t\r\n'), '');
    end if;
    out := out || case when html then app_hidden.html_escape(value) else value end;
    rest := substr(rest, closes + 4);
  end loop;
  return out || rest;
end $_$;

ALTER FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION render_template(template text, vars jsonb, html boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) IS 'A message with its {{name}} / {{name|default}} placeholders replaced by vars->>name, or the default when that is null or empty; unknown names render empty; with html, values and defaults are HTML-escaped. Substitution only.';

--
-- Name: send_windows_valid(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.send_windows_valid(windows jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $_$
  select jsonb_typeof(windows) = 'array' and jsonb_array_length(windows) between 1 and 100
     and not exists (
       select 1 from jsonb_array_elements(windows) w
        where jsonb_typeof(w) <> 'object'
           or not (w ?& array['day', 'start', 'end'])
           or exists (select 1 from jsonb_object_keys(w) k where k not in ('day', 'start', 'end'))
           or w->>'day' not in ('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun')
           or coalesce(w->>'start', '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
           or coalesce(w->>'end', '') !~ '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$'
           or (w->>'start') >= (w->>'end'))
$_$;

ALTER FUNCTION app_hidden.send_windows_valid(windows jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION send_windows_valid(windows jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.send_windows_valid(windows jsonb) IS 'Whether windows is 1 to 100 weekly windows {day: mon..sun, start: HH:MM, end: HH:MM or 24:00}, each starting before it ends.';

--
-- Name: sequence_activate(app_public.sequences); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_activate(s app_public.sequences) RETURNS app_public.sequences
    LANGUAGE plpgsql
    AS $$
declare
  r app_public.sequences := s;
begin
  if s.status = 'active' then
    return s;
  end if;
  if s.status = 'paused' then
    perform app_hidden.raise_error(409, 'sequence_paused', 'The sequence is paused: sequences_resume continues it');
  end if;
  perform app_hidden.sequence_require_no_blockers(s);
  update app_public.sequences x set status = 'active', paused_at = null, updated_at = now()
   where x.organization_id = s.organization_id and x.id = s.id
  returning * into r;
  return r;
end $$;

ALTER FUNCTION app_hidden.sequence_activate(s app_public.sequences) OWNER TO svc_owner;

--
-- Name: sequence_audience_id(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_audience_id(audience jsonb) RETURNS uuid
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  raw text := case jsonb_typeof(audience) when 'string' then audience #>> '{}' when 'object' then audience->>'id' end;
begin
  if audience is null or audience = 'null' then
    return null;
  end if;
  if raw is null or raw !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     or (jsonb_typeof(audience) = 'object' and exists (select 1 from jsonb_object_keys(audience) k where k <> 'id')) then
    perform app_hidden.sequence_bad('body.audience', 'expected {"id": "<audience id>"}, the id, or null');
  end if;
  if not exists (select 1 from app_public.audiences a where a.organization_id = app_hidden.current_org_id() and a.id = raw::uuid) then
    perform app_hidden.raise_error(404, 'not_found', 'Audience not found');
  end if;
  return raw::uuid;
end $_$;

ALTER FUNCTION app_hidden.sequence_audience_id(audience jsonb) OWNER TO svc_owner;

--
-- Name: sequence_bad(text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_bad(at text, message text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform app_hidden.raise_error(400, 'bad_request', at || ': ' || message,
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', at, 'message', message))));
end $$;

ALTER FUNCTION app_hidden.sequence_bad(at text, message text) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_bad(at text, message text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_bad(at text, message text) IS 'Raises 400 bad_request naming the part of a sequence to fix.';

--
-- Name: sequence_blockers(app_public.sequences); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_blockers(s app_public.sequences) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  b jsonb := '[]';
  o record;
  sms_number text;
  step jsonb;
  unknown text[];
  keys text[] := array(select x->>'step_key' from jsonb_array_elements(s.steps) x);
  edge jsonb;
  a record;
begin
  select og.sending_email_domain, og.default_sms_number into o from app_public.organizations og where og.id = s.organization_id;
  select coalesce((select l.sms_number from app_public.locations l
                    where l.organization_id = s.organization_id and l.id = s.location_id), o.default_sms_number)
    into sms_number;
  if jsonb_array_length(s.steps) = 0 then
    b := b || jsonb_build_object('code', 'no_steps', 'message', 'The sequence has no steps: add at least one');
  end if;
  if exists (select 1 from jsonb_array_elements(s.steps) x where x->>'type' = 'email') and o.sending_email_domain is null then
    b := b || jsonb_build_object('code', 'missing_sending_domain',
      'message', 'The sequence sends email and the organization has no sending domain');
  end if;
  if exists (select 1 from jsonb_array_elements(s.steps) x where x->>'type' = 'sms') and sms_number is null then
    b := b || jsonb_build_object('code', 'missing_sms_number',
      'message', 'The sequence sends SMS and neither its location nor the organization has a number');
  end if;
  for step in select x from jsonb_array_elements(s.steps) x loop
    if (step->>'type' = 'email' and (coalesce(btrim(step->>'subject'), '') = '' or coalesce(btrim(step->>'body'), '') = ''))
       or (step->>'type' = 'sms' and coalesce(btrim(step->>'body'), '') = '') then
      b := b || jsonb_build_object('code', 'empty_content', 'step_key', step->>'step_key',
        'message', case when step->>'type' = 'email' then 'An email step needs a subject and a body'
                        else 'An SMS step needs a body' end);
    end if;
    unknown := app_hidden.template_unknown_variables(coalesce(step->>'subject', '') || ' ' || coalesce(step->>'body', ''));
    if cardinality(unknown) > 0 then
      b := b || jsonb_build_object('code', 'unknown_variable', 'step_key', step->>'step_key',
        'message', format('Not a variable of sequences_list_variables: %s', array_to_string(unknown, ', ')),
        'variables', to_jsonb(unknown));
    end if;
  end loop;
  for edge in select x from jsonb_array_elements(s.edges) x loop
    if not (edge->>'from') = any(keys) then
      b := b || jsonb_build_object('code', 'unknown_step_key', 'step_key', edge->>'from',
        'message', format('An edge starts at %s, which is no step of the sequence', edge->>'from'));
    end if;
    if not (edge->>'to') = any(keys) then
      b := b || jsonb_build_object('code', 'unknown_step_key', 'step_key', edge->>'to',
        'message', format('An edge leads to %s, which is no step of the sequence', edge->>'to'));
    end if;
  end loop;
  if app_hidden.sequence_send_schedule(s.organization_id, s.send_schedule_id) is null then
    b := b || jsonb_build_object('code', 'no_send_schedule',
      'message', 'The sequence names no send schedule and the organization has no default one');
  end if;
  if s.kind = 'broadcast' then
    select x.archived_at into a from app_public.audiences x where x.organization_id = s.organization_id and x.id = s.audience_id;
    if s.audience_id is null or not found then
      b := b || jsonb_build_object('code', 'audience_missing', 'message', 'A broadcast needs an audience');
    elsif a.archived_at is not null then
      b := b || jsonb_build_object('code', 'audience_archived', 'message', 'The broadcast''s audience is archived: restore it or name another');
    end if;
  elsif s.trigger is null or s.trigger = 'null' then
    b := b || jsonb_build_object('code', 'trigger_missing', 'message', 'An automation needs a trigger (sequences_list_triggers)');
  end if;
  return b;
end $$;

ALTER FUNCTION app_hidden.sequence_blockers(s app_public.sequences) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_blockers(s app_public.sequences); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_blockers(s app_public.sequences) IS 'Every reason a sequence cannot be activated: [{code, message, step_key?}] ([] when none).';

--
-- Name: sequence_check_edges(uuid, jsonb, jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_check_edges(organization_id uuid, edges jsonb, steps jsonb, at text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  lim jsonb := app_hidden.sequence_limits();
  keys text[] := array(select x->>'step_key' from jsonb_array_elements(steps) x);
  edge jsonb;
  eat text;
  k text;
  why text;
  out jsonb := '[]';
begin
  if edges is null or jsonb_typeof(edges) <> 'array' then
    perform app_hidden.sequence_bad(at, 'expected an array of edges');
  end if;
  if jsonb_array_length(edges) > (lim->>'edges_per_sequence')::int then
    perform app_hidden.sequence_bad(at, format('at most %s edges', lim->>'edges_per_sequence'));
  end if;
  for i in 0 .. jsonb_array_length(edges) - 1 loop
    edge := edges->i;
    eat := format('%s.%s', at, i);
    if jsonb_typeof(edge) <> 'object' then
      perform app_hidden.sequence_bad(eat, 'expected an object {from, to, condition}');
    end if;
    select min(x) into k from jsonb_object_keys(edge) x where x not in ('from', 'to', 'condition');
    if k is not null then
      perform app_hidden.sequence_bad(eat, format('unrecognized key "%s"', left(k, 50)));
    end if;
    foreach k in array array['from', 'to'] loop
      if jsonb_typeof(edge->k) is distinct from 'string' then
        perform app_hidden.sequence_bad(eat || '.' || k, 'expected a step_key');
      elsif not (edge->>k) = any(keys) then
        perform app_hidden.sequence_bad(eat || '.' || k, format('%s is not the step_key of a step', left(edge->>k, 50)));
      end if;
    end loop;
    if edge->'condition' is not null and edge->'condition' <> 'null' then
      why := app_hidden.condition_problem(organization_id, edge->'condition');
      if why is not null then
        perform app_hidden.sequence_bad(eat || '.condition', why);
      end if;
    end if;
    out := out || jsonb_build_array(jsonb_build_object('from', edge->'from', 'to', edge->'to',
      'condition', coalesce(edge->'condition', 'null')));
  end loop;
  return out;
end $$;

ALTER FUNCTION app_hidden.sequence_check_edges(organization_id uuid, edges jsonb, steps jsonb, at text) OWNER TO svc_owner;

--
-- Name: sequence_check_exits(uuid, jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_check_exits(organization_id uuid, exits jsonb, at text) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
  lim jsonb := app_hidden.sequence_limits();
  x jsonb;
  xat text;
  t record;
  why text;
begin
  if exits is null or jsonb_typeof(exits) <> 'array' then
    perform app_hidden.sequence_bad(at, 'expected an array of exit conditions');
  end if;
  if jsonb_array_length(exits) > (lim->>'exit_conditions_per_sequence')::int then
    perform app_hidden.sequence_bad(at, format('at most %s exit conditions', lim->>'exit_conditions_per_sequence'));
  end if;
  for i in 0 .. jsonb_array_length(exits) - 1 loop
    x := exits->i;
    xat := format('%s.%s', at, i);
    if jsonb_typeof(x) <> 'object' then
      perform app_hidden.sequence_bad(xat, 'expected an object {type, …}');
    end if;
    select * into t from app_hidden.sequence_exit_types() e where e.type = x->>'type';
    if not found or jsonb_typeof(x->'type') <> 'string' then
      perform app_hidden.sequence_bad(xat || '.type', format('expected one of %s',
        (select string_agg(e.type, ', ') from app_hidden.sequence_exit_types() e)));
    end if;
    why := app_hidden.sequence_fields_problem(organization_id, x, t.fields);
    if why is not null then
      perform app_hidden.sequence_bad(xat || '.' || split_part(why, ':', 1), substr(why, strpos(why, ':') + 2));
    end if;
  end loop;
end $$;

ALTER FUNCTION app_hidden.sequence_check_exits(organization_id uuid, exits jsonb, at text) OWNER TO svc_owner;

--
-- Name: sequence_check_location(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_check_location(location_id uuid) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
begin
  if location_id is not null and not exists (
       select 1 from app_public.locations l
        where l.organization_id = app_hidden.current_org_id() and l.id = location_id
          and app_hidden.current_in_reach(l.id)) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if not app_hidden.current_may_write_sequence(location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'A manager writes only sequences of its own locations: send location_id, one of yours');
  end if;
end $$;

ALTER FUNCTION app_hidden.sequence_check_location(location_id uuid) OWNER TO svc_owner;

--
-- Name: sequence_check_send_schedule(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_check_send_schedule(send_schedule_id uuid) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
begin
  if send_schedule_id is not null and not exists (
       select 1 from app_public.send_schedules x
        where x.organization_id = app_hidden.current_org_id() and x.id = send_schedule_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Send schedule not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.sequence_check_send_schedule(send_schedule_id uuid) OWNER TO svc_owner;

--
-- Name: sequence_check_steps(jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_check_steps(steps jsonb, at text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  lim jsonb := app_hidden.sequence_limits();
  step jsonb;
  sat text;
  keys text[] := '{}';
  k text;
  typ text;
  delay jsonb;
  unit text;
  n jsonb;
  out jsonb := '[]';
begin
  if steps is null or jsonb_typeof(steps) <> 'array' then
    perform app_hidden.sequence_bad(at, 'expected an array of steps');
  end if;
  if jsonb_array_length(steps) > (lim->>'steps_per_sequence')::int then
    perform app_hidden.sequence_bad(at, format('at most %s steps', lim->>'steps_per_sequence'));
  end if;
  for i in 0 .. jsonb_array_length(steps) - 1 loop
    step := steps->i;
    sat := format('%s.%s', at, i);
    if jsonb_typeof(step) <> 'object' then
      perform app_hidden.sequence_bad(sat, 'expected an object {step_key, type, delay, subject?, body?}');
    end if;
    select min(x) into k from jsonb_object_keys(step) x where x not in ('step_key', 'type', 'delay', 'subject', 'body');
    if k is not null then
      perform app_hidden.sequence_bad(sat, format('unrecognized key "%s"', left(k, 50)));
    end if;
    if jsonb_typeof(step->'step_key') is distinct from 'string' or (step->>'step_key') !~ (lim->>'step_key_pattern') then
      perform app_hidden.sequence_bad(sat || '.step_key', '1 to 50 letters, digits, _ or -');
    end if;
    if (step->>'step_key') = any(keys) then
      perform app_hidden.sequence_bad(sat || '.step_key', format('%s is used by another step: step keys are unique', step->>'step_key'));
    end if;
    keys := keys || (step->>'step_key');
    typ := step->>'type';
    if jsonb_typeof(step->'type') is distinct from 'string' or typ not in ('email', 'sms', 'wait') then
      perform app_hidden.sequence_bad(sat || '.type', 'expected one of email, sms, wait');
    end if;
    delay := coalesce(nullif(step->'delay', 'null'), '{"minutes": 0}');
    if jsonb_typeof(delay) <> 'object' then
      perform app_hidden.sequence_bad(sat || '.delay', 'expected one of {minutes: n}, {hours: n}, {days: n}');
    end if;
    if (select count(*) from jsonb_object_keys(delay)) <> 1 then
      perform app_hidden.sequence_bad(sat || '.delay', 'expected one of {minutes: n}, {hours: n}, {days: n}');
    end if;
    unit := (select x from jsonb_object_keys(delay) x);
    n := delay->unit;
    if not (lim->'delay_max') ? unit then
      perform app_hidden.sequence_bad(sat || '.delay', 'expected one of {minutes: n}, {hours: n}, {days: n}');
    end if;
    if jsonb_typeof(n) <> 'number' then
      perform app_hidden.sequence_bad(sat || '.delay.' || unit, format('a whole number from 0 to %s', lim->'delay_max'->>unit));
    end if;
    if (n #>> '{}')::numeric <> trunc((n #>> '{}')::numeric)
       or (n #>> '{}')::numeric < 0 or (n #>> '{}')::numeric > (lim->'delay_max'->>unit)::numeric then
      perform app_hidden.sequence_bad(sat || '.delay.' || unit, format('a whole number from 0 to %s', lim->'delay_max'->>unit));
    end if;
    if step ? 'subject' and step->'subject' <> 'null' then
      if typ <> 'email' then
        perform app_hidden.sequence_bad(sat || '.subject', 'only an email step has a subject');
      elsif jsonb_typeof(step->'subject') <> 'string' or length(step->>'subject') > (lim->>'subject_max_length')::int then
        perform app_hidden.sequence_bad(sat || '.subject', format('a string of at most %s characters', lim->>'subject_max_length'));
      end if;
    end if;
    if step ? 'body' and step->'body' <> 'null' then
      if typ = 'wait' then
        perform app_hidden.sequence_bad(sat || '.body', 'a wait step has no body (only a delay)');
      elsif jsonb_typeof(step->'body') <> 'string'
            or length(step->>'body') > (lim->>(case typ when 'email' then 'email_body_max_length' else 'sms_body_max_length' end))::int then
        perform app_hidden.sequence_bad(sat || '.body', format('a string of at most %s characters',
          lim->>(case typ when 'email' then 'email_body_max_length' else 'sms_body_max_length' end)));
      end if;
    end if;
    out := out || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
      'step_key', step->'step_key', 'type', typ, 'delay', jsonb_build_object(unit, (n #>> '{}')::bigint),
      'subject', case when typ = 'email' then step->'subject' end,
      'body', case when typ <> 'wait' then step->'body' end)));
  end loop;
  return out;
end $$;

ALTER FUNCTION app_hidden.sequence_check_steps(steps jsonb, at text) OWNER TO svc_owner;

--
-- Name: sequence_check_trigger(uuid, jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_check_trigger(organization_id uuid, trigger jsonb, at text) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
  t record;
  why text;
begin
  if trigger is null or trigger = 'null' then
    return;
  end if;
  if jsonb_typeof(trigger) <> 'object' then
    perform app_hidden.sequence_bad(at, 'expected an object {type, …} (sequences_list_triggers lists the types)');
  end if;
  select * into t from app_hidden.sequence_trigger_types() x where x.type = trigger->>'type';
  if not found or jsonb_typeof(trigger->'type') <> 'string' then
    perform app_hidden.sequence_bad(at || '.type', format('expected one of %s', (select string_agg(x.type, ', ') from app_hidden.sequence_trigger_types() x)));
  end if;
  why := app_hidden.sequence_fields_problem(organization_id, trigger, t.fields);
  if why is not null then
    perform app_hidden.sequence_bad(at || '.' || split_part(why, ':', 1), substr(why, strpos(why, ':') + 2));
  end if;
end $$;

ALTER FUNCTION app_hidden.sequence_check_trigger(organization_id uuid, trigger jsonb, at text) OWNER TO svc_owner;

--
-- Name: sequence_enrollment_count(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_enrollment_count(sequence_id uuid, status text) RETURNS bigint
    LANGUAGE plpgsql STABLE
    AS $$
declare
  n bigint := app_hidden.sequence_enrollment_total(sequence_id, status);
begin
  if n is null then
    select count(*) into n from app_public.enrollments e
     where e.organization_id = app_hidden.current_org_id() and e.sequence_id = sequence_enrollment_count.sequence_id
       and (sequence_enrollment_count.status is null or e.status = sequence_enrollment_count.status);
  end if;
  return n;
end $$;

ALTER FUNCTION app_hidden.sequence_enrollment_count(sequence_id uuid, status text) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_enrollment_count(sequence_id uuid, status text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_enrollment_count(sequence_id uuid, status text) IS 'How many enrollments of the sequence (of one status, or all) the credential sees: from the counts when it reaches every contact, else counted under its policies.';

--
-- Name: sequence_enrollment_total(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_enrollment_total(sequence_id uuid, status text) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not (app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all') then
    return null;
  end if;
  return (select coalesce(sum(c.n), 0) from app_private.enrollment_counts c
           where c.organization_id = app_hidden.current_org_id() and c.sequence_id = sequence_enrollment_total.sequence_id
             and (sequence_enrollment_total.status is null or c.status = sequence_enrollment_total.status));
end $$;

ALTER FUNCTION app_hidden.sequence_enrollment_total(sequence_id uuid, status text) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_enrollment_total(sequence_id uuid, status text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_enrollment_total(sequence_id uuid, status text) IS 'How many enrollments a sequence of the current organization has (of one status, or all), from app_private.enrollment_counts; NULL unless the credential reaches every contact of the organization (then the caller counts under its policies).';

--
-- Name: sequence_enrollments_page(uuid, text, uuid, integer, bigint); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid, page_size integer, skip bigint) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
                       || jsonb_build_object('next_send_at', coalesce(e.next_run_at, e.next_step_due_at))
                       order by e.created_at desc, e.id), '[]')
                from app_public.enrollments e where e.organization_id = org and e.id = any(ids)));
end $$;

ALTER FUNCTION app_hidden.sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid, page_size integer, skip bigint) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid, page_size integer, skip bigint); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid, page_size integer, skip bigint) IS 'A page of a sequence''s enrollments (one status or all; one contact''s or all), newest first, with next_send_at, and its total ({total, items}), read as the owner for a caller that reaches every contact of the organization; NULL for others.';

--
-- Name: sequence_exit_types(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_exit_types() RETURNS TABLE(type text, area text, description text, fields jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select t.type, t.area, t.description, t.fields from app_private.sequence_exit_types t order by t.position, t.type
$$;

ALTER FUNCTION app_hidden.sequence_exit_types() OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_exit_types(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_exit_types() IS 'The exit-condition types sequences accept.';

--
-- Name: sequence_fields_problem(uuid, jsonb, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  k text;
  spec jsonb;
  v jsonb;
  cond text;
begin
  for k in select jsonb_object_keys(obj) loop
    if k <> 'type' and not fields ? k then
      return format('%s: not a field of this type (it takes %s)', left(k, 50),
        coalesce((select string_agg(f, ', ') from jsonb_object_keys(fields) f), 'no other field'));
    end if;
  end loop;
  for k, spec in select * from jsonb_each(fields) loop
    v := obj->k;
    if v is null or v = 'null' then
      if (spec->>'required')::boolean then
        return format('%s: required', k);
      end if;
      continue;
    end if;
    if spec ? 'only_when' and exists (select 1 from jsonb_each(spec->'only_when') w where obj->w.key is distinct from w.value) then
      return format('%s: only with %s', k, (select string_agg(format('%s %s', w.key, w.value #>> '{}'), ', ')
                                              from jsonb_each(spec->'only_when') w));
    end if;
    case spec->>'type'
      when 'string' then
        if jsonb_typeof(v) <> 'string' or length(v #>> '{}') < 1 then
          return format('%s: expected a non-empty string', k);
        elsif spec ? 'max_length' and length(v #>> '{}') > (spec->>'max_length')::int then
          return format('%s: at most %s characters', k, spec->>'max_length');
        elsif spec ? 'pattern' and (v #>> '{}') !~ (spec->>'pattern') then
          return format('%s: must match %s', k, spec->>'pattern');
        end if;
      when 'uuid' then
        if jsonb_typeof(v) <> 'string' or (v #>> '{}') !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
          return format('%s: expected a uuid', k);
        end if;
        if k = 'stage_id' and not exists (select 1 from app_public.pipeline_stages ps
                                            where ps.organization_id = sequence_fields_problem.organization_id
                                              and ps.id = (v #>> '{}')::uuid) then
          return format('%s: not a stage of the organization''s pipeline (contacts_list_stages lists them)', k);
        end if;
        -- another organization's form, or one out of the caller's reach: as if it did not exist
        if k = 'form_id' and not exists (select 1 from app_public.forms f
                                           where f.organization_id = sequence_fields_problem.organization_id
                                             and f.id = (v #>> '{}')::uuid) then
          perform app_hidden.raise_error(404, 'not_found', 'Form not found (forms_list lists them)');
        end if;
        if k = 'location_id' and not exists (select 1 from app_public.locations l
                                               where l.organization_id = sequence_fields_problem.organization_id
                                                 and l.id = (v #>> '{}')::uuid
                                                 and (app_hidden.current_org_id() is null or app_hidden.current_in_reach(l.id))) then
          perform app_hidden.raise_error(404, 'not_found', 'Location not found (locations_list lists them)');
        end if;
      when 'enum' then
        if jsonb_typeof(v) <> 'string' or not (spec->'values') ? (v #>> '{}') then
          return format('%s: one of %s', k, (select string_agg(x, ', ') from jsonb_array_elements_text(spec->'values') x));
        end if;
      when 'condition' then
        cond := app_hidden.condition_problem(organization_id, v);
        if cond is not null then
          return format('%s: %s', k, cond);
        end if;
      else
        return format('%s: this field''s type is not known', k);
    end case;
  end loop;
  return null;
end $_$;

ALTER FUNCTION app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) OWNER TO svc_owner;

--
-- Name: sequence_for(uuid, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_for(sequence_id uuid, for_write boolean) RETURNS app_public.sequences
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x where x.organization_id = app_hidden.current_org_id() and x.id = sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  if for_write then
    if not app_hidden.current_may_write_sequence(s.location_id) then
      perform app_hidden.raise_error(403, 'insufficient_role',
        'This credential may change only the sequences of its own locations, not an organization-wide one');
    end if;
    select * into s from app_public.sequences x
     where x.organization_id = app_hidden.current_org_id() and x.id = sequence_id for no key update;
  end if;
  return s;
end $$;

ALTER FUNCTION app_hidden.sequence_for(sequence_id uuid, for_write boolean) OWNER TO svc_owner;

--
-- Name: sequence_for_read(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_for_read(sequence_id uuid) RETURNS app_public.sequences
    LANGUAGE plpgsql STABLE
    AS $$
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

ALTER FUNCTION app_hidden.sequence_for_read(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_for_read(sequence_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_for_read(sequence_id uuid) IS 'The sequence of the current organization in the caller''s reach, or 404.';

--
-- Name: sequence_json(app_public.sequences); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_json(s app_public.sequences) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', s.id,
    'kind', s.kind,
    'status', s.status,
    'is_active', s.status <> 'inactive',
    'name', s.name,
    'location_id', s.location_id,
    'send_schedule_id', s.send_schedule_id,
    'trigger', s.trigger,
    'steps', s.steps,
    'edges', s.edges,
    'exit_conditions', s.exit_conditions,
    'audience', case when s.audience_id is not null then jsonb_build_object('id', s.audience_id) end,
    'created_at', s.created_at,
    'updated_at', s.updated_at)
$$;

ALTER FUNCTION app_hidden.sequence_json(s app_public.sequences) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_json(s app_public.sequences); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_json(s app_public.sequences) IS 'A sequence as the API shows it (sequences.md, "The sequence record").';

--
-- Name: sequence_limits(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_limits() RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$
  select jsonb_build_object(
    'name_max_length', 200,
    'steps_per_sequence', 50,
    'edges_per_sequence', 200,
    'exit_conditions_per_sequence', 20,
    'step_key_pattern', '^[A-Za-z0-9_-]{1,50}$',
    'subject_max_length', 300,
    'email_body_max_length', 50000,
    'sms_body_max_length', 1600,
    'delay_max', jsonb_build_object('minutes', 525600, 'hours', 8760, 'days', 365))
$_$;

ALTER FUNCTION app_hidden.sequence_limits() OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_limits(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_limits() IS 'The limits of a sequence''s definition (sequences_capabilities).';

--
-- Name: sequence_message_variables(uuid, uuid, uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_message_variables(organization_id uuid, contact_id uuid, location_id uuid, unsubscribe_url text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  c record;
  l record;
  o record;
  full_name text;
begin
  select ct.name, ct.email::text as email, ct.phone into c
    from app_public.contacts ct
   where ct.organization_id = sequence_message_variables.organization_id and ct.id = sequence_message_variables.contact_id;
  select lo.name, lo.sms_number into l
    from app_public.locations lo
   where lo.organization_id = sequence_message_variables.organization_id and lo.id = sequence_message_variables.location_id;
  select og.name, og.default_sms_number into o
    from app_public.organizations og where og.id = sequence_message_variables.organization_id;
  full_name := nullif(btrim(regexp_replace(coalesce(c.name, ''), '\s+', ' ', 'g')), '');
  return jsonb_build_object(
    'contact.first_name', split_part(full_name, ' ', 1),
    'contact.last_name', nullif(substr(full_name, length(split_part(full_name, ' ', 1)) + 2), ''),
    'contact.name', full_name,
    'contact.email', c.email,
    'contact.phone', c.phone,
    'location.name', l.name,
    'location.phone', coalesce(l.sms_number, o.default_sms_number),
    'organization.name', o.name,
    'unsubscribe_url', unsubscribe_url);
end $$;

ALTER FUNCTION app_hidden.sequence_message_variables(organization_id uuid, contact_id uuid, location_id uuid, unsubscribe_url text) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_message_variables(organization_id uuid, contact_id uuid, location_id uuid, unsubscribe_url text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_message_variables(organization_id uuid, contact_id uuid, location_id uuid, unsubscribe_url text) IS 'The variables of one sequence message, keyed by name (render_template''s vars).';

--
-- Name: sequence_move_enrollments(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_move_enrollments(sequence_id uuid, action text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  ids uuid[];
  n int;
begin
  if not exists (select 1 from app_public.sequences s where s.organization_id = org and s.id = sequence_id
                   and (s.location_id is null or app_hidden.current_in_reach(s.location_id))
                   and app_hidden.current_may_write_sequence(s.location_id)) then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  case action
    when 'pause' then
      with held as (
        update app_public.enrollments e set status = 'paused', paused_at = now(), updated_at = now()
         where e.organization_id = org and e.sequence_id = sequence_move_enrollments.sequence_id and e.status = 'active'
        returning e.id, e.current_step_key
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key)
        select org, held.id, 'paused', held.current_step_key from held
      )
      select count(*) into n from held;
    when 'resume' then
      with resumed as (
        update app_public.enrollments e
           set status = 'active', next_step_due_at = e.next_step_due_at + (now() - e.paused_at),
               -- the moved due time, into the send window again: a step moved past the window's
               -- close waits for its next opening instead of going out at night
               next_run_at = app_hidden.sequence_next_run(org, s.send_schedule_id,
                                                          coalesce(e.next_step_due_at, e.next_run_at) + (now() - e.paused_at)),
               paused_at = null, updated_at = now()
          from app_public.sequences s
         where s.organization_id = org and s.id = sequence_move_enrollments.sequence_id
           and e.organization_id = org and e.sequence_id = sequence_move_enrollments.sequence_id and e.status = 'paused'
        returning e.id, e.current_step_key
      ), logged as (
        insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key)
        select org, resumed.id, 'resumed', resumed.current_step_key from resumed
      )
      select array_agg(resumed.id) into ids from resumed;
      n := coalesce(cardinality(ids), 0);
      if n > 0 then
        perform app_private.schedule_enrollment_steps(org, ids);
      end if;
    when 'deactivate' then
      select count(*) into n from app_private.end_enrollments(org,
        array(select e.id from app_public.enrollments e
               where e.organization_id = org and e.sequence_id = sequence_move_enrollments.sequence_id
                 and e.status in ('active', 'paused')),
        'cancelled', 'sequence_deactivated');
    else
      raise exception 'sequence_move_enrollments: unknown action %', action;
  end case;
  return n;
end $$;

ALTER FUNCTION app_hidden.sequence_move_enrollments(sequence_id uuid, action text) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_move_enrollments(sequence_id uuid, action text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_move_enrollments(sequence_id uuid, action text) IS 'Pauses, resumes (due times moved by the time held, jobs scheduled) or cancels (deactivation) the live enrollments of a sequence the current credential may write; returns how many moved.';

--
-- Name: sequence_next_run(uuid, uuid, timestamp with time zone); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_public.send_schedules := app_hidden.sequence_send_schedule(organization_id, send_schedule_id);
begin
  if s.id is null then
    return due;
  end if;
  return coalesce(app_hidden.next_send_time(s.timezone, s.windows, due), due);
end $$;

ALTER FUNCTION app_hidden.sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamp with time zone); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamp with time zone) IS 'When a step due at `due` runs: the next opening of the sequence''s send schedule (DST included), or `due` without one.';

--
-- Name: sequence_require_no_blockers(app_public.sequences); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_require_no_blockers(s app_public.sequences) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
  b jsonb := app_hidden.sequence_blockers(s);
begin
  if jsonb_array_length(b) > 0 then
    perform app_hidden.raise_error(400, 'sequence_activation_blocked',
      format('The sequence cannot be activated: %s', (select string_agg(x->>'code', ', ') from jsonb_array_elements(b) x)),
      jsonb_build_object('blockers', b));
  end if;
end $$;

ALTER FUNCTION app_hidden.sequence_require_no_blockers(s app_public.sequences) OWNER TO svc_owner;

--
-- Name: send_schedules; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.send_schedules (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    timezone text NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    windows jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT send_schedules_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT send_schedules_windows_check CHECK ((jsonb_typeof(windows) = 'array'::text)),
    CONSTRAINT send_schedules_windows_valid CHECK (app_hidden.send_windows_valid(windows))
);

ALTER TABLE app_public.send_schedules OWNER TO svc_owner;

--
-- Name: TABLE send_schedules; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.send_schedules IS 'When sequence and broadcast messages may go out: weekly windows [{day: mon..sun, start: HH:MM, end: HH:MM|24:00}] in an IANA time zone. A sequence without send_schedule_id uses the organization''s default.';

--
-- Name: COLUMN send_schedules.windows; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.send_schedules.windows IS 'Weekly windows, local to timezone: [{day, start, end}], start before end, end 24:00 allowed.';

--
-- Name: sequence_send_schedule(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_send_schedule(organization_id uuid, send_schedule_id uuid) RETURNS app_public.send_schedules
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_public.send_schedules;
begin
  select * into s from app_public.send_schedules x
   where x.organization_id = sequence_send_schedule.organization_id
     and (x.id = sequence_send_schedule.send_schedule_id or (sequence_send_schedule.send_schedule_id is null and x.is_default))
   limit 1;
  return s;
end $$;

ALTER FUNCTION app_hidden.sequence_send_schedule(organization_id uuid, send_schedule_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_send_schedule(organization_id uuid, send_schedule_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_send_schedule(organization_id uuid, send_schedule_id uuid) IS 'The send schedule of a sequence: the one it names, or the organization''s default; NULL when there is none.';

--
-- Name: sequence_sweep_horizon(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_sweep_horizon() RETURNS interval
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ select interval '2 minutes' $$;

ALTER FUNCTION app_hidden.sequence_sweep_horizon() OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_sweep_horizon(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_sweep_horizon() IS 'How far ahead the sequence_step_sweep adds step jobs: more than its cron period (one minute), so a step gets its job before it is due.';

--
-- Name: sequence_sweep_lock_key(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_sweep_lock_key(organization_id uuid) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ select hashtext('sequence_step_sweep:' || organization_id) $$;

ALTER FUNCTION app_hidden.sequence_sweep_lock_key(organization_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_sweep_lock_key(organization_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_sweep_lock_key(organization_id uuid) IS 'The second key of the advisory lock (first key 7613) that orders requests relying on a waiting sweep job before that sweep.';

--
-- Name: sequence_trigger_types(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_trigger_types() RETURNS TABLE(type text, area text, description text, fields jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select t.type, t.area, t.description, t.fields from app_private.sequence_trigger_types t order by t.position, t.type
$$;

ALTER FUNCTION app_hidden.sequence_trigger_types() OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_trigger_types(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_trigger_types() IS 'The trigger types sequences accept (sequences_list_triggers).';

--
-- Name: sequence_variables(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequence_variables() RETURNS TABLE(name text, description text, example text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  values
    ('contact.first_name', 'The contact''s first name: the first word of its name.', 'Maria'),
    ('contact.last_name', 'The contact''s last name: its name after the first word.', 'Lopez'),
    ('contact.name', 'The contact''s full name.', 'Maria Lopez'),
    ('contact.email', 'The contact''s email address.', 'maria@example.com'),
    ('contact.phone', 'The contact''s phone number (E.164).', '+15551234567'),
    ('location.name', 'The name of the sequence''s location (empty for an organization-wide sequence).', 'Downtown'),
    ('location.phone', 'The SMS number of the sequence''s location, else the organization''s.', '+15557654321'),
    ('organization.name', 'The business''s name.', 'Acme Plumbing'),
    ('unsubscribe_url', 'The link that unsubscribes the contact from this kind of message.', 'https://example.com/u/abc')
$$;

ALTER FUNCTION app_hidden.sequence_variables() OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_variables(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequence_variables() IS 'The variables a sequence message may name as {{name}} or {{name|default}} (sequences_list_variables).';

--
-- Name: sequences_enroll_write(uuid, uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  e app_public.enrollments;
begin
  -- for share: a pause, deactivation or change of steps committing meanwhile is waited for and
  -- seen, and one that comes later waits for this enrollment and takes it along
  select * into s from app_public.sequences x where x.organization_id = org and x.id = sequences_enroll_write.sequence_id for share;
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

ALTER FUNCTION app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text) IS 'sequences_enroll''s write as the owner: the credential may write the sequence; a live enrollment answers skipped (already_enrolled); 409 sequence_inactive, sequence_paused, contact_not_at_location; then app_private.enroll_contact.';

--
-- Name: sequences_test_step_record(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequences_test_step_record(message_id uuid, error text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_private.outgoing_messages m
     set status = case when sequences_test_step_record.error is null then 'sent' else 'failed' end,
         sent_at = case when sequences_test_step_record.error is null then now() end,
         error = left(sequences_test_step_record.error, 1000)
   where m.organization_id = app_hidden.current_org_id() and m.id = sequences_test_step_record.message_id
     and m.status = 'queued' and (m.meta->>'test')::boolean
$$;

ALTER FUNCTION app_hidden.sequences_test_step_record(message_id uuid, error text) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_test_step_record(message_id uuid, error text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequences_test_step_record(message_id uuid, error text) IS 'What the transport answered for a test send of the current organization.';

--
-- Name: sequences_test_step_send(uuid, text, text, uuid, text, text[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid, base_url text, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences;
  step jsonb;
  c app_public.contacts;
  channel text;
  refusal text;
  message jsonb;
begin
  select * into s from app_public.sequences x where x.organization_id = org and x.id = sequences_test_step_send.sequence_id;
  if not found or not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not send this sequence''s steps');
  end if;
  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = sequences_test_step_send.step_key limit 1;
  channel := step->>'type';
  if sequences_test_step_send.contact_id is not null then
    select * into c from app_public.contacts x where x.organization_id = org and x.id = sequences_test_step_send.contact_id;
    address := case channel when 'email' then c.email::text else c.phone end;
  elsif channel = 'email' then
    select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(address);
  else
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = address;
  end if;
  refusal := app_private.send_refusal(org, channel, address);
  -- a number no contact carries is the author's own: only a contact's missing consent refuses
  if refusal is null and channel = 'sms' and c.id is not null and not c.sms_consent then
    refusal := 'no_consent';
  end if;
  if refusal is not null then
    return jsonb_build_object('success', false, 'reason_code', refusal, 'error', case refusal
      when 'missing_address' then 'The contact has no ' || case channel when 'email' then 'email address' else 'phone number' end
      when 'suppressed' then 'The address is suppressed: no email goes to it'
      when 'opted_out' then 'The number opted out of SMS'
      else 'The contact has not consented to SMS' end);
  end if;
  message := app_private.build_sequence_message(org, s, step, c.id, address, null, base_url, channel = 'email');
  message := jsonb_set(message, '{meta,test}', 'true');
  update app_private.outgoing_messages m set meta = message->'meta' where m.organization_id = org and m.id = (message->>'id')::uuid;
  if channel = any(sinks) then
    -- the local sink is a table: storing and marking sent commit with this call
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    values (org, (message->>'id')::uuid, channel, message->>'sender', address, message->>'subject', message->>'body', message->'meta');
    update app_private.outgoing_messages m set status = 'sent', sent_at = now()
     where m.organization_id = org and m.id = (message->>'id')::uuid;
    return jsonb_build_object('success', true, 'message_id', message->>'id');
  end if;
  return jsonb_build_object('success', true, 'message_id', message->>'id', 'message', message);
end $$;

ALTER FUNCTION app_hidden.sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid, base_url text, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid, base_url text, sinks text[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid, base_url text, sinks text[]) IS 'sequences_test_step''s send as the owner: send-time checks (reason_code), the rendered message stored; with the sink, delivered at once; otherwise answered for the caller to hand to its transport.';

--
-- Name: step_delay(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.step_delay(step jsonb) RETURNS interval
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select coalesce((step->'delay'->>'days')::numeric, 0) * interval '24 hours'
       + coalesce((step->'delay'->>'hours')::numeric, 0) * interval '1 hour'
       + coalesce((step->'delay'->>'minutes')::numeric, 0) * interval '1 minute'
$$;

ALTER FUNCTION app_hidden.step_delay(step jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION step_delay(step jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.step_delay(step jsonb) IS 'The delay of a step ({days, hours, minutes}) as elapsed time, a day as 24 hours; none is zero. app_hidden.step_due counts days on a calendar.';

--
-- Name: step_due(uuid, uuid, jsonb, timestamp with time zone); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  days numeric := coalesce((step->'delay'->>'days')::numeric, 0);
  zone text;
begin
  if days = 0 then
    return at + app_hidden.step_delay(step);
  end if;
  zone := (app_hidden.sequence_send_schedule(step_due.organization_id, step_due.send_schedule_id)).timezone;
  if zone is null then
    return at + app_hidden.step_delay(step);
  end if;
  return ((at at time zone zone) + days * interval '1 day') at time zone zone
       + coalesce((step->'delay'->>'hours')::numeric, 0) * interval '1 hour'
       + coalesce((step->'delay'->>'minutes')::numeric, 0) * interval '1 minute';
end $$;

ALTER FUNCTION app_hidden.step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamp with time zone); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamp with time zone) IS 'When a step given at `at` is due: its days on the send schedule''s calendar (the same local time), its hours and minutes elapsed; days of 24 hours without a schedule.';

--
-- Name: template_unknown_variables(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.template_unknown_variables(template text) RETURNS text[]
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $_$
declare
  known text[] := array(select v.name from app_hidden.sequence_variables() v);
  found text[] := '{}';
  rest text := coalesce(template, '');
  opens int;
  closes int;
  m text[];
  bad text;
begin
  loop
    opens := strpos(rest, '{{');
    exit when opens = 0;
    rest := substr(rest, opens);
    closes := strpos(substr(rest, 3), '}}');
    m := case when closes > 0
              then regexp_match(substr(rest, 3, closes - 1), '^\s*([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\s*(?:\|(.*))?$', 's') end;
    if m is null then
      bad := case when closes > 0 and closes <= 40 then left(rest, closes + 3) else left(rest, 40) end;
      if not bad = any(found) then
        found := found || bad;
      end if;
      rest := substr(rest, 3);
      continue;
    end if;
    if not m[1] = any(known) and not m[1] = any(found) then
      found := found || m[1];
    end if;
    rest := substr(rest, closes + 4);
  end loop;
  return found;
end $_$;

ALTER FUNCTION app_hidden.template_unknown_variables(template text) OWNER TO svc_owner;

--
-- Name: FUNCTION template_unknown_variables(template text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.template_unknown_variables(template text) IS 'The placeholder names of a template that are not sequence variables, and any {{ that opens no placeholder (as its text).';

--
-- Name: unsubscribe_confirm(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.unsubscribe_confirm(token text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  t app_private.unsubscribe_tokens := app_hidden.unsubscribe_token_row(token);
  contact uuid;
begin
  if t.token_hash is null then
    return null;
  end if;
  select c.id into contact from app_public.contacts c where c.organization_id = t.organization_id and c.email_key = t.email;
  contact := coalesce(contact, t.contact_id);
  if contact is not null then
    -- the first record of an address is kept (contacts_suppress's rule)
    insert into app_public.email_suppressions (organization_id, email, contact_id, source)
    values (t.organization_id, t.email, contact, 'unsubscribe')
    on conflict do nothing;
    perform app_private.cancel_channel_enrollments(t.organization_id, array[contact], 'email');
  end if;
  update app_private.unsubscribe_tokens x set used_at = coalesce(x.used_at, now()) where x.token_hash = t.token_hash;
  -- an address no contact carries (a test send to its author) is on no list: nothing to record
  return jsonb_build_object('organization', (select o.name from app_public.organizations o where o.id = t.organization_id),
                            'email', app_hidden.mask_email(t.email), 'unsubscribed', contact is not null);
end $$;

ALTER FUNCTION app_hidden.unsubscribe_confirm(token text) OWNER TO svc_owner;

--
-- Name: FUNCTION unsubscribe_confirm(token text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.unsubscribe_confirm(token text) IS 'One-click unsubscribe: suppresses the token''s address (source unsubscribe; the first record kept) and cancels its email enrollments; unsubscribed false for an address no contact carries (nothing to record); NULL for an unknown token. Safe to repeat.';

--
-- Name: unsubscribe_lookup(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.unsubscribe_lookup(token text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  t app_private.unsubscribe_tokens := app_hidden.unsubscribe_token_row(token);
begin
  if t.token_hash is null then
    return null;
  end if;
  return jsonb_build_object(
    'organization', (select o.name from app_public.organizations o where o.id = t.organization_id),
    'email', app_hidden.mask_email(t.email),
    'unsubscribed', exists (select 1 from app_public.email_suppressions s where s.organization_id = t.organization_id and s.email = t.email));
end $$;

ALTER FUNCTION app_hidden.unsubscribe_lookup(token text) OWNER TO svc_owner;

--
-- Name: FUNCTION unsubscribe_lookup(token text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.unsubscribe_lookup(token text) IS 'What the unsubscribe page shows for a token: the organization''s name, the address (masked), whether it is suppressed; NULL for an unknown token.';

--
-- Name: unsubscribe_tokens; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.unsubscribe_tokens (
    token_hash bytea NOT NULL,
    organization_id uuid NOT NULL,
    email text NOT NULL,
    contact_id uuid,
    enrollment_id uuid,
    message_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    used_at timestamp with time zone,
    CONSTRAINT unsubscribe_tokens_email_check CHECK ((email = lower(email)))
);

ALTER TABLE app_private.unsubscribe_tokens OWNER TO svc_owner;

--
-- Name: TABLE unsubscribe_tokens; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.unsubscribe_tokens IS 'One-click unsubscribe tokens of sequence email (RFC 8058): the SHA-256 of the random token the URL carries, the address it suppresses, and when it was used.';

--
-- Name: unsubscribe_token_row(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.unsubscribe_token_row(token text) RETURNS app_private.unsubscribe_tokens
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  t app_private.unsubscribe_tokens;
begin
  if token is null or token !~ '^[A-Za-z0-9_-]{20,100}$' then
    return null;
  end if;
  select * into t from app_private.unsubscribe_tokens x where x.token_hash = sha256(convert_to(token, 'UTF8'));
  return t;
end $_$;

ALTER FUNCTION app_hidden.unsubscribe_token_row(token text) OWNER TO svc_owner;

--
-- Name: advance_enrollment(uuid, uuid, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
  due := app_hidden.step_due(e.organization_id, s.send_schedule_id, step, at);
  update app_public.enrollments x
     set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
         next_run_at = app_hidden.sequence_next_run(e.organization_id, s.send_schedule_id, due), updated_at = at
   where x.organization_id = e.organization_id and x.id = e.id;
  perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id]);
end $$;

ALTER FUNCTION app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone) IS 'Moves an active enrollment to its next step (edges: first whose condition holds; else list order), due at + delay, in the send window, job scheduled; no next step: completed.';

--
-- Name: advance_enrollments(uuid, uuid[], timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone DEFAULT now()) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  g record;
  s app_public.sequences;
  one uuid;
  idx int;
  step jsonb;
  due timestamptz;
begin
  for g in
    select x.sequence_id, x.current_step_key, array_agg(x.id order by x.id) as ids
      from (select y.id, y.sequence_id, y.current_step_key, y.status from app_public.enrollments y
             where y.organization_id = advance_enrollments.organization_id and y.id = any(enrollment_ids)
            offset 0) x
     where x.status = 'active'
     group by x.sequence_id, x.current_step_key
  loop
    select * into s from app_public.sequences x where x.organization_id = advance_enrollments.organization_id and x.id = g.sequence_id;
    if jsonb_array_length(s.edges) > 0 then
      foreach one in array g.ids loop
        perform app_private.advance_enrollment(advance_enrollments.organization_id, one, at);
      end loop;
      continue;
    end if;
    idx := null;
    select t.o into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = g.current_step_key limit 1;
    step := case when idx is not null then s.steps->idx end;
    if step is null then
      perform app_private.end_enrollments_set(advance_enrollments.organization_id, g.ids, 'completed', 'last_step');
      continue;
    end if;
    due := app_hidden.step_due(advance_enrollments.organization_id, s.send_schedule_id, step, at);
    update app_public.enrollments x
       set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
           next_run_at = app_hidden.sequence_next_run(advance_enrollments.organization_id, s.send_schedule_id, due), updated_at = at
     where x.organization_id = advance_enrollments.organization_id and x.id = any(g.ids);
    perform app_private.schedule_enrollment_steps(advance_enrollments.organization_id, g.ids);
  end loop;
end $$;

ALTER FUNCTION app_private.advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone) IS 'advance_enrollment for a set: each (sequence, step) group moved in one statement (next step in list order, or completed); sequences with edges one enrollment at a time.';

--
-- Name: build_sequence_message(uuid, app_public.sequences, jsonb, uuid, text, uuid, text, boolean, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text DEFAULT 'queued'::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org app_public.organizations;
  message_id uuid := gen_random_uuid();
  channel text := step->>'type';
  domain text;
  sender text;
  unsubscribe_url text;
  vars jsonb;
  is_html boolean := coalesce(step->>'format' = 'html', coalesce(step->>'body', '') ~* '<(html|body|p|br|div|a|table|span|strong|em)[\s/>]');
  subject text;
  body text;
  headers jsonb := '{}';
  meta jsonb;
begin
  select * into org from app_public.organizations o where o.id = build_sequence_message.organization_id;
  if channel = 'email' then
    domain := coalesce(org.sending_email_domain, 'localhost');
    sender := 'no-reply@' || domain;
    if unsubscribe then
      unsubscribe_url := rtrim(base_url, '/') || '/unsubscribe/'
        || app_private.new_unsubscribe_token(org.id, recipient, contact_id, enrollment_id, message_id);
      headers := jsonb_build_object('List-Unsubscribe', '<' || unsubscribe_url || '>',
                                    'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click');
    end if;
    headers := jsonb_build_object('Message-ID', '<' || message_id || '@' || domain || '>') || headers;
  else
    sender := app_private.contact_sms_sender(org.id, contact_id, s.location_id);
  end if;
  vars := coalesce(app_hidden.sequence_message_variables(org.id, contact_id, s.location_id, unsubscribe_url), '{}');
  if contact_id is null then
    vars := vars || jsonb_build_object('unsubscribe_url', unsubscribe_url);
  end if;
  subject := case when channel = 'email' then app_hidden.render_template(coalesce(step->>'subject', ''), vars, false) end;
  body := app_hidden.render_template(coalesce(step->>'body', ''), vars, channel = 'email' and is_html);
  meta := jsonb_strip_nulls(jsonb_build_object('sequence_id', s.id, 'enrollment_id', enrollment_id, 'step_key', step->>'step_key',
    'message_id', message_id, 'html', case when channel = 'email' and is_html then true end))
    || case when channel = 'email' then jsonb_build_object('headers', headers) else '{}' end;
  insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
  values (org.id, message_id, channel, sender, recipient, subject, body, meta, build_sequence_message.status,
          case when build_sequence_message.status = 'sent' then now() end);
  return jsonb_build_object('organization_id', org.id, 'id', message_id, 'channel', channel, 'sender', sender,
    'recipient', recipient, 'subject', subject, 'body', body, 'meta', meta);
end $$;

ALTER FUNCTION app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text) OWNER TO svc_owner;

--
-- Name: FUNCTION build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text) IS 'Renders a sequence step''s message for a contact (variables HTML-escaped in HTML bodies), with Message-ID and one-click List-Unsubscribe headers on email, stores it queued without a delivery job, and answers it as the transports take it.';

--
-- Name: cancel_channel_enrollments(uuid, uuid[], text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select count(*) from app_private.end_enrollments(organization_id, array(
    select e.id from app_public.enrollments e
      join app_public.sequences s on s.organization_id = e.organization_id and s.id = e.sequence_id
     where e.organization_id = cancel_channel_enrollments.organization_id and e.contact_id = any(contact_ids)
       and e.status in ('active', 'paused')
       and exists (select 1 from jsonb_array_elements(s.steps) v where v->>'type' = channel)), 'cancelled', 'suppressed');
$$;

ALTER FUNCTION app_private.cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text) OWNER TO svc_owner;

--
-- Name: FUNCTION cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text) IS 'Cancels (reason suppressed) the contacts'' live enrollments in sequences with a step on the channel.';

--
-- Name: check_contact_exits(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.check_contact_exits(organization_id uuid, contact_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  r record;
  exiting text;
begin
  for r in
    select e as enrollment, s.exit_conditions from app_public.enrollments e
      join app_public.sequences s on s.organization_id = e.organization_id and s.id = e.sequence_id
     where e.organization_id = check_contact_exits.organization_id and e.contact_id = check_contact_exits.contact_id
       and e.status in ('active', 'paused') and jsonb_array_length(s.exit_conditions) > 0
  loop
    exiting := app_private.exit_condition_holding(r.enrollment, r.exit_conditions);
    if exiting is not null then
      perform app_private.end_enrollments(check_contact_exits.organization_id, array[(r.enrollment).id], 'completed',
        'exit_condition:' || exiting);
    end if;
  end loop;
end $$;

ALTER FUNCTION app_private.check_contact_exits(organization_id uuid, contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION check_contact_exits(organization_id uuid, contact_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.check_contact_exits(organization_id uuid, contact_id uuid) IS 'Completes the contact''s live enrollments whose exit conditions hold now; run when a tag or a change of the contact arrives.';

--
-- Name: claim_enrollment_messages(uuid, app_public.sequences, uuid[], text, text[], uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[], base_url text, sink_channels text[], for_run uuid DEFAULT NULL::uuid, OUT messages jsonb, OUT flight uuid[], OUT sent_count integer, OUT skipped_count integer) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
             -- the number people text this contact from (contact_sms_sender), so replies share one thread
             case when channel = 'sms' then app_private.contact_sms_sender(org_id, c.id, s.location_id) end as sms_from,
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
      select org_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else coalesce(rendered.sms_from, sms_sender) end,
             rendered.address, rendered.subject, rendered.body, rendered.meta,
             case when to_sink then 'sent' else 'queued' end, case when to_sink then now() end
        from rendered
    ), sink as (
      insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
      select org_id, rendered.message_id, channel, case when channel = 'email' then 'no-reply@' || domain else coalesce(rendered.sms_from, sms_sender) end,
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
               'sender', case when channel = 'email' then 'no-reply@' || domain else coalesce(rendered.sms_from, sms_sender) end,
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

ALTER FUNCTION app_private.claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[], base_url text, sink_channels text[], for_run uuid, OUT messages jsonb, OUT flight uuid[], OUT sent_count integer, OUT skipped_count integer) OWNER TO svc_owner;

--
-- Name: FUNCTION claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[], base_url text, sink_channels text[], for_run uuid, OUT messages jsonb, OUT flight uuid[], OUT sent_count integer, OUT skipped_count integer); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[], base_url text, sink_channels text[], for_run uuid, OUT messages jsonb, OUT flight uuid[], OUT sent_count integer, OUT skipped_count integer) IS 'Claims the locked, active enrollments of one sequence at their steps set-based with the rules of sequence_step_claim (refusals skipped, messages rendered and written, sink sends recorded; rare cases through sequence_step_claim itself); answers the messages for the transport, the enrollments they hold, and counts sent and skipped.';

--
-- Name: end_enrollments(uuid, uuid[], text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text) RETURNS SETOF app_public.enrollments
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text) OWNER TO svc_owner;

--
-- Name: FUNCTION end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text) IS 'Ends the live enrollments listed (cancelled, completed or failed, with a reason) and logs the event; returns those it ended.';

--
-- Name: end_enrollments_set(uuid, uuid[], text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.end_enrollments_set(organization_id uuid, enrollment_ids uuid[], status text, reason text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  n int;
begin
  if status not in ('cancelled', 'completed', 'failed') then
    raise exception 'end_enrollments_set: % is not an end status', status;
  end if;
  if coalesce(cardinality(enrollment_ids), 0) = 0 then
    return 0;
  end if;
  perform set_config('svc.enrollment_counts', 'batched', true);
  with live as (
    select x.id, x.sequence_id, x.status from (
      select y.id, y.sequence_id, y.status from app_public.enrollments y
       where y.organization_id = end_enrollments_set.organization_id and y.id = any(enrollment_ids)
      offset 0) x
     where x.status in ('active', 'paused')
  ), ended as (
    update app_public.enrollments e
       set status = end_enrollments_set.status, end_reason = end_enrollments_set.reason, next_step_due_at = null,
           next_run_at = null, paused_at = null, updated_at = now()
      from live
     where e.organization_id = end_enrollments_set.organization_id and e.id = live.id
    returning e.organization_id, e.id, e.sequence_id, e.current_step_key, live.status as was
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    select ended.organization_id, ended.id, end_enrollments_set.status, ended.current_step_key, end_enrollments_set.reason from ended
  ), counted as (
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select ended.organization_id, ended.sequence_id, t.status, sum(t.n)
      from ended cross join lateral (values (ended.was, -1), (end_enrollments_set.status, 1)) t(status, n)
     group by ended.organization_id, ended.sequence_id, t.status
  )
  select count(*) into n from ended;
  perform set_config('svc.enrollment_counts', '', true);
  if n > 0 and random() < 1.0 / 32 then
    perform app_private.fold_enrollment_counts(s.organization_id, s.sequence_id)
       from (select distinct e.organization_id, e.sequence_id from app_public.enrollments e
              where e.organization_id = end_enrollments_set.organization_id and e.id = any(enrollment_ids)) s;
  end if;
  return n;
end $$;

ALTER FUNCTION app_private.end_enrollments_set(organization_id uuid, enrollment_ids uuid[], status text, reason text) OWNER TO svc_owner;

--
-- Name: FUNCTION end_enrollments_set(organization_id uuid, enrollment_ids uuid[], status text, reason text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.end_enrollments_set(organization_id uuid, enrollment_ids uuid[], status text, reason text) IS 'Ends the live enrollments listed (cancelled, completed or failed, with a reason), set-based, with their events; answers how many.';

--
-- Name: enroll_by_trigger(uuid, uuid, uuid, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text, entry_event text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_by_trigger.organization_id and x.id = enroll_by_trigger.sequence_id
   for share; -- as sequences_enroll_write: a concurrent pause or change of steps is waited for
  if not found or s.status <> 'active' or s.kind <> 'automation' or jsonb_array_length(s.steps) = 0 then
    return;
  end if;
  if s.location_id is not null and not exists (
      select 1 from app_public.contact_locations cl
       where cl.organization_id = s.organization_id and cl.contact_id = enroll_by_trigger.contact_id and cl.location_id = s.location_id) then
    return;
  end if;
  perform app_private.enroll_contact(s.organization_id, s.id, enroll_by_trigger.contact_id, null, source, entry_event);
end $$;

ALTER FUNCTION app_private.enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text, entry_event text) OWNER TO svc_owner;

--
-- Name: FUNCTION enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text, entry_event text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text, entry_event text) IS 'Enrolls a contact a trigger chose, when the sequence is an active automation with steps and the contact is at its location.';

--
-- Name: enroll_contact(uuid, uuid, uuid, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text DEFAULT NULL::text, source text DEFAULT 'manual'::text, entry_event text DEFAULT NULL::text, at timestamp with time zone DEFAULT now()) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_public.sequences;
begin
  select * into s from app_public.sequences x
   where x.organization_id = enroll_contact.organization_id and x.id = enroll_contact.sequence_id
   for share;
  if not found then
    raise exception 'enroll_contact: no sequence %', enroll_contact.sequence_id;
  end if;
  return app_private.enroll_one(s, contact_id, start_step_key, source, entry_event, at);
end $$;

ALTER FUNCTION app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) IS 'Enrolls one contact through app_private.enroll_one; answers {status: enrolled|skipped, reason?, enrollment}.';

--
-- Name: enroll_contacts(uuid, uuid, uuid[], text, text, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text DEFAULT NULL::text, source text DEFAULT 'manual'::text, entry_event text DEFAULT NULL::text, at timestamp with time zone DEFAULT now()) RETURNS TABLE(out_contact_id uuid, out_enrolled boolean, out_enrollment_id uuid)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text, source text, entry_event text, at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text, source text, entry_event text, at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text, source text, entry_event text, at timestamp with time zone) IS 'Enrolls contacts (the one core of every way in, set-based): enrollment on the first or given step, due at + delay, run in the send window, enrolled event; step jobs added at once for a set due within the sweep horizon, else from the sweep (one contact due within it kicks it); a contact already live answers its enrollment (not enrolled).';

--
-- Name: enroll_one(app_public.sequences, uuid, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.enroll_one(s app_public.sequences, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.enroll_one(s app_public.sequences, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION enroll_one(s app_public.sequences, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.enroll_one(s app_public.sequences, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) IS 'Enrolls one contact in the sequence row given: one insert answering the enrollment, or the live one (skipped, already_enrolled); its enrolled event, count and first step''s work as enroll_contacts does for a set.';

--
-- Name: enrollment_start(app_public.sequences, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.enrollment_start(s app_public.sequences, start_step_key text, at timestamp with time zone, OUT idx integer, OUT step jsonb, OUT due timestamp with time zone, OUT run_at timestamp with time zone) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if start_step_key is null then
    idx := 0;
  else
    select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o)
     where t.v->>'step_key' = start_step_key limit 1;
  end if;
  step := s.steps->idx;
  if step is not null then
    due := app_hidden.step_due(s.organization_id, s.send_schedule_id, step, at);
    run_at := app_hidden.sequence_next_run(s.organization_id, s.send_schedule_id, due);
  end if;
end $$;

ALTER FUNCTION app_private.enrollment_start(s app_public.sequences, start_step_key text, at timestamp with time zone, OUT idx integer, OUT step jsonb, OUT due timestamp with time zone, OUT run_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: enrollments_made(uuid, uuid, uuid[], text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.enrollments_made(organization_id uuid, sequence_id uuid, ids uuid[], step_key text, run_at timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.enrollments_made(organization_id uuid, sequence_id uuid, ids uuid[], step_key text, run_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: event_subscribers(text, jsonb, boolean, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.event_subscribers(event text, fields jsonb, count_filter boolean, contact_id uuid) RETURNS uuid[]
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  answers numeric := case jsonb_typeof(fields->'user_message_count') when 'number' then (fields->>'user_message_count')::numeric end;
begin
  return array(
    select s.id from app_private.event_subscriptions s
     where s.organization_id = app_hidden.current_org_id() and s.event = event_subscribers.event
       and (not count_filter or s.assessment_audience is null
            or (s.assessment_audience = 'started' and answers > 0)
            or (s.assessment_audience = 'never_started' and answers = 0))
       and (s.location_id is null or exists (
             select 1 from app_public.contact_locations cl
              where cl.organization_id = s.organization_id and cl.contact_id = event_subscribers.contact_id
                and cl.location_id = s.location_id))
     order by s.id);
end $$;

ALTER FUNCTION app_private.event_subscribers(event text, fields jsonb, count_filter boolean, contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION event_subscribers(event text, fields jsonb, count_filter boolean, contact_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.event_subscribers(event text, fields jsonb, count_filter boolean, contact_id uuid) IS 'Subscriptions of the current organization to an event that can take this contact (a location-bound one only a contact linked to its location); with count_filter, those whose assessment_audience the fields'' user_message_count meets.';

--
-- Name: exit_condition_holding(app_public.enrollments, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.exit_condition_holding(e app_public.enrollments, exits jsonb) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  x jsonb;
  hook text;
  held boolean;
begin
  for x in select value from jsonb_array_elements(coalesce(exits, '[]')) loop
    if x->>'type' = 'replied' then
      if exists (select 1 from app_public.enrollment_events v
                  where v.organization_id = e.organization_id and v.enrollment_id = e.id and v.type = 'replied') then
        return 'replied';
      end if;
    elsif x->>'type' = 'tag_added' then
      if exists (select 1 from app_public.contact_tags ct join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                  where ct.organization_id = e.organization_id and ct.contact_id = e.contact_id
                    and t.name = (x->>'tag')::citext and ct.created_at >= e.created_at) then
        return 'tag_added';
      end if;
    elsif x->>'type' = 'stage_changed' then
      if exists (select 1 from app_public.contacts c
                  where c.organization_id = e.organization_id and c.id = e.contact_id
                    and c.stage_id::text = x->>'stage_id' and c.stage_changed_at >= e.created_at) then
        return 'stage_changed';
      end if;
    elsif x->>'type' = 'condition' then
      if app_hidden.condition_holds(e.organization_id, e.contact_id, e.id, x->'condition') then
        return 'condition';
      end if;
    else
      -- an exit type another area added: its row names the function that tells (a catalog name,
      -- never input, so the statement is built from the catalog only)
      select format('select %I.%I($1, $2)', n.nspname, p.proname) into hook
        from app_private.sequence_exit_types t
        join pg_catalog.pg_proc p on p.oid = t.holds
        join pg_catalog.pg_namespace n on n.oid = p.pronamespace
       where t.type = x->>'type';
      if hook is not null then
        execute hook into held using e, x;
        if held then
          return x->>'type';
        end if;
      end if;
    end if;
  end loop;
  return null;
end $_$;

ALTER FUNCTION app_private.exit_condition_holding(e app_public.enrollments, exits jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION exit_condition_holding(e app_public.enrollments, exits jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.exit_condition_holding(e app_public.enrollments, exits jsonb) IS 'The type of the first exit condition that holds for the enrollment now (replied, tag_added, stage_changed, condition), or NULL.';

--
-- Name: fold_enrollment_counts(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.fold_enrollment_counts(organization_id uuid, sequence_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not pg_try_advisory_xact_lock(hashtextextended('enrollment_counts:' || organization_id || ':' || sequence_id, 0)) then
    return;
  end if;
  with gone as (
    delete from app_private.enrollment_counts c
     where c.organization_id = fold_enrollment_counts.organization_id and c.sequence_id = fold_enrollment_counts.sequence_id
    returning c.status, c.n
  )
  insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
  select fold_enrollment_counts.organization_id, fold_enrollment_counts.sequence_id, gone.status, sum(gone.n)
    from gone group by gone.status having sum(gone.n) <> 0;
end $$;

ALTER FUNCTION app_private.fold_enrollment_counts(organization_id uuid, sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION fold_enrollment_counts(organization_id uuid, sequence_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.fold_enrollment_counts(organization_id uuid, sequence_id uuid) IS 'Folds the delta rows of a sequence''s enrollment counts into one row per status (skipped while another fold of it runs).';

--
-- Name: kick_step_sweep(uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.kick_step_sweep(organization_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform pg_advisory_xact_lock_shared(7613, app_hidden.sequence_sweep_lock_key(kick_step_sweep.organization_id));
  if not exists (select 1 from graphile_worker._private_jobs j
                  where j.key = 'sequence_step_sweep:' || kick_step_sweep.organization_id and j.locked_at is null
                    and j.attempts < j.max_attempts) then
    perform graphile_worker.add_job('sequence_step_sweep', json_build_object('organization_id', kick_step_sweep.organization_id),
      job_key => 'sequence_step_sweep:' || kick_step_sweep.organization_id);
  end if;
end $$;

ALTER FUNCTION app_private.kick_step_sweep(organization_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION kick_step_sweep(organization_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.kick_step_sweep(organization_id uuid) IS 'Makes sure the organization has a sequence_step_sweep job waiting to run now (one for a burst of writers).';

--
-- Name: new_unsubscribe_token(uuid, text, uuid, uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.new_unsubscribe_token(organization_id uuid, email text, contact_id uuid, enrollment_id uuid, message_id uuid) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  token text := rtrim(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=');
begin
  insert into app_private.unsubscribe_tokens (token_hash, organization_id, email, contact_id, enrollment_id, message_id)
  values (sha256(convert_to(token, 'UTF8')), organization_id, lower(email), contact_id, enrollment_id, message_id);
  return token;
end $$;

ALTER FUNCTION app_private.new_unsubscribe_token(organization_id uuid, email text, contact_id uuid, enrollment_id uuid, message_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION new_unsubscribe_token(organization_id uuid, email text, contact_id uuid, enrollment_id uuid, message_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.new_unsubscribe_token(organization_id uuid, email text, contact_id uuid, enrollment_id uuid, message_id uuid) IS 'A new unsubscribe token for an address (random, only its hash kept); answers the token for the URL.';

--
-- Name: record_enrollment_messages(uuid, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.record_enrollment_messages(org_id uuid, results jsonb, OUT sent_count integer, OUT failed_count integer) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
     -- a temporary refusal (not marked permanent) is retried, not recorded: app_private.delivery_retry_later
     where x->>'error' is null or coalesce((x->>'permanent')::boolean, false)
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
  -- the temporary refusals: the step run waits (retrying) and the message goes to the delivery
  -- queue, which retries it on the retry schedule and settles the step when it ends
  perform app_private.delivery_retry_later(org_id, (x->>'enrollment_id')::uuid, x->>'step_key', (x->>'message_id')::uuid, x->>'error')
     from jsonb_array_elements(results) x
    where x->>'error' is not null and not coalesce((x->>'permanent')::boolean, false);
end $$;

ALTER FUNCTION app_private.record_enrollment_messages(org_id uuid, results jsonb, OUT sent_count integer, OUT failed_count integer) OWNER TO svc_owner;

--
-- Name: FUNCTION record_enrollment_messages(org_id uuid, results jsonb, OUT sent_count integer, OUT failed_count integer); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.record_enrollment_messages(org_id uuid, results jsonb, OUT sent_count integer, OUT failed_count integer) IS 'Transport answers for messages of one organization recorded set-based (step runs still sending with that message, messages, events; the provider''s id kept), the enrollments still on the step moved on; answers counts sent and failed.';

--
-- Name: schedule_enrollment_steps(uuid, uuid[]); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  specs graphile_worker.job_spec[];
begin
  specs := array(
    select row('sequence_step',
               json_build_object('organization_id', e.organization_id, 'enrollment_id', e.id, 'step_key', e.current_step_key),
               null, e.next_run_at, null, 'sequence_step:' || e.id, null, null)::graphile_worker.job_spec
      from (select x.* from unnest(enrollment_ids) as i(id)
              join app_public.enrollments x on x.organization_id = schedule_enrollment_steps.organization_id and x.id = i.id
            offset 0) e   -- the fence keeps the status test out of the lookup, so only the primary key fits it
     where e.status = 'active' and e.current_step_key is not null and e.next_run_at is not null
       and (e.next_run_at <= now() + app_hidden.sequence_sweep_horizon()
            or exists (select 1 from graphile_worker._private_jobs j where j.key = 'sequence_step:' || e.id and j.locked_at is null)));
  if cardinality(specs) = 0 then
    return 0;
  end if;
  return (select count(*)::int from graphile_worker.add_jobs(specs, false));
end $$;

ALTER FUNCTION app_private.schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]) OWNER TO svc_owner;

--
-- Name: FUNCTION schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]) IS 'Moves the waiting sequence_step job of each listed active enrollment to its next_run_at, or adds it when it runs within the sweep horizon; later steps get theirs from sequence_step_sweep. Job key sequence_step:<id>.';

--
-- Name: sequence_step_claim(uuid, uuid, text, text, text[]); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[] DEFAULT '{}'::text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
    -- Its message is being retried by the delivery queue, which moves the enrollment on once the
    -- message is sent or refused for good (app_private.delivery_settle)
    if run.status = 'retrying' then
      return jsonb_build_object('action', 'none');
    end if;
    -- Claimed under five minutes ago: its job may still be waiting for the transport (a resume
    -- scheduled a second job for the enrollment meanwhile). The transports give up well within
    -- that (SMTP 20 s idle, HTTP 15 s), so look again once it has passed.
    if run.status = 'sending' and run.updated_at > now() - interval '5 minutes' then
      update app_public.enrollments x set next_run_at = run.updated_at + interval '5 minutes'
       where x.organization_id = e.organization_id and x.id = e.id;
      perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id]);
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

ALTER FUNCTION app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[]); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[]) IS 'First transaction of a sequence step: checks, exits, waits, skips (with reason) or claims the message (step run sending); a step run found sending becomes unknown; on a channel of sink_channels the message is stored and recorded at once. Answers {action: none|done|send, message?}.';

--
-- Name: sequence_step_record(uuid, uuid, text, uuid, text, boolean); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text, sink boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  e app_public.enrollments;
  ok boolean := sequence_step_record.error is null;
begin
  perform set_config('synchronous_commit', 'off', true);
  select * into e from app_public.enrollments x
   where x.organization_id = sequence_step_record.organization_id and x.id = sequence_step_record.enrollment_id
     for update;
  update app_public.step_runs r
     set status = case when ok then 'sent' else 'failed' end, reason = left(sequence_step_record.error, 500), updated_at = now()
   where r.organization_id = sequence_step_record.organization_id and r.enrollment_id = sequence_step_record.enrollment_id
     and r.step_key = sequence_step_record.step_key and r.message_id = sequence_step_record.message_id and r.status = 'sending';
  if not found then
    return; -- recorded already (unknown, by a job that thought this one dead)
  end if;
  update app_private.outgoing_messages m
     set status = case when ok then 'sent' else 'failed' end, sent_at = case when ok then now() end,
         error = left(sequence_step_record.error, 1000)
   where m.organization_id = sequence_step_record.organization_id and m.id = sequence_step_record.message_id;
  if sink and ok then
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    select m.organization_id, m.id, m.channel, m.sender, m.recipient, m.subject, m.body, m.meta
      from app_private.outgoing_messages m
     where m.organization_id = sequence_step_record.organization_id and m.id = sequence_step_record.message_id
    on conflict do nothing;
  end if;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
  values (sequence_step_record.organization_id, sequence_step_record.enrollment_id,
          case when ok then 'sent' else 'failed' end, sequence_step_record.step_key, sequence_step_record.message_id,
          case when not ok then 'transport_error' end);
  if e.status = 'active' and e.current_step_key = sequence_step_record.step_key then
    perform app_private.advance_enrollment(e.organization_id, e.id);
  end if;
end $$;

ALTER FUNCTION app_private.sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text, sink boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text, sink boolean); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text, sink boolean) IS 'Second transaction of a sequence step: records sent or failed (step run, message, event; with sink, the outbox row) and moves the enrollment on. Commits without waiting for the disk: a lost record leaves the run sending, later unknown.';

--
-- Name: sequence_steps_claim(jsonb, text, text[]); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sequence_steps_claim(steps jsonb, base_url text, sink_channels text[] DEFAULT '{}'::text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.sequence_steps_claim(steps jsonb, base_url text, sink_channels text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_steps_claim(steps jsonb, base_url text, sink_channels text[]); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sequence_steps_claim(steps jsonb, base_url text, sink_channels text[]) IS 'First transaction of a job''s sequence steps, set-based: each step as sequence_step_claim decides it (waits, exits, skips, sink sends done; messages claimed sending), per (organization, sequence) through claim_enrollment_messages; answers [{organization_id, enrollment_id, step_key, message}] for the transport.';

--
-- Name: sequence_steps_record(jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sequence_steps_record(results jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.sequence_steps_record(results jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_steps_record(results jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sequence_steps_record(results jsonb) IS 'Second transaction of a job''s sequence steps: the transport''s answers recorded set-based per organization (record_enrollment_messages). Commits without waiting for the disk.';

--
-- Name: sequence_steps_take(integer); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sequence_steps_take(size integer) RETURNS TABLE(organization_id uuid, enrollment_id uuid, step_key text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET enable_bitmapscan TO 'off'
    SET enable_sort TO 'off'
    AS $$
begin
  -- the next due sequence_step jobs in graphile-worker's own order (priority, run_at), that no
  -- worker holds (graphile_worker.complete_jobs's rule); one a worker is locking at this moment
  -- is left to it, and one that failed before (or is flagged to run alone, having failed when
  -- taken) keeps its attempts and backoff
  return query
  delete from graphile_worker._private_jobs j
   where j.id in (select k.id from graphile_worker._private_jobs k
                   where k.is_available and k.attempts = 0 and k.flags is null and k.job_queue_id is null and k.run_at <= now()
                     and k.task_id = (select t.id from graphile_worker._private_tasks t where t.identifier = 'sequence_step')
                   order by k.priority, k.run_at
                   limit least(greatest(size, 0), 100)
                     for update of k skip locked)
     and j.locked_at is null
  returning (j.payload->>'organization_id')::uuid, (j.payload->>'enrollment_id')::uuid, j.payload->>'step_key';
end $$;

ALTER FUNCTION app_private.sequence_steps_take(size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION sequence_steps_take(size integer); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sequence_steps_take(size integer) IS 'Takes the next `size` (at most 100) due sequence_step jobs no worker holds off the queue, for the caller to run now; answers their payloads. A step the caller does not run is queued again by the sweep.';

--
-- Name: sweep_enrollment_steps(uuid, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sweep_enrollment_steps(organization_id uuid DEFAULT NULL::uuid, until timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  upto timestamptz := coalesce(until, now() + app_hidden.sequence_sweep_horizon());
  specs graphile_worker.job_spec[];
begin
  if organization_id is not null then
    -- every request that saw this organization's sweep job waiting has committed once this lock
    -- is granted, and the statement below (a new snapshot) sees its enrollments. Held to the end
    -- of this transaction (a lock taken and let go at once would stay taken were the statement
    -- cancelled in between): requests kicking meanwhile wait for this sweep, milliseconds.
    perform pg_advisory_xact_lock(7613, app_hidden.sequence_sweep_lock_key(sweep_enrollment_steps.organization_id));
  end if;
  specs := array(
    select row('sequence_step',
               json_build_object('organization_id', e.organization_id, 'enrollment_id', e.id, 'step_key', e.current_step_key),
               null, e.next_run_at, null, 'sequence_step:' || e.id, null, null)::graphile_worker.job_spec
      from app_public.organizations o
     cross join lateral (
       select x.organization_id, x.id, x.current_step_key, x.next_run_at from app_public.enrollments x
        where x.organization_id = o.id and x.status = 'active' and x.next_run_at <= upto and x.current_step_key is not null
          and not exists (select 1 from graphile_worker._private_jobs j where j.key = 'sequence_step:' || x.id)
          for share of x skip locked) e
     where sweep_enrollment_steps.organization_id is null or o.id = sweep_enrollment_steps.organization_id);
  if cardinality(specs) = 0 then
    return 0;
  end if;
  return (select count(*)::int from graphile_worker.add_jobs(specs, false));
end $$;

ALTER FUNCTION app_private.sweep_enrollment_steps(organization_id uuid, until timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION sweep_enrollment_steps(organization_id uuid, until timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sweep_enrollment_steps(organization_id uuid, until timestamp with time zone) IS 'Adds the sequence_step job (key sequence_step:<id>, at next_run_at) of each active enrollment that runs by `until` (default now + the sweep horizon) and has none; one organization or all. Answers how many it added.';

--
-- Name: tg_enrollments__count_rows(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_enrollments__count_rows() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s record;
begin
  if tg_op = 'INSERT' then
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select r.organization_id, r.sequence_id, r.status, count(*) from new_rows r group by 1, 2, 3;
    for s in select distinct r.organization_id, r.sequence_id from new_rows r loop
      if random() < 1.0 / 32 then perform app_private.fold_enrollment_counts(s.organization_id, s.sequence_id); end if;
    end loop;
  else
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select r.organization_id, r.sequence_id, r.status, -count(*) from old_rows r group by 1, 2, 3;
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_enrollments__count_rows() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_enrollments__count_rows(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_enrollments__count_rows() IS 'Statement trigger of app_public.enrollments: counts the inserted (or deleted) rows per sequence and status in app_private.enrollment_counts.';

--
-- Name: tg_enrollments__count_status(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_enrollments__count_status() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
  values (old.organization_id, old.sequence_id, old.status, -1), (new.organization_id, new.sequence_id, new.status, 1);
  if random() < 1.0 / 32 then perform app_private.fold_enrollment_counts(new.organization_id, new.sequence_id); end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_enrollments__count_status() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_enrollments__count_status(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_enrollments__count_status() IS 'Row trigger of app_public.enrollments on a change of status (or sequence): moves one from the old count to the new.';

--
-- Name: tg_enrollments__webhooks(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_enrollments__webhooks() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not app_private.webhook_wanted(new.organization_id, 'enrollment.completed') then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, 'enrollment.completed', new.updated_at, jsonb_build_object(
    'id', new.id, 'sequence_id', new.sequence_id, 'contact_id', new.contact_id, 'status', new.status,
    'enrolled_at', new.created_at, 'completed_at', new.updated_at));
  return null;
end $$;

ALTER FUNCTION app_private.tg_enrollments__webhooks() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_enrollments__webhooks(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_enrollments__webhooks() IS 'enrollment.completed when an enrollment completes its sequence.';

--
-- Name: tg_sequences__subscriptions(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_sequences__subscriptions() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  wanted text := case when new.status = 'active' and new.kind = 'automation' and new.trigger->>'type' = 'event'
                       and coalesce(new.trigger->>'event', '') ~ '^[a-z][a-z0-9_]{0,99}$' then new.trigger->>'event' end;
  audience text := case when new.trigger->>'event' = 'assessment_abandoned'
                         and new.trigger->>'assessmentAudience' in ('started', 'never_started') then new.trigger->>'assessmentAudience' end;
begin
  delete from app_private.event_subscriptions es
   where es.organization_id = new.organization_id and es.subscriber_kind = 'sequence' and es.subscriber_id = new.id
     and es.event is distinct from wanted;
  if wanted is not null then
    insert into app_private.event_subscriptions (organization_id, event, subscriber_kind, subscriber_id, assessment_audience,
                                                 location_id)
    values (new.organization_id, wanted, 'sequence', new.id, audience, new.location_id)
    on conflict (organization_id, event, subscriber_kind, subscriber_id)
    do update set assessment_audience = excluded.assessment_audience, location_id = excluded.location_id;
  end if;
  return null;
end $_$;

ALTER FUNCTION app_private.tg_sequences__subscriptions() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_sequences__subscriptions(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_sequences__subscriptions() IS 'Keeps the sequence''s row of app_private.event_subscriptions: present while it is an active automation with an event trigger.';

--
-- Name: tg_sequences__unsubscribe(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_sequences__unsubscribe() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  delete from app_private.event_subscriptions es
   where es.organization_id = old.organization_id and es.subscriber_kind = 'sequence' and es.subscriber_id = old.id;
  return null;
end $$;

ALTER FUNCTION app_private.tg_sequences__unsubscribe() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_sequences__unsubscribe(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_sequences__unsubscribe() IS 'Drops the subscription of a deleted sequence.';

--
-- Name: sequences_activate(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_activate(sequence_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
begin
  return app_hidden.sequence_json(app_hidden.sequence_activate(app_hidden.sequence_for(sequence_id, true)));
end $$;

ALTER FUNCTION app_public.sequences_activate(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_activate(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_activate(sequence_id uuid) IS 'sequences_activate: inactive to active, or 400 sequence_activation_blocked with every blocker; active stays as it is.';

--
-- Name: sequences_analytics(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_analytics(sequence_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences := app_hidden.sequence_for_read(sequence_id);
  steps jsonb;
  statuses jsonb;
  replied bigint;
begin
  with runs as (
    select r.step_key, r.status, count(*) as n,
           -- handed over, then reported failed by the provider: sent, and failed too
           count(*) filter (where r.status <> 'failed' and r.message_id is not null and exists (
             select 1 from app_public.enrollment_events v
              where v.organization_id = org and v.message_id = r.message_id and v.type = 'failed')) as reported_failed
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
           'failed', coalesce((select sum(case when runs.status = 'failed' then n else reported_failed end) from runs
                                where runs.step_key = st.step ->> 'step_key'), 0),
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

ALTER FUNCTION app_public.sequences_analytics(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_analytics(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_analytics(sequence_id uuid) IS 'sequences_analytics: per-step counts in step order (sent, delivered, bounced, opened, clicked, replied, skipped, failed: refused or reported failed, unknown), the rollup (enrollments by status; messages sent, delivered, bounced; enrollments that replied) over the enrollments the credential sees, and email_delivery_reporting (not_applicable without an email step; NULL: the transport decides).';

--
-- Name: sequences_cancel_enrollment(uuid, uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION app_public.sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid) IS 'sequences_cancel_enrollment: cancels a live enrollment (with its cancelled event); an ended one is answered unchanged. 404 out of reach; 403 for a manager on an organization-wide sequence.';

--
-- Name: sequences_cancel_schedule_run(uuid, uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_cancel_schedule_run(sequence_id uuid, run_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  r app_public.broadcast_runs;
  n int;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = s.organization_id and x.sequence_id = s.id and x.id = run_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Run not found');
  end if;
  if r.status = 'cancelled' then
    return jsonb_build_object('run_id', r.id, 'status', 'cancelled', 'cancelled', r.cancelled);
  end if;
  if r.status <> 'sending' then
    perform app_hidden.raise_error(409, 'run_finished',
      format('The run has ended (%s): nothing is left to cancel', r.status));
  end if;
  n := app_hidden.broadcast_cancel_runs(s.id, r.id);
  return jsonb_build_object('run_id', r.id, 'status', 'cancelled', 'cancelled', n);
end $$;

ALTER FUNCTION app_public.sequences_cancel_schedule_run(sequence_id uuid, run_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_cancel_schedule_run(sequence_id uuid, run_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_cancel_schedule_run(sequence_id uuid, run_id uuid) IS 'sequences_cancel_schedule_run: the run''s unsent enrollments cancelled; answers {run_id, status, cancelled}. 409 run_finished.';

--
-- Name: sequences_capabilities(); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_capabilities() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'kinds', jsonb_build_array('automation', 'broadcast'),
    'step_types', jsonb_build_array(
      jsonb_build_object('type', 'email', 'fields', jsonb_build_array('subject', 'body'),
        'description', 'Sends an email: subject and body with {{variable}} placeholders; values are HTML-escaped in the body.'),
      jsonb_build_object('type', 'sms', 'fields', jsonb_build_array('body'),
        'description', 'Sends an SMS: body with {{variable}} placeholders.'),
      jsonb_build_object('type', 'wait', 'fields', jsonb_build_array(),
        'description', 'Sends nothing: only its delay passes.')),
    'delay', jsonb_build_object('units', jsonb_build_array('minutes', 'hours', 'days'), 'min', 0,
      'max', app_hidden.sequence_limits()->'delay_max',
      'description', 'One unit, {"days": 2}: counted from the previous step''s send (from enrollment for the first step), '
        || 'then moved forward into the send window.'),
    'limits', app_hidden.sequence_limits() - 'delay_max',
    'trigger_types', (select jsonb_agg(t.type) from app_hidden.sequence_trigger_types() t),
    'exit_condition_types', (select jsonb_agg(t.type) from app_hidden.sequence_exit_types() t),
    'activation_blockers', jsonb_build_array('no_steps', 'missing_sending_domain', 'missing_sms_number', 'empty_content',
      'unknown_variable', 'unknown_step_key', 'no_send_schedule', 'audience_missing', 'audience_archived', 'trigger_missing'),
    'template', jsonb_build_object('placeholder', '{{name}}', 'with_default', '{{name|default text}}',
      'description', 'Names from sequences_list_variables; the default is used when the value is empty. Nothing in a '
        || 'template is evaluated; an unknown name or a malformed {{ blocks activation (unknown_variable).'))
$$;

ALTER FUNCTION app_public.sequences_capabilities() OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_capabilities(); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_capabilities() IS 'sequences_capabilities: kinds, step types, delay units and bounds, limits.';

--
-- Name: sequences_create(jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_create(body jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  k text := coalesce(body->>'kind', 'automation');
  loc uuid;
  sched uuid;
  aud uuid;
  new_steps jsonb;
  new_edges jsonb;
  s app_public.sequences;
begin
  if body ? 'is_active' and body->'is_active' = 'true' then
    perform app_hidden.sequence_bad('body.is_active', 'a sequence is created inactive: create it, then call sequences_activate');
  end if;
  if k not in ('automation', 'broadcast') then
    perform app_hidden.sequence_bad('body.kind', 'expected automation or broadcast');
  end if;
  if jsonb_typeof(body->'name') is distinct from 'string' or length(btrim(body->>'name')) not between 1 and 200 then
    perform app_hidden.sequence_bad('body.name', 'a name of 1 to 200 characters');
  end if;
  loc := nullif(body->>'location_id', '')::uuid;
  sched := nullif(body->>'send_schedule_id', '')::uuid;
  perform app_hidden.sequence_check_location(loc);
  if k = 'broadcast' and body->'trigger' is not null and body->'trigger' <> 'null' then
    perform app_hidden.sequence_bad('body.trigger', 'a broadcast has no trigger: it sends to its audience when its schedule fires');
  end if;
  if k = 'automation' and body->'audience' is not null and body->'audience' <> 'null' then
    perform app_hidden.sequence_bad('body.audience', 'only a broadcast has an audience; an automation has a trigger');
  end if;
  if k = 'automation' then
    perform app_hidden.sequence_check_trigger(org, body->'trigger', 'body.trigger');
  end if;
  new_steps := app_hidden.sequence_check_steps(coalesce(body->'steps', '[]'), 'body.steps');
  new_edges := app_hidden.sequence_check_edges(org, coalesce(body->'edges', '[]'), new_steps, 'body.edges');
  perform app_hidden.sequence_check_exits(org, coalesce(body->'exit_conditions', '[]'), 'body.exit_conditions');
  perform app_hidden.sequence_check_send_schedule(sched);
  aud := app_hidden.sequence_audience_id(body->'audience');
  insert into app_public.sequences (organization_id, kind, name, location_id, send_schedule_id, audience_id, trigger,
                                    steps, edges, exit_conditions, created_by)
  values (org, k, btrim(body->>'name'), loc, sched, aud, nullif(body->'trigger', 'null'), new_steps, new_edges,
          coalesce(body->'exit_conditions', '[]'), app_hidden.current_user_id())
  returning * into s;
  return app_hidden.sequence_json(s);
end $$;

ALTER FUNCTION app_public.sequences_create(body jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_create(body jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_create(body jsonb) IS 'sequences_create: an inactive draft (is_active true is 400); 404 for an unknown audience, location or send schedule; a manager gives one of its own locations.';

--
-- Name: sequences_duplicate(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_duplicate(sequence_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, true);
  c app_public.sequences;
begin
  insert into app_public.sequences (organization_id, kind, name, location_id, send_schedule_id, audience_id, trigger,
                                    steps, edges, exit_conditions, created_by)
  values (s.organization_id, s.kind, left(s.name, 193) || ' (copy)', s.location_id, s.send_schedule_id, s.audience_id,
          s.trigger, s.steps, s.edges, s.exit_conditions, app_hidden.current_user_id())
  returning * into c;
  return app_hidden.sequence_json(c);
end $$;

ALTER FUNCTION app_public.sequences_duplicate(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_duplicate(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_duplicate(sequence_id uuid) IS 'sequences_duplicate: an inactive copy named "… (copy)".';

--
-- Name: sequences_enroll(uuid, uuid, text, text); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION app_public.sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text) IS 'sequences_enroll: enrolls one contact (by id or email) in an active automation; answers {status: enrolled|skipped, reason?, enrollment}. 400 neither/both identifiers, unknown start step, broadcast; 404 sequence or contact; 409 sequence_inactive, sequence_paused, contact_not_at_location; 403 for a manager on an organization-wide sequence.';

--
-- Name: sequences_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_get(sequence_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  return app_hidden.sequence_json(app_hidden.sequence_for(sequence_id, false));
end $$;

ALTER FUNCTION app_public.sequences_get(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_get(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_get(sequence_id uuid) IS 'sequences_get: one sequence in reach, or 404.';

--
-- Name: sequences_get_condition_vocabulary(); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_get_condition_vocabulary() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'shape', '{"field": "<field>", "op": "<op>", "value": "<value; omitted for exists and not_exists>"}'::jsonb,
    'ops', jsonb_build_array('eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'contains_any', 'exists', 'not_exists'),
    'contact_fields', (select jsonb_agg(jsonb_build_object('field', f.field, 'kind', f.kind, 'description', f.description,
        'ops', case f.kind
          when 'text' then jsonb_build_array('eq', 'neq', 'in', 'not_in', 'contains', 'contains_any', 'exists', 'not_exists')
          when 'stage' then jsonb_build_array('eq', 'neq', 'in', 'not_in', 'exists', 'not_exists')
          else jsonb_build_array('eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists') end))
      from app_hidden.condition_contact_fields() f),
    'custom_fields', coalesce((select jsonb_agg(jsonb_build_object('field', 'field_values.' || cf.key, 'kind', cf.type,
        'label', cf.label) order by cf.key)
      from app_public.custom_fields cf where cf.organization_id = app_hidden.current_org_id() and cf.enabled), '[]'),
    'event_fields', (select jsonb_agg(jsonb_build_object('field', e.field, 'description', e.description,
        'ops', jsonb_build_array('exists', 'not_exists')))
      from app_hidden.condition_event_fields() e),
    'exit_conditions', (select jsonb_agg(jsonb_build_object('type', t.type, 'description', t.description, 'fields', t.fields))
      from app_hidden.sequence_exit_types() t),
    'notes', 'Text compares case-insensitively; a date-time field takes an ISO 8601 date-time with offset, or a date to '
      || 'compare whole UTC days; in, not_in and contains_any take a list of 1 to 500 values; neq, not_in and not_exists '
      || 'hold for a contact without a value. Conditions go in edges ({from, to, condition}) and in exit_conditions '
      || '({"type": "condition", "condition": …}).')
$$;

ALTER FUNCTION app_public.sequences_get_condition_vocabulary() OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_get_condition_vocabulary(); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_get_condition_vocabulary() IS 'sequences_get_condition_vocabulary: the fields, ops and events a condition may use, and the exit-condition types.';

--
-- Name: sequences_get_enrollment(uuid, uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_get_enrollment(sequence_id uuid, enrollment_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
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

ALTER FUNCTION app_public.sequences_get_enrollment(sequence_id uuid, enrollment_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_get_enrollment(sequence_id uuid, enrollment_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_get_enrollment(sequence_id uuid, enrollment_id uuid) IS 'sequences_get_enrollment: the enrollment with its step runs (in the order they started) and its events in order of occurrence; 404 when it is not of that sequence or out of reach.';

--
-- Name: sequences_get_schedule(uuid, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_get_schedule(sequence_id uuid, page integer, "limit" integer) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
begin
  return app_hidden.broadcast_schedule_json(
    app_hidden.broadcast_schedule_of(app_hidden.broadcast_for(sequence_id, false), false), page, "limit");
end $$;

ALTER FUNCTION app_public.sequences_get_schedule(sequence_id uuid, page integer, "limit" integer) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_get_schedule(sequence_id uuid, page integer, "limit" integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_get_schedule(sequence_id uuid, page integer, "limit" integer) IS 'sequences_get_schedule: the schedule with a page of runs (newest first) and runs_total; 404 before one is set.';

--
-- Name: sequences_list(); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_list() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  -- the spec: "Returns an array of sequence summaries, newest first" (a bare array, unpaged)
  select coalesce(jsonb_agg(app_hidden.sequence_json(s) order by s.created_at desc, s.id desc), '[]')
    from app_public.sequences s
   where s.organization_id = app_hidden.current_org_id()
$$;

ALTER FUNCTION app_public.sequences_list() OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_list(); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_list() IS 'sequences_list: the sequences in reach (organization-wide ones and those of the credential''s locations), newest first.';

--
-- Name: sequences_list_enrollments(uuid, text, uuid, text, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid, email text, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
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
             || jsonb_build_object('next_send_at', coalesce(p.next_run_at, p.next_step_due_at))
             order by p.created_at desc, p.id), '[]')
      into items
      from (select * from app_public.enrollments e
             where e.organization_id = org and e.contact_id = who and e.sequence_id = s.id
               and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status)
             order by e.created_at desc, e.id limit page_size offset skip) p;
  else
    total := app_hidden.sequence_enrollment_count(s.id, status);
    select coalesce(jsonb_agg(app_hidden.enrollment_json(p)
             || jsonb_build_object('next_send_at', coalesce(p.next_run_at, p.next_step_due_at))
             order by p.created_at desc, p.id), '[]')
      into items
      from (select * from app_public.enrollments e
             where e.organization_id = org and e.sequence_id = s.id
               and (sequences_list_enrollments.status is null or e.status = sequences_list_enrollments.status)
             order by e.created_at desc, e.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;

ALTER FUNCTION app_public.sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid, email text, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid, email text, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid, email text, page integer, page_size integer) IS 'sequences_list_enrollments: one page of the sequence''s enrollments the credential sees, newest first, filtered by status and by contact (email, case-insensitive, wins over contact_id; an address no contact carries is an empty page); each with next_send_at (next_step_due_at, else next_run_at). 404 for a sequence out of reach.';

--
-- Name: sequences_list_send_schedules(integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_list_send_schedules(page integer, "limit" integer) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'items', coalesce((select jsonb_agg(jsonb_build_object('id', x.id, 'name', x.name, 'timezone', x.timezone,
        'is_default', x.is_default, 'windows', x.windows, 'created_at', x.created_at, 'updated_at', x.updated_at)
        order by x.is_default desc, x.created_at, x.id)
      from (select * from app_public.send_schedules s where s.organization_id = app_hidden.current_org_id()
             order by s.is_default desc, s.created_at, s.id
             offset (page - 1) * "limit" limit "limit") x), '[]'),
    'total', (select count(*) from app_public.send_schedules s where s.organization_id = app_hidden.current_org_id()),
    'page', page,
    'limit', "limit")
$$;

ALTER FUNCTION app_public.sequences_list_send_schedules(page integer, "limit" integer) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_list_send_schedules(page integer, "limit" integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_list_send_schedules(page integer, "limit" integer) IS 'sequences_list_send_schedules: a page of the organization''s send schedules, the default first, with their windows.';

--
-- Name: sequences_list_triggers(); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_list_triggers() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('items', coalesce(jsonb_agg(jsonb_build_object('type', t.type, 'description', t.description,
    'fields', t.fields)), '[]'))
    from app_hidden.sequence_trigger_types() t
$$;

ALTER FUNCTION app_public.sequences_list_triggers() OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_list_triggers(); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_list_triggers() IS 'sequences_list_triggers: the trigger types accepted now, with their fields.';

--
-- Name: sequences_list_variables(); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_list_variables() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('items', jsonb_agg(jsonb_build_object('name', v.name, 'description', v.description,
    'example', v.example)))
    from app_hidden.sequence_variables() v
$$;

ALTER FUNCTION app_public.sequences_list_variables() OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_list_variables(); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_list_variables() IS 'sequences_list_variables: the {{variables}} a message may use.';

--
-- Name: sequences_pause(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_pause(sequence_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, true);
begin
  if s.kind = 'broadcast' then
    perform app_hidden.sequence_bad('sequenceId', 'a broadcast is not paused: sequences_pause_schedule stops its sends');
  end if;
  if s.status = 'inactive' then
    perform app_hidden.raise_error(409, 'sequence_inactive', 'The sequence is inactive: there is nothing to pause');
  end if;
  if s.status = 'active' then
    update app_public.sequences x set status = 'paused', paused_at = now(), updated_at = now()
     where x.organization_id = s.organization_id and x.id = s.id
    returning * into s;
    perform app_hidden.sequence_move_enrollments(s.id, 'pause');
  end if;
  return app_hidden.sequence_json(s);
end $$;

ALTER FUNCTION app_public.sequences_pause(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_pause(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_pause(sequence_id uuid) IS 'sequences_pause: an active automation paused with every enrollment held; a broadcast is 400, an inactive one 409.';

--
-- Name: sequences_pause_schedule(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_pause_schedule(sequence_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  if b.status = 'scheduled' then
    update app_public.broadcast_schedules x set status = 'paused', next_fire_at = null, updated_at = now()
     where x.organization_id = b.organization_id and x.sequence_id = b.sequence_id
    returning x.* into b;
  end if;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;

ALTER FUNCTION app_public.sequences_pause_schedule(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_pause_schedule(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_pause_schedule(sequence_id uuid) IS 'sequences_pause_schedule: a scheduled broadcast paused (later occurrences do not fire; a run sending goes on); else unchanged.';

--
-- Name: sequences_resume(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_resume(sequence_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, true);
begin
  if s.status <> 'paused' then
    perform app_hidden.raise_error(409, 'sequence_not_paused', format('The sequence is %s, not paused: nothing to resume', s.status));
  end if;
  update app_public.sequences x set status = 'active', paused_at = null, updated_at = now()
   where x.organization_id = s.organization_id and x.id = s.id
  returning * into s;
  perform app_hidden.sequence_move_enrollments(s.id, 'resume');
  return app_hidden.sequence_json(s);
end $$;

ALTER FUNCTION app_public.sequences_resume(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_resume(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_resume(sequence_id uuid) IS 'sequences_resume: a paused sequence active again, each enrollment''s due times moved forward by the time held; 409 sequence_not_paused otherwise.';

--
-- Name: sequences_schedule_for_start(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_schedule_for_start(sequence_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  perform app_hidden.sequence_require_no_blockers(s);
  return jsonb_build_object('schedule_kind', b.schedule_kind, 'send_at', b.send_at, 'rrule', b.rrule, 'timezone', b.timezone,
    'ends_on', b.ends_on, 'anchor', b.anchor, 'status', b.status, 'next_fire_at', b.next_fire_at, 'now', now(),
    -- the latest run since the schedule was set (a once schedule that has fired fires no more)
    'last_fire_at', (select max(r.fire_at) from app_public.broadcast_runs r
                      where r.organization_id = b.organization_id and r.sequence_id = b.sequence_id and r.started_at >= b.anchor));
end $$;

ALTER FUNCTION app_public.sequences_schedule_for_start(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_schedule_for_start(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_schedule_for_start(sequence_id uuid) IS 'sequences_start_schedule, first statement: the broadcast''s schedule locked (404 none; 400 with blockers) and the clock.';

--
-- Name: sequences_set_schedule(uuid, jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_set_schedule(sequence_id uuid, body jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules;
  kind text := body->>'schedule_kind';
  at timestamptz;
  last_day date;
begin
  if kind = 'once' then
    at := (body->>'send_at')::timestamptz;
    if at <= now() then
      perform app_hidden.sequence_bad('body.send_at', 'must be in the future');
    end if;
  elsif kind = 'recurring' then
    -- the rule, the zone and ends_on (not in the past in the zone) are checked by the operation
    last_day := (body->>'ends_on')::date;
  else
    perform app_hidden.sequence_bad('body.schedule_kind', 'expected once or recurring');
  end if;
  perform app_hidden.broadcast_cancel_runs(s.id, null);
  insert into app_public.broadcast_schedules as x (organization_id, sequence_id, schedule_kind, send_at, rrule, timezone,
    ends_on, anchor, status, next_fire_at)
  values (s.organization_id, s.id, kind, at, case when kind = 'recurring' then body->>'rrule' end,
          body->>'timezone', last_day, now(), 'draft', null)
  on conflict on constraint broadcast_schedules_pkey do update
     set schedule_kind = excluded.schedule_kind, send_at = excluded.send_at, rrule = excluded.rrule,
         timezone = excluded.timezone, ends_on = excluded.ends_on, anchor = excluded.anchor, status = 'draft',
         next_fire_at = null, updated_at = now()
  returning x.* into b;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;

ALTER FUNCTION app_public.sequences_set_schedule(sequence_id uuid, body jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_set_schedule(sequence_id uuid, body jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_set_schedule(sequence_id uuid, body jsonb) IS 'sequences_set_schedule: a broadcast''s schedule saved as draft (sends nothing); runs not ended are cancelled.';

--
-- Name: sequences_start_schedule(uuid, timestamp with time zone); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_start_schedule(sequence_id uuid, next_fire_at timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.broadcast_for(sequence_id, true);
  b app_public.broadcast_schedules := app_hidden.broadcast_schedule_of(s, true);
begin
  if b.status <> 'scheduled' then
    if s.status = 'inactive' then
      perform app_hidden.sequence_activate(s);
    end if;
    update app_public.broadcast_schedules x
       set status = 'scheduled', next_fire_at = sequences_start_schedule.next_fire_at, updated_at = now()
     where x.organization_id = b.organization_id and x.sequence_id = b.sequence_id
    returning x.* into b;
    if b.next_fire_at is not null then
      perform app_hidden.broadcast_queue_fire(b.organization_id, b.sequence_id);
    end if;
  end if;
  return app_hidden.broadcast_schedule_json(b, 1, 25);
end $$;

ALTER FUNCTION app_public.sequences_start_schedule(sequence_id uuid, next_fire_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_start_schedule(sequence_id uuid, next_fire_at timestamp with time zone); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_start_schedule(sequence_id uuid, next_fire_at timestamp with time zone) IS 'sequences_start_schedule, second statement: scheduled with next_fire_at (an inactive broadcast is activated).';

--
-- Name: sequences_test_step(uuid, text, text, text, uuid, text, text[]); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text, contact_id uuid, base_url text, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  s record;
  step jsonb;
  given int := (to_email is not null)::int + (to_phone is not null)::int + (contact_id is not null)::int;
begin
  select x.id, x.location_id, x.steps into s from app_public.sequences x where x.organization_id = org and x.id = sequences_test_step.sequence_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Sequence not found');
  end if;
  if not app_hidden.current_may_write_sequence(s.location_id) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'This sequence belongs to the whole organization; a manager tests only sequences of its own locations');
  end if;
  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = sequences_test_step.step_key limit 1;
  if step is null then
    perform app_hidden.raise_error(404, 'not_found', 'Step not found');
  end if;
  if step->>'type' not in ('email', 'sms') then
    perform app_hidden.raise_error(400, 'bad_request', 'step_key: a ' || coalesce(step->>'type', 'wait') || ' step sends nothing to test');
  end if;
  if given <> 1 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: send exactly one of to_email, to_phone or contact_id');
  end if;
  if to_email is not null and step->>'type' <> 'email' then
    perform app_hidden.raise_error(400, 'bad_request', 'body.to_email: the step is an SMS step; send to_phone or contact_id');
  end if;
  if to_phone is not null and step->>'type' <> 'sms' then
    perform app_hidden.raise_error(400, 'bad_request', 'body.to_phone: the step is an email step; send to_email or contact_id');
  end if;
  if contact_id is not null
     and not exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = sequences_test_step.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return app_hidden.sequences_test_step_send(s.id, step_key, coalesce(to_email, to_phone), contact_id, base_url, sinks);
end $$;

ALTER FUNCTION app_public.sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text, contact_id uuid, base_url text, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text, contact_id uuid, base_url text, sinks text[]); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text, contact_id uuid, base_url text, sinks text[]) IS 'sequences_test_step: sends the saved email or SMS step once to to_email, to_phone or a contact (whose data fills the variables); answers {success, reason_code?, error?, message_id?}. 404 sequence, step or contact; 400 for a wait step or a recipient that does not fit the step.';

--
-- Name: sequences_update(uuid, jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.sequences_update(sequence_id uuid, patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  s app_public.sequences := app_hidden.sequence_for(sequence_id, true);
  org uuid := s.organization_id;
  loc uuid := s.location_id;
  new_steps jsonb := s.steps;
  new_edges jsonb := s.edges;
  standing text;
begin
  if patch ? 'kind' and patch->>'kind' is distinct from s.kind then
    perform app_hidden.sequence_bad('body.kind', format('a sequence''s kind is fixed at creation (this one is %s)', s.kind));
  end if;
  if patch ? 'name' and (jsonb_typeof(patch->'name') is distinct from 'string' or length(btrim(patch->>'name')) not between 1 and 200) then
    perform app_hidden.sequence_bad('body.name', 'a name of 1 to 200 characters');
  end if;
  if patch ? 'location_id' then
    loc := nullif(patch->>'location_id', '')::uuid;
    perform app_hidden.sequence_check_location(loc);
  end if;
  if patch ? 'trigger' and s.kind = 'broadcast' and patch->'trigger' <> 'null' then
    perform app_hidden.sequence_bad('body.trigger', 'a broadcast has no trigger: it sends to its audience when its schedule fires');
  end if;
  if patch ? 'audience' and s.kind = 'automation' and patch->'audience' <> 'null' then
    perform app_hidden.sequence_bad('body.audience', 'only a broadcast has an audience; an automation has a trigger');
  end if;
  if patch ? 'trigger' then
    perform app_hidden.sequence_check_trigger(org, patch->'trigger', 'body.trigger');
  end if;
  if patch ? 'steps' then
    new_steps := app_hidden.sequence_check_steps(patch->'steps', 'body.steps');
    -- a live enrollment stands on its current step: that step must stay (unless the same change
    -- deactivates the sequence, which cancels them)
    select min(e.current_step_key) into standing from app_public.enrollments e
     where e.organization_id = org and e.sequence_id = s.id and e.status in ('active', 'paused')
       and e.current_step_key is not null and patch->'is_active' is distinct from 'false'
       and not e.current_step_key = any(array(select x->>'step_key' from jsonb_array_elements(new_steps) x));
    if standing is not null then
      perform app_hidden.sequence_bad('body.steps', format('step %s has enrollments standing on it: keep a step with that '
        'step_key (or cancel those enrollments first)', standing));
    end if;
  end if;
  if patch ? 'edges' then
    new_edges := app_hidden.sequence_check_edges(org, patch->'edges', new_steps, 'body.edges');
  end if;
  if patch ? 'exit_conditions' then
    perform app_hidden.sequence_check_exits(org, patch->'exit_conditions', 'body.exit_conditions');
  end if;
  if patch ? 'send_schedule_id' then
    perform app_hidden.sequence_check_send_schedule(nullif(patch->>'send_schedule_id', '')::uuid);
  end if;

  update app_public.sequences x
     set name = case when patch ? 'name' then btrim(patch->>'name') else x.name end,
         location_id = loc,
         send_schedule_id = case when patch ? 'send_schedule_id' then nullif(patch->>'send_schedule_id', '')::uuid else x.send_schedule_id end,
         audience_id = case when patch ? 'audience' then app_hidden.sequence_audience_id(patch->'audience') else x.audience_id end,
         trigger = case when patch ? 'trigger' then nullif(patch->'trigger', 'null') else x.trigger end,
         steps = new_steps,
         edges = new_edges,
         exit_conditions = case when patch ? 'exit_conditions' then patch->'exit_conditions' else x.exit_conditions end,
         status = case when patch->'is_active' = 'false' then 'inactive' else x.status end,
         paused_at = case when patch->'is_active' = 'false' then null else x.paused_at end,
         updated_at = now()
   where x.organization_id = org and x.id = s.id
  returning * into s;

  if patch->'is_active' = 'false' then
    perform app_hidden.sequence_move_enrollments(s.id, 'deactivate');
  elsif patch->'is_active' = 'true' then
    s := app_hidden.sequence_activate(s);
  elsif s.status <> 'inactive' then
    -- a live sequence stays sendable: what would block its activation blocks the change
    perform app_hidden.sequence_require_no_blockers(s);
  end if;
  return app_hidden.sequence_json(s);
end $$;

ALTER FUNCTION app_public.sequences_update(sequence_id uuid, patch jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_update(sequence_id uuid, patch jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_update(sequence_id uuid, patch jsonb) IS 'sequences_update: changes the fields sent (steps, edges, exit_conditions whole; a step enrollments stand on stays); is_active false deactivates and cancels every live enrollment, true activates.';

--
-- Name: enrollments; Type: VIEW; Schema: app_analytics; Owner: svc_owner
--

CREATE VIEW app_analytics.enrollments WITH (security_invoker='true') AS
 SELECT e.organization_id,
    e.id,
    e.sequence_id,
    q.name AS sequence,
    q.kind AS sequence_kind,
    q.status AS sequence_status,
    q.location_id,
    e.contact_id,
    e.status,
    e.current_step_key,
    e.next_step_due_at,
    e.end_reason,
    e.source,
    e.created_at,
    e.updated_at
   FROM (app_public.enrollments e
     JOIN app_public.sequences q ON (((q.organization_id = e.organization_id) AND (q.id = e.sequence_id))));

ALTER TABLE app_analytics.enrollments OWNER TO svc_owner;

--
-- Name: VIEW enrollments; Type: COMMENT; Schema: app_analytics; Owner: svc_owner
--

COMMENT ON VIEW app_analytics.enrollments IS 'Enrollments with their sequence (name, kind, status, location).';

--
-- Name: enrollment_counts; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.enrollment_counts (
    organization_id uuid NOT NULL,
    sequence_id uuid NOT NULL,
    status text NOT NULL,
    n bigint NOT NULL
);

ALTER TABLE app_private.enrollment_counts OWNER TO svc_owner;

--
-- Name: TABLE enrollment_counts; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.enrollment_counts IS 'How many enrollments each sequence has per status, as deltas: the sum of a (sequence, status)''s rows is its count. Written by the triggers of app_public.enrollments; folded now and then by app_private.fold_enrollment_counts.';

--
-- Name: event_subscriptions; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.event_subscriptions (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    event text NOT NULL,
    subscriber_kind text NOT NULL,
    subscriber_id uuid NOT NULL,
    assessment_audience text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    location_id uuid,
    CONSTRAINT event_subscriptions_assessment_audience_check CHECK ((assessment_audience = ANY (ARRAY['started'::text, 'never_started'::text]))),
    CONSTRAINT event_subscriptions_check CHECK (((assessment_audience IS NULL) OR (event = 'assessment_abandoned'::text))),
    CONSTRAINT event_subscriptions_event_check CHECK ((event ~ '^[a-z][a-z0-9_]{0,99}$'::text)),
    CONSTRAINT event_subscriptions_subscriber_kind_check CHECK ((subscriber_kind ~ '^[a-z][a-z0-9_]{0,49}$'::text))
);

ALTER TABLE app_private.event_subscriptions OWNER TO svc_owner;

--
-- Name: TABLE event_subscriptions; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.event_subscriptions IS 'Who listens to an event of contacts_upsert: one row per (event, subscriber), written by the subscriber''s area (an active sequence with an event trigger). assessment_audience filters assessment_abandoned by fields.user_message_count.';

--
-- Name: COLUMN event_subscriptions.location_id; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.event_subscriptions.location_id IS 'The subscriber takes only contacts linked to this location (NULL: any contact of the organization).';

--
-- Name: sequence_exit_types; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.sequence_exit_types (
    type text NOT NULL,
    area text NOT NULL,
    description text NOT NULL,
    fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    "position" integer DEFAULT 100 NOT NULL,
    holds regprocedure,
    CONSTRAINT sequence_exit_types_fields_check CHECK ((jsonb_typeof(fields) = 'object'::text)),
    CONSTRAINT sequence_exit_types_type_check CHECK ((type ~ '^[a-z][a-z0-9_]{0,49}$'::text))
);

ALTER TABLE app_private.sequence_exit_types OWNER TO svc_owner;

--
-- Name: TABLE sequence_exit_types; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.sequence_exit_types IS 'The exit-condition types sequences accept, with the fields each takes; an area adds its own row when it goes live.';

--
-- Name: COLUMN sequence_exit_types.holds; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.sequence_exit_types.holds IS 'For an exit type of another area: its function (enrollment app_public.enrollments, exit jsonb) returns boolean, asked when an event arrives and before each send. NULL for the sequences'' own types, evaluated here.';

--
-- Name: sequence_trigger_types; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.sequence_trigger_types (
    type text NOT NULL,
    area text NOT NULL,
    description text NOT NULL,
    fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    "position" integer DEFAULT 100 NOT NULL,
    CONSTRAINT sequence_trigger_types_fields_check CHECK ((jsonb_typeof(fields) = 'object'::text)),
    CONSTRAINT sequence_trigger_types_type_check CHECK ((type ~ '^[a-z][a-z0-9_]{0,49}$'::text))
);

ALTER TABLE app_private.sequence_trigger_types OWNER TO svc_owner;

--
-- Name: TABLE sequence_trigger_types; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.sequence_trigger_types IS 'The trigger types sequences accept, with the fields each takes; an area adds its own row when it goes live.';

--
-- Name: enrollment_events_id_seq; Type: SEQUENCE; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.enrollment_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_public.enrollment_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: step_runs; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.step_runs (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    enrollment_id uuid NOT NULL,
    step_key text NOT NULL,
    step_type text NOT NULL,
    status text NOT NULL,
    message_id uuid,
    reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    claimed_by text DEFAULT NULLIF(current_setting('svc.worker_process'::text, true), ''::text),
    CONSTRAINT step_runs_status_check CHECK ((status = ANY (ARRAY['sending'::text, 'retrying'::text, 'sent'::text, 'skipped'::text, 'failed'::text, 'unknown'::text, 'waited'::text]))),
    CONSTRAINT step_runs_step_type_check CHECK ((step_type = ANY (ARRAY['email'::text, 'sms'::text, 'wait'::text])))
);

ALTER TABLE app_public.step_runs OWNER TO svc_owner;

--
-- Name: TABLE step_runs; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.step_runs IS 'Each (enrollment, step) the engine reached, at most once: sending while its message is with the transport, retrying while the delivery queue retries a temporary refusal, then sent, failed or unknown (the process died in between: never sent again), skipped (with reason: suppressed, opted_out, no_consent, missing_address) or waited.';

--
-- Name: COLUMN step_runs.claimed_by; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.step_runs.claimed_by IS 'The worker process (app_private.worker_processes) that claimed the step run; NULL when claimed outside a worker.';

--
-- Name: event_subscriptions event_subscriptions_organization_id_event_subscriber_kind_s_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.event_subscriptions
    ADD CONSTRAINT event_subscriptions_organization_id_event_subscriber_kind_s_key UNIQUE (organization_id, event, subscriber_kind, subscriber_id);

--
-- Name: event_subscriptions event_subscriptions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.event_subscriptions
    ADD CONSTRAINT event_subscriptions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: sequence_exit_types sequence_exit_types_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.sequence_exit_types
    ADD CONSTRAINT sequence_exit_types_pkey PRIMARY KEY (type);

--
-- Name: sequence_trigger_types sequence_trigger_types_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.sequence_trigger_types
    ADD CONSTRAINT sequence_trigger_types_pkey PRIMARY KEY (type);

--
-- Name: unsubscribe_tokens unsubscribe_tokens_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.unsubscribe_tokens
    ADD CONSTRAINT unsubscribe_tokens_pkey PRIMARY KEY (token_hash);

--
-- Name: enrollment_events enrollment_events_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.enrollment_events
    ADD CONSTRAINT enrollment_events_pkey PRIMARY KEY (organization_id, id);

--
-- Name: enrollments enrollments_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.enrollments
    ADD CONSTRAINT enrollments_pkey PRIMARY KEY (organization_id, id);

--
-- Name: send_schedules send_schedules_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.send_schedules
    ADD CONSTRAINT send_schedules_pkey PRIMARY KEY (organization_id, id);

--
-- Name: sequences sequences_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sequences
    ADD CONSTRAINT sequences_pkey PRIMARY KEY (organization_id, id);

--
-- Name: step_runs step_runs_organization_id_enrollment_id_step_key_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.step_runs
    ADD CONSTRAINT step_runs_organization_id_enrollment_id_step_key_key UNIQUE (organization_id, enrollment_id, step_key);

--
-- Name: step_runs step_runs_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.step_runs
    ADD CONSTRAINT step_runs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: enrollment_counts_by_sequence; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX enrollment_counts_by_sequence ON app_private.enrollment_counts USING btree (organization_id, sequence_id, status) INCLUDE (n);

--
-- Name: enrollment_events_by_enrollment; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX enrollment_events_by_enrollment ON app_public.enrollment_events USING btree (organization_id, enrollment_id, id);

--
-- Name: enrollment_events_once_per_message; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX enrollment_events_once_per_message ON app_public.enrollment_events USING btree (organization_id, message_id, type) WHERE (message_id IS NOT NULL);

--
-- Name: enrollments_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX enrollments_by_contact ON app_public.enrollments USING btree (organization_id, contact_id, created_at DESC, id);

--
-- Name: enrollments_by_sequence; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX enrollments_by_sequence ON app_public.enrollments USING btree (organization_id, sequence_id, created_at DESC, id);

--
-- Name: enrollments_by_sequence_status; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX enrollments_by_sequence_status ON app_public.enrollments USING btree (organization_id, sequence_id, status, created_at DESC, id);

--
-- Name: enrollments_due; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX enrollments_due ON app_public.enrollments USING btree (organization_id, next_run_at) WHERE (status = 'active'::text);

--
-- Name: enrollments_one_live; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX enrollments_one_live ON app_public.enrollments USING btree (organization_id, sequence_id, contact_id) WHERE (status = ANY (ARRAY['active'::text, 'paused'::text]));

--
-- Name: enrollments_run_pending; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX enrollments_run_pending ON app_public.enrollments USING btree (organization_id, run_id, id) WHERE ((run_id IS NOT NULL) AND (status = 'active'::text) AND (next_run_at IS NULL));

--
-- Name: send_schedules_one_default; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX send_schedules_one_default ON app_public.send_schedules USING btree (organization_id) WHERE is_default;

--
-- Name: sequences_org_created; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX sequences_org_created ON app_public.sequences USING btree (organization_id, created_at DESC, id);

--
-- Name: step_runs_sending_by_claimer; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX step_runs_sending_by_claimer ON app_public.step_runs USING btree (claimed_by) WHERE (status = 'sending'::text);

--
-- Name: enrollments _500_count_deleted; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_deleted AFTER DELETE ON app_public.enrollments REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_enrollments__count_rows();

--
-- Name: enrollments _500_count_inserted; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_inserted AFTER INSERT ON app_public.enrollments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT WHEN ((current_setting('svc.enrollment_counts'::text, true) IS DISTINCT FROM 'batched'::text)) EXECUTE FUNCTION app_private.tg_enrollments__count_rows();

--
-- Name: enrollments _500_count_status; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_status AFTER UPDATE OF status, sequence_id ON app_public.enrollments FOR EACH ROW WHEN ((((old.status IS DISTINCT FROM new.status) OR (old.sequence_id IS DISTINCT FROM new.sequence_id)) AND (current_setting('svc.enrollment_counts'::text, true) IS DISTINCT FROM 'batched'::text))) EXECUTE FUNCTION app_private.tg_enrollments__count_status();

--
-- Name: sequences _500_subscriptions; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_subscriptions AFTER INSERT OR UPDATE OF status, kind, trigger, location_id ON app_public.sequences FOR EACH ROW EXECUTE FUNCTION app_private.tg_sequences__subscriptions();

--
-- Name: sequences _500_unsubscribe; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_unsubscribe AFTER DELETE ON app_public.sequences FOR EACH ROW EXECUTE FUNCTION app_private.tg_sequences__unsubscribe();

--
-- Name: enrollments _900_webhooks; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks AFTER UPDATE OF status ON app_public.enrollments FOR EACH ROW WHEN (((new.status = 'completed'::text) AND (old.status IS DISTINCT FROM 'completed'::text))) EXECUTE FUNCTION app_private.tg_enrollments__webhooks();

--
-- Name: enrollment_counts enrollment_counts_sequence_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.enrollment_counts
    ADD CONSTRAINT enrollment_counts_sequence_fkey FOREIGN KEY (organization_id, sequence_id) REFERENCES app_public.sequences(organization_id, id) ON DELETE CASCADE;

--
-- Name: event_subscriptions event_subscriptions_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.event_subscriptions
    ADD CONSTRAINT event_subscriptions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: unsubscribe_tokens unsubscribe_tokens_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.unsubscribe_tokens
    ADD CONSTRAINT unsubscribe_tokens_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: enrollment_events enrollment_events_organization_id_enrollment_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.enrollment_events
    ADD CONSTRAINT enrollment_events_organization_id_enrollment_id_fkey FOREIGN KEY (organization_id, enrollment_id) REFERENCES app_public.enrollments(organization_id, id) ON DELETE CASCADE;

--
-- Name: enrollments enrollments_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.enrollments
    ADD CONSTRAINT enrollments_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: enrollments enrollments_organization_id_sequence_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.enrollments
    ADD CONSTRAINT enrollments_organization_id_sequence_id_fkey FOREIGN KEY (organization_id, sequence_id) REFERENCES app_public.sequences(organization_id, id) ON DELETE CASCADE;

--
-- Name: send_schedules send_schedules_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.send_schedules
    ADD CONSTRAINT send_schedules_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: sequences sequences_organization_id_audience_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sequences
    ADD CONSTRAINT sequences_organization_id_audience_id_fkey FOREIGN KEY (organization_id, audience_id) REFERENCES app_public.audiences(organization_id, id);

--
-- Name: sequences sequences_organization_id_created_by_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sequences
    ADD CONSTRAINT sequences_organization_id_created_by_fkey FOREIGN KEY (organization_id, created_by) REFERENCES app_public.people(organization_id, id);

--
-- Name: sequences sequences_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sequences
    ADD CONSTRAINT sequences_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: sequences sequences_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sequences
    ADD CONSTRAINT sequences_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id);

--
-- Name: sequences sequences_organization_id_send_schedule_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sequences
    ADD CONSTRAINT sequences_organization_id_send_schedule_id_fkey FOREIGN KEY (organization_id, send_schedule_id) REFERENCES app_public.send_schedules(organization_id, id);

--
-- Name: step_runs step_runs_organization_id_enrollment_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.step_runs
    ADD CONSTRAINT step_runs_organization_id_enrollment_id_fkey FOREIGN KEY (organization_id, enrollment_id) REFERENCES app_public.enrollments(organization_id, id) ON DELETE CASCADE;

--
-- Name: enrollment_counts; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.enrollment_counts ENABLE ROW LEVEL SECURITY;

--
-- Name: event_subscriptions; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.event_subscriptions ENABLE ROW LEVEL SECURITY;

--
-- Name: sequence_exit_types; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.sequence_exit_types ENABLE ROW LEVEL SECURITY;

--
-- Name: sequence_trigger_types; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.sequence_trigger_types ENABLE ROW LEVEL SECURITY;

--
-- Name: unsubscribe_tokens; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.unsubscribe_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: enrollment_events; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.enrollment_events ENABLE ROW LEVEL SECURITY;

--
-- Name: enrollments; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.enrollments ENABLE ROW LEVEL SECURITY;

--
-- Name: enrollments insert_with_sequence; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_with_sequence ON app_public.enrollments FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.sequences s
  WHERE ((s.organization_id = enrollments.organization_id) AND (s.id = enrollments.sequence_id) AND app_hidden.current_may_write_sequence(s.location_id))))));

--
-- Name: sequences insert_writable; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_writable ON app_public.sequences FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.current_may_write_sequence(location_id)));

--
-- Name: sequences select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.sequences FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ((location_id IS NULL) OR ( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: send_schedules select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.send_schedules FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: enrollment_events select_with_enrollment; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_enrollment ON app_public.enrollment_events FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.enrollments e
  WHERE ((e.organization_id = enrollment_events.organization_id) AND (e.id = enrollment_events.enrollment_id))))));

--
-- Name: step_runs select_with_enrollment; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_enrollment ON app_public.step_runs FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.enrollments e
  WHERE ((e.organization_id = step_runs.organization_id) AND (e.id = step_runs.enrollment_id))))));

--
-- Name: enrollments select_with_sequence; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_sequence ON app_public.enrollments FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.sequences s
  WHERE ((s.organization_id = enrollments.organization_id) AND (s.id = enrollments.sequence_id)))) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = enrollments.organization_id) AND (c.id = enrollments.contact_id))))));

--
-- Name: send_schedules; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.send_schedules ENABLE ROW LEVEL SECURITY;

--
-- Name: sequences; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.sequences ENABLE ROW LEVEL SECURITY;

--
-- Name: step_runs; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.step_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: enrollments update_with_sequence; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_with_sequence ON app_public.enrollments FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.sequences s
  WHERE ((s.organization_id = enrollments.organization_id) AND (s.id = enrollments.sequence_id) AND app_hidden.current_may_write_sequence(s.location_id)))))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: sequences update_writable; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_writable ON app_public.sequences FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.current_may_write_sequence(location_id))) WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.current_may_write_sequence(location_id)));

--
-- Name: TABLE sequences; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.sequences TO svc_request;
GRANT SELECT ON TABLE app_public.sequences TO svc_worker;
GRANT SELECT ON TABLE app_public.sequences TO svc_analyst;

--
-- Name: COLUMN sequences.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.kind; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(kind) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.name; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(name),UPDATE(name) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.location_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(location_id),UPDATE(location_id) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.send_schedule_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(send_schedule_id),UPDATE(send_schedule_id) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.audience_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(audience_id),UPDATE(audience_id) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.trigger; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(trigger),UPDATE(trigger) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.steps; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(steps),UPDATE(steps) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.edges; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(edges),UPDATE(edges) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.exit_conditions; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(exit_conditions),UPDATE(exit_conditions) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.status; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(status) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.paused_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(paused_at) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.created_by; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(created_by) ON TABLE app_public.sequences TO svc_request;

--
-- Name: COLUMN sequences.updated_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(updated_at) ON TABLE app_public.sequences TO svc_request;

--
-- Name: FUNCTION cancel_enrollment(enrollment_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.cancel_enrollment(enrollment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.cancel_enrollment(enrollment_id uuid) TO svc_request;

--
-- Name: FUNCTION condition_compare(kind text, have text, op text, vals jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.condition_compare(kind text, have text, op text, vals jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.condition_compare(kind text, have text, op text, vals jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.condition_compare(kind text, have text, op text, vals jsonb) TO svc_worker;

--
-- Name: FUNCTION condition_compare_safe(kind text, have text, op text, vals jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.condition_compare_safe(kind text, have text, op text, vals jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.condition_compare_safe(kind text, have text, op text, vals jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.condition_compare_safe(kind text, have text, op text, vals jsonb) TO svc_worker;

--
-- Name: FUNCTION condition_contact_fields(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.condition_contact_fields() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.condition_contact_fields() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.condition_contact_fields() TO svc_worker;

--
-- Name: FUNCTION condition_event_fields(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.condition_event_fields() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.condition_event_fields() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.condition_event_fields() TO svc_worker;

--
-- Name: FUNCTION condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid, condition jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid, condition jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid, condition jsonb) TO svc_worker;

--
-- Name: FUNCTION condition_problem(organization_id uuid, condition jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.condition_problem(organization_id uuid, condition jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.condition_problem(organization_id uuid, condition jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.condition_problem(organization_id uuid, condition jsonb) TO svc_worker;

--
-- Name: FUNCTION condition_valid(condition jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.condition_valid(condition jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.condition_valid(condition jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.condition_valid(condition jsonb) TO svc_worker;

--
-- Name: FUNCTION current_may_write_sequence(location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_may_write_sequence(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_may_write_sequence(location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_may_write_sequence(location_id uuid) TO svc_worker;

--
-- Name: TABLE enrollment_events; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.enrollment_events TO svc_request;
GRANT SELECT ON TABLE app_public.enrollment_events TO svc_worker;
GRANT SELECT ON TABLE app_public.enrollment_events TO svc_analyst;

--
-- Name: FUNCTION enrollment_event_json(v app_public.enrollment_events); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.enrollment_event_json(v app_public.enrollment_events) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.enrollment_event_json(v app_public.enrollment_events) TO svc_request;

--
-- Name: TABLE enrollments; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.enrollments TO svc_request;
GRANT SELECT ON TABLE app_public.enrollments TO svc_worker;
GRANT SELECT ON TABLE app_public.enrollments TO svc_analyst;

--
-- Name: COLUMN enrollments.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.sequence_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(sequence_id) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.contact_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(contact_id) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.status; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(status),UPDATE(status) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.current_step_index; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(current_step_index),UPDATE(current_step_index) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.current_step_key; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(current_step_key),UPDATE(current_step_key) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.next_step_due_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(next_step_due_at),UPDATE(next_step_due_at) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.next_run_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(next_run_at),UPDATE(next_run_at) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.paused_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(paused_at) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.end_reason; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(end_reason) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.source; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(source) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: COLUMN enrollments.updated_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(updated_at) ON TABLE app_public.enrollments TO svc_request;

--
-- Name: FUNCTION enrollment_json(e app_public.enrollments); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.enrollment_json(e app_public.enrollments) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.enrollment_json(e app_public.enrollments) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.enrollment_json(e app_public.enrollments) TO svc_worker;

--
-- Name: FUNCTION next_send_time(timezone text, windows jsonb, at timestamp with time zone); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) TO svc_worker;

--
-- Name: FUNCTION render_template(template text, vars jsonb, html boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) TO svc_worker;

--
-- Name: FUNCTION send_windows_valid(windows jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.send_windows_valid(windows jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.send_windows_valid(windows jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.send_windows_valid(windows jsonb) TO svc_worker;

--
-- Name: FUNCTION sequence_activate(s app_public.sequences); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_activate(s app_public.sequences) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_activate(s app_public.sequences) TO svc_request;

--
-- Name: FUNCTION sequence_audience_id(audience jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_audience_id(audience jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_audience_id(audience jsonb) TO svc_request;

--
-- Name: FUNCTION sequence_bad(at text, message text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_bad(at text, message text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_bad(at text, message text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_bad(at text, message text) TO svc_worker;

--
-- Name: FUNCTION sequence_blockers(s app_public.sequences); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_blockers(s app_public.sequences) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_blockers(s app_public.sequences) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_blockers(s app_public.sequences) TO svc_worker;

--
-- Name: FUNCTION sequence_check_edges(organization_id uuid, edges jsonb, steps jsonb, at text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_check_edges(organization_id uuid, edges jsonb, steps jsonb, at text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_check_edges(organization_id uuid, edges jsonb, steps jsonb, at text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_check_edges(organization_id uuid, edges jsonb, steps jsonb, at text) TO svc_worker;

--
-- Name: FUNCTION sequence_check_exits(organization_id uuid, exits jsonb, at text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_check_exits(organization_id uuid, exits jsonb, at text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_check_exits(organization_id uuid, exits jsonb, at text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_check_exits(organization_id uuid, exits jsonb, at text) TO svc_worker;

--
-- Name: FUNCTION sequence_check_location(location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_check_location(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_check_location(location_id uuid) TO svc_request;

--
-- Name: FUNCTION sequence_check_send_schedule(send_schedule_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_check_send_schedule(send_schedule_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_check_send_schedule(send_schedule_id uuid) TO svc_request;

--
-- Name: FUNCTION sequence_check_steps(steps jsonb, at text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_check_steps(steps jsonb, at text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_check_steps(steps jsonb, at text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_check_steps(steps jsonb, at text) TO svc_worker;

--
-- Name: FUNCTION sequence_check_trigger(organization_id uuid, trigger jsonb, at text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_check_trigger(organization_id uuid, trigger jsonb, at text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_check_trigger(organization_id uuid, trigger jsonb, at text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_check_trigger(organization_id uuid, trigger jsonb, at text) TO svc_worker;

--
-- Name: FUNCTION sequence_enrollment_count(sequence_id uuid, status text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_enrollment_count(sequence_id uuid, status text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_enrollment_count(sequence_id uuid, status text) TO svc_request;

--
-- Name: FUNCTION sequence_enrollment_total(sequence_id uuid, status text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_enrollment_total(sequence_id uuid, status text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_enrollment_total(sequence_id uuid, status text) TO svc_request;

--
-- Name: FUNCTION sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid, page_size integer, skip bigint); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid, page_size integer, skip bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_enrollments_page(sequence_id uuid, status text, contact_id uuid, page_size integer, skip bigint) TO svc_request;

--
-- Name: FUNCTION sequence_exit_types(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_exit_types() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_exit_types() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_exit_types() TO svc_worker;

--
-- Name: FUNCTION sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) TO svc_worker;

--
-- Name: FUNCTION sequence_for(sequence_id uuid, for_write boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_for(sequence_id uuid, for_write boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_for(sequence_id uuid, for_write boolean) TO svc_request;

--
-- Name: FUNCTION sequence_for_read(sequence_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_for_read(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_for_read(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequence_json(s app_public.sequences); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_json(s app_public.sequences) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_json(s app_public.sequences) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_json(s app_public.sequences) TO svc_worker;

--
-- Name: FUNCTION sequence_limits(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_limits() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_limits() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_limits() TO svc_worker;

--
-- Name: FUNCTION sequence_message_variables(organization_id uuid, contact_id uuid, location_id uuid, unsubscribe_url text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_message_variables(organization_id uuid, contact_id uuid, location_id uuid, unsubscribe_url text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_message_variables(organization_id uuid, contact_id uuid, location_id uuid, unsubscribe_url text) TO svc_worker;

--
-- Name: FUNCTION sequence_move_enrollments(sequence_id uuid, action text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_move_enrollments(sequence_id uuid, action text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_move_enrollments(sequence_id uuid, action text) TO svc_request;

--
-- Name: FUNCTION sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamp with time zone); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamp with time zone) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_next_run(organization_id uuid, send_schedule_id uuid, due timestamp with time zone) TO svc_worker;

--
-- Name: FUNCTION sequence_require_no_blockers(s app_public.sequences); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_require_no_blockers(s app_public.sequences) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_require_no_blockers(s app_public.sequences) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_require_no_blockers(s app_public.sequences) TO svc_worker;

--
-- Name: TABLE send_schedules; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.send_schedules TO svc_request;
GRANT SELECT ON TABLE app_public.send_schedules TO svc_worker;
GRANT SELECT ON TABLE app_public.send_schedules TO svc_analyst;

--
-- Name: FUNCTION sequence_send_schedule(organization_id uuid, send_schedule_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_send_schedule(organization_id uuid, send_schedule_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_send_schedule(organization_id uuid, send_schedule_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_send_schedule(organization_id uuid, send_schedule_id uuid) TO svc_worker;

--
-- Name: FUNCTION sequence_sweep_horizon(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_sweep_horizon() FROM PUBLIC;

--
-- Name: FUNCTION sequence_sweep_lock_key(organization_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_sweep_lock_key(organization_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION sequence_trigger_types(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_trigger_types() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_trigger_types() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_trigger_types() TO svc_worker;

--
-- Name: FUNCTION sequence_variables(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequence_variables() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequence_variables() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.sequence_variables() TO svc_worker;

--
-- Name: FUNCTION sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequences_enroll_write(sequence_id uuid, contact_id uuid, start_step_key text) TO svc_request;

--
-- Name: FUNCTION sequences_test_step_record(message_id uuid, error text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequences_test_step_record(message_id uuid, error text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequences_test_step_record(message_id uuid, error text) TO svc_request;

--
-- Name: FUNCTION sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid, base_url text, sinks text[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid, base_url text, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.sequences_test_step_send(sequence_id uuid, step_key text, address text, contact_id uuid, base_url text, sinks text[]) TO svc_request;

--
-- Name: FUNCTION step_delay(step jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.step_delay(step jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.step_delay(step jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.step_delay(step jsonb) TO svc_worker;

--
-- Name: FUNCTION step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamp with time zone); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamp with time zone) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.step_due(organization_id uuid, send_schedule_id uuid, step jsonb, at timestamp with time zone) TO svc_worker;

--
-- Name: FUNCTION template_unknown_variables(template text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.template_unknown_variables(template text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.template_unknown_variables(template text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.template_unknown_variables(template text) TO svc_worker;

--
-- Name: FUNCTION unsubscribe_confirm(token text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.unsubscribe_confirm(token text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.unsubscribe_confirm(token text) TO svc_request;

--
-- Name: FUNCTION unsubscribe_lookup(token text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.unsubscribe_lookup(token text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.unsubscribe_lookup(token text) TO svc_request;

--
-- Name: FUNCTION unsubscribe_token_row(token text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.unsubscribe_token_row(token text) FROM PUBLIC;

--
-- Name: FUNCTION advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text) FROM PUBLIC;

--
-- Name: FUNCTION cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text) FROM PUBLIC;

--
-- Name: FUNCTION check_contact_exits(organization_id uuid, contact_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.check_contact_exits(organization_id uuid, contact_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[], base_url text, sink_channels text[], for_run uuid, OUT messages jsonb, OUT flight uuid[], OUT sent_count integer, OUT skipped_count integer); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[], base_url text, sink_channels text[], for_run uuid, OUT messages jsonb, OUT flight uuid[], OUT sent_count integer, OUT skipped_count integer) FROM PUBLIC;

--
-- Name: FUNCTION end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.end_enrollments(organization_id uuid, enrollment_ids uuid[], status text, reason text) FROM PUBLIC;

--
-- Name: FUNCTION end_enrollments_set(organization_id uuid, enrollment_ids uuid[], status text, reason text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.end_enrollments_set(organization_id uuid, enrollment_ids uuid[], status text, reason text) FROM PUBLIC;

--
-- Name: FUNCTION enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text, entry_event text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.enroll_by_trigger(organization_id uuid, sequence_id uuid, contact_id uuid, source text, entry_event text) FROM PUBLIC;

--
-- Name: FUNCTION enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text, source text, entry_event text, at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text, source text, entry_event text, at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION enroll_one(s app_public.sequences, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.enroll_one(s app_public.sequences, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION enrollment_start(s app_public.sequences, start_step_key text, at timestamp with time zone, OUT idx integer, OUT step jsonb, OUT due timestamp with time zone, OUT run_at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.enrollment_start(s app_public.sequences, start_step_key text, at timestamp with time zone, OUT idx integer, OUT step jsonb, OUT due timestamp with time zone, OUT run_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION enrollments_made(organization_id uuid, sequence_id uuid, ids uuid[], step_key text, run_at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.enrollments_made(organization_id uuid, sequence_id uuid, ids uuid[], step_key text, run_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION event_subscribers(event text, fields jsonb, count_filter boolean, contact_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.event_subscribers(event text, fields jsonb, count_filter boolean, contact_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION exit_condition_holding(e app_public.enrollments, exits jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.exit_condition_holding(e app_public.enrollments, exits jsonb) FROM PUBLIC;

--
-- Name: FUNCTION fold_enrollment_counts(organization_id uuid, sequence_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.fold_enrollment_counts(organization_id uuid, sequence_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION kick_step_sweep(organization_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.kick_step_sweep(organization_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION new_unsubscribe_token(organization_id uuid, email text, contact_id uuid, enrollment_id uuid, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.new_unsubscribe_token(organization_id uuid, email text, contact_id uuid, enrollment_id uuid, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION record_enrollment_messages(org_id uuid, results jsonb, OUT sent_count integer, OUT failed_count integer); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.record_enrollment_messages(org_id uuid, results jsonb, OUT sent_count integer, OUT failed_count integer) FROM PUBLIC;

--
-- Name: FUNCTION schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[]); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[]) FROM PUBLIC;

--
-- Name: FUNCTION sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text, sink boolean); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text, sink boolean) FROM PUBLIC;

--
-- Name: FUNCTION sequence_steps_claim(steps jsonb, base_url text, sink_channels text[]); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sequence_steps_claim(steps jsonb, base_url text, sink_channels text[]) FROM PUBLIC;

--
-- Name: FUNCTION sequence_steps_record(results jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sequence_steps_record(results jsonb) FROM PUBLIC;

--
-- Name: FUNCTION sequence_steps_take(size integer); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sequence_steps_take(size integer) FROM PUBLIC;

--
-- Name: FUNCTION sweep_enrollment_steps(organization_id uuid, until timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sweep_enrollment_steps(organization_id uuid, until timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION tg_enrollments__count_rows(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_enrollments__count_rows() FROM PUBLIC;

--
-- Name: FUNCTION tg_enrollments__count_status(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_enrollments__count_status() FROM PUBLIC;

--
-- Name: FUNCTION tg_enrollments__webhooks(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_enrollments__webhooks() FROM PUBLIC;

--
-- Name: FUNCTION tg_sequences__subscriptions(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_sequences__subscriptions() FROM PUBLIC;

--
-- Name: FUNCTION tg_sequences__unsubscribe(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_sequences__unsubscribe() FROM PUBLIC;

--
-- Name: FUNCTION sequences_activate(sequence_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_activate(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_activate(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_analytics(sequence_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_analytics(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_analytics(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_cancel_enrollment(sequence_id uuid, enrollment_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_cancel_schedule_run(sequence_id uuid, run_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_cancel_schedule_run(sequence_id uuid, run_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_cancel_schedule_run(sequence_id uuid, run_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_capabilities(); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_capabilities() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_capabilities() TO svc_request;

--
-- Name: FUNCTION sequences_create(body jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_create(body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_create(body jsonb) TO svc_request;

--
-- Name: FUNCTION sequences_duplicate(sequence_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_duplicate(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_duplicate(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_enroll(sequence_id uuid, contact_id uuid, email text, start_step_key text) TO svc_request;

--
-- Name: FUNCTION sequences_get(sequence_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_get(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_get(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_get_condition_vocabulary(); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_get_condition_vocabulary() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_get_condition_vocabulary() TO svc_request;

--
-- Name: FUNCTION sequences_get_enrollment(sequence_id uuid, enrollment_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_get_enrollment(sequence_id uuid, enrollment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_get_enrollment(sequence_id uuid, enrollment_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_get_schedule(sequence_id uuid, page integer, "limit" integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_get_schedule(sequence_id uuid, page integer, "limit" integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_get_schedule(sequence_id uuid, page integer, "limit" integer) TO svc_request;

--
-- Name: FUNCTION sequences_list(); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_list() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_list() TO svc_request;

--
-- Name: FUNCTION sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid, email text, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid, email text, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_list_enrollments(sequence_id uuid, status text, contact_id uuid, email text, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION sequences_list_send_schedules(page integer, "limit" integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_list_send_schedules(page integer, "limit" integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_list_send_schedules(page integer, "limit" integer) TO svc_request;

--
-- Name: FUNCTION sequences_list_triggers(); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_list_triggers() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_list_triggers() TO svc_request;

--
-- Name: FUNCTION sequences_list_variables(); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_list_variables() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_list_variables() TO svc_request;

--
-- Name: FUNCTION sequences_pause(sequence_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_pause(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_pause(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_pause_schedule(sequence_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_pause_schedule(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_pause_schedule(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_resume(sequence_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_resume(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_resume(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_schedule_for_start(sequence_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_schedule_for_start(sequence_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_schedule_for_start(sequence_id uuid) TO svc_request;

--
-- Name: FUNCTION sequences_set_schedule(sequence_id uuid, body jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_set_schedule(sequence_id uuid, body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_set_schedule(sequence_id uuid, body jsonb) TO svc_request;

--
-- Name: FUNCTION sequences_start_schedule(sequence_id uuid, next_fire_at timestamp with time zone); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_start_schedule(sequence_id uuid, next_fire_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_start_schedule(sequence_id uuid, next_fire_at timestamp with time zone) TO svc_request;

--
-- Name: FUNCTION sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text, contact_id uuid, base_url text, sinks text[]); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text, contact_id uuid, base_url text, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_test_step(sequence_id uuid, step_key text, to_email text, to_phone text, contact_id uuid, base_url text, sinks text[]) TO svc_request;

--
-- Name: FUNCTION sequences_update(sequence_id uuid, patch jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.sequences_update(sequence_id uuid, patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.sequences_update(sequence_id uuid, patch jsonb) TO svc_request;

--
-- Name: TABLE enrollments; Type: ACL; Schema: app_analytics; Owner: svc_owner
--

GRANT SELECT ON TABLE app_analytics.enrollments TO svc_analyst;

--
-- Name: TABLE step_runs; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.step_runs TO svc_request;
GRANT SELECT ON TABLE app_public.step_runs TO svc_worker;
GRANT SELECT ON TABLE app_public.step_runs TO svc_analyst;
