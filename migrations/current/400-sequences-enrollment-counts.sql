-- What the enrollment lists need to stay fast at a million enrollments in one organization:
-- an index per filter they take, and an exact count of a sequence's enrollments by status that
-- does not read them all.
--
-- The lists answer an exact `total` (spec: pages echo total). Counting a sequence of a million
-- enrollments row by row, under the enrollments policy (a probe of the sequence and of the
-- contact per row), takes seconds; a page takes a millisecond. So each change of an
-- enrollment's status is also written as a delta row, (sequence, status, ±n), into
-- app_private.enrollment_counts, and the sum of a sequence's rows is its count. Deltas are
-- appended, never updated: a counter row updated by every enrollment would serialize every
-- transaction that enrolls into, or ends an enrollment of, the same sequence (its row lock is
-- held until commit). Now and then a writer folds a sequence's deltas into one row per status
-- (app_private.fold_enrollment_counts), so a count sums a few dozen rows at most.
--
-- The sum is every enrollment of the sequence: it is the total only for a caller that reaches
-- every contact of the organization (an enrollment is visible with its contact). Other callers
-- are counted row by row under their policies (app_hidden.sequence_enrollment_count).
set local role svc_owner;

--------------------------------------------------------------------------------
-- Indexes of the filters
--------------------------------------------------------------------------------
-- sequences_list_enrollments?status=…: a page of one status, newest first. (Unfiltered pages use
-- enrollments_by_sequence; contact_id and email use enrollments_by_contact: a contact has few.)
create index if not exists enrollments_by_sequence_status
  on app_public.enrollments (organization_id, sequence_id, status, created_at desc, id);

--------------------------------------------------------------------------------
-- Counts
--------------------------------------------------------------------------------
create table if not exists app_private.enrollment_counts (
  organization_id uuid not null references app_public.organizations on delete cascade,
  sequence_id uuid not null,
  status text not null,
  n bigint not null
);
comment on table app_private.enrollment_counts is
  'How many enrollments each sequence has per status, as deltas: the sum of a (sequence, status)''s rows is its count. '
  'Written by the triggers of app_public.enrollments; folded now and then by app_private.fold_enrollment_counts.';
-- no policy: only the owner (the triggers, the count helper) reads and writes it
alter table app_private.enrollment_counts enable row level security;
create index if not exists enrollment_counts_by_sequence
  on app_private.enrollment_counts (organization_id, sequence_id, status) include (n);

-- Folds a sequence's deltas into one row per status. One folder at a time per sequence (others
-- skip: their deltas wait for the next fold); rows written by transactions not yet committed are
-- not seen, so they stay, and each delta is folded exactly once.
create or replace function app_private.fold_enrollment_counts(organization_id uuid, sequence_id uuid) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not pg_try_advisory_xact_lock(hashtextextended('enrollment_counts:' || organization_id || ':' || sequence_id, 0)) then
    return;
  end if;
  with gone as (
    delete from app_private.enrollment_counts c
     where c.organization_id = fold_enrollment_counts.organization_id and c.sequence_id = fold_enrollment_counts.sequence_id
    returning c.status, c.n
  )
  insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
  select fold_enrollment_counts.organization_id, fold_enrollment_counts.sequence_id, gone.status, sum(gone.n)
    from gone group by gone.status having sum(gone.n) <> 0;
end $$;
comment on function app_private.fold_enrollment_counts(uuid, uuid) is
  'Folds the delta rows of a sequence''s enrollment counts into one row per status (skipped while another fold of it runs).';
revoke execute on function app_private.fold_enrollment_counts(uuid, uuid) from public;

-- One row per (sequence, status) a statement inserted or deleted; the fold runs once in 32
-- statements per sequence touched, on average.
create or replace function app_private.tg_enrollments__count_rows() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  s record;
begin
  if tg_op = 'INSERT' then
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select r.organization_id, r.sequence_id, r.status, count(*) from new_rows r group by 1, 2, 3;
    for s in select distinct r.organization_id, r.sequence_id from new_rows r loop
      if random() < 1.0 / 32 then perform app_private.fold_enrollment_counts(s.organization_id, s.sequence_id); end if;
    end loop;
  else
    insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
    select r.organization_id, r.sequence_id, r.status, -count(*) from old_rows r group by 1, 2, 3;
  end if;
  return null;
end $$;
comment on function app_private.tg_enrollments__count_rows() is
  'Statement trigger of app_public.enrollments: counts the inserted (or deleted) rows per sequence and status in app_private.enrollment_counts.';
revoke execute on function app_private.tg_enrollments__count_rows() from public;

-- A status change (the update trigger runs only for those): one row out of the old status, one
-- into the new.
create or replace function app_private.tg_enrollments__count_status() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
  values (old.organization_id, old.sequence_id, old.status, -1), (new.organization_id, new.sequence_id, new.status, 1);
  if random() < 1.0 / 32 then perform app_private.fold_enrollment_counts(new.organization_id, new.sequence_id); end if;
  return null;
end $$;
comment on function app_private.tg_enrollments__count_status() is
  'Row trigger of app_public.enrollments on a change of status (or sequence): moves one from the old count to the new.';
revoke execute on function app_private.tg_enrollments__count_status() from public;

drop trigger if exists _500_count_inserted on app_public.enrollments;
create trigger _500_count_inserted after insert on app_public.enrollments
  referencing new table as new_rows for each statement execute function app_private.tg_enrollments__count_rows();
drop trigger if exists _500_count_deleted on app_public.enrollments;
create trigger _500_count_deleted after delete on app_public.enrollments
  referencing old table as old_rows for each statement execute function app_private.tg_enrollments__count_rows();
drop trigger if exists _500_count_status on app_public.enrollments;
create trigger _500_count_status after update of status, sequence_id on app_public.enrollments
  for each row when (old.status is distinct from new.status or old.sequence_id is distinct from new.sequence_id)
  execute function app_private.tg_enrollments__count_status();

-- Counted again from the rows, so a re-run of this file (or rows written before it) leaves the
-- counts exact; the lock keeps writers out meanwhile.
lock table app_public.enrollments in share row exclusive mode;
delete from app_private.enrollment_counts;
insert into app_private.enrollment_counts (organization_id, sequence_id, status, n)
select organization_id, sequence_id, status, count(*) from app_public.enrollments group by 1, 2, 3;

--------------------------------------------------------------------------------
-- The count a list answers
--------------------------------------------------------------------------------
-- For a caller that reaches every contact of the organization (whole organization, every
-- record), every enrollment of a sequence it sees is visible to it: the sum of the deltas.
create or replace function app_hidden.sequence_enrollment_total(sequence_id uuid, status text) returns bigint
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  if not (app_hidden.current_reaches_all_locations() and app_hidden.current_records_level() = 'all') then
    return null;
  end if;
  return (select coalesce(sum(c.n), 0) from app_private.enrollment_counts c
           where c.organization_id = app_hidden.current_org_id() and c.sequence_id = sequence_enrollment_total.sequence_id
             and (sequence_enrollment_total.status is null or c.status = sequence_enrollment_total.status));
end $$;
comment on function app_hidden.sequence_enrollment_total(uuid, text) is
  'How many enrollments a sequence of the current organization has (of one status, or all), from app_private.enrollment_counts; '
  'NULL unless the credential reaches every contact of the organization (then the caller counts under its policies).';
revoke execute on function app_hidden.sequence_enrollment_total(uuid, text) from public;
grant execute on function app_hidden.sequence_enrollment_total(uuid, text) to svc_request;

-- The count of a sequence's enrollments the current credential sees (one status, or all).
create or replace function app_hidden.sequence_enrollment_count(sequence_id uuid, status text) returns bigint
language plpgsql stable as $$
declare
  n bigint := app_hidden.sequence_enrollment_total(sequence_id, status);
begin
  if n is null then
    select count(*) into n from app_public.enrollments e
     where e.organization_id = app_hidden.current_org_id() and e.sequence_id = sequence_enrollment_count.sequence_id
       and (sequence_enrollment_count.status is null or e.status = sequence_enrollment_count.status);
  end if;
  return n;
end $$;
comment on function app_hidden.sequence_enrollment_count(uuid, text) is
  'How many enrollments of the sequence (of one status, or all) the credential sees: from the counts when it reaches every '
  'contact, else counted under its policies.';
revoke execute on function app_hidden.sequence_enrollment_count(uuid, text) from public;
grant execute on function app_hidden.sequence_enrollment_count(uuid, text) to svc_request;

reset role;
