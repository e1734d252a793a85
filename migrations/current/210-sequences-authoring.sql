-- Writing sequences: the record, its checks, the transitions (activate, pause, resume, deactivate),
-- duplicate, and the discovery an agent authors from (../shared/design/sequences.md).
--
-- Trigger types and exit-condition types are rows (app_private.sequence_trigger_types,
-- app_private.sequence_exit_types), each with the fields it takes: discovery lists the rows and
-- the checks read the same rows, so an area that brings a new trigger (form_submitted with the
-- forms, appointment_booked with the appointments) plugs in by inserting its row, and discovery
-- never offers what the service would refuse.
--
-- A field spec is {"type": "string"|"uuid"|"enum"|"condition", "required": bool, "max_length": n,
-- "pattern": regex, "values": [...], "only_when": {"<other field>": "<value>"}, "description": …}.
set local role svc_owner;

--------------------------------------------------------------------------------
-- Trigger and exit types, as data
--------------------------------------------------------------------------------
create table if not exists app_private.sequence_trigger_types (
  type text primary key check (type ~ '^[a-z][a-z0-9_]{0,49}$'),
  area text not null,
  description text not null,
  fields jsonb not null default '{}' check (jsonb_typeof(fields) = 'object'),
  position int not null default 100
);
comment on table app_private.sequence_trigger_types is
  'The trigger types sequences accept, with the fields each takes; an area adds its own row when it goes live.';

create table if not exists app_private.sequence_exit_types (
  type text primary key check (type ~ '^[a-z][a-z0-9_]{0,49}$'),
  area text not null,
  description text not null,
  fields jsonb not null default '{}' check (jsonb_typeof(fields) = 'object'),
  position int not null default 100
);
comment on table app_private.sequence_exit_types is
  'The exit-condition types sequences accept, with the fields each takes; an area adds its own row when it goes live.';

-- Read only through the definer functions below (no policy: no request role reads them directly).
alter table app_private.sequence_trigger_types enable row level security;
alter table app_private.sequence_exit_types enable row level security;

insert into app_private.sequence_trigger_types (type, area, description, fields, position) values
  ('manual', 'sequences', 'Contacts enter only through sequences_enroll.', '{}', 1),
  ('event', 'sequences', 'Contacts enter when contacts_upsert fires the named event for them (events[].name).',
   '{"event": {"type": "string", "required": true, "pattern": "^[a-z][a-z0-9_]{0,99}$", "max_length": 100,
               "description": "The event name, as contacts_upsert sends it (for example assessment_abandoned)."},
     "assessmentAudience": {"type": "enum", "values": ["started", "never_started"], "only_when": {"event": "assessment_abandoned"},
               "description": "Only with assessment_abandoned: started needs a positive fields.user_message_count, never_started zero."}}', 2),
  ('tag_added', 'sequences', 'Contacts enter when the tag is added to them.',
   '{"tag": {"type": "string", "required": true, "max_length": 120, "description": "The tag''s name (case-insensitive)."}}', 3)
on conflict (type) do update set area = excluded.area, description = excluded.description, fields = excluded.fields,
  position = excluded.position;

insert into app_private.sequence_exit_types (type, area, description, fields, position) values
  ('replied', 'sequences', 'The contact replied on one of the sequence''s channels (auto-replies such as out-of-office do not count).', '{}', 1),
  ('tag_added', 'sequences', 'The tag was added to the contact.',
   '{"tag": {"type": "string", "required": true, "max_length": 120, "description": "The tag''s name (case-insensitive)."}}', 2),
  ('stage_changed', 'sequences', 'The contact moved to the pipeline stage.',
   '{"stage_id": {"type": "uuid", "required": true, "description": "A stage of contacts_list_stages."}}', 3),
  ('condition', 'sequences', 'The condition holds (checked when an event arrives and before each send).',
   '{"condition": {"type": "condition", "required": true, "description": "A condition of sequences_get_condition_vocabulary."}}', 4)
on conflict (type) do update set area = excluded.area, description = excluded.description, fields = excluded.fields,
  position = excluded.position;

create or replace function app_hidden.sequence_trigger_types()
returns table (type text, area text, description text, fields jsonb)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select t.type, t.area, t.description, t.fields from app_private.sequence_trigger_types t order by t.position, t.type
$$;
comment on function app_hidden.sequence_trigger_types() is 'The trigger types sequences accept (sequences_list_triggers).';
grant execute on function app_hidden.sequence_trigger_types() to svc_request, svc_worker;

create or replace function app_hidden.sequence_exit_types()
returns table (type text, area text, description text, fields jsonb)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select t.type, t.area, t.description, t.fields from app_private.sequence_exit_types t order by t.position, t.type
$$;
comment on function app_hidden.sequence_exit_types() is 'The exit-condition types sequences accept.';
grant execute on function app_hidden.sequence_exit_types() to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Limits
--------------------------------------------------------------------------------
-- One place for the numbers: the checks below read them, and sequences_capabilities shows them.
create or replace function app_hidden.sequence_limits() returns jsonb
language sql immutable parallel safe as $$
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
$$;
comment on function app_hidden.sequence_limits() is 'The limits of a sequence''s definition (sequences_capabilities).';
grant execute on function app_hidden.sequence_limits() to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- Checks
--------------------------------------------------------------------------------
create or replace function app_hidden.sequence_bad(at text, message text) returns void
language plpgsql as $$
begin
  perform app_hidden.raise_error(400, 'bad_request', at || ': ' || message,
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', at, 'message', message))));
end $$;
comment on function app_hidden.sequence_bad(text, text) is 'Raises 400 bad_request naming the part of a sequence to fix.';
grant execute on function app_hidden.sequence_bad(text, text) to svc_request, svc_worker;

-- An object against a field spec of a trigger or exit type (see the top of this file); the
-- first problem, NULL for none.
drop function if exists app_hidden.sequence_fields_problem(uuid, jsonb, jsonb);
create or replace function app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) returns text
language plpgsql stable as $$
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
end $$;
grant execute on function app_hidden.sequence_fields_problem(uuid, jsonb, jsonb) to svc_request, svc_worker;

-- The trigger of an automation: NULL (a draft without one; activation says trigger_missing) or
-- an object of a type of app_private.sequence_trigger_types with that type's fields.
create or replace function app_hidden.sequence_check_trigger(organization_id uuid, trigger jsonb, at text) returns void
language plpgsql stable as $$
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
grant execute on function app_hidden.sequence_check_trigger(uuid, jsonb, text) to svc_request, svc_worker;

-- Steps, as stored: [{step_key, type, delay, subject?, body?}] with one delay unit; a draft may
-- leave subject and body empty (activation says empty_content). Returns the steps normalized
-- (delay {minutes: 0} when none is given).
create or replace function app_hidden.sequence_check_steps(steps jsonb, at text) returns jsonb
language plpgsql stable as $$
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
grant execute on function app_hidden.sequence_check_steps(jsonb, text) to svc_request, svc_worker;

-- Edges [{from, to, condition?}] between the steps' keys; the condition well formed for the
-- organization (custom fields, stages).
create or replace function app_hidden.sequence_check_edges(organization_id uuid, edges jsonb, steps jsonb, at text) returns jsonb
language plpgsql stable as $$
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
grant execute on function app_hidden.sequence_check_edges(uuid, jsonb, jsonb, text) to svc_request, svc_worker;

create or replace function app_hidden.sequence_check_exits(organization_id uuid, exits jsonb, at text) returns void
language plpgsql stable as $$
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
grant execute on function app_hidden.sequence_check_exits(uuid, jsonb, text) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- The record
--------------------------------------------------------------------------------
create or replace function app_hidden.sequence_json(s app_public.sequences) returns jsonb
language sql stable as $$
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
comment on function app_hidden.sequence_json(app_public.sequences) is 'A sequence as the API shows it (sequences.md, "The sequence record").';
grant execute on function app_hidden.sequence_json(app_public.sequences) to svc_request, svc_worker;

-- The sequence, within the credential's reach (404 otherwise); for a write, locked, and 403 when
-- the credential sees it but may not change it (a manager and an organization-wide sequence).
-- (A locking read under row security sees only the rows the update policy lets the credential
-- change, so the sequence is read first, then checked, then locked.)
create or replace function app_hidden.sequence_for(sequence_id uuid, for_write boolean) returns app_public.sequences
language plpgsql volatile as $$
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
grant execute on function app_hidden.sequence_for(uuid, boolean) to svc_request;

-- A location a sequence may be written for: the organization's, in reach (404), and for a
-- manager one of its own (an organization-wide sequence is 403).
create or replace function app_hidden.sequence_check_location(location_id uuid) returns void
language plpgsql stable as $$
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
grant execute on function app_hidden.sequence_check_location(uuid) to svc_request;

create or replace function app_hidden.sequence_check_send_schedule(send_schedule_id uuid) returns void
language plpgsql stable as $$
begin
  if send_schedule_id is not null and not exists (
       select 1 from app_public.send_schedules x
        where x.organization_id = app_hidden.current_org_id() and x.id = send_schedule_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Send schedule not found');
  end if;
end $$;
grant execute on function app_hidden.sequence_check_send_schedule(uuid) to svc_request;

-- audience as the body gives it: {"id": uuid}, the id itself, or null.
create or replace function app_hidden.sequence_audience_id(audience jsonb) returns uuid
language plpgsql stable as $$
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
end $$;
grant execute on function app_hidden.sequence_audience_id(jsonb) to svc_request;

--------------------------------------------------------------------------------
-- Activation blockers
--------------------------------------------------------------------------------
-- Every reason the sequence cannot send, at once: [{code, message, step_key?}] (codes of
-- sequences.md). Read as the owner, since the organization's sending domain and numbers are not
-- the credential's to read; the caller has already read the sequence within its reach.
create or replace function app_hidden.sequence_blockers(s app_public.sequences) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_hidden.sequence_blockers(app_public.sequences) is
  'Every reason a sequence cannot be activated: [{code, message, step_key?}] ([] when none).';
revoke all on function app_hidden.sequence_blockers(app_public.sequences) from public;
grant execute on function app_hidden.sequence_blockers(app_public.sequences) to svc_request, svc_worker;

create or replace function app_hidden.sequence_require_no_blockers(s app_public.sequences) returns void
language plpgsql stable as $$
declare
  b jsonb := app_hidden.sequence_blockers(s);
begin
  if jsonb_array_length(b) > 0 then
    perform app_hidden.raise_error(400, 'sequence_activation_blocked',
      format('The sequence cannot be activated: %s', (select string_agg(x->>'code', ', ') from jsonb_array_elements(b) x)),
      jsonb_build_object('blockers', b));
  end if;
end $$;
grant execute on function app_hidden.sequence_require_no_blockers(app_public.sequences) to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- What a transition does to the enrollments
--------------------------------------------------------------------------------
-- Enrollment events are written by the owner only; this helper acts for the current credential
-- on a sequence it may write (checked again here, as it runs as the owner):
--   pause:      every active enrollment paused (paused_at now), with a 'paused' event
--   resume:     every paused enrollment active again, its due times moved forward by the time it
--               was held (now - paused_at), a 'resumed' event, and its step job scheduled
--   deactivate: every live enrollment cancelled (reason sequence_deactivated)
-- A pending sequence_step job of a paused or cancelled enrollment finds it so and does nothing.
create or replace function app_hidden.sequence_move_enrollments(sequence_id uuid, action text) returns int
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
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
               next_run_at = e.next_run_at + (now() - e.paused_at), paused_at = null, updated_at = now()
         where e.organization_id = org and e.sequence_id = sequence_move_enrollments.sequence_id and e.status = 'paused'
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
comment on function app_hidden.sequence_move_enrollments(uuid, text) is
  'Pauses, resumes (due times moved by the time held, jobs scheduled) or cancels (deactivation) the live enrollments of '
  'a sequence the current credential may write; returns how many moved.';
revoke all on function app_hidden.sequence_move_enrollments(uuid, text) from public;
grant execute on function app_hidden.sequence_move_enrollments(uuid, text) to svc_request;

--------------------------------------------------------------------------------
-- Operations
--------------------------------------------------------------------------------
create or replace function app_public.sequences_list() returns jsonb
language sql stable as $$
  select jsonb_build_object('items', coalesce(jsonb_agg(app_hidden.sequence_json(s) order by s.created_at desc, s.id desc), '[]'))
    from app_public.sequences s
   where s.organization_id = app_hidden.current_org_id()
$$;
comment on function app_public.sequences_list() is
  'sequences_list: the sequences in reach (organization-wide ones and those of the credential''s locations), newest first.';

create or replace function app_public.sequences_get(sequence_id uuid) returns jsonb
language plpgsql stable as $$
begin
  return app_hidden.sequence_json(app_hidden.sequence_for(sequence_id, false));
end $$;
comment on function app_public.sequences_get(uuid) is 'sequences_get: one sequence in reach, or 404.';

-- body: {name, kind?, location_id?, send_schedule_id?, audience?, trigger?, steps?, edges?, exit_conditions?, is_active?}
create or replace function app_public.sequences_create(body jsonb) returns jsonb
language plpgsql as $$
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
comment on function app_public.sequences_create(jsonb) is
  'sequences_create: an inactive draft (is_active true is 400); 404 for an unknown audience, location or send schedule; '
  'a manager gives one of its own locations.';

create or replace function app_hidden.sequence_activate(s app_public.sequences) returns app_public.sequences
language plpgsql as $$
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
grant execute on function app_hidden.sequence_activate(app_public.sequences) to svc_request;

-- patch: the fields sent, each replacing what is stored (steps, edges, exit_conditions whole).
create or replace function app_public.sequences_update(sequence_id uuid, patch jsonb) returns jsonb
language plpgsql as $$
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
comment on function app_public.sequences_update(uuid, jsonb) is
  'sequences_update: changes the fields sent (steps, edges, exit_conditions whole; a step enrollments stand on stays); '
  'is_active false deactivates and cancels every live enrollment, true activates.';

create or replace function app_public.sequences_activate(sequence_id uuid) returns jsonb
language plpgsql as $$
begin
  return app_hidden.sequence_json(app_hidden.sequence_activate(app_hidden.sequence_for(sequence_id, true)));
end $$;
comment on function app_public.sequences_activate(uuid) is
  'sequences_activate: inactive to active, or 400 sequence_activation_blocked with every blocker; active stays as it is.';

create or replace function app_public.sequences_pause(sequence_id uuid) returns jsonb
language plpgsql as $$
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
comment on function app_public.sequences_pause(uuid) is
  'sequences_pause: an active automation paused with every enrollment held; a broadcast is 400, an inactive one 409.';

create or replace function app_public.sequences_resume(sequence_id uuid) returns jsonb
language plpgsql as $$
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
comment on function app_public.sequences_resume(uuid) is
  'sequences_resume: a paused sequence active again, each enrollment''s due times moved forward by the time held; '
  '409 sequence_not_paused otherwise.';

create or replace function app_public.sequences_duplicate(sequence_id uuid) returns jsonb
language plpgsql as $$
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
comment on function app_public.sequences_duplicate(uuid) is 'sequences_duplicate: an inactive copy named "… (copy)".';

--------------------------------------------------------------------------------
-- Discovery
--------------------------------------------------------------------------------
create or replace function app_public.sequences_capabilities() returns jsonb
language sql stable as $$
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
comment on function app_public.sequences_capabilities() is 'sequences_capabilities: kinds, step types, delay units and bounds, limits.';

create or replace function app_public.sequences_list_triggers() returns jsonb
language sql stable as $$
  select jsonb_build_object('items', coalesce(jsonb_agg(jsonb_build_object('type', t.type, 'description', t.description,
    'fields', t.fields)), '[]'))
    from app_hidden.sequence_trigger_types() t
$$;
comment on function app_public.sequences_list_triggers() is 'sequences_list_triggers: the trigger types accepted now, with their fields.';

create or replace function app_public.sequences_list_variables() returns jsonb
language sql stable as $$
  select jsonb_build_object('items', jsonb_agg(jsonb_build_object('name', v.name, 'description', v.description,
    'example', v.example)))
    from app_hidden.sequence_variables() v
$$;
comment on function app_public.sequences_list_variables() is 'sequences_list_variables: the {{variables}} a message may use.';

create or replace function app_public.sequences_get_condition_vocabulary() returns jsonb
language sql stable as $$
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
comment on function app_public.sequences_get_condition_vocabulary() is
  'sequences_get_condition_vocabulary: the fields, ops and events a condition may use, and the exit-condition types.';

create or replace function app_public.sequences_list_send_schedules(page int, "limit" int) returns jsonb
language sql stable as $$
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
comment on function app_public.sequences_list_send_schedules(int, int) is
  'sequences_list_send_schedules: a page of the organization''s send schedules, the default first, with their windows.';

revoke all on function app_public.sequences_list(), app_public.sequences_get(uuid), app_public.sequences_create(jsonb),
  app_public.sequences_update(uuid, jsonb), app_public.sequences_activate(uuid), app_public.sequences_pause(uuid),
  app_public.sequences_resume(uuid), app_public.sequences_duplicate(uuid), app_public.sequences_capabilities(),
  app_public.sequences_list_triggers(), app_public.sequences_list_variables(),
  app_public.sequences_get_condition_vocabulary(), app_public.sequences_list_send_schedules(int, int) from public;
grant execute on function app_public.sequences_list(), app_public.sequences_get(uuid), app_public.sequences_create(jsonb),
  app_public.sequences_update(uuid, jsonb), app_public.sequences_activate(uuid), app_public.sequences_pause(uuid),
  app_public.sequences_resume(uuid), app_public.sequences_duplicate(uuid), app_public.sequences_capabilities(),
  app_public.sequences_list_triggers(), app_public.sequences_list_variables(),
  app_public.sequences_get_condition_vocabulary(), app_public.sequences_list_send_schedules(int, int) to svc_request;

reset role;
