-- The dashboard's sign-in and sessions (src/dashboard/session.ts). A person signs in with a
-- one-time link sent to their email address; the link's token and the session's id travel only
-- to the person's browser, and only their SHA-256 hashes are stored here, so a read of these
-- tables gives nobody a way in. The page handlers run as svc_request and call these security
-- definer functions, which take nothing but hashes, an email address and the link text.
--
--   app_hidden.dashboard_link_people(email)          the active people with that address
--   app_hidden.dashboard_issue_link(…)               a link stored and its email queued
--   app_hidden.dashboard_redeem_link(token, session) the link spent, a new session opened
--   app_hidden.dashboard_session(session)            the session's person, claims set as theirs
--   app_hidden.dashboard_end_session(session)        sign-out
set local role svc_owner;

create table if not exists app_private.dashboard_links (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  person_id uuid not null,
  token_hash bytea not null unique check (length(token_hash) = 32),
  return_to text,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);
comment on table app_private.dashboard_links is
  'One-time sign-in links: only the token''s SHA-256 is kept; spent (used_at) at the first use, dead after expires_at.';
alter table app_private.dashboard_links enable row level security;
create index if not exists dashboard_links_person on app_private.dashboard_links (organization_id, person_id);

create table if not exists app_private.dashboard_sessions (
  organization_id uuid not null,
  id uuid not null default gen_random_uuid(),
  person_id uuid not null,
  session_hash bytea not null unique check (length(session_hash) = 32),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (organization_id, id),
  foreign key (organization_id, person_id) references app_public.people on delete cascade
);
comment on table app_private.dashboard_sessions is
  'Signed-in browsers: only the SHA-256 of the cookie''s session id is kept. A new row at every sign-in (no fixation).';
alter table app_private.dashboard_sessions enable row level security;
create index if not exists dashboard_sessions_person on app_private.dashboard_sessions (organization_id, person_id);

-- How long a link and a session live.
create or replace function app_hidden.dashboard_lifetimes() returns jsonb
language sql immutable parallel safe as $$
  select '{"link_minutes": 15, "session_hours": 12}'::jsonb
$$;
comment on function app_hidden.dashboard_lifetimes() is 'Lifetimes of sign-in links (minutes) and dashboard sessions (hours).';
grant execute on function app_hidden.dashboard_lifetimes() to svc_request;

create or replace function app_hidden.dashboard_link_people(email text)
returns table (organization_id uuid, person_id uuid, organization_name text)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select p.organization_id, p.id, o.name
    from app_public.people p
    join app_public.organizations o on o.id = p.organization_id
   where p.email = dashboard_link_people.email::citext and p.active
   order by o.name, p.organization_id
$$;
comment on function app_hidden.dashboard_link_people(text) is
  'The active people with an email address (one per organization), to send each a sign-in link.';
revoke execute on function app_hidden.dashboard_link_people(text) from public;
grant execute on function app_hidden.dashboard_link_people(text) to svc_request;

-- The link's email goes out like every email (queue_message, the organization's transport);
-- the text of the link reaches the database only inside the email's body.
create or replace function app_hidden.dashboard_issue_link(org uuid, person uuid, token_hash bytea,
  return_to text, recipient text, subject text, body text)
returns void language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.people p
                  where p.organization_id = org and p.id = person and p.active and p.email = recipient::citext) then
    perform app_hidden.raise_error(404, 'not_found', 'Person not found');
  end if;
  insert into app_private.dashboard_links (organization_id, person_id, token_hash, return_to, expires_at)
  values (org, person, token_hash, return_to,
          now() + make_interval(mins => (app_hidden.dashboard_lifetimes()->>'link_minutes')::int));
  perform set_config('svc.organization_id', org::text, true);
  perform app_hidden.queue_message('email', recipient, subject, body, null, jsonb_build_object('kind', 'dashboard_sign_in'));
  perform set_config('svc.organization_id', '', true);
end $$;
comment on function app_hidden.dashboard_issue_link(uuid, uuid, bytea, text, text, text, text) is
  'Stores a sign-in link (its token''s hash) for an active person and queues its email to their address.';
revoke execute on function app_hidden.dashboard_issue_link(uuid, uuid, bytea, text, text, text, text) from public;
grant execute on function app_hidden.dashboard_issue_link(uuid, uuid, bytea, text, text, text, text) to svc_request;

-- Spends the link (once, before it expires, for a person still active) and opens a session
-- under a hash the caller chose fresh: the session id is never one the browser brought along.
create or replace function app_hidden.dashboard_redeem_link(token_hash bytea, session_hash bytea)
returns table (organization_id uuid, person_id uuid, return_to text)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  l app_private.dashboard_links;
begin
  update app_private.dashboard_links d set used_at = now()
   where d.token_hash = dashboard_redeem_link.token_hash and d.used_at is null and d.expires_at > now()
  returning d.* into l;
  if not found or not exists (select 1 from app_public.people p
                               where p.organization_id = l.organization_id and p.id = l.person_id and p.active) then
    return;
  end if;
  insert into app_private.dashboard_sessions (organization_id, person_id, session_hash, expires_at)
  values (l.organization_id, l.person_id, session_hash,
          now() + make_interval(hours => (app_hidden.dashboard_lifetimes()->>'session_hours')::int));
  return query select l.organization_id, l.person_id, l.return_to;
end $$;
comment on function app_hidden.dashboard_redeem_link(bytea, bytea) is
  'Spends a sign-in link and opens a session under a fresh hash; no row when the link is unknown, spent, expired or its person inactive.';
revoke execute on function app_hidden.dashboard_redeem_link(bytea, bytea) from public;
grant execute on function app_hidden.dashboard_redeem_link(bytea, bytea) to svc_request;

-- The session's person as they are now, with the claims of the transaction set as theirs, the
-- way app_hidden.authenticate sets a personal key's: the dashboard's writes then check the same
-- claims the API's do. Agent access is not consulted: it governs agents (keys, tokens), not the
-- person in their browser. NULL (and no claims) when the session is unknown, expired, or its
-- person deactivated.
create or replace function app_hidden.dashboard_session(session_hash bytea) returns jsonb
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s app_private.dashboard_sessions;
  p app_public.people;
  loc_ids uuid[];
  settings jsonb;
begin
  select * into s from app_private.dashboard_sessions d
   where d.session_hash = dashboard_session.session_hash and d.expires_at > now();
  if not found then return null; end if;
  select * into p from app_public.people x where x.organization_id = s.organization_id and x.id = s.person_id and x.active;
  if not found then return null; end if;
  if p.role in ('manager', 'member') then
    select coalesce(array_agg(location_id order by location_id), '{}') into loc_ids
      from app_public.person_locations where organization_id = p.organization_id and person_id = p.id;
  end if;
  settings := jsonb_build_object(
    'svc.organization_id', p.organization_id::text,
    'svc.credential_id', s.id::text,
    'svc.user_id', p.id::text,
    'svc.role', p.role,
    'svc.location_ids', coalesce(loc_ids::text, '*'),
    'svc.powers', (case when p.role = 'manager' then p.powers else '{}' end)::text,
    'svc.scopes', '{}',
    'svc.records_level', case when p.role = 'member' then p.records_level else 'all' end,
    'svc.sms_enabled', p.sms_enabled::text);
  perform set_config(x.key, x.value, true) from jsonb_each_text(settings) x;
  return jsonb_build_object('organization_id', p.organization_id, 'person_id', p.id, 'session_id', s.id,
    'name', p.name, 'email', p.email, 'role', p.role,
    'powers', to_jsonb(case when p.role = 'manager' then p.powers else '{}' end),
    'location_ids', to_jsonb(loc_ids));
end $$;
comment on function app_hidden.dashboard_session(bytea) is
  'The signed-in person of a live session (claims set for the transaction as theirs), or NULL.';
revoke execute on function app_hidden.dashboard_session(bytea) from public;
grant execute on function app_hidden.dashboard_session(bytea) to svc_request;

create or replace function app_hidden.dashboard_end_session(session_hash bytea) returns void
language sql security definer
set search_path to pg_catalog, public, pg_temp as $$
  delete from app_private.dashboard_sessions d where d.session_hash = dashboard_end_session.session_hash
$$;
comment on function app_hidden.dashboard_end_session(bytea) is 'Sign-out: the session is gone.';
revoke execute on function app_hidden.dashboard_end_session(bytea) from public;
grant execute on function app_hidden.dashboard_end_session(bytea) to svc_request;

-- Deactivation ends the person's sessions and unspent links at once (dashboard_session also
-- checks, for a session read in the same instant).
create or replace function app_private.tg_people__end_dashboard_sessions() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  delete from app_private.dashboard_sessions d where d.organization_id = new.organization_id and d.person_id = new.id;
  delete from app_private.dashboard_links d where d.organization_id = new.organization_id and d.person_id = new.id and d.used_at is null;
  return null;
end $$;
revoke execute on function app_private.tg_people__end_dashboard_sessions() from public;
drop trigger if exists _930_end_dashboard_sessions on app_public.people;
create trigger _930_end_dashboard_sessions after update of active on app_public.people
  for each row when (old.active and not new.active)
  execute function app_private.tg_people__end_dashboard_sessions();

reset role;
