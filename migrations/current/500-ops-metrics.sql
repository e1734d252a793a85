-- What /metrics reads at scrape time (src/ops/metrics.ts), through two definer functions that
-- svc_worker may call (the request pool takes that role for them, as for the rate-limit store).
-- Both answer counts only: no tenant's data leaves them.

-- Outgoing emails and SMS by channel and status, over every organization.
set local role svc_owner;

create or replace function app_hidden.ops_message_counts()
returns table (channel text, status text, n bigint)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select m.channel, m.status, count(*) from app_private.outgoing_messages m group by 1, 2
$$;
comment on function app_hidden.ops_message_counts() is
  'Outgoing messages by channel and status, every organization (for /metrics).';
revoke execute on function app_hidden.ops_message_counts() from public;
grant execute on function app_hidden.ops_message_counts() to svc_worker;

-- Background jobs by task and state (svc_owner reads graphile-worker's tables through the
-- policies of 000012). A job is running while locked, failed once out of attempts, and queued
-- otherwise (due now, later, or waiting for a retry).
create or replace function app_hidden.ops_job_counts()
returns table (task text, state text, n bigint)
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return query
  select t.identifier,
         case when j.locked_at is not null then 'running'
              when j.attempts >= j.max_attempts then 'failed'
              else 'queued' end,
         count(*)
    from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
   group by 1, 2;
end $$;
comment on function app_hidden.ops_job_counts() is
  'Background jobs by task and state (queued, running, failed), for /metrics.';
revoke execute on function app_hidden.ops_job_counts() from public;
grant execute on function app_hidden.ops_job_counts() to svc_worker;

reset role;
