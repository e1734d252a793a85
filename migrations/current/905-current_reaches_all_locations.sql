-- current_reaches_all_locations(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_reaches_all_locations() returns boolean
language sql stable parallel safe as $$
  select coalesce(app_hidden.session_claim('location_ids') = '*', false)
$$;
comment on function app_hidden.current_reaches_all_locations() is
  'True only when the credential (or the analyst''s mapping) explicitly reaches the whole organization.';

reset role;
