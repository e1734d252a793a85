-- A sequence's trigger or exit condition that names an object by id (form_submitted's form_id,
-- appointment_booked's location_id) names one of the organization's, in the caller's reach:
-- anything else is 404 not_found, as for an unknown audience, location or send schedule
-- (sequences_create), and nothing is written. Runs as the caller, so the policies of forms and
-- locations decide reach (the operator's fixtures run as the owner: the organization only).
set local role svc_owner;

create or replace function app_hidden.sequence_fields_problem(organization_id uuid, obj jsonb, fields jsonb) RETURNS text
language plpgsql stable
as $_$
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
        -- another organization's form, or one out of the caller's reach: as if it did not exist
        if k = 'form_id' and not exists (select 1 from app_public.forms f
                                           where f.organization_id = sequence_fields_problem.organization_id
                                             and f.id = (v #>> '{}')::uuid) then
          perform app_hidden.raise_error(404, 'not_found', 'Form not found (forms_list lists them)');
        end if;
        if k = 'location_id' and not exists (select 1 from app_public.locations l
                                               where l.organization_id = sequence_fields_problem.organization_id
                                                 and l.id = (v #>> '{}')::uuid
                                                 and (app_hidden.current_org_id() is null or app_hidden.current_in_reach(l.id))) then
          perform app_hidden.raise_error(404, 'not_found', 'Location not found (locations_list lists them)');
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
end $_$;

grant execute on function app_hidden.sequence_fields_problem(uuid, jsonb, jsonb) to svc_request, svc_worker;

reset role;
