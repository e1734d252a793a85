-- current_sms_enabled(): restated to read its claim through app_hidden.session_claim (900-analysts.sql): the
-- svc.* setting for the API's requests and tasks, exactly as before; an analyst's own mapping
-- for an analyst, whatever the analyst sets.
set local role svc_owner;

create or replace function app_hidden.current_sms_enabled() returns boolean
language sql stable parallel safe as $$
  select coalesce(nullif(app_hidden.session_claim('sms_enabled'), '')::boolean, false)
$$;
comment on function app_hidden.current_sms_enabled() is
  'Whether the credential may text (a MEMBER''s SMS setting; a MEMBER key never); false when unset and for analysts.';

reset role;
