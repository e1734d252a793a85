-- Sequences: a step's `failed` count in sequences_analytics also counts the messages handed to
-- the provider and then reported failed (Twilio's `failed`/`undelivered`, `svc admin delivery
-- --event failed`): such a message is both sent (it left) and failed (it never arrived).
-- Everything else is the function as it was.

set local role svc_owner;

create or replace function app_public.sequences_analytics(sequence_id uuid) returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  s app_public.sequences := app_hidden.sequence_for_read(sequence_id);
  steps jsonb;
  statuses jsonb;
  replied bigint;
begin
  with runs as (
    select r.step_key, r.status, count(*) as n,
           -- handed over, then reported failed by the provider: sent, and failed too
           count(*) filter (where r.status <> 'failed' and r.message_id is not null and exists (
             select 1 from app_public.enrollment_events v
              where v.organization_id = org and v.message_id = r.message_id and v.type = 'failed')) as reported_failed
      from app_public.step_runs r
      join app_public.enrollments e on e.organization_id = r.organization_id and e.id = r.enrollment_id
     where r.organization_id = org and e.organization_id = org and e.sequence_id = s.id
     group by 1, 2
  ), events as (
    select v.step_key, v.type, count(distinct v.enrollment_id) as n
      from app_public.enrollment_events v
      join app_public.enrollments e on e.organization_id = v.organization_id and e.id = v.enrollment_id
     where v.organization_id = org and e.organization_id = org and e.sequence_id = s.id
       and v.type in ('delivered', 'bounced', 'opened', 'clicked', 'replied') and v.step_key is not null
     group by 1, 2
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'step_key', st.step ->> 'step_key', 'type', st.step ->> 'type',
           'sent', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'sent'), 0),
           'delivered', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'delivered'), 0),
           'bounced', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'bounced'), 0),
           'opened', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'opened'), 0),
           'clicked', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'clicked'), 0),
           'replied', coalesce((select n from events v where v.step_key = st.step ->> 'step_key' and v.type = 'replied'), 0),
           'skipped', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'skipped'), 0),
           'failed', coalesce((select sum(case when runs.status = 'failed' then n else reported_failed end) from runs
                                where runs.step_key = st.step ->> 'step_key'), 0),
           'unknown', coalesce((select sum(n) from runs where runs.step_key = st.step ->> 'step_key' and runs.status = 'unknown'), 0))
         order by st.i), '[]')
    into steps
    from jsonb_array_elements(s.steps) with ordinality as st(step, i);

  -- enrollments by status: from the counts for a caller that reaches every contact, else
  -- counted once, grouped, under the caller's policies
  if app_hidden.sequence_enrollment_total(s.id, null) is not null then
    select jsonb_object_agg(x.status, app_hidden.sequence_enrollment_total(s.id, x.status)) into statuses
      from unnest(array['active', 'paused', 'completed', 'cancelled', 'failed']) as x(status);
  else
    select jsonb_object_agg(x.status, coalesce(g.n, 0)) into statuses
      from unnest(array['active', 'paused', 'completed', 'cancelled', 'failed']) as x(status)
      left join (select e.status, count(*) as n from app_public.enrollments e
                  where e.organization_id = org and e.sequence_id = s.id group by 1) g on g.status = x.status;
  end if;
  select count(distinct v.enrollment_id) into replied
    from app_public.enrollment_events v
    join app_public.enrollments e on e.organization_id = v.organization_id and e.id = v.enrollment_id
   where v.organization_id = org and e.organization_id = org and e.sequence_id = s.id and v.type = 'replied';

  return jsonb_build_object(
    'steps', steps,
    'rollup', jsonb_build_object(
      'enrolled', (select sum(v::bigint) from jsonb_each_text(statuses) as t(k, v)),
      'active', statuses -> 'active', 'paused', statuses -> 'paused', 'completed', statuses -> 'completed',
      'cancelled', statuses -> 'cancelled', 'failed', statuses -> 'failed',
      'sent', (select coalesce(sum((x ->> 'sent')::bigint), 0) from jsonb_array_elements(steps) x),
      'delivered', (select coalesce(sum((x ->> 'delivered')::bigint), 0) from jsonb_array_elements(steps) x),
      'bounced', (select coalesce(sum((x ->> 'bounced')::bigint), 0) from jsonb_array_elements(steps) x),
      'replied', replied),
    'email_delivery_reporting',
      case when exists (select 1 from jsonb_array_elements(s.steps) x where x ->> 'type' = 'email') then null
           else 'not_applicable' end);
end $$;


comment on function app_public.sequences_analytics(uuid) is
  'sequences_analytics: per-step counts in step order (sent, delivered, bounced, opened, clicked, replied, skipped, failed: refused or reported failed, unknown), the rollup (enrollments by status; messages sent, delivered, bounced; enrollments that replied) over the enrollments the credential sees, and email_delivery_reporting (not_applicable without an email step; NULL: the transport decides).';

reset role;
