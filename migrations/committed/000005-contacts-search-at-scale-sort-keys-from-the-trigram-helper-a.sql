--! Previous: sha1:4bc8f566e7e35766400585493d5cdcd35915a84c
--! Hash: sha1:daa001a4c2637b5a02935b092fb0b7148d490d7c
--! Message: contacts search at scale: sort keys from the trigram helper, a policy probe per match

-- Contacts search at a million contacts: the trigram helper answers the sort keys with the ids,
-- so contacts_search checks each match against the caller's policies with an index-only
-- probe instead of reading every matching row twice; a q written as a phone number (with
-- spaces, dashes or brackets) also searches its digits, and only then.
set local role svc_owner;

drop function app_hidden.contact_ids_matching(text, text);

-- The current organization's contacts whose name, email or phone contains a pattern (and, for
-- a phone-like query, whose phone contains its digits), found through the contacts_org_search
-- trigram index. It runs as the owner because ILIKE may not use an index under row security;
-- it reads only the caller's own organization and answers only what contacts_search sorts by.
-- contacts_search keeps the rows the caller's own policies let it read (location, own records)
-- and reads those under them. The row estimate keeps that check a probe per match rather than
-- a hash of every contact the caller may read.
create function app_hidden.contacts_matching(pattern text, digits text)
returns table (id uuid, name text, last_seen_at timestamptz)
language plpgsql stable security definer rows 100
set search_path to pg_catalog, public, pg_temp as $$
begin
  if digits is null then
    return query
      select c.id, c.name, c.last_seen_at from app_public.contacts c
       where c.organization_id = app_hidden.current_org_id()
         and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike pattern
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern);
  else
    return query
      select c.id, c.name, c.last_seen_at from app_public.contacts c
       where c.organization_id = app_hidden.current_org_id()
         and (app_hidden.contact_search_text(c.name, c.email, c.phone) ilike pattern
              or app_hidden.contact_search_text(c.name, c.email, c.phone) like digits)
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern or c.phone like digits);
  end if;
end $$;
comment on function app_hidden.contacts_matching(text, text) is
  'Trigram matches of contacts_search q in the current organization (id and sort keys only; contacts_search filters them by the caller''s policies).';
grant execute on function app_hidden.contacts_matching(text, text) to svc_request;

create or replace function app_public.contacts_search(q text, email citext, phone text, page int, page_size int)
returns jsonb
language plpgsql stable as $$
declare
  org uuid := app_hidden.current_org_id();
  details boolean := app_hidden.current_sees_contact_details();
  skip int := (page - 1) * page_size;
  total bigint;
  items jsonb;
  pattern text;
  digits text;
begin
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
    -- those it may read (an index-only probe each), and the page is read under them too.
    if details then
      with matches as materialized (
        select m.id, m.last_seen_at from app_hidden.contacts_matching(pattern, digits) m
         where exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = m.id))
      select (select count(*) from matches),
             (select coalesce(jsonb_agg(app_hidden.contact_json(c) order by p.last_seen_at desc, p.id), '[]')
                from (select * from matches order by last_seen_at desc, id limit page_size offset skip) p
                join app_public.contacts c on c.organization_id = org and c.id = p.id)
        into total, items;
    else
      with matches as materialized (
        select m.id, m.name from app_hidden.contacts_matching(pattern, digits) m
         where exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = m.id))
      select (select count(*) from matches),
             (select coalesce(jsonb_agg(app_hidden.contact_card(c) order by p.name, p.id), '[]')
                from (select * from matches order by name, id limit page_size offset skip) p
                join app_public.contacts c on c.organization_id = org and c.id = p.id)
        into total, items;
    end if;
  elsif details then
    select count(*) into total from app_public.contacts c where c.organization_id = org;
    select coalesce(jsonb_agg(app_hidden.contact_json(p) order by p.last_seen_at desc, p.id), '[]') into items
      from (select * from app_public.contacts c where c.organization_id = org
             order by c.last_seen_at desc, c.id limit page_size offset skip) p;
  else
    select count(*) into total from app_public.contacts c where c.organization_id = org;
    select coalesce(jsonb_agg(app_hidden.contact_card(p) order by p.name, p.id), '[]') into items
      from (select * from app_public.contacts c where c.organization_id = org
             order by c.name, c.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $$;

reset role;
