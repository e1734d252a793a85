-- current_credential_id(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_credential_id() returns uuid
language sql stable parallel safe as $$
  select nullif(app_hidden.session_claim('credential_id'), '')::uuid
$$;
comment on function app_hidden.current_credential_id() is
  'The key of the current request; NULL for analysts.';

reset role;
