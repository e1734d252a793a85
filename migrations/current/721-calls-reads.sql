-- calls_list and calls_get: read as the caller, so the policies of 720-calls.sql decide which
-- calls a credential sees (a call out of reach is absent: 404 on get, missing from lists).
set local role svc_owner;

-- The call as the API shows it (the transcript only on calls_get).
create or replace function app_hidden.call_json(c app_public.calls) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object(
    'id', c.id,
    'contact_id', c.contact_id,
    'location_id', c.location_id,
    'team_member_id', c.staff_profile_id,
    'direction', c.direction,
    'status', c.status,
    'from', c.from_number,
    'to', c.to_number,
    'started_at', c.started_at,
    'duration_seconds', c.duration_seconds,
    'summary', c.summary,
    'created_at', c.created_at)
$$;
comment on function app_hidden.call_json(app_public.calls) is 'A call as calls_list and calls_get answer it (without its transcript).';
grant execute on function app_hidden.call_json(app_public.calls) to svc_request, svc_worker;

-- A page of calls, newest first, after the keyset position (after_at, after_id) of the previous
-- page's last call: complete and without duplicates while calls arrive (keyset, not offset).
-- next_after is the last call's position, or null on the last page. A contact_id out of reach
-- answers 404 (a contact in reach with no call readable: an empty page).
create or replace function app_public.calls_list(contact_id uuid, after_at timestamptz, after_id uuid, lim int) returns jsonb
language plpgsql stable as $$
declare
  page app_public.calls[];
  last app_public.calls;
begin
  -- the page size first, before anything is read (NULL: 25; outside 1 to 100: 400, as over REST)
  lim := app_hidden.page_limit(lim);
  if (after_at is null) <> (after_id is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'query.cursor: not a cursor from this list: pass next_cursor back unchanged');
  end if;
  if calls_list.contact_id is not null and not exists (
      select 1 from app_public.contacts x where x.organization_id = app_hidden.current_org_id() and x.id = calls_list.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  select coalesce(array_agg(x order by x.started_at desc, x.id desc), '{}') into page
    from (select c.* from app_public.calls c
           where c.organization_id = app_hidden.current_org_id()
             and (calls_list.contact_id is null or c.contact_id = calls_list.contact_id)
             and (after_at is null or (c.started_at, c.id) < (after_at, after_id))
           order by c.started_at desc, c.id desc
           limit lim + 1) x;
  if cardinality(page) > lim then
    page := page[1:lim];
    last := page[lim];
  end if;
  return jsonb_build_object(
    'items', (select coalesce(jsonb_agg(app_hidden.call_json(page[i]) order by i), '[]') from generate_subscripts(page, 1) i),
    'next_after', case when last.id is not null then jsonb_build_object(
      'at', to_char(last.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'id', last.id) end);
end $$;
comment on function app_public.calls_list(uuid, timestamptz, uuid, int) is
  'calls_list: a page of the calls the credential reads, newest first, after a keyset position; 404 for a contact out of reach.';

create or replace function app_public.calls_get(call_id uuid) returns jsonb
language plpgsql stable as $$
declare
  c app_public.calls;
begin
  select * into c from app_public.calls x where x.organization_id = app_hidden.current_org_id() and x.id = calls_get.call_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Call not found');
  end if;
  return app_hidden.call_json(c) || jsonb_build_object('transcript', coalesce((
    select jsonb_agg(jsonb_build_object('speaker', l.speaker, 'text', l.text) order by l.position)
      from app_public.call_transcript_lines l
     where l.organization_id = c.organization_id and l.call_id = c.id), '[]'));
end $$;
comment on function app_public.calls_get(uuid) is 'calls_get: one call the credential reads, with its transcript; 404 otherwise.';

grant execute on function app_public.calls_list(uuid, timestamptz, uuid, int), app_public.calls_get(uuid) to svc_request;

reset role;
