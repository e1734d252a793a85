--! Previous: sha1:32583c0c6a0c5408758fbdcfc6f0e1d10a1cce3d
--! Hash: sha1:3c2adeaf9c251c01d1f82653c17e609a40998cc4
--! Message: A q search in an organization with fewer contacts than the trigram index would hand over reads the organization's own rows (150 ms to 10 for 'Mar' in an organization of 10,000 beside one of a million)

--! split: 010-small-organizations-search-their-own-rows.sql
-- A q search in an organization smaller than what the trigram index would hand over reads the
-- organization's own rows instead (README, "Contacts", "Search"). The trigram index covers every
-- organization's contacts: a piece as common as "mar" (5% of contacts) is 75,000 candidates
-- among 1,500,000, each fetched and rechecked, whatever the size of the organization asking.
-- An organization of 10,000 searching "Mar" took 150 ms that way, and reading its 10,000 rows
-- by its key and testing each against q takes 10. Both paths test every row they return
-- against the whole q, so they answer the same contacts; the choice only decides how fast.
set local role svc_owner;

-- The share of contacts (every organization's, from the hourly sample in
-- app_private.search_trigrams) that carry the rarest three-character piece of a q: what the
-- trigram index would hand over, as a share of the table. 1 when q has no piece of three letters
-- or digits (the index cannot narrow it at all); a piece the sample never saw counts as rare.
create or replace function app_hidden.search_rarest_share(pattern text) returns real
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select coalesce(min(coalesce(t.share, 0.00001)), 1)
    from regexp_matches(lower(pattern), '[a-z0-9]+', 'g') w(run)
    cross join lateral generate_series(1, length(w.run[1]) - 2) i
    left join app_private.search_trigrams t on t.trigram = substr(w.run[1], i, 3)
$$;
comment on function app_hidden.search_rarest_share(text) is
  'The share of all contacts carrying the rarest three-character piece of q (app_private.search_trigrams), 1 when q has none: what the trigram index would hand over.';

create or replace function app_hidden.contacts_matching(pattern text, digits text)
returns table(id uuid, name text, last_seen_at timestamptz)
language plpgsql stable security definer rows 100
set search_path to pg_catalog, public, pg_temp
set plan_cache_mode to auto as $$
declare
  p text[];
  org uuid := app_hidden.current_org_id();
  everyone real;
  own bigint;
begin
  if digits is null then
    -- the organization's own rows, when there are fewer of them than the index's candidates
    -- (the statistics' row count of the table; unknown before its first ANALYZE: the index)
    select c.reltuples into everyone from pg_class c where c.oid = 'app_public.contacts'::regclass;
    if everyone > 0 then
      select coalesce(sum(x.n), 0) into own from app_private.contact_counts x where x.organization_id = org;
      if own < everyone * app_hidden.search_rarest_share(pattern) then
        return query
          select c.id, c.name, c.last_seen_at from app_public.contacts c
           where c.organization_id = org
             and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern);
        return;
      end if;
    end if;
    p := app_hidden.search_pieces(pattern);
    return query
      select c.id, c.name, c.last_seen_at from app_public.contacts c
       where app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[1]
         and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[2]
         and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[3]
         and c.organization_id = app_hidden.current_org_id()
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern);
  else
    -- A phone-like q ("555-123"): its digits are looked up by their pieces; its text, whose
    -- pieces are short runs of digits common in every phone number, whole (its trigrams
    -- include where each run starts and ends, which are rare in names and emails).
    p := app_hidden.search_pieces(digits);
    return query
      select c.id, c.name, c.last_seen_at from app_public.contacts c
       where (app_hidden.contact_search_text(c.name, c.email, c.phone) ilike pattern
              or (app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[1]
                  and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[2]
                  and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike p[3]))
         and c.organization_id = app_hidden.current_org_id()
         and (c.name ilike pattern or c.email::text ilike pattern or c.phone ilike pattern or c.phone like digits);
  end if;
end $$;

reset role;
