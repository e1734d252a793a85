--! Previous: sha1:7152d7a262e91554723578285b34209dc3d54560
--! Hash: sha1:5ec1e10daf43315abd2607121ce01e23802f0864
--! Message: One payload for the appointment webhooks: app_private.webhook_appointment_data, used by the insert trigger (appointment.booked) and the update trigger, which sends appointment.cancelled alone

--! split: 010-appointment-webhook-data.sql
set local role svc_owner;

-- One payload for the appointment webhooks (docs/webhooks.md): appointment.booked, sent by the
-- insert trigger (migration 000038), and appointment.cancelled, sent by the update trigger, wrote
-- the same object each. Like app_private.webhook_contact_data for the contact events, it is one
-- function now; a plain SQL function with no SET clause, so PostgreSQL inlines it into the
-- triggers' calls.
create or replace function app_private.webhook_appointment_data(a app_public.appointments) returns jsonb
language sql stable as $$
  select jsonb_build_object('id', a.id, 'location_id', a.location_id, 'calendar_id', a.calendar_id,
    'team_member_id', a.staff_profile_id, 'offering_id', a.offering_id, 'contact_id', a.contact_id,
    'title', a.title, 'start_time', a.starts_at, 'end_time', a.ends_at, 'recurring', a.rrule is not null,
    'status', a.status, 'cancelled_at', a.cancelled_at,
    'attendee_name', a.attendee_name, 'attendee_phone', a.attendee_phone, 'attendee_email', a.attendee_email)
$$;
comment on function app_private.webhook_appointment_data(app_public.appointments) is
  'The data of the appointment.booked and appointment.cancelled webhook events.';
revoke all on function app_private.webhook_appointment_data(app_public.appointments) from public;

create or replace function app_private.tg_appointments__inserted() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  booked boolean := new.kind = 'appointment' and new.status = 'booked';
  asked record;
  automation uuid;
begin
  -- own clients: the new row is a live booking joining them, nothing to ask; otherwise asked
  if booked then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'appointments'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id and new.contact_id is not null
    on conflict do nothing;

    -- who listens, in one read: the contact's live enrollments (their exits), the automations
    -- appointment_booked starts (a booking made through the API only), the booked webhook
    select exists (select 1 from app_public.enrollments e
                    where e.organization_id = new.organization_id and e.contact_id = new.contact_id
                      and e.status in ('active', 'paused')) as enrolled,
           array(select x.id from app_public.sequences x
                  where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
                    and x.trigger->>'type' = 'appointment_booked'
                    and (x.trigger->>'location_id' is null or x.trigger->>'location_id' = new.location_id::text)
                  order by x.id) as automations,
           exists (select 1 from app_public.webhook_subscriptions ws
                    where ws.organization_id = new.organization_id and ws.status = 'active'
                      and 'appointment.booked' = any(ws.events)) as hooked
      into asked;
  else
    perform app_private.refresh_appointment_own_client(new.organization_id, new.staff_profile_id, new.contact_id);
  end if;

  -- sequences: exits of the contact's enrollments, then the automations it starts
  if booked and new.source = 'api' then
    if asked.enrolled then
      perform app_private.check_contact_exits(new.organization_id, new.contact_id);
    end if;
    foreach automation in array asked.automations loop
      perform app_private.enroll_by_trigger(new.organization_id, automation, new.contact_id, 'appointment_booked', null);
    end loop;
  end if;

  -- the availability note (a repeating series holds time up to its end or forever: all of it)
  insert into app_private.availability_changes (organization_id, during)
  values (new.organization_id, case when new.rrule is null then new.during else '(,)' end);

  -- the booked webhook
  if booked and asked.hooked then
    perform app_private.webhook_emit(new.organization_id, 'appointment.booked', new.created_at,
      app_private.webhook_appointment_data(new));
  end if;
  return null;
end $$;


-- The update trigger fires only for a cancellation since migration 000038 (a booking's webhook
-- is the insert trigger's), so it sends appointment.cancelled alone.
create or replace function app_private.tg_appointments__webhooks() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if app_private.webhook_wanted(new.organization_id, 'appointment.cancelled') then
    perform app_private.webhook_emit(new.organization_id, 'appointment.cancelled', new.cancelled_at,
      app_private.webhook_appointment_data(new));
  end if;
  return null;
end $$;
comment on function app_private.tg_appointments__webhooks() is
  'appointment.cancelled when an appointment is cancelled (blocks of time off are not); appointment.booked is the insert trigger''s.';

reset role;
