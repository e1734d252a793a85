-- db/schema/audiences.sql: what src/audiences/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

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
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.audience_filter_of(app_hidden.current_org_id(), app_hidden.current_sees_contact_details(), definition, path)
$$;

ALTER FUNCTION app_hidden.audience_filter(definition jsonb, path text) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_filter(definition jsonb, path text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_filter(definition jsonb, path text) IS 'app_hidden.audience_filter_of for the current credential: its organization, and the fields it reads of a contact. Request paths only.';

--
-- Name: audience_filter_of(uuid, boolean, jsonb, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text) RETURNS app_hidden.audience_filter
    LANGUAGE plpgsql STABLE
    AS $_$
declare
  org uuid := org_id;
  -- what the credential reads of a contact decides what its rules may test
  details boolean := sees_details;
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

ALTER FUNCTION app_hidden.audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text) OWNER TO svc_owner;

--
-- Name: FUNCTION audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text) IS 'Compiles an audience definition of organization org_id to a parameterized condition over app_public.contacts c (values only as $1..$5 array references); sees_details: whether rules may test more than display_name, email and phone_number. 400 naming the definition''s part to fix when it breaks a limit, tests a field not allowed, or does not resolve.';

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
-- Name: audience_members_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX audience_members_by_contact ON app_public.audience_members USING btree (organization_id, contact_id);

--
-- Name: audiences_org_created; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX audiences_org_created ON app_public.audiences USING btree (organization_id, created_at DESC, id);

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
-- Name: audience_members; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.audience_members ENABLE ROW LEVEL SECURITY;

--
-- Name: audiences; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.audiences ENABLE ROW LEVEL SECURITY;

--
-- Name: audience_members delete_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY delete_own_org ON app_public.audience_members FOR DELETE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden."current_role"() AS "current_role") = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text]))));

--
-- Name: audiences insert_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_own_org ON app_public.audiences FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden."current_role"() AS "current_role") = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text]))));

--
-- Name: audience_members insert_with_contact; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_with_contact ON app_public.audience_members FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden."current_role"() AS "current_role") = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text])) AND (EXISTS ( SELECT 1
   FROM app_public.contacts c
  WHERE ((c.organization_id = audience_members.organization_id) AND (c.id = audience_members.contact_id))))));

--
-- Name: audience_members select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.audience_members FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: audiences select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.audiences FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: audiences update_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_own_org ON app_public.audiences FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden."current_role"() AS "current_role") = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text])))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

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
-- Name: FUNCTION audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text) TO svc_worker;

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
-- Name: FUNCTION require_static(a app_public.audiences); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.require_static(a app_public.audiences) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.require_static(a app_public.audiences) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.require_static(a app_public.audiences) TO svc_worker;

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
