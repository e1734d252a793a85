-- db/schema/contacts.sql: what src/contacts/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

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
-- Name: contact_total(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.contact_total() RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not (app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all') then
    return null;
  end if;
  return (select coalesce(sum(c.n), 0) from app_private.contact_counts c where c.organization_id = app_hidden.current_org_id());
end $$;

ALTER FUNCTION app_hidden.contact_total() OWNER TO svc_owner;

--
-- Name: FUNCTION contact_total(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contact_total() IS 'How many contacts the current organization has, from app_private.contact_counts; NULL unless the credential reaches every contact of the organization (then the caller counts under its policies).';

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
    SET plan_cache_mode TO 'auto'
    AS $$
declare
  p text[];
  org uuid := app_hidden.current_org_id();
  everyone real;
  own bigint;
begin
  if digits is null then
    -- the organization's own rows, when there are fewer of them than the index's candidates
    -- (the statistics' row count of the table; unknown before its first ANALYZE: the index)
    select c.reltuples into everyone from pg_class c where c.oid = 'app_public.contacts'::regclass;
    if everyone > 0 then
      select coalesce(sum(x.n), 0) into own from app_private.contact_counts x where x.organization_id = org;
      if own < everyone * app_hidden.search_rarest_share(pattern) then
        return query
          select c.id, c.name, c.last_seen_at from app_public.contacts c
           where c.organization_id = org
             and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern);
        return;
      end if;
    end if;
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
  live uuid[];
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
    else
      -- nothing listens to the event now (the sequence it entered is paused, or its trigger
      -- changed since), yet the enrollments that entered by it are still live: cancelled all
      -- the same, or a paused one would send again on resume
      live := array(select e.id from app_public.enrollments e
                     where e.organization_id = org and e.contact_id = contacts_process_events.contact_id
                       and e.entry_event = cancelled and e.status in ('active', 'paused'));
      if cardinality(live) > 0 then
        perform app_private.end_enrollments(org, live, 'cancelled', 'cancel_event:' || cancelled);
      end if;
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

COMMENT ON FUNCTION app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb) IS 'Processes the cancel_events, then the events, of a contacts_upsert against app_private.event_subscriptions, recording what some subscription takes in app_private.contact_events (a cancel no subscription listens to still cancels the live enrollments that entered by it); answers receipts to merge into its response (assessmentAbandonment: accepted, no_subscriber, legacy_unverified).';

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

  for attempt in 1..2 loop
    begin
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
    exception when unique_violation then
      -- Two upserts of one new person at once: ON CONFLICT resolves only the email, so the phone's
      -- unique index can refuse the second once the first commits. Once more, the email finds that
      -- contact and updates it; the phone on a contact of another email is the 409 above.
      if attempt = 2 or (contacts_upsert_row.phone is not null and exists (
          select 1 from app_public.contacts x
           where x.organization_id = org and x.phone = contacts_upsert_row.phone
             and x.email_key is distinct from lower(contacts_upsert_row.email::text))) then
        perform app_hidden.raise_error(409, 'conflict', 'Another contact already uses this phone number');
      end if;
    end;
  end loop;
  return c;
end $$;

ALTER FUNCTION app_hidden.contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.contacts_upsert_row(email public.citext, name text, phone text, custom_fields jsonb) IS 'The contact row of contacts_upsert, written as the owner for a caller that reaches the whole organization (403 otherwise); 409 on another contact''s phone.';

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
-- Name: mask_email(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.mask_email(email text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  select left(split_part(email, '@', 1), 1) || '…@' || split_part(email, '@', 2)
$$;

ALTER FUNCTION app_hidden.mask_email(email text) OWNER TO svc_owner;

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
-- Name: search_rarest_share(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.search_rarest_share(pattern text) RETURNS real
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return (select coalesce(min(coalesce((select t.share from app_private.search_trigrams t
                                          where t.trigram = substr(w.run[1], i, 3)), 0.00001)), 1)
            from regexp_matches(lower(pattern), '[a-z0-9]+', 'g') w(run)
           cross join lateral generate_series(1, length(w.run[1]) - 2) i);
end $$;

ALTER FUNCTION app_hidden.search_rarest_share(pattern text) OWNER TO svc_owner;

--
-- Name: FUNCTION search_rarest_share(pattern text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.search_rarest_share(pattern text) IS 'The share of all contacts carrying the rarest three-character piece of q (app_private.search_trigrams), 1 when q has none: what the trigram index would hand over.';

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
-- Name: contact_sms_sender(uuid, uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.contact_sms_sender(org uuid, contact uuid, preferred_location uuid) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select coalesce(
    (select l.sms_number from app_public.contact_locations cl
       join app_public.locations l on l.organization_id = cl.organization_id and l.id = cl.location_id
      where cl.organization_id = org and cl.contact_id = contact and l.sms_number is not null
      order by l.id is not distinct from preferred_location desc, l.created_at, l.id limit 1),
    (select l.sms_number from app_public.locations l where l.organization_id = org and l.id = preferred_location),
    (select o.default_sms_number from app_public.organizations o where o.id = org))
$$;

ALTER FUNCTION app_private.contact_sms_sender(org uuid, contact uuid, preferred_location uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION contact_sms_sender(org uuid, contact uuid, preferred_location uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.contact_sms_sender(org uuid, contact uuid, preferred_location uuid) IS 'The number a sequence texts a contact from, as people do (conversation_sms_send): a number of the contact''s locations (the preferred one first), else the preferred location''s, else the organization''s default.';

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
-- Name: fold_contact_counts(uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.fold_contact_counts(organization_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if not pg_try_advisory_xact_lock(hashtextextended('contact_counts:' || organization_id, 0)) then
    return;
  end if;
  with gone as (
    delete from app_private.contact_counts c where c.organization_id = fold_contact_counts.organization_id
    returning c.n
  )
  insert into app_private.contact_counts (organization_id, n)
  select fold_contact_counts.organization_id, sum(gone.n) from gone having sum(gone.n) <> 0;
end $$;

ALTER FUNCTION app_private.fold_contact_counts(organization_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION fold_contact_counts(organization_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.fold_contact_counts(organization_id uuid) IS 'Folds the delta rows of an organization''s contact count into one row (skipped while another fold of it runs).';

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
    -- still active once a pause or deactivation committing meanwhile is waited for (for share)
    perform 1 from app_public.sequences x
     where x.organization_id = g.organization_id and x.id = g.sequence_id and x.status = 'active' for share;
    continue when not found;
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
-- Name: tg_contacts__count_rows(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contacts__count_rows() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  o uuid;
begin
  if tg_op = 'INSERT' then
    insert into app_private.contact_counts (organization_id, n)
    select r.organization_id, count(*) from new_rows r group by 1;
    for o in select distinct r.organization_id from new_rows r loop
      if random() < 1.0 / 32 then perform app_private.fold_contact_counts(o); end if;
    end loop;
  else
    insert into app_private.contact_counts (organization_id, n)
    select r.organization_id, -count(*) from old_rows r group by 1;
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_contacts__count_rows() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_contacts__count_rows(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_contacts__count_rows() IS 'Statement trigger of app_public.contacts: counts the inserted (or deleted) rows per organization in app_private.contact_counts.';

--
-- Name: tg_contacts__count_truncated(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_contacts__count_truncated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  delete from app_private.contact_counts;
  return null;
end $$;

ALTER FUNCTION app_private.tg_contacts__count_truncated() OWNER TO svc_owner;

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
           || jsonb_build_object('sequence_name', s.name, 'next_send_at', coalesce(p.next_run_at, p.next_step_due_at))
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
    SET plan_cache_mode TO 'force_generic_plan'
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
    -- no filter: the organization's count, kept beside the rows (migration 000023), for a
    -- caller that reaches every contact; others count what their policies let them see
    total := coalesce(app_hidden.contact_total(), (select count(*) from app_public.contacts c where c.organization_id = org));
    items := app_hidden.contacts_json(array(
      select c from app_public.contacts c where c.organization_id = org
       order by c.last_seen_at desc, c.id limit page_size offset skip));
  else
    total := coalesce(app_hidden.contact_total(), (select count(*) from app_public.contacts c where c.organization_id = org));
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
       where s.organization_id = c.organization_id and s.id::text = lower(patch->>'stage_id')) then
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
-- Name: contact_counts; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.contact_counts (
    organization_id uuid NOT NULL,
    n bigint NOT NULL
);

ALTER TABLE app_private.contact_counts OWNER TO svc_owner;

--
-- Name: TABLE contact_counts; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.contact_counts IS 'How many contacts each organization has, as deltas: the sum of an organization''s rows is its count. Written by the statement triggers of app_public.contacts; folded now and then by app_private.fold_contact_counts. No foreign key: the rows of a deleted organization sum to zero and go at the next fold.';

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
-- Name: own_clients own_clients_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.own_clients
    ADD CONSTRAINT own_clients_pkey PRIMARY KEY (organization_id, person_id, contact_id, source);

--
-- Name: search_trigrams search_trigrams_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.search_trigrams
    ADD CONSTRAINT search_trigrams_pkey PRIMARY KEY (trigram);

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
-- Name: interactions interactions_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.interactions
    ADD CONSTRAINT interactions_pkey PRIMARY KEY (organization_id, id);

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
-- Name: sms_opt_outs sms_opt_outs_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.sms_opt_outs
    ADD CONSTRAINT sms_opt_outs_pkey PRIMARY KEY (organization_id, id);

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
-- Name: contact_counts_by_organization; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX contact_counts_by_organization ON app_private.contact_counts USING btree (organization_id) INCLUDE (n);

--
-- Name: contact_events_by_contact; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX contact_events_by_contact ON app_private.contact_events USING btree (organization_id, contact_id);

--
-- Name: contact_events_once; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE UNIQUE INDEX contact_events_once ON app_private.contact_events USING btree (organization_id, event, key) WHERE ((kind = 'fire'::text) AND (key IS NOT NULL));

--
-- Name: own_clients_by_contact; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX own_clients_by_contact ON app_private.own_clients USING btree (organization_id, contact_id);

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
-- Name: email_suppressions_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX email_suppressions_by_contact ON app_public.email_suppressions USING btree (organization_id, contact_id);

--
-- Name: interactions_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX interactions_by_contact ON app_public.interactions USING btree (organization_id, contact_id, started_at DESC, id DESC);

--
-- Name: interactions_by_conversation; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX interactions_by_conversation ON app_public.interactions USING btree (organization_id, conversation_id) WHERE (conversation_id IS NOT NULL);

--
-- Name: sms_opt_outs_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX sms_opt_outs_by_contact ON app_public.sms_opt_outs USING btree (organization_id, contact_id);

--
-- Name: sms_opt_outs_open; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX sms_opt_outs_open ON app_public.sms_opt_outs USING btree (organization_id, phone) WHERE (ended_at IS NULL);

--
-- Name: contact_fields _500_define_contacts_json; Type: TRIGGER; Schema: app_private; Owner: svc_owner
--

CREATE TRIGGER _500_define_contacts_json AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON app_private.contact_fields FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_contact_fields__define();

--
-- Name: contact_events _500_sequences; Type: TRIGGER; Schema: app_private; Owner: svc_owner
--

CREATE TRIGGER _500_sequences AFTER INSERT ON app_private.contact_events REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_contact_events__sequences();

--
-- Name: contacts _200_stage_changed_at; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _200_stage_changed_at BEFORE UPDATE OF stage_id ON app_public.contacts FOR EACH ROW WHEN ((old.stage_id IS DISTINCT FROM new.stage_id)) EXECUTE FUNCTION app_private.tg_contacts__stage_changed_at();

--
-- Name: contact_notes _500_count; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count AFTER INSERT ON app_public.contact_notes FOR EACH ROW EXECUTE FUNCTION app_private.tg_contact_notes__count();

--
-- Name: contacts _500_count_deleted; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_deleted AFTER DELETE ON app_public.contacts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_contacts__count_rows();

--
-- Name: contacts _500_count_inserted; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_inserted AFTER INSERT ON app_public.contacts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_contacts__count_rows();

--
-- Name: contacts _500_count_truncated; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_count_truncated AFTER TRUNCATE ON app_public.contacts FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_contacts__count_truncated();

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
-- Name: contacts _900_webhooks_created; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks_created AFTER INSERT ON app_public.contacts FOR EACH ROW EXECUTE FUNCTION app_private.tg_contacts__webhooks_created();

--
-- Name: contacts _900_webhooks_updated; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks_updated AFTER UPDATE OF name, email, phone, stage_id, field_values, sms_consent ON app_public.contacts FOR EACH ROW WHEN (((old.name IS DISTINCT FROM new.name) OR (old.email IS DISTINCT FROM new.email) OR (old.phone IS DISTINCT FROM new.phone) OR (old.stage_id IS DISTINCT FROM new.stage_id) OR (old.field_values IS DISTINCT FROM new.field_values) OR (old.sms_consent IS DISTINCT FROM new.sms_consent))) EXECUTE FUNCTION app_private.tg_contacts__webhooks_updated();

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
-- Name: pipeline_stages pipeline_stages_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.pipeline_stages
    ADD CONSTRAINT pipeline_stages_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

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
-- Name: tags tags_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.tags
    ADD CONSTRAINT tags_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: contact_counts; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.contact_counts ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_events; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.contact_events ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_fields; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.contact_fields ENABLE ROW LEVEL SECURITY;

--
-- Name: own_clients; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.own_clients ENABLE ROW LEVEL SECURITY;

--
-- Name: search_trigrams; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.search_trigrams ENABLE ROW LEVEL SECURITY;

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
-- Name: custom_fields; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.custom_fields ENABLE ROW LEVEL SECURITY;

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
-- Name: contact_locations insert_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_in_reach ON app_public.contact_locations FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: contacts insert_keyed_by_email; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_keyed_by_email ON app_public.contacts FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (email IS NOT NULL)));

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
-- Name: interactions; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.interactions ENABLE ROW LEVEL SECURITY;

--
-- Name: pipeline_stages; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.pipeline_stages ENABLE ROW LEVEL SECURITY;

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
-- Name: interactions select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.interactions FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = interactions.organization_id) AND (c.id = interactions.contact_id))))));

--
-- Name: custom_fields select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.custom_fields FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: pipeline_stages select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.pipeline_stages FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: tags select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.tags FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

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
-- Name: contact_tags select_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_contact ON app_public.contact_tags FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = contact_tags.organization_id) AND (c.id = contact_tags.contact_id))))));

--
-- Name: sms_opt_outs select_with_number; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_number ON app_public.sms_opt_outs FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = sms_opt_outs.organization_id) AND (c.phone = sms_opt_outs.phone))))));

--
-- Name: sms_opt_outs; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.sms_opt_outs ENABLE ROW LEVEL SECURITY;

--
-- Name: tags; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.tags ENABLE ROW LEVEL SECURITY;

--
-- Name: contacts update_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_in_reach ON app_public.contacts FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (EXISTS ( SELECT 1
   FROM app_public.contact_locations cl
  WHERE ((cl.organization_id = contacts.organization_id) AND (cl.contact_id = contacts.id) AND (cl.location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))))) AND ((( SELECT app_hidden.current_records_level() AS current_records_level) = 'all'::text) OR (id = ANY (( SELECT app_hidden.current_own_client_ids() AS current_own_client_ids)::uuid[]))))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: sms_opt_outs update_with_number; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_with_number ON app_public.sms_opt_outs FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT app_hidden.current_has_power('contacts'::text) AS current_has_power))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

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
-- Name: FUNCTION check_custom_fields(field_values jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.check_custom_fields(field_values jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.check_custom_fields(field_values jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.check_custom_fields(field_values jsonb) TO svc_worker;

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
-- Name: FUNCTION contact_total(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.contact_total() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.contact_total() TO svc_request;

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
-- Name: FUNCTION current_own_client_ids(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_own_client_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_own_client_ids() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_own_client_ids() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_own_client_ids() TO svc_analyst;

--
-- Name: FUNCTION current_sees_contact_details(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_sees_contact_details() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_sees_contact_details() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_sees_contact_details() TO svc_worker;

--
-- Name: FUNCTION custom_field_value_fits(type text, options jsonb, value jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) TO svc_worker;

--
-- Name: FUNCTION mask_email(email text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.mask_email(email text) FROM PUBLIC;

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
-- Name: FUNCTION require_contact(contact_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.require_contact(contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_contact(contact_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.require_contact(contact_id uuid) TO svc_worker;

--
-- Name: FUNCTION search_pieces(pattern text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.search_pieces(pattern text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.search_pieces(pattern text) TO svc_request;

--
-- Name: FUNCTION search_rarest_share(pattern text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.search_rarest_share(pattern text) FROM PUBLIC;

--
-- Name: FUNCTION contact_only_location(org uuid, contact_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.contact_only_location(org uuid, contact_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION contact_sms_sender(org uuid, contact uuid, preferred_location uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.contact_sms_sender(org uuid, contact uuid, preferred_location uuid) FROM PUBLIC;

--
-- Name: FUNCTION define_contacts_json(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.define_contacts_json() FROM PUBLIC;

--
-- Name: FUNCTION fold_contact_counts(organization_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.fold_contact_counts(organization_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION inbound_contact(org uuid, location uuid, phone text, email text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.inbound_contact(org uuid, location uuid, phone text, email text) FROM PUBLIC;

--
-- Name: FUNCTION refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.refresh_appointment_own_client(organization_id uuid, staff_profile_id uuid, contact_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION refresh_search_trigrams(sample_rows integer); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.refresh_search_trigrams(sample_rows integer) FROM PUBLIC;

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
-- Name: FUNCTION tg_contacts__count_rows(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contacts__count_rows() FROM PUBLIC;

--
-- Name: FUNCTION tg_contacts__count_truncated(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_contacts__count_truncated() FROM PUBLIC;

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
-- Name: FUNCTION tg_email_suppressions__sequences(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_email_suppressions__sequences() FROM PUBLIC;

--
-- Name: FUNCTION tg_sms_opt_outs__sequences(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_sms_opt_outs__sequences() FROM PUBLIC;

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
-- Name: TABLE interactions; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.interactions TO svc_request;
GRANT SELECT ON TABLE app_public.interactions TO svc_worker;
GRANT SELECT ON TABLE app_public.interactions TO svc_analyst;

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
