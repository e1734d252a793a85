--! Previous: sha1:daa001a4c2637b5a02935b092fb0b7148d490d7c
--! Hash: sha1:8440f71cdbddc4de4ef8971eda7e2368becd6e76
--! Message: audiences: static and dynamic segments, the rule compiler, member pages, stage index

-- Audiences: saved segments of the organization's contacts. A static audience lists its
-- members; a dynamic one has a definition (match all/any over flat rules) that is compiled to
-- a parameterized WHERE condition over app_public.contacts and evaluated as the request role,
-- so the contacts reach policies decide who is counted and listed, exactly as for contacts_*.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Tables
--------------------------------------------------------------------------------
create table app_public.audiences (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  description text check (length(description) <= 2000),
  kind text not null check (kind in ('static', 'dynamic')),
  channel text not null default 'any' check (channel in ('any', 'email', 'sms')),
  definition jsonb check (jsonb_typeof(definition) = 'object'),
  exclude_opted_out boolean not null default false,
  archived_at timestamptz,
  created_by uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, created_by) references app_public.people,
  check ((kind = 'dynamic') = (definition is not null))
);
comment on table app_public.audiences is
  'A saved segment of the organization''s contacts: static (members listed in audience_members) or dynamic (definition).';
comment on column app_public.audiences.kind is 'static or dynamic; fixed at creation.';
comment on column app_public.audiences.channel is 'Which channel the audience is for (any, email, sms); applied at send, not by counts.';
comment on column app_public.audiences.definition is
  'Dynamic audiences only: {match: all|any, rules: [{field, op, value}]}, as app_hidden.audience_filter reads it. '
  'Fields are checked for format when stored and resolved when evaluated.';
comment on column app_public.audiences.exclude_opted_out is
  'Stored only: counts and member lists include opted-out contacts; a send removes them.';
comment on column app_public.audiences.archived_at is 'When the audience was archived; NULL while it is live.';
create index audiences_org_created on app_public.audiences (organization_id, created_at desc, id);

create table app_public.audience_members (
  organization_id uuid not null,
  audience_id uuid not null,
  contact_id uuid not null,
  added_at timestamptz not null default now(),
  primary key (organization_id, audience_id, contact_id),
  foreign key (organization_id, audience_id) references app_public.audiences on delete cascade,
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade
);
comment on table app_public.audience_members is
  'Members of static audiences. The primary key orders a member list (keyset paging by contact id).';
create index audience_members_by_contact on app_public.audience_members (organization_id, contact_id);

-- Rules on the stage are the common indexed segment: a count reads this index alone (id is in
-- it for the reach policy), and member pages walk it in id order.
create index contacts_org_stage on app_public.contacts (organization_id, stage_id, id);

--------------------------------------------------------------------------------
-- Policies: audiences belong to the organization; writes are for credentials that reach
-- the whole organization without a MEMBER or MANAGER role (app_hidden.authenticate already
-- refuses the others: every audiences write is member access deny with no manager power).
--------------------------------------------------------------------------------
alter table app_public.audiences enable row level security;
alter table app_public.audience_members enable row level security;

create policy select_own_org on app_public.audiences for select
  using (organization_id = (select app_hidden.current_org_id()));
create policy insert_own_org on app_public.audiences for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_role()) in ('organization', 'owner', 'admin'));
create policy update_own_org on app_public.audiences for update
  using (organization_id = (select app_hidden.current_org_id())
         and (select app_hidden.current_role()) in ('organization', 'owner', 'admin'))
  with check (organization_id = (select app_hidden.current_org_id()));

-- A membership is visible with its audience; the contact's own policy decides, in the joins
-- that read members, whether the caller sees the contact.
create policy select_own_org on app_public.audience_members for select
  using (organization_id = (select app_hidden.current_org_id()));
create policy insert_with_contact on app_public.audience_members for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_role()) in ('organization', 'owner', 'admin')
              and exists (select 1 from app_public.contacts c
                           where c.organization_id = audience_members.organization_id and c.id = audience_members.contact_id));
create policy delete_own_org on app_public.audience_members for delete
  using (organization_id = (select app_hidden.current_org_id())
         and (select app_hidden.current_role()) in ('organization', 'owner', 'admin'));

grant select on app_public.audiences, app_public.audience_members to svc_request, svc_worker, svc_analyst;
grant insert (organization_id, name, description, kind, channel, definition, exclude_opted_out, created_by)
  on app_public.audiences to svc_request;
grant update (name, description, channel, definition, exclude_opted_out, archived_at, updated_at)
  on app_public.audiences to svc_request;
grant insert (organization_id, audience_id, contact_id), delete on app_public.audience_members to svc_request;

--------------------------------------------------------------------------------
-- The rule language
--------------------------------------------------------------------------------
-- A compiled definition: a condition over `app_public.contacts c` whose every value is a
-- parameter. $1 … $5 are the arrays below (text, numeric, timestamptz, uuid, boolean); the
-- statement that runs it appends its own parameters from $6.
create type app_hidden.audience_filter as (
  condition text,
  texts text[],
  numbers numeric[],
  times timestamptz[],
  ids uuid[],
  bools boolean[]
);
comment on type app_hidden.audience_filter is
  'An audience definition compiled by app_hidden.audience_filter(): condition over contacts c, with $1..$5 bound to the arrays.';


-- A 400 naming the part of a rule to fix: `<path>.<index>.field|op|value[.<n>]: …`, with the
-- same `issues` list a validation error carries.
create function app_hidden.audience_rule_error(at text, message text) returns void
language plpgsql as $$
begin
  perform app_hidden.raise_error(400, 'bad_request', at || ': ' || message,
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', at, 'message', message))));
end $$;
comment on function app_hidden.audience_rule_error(text, text) is
  'Raises 400 bad_request naming the rule part to fix (path) with an issues list.';

-- Compiles a definition, resolving every rule against the organization's custom fields and
-- stages; raises 400 naming the rule part (`<path>.<index>.field|op|value`) to fix.
--
-- Why in the database, and how: the condition varies in shape with the rules, so it cannot be
-- one prepared statement; building it here keeps a count or a page to one round trip
-- (resolution, compilation and the query together), and later areas (broadcast sends) can
-- evaluate an audience in SQL. The condition's text is made only of fixed fragments chosen by
-- field and op, and of parameter references ($1[3], $2[1:4]): no value and no field name is
-- ever spliced into it. Contact columns come from the CASE below; a custom field key is itself
-- a parameter. EXECUTE … USING plans each run with the values known, so a rule on an indexed
-- column uses its index: stage_id, last_seen_at, and eq/in on email (email_key) and
-- phone_number. Under row security only leakproof operators can be index conditions, so text
-- comparisons use plain text columns (email_key, phone) where there is an index.
--
-- Semantics (test/audiences-rules.test.ts holds an independent evaluator to them):
--   * text (display_name, email, phone_number, text and select custom fields) compares
--     case-insensitively; contains/contains_any match a substring of the value as text, and
--     work on every custom field (a number, date or boolean as its JSON text).
--   * number (total_calls, number and currency custom fields): numbers or numeric strings.
--   * date-time (first_seen_at, last_seen_at, created_at, updated_at, datetime custom fields):
--     an ISO 8601 date-time with offset compares instants; a date (YYYY-MM-DD) compares the
--     field's UTC calendar day (eq: on that day; gt: after it; lte: on or before it).
--   * date custom fields: ISO dates (YYYY-MM-DD), compared as ISO strings, which sort as dates.
--   * boolean custom fields: true or false (or "true"/"false").
--   * stage_id: ids of the organization's pipeline stages.
--   * A contact without a value matches none of eq, in, gt/gte/lt/lte, contains, contains_any;
--     neq, not_in and not_exists are exactly the negations of eq, in and exists, so it matches
--     those.
create function app_hidden.audience_filter(definition jsonb, path text) returns app_hidden.audience_filter
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
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
  for i in 0 .. coalesce(jsonb_array_length(rules), 0) - 1 loop
    rule := rules->i;
    at := format('%s.%s', path, i);
    field := rule->>'field';
    op := rule->>'op';
    custom := false;
    cf_type := null;

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
            'stage_id or field_values.<key> of an enabled custom field', left(field, 200)));
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

    if op is null or op not in ('eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'contains_any', 'exists', 'not_exists') then
      perform app_hidden.audience_rule_error(at || '.op', format('%s is not an op: use eq, neq, in, not_in, gt, gte, lt, '
        'lte, contains, contains_any, exists or not_exists', coalesce(left(op, 50), 'null')));
    elsif op in ('gt', 'gte', 'lt', 'lte') and kind not in ('number', 'datetime', 'date') then
      perform app_hidden.audience_rule_error(at || '.op', format('%s compares numbers and dates, and %s is neither '
        '(use eq, neq, in, not_in, exists or not_exists)', op, field));
    elsif op in ('contains', 'contains_any') and not (custom or kind = 'text') then
      perform app_hidden.audience_rule_error(at || '.op', format('%s matches text: it works on display_name, email, '
        'phone_number and custom fields, not on %s', op, field));
    end if;

    if op in ('exists', 'not_exists') then
      p := present;
    else
      listed := op in ('in', 'not_in', 'contains_any');
      if listed <> (jsonb_typeof(rule->'value') = 'array') then
        perform app_hidden.audience_rule_error(at || '.value', case when listed
          then format('%s takes a list of 1 to 500 values', op) else format('%s takes one value', op) end);
      end if;
      vals := case when listed then rule->'value' else jsonb_build_array(rule->'value') end;
      if jsonb_array_length(vals) not between 1 and 500 then
        perform app_hidden.audience_rule_error(at || '.value', format('%s takes a list of 1 to 500 values', op));
      end if;
      texts := '{}'; numbers := '{}'; bools := '{}'; ids := '{}'; days := '{}'; instants := '{}';
      for j in 0 .. jsonb_array_length(vals) - 1 loop
        v := vals->j;
        s := v #>> '{}';
        vat := at || '.value' || case when listed then '.' || j else '' end;
        if coalesce(jsonb_typeof(v), 'null') not in ('string', 'number', 'boolean') or length(s) > 1000 then
          perform app_hidden.audience_rule_error(vat, 'a value is one string (at most 1000 characters), number or boolean');
        end if;
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
  'array references); 400 naming <path>.<index>.field|op|value when a rule does not resolve.';

-- A keyset page of the contacts a definition selects, under the caller's reach (the contacts
-- policies apply: this runs as the caller): at most max_rows, in id order, after `after` when
-- given.
--
-- A page is found in two steps, because the planner cannot estimate how many contacts a
-- definition selects (its conditions are expressions on JSON under row security, which it
-- takes for rare) and would collect every match and sort it even when the next 100 ids hold a
-- page. First it walks the next `walk` contacts in id order (the primary key) and keeps the
-- matches, stopping as soon as the page is full: enough for any audience of more than about
-- one contact in fifty. Only a sparser audience goes on to a query of the planner's choosing,
-- which finds rare matches through an index when a rule has one (email, phone, stage).
create function app_hidden.audience_contacts(definition jsonb, path text, after uuid, max_rows int)
returns setof app_public.contacts
language plpgsql stable as $$
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
end $$;
comment on function app_hidden.audience_contacts(jsonb, text, uuid, int) is
  'A keyset page of the contacts an audience definition selects within the caller''s reach: by id, after `after`, at most max_rows.';

create function app_hidden.audience_count(definition jsonb, path text) returns bigint
language plpgsql stable as $$
declare
  f app_hidden.audience_filter := app_hidden.audience_filter(definition, path);
  n bigint;
begin
  execute 'select count(*) from app_public.contacts c where c.organization_id = $6 and (' || f.condition || ')'
    into n
    using f.texts, f.numbers, f.times, f.ids, f.bools, app_hidden.current_org_id();
  return n;
end $$;
comment on function app_hidden.audience_count(jsonb, text) is
  'How many contacts within the caller''s reach an audience definition selects.';

--------------------------------------------------------------------------------
-- Operations
--------------------------------------------------------------------------------
create function app_hidden.audience_json(a app_public.audiences) returns jsonb
language sql stable as $$
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
comment on function app_hidden.audience_json(app_public.audiences) is 'An audience as the API shows it.';

-- The audience an operation acts on, or 404; locked when it is to be changed.
create function app_hidden.audience_for(audience_id uuid, for_write boolean) returns app_public.audiences
language plpgsql as $$
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
comment on function app_hidden.audience_for(uuid, boolean) is
  'The organization''s audience (locked when for_write), or 404.';

create function app_hidden.require_static(a app_public.audiences) returns void
language plpgsql as $$
begin
  if a.kind <> 'static' then
    perform app_hidden.raise_error(400, 'bad_request',
      'This audience is dynamic: its definition decides its contacts. Only a static audience takes members');
  end if;
end $$;
comment on function app_hidden.require_static(app_public.audiences) is '400 unless the audience is static (only those take members).';

create function app_public.audiences_list() returns jsonb
language sql stable as $$
  select jsonb_build_object('items', coalesce(jsonb_agg(app_hidden.audience_json(a) order by a.created_at desc, a.id desc), '[]'))
    from app_public.audiences a
   where a.organization_id = app_hidden.current_org_id()
$$;
comment on function app_public.audiences_list() is 'audiences_list: the organization''s audiences, archived ones included, newest first.';

create function app_public.audiences_create(name text, description text, kind text, channel text, definition jsonb,
                                            exclude_opted_out boolean) returns jsonb
language plpgsql volatile as $$
declare
  a app_public.audiences;
  k text := coalesce(kind, case when definition is null then 'static' else 'dynamic' end);
begin
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
  'no definition = every contact).';

create function app_public.audiences_get(audience_id uuid) returns jsonb
language sql stable as $$
  select app_hidden.audience_json(app_hidden.audience_for(audience_id, false))
$$;
comment on function app_public.audiences_get(uuid) is 'audiences_get: the audience with its definition; 404 when absent.';

create function app_public.audiences_update(audience_id uuid, patch jsonb) returns jsonb
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
  'audiences_update: changes the fields present (definition replaced whole; is_archived false restores); kind cannot change.';

create function app_public.audiences_archive(audience_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, true);
begin
  update app_public.audiences x set archived_at = coalesce(x.archived_at, now()), updated_at = now()
   where x.organization_id = a.organization_id and x.id = a.id
  returning * into a;
  return app_hidden.audience_json(a);
end $$;
comment on function app_public.audiences_archive(uuid) is
  'audiences_archive: archives the audience (an archived one keeps its first archived_at); audiences_update restores.';

create function app_public.audiences_count(audience_id uuid) returns jsonb
language plpgsql stable as $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, false);
  n bigint;
begin
  if a.kind = 'dynamic' then
    n := app_hidden.audience_count(a.definition, 'definition.rules');
  else
    select count(*) into n
      from app_public.audience_members m
      join app_public.contacts c on c.organization_id = m.organization_id and c.id = m.contact_id
     where m.organization_id = a.organization_id and m.audience_id = a.id;
  end if;
  return jsonb_build_object('audience_id', a.id, 'count', n);
end $$;
comment on function app_public.audiences_count(uuid) is
  'audiences_count: how many contacts the audience holds now, within the caller''s reach (opted-out contacts included).';

create function app_public.audiences_preview_count(definition jsonb) returns jsonb
language sql stable as $$
  select jsonb_build_object('count', app_hidden.audience_count(definition, 'body.rules'))
$$;
comment on function app_public.audiences_preview_count(jsonb) is
  'audiences_preview_count: how many contacts a definition would select now, within the caller''s reach.';

create function app_public.audiences_list_members(audience_id uuid, after uuid, page_size int) returns jsonb
language plpgsql stable as $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, false);
  items jsonb;
  ids uuid[];
begin
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
comment on function app_public.audiences_list_members(uuid, uuid, int) is
  'audiences_list_members: one keyset page of the audience''s contacts within the caller''s reach, by id, after `after`; '
  'next_after is the last id of the page when more follow.';

create function app_public.audiences_add_member(audience_id uuid, contact_id uuid) returns jsonb
language plpgsql volatile as $$
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
comment on function app_public.audiences_add_member(uuid, uuid) is
  'audiences_add_member: adds a contact of the organization to a static audience; adding a member again changes nothing.';

create function app_public.audiences_remove_member(audience_id uuid, contact_id uuid) returns jsonb
language plpgsql volatile as $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, false);
begin
  perform app_hidden.require_static(a);
  perform app_hidden.require_contact(contact_id);
  delete from app_public.audience_members m
   where m.organization_id = a.organization_id and m.audience_id = a.id and m.contact_id = audiences_remove_member.contact_id;
  return jsonb_build_object('audience_id', a.id, 'contact_id', contact_id, 'is_member', false);
end $$;
comment on function app_public.audiences_remove_member(uuid, uuid) is
  'audiences_remove_member: removes a contact from a static audience; removing a non-member changes nothing.';

grant execute on function
  app_hidden.audience_rule_error(text, text),
  app_hidden.audience_filter(jsonb, text),
  app_hidden.audience_contacts(jsonb, text, uuid, int),
  app_hidden.audience_count(jsonb, text),
  app_hidden.audience_json(app_public.audiences),
  app_hidden.audience_for(uuid, boolean),
  app_hidden.require_static(app_public.audiences)
  to svc_request, svc_worker, svc_analyst;

grant execute on function
  app_public.audiences_list(),
  app_public.audiences_create(text, text, text, text, jsonb, boolean),
  app_public.audiences_get(uuid),
  app_public.audiences_update(uuid, jsonb),
  app_public.audiences_archive(uuid),
  app_public.audiences_count(uuid),
  app_public.audiences_preview_count(jsonb),
  app_public.audiences_list_members(uuid, uuid, int),
  app_public.audiences_add_member(uuid, uuid),
  app_public.audiences_remove_member(uuid, uuid)
  to svc_request;

reset role;
