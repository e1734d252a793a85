-- current_scopes(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_scopes() returns text[]
language sql stable parallel safe as $$
  select coalesce(nullif(app_hidden.session_claim('scopes'), '')::text[], '{}')
$$;
comment on function app_hidden.current_scopes() is
  'Scopes of the key; none for analysts.';

reset role;
