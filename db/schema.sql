-- The schema that migrations/committed/ (000001–000016) and migrations/current/ (none) leave.
-- migrations sha256:1d97da49bf179ed0ece983be2eb23f427ce29982014b8a917369d4c355202bb9
-- Written by `npm run db:dump` (scripts/dump-db.ts): pg_dump --schema-only, normalized. Do not edit;
-- db/README.md says how to read it and when to write it again.

--
-- Name: app_analytics; Type: SCHEMA; Schema: -; Owner: svc_owner
--

CREATE SCHEMA app_analytics;

ALTER SCHEMA app_analytics OWNER TO svc_owner;

--
-- Name: SCHEMA app_analytics; Type: COMMENT; Schema: -; Owner: svc_owner
--

COMMENT ON SCHEMA app_analytics IS 'Read-only views for analysts on replicas, under the tables'' row-level policies.';

--
-- Name: app_hidden; Type: SCHEMA; Schema: -; Owner: svc_owner
--

CREATE SCHEMA app_hidden;

ALTER SCHEMA app_hidden OWNER TO svc_owner;

--
-- Name: SCHEMA app_hidden; Type: COMMENT; Schema: -; Owner: svc_owner
--

COMMENT ON SCHEMA app_hidden IS 'Helpers callable by the request role (claim readers, predicates); not data.';

--
-- Name: app_private; Type: SCHEMA; Schema: -; Owner: svc_owner
--

CREATE SCHEMA app_private;

ALTER SCHEMA app_private OWNER TO svc_owner;

--
-- Name: SCHEMA app_private; Type: COMMENT; Schema: -; Owner: svc_owner
--

COMMENT ON SCHEMA app_private IS 'Secrets and internals; no grants to request or analyst roles.';

--
-- Name: app_public; Type: SCHEMA; Schema: -; Owner: svc_owner
--

CREATE SCHEMA app_public;

ALTER SCHEMA app_public OWNER TO svc_owner;

--
-- Name: SCHEMA app_public; Type: COMMENT; Schema: -; Owner: svc_owner
--

COMMENT ON SCHEMA app_public IS 'Tenant data, visible to the request and analyst roles through row-level security.';

--
-- Name: btree_gin; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;

--
-- Name: EXTENSION btree_gin; Type: COMMENT; Schema: -; Owner:
--

COMMENT ON EXTENSION btree_gin IS 'support for indexing common datatypes in GIN';

--
-- Name: btree_gist; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public;

--
-- Name: EXTENSION btree_gist; Type: COMMENT; Schema: -; Owner:
--

COMMENT ON EXTENSION btree_gist IS 'support for indexing common datatypes in GiST';

--
-- Name: citext; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public;

--
-- Name: EXTENSION citext; Type: COMMENT; Schema: -; Owner:
--

COMMENT ON EXTENSION citext IS 'data type for case-insensitive character strings';

--
-- Name: pg_trgm; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

--
-- Name: EXTENSION pg_trgm; Type: COMMENT; Schema: -; Owner:
--

COMMENT ON EXTENSION pg_trgm IS 'text similarity measurement and index searching based on trigrams';

--
-- Name: audience_filter; Type: TYPE; Schema: app_hidden; Owner: svc_owner
--

CREATE TYPE app_hidden.audience_filter AS (
	condition text,
	texts text[],
	numbers numeric[],
	times timestamp with time zone[],
	ids uuid[],
	bools boolean[]
);

ALTER TYPE app_hidden.audience_filter OWNER TO svc_owner;

--
-- Name: TYPE audience_filter; Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON TYPE app_hidden.audience_filter IS 'An audience definition compiled by app_hidden.audience_filter(): condition over contacts c, with $1..$5 bound to the arrays.';

--
-- Name: analyst_claim(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.analyst_claim(claim text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select coalesce((
    select case claim
             when 'organization_id' then coalesce(a.organization_id::text, '')
             when 'location_ids' then case when a.location_ids is null then '*' else a.location_ids::text end
           end
      from app_private.analysts a
     where a.role_name = session_user), '')
$$;

ALTER FUNCTION app_hidden.analyst_claim(claim text) OWNER TO svc_owner;

--
-- Name: FUNCTION analyst_claim(claim text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.analyst_claim(claim text) IS 'An analyst''s claim from its own row of app_private.analysts (keyed by session_user); '''' when it has none. Read through app_hidden.session_claim.';

--
-- Name: appointments; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.appointments (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    kind text DEFAULT 'appointment'::text NOT NULL,
    location_id uuid NOT NULL,
    staff_profile_id uuid,
    calendar_id uuid,
    offering_id uuid,
    contact_id uuid,
    title text,
    description text,
    attendee_name text,
    attendee_phone text,
    attendee_email text,
    attendee_notes text,
    service_address jsonb,
    starts_at timestamp with time zone NOT NULL,
    ends_at timestamp with time zone NOT NULL,
    during tstzrange GENERATED ALWAYS AS (tstzrange(starts_at, ends_at, '[)'::text)) STORED,
    status text DEFAULT 'booked'::text NOT NULL,
    cancelled_at timestamp with time zone,
    rrule text,
    recurrence_ends_on date,
    created_by uuid,
    created_by_credential uuid,
    source text DEFAULT 'api'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT appointments_attendee_email_check CHECK ((length(attendee_email) <= 320)),
    CONSTRAINT appointments_attendee_name_check CHECK ((length(attendee_name) <= 200)),
    CONSTRAINT appointments_attendee_notes_check CHECK ((length(attendee_notes) <= 10000)),
    CONSTRAINT appointments_attendee_phone_check CHECK ((attendee_phone ~ '^\+[1-9][0-9]{6,14}$'::text)),
    CONSTRAINT appointments_check CHECK ((ends_at > starts_at)),
    CONSTRAINT appointments_check1 CHECK (((staff_profile_id IS NULL) OR (calendar_id IS NULL))),
    CONSTRAINT appointments_check2 CHECK (((kind = 'appointment'::text) = (contact_id IS NOT NULL))),
    CONSTRAINT appointments_check3 CHECK (((status = 'cancelled'::text) = (cancelled_at IS NOT NULL))),
    CONSTRAINT appointments_check4 CHECK (((rrule IS NOT NULL) OR (recurrence_ends_on IS NULL))),
    CONSTRAINT appointments_description_check CHECK ((length(description) <= 10000)),
    CONSTRAINT appointments_kind_check CHECK ((kind = ANY (ARRAY['appointment'::text, 'block'::text]))),
    CONSTRAINT appointments_rrule_check CHECK ((length(rrule) <= 500)),
    CONSTRAINT appointments_service_address_check CHECK (((service_address IS NULL) OR (jsonb_typeof(service_address) = 'object'::text))),
    CONSTRAINT appointments_source_check CHECK ((source = ANY (ARRAY['api'::text, 'fixture'::text]))),
    CONSTRAINT appointments_status_check CHECK ((status = ANY (ARRAY['booked'::text, 'cancelled'::text]))),
    CONSTRAINT appointments_title_check CHECK ((length(title) <= 500))
);

ALTER TABLE app_public.appointments OWNER TO svc_owner;

--
-- Name: TABLE appointments; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.appointments IS 'A booking (kind appointment: a contact with a team member or a calendar at a location) or a block (time off of a location or of one team member). A repeating series is one row with rrule; its occurrences are in app_public.appointment_occurrences. Cancelled rows stay, left out of lists.';

--
-- Name: COLUMN appointments.during; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.appointments.during IS 'The booked range [starts_at, ends_at): what the exclusion constraints compare.';

--
-- Name: appointment_for_change(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.appointment_for_change(appointment_id uuid) RETURNS app_public.appointments
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.appointments;
begin
  select * into a from app_public.appointments x
   where x.organization_id = app_hidden.current_org_id() and x.id = appointment_id
   for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Appointment not found');
  end if;
  if a.staff_profile_id is not null then
    if not app_hidden.current_may_book_team_member(a.staff_profile_id) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not change appointments of this team member');
    end if;
  elsif a.kind = 'block' and a.calendar_id is null then
    if app_hidden.current_role() not in ('owner', 'admin', 'organization') then
      perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner, an admin or an organization key may change a location-wide block');
    end if;
  end if;
  if a.rrule is not null then
    perform app_hidden.raise_error(409, 'recurring_series_not_supported',
      'This is a repeating series; the API cannot change one (change it where it was set up)');
  end if;
  return a;
end $$;

ALTER FUNCTION app_hidden.appointment_for_change(appointment_id uuid) OWNER TO svc_owner;

--
-- Name: appointment_json(app_public.appointments, timestamp with time zone); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object(
    'id', a.id,
    'kind', a.kind,
    'recurring', a.rrule is not null,
    'occurrence_start', case when a.rrule is not null then coalesce(occurrence_start, a.starts_at) end,
    'location_id', a.location_id,
    'team_member_id', a.staff_profile_id,
    'calendar_id', a.calendar_id,
    'offering_id', a.offering_id,
    'contact_id', a.contact_id,
    'title', a.title,
    'description', a.description,
    'attendee_name', a.attendee_name,
    'attendee_phone', a.attendee_phone,
    'attendee_email', a.attendee_email,
    'attendee_notes', a.attendee_notes,
    'service_address', a.service_address,
    'start_time', case when a.rrule is not null and occurrence_start is not null then occurrence_start else a.starts_at end,
    'end_time', case when a.rrule is not null and occurrence_start is not null
                     then occurrence_start + (a.ends_at - a.starts_at) else a.ends_at end,
    'status', a.status,
    'rrule', a.rrule,
    'recurrence_ends_on', a.recurrence_ends_on,
    'created_at', a.created_at,
    'updated_at', a.updated_at)
$$;

ALTER FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION appointment_json(a app_public.appointments, occurrence_start timestamp with time zone); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) IS 'An appointment (or one occurrence of a repeating series) as the API answers it.';

--
-- Name: contacts; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.contacts (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text,
    email public.citext,
    phone text,
    stage_id uuid,
    field_values jsonb DEFAULT '{}'::jsonb NOT NULL,
    sms_consent boolean DEFAULT false NOT NULL,
    sms_consent_at timestamp with time zone,
    total_calls integer DEFAULT 0 NOT NULL,
    notes_count integer DEFAULT 0 NOT NULL,
    first_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    email_key text GENERATED ALWAYS AS (lower((email)::text)) STORED,
    sms_consent_source text,
    stage_changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT contacts_email_length CHECK ((length((email)::text) <= 320)),
    CONSTRAINT contacts_field_values_check CHECK ((jsonb_typeof(field_values) = 'object'::text)),
    CONSTRAINT contacts_name_length CHECK ((length(name) <= 200)),
    CONSTRAINT contacts_phone_check CHECK ((phone ~ '^\+[1-9][0-9]{6,14}$'::text)),
    CONSTRAINT contacts_sms_consent_source_check CHECK (((length(sms_consent_source) >= 1) AND (length(sms_consent_source) <= 200))),
    CONSTRAINT contacts_total_calls_check CHECK ((total_calls >= 0))
);

ALTER TABLE app_public.contacts OWNER TO svc_owner;

--
-- Name: TABLE contacts; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.contacts IS 'A person the business deals with. Unique by email and by phone within the organization.';

--
-- Name: COLUMN contacts.phone; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.contacts.phone IS 'E.164, normalized before it is stored.';

--
-- Name: COLUMN contacts.field_values; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.contacts.field_values IS 'Custom field values keyed by custom_fields.key.';

--
-- Name: COLUMN contacts.sms_consent; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.contacts.sms_consent IS 'Whether the contact has given SMS consent (revoked by an SMS opt-out).';

--
-- Name: COLUMN contacts.notes_count; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.contacts.notes_count IS 'Every note, location-private ones included (maintained by trigger).';

--
-- Name: COLUMN contacts.email_key; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.contacts.email_key IS 'lower(email): what email lookups compare, because text equality (unlike citext''s) may use an index under row security.';

--
-- Name: COLUMN contacts.sms_consent_source; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.contacts.sms_consent_source IS 'How the contact gave SMS consent, as recorded by contacts_record_sms_consent.';

--
-- Name: COLUMN contacts.stage_changed_at; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.contacts.stage_changed_at IS 'When stage_id last changed (or the contact was created).';

--
-- Name: audience_contacts(jsonb, text, uuid, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.audience_contacts(definition jsonb, path text, after uuid, max_rows integer) RETURNS SETOF app_public.contacts
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  f app_hidden.audience_filter := app_hidden.audience_filter(definition, path);
  walk constant int := 5000;
  walked int := 0;
  matched int := 0;
  last uuid := after;
  r record;
  walker refcursor;
  sort_was text;
  bitmap_was text;
begin
  -- The walk reads the primary key in order. Under row security the planner expects a small
  -- fraction of rows to be visible, so for `limit walk` it would rather read the whole
  -- remainder and sort it; the plan is made when the cursor opens, so it is told, for that
  -- moment only, that sorting and bitmap scans are out.
  sort_was := current_setting('enable_sort');
  bitmap_was := current_setting('enable_bitmapscan');
  perform set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true);
  open walker for execute
    'select c, (' || f.condition || ') as selected from app_public.contacts c
      where c.organization_id = $6 and ($7::uuid is null or c.id > $7) order by c.id limit $8'
    using f.texts, f.numbers, f.times, f.ids, f.bools, app_hidden.current_org_id(), after, walk;
  perform set_config('enable_sort', sort_was, true), set_config('enable_bitmapscan', bitmap_was, true);
  loop
    fetch walker into r;
    exit when not found;
    walked := walked + 1;
    last := (r.c).id;
    if r.selected then
      return next r.c;
      matched := matched + 1;
      exit when matched >= max_rows;
    end if;
  end loop;
  close walker;
  if matched >= max_rows then
    return;
  end if;
  if walked = walk then
    return query execute
      'select c.* from app_public.contacts c where c.organization_id = $6 and c.id > $7 and ('
      || f.condition || ') order by c.id limit $8'
      using f.texts, f.numbers, f.times, f.ids, f.bools, app_hidden.current_org_id(), last, max_rows - matched;
  end if;
end $_$;

ALTER FUNCTION app_hidden.audience_contacts(definition jsonb, path text, after uuid, max_rows integer) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_contacts(definition jsonb, path text, after uuid, max_rows integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_contacts(definition jsonb, path text, after uuid, max_rows integer) IS 'A keyset page of the contacts an audience definition selects within the caller''s reach: by id, after `after`, at most max_rows.';

--
-- Name: audience_count(jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.audience_count(definition jsonb, path text) RETURNS bigint
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  f app_hidden.audience_filter := app_hidden.audience_filter(definition, path);
  n bigint;
begin
  execute 'select count(*) from app_public.contacts c where c.organization_id = $6 and (' || f.condition || ')'
    into n
    using f.texts, f.numbers, f.times, f.ids, f.bools, app_hidden.current_org_id();
  return n;
end $_$;

ALTER FUNCTION app_hidden.audience_count(definition jsonb, path text) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_count(definition jsonb, path text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_count(definition jsonb, path text) IS 'How many contacts within the caller''s reach an audience definition selects.';

--
-- Name: audience_definition_check(jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.audience_definition_check(definition jsonb, at text) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  max_rules constant int := 50;
  max_values constant int := 500;
  max_string constant int := 1000;
  max_field constant int := 200;
  max_patterns constant int := 500;
  max_pattern_chars constant int := 10000;
  ops constant text[] := array['eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'contains_any', 'exists', 'not_exists'];
  value_shape constant text := 'a string (at most 1000 characters), a number or a boolean, or for in, not_in and contains_any '
    'a list of 1 to 500 of those; objects and nested lists are not rule values';
  rules_at text := at || '.rules';
  rules jsonb;
  rule jsonb;
  rat text;
  field text;
  op text;
  v jsonb;
  listed boolean;
  too_long int;
  unknown text;
  unknowns int;
  patterns bigint := 0;
  pattern_chars bigint := 0;
begin
  if definition is null then
    return;
  end if;
  if jsonb_typeof(definition) <> 'object' then
    perform app_hidden.audience_rule_error(at, format('Invalid input: expected object, received %s', jsonb_typeof(definition)));
  end if;
  if definition ? 'match' and not coalesce(definition->'match' in ('"all"', '"any"'), false) then
    perform app_hidden.audience_rule_error(at || '.match', 'Invalid option: expected one of "all"|"any"');
  end if;
  rules := coalesce(definition->'rules', '[]');
  if jsonb_typeof(rules) <> 'array' then
    perform app_hidden.audience_rule_error(rules_at, format('Invalid input: expected array, received %s', jsonb_typeof(rules)));
  end if;
  if jsonb_array_length(rules) > max_rules then
    perform app_hidden.audience_rule_error(rules_at, format('Too big: expected array to have <=%s items', max_rules));
  end if;

  for i in 0 .. jsonb_array_length(rules) - 1 loop
    rule := rules->i;
    rat := format('%s.%s', rules_at, i);
    if jsonb_typeof(rule) <> 'object' then
      perform app_hidden.audience_rule_error(rat, format('Invalid input: expected object, received %s', jsonb_typeof(rule)));
    end if;
    field := rule->>'field';
    op := rule->>'op';
    v := rule->'value';

    if jsonb_typeof(rule->'field') is distinct from 'string' then
      perform app_hidden.audience_rule_error(rat || '.field', format('Invalid input: expected string, received %s',
        coalesce(jsonb_typeof(rule->'field'), 'undefined')));
    elsif length(field) < 1 then
      perform app_hidden.audience_rule_error(rat || '.field', 'Too small: expected string to have >=1 characters');
    elsif length(field) > max_field then
      perform app_hidden.audience_rule_error(rat || '.field', format('Too big: expected string to have <=%s characters', max_field));
    elsif field !~ '^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?$' then
      perform app_hidden.audience_rule_error(rat || '.field', 'a field name: letters, digits and underscores, or field_values.<key>');
    end if;

    if jsonb_typeof(rule->'op') is distinct from 'string' or not op = any(ops) then
      perform app_hidden.audience_rule_error(rat || '.op', 'Invalid option: expected one of '
        || (select string_agg(format('"%s"', o), '|') from unnest(ops) o));
    end if;

    if jsonb_typeof(v) = 'array' then
      if jsonb_array_length(v) > max_values
         or exists (select 1 from jsonb_array_elements(v) e where jsonb_typeof(e) not in ('string', 'number', 'boolean')) then
        perform app_hidden.audience_rule_error(rat || '.value', value_shape);
      elsif jsonb_array_length(v) = 0 then
        perform app_hidden.audience_rule_error(rat || '.value', 'Too small: expected array to have >=1 items');
      end if;
      select min(n - 1) into too_long from jsonb_array_elements(v) with ordinality e(x, n)
       where jsonb_typeof(x) = 'string' and length(x #>> '{}') > max_string;
      if too_long is not null then
        perform app_hidden.audience_rule_error(format('%s.value.%s', rat, too_long),
          format('Too big: expected string to have <=%s characters', max_string));
      end if;
    elsif jsonb_typeof(v) = 'string' and length(v #>> '{}') > max_string then
      perform app_hidden.audience_rule_error(rat || '.value', format('Too big: expected string to have <=%s characters', max_string));
    elsif v is not null and jsonb_typeof(v) not in ('string', 'number', 'boolean') then
      perform app_hidden.audience_rule_error(rat || '.value', value_shape);
    end if;

    select string_agg(format('"%s"', k), ', '), count(*) into unknown, unknowns
      from jsonb_object_keys(rule) k where k not in ('field', 'op', 'value');
    if unknown is not null then
      perform app_hidden.audience_rule_error(rat, format('Unrecognized key%s: %s', case when unknowns > 1 then 's' end, unknown));
    end if;

    listed := jsonb_typeof(v) = 'array';
    if op in ('exists', 'not_exists') then
      if v is not null then
        perform app_hidden.audience_rule_error(rat || '.value', format('omit value for %s', op));
      end if;
    elsif v is null then
      perform app_hidden.audience_rule_error(rat || '.value', format('%s needs a value', op));
    elsif (op in ('in', 'not_in', 'contains_any')) <> listed then
      perform app_hidden.audience_rule_error(rat || '.value', case when listed
        then format('%s takes one value (in, not_in and contains_any take lists)', op)
        else format('%s takes a list of 1 to %s values', op, max_values) end);
    end if;

    if op in ('contains', 'contains_any') then
      select patterns + count(*), pattern_chars + coalesce(sum(length(x #>> '{}')), 0) into patterns, pattern_chars
        from jsonb_array_elements(case when listed then v else jsonb_build_array(v) end) x;
    end if;
  end loop;

  select string_agg(format('"%s"', k), ', '), count(*) into unknown, unknowns
    from jsonb_object_keys(definition) k where k not in ('match', 'rules');
  if unknown is not null then
    perform app_hidden.audience_rule_error(at, format('Unrecognized key%s: %s', case when unknowns > 1 then 's' end, unknown));
  end if;

  if patterns > max_patterns then
    perform app_hidden.audience_rule_error(rules_at, format('the contains and contains_any rules hold %s values in all; a '
      'definition may hold at most %s, as each one is a scan of every contact''s text: shorten the contains_any lists '
      '(in, not_in and eq compare whole values and are not limited so)', patterns, max_patterns));
  end if;
  if pattern_chars > max_pattern_chars then
    perform app_hidden.audience_rule_error(rules_at, format('the values of the contains and contains_any rules have %s '
      'characters in all; a definition may have at most %s: shorten them, or use in or eq for whole values',
      pattern_chars, max_pattern_chars));
  end if;
end $_$;

ALTER FUNCTION app_hidden.audience_definition_check(definition jsonb, at text) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_definition_check(definition jsonb, at text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_definition_check(definition jsonb, at text) IS 'Raises 400 naming the part (at, at.match, at.rules.N.field|op|value) of an audience definition that breaks the spec''s limits, or at.rules when its contains/contains_any values exceed the evaluation bound (500 values, 10,000 characters).';

--
-- Name: audience_filter(jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.audience_filter(definition jsonb, path text) RETURNS app_hidden.audience_filter
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  org uuid := app_hidden.current_org_id();
  -- what the credential reads of a contact decides what its rules may test
  details boolean := app_hidden.current_sees_contact_details();
  rules jsonb := coalesce(definition->'rules', '[]');
  f app_hidden.audience_filter := row(null, '{}', '{}', '{}', '{}', '{}');
  parts text[] := '{}';
  rule jsonb;
  at text;
  field text;
  op text;
  kind text;          -- text | number | datetime | date | boolean | stage
  custom boolean;
  col text;           -- the field's typed value
  raw text;           -- the field's value as text
  folded text;        -- … lower-cased (contains)
  present text;       -- whether the contact has a value
  cf_type text;
  cf_options jsonb;
  listed boolean;     -- the value is a list (in, not_in, contains_any)
  vals jsonb;
  v jsonb;
  s text;
  vat text;
  first int;
  texts text[];
  numbers numeric[];
  bools boolean[];
  ids uuid[];
  days timestamptz[];
  instants timestamptz[];
  arr text;
  last int;
  cmp text;
  p text;
begin
  perform app_hidden.audience_definition_check(definition, regexp_replace(path, '\.rules$', ''));
  for i in 0 .. jsonb_array_length(rules) - 1 loop
    rule := rules->i;
    at := format('%s.%s', path, i);
    field := rule->>'field';
    op := rule->>'op';
    custom := false;
    cf_type := null;

    -- Refused before the field is resolved, so the answer is the same whether or not a custom
    -- field of that key exists.
    if not details and field not in ('display_name', 'email', 'phone_number') then
      perform app_hidden.audience_rule_error(at || '.field', format('%s is not a field this credential can read: a MEMBER, '
        'and a MANAGER without the contacts power, may test only display_name, email and phone_number', field));
    end if;

    case field
      -- text fields compare lower-cased: email_key is lower(email), and an E.164 phone has no letters
      when 'display_name' then kind := 'text'; col := 'lower(c.name)';
      when 'email' then kind := 'text'; col := 'c.email_key';
      when 'phone_number' then kind := 'text'; col := 'c.phone';
      when 'total_calls' then kind := 'number'; col := 'c.total_calls';
      when 'first_seen_at' then kind := 'datetime'; col := 'c.first_seen_at';
      when 'last_seen_at' then kind := 'datetime'; col := 'c.last_seen_at';
      when 'created_at' then kind := 'datetime'; col := 'c.created_at';
      when 'updated_at' then kind := 'datetime'; col := 'c.updated_at';
      when 'stage_id' then kind := 'stage'; col := 'c.stage_id';
      else
        select cf.type, cf.options into cf_type, cf_options from app_public.custom_fields cf
         where cf.organization_id = org and starts_with(field, 'field_values.')
           and cf.key = substr(field, length('field_values.') + 1) and cf.enabled;
        if not found then
          perform app_hidden.audience_rule_error(at || '.field', format('%s is not a field audiences can test: use '
            'display_name, email, phone_number, total_calls, first_seen_at, last_seen_at, created_at, updated_at, '
            'stage_id or field_values.<key> of an enabled custom field', field));
        end if;
        custom := true;
        f.texts := f.texts || substr(field, length('field_values.') + 1);
        raw := format('(c.field_values ->> $1[%s])', cardinality(f.texts));
        present := format('(c.field_values ? $1[%s])', cardinality(f.texts));
        kind := case cf_type when 'number' then 'number' when 'currency' then 'number' when 'datetime' then 'datetime'
                             when 'date' then 'date' when 'boolean' then 'boolean' else 'text' end;
        -- Plain casts: every write checks a value against its field's type
        -- (app_hidden.custom_field_value_fits), and a guard would cost as much again per row.
        -- A select field holds exactly one of its options, so it is compared exactly (below).
        col := case kind
          when 'number' then format('(c.field_values -> $1[%s])::numeric', cardinality(f.texts))
          when 'datetime' then format('(c.field_values ->> $1[%s])::timestamptz', cardinality(f.texts))
          when 'boolean' then format('(c.field_values -> $1[%s])::boolean', cardinality(f.texts))
          when 'date' then format('(%s collate "C")', raw)
          else format('lower(%s)', raw) end;
    end case;
    if custom then
      folded := format('lower(%s)', raw);
    else
      raw := col;
      folded := col;  -- the text columns are lower-cased already; contains refuses the others
      present := format('(%s is not null)', col);
    end if;

    if op in ('gt', 'gte', 'lt', 'lte') and kind not in ('number', 'datetime', 'date') then
      perform app_hidden.audience_rule_error(at || '.op', format('%s compares numbers and dates, and %s is neither '
        '(use eq, neq, in, not_in, exists or not_exists)', op, field));
    elsif op in ('contains', 'contains_any') and not (custom or kind = 'text') then
      perform app_hidden.audience_rule_error(at || '.op', format('%s matches text: it works on display_name, email, '
        'phone_number and custom fields, not on %s', op, field));
    end if;

    if op in ('exists', 'not_exists') then
      p := present;
    else
      -- the definition check has made sure a list op has a list of 1 to 500 scalars, any
      -- other op one scalar
      listed := op in ('in', 'not_in', 'contains_any');
      vals := case when listed then rule->'value' else jsonb_build_array(rule->'value') end;
      texts := '{}'; numbers := '{}'; bools := '{}'; ids := '{}'; days := '{}'; instants := '{}';
      for j in 0 .. jsonb_array_length(vals) - 1 loop
        v := vals->j;
        s := v #>> '{}';
        vat := at || '.value' || case when listed then '.' || j else '' end;
        if op in ('contains', 'contains_any') or kind = 'text' then
          texts := texts || lower(s);
        elsif kind = 'number' then
          if not (jsonb_typeof(v) = 'number'
                  or (jsonb_typeof(v) = 'string' and s ~ '^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?\s*$')) then
            perform app_hidden.audience_rule_error(vat, format('%s is a number field: give a number or a numeric string', field));
          end if;
          numbers := numbers || s::numeric;
        elsif kind = 'datetime' then
          if jsonb_typeof(v) = 'string' and s ~ '^\d{4}-\d{2}-\d{2}$' and app_hidden.is_date(s) then
            days := days || (s::date::timestamp at time zone 'UTC');
          elsif jsonb_typeof(v) = 'string' and app_hidden.is_timestamptz(s)
                and s ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$' then
            instants := instants || s::timestamptz;
          else
            perform app_hidden.audience_rule_error(vat, format('%s is a date-time field: give an ISO 8601 date (2026-01-31) '
              'or a date-time with offset (2026-01-31T09:00:00Z)', field));
          end if;
        elsif kind = 'date' then
          if not (jsonb_typeof(v) = 'string' and s ~ '^\d{4}-\d{2}-\d{2}$' and app_hidden.is_date(s)) then
            perform app_hidden.audience_rule_error(vat, format('%s is a date field: give an ISO 8601 date (2026-01-31)', field));
          end if;
          texts := texts || s;
        elsif kind = 'boolean' then
          if not (jsonb_typeof(v) = 'boolean' or (jsonb_typeof(v) = 'string' and s in ('true', 'false'))) then
            perform app_hidden.audience_rule_error(vat, format('%s is a boolean field: give true or false', field));
          end if;
          bools := bools || s::boolean;
        else
          if not (jsonb_typeof(v) = 'string' and s ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                  and exists (select 1 from app_public.pipeline_stages ps where ps.organization_id = org and ps.id = s::uuid)) then
            perform app_hidden.audience_rule_error(vat, format('%s is not a stage of the organization''s pipeline '
              '(contacts_list_stages lists them)', left(s, 100)));
          end if;
          ids := ids || s::uuid;
        end if;
      end loop;

      cmp := case op when 'gt' then '>' when 'gte' then '>=' when 'lt' then '<' when 'lte' then '<=' else '=' end;
      if op in ('contains', 'contains_any') then
        first := cardinality(f.texts) + 1;
        f.texts := f.texts || array(select app_hidden.like_anywhere(t) from unnest(texts) t);
        p := format('(%s like any ($1[%s:%s]))', folded, first, cardinality(f.texts));
      elsif kind = 'datetime' and listed then
        -- days compare the field's UTC day, date-times the instant
        first := cardinality(f.times) + 1;
        f.times := f.times || days;
        last := cardinality(f.times);
        f.times := f.times || instants;
        p := '(' || array_to_string(array[
               case when cardinality(days) > 0 then format('date_trunc(''day'', %s, ''UTC'') = any ($3[%s:%s])', col, first, last) end,
               case when cardinality(instants) > 0 then format('%s = any ($3[%s:%s])', col, last + 1, cardinality(f.times)) end],
             ' or ') || ')';
      elsif kind = 'datetime' and cardinality(days) = 1 then
        -- the day is [start, next day's start): both bounds are parameters
        f.times := f.times || days[1] || (days[1] at time zone 'UTC' + interval '1 day') at time zone 'UTC';
        first := cardinality(f.times) - 1;
        p := case op
          when 'gt' then format('(%s >= $3[%s])', col, first + 1)
          when 'gte' then format('(%s >= $3[%s])', col, first)
          when 'lt' then format('(%s < $3[%s])', col, first)
          when 'lte' then format('(%s < $3[%s])', col, first + 1)
          else format('(%1$s >= $3[%2$s] and %1$s < $3[%3$s])', col, first, first + 1) end;
      elsif cf_type = 'select' and custom then
        -- the options the values name, case-insensitively, in their stored spelling: texteq
        -- instead of lower() on every row (none named: no contact matches)
        first := cardinality(f.texts) + 1;
        f.texts := f.texts || array(select o from jsonb_array_elements_text(cf_options) o where lower(o) = any(texts));
        p := format('(%s = any ($1[%s:%s]))', raw, first, cardinality(f.texts));
      elsif field = 'total_calls' and not listed then
        -- integer bounds, so the int column is compared as it is stored (no cast per row)
        f.numbers := f.numbers || greatest(least(numbers[1], 1e18), -1e18);
        first := cardinality(f.numbers);
        p := case op
          when 'gt' then format('(c.total_calls > floor($2[%s])::bigint)', first)
          when 'gte' then format('(c.total_calls >= ceil($2[%s])::bigint)', first)
          when 'lt' then format('(c.total_calls < ceil($2[%s])::bigint)', first)
          when 'lte' then format('(c.total_calls <= floor($2[%s])::bigint)', first)
          else format('(c.total_calls = floor($2[%1$s])::bigint and floor($2[%1$s]) = $2[%1$s])', first) end;
      else
        case
          when kind = 'datetime' then arr := '$3'; first := cardinality(f.times) + 1; f.times := f.times || instants; last := cardinality(f.times);
          when kind in ('text', 'date') then arr := '$1'; first := cardinality(f.texts) + 1; f.texts := f.texts || texts; last := cardinality(f.texts);
          when kind = 'number' then arr := '$2'; first := cardinality(f.numbers) + 1; f.numbers := f.numbers || numbers; last := cardinality(f.numbers);
          when kind = 'boolean' then arr := '$5'; first := cardinality(f.bools) + 1; f.bools := f.bools || bools; last := cardinality(f.bools);
          else arr := '$4'; first := cardinality(f.ids) + 1; f.ids := f.ids || ids; last := cardinality(f.ids);
        end case;
        p := case when listed then format('(%s = any (%s[%s:%s]))', col, arr, first, last)
                  else format('(%s %s %s[%s])', col, cmp, arr, first) end;
      end if;
    end if;

    parts := parts || case when op in ('neq', 'not_in', 'not_exists') then format('(not coalesce(%s, false))', p) else p end;
  end loop;
  f.condition := coalesce(nullif(array_to_string(parts, case when definition->>'match' = 'any' then ' or ' else ' and ' end), ''), 'true');
  return f;
end $_$;

ALTER FUNCTION app_hidden.audience_filter(definition jsonb, path text) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_filter(definition jsonb, path text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_filter(definition jsonb, path text) IS 'Compiles an audience definition to a parameterized condition over app_public.contacts c (values only as $1..$5 array references); 400 naming the definition''s part to fix when it breaks a limit (app_hidden.audience_definition_check), tests a field the credential cannot read, or does not resolve.';

--
-- Name: audiences; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.audiences (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    description text,
    kind text NOT NULL,
    channel text DEFAULT 'any'::text NOT NULL,
    definition jsonb,
    exclude_opted_out boolean DEFAULT false NOT NULL,
    archived_at timestamp with time zone,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT audiences_channel_check CHECK ((channel = ANY (ARRAY['any'::text, 'email'::text, 'sms'::text]))),
    CONSTRAINT audiences_check CHECK (((kind = 'dynamic'::text) = (definition IS NOT NULL))),
    CONSTRAINT audiences_definition_check CHECK ((jsonb_typeof(definition) = 'object'::text)),
    CONSTRAINT audiences_description_check CHECK ((length(description) <= 2000)),
    CONSTRAINT audiences_kind_check CHECK ((kind = ANY (ARRAY['static'::text, 'dynamic'::text]))),
    CONSTRAINT audiences_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE app_public.audiences OWNER TO svc_owner;

--
-- Name: TABLE audiences; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.audiences IS 'A saved segment of the organization''s contacts: static (members listed in audience_members) or dynamic (definition).';

--
-- Name: COLUMN audiences.kind; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.audiences.kind IS 'static or dynamic; fixed at creation.';

--
-- Name: COLUMN audiences.channel; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.audiences.channel IS 'Which channel the audience is for (any, email, sms); applied at send, not by counts.';

--
-- Name: COLUMN audiences.definition; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.audiences.definition IS 'Dynamic audiences only: {match: all|any, rules: [{field, op, value}]}, as app_hidden.audience_filter reads it. Fields are checked for format when stored and resolved when evaluated.';

--
-- Name: COLUMN audiences.exclude_opted_out; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.audiences.exclude_opted_out IS 'Stored only: counts and member lists include opted-out contacts; a send removes them.';

--
-- Name: COLUMN audiences.archived_at; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.audiences.archived_at IS 'When the audience was archived; NULL while it is live.';

--
-- Name: audience_for(uuid, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.audience_for(audience_id uuid, for_write boolean) RETURNS app_public.audiences
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.audiences;
begin
  if for_write then
    select * into a from app_public.audiences x
     where x.organization_id = app_hidden.current_org_id() and x.id = audience_for.audience_id
       for update;
  else
    select * into a from app_public.audiences x
     where x.organization_id = app_hidden.current_org_id() and x.id = audience_for.audience_id;
  end if;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Audience not found');
  end if;
  return a;
end $$;

ALTER FUNCTION app_hidden.audience_for(audience_id uuid, for_write boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_for(audience_id uuid, for_write boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_for(audience_id uuid, for_write boolean) IS 'The organization''s audience (locked when for_write), or 404.';

--
-- Name: audience_json(app_public.audiences); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.audience_json(a app_public.audiences) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', a.id,
    'name', a.name,
    'description', a.description,
    'kind', a.kind,
    'channel', a.channel,
    'definition', a.definition,
    'exclude_opted_out', a.exclude_opted_out,
    'is_archived', a.archived_at is not null,
    'archived_at', a.archived_at,
    'created_at', a.created_at,
    'updated_at', a.updated_at)
$$;

ALTER FUNCTION app_hidden.audience_json(a app_public.audiences) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_json(a app_public.audiences); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_json(a app_public.audiences) IS 'An audience as the API shows it.';

--
-- Name: audience_rule_error(text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.audience_rule_error(at text, message text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform app_hidden.raise_error(400, 'bad_request', at || ': ' || message,
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', at, 'message', message))));
end $$;

ALTER FUNCTION app_hidden.audience_rule_error(at text, message text) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_rule_error(at text, message text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_rule_error(at text, message text) IS 'Raises 400 bad_request naming the rule part to fix (path) with an issues list.';

--
-- Name: authenticate(bytea, text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  k app_private.api_keys;
  p app_public.people;
  eff_role text;
  loc_ids uuid[];
  powers text[];
  sms_enabled boolean := true;
  records_level text := 'all';
  role_switch boolean;
  settings jsonb;
  refusal jsonb;
  oauth_client jsonb;
begin
  select * into k from app_private.api_keys where api_keys.key_hash = authenticate.key_hash;
  if not found then
    -- an OAuth access token: the grant seen as a personal key of its person
    select g.organization_id, g.id, 'personal', g.person_id, g.scopes,
           jsonb_build_object('client_id', c.client_id, 'client_name', c.client_name, 'scopes', to_jsonb(g.scopes))
      into k.organization_id, k.id, k.kind, k.created_by, k.scopes, oauth_client
      from app_private.oauth_tokens t
      join app_private.oauth_grants g on g.id = t.grant_id
      join app_private.oauth_clients c on c.client_id = g.client_id
     where t.token_hash = authenticate.key_hash and t.kind = 'access'
       and t.expires_at > now() and g.revoked_at is null;
    if not found then
      perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
    end if;
  elsif k.revoked_at is not null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;

  select * into p from app_public.people
   where organization_id = k.organization_id and id = k.created_by;

  if k.kind = 'personal' then
    select r.agent_access into role_switch from app_public.role_agent_access r
     where r.organization_id = p.organization_id and r.role = p.role;
    if p.id is null or not p.active
       or (p.role <> 'owner' and (not p.agent_access or not coalesce(role_switch, true))) then
      perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
    end if;
    eff_role := p.role;
    sms_enabled := p.sms_enabled;
    if p.role in ('manager', 'member') then
      select coalesce(array_agg(location_id order by location_id), '{}') into loc_ids
        from app_public.person_locations
       where organization_id = p.organization_id and person_id = p.id;
      records_level := case when p.role = 'member' then p.records_level else 'all' end;
      powers := case when p.role = 'manager' then p.powers else '{}' end;
    end if;
  else
    eff_role := coalesce(lower(k.role), 'organization');
    select array_agg(location_id order by location_id) into loc_ids
      from app_private.api_key_locations
     where organization_id = k.organization_id and api_key_id = k.id;
    powers := case when k.role = 'MANAGER' then k.powers else '{}' end;
    -- a Member key sends no SMS
    sms_enabled := k.role is distinct from 'MEMBER';
  end if;

  -- Every claim as the text of its setting, set from this one object and answered with it.
  settings := jsonb_build_object(
    'svc.organization_id', k.organization_id::text,
    'svc.credential_id', k.id::text,
    'svc.user_id', case when k.kind = 'personal' then p.id::text else '' end,
    'svc.role', eff_role,
    'svc.location_ids', coalesce(loc_ids::text, '*'),
    'svc.powers', coalesce(powers, '{}')::text,
    'svc.scopes', k.scopes::text,
    'svc.records_level', records_level,
    'svc.sms_enabled', sms_enabled::text);
  perform set_config(s.key, s.value, true) from jsonb_each_text(settings) s;

  refusal := app_hidden.requirement_refusal(required_scope, member_access, manager_power);
  if refusal is not null then
    perform app_hidden.raise_error((refusal->>'status')::int, refusal->>'error', refusal->>'message', refusal->'extra');
  end if;

  return jsonb_build_object(
    'organization_id', k.organization_id,
    'credential_id', k.id,
    'kind', k.kind,
    'user_id', case when k.kind = 'personal' then p.id end,
    'role', eff_role,
    'key_role', case when eff_role in ('manager', 'member') then upper(eff_role) end,
    'location_ids', to_jsonb(loc_ids),
    'powers', case when eff_role = 'manager' then to_jsonb(powers) end,
    'scopes', to_jsonb(k.scopes),
    'records_level', records_level,
    'sms_enabled', sms_enabled,
    'settings', settings
  ) || case when oauth_client is not null then jsonb_build_object('oauth_client', oauth_client) else '{}' end;
end $$;

ALTER FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) OWNER TO svc_owner;

--
-- Name: FUNCTION authenticate(key_hash bytea, required_scope text, member_access text, manager_power text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) IS 'Resolves a key hash (an API key''s, or an OAuth access token''s as a personal key of its grant''s person), sets the svc.* claims for the transaction, enforces the operation''s requirements (app_hidden.requirement_refusal), and answers the claims with the exact settings it set (settings).';

--
-- Name: authorize_internal_graphql(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.authorize_internal_graphql() RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
  -- the read scopes of the catalog (src/auth/scopes.ts), in its order
  read_scopes constant text[] := array['contacts:read', 'sequences:read', 'appointments:read',
    'conversations:read', 'calls:read', 'audiences:read', 'forms:read'];
  missing text;
begin
  select s into missing from unnest(read_scopes) with ordinality as r(s, n)
   where not (s = any(app_hidden.current_scopes()))
   order by n
   limit 1;
  if missing is not null then
    perform app_hidden.raise_error(403, 'insufficient_scope',
      format('Internal GraphQL needs every read scope; this credential lacks %s', missing),
      jsonb_build_object('required', missing));
  end if;

  if not (coalesce(app_hidden.current_role() in ('organization', 'owner', 'admin'), false)
          and app_hidden.current_reaches_all_locations()
          and app_hidden.current_records_level() = 'all'
          and coalesce(app_hidden.current_sees_contact_details(), false)
          and app_hidden.current_has_power('contacts')
          and app_hidden.current_has_power('sequences')
          and app_hidden.current_has_power('appointments')
          and app_hidden.current_has_power('staff')) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Internal GraphQL is for credentials that reach the whole organization with every field: '
      || 'an organization key without a role or location limits, or an owner''s or admin''s personal key');
  end if;
end $$;

ALTER FUNCTION app_hidden.authorize_internal_graphql() OWNER TO svc_owner;

--
-- Name: FUNCTION authorize_internal_graphql(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.authorize_internal_graphql() IS 'Raises 403 unless the current credential may use internal GraphQL over HTTP: every read scope (insufficient_scope, naming the first missing), and the whole organization, all records, contact details and every manager power (insufficient_role). Called right after app_hidden.authenticate.';

--
-- Name: authorize_mcp(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.authorize_mcp(requirements jsonb) RETURNS text[]
    LANGUAGE plpgsql STABLE
    AS $$
begin
  if not exists (select 1 from app_public.organizations o
                  where o.id = app_hidden.current_org_id() and o.mcp_enabled) then
    perform app_hidden.raise_error(404, 'not_found', 'MCP endpoint not found');
  end if;
  return array(
    select r->>'operation_id'
      from jsonb_array_elements(requirements) with ordinality as x(r, n)
     where app_hidden.requirement_refusal(r->>'scope', r->>'member_access', r->>'manager_power') is null
     order by n);
end $$;

ALTER FUNCTION app_hidden.authorize_mcp(requirements jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION authorize_mcp(requirements jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.authorize_mcp(requirements jsonb) IS 'Raises 404 while the current organization has MCP turned off; else answers the operation ids of requirements ([{operation_id, scope, member_access, manager_power}]) the current claims meet. Called right after app_hidden.authenticate.';

--
-- Name: booking_options(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.booking_options(organization_id uuid, location_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object(
    'location_id', booking_options.location_id,
    'offerings', coalesce((select jsonb_agg(jsonb_build_object('id', o.id, 'name', o.name, 'duration_minutes', o.duration_minutes)
                                            order by o.name, o.id)
                             from app_public.offerings o
                            where o.organization_id = booking_options.organization_id and o.location_id = booking_options.location_id), '[]'),
    'team_member_ids', coalesce(to_jsonb(array(select app_hidden.location_team_members(booking_options.organization_id,
                                                                                       booking_options.location_id))), '[]'))
$$;

ALTER FUNCTION app_hidden.booking_options(organization_id uuid, location_id uuid) OWNER TO svc_owner;

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

ALTER FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_cancel_runs(sequence_id uuid, run_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) IS 'Cancels the runs sending of a broadcast (or one run): a dead sender''s in_flight batch made unknown, what has not gone cancelled and counted; answers how many were cancelled.';

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
    CONSTRAINT broadcast_runs_check CHECK (((status = 'sending'::text) = (finished_at IS NULL))),
    CONSTRAINT broadcast_runs_status_check CHECK ((status = ANY (ARRAY['sending'::text, 'completed'::text, 'cancelled'::text, 'failed'::text])))
);

ALTER TABLE app_public.broadcast_runs OWNER TO svc_owner;

--
-- Name: TABLE broadcast_runs; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.broadcast_runs IS 'One fired occurrence of a broadcast schedule: its recipients (enrollments with this run_id), counts and the batch in flight.';

--
-- Name: broadcast_run_json(app_public.broadcast_runs); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.broadcast_run_json(r app_public.broadcast_runs) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('id', r.id, 'status', r.status, 'fire_at', r.fire_at, 'started_at', r.started_at,
    'finished_at', r.finished_at, 'recipients', r.recipients, 'sent', r.sent, 'skipped', r.skipped, 'failed', r.failed,
    'unknown', r.unknown, 'cancelled', r.cancelled)
$$;

ALTER FUNCTION app_hidden.broadcast_run_json(r app_public.broadcast_runs) OWNER TO svc_owner;

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
-- Name: calls; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.calls (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    contact_id uuid NOT NULL,
    location_id uuid,
    staff_profile_id uuid,
    direction text DEFAULT 'inbound'::text NOT NULL,
    status text DEFAULT 'completed'::text NOT NULL,
    from_number text,
    to_number text,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    duration_seconds integer,
    summary text,
    external_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT calls_direction_check CHECK ((direction = ANY (ARRAY['inbound'::text, 'outbound'::text]))),
    CONSTRAINT calls_duration_seconds_check CHECK (((duration_seconds >= 0) AND (duration_seconds <= 86400))),
    CONSTRAINT calls_external_id_check CHECK (((length(external_id) >= 1) AND (length(external_id) <= 200))),
    CONSTRAINT calls_from_number_check CHECK ((from_number ~ '^\+[1-9][0-9]{6,14}$'::text)),
    CONSTRAINT calls_status_check CHECK ((status = ANY (ARRAY['completed'::text, 'missed'::text, 'voicemail'::text, 'in_progress'::text, 'failed'::text]))),
    CONSTRAINT calls_summary_check CHECK ((length(summary) <= 20000)),
    CONSTRAINT calls_to_number_check CHECK ((to_number ~ '^\+[1-9][0-9]{6,14}$'::text))
);

ALTER TABLE app_public.calls OWNER TO svc_owner;

--
-- Name: TABLE calls; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.calls IS 'A phone call with a contact (taken by the assistant, or by a team member: staff_profile_id), with its transcript in app_public.call_transcript_lines. external_id is the voice platform''s call id (unique per organization).';

--
-- Name: COLUMN calls.location_id; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.calls.location_id IS 'Where it was taken; NULL: visible only to credentials that reach the whole organization.';

--
-- Name: call_json(app_public.calls); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.call_json(c app_public.calls) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object(
    'id', c.id,
    'contact_id', c.contact_id,
    'location_id', c.location_id,
    'team_member_id', c.staff_profile_id,
    'direction', c.direction,
    'status', c.status,
    'from', c.from_number,
    'to', c.to_number,
    'started_at', c.started_at,
    'duration_seconds', c.duration_seconds,
    'summary', c.summary,
    'created_at', c.created_at)
$$;

ALTER FUNCTION app_hidden.call_json(c app_public.calls) OWNER TO svc_owner;

--
-- Name: FUNCTION call_json(c app_public.calls); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.call_json(c app_public.calls) IS 'A call as calls_list and calls_get answer it (without its transcript).';

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
-- Name: chat_limits(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_limits() RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('chats_per_address', 5, 'chats_window_minutes', 10, 'messages_per_minute', 10,
    'message_max_length', 2000, 'thread_max_messages', 200)
$$;

ALTER FUNCTION app_hidden.chat_limits() OWNER TO svc_owner;

--
-- Name: FUNCTION chat_limits(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.chat_limits() IS 'Web chat limits: new chats per client address in a window, visitor messages per conversation per minute, lengths.';

--
-- Name: chat_post(uuid, uuid, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  lim jsonb := app_hidden.chat_limits();
  cv app_public.conversations := app_private.chat_session_conversation(widget_id, conversation_id, token_hash, true);
begin
  if (select count(*) from app_public.conversation_messages m
       where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.direction = 'inbound'
         and m.created_at > now() - interval '1 minute') >= (lim->>'messages_per_minute')::int then
    perform app_hidden.raise_error(429, 'rate_limited', 'Too many messages; wait a minute');
  end if;
  return jsonb_build_object('conversation_id', cv.id, 'response_mode', app_hidden.conversation_response_mode(cv))
    || app_private.chat_inbound(cv, body);
end $$;

ALTER FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) OWNER TO svc_owner;

--
-- Name: FUNCTION chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) IS 'A web chat visitor''s message into its conversation (the token''s hash opens it), the AI''s answer queued while it answers.';

--
-- Name: chat_start(uuid, text, jsonb, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  w app_public.chat_widgets;
  lim jsonb := app_hidden.chat_limits();
  v_email text := nullif(lower(visitor->>'email'), '');
  v_phone text := nullif(visitor->>'phone', '');
  v_name text := nullif(btrim(visitor->>'name'), '');
  v_contact uuid;
  cv app_public.conversations;
  sent jsonb;
begin
  select * into w from app_public.chat_widgets x where x.id = chat_start.widget_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Chat widget not found');
  end if;
  if token_hash is null or token_hash !~ '^[0-9a-f]{64}$' then
    raise exception 'chat_start: token_hash is the hex sha-256 of the visitor token';
  end if;
  if client_address is not null then
    -- one count per (organization, address) at a time: concurrent starts cannot all pass
    perform pg_advisory_xact_lock(hashtextextended(w.organization_id::text || '|chat|' || client_address, 0));
    if (select count(*) from app_private.chat_sessions s
         where s.organization_id = w.organization_id and s.client_address = chat_start.client_address
           and s.created_at > now() - make_interval(mins => (lim->>'chats_window_minutes')::int))
       >= (lim->>'chats_per_address')::int then
      perform app_hidden.raise_error(429, 'rate_limited', 'Too many new chats from this address; try again later');
    end if;
  end if;

  if v_phone is not null or v_email is not null then
    select x.contact_id into v_contact from app_private.inbound_contact(w.organization_id, w.location_id, v_phone, v_email) x;
  else
    insert into app_public.contacts (organization_id, name) values (w.organization_id, v_name) returning id into v_contact;
    if w.location_id is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id)
      values (w.organization_id, v_contact, w.location_id) on conflict do nothing;
    end if;
  end if;
  if v_name is not null then
    update app_public.contacts c set name = v_name, updated_at = now()
     where c.organization_id = w.organization_id and c.id = v_contact and c.name is null;
  end if;

  insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
  values (w.organization_id, v_contact, coalesce(w.location_id, app_private.contact_only_location(w.organization_id, v_contact)),
          'chat', null)
  returning * into cv;
  insert into app_private.chat_sessions (organization_id, conversation_id, widget_id, token_hash, client_address)
  values (w.organization_id, cv.id, w.id, token_hash, client_address);
  sent := app_private.chat_inbound(cv, body);
  return jsonb_build_object('conversation_id', cv.id, 'contact_id', v_contact, 'organization_id', w.organization_id,
    'response_mode', app_hidden.conversation_response_mode(cv)) || sent;
end $_$;

ALTER FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) OWNER TO svc_owner;

--
-- Name: FUNCTION chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) IS 'A web chat visitor starts a conversation through a widget: contact matched or created, the conversation, the visitor''s token hash, the first message and the AI''s answer queued. 404 unknown widget, 429 too many chats from the address.';

--
-- Name: chat_thread(uuid, uuid, text, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  lim jsonb := app_hidden.chat_limits();
  cv app_public.conversations := app_private.chat_session_conversation(widget_id, conversation_id, token_hash, false);
  since app_public.conversation_messages;
begin
  if after is not null then
    select * into since from app_public.conversation_messages m
     where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.id = chat_thread.after;
    if not found then
      perform app_hidden.raise_error(400, 'bad_request', 'query.after: not a message of this chat');
    end if;
  end if;
  return jsonb_build_object('conversation_id', cv.id, 'response_mode', app_hidden.conversation_response_mode(cv),
    'messages', coalesce((
      select jsonb_agg(jsonb_build_object('id', t.id,
               'from', case t.author when 'contact' then 'visitor' when 'ai' then 'assistant' when 'person' then 'staff' else 'system' end,
               'body', t.body, 'created_at', t.created_at) order by t.created_at, t.id)
        from (select m.id, m.author, m.body, m.created_at from app_public.conversation_messages m
               where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                 and (since.id is null or (m.created_at, m.id) > (since.created_at, since.id))
               order by m.created_at desc, m.id desc limit (lim->>'thread_max_messages')::int) t), '[]'));
end $$;

ALTER FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) IS 'A web chat thread as its visitor reads it (the token''s hash opens it): messages oldest first, after a message when given.';

--
-- Name: chat_widget(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.chat_widget(widget_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('id', w.id, 'organization_id', w.organization_id, 'allowed_origins', to_jsonb(w.allowed_origins),
    'greeting', w.greeting, 'name', w.name)
    from app_public.chat_widgets w where w.id = chat_widget.widget_id
$$;

ALTER FUNCTION app_hidden.chat_widget(widget_id uuid) OWNER TO svc_owner;

--
-- Name: check_custom_fields(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.check_custom_fields(field_values jsonb) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
  entry record;
  field app_public.custom_fields;
begin
  if field_values is null then
    return;
  end if;
  if jsonb_typeof(field_values) <> 'object' then
    perform app_hidden.raise_error(400, 'bad_request', 'custom_fields must be an object');
  end if;
  for entry in select key, value from jsonb_each(field_values) order by key loop
    select * into field from app_public.custom_fields f
     where f.organization_id = app_hidden.current_org_id() and f.key = entry.key and f.enabled;
    if not found then
      perform app_hidden.raise_error(400, 'bad_request',
        format('custom_fields.%s: not an enabled custom field of the organization', entry.key),
        jsonb_build_object('field', 'custom_fields.' || entry.key));
    end if;
    if jsonb_typeof(entry.value) <> 'null'
       and not app_hidden.custom_field_value_fits(field.type, field.options, entry.value) then
      perform app_hidden.raise_error(400, 'bad_request',
        format('custom_fields.%s: the value does not fit a %s field%s', entry.key, field.type,
               case when field.type = 'select' then ' (one of ' || field.options::text || ')' else '' end),
        jsonb_build_object('field', 'custom_fields.' || entry.key));
    end if;
  end loop;
end $$;

ALTER FUNCTION app_hidden.check_custom_fields(field_values jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION check_custom_fields(field_values jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.check_custom_fields(field_values jsonb) IS 'Raises 400 naming the first custom_fields key that is not an enabled field or whose value does not fit its type.';

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
-- Name: contact_card(app_public.contacts); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contact_card(c app_public.contacts) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone)
$$;

ALTER FUNCTION app_hidden.contact_card(c app_public.contacts) OWNER TO svc_owner;

--
-- Name: FUNCTION contact_card(c app_public.contacts); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contact_card(c app_public.contacts) IS 'The fields every reader of a contact may see: id, name, email, phone.';

--
-- Name: contact_for_caller(app_public.contacts); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contact_for_caller(c app_public.contacts) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select case when app_hidden.current_sees_contact_details() then app_hidden.contact_json(c)
              else app_hidden.contact_card(c) end
$$;

ALTER FUNCTION app_hidden.contact_for_caller(c app_public.contacts) OWNER TO svc_owner;

--
-- Name: FUNCTION contact_for_caller(c app_public.contacts); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contact_for_caller(c app_public.contacts) IS 'A contact in full or as a card, as the current credential may read it.';

--
-- Name: contact_for_write(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contact_for_write(contact_id uuid) RETURNS app_public.contacts
    LANGUAGE plpgsql
    AS $$
declare
  c app_public.contacts;
begin
  select * into c from app_public.contacts
   where organization_id = app_hidden.current_org_id() and id = contact_for_write.contact_id
     for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return c;
end $$;

ALTER FUNCTION app_hidden.contact_for_write(contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION contact_for_write(contact_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contact_for_write(contact_id uuid) IS 'Locks and returns a contact the credential may change; 404 when absent or out of reach.';

--
-- Name: contact_json(app_public.contacts); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contact_json(c app_public.contacts) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.contacts_json(array[c]) -> 0
$$;

ALTER FUNCTION app_hidden.contact_json(c app_public.contacts) OWNER TO svc_owner;

--
-- Name: FUNCTION contact_json(c app_public.contacts); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contact_json(c app_public.contacts) IS 'A contact read under the caller''s policies, as app_hidden.contacts_json renders it.';

--
-- Name: contact_search_text(text, public.citext, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contact_search_text(name text, email public.citext, phone text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select coalesce(name, '') || E'\n' || coalesce(email::text, '') || E'\n' || coalesce(phone, '')
$$;

ALTER FUNCTION app_hidden.contact_search_text(name text, email public.citext, phone text) OWNER TO svc_owner;

--
-- Name: FUNCTION contact_search_text(name text, email public.citext, phone text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contact_search_text(name text, email public.citext, phone text) IS 'Name, email and phone of a contact as one text: the expression of the contacts_org_search trigram index.';

--
-- Name: contact_tag_names(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contact_tag_names(contact_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  return coalesce((select jsonb_agg(t.name order by t.name)
                     from app_public.contact_tags ct
                     join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                    where ct.organization_id = app_hidden.current_org_id() and ct.contact_id = contact_tag_names.contact_id),
                  '[]');
end $$;

ALTER FUNCTION app_hidden.contact_tag_names(contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION contact_tag_names(contact_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contact_tag_names(contact_id uuid) IS 'The contact''s tag names, sorted.';

--
-- Name: contacts_json(app_public.contacts[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contacts_json(contacts app_public.contacts[]) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  reach uuid[] := app_hidden.current_location_ids();
begin
  return (
    select coalesce(jsonb_agg(jsonb_build_object('id', c.id,
        'name', c.name,
        'email', c.email,
        'phone', c.phone,
        'stage_id', c.stage_id,
        'stage', (select jsonb_build_object('id', s.id, 'name', s.name) from app_public.pipeline_stages s
                 where s.organization_id = c.organization_id and s.id = c.stage_id),
        'tags', coalesce((select jsonb_agg(t.name order by t.name) from app_public.contact_tags ct
                          join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                         where ct.organization_id = c.organization_id and ct.contact_id = c.id), '[]'),
        'custom_fields', c.field_values,
        'notes_count', c.notes_count,
        'location_ids', coalesce((select jsonb_agg(cl.location_id order by cl.location_id) from app_public.contact_locations cl
                                 where cl.organization_id = c.organization_id and cl.contact_id = c.id
                                   and (reach is null or cl.location_id = any(reach))), '[]'),
        'sms_consent', c.sms_consent,
        'sms_consent_at', c.sms_consent_at,
        'email_suppressed', c.email is not null and exists (
        select 1 from app_public.email_suppressions es where es.organization_id = c.organization_id and es.email = c.email_key),
        'sms_opted_out', c.phone is not null and exists (
        select 1 from app_public.sms_opt_outs so
         where so.organization_id = c.organization_id and so.phone = c.phone and so.ended_at is null),
        'total_calls', c.total_calls,
        'first_seen_at', c.first_seen_at,
        'last_seen_at', c.last_seen_at,
        'created_at', c.created_at,
        'updated_at', c.updated_at)
      order by c.ordinality), '[]')
      from unnest(contacts) with ordinality as c
     where c.organization_id = org);
end $$;

ALTER FUNCTION app_hidden.contacts_json(contacts app_public.contacts[]) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_json(contacts app_public.contacts[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contacts_json(contacts app_public.contacts[]) IS 'Contacts read under the caller''s policies, in order, with the fields of app_private.contact_fields (generated from it): stage, tags, custom fields, notes count, locations in reach, suppression state, and what other areas register.';

--
-- Name: contacts_matching(text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contacts_matching(pattern text, digits text) RETURNS TABLE(id uuid, name text, last_seen_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  p text[];
begin
  if digits is null then
    p := app_hidden.search_pieces(pattern);
    return query
      select c.id, c.name, c.last_seen_at from app_public.contacts c
       where app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[1]
         and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[2]
         and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[3]
         and c.organization_id = app_hidden.current_org_id()
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern);
  else
    -- A phone-like q ("555-123"): its digits are looked up by their pieces; its text, whose
    -- pieces are short runs of digits common in every phone number, whole (its trigrams
    -- include where each run starts and ends, which are rare in names and emails).
    p := app_hidden.search_pieces(digits);
    return query
      select c.id, c.name, c.last_seen_at from app_public.contacts c
       where (app_hidden.contact_search_text(c.name, c.email, c.phone) ilike pattern
              or (app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[1]
                  and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[2]
                  and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[3]))
         and c.organization_id = app_hidden.current_org_id()
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern or c.phone like digits);
  end if;
end $$;

ALTER FUNCTION app_hidden.contacts_matching(pattern text, digits text) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_matching(pattern text, digits text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contacts_matching(pattern text, digits text) IS 'Trigram matches of contacts_search q in the current organization (id and sort keys only; contacts_search filters them by the caller''s policies).';

--
-- Name: contacts_process_events(uuid, jsonb, jsonb, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  given jsonb := coalesce(fields, '{}');
  cancelled text;
  e jsonb;
  subscribers uuid[];
  receipt jsonb;
  answer jsonb := '{}';
begin
  if org is null or not app_hidden.current_reaches_all_locations() or app_hidden.current_records_level() <> 'all'
     or not app_hidden.current_has_power('contacts') then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Upserting contacts needs a credential that reaches the whole organization with the contacts power');
  end if;
  if not exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = contacts_process_events.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;

  for cancelled in select value from jsonb_array_elements_text(coalesce(cancel_events, '[]')) loop
    subscribers := app_private.event_subscribers(cancelled, given, false, contacts_process_events.contact_id);
    if cardinality(subscribers) > 0 then
      insert into app_private.contact_events (organization_id, contact_id, kind, event, fields, subscription_ids)
      values (org, contacts_process_events.contact_id, 'cancel', cancelled, given, subscribers);
    end if;
  end loop;

  for e in select value from jsonb_array_elements(coalesce(events, '[]')) loop
    receipt := null;
    if e->>'key' is not null then
      select ce.receipt into receipt from app_private.contact_events ce
       where ce.organization_id = org and ce.kind = 'fire' and ce.event = e->>'name' and ce.key = e->>'key';
    end if;
    if receipt is null then
      subscribers := app_private.event_subscribers(e->>'name', given, true, contacts_process_events.contact_id);
      if cardinality(subscribers) = 0 then
        receipt := jsonb_build_object('status', 'no_subscriber', 'key', e->>'key');
      elsif e->>'key' is null then
        receipt := jsonb_build_object('status', 'legacy_unverified', 'key', null);
        insert into app_private.contact_events (organization_id, contact_id, kind, event, fields, subscription_ids, receipt)
        values (org, contacts_process_events.contact_id, 'fire', e->>'name', given, subscribers, receipt);
      else
        insert into app_private.contact_events (organization_id, contact_id, kind, event, key, fields, subscription_ids, receipt)
        values (org, contacts_process_events.contact_id, 'fire', e->>'name', e->>'key', given, subscribers,
                jsonb_build_object('status', 'accepted', 'key', e->>'key'))
        on conflict (organization_id, event, key) where kind = 'fire' and key is not null do nothing
        returning contact_events.receipt into receipt;
        -- a concurrent upsert accepted the same key first (and has committed)
        if receipt is null then
          select ce.receipt into receipt from app_private.contact_events ce
           where ce.organization_id = org and ce.kind = 'fire' and ce.event = e->>'name' and ce.key = e->>'key';
        end if;
      end if;
    end if;
    if e->>'name' = 'assessment_abandoned' and not answer ? 'assessmentAbandonment' then
      answer := jsonb_build_object('assessmentAbandonment', receipt);
    end if;
  end loop;
  return answer;
end $$;

ALTER FUNCTION app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb) IS 'Processes the cancel_events, then the events, of a contacts_upsert against app_private.event_subscriptions, recording what some subscription takes in app_private.contact_events; answers receipts to merge into its response (assessmentAbandonment: accepted, no_subscriber, legacy_unverified).';

--
-- Name: contacts_upsert_row(public.citext, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb) RETURNS app_public.contacts
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
begin
  if org is null or not app_hidden.current_reaches_all_locations() or app_hidden.current_records_level() <> 'all'
     or not app_hidden.current_has_power('contacts') then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Upserting contacts needs a credential that reaches the whole organization with the contacts power');
  end if;
  if contacts_upsert_row.phone is not null and exists (
      select 1 from app_public.contacts x
       where x.organization_id = org and x.phone = contacts_upsert_row.phone
         and x.email_key is distinct from lower(contacts_upsert_row.email::text)) then
    perform app_hidden.raise_error(409, 'conflict', 'Another contact already uses this phone number');
  end if;

  insert into app_public.contacts as x (organization_id, email, name, phone, field_values)
  values (org, contacts_upsert_row.email, contacts_upsert_row.name, contacts_upsert_row.phone,
          jsonb_strip_nulls(coalesce(custom_fields, '{}')))
  on conflict (organization_id, email_key) do update
     set name = coalesce(excluded.name, x.name),
         phone = coalesce(excluded.phone, x.phone),
         field_values = jsonb_strip_nulls(x.field_values || coalesce(custom_fields, '{}')),
         last_seen_at = now(),
         updated_at = now()
  returning * into c;
  return c;
end $$;

ALTER FUNCTION app_hidden.contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb) IS 'The contact row of contacts_upsert, written as the owner for a caller that reaches the whole organization (403 otherwise); 409 on another contact''s phone.';

--
-- Name: conversations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.conversations (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    contact_id uuid NOT NULL,
    location_id uuid,
    channel text NOT NULL,
    business_address text,
    subject text,
    ai_held boolean DEFAULT false NOT NULL,
    held_at timestamp with time zone,
    last_message_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT conversations_business_address_check CHECK ((length(business_address) <= 320)),
    CONSTRAINT conversations_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'sms'::text, 'chat'::text]))),
    CONSTRAINT conversations_check CHECK (((channel <> 'email'::text) OR (NOT ai_held))),
    CONSTRAINT conversations_check1 CHECK (((channel <> 'sms'::text) OR (business_address ~ '^\+[1-9][0-9]{6,14}$'::text))),
    CONSTRAINT conversations_subject_check CHECK ((length(subject) <= 998))
);

ALTER TABLE app_public.conversations OWNER TO svc_owner;

--
-- Name: TABLE conversations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.conversations IS 'A thread with one contact on one channel (email, sms, chat) at a location; ai_held: a person answers instead of the AI.';

--
-- Name: COLUMN conversations.business_address; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversations.business_address IS 'The business''s side of the thread: the SMS number it texts from, or the email address the contact wrote to.';

--
-- Name: COLUMN conversations.ai_held; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversations.ai_held IS 'True while a person answers (response_mode human); always false for email.';

--
-- Name: conversation_for_write(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_for_write(conversation_id uuid) RETURNS app_public.conversations
    LANGUAGE plpgsql STABLE
    AS $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = app_hidden.current_org_id() and x.id = conversation_for_write.conversation_id;
  if not found or not app_hidden.conversation_write_reach(cv.contact_id, cv.location_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  return cv;
end $$;

ALTER FUNCTION app_hidden.conversation_for_write(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_for_write(conversation_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_for_write(conversation_id uuid) IS 'The conversation by id as the caller sees it (policies) and may write to it (a MEMBER: own clients), else 404.';

--
-- Name: conversation_json(app_public.conversations, app_public.contacts); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('id', cv.id, 'channel', cv.channel, 'contact', app_hidden.contact_card(c),
    'location_id', cv.location_id, 'business_address', cv.business_address, 'subject', cv.subject,
    'response_mode', app_hidden.conversation_response_mode(cv), 'ai_held', cv.ai_held, 'held_at', cv.held_at,
    'last_message_at', cv.last_message_at, 'created_at', cv.created_at, 'updated_at', cv.updated_at)
$$;

ALTER FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_json(cv app_public.conversations, c app_public.contacts); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) IS 'A conversation as the API shows it (without messages), its contact as a card.';

--
-- Name: conversation_messages; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.conversation_messages (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    conversation_id uuid NOT NULL,
    channel text NOT NULL,
    direction text NOT NULL,
    author text NOT NULL,
    author_person_id uuid,
    body text NOT NULL,
    subject text,
    status text NOT NULL,
    error text,
    provider_message_id text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT conversation_messages_author_check CHECK ((author = ANY (ARRAY['contact'::text, 'ai'::text, 'person'::text, 'system'::text]))),
    CONSTRAINT conversation_messages_body_check CHECK (((length(body) >= 1) AND (length(body) <= 20000))),
    CONSTRAINT conversation_messages_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'sms'::text, 'chat'::text]))),
    CONSTRAINT conversation_messages_check CHECK (((direction = 'inbound'::text) = (author = 'contact'::text))),
    CONSTRAINT conversation_messages_check1 CHECK (((direction = 'inbound'::text) = (status = 'received'::text))),
    CONSTRAINT conversation_messages_check2 CHECK (((author = 'person'::text) OR (author_person_id IS NULL))),
    CONSTRAINT conversation_messages_direction_check CHECK ((direction = ANY (ARRAY['inbound'::text, 'outbound'::text]))),
    CONSTRAINT conversation_messages_provider_message_id_check CHECK ((length(provider_message_id) <= 998)),
    CONSTRAINT conversation_messages_status_check CHECK ((status = ANY (ARRAY['received'::text, 'queued'::text, 'sent'::text, 'failed'::text]))),
    CONSTRAINT conversation_messages_subject_check CHECK ((length(subject) <= 998))
);

ALTER TABLE app_public.conversation_messages OWNER TO svc_owner;

--
-- Name: TABLE conversation_messages; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.conversation_messages IS 'The messages of a conversation. Outbound ones that leave by email or SMS share their id with the outgoing message (outbox meta.message_id); status follows its delivery.';

--
-- Name: COLUMN conversation_messages.channel; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversation_messages.channel IS 'The conversation''s channel, copied so search can skip chat by index.';

--
-- Name: COLUMN conversation_messages.author; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversation_messages.author IS 'contact (inbound), ai (the responder), person (a team member or an organization key through the API), system (keyword answers).';

--
-- Name: COLUMN conversation_messages.provider_message_id; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.conversation_messages.provider_message_id IS 'The provider''s id of an inbound message (the SMS provider''s, an email''s Message-ID), for replies that refer to it.';

--
-- Name: conversation_message_json(app_public.conversation_messages); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('id', m.id, 'conversation_id', m.conversation_id, 'direction', m.direction, 'author', m.author,
    'author_person_id', m.author_person_id, 'body', m.body, 'subject', m.subject, 'status', m.status, 'error', m.error,
    'created_at', m.created_at)
$$;

ALTER FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_message_json(m app_public.conversation_messages); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) IS 'One message as the API shows it.';

--
-- Name: conversation_message_record(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_private.outgoing_messages m
     set status = case when conversation_message_record.error is null then 'sent' else 'failed' end,
         sent_at = case when conversation_message_record.error is null then now() end,
         error = left(conversation_message_record.error, 1000)
   where m.organization_id = app_hidden.current_org_id() and m.id = conversation_message_record.message_id
     and m.status = 'queued' and m.meta ? 'conversation_id'
  returning m.status
$$;

ALTER FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_message_record(message_id uuid, error text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) IS 'Records what the transport answered for a conversation message of the current organization the API sent itself.';

--
-- Name: conversation_reply_send(uuid, text, text[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
  person app_public.people;
  domain text;
  sender text;
  recipient text;
  subject text;
  headers jsonb := '{}';
  refusal text;
begin
  cv := app_private.conversation_locked_for_write(conversation_id);
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  if cv.channel = 'email' then
    -- rule 3: an email goes out as a person
    select * into person from app_public.people p where p.organization_id = org and p.id = app_hidden.current_user_id() and p.active;
    if person.id is null then
      perform app_hidden.raise_error(422, 'no_acting_user',
        'An email reply goes out as a person: use a personal key (this credential acts for no one)');
    end if;
    if c.email is null then
      perform app_hidden.raise_error(422, 'channel_not_supported', 'The contact has no email address to reply to');
    end if;
    if exists (select 1 from app_public.email_suppressions s where s.organization_id = org and s.email = c.email_key) then
      perform app_hidden.raise_error(409, 'email_suppressed', 'The contact''s address is suppressed: no email goes to it');
    end if;
    select coalesce(o.sending_email_domain, 'localhost') into domain from app_public.organizations o where o.id = org;
    -- from the address the contact wrote to; who wrote it is the message's author (author_person_id)
    sender := coalesce(cv.business_address, 'inbox@' || domain);
    recipient := c.email::text;
    subject := case when coalesce(cv.subject, '') ~* '^\s*re\s*:' then cv.subject else 'Re: ' || coalesce(cv.subject, '(no subject)') end;
    headers := coalesce((select jsonb_build_object('In-Reply-To', m.provider_message_id)
                           from app_public.conversation_messages m
                          where m.organization_id = org and m.conversation_id = cv.id and m.direction = 'inbound'
                            and m.provider_message_id is not null
                          order by m.created_at desc, m.id desc limit 1), '{}');
  elsif cv.channel = 'sms' then
    if c.phone is null then
      perform app_hidden.raise_error(422, 'no_sms_number', 'The contact has no phone number to text');
    end if;
    refusal := app_private.conversation_sms_refusal(c, cv);
    if refusal is not null then
      perform app_hidden.raise_error(409, 'sms_not_permitted', refusal);
    end if;
    sender := cv.business_address;
    recipient := c.phone;
  end if;
  perform app_private.conversation_hold_for_person(cv);
  return app_private.conversation_send_answer(app_private.conversation_append_outbound(cv, 'person', person.id, body, sender, recipient,
    subject, headers, case when cv.channel = any(sinks) then 'sink' else 'caller' end));
end $$;

ALTER FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_reply_send(conversation_id uuid, body text, sinks text[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) IS 'conversations_reply''s write: the rules of the conversation''s channel (email as a person; SMS consent and opt-out), the message stored and, for channels in sinks, delivered to the local sink; the AI put on hold.';

--
-- Name: conversation_response_mode(app_public.conversations); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select case when cv.channel = 'email' or cv.ai_held then 'human' else 'ai' end
$$;

ALTER FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_response_mode(cv app_public.conversations); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) IS 'Who answers the conversation: ai, or human (held, and always for email, which has no AI).';

--
-- Name: conversation_set_held(uuid, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
  last app_public.conversation_messages;
  queued boolean := false;
begin
  cv := app_private.conversation_locked_for_write(conversation_id);
  if cv.channel = 'email' then
    perform app_hidden.raise_error(422, 'channel_not_supported', 'An email conversation has no AI to hold or resume');
  end if;
  if cv.ai_held is distinct from held then
    update app_public.conversations x set ai_held = held, held_at = case when held then now() end, updated_at = now()
     where x.organization_id = org and x.id = cv.id
    returning * into cv;
    if not held then
      select * into last from app_public.conversation_messages m
       where m.organization_id = org and m.conversation_id = cv.id order by m.created_at desc, m.id desc limit 1;
      if last.direction = 'inbound' then
        perform app_private.add_job('conversation_ai_reply',
          jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', last.id),
          job_key => 'conversation_ai:' || last.id);
        queued := true;
      end if;
    end if;
  end if;
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  return app_hidden.conversation_json(cv, c) || jsonb_build_object('ai_queued', queued);
end $$;

ALTER FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_set_held(conversation_id uuid, held boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) IS 'conversations_hold/resume''s write: 422 channel_not_supported for email; resuming queues the AI''s answer to an unanswered last message.';

--
-- Name: conversation_sms_send(uuid, text, uuid, text[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
-- ON CONFLICT names columns that share the parameters' names
#variable_conflict use_column
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
  loc uuid := location_id;
  number text;
  cv app_public.conversations;
  refusal text;
begin
  select * into c from app_public.contacts x where x.organization_id = org and x.id = conversation_sms_send.contact_id;
  if not found or not app_hidden.conversation_write_reach(c.id, coalesce(loc, (
       select cl.location_id from app_public.contact_locations cl
        where cl.organization_id = org and cl.contact_id = c.id and app_hidden.current_in_reach(cl.location_id) limit 1))) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  -- rule 4: the number of the contact's location (one in reach), else the organization's default
  if loc is null then
    select l.id into loc from app_public.contact_locations cl
      join app_public.locations l on l.organization_id = cl.organization_id and l.id = cl.location_id
     where cl.organization_id = org and cl.contact_id = c.id and app_hidden.current_in_reach(l.id)
     order by l.sms_number is null, l.created_at, l.id limit 1;
  end if;
  select coalesce((select l.sms_number from app_public.locations l where l.organization_id = org and l.id = loc), o.default_sms_number)
    into number from app_public.organizations o where o.id = org;
  if number is null then
    perform app_hidden.raise_error(422, 'no_sms_number',
      'No number can text this contact: its location has no SMS number and the organization has no default number');
  end if;
  if c.phone is null then
    perform app_hidden.raise_error(422, 'no_sms_number', 'The contact has no phone number to text');
  end if;
  select * into cv from app_public.conversations x
   where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = number for update;
  if cv.id is not null and not app_hidden.current_in_reach(cv.location_id) then
    if app_hidden.current_role() = 'member' then
      perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
    end if;
    perform app_hidden.raise_error(422, 'thread_at_other_location',
      'The contact''s SMS thread on ' || number || ' belongs to another location');
  end if;
  refusal := app_private.conversation_sms_refusal(c, null);
  if refusal is not null then
    perform app_hidden.raise_error(409, 'sms_not_permitted', refusal);
  end if;
  if cv.id is null then
    -- a concurrent first text opens the same thread: both continue the one that won
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
    values (org, c.id, loc, 'sms', number)
    on conflict (organization_id, contact_id, business_address) where channel = 'sms' do nothing;
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = number for update;
  end if;
  perform app_private.conversation_hold_for_person(cv);
  return app_private.conversation_send_answer(app_private.conversation_append_outbound(cv, 'person', app_hidden.current_user_id(), body,
    number, c.phone, null, null, case when 'sms' = any(sinks) then 'sink' else 'caller' end));
end $$;

ALTER FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) IS 'conversations_send_sms''s write: the number (rule 4), the thread on it (another location''s: 422, a MEMBER 404), consent (rule 6); the text stored in the contact''s thread on that number and, with the sink, delivered.';

--
-- Name: conversation_write_reach(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select app_hidden.current_org_id() is not null
     and (app_hidden.current_reaches_all_locations() or location_id = any(app_hidden.current_location_ids()))
     and (app_hidden.current_reaches_all_locations()
          or exists (select 1 from app_public.contact_locations cl
                      where cl.organization_id = app_hidden.current_org_id() and cl.contact_id = conversation_write_reach.contact_id
                        and cl.location_id = any(app_hidden.current_location_ids())))
     and ((app_hidden.current_records_level() = 'all' and app_hidden.current_role() <> 'member')
          or conversation_write_reach.contact_id = any(app_hidden.current_own_client_ids()))
$$;

ALTER FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_write_reach(contact_id uuid, location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) IS 'Whether the current credential may write to a conversation of the contact at the location (NULL: the organization''s): in reach, and for a MEMBER (or an own-records one) the contact is its own client.';

--
-- Name: conversations_matching(text, timestamp with time zone, uuid, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) RETURNS TABLE(id uuid, created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  contacts uuid[] := array(select x.id from app_hidden.contacts_matching(pattern, null) x);
  matched uuid[];
  ids uuid[];
begin
  ids := array(
    select w.id
      from (select cv.id, cv.created_at, cv.contact_id from app_public.conversations cv
             where cv.organization_id = org and cv.channel <> 'chat'
               and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
             order by cv.created_at desc, cv.id desc limit 300) w
     where w.contact_id = any(contacts)
        or exists (select 1 from app_public.conversation_messages m
                    where m.organization_id = org and m.conversation_id = w.id and m.channel <> 'chat' and m.body ilike pattern)
     order by w.created_at desc, w.id desc limit n);
  if cardinality(ids) < n then
    -- every match, by id: the bodies' trigram index, then the matching contacts' conversations
    matched := array(select distinct m.conversation_id from app_public.conversation_messages m
                      where m.body ilike pattern and m.channel <> 'chat' and m.organization_id = org)
            || array(select cv.id from app_public.conversations cv
                      where cv.organization_id = org and cv.contact_id = any(contacts));
    ids := array(
      select cv.id from app_public.conversations cv
       where cv.organization_id = org and cv.id = any(matched) and cv.channel <> 'chat'
         and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
       order by cv.created_at desc, cv.id desc limit n);
  end if;
  return query select cv.id, cv.created_at from app_public.conversations cv
                where cv.organization_id = org and cv.id = any(ids) order by cv.created_at desc, cv.id desc;
end $$;

ALTER FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) IS 'Candidates of conversations_list q: the newest n conversations (not chat) of the current organization after the cursor whose messages or contact contain the pattern (ids only; the caller''s policies filter them).';

--
-- Name: current_credential_id(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_credential_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select nullif(app_hidden.session_claim('credential_id'), '')::uuid
$$;

ALTER FUNCTION app_hidden.current_credential_id() OWNER TO svc_owner;

--
-- Name: FUNCTION current_credential_id(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_credential_id() IS 'The key of the current request; NULL for analysts.';

--
-- Name: current_has_power(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_has_power(power text) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_role() in ('organization', 'owner', 'admin')
      or (app_hidden.current_role() = 'manager' and power = any(app_hidden.current_powers()))
$$;

ALTER FUNCTION app_hidden.current_has_power(power text) OWNER TO svc_owner;

--
-- Name: FUNCTION current_has_power(power text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_has_power(power text) IS 'Whether the credential holds a manager power (organization-wide credentials hold them all).';

--
-- Name: current_in_reach(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_in_reach(location_id uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_reaches_all_locations()
      or location_id = any(app_hidden.current_location_ids())
$$;

ALTER FUNCTION app_hidden.current_in_reach(location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_in_reach(location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_in_reach(location_id uuid) IS 'Whether a location is within the credential''s reach.';

--
-- Name: current_key_creator_left(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_key_creator_left() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return coalesce((select not p.active
                     from app_private.api_keys k
                     join app_public.people p on p.organization_id = k.organization_id and p.id = k.created_by
                    where k.id = app_hidden.current_credential_id() and k.organization_id = app_hidden.current_org_id()
                      and k.kind = 'organization'), false);
end $$;

ALTER FUNCTION app_hidden.current_key_creator_left() OWNER TO svc_owner;

--
-- Name: FUNCTION current_key_creator_left(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_key_creator_left() IS 'Whether the credential is an organization key whose creator is no longer active.';

--
-- Name: current_location_ids(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_location_ids() RETURNS uuid[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  -- one expression (no FROM), so PostgreSQL inlines it into the statement that calls it
  select case
    when app_hidden.session_claim('location_ids') = '*' then null
    else coalesce(nullif(app_hidden.session_claim('location_ids'), '')::uuid[], '{}')
  end
$$;

ALTER FUNCTION app_hidden.current_location_ids() OWNER TO svc_owner;

--
-- Name: FUNCTION current_location_ids(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_location_ids() IS 'Locations a location-bound credential (or analyst) reaches; NULL when it reaches the whole organization, empty when unset.';

--
-- Name: current_may_book_team_member(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
begin
  return coalesce(case app_hidden.current_role()
    when 'owner' then true
    when 'admin' then true
    when 'manager' then 'appointments' = any(app_hidden.current_powers())
                        or current_may_book_team_member.staff_profile_id = app_hidden.current_staff_profile_id()
    when 'member' then current_may_book_team_member.staff_profile_id = app_hidden.current_staff_profile_id()
    else false end, false);
end $$;

ALTER FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_may_book_team_member(staff_profile_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) IS 'Whether the credential may book or change an appointment of this team member: owner and admin any; a manager with the appointments power any (at its locations); a manager without it and a member only itself; keys with no role, and Member or Manager keys without the power, none. Stricter than current_has_power, which grants organization keys all.';

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
-- Name: current_org_id(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_org_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select nullif(app_hidden.session_claim('organization_id'), '')::uuid
$$;

ALTER FUNCTION app_hidden.current_org_id() OWNER TO svc_owner;

--
-- Name: FUNCTION current_org_id(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_org_id() IS 'Organization of the current credential (an analyst''s: its mapping); NULL (sees nothing) when unset.';

--
-- Name: current_own_client_ids(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_own_client_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return coalesce((select array_agg(distinct o.contact_id)
                     from app_private.own_clients o
                    where o.organization_id = app_hidden.current_org_id()
                      and o.person_id = app_hidden.current_user_id()), '{}');
end $$;

ALTER FUNCTION app_hidden.current_own_client_ids() OWNER TO svc_owner;

--
-- Name: FUNCTION current_own_client_ids(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_own_client_ids() IS 'Contacts that are the acting person''s own clients (own-records level): app_private.own_clients, from every source.';

--
-- Name: current_powers(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_powers() RETURNS text[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(nullif(app_hidden.session_claim('powers'), '')::text[], '{}')
$$;

ALTER FUNCTION app_hidden.current_powers() OWNER TO svc_owner;

--
-- Name: FUNCTION current_powers(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_powers() IS 'Manager powers of the credential; none for analysts.';

--
-- Name: current_reaches_all_locations(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_reaches_all_locations() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(app_hidden.session_claim('location_ids') = '*', false)
$$;

ALTER FUNCTION app_hidden.current_reaches_all_locations() OWNER TO svc_owner;

--
-- Name: FUNCTION current_reaches_all_locations(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_reaches_all_locations() IS 'True only when the credential (or the analyst''s mapping) explicitly reaches the whole organization.';

--
-- Name: current_reads_calls_of(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_role() is distinct from 'member'
      or ((select app_hidden.current_staff_profile_id()) is not null
          and contact_id = any((select app_hidden.current_own_client_ids())::uuid[]))
$$;

ALTER FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_reads_calls_of(contact_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) IS 'Whether the credential reads calls with this contact (a MEMBER: only its own clients'', and only with a staff profile).';

--
-- Name: current_reads_team_member(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_role() is distinct from 'member'
      or app_hidden.current_records_level() <> 'own'
      or (staff_profile_id is not null and staff_profile_id = (select app_hidden.current_staff_profile_id()))
$$;

ALTER FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_reads_team_member(staff_profile_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid) IS 'Whether the credential reads appointments of this team member (own-records MEMBERs only their own).';

--
-- Name: current_records_level(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_records_level() RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(nullif(app_hidden.session_claim('records_level'), ''), 'all')
$$;

ALTER FUNCTION app_hidden.current_records_level() OWNER TO svc_owner;

--
-- Name: FUNCTION current_records_level(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_records_level() IS 'all, or own for a member who reads only their own clients; all for analysts (their reach is their locations).';

--
-- Name: current_role(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden."current_role"() RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select nullif(app_hidden.session_claim('role'), '')
$$;

ALTER FUNCTION app_hidden."current_role"() OWNER TO svc_owner;

--
-- Name: FUNCTION "current_role"(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden."current_role"() IS 'Effective role: organization (key with no role), owner, admin, manager or member; NULL for analysts.';

--
-- Name: current_scopes(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_scopes() RETURNS text[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(nullif(app_hidden.session_claim('scopes'), '')::text[], '{}')
$$;

ALTER FUNCTION app_hidden.current_scopes() OWNER TO svc_owner;

--
-- Name: FUNCTION current_scopes(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_scopes() IS 'Scopes of the key; none for analysts.';

--
-- Name: current_sees_contact_details(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_sees_contact_details() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_has_power('contacts')
$$;

ALTER FUNCTION app_hidden.current_sees_contact_details() OWNER TO svc_owner;

--
-- Name: FUNCTION current_sees_contact_details(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_sees_contact_details() IS 'Whether the credential reads a contact in full (stage, tags, custom fields, notes count, captured fields); a MEMBER, and a MANAGER without the contacts power, read only id, name, email and phone.';

--
-- Name: current_sms_enabled(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_sms_enabled() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select coalesce(nullif(app_hidden.session_claim('sms_enabled'), '')::boolean, false)
$$;

ALTER FUNCTION app_hidden.current_sms_enabled() OWNER TO svc_owner;

--
-- Name: FUNCTION current_sms_enabled(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_sms_enabled() IS 'Whether the credential may text (a MEMBER''s SMS setting; a MEMBER key never); false when unset and for analysts.';

--
-- Name: current_staff_profile_id(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_staff_profile_id() RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select sp.id from app_public.staff_profiles sp
   where sp.organization_id = app_hidden.current_org_id() and sp.person_id = app_hidden.current_user_id()
$$;

ALTER FUNCTION app_hidden.current_staff_profile_id() OWNER TO svc_owner;

--
-- Name: FUNCTION current_staff_profile_id(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_staff_profile_id() IS 'The staff profile (team member id) of the person the credential acts for, or NULL.';

--
-- Name: current_user_id(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_user_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select nullif(app_hidden.session_claim('user_id'), '')::uuid
$$;

ALTER FUNCTION app_hidden.current_user_id() OWNER TO svc_owner;

--
-- Name: FUNCTION current_user_id(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_user_id() IS 'Person the credential acts for; NULL for organization keys and analysts.';

--
-- Name: custom_field_value_fits(text, jsonb, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) RETURNS boolean
    LANGUAGE sql STABLE
    AS $_$
  select case type
    when 'number' then jsonb_typeof(value) = 'number'
    when 'currency' then jsonb_typeof(value) = 'number'
    when 'boolean' then jsonb_typeof(value) = 'boolean'
    when 'date' then jsonb_typeof(value) = 'string'
      and (value #>> '{}') ~ '^\d{4}-\d{2}-\d{2}$' and app_hidden.is_date(value #>> '{}')
    when 'datetime' then jsonb_typeof(value) = 'string'
      and (value #>> '{}') ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$'
      and app_hidden.is_timestamptz(value #>> '{}')
    when 'select' then jsonb_typeof(value) = 'string' and coalesce(options @> jsonb_build_array(value), false)
    else jsonb_typeof(value) = 'string' and length(value #>> '{}') <= 10000
  end
$_$;

ALTER FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION custom_field_value_fits(type text, options jsonb, value jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) IS 'Type check of a custom field value: number/currency a JSON number, boolean, date YYYY-MM-DD, datetime ISO 8601 with offset, select one of options, text a string.';

--
-- Name: people; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.people (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    email public.citext NOT NULL,
    role text NOT NULL,
    powers text[] DEFAULT '{}'::text[] NOT NULL,
    sms_enabled boolean DEFAULT true NOT NULL,
    records_level text DEFAULT 'all'::text NOT NULL,
    active boolean DEFAULT true NOT NULL,
    agent_access boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT people_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT people_powers_check CHECK ((powers <@ ARRAY['contacts'::text, 'sequences'::text, 'appointments'::text, 'staff'::text])),
    CONSTRAINT people_records_level_check CHECK ((records_level = ANY (ARRAY['all'::text, 'own'::text]))),
    CONSTRAINT people_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'manager'::text, 'member'::text])))
);

ALTER TABLE app_public.people OWNER TO svc_owner;

--
-- Name: TABLE people; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.people IS 'A person and their membership of the organization: role, powers, settings.';

--
-- Name: COLUMN people.powers; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.people.powers IS 'Manager powers: contacts, sequences, appointments, staff (meaningful for managers only).';

--
-- Name: COLUMN people.records_level; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.people.records_level IS 'all, or own: a member who reads only their own appointments and clients.';

--
-- Name: COLUMN people.agent_access; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.people.agent_access IS 'While false, this person''s personal keys and OAuth tokens get 401 (an owner''s is always on).';

--
-- Name: dashboard_actor(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_actor() RETURNS app_public.people
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  p app_public.people;
begin
  select x.* into p
    from app_private.dashboard_sessions s
    join app_public.people x on x.organization_id = s.organization_id and x.id = s.person_id
   where s.id = app_hidden.current_credential_id() and s.organization_id = app_hidden.current_org_id()
     and s.person_id = app_hidden.current_user_id() and s.expires_at > now() and x.active;
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'Sign in again');
  end if;
  return p;
end $$;

ALTER FUNCTION app_hidden.dashboard_actor() OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_actor(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_actor() IS 'The signed-in person of the current dashboard transaction, read afresh; 401 unless the claims are a live session''s.';

--
-- Name: dashboard_add_webhook(text, text[], text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  return (app_private.webhook_subscribe(me.organization_id, url, events, secret)).id;
end $$;

ALTER FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_add_webhook(url text, events text[], secret text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) IS 'Subscribes an URL (checked by the page: https, public addresses) to events of the signed-in owner''s or admin''s organization.';

--
-- Name: dashboard_create_key(text, text, text, text[], text[], uuid[], bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_actor();
  locs uuid[] := coalesce(location_ids, '{}');
  own_locs uuid[];
  k_kind text;
  k_role text := key_role;
  k_powers text[] := coalesce(powers, '{}');
  new_id uuid;
begin
  if kind not in ('personal', 'organization', 'organization_role', 'location_limited') then
    perform app_hidden.raise_error(400, 'bad_request', 'Choose a kind of key');
  end if;
  if not (kind = any(app_hidden.dashboard_key_kinds(me))) then
    perform app_hidden.raise_error(403, 'insufficient_role', format('Your role may not create a %s key', replace(kind, '_', ' ')));
  end if;
  if coalesce(cardinality(scopes), 0) = 0 then
    perform app_hidden.raise_error(422, 'scopes_required', 'Choose at least one scope');
  end if;
  if kind = 'personal' then
    k_kind := 'personal'; k_role := null; k_powers := '{}'; locs := '{}';
  elsif kind = 'organization' then
    k_kind := 'organization'; k_role := null; k_powers := '{}'; locs := '{}';
  else
    k_kind := 'organization';
    k_role := coalesce(k_role, 'MANAGER');
    if k_role not in ('MANAGER', 'MEMBER') then
      perform app_hidden.raise_error(400, 'bad_request', 'A key''s role is MANAGER or MEMBER');
    end if;
    if kind = 'organization_role' then locs := '{}'; end if;
    if kind = 'location_limited' and cardinality(locs) = 0 then
      perform app_hidden.raise_error(422, 'locations_required', 'Choose at least one location');
    end if;
    if k_role = 'MEMBER' then k_powers := '{}'; end if;
  end if;
  if cardinality(locs) > 0 and (select count(*) from app_public.locations l
                                 where l.organization_id = me.organization_id and l.id = any(locs)) <> cardinality(locs) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if me.role = 'manager' then
    select coalesce(array_agg(pl.location_id), '{}') into own_locs from app_public.person_locations pl
     where pl.organization_id = me.organization_id and pl.person_id = me.id;
    if k_kind = 'organization' and not (locs <@ own_locs) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager limits a key to their own locations');
    end if;
    if not (k_powers <@ me.powers) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'A manager gives a key only powers they hold');
    end if;
  end if;
  insert into app_private.api_keys (organization_id, kind, name, created_by, role, scopes, powers, key_hash)
  values (me.organization_id, k_kind, nullif(btrim(name), ''), me.id, k_role, scopes, k_powers, key_hash)
  returning id into new_id;
  insert into app_private.api_key_locations (organization_id, api_key_id, location_id)
  select me.organization_id, new_id, l from unnest(locs) l group by l;
  -- the same rule that revokes a key when its creator changes (migration 000001)
  if k_kind = 'organization' and not (select app_private.person_may_hold_key(me, k) from app_private.api_keys k
                                        where k.organization_id = me.organization_id and k.id = new_id) then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Your role may not create this key');
  end if;
  return new_id;
end $$;

ALTER FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) IS 'Creates a key (kind: personal, organization, organization_role, location_limited) as the signed-in person, within the spec''s rules; only its hash is stored.';

--
-- Name: dashboard_end_session(bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_end_session(session_hash bytea) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  delete from app_private.dashboard_sessions d where d.session_hash = dashboard_end_session.session_hash
$$;

ALTER FUNCTION app_hidden.dashboard_end_session(session_hash bytea) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_end_session(session_hash bytea); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_end_session(session_hash bytea) IS 'Sign-out: the session is gone.';

--
-- Name: dashboard_issue_link(uuid, uuid, bytea, text, text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not exists (select 1 from app_public.people p
                  where p.organization_id = org and p.id = person and p.active and p.email = recipient::citext) then
    perform app_hidden.raise_error(404, 'not_found', 'Person not found');
  end if;
  -- one person's links are counted one at a time
  perform pg_advisory_xact_lock(hashtextextended('dashboard_links:' || person::text, 0));
  if (select count(*) from app_private.dashboard_links d
       where d.organization_id = org and d.person_id = person
         and d.created_at > now() - make_interval(mins => (app_hidden.dashboard_lifetimes()->>'link_minutes')::int))
     >= (app_hidden.dashboard_lifetimes()->>'link_burst')::int then
    return false;
  end if;
  insert into app_private.dashboard_links (organization_id, person_id, token_hash, return_to, expires_at)
  values (org, person, token_hash, return_to,
          now() + make_interval(mins => (app_hidden.dashboard_lifetimes()->>'link_minutes')::int));
  perform set_config('svc.organization_id', org::text, true);
  perform app_hidden.queue_message('email', recipient, subject, body, null, jsonb_build_object('kind', 'dashboard_sign_in'));
  perform set_config('svc.organization_id', '', true);
  return true;
end $$;

ALTER FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) IS 'Stores a sign-in link (its token''s hash) for an active person and queues its email to their address.';

--
-- Name: dashboard_key_kinds(app_public.people); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select case
    when p.role in ('owner', 'admin') then array['personal', 'organization', 'organization_role', 'location_limited']
    when p.role = 'manager' and 'staff' = any(p.powers) then array['personal', 'location_limited']
    else array['personal'] end
$$;

ALTER FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_key_kinds(p app_public.people); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) IS 'The kinds of key a person may create: personal, organization, organization_role, location_limited.';

--
-- Name: dashboard_key_locations(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_key_locations() RETURNS TABLE(id uuid, name text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select l.id, l.name
    from app_hidden.dashboard_actor() me
    join app_public.locations l on l.organization_id = me.organization_id
   where me.role in ('owner', 'admin') or exists (select 1 from app_public.person_locations pl
           where pl.organization_id = l.organization_id and pl.person_id = me.id and pl.location_id = l.id)
   order by l.name, l.id
$$;

ALTER FUNCTION app_hidden.dashboard_key_locations() OWNER TO svc_owner;

--
-- Name: dashboard_keys(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_keys() RETURNS TABLE(id uuid, kind text, name text, role text, scopes text[], powers text[], locations text[], created_by text, created_at timestamp with time zone, revoked_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select k.id, k.kind, k.name, k.role, k.scopes, k.powers,
         array(select l.name from app_private.api_key_locations kl
                 join app_public.locations l on l.organization_id = kl.organization_id and l.id = kl.location_id
                where kl.organization_id = k.organization_id and kl.api_key_id = k.id order by l.name),
         c.name, k.created_at, k.revoked_at
    from app_hidden.dashboard_actor() me
    join app_private.api_keys k on k.organization_id = me.organization_id
    join app_public.people c on c.organization_id = k.organization_id and c.id = k.created_by
   where me.role in ('owner', 'admin') or k.created_by = me.id
   order by k.revoked_at is not null, k.created_at desc, k.id
$$;

ALTER FUNCTION app_hidden.dashboard_keys() OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_keys(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_keys() IS 'The keys the signed-in person sees (all for an owner or admin, else their own), without secrets.';

--
-- Name: dashboard_lifetimes(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_lifetimes() RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select '{"link_minutes": 15, "link_burst": 5, "session_hours": 12}'::jsonb
$$;

ALTER FUNCTION app_hidden.dashboard_lifetimes() OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_lifetimes(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_lifetimes() IS 'Lifetimes of sign-in links (minutes) and dashboard sessions (hours); links per person per link lifetime (burst).';

--
-- Name: dashboard_link_people(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_link_people(email text) RETURNS TABLE(organization_id uuid, person_id uuid, organization_name text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select p.organization_id, p.id, o.name
    from app_public.people p
    join app_public.organizations o on o.id = p.organization_id
   where p.email = dashboard_link_people.email::citext and p.active
   order by o.name, p.organization_id
$$;

ALTER FUNCTION app_hidden.dashboard_link_people(email text) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_link_people(email text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_link_people(email text) IS 'The active people with an email address (one per organization), to send each a sign-in link.';

--
-- Name: dashboard_locations(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_locations() RETURNS TABLE(id uuid, name text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select l.id, l.name from app_hidden.dashboard_actor() me
    join app_public.locations l on l.organization_id = me.organization_id
   order by l.name, l.id
$$;

ALTER FUNCTION app_hidden.dashboard_locations() OWNER TO svc_owner;

--
-- Name: dashboard_manager_of_team(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_manager_of_team() RETURNS app_public.people
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  if me.role not in ('owner', 'admin') then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner or admin manages the team and the organization');
  end if;
  return me;
end $$;

ALTER FUNCTION app_hidden.dashboard_manager_of_team() OWNER TO svc_owner;

--
-- Name: dashboard_people(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_people() RETURNS TABLE(id uuid, name text, email text, role text, powers text[], sms_enabled boolean, records_level text, agent_access boolean, active boolean, location_ids uuid[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select p.id, p.name, p.email::text, p.role, p.powers, p.sms_enabled, p.records_level, p.agent_access, p.active,
         array(select pl.location_id from app_public.person_locations pl
                where pl.organization_id = p.organization_id and pl.person_id = p.id order by pl.location_id)
    from app_hidden.dashboard_actor() me
    join app_public.people p on p.organization_id = me.organization_id
   where me.role in ('owner', 'admin') or p.id = me.id
   order by p.active desc, p.name, p.id
$$;

ALTER FUNCTION app_hidden.dashboard_people() OWNER TO svc_owner;

--
-- Name: dashboard_redeem_link(bytea, bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) RETURNS TABLE(organization_id uuid, person_id uuid, return_to text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  l app_private.dashboard_links;
begin
  update app_private.dashboard_links d set used_at = now()
   where d.token_hash = dashboard_redeem_link.token_hash and d.used_at is null and d.expires_at > now()
  returning d.* into l;
  if not found or not exists (select 1 from app_public.people p
                               where p.organization_id = l.organization_id and p.id = l.person_id and p.active) then
    return;
  end if;
  -- the person's dead sessions and old links go at each sign-in, so neither table only grows
  delete from app_private.dashboard_sessions d
   where d.organization_id = l.organization_id and d.person_id = l.person_id and d.expires_at <= now();
  delete from app_private.dashboard_links d
   where d.organization_id = l.organization_id and d.person_id = l.person_id and d.expires_at < now() - interval '1 day';
  insert into app_private.dashboard_sessions (organization_id, person_id, session_hash, expires_at)
  values (l.organization_id, l.person_id, session_hash,
          now() + make_interval(hours => (app_hidden.dashboard_lifetimes()->>'session_hours')::int));
  return query select l.organization_id, l.person_id, l.return_to;
end $$;

ALTER FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_redeem_link(token_hash bytea, session_hash bytea); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) IS 'Spends a sign-in link and opens a session under a fresh hash; no row when the link is unknown, spent, expired or its person inactive.';

--
-- Name: dashboard_remove_webhook(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  if not app_private.webhook_unsubscribe(me.organization_id, webhook_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Webhook not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_remove_webhook(webhook_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) IS 'Removes a subscription of the signed-in owner''s or admin''s organization (404 for any other id).';

--
-- Name: dashboard_revoke_key(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  update app_private.api_keys k set revoked_at = coalesce(k.revoked_at, now())
   where k.organization_id = me.organization_id and k.id = key_id
     and (me.role in ('owner', 'admin') or k.created_by = me.id);
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Key not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_revoke_key(key_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) IS 'Revokes a key the signed-in person may revoke (any for an owner or admin, else their own).';

--
-- Name: dashboard_role_access(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_role_access() RETURNS TABLE(role text, agent_access boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select r.role, coalesce(a.agent_access, true)
    from app_hidden.dashboard_manager_of_team() me
   cross join unnest(array['admin', 'manager', 'member']) with ordinality r(role, n)
    left join app_public.role_agent_access a on a.organization_id = me.organization_id and a.role = r.role
   order by r.n
$$;

ALTER FUNCTION app_hidden.dashboard_role_access() OWNER TO svc_owner;

--
-- Name: dashboard_session(bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_session(session_hash bytea) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_private.dashboard_sessions;
  p app_public.people;
  loc_ids uuid[];
  settings jsonb;
begin
  select * into s from app_private.dashboard_sessions d
   where d.session_hash = dashboard_session.session_hash and d.expires_at > now();
  if not found then return null; end if;
  select * into p from app_public.people x where x.organization_id = s.organization_id and x.id = s.person_id and x.active;
  if not found then return null; end if;
  if p.role in ('manager', 'member') then
    select coalesce(array_agg(location_id order by location_id), '{}') into loc_ids
      from app_public.person_locations where organization_id = p.organization_id and person_id = p.id;
  end if;
  settings := jsonb_build_object(
    'svc.organization_id', p.organization_id::text,
    'svc.credential_id', s.id::text,
    'svc.user_id', p.id::text,
    'svc.role', p.role,
    'svc.location_ids', coalesce(loc_ids::text, '*'),
    'svc.powers', (case when p.role = 'manager' then p.powers else '{}' end)::text,
    'svc.scopes', '{}',
    'svc.records_level', case when p.role = 'member' then p.records_level else 'all' end,
    'svc.sms_enabled', p.sms_enabled::text);
  perform set_config(x.key, x.value, true) from jsonb_each_text(settings) x;
  return jsonb_build_object('organization_id', p.organization_id, 'person_id', p.id, 'session_id', s.id,
    'name', p.name, 'email', p.email, 'role', p.role,
    'powers', to_jsonb(case when p.role = 'manager' then p.powers else '{}' end),
    'location_ids', to_jsonb(loc_ids));
end $$;

ALTER FUNCTION app_hidden.dashboard_session(session_hash bytea) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_session(session_hash bytea); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_session(session_hash bytea) IS 'The signed-in person of a live session (claims set for the transaction as theirs), or NULL.';

--
-- Name: dashboard_set_role_access(text, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_set_role_access(for_role text, on_off boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  if for_role not in ('admin', 'manager', 'member') then
    perform app_hidden.raise_error(422, 'owner_agent_access', 'An owner''s agent access is always on');
  end if;
  insert into app_public.role_agent_access (organization_id, role, agent_access) values (me.organization_id, for_role, on_off)
  on conflict (organization_id, role) do update set agent_access = excluded.agent_access;
end $$;

ALTER FUNCTION app_hidden.dashboard_set_role_access(for_role text, on_off boolean) OWNER TO svc_owner;

--
-- Name: dashboard_update_organization(boolean, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  update app_public.organizations o set mcp_enabled = new_mcp_enabled,
         sending_email_domain = nullif(btrim(new_sending_email_domain), ''),
         default_sms_number = nullif(btrim(new_default_sms_number), '')
   where o.id = me.organization_id;
end $$;

ALTER FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) IS 'An owner or admin turns MCP on or off and sets the sending domain and default SMS number (validated by the page).';

--
-- Name: dashboard_update_person(uuid, text, uuid[], text[], boolean, text, boolean, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
  p app_public.people;
  locs uuid[] := coalesce(location_ids, '{}');
begin
  select * into p from app_public.people x where x.organization_id = me.organization_id and x.id = person_id for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Person not found');
  end if;
  if new_role not in ('owner', 'admin', 'manager', 'member') or new_records_level not in ('all', 'own')
     or not (coalesce(new_powers, '{}') <@ array['contacts', 'sequences', 'appointments', 'staff']) then
    perform app_hidden.raise_error(400, 'bad_request', 'Choose a role, powers and records level the service knows');
  end if;
  if me.role <> 'owner' and (p.role = 'owner' or new_role = 'owner') then
    perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner changes an owner or makes one');
  end if;
  if p.role = 'owner' and p.active and (new_role <> 'owner' or not new_active)
     and not exists (select 1 from app_public.people o where o.organization_id = p.organization_id
                      and o.id <> p.id and o.role = 'owner' and o.active) then
    perform app_hidden.raise_error(409, 'last_owner', 'The organization keeps at least one active owner');
  end if;
  if new_role = 'owner' and not new_agent_access then
    perform app_hidden.raise_error(422, 'owner_agent_access', 'An owner''s agent access is always on');
  end if;
  if (select count(*) from app_public.locations l where l.organization_id = p.organization_id and l.id = any(locs))
     <> (select count(distinct x) from unnest(locs) x) then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  -- locations first: their trigger revokes the organization keys the person can no longer hold
  delete from app_public.person_locations pl
   where pl.organization_id = p.organization_id and pl.person_id = p.id and pl.location_id <> all(locs);
  insert into app_public.person_locations (organization_id, person_id, location_id)
  select p.organization_id, p.id, x from unnest(locs) x group by x
  on conflict do nothing;
  update app_public.people x set
    role = new_role,
    powers = case when new_role = 'manager' then coalesce(new_powers, '{}') else '{}' end,
    sms_enabled = new_sms_enabled,
    records_level = new_records_level,
    agent_access = new_role = 'owner' or new_agent_access,
    active = new_active,
    updated_at = now()
   where x.organization_id = p.organization_id and x.id = p.id;
end $$;

ALTER FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) IS 'An owner or admin sets a person''s role, locations, powers, SMS setting, records level, agent access and activity.';

--
-- Name: dashboard_webhooks(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.dashboard_webhooks() RETURNS TABLE(id uuid, url text, events text[], status text, disabled_reason text, created_at timestamp with time zone, pending bigint, delivered bigint, failed bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select s.id, s.url, s.events, s.status, s.disabled_reason, s.created_at,
         count(d.id) filter (where d.status = 'pending'), count(d.id) filter (where d.status = 'delivered'),
         count(d.id) filter (where d.status = 'failed')
    from app_hidden.dashboard_manager_of_team() me
    join app_public.webhook_subscriptions s on s.organization_id = me.organization_id
    left join app_public.webhook_deliveries d on d.organization_id = s.organization_id and d.subscription_id = s.id
   group by s.organization_id, s.id
   order by s.created_at, s.id
$$;

ALTER FUNCTION app_hidden.dashboard_webhooks() OWNER TO svc_owner;

--
-- Name: FUNCTION dashboard_webhooks(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.dashboard_webhooks() IS 'The organization''s webhook subscriptions with their deliveries counted, for an owner or admin signed in to the dashboard (never a secret).';

--
-- Name: delivery_inbound_email(text, text, text, text, text, text, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  token text := substring(lower(to_address) from '^reply\+([0-9a-f]{32})@[^@\s]+$');
  replied_id uuid;
  om app_private.outgoing_messages;
  result jsonb;
begin
  if to_address is null or from_address is null or to_address !~ '^[^@\s]+@[^@\s]+$' or from_address !~ '^[^@\s]+@[^@\s]+$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are email addresses');
  end if;
  replied_id := substring(in_reply_to from '^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@')::uuid;
  if replied_id is null and token is not null then
    replied_id := (substr(token, 1, 8) || '-' || substr(token, 9, 4) || '-' || substr(token, 13, 4) || '-'
                   || substr(token, 17, 4) || '-' || substr(token, 21))::uuid;
  end if;
  if replied_id is not null then
    select * into om from app_private.outgoing_messages m where m.id = replied_id and m.channel = 'email';
  end if;
  if token is not null then
    if om.id is null then
      perform app_hidden.raise_error(404, 'not_found', 'No message of ours answers to ' || to_address);
    end if;
    -- the thread's address is the one the message was sent from, not the reply address
    to_address := coalesce(om.sender, to_address);
  end if;
  -- one delivery of a message at a time: a retry racing the first waits, then finds it recorded
  if provider_id is not null then
    perform pg_advisory_xact_lock(hashtextextended('inbound-email|' || provider_id, 0));
  end if;
  if auto_reply then
    if om.id is null then
      return jsonb_build_object('auto_reply', true, 'recorded', false);
    end if;
    return app_private.delivery_message_event(om, 'auto:' || coalesce(provider_id, md5(coalesce(body, ''))) || ':' || om.id,
      'auto_replied', jsonb_build_object('from', lower(from_address), 'subject', left(subject, 500))) || jsonb_build_object('auto_reply', true);
  end if;
  result := app_private.conversations_inbound_email(to_address, from_address, subject, body,
    case when om.id is not null then '<' || om.id || '@reply>' else in_reply_to end, provider_id);
  -- the `replied` exit holds from this moment (sequences.md: checked when the event arrives)
  if result->>'contact_id' is not null then
    perform app_private.check_contact_exits((result->>'organization_id')::uuid, (result->>'contact_id')::uuid);
  end if;
  return result || jsonb_build_object('auto_reply', false);
end $_$;

ALTER FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) IS 'An inbound email: the message answered by In-Reply-To or reply+TOKEN, the conversation continued (and the sequence''s replied event) through conversations_inbound_email; an auto-reply is only recorded on the message answered.';

--
-- Name: delivery_inbound_sms(text, text, text, text, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  result jsonb;
begin
  -- the webhook: a number two organizations share is refused (409 number_ambiguous), not guessed;
  -- `svc admin inbound sms` (owner_check false) keeps the conversations area's rule, the first
  -- organization that took the number
  if owner_check then
    perform app_hidden.number_owner(to_number);
  end if;
  -- one delivery of a message at a time: a retry racing the first waits, then finds it recorded
  if provider_id is not null then
    perform pg_advisory_xact_lock(hashtextextended('inbound-sms|' || provider_id, 0));
  end if;
  result := app_private.conversations_inbound_sms(to_number, from_number, body, provider_id);
  -- the `replied` exit holds from this moment (sequences.md: checked when the event arrives)
  if result->>'contact_id' is not null and not coalesce((result->>'duplicate')::boolean, false) then
    perform app_private.check_contact_exits((result->>'organization_id')::uuid, (result->>'contact_id')::uuid);
  end if;
  return result;
end $$;

ALTER FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) IS 'An inbound SMS from the provider''s webhook, through conversations_inbound_sms (idempotent on the provider id).';

--
-- Name: delivery_note_provider_id(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_private.outgoing_messages m set provider_id = delivery_note_provider_id.provider_id
   where m.organization_id = app_hidden.current_org_id() and m.id = message_id
$$;

ALTER FUNCTION app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) OWNER TO svc_owner;

--
-- Name: delivery_record_event(text, uuid, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  om app_private.outgoing_messages;
begin
  if (provider_id is null) = (message_id is null) or length(provider_id) not between 1 and 200 then
    perform app_hidden.raise_error(400, 'bad_request', 'One message id: the provider''s (1 to 200 characters) or ours');
  end if;
  if provider_id is not null then
    select * into om from app_private.outgoing_messages m where m.provider_id = delivery_record_event.provider_id for update;
  else
    select * into om from app_private.outgoing_messages m where m.id = delivery_record_event.message_id for update;
  end if;
  if not found then
    return jsonb_build_object('known', false, 'recorded', false);
  end if;
  return app_private.delivery_message_event(om, event_key, type, detail);
end $$;

ALTER FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) IS 'A provider''s delivery report about a message by its provider id or ours, recorded once per event key.';

--
-- Name: delivery_reply_address_known(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_reply_address_known(address text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
  select exists (
    select 1
      from (select substring(lower(address) from '^reply\+([0-9a-f]{32})@[^@\s]+$') as token) t
      join app_private.outgoing_messages m
        on m.id = (substr(t.token, 1, 8) || '-' || substr(t.token, 9, 4) || '-' || substr(t.token, 13, 4) || '-'
                   || substr(t.token, 17, 4) || '-' || substr(t.token, 21))::uuid
     where t.token is not null and m.channel = 'email'
       and lower(split_part(address, '@', 2)) = coalesce(nullif(lower(split_part(m.sender, '@', 2)), ''), 'localhost'))
$_$;

ALTER FUNCTION app_hidden.delivery_reply_address_known(address text) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_reply_address_known(address text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.delivery_reply_address_known(address text) IS 'Whether an address is the reply+TOKEN@domain of an email the service sent from that domain (the SMTP listener''s RCPT TO check).';

--
-- Name: eligible_team_members(uuid, uuid, uuid, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return (
  select coalesce(array_agg(sp.id order by sp.created_at, sp.id), '{}')
    from app_public.staff_profiles sp
    join app_public.people p on p.organization_id = sp.organization_id and p.id = sp.person_id and p.active
    join app_public.person_locations pl on pl.organization_id = sp.organization_id and pl.person_id = sp.person_id
   where sp.organization_id = eligible_team_members.organization_id and pl.location_id = eligible_team_members.location_id
     and (eligible_team_members.offering_id is null
          or not exists (select 1 from app_public.offering_team_members ot
                          where ot.organization_id = eligible_team_members.organization_id and ot.offering_id = eligible_team_members.offering_id)
          or exists (select 1 from app_public.offering_team_members ot
                      where ot.organization_id = eligible_team_members.organization_id and ot.offering_id = eligible_team_members.offering_id
                        and ot.staff_profile_id = sp.id))
     and (eligible_team_members.postal_code is null
          or exists (select 1 from app_public.territories t
                      where t.organization_id = eligible_team_members.organization_id and t.location_id = eligible_team_members.location_id
                        and t.country_code = upper(eligible_team_members.country_code)
                        and app_hidden.postal_code_key(eligible_team_members.postal_code) = any(t.postal_codes)
                        and (not exists (select 1 from app_public.territory_team_members tt
                                          where tt.organization_id = t.organization_id and tt.territory_id = t.id)
                             or exists (select 1 from app_public.territory_team_members tt
                                         where tt.organization_id = t.organization_id and tt.territory_id = t.id
                                           and tt.staff_profile_id = sp.id)))));
end $$;

ALTER FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) OWNER TO svc_owner;

--
-- Name: FUNCTION eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) IS 'Team members of the location who do the offering and cover the postal code (each filter skipped when NULL), oldest first.';

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
    CONSTRAINT enrollment_events_type_check CHECK ((type = ANY (ARRAY['enrolled'::text, 'sent'::text, 'delivered'::text, 'bounced'::text, 'opened'::text, 'clicked'::text, 'replied'::text, 'skipped'::text, 'failed'::text, 'unknown'::text, 'paused'::text, 'resumed'::text, 'completed'::text, 'cancelled'::text])))
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
-- Name: forms; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.forms (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid,
    name text NOT NULL,
    allowed_origins text[] DEFAULT '{}'::text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    redirect_url text,
    CONSTRAINT forms_allowed_origins_check CHECK (((cardinality(allowed_origins) <= 50) AND (array_position(allowed_origins, NULL::text) IS NULL) AND (array_to_string(allowed_origins, ' '::text) ~ '^(https?://[^ /]+( |$))*$'::text))),
    CONSTRAINT forms_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT forms_redirect_url_check CHECK (((length(redirect_url) <= 2000) AND (redirect_url ~ '^https?://[^\s/?#]+([/?#]\S*)?$'::text)))
);

ALTER TABLE app_public.forms OWNER TO svc_owner;

--
-- Name: TABLE forms; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.forms IS 'A web form of a location (NULL: of the whole organization), posted to without a key.';

--
-- Name: COLUMN forms.allowed_origins; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.forms.allowed_origins IS 'The sites (scheme://host[:port]) whose pages may post to the form from a browser (CORS); a plain HTML form post needs none.';

--
-- Name: COLUMN forms.redirect_url; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.forms.redirect_url IS 'Where a browser''s plain HTML post goes after a submission (303); NULL: the endpoint''s own thank-you page.';

--
-- Name: form_for(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.form_for(form_id uuid) RETURNS app_public.forms
    LANGUAGE plpgsql STABLE
    AS $$
declare
  f app_public.forms;
begin
  select * into f from app_public.forms x where x.organization_id = app_hidden.current_org_id() and x.id = form_for.form_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Form not found');
  end if;
  return f;
end $$;

ALTER FUNCTION app_hidden.form_for(form_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION form_for(form_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.form_for(form_id uuid) IS 'The form, when the credential reaches it; 404 otherwise.';

--
-- Name: form_json(app_public.forms); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.form_json(f app_public.forms) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object(
    'id', f.id,
    'name', f.name,
    'location_id', f.location_id,
    'allowed_origins', to_jsonb(f.allowed_origins),
    'redirect_url', f.redirect_url,
    'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                            'required', x.required, 'options', x.options) order by x.position)
                          from app_public.form_fields x
                         where x.organization_id = f.organization_id and x.form_id = f.id), '[]'),
    'created_at', f.created_at,
    'updated_at', f.updated_at)
$$;

ALTER FUNCTION app_hidden.form_json(f app_public.forms) OWNER TO svc_owner;

--
-- Name: FUNCTION form_json(f app_public.forms); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.form_json(f app_public.forms) IS 'A form with its fields, as forms_list and forms_get answer it.';

--
-- Name: form_limits(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.form_limits() RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select '{"min_elapsed_ms": 3000, "token_max_age_ms": 86400000, "rate_per_address": 5, "rate_window_minutes": 10}'::jsonb
$$;

ALTER FUNCTION app_hidden.form_limits() OWNER TO svc_owner;

--
-- Name: FUNCTION form_limits(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.form_limits() IS 'The spam thresholds of public form submissions.';

--
-- Name: form_submit(uuid, jsonb, jsonb, text, bigint, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint, client_address text, spam_reason text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  f app_public.forms;
  lim jsonb := app_hidden.form_limits();
  reason text := spam_reason;
  age bigint := elapsed_ms;
  c app_public.contacts;
  v_email text := nullif(lower(contact->>'email'), '');
  v_phone text := nullif(contact->>'phone', '');
  sub_id uuid;
  s record;
begin
  select * into f from app_public.forms x where x.id = form_submit.form_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Form not found');
  end if;
  if reason is null and age is null then
    age := app_hidden.form_token_age(f.id, token);
    if age is null or age > (lim->>'token_max_age_ms')::bigint or age < 0 then
      reason := 'bad_token';
    end if;
  end if;
  if reason is null and age < (lim->>'min_elapsed_ms')::bigint then
    reason := 'too_fast';
  end if;
  if client_address is not null then
    -- one client address at a time per organization, so that concurrent posts count each other
    perform pg_advisory_xact_lock(hashtextextended(f.organization_id::text || '|form-rate|' || client_address, 0));
    if reason is null and (select count(*) from app_public.form_submissions x
                            where x.organization_id = f.organization_id and x.client_address = form_submit.client_address
                              and x.submitted_at > now() - make_interval(mins => (lim->>'rate_window_minutes')::int))
                          >= (lim->>'rate_per_address')::int then
      reason := 'rate';
    end if;
  end if;

  if reason is null and (v_email is not null or v_phone is not null) then
    -- the contact: by email, else by phone; created when neither matches
    select * into c from app_public.contacts x where x.organization_id = f.organization_id and x.email_key = v_email;
    if not found and v_phone is not null then
      select * into c from app_public.contacts x
       where x.organization_id = f.organization_id and x.phone = v_phone and (v_email is null or x.email is null);
    end if;
    if c.id is null then
      insert into app_public.contacts (organization_id, email, name, phone)
      values (f.organization_id, v_email, nullif(contact->>'name', ''),
              case when not exists (select 1 from app_public.contacts x
                                     where x.organization_id = f.organization_id and x.phone = v_phone) then v_phone end)
      -- the same new email posted twice at once: the second finds the first's contact
      on conflict (organization_id, email_key) do update set last_seen_at = now(), updated_at = now()
      returning * into c;
    else
      update app_public.contacts x
         set name = coalesce(x.name, nullif(contact->>'name', '')),
             email = coalesce(x.email, v_email::citext),
             phone = coalesce(x.phone, case when not exists (select 1 from app_public.contacts y
                                                            where y.organization_id = f.organization_id and y.phone = v_phone)
                                           then v_phone end),
             last_seen_at = now(),
             updated_at = now()
       where x.organization_id = c.organization_id and x.id = c.id
      returning * into c;
    end if;
    if f.location_id is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id)
      values (f.organization_id, c.id, f.location_id) on conflict do nothing;
    end if;
  end if;

  insert into app_public.form_submissions (organization_id, form_id, contact_id, payload, status, spam_reason, email_key,
                                           client_address)
  values (f.organization_id, f.id, c.id, payload, case when reason is null then 'accepted' else 'spam' end, reason,
          left(v_email, 320), client_address)
  returning id into sub_id;

  -- form_submitted: the active automations this form starts
  if reason is null and c.id is not null then
    for s in
      select x.id from app_public.sequences x
       where x.organization_id = f.organization_id and x.status = 'active' and x.kind = 'automation'
         and x.trigger->>'type' = 'form_submitted' and x.trigger->>'form_id' = f.id::text
       order by x.id
    loop
      perform app_private.enroll_by_trigger(f.organization_id, s.id, c.id, 'form_submitted', null);
    end loop;
  end if;
  return jsonb_build_object('submission_id', sub_id, 'status', case when reason is null then 'accepted' else 'spam' end,
                            'spam_reason', reason, 'contact_id', c.id, 'organization_id', f.organization_id);
end $$;

ALTER FUNCTION app_hidden.form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint, client_address text, spam_reason text) OWNER TO svc_owner;

--
-- Name: FUNCTION form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint, client_address text, spam_reason text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint, client_address text, spam_reason text) IS 'Stores a public form submission after the token and rate checks; an accepted one upserts its contact (linked to the form''s location) and enrolls it in the automations triggered by form_submitted for this form.';

--
-- Name: form_token(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.form_token(form_id uuid) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select t.ms::text || '.' || app_hidden.form_token_mac(s.secret, s.form_id, t.ms)
    from app_private.form_secrets s,
         lateral (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) t
   where s.form_id = form_token.form_id
$$;

ALTER FUNCTION app_hidden.form_token(form_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION form_token(form_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.form_token(form_id uuid) IS 'A render-time token of the form (`<issued ms>.<mac>`), sent back as the hidden field _token; NULL when no such form.';

--
-- Name: form_token_age(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.form_token_age(form_id uuid, token text) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  m text[] := regexp_match(token, '^([0-9]{1,15})\.([0-9a-f]{64})$');
  secret text;
begin
  if m is null then
    return null;
  end if;
  select s.secret into secret from app_private.form_secrets s where s.form_id = form_token_age.form_id;
  if secret is null or app_hidden.form_token_mac(secret, form_id, m[1]::bigint) <> m[2] then
    return null;
  end if;
  return (extract(epoch from clock_timestamp()) * 1000)::bigint - m[1]::bigint;
end $_$;

ALTER FUNCTION app_hidden.form_token_age(form_id uuid, token text) OWNER TO svc_owner;

--
-- Name: FUNCTION form_token_age(form_id uuid, token text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.form_token_age(form_id uuid, token text) IS 'Milliseconds since a valid token of the form was issued; NULL for anything else.';

--
-- Name: form_token_mac(text, uuid, bigint); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.form_token_mac(secret text, form_id uuid, issued_ms bigint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select encode(sha256(convert_to(secret || '|' || form_id::text || '|' || issued_ms::text || '|' || secret, 'UTF8')), 'hex')
$$;

ALTER FUNCTION app_hidden.form_token_mac(secret text, form_id uuid, issued_ms bigint) OWNER TO svc_owner;

--
-- Name: FUNCTION form_token_mac(secret text, form_id uuid, issued_ms bigint); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.form_token_mac(secret text, form_id uuid, issued_ms bigint) IS 'The MAC of a form''s render-time token.';

--
-- Name: locations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.locations (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    timezone text DEFAULT 'UTC'::text NOT NULL,
    staffed boolean DEFAULT true NOT NULL,
    sms_number text,
    hours jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    slot_interval_minutes integer DEFAULT 15 NOT NULL,
    address jsonb,
    CONSTRAINT locations_address_check CHECK (((address IS NULL) OR (jsonb_typeof(address) = 'object'::text))),
    CONSTRAINT locations_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT locations_slot_interval_minutes_check CHECK (((slot_interval_minutes >= 5) AND (slot_interval_minutes <= 240)))
);

ALTER TABLE app_public.locations OWNER TO svc_owner;

--
-- Name: TABLE locations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.locations IS 'A place of business with its IANA time zone and opening hours.';

--
-- Name: COLUMN locations.hours; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.locations.hours IS 'Opening hours: [{day: mon..sun, open: HH:MM, close: HH:MM}].';

--
-- Name: COLUMN locations.slot_interval_minutes; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.locations.slot_interval_minutes IS 'Spacing of the starts of offered slots (minutes from each opening).';

--
-- Name: COLUMN locations.address; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.locations.address IS 'Street address: {line1, line2, city, region, postal_code, country_code}.';

--
-- Name: held_by_blocks_or_series(app_public.locations, uuid, uuid, tstzrange, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid DEFAULT NULL::uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return exists (
    select 1 from app_public.appointments a
     where a.organization_id = loc.organization_id and a.location_id = loc.id and a.status = 'booked' and a.rrule is null
       and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null and a.during && held_by_blocks_or_series.during
       and a.id is distinct from held_by_blocks_or_series.except_id)
  or exists (
    select 1 from app_public.appointment_occurrences o
      join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
     where o.organization_id = loc.organization_id and o.during && held_by_blocks_or_series.during and a.status = 'booked'
       and (a.staff_profile_id = held_by_blocks_or_series.staff_profile_id or a.calendar_id = held_by_blocks_or_series.calendar_id
            or (a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null)));
end $$;

ALTER FUNCTION app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid) OWNER TO svc_owner;

--
-- Name: html_escape(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.html_escape(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
  select replace(replace(replace(replace(replace(value, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')
$$;

ALTER FUNCTION app_hidden.html_escape(value text) OWNER TO svc_owner;

--
-- Name: FUNCTION html_escape(value text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.html_escape(value text) IS 'Text made safe inside HTML (& < > " '').';

--
-- Name: idempotency_claim(text, text, text, timestamp with time zone); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  r app_private.idempotency_keys;
  cred uuid := app_hidden.current_credential_id();
begin
  if cred is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  -- held to the end of this transaction, so until its answer is committed and visible
  if not pg_try_advisory_xact_lock(app_private.idempotency_lock_key(cred, idempotency_claim.operation_id, idempotency_claim.key)) then
    perform app_hidden.raise_error(409, 'idempotency_in_progress',
      'The first call with this idempotency_key is still running; retry shortly');
  end if;
  select * into r from app_private.idempotency_keys k
   where k.credential_id = cred and k.operation_id = idempotency_claim.operation_id and k.key = idempotency_claim.key
     and k.created_at > at - interval '24 hours';
  if not found then
    return;
  end if;
  if r.fingerprint <> app_hidden.idempotency_fingerprint(details) then
    perform app_hidden.raise_error(409, 'idempotency_key_reused',
      'This idempotency_key was used with other details (or different access); use a new key');
  elsif r.state <> 'done' then
    -- 'failed', or 'running' while this transaction holds the key's lock: a first call of the
    -- earlier protocol that died after starting
    perform app_hidden.raise_error(409, 'idempotency_outcome_unknown',
      'The first call with this idempotency_key failed after starting and may have taken effect; read the state before retrying with a new key');
  end if;
  response_status := r.response_status;
  response_body := r.response_body;
end $$;

ALTER FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) IS 'Claims an idempotency key for the current transaction (advisory xact lock), or returns the stored answer, or raises the 409 that applies.';

--
-- Name: idempotency_fingerprint(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.idempotency_fingerprint(details text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select encode(sha256(convert_to(details
    || '|' || current_setting('svc.role') || '|' || current_setting('svc.location_ids')
    || '|' || current_setting('svc.powers') || '|' || current_setting('svc.scopes'), 'UTF8')), 'hex')
$$;

ALTER FUNCTION app_hidden.idempotency_fingerprint(details text) OWNER TO svc_owner;

--
-- Name: FUNCTION idempotency_fingerprint(details text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.idempotency_fingerprint(details text) IS 'Fingerprint of an idempotent call: the details'' hash and the current credential''s access.';

--
-- Name: idempotency_record(text, text, text, timestamp with time zone, integer, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  insert into app_private.idempotency_keys as k
    (credential_id, operation_id, key, organization_id, fingerprint, state, response_status, response_body, created_at)
  values (app_hidden.current_credential_id(), idempotency_record.operation_id, idempotency_record.key,
          app_hidden.current_org_id(), app_hidden.idempotency_fingerprint(details), 'done', status, body, at)
  on conflict on constraint idempotency_keys_pkey do update
     set fingerprint = excluded.fingerprint, state = 'done', response_status = excluded.response_status,
         response_body = excluded.response_body, created_at = excluded.created_at, updated_at = now();
end $$;

ALTER FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) IS 'Stores the answer of an idempotent call in the transaction of its write.';

--
-- Name: is_date(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.is_date(value text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  perform value::date;
  return true;
exception when others then
  return false;
end $$;

ALTER FUNCTION app_hidden.is_date(value text) OWNER TO svc_owner;

--
-- Name: is_time_zone(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.is_time_zone(name text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select exists (select 1 from pg_catalog.pg_timezone_names z where z.name = is_time_zone.name)
$$;

ALTER FUNCTION app_hidden.is_time_zone(name text) OWNER TO svc_owner;

--
-- Name: FUNCTION is_time_zone(name text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.is_time_zone(name text) IS 'Whether a name is an IANA time zone this server knows (not an abbreviation or offset).';

--
-- Name: is_timestamptz(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.is_timestamptz(value text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform value::timestamptz;
  return true;
exception when others then
  return false;
end $$;

ALTER FUNCTION app_hidden.is_timestamptz(value text) OWNER TO svc_owner;

--
-- Name: like_anywhere(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.like_anywhere(value text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select '%' || replace(replace(replace(value, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

ALTER FUNCTION app_hidden.like_anywhere(value text) OWNER TO svc_owner;

--
-- Name: listed_appointments(timestamp with time zone, timestamp with time zone, text, text, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) RETURNS TABLE(a app_public.appointments, starts_at timestamp with time zone, occurrence_start timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
  select a, a.starts_at, null::timestamptz
    from app_public.appointments a
   where a.organization_id = app_hidden.current_org_id() and a.kind = 'appointment' and a.status = 'booked' and a.rrule is null
     and a.starts_at >= window_start and a.starts_at < window_end
     and (listed_appointments.contact_id is null or a.contact_id = listed_appointments.contact_id
          or a.attendee_phone = contact_phone or lower(a.attendee_email) = contact_email)
  union all
  select a, o.occurrence_start, o.occurrence_start
    from app_public.appointment_occurrences o
    join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
   where o.organization_id = app_hidden.current_org_id() and a.kind = 'appointment' and a.status = 'booked' and a.rrule is not null
     and o.occurrence_start >= window_start and o.occurrence_start < window_end
     and (listed_appointments.contact_id is null or a.contact_id = listed_appointments.contact_id
          or a.attendee_phone = contact_phone or lower(a.attendee_email) = contact_email)
$$;

ALTER FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) IS 'The live bookings starting in a window, one row per occurrence of a series, optionally of one contact (by id, attendee phone or email).';

--
-- Name: listed_team_member_ids(uuid, uuid, uuid[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) RETURNS uuid[]
    LANGUAGE sql STABLE
    AS $$
  select coalesce(array_agg(m order by ord), '{}')
    from app_hidden.location_team_members(organization_id, location_id) with ordinality t(m, ord)
   where cardinality(listed) = 0 or m = any(listed)
$$;

ALTER FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) OWNER TO svc_owner;

--
-- Name: FUNCTION listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) IS 'The listed team members still at the location (all of its team members when none is listed), oldest first.';

--
-- Name: local_day(date, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.local_day(d date, tz text) RETURNS tstzrange
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select tstzrange(d::timestamp at time zone tz, (d + 1)::timestamp at time zone tz, '[)')
$$;

ALTER FUNCTION app_hidden.local_day(d date, tz text) OWNER TO svc_owner;

--
-- Name: location_booking_options(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'location_id', l.id,
    'timezone', l.timezone,
    'staffed', l.staffed,
    'slot_interval_minutes', l.slot_interval_minutes,
    'offerings', coalesce((select jsonb_agg(jsonb_build_object('id', o.id, 'name', o.name, 'duration_minutes', o.duration_minutes,
                                                               'team_member_ids', to_jsonb(app_hidden.offering_team_member_ids(o)))
                                            order by o.name, o.id)
                             from app_public.offerings o where o.organization_id = l.organization_id and o.location_id = l.id), '[]'),
    'team_member_ids', coalesce((select jsonb_agg(m order by ord)
                                   from app_hidden.location_team_members(l.organization_id, l.id) with ordinality t(m, ord)), '[]'),
    'team_members', coalesce((select jsonb_agg(jsonb_build_object('id', sp.id, 'name', sp.display_name,
                                                                  'working_hours', coalesce(sp.working_hours, l.hours)) order by t.ord)
                                from app_hidden.location_team_members(l.organization_id, l.id) with ordinality t(m, ord)
                                join app_public.staff_profiles sp on sp.organization_id = l.organization_id and sp.id = t.m), '[]'),
    'calendars', coalesce((select jsonb_agg(jsonb_build_object('id', c.id, 'name', c.name) order by c.name, c.id)
                             from app_public.calendars c where c.organization_id = l.organization_id and c.location_id = l.id), '[]'))
    from app_public.locations l
   where l.organization_id = location_booking_options.organization_id and l.id = location_booking_options.location_id
$$;

ALTER FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION location_booking_options(organization_id uuid, location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) IS 'A location''s offerings (with duration and team members), team members (with working hours), and calendars; NULL when out of reach.';

--
-- Name: location_json(app_public.locations); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.location_json(l app_public.locations) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object('id', l.id, 'name', l.name, 'timezone', l.timezone, 'staffed', l.staffed, 'hours', l.hours,
                            'slot_interval_minutes', l.slot_interval_minutes, 'address', l.address)
$$;

ALTER FUNCTION app_hidden.location_json(l app_public.locations) OWNER TO svc_owner;

--
-- Name: FUNCTION location_json(l app_public.locations); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.location_json(l app_public.locations) IS 'A location as locations_list answers it.';

--
-- Name: location_team_members(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select sp.id
    from app_public.staff_profiles sp
    join app_public.people p on p.organization_id = sp.organization_id and p.id = sp.person_id and p.active
    join app_public.person_locations pl on pl.organization_id = sp.organization_id and pl.person_id = sp.person_id
   where sp.organization_id = location_team_members.organization_id and pl.location_id = location_team_members.location_id
   order by sp.created_at, sp.id
$$;

ALTER FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION location_team_members(organization_id uuid, location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) IS 'Staff profile ids of the active people who work at the location, oldest first (the order "first free team member" follows).';

--
-- Name: lock_booking_target(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform pg_advisory_xact_lock(hashtextextended('appointments:' || lock_booking_target.organization_id::text || ':'
                                                 || lock_booking_target.target::text, 0));
end $$;

ALTER FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION lock_booking_target(organization_id uuid, target uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) IS 'Orders concurrent writers of one team member''s or calendar''s time (see above); the exclusion constraint decides.';

--
-- Name: mask_email(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.mask_email(email text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  select left(split_part(email, '@', 1), 1) || '…@' || split_part(email, '@', 2)
$$;

ALTER FUNCTION app_hidden.mask_email(email text) OWNER TO svc_owner;

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
-- Name: contact_notes; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.contact_notes (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    contact_id uuid NOT NULL,
    body text NOT NULL,
    source text NOT NULL,
    location_id uuid,
    author_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT contact_notes_body_check CHECK (((length(body) >= 1) AND (length(body) <= 20000))),
    CONSTRAINT contact_notes_check CHECK (((source <> 'location_private'::text) OR (location_id IS NOT NULL))),
    CONSTRAINT contact_notes_source_check CHECK ((source = ANY (ARRAY['user'::text, 'system'::text, 'integration'::text, 'location_private'::text])))
);

ALTER TABLE app_public.contact_notes OWNER TO svc_owner;

--
-- Name: TABLE contact_notes; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.contact_notes IS 'Notes are written once and never edited. location_private notes (dashboard at one location, or synced from an external CRM) are never listed but are counted.';

--
-- Name: note_json(app_public.contact_notes); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.note_json(n app_public.contact_notes) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  return jsonb_build_object('id', n.id, 'contact_id', n.contact_id, 'body', n.body, 'source', n.source,
                            'created_at', n.created_at)
      || coalesce((select jsonb_build_object('author', jsonb_build_object('id', p.id, 'name', p.name))
                     from app_public.people p where p.organization_id = n.organization_id and p.id = n.author_id), '{}');
end $$;

ALTER FUNCTION app_hidden.note_json(n app_public.contact_notes) OWNER TO svc_owner;

--
-- Name: FUNCTION note_json(n app_public.contact_notes); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.note_json(n app_public.contact_notes) IS 'A note as the API shows it; author only when a team member wrote it.';

--
-- Name: number_owner(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.number_owner(number text, OUT organization_id uuid, OUT location_id uuid) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  orgs uuid[];
begin
  select array_agg(distinct x.org) into orgs
    from (select l.organization_id as org from app_public.locations l where l.sms_number = number_owner.number
          union all
          select o.id from app_public.organizations o where o.default_sms_number = number_owner.number) x;
  if orgs is null then
    perform app_hidden.raise_error(404, 'unknown_number', 'No organization uses this number');
  end if;
  if cardinality(orgs) > 1 then
    perform app_hidden.raise_error(409, 'number_ambiguous', 'More than one organization uses this number');
  end if;
  organization_id := orgs[1];
  select l.id into location_id from app_public.locations l
   where l.organization_id = orgs[1] and l.sms_number = number_owner.number
   order by l.created_at, l.id limit 1;
end $$;

ALTER FUNCTION app_hidden.number_owner(number text, OUT organization_id uuid, OUT location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION number_owner(number text, OUT organization_id uuid, OUT location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.number_owner(number text, OUT organization_id uuid, OUT location_id uuid) IS 'The organization (and location, when it is a location''s) of one of the service''s numbers; 404 unknown, 409 shared by organizations.';

--
-- Name: oauth_begin(uuid, uuid, text, text, text, text, text, text[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) RETURNS uuid
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
  delete from app_private.oauth_requests where expires_at < now();
  insert into app_private.oauth_requests (organization_id, person_id, client_id, redirect_uri, state, code_challenge, resource, scopes, expires_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8, now() + interval '10 minutes')
  returning id
$_$;

ALTER FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) IS 'Keeps a validated authorization request for ten minutes while its person decides.';

--
-- Name: oauth_client(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_client(client_id text) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('client_id', c.client_id, 'registration', c.registration, 'client_name', c.client_name,
           'client_uri', c.client_uri, 'redirect_uris', to_jsonb(c.redirect_uris),
           'fetched_age_s', extract(epoch from now() - c.fetched_at), 'cache_seconds', c.cache_seconds)
    from app_private.oauth_clients c where c.client_id = oauth_client.client_id
$$;

ALTER FUNCTION app_hidden.oauth_client(client_id text) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_client(client_id text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_client(client_id text) IS 'A client as the authorization endpoint needs it (with its cache age and lifetime), or NULL.';

--
-- Name: oauth_connected_apps(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_connected_apps() RETURNS TABLE(id uuid, client_id text, client_name text, person_name text, own boolean, scopes text[], created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  return query
    select g.id, c.client_id, c.client_name, p.name, p.id = me.id, g.scopes, g.created_at
      from app_private.oauth_grants g
      join app_private.oauth_clients c on c.client_id = g.client_id
      join app_public.people p on p.organization_id = g.organization_id and p.id = g.person_id
     where g.organization_id = me.organization_id and g.revoked_at is null
       and (g.person_id = me.id or me.role in ('owner', 'admin'))
     order by p.id = me.id desc, p.name, g.created_at desc;
end $$;

ALTER FUNCTION app_hidden.oauth_connected_apps() OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_connected_apps(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_connected_apps() IS 'The live OAuth grants the signed-in person may see: their own, and for an owner or admin everyone''s in the organization.';

--
-- Name: oauth_decide(uuid, uuid, uuid, boolean, bytea); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  r app_private.oauth_requests;
  g uuid;
begin
  delete from app_private.oauth_requests q
   where q.id = oauth_decide.request_id and q.organization_id = oauth_decide.organization_id
     and q.person_id = oauth_decide.person_id and q.expires_at >= now()
  returning * into r;
  if not found then return null; end if;
  if approve then
    insert into app_private.oauth_grants (organization_id, person_id, client_id, scopes, resource)
    values (r.organization_id, r.person_id, r.client_id, r.scopes, r.resource) returning id into g;
    insert into app_private.oauth_codes (code_hash, grant_id, redirect_uri, code_challenge, expires_at)
    values (oauth_decide.code_hash, g, r.redirect_uri, r.code_challenge, now() + interval '60 seconds');
  end if;
  return jsonb_build_object('redirect_uri', r.redirect_uri, 'state', r.state);
end $$;

ALTER FUNCTION app_hidden.oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea) OWNER TO svc_owner;

--
-- Name: oauth_exchange_code(bytea, text, text, text, text, bytea, bytea, integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  c app_private.oauth_codes;
  g app_private.oauth_grants;
  refusal jsonb;
begin
  select * into c from app_private.oauth_codes where oauth_codes.code_hash = oauth_exchange_code.code_hash for update;
  if not found then return app_hidden.oauth_refusal('invalid_grant', 'Unknown authorization code'); end if;
  select * into g from app_private.oauth_grants where id = c.grant_id;
  refusal := app_hidden.oauth_presented(g, oauth_exchange_code.client_id, c.used_at, 'authorization code');
  if refusal is not null then return refusal; end if;
  update app_private.oauth_codes set used_at = now() where oauth_codes.code_hash = c.code_hash;
  if c.expires_at < now() or g.revoked_at is not null then
    return app_hidden.oauth_refusal('invalid_grant', 'The authorization code has expired');
  end if;
  if c.redirect_uri <> oauth_exchange_code.redirect_uri then
    return app_hidden.oauth_refusal('invalid_grant', 'redirect_uri does not match the authorization request');
  end if;
  if c.code_challenge <> oauth_exchange_code.challenge then
    return app_hidden.oauth_refusal('invalid_grant', 'code_verifier does not match the code challenge');
  end if;
  if g.resource <> oauth_exchange_code.resource then
    return app_hidden.oauth_refusal('invalid_target', 'resource does not match the authorization request');
  end if;
  perform app_hidden.oauth_issue(g.id, access_hash, refresh_hash, access_seconds, refresh_seconds);
  return jsonb_build_object('scopes', to_jsonb(g.scopes), 'resource', g.resource);
end $$;

ALTER FUNCTION app_hidden.oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) OWNER TO svc_owner;

--
-- Name: oauth_issue(uuid, bytea, bytea, integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
  delete from app_private.oauth_tokens t where t.grant_id = $1 and t.expires_at < now() - interval '1 day';
  delete from app_private.oauth_codes c where c.grant_id = $1 and c.expires_at < now() - interval '1 day';
  insert into app_private.oauth_tokens (token_hash, grant_id, kind, expires_at)
  values ($2, $1, 'access', now() + make_interval(secs => $4)),
         ($3, $1, 'refresh', now() + make_interval(secs => $5))
$_$;

ALTER FUNCTION app_hidden.oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) OWNER TO svc_owner;

--
-- Name: oauth_person(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('organization_id', p.organization_id, 'person_id', p.id, 'organization_name', o.name,
           'role', p.role, 'powers', to_jsonb(case when p.role = 'manager' then p.powers else '{}' end),
           'sms_enabled', p.sms_enabled)
    from app_public.people p
    join app_public.organizations o on o.id = p.organization_id
    left join app_public.role_agent_access r on r.organization_id = p.organization_id and r.role = p.role
   where p.organization_id = oauth_person.organization_id and p.id = oauth_person.person_id and p.active
     and (p.role = 'owner' or (p.agent_access and coalesce(r.agent_access, true)))
$$;

ALTER FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_person(organization_id uuid, person_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) IS 'The person about to approve a client (role, powers, SMS setting), or NULL when inactive or agent access is off.';

--
-- Name: oauth_grants; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_grants (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    organization_id uuid NOT NULL,
    person_id uuid NOT NULL,
    client_id text NOT NULL,
    scopes text[] NOT NULL,
    resource text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone
);

ALTER TABLE app_private.oauth_grants OWNER TO svc_owner;

--
-- Name: TABLE oauth_grants; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.oauth_grants IS 'One approval of a client by a person (a connected app). Revoking it (the person, a reused code or refresh token) ends every token of it.';

--
-- Name: oauth_presented(app_private.oauth_grants, text, timestamp with time zone, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamp with time zone, what text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if g.client_id <> oauth_presented.client_id then
    return app_hidden.oauth_refusal('invalid_grant', format('The %s was issued to another client', what));
  end if;
  if used_at is not null then
    update app_private.oauth_grants set revoked_at = coalesce(revoked_at, now()) where id = g.id;
    return app_hidden.oauth_refusal('invalid_grant', format('The %s was already used: the grant is revoked', what));
  end if;
  return null;
end $$;

ALTER FUNCTION app_hidden.oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamp with time zone, what text) OWNER TO svc_owner;

--
-- Name: oauth_refresh(bytea, text, text, bytea, bytea, integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  t app_private.oauth_tokens;
  g app_private.oauth_grants;
  refusal jsonb;
begin
  select * into t from app_private.oauth_tokens
   where token_hash = oauth_refresh.refresh_hash and kind = 'refresh' for update;
  if not found then return app_hidden.oauth_refusal('invalid_grant', 'Unknown refresh token'); end if;
  select * into g from app_private.oauth_grants where id = t.grant_id;
  refusal := app_hidden.oauth_presented(g, oauth_refresh.client_id, t.used_at, 'refresh token');
  if refusal is not null then return refusal; end if;
  if g.revoked_at is not null then return app_hidden.oauth_refusal('invalid_grant', 'The grant was revoked'); end if;
  if t.expires_at < now() then return app_hidden.oauth_refusal('invalid_grant', 'The refresh token has expired'); end if;
  if g.resource <> oauth_refresh.resource then
    return app_hidden.oauth_refusal('invalid_target', 'resource does not match the grant');
  end if;
  if app_hidden.oauth_person(g.organization_id, g.person_id) is null then
    return app_hidden.oauth_refusal('invalid_grant', 'The person may not use agents now');
  end if;
  update app_private.oauth_tokens set used_at = now() where token_hash = t.token_hash;
  perform app_hidden.oauth_issue(g.id, access_hash, new_refresh_hash, access_seconds, refresh_seconds);
  return jsonb_build_object('scopes', to_jsonb(g.scopes), 'resource', g.resource);
end $$;

ALTER FUNCTION app_hidden.oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer) OWNER TO svc_owner;

--
-- Name: oauth_refusal(text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_refusal(error text, description text) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$ select jsonb_build_object('error', error, 'error_description', description) $$;

ALTER FUNCTION app_hidden.oauth_refusal(error text, description text) OWNER TO svc_owner;

--
-- Name: oauth_revoke_grant(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  me app_public.people := app_hidden.dashboard_actor();
begin
  update app_private.oauth_grants g set revoked_at = now()
   where g.id = oauth_revoke_grant.grant_id and g.organization_id = me.organization_id and g.revoked_at is null
     and (g.person_id = me.id or me.role in ('owner', 'admin'));
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Connected app not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_revoke_grant(grant_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) IS 'Revokes a grant the signed-in person may see: its tokens get 401 and its refresh tokens invalid_grant from now on.';

--
-- Name: oauth_revoke_on_deactivation(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_revoke_on_deactivation() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_private.oauth_grants set revoked_at = now()
   where organization_id = new.organization_id and person_id = new.id and revoked_at is null;
  return null;
end $$;

ALTER FUNCTION app_hidden.oauth_revoke_on_deactivation() OWNER TO svc_owner;

--
-- Name: oauth_save_client(text, text, text, text, text[], integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
  insert into app_private.oauth_clients (client_id, registration, client_name, client_uri, redirect_uris, fetched_at, cache_seconds)
  values ($1, $2, $3, $4, $5, case when $2 = 'metadata_document' then now() end, case when $2 = 'metadata_document' then $6 end)
  on conflict (client_id) do update
     set client_name = excluded.client_name, client_uri = excluded.client_uri,
         redirect_uris = excluded.redirect_uris, fetched_at = excluded.fetched_at, cache_seconds = excluded.cache_seconds
   where oauth_clients.registration = 'metadata_document'
$_$;

ALTER FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) OWNER TO svc_owner;

--
-- Name: FUNCTION oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) IS 'Registers a client, or refreshes the cached copy of a client ID metadata document (with its cache lifetime).';

--
-- Name: offerings; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.offerings (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid NOT NULL,
    name text NOT NULL,
    duration_minutes integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT offerings_duration_minutes_check CHECK (((duration_minutes >= 5) AND (duration_minutes <= 1440))),
    CONSTRAINT offerings_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE app_public.offerings OWNER TO svc_owner;

--
-- Name: TABLE offerings; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.offerings IS 'A service a location books, with its length. A location with offerings requires one on booking (offering_required).';

--
-- Name: offering_team_member_ids(app_public.offerings); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) RETURNS uuid[]
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.listed_team_member_ids(o.organization_id, o.location_id,
    array(select x.staff_profile_id from app_public.offering_team_members x where x.organization_id = o.organization_id and x.offering_id = o.id))
$$;

ALTER FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) OWNER TO svc_owner;

--
-- Name: FUNCTION offering_team_member_ids(o app_public.offerings); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) IS 'Team members who do the offering, oldest first.';

--
-- Name: opening_multirange(jsonb, text, tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) RETURNS tstzmultirange
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
begin
  return (select coalesce(range_agg(o.opening), '{}'::tstzmultirange)
            from app_hidden.opening_ranges(opening_multirange.hours, opening_multirange.tz, opening_multirange.within) o);
end $$;

ALTER FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION opening_multirange(hours jsonb, tz text, within tstzrange); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) IS 'The openings of weekly hours around `within`, merged.';

--
-- Name: opening_ranges(jsonb, text, tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) RETURNS TABLE(opening tstzrange)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select r
    from generate_series((lower(within) at time zone tz)::date - 1, (upper(within) at time zone tz)::date, interval '1 day') g(d)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(hours) = 'array' then hours else '[]' end) h(e)
    cross join lateral (select tstzrange((g.d::date + (h.e->>'open')::time) at time zone tz,
                                         (g.d::date + (h.e->>'close')::time) at time zone tz, '[)') as r) x
   where h.e->>'day' = lower(to_char(g.d, 'dy'))
     and (h.e->>'close')::time > (h.e->>'open')::time
     and x.r && within
   order by lower(x.r)
$$;

ALTER FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION opening_ranges(hours jsonb, tz text, within tstzrange); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) IS 'Each opening of weekly hours (wall times in the zone, 24:00 = midnight after) on the days `within` touches, as an absolute range.';

--
-- Name: ops_job_counts(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.ops_job_counts() RETURNS TABLE(task text, state text, n bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return query
  select t.identifier,
         case when j.locked_at is not null then 'running'
              when j.attempts >= j.max_attempts then 'failed'
              else 'queued' end,
         count(*)
    from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
   group by 1, 2;
end $$;

ALTER FUNCTION app_hidden.ops_job_counts() OWNER TO svc_owner;

--
-- Name: FUNCTION ops_job_counts(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.ops_job_counts() IS 'Background jobs by task and state (queued, running, failed), for /metrics.';

--
-- Name: ops_message_counts(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.ops_message_counts() RETURNS TABLE(channel text, status text, n bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select m.channel, m.status, count(*) from app_private.outgoing_messages m group by 1, 2
$$;

ALTER FUNCTION app_hidden.ops_message_counts() OWNER TO svc_owner;

--
-- Name: FUNCTION ops_message_counts(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.ops_message_counts() IS 'Outgoing messages by channel and status, every organization (for /metrics).';

--
-- Name: page_error(text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.page_error(param text, message text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform app_hidden.raise_error(400, 'bad_request', format('query.%s: %s', param, message),
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', 'query.' || param, 'message', message))));
end $$;

ALTER FUNCTION app_hidden.page_error(param text, message text) OWNER TO svc_owner;

--
-- Name: FUNCTION page_error(param text, message text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.page_error(param text, message text) IS 'Raises 400 bad_request naming query.<param>, with the issues list a validation error carries.';

--
-- Name: page_limit(integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.page_limit(page_size integer) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  if page_size < 1 then
    perform app_hidden.page_error('limit', 'Too small: expected number to be >=1');
  elsif page_size > 100 then
    perform app_hidden.page_error('limit', 'Too big: expected number to be <=100');
  end if;
  return coalesce(page_size, 25);
end $$;

ALTER FUNCTION app_hidden.page_limit(page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION page_limit(page_size integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.page_limit(page_size integer) IS 'The page size to answer: 25 when NULL; 400 naming query.limit outside 1 to 100 (spec: Limits).';

--
-- Name: page_number(integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.page_number(page integer) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  if page < 1 then
    perform app_hidden.page_error('page', 'Too small: expected number to be >=1');
  end if;
  return coalesce(page, 1);
end $$;

ALTER FUNCTION app_hidden.page_number(page integer) OWNER TO svc_owner;

--
-- Name: FUNCTION page_number(page integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.page_number(page integer) IS 'The page to answer: 1 when NULL; 400 naming query.page below 1 (spec: Limits).';

--
-- Name: page_of(jsonb, integer, integer); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
  select jsonb_build_object(
    'items', coalesce((select jsonb_agg(e.v order by e.i) from jsonb_array_elements(items) with ordinality e(v, i)
                        where e.i > (page - 1)::bigint * page_size and e.i <= page::bigint * page_size), '[]'),
    'total', jsonb_array_length(items), 'page', page, 'limit', page_size)
$$;

ALTER FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION page_of(items jsonb, page integer, page_size integer); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) IS 'The page of a JSON array, with total, page and limit (pages checked by the caller).';

--
-- Name: postal_code_key(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.postal_code_key(code text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select upper(regexp_replace(code, '\s', '', 'g'))
$$;

ALTER FUNCTION app_hidden.postal_code_key(code text) OWNER TO svc_owner;

--
-- Name: FUNCTION postal_code_key(code text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.postal_code_key(code text) IS 'A postal code as territories compare it: spaces removed, case ignored.';

--
-- Name: public_form(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.public_form(form_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('id', f.id, 'organization_id', f.organization_id, 'name', f.name,
           'allowed_origins', to_jsonb(f.allowed_origins), 'redirect_url', f.redirect_url,
           'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                                   'required', x.required, 'options', x.options) order by x.position)
                                 from app_public.form_fields x
                                where x.organization_id = f.organization_id and x.form_id = f.id), '[]'))
    from app_public.forms f where f.id = public_form.form_id
$$;

ALTER FUNCTION app_hidden.public_form(form_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION public_form(form_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.public_form(form_id uuid) IS 'A form as its public endpoint needs it (fields, allowed origins), or NULL: no credential involved.';

--
-- Name: queue_message(text, text, text, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text DEFAULT NULL::text, meta jsonb DEFAULT '{}'::jsonb) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org app_public.organizations;
  message_id uuid;
begin
  select * into org from app_public.organizations where id = app_hidden.current_org_id();
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  insert into app_private.outgoing_messages (organization_id, channel, sender, recipient, subject, body, meta)
  values (org.id, channel, coalesce(sender, case channel
            when 'email' then 'no-reply@' || coalesce(org.sending_email_domain, 'localhost')
            else org.default_sms_number end),
          recipient, subject, body, coalesce(meta, '{}'))
  returning id into message_id;
  perform app_private.add_job('deliver_message',
    jsonb_build_object('organization_id', org.id, 'message_id', message_id),
    job_key => 'message:' || message_id);
  return message_id;
end $$;

ALTER FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) IS 'Queues an email or SMS of the current organization and its delivery job, in the caller''s transaction.';

--
-- Name: raise_error(integer, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb DEFAULT NULL::jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  raise exception using
    errcode = 'SV' || status::text,
    message = code,
    detail = message,
    hint = coalesce(extra::text, '');
end $$;

ALTER FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION raise_error(status integer, code text, message text, extra jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) IS 'Raises an API error: SQLSTATE SV<status>, message = error code, detail = human message, hint = extra envelope fields as JSON.';

--
-- Name: rate_limit_add(timestamp with time zone, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.rate_limit_add(window_start timestamp with time zone, counts jsonb) RETURNS TABLE(client text, route text, hits integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  delete from app_private.rate_limit_windows w where w.window_start < rate_limit_add.window_start - interval '2 minutes';
  return query
  insert into app_private.rate_limit_windows as w (window_start, client, route, hits)
  select rate_limit_add.window_start, c.client, c.route, c.hits
    from jsonb_to_recordset(counts) as c (client text, route text, hits int)
  on conflict on constraint rate_limit_windows_pkey do update set hits = w.hits + excluded.hits
  returning w.client, w.route, w.hits;
end $$;

ALTER FUNCTION app_hidden.rate_limit_add(window_start timestamp with time zone, counts jsonb) OWNER TO svc_owner;

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
-- Name: require_contact(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.require_contact(contact_id uuid) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform 1 from app_public.contacts
   where organization_id = app_hidden.current_org_id() and id = require_contact.contact_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.require_contact(contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION require_contact(contact_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.require_contact(contact_id uuid) IS 'Raises 404 unless the credential can read the contact.';

--
-- Name: require_location(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.require_location(location_id uuid) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
begin
  if location_id is null then
    return;
  end if;
  perform 1 from app_public.locations l where l.organization_id = app_hidden.current_org_id() and l.id = require_location.location_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
end $$;

ALTER FUNCTION app_hidden.require_location(location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION require_location(location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.require_location(location_id uuid) IS 'Raises 404 unless the credential reaches the location.';

--
-- Name: require_static(app_public.audiences); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.require_static(a app_public.audiences) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  if a.kind <> 'static' then
    perform app_hidden.raise_error(400, 'bad_request',
      'This audience is dynamic: its definition decides its contacts. Only a static audience takes members');
  end if;
end $$;

ALTER FUNCTION app_hidden.require_static(a app_public.audiences) OWNER TO svc_owner;

--
-- Name: FUNCTION require_static(a app_public.audiences); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.require_static(a app_public.audiences) IS '400 unless the audience is static (only those take members).';

--
-- Name: requirement_refusal(text, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  acting text := app_hidden.current_role();
begin
  if required_scope is not null and not (required_scope = any(app_hidden.current_scopes())) then
    return jsonb_build_object('status', 403, 'error', 'insufficient_scope',
      'message', format('This credential lacks the %s scope', required_scope),
      'extra', jsonb_build_object('required', required_scope));
  end if;
  if acting = 'manager' then
    if manager_power is not null and not (manager_power = any(app_hidden.current_powers())) then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', format('A manager needs the %s power for this operation', manager_power));
    elsif manager_power is null and member_access = 'deny' then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'A manager cannot call this operation');
    end if;
  elsif acting = 'member' then
    if member_access = 'deny' then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'A member cannot call this operation');
    elsif member_access = 'sms_setting' and not app_hidden.current_sms_enabled() then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'Texting is turned off for this member');
    end if;
  end if;
  return null;
end $$;

ALTER FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) OWNER TO svc_owner;

--
-- Name: FUNCTION requirement_refusal(required_scope text, member_access text, manager_power text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) IS 'Whether the current claims meet an operation''s requirements (scope, member access, manager power): null, or the refusal as {status, error, message, extra}. Scope is checked first, so insufficient_scope names the scope.';

--
-- Name: search_pieces(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.search_pieces(pattern text) RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  chosen text[];
begin
  if not exists (select 1 from app_private.search_trigrams) then
    return array[pattern, pattern, pattern];
  end if;
  with pieces as materialized (
    -- each distinct piece once, from its first word; pieces never counted are rarer than the
    -- sample could see
    select p.piece, p.word, p.position,
           coalesce((select t.share from app_private.search_trigrams t where t.trigram = p.piece), 0.00001) as share
      from (select distinct on (piece) substr(w.run[1], i, 3) as piece, w.n as word, i as position
              from regexp_matches(lower(pattern), '[a-z0-9]+', 'g') with ordinality as w(run, n)
             cross join lateral generate_series(1, length(w.run[1]) - 2) i
             order by piece, w.n, i) p)
  select array_remove(array[
           '%' || a.piece || '%',
           case when a.share * (1 - b.effective) > b.share / 300 then '%' || b.piece || '%' end,
           case when a.share * (1 - b.effective) > b.share / 300
                 and a.share * b.effective * (1 - d.effective) > d.share / 300 then '%' || d.piece || '%' end], null)
    into chosen
    from (select * from pieces order by share, word, position limit 1) a
    -- a piece of a word already chosen from narrows far less than its share says
    left join lateral (
      select x.piece, x.word, x.share, case when x.word = a.word then sqrt(x.share) else x.share end as effective
        from pieces x where x.piece <> a.piece
       order by effective, x.word, x.position limit 1) b on true
    left join lateral (
      select y.piece, y.share, case when y.word in (a.word, b.word) then sqrt(y.share) else y.share end as effective
        from pieces y where y.piece <> a.piece and y.piece <> b.piece
       order by effective, y.word, y.position limit 1) d on true;
  if coalesce(cardinality(chosen), 0) = 0 then
    return array[pattern, pattern, pattern];
  end if;
  -- three patterns for one fixed statement; the index reads a repeated piece once
  return chosen || array_fill(chosen[cardinality(chosen)], array[3 - cardinality(chosen)]);
end $$;

ALTER FUNCTION app_hidden.search_pieces(pattern text) OWNER TO svc_owner;

--
-- Name: FUNCTION search_pieces(pattern text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.search_pieces(pattern text) IS 'Up to three rare pieces of a search pattern as LIKE patterns (repeated to three), or the pattern itself three times.';

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
                       || jsonb_build_object('next_send_at', coalesce(e.next_step_due_at, e.next_run_at))
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
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select s.* from app_public.send_schedules s
   where s.organization_id = sequence_send_schedule.organization_id
     and (s.id = sequence_send_schedule.send_schedule_id or (sequence_send_schedule.send_schedule_id is null and s.is_default))
   limit 1
$$;

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
-- Name: session_claim(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.session_claim(claim text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select case when session_user = 'svc_login' or current_user in ('svc_request', 'svc_worker')
                or not pg_catalog.pg_has_role(session_user, 'svc_analyst', 'USAGE')
                or pg_catalog.pg_has_role(session_user, 'svc_owner', 'USAGE')
              then pg_catalog.current_setting('svc.' || claim, true)
              else app_hidden.analyst_claim(claim) end
$$;

ALTER FUNCTION app_hidden.session_claim(claim text) OWNER TO svc_owner;

--
-- Name: FUNCTION session_claim(claim text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.session_claim(claim text) IS 'The text of claim svc.<claim> for this session: the setting, or for an analyst its own mapping.';

--
-- Name: slot_taken(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.slot_taken() RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform app_hidden.raise_error(409, 'slot_taken', 'This time is already booked; ask appointments_availability for open slots');
end $$;

ALTER FUNCTION app_hidden.slot_taken() OWNER TO svc_owner;

--
-- Name: step_delay(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.step_delay(step jsonb) RETURNS interval
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select coalesce((step->'delay'->>'days')::numeric, 0) * interval '1 day'
       + coalesce((step->'delay'->>'hours')::numeric, 0) * interval '1 hour'
       + coalesce((step->'delay'->>'minutes')::numeric, 0) * interval '1 minute'
$$;

ALTER FUNCTION app_hidden.step_delay(step jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION step_delay(step jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.step_delay(step jsonb) IS 'The delay of a step ({days, hours, minutes}) as an interval; none is zero.';

--
-- Name: team_time(app_public.locations, uuid[], uuid[], tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) RETURNS TABLE(staff_profile_id uuid, calendar_id uuid, ord integer, open tstzmultirange, busy tstzmultirange)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  open_location tstzmultirange := app_hidden.opening_multirange(loc.hours, loc.timezone, within);
  everyone tstzmultirange;
begin
  -- the location's blocks and its location-wide series: everyone's busy time
  select coalesce(range_agg(x.during), '{}') into everyone from (
    select a.during from app_public.appointments a
     where a.organization_id = loc.organization_id and a.location_id = loc.id and a.status = 'booked' and a.rrule is null
       and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null and a.during && within
    union all
    select o.during from app_public.appointment_occurrences o
      join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
     where o.organization_id = loc.organization_id and o.during && within and a.status = 'booked'
       and a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null) x;
  open_location := open_location - everyone;
  return query
  with members as (
    select m.id, m.n, sp.working_hours
      from unnest(team_members) with ordinality m(id, n)
      join app_public.staff_profiles sp on sp.organization_id = loc.organization_id and sp.id = m.id
  ), own_hours as (
    -- each distinct week of working hours once (most team members keep the location's: NULL)
    select h.working_hours, case when h.working_hours is null then open_location
                                 else open_location * app_hidden.opening_multirange(h.working_hours, loc.timezone, within) end as r
      from (select distinct working_hours from members) h
  ), busy as (
    select x.staff_profile_id, x.calendar_id, range_agg(x.during) as r from (
      select a.staff_profile_id, a.calendar_id, a.during from app_public.appointments a
       where a.organization_id = loc.organization_id and a.status = 'booked' and a.rrule is null
         and a.staff_profile_id = any(team_members) and a.during && within
      union all
      select a.staff_profile_id, a.calendar_id, a.during from app_public.appointments a
       where a.organization_id = loc.organization_id and a.status = 'booked' and a.rrule is null
         and a.calendar_id = any(calendars) and a.during && within
      union all
      select a.staff_profile_id, a.calendar_id, o.during from app_public.appointment_occurrences o
        join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
       where o.organization_id = loc.organization_id and o.during && within and a.status = 'booked'
         and (a.staff_profile_id = any(team_members) or a.calendar_id = any(calendars))) x
     group by x.staff_profile_id, x.calendar_id
  )
  select m.id, null::uuid, m.n::int, oh.r, coalesce(b.r, '{}')
    from members m
    join own_hours oh on oh.working_hours is not distinct from m.working_hours
    left join busy b on b.staff_profile_id = m.id
  union all
  select null::uuid, c.id, c.n::int, open_location, coalesce(b.r, '{}')
    from unnest(calendars) with ordinality c(id, n)
    left join busy b on b.calendar_id = c.id;
end $$;

ALTER FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) IS 'Open time (location hours less its blocks, * own hours) and busy time (bookings, blocks, series) of each team member and calendar within a range: free for a range when open @> range and not busy && range.';

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
-- Name: territory_covers(uuid, uuid, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return exists (select 1 from app_public.territories t
                  where t.organization_id = territory_covers.organization_id and t.location_id = territory_covers.location_id
                    and t.country_code = upper(territory_covers.country_code)
                    and app_hidden.postal_code_key(territory_covers.postal_code) = any(t.postal_codes));
end $$;

ALTER FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) OWNER TO svc_owner;

--
-- Name: territories; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.territories (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid NOT NULL,
    name text NOT NULL,
    country_code text NOT NULL,
    postal_codes text[] DEFAULT '{}'::text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT territories_country_code_check CHECK ((country_code ~ '^[A-Z]{2}$'::text)),
    CONSTRAINT territories_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT territories_postal_codes_check CHECK (((array_position(postal_codes, NULL::text) IS NULL) AND (cardinality(postal_codes) <= 10000)))
);

ALTER TABLE app_public.territories OWNER TO svc_owner;

--
-- Name: TABLE territories; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.territories IS 'Postal codes (normalized by app_hidden.postal_code_key) in one country that a location''s team members visit.';

--
-- Name: territory_json(app_public.territories); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.territory_json(t app_public.territories) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('id', t.id, 'location_id', t.location_id, 'name', t.name, 'country_code', t.country_code,
                            'postal_codes', to_jsonb(t.postal_codes), 'team_member_ids', to_jsonb(app_hidden.territory_team_member_ids(t)))
$$;

ALTER FUNCTION app_hidden.territory_json(t app_public.territories) OWNER TO svc_owner;

--
-- Name: territory_team_member_ids(app_public.territories); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) RETURNS uuid[]
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.listed_team_member_ids(t.organization_id, t.location_id,
    array(select x.staff_profile_id from app_public.territory_team_members x where x.organization_id = t.organization_id and x.territory_id = t.id))
$$;

ALTER FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) OWNER TO svc_owner;

--
-- Name: FUNCTION territory_team_member_ids(t app_public.territories); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) IS 'Team members who cover the territory, oldest first.';

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
-- Name: voice_call_record(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.voice_call_record(payload jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  inbound boolean := coalesce(payload->>'direction', 'inbound') = 'inbound';
  ours text := case when inbound then payload->>'to' else payload->>'from' end;
  theirs text := case when inbound then payload->>'from' else payload->>'to' end;
  org uuid;
  loc uuid;
  c app_public.contacts;
  existing app_public.calls;
  v_call_id uuid;
  started timestamptz := coalesce((payload->>'started_at')::timestamptz, now());
  v_status text := coalesce(payload->>'status', 'completed');
begin
  select n.organization_id, n.location_id into org, loc from app_hidden.number_owner(ours) n;
  -- one delivery of a call at a time: a retry racing the first waits, then finds it
  perform pg_advisory_xact_lock(hashtextextended(org::text || '|voice|' || (payload->>'call_id'), 0));
  select * into existing from app_public.calls x where x.organization_id = org and x.external_id = payload->>'call_id';
  if found then
    return jsonb_build_object('call_id', existing.id, 'contact_id', existing.contact_id, 'duplicate', true);
  end if;

  select * into c from app_public.contacts x where x.organization_id = org and x.phone = theirs;
  if not found then
    insert into app_public.contacts (organization_id, phone, name)
    values (org, theirs, nullif(payload->>'caller_name', ''))
    on conflict (organization_id, phone) where phone is not null do update set updated_at = now()
    returning * into c;
  end if;
  update app_public.contacts x set total_calls = x.total_calls + 1, last_seen_at = greatest(x.last_seen_at, started),
         name = coalesce(x.name, nullif(payload->>'caller_name', '')), updated_at = now()
   where x.organization_id = org and x.id = c.id;
  if loc is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, loc) on conflict do nothing;
  end if;

  insert into app_public.calls (organization_id, contact_id, location_id, direction, status, from_number, to_number, started_at,
                                duration_seconds, summary, external_id)
  values (org, c.id, loc, case when inbound then 'inbound' else 'outbound' end, v_status, payload->>'from', payload->>'to', started,
          (payload->>'duration_seconds')::int, payload->>'summary', payload->>'call_id')
  returning id into v_call_id;
  insert into app_public.call_transcript_lines (organization_id, call_id, position, speaker, text)
  select org, v_call_id, l.ordinality - 1, l.value->>'speaker', l.value->>'text'
    from jsonb_array_elements(coalesce(payload->'transcript', '[]')) with ordinality l;

  insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, summary, started_at, ended_at)
  values (org, c.id, loc, 'voice',
          case v_status when 'completed' then 'completed' when 'in_progress' then 'in_progress' else 'abandoned' end,
          payload->>'summary', started,
          case when v_status <> 'in_progress' then started + make_interval(secs => coalesce((payload->>'duration_seconds')::int, 0)) end);
  return jsonb_build_object('call_id', v_call_id, 'contact_id', c.id, 'duplicate', false);
end $$;

ALTER FUNCTION app_hidden.voice_call_record(payload jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION voice_call_record(payload jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.voice_call_record(payload jsonb) IS 'Records a voice platform call once per call id: contact by phone (or created), total_calls, call, transcript, interaction.';

--
-- Name: within_hours(app_public.locations, uuid, tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return app_hidden.opening_multirange(loc.hours, loc.timezone, within_hours.during) @> within_hours.during
     and (within_hours.staff_profile_id is null
          or app_hidden.opening_multirange(
               coalesce((select sp.working_hours from app_public.staff_profiles sp
                          where sp.organization_id = loc.organization_id and sp.id = within_hours.staff_profile_id), loc.hours),
               loc.timezone, within_hours.during) @> within_hours.during);
end $$;

ALTER FUNCTION app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) OWNER TO svc_owner;

--
-- Name: add_job(text, jsonb, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.add_job(identifier text, payload jsonb, job_key text DEFAULT NULL::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform graphile_worker.add_job(identifier, payload::json, job_key => job_key, run_at => run_at);
end $$;

ALTER FUNCTION app_private.add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone) IS 'graphile_worker.add_job for our own security-definer functions; owned by svc_owner, never granted to request roles.';

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
  due := at + app_hidden.step_delay(step);
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
    due := at + app_hidden.step_delay(step);
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
-- Name: appointment_booked_holds(app_public.enrollments, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select exists (select 1 from app_public.appointments a
                  where a.organization_id = e.organization_id and a.contact_id = e.contact_id
                    and a.kind = 'appointment' and a.status = 'booked' and a.created_at >= e.created_at
                    and (exit->>'location_id' is null or a.location_id::text = exit->>'location_id'))
$$;

ALTER FUNCTION app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION appointment_booked_holds(e app_public.enrollments, exit jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) IS 'The appointment_booked exit: the contact has a live booking made since it enrolled (at exit.location_id when given).';

--
-- Name: broadcast_claim_batch(uuid, uuid, integer, text, text[]); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[] DEFAULT '{}'::text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[]); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[]) IS 'A run''s next batch: a dead process''s in_flight made unknown, then up to `size` recipients claimed set-based with the rules of sequence_step_claim (refusals skipped, messages rendered and written, sink sends recorded; rare cases through sequence_step_claim itself); the claimed ones become the new in_flight checkpoint.';

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
    -- app_hidden.audience_count runs it, for this organization
    f := app_hidden.audience_filter(a.definition, 'definition.rules');
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
  update app_public.broadcast_runs x set recipients = n where x.organization_id = b.organization_id and x.id = run;
  perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', s.organization_id, 'run_id', run),
    'broadcast_run:' || run, now());
  return run;
end $_$;

ALTER FUNCTION app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) IS 'Fires one occurrence once (schedule locked, still waiting for fire_at; unique run per occurrence): schedule moved on, the audience snapshotted into enrollments of the run, the run''s job queued. Answers the run id or NULL.';

--
-- Name: broadcast_record_batch(uuid, uuid, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) IS 'A batch''s transport answers recorded set-based (step runs, messages, events; the provider''s id kept), the enrollments moved on, counts moved, the in_flight checkpoint emptied.';

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

COMMENT ON FUNCTION app_private.broadcast_requeue_stalled() IS 'Queues a new broadcast_run job for each run sending without progress for five minutes (its worker died).';

--
-- Name: broadcast_settle_in_flight(uuid, uuid, boolean); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) IS 'A dead sender''s in_flight checkpoint: step runs still sending (and their messages) become unknown with an event, the enrollments moved on (or cancelled with the run), the checkpoint emptied; answers how many.';

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
    sender := coalesce((select l.sms_number from app_public.locations l
                         where l.organization_id = org.id and l.id = s.location_id), org.default_sms_number);
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
-- Name: chat_inbound(app_public.conversations, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.chat_inbound(cv app_public.conversations, body text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  lim jsonb := app_hidden.chat_limits();
  m app_public.conversation_messages;
  queued boolean := false;
begin
  if body is null or length(btrim(body)) < 1 or length(body) > (lim->>'message_max_length')::int then
    perform app_hidden.raise_error(400, 'bad_request', format('body.message: 1 to %s characters', lim->>'message_max_length'));
  end if;
  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
  values (cv.organization_id, cv.id, 'chat', 'inbound', 'contact', body, 'received')
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id;
  update app_public.contacts c set last_seen_at = greatest(c.last_seen_at, now())
   where c.organization_id = cv.organization_id and c.id = cv.contact_id;
  if app_hidden.conversation_response_mode(cv) = 'ai' then
    perform app_private.add_job('conversation_ai_reply',
      jsonb_build_object('organization_id', cv.organization_id, 'conversation_id', cv.id, 'message_id', m.id),
      job_key => 'conversation_ai:' || m.id);
    queued := true;
  end if;
  return jsonb_build_object('message_id', m.id, 'created_at', m.created_at, 'ai_queued', queued);
end $$;

ALTER FUNCTION app_private.chat_inbound(cv app_public.conversations, body text) OWNER TO svc_owner;

--
-- Name: chat_session_conversation(uuid, uuid, text, boolean); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean) RETURNS app_public.conversations
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_private.chat_sessions;
  cv app_public.conversations;
begin
  select x.* into s from app_private.chat_sessions x
    join app_public.chat_widgets w on w.organization_id = x.organization_id and w.id = x.widget_id
   where w.id = chat_session_conversation.widget_id and x.conversation_id = chat_session_conversation.conversation_id;
  if not found or token_hash is null or s.token_hash <> token_hash then
    perform app_hidden.raise_error(404, 'not_found', 'Chat not found');
  end if;
  if lock then
    select * into cv from app_public.conversations x
     where x.organization_id = s.organization_id and x.id = s.conversation_id for update;
  else
    select * into cv from app_public.conversations x where x.organization_id = s.organization_id and x.id = s.conversation_id;
  end if;
  return cv;
end $$;

ALTER FUNCTION app_private.chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean) OWNER TO svc_owner;

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
-- Name: contact_only_location(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.contact_only_location(org uuid, contact_id uuid) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select case when count(*) = 1 then min(cl.location_id::text)::uuid end
    from app_public.contact_locations cl where cl.organization_id = org and cl.contact_id = contact_only_location.contact_id
$$;

ALTER FUNCTION app_private.contact_only_location(org uuid, contact_id uuid) OWNER TO svc_owner;

--
-- Name: conversation_ai_context(uuid, uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = conversation_ai_context.organization_id and x.id = conversation_ai_context.conversation_id;
  if not app_private.conversation_ai_due(cv, message_id) then
    return null;
  end if;
  return jsonb_build_object(
    'organization', (select jsonb_build_object('name', o.name) from app_public.organizations o where o.id = cv.organization_id),
    'location', (select jsonb_build_object('name', l.name, 'timezone', l.timezone, 'hours', l.hours,
                   'address', to_jsonb(l)->'address',
                   'offerings', coalesce((select jsonb_agg(jsonb_build_object('name', f.name, 'duration_minutes', f.duration_minutes)
                                                           order by f.name)
                                            from app_public.offerings f
                                           where f.organization_id = l.organization_id and f.location_id = l.id), '[]'))
                   from app_public.locations l where l.organization_id = cv.organization_id and l.id = cv.location_id),
    'channel', cv.channel,
    'contact', (select jsonb_build_object('name', c.name) from app_public.contacts c
                 where c.organization_id = cv.organization_id and c.id = cv.contact_id),
    'thread', coalesce((select jsonb_agg(jsonb_build_object('author', t.author, 'body', t.body) order by t.created_at, t.id)
                          from (select m.author, m.body, m.created_at, m.id from app_public.conversation_messages m
                                 where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                                 order by m.created_at desc, m.id desc limit 20) t), '[]'));
end $$;

ALTER FUNCTION app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) IS 'What the AI responder is given for an inbound message (organization, location with hours, address and offerings, the last 20 messages), or NULL when the AI owes it no answer.';

--
-- Name: conversation_ai_due(app_public.conversations, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_ai_due(cv app_public.conversations, message_id uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select cv.id is not null and app_hidden.conversation_response_mode(cv) = 'ai'
     and exists (select 1 from app_public.conversation_messages m
                  where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                    and m.id = conversation_ai_due.message_id and m.direction = 'inbound'
                    and not exists (select 1 from app_public.conversation_messages later
                                     where later.organization_id = m.organization_id and later.conversation_id = m.conversation_id
                                       and (later.created_at, later.id) > (m.created_at, m.id)))
$$;

ALTER FUNCTION app_private.conversation_ai_due(cv app_public.conversations, message_id uuid) OWNER TO svc_owner;

--
-- Name: conversation_ai_interaction(app_public.conversations, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if cv.channel not in ('sms', 'chat') or status not in ('in_progress', 'completed') then
    return;
  end if;
  insert into app_public.interactions (organization_id, contact_id, location_id, channel, status, started_at, ended_at, conversation_id)
  values (cv.organization_id, cv.contact_id, cv.location_id, cv.channel, status, coalesce(since, now()),
          case when status = 'completed' then greatest(now(), coalesce(since, now())) end, cv.id)
  on conflict (organization_id, conversation_id) where conversation_id is not null do update
    set status = excluded.status,
        ended_at = case when excluded.status = 'completed' then greatest(now(), interactions.started_at) end;
end $$;

ALTER FUNCTION app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone) IS 'Records the AI''s handling of an SMS or chat conversation as its interaction: in_progress while it answers, completed when it hands over or a person takes over.';

--
-- Name: conversation_ai_record(uuid, uuid, uuid, jsonb, text[]); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
  c app_public.contacts;
  refusal text;
  m app_public.conversation_messages;
  asked_at timestamptz;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = conversation_ai_record.organization_id and x.id = conversation_ai_record.conversation_id for update;
  if not app_private.conversation_ai_due(cv, message_id) then
    return jsonb_build_object('action', 'none');
  end if;
  select x.created_at into asked_at from app_public.conversation_messages x
   where x.organization_id = cv.organization_id and x.id = conversation_ai_record.message_id;
  if answer->>'kind' = 'handover' or coalesce(btrim(answer->>'text'), '') = '' then
    update app_public.conversations x set ai_held = true, held_at = now(), updated_at = now()
     where x.organization_id = cv.organization_id and x.id = cv.id;
    perform app_private.conversation_ai_interaction(cv, 'completed', asked_at);
    return jsonb_build_object('action', 'handover');
  end if;
  select * into c from app_public.contacts x where x.organization_id = cv.organization_id and x.id = cv.contact_id;
  if cv.channel = 'sms' then
    -- the same rules as a person's answer (rule 6): never to an opted-out number
    refusal := case when c.phone is null then 'The contact has no phone number' else app_private.conversation_sms_refusal(c, cv) end;
    if refusal is not null then
      return jsonb_build_object('action', 'refused', 'reason', refusal);
    end if;
  end if;
  m := app_private.conversation_append_outbound(cv, 'ai', null, left(btrim(answer->>'text'), 1600), cv.business_address, c.phone,
    null, null, case when cv.channel = any(sinks) then 'sink' else 'job' end);
  perform app_private.conversation_ai_interaction(cv, 'in_progress', asked_at);
  return jsonb_build_object('action', 'reply', 'message_id', m.id);
end $$;

ALTER FUNCTION app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]) IS 'Writes the AI''s answer to an inbound message (queued for delivery) or hands the thread to a person (hold), once, and records the conversation''s interaction: nothing when the message is no longer the AI''s to answer.';

--
-- Name: conversation_append_outbound(app_public.conversations, text, uuid, text, text, text, text, jsonb, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text) RETURNS app_public.conversation_messages
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  m app_public.conversation_messages;
  message_id uuid := gen_random_uuid();
  meta jsonb := jsonb_build_object('conversation_id', cv.id, 'message_id', message_id);
begin
  if deliver not in ('job', 'sink', 'caller') then
    raise exception 'conversation_append_outbound: deliver is job, sink or caller, not %', deliver;
  end if;
  if cv.channel = 'email' then
    -- the id a reply's In-Reply-To names (conversations_inbound_email finds the thread by it)
    headers := jsonb_build_object('Message-ID', '<' || message_id || '@' || coalesce((select o.sending_email_domain
      from app_public.organizations o where o.id = cv.organization_id), 'localhost') || '>') || coalesce(headers, '{}');
  end if;
  if headers is not null and headers <> '{}' then
    meta := meta || jsonb_build_object('headers', headers);
  end if;
  insert into app_public.conversation_messages (organization_id, id, conversation_id, channel, direction, author, author_person_id,
    body, subject, status)
  values (cv.organization_id, message_id, cv.id, cv.channel, 'outbound', author, person, body, subject,
          case when cv.channel = 'chat' or deliver = 'sink' then 'sent' else 'queued' end)
  returning * into m;
  if cv.channel <> 'chat' then
    insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
    values (cv.organization_id, message_id, cv.channel, sender, recipient, coalesce(subject, case when cv.channel = 'email' then '' end),
            body, meta, case when deliver = 'sink' then 'sent' else 'queued' end, case when deliver = 'sink' then now() end);
    if deliver = 'sink' then
      insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
      values (cv.organization_id, message_id, cv.channel, sender, recipient, subject, body, meta);
    elsif deliver = 'job' then
      perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', cv.organization_id, 'message_id', message_id),
        job_key => 'message:' || message_id);
    end if;
  end if;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id;
  return m;
end $$;

ALTER FUNCTION app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text) IS 'An outbound message of a conversation and its outgoing message (same id; meta conversation_id, message_id), delivered by job, by the local sink now, or by the caller; chat messages are stored as sent.';

--
-- Name: conversation_hold_for_person(app_public.conversations); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_hold_for_person(cv app_public.conversations) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_public.conversations x set ai_held = true, held_at = coalesce(x.held_at, now()), updated_at = now()
   where x.organization_id = cv.organization_id and x.id = cv.id and x.channel <> 'email' and not x.ai_held
$$;

ALTER FUNCTION app_private.conversation_hold_for_person(cv app_public.conversations) OWNER TO svc_owner;

--
-- Name: conversation_locked_for_write(uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_locked_for_write(conversation_id uuid) RETURNS app_public.conversations
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
begin
  select * into cv from app_public.conversations x
   where x.organization_id = app_hidden.current_org_id() and x.id = conversation_locked_for_write.conversation_id for update;
  if not found or not app_hidden.conversation_write_reach(cv.contact_id, cv.location_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  return cv;
end $$;

ALTER FUNCTION app_private.conversation_locked_for_write(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: conversation_send_answer(app_public.conversation_messages); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_send_answer(m app_public.conversation_messages) RETURNS jsonb
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object(
    'message', app_hidden.conversation_message_json(m),
    'conversation', (select app_hidden.conversation_json(cv, c) from app_public.conversations cv
                       join app_public.contacts c on c.organization_id = cv.organization_id and c.id = cv.contact_id
                      where cv.organization_id = m.organization_id and cv.id = m.conversation_id),
    'outgoing', (select jsonb_build_object('organization_id', om.organization_id, 'id', om.id, 'channel', om.channel,
                   'sender', om.sender, 'recipient', om.recipient, 'subject', om.subject, 'body', om.body, 'meta', om.meta)
                   from app_private.outgoing_messages om
                  where om.organization_id = m.organization_id and om.id = m.id and om.status = 'queued'))
$$;

ALTER FUNCTION app_private.conversation_send_answer(m app_public.conversation_messages) OWNER TO svc_owner;

--
-- Name: conversation_sequence_reply(uuid, text, text, text, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  om app_private.outgoing_messages;
begin
  if replied_id is not null then
    select * into om from app_private.outgoing_messages x
     where x.organization_id = org and x.id = replied_id and x.meta ? 'enrollment_id';
  elsif channel = 'sms' then
    select * into om from app_private.outgoing_messages x
     where x.organization_id = org and x.channel = 'sms' and x.recipient = contact_address and x.sender = business_address
       and x.meta ? 'enrollment_id' and x.created_at > now() - interval '30 days'
     order by x.created_at desc, x.id desc limit 1;
  end if;
  if om.id is null or exists (select 1 from app_public.enrollment_events v
                               where v.organization_id = org and v.enrollment_id = (om.meta->>'enrollment_id')::uuid
                                 and v.type = 'replied' and v.message_id = om.id) then
    return;
  end if;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
  select org, e.id, 'replied', om.meta->>'step_key', om.id
    from app_public.enrollments e where e.organization_id = org and e.id = (om.meta->>'enrollment_id')::uuid;
end $$;

ALTER FUNCTION app_private.conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid) IS 'Records an inbound message as the replied event of the sequence message it answers (In-Reply-To, or the last sequence SMS from that number to that phone), once per message.';

--
-- Name: conversation_sms_refusal(app_public.contacts, app_public.conversations); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversation_sms_refusal(c app_public.contacts, cv app_public.conversations) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if exists (select 1 from app_public.sms_opt_outs o
              where o.organization_id = c.organization_id and o.phone = c.phone and o.ended_at is null) then
    return 'The contact opted out of SMS';
  end if;
  if not c.sms_consent and (cv.id is null or not exists (
       select 1 from app_public.conversation_messages m
        where m.organization_id = cv.organization_id and m.conversation_id = cv.id and m.direction = 'inbound')) then
    return 'The contact has not consented to SMS';
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.conversation_sms_refusal(c app_public.contacts, cv app_public.conversations) OWNER TO svc_owner;

--
-- Name: conversations_inbound_email(text, text, text, text, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  org uuid;
  replied_id uuid;
  c app_public.contacts;
  made boolean;
  cv app_public.conversations;
  m app_public.conversation_messages;
  topic text := nullif(btrim(regexp_replace(coalesce(subject, ''), '^\s*((re|fwd?|aw|sv)\s*:\s*)+', '', 'i')), '');
begin
  if to_address !~ '^[^@\s]+@[^@\s]+$' or from_address !~ '^[^@\s]+@[^@\s]+$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are email addresses');
  end if;
  if body is null or length(body) not between 1 and 20000 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: 1 to 20000 characters');
  end if;
  replied_id := substring(in_reply_to from '^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@')::uuid;
  if replied_id is not null then
    select om.organization_id, (om.meta->>'conversation_id')::uuid into org, cv.id
      from app_private.outgoing_messages om where om.id = replied_id and om.channel = 'email';
  end if;
  if org is null then
    select o.id into org from app_public.organizations o
     where lower(o.sending_email_domain) = lower(split_part(to_address, '@', 2)) order by o.created_at, o.id limit 1;
  end if;
  if org is null then
    perform app_hidden.raise_error(404, 'not_found', 'No organization receives email at ' || to_address);
  end if;
  if provider_id is not null then
    select * into m from app_public.conversation_messages x where x.organization_id = org and x.provider_message_id = provider_id;
    if found then
      return jsonb_build_object('organization_id', org, 'conversation_id', m.conversation_id, 'message_id', m.id, 'duplicate', true);
    end if;
  end if;

  select x.created into made from app_private.inbound_contact(org, null, null, lower(from_address)) x;
  select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(from_address);
  if cv.id is not null then
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.id = cv.id and x.contact_id = c.id and x.channel = 'email' for update;
  end if;
  if cv.id is null then
    select * into cv from app_public.conversations x
     where x.organization_id = org and x.contact_id = c.id and x.channel = 'email' and x.business_address = lower(to_address)
       and x.subject is not distinct from topic
     order by x.last_message_at desc, x.id desc limit 1 for update;
  end if;
  if cv.id is null then
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address, subject)
    values (org, c.id, app_private.contact_only_location(org, c.id), 'email', lower(to_address), topic)
    returning * into cv;
  end if;
  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, subject, status,
    provider_message_id)
  values (org, cv.id, 'email', 'inbound', 'contact', body, subject, 'received', provider_id)
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = org and x.id = cv.id;
  perform app_private.conversation_sequence_reply(org, 'email', c.email_key, null, replied_id);
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id, 'contact_id', c.id,
    'contact_created', made);
end $_$;

ALTER FUNCTION app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text) IS 'An email arrives: organization and thread by In-Reply-To or the domain written to, contact by email or created, the thread continued (replied to, or same address and subject) or opened. No AI answers email.';

--
-- Name: conversations_inbound_sms(text, text, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  org uuid;
  org_name text;
  location uuid;
  c app_public.contacts;
  made boolean;
  cv app_public.conversations;
  m app_public.conversation_messages;
  keyword text := app_private.sms_keyword(body);
  answer text;
  reply app_public.conversation_messages;
  ai_queued boolean := false;
begin
  if to_number !~ '^\+[1-9][0-9]{6,14}$' or from_number !~ '^\+[1-9][0-9]{6,14}$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are E.164 numbers');
  end if;
  if body is null or length(body) not between 1 and 20000 then
    perform app_hidden.raise_error(400, 'bad_request', 'body: 1 to 20000 characters');
  end if;
  select l.organization_id, l.id into org, location from app_public.locations l
   where l.sms_number = to_number order by l.created_at, l.id limit 1;
  if org is null then
    select o.id into org from app_public.organizations o where o.default_sms_number = to_number order by o.created_at, o.id limit 1;
  end if;
  if org is null then
    perform app_hidden.raise_error(404, 'not_found', 'No organization texts from ' || to_number);
  end if;
  select o.name into org_name from app_public.organizations o where o.id = org;

  if provider_id is not null then
    select * into m from app_public.conversation_messages x where x.organization_id = org and x.provider_message_id = provider_id;
    if found then
      select * into cv from app_public.conversations x where x.organization_id = org and x.id = m.conversation_id;
      return jsonb_build_object('organization_id', org, 'conversation_id', m.conversation_id, 'message_id', m.id,
        'contact_id', cv.contact_id, 'duplicate', true);
    end if;
  end if;

  select x.created into made from app_private.inbound_contact(org, location, from_number, null) x;
  select * into c from app_public.contacts x where x.organization_id = org and x.phone = from_number;

  insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
  values (org, c.id, coalesce(location, app_private.contact_only_location(org, c.id)), 'sms', to_number)
  on conflict (organization_id, contact_id, business_address) where channel = 'sms' do nothing;
  select * into cv from app_public.conversations x
   where x.organization_id = org and x.contact_id = c.id and x.channel = 'sms' and x.business_address = to_number
     for update;

  insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status,
    provider_message_id)
  values (org, cv.id, 'sms', 'inbound', 'contact', body, 'received', provider_id)
  returning * into m;
  update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
   where x.organization_id = org and x.id = cv.id;

  if keyword = 'stop' then
    insert into app_public.sms_opt_outs (organization_id, phone, contact_id, source) values (org, c.phone, c.id, 'keyword')
    on conflict (organization_id, phone) where ended_at is null do nothing;
    update app_public.contacts x set sms_consent = false, sms_consent_at = null, sms_consent_source = null, updated_at = now()
     where x.organization_id = org and x.id = c.id;
    answer := org_name || ': you are unsubscribed and will get no more messages from us. Reply START to resubscribe.';
  elsif keyword = 'start' then
    update app_public.sms_opt_outs o set ended_at = greatest(o.created_at, now())
     where o.organization_id = org and o.phone = c.phone and o.ended_at is null;
    update app_public.contacts x set sms_consent = true, sms_consent_at = now(), sms_consent_source = 'SMS keyword START',
           updated_at = now()
     where x.organization_id = org and x.id = c.id;
    answer := org_name || ': you are resubscribed to our messages. Reply HELP for help, STOP to unsubscribe. '
      || 'Msg & data rates may apply.';
  elsif keyword = 'help' then
    answer := app_private.sms_help_reply(org, to_number);
  end if;

  if keyword is null then
    perform app_private.conversation_sequence_reply(org, 'sms', c.phone, to_number, null);
  end if;
  if answer is not null then
    reply := app_private.conversation_append_outbound(cv, 'system', null, answer, to_number, c.phone, null, null, 'job');
  elsif app_hidden.conversation_response_mode(cv) = 'ai' then
    perform app_private.add_job('conversation_ai_reply',
      jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id),
      job_key => 'conversation_ai:' || m.id);
    ai_queued := true;
  end if;
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'message_id', m.id, 'contact_id', c.id,
    'contact_created', made, 'keyword', keyword, 'reply_message_id', reply.id, 'ai_queued', ai_queued);
end $_$;

ALTER FUNCTION app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_inbound_sms(to_number text, from_number text, body text, provider_id text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text) IS 'An SMS arrives at one of the organization''s numbers: the contact matched by phone or created, the thread continued or opened, STOP/START/HELP recorded and answered, anything else left to the AI while it answers. Idempotent on provider_id.';

--
-- Name: define_contacts_json(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.define_contacts_json() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
declare
  -- jsonb_build_object takes at most 100 arguments: 50 fields per call, the calls joined by ||
  objects text;
begin
  select string_agg(format('jsonb_build_object(%s)', pairs), E'\n      || ' order by chunk) into objects
    from (select chunk, string_agg(format('%L, %s', name, expression), E',\n        ' order by position, name) as pairs
            from (select f.*, (row_number() over (order by position, name) - 1) / 50 as chunk
                    from app_private.contact_fields f) numbered
           group by chunk) chunks;
  execute format($define$
create or replace function app_hidden.contacts_json(contacts app_public.contacts[]) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $renderer$
declare
  org uuid := app_hidden.current_org_id();
  reach uuid[] := app_hidden.current_location_ids();
begin
  return (
    select coalesce(jsonb_agg(%s
      order by c.ordinality), '[]')
      from unnest(contacts) with ordinality as c
     where c.organization_id = org);
end $renderer$
$define$, coalesce(objects, $$'{}'::jsonb$$));
  perform app_hidden.contacts_json('{}');
end $_$;

ALTER FUNCTION app_private.define_contacts_json() OWNER TO svc_owner;

--
-- Name: FUNCTION define_contacts_json(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.define_contacts_json() IS 'Generates app_hidden.contacts_json from app_private.contact_fields; run by the table''s trigger.';

--
-- Name: outgoing_messages; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.outgoing_messages (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    channel text NOT NULL,
    sender text,
    recipient text NOT NULL,
    subject text,
    body text NOT NULL,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sent_at timestamp with time zone,
    provider_id text,
    delivery_status text,
    CONSTRAINT outgoing_messages_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'sms'::text]))),
    CONSTRAINT outgoing_messages_check CHECK (((channel <> 'email'::text) OR (subject IS NOT NULL))),
    CONSTRAINT outgoing_messages_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'sent'::text, 'failed'::text, 'unknown'::text])))
);

ALTER TABLE app_private.outgoing_messages OWNER TO svc_owner;

--
-- Name: TABLE outgoing_messages; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.outgoing_messages IS 'Every email and SMS the service decided to send; the deliver_message task hands each to its transport once.';

--
-- Name: COLUMN outgoing_messages.provider_id; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.outgoing_messages.provider_id IS 'The provider''s id of the message once it accepted it (Twilio''s MessageSid): status callbacks name it.';

--
-- Name: COLUMN outgoing_messages.delivery_status; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.outgoing_messages.delivery_status IS 'The provider''s last reported status (queued, sent, delivered, undelivered, failed; bounced, complained for email).';

--
-- Name: delivery_message_event(app_private.outgoing_messages, text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  ev_id bigint;
  enrollment uuid := case when om.meta ? 'enrollment_id' then (om.meta->>'enrollment_id')::uuid end;
  enrollment_event text := case type when 'delivered' then 'delivered' when 'undelivered' then 'bounced'
                                     when 'failed' then 'bounced' when 'bounced' then 'bounced' end;
  hard boolean := om.channel = 'email' and (type = 'complained' or (type = 'bounced' and detail->>'bounce' = 'hard'));
  holder uuid;
begin
  if type is null or type not in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied') then
    perform app_hidden.raise_error(400, 'bad_request', 'Unknown delivery event');
  end if;
  insert into app_private.delivery_events (organization_id, message_id, event_key, type, detail)
  values (om.organization_id, om.id, delivery_message_event.event_key, delivery_message_event.type,
          coalesce(delivery_message_event.detail, '{}'))
  on conflict on constraint delivery_events_event_key_key do nothing
  returning id into ev_id;
  if ev_id is null then
    return jsonb_build_object('known', true, 'recorded', false, 'duplicate', true, 'message_id', om.id);
  end if;
  if type <> 'auto_replied'
     and not (type in ('queued', 'sent') and om.delivery_status in ('delivered', 'undelivered', 'failed', 'bounced', 'complained')) then
    update app_private.outgoing_messages m set delivery_status = delivery_message_event.type
     where m.organization_id = om.organization_id and m.id = om.id;
  end if;
  if enrollment_event is not null and enrollment is not null then
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select om.organization_id, e.id, enrollment_event, om.meta->>'step_key', om.id,
           case when enrollment_event = 'bounced'
                then left(concat_ws(': ', detail->>'bounce', coalesce(detail->>'reason', type)), 500) end
      from app_public.enrollments e
     where e.organization_id = om.organization_id and e.id = enrollment;
  end if;
  if hard then
    if type = 'bounced' and enrollment is not null then
      perform app_private.end_enrollments(om.organization_id, array[enrollment], 'failed', 'hard_bounce');
    end if;
    select c.id into holder from app_public.contacts c
     where c.organization_id = om.organization_id and c.email_key = lower(om.recipient) order by c.created_at, c.id limit 1;
    if holder is not null then
      insert into app_public.email_suppressions (organization_id, email, contact_id, source)
      values (om.organization_id, lower(om.recipient), holder, case when type = 'complained' then 'complaint' else 'bounce' end)
      on conflict do nothing;
    end if;
  end if;
  return jsonb_build_object('known', true, 'recorded', true, 'duplicate', false, 'message_id', om.id,
    'organization_id', om.organization_id, 'type', type, 'suppressed', hard and holder is not null);
end $$;

ALTER FUNCTION app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb) IS 'A provider''s report about one message, once per event key: delivery_status, the enrollment''s delivered/bounced event, and for a hard bounce or complaint the address suppressed (a hard bounce also fails the enrollment).';

--
-- Name: delivery_set_provider_id(uuid, uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_set_provider_id(org uuid, message_id uuid, provider_id text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_private.outgoing_messages m set provider_id = delivery_set_provider_id.provider_id
   where m.organization_id = org and m.id = message_id
$$;

ALTER FUNCTION app_private.delivery_set_provider_id(org uuid, message_id uuid, provider_id text) OWNER TO svc_owner;

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
   where x.organization_id = enroll_by_trigger.organization_id and x.id = enroll_by_trigger.sequence_id;
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

ALTER FUNCTION app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.enroll_contact(organization_id uuid, sequence_id uuid, contact_id uuid, start_step_key text, source text, entry_event text, at timestamp with time zone) IS 'Enrolls one contact through app_private.enroll_contacts; answers {status: enrolled|skipped, reason?, enrollment}.';

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
  if cardinality(new_ids) > 0 and run_at <= now() + app_hidden.sequence_sweep_horizon() then
    if cardinality(new_ids) = 1 then
      perform app_private.kick_step_sweep(enroll_contacts.organization_id);
    else
      -- a set (an event fired for many contacts): their jobs in one add_jobs call, one notification
      perform graphile_worker.add_jobs(array(
        select row('sequence_step', json_build_object('organization_id', enroll_contacts.organization_id, 'enrollment_id', i,
                   'step_key', step->>'step_key'), null, run_at, null, 'sequence_step:' || i, null, null)::graphile_worker.job_spec
          from unnest(new_ids) i), false);
    end if;
  end if;
end $$;

ALTER FUNCTION app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text, source text, entry_event text, at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text, source text, entry_event text, at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.enroll_contacts(organization_id uuid, sequence_id uuid, contact_ids uuid[], start_step_key text, source text, entry_event text, at timestamp with time zone) IS 'Enrolls contacts (the one core of every way in, set-based): enrollment on the first or given step, due at + delay, run in the send window, enrolled event; step jobs added at once for a set due within the sweep horizon, else from the sweep (one contact due within it kicks it); a contact already live answers its enrollment (not enrolled).';

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
-- Name: idempotency_lock_key(uuid, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  -- operation ids hold no ':', so the parts cannot run into each other
  select hashtextextended('svc.idempotency:' || credential_id::text || ':' || operation_id || ':' || key, 0)
$$;

ALTER FUNCTION app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text) OWNER TO svc_owner;

--
-- Name: FUNCTION idempotency_lock_key(credential_id uuid, operation_id text, key text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text) IS 'Advisory-lock key held by the connection running the first call of (credential, operation, idempotency key).';

--
-- Name: inbound_contact(uuid, uuid, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.inbound_contact(org uuid, location uuid, phone text, email text) RETURNS TABLE(contact_id uuid, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  c app_public.contacts;
  made boolean := false;
begin
  if phone is not null then
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = inbound_contact.phone;
  else
    select * into c from app_public.contacts x where x.organization_id = org and x.email_key = lower(inbound_contact.email);
  end if;
  if c.id is null then
    insert into app_public.contacts (organization_id, phone, email) values (org, inbound_contact.phone, inbound_contact.email)
    on conflict do nothing
    returning * into c;
    made := c.id is not null;
    if not made then
      -- created at the same moment by another message from the same sender
      select * into c from app_public.contacts x
       where x.organization_id = org and (x.phone = inbound_contact.phone or x.email_key = lower(inbound_contact.email));
    end if;
  else
    update app_public.contacts x set last_seen_at = greatest(x.last_seen_at, now())
     where x.organization_id = org and x.id = c.id;
  end if;
  if location is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, location)
    on conflict do nothing;
  end if;
  return query select c.id, made;
end $$;

ALTER FUNCTION app_private.inbound_contact(org uuid, location uuid, phone text, email text) OWNER TO svc_owner;

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
-- Name: api_keys; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.api_keys (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    kind text NOT NULL,
    name text,
    created_by uuid NOT NULL,
    role text,
    scopes text[] NOT NULL,
    powers text[] DEFAULT '{}'::text[] NOT NULL,
    key_hash bytea NOT NULL,
    revoked_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT api_keys_check CHECK (((kind = 'organization'::text) OR (role IS NULL))),
    CONSTRAINT api_keys_key_hash_check CHECK ((length(key_hash) = 32)),
    CONSTRAINT api_keys_kind_check CHECK ((kind = ANY (ARRAY['personal'::text, 'organization'::text]))),
    CONSTRAINT api_keys_powers_check CHECK ((powers <@ ARRAY['contacts'::text, 'sequences'::text, 'appointments'::text, 'staff'::text])),
    CONSTRAINT api_keys_role_check CHECK ((role = ANY (ARRAY['MANAGER'::text, 'MEMBER'::text])))
);

ALTER TABLE app_private.api_keys OWNER TO svc_owner;

--
-- Name: TABLE api_keys; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.api_keys IS 'Credentials. A personal key follows its person''s current role and locations; an organization key carries its own role, powers and locations, fixed at creation.';

--
-- Name: COLUMN api_keys.key_hash; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.api_keys.key_hash IS 'sha256 of the whole key (svc_sk_ + 32 characters); the key itself is never stored.';

--
-- Name: person_may_hold_key(app_public.people, app_private.api_keys); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.person_may_hold_key(p app_public.people, k app_private.api_keys) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select p.active and (
    p.role in ('owner', 'admin')
    or (p.role = 'manager' and 'staff' = any(p.powers)
        and k.role is not null
        and k.powers <@ p.powers
        and exists (select 1 from app_private.api_key_locations kl
                    where kl.organization_id = k.organization_id and kl.api_key_id = k.id)
        and not exists (
          select 1 from app_private.api_key_locations kl
          where kl.organization_id = k.organization_id and kl.api_key_id = k.id
            and kl.location_id not in (select pl.location_id from app_public.person_locations pl
                                        where pl.organization_id = p.organization_id
                                          and pl.person_id = p.id))))
$$;

ALTER FUNCTION app_private.person_may_hold_key(p app_public.people, k app_private.api_keys) OWNER TO svc_owner;

--
-- Name: refresh_appointment_own_client(uuid, uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  person uuid;
begin
  if staff_profile_id is null or contact_id is null then
    return;
  end if;
  select sp.person_id into person from app_public.staff_profiles sp
   where sp.organization_id = refresh_appointment_own_client.organization_id and sp.id = refresh_appointment_own_client.staff_profile_id;
  if person is null then
    return;
  end if;
  if exists (select 1 from app_public.appointments a
              where a.organization_id = refresh_appointment_own_client.organization_id
                and a.staff_profile_id = refresh_appointment_own_client.staff_profile_id
                and a.contact_id = refresh_appointment_own_client.contact_id
                and a.kind = 'appointment' and a.status = 'booked') then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    values (refresh_appointment_own_client.organization_id, person, refresh_appointment_own_client.contact_id, 'appointments')
    on conflict do nothing;
  else
    delete from app_private.own_clients oc
     where oc.organization_id = refresh_appointment_own_client.organization_id and oc.person_id = person
       and oc.contact_id = refresh_appointment_own_client.contact_id and oc.source = 'appointments';
  end if;
end $$;

ALTER FUNCTION app_private.refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid) IS 'Keeps the own_clients row (source appointments) of a team member''s person and a contact: present while a live booking joins them.';

--
-- Name: refresh_search_trigrams(integer); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.refresh_search_trigrams(sample_rows integer DEFAULT 50000) RETURNS integer
    LANGUAGE plpgsql
    AS $_$
declare
  estimate real;
  percent real;
  counted int;
begin
  select reltuples into estimate from pg_catalog.pg_class where oid = 'app_public.contacts'::regclass;
  if estimate is null or estimate < sample_rows then
    percent := 100;
  else
    percent := 100 * sample_rows / estimate;
  end if;
  delete from app_private.search_trigrams;
  with sample as materialized (
    select lower(app_hidden.contact_search_text(c.name, c.email, c.phone)) as text
      from app_public.contacts c tablesample system (percent)),
  size as (select count(*) as n from sample)
  insert into app_private.search_trigrams (trigram, share)
  select p.piece, count(*)::real / (select n from size)
    from sample s
    cross join lateral (select distinct substr(s.text, i, 3) as piece from generate_series(1, length(s.text) - 2) i) p
   where p.piece ~ '^[a-z0-9]{3}$'
   group by p.piece;
  get diagnostics counted = row_count;
  return counted;
end $_$;

ALTER FUNCTION app_private.refresh_search_trigrams(sample_rows integer) OWNER TO svc_owner;

--
-- Name: FUNCTION refresh_search_trigrams(sample_rows integer); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.refresh_search_trigrams(sample_rows integer) IS 'Recounts app_private.search_trigrams from a sample of contacts; answers how many pieces it counted.';

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
-- Name: send_refusal(uuid, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.send_refusal(organization_id uuid, channel text, address text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if address is null or address = '' then
    return 'missing_address';
  end if;
  if channel = 'email' then
    if exists (select 1 from app_public.email_suppressions s
                where s.organization_id = send_refusal.organization_id and s.email = lower(address)) then
      return 'suppressed';
    end if;
  else
    if exists (select 1 from app_public.sms_opt_outs o
                where o.organization_id = send_refusal.organization_id and o.phone = address and o.ended_at is null) then
      return 'opted_out';
    end if;
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.send_refusal(organization_id uuid, channel text, address text) OWNER TO svc_owner;

--
-- Name: FUNCTION send_refusal(organization_id uuid, channel text, address text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.send_refusal(organization_id uuid, channel text, address text) IS 'Why an email or SMS may not go to this address now (missing_address, suppressed, opted_out), or NULL. SMS consent is the contact''s and checked beside it.';

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
-- Name: sms_help_reply(uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sms_help_reply(org uuid, business_number text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select case
    when o.sms_help_text is null then
      o.name || ': for help, call or text ' || business_number || ' or reply with your question. '
        || 'Msg & data rates may apply; reply STOP to unsubscribe, START to resubscribe.'
    else
      case when strpos(lower(o.sms_help_text), lower(o.name)) > 0 then '' else o.name || ': ' end
        || o.sms_help_text
        || case when o.sms_help_text ~* '\mstop\M' then '' else ' Reply STOP to unsubscribe.' end
  end
  from app_public.organizations o where o.id = org
$$;

ALTER FUNCTION app_private.sms_help_reply(org uuid, business_number text) OWNER TO svc_owner;

--
-- Name: FUNCTION sms_help_reply(org uuid, business_number text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sms_help_reply(org uuid, business_number text) IS 'The answer to HELP/INFO sent from business_number: the organization''s sms_help_text, named and with STOP, or the default.';

--
-- Name: sms_keyword(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sms_keyword(body text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$
  select case upper(regexp_replace(btrim(body), '[[:space:][:punct:]]+$', ''))
    when 'STOP' then 'stop' when 'STOPALL' then 'stop' when 'UNSUBSCRIBE' then 'stop' when 'CANCEL' then 'stop'
    when 'END' then 'stop' when 'QUIT' then 'stop' when 'REVOKE' then 'stop' when 'OPTOUT' then 'stop'
    when 'START' then 'start' when 'UNSTOP' then 'start'
    when 'HELP' then 'help' when 'INFO' then 'help'
    else case when app_private.sms_plain_opt_out(body) then 'stop' end
  end
$_$;

ALTER FUNCTION app_private.sms_keyword(body text) OWNER TO svc_owner;

--
-- Name: sms_plain_opt_out(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.sms_plain_opt_out(body text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $_$
  select btrim(regexp_replace(regexp_replace(lower(coalesce(body, '')), '[''’‘`]', '', 'g'), '[^a-z0-9]+', ' ', 'g')) ~ (
    '^(hi |hello |hey )?(please |pls |plz )?('
    || '(stop|quit|cease) (texting|txting|messaging|contacting|sending (me )?(texts|messages|text messages|sms|sms messages))( me)?'
    || '|(do not|dont|never) (text|txt|message|sms|contact) (me|this number)'
    || '|no more (texts|text messages|messages|sms)'
    || '|unsubscribe( me)?( from (this|these|your) (list|texts|messages))?'
    || '|(remove|take) (me|my number|this number) (off|from) (your|the|this) (list|texting list|text list|sms list|contact list|mailing list)'
    || '|opt (me )?out|optout me|opt me out of (this|these|your) (texts|messages)'
    || '|(i (want|would like|wish)|id like) to (unsubscribe|opt out|stop (getting|receiving) (texts|messages|these))'
    || '|(leave me alone and )?stop (all )?(texts|messages|text messages)'
    || ')( (again|anymore|any more|ever again|now|at all))?( (please|pls|plz|thanks|thank you|thx))?$')
$_$;

ALTER FUNCTION app_private.sms_plain_opt_out(body text) OWNER TO svc_owner;

--
-- Name: FUNCTION sms_plain_opt_out(body text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.sms_plain_opt_out(body text) IS 'Whether a whole SMS is a plain-language opt-out request ("please stop texting me", "unsubscribe me", "don''t text me again"); conservative: a longer or conditional message is not one.';

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
-- Name: tg_appointments__own_clients(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_appointments__own_clients() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.refresh_appointment_own_client(old.organization_id, old.staff_profile_id, old.contact_id);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform app_private.refresh_appointment_own_client(new.organization_id, new.staff_profile_id, new.contact_id);
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_appointments__own_clients() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_appointments__own_clients(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_appointments__own_clients() IS 'After a booking is written, moved, cancelled or deleted: the own clients of its team member(s) follow.';

--
-- Name: tg_appointments__sequences(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_appointments__sequences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s record;
begin
  perform app_private.check_contact_exits(new.organization_id, new.contact_id);
  for s in
    select x.id from app_public.sequences x
     where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
       and x.trigger->>'type' = 'appointment_booked'
       and (x.trigger->>'location_id' is null or x.trigger->>'location_id' = new.location_id::text)
     order by x.id
  loop
    perform app_private.enroll_by_trigger(new.organization_id, s.id, new.contact_id, 'appointment_booked', null);
  end loop;
  return null;
end $$;

ALTER FUNCTION app_private.tg_appointments__sequences() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_appointments__sequences(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_appointments__sequences() IS 'appointment_booked: after an API booking, the contact''s exits are checked and the automations it triggers enroll it.';

--
-- Name: tg_appointments__webhooks(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_appointments__webhooks() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  event text := case when new.status = 'cancelled' then 'appointment.cancelled' else 'appointment.booked' end;
begin
  if not app_private.webhook_wanted(new.organization_id, event) then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, event,
    coalesce(new.cancelled_at, new.created_at),
    jsonb_build_object('id', new.id, 'location_id', new.location_id, 'calendar_id', new.calendar_id,
      'team_member_id', new.staff_profile_id, 'offering_id', new.offering_id, 'contact_id', new.contact_id,
      'title', new.title, 'start_time', new.starts_at, 'end_time', new.ends_at, 'recurring', new.rrule is not null,
      'status', new.status, 'cancelled_at', new.cancelled_at,
      'attendee_name', new.attendee_name, 'attendee_phone', new.attendee_phone, 'attendee_email', new.attendee_email));
  return null;
end $$;

ALTER FUNCTION app_private.tg_appointments__webhooks() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_appointments__webhooks(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_appointments__webhooks() IS 'appointment.booked when an appointment is booked, appointment.cancelled when it is cancelled (blocks of time off are neither).';

--
-- Name: tg_calls__own_clients(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_calls__own_clients() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.staff_profile_id is not null
     and (tg_op = 'DELETE' or old.staff_profile_id is distinct from new.staff_profile_id or old.contact_id <> new.contact_id)
     and not exists (select 1 from app_public.calls c
                      where c.organization_id = old.organization_id and c.contact_id = old.contact_id
                        and c.staff_profile_id = old.staff_profile_id and c.id <> old.id) then
    delete from app_private.own_clients o
     using app_public.staff_profiles sp
     where sp.organization_id = old.organization_id and sp.id = old.staff_profile_id
       and o.organization_id = old.organization_id and o.person_id = sp.person_id and o.contact_id = old.contact_id
       and o.source = 'calls';
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.staff_profile_id is not null then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'calls'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id
    on conflict do nothing;
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_calls__own_clients() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_calls__own_clients(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_calls__own_clients() IS 'The calls area''s rows of app_private.own_clients: a contact is the own client of the team member who took a call with it.';

--
-- Name: tg_contact_events__sequences(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contact_events__sequences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  g record;
begin
  for g in
    select f.organization_id, f.event, array_agg(distinct e.id) as ids
      from inserted f
      join app_public.enrollments e on e.organization_id = f.organization_id and e.contact_id = f.contact_id
       and e.entry_event = f.event and e.status in ('active', 'paused')
     where f.kind = 'cancel'
     group by f.organization_id, f.event
  loop
    perform app_private.end_enrollments(g.organization_id, g.ids, 'cancelled', 'cancel_event:' || g.event);
  end loop;
  for g in
    select f.organization_id, s.id as sequence_id, f.event, array_agg(distinct f.contact_id) as contacts
      from inserted f
      join app_private.event_subscriptions es on es.organization_id = f.organization_id and es.id = any(f.subscription_ids)
       and es.subscriber_kind = 'sequence'
      join app_public.sequences s on s.organization_id = f.organization_id and s.id = es.subscriber_id
       and s.status = 'active' and s.kind = 'automation'
     where f.kind = 'fire'
       and (s.location_id is null or exists (
             select 1 from app_public.contact_locations cl
              where cl.organization_id = f.organization_id and cl.contact_id = f.contact_id and cl.location_id = s.location_id))
     group by f.organization_id, s.id, f.event
     order by f.organization_id, s.id, f.event
  loop
    perform count(*) from app_private.enroll_contacts(g.organization_id, g.sequence_id, g.contacts, null, 'event', g.event);
  end loop;
  return null;
end $$;

ALTER FUNCTION app_private.tg_contact_events__sequences() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_contact_events__sequences(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_contact_events__sequences() IS 'Sequences'' listener of contacts_upsert events, per statement: cancel rows cancel the contacts'' enrollments that entered by that event; fire rows enroll them in the subscribed sequences.';

--
-- Name: tg_contact_fields__define(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contact_fields__define() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform app_private.define_contacts_json();
  return null;
end $$;

ALTER FUNCTION app_private.tg_contact_fields__define() OWNER TO svc_owner;

--
-- Name: tg_contact_notes__count(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contact_notes__count() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_public.contacts set notes_count = notes_count + 1
   where organization_id = new.organization_id and id = new.contact_id;
  return null;
end $$;

ALTER FUNCTION app_private.tg_contact_notes__count() OWNER TO svc_owner;

--
-- Name: tg_contact_tags__sequences(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contact_tags__sequences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  tag_name citext;
  s record;
begin
  select t.name into tag_name from app_public.tags t where t.organization_id = new.organization_id and t.id = new.tag_id;
  perform app_private.check_contact_exits(new.organization_id, new.contact_id);
  for s in
    select x.id from app_public.sequences x
     where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
       and x.trigger->>'type' = 'tag_added' and (x.trigger->>'tag')::citext = tag_name
     order by x.id
  loop
    perform app_private.enroll_by_trigger(new.organization_id, s.id, new.contact_id, 'tag_added', null);
  end loop;
  return null;
end $$;

ALTER FUNCTION app_private.tg_contact_tags__sequences() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_contact_tags__sequences(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_contact_tags__sequences() IS 'A tag added to a contact: completes enrollments whose exit it is, and enrolls the contact in active automations triggered by it.';

--
-- Name: tg_contacts__sequence_exits(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contacts__sequence_exits() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if exists (select 1 from app_public.enrollments e
              where e.organization_id = new.organization_id and e.contact_id = new.id and e.status in ('active', 'paused')) then
    perform app_private.check_contact_exits(new.organization_id, new.id);
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_contacts__sequence_exits() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_contacts__sequence_exits(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_contacts__sequence_exits() IS 'A contact''s stage or fields changed: completes its live enrollments whose exit conditions now hold.';

--
-- Name: tg_contacts__stage_changed_at(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contacts__stage_changed_at() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  new.stage_changed_at := now();
  return new;
end $$;

ALTER FUNCTION app_private.tg_contacts__stage_changed_at() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_contacts__stage_changed_at(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_contacts__stage_changed_at() IS 'Stamps contacts.stage_changed_at when the stage changes.';

--
-- Name: tg_contacts__webhooks_created(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contacts__webhooks_created() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not app_private.webhook_wanted(new.organization_id, 'contact.created') then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, 'contact.created', new.created_at, app_private.webhook_contact_data(new));
  return null;
end $$;

ALTER FUNCTION app_private.tg_contacts__webhooks_created() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_contacts__webhooks_created(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_contacts__webhooks_created() IS 'contact.created for every new contact.';

--
-- Name: tg_contacts__webhooks_updated(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contacts__webhooks_updated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  -- a contact created earlier in this same transaction (contacts_upsert filling in what it
  -- inserted) is one contact.created, not also an update
  if old.created_at = now() or not app_private.webhook_wanted(new.organization_id, 'contact.updated') then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, 'contact.updated', new.updated_at, app_private.webhook_contact_data(new));
  return null;
end $$;

ALTER FUNCTION app_private.tg_contacts__webhooks_updated() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_contacts__webhooks_updated(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_contacts__webhooks_updated() IS 'contact.updated when a contact''s name, email, phone, stage, custom fields or SMS consent change.';

--
-- Name: tg_conversation_messages__webhooks(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_conversation_messages__webhooks() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  cv app_public.conversations;
begin
  if not app_private.webhook_wanted(new.organization_id, 'message.received') then
    return null;
  end if;
  select * into cv from app_public.conversations x where x.organization_id = new.organization_id and x.id = new.conversation_id;
  perform app_private.webhook_emit(new.organization_id, 'message.received', new.created_at, jsonb_build_object(
    'id', new.id, 'conversation_id', new.conversation_id, 'contact_id', cv.contact_id, 'location_id', cv.location_id,
    'channel', new.channel, 'subject', new.subject, 'body', new.body, 'received_at', new.created_at));
  return null;
end $$;

ALTER FUNCTION app_private.tg_conversation_messages__webhooks() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_conversation_messages__webhooks(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_conversation_messages__webhooks() IS 'message.received when a contact''s SMS, email or chat message arrives.';

--
-- Name: tg_conversations__ai_interaction_ends(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_conversations__ai_interaction_ends() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_public.interactions i set status = 'completed', ended_at = greatest(now(), i.started_at)
   where i.organization_id = new.organization_id and i.conversation_id = new.id and i.status = 'in_progress';
  return null;
end $$;

ALTER FUNCTION app_private.tg_conversations__ai_interaction_ends() OWNER TO svc_owner;

--
-- Name: tg_email_suppressions__sequences(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_email_suppressions__sequences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform app_private.cancel_channel_enrollments(new.organization_id, array(
    select c.id from app_public.contacts c where c.organization_id = new.organization_id and c.email_key = new.email
    union select new.contact_id), 'email');
  return new;
end $$;

ALTER FUNCTION app_private.tg_email_suppressions__sequences() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_email_suppressions__sequences(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_email_suppressions__sequences() IS 'An address suppressed: its contacts'' email sequences are cancelled.';

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
-- Name: tg_form_submissions__webhooks(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_form_submissions__webhooks() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not app_private.webhook_wanted(new.organization_id, 'form.submitted') then
    return null;
  end if;
  perform app_private.webhook_emit(new.organization_id, 'form.submitted', new.submitted_at, jsonb_build_object(
    'id', new.id, 'form_id', new.form_id, 'contact_id', new.contact_id, 'payload', new.payload, 'submitted_at', new.submitted_at));
  return null;
end $$;

ALTER FUNCTION app_private.tg_form_submissions__webhooks() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_form_submissions__webhooks(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_form_submissions__webhooks() IS 'form.submitted when a submission is accepted (spam is not an event).';

--
-- Name: tg_forms__secret(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_forms__secret() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  insert into app_private.form_secrets (organization_id, form_id) values (new.organization_id, new.id) on conflict do nothing;
  return null;
end $$;

ALTER FUNCTION app_private.tg_forms__secret() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_forms__secret(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_forms__secret() IS 'Gives every new form the key its render-time tokens are signed with.';

--
-- Name: tg_outgoing_messages__conversation_status(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_outgoing_messages__conversation_status() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_public.conversation_messages m set status = new.status, error = new.error
   where m.organization_id = new.organization_id and m.id = new.id and m.direction = 'outbound'
     and (m.status, m.error) is distinct from (new.status, new.error);
  return null;
end $$;

ALTER FUNCTION app_private.tg_outgoing_messages__conversation_status() OWNER TO svc_owner;

--
-- Name: tg_people__end_dashboard_sessions(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_people__end_dashboard_sessions() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  delete from app_private.dashboard_sessions d where d.organization_id = new.organization_id and d.person_id = new.id;
  delete from app_private.dashboard_links d where d.organization_id = new.organization_id and d.person_id = new.id and d.used_at is null;
  return null;
end $$;

ALTER FUNCTION app_private.tg_people__end_dashboard_sessions() OWNER TO svc_owner;

--
-- Name: tg_people__revoke_keys(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_people__revoke_keys() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_private.api_keys k set revoked_at = now()
   where k.organization_id = new.organization_id and k.created_by = new.id
     and k.revoked_at is null
     and ((k.kind = 'personal' and not new.active)
          or (k.kind = 'organization' and not app_private.person_may_hold_key(new, k)));
  return new;
end $$;

ALTER FUNCTION app_private.tg_people__revoke_keys() OWNER TO svc_owner;

--
-- Name: tg_person_locations__revoke_keys(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_person_locations__revoke_keys() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_private.api_keys k set revoked_at = now()
    from app_public.people p
   where p.organization_id = old.organization_id and p.id = old.person_id
     and k.organization_id = p.organization_id and k.created_by = p.id
     and k.kind = 'organization' and k.revoked_at is null
     and not app_private.person_may_hold_key(p, k);
  return null;
end $$;

ALTER FUNCTION app_private.tg_person_locations__revoke_keys() OWNER TO svc_owner;

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
-- Name: tg_sms_opt_outs__sequences(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_sms_opt_outs__sequences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform app_private.cancel_channel_enrollments(new.organization_id, array(
    select c.id from app_public.contacts c where c.organization_id = new.organization_id and c.phone = new.phone
    union select new.contact_id), 'sms');
  return new;
end $$;

ALTER FUNCTION app_private.tg_sms_opt_outs__sequences() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_sms_opt_outs__sequences(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_sms_opt_outs__sequences() IS 'A number opted out: its contacts'' SMS sequences are cancelled.';

--
-- Name: webhook_contact_data(app_public.contacts); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_contact_data(c app_public.contacts) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone, 'stage_id', c.stage_id,
    'custom_fields', c.field_values, 'sms_consent', c.sms_consent, 'created_at', c.created_at, 'updated_at', c.updated_at)
$$;

ALTER FUNCTION app_private.webhook_contact_data(c app_public.contacts) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_contact_data(c app_public.contacts); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_contact_data(c app_public.contacts) IS 'The data of a contact.created or contact.updated event.';

--
-- Name: webhook_emit(uuid, text, timestamp with time zone, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  d record;
begin
  for d in
    insert into app_public.webhook_deliveries (organization_id, subscription_id, event, occurred_at, data)
    select s.organization_id, s.id, webhook_emit.event, webhook_emit.occurred_at, webhook_emit.data
      from app_public.webhook_subscriptions s
     where s.organization_id = webhook_emit.organization_id and s.status = 'active' and webhook_emit.event = any(s.events)
    returning webhook_deliveries.organization_id, webhook_deliveries.id
  loop
    perform app_private.add_job('webhook_deliver', jsonb_build_object('organization_id', d.organization_id, 'delivery_id', d.id),
      'webhook:' || d.id);
  end loop;
end $$;

ALTER FUNCTION app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) IS 'An event of the organization: a delivery, and its job, for each active subscription that takes it, in the caller''s transaction.';

--
-- Name: webhook_subscriptions; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.webhook_subscriptions (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    disabled_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_subscriptions_check CHECK (((status = 'disabled'::text) = (disabled_reason IS NOT NULL))),
    CONSTRAINT webhook_subscriptions_disabled_reason_check CHECK ((length(disabled_reason) <= 200)),
    CONSTRAINT webhook_subscriptions_events_check CHECK ((((cardinality(events) >= 1) AND (cardinality(events) <= 7)) AND (array_position(events, NULL::text) IS NULL) AND (events <@ ARRAY['contact.created'::text, 'contact.updated'::text, 'enrollment.completed'::text, 'appointment.booked'::text, 'appointment.cancelled'::text, 'message.received'::text, 'form.submitted'::text]))),
    CONSTRAINT webhook_subscriptions_status_check CHECK ((status = ANY (ARRAY['active'::text, 'disabled'::text]))),
    CONSTRAINT webhook_subscriptions_url_check CHECK (((length(url) <= 2000) AND (url ~ '^https?://[^/?#\s]+([/?#]\S*)?$'::text)))
);

ALTER TABLE app_public.webhook_subscriptions OWNER TO svc_owner;

--
-- Name: TABLE webhook_subscriptions; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.webhook_subscriptions IS 'An URL of an integration that receives the organization''s events it lists, signed (Standard Webhooks). Disabled when the receiver answers 410 Gone.';

--
-- Name: COLUMN webhook_subscriptions.events; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.webhook_subscriptions.events IS 'The event types delivered: contact.created, contact.updated, enrollment.completed, appointment.booked, appointment.cancelled, message.received, form.submitted.';

--
-- Name: webhook_subscribe(uuid, text, text[], text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text) RETURNS app_public.webhook_subscriptions
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_public.webhook_subscriptions;
begin
  insert into app_public.webhook_subscriptions (organization_id, url, events)
  values (webhook_subscribe.organization_id, webhook_subscribe.url,
          array(select distinct e from unnest(webhook_subscribe.events) e order by e))
  returning * into s;
  insert into app_private.webhook_secrets (organization_id, subscription_id, secret)
  values (s.organization_id, s.id, webhook_subscribe.secret);
  return s;
end $$;

ALTER FUNCTION app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_subscribe(organization_id uuid, url text, events text[], secret text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text) IS 'Adds a subscription with its signing secret; events after the commit are delivered to it.';

--
-- Name: webhook_unsubscribe(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  -- its secret and deliveries go with it: a delivery job that runs later finds nothing to send
  delete from app_public.webhook_subscriptions s
   where s.organization_id = webhook_unsubscribe.organization_id and s.id = webhook_unsubscribe.subscription_id;
  return found;
end $$;

ALTER FUNCTION app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_unsubscribe(organization_id uuid, subscription_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) IS 'Removes a subscription, its secret and its deliveries: nothing more is sent to it, pending retries included.';

--
-- Name: webhook_wanted(uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_wanted(organization_id uuid, event text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select exists (select 1 from app_public.webhook_subscriptions s
                  where s.organization_id = webhook_wanted.organization_id and s.status = 'active' and webhook_wanted.event = any(s.events))
$$;

ALTER FUNCTION app_private.webhook_wanted(organization_id uuid, event text) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_wanted(organization_id uuid, event text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_wanted(organization_id uuid, event text) IS 'Whether some active subscription of the organization takes the event: triggers ask before building an event''s data.';

--
-- Name: appointments_availability(uuid, date, uuid, uuid, text, text, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid DEFAULT NULL::uuid, team_member_id uuid DEFAULT NULL::uuid, postal_code text DEFAULT NULL::text, country_code text DEFAULT NULL::text, duration_minutes integer DEFAULT NULL::integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  loc app_public.locations;
  o app_public.offerings;
  len interval;
  cc text := country_code;
  members uuid[] := '{}';
  cals uuid[] := '{}';
  slots jsonb;
begin
  select * into loc from app_public.locations l where l.organization_id = org and l.id = appointments_availability.location_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if offering_id is not null then
    select * into o from app_public.offerings x
     where x.organization_id = org and x.id = appointments_availability.offering_id and x.location_id = loc.id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
    end if;
  end if;
  len := make_interval(mins => coalesce(o.duration_minutes, appointments_availability.duration_minutes, loc.slot_interval_minutes));
  if postal_code is not null and cc is null then
    cc := upper(loc.address->>'country_code');
    if cc is null then
      perform app_hidden.raise_error(400, 'bad_request', 'query.country_code: send the country of postal_code (this location has no address to take it from)');
    end if;
  end if;
  if loc.staffed then
    members := app_hidden.eligible_team_members(org, loc.id, o.id, postal_code, cc);
    if team_member_id is not null then
      if not team_member_id = any(app_hidden.eligible_team_members(org, loc.id, null, null, null)) then
        perform app_hidden.raise_error(404, 'not_found', 'Team member not found at this location');
      end if;
      members := case when team_member_id = any(members) then array[team_member_id] else '{}' end;
    end if;
  else
    if team_member_id is not null then
      perform app_hidden.raise_error(404, 'not_found', 'Team member not found at this location (it is not staffed: it books calendars)');
    end if;
    select coalesce(array_agg(c.id order by c.name, c.id), '{}') into cals
      from app_public.calendars c where c.organization_id = org and c.location_id = loc.id;
  end if;

  -- A start s suits a free range r of some team member (or calendar) when [s, s + len) lies
  -- within r: s in [lower(r), upper(r) - len]. Those windows of every one merged are the
  -- valid starts, and each start of the grid is one lookup in them (testing every start against
  -- every team member's open and busy multiranges cost most of the call).
  with free as (
    select r
      from app_hidden.team_time(loc, members, cals, app_hidden.local_day(day, loc.timezone)) t
      cross join lateral unnest(t.open - t.busy) r
     where upper(r) - len >= lower(r)
  ), valid as (
    select coalesce(range_agg(tstzrange(lower(r), upper(r) - len, case when lower_inc(r) then '[]' else '(]' end)),
                    '{}'::tstzmultirange) as starts
      from free
  ), starts as (
    -- each opening of the location's hours on that day starts a grid of slots
    select distinct s
      from app_hidden.opening_ranges(loc.hours, loc.timezone, app_hidden.local_day(day, loc.timezone)) w
      cross join lateral generate_series(lower(w.opening), upper(w.opening) - len, make_interval(mins => loc.slot_interval_minutes)) s
     where (s at time zone loc.timezone)::date = day
  )
  select coalesce(jsonb_agg(jsonb_build_object('start', x.s, 'end', x.s + len) order by x.s), '[]')
    into slots
    from starts x, valid
   where valid.starts @> x.s;

  return jsonb_build_object(
    'location_id', loc.id,
    'date', day,
    'timezone', loc.timezone,
    'offering_id', o.id,
    'duration_minutes', extract(epoch from len)::int / 60,
    'slot_interval_minutes', loc.slot_interval_minutes,
    'team_member_ids', to_jsonb(members),
    'calendar_ids', to_jsonb(cals),
    'slots', slots);
end $$;

ALTER FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer) IS 'appointments_availability: the starts on a local day where some eligible team member (or calendar) is free for the whole length, stepped by the slot interval from each opening of the location''s hours; 404 for a location, offering or team member out of reach.';

--
-- Name: appointments_cancel(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_cancel(appointment_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
begin
  if a.status = 'booked' then
    update app_public.appointments x set status = 'cancelled', cancelled_at = now(), updated_at = now()
     where x.organization_id = a.organization_id and x.id = a.id
    returning * into a;
  end if;
  return app_hidden.appointment_json(a);
end $$;

ALTER FUNCTION app_public.appointments_cancel(appointment_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_cancel(appointment_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_cancel(appointment_id uuid) IS 'appointments_cancel: frees the time; a cancelled one answers as it is.';

--
-- Name: appointments_create(uuid, uuid, uuid, uuid, jsonb, uuid, timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  loc app_public.locations;
  cal app_public.calendars;
  o app_public.offerings;
  c record;
  during tstzrange;
  postal text := nullif(btrim(service_address->>'postal_code'), '');
  country text := upper(nullif(btrim(service_address->>'country_code'), ''));
  tm uuid := team_member_id;
  candidates uuid[];
  chosen uuid;
  free record;
  a app_public.appointments;
begin
  if (location_id is null) = (calendar_id is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'Send exactly one of location_id and calendar_id');
  end if;
  if calendar_id is not null and (offering_id is not null or team_member_id is not null or service_address is not null) then
    perform app_hidden.raise_error(400, 'bad_request',
      'offering_id, team_member_id and service_address go with location_id; a calendar is booked with none of them');
  end if;
  if end_time <= start_time then
    perform app_hidden.raise_error(400, 'bad_request', 'body.end_time: must be after start_time');
  end if;
  during := tstzrange(start_time, end_time, '[)');

  -- what the request names, found through the caller's policies
  if calendar_id is not null then
    select * into cal from app_public.calendars x where x.organization_id = org and x.id = appointments_create.calendar_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Calendar not found');
    end if;
  end if;
  select * into loc from app_public.locations l where l.organization_id = org and l.id = coalesce(appointments_create.location_id, cal.location_id);
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  select x.id, x.name, x.phone, x.email::text as email into c from app_public.contacts x where x.organization_id = org and x.id = appointments_create.contact_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  if offering_id is not null then
    select * into o from app_public.offerings x where x.organization_id = org and x.id = appointments_create.offering_id and x.location_id = loc.id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
    end if;
  end if;
  if tm is not null and not exists (select 1 from app_public.staff_profiles sp where sp.organization_id = org and sp.id = tm) then
    perform app_hidden.raise_error(404, 'not_found', 'Team member not found');
  end if;
  if app_hidden.current_key_creator_left() then
    perform app_hidden.raise_error(422, 'key_creator_left',
      'The person who created this organization key has left the organization; bookings need a key of someone still here');
  end if;

  if cal.id is not null then
    -- a calendar: an unstaffed location's resource, bookable by anyone who reaches it
    if loc.staffed then
      perform app_hidden.raise_error(400, 'bad_request', 'body.calendar_id: this location is staffed; book it by location_id (and a team member)');
    end if;
    if not app_hidden.within_hours(loc, null, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the location''s hours');
    end if;
    if app_hidden.held_by_blocks_or_series(loc, null, cal.id, during) then
      perform app_hidden.slot_taken();
    end if;
    perform app_hidden.lock_booking_target(org, cal.id);
    begin
      insert into app_public.appointments (organization_id, kind, location_id, calendar_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, cal.id, c.id, title, c.name, c.phone, c.email,
        start_time, end_time, app_hidden.current_user_id(), app_hidden.current_credential_id(), 'api')
      returning * into a;
    exception when exclusion_violation then
      perform app_hidden.slot_taken();
    end;
    return app_hidden.appointment_json(a);
  end if;

  if not loc.staffed then
    perform app_hidden.raise_error(400, 'bad_request', 'body.location_id: this location is not staffed; book one of its calendars by calendar_id (calendars_list)');
  end if;

  -- who may book whom
  if tm is null and app_hidden.current_role() in ('manager', 'member')
     and not (app_hidden.current_role() = 'manager' and 'appointments' = any(app_hidden.current_powers())) then
    -- a member (or a manager without the power) books itself
    tm := app_hidden.current_staff_profile_id();
    if tm is null then
      perform app_hidden.raise_error(403, 'insufficient_role',
        'This credential books only its own time and has no staff profile; book a calendar, or use a credential that may book team members');
    end if;
  elsif app_hidden.current_role() not in ('owner', 'admin', 'manager', 'member')
        or (tm is not null and not app_hidden.current_may_book_team_member(tm)) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'This credential may not book appointments for this team member (a member books only itself; keys without a role book calendars only)');
  end if;

  -- the booking rules
  if o.id is null and exists (select 1 from app_public.offerings x where x.organization_id = org and x.location_id = loc.id) then
    perform app_hidden.raise_error(409, 'offering_required', 'This location books offerings: send offering_id (booking_options lists them)',
      jsonb_build_object('booking_options', app_hidden.booking_options(org, loc.id)));
  end if;
  if o.id is not null and end_time - start_time <> make_interval(mins => o.duration_minutes) then
    perform app_hidden.raise_error(409, 'duration_mismatch',
      format('The offering takes %s minutes: end_time must be start_time + %s minutes', o.duration_minutes, o.duration_minutes));
  end if;
  if postal is not null and not app_hidden.territory_covers(org, loc.id, postal, country) then
    perform app_hidden.raise_error(409, 'address_out_of_area', 'No territory of this location covers the service address''s postal code');
  end if;
  candidates := app_hidden.eligible_team_members(org, loc.id, o.id, postal, country);
  if tm is not null and not tm = any(candidates) then
    perform app_hidden.raise_error(409, 'team_member_not_eligible',
      'The team member does not work at this location, does not do this offering, or does not cover this address');
  end if;
  if not app_hidden.within_hours(loc, tm, during) then
    perform app_hidden.raise_error(409, 'outside_hours',
      case when tm is null then 'The time is outside the location''s hours' else 'The time is outside the team member''s working hours' end);
  end if;

  if tm is not null then
    candidates := array[tm];
  else
    -- the first eligible team member (oldest first) who works then and is free
    candidates := array(select m.id from unnest(candidates) with ordinality m(id, n)
                         where app_hidden.within_hours(loc, m.id, during) order by m.n);
    if cardinality(candidates) = 0 then
      perform app_hidden.raise_error(409, 'no_team_member_available', 'No team member who may take this booking works at that time');
    end if;
    candidates := array(select t.staff_profile_id from app_hidden.team_time(loc, candidates, '{}', during) t
                         where t.open @> during and not t.busy && during order by t.ord);
  end if;
  foreach chosen in array candidates loop
    continue when app_hidden.held_by_blocks_or_series(loc, chosen, null, during);
    perform app_hidden.lock_booking_target(org, chosen);
    begin
      insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id, offering_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, service_address, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, chosen, o.id, c.id, title, c.name, c.phone, c.email,
        service_address, start_time, end_time, app_hidden.current_user_id(), app_hidden.current_credential_id(), 'api')
      returning * into a;
      return app_hidden.appointment_json(a);
    exception when exclusion_violation then
      -- someone else took this team member's time meanwhile: the next one, if any
      null;
    end;
  end loop;
  perform app_hidden.slot_taken();
  return null;
end $$;

ALTER FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) IS 'appointments_create: books a team member (named, or the first free eligible one) at a staffed location, or a calendar of an unstaffed one; the exclusion constraints decide races (409 slot_taken).';

--
-- Name: appointments_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_get(appointment_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  a app_public.appointments;
begin
  select * into a from app_public.appointments x
   where x.organization_id = app_hidden.current_org_id() and x.id = appointments_get.appointment_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Appointment not found');
  end if;
  return app_hidden.appointment_json(a);
end $$;

ALTER FUNCTION app_public.appointments_get(appointment_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_get(appointment_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_get(appointment_id uuid) IS 'appointments_get: one appointment or block in reach (a series: recurring, its first start), cancelled ones too.';

--
-- Name: appointments_list(timestamp with time zone, timestamp with time zone, uuid, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  total bigint;
  items jsonb;
  c_phone text;
  c_email text;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  -- spec: from defaults to now, to to 30 days after from; the window is not empty and at most 92 days
  window_from := coalesce(window_from, now());
  window_to := coalesce(window_to, window_from + interval '30 days');
  if window_to <= window_from then
    perform app_hidden.page_error('to', 'must be after from (the window is empty)');
  elsif window_to > window_from + interval '92 days' then
    perform app_hidden.page_error('to', 'at most 92 days after from');
  end if;
  if contact_id is not null then
    select c.phone, c.email_key into c_phone, c_email from app_public.contacts c
     where c.organization_id = app_hidden.current_org_id() and c.id = appointments_list.contact_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
    end if;
  end if;
  select count(*) into total from app_hidden.listed_appointments(window_from, window_to, c_phone, c_email, contact_id);
  select coalesce(jsonb_agg(app_hidden.appointment_json(p.a, p.occurrence_start) order by p.starts_at, (p.a).id), '[]') into items
    from (select * from app_hidden.listed_appointments(window_from, window_to, c_phone, c_email, contact_id) x
           order by x.starts_at, (x.a).id limit page_size offset (page - 1)::bigint * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size,
                            'from', window_from, 'to', window_to);
end $$;

ALTER FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) IS 'appointments_list: live bookings starting in [from, to), earliest first, one row per occurrence of a repeating series.';

--
-- Name: appointments_reschedule(uuid, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
  loc app_public.locations;
  minutes int;
  during tstzrange;
begin
  if a.status = 'cancelled' then
    perform app_hidden.raise_error(409, 'appointment_cancelled', 'This appointment is cancelled; book a new one');
  end if;
  if end_time <= start_time then
    perform app_hidden.raise_error(400, 'bad_request', 'body.end_time: must be after start_time');
  end if;
  during := tstzrange(start_time, end_time, '[)');
  select * into loc from app_public.locations l where l.organization_id = a.organization_id and l.id = a.location_id;
  if a.kind = 'appointment' then
    select o.duration_minutes into minutes from app_public.offerings o where o.organization_id = a.organization_id and o.id = a.offering_id;
    if minutes is not null and end_time - start_time <> make_interval(mins => minutes) then
      perform app_hidden.raise_error(409, 'duration_mismatch',
        format('The offering takes %s minutes: end_time must be start_time + %s minutes', minutes, minutes));
    end if;
    if not app_hidden.within_hours(loc, a.staff_profile_id, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The new time is outside the hours of the location or the team member');
    end if;
    if app_hidden.held_by_blocks_or_series(loc, a.staff_profile_id, a.calendar_id, during, a.id) then
      perform app_hidden.slot_taken();
    end if;
  end if;
  if coalesce(a.staff_profile_id, a.calendar_id) is not null then
    perform app_hidden.lock_booking_target(a.organization_id, coalesce(a.staff_profile_id, a.calendar_id));
  end if;
  begin
    update app_public.appointments x set starts_at = start_time, ends_at = end_time, updated_at = now()
     where x.organization_id = a.organization_id and x.id = a.id
    returning * into a;
  exception when exclusion_violation then
    perform app_hidden.slot_taken();
  end;
  return app_hidden.appointment_json(a);
end $$;

ALTER FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) IS 'appointments_reschedule: moves a live appointment or block, re-checking hours, length and availability (409 slot_taken).';

--
-- Name: appointments_update(uuid, jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
begin
  update app_public.appointments x set
    title = case when patch ? 'title' then patch->>'title' else x.title end,
    description = case when patch ? 'description' then patch->>'description' else x.description end,
    attendee_name = case when patch ? 'attendee_name' then patch->>'attendee_name' else x.attendee_name end,
    attendee_phone = case when patch ? 'attendee_phone' then patch->>'attendee_phone' else x.attendee_phone end,
    attendee_email = case when patch ? 'attendee_email' then patch->>'attendee_email' else x.attendee_email end,
    attendee_notes = case when patch ? 'attendee_notes' then patch->>'attendee_notes' else x.attendee_notes end,
    updated_at = now()
   where x.organization_id = a.organization_id and x.id = a.id
  returning * into a;
  return app_hidden.appointment_json(a);
end $$;

ALTER FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_update(appointment_id uuid, patch jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) IS 'appointments_update: title, description and attendee fields only (times: appointments_reschedule; status: appointments_cancel).';

--
-- Name: audiences_add_member(uuid, uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_add_member(audience_id uuid, contact_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, false);
begin
  perform app_hidden.require_static(a);
  perform app_hidden.require_contact(contact_id);
  insert into app_public.audience_members (organization_id, audience_id, contact_id)
  values (a.organization_id, a.id, audiences_add_member.contact_id)
  on conflict do nothing;
  return jsonb_build_object('audience_id', a.id, 'contact_id', contact_id, 'is_member', true);
end $$;

ALTER FUNCTION app_public.audiences_add_member(audience_id uuid, contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_add_member(audience_id uuid, contact_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_add_member(audience_id uuid, contact_id uuid) IS 'audiences_add_member: adds a contact of the organization to a static audience; adding a member again changes nothing.';

--
-- Name: audiences_archive(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_archive(audience_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, true);
begin
  update app_public.audiences x set archived_at = coalesce(x.archived_at, now()), updated_at = now()
   where x.organization_id = a.organization_id and x.id = a.id
  returning * into a;
  return app_hidden.audience_json(a);
end $$;

ALTER FUNCTION app_public.audiences_archive(audience_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_archive(audience_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_archive(audience_id uuid) IS 'audiences_archive: archives the audience (an archived one keeps its first archived_at); audiences_update restores.';

--
-- Name: audiences_count(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_count(audience_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, false);
  n bigint;
begin
  if a.kind = 'dynamic' then
    n := app_hidden.audience_count(a.definition, 'definition.rules');
  else
    execute 'select count(*) from app_public.audience_members m
               join app_public.contacts c on c.organization_id = m.organization_id and c.id = m.contact_id
              where m.organization_id = $1 and m.audience_id = $2'
      into n using a.organization_id, a.id;
  end if;
  return jsonb_build_object('audience_id', a.id, 'count', n);
end $_$;

ALTER FUNCTION app_public.audiences_count(audience_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_count(audience_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_count(audience_id uuid) IS 'audiences_count: how many contacts the audience holds now, within the caller''s reach (opted-out contacts included).';

--
-- Name: audiences_create(text, text, text, text, jsonb, boolean); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_create(name text, description text, kind text, channel text, definition jsonb, exclude_opted_out boolean) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.audiences;
  k text := coalesce(kind, case when definition is null then 'static' else 'dynamic' end);
begin
  if k = 'dynamic' then
    perform app_hidden.audience_definition_check(definition, 'body.definition');
  end if;
  insert into app_public.audiences (organization_id, name, description, kind, channel, definition, exclude_opted_out, created_by)
  values (app_hidden.current_org_id(), audiences_create.name, audiences_create.description, k,
          coalesce(audiences_create.channel, 'any'),
          case when k = 'dynamic' then coalesce(audiences_create.definition, '{"match": "all", "rules": []}') end,
          coalesce(audiences_create.exclude_opted_out, false), app_hidden.current_user_id())
  returning * into a;
  return app_hidden.audience_json(a);
end $$;

ALTER FUNCTION app_public.audiences_create(name text, description text, kind text, channel text, definition jsonb, exclude_opted_out boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_create(name text, description text, kind text, channel text, definition jsonb, exclude_opted_out boolean); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_create(name text, description text, kind text, channel text, definition jsonb, exclude_opted_out boolean) IS 'audiences_create: a static audience (no definition) or a dynamic one (kind defaults to dynamic when a definition is sent; no definition = every contact); 400 for a definition over the limits.';

--
-- Name: audiences_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_get(audience_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.audience_json(app_hidden.audience_for(audience_id, false))
$$;

ALTER FUNCTION app_public.audiences_get(audience_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_get(audience_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_get(audience_id uuid) IS 'audiences_get: the audience with its definition; 404 when absent.';

--
-- Name: audiences_list(); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_list() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('items', coalesce(jsonb_agg(app_hidden.audience_json(a) order by a.created_at desc, a.id desc), '[]'))
    from app_public.audiences a
   where a.organization_id = app_hidden.current_org_id()
$$;

ALTER FUNCTION app_public.audiences_list() OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_list(); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_list() IS 'audiences_list: the organization''s audiences, archived ones included, newest first.';

--
-- Name: audiences_list_members(uuid, uuid, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_list_members(audience_id uuid, after uuid, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  a app_public.audiences;
  items jsonb;
  ids uuid[];
begin
  page_size := app_hidden.page_limit(page_size);
  a := app_hidden.audience_for(audience_id, false);
  -- one row more than the page tells whether another page follows
  if a.kind = 'dynamic' then
    select jsonb_agg(app_hidden.contact_card(c) order by c.id), array_agg(c.id order by c.id) into items, ids
      from app_hidden.audience_contacts(a.definition, 'definition.rules', after, page_size + 1) c;
  else
    select jsonb_agg(app_hidden.contact_card(c) order by c.id), array_agg(c.id order by c.id) into items, ids
      from (select c.* from app_public.audience_members m
              join app_public.contacts c on c.organization_id = m.organization_id and c.id = m.contact_id
             where m.organization_id = a.organization_id and m.audience_id = a.id
               -- one plan for every page (plpgsql caches it): no id is below the nil uuid
               and m.contact_id > coalesce(after, '00000000-0000-0000-0000-000000000000')
             order by m.contact_id
             limit page_size + 1) c;
  end if;
  if cardinality(ids) > page_size then
    return jsonb_build_object('items', items - page_size, 'next_after', ids[page_size]);
  end if;
  return jsonb_build_object('items', coalesce(items, '[]'), 'next_after', null);
end $$;

ALTER FUNCTION app_public.audiences_list_members(audience_id uuid, after uuid, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_list_members(audience_id uuid, after uuid, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_list_members(audience_id uuid, after uuid, page_size integer) IS 'audiences_list_members: one keyset page of the audience''s contacts within the caller''s reach, by id, after `after`; next_after is the last id of the page when more follow.';

--
-- Name: audiences_preview_count(jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_preview_count(definition jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  if jsonb_typeof(definition) = 'object' and definition ? 'exclude_opted_out' then
    if jsonb_typeof(definition->'exclude_opted_out') <> 'boolean' then
      perform app_hidden.audience_rule_error('body.exclude_opted_out',
        format('Invalid input: expected boolean, received %s', jsonb_typeof(definition->'exclude_opted_out')));
    end if;
    definition := definition - 'exclude_opted_out';
  end if;
  return jsonb_build_object('count', app_hidden.audience_count(definition, 'body.rules'));
end $$;

ALTER FUNCTION app_public.audiences_preview_count(definition jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_preview_count(definition jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_preview_count(definition jsonb) IS 'audiences_preview_count: how many contacts a definition would select now, within the caller''s reach.';

--
-- Name: audiences_remove_member(uuid, uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_remove_member(audience_id uuid, contact_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, false);
begin
  perform app_hidden.require_static(a);
  perform app_hidden.require_contact(contact_id);
  delete from app_public.audience_members m
   where m.organization_id = a.organization_id and m.audience_id = a.id and m.contact_id = audiences_remove_member.contact_id;
  return jsonb_build_object('audience_id', a.id, 'contact_id', contact_id, 'is_member', false);
end $$;

ALTER FUNCTION app_public.audiences_remove_member(audience_id uuid, contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_remove_member(audience_id uuid, contact_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_remove_member(audience_id uuid, contact_id uuid) IS 'audiences_remove_member: removes a contact from a static audience; removing a non-member changes nothing.';

--
-- Name: audiences_update(uuid, jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.audiences_update(audience_id uuid, patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, true);
begin
  if patch ? 'kind' and patch->>'kind' is distinct from a.kind then
    perform app_hidden.raise_error(400, 'bad_request',
      format('kind: an audience''s kind is fixed at creation (this one is %s); create a new audience instead', a.kind),
      jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', 'body.kind', 'message', 'kind cannot change'))));
  end if;
  if patch ? 'definition' and a.kind = 'static' then
    perform app_hidden.raise_error(400, 'bad_request',
      'definition: a static audience has no definition (its members are added and removed); create a dynamic audience instead',
      jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', 'body.definition', 'message', 'static audiences have no definition'))));
  end if;
  if patch ? 'definition' then
    perform app_hidden.audience_definition_check(patch->'definition', 'body.definition');
  end if;
  update app_public.audiences x
     set name = case when patch ? 'name' then patch->>'name' else x.name end,
         description = case when patch ? 'description' then patch->>'description' else x.description end,
         channel = case when patch ? 'channel' then patch->>'channel' else x.channel end,
         definition = case when patch ? 'definition' then patch->'definition' else x.definition end,
         exclude_opted_out = case when patch ? 'exclude_opted_out' then (patch->>'exclude_opted_out')::boolean
                                  else x.exclude_opted_out end,
         archived_at = case when not patch ? 'is_archived' then x.archived_at
                            when (patch->>'is_archived')::boolean then coalesce(x.archived_at, now())
                            else null end,
         updated_at = now()
   where x.organization_id = a.organization_id and x.id = a.id
  returning * into a;
  return app_hidden.audience_json(a);
end $$;

ALTER FUNCTION app_public.audiences_update(audience_id uuid, patch jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION audiences_update(audience_id uuid, patch jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.audiences_update(audience_id uuid, patch jsonb) IS 'audiences_update: changes the fields present (definition replaced whole; is_archived false restores); kind cannot change; 400 for a definition over the limits.';

--
-- Name: calendars_list(uuid, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_location(location_id);
  return app_hidden.page_of((
    select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'location_id', c.location_id, 'name', c.name) order by c.name, c.id), '[]')
      from app_public.calendars c
     where c.organization_id = app_hidden.current_org_id()
       and (calendars_list.location_id is null or c.location_id = calendars_list.location_id)), page, page_size);
end $$;

ALTER FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION calendars_list(location_id uuid, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) IS 'calendars_list: calendars in reach, optionally of one location.';

--
-- Name: calls_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.calls_get(call_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  c app_public.calls;
begin
  select * into c from app_public.calls x where x.organization_id = app_hidden.current_org_id() and x.id = calls_get.call_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return app_hidden.call_json(c) || jsonb_build_object('transcript', coalesce((
    select jsonb_agg(jsonb_build_object('speaker', l.speaker, 'text', l.text) order by l.position)
      from app_public.call_transcript_lines l
     where l.organization_id = c.organization_id and l.call_id = c.id), '[]'));
end $$;

ALTER FUNCTION app_public.calls_get(call_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION calls_get(call_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.calls_get(call_id uuid) IS 'calls_get: one call the credential reads, with its transcript; 404 otherwise.';

--
-- Name: calls_list(uuid, timestamp with time zone, uuid, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  page app_public.calls[];
  last app_public.calls;
begin
  -- the page size first, before anything is read (NULL: 25; outside 1 to 100: 400, as over REST)
  lim := app_hidden.page_limit(lim);
  if (after_at is null) <> (after_id is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'query.cursor: not a cursor from this list: pass next_cursor back unchanged');
  end if;
  if calls_list.contact_id is not null and not exists (
      select 1 from app_public.contacts x where x.organization_id = app_hidden.current_org_id() and x.id = calls_list.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  select coalesce(array_agg(x order by x.started_at desc, x.id desc), '{}') into page
    from (select c.* from app_public.calls c
           where c.organization_id = app_hidden.current_org_id()
             and (calls_list.contact_id is null or c.contact_id = calls_list.contact_id)
             and (after_at is null or (c.started_at, c.id) < (after_at, after_id))
           order by c.started_at desc, c.id desc
           limit lim + 1) x;
  if cardinality(page) > lim then
    page := page[1:lim];
    last := page[lim];
  end if;
  return jsonb_build_object(
    'items', (select coalesce(jsonb_agg(app_hidden.call_json(page[i]) order by i), '[]') from generate_subscripts(page, 1) i),
    'next_after', case when last.id is not null then jsonb_build_object(
      'at', to_char(last.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'id', last.id) end);
end $$;

ALTER FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) OWNER TO svc_owner;

--
-- Name: FUNCTION calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) IS 'calls_list: a page of the calls the credential reads, newest first, after a keyset position; 404 for a contact out of reach.';

--
-- Name: contacts_add_note(uuid, text); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_add_note(contact_id uuid, body text) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  n app_public.contact_notes;
begin
  perform app_hidden.require_contact(contact_id);
  insert into app_public.contact_notes (organization_id, contact_id, body, source, author_id)
  values (app_hidden.current_org_id(), contacts_add_note.contact_id, contacts_add_note.body, 'user',
          app_hidden.current_user_id())
  returning * into n;
  return app_hidden.note_json(n);
end $$;

ALTER FUNCTION app_public.contacts_add_note(contact_id uuid, body text) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_add_note(contact_id uuid, body text); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_add_note(contact_id uuid, body text) IS 'contacts_add_note: adds an organization-shared note (source user) written by the acting person.';

--
-- Name: contacts_add_tag(uuid, public.citext); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_add_tag(contact_id uuid, tag_name public.citext) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
  tag uuid;
  max_tags int;
begin
  select t.id into tag from app_public.tags t where t.organization_id = org and t.name = tag_name;
  if tag is null then
    -- One tag creation at a time per organization, so the limit holds under concurrency.
    perform pg_advisory_xact_lock(hashtextextended('svc.tags:' || org::text, 0));
    select t.id into tag from app_public.tags t where t.organization_id = org and t.name = tag_name;
  end if;
  if tag is null then
    select o.tag_limit into max_tags from app_public.organizations o where o.id = org;
    if (select count(*) from app_public.tags t where t.organization_id = org) >= max_tags then
      perform app_hidden.raise_error(422, 'tag_limit_reached',
        format('The organization has reached its limit of %s tags', max_tags));
    end if;
    insert into app_public.tags (organization_id, name) values (org, tag_name) returning id into tag;
  end if;
  insert into app_public.contact_tags (organization_id, contact_id, tag_id)
  values (org, c.id, tag)
  on conflict do nothing;
  return jsonb_build_object('contact_id', c.id, 'tags', app_hidden.contact_tag_names(c.id));
end $$;

ALTER FUNCTION app_public.contacts_add_tag(contact_id uuid, tag_name public.citext) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_add_tag(contact_id uuid, tag_name public.citext); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_add_tag(contact_id uuid, tag_name public.citext) IS 'contacts_add_tag: tags the contact, creating the organization''s tag when it lacks it (422 at the tag limit); answers the contact''s tags.';

--
-- Name: contacts_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_get(contact_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  c app_public.contacts;
begin
  select * into c from app_public.contacts
   where organization_id = app_hidden.current_org_id() and id = contacts_get.contact_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return app_hidden.contact_for_caller(c);
end $$;

ALTER FUNCTION app_public.contacts_get(contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_get(contact_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_get(contact_id uuid) IS 'contacts_get: the contact in full, or only id, name, email and phone for a MEMBER or a MANAGER without the contacts power.';

--
-- Name: contacts_list_enrollments(uuid, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_list_enrollments(contact_id uuid, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
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

ALTER FUNCTION app_public.contacts_list_enrollments(contact_id uuid, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_list_enrollments(contact_id uuid, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_list_enrollments(contact_id uuid, page integer, page_size integer) IS 'contacts_list_enrollments: one page of the contact''s enrollments in the sequences the credential sees, newest first, each with sequence_name and next_send_at (next_run_at). 404 for a contact out of reach.';

--
-- Name: contacts_list_interactions(uuid, text, text, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_list_interactions(contact_id uuid, channel text, status text, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  details boolean := app_hidden.current_sees_contact_details();
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.interactions i
   where i.organization_id = app_hidden.current_org_id() and i.contact_id = contacts_list_interactions.contact_id
     and (contacts_list_interactions.channel is null or i.channel = contacts_list_interactions.channel)
     and (contacts_list_interactions.status is null or i.status = contacts_list_interactions.status);
  if page > 1 and (page - 1)::bigint * page_size >= total then
    perform app_hidden.raise_error(400, 'bad_request',
      format('page %s is past the last interaction (%s interactions, %s per page)', page, total, page_size));
  end if;
  select coalesce(jsonb_agg(
           jsonb_build_object('id', p.id, 'contact_id', p.contact_id, 'channel', p.channel, 'status', p.status,
                              'location_id', p.location_id, 'appointment_id', p.appointment_id, 'summary', p.summary,
                              'started_at', p.started_at, 'ended_at', p.ended_at)
           || case when details then jsonb_build_object('captured_fields', p.captured_fields) else '{}' end
           order by p.started_at desc, p.id desc), '[]')
    into items
    from (select * from app_public.interactions i
           where i.organization_id = app_hidden.current_org_id() and i.contact_id = contacts_list_interactions.contact_id
             and (contacts_list_interactions.channel is null or i.channel = contacts_list_interactions.channel)
             and (contacts_list_interactions.status is null or i.status = contacts_list_interactions.status)
           order by i.started_at desc, i.id desc limit page_size offset (page - 1) * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;

ALTER FUNCTION app_public.contacts_list_interactions(contact_id uuid, channel text, status text, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_list_interactions(contact_id uuid, channel text, status text, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_list_interactions(contact_id uuid, channel text, status text, page integer, page_size integer) IS 'contacts_list_interactions: the contact''s interactions at the credential''s locations, most recent first; captured_fields only for callers who see contact details.';

--
-- Name: contacts_list_notes(uuid, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_list_notes(contact_id uuid, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.contact_notes n
   where n.organization_id = app_hidden.current_org_id() and n.contact_id = contacts_list_notes.contact_id;
  if page > 1 and (page - 1)::bigint * page_size >= total then
    perform app_hidden.raise_error(400, 'bad_request',
      format('page %s is past the last note (%s notes, %s per page)', page, total, page_size));
  end if;
  select coalesce(jsonb_agg(app_hidden.note_json(p) order by p.created_at desc, p.id desc), '[]') into items
    from (select * from app_public.contact_notes n
           where n.organization_id = app_hidden.current_org_id() and n.contact_id = contacts_list_notes.contact_id
           order by n.created_at desc, n.id desc limit page_size offset (page - 1) * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;

ALTER FUNCTION app_public.contacts_list_notes(contact_id uuid, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_list_notes(contact_id uuid, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_list_notes(contact_id uuid, page integer, page_size integer) IS 'contacts_list_notes: the organization-shared notes of a contact, newest first; location-private notes are never listed.';

--
-- Name: contacts_record_sms_consent(uuid, text, timestamp with time zone); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_record_sms_consent(contact_id uuid, source text, consented_at timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
begin
  if c.phone is null then
    perform app_hidden.raise_error(400, 'bad_request', 'The contact has no phone number to consent for');
  end if;
  if consented_at > now() then
    perform app_hidden.raise_error(400, 'bad_request', 'consented_at: may not be in the future',
      jsonb_build_object('field', 'consented_at'));
  end if;
  update app_public.sms_opt_outs o set ended_at = greatest(o.created_at, coalesce(consented_at, now()))
   where o.organization_id = c.organization_id and o.phone = c.phone and o.ended_at is null;
  update app_public.contacts x
     set sms_consent = true, sms_consent_at = coalesce(consented_at, now()), sms_consent_source = contacts_record_sms_consent.source,
         updated_at = now()
   where x.organization_id = c.organization_id and x.id = c.id
  returning * into c;
  return jsonb_build_object('contact_id', c.id, 'phone', c.phone, 'sms_consent', c.sms_consent,
                            'sms_consent_at', c.sms_consent_at, 'source', c.sms_consent_source);
end $$;

ALTER FUNCTION app_public.contacts_record_sms_consent(contact_id uuid, source text, consented_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_record_sms_consent(contact_id uuid, source text, consented_at timestamp with time zone); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_record_sms_consent(contact_id uuid, source text, consented_at timestamp with time zone) IS 'contacts_record_sms_consent: records the SMS consent the contact gave; it ends an SMS opt-out of the number.';

--
-- Name: contacts_remove_tag(uuid, public.citext); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_remove_tag(contact_id uuid, tag_name public.citext) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
begin
  delete from app_public.contact_tags ct
   using app_public.tags t
   where ct.organization_id = c.organization_id and ct.contact_id = c.id
     and t.organization_id = ct.organization_id and t.id = ct.tag_id and t.name = tag_name;
  return jsonb_build_object('contact_id', c.id, 'tags', app_hidden.contact_tag_names(c.id));
end $$;

ALTER FUNCTION app_public.contacts_remove_tag(contact_id uuid, tag_name public.citext) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_remove_tag(contact_id uuid, tag_name public.citext); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_remove_tag(contact_id uuid, tag_name public.citext) IS 'contacts_remove_tag: removes the tag from the contact (the organization keeps the tag); answers the contact''s tags.';

--
-- Name: contacts_search(text, public.citext, text, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_search(q text, email public.citext, phone text, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  org uuid := app_hidden.current_org_id();
  details boolean := app_hidden.current_sees_contact_details();
  -- a caller who reaches every contact of the organization: its policy is the organization
  -- test contacts_matching applies, so matches need no probe
  whole boolean := app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all';
  skip bigint;
  total bigint;
  items jsonb;
  pattern text;
  digits text;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  skip := (page - 1)::bigint * page_size;
  if num_nonnulls(q, email, phone) > 1 then
    perform app_hidden.raise_error(400, 'bad_request', 'Send at most one of q, email and phone');
  end if;
  -- at most one contact carries an email address or a phone number
  if email is not null then
    select count(*), coalesce(jsonb_agg(app_hidden.contact_for_caller(c)) filter (where page = 1), '[]')
      into total, items
      from app_public.contacts c
     where c.organization_id = org and c.email_key = lower(contacts_search.email::text);
  elsif phone is not null then
    select count(*), coalesce(jsonb_agg(app_hidden.contact_for_caller(c)) filter (where page = 1), '[]')
      into total, items
      from app_public.contacts c
     where c.organization_id = org and c.phone = contacts_search.phone;
  elsif q is not null then
    pattern := app_hidden.like_anywhere(q);
    -- A phone-like q written with spaces, dashes or brackets ("555-123", "(555) 123") also
    -- matches the digits of the stored E.164 phone.
    if q ~ '^\+?[0-9 ()\[\]-]+$' and q ~ '[ ()\[\]-]' and length(regexp_replace(q, '[^0-9]', '', 'g')) >= 3 then
      digits := app_hidden.like_anywhere(regexp_replace(q, '[^0-9+]', '', 'g'));
    end if;
    -- Matches come from the trigram index; the exists, under this caller's policies, keeps
    -- those it may read (an index-only probe each, skipped when the caller reaches them all),
    -- and the page is read under them too.
    if details then
      with matches as materialized (
        select m.id, m.last_seen_at from app_hidden.contacts_matching(pattern, digits) m
         where whole or exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = m.id))
      select (select count(*) from matches),
             app_hidden.contacts_json(array(
               select c from (select * from matches order by last_seen_at desc, id limit page_size offset skip) p
                 join app_public.contacts c on c.organization_id = org and c.id = p.id
                order by p.last_seen_at desc, p.id))
        into total, items;
    else
      with matches as materialized (
        select m.id, m.name from app_hidden.contacts_matching(pattern, digits) m
         where whole or exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = m.id))
      select (select count(*) from matches),
             (select coalesce(jsonb_agg(app_hidden.contact_card(c) order by p.name, p.id), '[]')
                from (select * from matches order by name, id limit page_size offset skip) p
                join app_public.contacts c on c.organization_id = org and c.id = p.id)
        into total, items;
    end if;
  elsif details then
    select count(*) into total from app_public.contacts c where c.organization_id = org;
    items := app_hidden.contacts_json(array(
      select c from app_public.contacts c where c.organization_id = org
       order by c.last_seen_at desc, c.id limit page_size offset skip));
  else
    select count(*) into total from app_public.contacts c where c.organization_id = org;
    select coalesce(jsonb_agg(app_hidden.contact_card(p) order by p.name, p.id), '[]') into items
      from (select * from app_public.contacts c where c.organization_id = org
             order by c.name, c.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $_$;

ALTER FUNCTION app_public.contacts_search(q text, email public.citext, phone text, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_search(q text, email public.citext, phone text, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_search(q text, email public.citext, phone text, page integer, page_size integer) IS 'contacts_search: one page of contacts matching at most one filter (q substring of name, email or phone; exact email; exact phone), most recently seen first; by name, with only id, name, email and phone, for callers without contact details.';

--
-- Name: contacts_suppress(uuid, text[]); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_suppress(contact_id uuid, channels text[]) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
  result jsonb := jsonb_build_object('contact_id', c.id);
  since timestamptz;
begin
  if 'email' = any(channels) and c.email is null then
    perform app_hidden.raise_error(400, 'bad_request', 'The contact has no email address to suppress',
      jsonb_build_object('field', 'channels'));
  end if;
  if 'sms' = any(channels) and c.phone is null then
    perform app_hidden.raise_error(400, 'bad_request', 'The contact has no phone number to opt out of SMS',
      jsonb_build_object('field', 'channels'));
  end if;

  if 'email' = any(channels) then
    insert into app_public.email_suppressions (organization_id, email, contact_id, created_by)
    values (c.organization_id, c.email_key, c.id, app_hidden.current_user_id())
    on conflict (organization_id, email) do nothing;
    select s.created_at into since from app_public.email_suppressions s
     where s.organization_id = c.organization_id and s.email = c.email_key;
    result := result || jsonb_build_object('email', jsonb_build_object('address', c.email, 'suppressed_at', since));
  end if;

  if 'sms' = any(channels) then
    insert into app_public.sms_opt_outs (organization_id, phone, contact_id, created_by)
    values (c.organization_id, c.phone, c.id, app_hidden.current_user_id())
    on conflict (organization_id, phone) where ended_at is null do nothing;
    select o.created_at into since from app_public.sms_opt_outs o
     where o.organization_id = c.organization_id and o.phone = c.phone and o.ended_at is null;
    update app_public.contacts x set sms_consent = false, sms_consent_at = null, sms_consent_source = null,
           updated_at = now()
     where x.organization_id = c.organization_id and x.id = c.id;
    result := result || jsonb_build_object('sms', jsonb_build_object('phone', c.phone, 'opted_out_at', since,
                                                                      'sms_consent', false));
  end if;
  return result;
end $$;

ALTER FUNCTION app_public.contacts_suppress(contact_id uuid, channels text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_suppress(contact_id uuid, channels text[]); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_suppress(contact_id uuid, channels text[]) IS 'contacts_suppress: email blocks every later email to the contact''s address (the first record is kept); sms records an opt-out of the number and revokes consent. 400 when the contact has no address on a named channel.';

--
-- Name: contacts_update(uuid, jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_update(contact_id uuid, patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
  violated text;
begin
  if patch ? 'stage_id' and jsonb_typeof(patch->'stage_id') <> 'null' and not exists (
      select 1 from app_public.pipeline_stages s
       where s.organization_id = c.organization_id and s.id::text = patch->>'stage_id') then
    perform app_hidden.raise_error(400, 'bad_request',
      format('stage_id: %s is not a stage of the organization''s pipeline', patch->>'stage_id'),
      jsonb_build_object('field', 'stage_id'));
  end if;
  perform app_hidden.check_custom_fields(patch->'custom_fields');

  begin
    update app_public.contacts x
       set name = case when patch ? 'name' then patch->>'name' else x.name end,
           email = case when patch ? 'email' then (patch->>'email')::citext else x.email end,
           phone = case when patch ? 'phone' then patch->>'phone' else x.phone end,
           stage_id = case when patch ? 'stage_id' then (patch->>'stage_id')::uuid else x.stage_id end,
           field_values = case when patch ? 'custom_fields'
                               then jsonb_strip_nulls(x.field_values || (patch->'custom_fields'))
                               else x.field_values end,
           updated_at = now()
     where x.organization_id = c.organization_id and x.id = c.id
    returning * into c;
  exception when unique_violation then
    get stacked diagnostics violated = constraint_name;
    perform app_hidden.raise_error(409, 'conflict',
      case violated when 'contacts_org_phone' then 'Another contact already uses this phone number'
                    else 'Another contact already uses this email address' end);
  end;
  return app_hidden.contact_json(c);
end $$;

ALTER FUNCTION app_public.contacts_update(contact_id uuid, patch jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_update(contact_id uuid, patch jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_update(contact_id uuid, patch jsonb) IS 'contacts_update: changes only the fields present in patch (name, email, phone, stage_id, custom_fields; a custom field set to null is removed); 400 for an unknown stage or custom field, 409 when another contact has the email or phone.';

--
-- Name: contacts_upsert(public.citext, text, text, jsonb, uuid[], jsonb, jsonb, jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.contacts_upsert(email public.citext, name text DEFAULT NULL::text, phone text DEFAULT NULL::text, custom_fields jsonb DEFAULT NULL::jsonb, location_ids uuid[] DEFAULT NULL::uuid[], events jsonb DEFAULT NULL::jsonb, cancel_events jsonb DEFAULT NULL::jsonb, fields jsonb DEFAULT NULL::jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
  created boolean;
  unknown_location uuid;
begin
  perform app_hidden.check_custom_fields(custom_fields);
  if location_ids is not null then
    select l into unknown_location from unnest(location_ids) l
     where not exists (select 1 from app_public.locations x where x.organization_id = org and x.id = l)
     limit 1;
  end if;
  if unknown_location is not null then
    perform app_hidden.raise_error(400, 'bad_request',
      format('location_ids: %s is not a location of the organization', unknown_location));
  end if;

  c := app_hidden.contacts_upsert_row(contacts_upsert.email, contacts_upsert.name, contacts_upsert.phone, custom_fields);
  -- created_at is the start of the transaction that inserted the row
  created := c.created_at = now();

  if location_ids is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id)
    select org, c.id, l from unnest(location_ids) l
    on conflict do nothing;
  end if;

  return app_hidden.contact_json(c)
    || jsonb_build_object('created', created)
    || app_hidden.contacts_process_events(c.id, events, cancel_events, fields);
end $$;

ALTER FUNCTION app_public.contacts_upsert(email public.citext, name text, phone text, custom_fields jsonb, location_ids uuid[], events jsonb, cancel_events jsonb, fields jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_upsert(email public.citext, name text, phone text, custom_fields jsonb, location_ids uuid[], events jsonb, cancel_events jsonb, fields jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.contacts_upsert(email public.citext, name text, phone text, custom_fields jsonb, location_ids uuid[], events jsonb, cancel_events jsonb, fields jsonb) IS 'contacts_upsert: creates or updates the contact keyed on email (only the fields sent), links locations, then processes cancel_events and events.';

--
-- Name: conversations_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_get(conversation_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  cv app_public.conversations;
  c app_public.contacts;
begin
  select * into cv from app_public.conversations x where x.organization_id = org and x.id = conversations_get.conversation_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Conversation not found');
  end if;
  select * into c from app_public.contacts x where x.organization_id = org and x.id = cv.contact_id;
  return app_hidden.conversation_json(cv, c) || jsonb_build_object('messages', coalesce((
    select jsonb_agg(app_hidden.conversation_message_json(m) order by m.created_at, m.id)
      from app_public.conversation_messages m
     where m.organization_id = org and m.conversation_id = cv.id), '[]'));
end $$;

ALTER FUNCTION app_public.conversations_get(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_get(conversation_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_get(conversation_id uuid) IS 'conversations_get: one conversation in reach with its messages, oldest first, and response_mode; 404 otherwise.';

--
-- Name: conversations_hold(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_hold(conversation_id uuid) RETURNS jsonb
    LANGUAGE sql
    AS $$
  select app_hidden.conversation_set_held((app_hidden.conversation_for_write(conversation_id)).id, true)
$$;

ALTER FUNCTION app_public.conversations_hold(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_hold(conversation_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_hold(conversation_id uuid) IS 'conversations_hold: the AI stops answering the SMS or chat conversation until resumed (422 for email).';

--
-- Name: conversations_list(text, integer, timestamp with time zone, uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  pattern text := case when q is null then null
                       else '%' || replace(replace(replace(q, chr(92), chr(92) || chr(92)), '%', chr(92) || '%'), '_', chr(92) || '_') || '%' end;
  -- a caller that reaches every conversation of the organization (the policies keep every candidate)
  whole boolean := app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all';
  ids uuid[];
  candidates uuid[];
  batch int;
  from_at timestamptz;
  from_id uuid;
  rows jsonb;
  last record;
  n int;
begin
  if page_size is null or page_size not between 1 and 100 then
    perform app_hidden.raise_error(400, 'bad_request', 'limit: between 1 and 100');
  end if;
  if pattern is null then
    ids := array(select cv.id from app_public.conversations cv
                  where cv.organization_id = org and (after_at is null or (cv.created_at, cv.id) < (after_at, after_id))
                  order by cv.created_at desc, cv.id desc limit page_size + 1);
  else
    -- candidates as the owner finds them, kept when the caller may read them; a caller that
    -- reads every conversation keeps them all, others ask again past the last candidate
    ids := '{}';
    from_at := after_at;
    from_id := after_id;
    batch := case when whole then page_size + 1 else (page_size + 1) * 4 end;
    loop
      select coalesce(array_agg(x.id order by x.created_at desc, x.id desc), '{}'),
             (array_agg(x.created_at order by x.created_at, x.id))[1], (array_agg(x.id order by x.created_at, x.id))[1]
        into candidates, from_at, from_id
        from app_hidden.conversations_matching(pattern, from_at, from_id, batch) x;
      ids := ids || array(select cv.id from app_public.conversations cv
                           where cv.organization_id = org and cv.id = any(candidates)
                           order by cv.created_at desc, cv.id desc);
      exit when cardinality(ids) > page_size or cardinality(candidates) < batch;
      -- on past the last candidate, in larger steps
      batch := least(batch * 4, 2000);
    end loop;
    ids := ids[1:page_size + 1];
  end if;
  with page as (
    select cv, c
      from app_public.conversations cv
      join app_public.contacts c on c.organization_id = org and c.id = cv.contact_id
     where cv.organization_id = org and cv.id = any(ids))
  select coalesce(jsonb_agg(app_hidden.conversation_json(p.cv, p.c)
           || jsonb_build_object('last_message', (select app_hidden.conversation_message_json(m)
                                                    from app_public.conversation_messages m
                                                   where m.organization_id = org and m.conversation_id = (p.cv).id
                                                   order by m.created_at desc, m.id desc limit 1))
           order by (p.cv).created_at desc, (p.cv).id desc), '[]'),
         count(*)
    into rows, n
    from page p;
  if n > page_size then
    rows := rows - page_size;
    select (x->>'id')::uuid as id into last from jsonb_array_elements(rows) with ordinality e(x, i) where i = page_size;
    return jsonb_build_object('items', rows, 'next', (
      select jsonb_build_object('at', to_char(cv.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'id', cv.id)
        from app_public.conversations cv where cv.organization_id = org and cv.id = last.id));
  end if;
  return jsonb_build_object('items', rows, 'next', null);
end $$;

ALTER FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) IS 'conversations_list: the conversations in reach, newest opened first, page_size at a time after (after_at, after_id); q matches message bodies and the contact''s name, email, phone, never chat. Answers {items, next: {at, id}|null}.';

--
-- Name: conversations_reply(uuid, text, text[]); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) RETURNS jsonb
    LANGUAGE sql
    AS $$
  select app_hidden.conversation_reply_send((app_hidden.conversation_for_write(conversation_id)).id, body, sinks)
$$;

ALTER FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_reply(conversation_id uuid, body text, sinks text[]); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) IS 'conversations_reply: answers on the conversation''s own channel (rules 1, 3, 5, 6) and puts the AI on hold; answers {message, conversation, outgoing} (outgoing: for the caller''s transport, when not a sink).';

--
-- Name: conversations_resume(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_resume(conversation_id uuid) RETURNS jsonb
    LANGUAGE sql
    AS $$
  select app_hidden.conversation_set_held((app_hidden.conversation_for_write(conversation_id)).id, false)
$$;

ALTER FUNCTION app_public.conversations_resume(conversation_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_resume(conversation_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_resume(conversation_id uuid) IS 'conversations_resume: the AI answers the SMS or chat conversation again, starting with an unanswered last message (422 for email).';

--
-- Name: conversations_send_sms(uuid, text, uuid, text[]); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
begin
  select * into c from app_public.contacts x where x.organization_id = org and x.id = conversations_send_sms.contact_id;
  if not found or (app_hidden.current_role() = 'member' and not c.id = any(app_hidden.current_own_client_ids())) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  if location_id is not null then
    if not exists (select 1 from app_public.locations l where l.organization_id = org and l.id = conversations_send_sms.location_id) then
      perform app_hidden.raise_error(404, 'not_found', 'Location not found');
    end if;
    if not exists (select 1 from app_public.contact_locations cl
                    where cl.organization_id = org and cl.contact_id = c.id and cl.location_id = conversations_send_sms.location_id) then
      perform app_hidden.raise_error(409, 'contact_not_at_location', 'The contact is not linked to that location');
    end if;
  end if;
  return app_hidden.conversation_sms_send(c.id, body, location_id, sinks);
end $$;

ALTER FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) OWNER TO svc_owner;

--
-- Name: FUNCTION conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) IS 'conversations_send_sms: texts a contact from its location''s number (else the default) in its thread on that number (rules 4-6) and puts the AI on hold; answers {message, conversation, outgoing}.';

--
-- Name: forms_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.forms_get(form_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.form_json(app_hidden.form_for(form_id))
$$;

ALTER FUNCTION app_public.forms_get(form_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION forms_get(form_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.forms_get(form_id uuid) IS 'forms_get: one form with its fields; 404 when out of reach.';

--
-- Name: forms_list(); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.forms_list() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('items', coalesce(jsonb_agg(app_hidden.form_json(f) order by f.name, f.id), '[]'))
    from app_public.forms f
   where f.organization_id = app_hidden.current_org_id()
$$;

ALTER FUNCTION app_public.forms_list() OWNER TO svc_owner;

--
-- Name: FUNCTION forms_list(); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.forms_list() IS 'forms_list: the forms the credential reaches, by name, with their fields.';

--
-- Name: forms_list_submissions(uuid, integer, integer, text, timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.forms_list_submissions(form_id uuid, page integer, page_size integer, status text, from_at timestamp with time zone, to_at timestamp with time zone, search text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  -- the page first, before anything is read (NULL: page 1 of 25; out of range: 400, as over REST)
  pg int := app_hidden.page_number(page);
  lim int := app_hidden.page_limit(page_size);
  f app_public.forms := app_hidden.form_for(form_id);
  -- part of the email: a plain substring test (no pattern characters to escape)
  part text := lower(search);
  total int;
  items jsonb;
begin
  if forms_list_submissions.status not in ('accepted', 'spam') then
    perform app_hidden.raise_error(400, 'bad_request', 'query.status: expected accepted or spam');
  end if;
  select count(*) into total from app_public.form_submissions s
   where s.organization_id = f.organization_id and s.form_id = f.id
     and (forms_list_submissions.status is null or s.status = forms_list_submissions.status)
     and (from_at is null or s.submitted_at >= from_at)
     and (to_at is null or s.submitted_at < to_at)
     and (part is null or strpos(s.email_key, part) > 0);
  select coalesce(jsonb_agg(x.j order by x.submitted_at desc, x.id desc), '[]') into items
    from (select s.submitted_at, s.id, jsonb_build_object(
                   'id', s.id,
                   'form_id', s.form_id,
                   'payload', s.payload,
                   'status', s.status,
                   'spam_reason', s.spam_reason,
                   'contact_id', s.contact_id,
                   'contact', (select jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone)
                                 from app_public.contacts c where c.organization_id = s.organization_id and c.id = s.contact_id),
                   'submitted_at', s.submitted_at) as j
            from app_public.form_submissions s
           where s.organization_id = f.organization_id and s.form_id = f.id
             and (forms_list_submissions.status is null or s.status = forms_list_submissions.status)
             and (from_at is null or s.submitted_at >= from_at)
             and (to_at is null or s.submitted_at < to_at)
             and (part is null or strpos(s.email_key, part) > 0)
           order by s.submitted_at desc, s.id desc
           limit lim offset (pg - 1)::bigint * lim) x;
  return jsonb_build_object('items', items, 'total', total, 'page', pg, 'limit', lim);
end $$;

ALTER FUNCTION app_public.forms_list_submissions(form_id uuid, page integer, page_size integer, status text, from_at timestamp with time zone, to_at timestamp with time zone, search text) OWNER TO svc_owner;

--
-- Name: FUNCTION forms_list_submissions(form_id uuid, page integer, page_size integer, status text, from_at timestamp with time zone, to_at timestamp with time zone, search text); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.forms_list_submissions(form_id uuid, page integer, page_size integer, status text, from_at timestamp with time zone, to_at timestamp with time zone, search text) IS 'forms_list_submissions: a page of the form''s submissions, newest first, by status, time range [from, to) and part of the email.';

--
-- Name: locations_booking_options(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.locations_booking_options(location_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform app_hidden.require_location(location_id);
  return app_hidden.location_booking_options(app_hidden.current_org_id(), location_id);
end $$;

ALTER FUNCTION app_public.locations_booking_options(location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION locations_booking_options(location_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.locations_booking_options(location_id uuid) IS 'locations_booking_options: what a booking at the location may name.';

--
-- Name: locations_list(integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.locations_list(page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  return app_hidden.page_of((select coalesce(jsonb_agg(app_hidden.location_json(l) order by l.name, l.id), '[]')
                               from app_public.locations l where l.organization_id = app_hidden.current_org_id()), page, page_size);
end $$;

ALTER FUNCTION app_public.locations_list(page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION locations_list(page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.locations_list(page integer, page_size integer) IS 'locations_list: the locations the credential reaches, by name.';

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

ALTER FUNCTION app_public.sequences_analytics(sequence_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION sequences_analytics(sequence_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.sequences_analytics(sequence_id uuid) IS 'sequences_analytics: per-step counts in step order (sent, delivered, bounced, opened, clicked, replied, skipped, failed, unknown), the rollup (enrollments by status; messages sent, delivered, bounced; enrollments that replied) over the enrollments the credential sees, and email_delivery_reporting (not_applicable without an email step; NULL: the transport decides).';

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
-- Name: territories_list(uuid, text, text, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_location(location_id);
  return app_hidden.page_of((
    select coalesce(jsonb_agg(app_hidden.territory_json(t) order by t.name, t.id), '[]')
      from app_public.territories t
     where t.organization_id = app_hidden.current_org_id()
       and (territories_list.location_id is null or t.location_id = territories_list.location_id)
       and (territories_list.postal_code is null or t.postal_codes @> array[app_hidden.postal_code_key(territories_list.postal_code)])
       and (territories_list.country_code is null or t.country_code = upper(territories_list.country_code))), page, page_size);
end $$;

ALTER FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) IS 'territories_list: territories in reach, optionally of one location and covering one postal code (spaces and case ignored).';

--
-- Name: appointment_occurrences; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.appointment_occurrences (
    organization_id uuid NOT NULL,
    appointment_id uuid NOT NULL,
    occurrence_start timestamp with time zone NOT NULL,
    during tstzrange NOT NULL
);

ALTER TABLE app_public.appointment_occurrences OWNER TO svc_owner;

--
-- Name: TABLE appointment_occurrences; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.appointment_occurrences IS 'Each occurrence of a repeating appointment (its series'' row in app_public.appointments holds the rest).';

--
-- Name: appointments_per_day; Type: VIEW; Schema: app_analytics; Owner: svc_owner
--

CREATE VIEW app_analytics.appointments_per_day WITH (security_invoker='true') AS
 WITH booked AS (
         SELECT a.organization_id,
            a.location_id,
            a.starts_at,
            a.status
           FROM app_public.appointments a
          WHERE ((a.kind = 'appointment'::text) AND (a.rrule IS NULL))
        UNION ALL
         SELECT a.organization_id,
            a.location_id,
            o.occurrence_start,
            a.status
           FROM (app_public.appointments a
             JOIN app_public.appointment_occurrences o ON (((o.organization_id = a.organization_id) AND (o.appointment_id = a.id))))
          WHERE ((a.kind = 'appointment'::text) AND (a.rrule IS NOT NULL))
        )
 SELECT b.organization_id,
    b.location_id,
    l.name AS location,
    ((b.starts_at AT TIME ZONE l.timezone))::date AS day,
    count(*) FILTER (WHERE (b.status = 'booked'::text)) AS booked,
    count(*) FILTER (WHERE (b.status = 'cancelled'::text)) AS cancelled
   FROM (booked b
     JOIN app_public.locations l ON (((l.organization_id = b.organization_id) AND (l.id = b.location_id))))
  GROUP BY b.organization_id, b.location_id, l.name, (((b.starts_at AT TIME ZONE l.timezone))::date);

ALTER TABLE app_analytics.appointments_per_day OWNER TO svc_owner;

--
-- Name: VIEW appointments_per_day; Type: COMMENT; Schema: app_analytics; Owner: svc_owner
--

COMMENT ON VIEW app_analytics.appointments_per_day IS 'Booked and cancelled appointments per location and local day (occurrences of a series each count).';

--
-- Name: contact_tags; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.contact_tags (
    organization_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    tag_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE app_public.contact_tags OWNER TO svc_owner;

--
-- Name: pipeline_stages; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.pipeline_stages (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    "position" integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT pipeline_stages_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE app_public.pipeline_stages OWNER TO svc_owner;

--
-- Name: TABLE pipeline_stages; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.pipeline_stages IS 'The organization''s pipeline, in dashboard order (position).';

--
-- Name: tags; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.tags (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name public.citext NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT tags_name_check CHECK (((length((name)::text) >= 1) AND (length((name)::text) <= 120)))
);

ALTER TABLE app_public.tags OWNER TO svc_owner;

--
-- Name: TABLE tags; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.tags IS 'The organization''s tags (at most organizations.tag_limit).';

--
-- Name: contacts; Type: VIEW; Schema: app_analytics; Owner: svc_owner
--

CREATE VIEW app_analytics.contacts WITH (security_invoker='true') AS
 SELECT c.organization_id,
    c.id,
    c.name,
    (c.email)::text AS email,
    c.phone,
    c.stage_id,
    s.name AS stage,
    s."position" AS stage_position,
    COALESCE(( SELECT array_agg((t.name)::text ORDER BY t.name) AS array_agg
           FROM (app_public.contact_tags ct
             JOIN app_public.tags t ON (((t.organization_id = ct.organization_id) AND (t.id = ct.tag_id))))
          WHERE ((ct.organization_id = c.organization_id) AND (ct.contact_id = c.id))), '{}'::text[]) AS tags,
    c.field_values,
    c.sms_consent,
    c.total_calls,
    c.notes_count,
    c.first_seen_at,
    c.last_seen_at,
    c.created_at,
    c.updated_at
   FROM (app_public.contacts c
     LEFT JOIN app_public.pipeline_stages s ON (((s.organization_id = c.organization_id) AND (s.id = c.stage_id))));

ALTER TABLE app_analytics.contacts OWNER TO svc_owner;

--
-- Name: VIEW contacts; Type: COMMENT; Schema: app_analytics; Owner: svc_owner
--

COMMENT ON VIEW app_analytics.contacts IS 'Contacts with stage (name) and tags (names, sorted); the contacts an analyst reaches.';

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
-- Name: analysts; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.analysts (
    role_name text NOT NULL,
    organization_id uuid,
    location_ids uuid[],
    all_organizations boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT analysts_check CHECK ((all_organizations = (organization_id IS NULL))),
    CONSTRAINT analysts_check1 CHECK (((location_ids IS NULL) OR (organization_id IS NOT NULL))),
    CONSTRAINT analysts_location_ids_check CHECK (((location_ids IS NULL) OR (cardinality(location_ids) > 0))),
    CONSTRAINT analysts_role_name_check CHECK ((role_name ~ '^svc_analyst_[a-z0-9_]{1,40}$'::text))
);

ALTER TABLE app_private.analysts OWNER TO svc_owner;

--
-- Name: TABLE analysts; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.analysts IS 'Who each analyst login role is: its organization (NULL for the operator''s all-organizations analysts) and the locations it reaches (NULL: all). Keyed by session_user; written by `svc admin analyst create|revoke` only.';

--
-- Name: api_key_locations; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.api_key_locations (
    organization_id uuid NOT NULL,
    api_key_id uuid NOT NULL,
    location_id uuid NOT NULL
);

ALTER TABLE app_private.api_key_locations OWNER TO svc_owner;

--
-- Name: TABLE api_key_locations; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.api_key_locations IS 'Locations of a location-limited organization key.';

--
-- Name: chat_sessions; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.chat_sessions (
    organization_id uuid NOT NULL,
    conversation_id uuid NOT NULL,
    widget_id uuid NOT NULL,
    token_hash text NOT NULL,
    client_address text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chat_sessions_client_address_check CHECK ((length(client_address) <= 100)),
    CONSTRAINT chat_sessions_token_hash_check CHECK ((token_hash ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE app_private.chat_sessions OWNER TO svc_owner;

--
-- Name: TABLE chat_sessions; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.chat_sessions IS 'The visitor''s side of a web chat conversation: its widget, the sha-256 of the visitor''s token, the client address.';

--
-- Name: contact_events; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.contact_events (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    seq bigint NOT NULL,
    contact_id uuid NOT NULL,
    kind text NOT NULL,
    event text NOT NULL,
    key text,
    fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    subscription_ids uuid[] NOT NULL,
    receipt jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT contact_events_check CHECK (((kind = 'fire'::text) = (receipt IS NOT NULL))),
    CONSTRAINT contact_events_check1 CHECK (((kind = 'fire'::text) OR (key IS NULL))),
    CONSTRAINT contact_events_event_check CHECK ((event ~ '^[a-z][a-z0-9_]{0,99}$'::text)),
    CONSTRAINT contact_events_fields_check CHECK ((jsonb_typeof(fields) = 'object'::text)),
    CONSTRAINT contact_events_key_check CHECK (((length(key) >= 1) AND (length(key) <= 255))),
    CONSTRAINT contact_events_kind_check CHECK ((kind = ANY (ARRAY['cancel'::text, 'fire'::text]))),
    CONSTRAINT contact_events_subscription_ids_check CHECK ((cardinality(subscription_ids) > 0))
);

ALTER TABLE app_private.contact_events OWNER TO svc_owner;

--
-- Name: TABLE contact_events; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.contact_events IS 'Events of contacts_upsert that some subscription took (kind fire, with its receipt) and cancels of events some subscription listens to (kind cancel), in order (seq), with the subscriptions they matched. Listeners react by trigger or job; a fired (event, key) is accepted once per organization.';

--
-- Name: contact_events_seq_seq; Type: SEQUENCE; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.contact_events ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.contact_events_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: contact_fields; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.contact_fields (
    name text NOT NULL,
    area text NOT NULL,
    expression text NOT NULL,
    "position" integer DEFAULT 1000 NOT NULL,
    CONSTRAINT contact_fields_area_check CHECK ((area ~ '^[a-z][a-z0-9_]{0,49}$'::text)),
    CONSTRAINT contact_fields_expression_check CHECK (((length(expression) >= 1) AND (length(expression) <= 4000))),
    CONSTRAINT contact_fields_name_check CHECK ((name ~ '^[a-z][a-z0-9_]{0,62}$'::text))
);

ALTER TABLE app_private.contact_fields OWNER TO svc_owner;

--
-- Name: TABLE contact_fields; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.contact_fields IS 'The fields of the contact record as contacts_get answers it: name, owning area, SQL expression (over c, org, reach). Changing a row regenerates app_hidden.contacts_json.';

--
-- Name: dashboard_links; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.dashboard_links (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    person_id uuid NOT NULL,
    token_hash bytea NOT NULL,
    return_to text,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT dashboard_links_token_hash_check CHECK ((length(token_hash) = 32))
);

ALTER TABLE app_private.dashboard_links OWNER TO svc_owner;

--
-- Name: TABLE dashboard_links; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.dashboard_links IS 'One-time sign-in links: only the token''s SHA-256 is kept; spent (used_at) at the first use, dead after expires_at.';

--
-- Name: dashboard_sessions; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.dashboard_sessions (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    person_id uuid NOT NULL,
    session_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT dashboard_sessions_session_hash_check CHECK ((length(session_hash) = 32))
);

ALTER TABLE app_private.dashboard_sessions OWNER TO svc_owner;

--
-- Name: TABLE dashboard_sessions; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.dashboard_sessions IS 'Signed-in browsers: only the SHA-256 of the cookie''s session id is kept. A new row at every sign-in (no fixation).';

--
-- Name: delivery_events; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.delivery_events (
    id bigint NOT NULL,
    organization_id uuid NOT NULL,
    message_id uuid NOT NULL,
    event_key text NOT NULL,
    type text NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT delivery_events_event_key_check CHECK (((length(event_key) >= 1) AND (length(event_key) <= 400))),
    CONSTRAINT delivery_events_type_check CHECK ((type = ANY (ARRAY['queued'::text, 'sent'::text, 'delivered'::text, 'undelivered'::text, 'failed'::text, 'bounced'::text, 'complained'::text, 'auto_replied'::text])))
);

ALTER TABLE app_private.delivery_events OWNER TO svc_owner;

--
-- Name: TABLE delivery_events; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.delivery_events IS 'Delivery reports from providers (status callbacks, bounces, complaints), each recorded once by its provider key.';

--
-- Name: delivery_events_id_seq; Type: SEQUENCE; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.delivery_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.delivery_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

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
-- Name: form_secrets; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.form_secrets (
    organization_id uuid NOT NULL,
    form_id uuid NOT NULL,
    secret text DEFAULT replace(((gen_random_uuid())::text || (gen_random_uuid())::text), '-'::text, ''::text) NOT NULL
);

ALTER TABLE app_private.form_secrets OWNER TO svc_owner;

--
-- Name: TABLE form_secrets; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.form_secrets IS 'The key that signs a form''s render-time tokens (two random UUIDs: 244 random bits). Read only by the public form''s definer functions.';

--
-- Name: idempotency_keys; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.idempotency_keys (
    credential_id uuid NOT NULL,
    operation_id text NOT NULL,
    key text NOT NULL,
    organization_id uuid NOT NULL,
    fingerprint text NOT NULL,
    state text NOT NULL,
    response_status integer,
    response_body jsonb,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((length(key) >= 1) AND (length(key) <= 255))),
    CONSTRAINT idempotency_keys_state_check CHECK ((state = ANY (ARRAY['running'::text, 'done'::text, 'failed'::text])))
);

ALTER TABLE app_private.idempotency_keys OWNER TO svc_owner;

--
-- Name: TABLE idempotency_keys; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.idempotency_keys IS 'Replay store for operations that take an idempotency_key: 24 h, per credential, operation and key.';

--
-- Name: COLUMN idempotency_keys.fingerprint; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.idempotency_keys.fingerprint IS 'Hash of the request details and the caller''s access; another fingerprint under the same key is a 409.';

--
-- Name: oauth_clients; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_clients (
    client_id text NOT NULL,
    registration text NOT NULL,
    client_name text,
    client_uri text,
    redirect_uris text[] NOT NULL,
    fetched_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    cache_seconds integer,
    CONSTRAINT oauth_clients_cache_seconds_check CHECK (((cache_seconds >= 0) AND (cache_seconds <= 86400))),
    CONSTRAINT oauth_clients_client_id_check CHECK (((length(client_id) >= 1) AND (length(client_id) <= 2048))),
    CONSTRAINT oauth_clients_client_name_check CHECK ((length(client_name) <= 200)),
    CONSTRAINT oauth_clients_client_uri_check CHECK ((length(client_uri) <= 2048)),
    CONSTRAINT oauth_clients_redirect_uris_check CHECK (((cardinality(redirect_uris) >= 1) AND (cardinality(redirect_uris) <= 20))),
    CONSTRAINT oauth_clients_registration_check CHECK ((registration = ANY (ARRAY['dynamic'::text, 'metadata_document'::text])))
);

ALTER TABLE app_private.oauth_clients OWNER TO svc_owner;

--
-- Name: TABLE oauth_clients; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.oauth_clients IS 'OAuth clients: registered through RFC 7591 (public clients, no secret) or described by a client ID metadata document (cached copy).';

--
-- Name: COLUMN oauth_clients.cache_seconds; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.oauth_clients.cache_seconds IS 'How long the fetched metadata document may be used from fetched_at; null for a registered client.';

--
-- Name: oauth_codes; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_codes (
    code_hash bytea NOT NULL,
    grant_id uuid NOT NULL,
    redirect_uri text NOT NULL,
    code_challenge text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    CONSTRAINT oauth_codes_code_hash_check CHECK ((length(code_hash) = 32))
);

ALTER TABLE app_private.oauth_codes OWNER TO svc_owner;

--
-- Name: oauth_requests; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_requests (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    organization_id uuid NOT NULL,
    person_id uuid NOT NULL,
    client_id text NOT NULL,
    redirect_uri text NOT NULL,
    state text,
    code_challenge text NOT NULL,
    resource text NOT NULL,
    scopes text[] NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

ALTER TABLE app_private.oauth_requests OWNER TO svc_owner;

--
-- Name: oauth_tokens; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.oauth_tokens (
    token_hash bytea NOT NULL,
    grant_id uuid NOT NULL,
    kind text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT oauth_tokens_kind_check CHECK ((kind = ANY (ARRAY['access'::text, 'refresh'::text]))),
    CONSTRAINT oauth_tokens_token_hash_check CHECK ((length(token_hash) = 32))
);

ALTER TABLE app_private.oauth_tokens OWNER TO svc_owner;

--
-- Name: TABLE oauth_tokens; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.oauth_tokens IS 'Opaque OAuth tokens by hash. Access tokens live at most an hour; refresh tokens rotate on every use.';

--
-- Name: outbox; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.outbox (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    channel text NOT NULL,
    sender text,
    recipient text NOT NULL,
    subject text,
    body text NOT NULL,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT outbox_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'sms'::text])))
);

ALTER TABLE app_private.outbox OWNER TO svc_owner;

--
-- Name: TABLE outbox; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.outbox IS 'Every email and SMS handed to the local delivery sink (EMAIL_TRANSPORT/SMS_TRANSPORT = sink).';

--
-- Name: own_clients; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.own_clients (
    organization_id uuid NOT NULL,
    person_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    source text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT own_clients_source_check CHECK ((source ~ '^[a-z][a-z0-9_]{0,49}$'::text))
);

ALTER TABLE app_private.own_clients OWNER TO svc_owner;

--
-- Name: TABLE own_clients; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.own_clients IS 'A contact is a person''s own client for as long as an area (source: appointments, calls…) keeps a row for it; each area writes only its own rows. Read by app_hidden.current_own_client_ids().';

--
-- Name: rate_limit_windows; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.rate_limit_windows (
    window_start timestamp with time zone NOT NULL,
    client text NOT NULL,
    route text NOT NULL,
    hits integer NOT NULL
);

ALTER TABLE app_private.rate_limit_windows OWNER TO svc_owner;

--
-- Name: TABLE rate_limit_windows; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.rate_limit_windows IS 'Requests per client address and route in one 60 s window, summed over every API process.';

--
-- Name: search_trigrams; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.search_trigrams (
    trigram text NOT NULL,
    share real NOT NULL,
    CONSTRAINT search_trigrams_share_check CHECK (((share >= (0)::double precision) AND (share <= (1)::double precision))),
    CONSTRAINT search_trigrams_trigram_check CHECK ((trigram ~ '^[a-z0-9]{3}$'::text))
);

ALTER TABLE app_private.search_trigrams OWNER TO svc_owner;

--
-- Name: TABLE search_trigrams; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.search_trigrams IS 'Share of contacts whose search text contains each three-character piece; picks the pieces of q the trigram index looks up.';

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
-- Name: webhook_secrets; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.webhook_secrets (
    organization_id uuid NOT NULL,
    subscription_id uuid NOT NULL,
    secret text NOT NULL,
    CONSTRAINT webhook_secrets_secret_check CHECK ((secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'::text))
);

ALTER TABLE app_private.webhook_secrets OWNER TO svc_owner;

--
-- Name: TABLE webhook_secrets; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.webhook_secrets IS 'The signing secret of a subscription (whsec_ + 32 random bytes in base64, as Standard Webhooks writes it). Kept raw, since signing needs it; only svc_owner (the worker, operator commands, definer functions) reads it.';

--
-- Name: audience_members; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.audience_members (
    organization_id uuid NOT NULL,
    audience_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    added_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE app_public.audience_members OWNER TO svc_owner;

--
-- Name: TABLE audience_members; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.audience_members IS 'Members of static audiences. The primary key orders a member list (keyset paging by contact id).';

--
-- Name: calendars; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.calendars (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT calendars_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE app_public.calendars OWNER TO svc_owner;

--
-- Name: TABLE calendars; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.calendars IS 'What a location that is not staffed books: busy while it holds an appointment, open during its location''s hours.';

--
-- Name: call_transcript_lines; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.call_transcript_lines (
    organization_id uuid NOT NULL,
    call_id uuid NOT NULL,
    "position" integer NOT NULL,
    speaker text NOT NULL,
    text text NOT NULL,
    CONSTRAINT call_transcript_lines_position_check CHECK (("position" >= 0)),
    CONSTRAINT call_transcript_lines_speaker_check CHECK ((speaker = ANY (ARRAY['caller'::text, 'assistant'::text, 'staff'::text]))),
    CONSTRAINT call_transcript_lines_text_check CHECK ((length(text) <= 20000))
);

ALTER TABLE app_public.call_transcript_lines OWNER TO svc_owner;

--
-- Name: TABLE call_transcript_lines; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.call_transcript_lines IS 'A call''s transcript, one line per row in the order spoken (position from 0).';

--
-- Name: chat_widgets; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.chat_widgets (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid,
    name text NOT NULL,
    allowed_origins text[] DEFAULT '{}'::text[] NOT NULL,
    greeting text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chat_widgets_allowed_origins_check CHECK (((cardinality(allowed_origins) <= 50) AND (array_position(allowed_origins, NULL::text) IS NULL) AND (array_to_string(allowed_origins, ' '::text) ~ '^(https?://[^ /]+( |$))*$'::text))),
    CONSTRAINT chat_widgets_greeting_check CHECK (((length(greeting) >= 1) AND (length(greeting) <= 1000))),
    CONSTRAINT chat_widgets_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE app_public.chat_widgets OWNER TO svc_owner;

--
-- Name: TABLE chat_widgets; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.chat_widgets IS 'A web chat widget of a location (NULL: of the whole organization); visitors chat through it without a key.';

--
-- Name: COLUMN chat_widgets.allowed_origins; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.chat_widgets.allowed_origins IS 'The sites (scheme://host[:port]) whose pages may chat through the widget (CORS).';

--
-- Name: contact_locations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.contact_locations (
    organization_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    location_id uuid NOT NULL
);

ALTER TABLE app_public.contact_locations OWNER TO svc_owner;

--
-- Name: TABLE contact_locations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.contact_locations IS 'Locations a contact is linked to; a contact with none is visible only organization-wide.';

--
-- Name: custom_fields; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.custom_fields (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    key text NOT NULL,
    label text NOT NULL,
    type text NOT NULL,
    options jsonb,
    enabled boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT custom_fields_key_check CHECK ((key ~ '^[A-Za-z0-9_]{1,100}$'::text)),
    CONSTRAINT custom_fields_type_check CHECK ((type = ANY (ARRAY['text'::text, 'number'::text, 'currency'::text, 'date'::text, 'datetime'::text, 'boolean'::text, 'select'::text])))
);

ALTER TABLE app_public.custom_fields OWNER TO svc_owner;

--
-- Name: TABLE custom_fields; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.custom_fields IS 'Fields the organization defines for its contacts; values live in contacts.field_values under key.';

--
-- Name: COLUMN custom_fields.options; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.custom_fields.options IS 'Allowed values of a select field (a JSON array of strings).';

--
-- Name: email_suppressions; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.email_suppressions (
    organization_id uuid NOT NULL,
    email text NOT NULL,
    contact_id uuid NOT NULL,
    source text DEFAULT 'api'::text NOT NULL,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT email_suppressions_email_check CHECK ((email = lower(email))),
    CONSTRAINT email_suppressions_source_check CHECK ((source = ANY (ARRAY['api'::text, 'bounce'::text, 'complaint'::text, 'unsubscribe'::text])))
);

ALTER TABLE app_public.email_suppressions OWNER TO svc_owner;

--
-- Name: TABLE email_suppressions; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.email_suppressions IS 'Addresses no email may go to, whichever contact carries them later. The first record of an address is kept.';

--
-- Name: COLUMN email_suppressions.email; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.email_suppressions.email IS 'The address, lower-cased (compared with contacts.email_key).';

--
-- Name: COLUMN email_suppressions.contact_id; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.email_suppressions.contact_id IS 'The contact that carried the address when it was suppressed.';

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
-- Name: form_fields; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.form_fields (
    organization_id uuid NOT NULL,
    form_id uuid NOT NULL,
    key text NOT NULL,
    "position" integer NOT NULL,
    label text NOT NULL,
    type text NOT NULL,
    required boolean DEFAULT false NOT NULL,
    options jsonb,
    CONSTRAINT form_fields_check CHECK (((type = 'select'::text) = (options IS NOT NULL))),
    CONSTRAINT form_fields_key_check CHECK ((key ~ '^[A-Za-z][A-Za-z0-9_]{0,99}$'::text)),
    CONSTRAINT form_fields_label_check CHECK (((length(label) >= 1) AND (length(label) <= 200))),
    CONSTRAINT form_fields_options_check CHECK (((options IS NULL) OR ((jsonb_typeof(options) = 'array'::text) AND ((jsonb_array_length(options) >= 1) AND (jsonb_array_length(options) <= 500))))),
    CONSTRAINT form_fields_position_check CHECK (("position" >= 0)),
    CONSTRAINT form_fields_type_check CHECK ((type = ANY (ARRAY['text'::text, 'email'::text, 'phone'::text, 'textarea'::text, 'select'::text, 'checkbox'::text, 'number'::text, 'date'::text])))
);

ALTER TABLE app_public.form_fields OWNER TO svc_owner;

--
-- Name: TABLE form_fields; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.form_fields IS 'A form''s fields in order; key names the value in submissions'' payloads. A select field lists its options.';

--
-- Name: form_submissions; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.form_submissions (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    form_id uuid NOT NULL,
    contact_id uuid,
    payload jsonb NOT NULL,
    status text NOT NULL,
    spam_reason text,
    email_key text,
    client_address text,
    submitted_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT form_submissions_check CHECK (((status = 'spam'::text) = (spam_reason IS NOT NULL))),
    CONSTRAINT form_submissions_check1 CHECK (((status = 'accepted'::text) OR (contact_id IS NULL))),
    CONSTRAINT form_submissions_client_address_check CHECK ((length(client_address) <= 100)),
    CONSTRAINT form_submissions_email_key_check CHECK ((length(email_key) <= 320)),
    CONSTRAINT form_submissions_payload_check CHECK ((jsonb_typeof(payload) = 'object'::text)),
    CONSTRAINT form_submissions_spam_reason_check CHECK ((spam_reason ~ '^[a-z_]{1,50}$'::text)),
    CONSTRAINT form_submissions_status_check CHECK ((status = ANY (ARRAY['accepted'::text, 'spam'::text])))
);

ALTER TABLE app_public.form_submissions OWNER TO svc_owner;

--
-- Name: TABLE form_submissions; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.form_submissions IS 'A submission of a form: payload by field key, the contact it created or updated (accepted only), accepted or spam.';

--
-- Name: interactions; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.interactions (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    contact_id uuid NOT NULL,
    location_id uuid,
    channel text NOT NULL,
    status text NOT NULL,
    appointment_id uuid,
    summary text,
    captured_fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    ended_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    conversation_id uuid,
    CONSTRAINT interactions_captured_fields_check CHECK ((jsonb_typeof(captured_fields) = 'object'::text)),
    CONSTRAINT interactions_channel_check CHECK ((channel = ANY (ARRAY['voice'::text, 'chat'::text, 'sms'::text]))),
    CONSTRAINT interactions_check CHECK (((ended_at IS NULL) OR (ended_at >= started_at))),
    CONSTRAINT interactions_status_check CHECK ((status = ANY (ARRAY['in_progress'::text, 'completed'::text, 'abandoned'::text]))),
    CONSTRAINT interactions_summary_check CHECK ((length(summary) <= 20000))
);

ALTER TABLE app_public.interactions OWNER TO svc_owner;

--
-- Name: TABLE interactions; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.interactions IS 'A call, chat or SMS thread the assistant handled for a contact (email threads are conversations, not interactions).';

--
-- Name: COLUMN interactions.location_id; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.interactions.location_id IS 'Where it happened; NULL means the whole organization (visible only organization-wide).';

--
-- Name: COLUMN interactions.appointment_id; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.interactions.appointment_id IS 'The appointment the interaction booked (the appointments area adds the foreign key).';

--
-- Name: COLUMN interactions.captured_fields; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.interactions.captured_fields IS 'What the assistant captured (answers, details); read only by credentials that see contact details.';

--
-- Name: COLUMN interactions.conversation_id; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.interactions.conversation_id IS 'The SMS or chat conversation the AI handled (NULL for calls and recorded interactions); one interaction per conversation.';

--
-- Name: offering_team_members; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.offering_team_members (
    organization_id uuid NOT NULL,
    offering_id uuid NOT NULL,
    staff_profile_id uuid NOT NULL
);

ALTER TABLE app_public.offering_team_members OWNER TO svc_owner;

--
-- Name: TABLE offering_team_members; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.offering_team_members IS 'Who does an offering; an offering with no rows here can be done by every team member of its location.';

--
-- Name: organizations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.organizations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    mcp_enabled boolean DEFAULT true NOT NULL,
    tag_limit integer DEFAULT 500 NOT NULL,
    sending_email_domain text,
    default_sms_number text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sms_help_text text,
    CONSTRAINT organizations_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT organizations_sms_help_text_check CHECK (((sms_help_text IS NULL) OR ((length(sms_help_text) >= 1) AND (length(sms_help_text) <= 300)))),
    CONSTRAINT organizations_tag_limit_check CHECK ((tag_limit >= 0))
);

ALTER TABLE app_public.organizations OWNER TO svc_owner;

--
-- Name: TABLE organizations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.organizations IS 'A business using the service; every tenant row belongs to one.';

--
-- Name: COLUMN organizations.mcp_enabled; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.organizations.mcp_enabled IS 'Feature flag: the MCP entry point answers 404 while false.';

--
-- Name: COLUMN organizations.tag_limit; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.organizations.tag_limit IS 'Most distinct tags the organization may hold.';

--
-- Name: COLUMN organizations.sms_help_text; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.organizations.sms_help_text IS 'The answer to an SMS HELP/INFO (1 to 300 characters); null: the default, with the business''s name, the number and STOP.';

--
-- Name: person_locations; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.person_locations (
    organization_id uuid NOT NULL,
    person_id uuid NOT NULL,
    location_id uuid NOT NULL
);

ALTER TABLE app_public.person_locations OWNER TO svc_owner;

--
-- Name: TABLE person_locations; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.person_locations IS 'Locations a manager or member works at; owners and admins reach every location.';

--
-- Name: role_agent_access; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.role_agent_access (
    organization_id uuid NOT NULL,
    role text NOT NULL,
    agent_access boolean NOT NULL,
    CONSTRAINT role_agent_access_role_check CHECK ((role = ANY (ARRAY['admin'::text, 'manager'::text, 'member'::text])))
);

ALTER TABLE app_public.role_agent_access OWNER TO svc_owner;

--
-- Name: TABLE role_agent_access; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.role_agent_access IS 'Agent access switch for a whole role; absent means on. Owners are always on.';

--
-- Name: sms_opt_outs; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.sms_opt_outs (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    phone text NOT NULL,
    contact_id uuid NOT NULL,
    source text DEFAULT 'api'::text NOT NULL,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    ended_at timestamp with time zone,
    CONSTRAINT sms_opt_outs_check CHECK (((ended_at IS NULL) OR (ended_at >= created_at))),
    CONSTRAINT sms_opt_outs_phone_check CHECK ((phone ~ '^\+[1-9][0-9]{6,14}$'::text)),
    CONSTRAINT sms_opt_outs_source_check CHECK ((source = ANY (ARRAY['api'::text, 'keyword'::text])))
);

ALTER TABLE app_public.sms_opt_outs OWNER TO svc_owner;

--
-- Name: TABLE sms_opt_outs; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.sms_opt_outs IS 'SMS opt-outs of a number: no SMS goes to it while one is open (ended_at null); new consent ends it.';

--
-- Name: staff_profiles; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.staff_profiles (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    person_id uuid NOT NULL,
    display_name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    working_hours jsonb,
    CONSTRAINT staff_profiles_working_hours_check CHECK (((working_hours IS NULL) OR (jsonb_typeof(working_hours) = 'array'::text)))
);

ALTER TABLE app_public.staff_profiles OWNER TO svc_owner;

--
-- Name: TABLE staff_profiles; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.staff_profiles IS 'A team member who can be booked and who owns client relationships.';

--
-- Name: COLUMN staff_profiles.working_hours; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.staff_profiles.working_hours IS 'The team member''s weekly hours [{day: mon..sun, open: HH:MM, close: HH:MM|24:00}] in each location''s time zone; NULL: the location''s hours.';

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
    CONSTRAINT step_runs_status_check CHECK ((status = ANY (ARRAY['sending'::text, 'sent'::text, 'skipped'::text, 'failed'::text, 'unknown'::text, 'waited'::text]))),
    CONSTRAINT step_runs_step_type_check CHECK ((step_type = ANY (ARRAY['email'::text, 'sms'::text, 'wait'::text])))
);

ALTER TABLE app_public.step_runs OWNER TO svc_owner;

--
-- Name: TABLE step_runs; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.step_runs IS 'Each (enrollment, step) the engine reached, at most once: sending while its message is with the transport, then sent, failed or unknown (the process died in between: never sent again), skipped (with reason: suppressed, opted_out, no_consent, missing_address) or waited.';

--
-- Name: territory_team_members; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.territory_team_members (
    organization_id uuid NOT NULL,
    territory_id uuid NOT NULL,
    staff_profile_id uuid NOT NULL
);

ALTER TABLE app_public.territory_team_members OWNER TO svc_owner;

--
-- Name: TABLE territory_team_members; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.territory_team_members IS 'Who covers a territory; a territory with no rows here is covered by every team member of its location.';

--
-- Name: webhook_deliveries; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.webhook_deliveries (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    subscription_id uuid NOT NULL,
    event text NOT NULL,
    occurred_at timestamp with time zone NOT NULL,
    data jsonb NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now(),
    last_status integer,
    last_error text,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_deliveries_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT webhook_deliveries_check CHECK (((status = 'pending'::text) = (next_attempt_at IS NOT NULL))),
    CONSTRAINT webhook_deliveries_check1 CHECK (((status = 'delivered'::text) = (delivered_at IS NOT NULL))),
    CONSTRAINT webhook_deliveries_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT webhook_deliveries_last_error_check CHECK ((length(last_error) <= 1000)),
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text, 'cancelled'::text])))
);

ALTER TABLE app_public.webhook_deliveries OWNER TO svc_owner;

--
-- Name: TABLE webhook_deliveries; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.webhook_deliveries IS 'One event for one subscription: its body is {type: event, timestamp: occurred_at, data}, its webhook-id msg_<id> on every attempt. pending until a 2xx (delivered), a 410 or three days of failures (failed), or its subscription disabled (cancelled).';

--
-- Name: analysts analysts_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.analysts
    ADD CONSTRAINT analysts_pkey PRIMARY KEY (role_name);

--
-- Name: api_key_locations api_key_locations_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_key_locations
    ADD CONSTRAINT api_key_locations_pkey PRIMARY KEY (organization_id, api_key_id, location_id);

--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);

--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (organization_id, id);

--
-- Name: chat_sessions chat_sessions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.chat_sessions
    ADD CONSTRAINT chat_sessions_pkey PRIMARY KEY (organization_id, conversation_id);

--
-- Name: contact_events contact_events_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.contact_events
    ADD CONSTRAINT contact_events_pkey PRIMARY KEY (organization_id, id);

--
-- Name: contact_fields contact_fields_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.contact_fields
    ADD CONSTRAINT contact_fields_pkey PRIMARY KEY (name);

--
-- Name: dashboard_links dashboard_links_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_links
    ADD CONSTRAINT dashboard_links_pkey PRIMARY KEY (organization_id, id);

--
-- Name: dashboard_links dashboard_links_token_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_links
    ADD CONSTRAINT dashboard_links_token_hash_key UNIQUE (token_hash);

--
-- Name: dashboard_sessions dashboard_sessions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: dashboard_sessions dashboard_sessions_session_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_session_hash_key UNIQUE (session_hash);

--
-- Name: delivery_events delivery_events_event_key_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_events
    ADD CONSTRAINT delivery_events_event_key_key UNIQUE (event_key);

--
-- Name: delivery_events delivery_events_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_events
    ADD CONSTRAINT delivery_events_pkey PRIMARY KEY (id);

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
-- Name: form_secrets form_secrets_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.form_secrets
    ADD CONSTRAINT form_secrets_pkey PRIMARY KEY (organization_id, form_id);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (credential_id, operation_id, key);

--
-- Name: oauth_clients oauth_clients_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_clients
    ADD CONSTRAINT oauth_clients_pkey PRIMARY KEY (client_id);

--
-- Name: oauth_codes oauth_codes_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_codes
    ADD CONSTRAINT oauth_codes_pkey PRIMARY KEY (code_hash);

--
-- Name: oauth_grants oauth_grants_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_grants
    ADD CONSTRAINT oauth_grants_pkey PRIMARY KEY (id);

--
-- Name: oauth_requests oauth_requests_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_requests
    ADD CONSTRAINT oauth_requests_pkey PRIMARY KEY (id);

--
-- Name: oauth_tokens oauth_tokens_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_tokens
    ADD CONSTRAINT oauth_tokens_pkey PRIMARY KEY (token_hash);

--
-- Name: outbox outbox_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (organization_id, id);

--
-- Name: outgoing_messages outgoing_messages_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.outgoing_messages
    ADD CONSTRAINT outgoing_messages_pkey PRIMARY KEY (organization_id, id);

--
-- Name: own_clients own_clients_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.own_clients
    ADD CONSTRAINT own_clients_pkey PRIMARY KEY (organization_id, person_id, contact_id, source);

--
-- Name: rate_limit_windows rate_limit_windows_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.rate_limit_windows
    ADD CONSTRAINT rate_limit_windows_pkey PRIMARY KEY (window_start, client, route);

--
-- Name: search_trigrams search_trigrams_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.search_trigrams
    ADD CONSTRAINT search_trigrams_pkey PRIMARY KEY (trigram);

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
-- Name: webhook_secrets webhook_secrets_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.webhook_secrets
    ADD CONSTRAINT webhook_secrets_pkey PRIMARY KEY (organization_id, subscription_id);

--
-- Name: appointment_occurrences appointment_occurrences_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointment_occurrences
    ADD CONSTRAINT appointment_occurrences_pkey PRIMARY KEY (organization_id, appointment_id, occurrence_start);

--
-- Name: appointments appointments_no_overlap_calendar; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_no_overlap_calendar EXCLUDE USING gist (organization_id WITH =, calendar_id WITH =, during WITH &&) WHERE (((status = 'booked'::text) AND (calendar_id IS NOT NULL) AND (rrule IS NULL)));

--
-- Name: appointments appointments_no_overlap_team_member; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_no_overlap_team_member EXCLUDE USING gist (organization_id WITH =, staff_profile_id WITH =, during WITH &&) WHERE (((status = 'booked'::text) AND (staff_profile_id IS NOT NULL) AND (rrule IS NULL)));

--
-- Name: appointments appointments_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_pkey PRIMARY KEY (organization_id, id);

--
-- Name: audience_members audience_members_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.audience_members
    ADD CONSTRAINT audience_members_pkey PRIMARY KEY (organization_id, audience_id, contact_id);

--
-- Name: audiences audiences_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.audiences
    ADD CONSTRAINT audiences_pkey PRIMARY KEY (organization_id, id);

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
-- Name: calendars calendars_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calendars
    ADD CONSTRAINT calendars_pkey PRIMARY KEY (organization_id, id);

--
-- Name: call_transcript_lines call_transcript_lines_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.call_transcript_lines
    ADD CONSTRAINT call_transcript_lines_pkey PRIMARY KEY (organization_id, call_id, "position");

--
-- Name: calls calls_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_pkey PRIMARY KEY (organization_id, id);

--
-- Name: chat_widgets chat_widgets_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.chat_widgets
    ADD CONSTRAINT chat_widgets_pkey PRIMARY KEY (organization_id, id);

--
-- Name: contact_locations contact_locations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_locations
    ADD CONSTRAINT contact_locations_pkey PRIMARY KEY (organization_id, contact_id, location_id);

--
-- Name: contact_notes contact_notes_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_notes
    ADD CONSTRAINT contact_notes_pkey PRIMARY KEY (organization_id, id);

--
-- Name: contact_tags contact_tags_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_tags
    ADD CONSTRAINT contact_tags_pkey PRIMARY KEY (organization_id, contact_id, tag_id);

--
-- Name: contacts contacts_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contacts
    ADD CONSTRAINT contacts_pkey PRIMARY KEY (organization_id, id);

--
-- Name: conversation_messages conversation_messages_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversation_messages
    ADD CONSTRAINT conversation_messages_pkey PRIMARY KEY (organization_id, id);

--
-- Name: conversations conversations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (organization_id, id);

--
-- Name: custom_fields custom_fields_organization_id_key_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.custom_fields
    ADD CONSTRAINT custom_fields_organization_id_key_key UNIQUE (organization_id, key);

--
-- Name: custom_fields custom_fields_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.custom_fields
    ADD CONSTRAINT custom_fields_pkey PRIMARY KEY (organization_id, id);

--
-- Name: email_suppressions email_suppressions_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.email_suppressions
    ADD CONSTRAINT email_suppressions_pkey PRIMARY KEY (organization_id, email);

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
-- Name: form_fields form_fields_organization_id_form_id_position_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.form_fields
    ADD CONSTRAINT form_fields_organization_id_form_id_position_key UNIQUE (organization_id, form_id, "position");

--
-- Name: form_fields form_fields_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.form_fields
    ADD CONSTRAINT form_fields_pkey PRIMARY KEY (organization_id, form_id, key);

--
-- Name: form_submissions form_submissions_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.form_submissions
    ADD CONSTRAINT form_submissions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: forms forms_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.forms
    ADD CONSTRAINT forms_pkey PRIMARY KEY (organization_id, id);

--
-- Name: interactions interactions_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.interactions
    ADD CONSTRAINT interactions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: locations locations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.locations
    ADD CONSTRAINT locations_pkey PRIMARY KEY (organization_id, id);

--
-- Name: offering_team_members offering_team_members_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offering_team_members
    ADD CONSTRAINT offering_team_members_pkey PRIMARY KEY (organization_id, offering_id, staff_profile_id);

--
-- Name: offerings offerings_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offerings
    ADD CONSTRAINT offerings_pkey PRIMARY KEY (organization_id, id);

--
-- Name: organizations organizations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);

--
-- Name: people people_organization_id_email_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.people
    ADD CONSTRAINT people_organization_id_email_key UNIQUE (organization_id, email);

--
-- Name: people people_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.people
    ADD CONSTRAINT people_pkey PRIMARY KEY (organization_id, id);

--
-- Name: person_locations person_locations_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.person_locations
    ADD CONSTRAINT person_locations_pkey PRIMARY KEY (organization_id, person_id, location_id);

--
-- Name: pipeline_stages pipeline_stages_organization_id_position_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.pipeline_stages
    ADD CONSTRAINT pipeline_stages_organization_id_position_key UNIQUE (organization_id, "position") DEFERRABLE INITIALLY DEFERRED;

--
-- Name: pipeline_stages pipeline_stages_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.pipeline_stages
    ADD CONSTRAINT pipeline_stages_pkey PRIMARY KEY (organization_id, id);

--
-- Name: role_agent_access role_agent_access_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.role_agent_access
    ADD CONSTRAINT role_agent_access_pkey PRIMARY KEY (organization_id, role);

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
-- Name: sms_opt_outs sms_opt_outs_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sms_opt_outs
    ADD CONSTRAINT sms_opt_outs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: staff_profiles staff_profiles_organization_id_person_id_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.staff_profiles
    ADD CONSTRAINT staff_profiles_organization_id_person_id_key UNIQUE (organization_id, person_id);

--
-- Name: staff_profiles staff_profiles_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.staff_profiles
    ADD CONSTRAINT staff_profiles_pkey PRIMARY KEY (organization_id, id);

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
-- Name: tags tags_organization_id_name_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.tags
    ADD CONSTRAINT tags_organization_id_name_key UNIQUE (organization_id, name);

--
-- Name: tags tags_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.tags
    ADD CONSTRAINT tags_pkey PRIMARY KEY (organization_id, id);

--
-- Name: territories territories_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territories
    ADD CONSTRAINT territories_pkey PRIMARY KEY (organization_id, id);

--
-- Name: territory_team_members territory_team_members_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territory_team_members
    ADD CONSTRAINT territory_team_members_pkey PRIMARY KEY (organization_id, territory_id, staff_profile_id);

--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (organization_id, id);

--
-- Name: webhook_subscriptions webhook_subscriptions_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.webhook_subscriptions
    ADD CONSTRAINT webhook_subscriptions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: analysts_by_organization; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX analysts_by_organization ON app_private.analysts USING btree (organization_id);

--
-- Name: chat_sessions_by_address; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX chat_sessions_by_address ON app_private.chat_sessions USING btree (organization_id, client_address, created_at) WHERE (client_address IS NOT NULL);

--
-- Name: contact_events_by_contact; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX contact_events_by_contact ON app_private.contact_events USING btree (organization_id, contact_id);

--
-- Name: contact_events_once; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE UNIQUE INDEX contact_events_once ON app_private.contact_events USING btree (organization_id, event, key) WHERE ((kind = 'fire'::text) AND (key IS NOT NULL));

--
-- Name: dashboard_links_person; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX dashboard_links_person ON app_private.dashboard_links USING btree (organization_id, person_id);

--
-- Name: dashboard_sessions_person; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX dashboard_sessions_person ON app_private.dashboard_sessions USING btree (organization_id, person_id);

--
-- Name: delivery_events_by_message; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX delivery_events_by_message ON app_private.delivery_events USING btree (organization_id, message_id, id);

--
-- Name: enrollment_counts_by_sequence; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX enrollment_counts_by_sequence ON app_private.enrollment_counts USING btree (organization_id, sequence_id, status) INCLUDE (n);

--
-- Name: idempotency_keys_created; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX idempotency_keys_created ON app_private.idempotency_keys USING btree (created_at);

--
-- Name: oauth_grants_person; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX oauth_grants_person ON app_private.oauth_grants USING btree (organization_id, person_id);

--
-- Name: oauth_tokens_grant; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX oauth_tokens_grant ON app_private.oauth_tokens USING btree (grant_id);

--
-- Name: outbox_org_created; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX outbox_org_created ON app_private.outbox USING btree (organization_id, created_at);

--
-- Name: outgoing_messages_by_id; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX outgoing_messages_by_id ON app_private.outgoing_messages USING btree (id);

--
-- Name: outgoing_messages_provider_id; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE UNIQUE INDEX outgoing_messages_provider_id ON app_private.outgoing_messages USING btree (provider_id) WHERE (provider_id IS NOT NULL);

--
-- Name: own_clients_by_contact; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX own_clients_by_contact ON app_private.own_clients USING btree (organization_id, contact_id);

--
-- Name: appointment_occurrences_by_start; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointment_occurrences_by_start ON app_public.appointment_occurrences USING btree (organization_id, occurrence_start);

--
-- Name: appointment_occurrences_by_time; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointment_occurrences_by_time ON app_public.appointment_occurrences USING gist (organization_id, during);

--
-- Name: appointments_by_attendee_email; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_attendee_email ON app_public.appointments USING btree (organization_id, lower(attendee_email)) WHERE (attendee_email IS NOT NULL);

--
-- Name: appointments_by_attendee_phone; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_attendee_phone ON app_public.appointments USING btree (organization_id, attendee_phone) WHERE (attendee_phone IS NOT NULL);

--
-- Name: appointments_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_contact ON app_public.appointments USING btree (organization_id, contact_id, starts_at);

--
-- Name: appointments_by_location_time; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_location_time ON app_public.appointments USING gist (organization_id, location_id, during) WHERE (status = 'booked'::text);

--
-- Name: appointments_by_start; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_start ON app_public.appointments USING btree (organization_id, starts_at, id) WHERE (status = 'booked'::text);

--
-- Name: audience_members_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX audience_members_by_contact ON app_public.audience_members USING btree (organization_id, contact_id);

--
-- Name: audiences_org_created; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX audiences_org_created ON app_public.audiences USING btree (organization_id, created_at DESC, id);

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
-- Name: calendars_by_location; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX calendars_by_location ON app_public.calendars USING btree (organization_id, location_id, name);

--
-- Name: calls_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX calls_by_contact ON app_public.calls USING btree (organization_id, contact_id, started_at DESC, id DESC);

--
-- Name: calls_by_external_id; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX calls_by_external_id ON app_public.calls USING btree (organization_id, external_id) WHERE (external_id IS NOT NULL);

--
-- Name: calls_by_start; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX calls_by_start ON app_public.calls USING btree (organization_id, started_at DESC, id DESC);

--
-- Name: chat_widgets_by_id; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX chat_widgets_by_id ON app_public.chat_widgets USING btree (id);

--
-- Name: contact_locations_by_location; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX contact_locations_by_location ON app_public.contact_locations USING btree (organization_id, location_id, contact_id);

--
-- Name: contact_notes_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX contact_notes_by_contact ON app_public.contact_notes USING btree (organization_id, contact_id, created_at DESC, id);

--
-- Name: contact_tags_by_tag; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX contact_tags_by_tag ON app_public.contact_tags USING btree (organization_id, tag_id, contact_id);

--
-- Name: contacts_org_email_key; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX contacts_org_email_key ON app_public.contacts USING btree (organization_id, email_key);

--
-- Name: contacts_org_last_seen; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX contacts_org_last_seen ON app_public.contacts USING btree (organization_id, last_seen_at DESC, id);

--
-- Name: contacts_org_name; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX contacts_org_name ON app_public.contacts USING btree (organization_id, name, id);

--
-- Name: contacts_org_phone; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX contacts_org_phone ON app_public.contacts USING btree (organization_id, phone) WHERE (phone IS NOT NULL);

--
-- Name: contacts_org_stage; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX contacts_org_stage ON app_public.contacts USING btree (organization_id, stage_id, id);

--
-- Name: contacts_search; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX contacts_search ON app_public.contacts USING gin (app_hidden.contact_search_text(name, email, phone) public.gin_trgm_ops) WITH (fastupdate='on', gin_pending_list_limit='256');

--
-- Name: conversation_messages_body_trgm; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX conversation_messages_body_trgm ON app_public.conversation_messages USING gin (body public.gin_trgm_ops) WHERE (channel <> 'chat'::text);

--
-- Name: conversation_messages_provider_id; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX conversation_messages_provider_id ON app_public.conversation_messages USING btree (organization_id, provider_message_id) WHERE (provider_message_id IS NOT NULL);

--
-- Name: conversation_messages_thread; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX conversation_messages_thread ON app_public.conversation_messages USING btree (organization_id, conversation_id, created_at, id);

--
-- Name: conversations_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX conversations_by_contact ON app_public.conversations USING btree (organization_id, contact_id);

--
-- Name: conversations_recent; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX conversations_recent ON app_public.conversations USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: conversations_sms_thread; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX conversations_sms_thread ON app_public.conversations USING btree (organization_id, contact_id, business_address) WHERE (channel = 'sms'::text);

--
-- Name: email_suppressions_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX email_suppressions_by_contact ON app_public.email_suppressions USING btree (organization_id, contact_id);

--
-- Name: enrollment_events_by_enrollment; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX enrollment_events_by_enrollment ON app_public.enrollment_events USING btree (organization_id, enrollment_id, id);

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
-- Name: form_submissions_by_address; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX form_submissions_by_address ON app_public.form_submissions USING btree (organization_id, client_address, submitted_at) WHERE (client_address IS NOT NULL);

--
-- Name: form_submissions_by_form; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX form_submissions_by_form ON app_public.form_submissions USING btree (organization_id, form_id, submitted_at DESC, id DESC);

--
-- Name: forms_by_location; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX forms_by_location ON app_public.forms USING btree (organization_id, location_id, name);

--
-- Name: interactions_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX interactions_by_contact ON app_public.interactions USING btree (organization_id, contact_id, started_at DESC, id DESC);

--
-- Name: interactions_by_conversation; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX interactions_by_conversation ON app_public.interactions USING btree (organization_id, conversation_id) WHERE (conversation_id IS NOT NULL);

--
-- Name: offerings_by_location; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX offerings_by_location ON app_public.offerings USING btree (organization_id, location_id, name);

--
-- Name: send_schedules_one_default; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX send_schedules_one_default ON app_public.send_schedules USING btree (organization_id) WHERE is_default;

--
-- Name: sequences_org_created; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX sequences_org_created ON app_public.sequences USING btree (organization_id, created_at DESC, id);

--
-- Name: sms_opt_outs_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX sms_opt_outs_by_contact ON app_public.sms_opt_outs USING btree (organization_id, contact_id);

--
-- Name: sms_opt_outs_open; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX sms_opt_outs_open ON app_public.sms_opt_outs USING btree (organization_id, phone) WHERE (ended_at IS NULL);

--
-- Name: territories_by_location; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX territories_by_location ON app_public.territories USING btree (organization_id, location_id, name);

--
-- Name: territories_postal_codes; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX territories_postal_codes ON app_public.territories USING gin (postal_codes);

--
-- Name: webhook_deliveries_by_subscription; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX webhook_deliveries_by_subscription ON app_public.webhook_deliveries USING btree (organization_id, subscription_id, created_at DESC);

--
-- Name: contact_fields _500_define_contacts_json; Type: TRIGGER; Schema: app_private; Owner: svc_owner
--

CREATE TRIGGER _500_define_contacts_json AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON app_private.contact_fields FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_contact_fields__define();

--
-- Name: contact_events _500_sequences; Type: TRIGGER; Schema: app_private; Owner: svc_owner
--

CREATE TRIGGER _500_sequences AFTER INSERT ON app_private.contact_events REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_contact_events__sequences();

--
-- Name: outgoing_messages _700_conversation_status; Type: TRIGGER; Schema: app_private; Owner: svc_owner
--

CREATE TRIGGER _700_conversation_status AFTER UPDATE OF status, error ON app_private.outgoing_messages FOR EACH ROW WHEN ((new.meta ? 'conversation_id'::text)) EXECUTE FUNCTION app_private.tg_outgoing_messages__conversation_status();

--
-- Name: contacts _200_stage_changed_at; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _200_stage_changed_at BEFORE UPDATE OF stage_id ON app_public.contacts FOR EACH ROW WHEN ((old.stage_id IS DISTINCT FROM new.stage_id)) EXECUTE FUNCTION app_private.tg_contacts__stage_changed_at();

--
-- Name: conversations _201_ai_interaction_ends; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _201_ai_interaction_ends AFTER UPDATE OF ai_held ON app_public.conversations FOR EACH ROW WHEN ((new.ai_held AND (NOT old.ai_held))) EXECUTE FUNCTION app_private.tg_conversations__ai_interaction_ends();

--
-- Name: contact_notes _500_count; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count AFTER INSERT ON app_public.contact_notes FOR EACH ROW EXECUTE FUNCTION app_private.tg_contact_notes__count();

--
-- Name: enrollments _500_count_deleted; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_deleted AFTER DELETE ON app_public.enrollments REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_enrollments__count_rows();

--
-- Name: enrollments _500_count_inserted; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_inserted AFTER INSERT ON app_public.enrollments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_enrollments__count_rows();

--
-- Name: enrollments _500_count_status; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_status AFTER UPDATE OF status, sequence_id ON app_public.enrollments FOR EACH ROW WHEN ((((old.status IS DISTINCT FROM new.status) OR (old.sequence_id IS DISTINCT FROM new.sequence_id)) AND (current_setting('svc.enrollment_counts'::text, true) IS DISTINCT FROM 'batched'::text))) EXECUTE FUNCTION app_private.tg_enrollments__count_status();

--
-- Name: appointments _500_own_clients; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_own_clients AFTER INSERT OR DELETE OR UPDATE OF status, staff_profile_id, contact_id, kind ON app_public.appointments FOR EACH ROW EXECUTE FUNCTION app_private.tg_appointments__own_clients();

--
-- Name: calls _500_own_clients; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_own_clients AFTER INSERT OR DELETE OR UPDATE OF staff_profile_id, contact_id ON app_public.calls FOR EACH ROW EXECUTE FUNCTION app_private.tg_calls__own_clients();

--
-- Name: people _500_revoke_keys; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_revoke_keys AFTER UPDATE OF role, powers, active ON app_public.people FOR EACH ROW EXECUTE FUNCTION app_private.tg_people__revoke_keys();

--
-- Name: person_locations _500_revoke_keys; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_revoke_keys AFTER DELETE ON app_public.person_locations FOR EACH ROW EXECUTE FUNCTION app_private.tg_person_locations__revoke_keys();

--
-- Name: forms _500_secret; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_secret AFTER INSERT ON app_public.forms FOR EACH ROW EXECUTE FUNCTION app_private.tg_forms__secret();

--
-- Name: contacts _500_sequence_exits; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_sequence_exits AFTER UPDATE OF stage_id, field_values, name, email, phone ON app_public.contacts FOR EACH ROW WHEN (((old.stage_id IS DISTINCT FROM new.stage_id) OR (old.field_values IS DISTINCT FROM new.field_values) OR (old.name IS DISTINCT FROM new.name) OR (old.email IS DISTINCT FROM new.email) OR (old.phone IS DISTINCT FROM new.phone))) EXECUTE FUNCTION app_private.tg_contacts__sequence_exits();

--
-- Name: contact_tags _500_sequences; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_sequences AFTER INSERT ON app_public.contact_tags FOR EACH ROW EXECUTE FUNCTION app_private.tg_contact_tags__sequences();

--
-- Name: email_suppressions _500_sequences; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_sequences BEFORE INSERT ON app_public.email_suppressions FOR EACH ROW EXECUTE FUNCTION app_private.tg_email_suppressions__sequences();

--
-- Name: sms_opt_outs _500_sequences; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_sequences BEFORE INSERT ON app_public.sms_opt_outs FOR EACH ROW EXECUTE FUNCTION app_private.tg_sms_opt_outs__sequences();

--
-- Name: sequences _500_subscriptions; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_subscriptions AFTER INSERT OR UPDATE OF status, kind, trigger, location_id ON app_public.sequences FOR EACH ROW EXECUTE FUNCTION app_private.tg_sequences__subscriptions();

--
-- Name: sequences _500_unsubscribe; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_unsubscribe AFTER DELETE ON app_public.sequences FOR EACH ROW EXECUTE FUNCTION app_private.tg_sequences__unsubscribe();

--
-- Name: appointments _510_sequences; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _510_sequences AFTER INSERT ON app_public.appointments FOR EACH ROW WHEN (((new.source = 'api'::text) AND (new.kind = 'appointment'::text) AND (new.status = 'booked'::text))) EXECUTE FUNCTION app_private.tg_appointments__sequences();

--
-- Name: conversation_messages _900_webhooks; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks AFTER INSERT ON app_public.conversation_messages FOR EACH ROW WHEN ((new.direction = 'inbound'::text)) EXECUTE FUNCTION app_private.tg_conversation_messages__webhooks();

--
-- Name: enrollments _900_webhooks; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks AFTER UPDATE OF status ON app_public.enrollments FOR EACH ROW WHEN (((new.status = 'completed'::text) AND (old.status IS DISTINCT FROM 'completed'::text))) EXECUTE FUNCTION app_private.tg_enrollments__webhooks();

--
-- Name: form_submissions _900_webhooks; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks AFTER INSERT ON app_public.form_submissions FOR EACH ROW WHEN ((new.status = 'accepted'::text)) EXECUTE FUNCTION app_private.tg_form_submissions__webhooks();

--
-- Name: appointments _900_webhooks_booked; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks_booked AFTER INSERT ON app_public.appointments FOR EACH ROW WHEN (((new.kind = 'appointment'::text) AND (new.status = 'booked'::text))) EXECUTE FUNCTION app_private.tg_appointments__webhooks();

--
-- Name: appointments _900_webhooks_cancelled; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks_cancelled AFTER UPDATE OF status ON app_public.appointments FOR EACH ROW WHEN (((new.kind = 'appointment'::text) AND (new.status = 'cancelled'::text) AND (old.status IS DISTINCT FROM 'cancelled'::text))) EXECUTE FUNCTION app_private.tg_appointments__webhooks();

--
-- Name: contacts _900_webhooks_created; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks_created AFTER INSERT ON app_public.contacts FOR EACH ROW EXECUTE FUNCTION app_private.tg_contacts__webhooks_created();

--
-- Name: contacts _900_webhooks_updated; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks_updated AFTER UPDATE OF name, email, phone, stage_id, field_values, sms_consent ON app_public.contacts FOR EACH ROW WHEN (((old.name IS DISTINCT FROM new.name) OR (old.email IS DISTINCT FROM new.email) OR (old.phone IS DISTINCT FROM new.phone) OR (old.stage_id IS DISTINCT FROM new.stage_id) OR (old.field_values IS DISTINCT FROM new.field_values) OR (old.sms_consent IS DISTINCT FROM new.sms_consent))) EXECUTE FUNCTION app_private.tg_contacts__webhooks_updated();

--
-- Name: people _930_end_dashboard_sessions; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _930_end_dashboard_sessions AFTER UPDATE OF active ON app_public.people FOR EACH ROW WHEN ((old.active AND (NOT new.active))) EXECUTE FUNCTION app_private.tg_people__end_dashboard_sessions();

--
-- Name: people oauth_revoke_on_deactivation; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER oauth_revoke_on_deactivation AFTER UPDATE OF active ON app_public.people FOR EACH ROW WHEN ((old.active AND (NOT new.active))) EXECUTE FUNCTION app_hidden.oauth_revoke_on_deactivation();

--
-- Name: analysts analysts_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.analysts
    ADD CONSTRAINT analysts_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: api_key_locations api_key_locations_organization_id_api_key_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_key_locations
    ADD CONSTRAINT api_key_locations_organization_id_api_key_id_fkey FOREIGN KEY (organization_id, api_key_id) REFERENCES app_private.api_keys(organization_id, id) ON DELETE CASCADE;

--
-- Name: api_key_locations api_key_locations_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_key_locations
    ADD CONSTRAINT api_key_locations_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_organization_id_created_by_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_keys
    ADD CONSTRAINT api_keys_organization_id_created_by_fkey FOREIGN KEY (organization_id, created_by) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.api_keys
    ADD CONSTRAINT api_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: chat_sessions chat_sessions_organization_id_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.chat_sessions
    ADD CONSTRAINT chat_sessions_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app_public.conversations(organization_id, id) ON DELETE CASCADE;

--
-- Name: chat_sessions chat_sessions_organization_id_widget_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.chat_sessions
    ADD CONSTRAINT chat_sessions_organization_id_widget_id_fkey FOREIGN KEY (organization_id, widget_id) REFERENCES app_public.chat_widgets(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_events contact_events_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.contact_events
    ADD CONSTRAINT contact_events_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_events contact_events_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.contact_events
    ADD CONSTRAINT contact_events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: dashboard_links dashboard_links_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_links
    ADD CONSTRAINT dashboard_links_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: dashboard_sessions dashboard_sessions_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: delivery_events delivery_events_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_events
    ADD CONSTRAINT delivery_events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: delivery_events delivery_events_organization_id_message_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_events
    ADD CONSTRAINT delivery_events_organization_id_message_id_fkey FOREIGN KEY (organization_id, message_id) REFERENCES app_private.outgoing_messages(organization_id, id) ON DELETE CASCADE;

--
-- Name: enrollment_counts enrollment_counts_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.enrollment_counts
    ADD CONSTRAINT enrollment_counts_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: event_subscriptions event_subscriptions_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.event_subscriptions
    ADD CONSTRAINT event_subscriptions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: form_secrets form_secrets_organization_id_form_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.form_secrets
    ADD CONSTRAINT form_secrets_organization_id_form_id_fkey FOREIGN KEY (organization_id, form_id) REFERENCES app_public.forms(organization_id, id) ON DELETE CASCADE;

--
-- Name: idempotency_keys idempotency_keys_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: oauth_codes oauth_codes_grant_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_codes
    ADD CONSTRAINT oauth_codes_grant_id_fkey FOREIGN KEY (grant_id) REFERENCES app_private.oauth_grants(id) ON DELETE CASCADE;

--
-- Name: oauth_grants oauth_grants_client_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_grants
    ADD CONSTRAINT oauth_grants_client_id_fkey FOREIGN KEY (client_id) REFERENCES app_private.oauth_clients(client_id) ON DELETE CASCADE;

--
-- Name: oauth_grants oauth_grants_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_grants
    ADD CONSTRAINT oauth_grants_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: oauth_requests oauth_requests_client_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_requests
    ADD CONSTRAINT oauth_requests_client_id_fkey FOREIGN KEY (client_id) REFERENCES app_private.oauth_clients(client_id) ON DELETE CASCADE;

--
-- Name: oauth_requests oauth_requests_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_requests
    ADD CONSTRAINT oauth_requests_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: oauth_tokens oauth_tokens_grant_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.oauth_tokens
    ADD CONSTRAINT oauth_tokens_grant_id_fkey FOREIGN KEY (grant_id) REFERENCES app_private.oauth_grants(id) ON DELETE CASCADE;

--
-- Name: outbox outbox_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.outbox
    ADD CONSTRAINT outbox_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: outgoing_messages outgoing_messages_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.outgoing_messages
    ADD CONSTRAINT outgoing_messages_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: own_clients own_clients_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.own_clients
    ADD CONSTRAINT own_clients_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: own_clients own_clients_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.own_clients
    ADD CONSTRAINT own_clients_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: unsubscribe_tokens unsubscribe_tokens_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.unsubscribe_tokens
    ADD CONSTRAINT unsubscribe_tokens_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: webhook_secrets webhook_secrets_organization_id_subscription_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.webhook_secrets
    ADD CONSTRAINT webhook_secrets_organization_id_subscription_id_fkey FOREIGN KEY (organization_id, subscription_id) REFERENCES app_public.webhook_subscriptions(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointment_occurrences appointment_occurrences_organization_id_appointment_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointment_occurrences
    ADD CONSTRAINT appointment_occurrences_organization_id_appointment_id_fkey FOREIGN KEY (organization_id, appointment_id) REFERENCES app_public.appointments(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_calendar_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_calendar_id_fkey FOREIGN KEY (organization_id, calendar_id) REFERENCES app_public.calendars(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_created_by_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_created_by_fkey FOREIGN KEY (organization_id, created_by) REFERENCES app_public.people(organization_id, id) ON DELETE SET NULL (created_by);

--
-- Name: appointments appointments_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_offering_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_offering_id_fkey FOREIGN KEY (organization_id, offering_id) REFERENCES app_public.offerings(organization_id, id) ON DELETE SET NULL (offering_id);

--
-- Name: appointments appointments_organization_id_staff_profile_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_staff_profile_id_fkey FOREIGN KEY (organization_id, staff_profile_id) REFERENCES app_public.staff_profiles(organization_id, id) ON DELETE CASCADE;

--
-- Name: audience_members audience_members_organization_id_audience_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.audience_members
    ADD CONSTRAINT audience_members_organization_id_audience_id_fkey FOREIGN KEY (organization_id, audience_id) REFERENCES app_public.audiences(organization_id, id) ON DELETE CASCADE;

--
-- Name: audience_members audience_members_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.audience_members
    ADD CONSTRAINT audience_members_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: audiences audiences_organization_id_created_by_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.audiences
    ADD CONSTRAINT audiences_organization_id_created_by_fkey FOREIGN KEY (organization_id, created_by) REFERENCES app_public.people(organization_id, id);

--
-- Name: audiences audiences_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.audiences
    ADD CONSTRAINT audiences_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

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
-- Name: calendars calendars_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calendars
    ADD CONSTRAINT calendars_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: calendars calendars_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calendars
    ADD CONSTRAINT calendars_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: call_transcript_lines call_transcript_lines_organization_id_call_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.call_transcript_lines
    ADD CONSTRAINT call_transcript_lines_organization_id_call_id_fkey FOREIGN KEY (organization_id, call_id) REFERENCES app_public.calls(organization_id, id) ON DELETE CASCADE;

--
-- Name: calls calls_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: calls calls_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: calls calls_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE SET NULL (location_id);

--
-- Name: calls calls_organization_id_staff_profile_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calls
    ADD CONSTRAINT calls_organization_id_staff_profile_id_fkey FOREIGN KEY (organization_id, staff_profile_id) REFERENCES app_public.staff_profiles(organization_id, id) ON DELETE SET NULL (staff_profile_id);

--
-- Name: chat_widgets chat_widgets_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.chat_widgets
    ADD CONSTRAINT chat_widgets_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: chat_widgets chat_widgets_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.chat_widgets
    ADD CONSTRAINT chat_widgets_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_locations contact_locations_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_locations
    ADD CONSTRAINT contact_locations_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_locations contact_locations_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_locations
    ADD CONSTRAINT contact_locations_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_notes contact_notes_organization_id_author_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_notes
    ADD CONSTRAINT contact_notes_organization_id_author_id_fkey FOREIGN KEY (organization_id, author_id) REFERENCES app_public.people(organization_id, id);

--
-- Name: contact_notes contact_notes_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_notes
    ADD CONSTRAINT contact_notes_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_notes contact_notes_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_notes
    ADD CONSTRAINT contact_notes_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id);

--
-- Name: contact_tags contact_tags_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_tags
    ADD CONSTRAINT contact_tags_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_tags contact_tags_organization_id_tag_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contact_tags
    ADD CONSTRAINT contact_tags_organization_id_tag_id_fkey FOREIGN KEY (organization_id, tag_id) REFERENCES app_public.tags(organization_id, id) ON DELETE CASCADE;

--
-- Name: contacts contacts_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contacts
    ADD CONSTRAINT contacts_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: contacts contacts_organization_id_stage_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.contacts
    ADD CONSTRAINT contacts_organization_id_stage_id_fkey FOREIGN KEY (organization_id, stage_id) REFERENCES app_public.pipeline_stages(organization_id, id);

--
-- Name: conversation_messages conversation_messages_organization_id_author_person_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversation_messages
    ADD CONSTRAINT conversation_messages_organization_id_author_person_id_fkey FOREIGN KEY (organization_id, author_person_id) REFERENCES app_public.people(organization_id, id);

--
-- Name: conversation_messages conversation_messages_organization_id_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversation_messages
    ADD CONSTRAINT conversation_messages_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app_public.conversations(organization_id, id) ON DELETE CASCADE;

--
-- Name: conversations conversations_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversations
    ADD CONSTRAINT conversations_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: conversations conversations_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversations
    ADD CONSTRAINT conversations_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: conversations conversations_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.conversations
    ADD CONSTRAINT conversations_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id);

--
-- Name: custom_fields custom_fields_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.custom_fields
    ADD CONSTRAINT custom_fields_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: email_suppressions email_suppressions_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.email_suppressions
    ADD CONSTRAINT email_suppressions_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id);

--
-- Name: email_suppressions email_suppressions_organization_id_created_by_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.email_suppressions
    ADD CONSTRAINT email_suppressions_organization_id_created_by_fkey FOREIGN KEY (organization_id, created_by) REFERENCES app_public.people(organization_id, id);

--
-- Name: email_suppressions email_suppressions_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.email_suppressions
    ADD CONSTRAINT email_suppressions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

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
-- Name: enrollments enrollments_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.enrollments
    ADD CONSTRAINT enrollments_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: enrollments enrollments_organization_id_sequence_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.enrollments
    ADD CONSTRAINT enrollments_organization_id_sequence_id_fkey FOREIGN KEY (organization_id, sequence_id) REFERENCES app_public.sequences(organization_id, id) ON DELETE CASCADE;

--
-- Name: form_fields form_fields_organization_id_form_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.form_fields
    ADD CONSTRAINT form_fields_organization_id_form_id_fkey FOREIGN KEY (organization_id, form_id) REFERENCES app_public.forms(organization_id, id) ON DELETE CASCADE;

--
-- Name: form_submissions form_submissions_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.form_submissions
    ADD CONSTRAINT form_submissions_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE SET NULL (contact_id);

--
-- Name: form_submissions form_submissions_organization_id_form_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.form_submissions
    ADD CONSTRAINT form_submissions_organization_id_form_id_fkey FOREIGN KEY (organization_id, form_id) REFERENCES app_public.forms(organization_id, id) ON DELETE CASCADE;

--
-- Name: forms forms_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.forms
    ADD CONSTRAINT forms_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: forms forms_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.forms
    ADD CONSTRAINT forms_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: interactions interactions_appointment_fk; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.interactions
    ADD CONSTRAINT interactions_appointment_fk FOREIGN KEY (organization_id, appointment_id) REFERENCES app_public.appointments(organization_id, id) ON DELETE SET NULL (appointment_id);

--
-- Name: interactions interactions_conversation_fk; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.interactions
    ADD CONSTRAINT interactions_conversation_fk FOREIGN KEY (organization_id, conversation_id) REFERENCES app_public.conversations(organization_id, id) ON DELETE SET NULL (conversation_id);

--
-- Name: interactions interactions_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.interactions
    ADD CONSTRAINT interactions_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id);

--
-- Name: interactions interactions_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.interactions
    ADD CONSTRAINT interactions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: interactions interactions_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.interactions
    ADD CONSTRAINT interactions_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id);

--
-- Name: locations locations_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.locations
    ADD CONSTRAINT locations_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: offering_team_members offering_team_members_organization_id_offering_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offering_team_members
    ADD CONSTRAINT offering_team_members_organization_id_offering_id_fkey FOREIGN KEY (organization_id, offering_id) REFERENCES app_public.offerings(organization_id, id) ON DELETE CASCADE;

--
-- Name: offering_team_members offering_team_members_organization_id_staff_profile_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offering_team_members
    ADD CONSTRAINT offering_team_members_organization_id_staff_profile_id_fkey FOREIGN KEY (organization_id, staff_profile_id) REFERENCES app_public.staff_profiles(organization_id, id) ON DELETE CASCADE;

--
-- Name: offerings offerings_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offerings
    ADD CONSTRAINT offerings_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: offerings offerings_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offerings
    ADD CONSTRAINT offerings_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: people people_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.people
    ADD CONSTRAINT people_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: person_locations person_locations_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.person_locations
    ADD CONSTRAINT person_locations_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: person_locations person_locations_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.person_locations
    ADD CONSTRAINT person_locations_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: pipeline_stages pipeline_stages_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.pipeline_stages
    ADD CONSTRAINT pipeline_stages_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: role_agent_access role_agent_access_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.role_agent_access
    ADD CONSTRAINT role_agent_access_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

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
-- Name: sms_opt_outs sms_opt_outs_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sms_opt_outs
    ADD CONSTRAINT sms_opt_outs_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id);

--
-- Name: sms_opt_outs sms_opt_outs_organization_id_created_by_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sms_opt_outs
    ADD CONSTRAINT sms_opt_outs_organization_id_created_by_fkey FOREIGN KEY (organization_id, created_by) REFERENCES app_public.people(organization_id, id);

--
-- Name: sms_opt_outs sms_opt_outs_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sms_opt_outs
    ADD CONSTRAINT sms_opt_outs_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: staff_profiles staff_profiles_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.staff_profiles
    ADD CONSTRAINT staff_profiles_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: step_runs step_runs_organization_id_enrollment_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.step_runs
    ADD CONSTRAINT step_runs_organization_id_enrollment_id_fkey FOREIGN KEY (organization_id, enrollment_id) REFERENCES app_public.enrollments(organization_id, id) ON DELETE CASCADE;

--
-- Name: tags tags_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.tags
    ADD CONSTRAINT tags_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: territories territories_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territories
    ADD CONSTRAINT territories_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: territories territories_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territories
    ADD CONSTRAINT territories_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: territory_team_members territory_team_members_organization_id_staff_profile_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territory_team_members
    ADD CONSTRAINT territory_team_members_organization_id_staff_profile_id_fkey FOREIGN KEY (organization_id, staff_profile_id) REFERENCES app_public.staff_profiles(organization_id, id) ON DELETE CASCADE;

--
-- Name: territory_team_members territory_team_members_organization_id_territory_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territory_team_members
    ADD CONSTRAINT territory_team_members_organization_id_territory_id_fkey FOREIGN KEY (organization_id, territory_id) REFERENCES app_public.territories(organization_id, id) ON DELETE CASCADE;

--
-- Name: webhook_deliveries webhook_deliveries_organization_id_subscription_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_organization_id_subscription_id_fkey FOREIGN KEY (organization_id, subscription_id) REFERENCES app_public.webhook_subscriptions(organization_id, id) ON DELETE CASCADE;

--
-- Name: webhook_subscriptions webhook_subscriptions_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.webhook_subscriptions
    ADD CONSTRAINT webhook_subscriptions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: analysts; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.analysts ENABLE ROW LEVEL SECURITY;

--
-- Name: api_key_locations; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.api_key_locations ENABLE ROW LEVEL SECURITY;

--
-- Name: api_keys; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.api_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: chat_sessions; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.chat_sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_events; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.contact_events ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_fields; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.contact_fields ENABLE ROW LEVEL SECURITY;

--
-- Name: dashboard_links; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.dashboard_links ENABLE ROW LEVEL SECURITY;

--
-- Name: dashboard_sessions; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.dashboard_sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: delivery_events; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.delivery_events ENABLE ROW LEVEL SECURITY;

--
-- Name: enrollment_counts; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.enrollment_counts ENABLE ROW LEVEL SECURITY;

--
-- Name: event_subscriptions; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.event_subscriptions ENABLE ROW LEVEL SECURITY;

--
-- Name: form_secrets; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.form_secrets ENABLE ROW LEVEL SECURITY;

--
-- Name: idempotency_keys; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.idempotency_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_clients; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_clients ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_codes; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_codes ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_grants; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_grants ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_requests; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_requests ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_tokens; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.oauth_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: outbox; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.outbox ENABLE ROW LEVEL SECURITY;

--
-- Name: outgoing_messages; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.outgoing_messages ENABLE ROW LEVEL SECURITY;

--
-- Name: own_clients; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.own_clients ENABLE ROW LEVEL SECURITY;

--
-- Name: rate_limit_windows; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.rate_limit_windows ENABLE ROW LEVEL SECURITY;

--
-- Name: search_trigrams; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.search_trigrams ENABLE ROW LEVEL SECURITY;

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
-- Name: webhook_secrets; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.webhook_secrets ENABLE ROW LEVEL SECURITY;

--
-- Name: appointment_occurrences; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.appointment_occurrences ENABLE ROW LEVEL SECURITY;

--
-- Name: appointments; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.appointments ENABLE ROW LEVEL SECURITY;

--
-- Name: audience_members; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.audience_members ENABLE ROW LEVEL SECURITY;

--
-- Name: audiences; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.audiences ENABLE ROW LEVEL SECURITY;

--
-- Name: broadcast_runs; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.broadcast_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: broadcast_schedules; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.broadcast_schedules ENABLE ROW LEVEL SECURITY;

--
-- Name: calendars; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.calendars ENABLE ROW LEVEL SECURITY;

--
-- Name: call_transcript_lines; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.call_transcript_lines ENABLE ROW LEVEL SECURITY;

--
-- Name: calls; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.calls ENABLE ROW LEVEL SECURITY;

--
-- Name: chat_widgets; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.chat_widgets ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_locations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.contact_locations ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_notes; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.contact_notes ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_tags; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.contact_tags ENABLE ROW LEVEL SECURITY;

--
-- Name: contacts; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.contacts ENABLE ROW LEVEL SECURITY;

--
-- Name: conversation_messages; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.conversation_messages ENABLE ROW LEVEL SECURITY;

--
-- Name: conversations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.conversations ENABLE ROW LEVEL SECURITY;

--
-- Name: custom_fields; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.custom_fields ENABLE ROW LEVEL SECURITY;

--
-- Name: audience_members delete_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY delete_own_org ON app_public.audience_members FOR DELETE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden."current_role"() AS "current_role") = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text]))));

--
-- Name: contact_tags delete_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY delete_with_contact ON app_public.contact_tags FOR DELETE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = contact_tags.organization_id) AND (c.id = contact_tags.contact_id))))));

--
-- Name: email_suppressions; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.email_suppressions ENABLE ROW LEVEL SECURITY;

--
-- Name: enrollment_events; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.enrollment_events ENABLE ROW LEVEL SECURITY;

--
-- Name: enrollments; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.enrollments ENABLE ROW LEVEL SECURITY;

--
-- Name: form_fields; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.form_fields ENABLE ROW LEVEL SECURITY;

--
-- Name: form_submissions; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.form_submissions ENABLE ROW LEVEL SECURITY;

--
-- Name: forms; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.forms ENABLE ROW LEVEL SECURITY;

--
-- Name: appointments insert_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_in_reach ON app_public.appointments FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: contact_locations insert_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_in_reach ON app_public.contact_locations FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: contacts insert_keyed_by_email; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_keyed_by_email ON app_public.contacts FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (email IS NOT NULL)));

--
-- Name: audiences insert_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_own_org ON app_public.audiences FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden."current_role"() AS "current_role") = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text]))));

--
-- Name: tags insert_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_own_org ON app_public.tags FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power)));

--
-- Name: contact_notes insert_shared_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_shared_with_contact ON app_public.contact_notes FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (source = 'user'::text) AND (location_id IS NULL) AND (NOT (author_id IS DISTINCT FROM ( SELECT app_hidden.current_user_id() AS current_user_id))) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = contact_notes.organization_id) AND (c.id = contact_notes.contact_id))))));

--
-- Name: audience_members insert_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_with_contact ON app_public.audience_members FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden."current_role"() AS "current_role") = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text])) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = audience_members.organization_id) AND (c.id = audience_members.contact_id))))));

--
-- Name: contact_tags insert_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_with_contact ON app_public.contact_tags FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = contact_tags.organization_id) AND (c.id = contact_tags.contact_id))))));

--
-- Name: email_suppressions insert_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_with_contact ON app_public.email_suppressions FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (NOT (created_by IS DISTINCT FROM ( SELECT app_hidden.current_user_id() AS current_user_id))) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = email_suppressions.organization_id) AND (c.id = email_suppressions.contact_id) AND (c.email_key = email_suppressions.email))))));

--
-- Name: sms_opt_outs insert_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_with_contact ON app_public.sms_opt_outs FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (NOT (created_by IS DISTINCT FROM ( SELECT app_hidden.current_user_id() AS current_user_id))) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = sms_opt_outs.organization_id) AND (c.id = sms_opt_outs.contact_id) AND (c.phone = sms_opt_outs.phone))))));

--
-- Name: enrollments insert_with_sequence; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_with_sequence ON app_public.enrollments FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.sequences s
  WHERE ((s.organization_id = enrollments.organization_id) AND (s.id = enrollments.sequence_id) AND app_hidden.current_may_write_sequence(s.location_id))))));

--
-- Name: broadcast_schedules insert_writable; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_writable ON app_public.broadcast_schedules FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.broadcast_writable(organization_id, sequence_id)));

--
-- Name: sequences insert_writable; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_writable ON app_public.sequences FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.current_may_write_sequence(location_id)));

--
-- Name: interactions; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.interactions ENABLE ROW LEVEL SECURITY;

--
-- Name: locations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.locations ENABLE ROW LEVEL SECURITY;

--
-- Name: offering_team_members; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.offering_team_members ENABLE ROW LEVEL SECURITY;

--
-- Name: offerings; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.offerings ENABLE ROW LEVEL SECURITY;

--
-- Name: organizations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.organizations ENABLE ROW LEVEL SECURITY;

--
-- Name: people; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.people ENABLE ROW LEVEL SECURITY;

--
-- Name: person_locations; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.person_locations ENABLE ROW LEVEL SECURITY;

--
-- Name: pipeline_stages; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.pipeline_stages ENABLE ROW LEVEL SECURITY;

--
-- Name: role_agent_access; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.role_agent_access ENABLE ROW LEVEL SECURITY;

--
-- Name: appointments select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.appointments FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND app_hidden.current_reads_team_member(staff_profile_id)));

--
-- Name: calendars select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.calendars FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: calls select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.calls FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND app_hidden.current_reads_calls_of(contact_id)));

--
-- Name: chat_widgets select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.chat_widgets FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ((location_id IS NULL) OR ( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: contact_locations select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.contact_locations FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: contacts select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.contacts FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (EXISTS ( SELECT 1
   FROM app_public.contact_locations cl
  WHERE ((cl.organization_id = contacts.organization_id) AND (cl.contact_id = contacts.id) AND (cl.location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))))) AND ((( SELECT app_hidden.current_records_level() AS current_records_level) = 'all'::text) OR (id = ANY (( SELECT app_hidden.current_own_client_ids() AS current_own_client_ids)::uuid[])))));

--
-- Name: conversations select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.conversations FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND ((( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) AND (( SELECT app_hidden.current_records_level() AS current_records_level) = 'all'::text)) OR (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = conversations.organization_id) AND (c.id = conversations.contact_id)))))));

--
-- Name: forms select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.forms FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ((location_id IS NULL) OR ( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: interactions select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.interactions FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = interactions.organization_id) AND (c.id = interactions.contact_id))))));

--
-- Name: locations select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.locations FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: offerings select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.offerings FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: sequences select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.sequences FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ((location_id IS NULL) OR ( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: territories select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.territories FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: webhook_deliveries select_org_admin; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_org_admin ON app_public.webhook_deliveries FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT COALESCE((app_hidden."current_role"() = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text])), false) AS "coalesce")));

--
-- Name: webhook_subscriptions select_org_admin; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_org_admin ON app_public.webhook_subscriptions FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT COALESCE((app_hidden."current_role"() = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text])), false) AS "coalesce")));

--
-- Name: organizations select_own; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own ON app_public.organizations FOR SELECT USING ((id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: audience_members select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.audience_members FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: audiences select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.audiences FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: custom_fields select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.custom_fields FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: offering_team_members select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.offering_team_members FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: people select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.people FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: person_locations select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.person_locations FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: pipeline_stages select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.pipeline_stages FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: role_agent_access select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.role_agent_access FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: send_schedules select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.send_schedules FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: staff_profiles select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.staff_profiles FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: tags select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.tags FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: territory_team_members select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.territory_team_members FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: contact_notes select_shared_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_shared_with_contact ON app_public.contact_notes FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (source <> 'location_private'::text) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = contact_notes.organization_id) AND (c.id = contact_notes.contact_id))))));

--
-- Name: email_suppressions select_with_address; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_address ON app_public.email_suppressions FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = email_suppressions.organization_id) AND (c.email_key = email_suppressions.email))))));

--
-- Name: call_transcript_lines select_with_call; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_call ON app_public.call_transcript_lines FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.calls c
  WHERE ((c.organization_id = call_transcript_lines.organization_id) AND (c.id = call_transcript_lines.call_id))))));

--
-- Name: contact_tags select_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_contact ON app_public.contact_tags FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = contact_tags.organization_id) AND (c.id = contact_tags.contact_id))))));

--
-- Name: conversation_messages select_with_conversation; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_conversation ON app_public.conversation_messages FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ((( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) AND (( SELECT app_hidden.current_records_level() AS current_records_level) = 'all'::text)) OR (EXISTS ( SELECT 1
   FROM app_public.conversations cv
  WHERE ((cv.organization_id = conversation_messages.organization_id) AND (cv.id = conversation_messages.conversation_id)))))));

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
-- Name: form_fields select_with_form; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_form ON app_public.form_fields FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.forms f
  WHERE ((f.organization_id = form_fields.organization_id) AND (f.id = form_fields.form_id))))));

--
-- Name: form_submissions select_with_form; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_form ON app_public.form_submissions FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.forms f
  WHERE ((f.organization_id = form_submissions.organization_id) AND (f.id = form_submissions.form_id))))));

--
-- Name: sms_opt_outs select_with_number; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_number ON app_public.sms_opt_outs FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = sms_opt_outs.organization_id) AND (c.phone = sms_opt_outs.phone))))));

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
-- Name: enrollments select_with_sequence; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_sequence ON app_public.enrollments FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.sequences s
  WHERE ((s.organization_id = enrollments.organization_id) AND (s.id = enrollments.sequence_id)))) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = enrollments.organization_id) AND (c.id = enrollments.contact_id))))));

--
-- Name: appointment_occurrences select_with_series; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_series ON app_public.appointment_occurrences FOR SELECT USING ((EXISTS ( SELECT 1
   FROM app_public.appointments a
  WHERE ((a.organization_id = appointment_occurrences.organization_id) AND (a.id = appointment_occurrences.appointment_id)))));

--
-- Name: send_schedules; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.send_schedules ENABLE ROW LEVEL SECURITY;

--
-- Name: sequences; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.sequences ENABLE ROW LEVEL SECURITY;

--
-- Name: sms_opt_outs; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.sms_opt_outs ENABLE ROW LEVEL SECURITY;

--
-- Name: staff_profiles; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.staff_profiles ENABLE ROW LEVEL SECURITY;

--
-- Name: step_runs; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.step_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: tags; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.tags ENABLE ROW LEVEL SECURITY;

--
-- Name: territories; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.territories ENABLE ROW LEVEL SECURITY;

--
-- Name: territory_team_members; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.territory_team_members ENABLE ROW LEVEL SECURITY;

--
-- Name: appointments update_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_in_reach ON app_public.appointments FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND app_hidden.current_reads_team_member(staff_profile_id))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: contacts update_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_in_reach ON app_public.contacts FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (EXISTS ( SELECT 1
   FROM app_public.contact_locations cl
  WHERE ((cl.organization_id = contacts.organization_id) AND (cl.contact_id = contacts.id) AND (cl.location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))))) AND ((( SELECT app_hidden.current_records_level() AS current_records_level) = 'all'::text) OR (id = ANY (( SELECT app_hidden.current_own_client_ids() AS current_own_client_ids)::uuid[]))))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: audiences update_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_own_org ON app_public.audiences FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden."current_role"() AS "current_role") = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text])))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: sms_opt_outs update_with_number; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_with_number ON app_public.sms_opt_outs FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: enrollments update_with_sequence; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_with_sequence ON app_public.enrollments FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.sequences s
  WHERE ((s.organization_id = enrollments.organization_id) AND (s.id = enrollments.sequence_id) AND app_hidden.current_may_write_sequence(s.location_id)))))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: broadcast_schedules update_writable; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_writable ON app_public.broadcast_schedules FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.broadcast_writable(organization_id, sequence_id))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: sequences update_writable; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_writable ON app_public.sequences FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.current_may_write_sequence(location_id))) WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND app_hidden.current_may_write_sequence(location_id)));

--
-- Name: webhook_deliveries; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.webhook_deliveries ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_subscriptions; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.webhook_subscriptions ENABLE ROW LEVEL SECURITY;

--
-- Name: SCHEMA app_analytics; Type: ACL; Schema: -; Owner: svc_owner
--

GRANT USAGE ON SCHEMA app_analytics TO svc_analyst;

--
-- Name: SCHEMA app_hidden; Type: ACL; Schema: -; Owner: svc_owner
--

GRANT USAGE ON SCHEMA app_hidden TO svc_request;
GRANT USAGE ON SCHEMA app_hidden TO svc_worker;
GRANT USAGE ON SCHEMA app_hidden TO svc_analyst;

--
-- Name: SCHEMA app_public; Type: ACL; Schema: -; Owner: svc_owner
--

GRANT USAGE ON SCHEMA app_public TO svc_request;
GRANT USAGE ON SCHEMA app_public TO svc_worker;
GRANT USAGE ON SCHEMA app_public TO svc_analyst;

--
-- Name: FUNCTION analyst_claim(claim text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.analyst_claim(claim text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.analyst_claim(claim text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.analyst_claim(claim text) TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.analyst_claim(claim text) TO svc_analyst;

--
-- Name: TABLE appointments; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT,INSERT,UPDATE ON TABLE app_public.appointments TO svc_request;
GRANT SELECT ON TABLE app_public.appointments TO svc_worker;
GRANT SELECT ON TABLE app_public.appointments TO svc_analyst;

--
-- Name: FUNCTION appointment_for_change(appointment_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.appointment_for_change(appointment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.appointment_for_change(appointment_id uuid) TO svc_request;

--
-- Name: FUNCTION appointment_json(a app_public.appointments, occurrence_start timestamp with time zone); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) TO svc_worker;

--
-- Name: TABLE contacts; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.contacts TO svc_request;
GRANT SELECT ON TABLE app_public.contacts TO svc_worker;
GRANT SELECT ON TABLE app_public.contacts TO svc_analyst;

--
-- Name: COLUMN contacts.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.name; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(name),UPDATE(name) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.email; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(email),UPDATE(email) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.phone; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(phone),UPDATE(phone) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.stage_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(stage_id) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.field_values; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(field_values),UPDATE(field_values) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.sms_consent; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(sms_consent) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.sms_consent_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(sms_consent_at) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.last_seen_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(last_seen_at) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.updated_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(updated_at) ON TABLE app_public.contacts TO svc_request;

--
-- Name: COLUMN contacts.sms_consent_source; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(sms_consent_source) ON TABLE app_public.contacts TO svc_request;

--
-- Name: FUNCTION audience_contacts(definition jsonb, path text, after uuid, max_rows integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.audience_contacts(definition jsonb, path text, after uuid, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audience_contacts(definition jsonb, path text, after uuid, max_rows integer) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.audience_contacts(definition jsonb, path text, after uuid, max_rows integer) TO svc_worker;

--
-- Name: FUNCTION audience_count(definition jsonb, path text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.audience_count(definition jsonb, path text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audience_count(definition jsonb, path text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.audience_count(definition jsonb, path text) TO svc_worker;

--
-- Name: FUNCTION audience_definition_check(definition jsonb, at text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.audience_definition_check(definition jsonb, at text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audience_definition_check(definition jsonb, at text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.audience_definition_check(definition jsonb, at text) TO svc_worker;

--
-- Name: FUNCTION audience_filter(definition jsonb, path text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.audience_filter(definition jsonb, path text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audience_filter(definition jsonb, path text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.audience_filter(definition jsonb, path text) TO svc_worker;

--
-- Name: TABLE audiences; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.audiences TO svc_request;
GRANT SELECT ON TABLE app_public.audiences TO svc_worker;
GRANT SELECT ON TABLE app_public.audiences TO svc_analyst;

--
-- Name: COLUMN audiences.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.name; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(name),UPDATE(name) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.description; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(description),UPDATE(description) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.kind; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(kind) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.channel; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(channel),UPDATE(channel) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.definition; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(definition),UPDATE(definition) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.exclude_opted_out; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(exclude_opted_out),UPDATE(exclude_opted_out) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.archived_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(archived_at) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.created_by; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(created_by) ON TABLE app_public.audiences TO svc_request;

--
-- Name: COLUMN audiences.updated_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(updated_at) ON TABLE app_public.audiences TO svc_request;

--
-- Name: FUNCTION audience_for(audience_id uuid, for_write boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.audience_for(audience_id uuid, for_write boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audience_for(audience_id uuid, for_write boolean) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.audience_for(audience_id uuid, for_write boolean) TO svc_worker;

--
-- Name: FUNCTION audience_json(a app_public.audiences); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.audience_json(a app_public.audiences) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audience_json(a app_public.audiences) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.audience_json(a app_public.audiences) TO svc_worker;

--
-- Name: FUNCTION audience_rule_error(at text, message text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.audience_rule_error(at text, message text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audience_rule_error(at text, message text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.audience_rule_error(at text, message text) TO svc_worker;

--
-- Name: FUNCTION authenticate(key_hash bytea, required_scope text, member_access text, manager_power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.authenticate(key_hash bytea, required_scope text, member_access text, manager_power text) TO svc_request;

--
-- Name: FUNCTION authorize_internal_graphql(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.authorize_internal_graphql() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.authorize_internal_graphql() TO svc_request;

--
-- Name: FUNCTION authorize_mcp(requirements jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.authorize_mcp(requirements jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.authorize_mcp(requirements jsonb) TO svc_request;

--
-- Name: FUNCTION booking_options(organization_id uuid, location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.booking_options(organization_id uuid, location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.booking_options(organization_id uuid, location_id uuid) TO svc_request;

--
-- Name: FUNCTION broadcast_cancel_runs(sequence_id uuid, run_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) TO svc_request;

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
-- Name: TABLE calls; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.calls TO svc_request;
GRANT SELECT ON TABLE app_public.calls TO svc_worker;
GRANT SELECT ON TABLE app_public.calls TO svc_analyst;

--
-- Name: FUNCTION call_json(c app_public.calls); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.call_json(c app_public.calls) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.call_json(c app_public.calls) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.call_json(c app_public.calls) TO svc_worker;

--
-- Name: FUNCTION cancel_enrollment(enrollment_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.cancel_enrollment(enrollment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.cancel_enrollment(enrollment_id uuid) TO svc_request;

--
-- Name: FUNCTION chat_limits(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_limits() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_limits() TO svc_request;

--
-- Name: FUNCTION chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_post(widget_id uuid, conversation_id uuid, token_hash text, body text) TO svc_request;

--
-- Name: FUNCTION chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) TO svc_request;

--
-- Name: FUNCTION chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_thread(widget_id uuid, conversation_id uuid, token_hash text, after uuid) TO svc_request;

--
-- Name: FUNCTION chat_widget(widget_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.chat_widget(widget_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.chat_widget(widget_id uuid) TO svc_request;

--
-- Name: FUNCTION check_custom_fields(field_values jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.check_custom_fields(field_values jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.check_custom_fields(field_values jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.check_custom_fields(field_values jsonb) TO svc_worker;

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
-- Name: FUNCTION contact_card(c app_public.contacts); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contact_card(c app_public.contacts) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contact_card(c app_public.contacts) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.contact_card(c app_public.contacts) TO svc_worker;

--
-- Name: FUNCTION contact_for_caller(c app_public.contacts); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contact_for_caller(c app_public.contacts) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contact_for_caller(c app_public.contacts) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.contact_for_caller(c app_public.contacts) TO svc_worker;

--
-- Name: FUNCTION contact_for_write(contact_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contact_for_write(contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contact_for_write(contact_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.contact_for_write(contact_id uuid) TO svc_worker;

--
-- Name: FUNCTION contact_json(c app_public.contacts); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contact_json(c app_public.contacts) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contact_json(c app_public.contacts) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.contact_json(c app_public.contacts) TO svc_worker;

--
-- Name: FUNCTION contact_search_text(name text, email public.citext, phone text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contact_search_text(name text, email public.citext, phone text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contact_search_text(name text, email public.citext, phone text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.contact_search_text(name text, email public.citext, phone text) TO svc_worker;

--
-- Name: FUNCTION contact_tag_names(contact_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contact_tag_names(contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contact_tag_names(contact_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.contact_tag_names(contact_id uuid) TO svc_worker;

--
-- Name: FUNCTION contacts_json(contacts app_public.contacts[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contacts_json(contacts app_public.contacts[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contacts_json(contacts app_public.contacts[]) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.contacts_json(contacts app_public.contacts[]) TO svc_worker;

--
-- Name: FUNCTION contacts_matching(pattern text, digits text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contacts_matching(pattern text, digits text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contacts_matching(pattern text, digits text) TO svc_request;

--
-- Name: FUNCTION contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb) TO svc_worker;

--
-- Name: FUNCTION contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb) TO svc_request;

--
-- Name: TABLE conversations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.conversations TO svc_request;
GRANT SELECT ON TABLE app_public.conversations TO svc_worker;
GRANT SELECT ON TABLE app_public.conversations TO svc_analyst;

--
-- Name: FUNCTION conversation_for_write(conversation_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_for_write(conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_for_write(conversation_id uuid) TO svc_request;

--
-- Name: FUNCTION conversation_json(cv app_public.conversations, c app_public.contacts); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.conversation_json(cv app_public.conversations, c app_public.contacts) TO svc_worker;

--
-- Name: TABLE conversation_messages; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.conversation_messages TO svc_request;
GRANT SELECT ON TABLE app_public.conversation_messages TO svc_worker;
GRANT SELECT ON TABLE app_public.conversation_messages TO svc_analyst;

--
-- Name: FUNCTION conversation_message_json(m app_public.conversation_messages); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.conversation_message_json(m app_public.conversation_messages) TO svc_worker;

--
-- Name: FUNCTION conversation_message_record(message_id uuid, error text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_message_record(message_id uuid, error text) TO svc_request;

--
-- Name: FUNCTION conversation_reply_send(conversation_id uuid, body text, sinks text[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_reply_send(conversation_id uuid, body text, sinks text[]) TO svc_request;

--
-- Name: FUNCTION conversation_response_mode(cv app_public.conversations); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.conversation_response_mode(cv app_public.conversations) TO svc_worker;

--
-- Name: FUNCTION conversation_set_held(conversation_id uuid, held boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_set_held(conversation_id uuid, held boolean) TO svc_request;

--
-- Name: FUNCTION conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_sms_send(contact_id uuid, body text, location_id uuid, sinks text[]) TO svc_request;

--
-- Name: FUNCTION conversation_write_reach(contact_id uuid, location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversation_write_reach(contact_id uuid, location_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.conversations_matching(pattern text, after_at timestamp with time zone, after_id uuid, n integer) TO svc_request;

--
-- Name: FUNCTION current_credential_id(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_credential_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_credential_id() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_credential_id() TO svc_worker;

--
-- Name: FUNCTION current_has_power(power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_has_power(power text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_has_power(power text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_has_power(power text) TO svc_worker;

--
-- Name: FUNCTION current_in_reach(location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_in_reach(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_in_reach(location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_in_reach(location_id uuid) TO svc_worker;

--
-- Name: FUNCTION current_key_creator_left(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_key_creator_left() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_key_creator_left() TO svc_request;

--
-- Name: FUNCTION current_location_ids(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_location_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_location_ids() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_location_ids() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_location_ids() TO svc_analyst;

--
-- Name: FUNCTION current_may_book_team_member(staff_profile_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) TO svc_worker;

--
-- Name: FUNCTION current_may_write_sequence(location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_may_write_sequence(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_may_write_sequence(location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_may_write_sequence(location_id uuid) TO svc_worker;

--
-- Name: FUNCTION current_org_id(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_org_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_org_id() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_org_id() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_org_id() TO svc_analyst;

--
-- Name: FUNCTION current_own_client_ids(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_own_client_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_own_client_ids() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_own_client_ids() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_own_client_ids() TO svc_analyst;

--
-- Name: FUNCTION current_powers(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_powers() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_powers() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_powers() TO svc_worker;

--
-- Name: FUNCTION current_reaches_all_locations(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_reaches_all_locations() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_reaches_all_locations() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_reaches_all_locations() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_reaches_all_locations() TO svc_analyst;

--
-- Name: FUNCTION current_reads_calls_of(contact_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_reads_calls_of(contact_id uuid) TO svc_analyst;

--
-- Name: FUNCTION current_reads_team_member(staff_profile_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid) TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid) TO svc_analyst;

--
-- Name: FUNCTION current_records_level(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_records_level() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_records_level() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_records_level() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_records_level() TO svc_analyst;

--
-- Name: FUNCTION "current_role"(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden."current_role"() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden."current_role"() TO svc_request;
GRANT ALL ON FUNCTION app_hidden."current_role"() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden."current_role"() TO svc_analyst;

--
-- Name: FUNCTION current_scopes(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_scopes() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_scopes() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_scopes() TO svc_worker;

--
-- Name: FUNCTION current_sees_contact_details(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_sees_contact_details() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_sees_contact_details() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_sees_contact_details() TO svc_worker;

--
-- Name: FUNCTION current_sms_enabled(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_sms_enabled() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_sms_enabled() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_sms_enabled() TO svc_worker;

--
-- Name: FUNCTION current_staff_profile_id(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_staff_profile_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_staff_profile_id() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_staff_profile_id() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_staff_profile_id() TO svc_analyst;

--
-- Name: FUNCTION current_user_id(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_user_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_user_id() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_user_id() TO svc_worker;

--
-- Name: FUNCTION custom_field_value_fits(type text, options jsonb, value jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) TO svc_worker;

--
-- Name: TABLE people; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.people TO svc_request;
GRANT SELECT ON TABLE app_public.people TO svc_worker;
GRANT SELECT ON TABLE app_public.people TO svc_analyst;

--
-- Name: FUNCTION dashboard_actor(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_actor() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_actor() TO svc_request;

--
-- Name: FUNCTION dashboard_add_webhook(url text, events text[], secret text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_add_webhook(url text, events text[], secret text) TO svc_request;

--
-- Name: FUNCTION dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_create_key(kind text, name text, key_role text, scopes text[], powers text[], location_ids uuid[], key_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_end_session(session_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_end_session(session_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_end_session(session_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea, return_to text, recipient text, subject text, body text) TO svc_request;

--
-- Name: FUNCTION dashboard_key_kinds(p app_public.people); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_key_kinds(p app_public.people) TO svc_request;

--
-- Name: FUNCTION dashboard_key_locations(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_key_locations() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_key_locations() TO svc_request;

--
-- Name: FUNCTION dashboard_keys(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_keys() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_keys() TO svc_request;

--
-- Name: FUNCTION dashboard_lifetimes(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_lifetimes() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_lifetimes() TO svc_request;

--
-- Name: FUNCTION dashboard_link_people(email text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_link_people(email text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_link_people(email text) TO svc_request;

--
-- Name: FUNCTION dashboard_locations(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_locations() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_locations() TO svc_request;

--
-- Name: FUNCTION dashboard_manager_of_team(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_manager_of_team() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_manager_of_team() TO svc_request;

--
-- Name: FUNCTION dashboard_people(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_people() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_people() TO svc_request;

--
-- Name: FUNCTION dashboard_redeem_link(token_hash bytea, session_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_remove_webhook(webhook_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_remove_webhook(webhook_id uuid) TO svc_request;

--
-- Name: FUNCTION dashboard_revoke_key(key_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_revoke_key(key_id uuid) TO svc_request;

--
-- Name: FUNCTION dashboard_role_access(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_role_access() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_role_access() TO svc_request;

--
-- Name: FUNCTION dashboard_session(session_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_session(session_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_session(session_hash bytea) TO svc_request;

--
-- Name: FUNCTION dashboard_set_role_access(for_role text, on_off boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_set_role_access(for_role text, on_off boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_set_role_access(for_role text, on_off boolean) TO svc_request;

--
-- Name: FUNCTION dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_update_organization(new_mcp_enabled boolean, new_sending_email_domain text, new_default_sms_number text) TO svc_request;

--
-- Name: FUNCTION dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_update_person(person_id uuid, new_role text, location_ids uuid[], new_powers text[], new_sms_enabled boolean, new_records_level text, new_agent_access boolean, new_active boolean) TO svc_request;

--
-- Name: FUNCTION dashboard_webhooks(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.dashboard_webhooks() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.dashboard_webhooks() TO svc_request;

--
-- Name: FUNCTION delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) TO svc_request;

--
-- Name: FUNCTION delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) TO svc_request;

--
-- Name: FUNCTION delivery_note_provider_id(message_id uuid, provider_id text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) TO svc_request;

--
-- Name: FUNCTION delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) TO svc_request;

--
-- Name: FUNCTION delivery_reply_address_known(address text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_reply_address_known(address text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_reply_address_known(address text) TO svc_request;

--
-- Name: FUNCTION eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) TO svc_worker;

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
-- Name: TABLE forms; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.forms TO svc_request;
GRANT SELECT ON TABLE app_public.forms TO svc_worker;
GRANT SELECT ON TABLE app_public.forms TO svc_analyst;

--
-- Name: FUNCTION form_for(form_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.form_for(form_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.form_for(form_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.form_for(form_id uuid) TO svc_worker;

--
-- Name: FUNCTION form_json(f app_public.forms); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.form_json(f app_public.forms) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.form_json(f app_public.forms) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.form_json(f app_public.forms) TO svc_worker;

--
-- Name: FUNCTION form_limits(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.form_limits() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.form_limits() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.form_limits() TO svc_worker;

--
-- Name: FUNCTION form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint, client_address text, spam_reason text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint, client_address text, spam_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint, client_address text, spam_reason text) TO svc_request;

--
-- Name: FUNCTION form_token(form_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.form_token(form_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.form_token(form_id uuid) TO svc_request;

--
-- Name: FUNCTION form_token_age(form_id uuid, token text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.form_token_age(form_id uuid, token text) FROM PUBLIC;

--
-- Name: FUNCTION form_token_mac(secret text, form_id uuid, issued_ms bigint); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.form_token_mac(secret text, form_id uuid, issued_ms bigint) FROM PUBLIC;

--
-- Name: TABLE locations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.locations TO svc_request;
GRANT SELECT ON TABLE app_public.locations TO svc_worker;
GRANT SELECT ON TABLE app_public.locations TO svc_analyst;

--
-- Name: FUNCTION held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid) TO svc_request;

--
-- Name: FUNCTION html_escape(value text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.html_escape(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.html_escape(value text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.html_escape(value text) TO svc_worker;

--
-- Name: FUNCTION idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamp with time zone, OUT response_status integer, OUT response_body jsonb) TO svc_request;

--
-- Name: FUNCTION idempotency_fingerprint(details text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_fingerprint(details text) FROM PUBLIC;

--
-- Name: FUNCTION idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.idempotency_record(operation_id text, key text, details text, at timestamp with time zone, status integer, body jsonb) TO svc_request;

--
-- Name: FUNCTION is_date(value text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.is_date(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.is_date(value text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.is_date(value text) TO svc_worker;

--
-- Name: FUNCTION is_time_zone(name text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.is_time_zone(name text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.is_time_zone(name text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.is_time_zone(name text) TO svc_worker;

--
-- Name: FUNCTION is_timestamptz(value text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.is_timestamptz(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.is_timestamptz(value text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.is_timestamptz(value text) TO svc_worker;

--
-- Name: FUNCTION like_anywhere(value text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.like_anywhere(value text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.like_anywhere(value text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.like_anywhere(value text) TO svc_worker;

--
-- Name: FUNCTION listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) TO svc_worker;

--
-- Name: FUNCTION listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) TO svc_worker;

--
-- Name: FUNCTION local_day(d date, tz text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.local_day(d date, tz text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.local_day(d date, tz text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.local_day(d date, tz text) TO svc_worker;

--
-- Name: FUNCTION location_booking_options(organization_id uuid, location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) TO svc_worker;

--
-- Name: FUNCTION location_json(l app_public.locations); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.location_json(l app_public.locations) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.location_json(l app_public.locations) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.location_json(l app_public.locations) TO svc_worker;

--
-- Name: FUNCTION location_team_members(organization_id uuid, location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) TO svc_worker;

--
-- Name: FUNCTION lock_booking_target(organization_id uuid, target uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) TO svc_request;

--
-- Name: FUNCTION mask_email(email text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.mask_email(email text) FROM PUBLIC;

--
-- Name: FUNCTION next_send_time(timezone text, windows jsonb, at timestamp with time zone); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.next_send_time(timezone text, windows jsonb, at timestamp with time zone) TO svc_worker;

--
-- Name: TABLE contact_notes; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.contact_notes TO svc_request;
GRANT SELECT ON TABLE app_public.contact_notes TO svc_worker;
GRANT SELECT ON TABLE app_public.contact_notes TO svc_analyst;

--
-- Name: COLUMN contact_notes.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.contact_notes TO svc_request;

--
-- Name: COLUMN contact_notes.contact_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(contact_id) ON TABLE app_public.contact_notes TO svc_request;

--
-- Name: COLUMN contact_notes.body; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(body) ON TABLE app_public.contact_notes TO svc_request;

--
-- Name: COLUMN contact_notes.source; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(source) ON TABLE app_public.contact_notes TO svc_request;

--
-- Name: COLUMN contact_notes.author_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(author_id) ON TABLE app_public.contact_notes TO svc_request;

--
-- Name: FUNCTION note_json(n app_public.contact_notes); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.note_json(n app_public.contact_notes) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.note_json(n app_public.contact_notes) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.note_json(n app_public.contact_notes) TO svc_worker;

--
-- Name: FUNCTION number_owner(number text, OUT organization_id uuid, OUT location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.number_owner(number text, OUT organization_id uuid, OUT location_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_begin(organization_id uuid, person_id uuid, client_id text, redirect_uri text, state text, code_challenge text, resource text, scopes text[]) TO svc_request;

--
-- Name: FUNCTION oauth_client(client_id text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_client(client_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_client(client_id text) TO svc_request;

--
-- Name: FUNCTION oauth_connected_apps(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_connected_apps() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_connected_apps() TO svc_request;

--
-- Name: FUNCTION oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_decide(organization_id uuid, person_id uuid, request_id uuid, approve boolean, code_hash bytea) TO svc_request;

--
-- Name: FUNCTION oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_exchange_code(code_hash bytea, client_id text, redirect_uri text, challenge text, resource text, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) TO svc_request;

--
-- Name: FUNCTION oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_issue(grant_id uuid, access_hash bytea, refresh_hash bytea, access_seconds integer, refresh_seconds integer) FROM PUBLIC;

--
-- Name: FUNCTION oauth_person(organization_id uuid, person_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_person(organization_id uuid, person_id uuid) TO svc_request;

--
-- Name: FUNCTION oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamp with time zone, what text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_presented(g app_private.oauth_grants, client_id text, used_at timestamp with time zone, what text) FROM PUBLIC;

--
-- Name: FUNCTION oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_refresh(refresh_hash bytea, client_id text, resource text, access_hash bytea, new_refresh_hash bytea, access_seconds integer, refresh_seconds integer) TO svc_request;

--
-- Name: FUNCTION oauth_refusal(error text, description text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_refusal(error text, description text) FROM PUBLIC;

--
-- Name: FUNCTION oauth_revoke_grant(grant_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_revoke_grant(grant_id uuid) TO svc_request;

--
-- Name: FUNCTION oauth_revoke_on_deactivation(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_revoke_on_deactivation() FROM PUBLIC;

--
-- Name: FUNCTION oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.oauth_save_client(client_id text, registration text, client_name text, client_uri text, redirect_uris text[], cache_seconds integer) TO svc_request;

--
-- Name: TABLE offerings; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.offerings TO svc_request;
GRANT SELECT ON TABLE app_public.offerings TO svc_worker;
GRANT SELECT ON TABLE app_public.offerings TO svc_analyst;

--
-- Name: FUNCTION offering_team_member_ids(o app_public.offerings); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) TO svc_worker;

--
-- Name: FUNCTION opening_multirange(hours jsonb, tz text, within tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) TO svc_worker;

--
-- Name: FUNCTION opening_ranges(hours jsonb, tz text, within tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) TO svc_worker;

--
-- Name: FUNCTION ops_job_counts(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.ops_job_counts() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.ops_job_counts() TO svc_worker;

--
-- Name: FUNCTION ops_message_counts(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.ops_message_counts() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.ops_message_counts() TO svc_worker;

--
-- Name: FUNCTION page_error(param text, message text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.page_error(param text, message text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.page_error(param text, message text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.page_error(param text, message text) TO svc_worker;

--
-- Name: FUNCTION page_limit(page_size integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.page_limit(page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.page_limit(page_size integer) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.page_limit(page_size integer) TO svc_worker;

--
-- Name: FUNCTION page_number(page integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.page_number(page integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.page_number(page integer) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.page_number(page integer) TO svc_worker;

--
-- Name: FUNCTION page_of(items jsonb, page integer, page_size integer); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.page_of(items jsonb, page integer, page_size integer) TO svc_worker;

--
-- Name: FUNCTION postal_code_key(code text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.postal_code_key(code text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.postal_code_key(code text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.postal_code_key(code text) TO svc_worker;

--
-- Name: FUNCTION public_form(form_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.public_form(form_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.public_form(form_id uuid) TO svc_request;

--
-- Name: FUNCTION queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) TO svc_worker;

--
-- Name: FUNCTION raise_error(status integer, code text, message text, extra jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.raise_error(status integer, code text, message text, extra jsonb) TO svc_worker;

--
-- Name: FUNCTION rate_limit_add(window_start timestamp with time zone, counts jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.rate_limit_add(window_start timestamp with time zone, counts jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.rate_limit_add(window_start timestamp with time zone, counts jsonb) TO svc_worker;

--
-- Name: FUNCTION render_template(template text, vars jsonb, html boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.render_template(template text, vars jsonb, html boolean) TO svc_worker;

--
-- Name: FUNCTION require_contact(contact_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.require_contact(contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_contact(contact_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.require_contact(contact_id uuid) TO svc_worker;

--
-- Name: FUNCTION require_location(location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.require_location(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_location(location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.require_location(location_id uuid) TO svc_worker;

--
-- Name: FUNCTION require_static(a app_public.audiences); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.require_static(a app_public.audiences) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_static(a app_public.audiences) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.require_static(a app_public.audiences) TO svc_worker;

--
-- Name: FUNCTION requirement_refusal(required_scope text, member_access text, manager_power text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text) TO svc_request;

--
-- Name: FUNCTION search_pieces(pattern text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.search_pieces(pattern text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.search_pieces(pattern text) TO svc_request;

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
-- Name: FUNCTION session_claim(claim text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.session_claim(claim text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.session_claim(claim text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.session_claim(claim text) TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.session_claim(claim text) TO svc_analyst;

--
-- Name: FUNCTION slot_taken(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.slot_taken() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.slot_taken() TO svc_request;

--
-- Name: FUNCTION step_delay(step jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.step_delay(step jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.step_delay(step jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.step_delay(step jsonb) TO svc_worker;

--
-- Name: FUNCTION team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) TO svc_worker;

--
-- Name: FUNCTION template_unknown_variables(template text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.template_unknown_variables(template text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.template_unknown_variables(template text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.template_unknown_variables(template text) TO svc_worker;

--
-- Name: FUNCTION territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) TO svc_worker;

--
-- Name: TABLE territories; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.territories TO svc_request;
GRANT SELECT ON TABLE app_public.territories TO svc_worker;
GRANT SELECT ON TABLE app_public.territories TO svc_analyst;

--
-- Name: FUNCTION territory_json(t app_public.territories); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.territory_json(t app_public.territories) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.territory_json(t app_public.territories) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.territory_json(t app_public.territories) TO svc_worker;

--
-- Name: FUNCTION territory_team_member_ids(t app_public.territories); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) TO svc_worker;

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
-- Name: FUNCTION voice_call_record(payload jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.voice_call_record(payload jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.voice_call_record(payload jsonb) TO svc_request;

--
-- Name: FUNCTION within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) TO svc_request;

--
-- Name: FUNCTION add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.add_job(identifier text, payload jsonb, job_key text, run_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.advance_enrollments(organization_id uuid, enrollment_ids uuid[], at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION appointment_booked_holds(e app_public.enrollments, exit jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[]); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size integer, base_url text, sink_channels text[]) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_finish(organization_id uuid, run_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_finish(organization_id uuid, run_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb) FROM PUBLIC;

--
-- Name: FUNCTION broadcast_requeue_stalled(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_requeue_stalled() FROM PUBLIC;

--
-- Name: FUNCTION broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) FROM PUBLIC;

--
-- Name: FUNCTION build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text) FROM PUBLIC;

--
-- Name: FUNCTION cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.cancel_channel_enrollments(organization_id uuid, contact_ids uuid[], channel text) FROM PUBLIC;

--
-- Name: FUNCTION chat_inbound(cv app_public.conversations, body text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.chat_inbound(cv app_public.conversations, body text) FROM PUBLIC;

--
-- Name: FUNCTION chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.chat_session_conversation(widget_id uuid, conversation_id uuid, token_hash text, lock boolean) FROM PUBLIC;

--
-- Name: FUNCTION check_contact_exits(organization_id uuid, contact_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.check_contact_exits(organization_id uuid, contact_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION contact_only_location(org uuid, contact_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.contact_only_location(org uuid, contact_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_ai_context(organization_id uuid, conversation_id uuid, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_ai_due(cv app_public.conversations, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_ai_due(cv app_public.conversations, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_ai_interaction(cv app_public.conversations, status text, since timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_ai_record(organization_id uuid, conversation_id uuid, message_id uuid, answer jsonb, sinks text[]) FROM PUBLIC;

--
-- Name: FUNCTION conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_append_outbound(cv app_public.conversations, author text, person uuid, body text, sender text, recipient text, subject text, headers jsonb, deliver text) FROM PUBLIC;

--
-- Name: FUNCTION conversation_hold_for_person(cv app_public.conversations); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_hold_for_person(cv app_public.conversations) FROM PUBLIC;

--
-- Name: FUNCTION conversation_locked_for_write(conversation_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_locked_for_write(conversation_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_send_answer(m app_public.conversation_messages); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_send_answer(m app_public.conversation_messages) FROM PUBLIC;

--
-- Name: FUNCTION conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_sequence_reply(org uuid, channel text, contact_address text, business_address text, replied_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION conversation_sms_refusal(c app_public.contacts, cv app_public.conversations); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversation_sms_refusal(c app_public.contacts, cv app_public.conversations) FROM PUBLIC;

--
-- Name: FUNCTION conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversations_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text) FROM PUBLIC;

--
-- Name: FUNCTION conversations_inbound_sms(to_number text, from_number text, body text, provider_id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.conversations_inbound_sms(to_number text, from_number text, body text, provider_id text) FROM PUBLIC;

--
-- Name: FUNCTION define_contacts_json(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.define_contacts_json() FROM PUBLIC;

--
-- Name: FUNCTION delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb) FROM PUBLIC;

--
-- Name: FUNCTION delivery_set_provider_id(org uuid, message_id uuid, provider_id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_set_provider_id(org uuid, message_id uuid, provider_id text) FROM PUBLIC;

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
-- Name: FUNCTION idempotency_lock_key(credential_id uuid, operation_id text, key text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text) FROM PUBLIC;

--
-- Name: FUNCTION inbound_contact(org uuid, location uuid, phone text, email text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.inbound_contact(org uuid, location uuid, phone text, email text) FROM PUBLIC;

--
-- Name: FUNCTION kick_step_sweep(organization_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.kick_step_sweep(organization_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION new_unsubscribe_token(organization_id uuid, email text, contact_id uuid, enrollment_id uuid, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.new_unsubscribe_token(organization_id uuid, email text, contact_id uuid, enrollment_id uuid, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION person_may_hold_key(p app_public.people, k app_private.api_keys); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.person_may_hold_key(p app_public.people, k app_private.api_keys) FROM PUBLIC;

--
-- Name: FUNCTION refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION refresh_search_trigrams(sample_rows integer); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.refresh_search_trigrams(sample_rows integer) FROM PUBLIC;

--
-- Name: FUNCTION schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.schedule_enrollment_steps(organization_id uuid, enrollment_ids uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION send_refusal(organization_id uuid, channel text, address text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.send_refusal(organization_id uuid, channel text, address text) FROM PUBLIC;

--
-- Name: FUNCTION sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[]); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[]) FROM PUBLIC;

--
-- Name: FUNCTION sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text, sink boolean); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text, sink boolean) FROM PUBLIC;

--
-- Name: FUNCTION sms_help_reply(org uuid, business_number text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sms_help_reply(org uuid, business_number text) FROM PUBLIC;

--
-- Name: FUNCTION sms_keyword(body text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sms_keyword(body text) FROM PUBLIC;

--
-- Name: FUNCTION sms_plain_opt_out(body text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sms_plain_opt_out(body text) FROM PUBLIC;

--
-- Name: FUNCTION sweep_enrollment_steps(organization_id uuid, until timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.sweep_enrollment_steps(organization_id uuid, until timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION tg_appointments__own_clients(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_appointments__own_clients() FROM PUBLIC;

--
-- Name: FUNCTION tg_appointments__sequences(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_appointments__sequences() FROM PUBLIC;

--
-- Name: FUNCTION tg_appointments__webhooks(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_appointments__webhooks() FROM PUBLIC;

--
-- Name: FUNCTION tg_calls__own_clients(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_calls__own_clients() FROM PUBLIC;

--
-- Name: FUNCTION tg_contact_events__sequences(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contact_events__sequences() FROM PUBLIC;

--
-- Name: FUNCTION tg_contact_fields__define(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contact_fields__define() FROM PUBLIC;

--
-- Name: FUNCTION tg_contact_notes__count(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contact_notes__count() FROM PUBLIC;

--
-- Name: FUNCTION tg_contact_tags__sequences(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contact_tags__sequences() FROM PUBLIC;

--
-- Name: FUNCTION tg_contacts__sequence_exits(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contacts__sequence_exits() FROM PUBLIC;

--
-- Name: FUNCTION tg_contacts__stage_changed_at(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contacts__stage_changed_at() FROM PUBLIC;

--
-- Name: FUNCTION tg_contacts__webhooks_created(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contacts__webhooks_created() FROM PUBLIC;

--
-- Name: FUNCTION tg_contacts__webhooks_updated(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contacts__webhooks_updated() FROM PUBLIC;

--
-- Name: FUNCTION tg_conversation_messages__webhooks(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_conversation_messages__webhooks() FROM PUBLIC;

--
-- Name: FUNCTION tg_conversations__ai_interaction_ends(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_conversations__ai_interaction_ends() FROM PUBLIC;

--
-- Name: FUNCTION tg_email_suppressions__sequences(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_email_suppressions__sequences() FROM PUBLIC;

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
-- Name: FUNCTION tg_form_submissions__webhooks(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_form_submissions__webhooks() FROM PUBLIC;

--
-- Name: FUNCTION tg_forms__secret(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_forms__secret() FROM PUBLIC;

--
-- Name: FUNCTION tg_outgoing_messages__conversation_status(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_outgoing_messages__conversation_status() FROM PUBLIC;

--
-- Name: FUNCTION tg_people__end_dashboard_sessions(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_people__end_dashboard_sessions() FROM PUBLIC;

--
-- Name: FUNCTION tg_people__revoke_keys(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_people__revoke_keys() FROM PUBLIC;

--
-- Name: FUNCTION tg_person_locations__revoke_keys(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_person_locations__revoke_keys() FROM PUBLIC;

--
-- Name: FUNCTION tg_sequences__subscriptions(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_sequences__subscriptions() FROM PUBLIC;

--
-- Name: FUNCTION tg_sequences__unsubscribe(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_sequences__unsubscribe() FROM PUBLIC;

--
-- Name: FUNCTION tg_sms_opt_outs__sequences(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_sms_opt_outs__sequences() FROM PUBLIC;

--
-- Name: FUNCTION webhook_contact_data(c app_public.contacts); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_contact_data(c app_public.contacts) FROM PUBLIC;

--
-- Name: FUNCTION webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) FROM PUBLIC;

--
-- Name: TABLE webhook_subscriptions; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.webhook_subscriptions TO svc_request;
GRANT SELECT ON TABLE app_public.webhook_subscriptions TO svc_worker;
GRANT SELECT ON TABLE app_public.webhook_subscriptions TO svc_analyst;

--
-- Name: FUNCTION webhook_subscribe(organization_id uuid, url text, events text[], secret text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text) FROM PUBLIC;

--
-- Name: FUNCTION webhook_unsubscribe(organization_id uuid, subscription_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION webhook_wanted(organization_id uuid, event text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_wanted(organization_id uuid, event text) FROM PUBLIC;

--
-- Name: FUNCTION appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer) TO svc_request;

--
-- Name: FUNCTION appointments_cancel(appointment_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_cancel(appointment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_cancel(appointment_id uuid) TO svc_request;

--
-- Name: FUNCTION appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) TO svc_request;

--
-- Name: FUNCTION appointments_get(appointment_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_get(appointment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_get(appointment_id uuid) TO svc_request;

--
-- Name: FUNCTION appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) TO svc_request;

--
-- Name: FUNCTION appointments_update(appointment_id uuid, patch jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) TO svc_request;

--
-- Name: FUNCTION audiences_add_member(audience_id uuid, contact_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_add_member(audience_id uuid, contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_add_member(audience_id uuid, contact_id uuid) TO svc_request;

--
-- Name: FUNCTION audiences_archive(audience_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_archive(audience_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_archive(audience_id uuid) TO svc_request;

--
-- Name: FUNCTION audiences_count(audience_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_count(audience_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_count(audience_id uuid) TO svc_request;

--
-- Name: FUNCTION audiences_create(name text, description text, kind text, channel text, definition jsonb, exclude_opted_out boolean); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_create(name text, description text, kind text, channel text, definition jsonb, exclude_opted_out boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_create(name text, description text, kind text, channel text, definition jsonb, exclude_opted_out boolean) TO svc_request;

--
-- Name: FUNCTION audiences_get(audience_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_get(audience_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_get(audience_id uuid) TO svc_request;

--
-- Name: FUNCTION audiences_list(); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_list() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_list() TO svc_request;

--
-- Name: FUNCTION audiences_list_members(audience_id uuid, after uuid, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_list_members(audience_id uuid, after uuid, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_list_members(audience_id uuid, after uuid, page_size integer) TO svc_request;

--
-- Name: FUNCTION audiences_preview_count(definition jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_preview_count(definition jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_preview_count(definition jsonb) TO svc_request;

--
-- Name: FUNCTION audiences_remove_member(audience_id uuid, contact_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_remove_member(audience_id uuid, contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_remove_member(audience_id uuid, contact_id uuid) TO svc_request;

--
-- Name: FUNCTION audiences_update(audience_id uuid, patch jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.audiences_update(audience_id uuid, patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.audiences_update(audience_id uuid, patch jsonb) TO svc_request;

--
-- Name: FUNCTION calendars_list(location_id uuid, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION calls_get(call_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.calls_get(call_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.calls_get(call_id uuid) TO svc_request;

--
-- Name: FUNCTION calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.calls_list(contact_id uuid, after_at timestamp with time zone, after_id uuid, lim integer) TO svc_request;

--
-- Name: FUNCTION contacts_add_note(contact_id uuid, body text); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_add_note(contact_id uuid, body text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_add_note(contact_id uuid, body text) TO svc_request;

--
-- Name: FUNCTION contacts_add_tag(contact_id uuid, tag_name public.citext); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_add_tag(contact_id uuid, tag_name public.citext) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_add_tag(contact_id uuid, tag_name public.citext) TO svc_request;

--
-- Name: FUNCTION contacts_get(contact_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_get(contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_get(contact_id uuid) TO svc_request;

--
-- Name: FUNCTION contacts_list_enrollments(contact_id uuid, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_list_enrollments(contact_id uuid, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_list_enrollments(contact_id uuid, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION contacts_list_interactions(contact_id uuid, channel text, status text, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_list_interactions(contact_id uuid, channel text, status text, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_list_interactions(contact_id uuid, channel text, status text, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION contacts_list_notes(contact_id uuid, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_list_notes(contact_id uuid, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_list_notes(contact_id uuid, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION contacts_record_sms_consent(contact_id uuid, source text, consented_at timestamp with time zone); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_record_sms_consent(contact_id uuid, source text, consented_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_record_sms_consent(contact_id uuid, source text, consented_at timestamp with time zone) TO svc_request;

--
-- Name: FUNCTION contacts_remove_tag(contact_id uuid, tag_name public.citext); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_remove_tag(contact_id uuid, tag_name public.citext) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_remove_tag(contact_id uuid, tag_name public.citext) TO svc_request;

--
-- Name: FUNCTION contacts_search(q text, email public.citext, phone text, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_search(q text, email public.citext, phone text, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_search(q text, email public.citext, phone text, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION contacts_suppress(contact_id uuid, channels text[]); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_suppress(contact_id uuid, channels text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_suppress(contact_id uuid, channels text[]) TO svc_request;

--
-- Name: FUNCTION contacts_update(contact_id uuid, patch jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_update(contact_id uuid, patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_update(contact_id uuid, patch jsonb) TO svc_request;

--
-- Name: FUNCTION contacts_upsert(email public.citext, name text, phone text, custom_fields jsonb, location_ids uuid[], events jsonb, cancel_events jsonb, fields jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.contacts_upsert(email public.citext, name text, phone text, custom_fields jsonb, location_ids uuid[], events jsonb, cancel_events jsonb, fields jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.contacts_upsert(email public.citext, name text, phone text, custom_fields jsonb, location_ids uuid[], events jsonb, cancel_events jsonb, fields jsonb) TO svc_request;

--
-- Name: FUNCTION conversations_get(conversation_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_get(conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_get(conversation_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_hold(conversation_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_hold(conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_hold(conversation_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_list(q text, page_size integer, after_at timestamp with time zone, after_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_reply(conversation_id uuid, body text, sinks text[]); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_reply(conversation_id uuid, body text, sinks text[]) TO svc_request;

--
-- Name: FUNCTION conversations_resume(conversation_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_resume(conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_resume(conversation_id uuid) TO svc_request;

--
-- Name: FUNCTION conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.conversations_send_sms(contact_id uuid, body text, location_id uuid, sinks text[]) TO svc_request;

--
-- Name: FUNCTION forms_get(form_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.forms_get(form_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.forms_get(form_id uuid) TO svc_request;

--
-- Name: FUNCTION forms_list(); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.forms_list() FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.forms_list() TO svc_request;

--
-- Name: FUNCTION forms_list_submissions(form_id uuid, page integer, page_size integer, status text, from_at timestamp with time zone, to_at timestamp with time zone, search text); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.forms_list_submissions(form_id uuid, page integer, page_size integer, status text, from_at timestamp with time zone, to_at timestamp with time zone, search text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.forms_list_submissions(form_id uuid, page integer, page_size integer, status text, from_at timestamp with time zone, to_at timestamp with time zone, search text) TO svc_request;

--
-- Name: FUNCTION locations_booking_options(location_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.locations_booking_options(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.locations_booking_options(location_id uuid) TO svc_request;

--
-- Name: FUNCTION locations_list(page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.locations_list(page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.locations_list(page integer, page_size integer) TO svc_request;

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
-- Name: FUNCTION territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) TO svc_request;

--
-- Name: TABLE appointment_occurrences; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.appointment_occurrences TO svc_request;
GRANT SELECT ON TABLE app_public.appointment_occurrences TO svc_worker;
GRANT SELECT ON TABLE app_public.appointment_occurrences TO svc_analyst;

--
-- Name: TABLE appointments_per_day; Type: ACL; Schema: app_analytics; Owner: svc_owner
--

GRANT SELECT ON TABLE app_analytics.appointments_per_day TO svc_analyst;

--
-- Name: TABLE contact_tags; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT,DELETE ON TABLE app_public.contact_tags TO svc_request;
GRANT SELECT ON TABLE app_public.contact_tags TO svc_worker;
GRANT SELECT ON TABLE app_public.contact_tags TO svc_analyst;

--
-- Name: COLUMN contact_tags.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.contact_tags TO svc_request;

--
-- Name: COLUMN contact_tags.contact_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(contact_id) ON TABLE app_public.contact_tags TO svc_request;

--
-- Name: COLUMN contact_tags.tag_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(tag_id) ON TABLE app_public.contact_tags TO svc_request;

--
-- Name: TABLE pipeline_stages; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.pipeline_stages TO svc_request;
GRANT SELECT ON TABLE app_public.pipeline_stages TO svc_worker;
GRANT SELECT ON TABLE app_public.pipeline_stages TO svc_analyst;

--
-- Name: TABLE tags; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.tags TO svc_request;
GRANT SELECT ON TABLE app_public.tags TO svc_worker;
GRANT SELECT ON TABLE app_public.tags TO svc_analyst;

--
-- Name: COLUMN tags.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.tags TO svc_request;

--
-- Name: COLUMN tags.name; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(name) ON TABLE app_public.tags TO svc_request;

--
-- Name: TABLE contacts; Type: ACL; Schema: app_analytics; Owner: svc_owner
--

GRANT SELECT ON TABLE app_analytics.contacts TO svc_analyst;

--
-- Name: TABLE enrollments; Type: ACL; Schema: app_analytics; Owner: svc_owner
--

GRANT SELECT ON TABLE app_analytics.enrollments TO svc_analyst;

--
-- Name: TABLE audience_members; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT,DELETE ON TABLE app_public.audience_members TO svc_request;
GRANT SELECT ON TABLE app_public.audience_members TO svc_worker;
GRANT SELECT ON TABLE app_public.audience_members TO svc_analyst;

--
-- Name: COLUMN audience_members.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.audience_members TO svc_request;

--
-- Name: COLUMN audience_members.audience_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(audience_id) ON TABLE app_public.audience_members TO svc_request;

--
-- Name: COLUMN audience_members.contact_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(contact_id) ON TABLE app_public.audience_members TO svc_request;

--
-- Name: TABLE calendars; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.calendars TO svc_request;
GRANT SELECT ON TABLE app_public.calendars TO svc_worker;
GRANT SELECT ON TABLE app_public.calendars TO svc_analyst;

--
-- Name: TABLE call_transcript_lines; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.call_transcript_lines TO svc_request;
GRANT SELECT ON TABLE app_public.call_transcript_lines TO svc_worker;
GRANT SELECT ON TABLE app_public.call_transcript_lines TO svc_analyst;

--
-- Name: TABLE chat_widgets; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.chat_widgets TO svc_request;
GRANT SELECT ON TABLE app_public.chat_widgets TO svc_worker;
GRANT SELECT ON TABLE app_public.chat_widgets TO svc_analyst;

--
-- Name: TABLE contact_locations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT,INSERT ON TABLE app_public.contact_locations TO svc_request;
GRANT SELECT ON TABLE app_public.contact_locations TO svc_worker;
GRANT SELECT ON TABLE app_public.contact_locations TO svc_analyst;

--
-- Name: TABLE custom_fields; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.custom_fields TO svc_request;
GRANT SELECT ON TABLE app_public.custom_fields TO svc_worker;
GRANT SELECT ON TABLE app_public.custom_fields TO svc_analyst;

--
-- Name: TABLE email_suppressions; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.email_suppressions TO svc_request;
GRANT SELECT ON TABLE app_public.email_suppressions TO svc_worker;
GRANT SELECT ON TABLE app_public.email_suppressions TO svc_analyst;

--
-- Name: COLUMN email_suppressions.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.email_suppressions TO svc_request;

--
-- Name: COLUMN email_suppressions.email; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(email) ON TABLE app_public.email_suppressions TO svc_request;

--
-- Name: COLUMN email_suppressions.contact_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(contact_id) ON TABLE app_public.email_suppressions TO svc_request;

--
-- Name: COLUMN email_suppressions.created_by; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(created_by) ON TABLE app_public.email_suppressions TO svc_request;

--
-- Name: TABLE form_fields; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.form_fields TO svc_request;
GRANT SELECT ON TABLE app_public.form_fields TO svc_worker;
GRANT SELECT ON TABLE app_public.form_fields TO svc_analyst;

--
-- Name: TABLE form_submissions; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.form_submissions TO svc_request;
GRANT SELECT ON TABLE app_public.form_submissions TO svc_worker;
GRANT SELECT ON TABLE app_public.form_submissions TO svc_analyst;

--
-- Name: TABLE interactions; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.interactions TO svc_request;
GRANT SELECT ON TABLE app_public.interactions TO svc_worker;
GRANT SELECT ON TABLE app_public.interactions TO svc_analyst;

--
-- Name: TABLE offering_team_members; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.offering_team_members TO svc_request;
GRANT SELECT ON TABLE app_public.offering_team_members TO svc_worker;
GRANT SELECT ON TABLE app_public.offering_team_members TO svc_analyst;

--
-- Name: TABLE organizations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.organizations TO svc_request;
GRANT SELECT ON TABLE app_public.organizations TO svc_worker;
GRANT SELECT ON TABLE app_public.organizations TO svc_analyst;

--
-- Name: TABLE person_locations; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.person_locations TO svc_request;
GRANT SELECT ON TABLE app_public.person_locations TO svc_worker;
GRANT SELECT ON TABLE app_public.person_locations TO svc_analyst;

--
-- Name: TABLE role_agent_access; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.role_agent_access TO svc_request;
GRANT SELECT ON TABLE app_public.role_agent_access TO svc_worker;
GRANT SELECT ON TABLE app_public.role_agent_access TO svc_analyst;

--
-- Name: TABLE sms_opt_outs; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.sms_opt_outs TO svc_request;
GRANT SELECT ON TABLE app_public.sms_opt_outs TO svc_worker;
GRANT SELECT ON TABLE app_public.sms_opt_outs TO svc_analyst;

--
-- Name: COLUMN sms_opt_outs.organization_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(organization_id) ON TABLE app_public.sms_opt_outs TO svc_request;

--
-- Name: COLUMN sms_opt_outs.phone; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(phone) ON TABLE app_public.sms_opt_outs TO svc_request;

--
-- Name: COLUMN sms_opt_outs.contact_id; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(contact_id) ON TABLE app_public.sms_opt_outs TO svc_request;

--
-- Name: COLUMN sms_opt_outs.created_by; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT INSERT(created_by) ON TABLE app_public.sms_opt_outs TO svc_request;

--
-- Name: COLUMN sms_opt_outs.ended_at; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT UPDATE(ended_at) ON TABLE app_public.sms_opt_outs TO svc_request;

--
-- Name: TABLE staff_profiles; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.staff_profiles TO svc_request;
GRANT SELECT ON TABLE app_public.staff_profiles TO svc_worker;
GRANT SELECT ON TABLE app_public.staff_profiles TO svc_analyst;

--
-- Name: TABLE step_runs; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.step_runs TO svc_request;
GRANT SELECT ON TABLE app_public.step_runs TO svc_worker;
GRANT SELECT ON TABLE app_public.step_runs TO svc_analyst;

--
-- Name: TABLE territory_team_members; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.territory_team_members TO svc_request;
GRANT SELECT ON TABLE app_public.territory_team_members TO svc_worker;
GRANT SELECT ON TABLE app_public.territory_team_members TO svc_analyst;

--
-- Name: TABLE webhook_deliveries; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.webhook_deliveries TO svc_request;
GRANT SELECT ON TABLE app_public.webhook_deliveries TO svc_worker;
GRANT SELECT ON TABLE app_public.webhook_deliveries TO svc_analyst;

--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: -; Owner: svc_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE svc_owner REVOKE ALL ON FUNCTIONS  FROM PUBLIC;

--
-- Our grants on graphile_worker and our policies on its tables (000012): svc_owner adds jobs
-- through graphile_worker.add_job and add_jobs; PUBLIC executes none of its functions.
--

--
-- Name: _private_job_queues svc_owner_adds_jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY svc_owner_adds_jobs ON graphile_worker._private_job_queues TO svc_owner USING (true) WITH CHECK (true);

--
-- Name: _private_jobs svc_owner_adds_jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY svc_owner_adds_jobs ON graphile_worker._private_jobs TO svc_owner USING (true) WITH CHECK (true);

--
-- Name: _private_tasks svc_owner_adds_jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY svc_owner_adds_jobs ON graphile_worker._private_tasks TO svc_owner USING (true) WITH CHECK (true);

--
-- Name: SCHEMA graphile_worker; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA graphile_worker TO svc_owner;

--
-- Name: TABLE _private_jobs; Type: ACL; Schema: graphile_worker; Owner: -
--

GRANT SELECT,INSERT,UPDATE ON TABLE graphile_worker._private_jobs TO svc_owner;

--
-- Name: FUNCTION add_job(identifier text, payload json, queue_name text, run_at timestamp with time zone, max_attempts integer, job_key text, priority integer, flags text[], job_key_mode text); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.add_job(identifier text, payload json, queue_name text, run_at timestamp with time zone, max_attempts integer, job_key text, priority integer, flags text[], job_key_mode text) FROM PUBLIC;
GRANT ALL ON FUNCTION graphile_worker.add_job(identifier text, payload json, queue_name text, run_at timestamp with time zone, max_attempts integer, job_key text, priority integer, flags text[], job_key_mode text) TO svc_owner;

--
-- Name: FUNCTION add_jobs(specs graphile_worker.job_spec[], job_key_preserve_run_at boolean); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.add_jobs(specs graphile_worker.job_spec[], job_key_preserve_run_at boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION graphile_worker.add_jobs(specs graphile_worker.job_spec[], job_key_preserve_run_at boolean) TO svc_owner;

--
-- Name: FUNCTION complete_jobs(job_ids bigint[]); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.complete_jobs(job_ids bigint[]) FROM PUBLIC;

--
-- Name: FUNCTION force_unlock_workers(worker_ids text[]); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.force_unlock_workers(worker_ids text[]) FROM PUBLIC;

--
-- Name: FUNCTION permanently_fail_jobs(job_ids bigint[], error_message text); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.permanently_fail_jobs(job_ids bigint[], error_message text) FROM PUBLIC;

--
-- Name: FUNCTION remove_job(job_key text); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.remove_job(job_key text) FROM PUBLIC;

--
-- Name: FUNCTION reschedule_jobs(job_ids bigint[], run_at timestamp with time zone, priority integer, attempts integer, max_attempts integer); Type: ACL; Schema: graphile_worker; Owner: -
--

REVOKE ALL ON FUNCTION graphile_worker.reschedule_jobs(job_ids bigint[], run_at timestamp with time zone, priority integer, attempts integer, max_attempts integer) FROM PUBLIC;

--
-- Name: TABLE _private_job_queues; Type: ACL; Schema: graphile_worker; Owner: -
--

GRANT SELECT,INSERT ON TABLE graphile_worker._private_job_queues TO svc_owner;

--
-- Name: TABLE _private_tasks; Type: ACL; Schema: graphile_worker; Owner: -
--

GRANT SELECT,INSERT ON TABLE graphile_worker._private_tasks TO svc_owner;
