-- Background work runs with its unit of work's organization, never a request's claims.
--
-- A worker's connection carries no credential: app_hidden.current_org_id() is NULL there, and
-- app_hidden.current_sees_contact_details() false. The audience rule compiler read both, so a
-- broadcast to an audience with a custom-field rule (or any rule a MEMBER cannot test) failed to
-- fire with "not a field audiences can test". The compiler now takes the organization and what
-- may be tested as arguments (app_hidden.audience_filter_of); the request paths keep
-- app_hidden.audience_filter, which passes the credential's; app_private.broadcast_fire passes
-- the schedule's organization. test/broadcasts/background-claims.test.ts checks that no function
-- the worker's tasks call reads a claim, through calls and the triggers of the tables they write.

set local role svc_owner;

create or replace function app_hidden.audience_filter_of(org_id uuid, sees_details boolean, definition jsonb, path text)
  returns app_hidden.audience_filter
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

comment on function app_hidden.audience_filter_of(uuid, boolean, jsonb, text) is
  'Compiles an audience definition of organization org_id to a parameterized condition over app_public.contacts c (values only as $1..$5 array references); sees_details: whether rules may test more than display_name, email and phone_number. 400 naming the definition''s part to fix when it breaks a limit, tests a field not allowed, or does not resolve.';
revoke all on function app_hidden.audience_filter_of(uuid, boolean, jsonb, text) from public;
grant execute on function app_hidden.audience_filter_of(uuid, boolean, jsonb, text) to svc_request, svc_worker;

create or replace function app_hidden.audience_filter(definition jsonb, path text) returns app_hidden.audience_filter
  language sql stable
  as $$
  select app_hidden.audience_filter_of(app_hidden.current_org_id(), app_hidden.current_sees_contact_details(), definition, path)
$$;

comment on function app_hidden.audience_filter(jsonb, text) is
  'app_hidden.audience_filter_of for the current credential: its organization, and the fields it reads of a contact. Request paths only.';

create or replace function app_private.broadcast_fire(organization_id uuid, sequence_id uuid, fire_at timestamp with time zone, next_fire_at timestamp with time zone) RETURNS uuid
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
  update app_public.broadcast_runs x set recipients = n where x.organization_id = b.organization_id and x.id = run;
  perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', s.organization_id, 'run_id', run),
    'broadcast_run:' || run, now());
  return run;
end $_$;

reset role;
