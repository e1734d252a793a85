--! Previous: sha1:59948962123a67351013b83f5b9d54af13425b10
--! Hash: sha1:5e7438a57a8c3313349dafe978b43d541fc5fb60
--! Message: hardening: function privileges, internal GraphQL access, audience definition and page limits in SQL, idempotency owner liveness

--! split: 010-functions-of-svc_owner-not-executable-by-public.sql
-- Functions svc_owner creates are executable only by the roles they are granted to.
--
-- PostgreSQL gives PUBLIC EXECUTE on every new function. 000001 meant to withhold it with
-- `alter default privileges in schema … revoke execute on functions from public`, but that
-- does nothing: PUBLIC's EXECUTE is a global default, per creating role, and a per-schema
-- default can only add to the global one. It was also run by the migrating role, not by
-- svc_owner, which creates our functions. So every function of app_public, app_hidden and
-- app_private (security-definer ones included, unless revoked one by one) was executable by
-- any role that may use the schema: analysts could call the API's write functions and the
-- definer helpers. From here on svc_owner's new functions start with no EXECUTE for PUBLIC;
-- each migration grants its functions to the roles that call them (svc_request for what the
-- API calls, svc_worker for what tasks call, svc_analyst only the claim helpers its policies
-- read). Functions that already exist lose PUBLIC's EXECUTE in the last file of this
-- migration (990), which also covers the functions of the files in between.
set local role svc_owner;

alter default privileges for role svc_owner revoke execute on functions from public;

reset role;

-- app_private.add_job, the one way SQL enqueues a job, was a security-definer function owned by
-- the graphile_worker schema's owner, the migrating role: a superuser. A definer function runs
-- with its owner's rights, so a flaw in it, or in anything it calls, would act as a superuser.
-- It belongs to svc_owner like every other definer function, and svc_owner gets exactly what
-- graphile_worker.add_job needs, which runs with its caller's rights: the schema, the two
-- functions, and the three private tables it reads and writes. graphile-worker enables row
-- security on those tables with no policies (only their owner, the worker's connection, passes);
-- one policy per table lets svc_owner through. Jobs belong to no tenant, and svc_owner already
-- owns every row a job points at. A graphile-worker upgrade that recreates these tables or
-- functions drops the grants and policies with them: the delivery tests then fail, and a
-- migration restates them.
alter function app_private.add_job(text, jsonb, text, timestamptz) owner to svc_owner;
comment on function app_private.add_job(text, jsonb, text, timestamptz) is
  'graphile_worker.add_job for our own security-definer functions; owned by svc_owner, never granted to request roles.';

grant usage on schema graphile_worker to svc_owner;
grant execute on function
  graphile_worker.add_job(text, json, text, timestamptz, int, text, int, text[], text),
  graphile_worker.add_jobs(graphile_worker.job_spec[], boolean)
  to svc_owner;
grant select, insert on graphile_worker._private_tasks, graphile_worker._private_job_queues to svc_owner;
grant select, insert, update on graphile_worker._private_jobs to svc_owner;

drop policy if exists svc_owner_adds_jobs on graphile_worker._private_tasks;
create policy svc_owner_adds_jobs on graphile_worker._private_tasks to svc_owner using (true) with check (true);
drop policy if exists svc_owner_adds_jobs on graphile_worker._private_job_queues;
create policy svc_owner_adds_jobs on graphile_worker._private_job_queues to svc_owner using (true) with check (true);
drop policy if exists svc_owner_adds_jobs on graphile_worker._private_jobs;
create policy svc_owner_adds_jobs on graphile_worker._private_jobs to svc_owner using (true) with check (true);

--! split: 100-internal-graphql-authorization.sql
set local role svc_owner;

-- Who may use internal GraphQL over HTTP (/internal/graphql).
--
-- GraphQL is no operation of the registry: it reads tables straight under the policies, and
-- the policies decide which rows a credential reaches, never which fields or which kinds of
-- record. REST narrows what a MEMBER, a MANAGER without a power or a scope-limited key sees in
-- its SQL functions (contact cards, no captured_fields, 403 on notes and members), and GraphQL
-- reads none of those functions. So GraphQL takes only the credentials for which REST narrows
-- nothing: those that reach every location at the all-records level, see contact details and
-- hold every manager power (an organization key without a role, an owner's or admin's personal
-- key), with every read scope. Every other credential uses REST or MCP.
--
-- It reads the claims app_hidden.authenticate has just set in the same transaction, so the
-- route calls it right after authenticate, in the same round trip. Scope first, then role, as
-- authenticate does for an operation: 403 insufficient_scope names the first read scope missing.
create or replace function app_hidden.authorize_internal_graphql() returns void
language plpgsql stable as $$
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
comment on function app_hidden.authorize_internal_graphql() is
  'Raises 403 unless the current credential may use internal GraphQL over HTTP: every read scope '
  '(insufficient_scope, naming the first missing), and the whole organization, all records, contact details and every '
  'manager power (insufficient_role). Called right after app_hidden.authenticate.';
revoke execute on function app_hidden.authorize_internal_graphql() from public;
grant execute on function app_hidden.authorize_internal_graphql() to svc_request;

reset role;

--! split: 200-audience-definition-limits.sql
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

--! split: 201-page-limits.sql
-- Paging: every function that answers a page checks its page and page size itself, so a
-- caller that skips the REST layer (the internal GraphQL view, any SQL caller) cannot ask for
-- every row at once: before this, a NULL page size meant `limit null`, all of them. NULL means
-- the spec's default (page 1, 25 a page), as an omitted query parameter does over REST; out of
-- range is 400 with the message REST's schema gives, naming the query parameter.
set local role svc_owner;

create or replace function app_hidden.page_error(param text, message text) returns void
language plpgsql as $$
begin
  perform app_hidden.raise_error(400, 'bad_request', format('query.%s: %s', param, message),
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', 'query.' || param, 'message', message))));
end $$;
comment on function app_hidden.page_error(text, text) is
  'Raises 400 bad_request naming query.<param>, with the issues list a validation error carries.';

create or replace function app_hidden.page_number(page int) returns int
language plpgsql immutable as $$
begin
  if page < 1 then
    perform app_hidden.page_error('page', 'Too small: expected number to be >=1');
  end if;
  return coalesce(page, 1);
end $$;
comment on function app_hidden.page_number(int) is 'The page to answer: 1 when NULL; 400 naming query.page below 1 (spec: Limits).';

create or replace function app_hidden.page_limit(page_size int) returns int
language plpgsql immutable as $$
begin
  if page_size < 1 then
    perform app_hidden.page_error('limit', 'Too small: expected number to be >=1');
  elsif page_size > 100 then
    perform app_hidden.page_error('limit', 'Too big: expected number to be <=100');
  end if;
  return coalesce(page_size, 25);
end $$;
comment on function app_hidden.page_limit(int) is
  'The page size to answer: 25 when NULL; 400 naming query.limit outside 1 to 100 (spec: Limits).';

grant execute on function app_hidden.page_error(text, text), app_hidden.page_number(int), app_hidden.page_limit(int)
  to svc_request, svc_worker, svc_analyst;

--------------------------------------------------------------------------------
-- The paged operations, restated (contacts_search from 000008, the lists from 000004) with the
-- page checked first, before anything is read (a bad page of an unknown contact is 400, as
-- over REST)
--------------------------------------------------------------------------------
create or replace function app_public.contacts_search(q text, email citext, phone text, page int, page_size int)
returns jsonb
language plpgsql stable as $$
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
end $$;

create or replace function app_public.contacts_list_notes(contact_id uuid, page int, page_size int) returns jsonb
language plpgsql stable as $$
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

create or replace function app_public.contacts_list_interactions(contact_id uuid, channel text, status text, page int, page_size int)
returns jsonb
language plpgsql stable as $$
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

-- Members: a keyset page, so only the page size (query.limit) is checked.
create or replace function app_public.audiences_list_members(audience_id uuid, after uuid, page_size int) returns jsonb
language plpgsql stable as $$
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

reset role;

--! split: 400-idempotency-owner-liveness.sql
-- Idempotency: a claim whose first call is gone answers idempotency_outcome_unknown.
--
-- A claim is committed as 'running' before its write starts, so a process killed mid-write
-- used to leave it running, and every retry answered idempotency_in_progress for 24 hours.
-- Whether the first call is still alive must be visible to the retry's backend, and the API
-- roles cannot read other sessions in pg_stat_activity. So the connection that claims a key
-- holds a session-level advisory lock on it from its claim until its write has committed or
-- rolled back (src/http/idempotency.ts runs claim, write and unlock on that one connection,
-- and destroys the connection whenever it cannot be sure the lock is gone). The lock dies with
-- the backend. A retry that finds the claim running and can take the lock knows the first
-- call is gone; so does one that finds the claim older than a statement may run (the
-- connection's statement_timeout): its backend can outlive its process (it notices a dead
-- client only when it next talks to it), or the connection can hang half-open. Either way the
-- claim becomes 'failed' — idempotency_outcome_unknown — for the rest of its 24 h.
--
-- Advisory locks share one key space per database. Ours are single bigints named
-- hashtextextended('svc.<topic>:' || ids, 0) (contacts_add_tag takes 'svc.tags:<org>' for a
-- transaction); graphile-migrate holds its own while migrating, on owner connections. Another
-- topic takes another prefix, so keys meet only by a 64-bit hash collision, which makes a
-- claim wait for the other holder, or a retry answer in_progress until the time limit. A
-- session-level lock taken on a request connection must be released before that connection
-- goes back to the pool, as it would otherwise outlive the request.

set local role svc_owner;

create or replace function app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text)
returns bigint language sql immutable parallel safe as $$
  -- operation ids hold no ':', so the parts cannot run into each other
  select hashtextextended('svc.idempotency:' || credential_id::text || ':' || operation_id || ':' || key, 0)
$$;
comment on function app_private.idempotency_lock_key(uuid, text, text) is
  'Advisory-lock key held by the connection running the first call of (credential, operation, idempotency key).';
revoke execute on function app_private.idempotency_lock_key(uuid, text, text) from public;

-- Its result gains lock_key and settled, which create or replace cannot do.
drop function if exists app_hidden.idempotency_begin(text, text, text, timestamptz);

-- Starts a call, or answers for it:
--   lock_key set: the caller claimed the key and now holds that session-level advisory lock;
--     it runs the write, then unlocks;
--   response_status and response_body set: the stored first answer;
--   settled: the first call was found gone and is now recorded as unknown (committed, so that
--     it stays so); calling again answers with that 409;
--   otherwise a 409 is raised.
-- `at` is the caller's clock, so tests can move it.
create function app_hidden.idempotency_begin(operation_id text, key text, fingerprint text, at timestamptz,
  out response_status int, out response_body jsonb, out lock_key bigint, out settled boolean)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r app_private.idempotency_keys;
  cred uuid := app_hidden.current_credential_id();
  lock bigint;
  -- a write runs as one statement right after its claim; 0 (no limit) leaves only the lock
  run_limit interval := nullif((select s.setting::bigint from pg_catalog.pg_settings s where s.name = 'statement_timeout'), 0)
    * interval '1 millisecond';
begin
  if cred is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  lock := app_private.idempotency_lock_key(cred, idempotency_begin.operation_id, idempotency_begin.key);
  settled := false;
  loop
    insert into app_private.idempotency_keys as k
      (credential_id, operation_id, key, organization_id, fingerprint, state, created_at)
    values (cred, idempotency_begin.operation_id, idempotency_begin.key, app_hidden.current_org_id(),
            idempotency_begin.fingerprint, 'running', at)
    on conflict on constraint idempotency_keys_pkey do update
       set fingerprint = excluded.fingerprint, state = 'running', response_status = null,
           response_body = null, created_at = excluded.created_at, updated_at = now()
     where k.created_at <= excluded.created_at - interval '24 hours'
    returning * into r;
    if found then
      -- A new call (or an expired key started over). The lock is taken before the claim
      -- commits, so no one sees it running without its owner's lock. It is free unless a
      -- colliding key's call holds it; then this waits for that call.
      perform pg_advisory_lock(lock);
      lock_key := lock;
      return;
    end if;
    -- ON CONFLICT locked the existing row even though it did not update it: until this
    -- transaction ends, its first call can neither record its answer nor free the key.
    select * into r from app_private.idempotency_keys k
     where k.credential_id = cred and k.operation_id = idempotency_begin.operation_id and k.key = idempotency_begin.key;
    exit when found;
    -- the first call rolled back and freed the key between the two statements: claim it
  end loop;
  if r.fingerprint <> idempotency_begin.fingerprint then
    perform app_hidden.raise_error(409, 'idempotency_key_reused',
      'This idempotency_key was used with other details (or different access); use a new key');
  elsif r.state = 'running' then
    -- Its owner unlocks only after its write committed or rolled back, and neither can have
    -- happened while this transaction holds the row: a free lock means the owner is gone.
    if pg_try_advisory_xact_lock(lock) or r.created_at <= at - run_limit then
      update app_private.idempotency_keys k set state = 'failed', updated_at = now()
       where k.credential_id = cred and k.operation_id = idempotency_begin.operation_id and k.key = idempotency_begin.key;
      settled := true;
      return;
    end if;
    perform app_hidden.raise_error(409, 'idempotency_in_progress',
      'The first call with this idempotency_key is still running; retry shortly');
  elsif r.state = 'failed' then
    perform app_hidden.raise_error(409, 'idempotency_outcome_unknown',
      'The first call with this idempotency_key failed after starting and may have taken effect; read the state before retrying with a new key');
  end if;
  response_status := r.response_status;
  response_body := r.response_body;
end $$;
comment on function app_hidden.idempotency_begin(text, text, text, timestamptz) is
  'Claims an idempotency key for the current credential (holding its advisory lock), or returns the stored answer, or records a gone first call as unknown, or raises the 409 that applies.';

-- Records the answer; called in the same transaction as the write. A claim a retry already
-- recorded as unknown (its first call ran past the time limit) stays unknown.
create or replace function app_hidden.idempotency_finish(operation_id text, key text, status int, body jsonb)
returns void language sql security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.idempotency_keys k
     set state = 'done', response_status = status, response_body = body, updated_at = now()
   where k.credential_id = app_hidden.current_credential_id()
     and k.operation_id = idempotency_finish.operation_id and k.key = idempotency_finish.key
     and k.state = 'running'
$$;

-- The owner recreated it, so PUBLIC would have EXECUTE again (see 000010).
revoke execute on function app_hidden.idempotency_begin(text, text, text, timestamptz) from public;
grant execute on function app_hidden.idempotency_begin(text, text, text, timestamptz) to svc_request;

--! split: 990-function-grants-after-every-other-file.sql
-- Who may execute the functions of our schemas, settled after every other file of this
-- migration has created its own (this file runs last; 010 says why PUBLIC held EXECUTE).
--
--   PUBLIC       nothing. A role reaches a function only through a grant to it.
--   svc_request  every function of app_public (the schema holds the API's operations and only
--                them), the app_hidden helpers granted to it where they are created, and the
--                helpers the row-level policies call.
--   svc_worker   what tasks call, granted where it is created, and the policies' helpers.
--   svc_analyst  only the helpers the policies of its SELECTs call: an analyst reads tables,
--                it calls no operation and no helper of an operation.
--
-- A policy's expression runs with the rights of the role reading the table, and so do the
-- invoker helpers it calls, and what those call in turn; a definer helper runs its body as
-- svc_owner. The helpers are found in the catalog (the policies' expressions and the bodies of
-- the invoker helpers they name, which call each other schema-qualified, as everything here
-- does), so a policy added in another file is covered without being listed here.
set local role svc_owner;

revoke execute on all functions in schema app_public, app_hidden, app_private from public;

grant execute on all functions in schema app_public to svc_request;

revoke execute on all functions in schema app_public, app_hidden, app_private from svc_analyst;

do $$
declare
  helper record;
begin
  for helper in
    with recursive used (fn, reading) as (
      select p.oid, pol.polcmd in ('r', '*')
        from pg_catalog.pg_policy pol
        join pg_catalog.pg_class c on c.oid = pol.polrelid
        cross join lateral regexp_matches(
          concat_ws(' ', pg_catalog.pg_get_expr(pol.polqual, pol.polrelid), pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid)),
          'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
       where c.relnamespace = 'app_public'::regnamespace
      union
      select p.oid, used.reading
        from used
        join pg_catalog.pg_proc caller on caller.oid = used.fn and not caller.prosecdef
        cross join lateral regexp_matches(caller.prosrc, 'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
    )
    select fn::regprocedure as fn, bool_or(reading) as reading from used group by fn
  loop
    execute format('grant execute on function %s to svc_request, svc_worker', helper.fn);
    if helper.reading then
      execute format('grant execute on function %s to svc_analyst', helper.fn);
    end if;
  end loop;
end $$;

reset role;

-- graphile_worker's functions (010 lets svc_owner use the schema for add_job) are called by the
-- worker's connection, which owns them, and by svc_owner through app_private.add_job. No other
-- role may use the schema; PUBLIC loses EXECUTE on them too, so svc_owner reaches only the two
-- it is granted.
revoke execute on all functions in schema graphile_worker from public;
