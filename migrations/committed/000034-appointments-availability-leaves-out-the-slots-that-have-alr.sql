--! Previous: sha1:53b874c97f98adc5a7268402fe9ac0a9b0309e3c
--! Hash: sha1:a711a4d6bf07f07cd45ab193bbc8872af9334546
--! Message: Appointments: availability leaves out the slots that have already started

--! split: 010-availability-slots-from-now.sql
-- appointments_availability leaves out the slots that have already started.
--
-- The day's answer (app_public.appointments_availability) is the grid of the whole day, and it is
-- kept until a change it read commits (migration 000026): it does not depend on the time of
-- asking, so one kept answer serves the whole day. What a caller is offered does: asked at 15:10
-- for today, the slots from 15:10 on, not the morning's (an assistant would offer times that have
-- gone by). The operation passes the day's answer through this filter; a later day's first slot
-- is after now, and the answer is passed on untouched.
set local role svc_owner;

create or replace function app_hidden.slots_from_now(answer jsonb) returns jsonb
language sql stable
set search_path to pg_catalog, public, pg_temp as $$
  select case
    when coalesce((answer->'slots'->0->>'start')::timestamptz >= now(), true) then answer
    else jsonb_set(answer, '{slots}', coalesce((
      select jsonb_agg(x.slot order by x.n)
        from jsonb_array_elements(answer->'slots') with ordinality x(slot, n)
       where (x.slot->>'start')::timestamptz >= now()), '[]'::jsonb))
  end
$$;
comment on function app_hidden.slots_from_now(jsonb) is
  'An availability answer without the slots that have already started (slots in start order; a later day''s answer as it is).';
grant execute on function app_hidden.slots_from_now(jsonb) to svc_request;

reset role;
