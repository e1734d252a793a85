-- Calls: the phone calls the receptionist (the voice platform's assistant, or a team member)
-- had with contacts, each with its transcript (spec: Conversation, call, form; Authentication 7;
-- ../shared/design/operator-cli.md, `contacts[].calls`).
--
--   calls                   one row per call: who (contact), where (location), who took it
--                           (team member = staff profile), when, how long, the platform's call id
--   call_transcript_lines   the transcript, one row per line in order (caller, assistant, staff)
--
-- Reach: a call is visible to credentials that reach its location (a call of no location only
-- organization-wide). A MEMBER reads only the calls of its own clients (app_private.own_clients,
-- any source), and only while it has a staff profile: a MEMBER key, or a member without a
-- profile, reads none. A call taken by a team member makes its contact that person's own client
-- (source 'calls'), kept by the trigger below.
--
-- Writes come from the fixture (as the owner) and from the voice webhook (722-calls-webhook.sql);
-- the API only reads.
set local role svc_owner;

create table if not exists app_public.calls (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  contact_id uuid not null,
  location_id uuid,
  staff_profile_id uuid,
  direction text not null default 'inbound' check (direction in ('inbound', 'outbound')),
  status text not null default 'completed' check (status in ('completed', 'missed', 'voicemail', 'in_progress', 'failed')),
  from_number text check (from_number ~ '^\+[1-9][0-9]{6,14}$'),
  to_number text check (to_number ~ '^\+[1-9][0-9]{6,14}$'),
  started_at timestamptz not null default now(),
  duration_seconds int check (duration_seconds between 0 and 86400),
  summary text check (length(summary) <= 20000),
  -- the voice platform's id of the call: a second delivery of the same call records nothing new
  external_id text check (length(external_id) between 1 and 200),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  foreign key (organization_id, location_id) references app_public.locations on delete set null (location_id),
  foreign key (organization_id, staff_profile_id) references app_public.staff_profiles on delete set null (staff_profile_id)
);
comment on table app_public.calls is
  'A phone call with a contact (taken by the assistant, or by a team member: staff_profile_id), with its transcript in '
  'app_public.call_transcript_lines. external_id is the voice platform''s call id (unique per organization).';
comment on column app_public.calls.location_id is 'Where it was taken; NULL: visible only to credentials that reach the whole organization.';
create unique index if not exists calls_by_external_id on app_public.calls (organization_id, external_id) where external_id is not null;
-- calls_list: newest first, keyset over (started_at, id), optionally for one contact
create index if not exists calls_by_start on app_public.calls (organization_id, started_at desc, id desc);
create index if not exists calls_by_contact on app_public.calls (organization_id, contact_id, started_at desc, id desc);

create table if not exists app_public.call_transcript_lines (
  organization_id uuid not null,
  call_id uuid not null,
  position int not null check (position >= 0),
  speaker text not null check (speaker in ('caller', 'assistant', 'staff')),
  text text not null check (length(text) <= 20000),
  primary key (organization_id, call_id, position),
  foreign key (organization_id, call_id) references app_public.calls on delete cascade
);
comment on table app_public.call_transcript_lines is 'A call''s transcript, one line per row in the order spoken (position from 0).';

--------------------------------------------------------------------------------
-- Own clients: a call taken by a team member makes its contact that person's client
--------------------------------------------------------------------------------
-- Keeps (person of the staff profile, contact, 'calls') in app_private.own_clients while at
-- least one call of that team member with that contact remains.
create or replace function app_private.tg_calls__own_clients() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.staff_profile_id is not null
     and (tg_op = 'DELETE' or old.staff_profile_id is distinct from new.staff_profile_id or old.contact_id <> new.contact_id)
     and not exists (select 1 from app_public.calls c
                      where c.organization_id = old.organization_id and c.contact_id = old.contact_id
                        and c.staff_profile_id = old.staff_profile_id and c.id <> old.id) then
    delete from app_private.own_clients o
     using app_public.staff_profiles sp
     where sp.organization_id = old.organization_id and sp.id = old.staff_profile_id
       and o.organization_id = old.organization_id and o.person_id = sp.person_id and o.contact_id = old.contact_id
       and o.source = 'calls';
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.staff_profile_id is not null then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'calls'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id
    on conflict do nothing;
  end if;
  return null;
end $$;
comment on function app_private.tg_calls__own_clients() is
  'The calls area''s rows of app_private.own_clients: a contact is the own client of the team member who took a call with it.';
revoke execute on function app_private.tg_calls__own_clients() from public;
drop trigger if exists _500_own_clients on app_public.calls;
create trigger _500_own_clients after insert or delete or update of staff_profile_id, contact_id on app_public.calls
  for each row execute function app_private.tg_calls__own_clients();

--------------------------------------------------------------------------------
-- Reach
--------------------------------------------------------------------------------
-- Whether the credential reads the calls of this contact: everyone but a MEMBER; a MEMBER only
-- those of its own clients, and only with a staff profile (spec: Authentication 7).
create or replace function app_hidden.current_reads_calls_of(contact_id uuid) returns boolean
language sql stable parallel safe as $$
  select app_hidden.current_role() is distinct from 'member'
      or ((select app_hidden.current_staff_profile_id()) is not null
          and contact_id = any((select app_hidden.current_own_client_ids())::uuid[]))
$$;
comment on function app_hidden.current_reads_calls_of(uuid) is
  'Whether the credential reads calls with this contact (a MEMBER: only its own clients'', and only with a staff profile).';
grant execute on function app_hidden.current_reads_calls_of(uuid) to svc_request, svc_worker;

alter table app_public.calls enable row level security;
drop policy if exists select_in_reach on app_public.calls;
create policy select_in_reach on app_public.calls for select using (
  organization_id = (select app_hidden.current_org_id())
  and ((select app_hidden.current_reaches_all_locations())
       or location_id = any((select app_hidden.current_location_ids())::uuid[]))
  and app_hidden.current_reads_calls_of(contact_id));
grant select on app_public.calls to svc_request, svc_worker;

alter table app_public.call_transcript_lines enable row level security;
drop policy if exists select_with_call on app_public.call_transcript_lines;
create policy select_with_call on app_public.call_transcript_lines for select using (
  organization_id = (select app_hidden.current_org_id())
  and exists (select 1 from app_public.calls c
               where c.organization_id = call_transcript_lines.organization_id and c.id = call_transcript_lines.call_id));
grant select on app_public.call_transcript_lines to svc_request, svc_worker;

reset role;
