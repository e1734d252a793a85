--! Previous: sha1:6b8f2b4083f8a6bf76db9080f5c1d8b0de51a56f
--! Hash: sha1:53b874c97f98adc5a7268402fe9ac0a9b0309e3c
--! Message: Contacts: contacts_update takes a stage id in any case, as every other id

--! split: 010-contacts-update-stage-id-any-case.sql
-- contacts_update: a stage id in capitals is the same stage (a UUID's hex digits are case-free;
-- the body takes any case, and every other id of the API is compared as a uuid). The check
-- compared the text of the id as sent, so an uppercase id of a real stage was 400.
set local role svc_owner;

create or replace function app_public.contacts_update(contact_id uuid, patch jsonb) returns jsonb
language plpgsql volatile as $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
  violated text;
begin
  if patch ? 'stage_id' and jsonb_typeof(patch->'stage_id') <> 'null' and not exists (
      select 1 from app_public.pipeline_stages s
       where s.organization_id = c.organization_id and s.id::text = lower(patch->>'stage_id')) then
    perform app_hidden.raise_error(400, 'bad_request',
      format('stage_id: %s is not a stage of the organization''s pipeline', patch->>'stage_id'),
      jsonb_build_object('field', 'stage_id'));
  end if;
  perform app_hidden.check_custom_fields(patch->'custom_fields');

  begin
    update app_public.contacts x
       set name = case when patch ? 'name' then patch->>'name' else x.name end,
           email = case when patch ? 'email' then (patch->>'email')::citext else x.email end,
           phone = case when patch ? 'phone' then patch->>'phone' else x.phone end,
           stage_id = case when patch ? 'stage_id' then (patch->>'stage_id')::uuid else x.stage_id end,
           field_values = case when patch ? 'custom_fields'
                               then jsonb_strip_nulls(x.field_values || (patch->'custom_fields'))
                               else x.field_values end,
           updated_at = now()
     where x.organization_id = c.organization_id and x.id = c.id
    returning * into c;
  exception when unique_violation then
    get stacked diagnostics violated = constraint_name;
    perform app_hidden.raise_error(409, 'conflict',
      case violated when 'contacts_org_phone' then 'Another contact already uses this phone number'
                    else 'Another contact already uses this email address' end);
  end;
  return app_hidden.contact_json(c);
end $$;
comment on function app_public.contacts_update(uuid, jsonb) is
  'contacts_update: changes only the fields present in patch (name, email, phone, stage_id, custom_fields; '
  'a custom field set to null is removed); 400 for an unknown stage or custom field, 409 when another contact has the email or phone.';

reset role;
