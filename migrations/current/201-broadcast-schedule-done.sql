-- A schedule with no occurrence left reads `draft` once its last run has ended.
--
-- The spec's schedule states are `draft` (sends nothing) and `scheduled` (`next_fire_at` holds
-- the next send). A `once` schedule whose run completed, failed or was cancelled (or a recurring
-- one past its ends_on) has nothing left to send, yet it read `scheduled` with next_fire_at null.
-- While its run is sending it still reads `scheduled` (a send is under way); when the last run
-- of the broadcast ends it becomes `draft`, as after sequences_set_schedule: a start then finds
-- no occurrence left (a once schedule fires once), and a new sequences_set_schedule sends again.

set local role svc_owner;

create or replace function app_private.tg_broadcast_runs__schedule_done() returns trigger
  language plpgsql security definer
  set search_path to 'pg_catalog', 'public', 'pg_temp'
  as $$
begin
  update app_public.broadcast_schedules b set status = 'draft', updated_at = now()
   where b.organization_id = new.organization_id and b.sequence_id = new.sequence_id
     and b.status = 'scheduled' and b.next_fire_at is null
     and not exists (select 1 from app_public.broadcast_runs r
                      where r.organization_id = new.organization_id and r.sequence_id = new.sequence_id and r.status = 'sending');
  return null;
end $$;

comment on function app_private.tg_broadcast_runs__schedule_done() is
  'When a broadcast''s last sending run ends and its schedule has no occurrence left (next_fire_at null), the schedule reads draft.';

drop trigger if exists _500_schedule_done on app_public.broadcast_runs;
create trigger _500_schedule_done
  after insert or update of status on app_public.broadcast_runs
  for each row when (new.status <> 'sending')
  execute function app_private.tg_broadcast_runs__schedule_done();

reset role;
