-- Each permission rule in one place.
--
-- app_hidden.requirement_refusal decided, for the current claims, whether an operation's
-- requirements are met; the OAuth consent page re-implemented the same rule in TypeScript to
-- decide which scopes a person may grant. The rule now lives in
-- app_hidden.requirement_refusal_for, a function of the role, powers, SMS setting and scopes it
-- is asked about: requirement_refusal asks it about the current claims, and
-- app_hidden.oauth_grantable_scopes about a person who is about to approve a client.

set local role svc_owner;

create or replace function app_hidden.requirement_refusal_for(
  acting text, powers text[], sms_enabled boolean, scopes text[],
  required_scope text, member_access text, manager_power text
) returns jsonb language plpgsql immutable parallel safe as $$
begin
  if required_scope is not null and not (required_scope = any(scopes)) then
    return jsonb_build_object('status', 403, 'error', 'insufficient_scope',
      'message', format('This credential lacks the %s scope', required_scope),
      'extra', jsonb_build_object('required', required_scope));
  end if;
  if acting = 'manager' then
    if manager_power is not null and not (manager_power = any(powers)) then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', format('A manager needs the %s power for this operation', manager_power));
    elsif manager_power is null and member_access = 'deny' then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'A manager cannot call this operation');
    end if;
  elsif acting = 'member' then
    if member_access = 'deny' then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'A member cannot call this operation');
    elsif member_access = 'sms_setting' and not sms_enabled then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'Texting is turned off for this member');
    end if;
  end if;
  return null;
end $$;
comment on function app_hidden.requirement_refusal_for(text, text[], boolean, text[], text, text, text) is
  'The rule of who may call an operation: whether a credential acting as `acting` (owner, admin, manager, member, organization), with these powers, SMS setting and scopes, meets the operation''s requirements (scope, member access, manager power): null, or the refusal as {status, error, message, extra}. Scope is checked first, so insufficient_scope names the scope.';
revoke all on function app_hidden.requirement_refusal_for(text, text[], boolean, text[], text, text, text) from public;
grant execute on function app_hidden.requirement_refusal_for(text, text[], boolean, text[], text, text, text) to svc_request;

create or replace function app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text)
returns jsonb language sql stable as $$
  select app_hidden.requirement_refusal_for(app_hidden.current_role(), app_hidden.current_powers(),
    app_hidden.current_sms_enabled(), app_hidden.current_scopes(), required_scope, member_access, manager_power)
$$;
comment on function app_hidden.requirement_refusal(text, text, text) is
  'Whether the current claims meet an operation''s requirements (app_hidden.requirement_refusal_for asked about them): null, or the refusal as {status, error, message, extra}.';

-- The scopes a person may grant an OAuth client now: those for which their role can call at
-- least one operation of `requirements` ([{scope, member_access, manager_power}], the catalog's
-- operations), asked of the same rule as every request's; and not conversations:write while a
-- member's SMS setting is off (a member who may not text grants no texting, even though some
-- conversations:write operations need no SMS). Empty for a person who may not approve now
-- (app_hidden.oauth_person).
create or replace function app_hidden.oauth_grantable_scopes(organization_id uuid, person_id uuid, requirements jsonb)
returns text[] language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with p as (select app_hidden.oauth_person(organization_id, person_id) as p)
  select coalesce(array_agg(distinct r->>'scope' order by r->>'scope'), '{}')
    from p, jsonb_array_elements(requirements) r
   where p.p is not null
     and r->>'scope' is not null
     and app_hidden.requirement_refusal_for(p.p->>'role', array(select jsonb_array_elements_text(p.p->'powers')),
           (p.p->>'sms_enabled')::boolean, array[r->>'scope'], r->>'scope', r->>'member_access', r->>'manager_power') is null
     and not (r->>'scope' = 'conversations:write' and p.p->>'role' = 'member' and not (p.p->>'sms_enabled')::boolean)
$$;
comment on function app_hidden.oauth_grantable_scopes(uuid, uuid, jsonb) is
  'The scopes of requirements ([{scope, member_access, manager_power}]) a person may grant an OAuth client: those with an operation their role may call (app_hidden.requirement_refusal_for), without conversations:write for a member whose SMS setting is off; empty when the person may not approve now.';
revoke all on function app_hidden.oauth_grantable_scopes(uuid, uuid, jsonb) from public;
grant execute on function app_hidden.oauth_grantable_scopes(uuid, uuid, jsonb) to svc_request;

-- appointments_create (redefined above, with no_team_member_available) asks
-- app_hidden.current_may_book_team_member who may book whom (with a null team member: whether the
-- credential may book any), instead of restating the manager rule.
comment on function app_hidden.current_may_book_team_member(uuid) is
  'Whether the credential may book or change an appointment of this team member: owner and admin any; a manager with the appointments power any (at its locations); a manager without it and a member only itself; keys with no role, and Member or Manager keys without the power, none. Asked with null: whether it may book any team member (the service choosing one). Stricter than current_has_power, which grants organization keys all.';

reset role;
