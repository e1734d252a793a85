-- current_powers(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_powers() returns text[]
language sql stable parallel safe as $$
  select coalesce(nullif(app_hidden.session_claim('powers'), '')::text[], '{}')
$$;
comment on function app_hidden.current_powers() is
  'Manager powers of the credential; none for analysts.';

reset role;
