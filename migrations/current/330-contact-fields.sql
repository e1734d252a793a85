-- The contact record, extended by data: each field of the record is a row of
-- app_private.contact_fields (its name, the area that owns it, and the SQL expression that
-- renders it), and app_hidden.contacts_json, the renderer of contacts_get, contacts_search and
-- the writes, is generated from those rows whenever they change.
--
-- Until now another area could add a field (next appointment, active sequences) only by
-- restating contacts_json whole, and a second area by restating the first one's restatement.
-- Reading a registry at render time would cost every page a lookup and an EXECUTE; generating
-- the function keeps what 000008 measured: one plpgsql function, one statement per page, its
-- plan cached per connection, each field an expression inlined in that statement.
--
-- An expression is rendered in
--   select jsonb_agg(jsonb_build_object(<name>, <expression>, …) order by c.ordinality)
--     from unnest(contacts) with ordinality as c where c.organization_id = org
-- as the owner, like the rest of the renderer, so it sees what no policy filters. In scope:
-- `c` (the contact, app_public.contacts), `org` (the current organization) and `reach` (the
-- caller's locations; null when it reaches them all). It must read only rows of `org` that
-- belong to the contact, and restrict what the related table's policies would restrict (as
-- location_ids does with `reach`). Field limiting needs nothing of it: callers who read only a
-- contact's id, name, email and phone get app_hidden.contact_card and never this renderer.
-- An expression that does not compile fails the statement that registers it, and the
-- renderer stays as it was.
set local role svc_owner;

create table if not exists app_private.contact_fields (
  name text primary key check (name ~ '^[a-z][a-z0-9_]{0,62}$'),
  area text not null check (area ~ '^[a-z][a-z0-9_]{0,49}$'),
  expression text not null check (length(expression) between 1 and 4000),
  position int not null default 1000
);
comment on table app_private.contact_fields is
  'The fields of the contact record as contacts_get answers it: name, owning area, SQL expression (over c, org, reach). '
  'Changing a row regenerates app_hidden.contacts_json.';
alter table app_private.contact_fields enable row level security;

-- (Re)creates app_hidden.contacts_json from the registered fields, then runs it once on no
-- contact so that an expression that does not compile fails here, with the change it came with.
create or replace function app_private.define_contacts_json() returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $fn$
declare
  -- jsonb_build_object takes at most 100 arguments: 50 fields per call, the calls joined by ||
  objects text;
begin
  select string_agg(format('jsonb_build_object(%s)', pairs), E'\n      || ' order by chunk) into objects
    from (select chunk, string_agg(format('%L, %s', name, expression), E',\n        ' order by position, name) as pairs
            from (select f.*, (row_number() over (order by position, name) - 1) / 50 as chunk
                    from app_private.contact_fields f) numbered
           group by chunk) chunks;
  execute format($define$
create or replace function app_hidden.contacts_json(contacts app_public.contacts[]) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $renderer$
declare
  org uuid := app_hidden.current_org_id();
  reach uuid[] := app_hidden.current_location_ids();
begin
  return (
    select coalesce(jsonb_agg(%s
      order by c.ordinality), '[]')
      from unnest(contacts) with ordinality as c
     where c.organization_id = org);
end $renderer$
$define$, coalesce(objects, $$'{}'::jsonb$$));
  perform app_hidden.contacts_json('{}');
end $fn$;
comment on function app_private.define_contacts_json() is
  'Generates app_hidden.contacts_json from app_private.contact_fields; run by the table''s trigger.';
revoke execute on function app_private.define_contacts_json() from public;

create or replace function app_private.tg_contact_fields__define() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform app_private.define_contacts_json();
  return null;
end $$;
revoke execute on function app_private.tg_contact_fields__define() from public;
drop trigger if exists _500_define_contacts_json on app_private.contact_fields;
create trigger _500_define_contacts_json after insert or update or delete or truncate on app_private.contact_fields
  for each statement execute function app_private.tg_contact_fields__define();

-- The contacts area's own fields, as 000008's renderer wrote them.
insert into app_private.contact_fields (name, area, position, expression) values
  ('id', 'contacts', 10, 'c.id'),
  ('name', 'contacts', 20, 'c.name'),
  ('email', 'contacts', 30, 'c.email'),
  ('phone', 'contacts', 40, 'c.phone'),
  ('stage_id', 'contacts', 50, 'c.stage_id'),
  ('stage', 'contacts', 60, $$(select jsonb_build_object('id', s.id, 'name', s.name) from app_public.pipeline_stages s
                 where s.organization_id = c.organization_id and s.id = c.stage_id)$$),
  ('tags', 'contacts', 70, $$coalesce((select jsonb_agg(t.name order by t.name) from app_public.contact_tags ct
                          join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                         where ct.organization_id = c.organization_id and ct.contact_id = c.id), '[]')$$),
  ('custom_fields', 'contacts', 80, 'c.field_values'),
  ('notes_count', 'contacts', 90, 'c.notes_count'),
  ('location_ids', 'contacts', 100, $$coalesce((select jsonb_agg(cl.location_id order by cl.location_id) from app_public.contact_locations cl
                                 where cl.organization_id = c.organization_id and cl.contact_id = c.id
                                   and (reach is null or cl.location_id = any(reach))), '[]')$$),
  ('sms_consent', 'contacts', 110, 'c.sms_consent'),
  ('sms_consent_at', 'contacts', 120, 'c.sms_consent_at'),
  ('email_suppressed', 'contacts', 130, $$c.email is not null and exists (
        select 1 from app_public.email_suppressions es where es.organization_id = c.organization_id and es.email = c.email_key)$$),
  ('sms_opted_out', 'contacts', 140, $$c.phone is not null and exists (
        select 1 from app_public.sms_opt_outs so
         where so.organization_id = c.organization_id and so.phone = c.phone and so.ended_at is null)$$),
  ('total_calls', 'contacts', 150, 'c.total_calls'),
  ('first_seen_at', 'contacts', 160, 'c.first_seen_at'),
  ('last_seen_at', 'contacts', 170, 'c.last_seen_at'),
  ('created_at', 'contacts', 180, 'c.created_at'),
  ('updated_at', 'contacts', 190, 'c.updated_at')
on conflict (name) do update set area = excluded.area, position = excluded.position, expression = excluded.expression;

comment on function app_hidden.contacts_json(app_public.contacts[]) is
  'Contacts read under the caller''s policies, in order, with the fields of app_private.contact_fields (generated from it): '
  'stage, tags, custom fields, notes count, locations in reach, suppression state, and what other areas register.';

reset role;
