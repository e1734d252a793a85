--! Previous: sha1:04589d97408e710ac1f4f235cf008f31b55f68fb
--! Hash: sha1:48386778818e326ec51cbce5f15dfae43fb8d641
--! Message: contacts reads: renderer without nested policies, q by its rarest trigrams

-- Contacts reads at a million contacts, part two: what a read costs PostgreSQL besides the rows.
--
-- 1. A contact is rendered without nested policies. Its tags, locations, stage and suppression
--    state were read under the caller's policies, and each of those policies carries its own
--    subplans (contact_tags and the suppression tables check the contact, whose policy checks
--    contact_locations): PostgreSQL builds every one of them at the start of every statement
--    even when a one-time filter skips them, which was two thirds of a contacts_get. The
--    renderer now runs as the owner with the same restrictions written out, and renders a
--    page of contacts in one statement.
-- 2. q looks up its rarest trigrams only. The trigram index answers `contains every trigram of
--    q` by walking the posting list of each trigram, and a name's trigrams include very common
--    ones ("ill", "son"); the cost grew with the commonest. A small table of trigram shares,
--    refreshed from a sample, picks the rarest pieces of q for the index; every candidate is
--    still checked against the whole q, so results do not depend on the shares.
-- 3. The trigram index leaves out organization_id: for a large organization its posting list
--    (one entry per contact) was the longest of all and was walked on every search.
-- 4. contacts_search skips the per-match policy probe for a caller who reaches the whole
--    organization at the all-records level, where the policy is the organization test that
--    contacts_matching already applies.
set local role svc_owner;

--------------------------------------------------------------------------------
-- 1. The renderer
--------------------------------------------------------------------------------
-- Contacts in full, as contacts_get answers a caller who sees details, in the order given. It
-- runs as the owner, so it trusts its argument: callers pass contacts they read under the
-- caller's own policies (contacts_get, contacts_search, the writes), never rows built from
-- input, and it leaves out another organization's contact. What the policies of the related
-- tables would restrict is restricted here: location_ids lists only locations in the caller's
-- reach; the stage, tags and suppression rows belong to the contact itself. One statement for
-- a whole page: a statement's plan is set up once however many contacts it renders.
create function app_hidden.contacts_json(contacts app_public.contacts[]) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  reach uuid[] := app_hidden.current_location_ids();
begin
  return (
    select coalesce(jsonb_agg(jsonb_build_object(
      'id', c.id,
      'name', c.name,
      'email', c.email,
      'phone', c.phone,
      'stage_id', c.stage_id,
      'stage', (select jsonb_build_object('id', s.id, 'name', s.name) from app_public.pipeline_stages s
                 where s.organization_id = c.organization_id and s.id = c.stage_id),
      'tags', coalesce((select jsonb_agg(t.name order by t.name) from app_public.contact_tags ct
                          join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                         where ct.organization_id = c.organization_id and ct.contact_id = c.id), '[]'),
      'custom_fields', c.field_values,
      'notes_count', c.notes_count,
      'location_ids', coalesce((select jsonb_agg(cl.location_id order by cl.location_id) from app_public.contact_locations cl
                                 where cl.organization_id = c.organization_id and cl.contact_id = c.id
                                   and (reach is null or cl.location_id = any(reach))), '[]'),
      'sms_consent', c.sms_consent,
      'sms_consent_at', c.sms_consent_at,
      'email_suppressed', c.email is not null and exists (
        select 1 from app_public.email_suppressions es where es.organization_id = c.organization_id and es.email = c.email_key),
      'sms_opted_out', c.phone is not null and exists (
        select 1 from app_public.sms_opt_outs so
         where so.organization_id = c.organization_id and so.phone = c.phone and so.ended_at is null),
      'total_calls', c.total_calls,
      'first_seen_at', c.first_seen_at,
      'last_seen_at', c.last_seen_at,
      'created_at', c.created_at,
      'updated_at', c.updated_at) order by c.ordinality), '[]')
      from unnest(contacts) with ordinality as c
     where c.organization_id = org);
end $$;
comment on function app_hidden.contacts_json(app_public.contacts[]) is
  'Contacts read under the caller''s policies, in order, with stage, tags, custom fields, notes count, locations in reach and suppression state.';
-- Analysts scope their own sessions; they read the tables under the policies, not this.
revoke execute on function app_hidden.contacts_json(app_public.contacts[]) from public;
grant execute on function app_hidden.contacts_json(app_public.contacts[]) to svc_request, svc_worker;

-- One contact in full (null for another organization's), for the operations that answer one.
create or replace function app_hidden.contact_json(c app_public.contacts) returns jsonb
language sql stable as $$
  select app_hidden.contacts_json(array[c]) -> 0
$$;
comment on function app_hidden.contact_json(app_public.contacts) is
  'A contact read under the caller''s policies, as app_hidden.contacts_json renders it.';

--------------------------------------------------------------------------------
-- 2. Trigram shares
--------------------------------------------------------------------------------
-- How common each three-character piece (ASCII letters and digits) of the contacts' search
-- text is, as the share of contacts whose text contains it, over all organizations. Only the
-- choice of which pieces of q the index looks up depends on it; a stale or empty table makes
-- a search slower, never different. Refreshed hourly by the refresh_search_trigrams task.
create table app_private.search_trigrams (
  trigram text primary key check (trigram ~ '^[a-z0-9]{3}$'),
  share real not null check (share between 0 and 1)
);
-- Read and written only by the owner's functions.
alter table app_private.search_trigrams enable row level security;
comment on table app_private.search_trigrams is
  'Share of contacts whose search text contains each three-character piece; picks the pieces of q the trigram index looks up.';

-- Recounts the shares from a sample of about sample_rows contacts (block sampling: the
-- trigrams of a name do not depend on where its row is stored).
create function app_private.refresh_search_trigrams(sample_rows int default 50000) returns int
language plpgsql as $$
declare
  estimate real;
  percent real;
  counted int;
begin
  select reltuples into estimate from pg_catalog.pg_class where oid = 'app_public.contacts'::regclass;
  if estimate is null or estimate < sample_rows then
    percent := 100;
  else
    percent := 100 * sample_rows / estimate;
  end if;
  delete from app_private.search_trigrams;
  with sample as materialized (
    select lower(app_hidden.contact_search_text(c.name, c.email, c.phone)) as text
      from app_public.contacts c tablesample system (percent)),
  size as (select count(*) as n from sample)
  insert into app_private.search_trigrams (trigram, share)
  select p.piece, count(*)::real / (select n from size)
    from sample s
    cross join lateral (select distinct substr(s.text, i, 3) as piece from generate_series(1, length(s.text) - 2) i) p
   where p.piece ~ '^[a-z0-9]{3}$'
   group by p.piece;
  get diagnostics counted = row_count;
  return counted;
end $$;
comment on function app_private.refresh_search_trigrams(int) is
  'Recounts app_private.search_trigrams from a sample of contacts; answers how many pieces it counted.';
revoke execute on function app_private.refresh_search_trigrams(int) from public;

-- The LIKE patterns the trigram index looks up for a search pattern: up to three pieces of
-- it, each '%abc%'. Every contact that matches the whole pattern contains each piece, so the
-- pieces only ever let through more candidates, which the search then checks against the
-- whole pattern. The index reads one posting list per piece, so the choice weighs what a
-- piece costs (its share of all contacts) against what it saves (the candidates it removes,
-- each a heap recheck, about 300 times a posting-list entry): the rarest piece first, then
-- the next rarest while the candidates it removes are worth its list. A piece of a word (or
-- number) a chosen piece is from narrows far less than its share says ("ern" and "dez" both
-- mean Hernandez): its share counts as its square root. With no shares counted yet, or no piece (under three letters or digits in a row), the
-- pattern is looked up whole, as before.
create function app_hidden.search_pieces(pattern text) returns text[]
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  pieces text[];
  words int[];
  shares real[];
  chosen int[] := '{}';
  narrowed real := 1;
  best int;
  best_share real;
  effective real;
  c int;
begin
  if not exists (select 1 from app_private.search_trigrams) then
    return array[pattern, pattern, pattern];
  end if;
  -- each distinct piece once, at its first position; pieces never counted are rarer than the
  -- sample could see
  select array_agg(p.piece order by p.position), array_agg(p.word order by p.position),
         array_agg(coalesce(t.share, 0.00001) order by p.position)
    into pieces, words, shares
    from (select distinct on (piece) lower(substr(pattern, i, 3)) as piece, i as position,
                 -- which run of letters and digits it is in: the characters before it that are not
                 length(regexp_replace(substr(pattern, 1, i), '[a-zA-Z0-9]', '', 'g')) as word
            from generate_series(1, length(pattern) - 2) i
           where lower(substr(pattern, i, 3)) ~ '^[a-z0-9]{3}$'
           order by piece, i) p
    left join app_private.search_trigrams t on t.trigram = p.piece;
  if pieces is null then
    return array[pattern, pattern, pattern];
  end if;
  while cardinality(chosen) < 3 loop
    best := null;
    for i in 1 .. cardinality(pieces) loop
      continue when i = any(chosen);
      effective := shares[i];
      foreach c in array chosen loop
        if words[c] = words[i] then
          effective := sqrt(shares[i]);
        end if;
      end loop;
      if best is null or effective < best_share then
        best := i;
        best_share := effective;
      end if;
    end loop;
    exit when best is null
      or (cardinality(chosen) > 0 and narrowed * (1 - best_share) <= shares[best] / 300);
    chosen := chosen || best;
    narrowed := narrowed * best_share;
  end loop;
  -- three patterns for one fixed statement; the index reads a repeated piece once
  return array(select '%' || pieces[chosen[least(k, cardinality(chosen))]] || '%' from generate_series(1, 3) k);
end $$;
comment on function app_hidden.search_pieces(text) is
  'Up to three rare pieces of a search pattern as LIKE patterns (repeated to three), or the pattern itself three times.';
revoke execute on function app_hidden.search_pieces(text) from public;
grant execute on function app_hidden.search_pieces(text) to svc_request;

--------------------------------------------------------------------------------
-- 3. The index and the matching
--------------------------------------------------------------------------------
drop index app_public.contacts_org_search;
-- fastupdate off: with a pending list, every search also scans the entries that recent writes
-- left unmerged (up to 4 MB), so search latency would follow the write rate.
create index contacts_search on app_public.contacts
  using gin (app_hidden.contact_search_text(name, email, phone) gin_trgm_ops)
  with (fastupdate = off);

-- The current organization's contacts whose name, email or phone contains a pattern (and, for
-- a phone-like query, whose phone contains its digits). The index finds the contacts that
-- contain the pattern's rarest pieces; each is then checked field by field against the whole
-- pattern. It runs as the owner because ILIKE may not use an index under row security; it
-- reads only the caller's own organization and answers only what contacts_search sorts by.
create or replace function app_hidden.contacts_matching(pattern text, digits text)
returns table (id uuid, name text, last_seen_at timestamptz)
language plpgsql stable security definer rows 100
set search_path to pg_catalog, public, pg_temp as $$
declare
  p text[];
begin
  if digits is null then
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

--------------------------------------------------------------------------------
-- 4. The search
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

reset role;
