--! Previous: sha1:4141eb43c25cf6e08271e132bee4f4df05afa0a0
--! Hash: sha1:317ed0f7ecd99efd01543821dd130df4d96b86fd
--! Message: A booking's triggers run their queries instead of nested calls that decide nothing: the availability note inline, exits checked only for a contact with a live enrollment, webhook_wanted without a SET clause

--! split: 010-booking-triggers-without-nested-calls.sql
-- A booking's triggers without nested function calls where a query does (docs/appointments-booking.md,
-- "Performance"). Each call of a function with a SET clause (security definer or not) saves and
-- restores settings and recomputes the search path: in a booking's statement timings the calls
-- that decide nothing cost more than the queries inside them (check_contact_exits for a contact
-- with no live enrollment: 53 µs around a 1 µs query; the availability note: 90 µs around a
-- 39 µs insert). The triggers are security definers with the search path already set, so the
-- queries run in them directly.
set local role svc_owner;

-- the availability note, inline: a booking notes its time once (its old time too when it moved)
create or replace function app_private.tg_appointments__availability() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  -- a repeating series (rrule) holds time up to its end or forever: all of it
  if tg_op in ('INSERT', 'UPDATE') then
    insert into app_private.availability_changes (organization_id, during)
    values (new.organization_id, case when new.rrule is null then new.during else '(,)' end);
  end if;
  if tg_op = 'DELETE' then
    insert into app_private.availability_changes (organization_id, during)
    values (old.organization_id, case when old.rrule is null then old.during else '(,)' end);
  elsif tg_op = 'UPDATE' then
    if old.during is distinct from new.during or old.rrule is distinct from new.rrule
       or old.organization_id is distinct from new.organization_id then
      insert into app_private.availability_changes (organization_id, during)
      values (old.organization_id, case when old.rrule is null then old.during else '(,)' end);
    end if;
  end if;
  return null;
end $$;

-- exits are checked only for a contact with a live enrollment (most bookings have none)
create or replace function app_private.tg_appointments__sequences() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s record;
begin
  if exists (select 1 from app_public.enrollments e
              where e.organization_id = new.organization_id and e.contact_id = new.contact_id and e.status in ('active', 'paused')) then
    perform app_private.check_contact_exits(new.organization_id, new.contact_id);
  end if;
  for s in
    select x.id from app_public.sequences x
     where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
       and x.trigger->>'type' = 'appointment_booked'
       and (x.trigger->>'location_id' is null or x.trigger->>'location_id' = new.location_id::text)
     order by x.id
  loop
    perform app_private.enroll_by_trigger(new.organization_id, s.id, new.contact_id, 'appointment_booked', null);
  end loop;
  return null;
end $$;

-- Called only from security-definer triggers, whose search path is set already: its own SET
-- clause cost every write with a webhook trigger a settings save and restore.
create or replace function app_private.webhook_wanted(organization_id uuid, event text) returns boolean
language plpgsql stable as $$
begin
  return exists (select 1 from app_public.webhook_subscriptions s
                  where s.organization_id = webhook_wanted.organization_id and s.status = 'active'
                    and webhook_wanted.event = any(s.events));
end $$;

reset role;
