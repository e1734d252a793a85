-- current_records_level(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_records_level() returns text
language sql stable parallel safe as $$
  select coalesce(nullif(app_hidden.session_claim('records_level'), ''), 'all')
$$;
comment on function app_hidden.current_records_level() is
  'all, or own for a member who reads only their own clients; all for analysts (their reach is their locations).';

reset role;
