-- What the analyst role may reach, settled here whatever earlier files granted: the tables of
-- app_public (under their policies) and the views of app_analytics, and nothing else. No
-- app_private (key hashes, idempotency records, form and OAuth secrets, the outbox, the analysts
-- mapping itself), no graphile_worker (jobs and their payloads), no write anywhere.
--
-- Each analyst login role gets, from `svc admin analyst create`, a connection limit and a
-- statement_timeout of its own (role attributes, written on the primary, in force on replicas);
-- svc_analyst itself is nologin.
set local role svc_owner;

revoke all on schema app_private from svc_analyst;
revoke all on all tables in schema app_private from svc_analyst;
revoke insert, update, delete, truncate, references, trigger on all tables in schema app_public from svc_analyst;
revoke all on schema app_analytics from svc_request, svc_worker;

reset role;
