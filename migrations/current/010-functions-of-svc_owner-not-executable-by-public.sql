-- Functions svc_owner creates are executable only by the roles they are granted to.
--
-- PostgreSQL gives PUBLIC EXECUTE on every new function. 000001 meant to withhold it with
-- `alter default privileges in schema … revoke execute on functions from public`, but that
-- does nothing: PUBLIC's EXECUTE is a global default, per creating role, and a per-schema
-- default can only add to the global one. It was also run by the migrating role, not by
-- svc_owner, which creates our functions. So every function of app_public, app_hidden and
-- app_private (security-definer ones included, unless revoked one by one) was executable by
-- any role that may use the schema: analysts could call the API's write functions and the
-- definer helpers. From here on svc_owner's new functions start with no EXECUTE for PUBLIC;
-- each migration grants its functions to the roles that call them (svc_request for what the
-- API calls, svc_worker for what tasks call, svc_analyst only the claim helpers its policies
-- read). Functions that already exist lose PUBLIC's EXECUTE in the last file of this
-- migration (990), which also covers the functions of the files in between.
set local role svc_owner;

alter default privileges for role svc_owner revoke execute on functions from public;

reset role;

-- app_private.add_job, the one way SQL enqueues a job, was a security-definer function owned by
-- the graphile_worker schema's owner, the migrating role: a superuser. A definer function runs
-- with its owner's rights, so a flaw in it, or in anything it calls, would act as a superuser.
-- It belongs to svc_owner like every other definer function, and svc_owner gets exactly what
-- graphile_worker.add_job needs, which runs with its caller's rights: the schema, the two
-- functions, and the three private tables it reads and writes. graphile-worker enables row
-- security on those tables with no policies (only their owner, the worker's connection, passes);
-- one policy per table lets svc_owner through. Jobs belong to no tenant, and svc_owner already
-- owns every row a job points at. A graphile-worker upgrade that recreates these tables or
-- functions drops the grants and policies with them: the delivery tests then fail, and a
-- migration restates them.
alter function app_private.add_job(text, jsonb, text, timestamptz) owner to svc_owner;
comment on function app_private.add_job(text, jsonb, text, timestamptz) is
  'graphile_worker.add_job for our own security-definer functions; owned by svc_owner, never granted to request roles.';

grant usage on schema graphile_worker to svc_owner;
grant execute on function
  graphile_worker.add_job(text, json, text, timestamptz, int, text, int, text[], text),
  graphile_worker.add_jobs(graphile_worker.job_spec[], boolean)
  to svc_owner;
grant select, insert on graphile_worker._private_tasks, graphile_worker._private_job_queues to svc_owner;
grant select, insert, update on graphile_worker._private_jobs to svc_owner;

drop policy if exists svc_owner_adds_jobs on graphile_worker._private_tasks;
create policy svc_owner_adds_jobs on graphile_worker._private_tasks to svc_owner using (true) with check (true);
drop policy if exists svc_owner_adds_jobs on graphile_worker._private_job_queues;
create policy svc_owner_adds_jobs on graphile_worker._private_job_queues to svc_owner using (true) with check (true);
drop policy if exists svc_owner_adds_jobs on graphile_worker._private_jobs;
create policy svc_owner_adds_jobs on graphile_worker._private_jobs to svc_owner using (true) with check (true);
