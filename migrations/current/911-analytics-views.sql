-- Views for analysts (schema app_analytics), where the raw tables are awkward to join. Each is
-- security_invoker: it reads the tables with the rights and under the row-level policies of the
-- analyst who queries it, so a view shows exactly the rows its tables would (one organization,
-- the analyst's locations). Only svc_analyst may use the schema; the API does not read it.
-- db/README.md (Analysts) has example queries.
set local role svc_owner;

create schema if not exists app_analytics;
comment on schema app_analytics is 'Read-only views for analysts on replicas, under the tables'' row-level policies.';
revoke all on schema app_analytics from public;
grant usage on schema app_analytics to svc_analyst;

-- Contacts with their pipeline stage's name and their tags' names.
create or replace view app_analytics.contacts with (security_invoker = true) as
select c.organization_id, c.id, c.name, c.email::text as email, c.phone,
       c.stage_id, s.name as stage, s.position as stage_position,
       coalesce((select array_agg(t.name::text order by t.name)
                   from app_public.contact_tags ct
                   join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                  where ct.organization_id = c.organization_id and ct.contact_id = c.id), '{}') as tags,
       c.field_values, c.sms_consent, c.total_calls, c.notes_count,
       c.first_seen_at, c.last_seen_at, c.created_at, c.updated_at
  from app_public.contacts c
  left join app_public.pipeline_stages s on s.organization_id = c.organization_id and s.id = c.stage_id;
comment on view app_analytics.contacts is 'Contacts with stage (name) and tags (names, sorted); the contacts an analyst reaches.';

-- Enrollments with their sequence's name, kind and status.
create or replace view app_analytics.enrollments with (security_invoker = true) as
select e.organization_id, e.id, e.sequence_id, q.name as sequence, q.kind as sequence_kind,
       q.status as sequence_status, q.location_id, e.contact_id, e.status, e.current_step_key,
       e.next_step_due_at, e.end_reason, e.source, e.created_at, e.updated_at
  from app_public.enrollments e
  join app_public.sequences q on q.organization_id = e.organization_id and q.id = e.sequence_id;
comment on view app_analytics.enrollments is 'Enrollments with their sequence (name, kind, status, location).';

-- Appointments per location and local day (the location's time zone): a repeating series counts
-- once per occurrence. Blocks (time off) are not appointments and are left out.
create or replace view app_analytics.appointments_per_day with (security_invoker = true) as
with booked as (
  select a.organization_id, a.location_id, a.starts_at, a.status
    from app_public.appointments a
   where a.kind = 'appointment' and a.rrule is null
  union all
  select a.organization_id, a.location_id, o.occurrence_start, a.status
    from app_public.appointments a
    join app_public.appointment_occurrences o on o.organization_id = a.organization_id and o.appointment_id = a.id
   where a.kind = 'appointment' and a.rrule is not null
)
select b.organization_id, b.location_id, l.name as location,
       (b.starts_at at time zone l.timezone)::date as day,
       count(*) filter (where b.status = 'booked') as booked,
       count(*) filter (where b.status = 'cancelled') as cancelled
  from booked b
  join app_public.locations l on l.organization_id = b.organization_id and l.id = b.location_id
 group by b.organization_id, b.location_id, l.name, (b.starts_at at time zone l.timezone)::date;
comment on view app_analytics.appointments_per_day is
  'Booked and cancelled appointments per location and local day (occurrences of a series each count).';

revoke all on all tables in schema app_analytics from public;
grant select on all tables in schema app_analytics to svc_analyst;

reset role;
