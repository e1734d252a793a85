-- What the analyst role may reach, settled after the tables of the migration in progress exist
-- (the last file of the migration, so that every table created before it is covered; a table
-- created later needs the same grant, and test/platform/analysts.test.ts fails until it has it):
--
--   every table of app_public, under its row-level policies (RLS is on for each of them:
--   test/platform/rls.test.ts), and the views of app_analytics (911);
--   the app_hidden helpers those tables' SELECT policies call, found in the catalog as
--   000012's last file finds them, and nothing else to execute;
--   no app_private (key hashes, idempotency records, form and OAuth secrets, the outbox, the
--   analysts mapping itself), no graphile_worker, no write anywhere.
--
-- Each analyst login role gets, from `svc admin analyst create`, a connection limit, a
-- statement_timeout and default_transaction_read_only of its own (role attributes and settings,
-- written on the primary and replayed by replicas); svc_analyst itself is nologin.
set local role svc_owner;

revoke all on schema app_private from svc_analyst;
revoke all on all tables in schema app_private from svc_analyst;
revoke insert, update, delete, truncate, references, trigger on all tables in schema app_public from svc_analyst;
grant select on all tables in schema app_public to svc_analyst;
revoke all on schema app_analytics from svc_request, svc_worker;

do $$
declare
  helper record;
begin
  for helper in
    with recursive used (fn) as (
      select p.oid
        from pg_catalog.pg_policy pol
        join pg_catalog.pg_class c on c.oid = pol.polrelid
        cross join lateral regexp_matches(pg_catalog.pg_get_expr(pol.polqual, pol.polrelid), 'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
       where c.relnamespace = 'app_public'::regnamespace and pol.polcmd in ('r', '*') and pol.polqual is not null
      union
      select p.oid
        from used
        join pg_catalog.pg_proc caller on caller.oid = used.fn and not caller.prosecdef
        cross join lateral regexp_matches(caller.prosrc, 'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
    )
    select distinct fn::regprocedure as fn from used
  loop
    execute format('grant execute on function %s to svc_analyst', helper.fn);
  end loop;
end $$;

reset role;
