--! Previous: sha1:5ec1e10daf43315abd2607121ce01e23802f0864
--! Hash: sha1:a3b16f7d771ed4d569fddf0e85a4d72167629832
--! Message: reliability and the receptionist

--! split: 200-background-organization.sql
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

--! split: 201-broadcast-schedule-done.sql
-- A schedule with no occurrence left reads `draft` once its last run has ended.
--
-- The spec's schedule states are `draft` (sends nothing) and `scheduled` (`next_fire_at` holds
-- the next send). A `once` schedule whose run completed, failed or was cancelled (or a recurring
-- one past its ends_on) has nothing left to send, yet it read `scheduled` with next_fire_at null.
-- While its run is sending it still reads `scheduled` (a send is under way); when the last run
-- of the broadcast ends it becomes `draft`, as after sequences_set_schedule: a start then finds
-- no occurrence left (a once schedule fires once), and a new sequences_set_schedule sends again.

set local role svc_owner;

create or replace function app_private.tg_broadcast_runs__schedule_done() returns trigger
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
begin
  update app_public.broadcast_schedules b set status = 'draft', updated_at = now()
   where b.organization_id = new.organization_id and b.sequence_id = new.sequence_id
     and b.status = 'scheduled' and b.next_fire_at is null
     and not exists (select 1 from app_public.broadcast_runs r
                      where r.organization_id = new.organization_id and r.sequence_id = new.sequence_id and r.status = 'sending');
  return null;
end $$;

comment on function app_private.tg_broadcast_runs__schedule_done() is
  'When a broadcast''s last sending run ends and its schedule has no occurrence left (next_fire_at null), the schedule reads draft.';

drop trigger if exists _500_schedule_done on app_public.broadcast_runs;
create trigger _500_schedule_done
  after insert or update of status on app_public.broadcast_runs
  for each row when (new.status <> 'sending')
  execute function app_private.tg_broadcast_runs__schedule_done();

reset role;

--! split: 202-broadcast-fire-retry.sql
-- A schedule that fails to fire is retried on its own, with backoff, and says so.
--
-- broadcast_fire (src/broadcasts/fire.ts) fires each due schedule in a transaction of its own;
-- one that raises (its audience's rules no longer resolve, a deadlock that outlived the retries,
-- …) no longer stops the sweep: app_private.broadcast_fire_failed records the error on the
-- schedule and when it is tried again (1 minute, doubling to at most an hour), and queues the
-- schedule's own job for then. The sweep passes it by until that time, so it never delays
-- another schedule, another organization's or the stalled-run recovery. The schedule read
-- (app_hidden.broadcast_schedule_json) shows it as `fire_retry`; a fire that succeeds, or any
-- change of the schedule (set, start, pause), clears it.

set local role svc_owner;

alter table app_public.broadcast_schedules
  add column if not exists fire_attempts int not null default 0,
  add column if not exists fire_error text,
  add column if not exists fire_retry_at timestamptz;

comment on column app_public.broadcast_schedules.fire_attempts is 'Failed attempts to fire the occurrence at next_fire_at (0 when none failed).';
comment on column app_public.broadcast_schedules.fire_error is 'Why the last attempt to fire next_fire_at failed, while it is being retried.';
comment on column app_public.broadcast_schedules.fire_retry_at is 'When the failed occurrence is tried again; the sweep passes the schedule by until then.';

create or replace function app_private.broadcast_fire_failed(organization_id uuid, sequence_id uuid, fire_at timestamptz, error text)
  returns timestamptz
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
#variable_conflict use_column
declare
  retry_at timestamptz;
begin
  update app_public.broadcast_schedules b
     set fire_attempts = b.fire_attempts + 1, fire_error = left(broadcast_fire_failed.error, 1000),
         fire_retry_at = now() + make_interval(secs => least(3600, 60 * power(2, least(b.fire_attempts, 6))))
   where b.organization_id = broadcast_fire_failed.organization_id and b.sequence_id = broadcast_fire_failed.sequence_id
     and b.status = 'scheduled' and b.next_fire_at = broadcast_fire_failed.fire_at
  returning b.fire_retry_at into retry_at;
  if retry_at is not null then
    perform app_private.add_job('broadcast_fire', '{}', 'broadcast_fire:' || broadcast_fire_failed.sequence_id, retry_at);
  end if;
  return retry_at;
end $$;

comment on function app_private.broadcast_fire_failed(uuid, uuid, timestamptz, text) is
  'Records that firing the occurrence fire_at of a schedule failed (attempts, error) and when it is tried again (1 minute doubling to 1 hour), with its job queued then; NULL when the schedule no longer waits for that occurrence.';
revoke all on function app_private.broadcast_fire_failed(uuid, uuid, timestamptz, text) from public;

create or replace function app_private.tg_broadcast_schedules__fire_retry_reset() returns trigger
  language plpgsql
  as $$
begin
  new.fire_attempts := 0;
  new.fire_error := null;
  new.fire_retry_at := null;
  return new;
end $$;

comment on function app_private.tg_broadcast_schedules__fire_retry_reset() is
  'A schedule moved to another occurrence or state (fired, set, started, paused) has no failed fire to retry.';

drop trigger if exists _100_fire_retry_reset on app_public.broadcast_schedules;
create trigger _100_fire_retry_reset
  before update of next_fire_at, status on app_public.broadcast_schedules
  for each row when (new.next_fire_at is distinct from old.next_fire_at or new.status is distinct from old.status)
  execute function app_private.tg_broadcast_schedules__fire_retry_reset();

create or replace function app_hidden.broadcast_schedule_json(b app_public.broadcast_schedules, page integer, page_size integer) returns jsonb
    language plpgsql stable
    as $$
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
    'fire_retry', case when b.fire_attempts > 0 then jsonb_build_object('attempts', b.fire_attempts,
                    'next_attempt_at', b.fire_retry_at, 'last_error', b.fire_error) end,
    'created_at', b.created_at, 'updated_at', b.updated_at,
    'runs', runs, 'runs_total', total, 'page', page, 'limit', page_size);
end $$;

reset role;

--! split: 203-delivery-retries.sql
-- A temporary delivery failure is retried as a mail server would, for hours; only a permanent
-- refusal fails the message.
--
-- Temporary: the connection refused, reset or timed out, any SMTP 4xx, an HTTP provider's 429 or
-- 5xx (src/delivery: a transport throws PermanentDeliveryError only for a permanent refusal). The
-- message stays queued with its attempts, last error and next attempt, and the delivery queue
-- (task deliver_message, job key message:<id>) tries it again after 1 minute, doubling up to an
-- hour, for five days from when it was queued (Postfix's maximal_queue_lifetime), then fails it.
-- app_private.delivery_retry_settings holds the schedule (tests shorten it). A sequence or
-- broadcast message refused for now leaves its step run `retrying` and its enrollment on the
-- step; app_private.delivery_settle records the step (sent or failed) and moves the enrollment on
-- when the queue is done with it, and a broadcast run stays `sending` until then.

set local role svc_owner;

alter table app_private.outgoing_messages
  add column if not exists attempts int not null default 0,
  add column if not exists next_attempt_at timestamptz;
comment on column app_private.outgoing_messages.attempts is 'Deliveries refused for now (temporary failures) so far; error holds the last one''s reason.';
comment on column app_private.outgoing_messages.next_attempt_at is 'When a message refused for now is tried again (its deliver_message job runs then).';

alter table app_public.step_runs drop constraint if exists step_runs_status_check;
alter table app_public.step_runs add constraint step_runs_status_check
  check (status in ('sending', 'retrying', 'sent', 'skipped', 'failed', 'unknown', 'waited'));
comment on table app_public.step_runs is 'Each (enrollment, step) the engine reached, at most once: sending while its message is with the transport, retrying while the delivery queue retries a temporary refusal, then sent, failed or unknown (the process died in between: never sent again), skipped (with reason: suppressed, opted_out, no_consent, missing_address) or waited.';

create table if not exists app_private.delivery_retry_settings (
  only_row boolean primary key default true check (only_row),
  first_seconds int not null default 60 check (first_seconds > 0),
  max_seconds int not null default 3600 check (max_seconds > 0),
  lifetime_seconds int not null default 432000 check (lifetime_seconds > 0)
);
comment on table app_private.delivery_retry_settings is 'The retry schedule of temporary delivery failures (one row): first wait, doubling up to max_seconds, for lifetime_seconds after the message was queued (default 1 minute, 1 hour, 5 days).';
insert into app_private.delivery_retry_settings default values on conflict do nothing;

create or replace function app_private.delivery_retry_at(attempts int, queued_at timestamptz) returns timestamptz
  language sql stable
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
  select case when now() < queued_at + make_interval(secs => s.lifetime_seconds)
              then now() + make_interval(secs => least(s.max_seconds, s.first_seconds * power(2, least(greatest(attempts, 1) - 1, 20))))
         end
    from app_private.delivery_retry_settings s
$$;
comment on function app_private.delivery_retry_at(int, timestamptz) is 'When a message refused for now `attempts` times is tried again; NULL once its lifetime (from queued_at) has passed.';

create or replace function app_private.delivery_settle(org_id uuid, message_id uuid, error text) returns void
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
declare
  m app_private.outgoing_messages;
  sr app_public.step_runs;
  e app_public.enrollments;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id;
  if not found or m.meta->>'enrollment_id' is null then
    return;
  end if;
  update app_public.step_runs r
     set status = case when error is null then 'sent' else 'failed' end, reason = left(error, 500), updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = (m.meta->>'enrollment_id')::uuid and r.step_key = m.meta->>'step_key'
     and r.message_id = m.id and r.status = 'retrying'
  returning * into sr;
  if not found then
    return;
  end if;
  select * into e from app_public.enrollments x where x.organization_id = org_id and x.id = sr.enrollment_id for update;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
  values (org_id, sr.enrollment_id, case when error is null then 'sent' else 'failed' end, sr.step_key, m.id,
          case when error is not null then 'transport_error' end);
  if e.status = 'active' and e.current_step_key = sr.step_key then
    perform app_private.advance_enrollment(org_id, e.id);
  end if;
  if e.run_id is not null then
    update app_public.broadcast_runs r
       set sent = r.sent + (error is null)::int, failed = r.failed + (error is not null)::int, progress_at = now()
     where r.organization_id = org_id and r.id = e.run_id;
    -- the run's job ends it once nothing of it is left retrying (app_private.broadcast_finish)
    perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', org_id, 'run_id', e.run_id),
      'broadcast_run:' || e.run_id, now());
  end if;
end $$;
comment on function app_private.delivery_settle(uuid, uuid, text) is 'A message the delivery queue retried is done (sent, or failed with error): its retrying step run recorded, the enrollment moved on, its broadcast run counted and its job queued to end the run.';
revoke all on function app_private.delivery_settle(uuid, uuid, text) from public;

create or replace function app_private.delivery_retry(org_id uuid, message_id uuid, error text) returns timestamptz
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
declare
  m app_private.outgoing_messages;
  at timestamptz;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id for update;
  if not found or m.status <> 'queued' then
    return null;
  end if;
  at := app_private.delivery_retry_at(m.attempts + 1, m.created_at);
  update app_private.outgoing_messages x
     set attempts = x.attempts + 1, error = left(delivery_retry.error, 1000), next_attempt_at = at,
         status = case when at is null then 'failed' else x.status end
   where x.organization_id = org_id and x.id = m.id;
  if at is null then
    perform app_private.delivery_settle(org_id, m.id, 'gave up after ' || (m.attempts + 1) || ' attempts: ' || left(delivery_retry.error, 400));
  else
    perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', org_id, 'message_id', m.id), 'message:' || m.id, at);
  end if;
  return at;
end $$;
comment on function app_private.delivery_retry(uuid, uuid, text) is 'A queued message refused for now: attempts and last error kept, its deliver_message job queued for the next attempt of the retry schedule; past the schedule''s lifetime, failed (and settled). Answers the next attempt, or NULL.';
revoke all on function app_private.delivery_retry(uuid, uuid, text) from public;

create or replace function app_private.delivery_retry_later(org_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text)
  returns void
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
begin
  update app_public.step_runs r set status = 'retrying', reason = left(error, 500), updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = delivery_retry_later.enrollment_id
     and r.step_key = delivery_retry_later.step_key and r.message_id = delivery_retry_later.message_id and r.status = 'sending';
  if found then
    perform app_private.delivery_retry(org_id, message_id, error);
  end if;
end $$;
comment on function app_private.delivery_retry_later(uuid, uuid, text, uuid, text) is 'A sequence or broadcast message refused for now: its step run retrying (the enrollment stays on the step) and the message handed to the delivery queue''s retries.';
revoke all on function app_private.delivery_retry_later(uuid, uuid, text, uuid, text) from public;

create or replace function app_private.delivery_enrollment_ended(org_id uuid, message_id uuid) returns boolean
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
declare
  m app_private.outgoing_messages;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id;
  if m.meta->>'enrollment_id' is null
     or exists (select 1 from app_public.enrollments e where e.organization_id = org_id
                   and e.id = (m.meta->>'enrollment_id')::uuid and e.status in ('active', 'paused')) then
    return false;
  end if;
  update app_private.outgoing_messages x set status = 'failed', error = 'not sent: the enrollment ended while it was retried', next_attempt_at = null
   where x.organization_id = org_id and x.id = m.id and x.status = 'queued';
  update app_public.step_runs r set status = 'failed', reason = 'enrollment ended while retrying', updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = (m.meta->>'enrollment_id')::uuid and r.message_id = m.id and r.status = 'retrying';
  return true;
end $$;
comment on function app_private.delivery_enrollment_ended(uuid, uuid) is 'Before a retry: whether the message belongs to an enrollment that has ended (cancelled, unsubscribed, completed) meanwhile; if so it is failed, never sent.';
revoke all on function app_private.delivery_enrollment_ended(uuid, uuid) from public;

-- a run whose recipients' messages are still retried stays sending; delivery_settle queues its
-- job again when each is done, and the last one's ends it
create or replace function app_private.broadcast_finish(organization_id uuid, run_id uuid) returns void
    language sql security definer
    set search_path to 'pg_catalog', 'public', 'pg_temp'
    as $$
  update app_public.broadcast_runs x
     set status = 'completed', finished_at = now(),
         cancelled = greatest(0, x.recipients - x.sent - x.skipped - x.failed - x.unknown)
   where x.organization_id = broadcast_finish.organization_id and x.id = broadcast_finish.run_id and x.status = 'sending'
     and not exists (select 1 from app_public.enrollments e
                       join app_public.step_runs sr on sr.organization_id = e.organization_id and sr.enrollment_id = e.id
                                                   and sr.step_key = e.current_step_key and sr.status = 'retrying'
                      where e.organization_id = x.organization_id and e.run_id = x.id and e.status in ('active', 'paused'))
$$;

create or replace function app_private.record_enrollment_messages(org_id uuid, results jsonb, OUT sent_count integer, OUT failed_count integer) RETURNS record
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

create or replace function app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text, sink_channels text[] DEFAULT '{}'::text[]) RETURNS jsonb
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

reset role;

--! split: 250-worker-processes.sql
-- Worker processes that announce themselves, so that a live one can free the work of a dead one.
--
-- graphile-worker locks a job with its pool's id (locked_by) and frees a lock only after four
-- hours: a worker killed outright (SIGKILL, out of memory, the machine lost) would leave its jobs,
-- and the sequence steps and broadcast runs behind them, waiting that long. Each worker process
-- (src/worker.ts) therefore:
--   * holds a session advisory lock on its own id (app_private.worker_process_key) on a connection
--     of its own, for as long as it lives: the lock goes when its connection closes, which the
--     operating system does at once for a killed process;
--   * keeps a row here (app_private.worker_processes) naming its graphile-worker pools, seen_at
--     renewed every few seconds;
--   * every few seconds, and once when it starts, runs app_private.worker_processes_sweep, which
--     finds the processes that died and frees what they held.
-- A process is dead when its lock is free although it took it since the database last started
-- (a database restart frees every lock: a live process takes its lock again when it reconnects,
-- so a lock taken before the restart proves nothing), or when it has not been seen for 30 seconds
-- while the database has been up for longer than that.

-- The sweep frees a dead process's jobs through graphile-worker's own function, as svc_owner.
grant execute on function graphile_worker.force_unlock_workers(text[]) to svc_owner;
grant update on graphile_worker._private_job_queues to svc_owner;

set local role svc_owner;

create table if not exists app_private.worker_processes (
  id text primary key,
  -- graphile-worker's pool ids (the locked_by of the jobs this process runs)
  pool_ids text[] not null default '{}',
  host text,
  pid int,
  started_at timestamptz not null default now(),
  -- when this process last took its advisory lock (at start and after each reconnect)
  locked_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);
comment on table app_private.worker_processes is
  'Worker processes alive (or not yet known dead): each holds an advisory lock on its id and renews seen_at; app_private.worker_processes_sweep frees the work of a dead one.';

-- The step run's claimer: the worker process whose connection inserted it (its connections carry
-- the setting svc.worker_process), so that the sweep can settle the messages a dead process held.
alter table app_public.step_runs add column if not exists claimed_by text default nullif(current_setting('svc.worker_process', true), '');
comment on column app_public.step_runs.claimed_by is
  'The worker process (app_private.worker_processes) that claimed the step run; NULL when claimed outside a worker.';
create index if not exists step_runs_sending_by_claimer on app_public.step_runs (claimed_by) where status = 'sending';

-- The advisory lock key of a worker process.
create or replace function app_private.worker_process_key(id text) returns bigint
  language sql immutable as $$ select hashtextextended('svc.worker_process:' || id, 0) $$;

-- A process announces itself on its own connection: its lock taken (waits for none: the id is
-- new, or its own after a reconnect), its row written or renewed.
create or replace function app_private.worker_process_announce(id text, pool_ids text[], host text, pid int) returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform pg_advisory_lock(app_private.worker_process_key(worker_process_announce.id));
  insert into app_private.worker_processes as p (id, pool_ids, host, pid)
  values (worker_process_announce.id, worker_process_announce.pool_ids, worker_process_announce.host, worker_process_announce.pid)
  on conflict on constraint worker_processes_pkey do update
     set pool_ids = (select array_agg(distinct x) from unnest(p.pool_ids || excluded.pool_ids) x),
         locked_at = now(), seen_at = now();
end $$;
comment on function app_private.worker_process_announce(text, text[], text, int) is
  'A worker process takes its advisory lock and writes (or renews) its row, with its graphile-worker pool ids; on its own connection, at start and after each reconnect.';

-- Answers false when the row is gone (the process was taken for dead): it announces itself again.
create or replace function app_private.worker_process_seen(id text) returns boolean
  language sql security definer set search_path = pg_catalog, public, pg_temp as $$
  with seen as (update app_private.worker_processes p set seen_at = now() where p.id = worker_process_seen.id returning 1)
  select exists (select 1 from seen)
$$;

-- A process stopped cleanly: nothing of its is left to free.
create or replace function app_private.worker_process_gone(id text) returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  delete from app_private.worker_processes p where p.id = worker_process_gone.id;
  perform pg_advisory_unlock(app_private.worker_process_key(worker_process_gone.id));
end $$;

-- `self`: the caller, which runs it on the connection holding its own lock (where its lock would
-- look free, a session's advisory locks being its own to take again).
create or replace function app_private.worker_processes_sweep(self text) returns text[]
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  p app_private.worker_processes;
  db_up_since timestamptz := pg_postmaster_start_time();
  dead text[] := '{}';
  pools text[] := '{}';
  g record;
begin
  for p in select * from app_private.worker_processes x where x.id is distinct from self order by x.id for update skip locked loop
    -- the lock is taken for this transaction only when free: held by a live process, it is not
    if (p.locked_at > db_up_since and pg_try_advisory_xact_lock(app_private.worker_process_key(p.id)))
       or (p.seen_at < now() - interval '30 seconds' and db_up_since < now() - interval '30 seconds') then
      dead := dead || p.id;
      pools := pools || p.pool_ids;
    end if;
  end loop;
  if cardinality(dead) = 0 then
    return dead;
  end if;
  -- The sequence messages a dead process held with the transport: unknown (never handed over
  -- again), their enrollments moved on, as the step's claim does for a run sending past its
  -- bound. A broadcast run settles its own (app_private.broadcast_claim_batch, when its job runs
  -- again).
  for g in
    with gone as (
      update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
        from app_public.enrollments e
       where sr.claimed_by = any(dead) and sr.status = 'sending'
         and e.organization_id = sr.organization_id and e.id = sr.enrollment_id and e.run_id is null
         and e.current_step_key = sr.step_key
      returning sr.organization_id, sr.enrollment_id, sr.step_key, sr.message_id
    ), messages as (
      update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
        from gone
       where m.organization_id = gone.organization_id and m.id = gone.message_id and m.status = 'queued'
    ), logged as (
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
      select gone.organization_id, gone.enrollment_id, 'unknown', gone.step_key, gone.message_id, 'interrupted' from gone
    )
    select gone.organization_id, array_agg(gone.enrollment_id) as ids from gone group by gone.organization_id
  loop
    perform app_private.advance_enrollments(g.organization_id, g.ids);
  end loop;
  -- their jobs run again now, rather than when graphile-worker's four-hour lock expires
  perform graphile_worker.force_unlock_workers(pools);
  delete from app_private.worker_processes x where x.id = any(dead);
  return dead;
end $$;
comment on function app_private.worker_processes_sweep(text) is
  'Finds the worker processes that died (lock free since taken, or unseen for 30 s) and frees their work: sequence messages they held with the transport made unknown and their enrollments moved on, their graphile-worker jobs unlocked, their rows deleted. Answers their ids.';

revoke all on table app_private.worker_processes from public;
revoke execute on function app_private.worker_process_announce(text, text[], text, int) from public;
revoke execute on function app_private.worker_process_seen(text) from public;
revoke execute on function app_private.worker_process_gone(text) from public;
revoke execute on function app_private.worker_processes_sweep(text) from public;

reset role;

--! split: 255-broadcasts-handed-messages.sql
-- A broadcast run's batch with the transport, message by message: what a crash puts in doubt.
--
-- A run's batch (broadcast_runs.in_flight, up to the batch size) is claimed whole, but its
-- messages go to the transport a few at a time (src/broadcasts/run.ts: at most IN_FLIGHT handed
-- over and not yet answered). Before the sender hands a message over it marks it handed
-- (app_private.broadcast_handed, committed to disk), and each answer is written to its mark as it
-- comes, in the same small transactions (app_private.broadcast_mark_handed), on a connection of
-- their own so that the claim of the next batch never holds them up. The batch's record
-- (broadcast_record_batch) deletes its marks. When a sender died (app_private.broadcast_settle_in_flight):
--   * a message marked with its answer is recorded with that answer (sent or failed);
--   * a message marked without one may have gone: `unknown`, never handed over again;
--   * a message never marked never left: released (its step run, message and unsubscribe token
--     removed) and claimed again, from the start of the run's cursor.
-- So a worker killed outright leaves at most IN_FLIGHT messages `unknown`, and the rest of its
-- batch is sent, once, by whoever sends the run next.

set local role svc_owner;

create table if not exists app_private.broadcast_handed (
  organization_id uuid not null,
  enrollment_id uuid not null,
  run_id uuid not null,
  -- the transport's answer as broadcast_record_batch takes it ({enrollment_id, step_key,
  -- message_id, error, provider_id}); NULL while the transport has the message
  answer jsonb,
  primary key (organization_id, enrollment_id)
);
comment on table app_private.broadcast_handed is
  'Messages of a broadcast run''s batch in flight that its sender handed to the transport, with the answer once it came; deleted when the batch is recorded. What a dead sender leaves: marked without an answer is unknown, unmarked was never handed over.';
create index if not exists broadcast_handed_by_run on app_private.broadcast_handed (organization_id, run_id);
revoke all on table app_private.broadcast_handed from public;

-- One small transaction of the sender's: `handing` marked handed (these go to the transport once
-- it commits: to disk, then), `answers` written to their marks.
create or replace function app_private.broadcast_mark_handed(organization_id uuid, run_id uuid, handing uuid[], answers jsonb)
  returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
begin
  perform set_config('synchronous_commit', case when cardinality(handing) > 0 then 'on' else 'off' end, true);
  insert into app_private.broadcast_handed as h (organization_id, enrollment_id, run_id, answer)
  select broadcast_mark_handed.organization_id, i, broadcast_mark_handed.run_id, null from unnest(handing) i
  union all
  select broadcast_mark_handed.organization_id, (a->>'enrollment_id')::uuid, broadcast_mark_handed.run_id, a
    from jsonb_array_elements(answers) a
  on conflict (organization_id, enrollment_id) do update set answer = excluded.answer;
end $$;
comment on function app_private.broadcast_mark_handed(uuid, uuid, uuid[], jsonb) is
  'A broadcast sender''s messages about to go to the transport marked handed (committed to disk first), and the answers come meanwhile written to their marks.';
revoke execute on function app_private.broadcast_mark_handed(uuid, uuid, uuid[], jsonb) from public;

-- A dead sender's batch in flight, message by message (see above); answers how many became unknown.
create or replace function app_private.broadcast_settle_in_flight(organization_id uuid, run_id uuid, cancelling boolean) returns integer
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  org constant uuid := broadcast_settle_in_flight.organization_id;
  run constant uuid := broadcast_settle_in_flight.run_id;
  flight uuid[];
  answered jsonb;
  doubt uuid[];
  unsent uuid[];
  lost uuid[];
  c record;
begin
  select r.in_flight into flight from app_public.broadcast_runs r where r.organization_id = org and r.id = run;
  if cardinality(flight) = 0 then
    delete from app_private.broadcast_handed h where h.organization_id = org and h.run_id = run;
    return 0;
  end if;
  select coalesce(jsonb_agg(h.answer) filter (where h.answer is not null), '[]'),
         coalesce(array_agg(h.enrollment_id) filter (where h.answer is null), '{}')
    into answered, doubt
    from app_private.broadcast_handed h
   where h.organization_id = org and h.run_id = run and h.enrollment_id = any(flight);
  unsent := array(select f from unnest(flight) f
                   where not exists (select 1 from app_private.broadcast_handed h where h.organization_id = org and h.enrollment_id = f));

  -- answered: recorded as the sender would have
  select * into c from app_private.record_enrollment_messages(org, answered);

  -- handed, no answer: may have gone
  with gone as (
    update app_public.step_runs sr set status = 'unknown', reason = 'interrupted', updated_at = now()
      from app_public.enrollments e
     where e.organization_id = org and e.id = any(doubt)
       and sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key
       and sr.status = 'sending'
    returning sr.enrollment_id, sr.step_key, sr.message_id
  ), messages as (
    update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
      from gone
     where m.organization_id = org and m.id = gone.message_id and m.status = 'queued'
  ), logged as (
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select org, gone.enrollment_id, 'unknown', gone.step_key, gone.message_id, 'interrupted' from gone
  )
  select coalesce(array_agg(gone.enrollment_id), '{}') into lost from gone;
  if cancelling then
    perform app_private.end_enrollments_set(org, lost, 'cancelled', 'run_cancelled');
  else
    perform app_private.advance_enrollments(org, lost);
  end if;

  -- never handed over: released, to be claimed again (the claim starts over from the run's
  -- first recipient; what was sent is no longer waiting to be)
  with runs as (
    delete from app_public.step_runs sr
     using app_public.enrollments e
     where e.organization_id = org and e.id = any(unsent)
       and sr.organization_id = e.organization_id and sr.enrollment_id = e.id and sr.step_key = e.current_step_key
       and sr.status = 'sending'
    returning sr.message_id
  ), tokens as (
    delete from app_private.unsubscribe_tokens t using runs where t.organization_id = org and t.message_id = runs.message_id
  )
  delete from app_private.outgoing_messages m using runs where m.organization_id = org and m.id = runs.message_id and m.status = 'queued';

  delete from app_private.broadcast_handed h where h.organization_id = org and h.run_id = run;
  update app_public.broadcast_runs r
     set in_flight = '{}', unknown = r.unknown + cardinality(lost), sent = r.sent + c.sent_count, failed = r.failed + c.failed_count,
         claimed_through = case when cardinality(unsent) > 0 then null else r.claimed_through end
   where r.organization_id = org and r.id = run;
  return cardinality(lost);
end $$;
comment on function app_private.broadcast_settle_in_flight(uuid, uuid, boolean) is
  'A dead sender''s in_flight batch, message by message: answered marks recorded, handed ones without an answer unknown (event; enrollments moved on, or cancelled with the run), never handed ones released to be claimed again (the cursor back to the start); the checkpoint emptied; answers how many became unknown.';

-- The batch's answers recorded as before (000031), its marks deleted with them.
create or replace function app_private.broadcast_record_batch(organization_id uuid, run_id uuid, results jsonb, promote boolean default false)
  returns integer
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  c record;
  promoted int;
  eids uuid[] := array(select (x->>'enrollment_id')::uuid from jsonb_array_elements(results) x);
begin
  perform set_config('synchronous_commit', 'off', true);
  select case when promote then cardinality(r.prepared) else 0 end into promoted from app_public.broadcast_runs r
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id for update;
  select * into c from app_private.record_enrollment_messages(broadcast_record_batch.organization_id, results);
  delete from app_private.broadcast_handed h where h.organization_id = broadcast_record_batch.organization_id and h.enrollment_id = any(eids);
  update app_public.broadcast_runs r
     set in_flight = array(select f from unnest(r.in_flight) f where not f = any(eids))
                     || case when promote then r.prepared else '{}' end,
         prepared = case when promote then '{}' else r.prepared end,
         prepared_after = case when promote then null else r.prepared_after end,
         progress_at = now(), sent = r.sent + c.sent_count, failed = r.failed + c.failed_count
   where r.organization_id = broadcast_record_batch.organization_id and r.id = broadcast_record_batch.run_id;
  return promoted;
end $$;

-- The claim (000031) with a dead sender's batch settled first, message by message: what it never
-- handed over is claimed again, so the cursor may have moved back to the start.
create or replace function app_private.broadcast_claim_batch(organization_id uuid, run_id uuid, size int, base_url text,
  sink_channels text[] default '{}', following boolean default false) returns jsonb
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  r app_public.broadcast_runs;
  s app_public.sequences;
  ids uuid[];
  c record;
begin
  select * into r from app_public.broadcast_runs x
   where x.organization_id = broadcast_claim_batch.organization_id and x.id = broadcast_claim_batch.run_id for update;
  if not found or r.status <> 'sending' then
    return jsonb_build_object('action', 'none');
  end if;
  if not following then
    -- a prepared batch first (its cursor), then the batch in flight (which may move it back)
    if cardinality(r.prepared) > 0 then
      perform app_private.broadcast_release_prepared(r.organization_id, r.id);
    end if;
    if cardinality(r.in_flight) > 0 then
      perform app_private.broadcast_settle_in_flight(r.organization_id, r.id, false);
    end if;
    select * into r from app_public.broadcast_runs x where x.organization_id = r.organization_id and x.id = r.id;
  elsif cardinality(r.prepared) > 0 then
    -- a sender records (and so hands over or releases) its prepared batch before it claims again
    raise exception 'broadcast_claim_batch: run % has a prepared batch already', r.id;
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
    if following and cardinality(r.in_flight) > 0 then
      return jsonb_build_object('action', 'wait');
    end if;
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

  select * into c from app_private.claim_enrollment_messages(r.organization_id, s, ids, base_url, sink_channels, r.id);
  update app_public.broadcast_runs x
     set in_flight = case when following then x.in_flight else c.flight end,
         prepared = case when following then c.flight else '{}' end,
         prepared_after = case when following and cardinality(c.flight) > 0 then r.claimed_through end,
         progress_at = now(), claimed_through = ids[cardinality(ids)],
         sent = x.sent + c.sent_count, skipped = x.skipped + c.skipped_count
   where x.organization_id = r.organization_id and x.id = r.id;
  -- nothing goes to the transport before it is marked handed (broadcast_mark_handed, to disk):
  -- the claim need not wait for the disk
  perform set_config('synchronous_commit', 'off', true);
  return jsonb_build_object('action', 'batch', 'messages', c.messages, 'handled', cardinality(ids));
end $$;

-- The cancel (000031) with the run read again after a dead sender's batch is settled: the
-- messages it never handed over are active again and cancelled with the rest (the batch read
-- before the settle would have left them out, neither sent nor cancelled).
create or replace function app_hidden.broadcast_cancel_runs(sequence_id uuid, run_id uuid) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
      -- settled: what it never handed over is active again, to be cancelled below with the rest
      select * into r from app_public.broadcast_runs x where x.organization_id = r.organization_id and x.id = r.id;
    end if;
    perform app_private.broadcast_release_prepared(r.organization_id, r.id);
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

reset role;

--! split: 300-inbound-claims.sql
-- Inbound routing identifiers: a sending domain or a phone number belongs to one organization.
--
-- Inbound email is routed by the domain of its address, inbound SMS and calls by the number they
-- were sent to. A domain or number two organizations hold sends one organization's mail to the
-- other and drops texts (a STOP among them), so app_private.inbound_claims holds one row per
-- identifier in use, naming the organization that holds it; its primary key is the constraint.
-- Triggers on the tables that hold identifiers (organizations.sending_email_domain and
-- default_sms_number, locations.sms_number, which the voice platform's calls use too) keep it:
-- a claim of an identifier another organization holds is refused (409 domain_in_use or
-- number_in_use), an identifier no longer held by anyone in its organization is released.
-- Within one organization a number may serve as the default and as a location's number.
-- Widget and form ids route the public chat and form endpoints: their unique indexes are below.

set local role svc_owner;

create table if not exists app_private.inbound_claims (
  identifier text primary key,
  kind text not null check (kind in ('email_domain', 'phone_number')),
  -- deferred: an organization's insert claims its identifiers before its row exists
  organization_id uuid not null references app_public.organizations (id) on delete cascade deferrable initially deferred,
  claimed_at timestamptz not null default now()
);
comment on table app_private.inbound_claims is
  'Every sending domain (lower case) and phone number (E.164) in use, with the one organization that holds it; kept by app_private.claim_inbound_identifiers.';
create index if not exists inbound_claims_by_organization on app_private.inbound_claims (organization_id);

-- The identifier as routing compares it: domains case-insensitively, numbers as stored (E.164).
create or replace function app_private.inbound_identifier(kind text, value text) returns text
  language sql immutable parallel safe as $$
  select case when nullif(btrim(value), '') is null then null
              when kind = 'email_domain' then lower(btrim(value)) else btrim(value) end
$$;

-- Does anything of the organization still hold the identifier (its default or a location)?
create or replace function app_private.inbound_identifier_held(org uuid, ident text) returns boolean
  language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.organizations o
                  where o.id = org and (app_private.inbound_identifier('email_domain', o.sending_email_domain) = ident
                                        or o.default_sms_number = ident))
      or exists (select 1 from app_public.locations l where l.organization_id = org and l.sms_number = ident)
$$;

-- Claims one identifier for an organization: 409 when another organization holds it. The
-- insert waits for a concurrent claim of the same identifier, so exactly one of two wins.
create or replace function app_private.claim_inbound_identifier(org uuid, kind text, value text) returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  ident text := app_private.inbound_identifier(kind, value);
  holder uuid;
begin
  if ident is null then return; end if;
  insert into app_private.inbound_claims as c (identifier, kind, organization_id) values (ident, kind, org)
  on conflict (identifier) do update set organization_id = c.organization_id
  returning c.organization_id into holder;
  if holder <> org then
    if kind = 'email_domain' then
      perform app_hidden.raise_error(409, 'domain_in_use',
        format('The sending domain %s is in use by another organization', ident), jsonb_build_object('identifier', ident));
    else
      perform app_hidden.raise_error(409, 'number_in_use',
        format('The number %s is in use by another organization', ident), jsonb_build_object('identifier', ident));
    end if;
  end if;
end $$;
comment on function app_private.claim_inbound_identifier(uuid, text, text) is
  'Claims a sending domain or phone number for an organization; 409 domain_in_use / number_in_use when another organization holds it.';

-- Releases an identifier nothing of the organization holds any more.
create or replace function app_private.release_inbound_identifier(org uuid, kind text, value text) returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  ident text := app_private.inbound_identifier(kind, value);
begin
  if ident is null then return; end if;
  delete from app_private.inbound_claims c
   where c.identifier = ident and c.organization_id = org
     and not app_private.inbound_identifier_held(org, ident);
end $$;

-- The triggers: claims before the row is written (a refusal writes nothing), releases after.
create or replace function app_private.organizations_claim_identifiers() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'INSERT' or new.sending_email_domain is distinct from old.sending_email_domain then
    perform app_private.claim_inbound_identifier(new.id, 'email_domain', new.sending_email_domain);
  end if;
  if tg_op = 'INSERT' or new.default_sms_number is distinct from old.default_sms_number then
    perform app_private.claim_inbound_identifier(new.id, 'phone_number', new.default_sms_number);
  end if;
  return new;
end $$;

create or replace function app_private.organizations_release_identifiers() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.sending_email_domain is distinct from old.sending_email_domain then
    perform app_private.release_inbound_identifier(old.id, 'email_domain', old.sending_email_domain);
  end if;
  if new.default_sms_number is distinct from old.default_sms_number then
    perform app_private.release_inbound_identifier(old.id, 'phone_number', old.default_sms_number);
  end if;
  return null;
end $$;

create or replace function app_private.locations_claim_number() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'INSERT' or new.sms_number is distinct from old.sms_number or new.organization_id <> old.organization_id then
    perform app_private.claim_inbound_identifier(new.organization_id, 'phone_number', new.sms_number);
  end if;
  return new;
end $$;

create or replace function app_private.locations_release_number() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'DELETE' or new.sms_number is distinct from old.sms_number or new.organization_id <> old.organization_id then
    perform app_private.release_inbound_identifier(old.organization_id, 'phone_number', old.sms_number);
  end if;
  return null;
end $$;

-- Existing databases may hold an identifier in two organizations already: the organization
-- that has held it longest (created first) keeps it; the newer one's is cleared, and each
-- clearing is logged (a WARNING in the migration's output) for the operator to follow up.
do $$
declare
  r record;
  holder uuid;
begin
  for r in
    select * from (
      select o.id as org, o.created_at, 'email_domain' as kind,
             app_private.inbound_identifier('email_domain', o.sending_email_domain) as ident, 'organization' as what, o.id as row_id
        from app_public.organizations o where nullif(btrim(o.sending_email_domain), '') is not null
      union all
      select o.id, o.created_at, 'phone_number', btrim(o.default_sms_number), 'organization', o.id
        from app_public.organizations o where nullif(btrim(o.default_sms_number), '') is not null
      union all
      select l.organization_id, o.created_at, 'phone_number', btrim(l.sms_number), 'location', l.id
        from app_public.locations l join app_public.organizations o on o.id = l.organization_id
       where nullif(btrim(l.sms_number), '') is not null) x
    order by x.created_at, x.org
  loop
    insert into app_private.inbound_claims as c (identifier, kind, organization_id) values (r.ident, r.kind, r.org)
    on conflict (identifier) do update set organization_id = c.organization_id
    returning c.organization_id into holder;
    continue when holder = r.org;
    raise warning 'inbound_claims: % % was held by organizations % and %; % keeps it, cleared on % %',
      r.kind, r.ident, holder, r.org, holder, r.what, r.row_id;
    if r.what = 'location' then
      update app_public.locations set sms_number = null where organization_id = r.org and id = r.row_id;
    elsif r.kind = 'email_domain' then
      update app_public.organizations set sending_email_domain = null where id = r.org;
    else
      update app_public.organizations set default_sms_number = null where id = r.org;
    end if;
  end loop;
end $$;

drop trigger if exists _300_claim_identifiers on app_public.organizations;
create trigger _300_claim_identifiers before insert or update of sending_email_domain, default_sms_number
  on app_public.organizations for each row execute function app_private.organizations_claim_identifiers();
drop trigger if exists _300_release_identifiers on app_public.organizations;
create trigger _300_release_identifiers after update of sending_email_domain, default_sms_number
  on app_public.organizations for each row execute function app_private.organizations_release_identifiers();
drop trigger if exists _300_claim_number on app_public.locations;
create trigger _300_claim_number before insert or update of sms_number, organization_id
  on app_public.locations for each row execute function app_private.locations_claim_number();
drop trigger if exists _300_release_number on app_public.locations;
create trigger _300_release_number after update of sms_number, organization_id or delete
  on app_public.locations for each row execute function app_private.locations_release_number();

-- An operator moves a domain or number from the organization that holds it to another: every
-- holder in the old organization lets go and the new one takes it, in one transaction, so
-- inbound traffic is routed to one of them at every moment. to_location: the number becomes
-- that location's; otherwise the organization's default (or its sending domain).
create or replace function app_private.move_inbound_identifier(kind text, value text, to_org uuid, to_location uuid default null)
  returns jsonb language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  ident text := app_private.inbound_identifier(kind, value);
  old_org uuid;
begin
  if ident is null or kind not in ('email_domain', 'phone_number') then
    perform app_hidden.raise_error(422, 'invalid_identifier', 'Name a sending domain or a phone number');
  end if;
  if kind = 'email_domain' and to_location is not null then
    perform app_hidden.raise_error(422, 'invalid_identifier', 'A sending domain belongs to an organization, not a location');
  end if;
  perform 1 from app_public.organizations o where o.id = to_org for update;
  if not found then perform app_hidden.raise_error(404, 'not_found', 'No such organization'); end if;
  if to_location is not null then
    perform 1 from app_public.locations l where l.organization_id = to_org and l.id = to_location;
    if not found then perform app_hidden.raise_error(404, 'not_found', 'No such location in that organization'); end if;
  end if;
  select c.organization_id into old_org from app_private.inbound_claims c where c.identifier = ident for update;
  if old_org is not null and old_org <> to_org then
    update app_public.organizations o set sending_email_domain = null
     where o.id = old_org and app_private.inbound_identifier('email_domain', o.sending_email_domain) = ident;
    update app_public.organizations o set default_sms_number = null where o.id = old_org and o.default_sms_number = ident;
    update app_public.locations l set sms_number = null where l.organization_id = old_org and l.sms_number = ident;
  end if;
  if kind = 'email_domain' then
    update app_public.organizations o set sending_email_domain = ident where o.id = to_org;
  elsif to_location is null then
    update app_public.organizations o set default_sms_number = ident where o.id = to_org;
  else
    update app_public.locations l set sms_number = ident where l.organization_id = to_org and l.id = to_location;
  end if;
  return jsonb_build_object('identifier', ident, 'kind', kind, 'from_organization_id', old_org,
                            'to_organization_id', to_org, 'to_location_id', to_location);
end $$;
comment on function app_private.move_inbound_identifier(text, text, uuid, uuid) is
  'Operators only (svc admin org move): moves a sending domain or number to another organization (or one of its locations) in one transaction.';
revoke all on function app_private.move_inbound_identifier(text, text, uuid, uuid) from public;

-- Widget and form ids route the public chat and form endpoints without an organization: each
-- is one row's (they are generated, and the unique index keeps it so).
create unique index if not exists chat_widgets_id_key on app_public.chat_widgets (id);
drop index if exists app_public.chat_widgets_by_id;
create unique index if not exists forms_id_key on app_public.forms (id);

reset role;

--! split: 301-analysts-no-locks-no-temp.sql
-- Analysts stall no one: no advisory locks and no temporary tables (docs: Analysts).
--
-- The service's writes serialize on advisory locks (a tag write of an organization takes
-- hashtextextended('svc.tags:' || organization_id, 0)). PostgreSQL's advisory-lock functions are
-- executable by every role, so an analyst connected to the primary could take one of those
-- locks and sit on it: that organization's writes waited until they answered 503, and the
-- pool drained for everyone else. Execute on them is taken from PUBLIC and given back to the
-- service's roles (the owner that migrates, the login role, the request and worker roles);
-- analysts (members of svc_analyst only) have none. Only the functions' owner may do that, a
-- superuser: where the migration runs as one it is done (as for the large-object functions).
--
-- Temporary tables are a database privilege (TEMP), PUBLIC's by default: app_private.
-- analysts_lock_down_database() takes it from PUBLIC and gives it back to the service's roles,
-- here and again whenever `svc admin analyst create` makes an analyst (a database made from a
-- template or restored without its privileges gets them then).
do $$
declare
  f regprocedure;
  roles text := 'svc_owner, svc_login, svc_request, svc_worker';
begin
  if not (select rolsuper from pg_roles where rolname = current_user) then
    raise warning 'analysts: not a superuser: the advisory-lock functions stay executable by every role';
    return;
  end if;
  if current_user not in ('svc_owner', 'svc_login', 'svc_request', 'svc_worker') then
    roles := roles || ', ' || quote_ident(current_user);
  end if;
  for f in select p.oid::regprocedure from pg_proc p
            where p.pronamespace = 'pg_catalog'::regnamespace and p.proname like 'pg\_%advisory%'
  loop
    execute format('revoke execute on function %s from public', f);
    execute format('grant execute on function %s to %s', f, roles);
  end loop;
end $$;

set local role svc_owner;
create or replace function app_private.analysts_lock_down_database() returns boolean
  language plpgsql as $$
begin
  -- the database's owner or a superuser may change its privileges; anyone else leaves them
  if not (select rolsuper from pg_roles where rolname = current_user)
     and not pg_has_role(current_user, (select datdba from pg_database where datname = current_database()), 'member') then
    return false;
  end if;
  execute format('revoke temporary on database %I from public', current_database());
  execute format('grant temporary on database %I to svc_owner, svc_login, svc_request, svc_worker', current_database());
  return true;
end $$;
comment on function app_private.analysts_lock_down_database() is
  'Takes TEMP on the current database from PUBLIC (analysts make no temporary table), gives it to the service''s roles; false when the caller may not.';
revoke all on function app_private.analysts_lock_down_database() from public;
reset role;

select app_private.analysts_lock_down_database();

--! split: 302-chat-limit-per-address.sql
-- Web chat: the new-chat limit counts per client address, across organizations (docs:
-- conversations, Limits). It counted per organization and address, so one address opened five
-- chats at every organization's widgets in turn. The count and its advisory lock are now the
-- address's alone; other addresses, of the same organization or another, are never held up.

set local role svc_owner;

create index if not exists chat_sessions_by_client_address on app_private.chat_sessions (client_address, created_at)
  where client_address is not null;
drop index if exists app_private.chat_sessions_by_address;

create or replace function app_hidden.chat_start(widget_id uuid, token_hash text, visitor jsonb, body text, client_address text) RETURNS jsonb
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
    -- one count per address at a time, whichever organization's widget: concurrent starts
    -- cannot all pass
    perform pg_advisory_xact_lock(hashtextextended('svc.chat_address:' || client_address, 0));
    if (select count(*) from app_private.chat_sessions s
         where s.client_address = chat_start.client_address
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

reset role;

--! split: 350-delivery-reports-once.sql
-- Delivery: a report about a message is recorded once per message and kind, whatever path it
-- came by (the Twilio status callback, the email events webhook, `svc admin delivery`) and
-- whatever id the provider gave it. Providers repeat their reports under new ids, and the sink
-- already reports `delivered` as it stores a message: keying reports on the provider's id alone
-- recorded the same delivery twice and analytics counted it twice. The rule lives in unique
-- indexes, so no path can write around it. A provider's `failed` or `undelivered` is the
-- enrollment's `failed` event after `sent`, counted in the step's `failed` analytics.

-- What two reports of the same kind left behind before the indexes: the first one stays.
set local role svc_owner;

delete from app_private.delivery_events d
 using app_private.delivery_events k
 where k.organization_id = d.organization_id and k.message_id = d.message_id and k.type = d.type
   and coalesce(k.detail->>'bounce', '') = coalesce(d.detail->>'bounce', '') and k.id < d.id;

-- One report per message, kind and bounce class: a soft bounce and a later hard one are two
-- reports (the hard one suppresses the address), a second soft bounce is not.
create unique index if not exists delivery_events_once_per_kind
  on app_private.delivery_events (organization_id, message_id, type, (coalesce(detail->>'bounce', '')));

delete from app_public.enrollment_events d
 using app_public.enrollment_events k
 where d.message_id is not null and k.organization_id = d.organization_id and k.enrollment_id = d.enrollment_id
   and k.message_id = d.message_id and k.type = d.type and k.id < d.id;

-- One enrollment event per message and kind: `sent`, `delivered`, `bounced`, `opened`,
-- `clicked`, `replied`, `failed`, `unknown` each happen to a message once (analytics count
-- them). Events without a message (`enrolled`, `paused`, `completed`, …) are not concerned.
create unique index if not exists enrollment_events_once_per_message
  on app_public.enrollment_events (organization_id, message_id, type) where message_id is not null;

create or replace function app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb)
returns jsonb language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  ev_id bigint;
  enrollment uuid := case when om.meta ? 'enrollment_id' then (om.meta->>'enrollment_id')::uuid end;
  -- a provider that could not deliver (Twilio's `undelivered` and `failed`, a `failed` report) is
  -- the enrollment's `failed` after `sent`; `bounced` is an email bounce
  enrollment_event text := case type when 'delivered' then 'delivered' when 'undelivered' then 'failed'
                                     when 'failed' then 'failed' when 'bounced' then 'bounced'
                                     when 'opened' then 'opened' when 'clicked' then 'clicked'
                                     -- an out-of-office answer: shown, never a reply (353-delivery-auto-replies.sql)
                                     when 'auto_replied' then 'auto_replied' end;
  hard boolean := om.channel = 'email' and (type = 'complained' or (type = 'bounced' and detail->>'bounce' = 'hard'));
  holder uuid;
begin
  if type is null or type not in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied',
                                  'opened', 'clicked') then
    perform app_hidden.raise_error(400, 'bad_request', 'Unknown delivery event');
  end if;
  -- either the same provider key again or the same kind of report for this message: nothing new
  insert into app_private.delivery_events (organization_id, message_id, event_key, type, detail)
  values (om.organization_id, om.id, delivery_message_event.event_key, delivery_message_event.type,
          coalesce(delivery_message_event.detail, '{}'))
  on conflict do nothing
  returning id into ev_id;
  if ev_id is null then
    return jsonb_build_object('known', true, 'recorded', false, 'duplicate', true, 'message_id', om.id);
  end if;
  if type not in ('auto_replied', 'opened', 'clicked')
     and not (type in ('queued', 'sent') and om.delivery_status in ('delivered', 'undelivered', 'failed', 'bounced', 'complained')) then
    update app_private.outgoing_messages m set delivery_status = delivery_message_event.type
     where m.organization_id = om.organization_id and m.id = om.id;
  end if;
  if enrollment_event is not null and enrollment is not null then
    -- a soft bounce then a hard one: one `bounced` event (enrollment_events_once_per_message)
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select om.organization_id, e.id, enrollment_event, om.meta->>'step_key', om.id,
           case when enrollment_event = 'bounced'
                then left(concat_ws(': ', detail->>'bounce', coalesce(detail->>'reason', type)), 500)
                when enrollment_event = 'failed' then left(coalesce(detail->>'reason', detail->>'error_code', type), 500) end
      from app_public.enrollments e
     where e.organization_id = om.organization_id and e.id = enrollment
    on conflict do nothing;
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
comment on function app_private.delivery_message_event(app_private.outgoing_messages, text, text, jsonb) is
  'A provider''s report about one message, once per event key and once per kind (delivery_events_once_per_kind): delivery_status, the enrollment''s delivered/bounced/failed/opened/clicked event (once per message), and for a hard bounce or complaint the address suppressed (a hard bounce also fails the enrollment).';

reset role;

--! split: 351-sequences-failed-reports.sql
-- Sequences: a step's `failed` count in sequences_analytics also counts the messages handed to
-- the provider and then reported failed (Twilio's `failed`/`undelivered`, `svc admin delivery
-- --event failed`): such a message is both sent (it left) and failed (it never arrived).
-- Everything else is the function as it was.

set local role svc_owner;

create or replace function app_public.sequences_analytics(sequence_id uuid) returns jsonb
language plpgsql stable as $$
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


comment on function app_public.sequences_analytics(uuid) is
  'sequences_analytics: per-step counts in step order (sent, delivered, bounced, opened, clicked, replied, skipped, failed: refused or reported failed, unknown), the rollup (enrollments by status; messages sent, delivered, bounced; enrollments that replied) over the enrollments the credential sees, and email_delivery_reporting (not_applicable without an email step; NULL: the transport decides).';

reset role;

--! split: 352-appointments-no-team-member-available.sql
-- Appointments: a booking that names no team member, at a time when every eligible team member
-- is booked, blocked or off, answers 409 no_team_member_available (the spec's code for "none
-- named, none free then"), not slot_taken; slot_taken stays for a named team member (or the
-- member itself) and for a calendar. Everything else is appointments_create as it was.
--
-- Checks in this order: what is named exists in reach (404), the creator of an organization key
-- is still here (422), who may book whom (403), then the booking rules (409): offering_required,
-- duration_mismatch, address_out_of_area, team_member_not_eligible, outside_hours,
-- no_team_member_available, slot_taken. The write is the insert; the exclusion constraint
-- decides a race.
set local role svc_owner;

create or replace function app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid,
  team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamptz, end_time timestamptz, title text)
returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  named record;
  loc app_public.locations;
  cal app_public.calendars;
  during tstzrange;
  postal text := nullif(btrim(service_address->>'postal_code'), '');
  country text := upper(nullif(btrim(service_address->>'country_code'), ''));
  tm uuid := team_member_id;
  refusal text;
  candidates uuid[];
  chosen uuid;
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

  -- what the request names, found through the caller's policies: one read
  if calendar_id is not null then
    select * into cal from app_public.calendars x where x.organization_id = org and x.id = appointments_create.calendar_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Calendar not found');
    end if;
  end if;
  select l as loc, ct.id as contact_id, ct.name as contact_name, ct.phone as contact_phone, ct.email as contact_email,
         f.id as offering_id, f.duration_minutes,
         appointments_create.team_member_id is null
           or exists (select 1 from app_public.staff_profiles sp
                       where sp.organization_id = org and sp.id = appointments_create.team_member_id) as team_member_found
    into named
    from (select) one
    left join app_public.locations l on l.organization_id = org and l.id = coalesce(appointments_create.location_id, cal.location_id)
    left join lateral (select x.id, x.name, x.phone, x.email::text as email from app_public.contacts x
                        where x.organization_id = org and x.id = appointments_create.contact_id) ct on true
    left join app_public.offerings f on appointments_create.offering_id is not null and f.organization_id = org
                                    and f.id = appointments_create.offering_id and f.location_id = l.id;
  loc := named.loc;
  if loc.id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if named.contact_id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  if offering_id is not null and named.offering_id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
  end if;
  if not named.team_member_found then
    perform app_hidden.raise_error(404, 'not_found', 'Team member not found');
  end if;
  -- only an organization key has a creator who may leave (a personal key's person is its user)
  if app_hidden.current_user_id() is null and app_hidden.current_key_creator_left() then
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
    perform pg_advisory_xact_lock(hashtextextended('appointments:' || org::text || ':' || cal.id::text, 0));
    begin
      insert into app_public.appointments (organization_id, kind, location_id, calendar_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, cal.id, named.contact_id, title, named.contact_name, named.contact_phone,
        named.contact_email, start_time, end_time, app_hidden.current_user_id(), app_hidden.current_credential_id(), 'api')
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
     and not app_hidden.current_may_book_team_member(null) then
    -- a member (or a manager without the appointments power) may not pick among the team: it books itself
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
  if named.offering_id is null then
    if exists (select 1 from app_public.offerings x where x.organization_id = org and x.location_id = loc.id) then
      perform app_hidden.raise_error(409, 'offering_required', 'This location books offerings: send offering_id (booking_options lists them)',
        jsonb_build_object('booking_options', app_hidden.booking_options(org, loc.id)));
    end if;
  elsif end_time - start_time <> make_interval(mins => named.duration_minutes) then
    perform app_hidden.raise_error(409, 'duration_mismatch',
      format('The offering takes %s minutes: end_time must be start_time + %s minutes', named.duration_minutes, named.duration_minutes));
  end if;
  if postal is not null and not app_hidden.territory_covers(org, loc.id, postal, country) then
    perform app_hidden.raise_error(409, 'address_out_of_area', 'No territory of this location covers the service address''s postal code');
  end if;

  if tm is not null then
    -- a named team member (or the member itself): its rules in one statement
    refusal := app_hidden.team_member_refusal(loc, named.offering_id, postal, country, tm, during);
    if refusal = 'team_member_not_eligible' then
      perform app_hidden.raise_error(409, 'team_member_not_eligible',
        'The team member does not work at this location, does not do this offering, or does not cover this address');
    elsif refusal = 'outside_hours' then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the team member''s working hours');
    elsif refusal = 'slot_taken' then
      perform app_hidden.slot_taken();
    end if;
    candidates := array[tm];
  else
    -- the first eligible team member (oldest first) who works then and is free
    candidates := app_hidden.eligible_team_members(org, loc.id, named.offering_id, postal, country, null);
    if not app_hidden.within_hours(loc, null, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the location''s hours');
    end if;
    candidates := array(select m.id from unnest(candidates) with ordinality m(id, n)
                         where app_hidden.within_hours(loc, m.id, during) order by m.n);
    if cardinality(candidates) = 0 then
      perform app_hidden.raise_error(409, 'no_team_member_available', 'No team member who may take this booking works at that time');
    end if;
    candidates := array(select t.staff_profile_id from app_hidden.team_time(loc, candidates, '{}', during) t
                         where t.open @> during and not t.busy && during order by t.ord);
  end if;
  foreach chosen in array candidates loop
    -- (a named team member's blocks and series were asked above)
    continue when tm is null and app_hidden.held_by_blocks_or_series(loc, chosen, null, during);
    -- orders concurrent writers of one team member's time; the exclusion constraint decides
    perform pg_advisory_xact_lock(hashtextextended('appointments:' || org::text || ':' || chosen::text, 0));
    begin
      insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id, offering_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, service_address, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, chosen, named.offering_id, named.contact_id, title, named.contact_name,
        named.contact_phone, named.contact_email, service_address, start_time, end_time, app_hidden.current_user_id(),
        app_hidden.current_credential_id(), 'api')
      returning * into a;
      return app_hidden.appointment_json(a);
    exception when exclusion_violation then
      -- someone else took this team member's time meanwhile: the next one, if any
      null;
    end;
  end loop;
  if tm is null then
    -- none named, and every eligible team member who works then is booked, blocked or off
    perform app_hidden.raise_error(409, 'no_team_member_available',
      'No team member who may take this booking is free at that time; ask appointments_availability for open slots');
  end if;
  perform app_hidden.slot_taken();
  return null;
end $$;
comment on function app_public.appointments_create(uuid, uuid, uuid, uuid, jsonb, uuid, timestamptz, timestamptz, text) is
  'appointments_create: books a team member (named, or the first free eligible one) at a staffed location, or a calendar '
  'of an unstaffed one; the exclusion constraints decide races (409 slot_taken for a named team member or a calendar, '
  'no_team_member_available when none was named and none is free).';

reset role;

--! split: 353-delivery-auto-replies.sql
-- Delivery: an automatic answer (out of office, vacation responder) is never a reply, on any
-- inbound email path (the inbound webhook, the SMTP listener, `svc admin inbound email`). The
-- caller reads the headers (Auto-Submitted other than `no`, X-Autoreply, X-Autorespond,
-- Precedence auto_reply|bulk|junk: src/delivery/inbound_email.ts, isAutoReply); the subject is
-- read here, so that a message without such headers is recognised whichever path it came by.
-- It is recorded as the message's `auto_replied` delivery event and the enrollment's
-- `auto_replied` event (once per message), and the enrollment goes on.

set local role svc_owner;

alter table app_public.enrollment_events drop constraint if exists enrollment_events_type_check;
alter table app_public.enrollment_events add constraint enrollment_events_type_check
  check (type in ('enrolled', 'sent', 'delivered', 'bounced', 'opened', 'clicked', 'replied', 'auto_replied', 'skipped',
                  'failed', 'unknown', 'paused', 'resumed', 'completed', 'cancelled'));

-- The subjects the common mail clients (Outlook and Exchange, Gmail, Apple Mail, Thunderbird,
-- webmail) give their automatic answers, in the main languages, at the start of the subject
-- after any Re:/Fwd:-style prefixes or a bracket. An accented letter is matched by any one
-- character, so an upper-case accent (not lowered under the C collation) matches too. A subject
-- that merely mentions an office or replies later in its text is a person's.
create or replace function app_private.email_auto_reply_subject(subject text)
returns boolean language sql immutable parallel safe set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(lower(subject) ~ (
    '^\s*(((re|aw|sv|vs|antw|odp|rif|r|fw|fwd|wg|tr|rv|enc)\s*:|\[)\s*)*('
    || 'auto(matic|mated)?[ _-]?(reply|replied|response|responder|answer)'   -- Automatic reply, Auto-Reply, Autoreply
    || '|out of (the )?office|ooo\y'                                        -- Out of Office
    || '|abwesenheit|automatische antwort'                                  -- German
    || '|r.?ponse automatique|absence du bureau|absent du bureau'           -- French
    || '|respuesta autom.?tica|fuera de (la )?oficina'                      -- Spanish
    || '|risposta automatica|fuori ufficio'                                 -- Italian
    || '|automatisch antwoord|afwezig'                                      -- Dutch
    || '|resposta autom.?tica|ausente do escrit'                            -- Portuguese
    || '|automatiskt? svar|autosvar|fr.?nvaro'                              -- Swedish, Danish, Norwegian
    || '|automaattinen vastaus'                                             -- Finnish
    || '|automatyczna odpowied'                                             -- Polish
    || '|automatick.? odpov'                                                -- Czech, Slovak
    || '|automatikus v.?lasz'                                               -- Hungarian
    || '|otomatik yan.?t'                                                   -- Turkish
    || '|[аА]втоматический ответ|[аА]втоответ'                              -- Russian
    || '|自動応答|自動返信|自动回复|自動回覆|自動回復'                         -- Japanese, Chinese
    || ')'), false)
$$;
comment on function app_private.email_auto_reply_subject(text) is
  'Whether an email''s subject is one mail clients give an automatic answer (Automatic reply, Auto-Reply, Out of Office, Abwesenheitsnotiz, Réponse automatique, Respuesta automática, …): an auto-reply, never a reply.';

create or replace function app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text,
  in_reply_to text, provider_id text, auto_reply boolean)
returns jsonb language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $_$
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
  -- the headers were read by the caller (auto_reply); the subject is read here, for every path
  if coalesce(auto_reply, false) or app_private.email_auto_reply_subject(subject) then
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


comment on function app_hidden.delivery_inbound_email(text, text, text, text, text, text, boolean) is
  'An inbound email: the message answered by In-Reply-To or reply+TOKEN, the conversation continued (and the sequence''s replied event) through conversations_inbound_email; an auto-reply (auto_reply from the headers, or its subject: email_auto_reply_subject) is only recorded on the message answered and as the enrollment''s auto_replied event.';

reset role;

--! split: 354-delivery-email-display-name.sql
-- Delivery: the display name of an email's From. Every email went out as a bare
-- `no-reply@<domain>`, a person's reply included, so a recipient saw no one. The name is the
-- organization's, and for a person's reply in a conversation `<person>, <organization>`; the
-- address and the Reply-To routing stay as they are. The SMTP transport asks for it as it hands
-- a message over (src/delivery/smtp.ts), and quotes it as an address object, never by hand.
set local role svc_owner;

create or replace function app_private.email_from_name(org uuid, message_id uuid)
returns text language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select nullif(btrim(p.name), '') || ', ' || o.name
                     from app_public.conversation_messages m
                     join app_public.people p on p.organization_id = m.organization_id and p.id = m.author_person_id
                    where m.organization_id = org and m.id = email_from_name.message_id and m.author = 'person'),
                  o.name)
    from app_public.organizations o where o.id = org
$$;
comment on function app_private.email_from_name(uuid, uuid) is
  'The display name of an email''s From: "<person>, <organization>" for a person''s reply in a conversation, else the organization''s name.';

reset role;

--! split: 355-sequences-sms-from-the-contacts-number.sql
-- Sequences: a sequence's SMS goes from the number people text the contact from (the
-- conversation rule: the number of the contact's location, else the organization's default),
-- not from the sequence's location or the default alone. A contact texted by a sequence from
-- the default number and by a person from its location's number had two threads on two
-- numbers, and its answer to the sequence landed in neither person's thread. Among the
-- contact's locations with a number, the sequence's own comes first; a location-bound sequence
-- whose contact is linked nowhere with a number sends from that location's number. The two
-- functions below are as they were but for the sender (build_sequence_message's `sender`,
-- claim_enrollment_messages' `sms_from` per recipient).

set local role svc_owner;

create or replace function app_private.contact_sms_sender(org uuid, contact uuid, preferred_location uuid)
returns text language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(
    (select l.sms_number from app_public.contact_locations cl
       join app_public.locations l on l.organization_id = cl.organization_id and l.id = cl.location_id
      where cl.organization_id = org and cl.contact_id = contact and l.sms_number is not null
      order by l.id is not distinct from preferred_location desc, l.created_at, l.id limit 1),
    (select l.sms_number from app_public.locations l where l.organization_id = org and l.id = preferred_location),
    (select o.default_sms_number from app_public.organizations o where o.id = org))
$$;
comment on function app_private.contact_sms_sender(uuid, uuid, uuid) is
  'The number a sequence texts a contact from, as people do (conversation_sms_send): a number of the contact''s locations (the preferred one first), else the preferred location''s, else the organization''s default.';

create or replace function app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb, contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text DEFAULT 'queued'::text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
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


create or replace function app_private.claim_enrollment_messages(org_id uuid, s app_public.sequences, ids uuid[], base_url text, sink_channels text[], for_run uuid DEFAULT NULL::uuid, OUT messages jsonb, OUT flight uuid[], OUT sent_count integer, OUT skipped_count integer) returns record
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
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

reset role;

--! split: 380-broadcast-runs-wait-for-the-window.sql
-- A broadcast fired while its send window is closed waits for the opening, `sending`.
--
-- A broadcast's messages go out inside the send schedule of its sequence, as every step of the
-- sequences engine does. A run that fires outside it is held: `held_until` is the schedule's next
-- opening, and the run's job is queued for then, not for now. Until then the run reads `sending`
-- with its recipients counted as `waiting` (none has gone, none is finished), so
-- sequences_cancel_schedule_run stops all of them and answers the count; at the opening the job
-- sends the run and it completes. The stalled-run recovery (broadcast_requeue_stalled) passes a
-- held run by: no progress before its window is not a dead worker.

set local role svc_owner;

alter table app_public.broadcast_runs add column if not exists held_until timestamptz;

comment on column app_public.broadcast_runs.held_until is
  'The send window was closed when the run fired: its next opening, when the run''s job sends it. NULL when it fired inside the window.';

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
  held timestamptz;
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
  -- outside the send window, the run waits for its opening (the sequences engine's rule for a
  -- step due outside it); its recipients stay the run's to send, and to cancel
  held := app_hidden.sequence_next_run(s.organization_id, s.send_schedule_id, now());
  update app_public.broadcast_runs x set recipients = n, held_until = case when held > now() then held end
   where x.organization_id = b.organization_id and x.id = run;
  perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', s.organization_id, 'run_id', run),
    'broadcast_run:' || run, greatest(held, now()));
  return run;
end $_$;

comment on function app_private.broadcast_fire(uuid, uuid, timestamptz, timestamptz) is
  'Fires one occurrence once (schedule locked, still waiting for fire_at; unique run per occurrence): schedule moved on, the audience snapshotted into enrollments of the run, the run''s job queued now, or at the send window''s next opening (held_until) when it is closed. Answers the run id or NULL.';
revoke all on function app_private.broadcast_fire(uuid, uuid, timestamptz, timestamptz) from public;

create or replace function app_private.broadcast_requeue_stalled() returns integer
    language plpgsql security definer
    set search_path to 'pg_catalog', 'public', 'pg_temp'
    as $$
declare
  r record;
  n int := 0;
begin
  for r in
    select x.organization_id, x.id from app_public.broadcast_runs x
     where x.status = 'sending' and x.progress_at < now() - interval '5 minutes'
       -- waiting for its send window: its job is queued for the opening
       and not coalesce(x.held_until > now(), false)
     for update skip locked
  loop
    update app_public.broadcast_runs x set progress_at = now() where x.organization_id = r.organization_id and x.id = r.id;
    perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', r.organization_id, 'run_id', r.id),
      'broadcast_run:' || r.id, now());
    n := n + 1;
  end loop;
  return n;
end $$;

comment on function app_private.broadcast_requeue_stalled() is
  'Queues a new broadcast_run job for each run sending without progress for five minutes (its worker died); a run waiting for its send window (held_until ahead) is not stalled.';
revoke all on function app_private.broadcast_requeue_stalled() from public;

create or replace function app_hidden.broadcast_run_json(r app_public.broadcast_runs) returns jsonb
    language sql stable
    as $$
  select jsonb_build_object('id', r.id, 'status', r.status, 'fire_at', r.fire_at, 'started_at', r.started_at,
    'finished_at', r.finished_at, 'recipients', r.recipients, 'sent', r.sent, 'skipped', r.skipped, 'failed', r.failed,
    'unknown', r.unknown, 'cancelled', r.cancelled,
    -- a sending run's recipients not yet sent, skipped, failed, unknown or cancelled; an ended run has none
    'waiting', case when r.status = 'sending'
                    then greatest(0, r.recipients - r.sent - r.skipped - r.failed - r.unknown - r.cancelled) else 0 end,
    'held_until', case when r.status = 'sending' and r.held_until > now() then r.held_until end)
$$;

comment on function app_hidden.broadcast_run_json(app_public.broadcast_runs) is
  'A run as the API shows it: its counts, `waiting` (recipients of a sending run not yet gone) and `held_until` (the send window''s opening a run waits for).';

reset role;

--! split: 500-receptionist.sql
-- The receptionist: the AI (or the built-in dialogue) that answers SMS and chat, acting through
-- the same operations, SQL functions and row-level security as any key. src/receptionist/ runs
-- it; docs/receptionist.md describes it.
--
-- It acts under claims of its own, bound to one conversation: a MANAGER with the appointments
-- and contacts powers, limited to the conversation's location, whose credential id is the
-- conversation's (so an idempotency key it derives from an inbound message replays the first
-- answer after a crash). Only the owner may take these claims: the background job that answers
-- the message calls app_hidden.receptionist_authenticate as the owner, then becomes svc_request.

-- The job's connection (the owner's) becomes svc_request for the tool calls, as a request does.
do $$
begin
  if not pg_has_role('svc_owner', 'svc_request', 'member') then
    grant svc_request to svc_owner;
  end if;
end $$;

-- Everything else is the owner's (functions security definer as the owner, never a superuser).
set local role svc_owner;

-- What the organization tells its receptionist (all optional): instructions for the model, the
-- message a contact gets when a person takes over, and FAQ entries answered by keyword.
alter table app_public.organizations add column if not exists receptionist jsonb not null default '{}';
alter table app_public.organizations drop constraint if exists organizations_receptionist_check;
alter table app_public.organizations add constraint organizations_receptionist_check
  check (jsonb_typeof(receptionist) = 'object' and octet_length(receptionist::text) <= 65536);
comment on column app_public.organizations.receptionist is
  'The receptionist''s settings: {instructions, handover_message, faq: [{question, keywords, answer}]} (all optional).';

-- The built-in dialogue's memory of a conversation: the last thing it offered (services, slots,
-- a cancellation to confirm), so that a number or YES answers it. Written with the answer.
create table if not exists app_private.receptionist_states (
  organization_id uuid not null references app_public.organizations (id) on delete cascade,
  conversation_id uuid not null,
  state jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (organization_id, conversation_id),
  foreign key (organization_id, conversation_id) references app_public.conversations (organization_id, id) on delete cascade
);
comment on table app_private.receptionist_states is
  'The built-in receptionist''s pending offer per conversation (offerings, slots, or a cancellation awaiting YES).';

-- A hand-over the receptionist made (the inbox lists why; the loop guard and "once" read it).
create table if not exists app_private.receptionist_handovers (
  organization_id uuid not null references app_public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  conversation_id uuid not null,
  message_id uuid not null,
  reason text not null check (length(reason) between 1 and 500),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, message_id),
  foreign key (organization_id, conversation_id) references app_public.conversations (organization_id, id) on delete cascade
);
comment on table app_private.receptionist_handovers is
  'Each hand-over of a conversation to a person by the receptionist, with its reason: once per inbound message.';

-- The webhook event of a hand-over joins the catalog (src/webhooks/events.ts).
alter table app_public.webhook_subscriptions drop constraint if exists webhook_subscriptions_events_check;
alter table app_public.webhook_subscriptions add constraint webhook_subscriptions_events_check
  check (cardinality(events) between 1 and 8 and array_position(events, null) is null
         and events <@ array['contact.created', 'contact.updated', 'enrollment.completed', 'appointment.booked',
                             'appointment.cancelled', 'message.received', 'form.submitted', 'conversation.handed_over']);

-- The receptionist's claims for one tool call of one conversation. `tool_input` is the call's
-- input as the service will run it: the binding is checked here, before anything is read or
-- written: a contact_id other than the conversation's, a location_id other than its location, or
-- an appointment_id that is not this contact's is 403 not_allowed. contacts_update may change
-- only the name and email. Then the operation's own requirement applies (requirement_refusal).
create or replace function app_hidden.receptionist_authenticate(organization_id uuid, conversation_id uuid, operation_id text,
  tool_input jsonb, required_scope text, member_access text, manager_power text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  cv app_public.conversations;
  settings jsonb;
  refusal jsonb;
  loc_ids uuid[];
  scopes text[] := array['appointments:read', 'appointments:write', 'contacts:read', 'contacts:write'];
  powers text[] := array['appointments', 'contacts'];
begin
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_authenticate.organization_id and x.id = receptionist_authenticate.conversation_id;
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'No such conversation');
  end if;
  if jsonb_typeof(tool_input) is distinct from 'object' then
    perform app_hidden.raise_error(400, 'bad_request', 'The input must be an object');
  end if;
  if tool_input ? 'contact_id' and tool_input->>'contact_id' is distinct from cv.contact_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only for the contact of its conversation');
  end if;
  if tool_input ? 'location_id' and tool_input->>'location_id' is distinct from cv.location_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only at the location of its conversation');
  end if;
  if tool_input ? 'locationId' and tool_input->>'locationId' is distinct from cv.location_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only at the location of its conversation');
  end if;
  if tool_input ? 'appointmentId' and not exists (
       select 1 from app_public.appointments a
        where a.organization_id = cv.organization_id and a.contact_id = cv.contact_id
          and a.id::text = tool_input->>'appointmentId') then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only on appointments of the contact of its conversation');
  end if;
  if operation_id = 'contacts_update' and (select count(*) from jsonb_object_keys(tool_input - 'contactId' - 'name' - 'email' - 'idempotency_key')) > 0 then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist changes only the contact''s name and email');
  end if;
  if operation_id = 'contacts_update' and tool_input->>'contactId' is distinct from cv.contact_id::text then
    perform app_hidden.raise_error(403, 'not_allowed', 'The receptionist acts only for the contact of its conversation');
  end if;

  loc_ids := case when cv.location_id is null then '{}'::uuid[] else array[cv.location_id] end;
  settings := jsonb_build_object(
    'svc.organization_id', cv.organization_id::text,
    'svc.credential_id', cv.id::text,
    'svc.user_id', '',
    'svc.role', 'manager',
    'svc.location_ids', loc_ids::text,
    'svc.powers', powers::text,
    'svc.scopes', scopes::text,
    'svc.records_level', 'all',
    'svc.sms_enabled', 'false');
  perform set_config(s.key, s.value, true) from jsonb_each_text(settings) s;

  refusal := app_hidden.requirement_refusal(required_scope, member_access, manager_power);
  if refusal is not null then
    perform app_hidden.raise_error((refusal->>'status')::int, refusal->>'error', refusal->>'message', refusal->'extra');
  end if;
  return jsonb_build_object(
    'organization_id', cv.organization_id, 'credential_id', cv.id, 'kind', 'organization', 'user_id', null,
    'role', 'manager', 'key_role', 'MANAGER', 'location_ids', to_jsonb(loc_ids), 'powers', to_jsonb(powers),
    'scopes', to_jsonb(scopes), 'records_level', 'all', 'sms_enabled', false, 'settings', settings);
end $$;
revoke all on function app_hidden.receptionist_authenticate(uuid, uuid, text, jsonb, text, text, text) from public;
comment on function app_hidden.receptionist_authenticate(uuid, uuid, text, jsonb, text, text, text) is
  'The receptionist''s claims for one tool call of a conversation (a MANAGER of its location with the appointments and contacts powers), after refusing (403 not_allowed) an input naming another contact, location or appointment. Owner only: called by the answering job before it becomes svc_request.';

-- What the receptionist knows when it answers: the conversation's context (as
-- conversation_ai_context gives it) with the ids it acts on, the offerings in booking order with
-- their ids, the organization's receptionist settings, the dialogue's pending offer, whether the
-- contact opted out, and how many AI answers the conversation had in 24 hours (the loop guard).
create or replace function app_private.receptionist_context(organization_id uuid, conversation_id uuid, message_id uuid)
returns jsonb language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  base jsonb := app_private.conversation_ai_context(organization_id, conversation_id, message_id);
  cv app_public.conversations;
begin
  if base is null then
    return null;
  end if;
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_context.organization_id and x.id = receptionist_context.conversation_id;
  return base || jsonb_build_object(
    'organization_id', cv.organization_id,
    'conversation_id', cv.id,
    'message_id', message_id,
    'contact_id', cv.contact_id,
    'location_id', cv.location_id,
    'receptionist', (select o.receptionist from app_public.organizations o where o.id = cv.organization_id),
    'offerings', coalesce((select jsonb_agg(jsonb_build_object('id', f.id, 'name', f.name, 'duration_minutes', f.duration_minutes)
                                            order by f.name, f.id)
                             from app_public.offerings f
                            where f.organization_id = cv.organization_id and f.location_id = cv.location_id), '[]'),
    'state', (select jsonb_build_object('state', s.state, 'at', s.updated_at) from app_private.receptionist_states s
               where s.organization_id = cv.organization_id and s.conversation_id = cv.id),
    'opted_out', cv.channel = 'sms' and exists (
      select 1 from app_public.contacts c
       where c.organization_id = cv.organization_id and c.id = cv.contact_id
         and app_private.conversation_sms_refusal(c, cv) is not null),
    'ai_answers_24h', (select count(*) from app_public.conversation_messages m
                        where m.organization_id = cv.organization_id and m.conversation_id = cv.id
                          and m.author = 'ai' and m.created_at > now() - interval '24 hours'),
    'now', now());
end $$;
revoke all on function app_private.receptionist_context(uuid, uuid, uuid) from public;
comment on function app_private.receptionist_context(uuid, uuid, uuid) is
  'What the receptionist answers from (conversation_ai_context plus the ids, offerings, settings, pending offer, opt-out and loop count), or NULL when nothing is owed.';

-- The people a hand-over of this conversation is for: owners and admins, managers with the
-- contacts power at its location (or, for a conversation of no location, none).
create or replace function app_private.receptionist_handover_people(cv app_public.conversations)
returns setof app_public.people language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select p.* from app_public.people p
   where p.organization_id = cv.organization_id and p.active
     and (p.role in ('owner', 'admin')
          or (p.role = 'manager' and 'contacts' = any(p.powers)
              and exists (select 1 from app_public.person_locations pl
                           where pl.organization_id = p.organization_id and pl.person_id = p.id and pl.location_id = cv.location_id)))
   order by p.created_at, p.id
$$;
revoke all on function app_private.receptionist_handover_people(app_public.conversations) from public;

-- Writes the receptionist's turn, once, under the conversation's lock (conversation_ai_record):
-- a reply with the dialogue's new pending offer; or a hand-over: the thread held, the contact
-- told once (the organization's handover_message), an email to each person who may answer with
-- a link to the inbox, and the conversation.handed_over event. `state` null clears the offer.
create or replace function app_private.receptionist_record(organization_id uuid, conversation_id uuid, message_id uuid,
  answer jsonb, sinks text[], state jsonb, inbox_url text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  done jsonb;
  cv app_public.conversations;
  c app_public.contacts;
  org app_public.organizations;
  p app_public.people;
  told app_public.conversation_messages;
  out_id uuid;
  reason text := left(coalesce(nullif(btrim(answer->>'reason'), ''), 'the receptionist handed over'), 500);
begin
  done := app_private.conversation_ai_record(organization_id, conversation_id, message_id, answer, sinks);
  select * into cv from app_public.conversations x
   where x.organization_id = receptionist_record.organization_id and x.id = receptionist_record.conversation_id;
  if done->>'action' = 'reply' then
    if state is null then
      delete from app_private.receptionist_states s where s.organization_id = cv.organization_id and s.conversation_id = cv.id;
    else
      insert into app_private.receptionist_states as s (organization_id, conversation_id, state)
      values (cv.organization_id, cv.id, state)
      on conflict on constraint receptionist_states_pkey do update set state = excluded.state, updated_at = now();
    end if;
    -- the conversation's interaction names the appointment the turn booked or moved
    if answer->>'appointment_id' is not null then
      update app_public.interactions i set appointment_id = (answer->>'appointment_id')::uuid
       where i.organization_id = cv.organization_id and i.conversation_id = cv.id;
    end if;
    return done;
  end if;
  if done->>'action' <> 'handover' then
    return done;
  end if;

  delete from app_private.receptionist_states s where s.organization_id = cv.organization_id and s.conversation_id = cv.id;
  insert into app_private.receptionist_handovers (organization_id, conversation_id, message_id, reason)
  values (cv.organization_id, cv.id, receptionist_record.message_id, reason)
  on conflict do nothing;
  select * into org from app_public.organizations o where o.id = cv.organization_id;
  select * into c from app_public.contacts x where x.organization_id = cv.organization_id and x.id = cv.contact_id;

  -- the contact hears that a person will answer (never over SMS to a number that opted out)
  if cv.channel = 'chat' or (c.phone is not null and app_private.conversation_sms_refusal(c, cv) is null) then
    told := app_private.conversation_append_outbound(cv, 'ai', null,
      left(coalesce(nullif(btrim(org.receptionist->>'handover_message'), ''),
                    'Thanks for your message! A person from our team will answer you here soon.'), 1600),
      cv.business_address, c.phone, null, null, case when cv.channel = any(sinks) then 'sink' else 'job' end);
  end if;

  -- the people who may answer: an email each, through the delivery path
  for p in select * from app_private.receptionist_handover_people(cv) loop
    insert into app_private.outgoing_messages (organization_id, channel, sender, recipient, subject, body, meta)
    values (cv.organization_id, 'email', 'no-reply@' || coalesce(org.sending_email_domain, 'localhost'), p.email::text,
            left('A conversation is waiting for you: ' || coalesce(c.name, c.phone, c.email::text, 'a contact'), 300),
            format(E'The receptionist handed a conversation to a person.\n\nContact: %s\nChannel: %s\nReason: %s\n\nAnswer it in the inbox: %s\n',
                   coalesce(c.name, c.phone, c.email::text, 'unknown'), cv.channel, reason,
                   coalesce(inbox_url, '/dashboard/inbox') || '/' || cv.id),
            jsonb_build_object('conversation_id', cv.id, 'handover', true))
    returning id into out_id;
    perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', cv.organization_id, 'message_id', out_id),
      job_key => 'message:' || out_id);
  end loop;

  perform app_private.webhook_emit(cv.organization_id, 'conversation.handed_over', now(),
    jsonb_build_object('conversation_id', cv.id, 'contact_id', cv.contact_id, 'location_id', cv.location_id, 'reason', reason));
  return done || jsonb_build_object('told', told.id is not null);
end $$;
revoke all on function app_private.receptionist_record(uuid, uuid, uuid, jsonb, text[], jsonb, text) from public;
comment on function app_private.receptionist_record(uuid, uuid, uuid, jsonb, text[], jsonb, text) is
  'Writes the receptionist''s turn once: a reply with its pending offer, or a hand-over (hold, the contact told once, an email to each person who may answer, the conversation.handed_over event).';

reset role;

--! split: 600-permission-rules.sql
-- Each permission rule in one place.
--
-- app_hidden.requirement_refusal decided, for the current claims, whether an operation's
-- requirements are met; the OAuth consent page re-implemented the same rule in TypeScript to
-- decide which scopes a person may grant. The rule now lives in
-- app_hidden.requirement_refusal_for, a function of the role, powers, SMS setting and scopes it
-- is asked about: requirement_refusal asks it about the current claims, and
-- app_hidden.oauth_grantable_scopes about a person who is about to approve a client.

set local role svc_owner;

create or replace function app_hidden.requirement_refusal_for(
  acting text, powers text[], sms_enabled boolean, scopes text[],
  required_scope text, member_access text, manager_power text
) returns jsonb language plpgsql immutable parallel safe as $$
begin
  if required_scope is not null and not (required_scope = any(scopes)) then
    return jsonb_build_object('status', 403, 'error', 'insufficient_scope',
      'message', format('This credential lacks the %s scope', required_scope),
      'extra', jsonb_build_object('required', required_scope));
  end if;
  if acting = 'manager' then
    if manager_power is not null and not (manager_power = any(powers)) then
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
    elsif member_access = 'sms_setting' and not sms_enabled then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'Texting is turned off for this member');
    end if;
  end if;
  return null;
end $$;
comment on function app_hidden.requirement_refusal_for(text, text[], boolean, text[], text, text, text) is
  'The rule of who may call an operation: whether a credential acting as `acting` (owner, admin, manager, member, organization), with these powers, SMS setting and scopes, meets the operation''s requirements (scope, member access, manager power): null, or the refusal as {status, error, message, extra}. Scope is checked first, so insufficient_scope names the scope.';
revoke all on function app_hidden.requirement_refusal_for(text, text[], boolean, text[], text, text, text) from public;
grant execute on function app_hidden.requirement_refusal_for(text, text[], boolean, text[], text, text, text) to svc_request;

create or replace function app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text)
returns jsonb language sql stable as $$
  select app_hidden.requirement_refusal_for(app_hidden.current_role(), app_hidden.current_powers(),
    app_hidden.current_sms_enabled(), app_hidden.current_scopes(), required_scope, member_access, manager_power)
$$;
comment on function app_hidden.requirement_refusal(text, text, text) is
  'Whether the current claims meet an operation''s requirements (app_hidden.requirement_refusal_for asked about them): null, or the refusal as {status, error, message, extra}.';

-- The scopes a person may grant an OAuth client now: those for which their role can call at
-- least one operation of `requirements` ([{scope, member_access, manager_power}], the catalog's
-- operations), asked of the same rule as every request's; and not conversations:write while a
-- member's SMS setting is off (a member who may not text grants no texting, even though some
-- conversations:write operations need no SMS). Empty for a person who may not approve now
-- (app_hidden.oauth_person).
create or replace function app_hidden.oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb)
returns text[] language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with p as (select app_hidden.oauth_person(organization_id, person_id) as p)
  select coalesce(array_agg(distinct r->>'scope' order by r->>'scope'), '{}')
    from p, jsonb_array_elements(requirements) r
   where p.p is not null
     and r->>'scope' is not null
     and app_hidden.requirement_refusal_for(p.p->>'role', array(select jsonb_array_elements_text(p.p->'powers')),
           (p.p->>'sms_enabled')::boolean, array[r->>'scope'], r->>'scope', r->>'member_access', r->>'manager_power') is null
     and not (r->>'scope' = 'conversations:write' and p.p->>'role' = 'member' and not (p.p->>'sms_enabled')::boolean)
$$;
comment on function app_hidden.oauth_grantable_scopes(uuid, uuid, jsonb) is
  'The scopes of requirements ([{scope, member_access, manager_power}]) a person may grant an OAuth client: those with an operation their role may call (app_hidden.requirement_refusal_for), without conversations:write for a member whose SMS setting is off; empty when the person may not approve now.';
revoke all on function app_hidden.oauth_grantable_scopes(uuid, uuid, jsonb) from public;
grant execute on function app_hidden.oauth_grantable_scopes(uuid, uuid, jsonb) to svc_request;

-- appointments_create (redefined above, with no_team_member_available) asks
-- app_hidden.current_may_book_team_member who may book whom (with a null team member: whether the
-- credential may book any), instead of restating the manager rule.
comment on function app_hidden.current_may_book_team_member(uuid) is
  'Whether the credential may book or change an appointment of this team member: owner and admin any; a manager with the appointments power any (at its locations); a manager without it and a member only itself; keys with no role, and Member or Manager keys without the power, none. Asked with null: whether it may book any team member (the service choosing one). Stricter than current_has_power, which grants organization keys all.';

reset role;

--! split: 650-voice-secrets.sql
-- The voice secret: what a voice platform (Vapi, Retell, …) shows as `Authorization: Bearer`
-- when it calls POST /api/v1/receptionist/chat/completions for an organization (src/voice/).
-- Only the SHA-256 of the secret is kept, as for API keys; an organization has at most one live
-- secret: a new one revokes the one before, at once.

set local role svc_owner;

create table if not exists app_private.voice_secrets (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references app_public.organizations (id) on delete cascade,
  secret_hash bytea not null unique check (length(secret_hash) = 32),
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
comment on table app_private.voice_secrets is
  'An organization''s voice secrets (SHA-256 only); the one with revoked_at NULL is live, at most one per organization.';
create unique index if not exists voice_secrets_live on app_private.voice_secrets (organization_id) where revoked_at is null;

-- A new secret for an organization (its hash), revoking the live one: `svc admin voice secret`
-- and the dashboard's organization page. The organization's row is locked so that two rotations
-- at once end with one live secret.
create or replace function app_private.voice_secret_rotate(organization_id uuid, secret_hash bytea) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  s app_private.voice_secrets;
begin
  perform 1 from app_public.organizations o where o.id = voice_secret_rotate.organization_id for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', format('no organization with id %s', voice_secret_rotate.organization_id));
  end if;
  update app_private.voice_secrets x set revoked_at = now()
   where x.organization_id = voice_secret_rotate.organization_id and x.revoked_at is null;
  insert into app_private.voice_secrets (organization_id, secret_hash)
  values (voice_secret_rotate.organization_id, voice_secret_rotate.secret_hash) returning * into s;
  return jsonb_build_object('id', s.id, 'organization_id', s.organization_id, 'created_at', s.created_at);
end $$;
revoke all on function app_private.voice_secret_rotate(uuid, bytea) from public;

-- The dashboard's "New voice secret": owners and admins of the signed-in person's organization.
create or replace function app_hidden.dashboard_rotate_voice_secret(secret_hash bytea) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  return app_private.voice_secret_rotate(me.organization_id, secret_hash);
end $$;
revoke all on function app_hidden.dashboard_rotate_voice_secret(bytea) from public;
grant execute on function app_hidden.dashboard_rotate_voice_secret(bytea) to svc_request;

-- When the organization's voice secret was made (NULL: it has none), for the dashboard.
create or replace function app_hidden.dashboard_voice_secret_created_at() returns timestamptz
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select s.created_at from app_private.voice_secrets s
   where s.organization_id = app_hidden.current_org_id() and s.revoked_at is null
$$;
revoke all on function app_hidden.dashboard_voice_secret_created_at() from public;
grant execute on function app_hidden.dashboard_voice_secret_created_at() to svc_request;

-- The organization whose live voice secret has this hash, or NULL.
create or replace function app_private.voice_organization(secret_hash bytea) returns uuid
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select s.organization_id from app_private.voice_secrets s
   where s.secret_hash = voice_organization.secret_hash and s.revoked_at is null
$$;
revoke all on function app_private.voice_organization(bytea) from public;

reset role;

--! split: 651-voice-calls.sql
-- A call answered by the receptionist on the phone (src/voice/): the voice platform asks
-- POST /api/v1/receptionist/chat/completions once per turn of the call, with the whole
-- transcript so far and metadata {call_id, from, to}.
--
-- A call is one conversation on channel `chat`: the spec's conversation channels are email,
-- sms and chat, and a call's transcript is a live two-way text thread answered as it happens,
-- which is what a chat is; an `sms` conversation would text the caller every answer. The
-- conversation's business_address is the number that was called, so the inbox and
-- conversations_get show where it came from. app_private.voice_calls maps the platform's call
-- id to it; app_private.voice_turns keeps each turn's inbound message and, once written, its
-- answer, so a platform that repeats a turn (a retry, or after a crash of ours) gets the same
-- answer or has the same message answered, never a second one.

set local role svc_owner;

create table if not exists app_private.voice_calls (
  organization_id uuid not null references app_public.organizations (id) on delete cascade,
  call_id text not null check (length(call_id) between 1 and 200),
  conversation_id uuid not null,
  contact_id uuid not null,
  location_id uuid,
  from_number text not null,
  to_number text not null,
  started_at timestamptz not null default now(),
  turns int not null default 0,
  characters int not null default 0,
  primary key (organization_id, call_id),
  foreign key (organization_id, conversation_id) references app_public.conversations (organization_id, id) on delete cascade
);
comment on table app_private.voice_calls is
  'A call the receptionist answers on the phone: the platform''s call id, its conversation (channel chat), and what it used of its bounds.';
create unique index if not exists voice_calls_conversation on app_private.voice_calls (organization_id, conversation_id);

create table if not exists app_private.voice_turns (
  organization_id uuid not null,
  call_id text not null,
  turn int not null check (turn >= 1),
  message_id uuid not null,
  answer jsonb,
  created_at timestamptz not null default now(),
  primary key (organization_id, call_id, turn),
  foreign key (organization_id, call_id) references app_private.voice_calls (organization_id, call_id) on delete cascade
);
comment on table app_private.voice_turns is
  'One turn of a voice call: the caller''s words as an inbound message, and the answer once written (a repeated turn replays it).';

-- The organization of a voice secret, or 401 (no detail: whether such a secret ever existed is no
-- one's business).
create or replace function app_private.voice_org_or_401(secret_hash bytea) returns uuid
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_organization(secret_hash);
begin
  if org is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Unauthorized');
  end if;
  return org;
end $$;
revoke all on function app_private.voice_org_or_401(bytea) from public;

-- One turn of a call, written before anything answers it. `to` must be one of the organization's
-- numbers (a location's SMS number, or its default number; 404 otherwise); the location is the one
-- whose number it is. The caller is the contact with the `from` number (created when none). The
-- first turn makes the call's conversation. `bounds` ({turns, characters, seconds}) cap a call:
-- past one, the answer is `{"over": "<which>"}` and nothing is written but the hold.
-- Answers {organization_id, conversation_id, contact_id, location_id, message_id, answer, held, over}.
create or replace function app_hidden.voice_turn(secret_hash bytea, call_id text, from_number text, to_number text, turn int,
  body text, bounds jsonb) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
  loc uuid;
  vc app_private.voice_calls;
  vt app_private.voice_turns;
  cv app_public.conversations;
  c app_public.contacts;
  m app_public.conversation_messages;
  over text;
begin
  if not exists (select 1 from app_public.organizations o where o.id = org and o.default_sms_number = to_number)
     and not exists (select 1 from app_public.locations l where l.organization_id = org and l.sms_number = to_number) then
    perform app_hidden.raise_error(404, 'not_found', 'metadata.to is not one of this organization''s numbers');
  end if;
  select l.id into loc from app_public.locations l
   where l.organization_id = org and l.sms_number = to_number order by l.created_at, l.id limit 1;
  -- one turn of a call at a time: a repeated request waits for the first, then finds its turn
  perform pg_advisory_xact_lock(hashtextextended(org::text || '|voice-llm|' || call_id, 0));
  select * into vc from app_private.voice_calls x where x.organization_id = org and x.call_id = voice_turn.call_id for update;
  if not found then
    select * into c from app_public.contacts x where x.organization_id = org and x.phone = from_number;
    if not found then
      insert into app_public.contacts (organization_id, phone) values (org, from_number)
      on conflict (organization_id, phone) where phone is not null do update set updated_at = now()
      returning * into c;
    end if;
    if loc is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id) values (org, c.id, loc) on conflict do nothing;
    end if;
    insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address)
    values (org, c.id, loc, 'chat', to_number) returning * into cv;
    insert into app_private.voice_calls (organization_id, call_id, conversation_id, contact_id, location_id, from_number, to_number)
    values (org, voice_turn.call_id, cv.id, c.id, loc, from_number, to_number) returning * into vc;
  elsif vc.from_number <> from_number or vc.to_number <> to_number then
    perform app_hidden.raise_error(400, 'bad_request', 'metadata: this call_id was begun with other from and to numbers');
  end if;
  select * into cv from app_public.conversations x where x.organization_id = org and x.id = vc.conversation_id;

  select * into vt from app_private.voice_turns x where x.organization_id = org and x.call_id = vc.call_id and x.turn = voice_turn.turn;
  if not found then
    over := case when vc.turns + 1 > (bounds->>'turns')::int then 'turns'
                 when vc.characters + length(body) > (bounds->>'characters')::int then 'characters'
                 when now() > vc.started_at + make_interval(secs => (bounds->>'seconds')::int) then 'seconds' end;
    if over is not null then
      if not cv.ai_held then
        update app_public.conversations x set ai_held = true, held_at = now(), updated_at = now()
         where x.organization_id = org and x.id = cv.id;
      end if;
      return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'contact_id', cv.contact_id,
        'location_id', cv.location_id, 'over', over, 'held', true);
    end if;
    insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author, body, status)
    values (org, cv.id, 'chat', 'inbound', 'contact', body, 'received') returning * into m;
    update app_public.conversations x set last_message_at = greatest(x.last_message_at, m.created_at), updated_at = now()
     where x.organization_id = org and x.id = cv.id;
    update app_public.contacts x set last_seen_at = greatest(x.last_seen_at, now()) where x.organization_id = org and x.id = cv.contact_id;
    update app_private.voice_calls x set turns = x.turns + 1, characters = x.characters + length(body)
     where x.organization_id = org and x.call_id = vc.call_id;
    insert into app_private.voice_turns (organization_id, call_id, turn, message_id) values (org, vc.call_id, voice_turn.turn, m.id)
    returning * into vt;
  end if;
  return jsonb_build_object('organization_id', org, 'conversation_id', cv.id, 'contact_id', cv.contact_id, 'location_id', cv.location_id,
    'message_id', vt.message_id, 'answer', vt.answer, 'held', app_hidden.conversation_response_mode(cv) <> 'ai');
end $$;
revoke all on function app_hidden.voice_turn(bytea, text, text, text, int, text, jsonb) from public;
grant execute on function app_hidden.voice_turn(bytea, text, text, text, int, text, jsonb) to svc_request;

-- What the receptionist knows to answer a turn (conversation_ai_context), for the holder of the
-- organization's voice secret and a conversation of one of its calls only. NULL: not the
-- receptionist's to answer (held, or a later message came).
create or replace function app_hidden.voice_context(secret_hash bytea, conversation_id uuid, message_id uuid) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
begin
  if not exists (select 1 from app_private.voice_calls x where x.organization_id = org and x.conversation_id = voice_context.conversation_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return app_private.conversation_ai_context(org, conversation_id, message_id);
end $$;
revoke all on function app_hidden.voice_context(bytea, uuid, uuid) from public;
grant execute on function app_hidden.voice_context(bytea, uuid, uuid) to svc_request;

-- Writes a turn's answer once: the receptionist's reply as the conversation's message (or the
-- hand-over's hold), and the words spoken, kept with the turn so a repeated turn replays them.
-- `answer` is {kind: reply|handover, text, reason?, spoken}. Answers the turn's answer as kept.
create or replace function app_hidden.voice_record(secret_hash bytea, call_id text, turn int, answer jsonb) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
  vc app_private.voice_calls;
  vt app_private.voice_turns;
begin
  select * into vc from app_private.voice_calls x where x.organization_id = org and x.call_id = voice_record.call_id for update;
  select * into vt from app_private.voice_turns x where x.organization_id = org and x.call_id = voice_record.call_id and x.turn = voice_record.turn
     for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Turn not found');
  end if;
  if vt.answer is not null then
    return vt.answer;
  end if;
  perform app_private.conversation_ai_record(org, vc.conversation_id, vt.message_id,
    jsonb_build_object('kind', answer->>'kind', 'text', answer->>'text', 'reason', answer->>'reason'), array['chat']);
  update app_private.voice_turns x set answer = voice_record.answer
   where x.organization_id = org and x.call_id = vt.call_id and x.turn = vt.turn;
  return answer;
end $$;
revoke all on function app_hidden.voice_record(bytea, text, int, jsonb) from public;
grant execute on function app_hidden.voice_record(bytea, text, int, jsonb) to svc_request;

-- The organization of a voice secret for the endpoint's first check, before the body is read
-- (401 otherwise): a wrong secret learns nothing about its body.
create or replace function app_hidden.voice_authenticate(secret_hash bytea) returns uuid
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_private.voice_org_or_401(secret_hash)
$$;
revoke all on function app_hidden.voice_authenticate(bytea) from public;
grant execute on function app_hidden.voice_authenticate(bytea) to svc_request;

reset role;

--! split: 652-voice-call-links.sql
-- What a call did: calls_list and calls_get show the conversation the receptionist had on the
-- call (the voice platform's call id names both: app_private.voice_calls) and the appointments
-- that conversation booked (its interaction's appointment_id, set by the receptionist when it
-- books), so a call recorded by the voice webhook is tied to what it did. Added fields only.
-- The receptionist's conversation on a call and the appointments it booked, by the platform's
-- call id (app_private.voice_calls is no reader's table: this definer reads it for call_json).
set local role svc_owner;

create or replace function app_hidden.call_voice_links(organization_id uuid, external_id text) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object('conversation_id', v.conversation_id,
    'appointment_ids', coalesce((select jsonb_agg(distinct i.appointment_id)
                                   from app_public.interactions i
                                  where i.organization_id = call_voice_links.organization_id and i.conversation_id = v.conversation_id
                                    and i.appointment_id is not null), '[]'))
    from (select (select x.conversation_id from app_private.voice_calls x
                   where x.organization_id = call_voice_links.organization_id and x.call_id = call_voice_links.external_id)
                 as conversation_id) v
$$;
revoke all on function app_hidden.call_voice_links(uuid, text) from public;
grant execute on function app_hidden.call_voice_links(uuid, text) to svc_request, svc_worker;

create or replace function app_hidden.call_json(c app_public.calls) returns jsonb
language sql stable parallel safe as $$
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
    'created_at', c.created_at) || app_hidden.call_voice_links(c.organization_id, c.external_id)
$$;
comment on function app_hidden.call_json(app_public.calls) is
  'A call as calls_list and calls_get answer it (without its transcript), with the conversation the receptionist had on it and the appointments it booked.';

reset role;

--! split: 653-voice-receptionist.sql
-- The receptionist on the phone is the receptionist of SMS and chat: the same context
-- (app_private.receptionist_context), the same claims for its tool calls
-- (app_hidden.receptionist_authenticate: a MANAGER of the called location, bound to the caller's
-- contact), the same record of its turn (app_private.receptionist_record: the pending offer, the
-- booked appointment's interaction, the hand-over's hold, email and event). The phone's request
-- holds no owner connection: each of these is reached through a function that first checks the
-- voice secret's hash and that the conversation is one of that organization's calls.

-- The call's conversation of this secret's organization, or 404.
set local role svc_owner;

create or replace function app_private.voice_conversation(secret_hash bytea, conversation_id uuid) returns uuid
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
begin
  if not exists (select 1 from app_private.voice_calls x where x.organization_id = org and x.conversation_id = voice_conversation.conversation_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return org;
end $$;
revoke all on function app_private.voice_conversation(bytea, uuid) from public;

create or replace function app_hidden.voice_context(secret_hash bytea, conversation_id uuid, message_id uuid) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.receptionist_context(app_private.voice_conversation(secret_hash, conversation_id), conversation_id, message_id);
end $$;

-- The receptionist's claims for one tool call of a call (receptionist_authenticate's), for the
-- holder of the organization's voice secret only.
create or replace function app_hidden.voice_receptionist_authenticate(secret_hash bytea, organization_id uuid, conversation_id uuid,
  operation_id text, tool_input jsonb, required_scope text, member_access text, manager_power text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_private.voice_conversation(secret_hash, conversation_id) is distinct from organization_id then
    perform app_hidden.raise_error(401, 'unauthorized', 'Unauthorized');
  end if;
  return app_hidden.receptionist_authenticate(organization_id, conversation_id, operation_id, tool_input, required_scope,
    member_access, manager_power);
end $$;
revoke all on function app_hidden.voice_receptionist_authenticate(bytea, uuid, uuid, text, jsonb, text, text, text) from public;
grant execute on function app_hidden.voice_receptionist_authenticate(bytea, uuid, uuid, text, jsonb, text, text, text) to svc_request;

-- Writes a turn's answer once: the receptionist's turn as for SMS and chat (`decided`: its
-- answer, `state`: the dialogue's pending offer), and the words spoken (`answer`), kept with the
-- turn so a repeated turn replays them.
drop function if exists app_hidden.voice_record(bytea, text, int, jsonb);
create or replace function app_hidden.voice_record(secret_hash bytea, call_id text, turn int, answer jsonb, decided jsonb,
  state jsonb, inbox_url text) returns jsonb
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  org uuid := app_private.voice_org_or_401(secret_hash);
  vc app_private.voice_calls;
  vt app_private.voice_turns;
begin
  select * into vc from app_private.voice_calls x where x.organization_id = org and x.call_id = voice_record.call_id for update;
  select * into vt from app_private.voice_turns x where x.organization_id = org and x.call_id = voice_record.call_id and x.turn = voice_record.turn
     for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Turn not found');
  end if;
  if vt.answer is not null then
    return vt.answer;
  end if;
  perform app_private.receptionist_record(org, vc.conversation_id, vt.message_id, decided, array['chat'], state, inbox_url);
  update app_private.voice_turns x set answer = voice_record.answer
   where x.organization_id = org and x.call_id = vt.call_id and x.turn = vt.turn;
  return answer;
end $$;
revoke all on function app_hidden.voice_record(bytea, text, int, jsonb, jsonb, jsonb, text) from public;
grant execute on function app_hidden.voice_record(bytea, text, int, jsonb, jsonb, jsonb, text) to svc_request;

reset role;
