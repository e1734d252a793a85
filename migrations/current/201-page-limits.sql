-- Paging: every function that answers a page checks its page and page size itself, so a
-- caller that skips the REST layer (the internal GraphQL view, any SQL caller) cannot ask for
-- every row at once: before this, a NULL page size meant `limit null`, all of them. NULL means
-- the spec's default (page 1, 25 a page), as an omitted query parameter does over REST; out of
-- range is 400 with the message REST's schema gives, naming the query parameter.
set local role svc_owner;

create or replace function app_hidden.page_error(param text, message text) returns void
language plpgsql as $$
begin
  perform app_hidden.raise_error(400, 'bad_request', format('query.%s: %s', param, message),
    jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', 'query.' || param, 'message', message))));
end $$;
comment on function app_hidden.page_error(text, text) is
  'Raises 400 bad_request naming query.<param>, with the issues list a validation error carries.';

create or replace function app_hidden.page_number(page int) returns int
language plpgsql immutable as $$
begin
  if page < 1 then
    perform app_hidden.page_error('page', 'Too small: expected number to be >=1');
  end if;
  return coalesce(page, 1);
end $$;
comment on function app_hidden.page_number(int) is 'The page to answer: 1 when NULL; 400 naming query.page below 1 (spec: Limits).';

create or replace function app_hidden.page_limit(page_size int) returns int
language plpgsql immutable as $$
begin
  if page_size < 1 then
    perform app_hidden.page_error('limit', 'Too small: expected number to be >=1');
  elsif page_size > 100 then
    perform app_hidden.page_error('limit', 'Too big: expected number to be <=100');
  end if;
  return coalesce(page_size, 25);
end $$;
comment on function app_hidden.page_limit(int) is
  'The page size to answer: 25 when NULL; 400 naming query.limit outside 1 to 100 (spec: Limits).';

grant execute on function app_hidden.page_error(text, text), app_hidden.page_number(int), app_hidden.page_limit(int)
  to svc_request, svc_worker, svc_analyst;

--------------------------------------------------------------------------------
-- The paged operations, restated (contacts_search from 000008, the lists from 000004) with the
-- page checked first, before anything is read (a bad page of an unknown contact is 400, as
-- over REST)
--------------------------------------------------------------------------------
create or replace function app_public.contacts_search(q text, email citext, phone text, page int, page_size int)
returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  details boolean := app_hidden.current_sees_contact_details();
  -- a caller who reaches every contact of the organization: its policy is the organization
  -- test contacts_matching applies, so matches need no probe
  whole boolean := app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all';
  skip bigint;
  total bigint;
  items jsonb;
  pattern text;
  digits text;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  skip := (page - 1)::bigint * page_size;
  if num_nonnulls(q, email, phone) > 1 then
    perform app_hidden.raise_error(400, 'bad_request', 'Send at most one of q, email and phone');
  end if;
  -- at most one contact carries an email address or a phone number
  if email is not null then
    select count(*), coalesce(jsonb_agg(app_hidden.contact_for_caller(c)) filter (where page = 1), '[]')
      into total, items
      from app_public.contacts c
     where c.organization_id = org and c.email_key = lower(contacts_search.email::text);
  elsif phone is not null then
    select count(*), coalesce(jsonb_agg(app_hidden.contact_for_caller(c)) filter (where page = 1), '[]')
      into total, items
      from app_public.contacts c
     where c.organization_id = org and c.phone = contacts_search.phone;
  elsif q is not null then
    pattern := app_hidden.like_anywhere(q);
    -- A phone-like q written with spaces, dashes or brackets ("555-123", "(555) 123") also
    -- matches the digits of the stored E.164 phone.
    if q ~ '^\+?[0-9 ()\[\]-]+$' and q ~ '[ ()\[\]-]' and length(regexp_replace(q, '[^0-9]', '', 'g')) >= 3 then
      digits := app_hidden.like_anywhere(regexp_replace(q, '[^0-9+]', '', 'g'));
    end if;
    -- Matches come from the trigram index; the exists, under this caller's policies, keeps
    -- those it may read (an index-only probe each, skipped when the caller reaches them all),
    -- and the page is read under them too.
    if details then
      with matches as materialized (
        select m.id, m.last_seen_at from app_hidden.contacts_matching(pattern, digits) m
         where whole or exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = m.id))
      select (select count(*) from matches),
             app_hidden.contacts_json(array(
               select c from (select * from matches order by last_seen_at desc, id limit page_size offset skip) p
                 join app_public.contacts c on c.organization_id = org and c.id = p.id
                order by p.last_seen_at desc, p.id))
        into total, items;
    else
      with matches as materialized (
        select m.id, m.name from app_hidden.contacts_matching(pattern, digits) m
         where whole or exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = m.id))
      select (select count(*) from matches),
             (select coalesce(jsonb_agg(app_hidden.contact_card(c) order by p.name, p.id), '[]')
                from (select * from matches order by name, id limit page_size offset skip) p
                join app_public.contacts c on c.organization_id = org and c.id = p.id)
        into total, items;
    end if;
  elsif details then
    select count(*) into total from app_public.contacts c where c.organization_id = org;
    items := app_hidden.contacts_json(array(
      select c from app_public.contacts c where c.organization_id = org
       order by c.last_seen_at desc, c.id limit page_size offset skip));
  else
    select count(*) into total from app_public.contacts c where c.organization_id = org;
    select coalesce(jsonb_agg(app_hidden.contact_card(p) order by p.name, p.id), '[]') into items
      from (select * from app_public.contacts c where c.organization_id = org
             order by c.name, c.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;

create or replace function app_public.contacts_list_notes(contact_id uuid, page int, page_size int) returns jsonb
language plpgsql stable as $$
declare
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.contact_notes n
   where n.organization_id = app_hidden.current_org_id() and n.contact_id = contacts_list_notes.contact_id;
  if page > 1 and (page - 1)::bigint * page_size >= total then
    perform app_hidden.raise_error(400, 'bad_request',
      format('page %s is past the last note (%s notes, %s per page)', page, total, page_size));
  end if;
  select coalesce(jsonb_agg(app_hidden.note_json(p) order by p.created_at desc, p.id desc), '[]') into items
    from (select * from app_public.contact_notes n
           where n.organization_id = app_hidden.current_org_id() and n.contact_id = contacts_list_notes.contact_id
           order by n.created_at desc, n.id desc limit page_size offset (page - 1) * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;

create or replace function app_public.contacts_list_interactions(contact_id uuid, channel text, status text, page int, page_size int)
returns jsonb
language plpgsql stable as $$
declare
  details boolean := app_hidden.current_sees_contact_details();
  total bigint;
  items jsonb;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_contact(contact_id);
  select count(*) into total from app_public.interactions i
   where i.organization_id = app_hidden.current_org_id() and i.contact_id = contacts_list_interactions.contact_id
     and (contacts_list_interactions.channel is null or i.channel = contacts_list_interactions.channel)
     and (contacts_list_interactions.status is null or i.status = contacts_list_interactions.status);
  if page > 1 and (page - 1)::bigint * page_size >= total then
    perform app_hidden.raise_error(400, 'bad_request',
      format('page %s is past the last interaction (%s interactions, %s per page)', page, total, page_size));
  end if;
  select coalesce(jsonb_agg(
           jsonb_build_object('id', p.id, 'contact_id', p.contact_id, 'channel', p.channel, 'status', p.status,
                              'location_id', p.location_id, 'appointment_id', p.appointment_id, 'summary', p.summary,
                              'started_at', p.started_at, 'ended_at', p.ended_at)
           || case when details then jsonb_build_object('captured_fields', p.captured_fields) else '{}' end
           order by p.started_at desc, p.id desc), '[]')
    into items
    from (select * from app_public.interactions i
           where i.organization_id = app_hidden.current_org_id() and i.contact_id = contacts_list_interactions.contact_id
             and (contacts_list_interactions.channel is null or i.channel = contacts_list_interactions.channel)
             and (contacts_list_interactions.status is null or i.status = contacts_list_interactions.status)
           order by i.started_at desc, i.id desc limit page_size offset (page - 1) * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;

-- Members: a keyset page, so only the page size (query.limit) is checked.
create or replace function app_public.audiences_list_members(audience_id uuid, after uuid, page_size int) returns jsonb
language plpgsql stable as $$
declare
  a app_public.audiences;
  items jsonb;
  ids uuid[];
begin
  page_size := app_hidden.page_limit(page_size);
  a := app_hidden.audience_for(audience_id, false);
  -- one row more than the page tells whether another page follows
  if a.kind = 'dynamic' then
    select jsonb_agg(app_hidden.contact_card(c) order by c.id), array_agg(c.id order by c.id) into items, ids
      from app_hidden.audience_contacts(a.definition, 'definition.rules', after, page_size + 1) c;
  else
    select jsonb_agg(app_hidden.contact_card(c) order by c.id), array_agg(c.id order by c.id) into items, ids
      from (select c.* from app_public.audience_members m
              join app_public.contacts c on c.organization_id = m.organization_id and c.id = m.contact_id
             where m.organization_id = a.organization_id and m.audience_id = a.id
               -- one plan for every page (plpgsql caches it): no id is below the nil uuid
               and m.contact_id > coalesce(after, '00000000-0000-0000-0000-000000000000')
             order by m.contact_id
             limit page_size + 1) c;
  end if;
  if cardinality(ids) > page_size then
    return jsonb_build_object('items', items - page_size, 'next_after', ids[page_size]);
  end if;
  return jsonb_build_object('items', coalesce(items, '[]'), 'next_after', null);
end $$;

reset role;
