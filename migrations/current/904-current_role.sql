-- current_role(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_role() returns text
language sql stable parallel safe as $$
  select nullif(app_hidden.session_claim('role'), '')
$$;
comment on function app_hidden.current_role() is
  'Effective role: organization (key with no role), owner, admin, manager or member; NULL for analysts.';

reset role;
