-- The baseline of bench:contacts (bench/baseline.ts runs this in a copy of the loaded database):
-- the contact renderer (under nested policies), the q matcher, contacts_search, contacts_upsert (the
-- row written under the contacts policies) and the (organization_id, search text) trigram index
-- without a pending list, as they were before migrations 000008 and 000011.
--
-- Generated once from history, not by hand: a database migrated with migrations/committed/
-- 000001-000007 (all there was at commit b3ee21b; committed files never change), then
-- pg_get_functiondef of each function and pg_get_indexdef of the index. Later migrations cannot
-- change what a database at 000007 held, so this file needs no regeneration.
set role svc_owner;

CREATE OR REPLACE FUNCTION app_hidden.contact_json(c app_public.contacts)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  return jsonb_build_object(
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
                               where cl.organization_id = c.organization_id and cl.contact_id = c.id), '[]'),
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
    'updated_at', c.updated_at);
end $function$;

CREATE OR REPLACE FUNCTION app_hidden.contacts_matching(pattern text, digits text)
 RETURNS TABLE(id uuid, name text, last_seen_at timestamp with time zone)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER ROWS 100
 SET search_path TO 'pg_catalog', 'public', 'pg_temp'
AS $function$
begin
  if digits is null then
    return query
      select c.id, c.name, c.last_seen_at from app_public.contacts c
       where c.organization_id = app_hidden.current_org_id()
         and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike pattern
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern);
  else
    return query
      select c.id, c.name, c.last_seen_at from app_public.contacts c
       where c.organization_id = app_hidden.current_org_id()
         and (app_hidden.contact_search_text(c.name, c.email, c.phone) ilike pattern
              or app_hidden.contact_search_text(c.name, c.email, c.phone) like digits)
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern or c.phone like digits);
  end if;
end $function$;

CREATE OR REPLACE FUNCTION app_public.contacts_search(q text, email citext, phone text, page integer, page_size integer)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
declare
  org uuid := app_hidden.current_org_id();
  details boolean := app_hidden.current_sees_contact_details();
  skip int := (page - 1) * page_size;
  total bigint;
  items jsonb;
  pattern text;
  digits text;
begin
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
    -- those it may read (an index-only probe each), and the page is read under them too.
    if details then
      with matches as materialized (
        select m.id, m.last_seen_at from app_hidden.contacts_matching(pattern, digits) m
         where exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = m.id))
      select (select count(*) from matches),
             (select coalesce(jsonb_agg(app_hidden.contact_json(c) order by p.last_seen_at desc, p.id), '[]')
                from (select * from matches order by last_seen_at desc, id limit page_size offset skip) p
                join app_public.contacts c on c.organization_id = org and c.id = p.id)
        into total, items;
    else
      with matches as materialized (
        select m.id, m.name from app_hidden.contacts_matching(pattern, digits) m
         where exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = m.id))
      select (select count(*) from matches),
             (select coalesce(jsonb_agg(app_hidden.contact_card(c) order by p.name, p.id), '[]')
                from (select * from matches order by name, id limit page_size offset skip) p
                join app_public.contacts c on c.organization_id = org and c.id = p.id)
        into total, items;
    end if;
  elsif details then
    select count(*) into total from app_public.contacts c where c.organization_id = org;
    select coalesce(jsonb_agg(app_hidden.contact_json(p) order by p.last_seen_at desc, p.id), '[]') into items
      from (select * from app_public.contacts c where c.organization_id = org
             order by c.last_seen_at desc, c.id limit page_size offset skip) p;
  else
    select count(*) into total from app_public.contacts c where c.organization_id = org;
    select coalesce(jsonb_agg(app_hidden.contact_card(p) order by p.name, p.id), '[]') into items
      from (select * from app_public.contacts c where c.organization_id = org
             order by c.name, c.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $function$;

CREATE OR REPLACE FUNCTION app_public.contacts_upsert(email citext, name text DEFAULT NULL::text, phone text DEFAULT NULL::text, custom_fields jsonb DEFAULT NULL::jsonb, location_ids uuid[] DEFAULT NULL::uuid[], events jsonb DEFAULT NULL::jsonb, cancel_events jsonb DEFAULT NULL::jsonb, fields jsonb DEFAULT NULL::jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
  created boolean;
  unknown_location uuid;
begin
  perform app_hidden.check_custom_fields(custom_fields);
  if location_ids is not null then
    select l into unknown_location from unnest(location_ids) l
     where not exists (select 1 from app_public.locations x where x.organization_id = org and x.id = l)
     limit 1;
  end if;
  if unknown_location is not null then
    perform app_hidden.raise_error(400, 'bad_request',
      format('location_ids: %s is not a location of the organization', unknown_location));
  end if;
  if contacts_upsert.phone is not null and exists (
      select 1 from app_public.contacts x
       where x.organization_id = org and x.phone = contacts_upsert.phone
         and x.email_key is distinct from lower(contacts_upsert.email::text)) then
    perform app_hidden.raise_error(409, 'conflict', 'Another contact already uses this phone number');
  end if;

  insert into app_public.contacts as x (organization_id, email, name, phone, field_values)
  values (org, contacts_upsert.email, contacts_upsert.name, contacts_upsert.phone,
          jsonb_strip_nulls(coalesce(custom_fields, '{}')))
  on conflict (organization_id, email_key) do update
     set name = coalesce(excluded.name, x.name),
         phone = coalesce(excluded.phone, x.phone),
         field_values = jsonb_strip_nulls(x.field_values || coalesce(custom_fields, '{}')),
         last_seen_at = now(),
         updated_at = now()
  returning * into c;
  -- created_at is the start of the transaction that inserted the row
  created := c.created_at = now();

  if location_ids is not null then
    insert into app_public.contact_locations (organization_id, contact_id, location_id)
    select org, c.id, l from unnest(location_ids) l
    on conflict do nothing;
  end if;

  return app_hidden.contact_json(c)
    || jsonb_build_object('created', created)
    || app_hidden.contacts_process_events(c.id, events, cancel_events, fields);
end $function$;

drop index app_public.contacts_search;
set maintenance_work_mem = '1GB';
CREATE INDEX contacts_org_search ON app_public.contacts USING gin (organization_id, app_hidden.contact_search_text(name, email, phone) gin_trgm_ops) WITH (fastupdate=off);
analyze app_public.contacts;
reset role;
