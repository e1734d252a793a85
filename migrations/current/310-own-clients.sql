-- Own clients: the contacts a person deals with themselves, kept as rows that the areas which
-- know it write, instead of a function each of them would have to redefine.
--
-- A MEMBER at the own-records level reads only the contacts on their own appointments (spec:
-- roles), and later the contacts of their own calls and conversations. Until now
-- app_hidden.current_own_client_ids() answered '{}' and waited for the appointments area to
-- redefine it; a second area (calls) could then only redefine it again, restating the first.
-- Now each area keeps its own rows of app_private.own_clients, by triggers on its own tables
-- (an appointment booked for a staff profile adds (its person, its contact, 'appointments'); the
-- last one cancelled removes it), and the reach policies read the union. With no rows (today)
-- such a member reaches no contact, as before.
set local role svc_owner;

create table if not exists app_private.own_clients (
  organization_id uuid not null,
  person_id uuid not null,
  contact_id uuid not null,
  source text not null check (source ~ '^[a-z][a-z0-9_]{0,49}$'),
  created_at timestamptz not null default now(),
  primary key (organization_id, person_id, contact_id, source),
  foreign key (organization_id, person_id) references app_public.people on delete cascade,
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade
);
comment on table app_private.own_clients is
  'A contact is a person''s own client for as long as an area (source: appointments, calls…) keeps a row for it; '
  'each area writes only its own rows. Read by app_hidden.current_own_client_ids().';
create index if not exists own_clients_by_contact on app_private.own_clients (organization_id, contact_id);
-- Written and read only by the owner's functions.
alter table app_private.own_clients enable row level security;

-- Runs once per statement wherever a policy names it (`(select …)`), as the owner: the request
-- and analyst roles cannot read app_private.
create or replace function app_hidden.current_own_client_ids() returns uuid[]
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return coalesce((select array_agg(distinct o.contact_id)
                     from app_private.own_clients o
                    where o.organization_id = app_hidden.current_org_id()
                      and o.person_id = app_hidden.current_user_id()), '{}');
end $$;
comment on function app_hidden.current_own_client_ids() is
  'Contacts that are the acting person''s own clients (own-records level): app_private.own_clients, from every source.';

reset role;
