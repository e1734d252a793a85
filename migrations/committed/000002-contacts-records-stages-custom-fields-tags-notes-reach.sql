--! Previous: sha1:c3c9b7598e2b6670c99da9b5a7737a28323c265b
--! Hash: sha1:49a6304be17e21c75722c036c11a96d000dd4c9c
--! Message: contacts: records, stages, custom fields, tags, notes, reach

-- Contacts: the CRM's records and the organization's vocabulary for them (pipeline stages,
-- custom fields, tags), with the reach rules every later area relies on.
set local role svc_owner;

create table app_public.pipeline_stages (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  position int not null,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, position) deferrable initially deferred
);
comment on table app_public.pipeline_stages is 'The organization''s pipeline, in dashboard order (position).';

create table app_public.custom_fields (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  key text not null check (key ~ '^[A-Za-z0-9_]{1,100}$'),
  label text not null,
  type text not null check (type in ('text', 'number', 'currency', 'date', 'datetime', 'boolean', 'select')),
  options jsonb,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, key)
);
comment on table app_public.custom_fields is 'Fields the organization defines for its contacts; values live in contacts.field_values under key.';
comment on column app_public.custom_fields.options is 'Allowed values of a select field (a JSON array of strings).';

create table app_public.contacts (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text,
  email citext,
  phone text check (phone ~ '^\+[1-9][0-9]{6,14}$'),
  stage_id uuid,
  field_values jsonb not null default '{}' check (jsonb_typeof(field_values) = 'object'),
  sms_consent boolean not null default false,
  sms_consent_at timestamptz,
  total_calls int not null default 0 check (total_calls >= 0),
  notes_count int not null default 0,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, stage_id) references app_public.pipeline_stages
);
comment on table app_public.contacts is 'A person the business deals with. Unique by email and by phone within the organization.';
comment on column app_public.contacts.phone is 'E.164, normalized before it is stored.';
comment on column app_public.contacts.field_values is 'Custom field values keyed by custom_fields.key.';
comment on column app_public.contacts.notes_count is 'Every note, location-private ones included (maintained by trigger).';
create unique index contacts_org_email on app_public.contacts (organization_id, email) where email is not null;
create unique index contacts_org_phone on app_public.contacts (organization_id, phone) where phone is not null;
create index contacts_org_last_seen on app_public.contacts (organization_id, last_seen_at desc, id);

create table app_public.contact_locations (
  organization_id uuid not null,
  contact_id uuid not null,
  location_id uuid not null,
  primary key (organization_id, contact_id, location_id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.contact_locations is 'Locations a contact is linked to; a contact with none is visible only organization-wide.';
create index contact_locations_by_location on app_public.contact_locations (organization_id, location_id, contact_id);

create table app_public.tags (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  name citext not null check (length(name) between 1 and 120),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, name)
);
comment on table app_public.tags is 'The organization''s tags (at most organizations.tag_limit).';

create table app_public.contact_tags (
  organization_id uuid not null,
  contact_id uuid not null,
  tag_id uuid not null,
  created_at timestamptz not null default now(),
  primary key (organization_id, contact_id, tag_id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  foreign key (organization_id, tag_id) references app_public.tags on delete cascade
);
create index contact_tags_by_tag on app_public.contact_tags (organization_id, tag_id, contact_id);

create table app_public.contact_notes (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  contact_id uuid not null,
  body text not null check (length(body) between 1 and 20000),
  source text not null check (source in ('user', 'system', 'integration', 'location_private')),
  location_id uuid,
  author_id uuid,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  foreign key (organization_id, location_id) references app_public.locations,
  foreign key (organization_id, author_id) references app_public.people,
  check (source <> 'location_private' or location_id is not null)
);
comment on table app_public.contact_notes is
  'Notes are written once and never edited. location_private notes (dashboard at one location, or synced from an external CRM) are never listed but are counted.';
create index contact_notes_by_contact on app_public.contact_notes (organization_id, contact_id, created_at desc, id);

create function app_private.tg_contact_notes__count() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  update app_public.contacts set notes_count = notes_count + 1
   where organization_id = new.organization_id and id = new.contact_id;
  return null;
end $$;
create trigger _500_count after insert on app_public.contact_notes
  for each row execute function app_private.tg_contact_notes__count();

--------------------------------------------------------------------------------
-- Reach
--------------------------------------------------------------------------------
-- Contacts a member at the own-records level may read: the clients of their own
-- appointments. The appointments area redefines this; until then such a member has none.
create function app_hidden.current_own_client_ids() returns uuid[]
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select '{}'::uuid[]
$$;
comment on function app_hidden.current_own_client_ids() is
  'Contacts on the acting person''s own appointments (own-records level).';
grant execute on function app_hidden.current_own_client_ids() to svc_request, svc_worker, svc_analyst;

alter table app_public.pipeline_stages enable row level security;
alter table app_public.custom_fields enable row level security;
alter table app_public.contacts enable row level security;
alter table app_public.contact_locations enable row level security;
alter table app_public.tags enable row level security;
alter table app_public.contact_tags enable row level security;
alter table app_public.contact_notes enable row level security;

create policy select_own_org on app_public.pipeline_stages for select
  using (organization_id = (select app_hidden.current_org_id()));
create policy select_own_org on app_public.custom_fields for select
  using (organization_id = (select app_hidden.current_org_id()));
create policy select_own_org on app_public.tags for select
  using (organization_id = (select app_hidden.current_org_id()));

-- A contact is in reach when the credential reaches the whole organization or one of the
-- contact's locations, and, at the own-records level, when it is one of the person's clients.
create policy select_in_reach on app_public.contacts for select
  using (organization_id = (select app_hidden.current_org_id())
         and ((select app_hidden.current_reaches_all_locations())
              or exists (select 1 from app_public.contact_locations cl
                          where cl.organization_id = contacts.organization_id
                            and cl.contact_id = contacts.id
                            and cl.location_id = any((select app_hidden.current_location_ids())::uuid[])))
         and ((select app_hidden.current_records_level()) = 'all'
              or contacts.id = any((select app_hidden.current_own_client_ids())::uuid[])));

create policy select_in_reach on app_public.contact_locations for select
  using (organization_id = (select app_hidden.current_org_id())
         and ((select app_hidden.current_reaches_all_locations())
              or location_id = any((select app_hidden.current_location_ids())::uuid[])));

-- Rows that hang off a contact are visible with the contact (its policy applies inside).
create policy select_with_contact on app_public.contact_tags for select
  using (organization_id = (select app_hidden.current_org_id())
         and exists (select 1 from app_public.contacts c
                      where c.organization_id = contact_tags.organization_id and c.id = contact_tags.contact_id));
create policy select_shared_with_contact on app_public.contact_notes for select
  using (organization_id = (select app_hidden.current_org_id())
         and source <> 'location_private'
         and exists (select 1 from app_public.contacts c
                      where c.organization_id = contact_notes.organization_id and c.id = contact_notes.contact_id));

grant select on app_public.pipeline_stages, app_public.custom_fields, app_public.contacts,
  app_public.contact_locations, app_public.tags, app_public.contact_tags, app_public.contact_notes
  to svc_request, svc_worker, svc_analyst;

reset role;
