--! Previous: sha1:c63d6069c2e1e14027752166a06e24e8641ec1e1
--! Hash: sha1:4bc8f566e7e35766400585493d5cdcd35915a84c
--! Message: contacts: operations, suppression, SMS opt-outs, interactions, search indexes

-- Contacts: the CRM operations. One SQL function per operation (SECURITY INVOKER, so the
-- policies below decide what a credential may read and write), suppression and SMS opt-out
-- records, interactions, and the indexes search needs.
--
-- Field limiting (spec: Contact): a MEMBER, and a MANAGER without the contacts power, read
-- only id, name, email and phone. That is decided here, by app_hidden.current_sees_contact_details(),
-- never in TypeScript.
--
-- Indexes under RLS: PostgreSQL uses a condition as an index condition on a table with row
-- security only when its operator is leakproof (otherwise it could reveal rows the policy
-- hides). texteq and uuid_eq are; citext's = and every LIKE/ILIKE are not. So email lookups
-- compare the text column email_key (lower(email)), and the trigram search finds its
-- candidates in app_hidden.contact_ids_matching, whose results the caller's policies filter.

-- btree_gin lets the trigram index lead with organization_id like every other index.
create extension if not exists btree_gin;

-- API requests are short: compiling a plan with LLVM (JIT, on by default for plans above
-- jit_above_cost) costs tens of milliseconds that a request never wins back. Roles are
-- cluster-wide; this is the service's own login role (analysts keep JIT).
alter role svc_login set jit = off;

set local role svc_owner;

--------------------------------------------------------------------------------
-- Contacts: columns, constraints and indexes the operations need
--------------------------------------------------------------------------------
alter table app_public.contacts
  add column email_key text generated always as (lower(email::text)) stored,
  add column sms_consent_source text check (length(sms_consent_source) between 1 and 200),
  add constraint contacts_name_length check (length(name) <= 200),
  add constraint contacts_email_length check (length(email) <= 320);
comment on column app_public.contacts.email_key is
  'lower(email): what email lookups compare, because text equality (unlike citext''s) may use an index under row security.';
-- Unique by email, case-insensitively, as before; now on the column lookups can use.
drop index app_public.contacts_org_email;
create unique index contacts_org_email_key on app_public.contacts (organization_id, email_key);
comment on column app_public.contacts.sms_consent is 'Whether the contact has given SMS consent (revoked by an SMS opt-out).';
comment on column app_public.contacts.sms_consent_source is 'How the contact gave SMS consent, as recorded by contacts_record_sms_consent.';

-- What `q` searches: name, email and phone in one text, so one trigram index serves all three.
-- The separator keeps a match from spanning two fields only approximately; the search
-- rechecks each field exactly. The index below depends on this exact expression.
create function app_hidden.contact_search_text(name text, email citext, phone text) returns text
language sql immutable parallel safe as $$
  select coalesce(name, '') || E'\n' || coalesce(email::text, '') || E'\n' || coalesce(phone, '')
$$;
comment on function app_hidden.contact_search_text(text, citext, text) is
  'Name, email and phone of a contact as one text: the expression of the contacts_org_search trigram index.';

-- fastupdate off: with a pending list, every search also scans the entries that recent writes
-- left unmerged (up to 4 MB), so search latency would follow the write rate.
create index contacts_org_search on app_public.contacts
  using gin (organization_id, app_hidden.contact_search_text(name, email, phone) gin_trgm_ops)
  with (fastupdate = off);
-- Listing for callers who see only name, email and phone is by name.
create index contacts_org_name on app_public.contacts (organization_id, name, id);

--------------------------------------------------------------------------------
-- Reach and field limiting
--------------------------------------------------------------------------------
create function app_hidden.current_sees_contact_details() returns boolean
language sql stable parallel safe as $$
  select app_hidden.current_has_power('contacts')
$$;
comment on function app_hidden.current_sees_contact_details() is
  'Whether the credential reads a contact in full (stage, tags, custom fields, notes count, captured fields); '
  'a MEMBER, and a MANAGER without the contacts power, read only id, name, email and phone.';

-- Writes to a contact follow the read policy (select_in_reach) and need the contacts power.
grant insert (organization_id, name, email, phone, field_values) on app_public.contacts to svc_request;
grant update (name, email, phone, stage_id, field_values, sms_consent, sms_consent_at, sms_consent_source,
  last_seen_at, updated_at) on app_public.contacts to svc_request;

-- Contacts are created only by contacts_upsert, which is keyed on email and called by
-- credentials that reach the whole organization.
create policy insert_keyed_by_email on app_public.contacts for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_reaches_all_locations())
              and (select app_hidden.current_has_power('contacts'))
              and email is not null);
create policy update_in_reach on app_public.contacts for update
  using (organization_id = (select app_hidden.current_org_id())
         and (select app_hidden.current_has_power('contacts'))
         and ((select app_hidden.current_reaches_all_locations())
              or exists (select 1 from app_public.contact_locations cl
                          where cl.organization_id = contacts.organization_id
                            and cl.contact_id = contacts.id
                            and cl.location_id = any((select app_hidden.current_location_ids())::uuid[])))
         and ((select app_hidden.current_records_level()) = 'all'
              or contacts.id = any((select app_hidden.current_own_client_ids())::uuid[])))
  with check (organization_id = (select app_hidden.current_org_id()));

grant insert on app_public.contact_locations to svc_request;
create policy insert_in_reach on app_public.contact_locations for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_has_power('contacts'))
              and ((select app_hidden.current_reaches_all_locations())
                   or location_id = any((select app_hidden.current_location_ids())::uuid[])));

grant insert (organization_id, contact_id, body, source, author_id) on app_public.contact_notes to svc_request;
-- Through the API a note is always shared (source user) and written by the acting person.
create policy insert_shared_with_contact on app_public.contact_notes for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_has_power('contacts'))
              and source = 'user'
              and location_id is null
              and author_id is not distinct from (select app_hidden.current_user_id())
              and exists (select 1 from app_public.contacts c
                           where c.organization_id = contact_notes.organization_id and c.id = contact_notes.contact_id));

grant insert (organization_id, name) on app_public.tags to svc_request;
create policy insert_own_org on app_public.tags for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_has_power('contacts')));

grant insert (organization_id, contact_id, tag_id), delete on app_public.contact_tags to svc_request;
create policy insert_with_contact on app_public.contact_tags for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_has_power('contacts'))
              and exists (select 1 from app_public.contacts c
                           where c.organization_id = contact_tags.organization_id and c.id = contact_tags.contact_id));
create policy delete_with_contact on app_public.contact_tags for delete
  using (organization_id = (select app_hidden.current_org_id())
         and (select app_hidden.current_has_power('contacts'))
         and exists (select 1 from app_public.contacts c
                      where c.organization_id = contact_tags.organization_id and c.id = contact_tags.contact_id));

--------------------------------------------------------------------------------
-- Suppression and SMS opt-out
--------------------------------------------------------------------------------
create table app_public.email_suppressions (
  organization_id uuid not null references app_public.organizations on delete cascade,
  email text not null check (email = lower(email)),
  contact_id uuid not null,
  source text not null default 'api' check (source in ('api', 'bounce', 'complaint', 'unsubscribe')),
  created_by uuid,
  created_at timestamptz not null default now(),
  primary key (organization_id, email),
  foreign key (organization_id, contact_id) references app_public.contacts,
  foreign key (organization_id, created_by) references app_public.people
);
comment on table app_public.email_suppressions is
  'Addresses no email may go to, whichever contact carries them later. The first record of an address is kept.';
comment on column app_public.email_suppressions.email is 'The address, lower-cased (compared with contacts.email_key).';
comment on column app_public.email_suppressions.contact_id is 'The contact that carried the address when it was suppressed.';
create index email_suppressions_by_contact on app_public.email_suppressions (organization_id, contact_id);

create table app_public.sms_opt_outs (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  phone text not null check (phone ~ '^\+[1-9][0-9]{6,14}$'),
  contact_id uuid not null,
  source text not null default 'api' check (source in ('api', 'keyword')),
  created_by uuid,
  created_at timestamptz not null default now(),
  ended_at timestamptz,
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts,
  foreign key (organization_id, created_by) references app_public.people,
  check (ended_at is null or ended_at >= created_at)
);
comment on table app_public.sms_opt_outs is
  'SMS opt-outs of a number: no SMS goes to it while one is open (ended_at null); new consent ends it.';
create unique index sms_opt_outs_open on app_public.sms_opt_outs (organization_id, phone) where ended_at is null;
create index sms_opt_outs_by_contact on app_public.sms_opt_outs (organization_id, contact_id);

alter table app_public.email_suppressions enable row level security;
alter table app_public.sms_opt_outs enable row level security;

-- A suppression is visible with an address the credential can see on a contact.
create policy select_with_address on app_public.email_suppressions for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.contacts c
                      where c.organization_id = email_suppressions.organization_id and c.email_key = email_suppressions.email));
create policy insert_with_contact on app_public.email_suppressions for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_has_power('contacts'))
              and created_by is not distinct from (select app_hidden.current_user_id())
              and exists (select 1 from app_public.contacts c
                           where c.organization_id = email_suppressions.organization_id
                             and c.id = email_suppressions.contact_id and c.email_key = email_suppressions.email));

create policy select_with_number on app_public.sms_opt_outs for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.contacts c
                      where c.organization_id = sms_opt_outs.organization_id and c.phone = sms_opt_outs.phone));
create policy insert_with_contact on app_public.sms_opt_outs for insert
  with check (organization_id = (select app_hidden.current_org_id())
              and (select app_hidden.current_has_power('contacts'))
              and created_by is not distinct from (select app_hidden.current_user_id())
              and exists (select 1 from app_public.contacts c
                           where c.organization_id = sms_opt_outs.organization_id
                             and c.id = sms_opt_outs.contact_id and c.phone = sms_opt_outs.phone));
create policy update_with_number on app_public.sms_opt_outs for update
  using (organization_id = (select app_hidden.current_org_id())
         and (select app_hidden.current_has_power('contacts')))
  with check (organization_id = (select app_hidden.current_org_id()));

grant select on app_public.email_suppressions, app_public.sms_opt_outs to svc_request, svc_worker, svc_analyst;
grant insert (organization_id, email, contact_id, created_by) on app_public.email_suppressions to svc_request;
grant insert (organization_id, phone, contact_id, created_by) on app_public.sms_opt_outs to svc_request;
grant update (ended_at) on app_public.sms_opt_outs to svc_request;

--------------------------------------------------------------------------------
-- Interactions: calls, chats and SMS threads the assistant handled
--------------------------------------------------------------------------------
create table app_public.interactions (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  contact_id uuid not null,
  location_id uuid,
  channel text not null check (channel in ('voice', 'chat', 'sms')),
  status text not null check (status in ('in_progress', 'completed', 'abandoned')),
  appointment_id uuid,
  summary text check (length(summary) <= 20000),
  captured_fields jsonb not null default '{}' check (jsonb_typeof(captured_fields) = 'object'),
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts,
  foreign key (organization_id, location_id) references app_public.locations,
  check (ended_at is null or ended_at >= started_at)
);
comment on table app_public.interactions is
  'A call, chat or SMS thread the assistant handled for a contact (email threads are conversations, not interactions).';
comment on column app_public.interactions.location_id is 'Where it happened; NULL means the whole organization (visible only organization-wide).';
comment on column app_public.interactions.appointment_id is
  'The appointment the interaction booked (the appointments area adds the foreign key).';
comment on column app_public.interactions.captured_fields is
  'What the assistant captured (answers, details); read only by credentials that see contact details.';
create index interactions_by_contact on app_public.interactions (organization_id, contact_id, started_at desc, id desc);

alter table app_public.interactions enable row level security;
-- Visible at the credential's locations, and only for contacts it can read.
create policy select_in_reach on app_public.interactions for select
  using (organization_id = (select app_hidden.current_org_id())
         and ((select app_hidden.current_reaches_all_locations())
              or location_id = any((select app_hidden.current_location_ids())::uuid[]))
         and exists (select 1 from app_public.contacts c
                      where c.organization_id = interactions.organization_id and c.id = interactions.contact_id));
grant select on app_public.interactions to svc_request, svc_worker, svc_analyst;

--------------------------------------------------------------------------------
-- Helpers the operations share
--------------------------------------------------------------------------------
-- What a caller without contact details sees of a contact.
create function app_hidden.contact_card(c app_public.contacts) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone)
$$;
comment on function app_hidden.contact_card(app_public.contacts) is
  'The fields every reader of a contact may see: id, name, email, phone.';

-- The whole contact, as contacts_get answers a caller who sees details. Tags, locations and
-- suppression are read under the caller's policies. Helpers that query are plpgsql, not SQL:
-- PostgreSQL plans a SQL function's query on every call, plpgsql once per connection.
create function app_hidden.contact_json(c app_public.contacts) returns jsonb
language plpgsql stable as $$
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
end $$;
comment on function app_hidden.contact_json(app_public.contacts) is
  'A contact with stage, tags, custom fields, notes count, locations and suppression state.';

create function app_hidden.contact_for_caller(c app_public.contacts) returns jsonb
language sql stable as $$
  select case when app_hidden.current_sees_contact_details() then app_hidden.contact_json(c)
              else app_hidden.contact_card(c) end
$$;
comment on function app_hidden.contact_for_caller(app_public.contacts) is
  'A contact in full or as a card, as the current credential may read it.';

-- The contact a write acts on, locked, or 404 when absent or out of reach.
create function app_hidden.contact_for_write(contact_id uuid) returns app_public.contacts
language plpgsql as $$
declare
  c app_public.contacts;
begin
  select * into c from app_public.contacts
   where organization_id = app_hidden.current_org_id() and id = contact_for_write.contact_id
     for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return c;
end $$;
comment on function app_hidden.contact_for_write(uuid) is
  'Locks and returns a contact the credential may change; 404 when absent or out of reach.';

-- Whether the credential can read the contact; 404 otherwise.
create function app_hidden.require_contact(contact_id uuid) returns void
language plpgsql stable as $$
begin
  perform 1 from app_public.contacts
   where organization_id = app_hidden.current_org_id() and id = require_contact.contact_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
end $$;
comment on function app_hidden.require_contact(uuid) is 'Raises 404 unless the credential can read the contact.';

create function app_hidden.is_date(value text) returns boolean
language plpgsql immutable as $$
begin
  perform value::date;
  return true;
exception when others then
  return false;
end $$;

create function app_hidden.is_timestamptz(value text) returns boolean
language plpgsql stable as $$
begin
  perform value::timestamptz;
  return true;
exception when others then
  return false;
end $$;

-- Whether a JSON value fits a custom field of the given type.
create function app_hidden.custom_field_value_fits(type text, options jsonb, value jsonb) returns boolean
language sql stable as $$
  select case type
    when 'number' then jsonb_typeof(value) = 'number'
    when 'currency' then jsonb_typeof(value) = 'number'
    when 'boolean' then jsonb_typeof(value) = 'boolean'
    when 'date' then jsonb_typeof(value) = 'string'
      and (value #>> '{}') ~ '^\d{4}-\d{2}-\d{2}$' and app_hidden.is_date(value #>> '{}')
    when 'datetime' then jsonb_typeof(value) = 'string'
      and (value #>> '{}') ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$'
      and app_hidden.is_timestamptz(value #>> '{}')
    when 'select' then jsonb_typeof(value) = 'string' and coalesce(options @> jsonb_build_array(value), false)
    else jsonb_typeof(value) = 'string' and length(value #>> '{}') <= 10000
  end
$$;
comment on function app_hidden.custom_field_value_fits(text, jsonb, jsonb) is
  'Type check of a custom field value: number/currency a JSON number, boolean, date YYYY-MM-DD, datetime ISO 8601 with offset, select one of options, text a string.';

-- Raises 400 naming the first key that is not an enabled custom field, or whose value does
-- not fit its type. A null value (which removes the key) needs only the key to be valid.
create function app_hidden.check_custom_fields(field_values jsonb) returns void
language plpgsql stable as $$
declare
  entry record;
  field app_public.custom_fields;
begin
  if field_values is null then
    return;
  end if;
  if jsonb_typeof(field_values) <> 'object' then
    perform app_hidden.raise_error(400, 'bad_request', 'custom_fields must be an object');
  end if;
  for entry in select key, value from jsonb_each(field_values) order by key loop
    select * into field from app_public.custom_fields f
     where f.organization_id = app_hidden.current_org_id() and f.key = entry.key and f.enabled;
    if not found then
      perform app_hidden.raise_error(400, 'bad_request',
        format('custom_fields.%s: not an enabled custom field of the organization', entry.key),
        jsonb_build_object('field', 'custom_fields.' || entry.key));
    end if;
    if jsonb_typeof(entry.value) <> 'null'
       and not app_hidden.custom_field_value_fits(field.type, field.options, entry.value) then
      perform app_hidden.raise_error(400, 'bad_request',
        format('custom_fields.%s: the value does not fit a %s field%s', entry.key, field.type,
               case when field.type = 'select' then ' (one of ' || field.options::text || ')' else '' end),
        jsonb_build_object('field', 'custom_fields.' || entry.key));
    end if;
  end loop;
end $$;
comment on function app_hidden.check_custom_fields(jsonb) is
  'Raises 400 naming the first custom_fields key that is not an enabled field or whose value does not fit its type.';

create function app_hidden.contact_tag_names(contact_id uuid) returns jsonb
language plpgsql stable as $$
begin
  return coalesce((select jsonb_agg(t.name order by t.name)
                     from app_public.contact_tags ct
                     join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                    where ct.organization_id = app_hidden.current_org_id() and ct.contact_id = contact_tag_names.contact_id),
                  '[]');
end $$;
comment on function app_hidden.contact_tag_names(uuid) is 'The contact''s tag names, sorted.';

-- Upsert events. The sequences area replaces this function: it cancels the enrollments of
-- cancel_events, then fires events to the sequences that subscribe to them. Until then no
-- sequence subscribes to anything, so an assessment_abandoned event answers no_subscriber
-- and its key stays unspent (a retry may still enroll).
create function app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb)
returns jsonb language plpgsql stable as $$
begin
  return coalesce(
    (select jsonb_build_object('assessmentAbandonment', jsonb_build_object('status', 'no_subscriber', 'key', e->>'key'))
       from jsonb_array_elements(coalesce(events, '[]')) e
      where e->>'name' = 'assessment_abandoned'
      limit 1),
    '{}');
end $$;
comment on function app_hidden.contacts_process_events(uuid, jsonb, jsonb, jsonb) is
  'Processes the cancel_events, then the events, of a contacts_upsert; answers receipts to merge into its response (assessmentAbandonment).';

-- LIKE pattern matching text anywhere, with its wildcards taken literally.
create function app_hidden.like_anywhere(value text) returns text
language sql immutable parallel safe as $$
  select '%' || replace(replace(replace(value, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

-- The ids of the current organization's contacts whose name, email or phone contains a
-- pattern (and, for a phone-like query, whose phone contains its digits), found through the
-- contacts_org_search trigram index. It runs as the owner because ILIKE may not use an index
-- under row security; it reads only the caller's own organization and answers only ids,
-- which contacts_search then reads under the caller's policies (location, own records).
create function app_hidden.contact_ids_matching(pattern text, digits text) returns setof uuid
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if digits is null then
    return query
      select c.id from app_public.contacts c
       where c.organization_id = app_hidden.current_org_id()
         and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike pattern
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern);
  else
    return query
      select c.id from app_public.contacts c
       where c.organization_id = app_hidden.current_org_id()
         and (app_hidden.contact_search_text(c.name, c.email, c.phone) ilike pattern
              or app_hidden.contact_search_text(c.name, c.email, c.phone) like digits)
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern or c.phone like digits);
  end if;
end $$;
comment on function app_hidden.contact_ids_matching(text, text) is
  'Trigram candidates of contacts_search q in the current organization (ids only; the caller''s policies filter them).';
grant execute on function app_hidden.contact_ids_matching(text, text) to svc_request;

grant execute on function app_hidden.contact_search_text(text, citext, text),
  app_hidden.current_sees_contact_details(),
  app_hidden.contact_card(app_public.contacts),
  app_hidden.contact_json(app_public.contacts),
  app_hidden.contact_for_caller(app_public.contacts),
  app_hidden.contact_for_write(uuid),
  app_hidden.require_contact(uuid),
  app_hidden.is_date(text),
  app_hidden.is_timestamptz(text),
  app_hidden.custom_field_value_fits(text, jsonb, jsonb),
  app_hidden.check_custom_fields(jsonb),
  app_hidden.contact_tag_names(uuid),
  app_hidden.contacts_process_events(uuid, jsonb, jsonb, jsonb),
  app_hidden.like_anywhere(text)
  to svc_request, svc_worker, svc_analyst;

--------------------------------------------------------------------------------
-- Operations
--------------------------------------------------------------------------------
create function app_public.contacts_upsert(
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
end $$;
comment on function app_public.contacts_upsert(citext, text, text, jsonb, uuid[], jsonb, jsonb, jsonb) is
  'contacts_upsert: creates or updates the contact keyed on email (only the fields sent), links locations, then processes cancel_events and events.';

create function app_public.contacts_get(contact_id uuid) returns jsonb
language plpgsql stable as $$
declare
  c app_public.contacts;
begin
  select * into c from app_public.contacts
   where organization_id = app_hidden.current_org_id() and id = contacts_get.contact_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  return app_hidden.contact_for_caller(c);
end $$;
comment on function app_public.contacts_get(uuid) is
  'contacts_get: the contact in full, or only id, name, email and phone for a MEMBER or a MANAGER without the contacts power.';

create function app_public.contacts_search(q text, email citext, phone text, page int, page_size int)
returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  details boolean := app_hidden.current_sees_contact_details();
  skip int := (page - 1) * page_size;
  total bigint;
  items jsonb;
  pattern text;
  digits text;
  candidates uuid[];
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
    -- digits of a phone-like q ("555-123", "(555) 123") also match the stored E.164 phone
    if q ~ '^\+?[0-9 ()\[\]-]+$' and length(regexp_replace(q, '[^0-9]', '', 'g')) >= 3 then
      digits := app_hidden.like_anywhere(regexp_replace(q, '[^0-9+]', '', 'g'));
    end if;
    -- The candidates come from the trigram index; this query's policies decide which the
    -- caller may see (and count).
    candidates := array(select app_hidden.contact_ids_matching(pattern, digits));
    if details then
      with matches as materialized (
        select c.id, c.last_seen_at from app_public.contacts c
         where c.organization_id = org and c.id = any(candidates))
      select (select count(*) from matches),
             (select coalesce(jsonb_agg(app_hidden.contact_json(c) order by m.last_seen_at desc, m.id), '[]')
                from (select * from matches order by last_seen_at desc, id limit page_size offset skip) m
                join app_public.contacts c on c.organization_id = org and c.id = m.id)
        into total, items;
    else
      with matches as materialized (
        select c.id, c.name from app_public.contacts c
         where c.organization_id = org and c.id = any(candidates))
      select (select count(*) from matches),
             (select coalesce(jsonb_agg(app_hidden.contact_card(c) order by m.name, m.id), '[]')
                from (select * from matches order by name, id limit page_size offset skip) m
                join app_public.contacts c on c.organization_id = org and c.id = m.id)
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
end $$;
comment on function app_public.contacts_search(text, citext, text, int, int) is
  'contacts_search: one page of contacts matching at most one filter (q substring of name, email or phone; exact email; exact phone), '
  'most recently seen first; by name, with only id, name, email and phone, for callers without contact details.';

create function app_public.contacts_update(contact_id uuid, patch jsonb) returns jsonb
language plpgsql volatile as $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
  violated text;
begin
  if patch ? 'stage_id' and jsonb_typeof(patch->'stage_id') <> 'null' and not exists (
      select 1 from app_public.pipeline_stages s
       where s.organization_id = c.organization_id and s.id::text = patch->>'stage_id') then
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

create function app_hidden.note_json(n app_public.contact_notes) returns jsonb
language plpgsql stable as $$
begin
  return jsonb_build_object('id', n.id, 'contact_id', n.contact_id, 'body', n.body, 'source', n.source,
                            'created_at', n.created_at)
      || coalesce((select jsonb_build_object('author', jsonb_build_object('id', p.id, 'name', p.name))
                     from app_public.people p where p.organization_id = n.organization_id and p.id = n.author_id), '{}');
end $$;
comment on function app_hidden.note_json(app_public.contact_notes) is
  'A note as the API shows it; author only when a team member wrote it.';
grant execute on function app_hidden.note_json(app_public.contact_notes) to svc_request, svc_worker, svc_analyst;
create function app_public.contacts_add_note(contact_id uuid, body text) returns jsonb
language plpgsql volatile as $$
declare
  n app_public.contact_notes;
begin
  perform app_hidden.require_contact(contact_id);
  insert into app_public.contact_notes (organization_id, contact_id, body, source, author_id)
  values (app_hidden.current_org_id(), contacts_add_note.contact_id, contacts_add_note.body, 'user',
          app_hidden.current_user_id())
  returning * into n;
  return app_hidden.note_json(n);
end $$;

comment on function app_public.contacts_add_note(uuid, text) is
  'contacts_add_note: adds an organization-shared note (source user) written by the acting person.';

create function app_public.contacts_list_notes(contact_id uuid, page int, page_size int) returns jsonb
language plpgsql stable as $$
declare
  total bigint;
  items jsonb;
begin
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.contact_notes n
   where n.organization_id = app_hidden.current_org_id() and n.contact_id = contacts_list_notes.contact_id;
  if page > 1 and (page - 1)::bigint * page_size >= total then
    perform app_hidden.raise_error(400, 'bad_request',
      format('page %s is past the last note (%s notes, %s per page)', page, total, page_size));
  end if;
  select coalesce(jsonb_agg(app_hidden.note_json(p) order by p.created_at desc, p.id desc), '[]') into items
    from (select * from app_public.contact_notes n
           where n.organization_id = app_hidden.current_org_id() and n.contact_id = contacts_list_notes.contact_id
           order by n.created_at desc, n.id desc limit page_size offset (page - 1) * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;
comment on function app_public.contacts_list_notes(uuid, int, int) is
  'contacts_list_notes: the organization-shared notes of a contact, newest first; location-private notes are never listed.';

create function app_public.contacts_add_tag(contact_id uuid, tag_name citext) returns jsonb
language plpgsql volatile as $$
declare
  org uuid := app_hidden.current_org_id();
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
  tag uuid;
  max_tags int;
begin
  select t.id into tag from app_public.tags t where t.organization_id = org and t.name = tag_name;
  if tag is null then
    -- One tag creation at a time per organization, so the limit holds under concurrency.
    perform pg_advisory_xact_lock(hashtextextended('svc.tags:' || org::text, 0));
    select t.id into tag from app_public.tags t where t.organization_id = org and t.name = tag_name;
  end if;
  if tag is null then
    select o.tag_limit into max_tags from app_public.organizations o where o.id = org;
    if (select count(*) from app_public.tags t where t.organization_id = org) >= max_tags then
      perform app_hidden.raise_error(422, 'tag_limit_reached',
        format('The organization has reached its limit of %s tags', max_tags));
    end if;
    insert into app_public.tags (organization_id, name) values (org, tag_name) returning id into tag;
  end if;
  insert into app_public.contact_tags (organization_id, contact_id, tag_id)
  values (org, c.id, tag)
  on conflict do nothing;
  return jsonb_build_object('contact_id', c.id, 'tags', app_hidden.contact_tag_names(c.id));
end $$;
comment on function app_public.contacts_add_tag(uuid, citext) is
  'contacts_add_tag: tags the contact, creating the organization''s tag when it lacks it (422 at the tag limit); answers the contact''s tags.';

create function app_public.contacts_remove_tag(contact_id uuid, tag_name citext) returns jsonb
language plpgsql volatile as $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
begin
  delete from app_public.contact_tags ct
   using app_public.tags t
   where ct.organization_id = c.organization_id and ct.contact_id = c.id
     and t.organization_id = ct.organization_id and t.id = ct.tag_id and t.name = tag_name;
  return jsonb_build_object('contact_id', c.id, 'tags', app_hidden.contact_tag_names(c.id));
end $$;
comment on function app_public.contacts_remove_tag(uuid, citext) is
  'contacts_remove_tag: removes the tag from the contact (the organization keeps the tag); answers the contact''s tags.';

-- Sequences hook in with triggers on email_suppressions and sms_opt_outs (stopping the
-- contact's email or SMS sequences).
create function app_public.contacts_suppress(contact_id uuid, channels text[]) returns jsonb
language plpgsql volatile as $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
  result jsonb := jsonb_build_object('contact_id', c.id);
  since timestamptz;
begin
  if 'email' = any(channels) and c.email is null then
    perform app_hidden.raise_error(400, 'bad_request', 'The contact has no email address to suppress',
      jsonb_build_object('field', 'channels'));
  end if;
  if 'sms' = any(channels) and c.phone is null then
    perform app_hidden.raise_error(400, 'bad_request', 'The contact has no phone number to opt out of SMS',
      jsonb_build_object('field', 'channels'));
  end if;

  if 'email' = any(channels) then
    insert into app_public.email_suppressions (organization_id, email, contact_id, created_by)
    values (c.organization_id, c.email_key, c.id, app_hidden.current_user_id())
    on conflict (organization_id, email) do nothing;
    select s.created_at into since from app_public.email_suppressions s
     where s.organization_id = c.organization_id and s.email = c.email_key;
    result := result || jsonb_build_object('email', jsonb_build_object('address', c.email, 'suppressed_at', since));
  end if;

  if 'sms' = any(channels) then
    insert into app_public.sms_opt_outs (organization_id, phone, contact_id, created_by)
    values (c.organization_id, c.phone, c.id, app_hidden.current_user_id())
    on conflict (organization_id, phone) where ended_at is null do nothing;
    select o.created_at into since from app_public.sms_opt_outs o
     where o.organization_id = c.organization_id and o.phone = c.phone and o.ended_at is null;
    update app_public.contacts x set sms_consent = false, sms_consent_at = null, sms_consent_source = null,
           updated_at = now()
     where x.organization_id = c.organization_id and x.id = c.id;
    result := result || jsonb_build_object('sms', jsonb_build_object('phone', c.phone, 'opted_out_at', since,
                                                                      'sms_consent', false));
  end if;
  return result;
end $$;
comment on function app_public.contacts_suppress(uuid, text[]) is
  'contacts_suppress: email blocks every later email to the contact''s address (the first record is kept); '
  'sms records an opt-out of the number and revokes consent. 400 when the contact has no address on a named channel.';

create function app_public.contacts_record_sms_consent(contact_id uuid, source text, consented_at timestamptz)
returns jsonb
language plpgsql volatile as $$
declare
  c app_public.contacts := app_hidden.contact_for_write(contact_id);
begin
  if c.phone is null then
    perform app_hidden.raise_error(400, 'bad_request', 'The contact has no phone number to consent for');
  end if;
  if consented_at > now() then
    perform app_hidden.raise_error(400, 'bad_request', 'consented_at: may not be in the future',
      jsonb_build_object('field', 'consented_at'));
  end if;
  update app_public.sms_opt_outs o set ended_at = greatest(o.created_at, coalesce(consented_at, now()))
   where o.organization_id = c.organization_id and o.phone = c.phone and o.ended_at is null;
  update app_public.contacts x
     set sms_consent = true, sms_consent_at = coalesce(consented_at, now()), sms_consent_source = contacts_record_sms_consent.source,
         updated_at = now()
   where x.organization_id = c.organization_id and x.id = c.id
  returning * into c;
  return jsonb_build_object('contact_id', c.id, 'phone', c.phone, 'sms_consent', c.sms_consent,
                            'sms_consent_at', c.sms_consent_at, 'source', c.sms_consent_source);
end $$;
comment on function app_public.contacts_record_sms_consent(uuid, text, timestamptz) is
  'contacts_record_sms_consent: records the SMS consent the contact gave; it ends an SMS opt-out of the number.';

create function app_public.contacts_list_interactions(contact_id uuid, channel text, status text, page int, page_size int)
returns jsonb
language plpgsql stable as $$
declare
  details boolean := app_hidden.current_sees_contact_details();
  total bigint;
  items jsonb;
begin
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.interactions i
   where i.organization_id = app_hidden.current_org_id() and i.contact_id = contacts_list_interactions.contact_id
     and (contacts_list_interactions.channel is null or i.channel = contacts_list_interactions.channel)
     and (contacts_list_interactions.status is null or i.status = contacts_list_interactions.status);
  if page > 1 and (page - 1)::bigint * page_size >= total then
    perform app_hidden.raise_error(400, 'bad_request',
      format('page %s is past the last interaction (%s interactions, %s per page)', page, total, page_size));
  end if;
  select coalesce(jsonb_agg(
           jsonb_build_object('id', p.id, 'contact_id', p.contact_id, 'channel', p.channel, 'status', p.status,
                              'location_id', p.location_id, 'appointment_id', p.appointment_id, 'summary', p.summary,
                              'started_at', p.started_at, 'ended_at', p.ended_at)
           || case when details then jsonb_build_object('captured_fields', p.captured_fields) else '{}' end
           order by p.started_at desc, p.id desc), '[]')
    into items
    from (select * from app_public.interactions i
           where i.organization_id = app_hidden.current_org_id() and i.contact_id = contacts_list_interactions.contact_id
             and (contacts_list_interactions.channel is null or i.channel = contacts_list_interactions.channel)
             and (contacts_list_interactions.status is null or i.status = contacts_list_interactions.status)
           order by i.started_at desc, i.id desc limit page_size offset (page - 1) * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;
comment on function app_public.contacts_list_interactions(uuid, text, text, int, int) is
  'contacts_list_interactions: the contact''s interactions at the credential''s locations, most recent first; '
  'captured_fields only for callers who see contact details.';

grant execute on function
  app_public.contacts_upsert(citext, text, text, jsonb, uuid[], jsonb, jsonb, jsonb),
  app_public.contacts_get(uuid),
  app_public.contacts_search(text, citext, text, int, int),
  app_public.contacts_update(uuid, jsonb),
  app_public.contacts_add_note(uuid, text),
  app_public.contacts_list_notes(uuid, int, int),
  app_public.contacts_add_tag(uuid, citext),
  app_public.contacts_remove_tag(uuid, citext),
  app_public.contacts_suppress(uuid, text[]),
  app_public.contacts_record_sms_consent(uuid, text, timestamptz),
  app_public.contacts_list_interactions(uuid, text, text, int, int)
  to svc_request;

reset role;
