--! Previous: sha1:f28b09262d44d9701909ba51bb2117c563e9a586
--! Hash: sha1:af20a22ba0b3fe8885cc6c084a52713b5d7cb2e3
--! Message: Analysts: PostgreSQL's large-object functions taken from PUBLIC, so an analyst makes nothing on the primary

--! split: 010-analysts-make-no-large-objects.sql
-- Analysts read; they write nothing, on the primary either (docs: Analysts).
--
-- An analyst's role has no write privilege on any table and its sessions start read-only, but
-- PostgreSQL's large-object functions are executable by every role and write whatever the
-- session's read-only default is turned off: an analyst connected to the primary could store
-- large objects (and own them, which kept `analyst revoke` from dropping its role). The service
-- uses no large objects, so nobody needs them: execute is taken from PUBLIC. Only the functions'
-- owner may do that, a superuser: where the migration runs as one (the embedded server, CI,
-- most installations) it is done; elsewhere an operator can run the same statement.
do $$
begin
  if (select rolsuper from pg_roles where rolname = current_user) then
    revoke execute on function pg_catalog.lo_creat(integer), pg_catalog.lo_create(oid), pg_catalog.lo_from_bytea(oid, bytea),
      pg_catalog.lo_put(oid, bigint, bytea), pg_catalog.lowrite(integer, bytea), pg_catalog.lo_truncate(integer, integer),
      pg_catalog.lo_truncate64(integer, bigint), pg_catalog.lo_unlink(oid), pg_catalog.lo_import(text), pg_catalog.lo_import(text, oid)
      from public;
  end if;
end $$;
