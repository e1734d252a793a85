-- db/schema/forms.sql: what src/forms/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

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
-- Name: form_secrets form_secrets_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.form_secrets
    ADD CONSTRAINT form_secrets_pkey PRIMARY KEY (organization_id, form_id);

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
-- Name: forms_id_key; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE UNIQUE INDEX forms_id_key ON app_public.forms USING btree (id);

--
-- Name: forms _500_secret; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_secret AFTER INSERT ON app_public.forms FOR EACH ROW EXECUTE FUNCTION app_private.tg_forms__secret();

--
-- Name: form_submissions _900_webhooks; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks AFTER INSERT ON app_public.form_submissions FOR EACH ROW WHEN ((new.status = 'accepted'::text)) EXECUTE FUNCTION app_private.tg_form_submissions__webhooks();

--
-- Name: form_secrets form_secrets_organization_id_form_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.form_secrets
    ADD CONSTRAINT form_secrets_organization_id_form_id_fkey FOREIGN KEY (organization_id, form_id) REFERENCES app_public.forms(organization_id, id) ON DELETE CASCADE;

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
-- Name: form_secrets; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.form_secrets ENABLE ROW LEVEL SECURITY;

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
-- Name: forms select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.forms FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ((location_id IS NULL) OR ( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

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
-- Name: FUNCTION public_form(form_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.public_form(form_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.public_form(form_id uuid) TO svc_request;

--
-- Name: FUNCTION tg_form_submissions__webhooks(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_form_submissions__webhooks() FROM PUBLIC;

--
-- Name: FUNCTION tg_forms__secret(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_forms__secret() FROM PUBLIC;

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
