set local role svc_owner;

-- Who may use internal GraphQL over HTTP (/internal/graphql).
--
-- GraphQL is no operation of the registry: it reads tables straight under the policies, and
-- the policies decide which rows a credential reaches, never which fields or which kinds of
-- record. REST narrows what a MEMBER, a MANAGER without a power or a scope-limited key sees in
-- its SQL functions (contact cards, no captured_fields, 403 on notes and members), and GraphQL
-- reads none of those functions. So GraphQL takes only the credentials for which REST narrows
-- nothing: those that reach every location at the all-records level, see contact details and
-- hold every manager power (an organization key without a role, an owner's or admin's personal
-- key), with every read scope. Every other credential uses REST or MCP.
--
-- It reads the claims app_hidden.authenticate has just set in the same transaction, so the
-- route calls it right after authenticate, in the same round trip. Scope first, then role, as
-- authenticate does for an operation: 403 insufficient_scope names the first read scope missing.
create or replace function app_hidden.authorize_internal_graphql() returns void
language plpgsql stable as $$
declare
  -- the read scopes of the catalog (src/auth/scopes.ts), in its order
  read_scopes constant text[] := array['contacts:read', 'sequences:read', 'appointments:read',
    'conversations:read', 'calls:read', 'audiences:read', 'forms:read'];
  missing text;
begin
  select s into missing from unnest(read_scopes) with ordinality as r(s, n)
   where not (s = any(app_hidden.current_scopes()))
   order by n
   limit 1;
  if missing is not null then
    perform app_hidden.raise_error(403, 'insufficient_scope',
      format('Internal GraphQL needs every read scope; this credential lacks %s', missing),
      jsonb_build_object('required', missing));
  end if;

  if not (coalesce(app_hidden.current_role() in ('organization', 'owner', 'admin'), false)
          and app_hidden.current_reaches_all_locations()
          and app_hidden.current_records_level() = 'all'
          and coalesce(app_hidden.current_sees_contact_details(), false)
          and app_hidden.current_has_power('contacts')
          and app_hidden.current_has_power('sequences')
          and app_hidden.current_has_power('appointments')
          and app_hidden.current_has_power('staff')) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Internal GraphQL is for credentials that reach the whole organization with every field: '
      || 'an organization key without a role or location limits, or an owner''s or admin''s personal key');
  end if;
end $$;
comment on function app_hidden.authorize_internal_graphql() is
  'Raises 403 unless the current credential may use internal GraphQL over HTTP: every read scope '
  '(insufficient_scope, naming the first missing), and the whole organization, all records, contact details and every '
  'manager power (insufficient_role). Called right after app_hidden.authenticate.';
revoke execute on function app_hidden.authorize_internal_graphql() from public;
grant execute on function app_hidden.authorize_internal_graphql() to svc_request;

reset role;
