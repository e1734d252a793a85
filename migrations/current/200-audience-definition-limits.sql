-- Audiences: every limit of a definition is the database's, so every caller of the SQL
-- functions (REST, MCP, the internal GraphQL view, a later broadcast sender) meets the same ones.
--
--   1. The spec's shape limits (at most 50 rules; field 1–200 characters; in, not_in and
--      contains_any 1–500 values; strings at most 1000 characters; no objects or nested
--      lists), checked as the REST layer's schema checks them and answered with its messages.
--   2. A bound on what a definition costs to evaluate. Each value of a contains or
--      contains_any rule is a LIKE scan of every contact's text, so a definition of 50 rules of
--      500 such values read each contact 25,000 times (28 s for 4,400 contacts). At most 500
--      such values and 10,000 characters of them in one definition (bench/audience-cost.ts
--      measures what the bound still allows).
--   3. Field limiting: a credential that reads only a contact's id, name, email and phone (a
--      MEMBER, a MANAGER without the contacts power) may test only those; a count over any
--      other field would let it read that field by bisection.
set local role svc_owner;

--------------------------------------------------------------------------------
-- 1 and 2: the definition's shape and cost
--------------------------------------------------------------------------------
-- Why here and not only in zod: the internal GraphQL view and any other SQL caller reach the
-- functions without the REST layer. The messages are zod's, so an answer is the same wherever
-- the check happened; the order of the checks is zod's too (match, rules, each rule's field,
-- op, value and unknown keys, then the rule's refinements, then unknown top-level keys), so the
-- first problem named is the one REST names.
--
-- Why the cost bound counts only contains and contains_any: EXECUTE … USING plans a
-- definition with its values as constants, so in, not_in and eq lists become hashed lookups (a
-- 25,000-value definition costs each contact what one value does), while `like any` tries
-- every pattern on every contact. A rule reads its field once per contact; the spec's 50 rules
-- bound that. Pattern characters matter where a contact's text repeats a pattern's start (each
-- position is compared up to the pattern's length), so they are bounded too.
create or replace function app_hidden.audience_definition_check(definition jsonb, at text) returns void
language plpgsql stable as $$
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
end $$;
comment on function app_hidden.audience_definition_check(jsonb, text) is
  'Raises 400 naming the part (at, at.match, at.rules.N.field|op|value) of an audience definition that breaks the spec''s '
  'limits, or at.rules when its contains/contains_any values exceed the evaluation bound (500 values, 10,000 characters).';

--------------------------------------------------------------------------------
-- The compiler: restated from 000006 with the checks above in front, field limiting, and
-- without the per-value shape checks the definition check now makes
--------------------------------------------------------------------------------
-- `path` is where the rules are (body.rules, definition.rules); the definition is the part
-- before `.rules`.
create or replace function app_hidden.audience_filter(definition jsonb, path text) returns app_hidden.audience_filter
language plpgsql stable as $$
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
end $$;
comment on function app_hidden.audience_filter(jsonb, text) is
  'Compiles an audience definition to a parameterized condition over app_public.contacts c (values only as $1..$5 '
  'array references); 400 naming the definition''s part to fix when it breaks a limit (app_hidden.audience_definition_check), '
  'tests a field the credential cannot read, or does not resolve.';

--------------------------------------------------------------------------------
-- Operations that take a definition
--------------------------------------------------------------------------------
-- The preview takes the REST body as it is: a definition plus exclude_opted_out, which counts
-- ignore (they include opted-out contacts).
create or replace function app_public.audiences_preview_count(definition jsonb) returns jsonb
language plpgsql stable as $$
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
comment on function app_public.audiences_preview_count(jsonb) is
  'audiences_preview_count: how many contacts a definition would select now, within the caller''s reach.';

-- Create and update refuse a definition that breaks a limit or the evaluation bound: those
-- depend on the definition alone, so such an audience could never be counted, listed or sent
-- to, and storing it would only put off the 400 to whoever evaluates it next (a member who can
-- not change it). Whether its fields resolve is still decided when it is evaluated, as the spec
-- says: a custom field may be defined after the audience.
create or replace function app_public.audiences_create(name text, description text, kind text, channel text, definition jsonb,
                                                       exclude_opted_out boolean) returns jsonb
language plpgsql volatile as $$
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
comment on function app_public.audiences_create(text, text, text, text, jsonb, boolean) is
  'audiences_create: a static audience (no definition) or a dynamic one (kind defaults to dynamic when a definition is sent; '
  'no definition = every contact); 400 for a definition over the limits.';

create or replace function app_public.audiences_update(audience_id uuid, patch jsonb) returns jsonb
language plpgsql volatile as $$
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
comment on function app_public.audiences_update(uuid, jsonb) is
  'audiences_update: changes the fields present (definition replaced whole; is_archived false restores); kind cannot change; '
  '400 for a definition over the limits.';

grant execute on function app_hidden.audience_definition_check(jsonb, text) to svc_request, svc_worker, svc_analyst;

reset role;
