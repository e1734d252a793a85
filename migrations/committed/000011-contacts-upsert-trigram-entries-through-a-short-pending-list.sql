--! Previous: sha1:048a63d18480fd2654fce4e6e5691c7ab716f4e3
--! Hash: sha1:59948962123a67351013b83f5b9d54af13425b10
--! Message: contacts upsert: trigram entries through a short pending list, the row by one owner statement

-- Contacts upsert at a million contacts: what a write costs PostgreSQL besides the row.
--
-- 1. The trigram index takes new entries through a short pending list. Without one, every
--    write of a contact put each of the sixty-odd trigrams of its name, email and phone into
--    the index one by one (an update too: last_seen_at is indexed, so no update is HOT): 45% of
--    an upsert. With one, a write appends its entries to the list, and once the list passes
--    256 kB the writer that passed it merges the whole list into the index, sorted, at a
--    fraction of the cost per entry (autovacuum merges it too). Every search reads the list
--    as well, which is why it stays short: the 4 MB default would make searches follow the
--    write rate; 256 kB (about two hundred contacts) costs a search tens of microseconds.
-- 2. The contact row is written by one owner statement. Under row security an
--    INSERT … ON CONFLICT DO UPDATE carries the insert, update and select policies of contacts,
--    each with its subplans (the update and select ones check contact_locations), set up at
--    the start of the statement: a third of what the rest of an upsert costs. Only a
--    credential that reaches the whole organization with every power may upsert (members and
--    managers are refused before the database is asked), and for such a credential those
--    policies come down to "the current organization's contact". app_hidden.contacts_upsert_row
--    checks exactly that, writes the row of the current organization only, and answers it to
--    contacts_upsert, which validates the input before and links locations and renders the
--    contact after under the caller's policies, as before.
set local role svc_owner;

--------------------------------------------------------------------------------
-- 1. The pending list
--------------------------------------------------------------------------------
alter index app_public.contacts_search set (fastupdate = on, gin_pending_list_limit = 256);

--------------------------------------------------------------------------------
-- 2. The row
--------------------------------------------------------------------------------
-- The contact keyed on email in the current organization, created or updated with the fields
-- sent (custom fields merged, null removing a value), last_seen_at moved; 409 when another
-- contact of the organization has the phone. The policies of contacts, written out: the caller
-- reaches the whole organization at the all-records level and holds the contacts power, and
-- the row is the current organization's (the only one it can conflict with).
create function app_hidden.contacts_upsert_row(email citext, name text, phone text, custom_fields jsonb)
returns app_public.contacts
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
#variable_conflict use_column
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts;
begin
  if org is null or not app_hidden.current_reaches_all_locations() or app_hidden.current_records_level() <> 'all'
     or not app_hidden.current_has_power('contacts') then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Upserting contacts needs a credential that reaches the whole organization with the contacts power');
  end if;
  if contacts_upsert_row.phone is not null and exists (
      select 1 from app_public.contacts x
       where x.organization_id = org and x.phone = contacts_upsert_row.phone
         and x.email_key is distinct from lower(contacts_upsert_row.email::text)) then
    perform app_hidden.raise_error(409, 'conflict', 'Another contact already uses this phone number');
  end if;

  insert into app_public.contacts as x (organization_id, email, name, phone, field_values)
  values (org, contacts_upsert_row.email, contacts_upsert_row.name, contacts_upsert_row.phone,
          jsonb_strip_nulls(coalesce(custom_fields, '{}')))
  on conflict (organization_id, email_key) do update
     set name = coalesce(excluded.name, x.name),
         phone = coalesce(excluded.phone, x.phone),
         field_values = jsonb_strip_nulls(x.field_values || coalesce(custom_fields, '{}')),
         last_seen_at = now(),
         updated_at = now()
  returning * into c;
  return c;
end $$;
comment on function app_hidden.contacts_upsert_row(citext, text, text, jsonb) is
  'The contact row of contacts_upsert, written as the owner for a caller that reaches the whole organization (403 otherwise); 409 on another contact''s phone.';
revoke execute on function app_hidden.contacts_upsert_row(citext, text, text, jsonb) from public;
grant execute on function app_hidden.contacts_upsert_row(citext, text, text, jsonb) to svc_request;

create or replace function app_public.contacts_upsert(
  email citext,
  name text default null,
  phone text default null,
  custom_fields jsonb default null,
  location_ids uuid[] default null,
  events jsonb default null,
  cancel_events jsonb default null,
  fields jsonb default null
) returns jsonb
language plpgsql volatile as $$
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

  c := app_hidden.contacts_upsert_row(contacts_upsert.email, contacts_upsert.name, contacts_upsert.phone, custom_fields);
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
end $$;

reset role;
