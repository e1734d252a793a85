-- Analysts: login roles that read replicas under the same row-level policies as the API.
--
-- An analyst's organization and locations come from who the analyst is, not from a setting the
-- analyst could change: `svc admin analyst create` makes a login role (member of svc_analyst)
-- and a row here, keyed by the role's name. The claim helpers (app_hidden.current_org_id() and
-- the others, restated in 901-910) read this row when the session's user is an analyst and the
-- svc.* settings otherwise, so `set svc.organization_id = '…'` in an analyst's session changes
-- nothing. The row is in app_private, which analysts cannot use; app_hidden.analyst_claim (a
-- definer function) is their only way to it, and it answers only their own row.
set local role svc_owner;

create table if not exists app_private.analysts (
  role_name text primary key check (role_name ~ '^svc_analyst_[a-z0-9_]{1,40}$'),
  -- NULL only for the operator's own analysts (all_organizations), who hold BYPASSRLS
  organization_id uuid references app_public.organizations on delete cascade,
  -- NULL: every location of the organization
  location_ids uuid[] check (location_ids is null or cardinality(location_ids) > 0),
  all_organizations boolean not null default false,
  created_at timestamptz not null default now(),
  check (all_organizations = (organization_id is null)),
  check (location_ids is null or organization_id is not null)
);
comment on table app_private.analysts is
  'Who each analyst login role is: its organization (NULL for the operator''s all-organizations analysts) and the '
  'locations it reaches (NULL: all). Keyed by session_user; written by `svc admin analyst create|revoke` only.';
-- like every private table: RLS on, no policies (only its owner, svc_owner, reads it)
alter table app_private.analysts enable row level security;
create index if not exists analysts_by_organization on app_private.analysts (organization_id);

-- An analyst's claim, as text in the format the svc.* setting would hold it, from its own row
-- (session_user's) of app_private.analysts: its organization, and '*' or its locations; every
-- other claim is '' (none). A member of svc_analyst with no row (a role left behind) gets ''
-- for everything and sees nothing.
create or replace function app_hidden.analyst_claim(claim text) returns text
language sql stable parallel safe security definer
set search_path to pg_catalog, public, pg_temp as $$
  select coalesce((
    select case claim
             when 'organization_id' then coalesce(a.organization_id::text, '')
             when 'location_ids' then case when a.location_ids is null then '*' else a.location_ids::text end
           end
      from app_private.analysts a
     where a.role_name = session_user), '')
$$;
comment on function app_hidden.analyst_claim(text) is
  'An analyst''s claim from its own row of app_private.analysts (keyed by session_user); '''' when it has none. '
  'Read through app_hidden.session_claim.';

-- The one place the claim helpers read a claim. A session is an analyst's when its user has
-- svc_analyst's rights and not svc_owner's (a superuser has every role's, so the owner's own
-- sessions, tests and operator tools are not analysts'): it reads app_hidden.analyst_claim.
-- Every other session reads the setting, as before; the API's requests (svc_login) and
-- statements run as svc_request or svc_worker (the worker's tasks) are told apart first, by
-- name, at no extra cost. An analyst cannot take the settings' path: session_user changes only
-- for a superuser (SET ROLE changes current_user), and an analyst's current_user is its own
-- role or svc_analyst, never svc_request or svc_worker. Inside a definer helper (current_user
-- svc_owner) called in an analyst's session, the analyst's claims still apply.
create or replace function app_hidden.session_claim(claim text) returns text
language sql stable parallel safe as $$
  select case when session_user = 'svc_login' or current_user in ('svc_request', 'svc_worker')
                or not pg_catalog.pg_has_role(session_user, 'svc_analyst', 'USAGE')
                or pg_catalog.pg_has_role(session_user, 'svc_owner', 'USAGE')
              then pg_catalog.current_setting('svc.' || claim, true)
              else app_hidden.analyst_claim(claim) end
$$;
comment on function app_hidden.session_claim(text) is
  'The text of claim svc.<claim> for this session: the setting, or for an analyst its own mapping.';

revoke execute on function app_hidden.analyst_claim(text), app_hidden.session_claim(text) from public;
grant execute on function app_hidden.analyst_claim(text), app_hidden.session_claim(text)
  to svc_request, svc_worker, svc_analyst;

reset role;
