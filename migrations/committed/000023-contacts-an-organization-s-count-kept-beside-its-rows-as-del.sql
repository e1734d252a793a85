--! Previous: sha1:4680905c5b03a5bb2d1ba2a5ff092714cccad26e
--! Hash: sha1:38cad242b784ed9f6a3ca86d53a3e08f2a146974
--! Message: Contacts: an organization's count kept beside its rows as deltas, the total of an unfiltered search for a caller that reaches every contact

--! split: 010-contact-counts.sql
-- contacts_search without a filter answers an exact `total` (spec: pages echo total), and so did
-- a count of the organization's contacts row by row: at 1,000,000 contacts about 60 times a
-- contacts_get (bench/RESULTS.md, "Contacts"), for the dashboard's first page and an agent's
-- first call. So each statement that inserts or deletes contacts also writes a delta row,
-- (organization, ±n), into app_private.contact_counts, and the sum of an organization's rows is
-- its count, as app_private.enrollment_counts does for sequences (migration 000014): deltas are
-- appended, never updated, because one counter row updated by every new contact would serialize
-- every transaction that creates a contact in the organization; now and then a writer folds an
-- organization's deltas into one row (app_private.fold_contact_counts), so a count sums a few
-- dozen rows at most. The rows are written in the transaction that changes the contacts, so a
-- reader's snapshot sees the deltas of exactly the contacts it sees: the sum is exact.
--
-- The sum is every contact of the organization: the total only for a caller that reaches them
-- all (every location, every record); others are counted under their policies, as before.
set local role svc_owner;

create table if not exists app_private.contact_counts (
  organization_id uuid not null,
  n bigint not null
);
comment on table app_private.contact_counts is
  'How many contacts each organization has, as deltas: the sum of an organization''s rows is its count. Written by the '
  'statement triggers of app_public.contacts; folded now and then by app_private.fold_contact_counts. No foreign key: the '
  'rows of a deleted organization sum to zero and go at the next fold.';
-- no policy: only the owner (the triggers, the count helper) reads and writes it
alter table app_private.contact_counts enable row level security;
create index if not exists contact_counts_by_organization on app_private.contact_counts (organization_id) include (n);

-- Folds an organization's deltas into one row (none when they sum to zero). One folder at a time
-- per organization (others skip: their deltas wait for the next fold); rows of transactions not
-- yet committed are not seen, so they stay, and each delta is folded exactly once.
create or replace function app_private.fold_contact_counts(organization_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not pg_try_advisory_xact_lock(hashtextextended('contact_counts:' || organization_id, 0)) then
    return;
  end if;
  with gone as (
    delete from app_private.contact_counts c where c.organization_id = fold_contact_counts.organization_id
    returning c.n
  )
  insert into app_private.contact_counts (organization_id, n)
  select fold_contact_counts.organization_id, sum(gone.n) from gone having sum(gone.n) <> 0;
end $$;
comment on function app_private.fold_contact_counts(uuid) is
  'Folds the delta rows of an organization''s contact count into one row (skipped while another fold of it runs).';
revoke execute on function app_private.fold_contact_counts(uuid) from public;

-- One row per organization a statement inserted or deleted contacts of; the fold runs once in 32
-- such statements per organization, on average.
create or replace function app_private.tg_contacts__count_rows() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  o uuid;
begin
  if tg_op = 'INSERT' then
    insert into app_private.contact_counts (organization_id, n)
    select r.organization_id, count(*) from new_rows r group by 1;
    for o in select distinct r.organization_id from new_rows r loop
      if random() < 1.0 / 32 then perform app_private.fold_contact_counts(o); end if;
    end loop;
  else
    insert into app_private.contact_counts (organization_id, n)
    select r.organization_id, -count(*) from old_rows r group by 1;
  end if;
  return null;
end $$;
comment on function app_private.tg_contacts__count_rows() is
  'Statement trigger of app_public.contacts: counts the inserted (or deleted) rows per organization in app_private.contact_counts.';
revoke execute on function app_private.tg_contacts__count_rows() from public;

-- A truncate (of contacts, or cascading from organizations) leaves no contacts: no counts either.
create or replace function app_private.tg_contacts__count_truncated() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  delete from app_private.contact_counts;
  return null;
end $$;
revoke execute on function app_private.tg_contacts__count_truncated() from public;

drop trigger if exists _500_count_inserted on app_public.contacts;
create trigger _500_count_inserted after insert on app_public.contacts
  referencing new table as new_rows for each statement execute function app_private.tg_contacts__count_rows();
drop trigger if exists _500_count_deleted on app_public.contacts;
create trigger _500_count_deleted after delete on app_public.contacts
  referencing old table as old_rows for each statement execute function app_private.tg_contacts__count_rows();
drop trigger if exists _500_count_truncated on app_public.contacts;
create trigger _500_count_truncated after truncate on app_public.contacts
  for each statement execute function app_private.tg_contacts__count_truncated();

-- Counted again from the rows, so a re-run of this file (or rows written before it) leaves the
-- counts exact; the lock keeps writers out meanwhile.
lock table app_public.contacts in share row exclusive mode;
delete from app_private.contact_counts;
insert into app_private.contact_counts (organization_id, n)
select organization_id, count(*) from app_public.contacts group by 1;

-- How many contacts the current organization has, for a caller that reaches them all; NULL for
-- others (they count under their policies).
create or replace function app_hidden.contact_total() returns bigint
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not (app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all') then
    return null;
  end if;
  return (select coalesce(sum(c.n), 0) from app_private.contact_counts c where c.organization_id = app_hidden.current_org_id());
end $$;
comment on function app_hidden.contact_total() is
  'How many contacts the current organization has, from app_private.contact_counts; NULL unless the credential reaches every '
  'contact of the organization (then the caller counts under its policies).';
revoke execute on function app_hidden.contact_total() from public;
grant execute on function app_hidden.contact_total() to svc_request;

-- contacts_search: as before, with the total of an unfiltered page from the counts.
create or replace function app_public.contacts_search(q text, email public.citext, phone text, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $_$
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
    -- no filter: the organization's count, kept beside the rows (migration 000023), for a
    -- caller that reaches every contact; others count what their policies let them see
    total := coalesce(app_hidden.contact_total(), (select count(*) from app_public.contacts c where c.organization_id = org));
    items := app_hidden.contacts_json(array(
      select c from app_public.contacts c where c.organization_id = org
       order by c.last_seen_at desc, c.id limit page_size offset skip));
  else
    total := coalesce(app_hidden.contact_total(), (select count(*) from app_public.contacts c where c.organization_id = org));
    select coalesce(jsonb_agg(app_hidden.contact_card(p) order by p.name, p.id), '[]') into items
      from (select * from app_public.contacts c where c.organization_id = org
             order by c.name, c.id limit page_size offset skip) p;
  end if;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size);
end $_$;;

reset role;
