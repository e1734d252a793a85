--! Previous: sha1:3c2adeaf9c251c01d1f82653c17e609a40998cc4
--! Hash: sha1:c517834c545d7f538cb2a89c175300c68f00c512
--! Message: search_rarest_share in plpgsql, each piece looked up by its key: planned once per connection instead of on every call (440 to 40 µs on every q search)

--! split: 010-rarest-share-by-key.sql
-- search_rarest_share (migration 000029) looks each piece up by its key. As a SQL function with
-- a SET clause it was planned on every call, and the plan joined the pieces to the whole sample
-- of app_private.search_trigrams: 440 µs on every q search at a million contacts, a fifth of a
-- typical one. As plpgsql its statement is planned once per connection, a lookup per piece:
-- 40 µs.
set local role svc_owner;

create or replace function app_hidden.search_rarest_share(pattern text) returns real
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(min(coalesce((select t.share from app_private.search_trigrams t
                                          where t.trigram = substr(w.run[1], i, 3)), 0.00001)), 1)
            from regexp_matches(lower(pattern), '[a-z0-9]+', 'g') w(run)
           cross join lateral generate_series(1, length(w.run[1]) - 2) i);
end $$;

reset role;
