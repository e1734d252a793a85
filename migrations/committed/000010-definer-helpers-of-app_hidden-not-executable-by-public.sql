--! Previous: sha1:bc96102b2507bf092097833f9161862414d1701d
--! Hash: sha1:048a63d18480fd2654fce4e6e5691c7ab716f4e3
--! Message: definer helpers of app_hidden not executable by PUBLIC

-- The security-definer helpers of app_hidden run as the owner, past row security; each is
-- granted to the roles that call it (authenticate and the search helpers to svc_request, the
-- rate-limit store to svc_worker, ...). Functions the owner creates otherwise keep PUBLIC's
-- EXECUTE (000001's default-privileges revoke applies to the role that ran it, not to
-- svc_owner), so an analyst, who may use app_hidden for the policies' claim readers, could
-- call them too. PUBLIC loses EXECUTE on every definer function of app_hidden.
set local role svc_owner;

do $$
declare
  f regprocedure;
begin
  for f in
    select p.oid::regprocedure from pg_catalog.pg_proc p
     where p.pronamespace = 'app_hidden'::regnamespace and p.prosecdef
  loop
    execute format('revoke execute on function %s from public', f);
  end loop;
end $$;

reset role;
