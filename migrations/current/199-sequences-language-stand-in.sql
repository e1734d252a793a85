-- Stand-in for 200-sequences-language.sql until that file arrives: the same signatures, the
-- least behaviour the engine's tests need. Deleted once 200 is merged (200 runs after this one
-- and replaces each function).
set local role svc_owner;

create or replace function app_hidden.render_template(template text, vars jsonb, html boolean) returns text
language plpgsql immutable as $$
declare
  m text[];
  out text := '';
  rest text := coalesce(template, '');
  pos int;
  val text;
begin
  loop
    m := regexp_match(rest, '\{\{\s*([a-z_][a-z0-9_.]*)\s*(?:\|([^}]*))?\}\}');
    exit when m is null;
    pos := strpos(rest, substring(rest from '\{\{\s*[a-z_][a-z0-9_.]*\s*(?:\|[^}]*)?\}\}'));
    out := out || substr(rest, 1, pos - 1);
    val := coalesce(nullif(vars->>m[1], ''), m[2], '');
    if html then
      val := replace(replace(replace(replace(replace(val, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;');
    end if;
    out := out || val;
    rest := substr(rest, pos + length(substring(rest from '\{\{\s*[a-z_][a-z0-9_.]*\s*(?:\|[^}]*)?\}\}')));
  end loop;
  return out || rest;
end $$;

create or replace function app_hidden.sequence_message_variables(organization_id uuid, contact_id uuid, location_id uuid,
  unsubscribe_url text) returns jsonb
language sql stable security definer set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'contact.first_name', split_part(c.name, ' ', 1), 'contact.name', c.name, 'contact.email', c.email::text,
    'location.name', (select l.name from app_public.locations l
                       where l.organization_id = sequence_message_variables.organization_id and l.id = sequence_message_variables.location_id),
    'organization.name', o.name, 'unsubscribe_url', unsubscribe_url)
    from app_public.contacts c join app_public.organizations o on o.id = c.organization_id
   where c.organization_id = sequence_message_variables.organization_id and c.id = sequence_message_variables.contact_id
$$;

create or replace function app_hidden.condition_holds(organization_id uuid, contact_id uuid, enrollment_id uuid, condition jsonb)
returns boolean
language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp as $$
declare
  c app_public.contacts;
begin
  select * into c from app_public.contacts x where x.organization_id = condition_holds.organization_id and x.id = condition_holds.contact_id;
  if condition->>'field' like 'event.%' then
    return (exists (select 1 from app_public.enrollment_events e where e.organization_id = condition_holds.organization_id
                      and e.enrollment_id = condition_holds.enrollment_id and e.type = substr(condition->>'field', 7)))
           = (condition->>'op' = 'exists');
  elsif condition->>'field' = 'stage_id' then
    return case condition->>'op' when 'eq' then c.stage_id::text = condition->>'value' when 'neq' then c.stage_id::text is distinct from condition->>'value'
      when 'exists' then c.stage_id is not null else c.stage_id is null end;
  elsif condition->>'field' like 'field_values.%' then
    return case condition->>'op' when 'eq' then c.field_values->>substr(condition->>'field', 14) = condition->>'value'
      when 'neq' then c.field_values->>substr(condition->>'field', 14) is distinct from condition->>'value'
      when 'exists' then c.field_values ? substr(condition->>'field', 14) else not c.field_values ? substr(condition->>'field', 14) end;
  end if;
  return false;
end $$;

create or replace function app_hidden.condition_valid(condition jsonb) returns boolean
language sql immutable as $$ select jsonb_typeof(condition) = 'object' and condition ? 'field' and condition ? 'op' $$;

grant execute on function app_hidden.render_template(text, jsonb, boolean), app_hidden.condition_valid(jsonb) to svc_request, svc_worker;

reset role;
