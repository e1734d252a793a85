-- Analysts stall no one: no advisory locks and no temporary tables (docs: Analysts).
--
-- The service's writes serialize on advisory locks (a tag write of an organization takes
-- hashtextextended('svc.tags:' || organization_id, 0)). PostgreSQL's advisory-lock functions are
-- executable by every role, so an analyst connected to the primary could take one of those
-- locks and sit on it: that organization's writes waited until they answered 503, and the
-- pool drained for everyone else. Execute on them is taken from PUBLIC and given back to the
-- service's roles (the owner that migrates, the login role, the request and worker roles);
-- analysts (members of svc_analyst only) have none. Only the functions' owner may do that, a
-- superuser: where the migration runs as one it is done (as for the large-object functions).
--
-- Temporary tables are a database privilege (TEMP), PUBLIC's by default: app_private.
-- analysts_lock_down_database() takes it from PUBLIC and gives it back to the service's roles,
-- here and again whenever `svc admin analyst create` makes an analyst (a database made from a
-- template or restored without its privileges gets them then).
do $$
declare
  f regprocedure;
  roles text := 'svc_owner, svc_login, svc_request, svc_worker';
begin
  if not (select rolsuper from pg_roles where rolname = current_user) then
    raise warning 'analysts: not a superuser: the advisory-lock functions stay executable by every role';
    return;
  end if;
  if current_user not in ('svc_owner', 'svc_login', 'svc_request', 'svc_worker') then
    roles := roles || ', ' || quote_ident(current_user);
  end if;
  for f in select p.oid::regprocedure from pg_proc p
            where p.pronamespace = 'pg_catalog'::regnamespace and p.proname like 'pg\_%advisory%'
  loop
    execute format('revoke execute on function %s from public', f);
    execute format('grant execute on function %s to %s', f, roles);
  end loop;
end $$;

set local role svc_owner;
create or replace function app_private.analysts_lock_down_database() returns boolean
  language plpgsql as $$
begin
  -- the database's owner or a superuser may change its privileges; anyone else leaves them
  if not (select rolsuper from pg_roles where rolname = current_user)
     and not pg_has_role(current_user, (select datdba from pg_database where datname = current_database()), 'member') then
    return false;
  end if;
  execute format('revoke temporary on database %I from public', current_database());
  execute format('grant temporary on database %I to svc_owner, svc_login, svc_request, svc_worker', current_database());
  return true;
end $$;
comment on function app_private.analysts_lock_down_database() is
  'Takes TEMP on the current database from PUBLIC (analysts make no temporary table), gives it to the service''s roles; false when the caller may not.';
revoke all on function app_private.analysts_lock_down_database() from public;
reset role;

select app_private.analysts_lock_down_database();
