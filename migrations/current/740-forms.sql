-- Forms: the web forms of the organization's sites and what visitors sent through them (spec:
-- Conversation, call, form; Authentication 7; ../shared/design/operator-cli.md, `forms`).
--
--   forms              a form of one location (or of the whole organization), with the origins
--                      (sites) allowed to post to it from a browser
--   form_fields        its fields, in order, each with a key the submissions' payloads use
--   form_submissions   each submission: the payload by field key, the contact created or
--                      updated (accepted ones), accepted or spam (and why)
--   app_private.form_secrets   the key that signs a form's render-time tokens (742-forms-public.sql)
--
-- Reach: a form of a location is visible to credentials that reach the location; a form of no
-- location to every credential of the organization; submissions with their form. A MEMBER
-- reads forms but not submissions: the operation says so (member access deny).
set local role svc_owner;

create table if not exists app_public.forms (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  location_id uuid,
  name text not null check (length(name) between 1 and 200),
  allowed_origins text[] not null default '{}'
    check (cardinality(allowed_origins) <= 50 and array_position(allowed_origins, null) is null
           -- each an http(s) origin: an opaque origin ("null") would admit any sandboxed page
           and array_to_string(allowed_origins, ' ') ~ '^(https?://[^ /]+( |$))*$'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, location_id) references app_public.locations on delete cascade
);
comment on table app_public.forms is 'A web form of a location (NULL: of the whole organization), posted to without a key.';
comment on column app_public.forms.allowed_origins is
  'The sites (scheme://host[:port]) whose pages may post to the form from a browser (CORS); a plain HTML form post needs none.';
create index if not exists forms_by_location on app_public.forms (organization_id, location_id, name);

create table if not exists app_public.form_fields (
  organization_id uuid not null,
  form_id uuid not null,
  key text not null check (key ~ '^[A-Za-z][A-Za-z0-9_]{0,99}$'),
  position int not null check (position >= 0),
  label text not null check (length(label) between 1 and 200),
  type text not null check (type in ('text', 'email', 'phone', 'textarea', 'select', 'checkbox', 'number', 'date')),
  required boolean not null default false,
  options jsonb check (options is null or (jsonb_typeof(options) = 'array' and jsonb_array_length(options) between 1 and 500)),
  primary key (organization_id, form_id, key),
  unique (organization_id, form_id, position),
  foreign key (organization_id, form_id) references app_public.forms on delete cascade,
  check ((type = 'select') = (options is not null))
);
comment on table app_public.form_fields is
  'A form''s fields in order; key names the value in submissions'' payloads. A select field lists its options.';

create table if not exists app_public.form_submissions (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  form_id uuid not null,
  contact_id uuid,
  payload jsonb not null check (jsonb_typeof(payload) = 'object'),
  status text not null check (status in ('accepted', 'spam')),
  -- why a spam one is spam: honeypot, too_fast, bad_token, links, rate
  spam_reason text check (spam_reason ~ '^[a-z_]{1,50}$'),
  -- the email of the payload, lower case: what `search` matches
  email_key text check (length(email_key) <= 320),
  -- the client address of a web submission (rate per address); NULL from fixtures and the CLI
  client_address text check (length(client_address) <= 100),
  submitted_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, form_id) references app_public.forms on delete cascade,
  foreign key (organization_id, contact_id) references app_public.contacts on delete set null (contact_id),
  check ((status = 'spam') = (spam_reason is not null)),
  check (status = 'accepted' or contact_id is null)
);
comment on table app_public.form_submissions is
  'A submission of a form: payload by field key, the contact it created or updated (accepted only), accepted or spam.';
create index if not exists form_submissions_by_form on app_public.form_submissions (organization_id, form_id, submitted_at desc, id desc);
create index if not exists form_submissions_by_address on app_public.form_submissions (organization_id, client_address, submitted_at)
  where client_address is not null;

create table if not exists app_private.form_secrets (
  organization_id uuid not null,
  form_id uuid not null,
  secret text not null default replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''),
  primary key (organization_id, form_id),
  foreign key (organization_id, form_id) references app_public.forms on delete cascade
);
comment on table app_private.form_secrets is
  'The key that signs a form''s render-time tokens (two random UUIDs: 244 random bits). Read only by the public form''s definer functions.';
alter table app_private.form_secrets enable row level security;

create or replace function app_private.tg_forms__secret() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  insert into app_private.form_secrets (organization_id, form_id) values (new.organization_id, new.id) on conflict do nothing;
  return null;
end $$;
comment on function app_private.tg_forms__secret() is 'Gives every new form the key its render-time tokens are signed with.';
revoke execute on function app_private.tg_forms__secret() from public;
drop trigger if exists _500_secret on app_public.forms;
create trigger _500_secret after insert on app_public.forms for each row execute function app_private.tg_forms__secret();

--------------------------------------------------------------------------------
-- Reach
--------------------------------------------------------------------------------
alter table app_public.forms enable row level security;
drop policy if exists select_in_reach on app_public.forms;
create policy select_in_reach on app_public.forms for select using (
  organization_id = (select app_hidden.current_org_id())
  and (location_id is null
       or (select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[])));
grant select on app_public.forms to svc_request, svc_worker;

alter table app_public.form_fields enable row level security;
drop policy if exists select_with_form on app_public.form_fields;
create policy select_with_form on app_public.form_fields for select using (
  organization_id = (select app_hidden.current_org_id())
  and exists (select 1 from app_public.forms f where f.organization_id = form_fields.organization_id and f.id = form_fields.form_id));
grant select on app_public.form_fields to svc_request, svc_worker;

alter table app_public.form_submissions enable row level security;
drop policy if exists select_with_form on app_public.form_submissions;
create policy select_with_form on app_public.form_submissions for select using (
  organization_id = (select app_hidden.current_org_id())
  and exists (select 1 from app_public.forms f where f.organization_id = form_submissions.organization_id and f.id = form_submissions.form_id));
grant select on app_public.form_submissions to svc_request, svc_worker;

--------------------------------------------------------------------------------
-- form_submitted: sequences can start when a form is submitted
--------------------------------------------------------------------------------
insert into app_private.sequence_trigger_types (type, area, description, fields, position) values
  ('form_submitted', 'forms', 'Contacts enter when they submit the form and the submission is accepted (not spam).',
   '{"form_id": {"type": "uuid", "required": true, "description": "A form of forms_list."}}', 4)
on conflict (type) do update set area = excluded.area, description = excluded.description, fields = excluded.fields,
  position = excluded.position;

reset role;
