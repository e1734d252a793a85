-- current_location_ids(): restated to read its claim through app_hidden.session_claim
-- (900-analysts.sql): the svc.* setting for the API's requests and tasks, exactly as before; an
-- analyst's own mapping for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_location_ids() returns uuid[]
language sql stable parallel safe as $$
  -- one expression (no FROM), so PostgreSQL inlines it into the statement that calls it
  select case
    when app_hidden.session_claim('location_ids') = '*' then null
    else coalesce(nullif(app_hidden.session_claim('location_ids'), '')::uuid[], '{}')
  end
$$;
comment on function app_hidden.current_location_ids() is
  'Locations a location-bound credential (or analyst) reaches; NULL when it reaches the whole organization, empty when unset.';

reset role;
