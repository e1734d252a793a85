-- Sequences: the template and condition language (../shared/design/sequences.md).
--
-- Templates: a message's subject and body hold placeholders `{{ name }}` or `{{ name|default }}`
-- (spaces around the name and the default allowed). The variables are the rows of
-- app_hidden.sequence_variables(); a step naming any other one is refused at activation
-- (unknown_variable), so render_template meets only known names in practice and renders an unknown
-- one empty. A `{{` that does not open a placeholder (no `}}`, or no variable name inside) is
-- reported by template_unknown_variables as well: it would otherwise reach the contact as written.
-- Rendering substitutes text and nothing else: no expression, no nesting, no evaluation; in an
-- HTML body values and defaults are HTML-escaped.
--
-- Conditions (edges and exit conditions): one rule {field, op, value?} over the contact, with the
-- fields and ops of the audience rule language (its shape checked by
-- app_hidden.audience_definition_check), or over the enrollment's own events: event.replied,
-- event.clicked, event.opened with exists / not_exists. A rule is evaluated for one contact in
-- plpgsql (no SQL is built from it), the way app_hidden.audience_filter compares for many:
-- text case-insensitively, a date value against the UTC day of a date-time field, neq, not_in
-- and not_exists true for a contact without a value.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Variables
--------------------------------------------------------------------------------
create or replace function app_hidden.sequence_variables()
returns table (name text, description text, example text)
language sql immutable parallel safe as $$
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
comment on function app_hidden.sequence_variables() is
  'The variables a sequence message may name as {{name}} or {{name|default}} (sequences_list_variables).';
grant execute on function app_hidden.sequence_variables() to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Rendering
--------------------------------------------------------------------------------
create or replace function app_hidden.html_escape(value text) returns text
language sql immutable parallel safe strict as $$
  select replace(replace(replace(replace(replace(value, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')
$$;
comment on function app_hidden.html_escape(text) is 'Text made safe inside HTML (& < > " '').';
grant execute on function app_hidden.html_escape(text) to svc_request, svc_worker;

-- One pass from left to right: each `{{` either opens a placeholder closed by the next `}}`
-- or is copied as it is. A value is never read again as a template.
create or replace function app_hidden.render_template(template text, vars jsonb, html boolean) returns text
language plpgsql immutable parallel safe as $$
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
end $$;
comment on function app_hidden.render_template(text, jsonb, boolean) is
  'A message with its {{name}} / {{name|default}} placeholders replaced by vars->>name, or the default when that is null '
  'or empty; unknown names render empty; with html, values and defaults are HTML-escaped. Substitution only.';
grant execute on function app_hidden.render_template(text, jsonb, boolean) to svc_request, svc_worker;

-- The names a template uses that are not variables, in order of appearance, each once; a `{{`
-- that opens no placeholder is listed as its text (up to 40 characters), so an author sees it.
create or replace function app_hidden.template_unknown_variables(template text) returns text[]
language plpgsql stable parallel safe as $$
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
end $$;
comment on function app_hidden.template_unknown_variables(text) is
  'The placeholder names of a template that are not sequence variables, and any {{ that opens no placeholder (as its text).';
grant execute on function app_hidden.template_unknown_variables(text) to svc_request, svc_worker;

-- The variables of one message, read as the owner: the engine renders for contacts whatever the
-- reach of whoever enrolled them. first_name / last_name split the contact's one name column.
create or replace function app_hidden.sequence_message_variables(organization_id uuid, contact_id uuid,
  location_id uuid, unsubscribe_url text) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_hidden.sequence_message_variables(uuid, uuid, uuid, text) is
  'The variables of one sequence message, keyed by name (render_template''s vars).';
revoke all on function app_hidden.sequence_message_variables(uuid, uuid, uuid, text) from public;
grant execute on function app_hidden.sequence_message_variables(uuid, uuid, uuid, text) to svc_worker;

--------------------------------------------------------------------------------
-- Conditions
--------------------------------------------------------------------------------
-- The contact fields a condition may test: the audience rule language's (app_hidden.audience_filter),
-- with field_values.<key> for custom fields.
create or replace function app_hidden.condition_contact_fields()
returns table (field text, kind text, description text)
language sql immutable parallel safe as $$
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
comment on function app_hidden.condition_contact_fields() is
  'The contact fields a sequence condition may test (besides field_values.<key>), with their kind.';
grant execute on function app_hidden.condition_contact_fields() to svc_request, svc_worker;

create or replace function app_hidden.condition_event_fields()
returns table (field text, event text, description text)
language sql immutable parallel safe as $$
  values
    ('event.replied', 'replied', 'The contact replied to a message of this enrollment.'),
    ('event.clicked', 'clicked', 'The contact clicked a link of a message of this enrollment.'),
    ('event.opened', 'opened', 'The contact opened an email of this enrollment.')
$$;
comment on function app_hidden.condition_event_fields() is
  'The enrollment events a sequence condition may test, with exists / not_exists.';
grant execute on function app_hidden.condition_event_fields() to svc_request, svc_worker;

-- Whether a condition is well formed, independently of the organization: a rule of the audience
-- language over a known contact field (or field_values.<key>) with a value of the field's kind,
-- or an event field with exists / not_exists. Whether field_values.<key> names a custom field of
-- the organization is for the caller to check (app_hidden.condition_problem).
create or replace function app_hidden.condition_valid(condition jsonb) returns boolean
language plpgsql stable as $$
begin
  return app_hidden.condition_problem(null, condition) is null;
end $$;
comment on function app_hidden.condition_valid(jsonb) is
  'Whether a sequence condition {field, op, value?} is well formed (sequences_get_condition_vocabulary).';
grant execute on function app_hidden.condition_valid(jsonb) to svc_request, svc_worker;

-- What is wrong with a condition, in a sentence (NULL: nothing). With an organization, a
-- field_values.<key> must also name one of its enabled custom fields.
-- Invoker: the custom fields and stages are read with the caller's rights.
create or replace function app_hidden.condition_problem(organization_id uuid, condition jsonb) returns text
language plpgsql stable as $$
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
end $$;
comment on function app_hidden.condition_problem(uuid, jsonb) is
  'What is wrong with a sequence condition (NULL: nothing); with an organization, custom fields and stages are resolved.';
grant execute on function app_hidden.condition_problem(uuid, jsonb) to svc_request, svc_worker;

-- One comparison of a contact's value (as text, NULL: none) with a condition's values (checked
-- when the condition was written). Text, numbers, stages and booleans compare without a cast that
-- can fail (numbers are matched first), so this path needs no exception block, which would cost a
-- subtransaction per evaluation; date-times and custom fields go through condition_compare_safe.
create or replace function app_hidden.condition_compare(kind text, have text, op text, vals jsonb) returns boolean
language plpgsql immutable as $$
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
end $$;
grant execute on function app_hidden.condition_compare(text, text, text, jsonb) to svc_request, svc_worker;

-- The same, where a stored value may not read as its field's type (a custom field whose type
-- changed, a malformed date): such a value matches nothing.
create or replace function app_hidden.condition_compare_safe(kind text, have text, op text, vals jsonb) returns boolean
language plpgsql immutable as $$
begin
  return app_hidden.condition_compare(kind, have, op, vals);
exception when data_exception then
  return false;
end $$;
grant execute on function app_hidden.condition_compare_safe(text, text, text, jsonb) to svc_request, svc_worker;

-- Whether a condition holds for a contact in an enrollment, read as the owner (the engine asks).
-- A condition that is not well formed holds for nobody.
create or replace function app_hidden.condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid,
  condition jsonb) returns boolean
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_hidden.condition_holds(uuid, uuid, uuid, jsonb) is
  'Whether a sequence condition holds for a contact in an enrollment (event.* over that enrollment''s events).';
revoke all on function app_hidden.condition_holds(uuid, uuid, uuid, jsonb) from public;
grant execute on function app_hidden.condition_holds(uuid, uuid, uuid, jsonb) to svc_worker;

reset role;
