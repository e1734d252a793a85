-- Who may execute the functions of our schemas, settled after every other file of this
-- migration has created its own (this file runs last; 010 says why PUBLIC held EXECUTE).
--
--   PUBLIC       nothing. A role reaches a function only through a grant to it.
--   svc_request  every function of app_public (the schema holds the API's operations and only
--                them), the app_hidden helpers granted to it where they are created, and the
--                helpers the row-level policies call.
--   svc_worker   what tasks call, granted where it is created, and the policies' helpers.
--   svc_analyst  only the helpers the policies of its SELECTs call: an analyst reads tables,
--                it calls no operation and no helper of an operation.
--
-- A policy's expression runs with the rights of the role reading the table, and so do the
-- invoker helpers it calls, and what those call in turn; a definer helper runs its body as
-- svc_owner. The helpers are found in the catalog (the policies' expressions and the bodies of
-- the invoker helpers they name, which call each other schema-qualified, as everything here
-- does), so a policy added in another file is covered without being listed here.
set local role svc_owner;

revoke execute on all functions in schema app_public, app_hidden, app_private from public;

grant execute on all functions in schema app_public to svc_request;

revoke execute on all functions in schema app_public, app_hidden, app_private from svc_analyst;

do $$
declare
  helper record;
begin
  for helper in
    with recursive used (fn, reading) as (
      select p.oid, pol.polcmd in ('r', '*')
        from pg_catalog.pg_policy pol
        join pg_catalog.pg_class c on c.oid = pol.polrelid
        cross join lateral regexp_matches(
          concat_ws(' ', pg_catalog.pg_get_expr(pol.polqual, pol.polrelid), pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid)),
          'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
       where c.relnamespace = 'app_public'::regnamespace
      union
      select p.oid, used.reading
        from used
        join pg_catalog.pg_proc caller on caller.oid = used.fn and not caller.prosecdef
        cross join lateral regexp_matches(caller.prosrc, 'app_hidden\."?(\w+)"?\(', 'g') m
        join pg_catalog.pg_proc p on p.pronamespace = 'app_hidden'::regnamespace and p.proname = m[1]
    )
    select fn::regprocedure as fn, bool_or(reading) as reading from used group by fn
  loop
    execute format('grant execute on function %s to svc_request, svc_worker', helper.fn);
    if helper.reading then
      execute format('grant execute on function %s to svc_analyst', helper.fn);
    end if;
  end loop;
end $$;

reset role;

-- graphile_worker's functions (010 lets svc_owner use the schema for add_job) are called by the
-- worker's connection, which owns them, and by svc_owner through app_private.add_job. No other
-- role may use the schema; PUBLIC loses EXECUTE on them too, so svc_owner reaches only the two
-- it is granted.
revoke execute on all functions in schema graphile_worker from public;
