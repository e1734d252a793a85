-- The renderer bench/contact-renderer.ts compares the generated one with: app_hidden.contacts_json
-- as migrations 000008–000012 left it, before migration 000013 generated it from
-- app_private.contact_fields.
--
-- Generated once from history, not by hand: a database migrated with migrations/committed/
-- 000001-000012, then pg_get_functiondef of the function. Later migrations cannot change what a
-- database at 000012 held, so this file needs no regeneration. The bench renames it.
CREATE OR REPLACE FUNCTION app_hidden.contacts_json(contacts app_public.contacts[])
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public', 'pg_temp'
AS $function$
declare
  org uuid := app_hidden.current_org_id();
  reach uuid[] := app_hidden.current_location_ids();
begin
  return (
    select coalesce(jsonb_agg(jsonb_build_object(
      'id', c.id,
      'name', c.name,
      'email', c.email,
      'phone', c.phone,
      'stage_id', c.stage_id,
      'stage', (select jsonb_build_object('id', s.id, 'name', s.name) from app_public.pipeline_stages s
                 where s.organization_id = c.organization_id and s.id = c.stage_id),
      'tags', coalesce((select jsonb_agg(t.name order by t.name) from app_public.contact_tags ct
                          join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                         where ct.organization_id = c.organization_id and ct.contact_id = c.id), '[]'),
      'custom_fields', c.field_values,
      'notes_count', c.notes_count,
      'location_ids', coalesce((select jsonb_agg(cl.location_id order by cl.location_id) from app_public.contact_locations cl
                                 where cl.organization_id = c.organization_id and cl.contact_id = c.id
                                   and (reach is null or cl.location_id = any(reach))), '[]'),
      'sms_consent', c.sms_consent,
      'sms_consent_at', c.sms_consent_at,
      'email_suppressed', c.email is not null and exists (
        select 1 from app_public.email_suppressions es where es.organization_id = c.organization_id and es.email = c.email_key),
      'sms_opted_out', c.phone is not null and exists (
        select 1 from app_public.sms_opt_outs so
         where so.organization_id = c.organization_id and so.phone = c.phone and so.ended_at is null),
      'total_calls', c.total_calls,
      'first_seen_at', c.first_seen_at,
      'last_seen_at', c.last_seen_at,
      'created_at', c.created_at,
      'updated_at', c.updated_at) order by c.ordinality), '[]')
      from unnest(contacts) with ordinality as c
     where c.organization_id = org);
end $function$

;
