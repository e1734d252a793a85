--! Previous: sha1:48386778818e326ec51cbce5f15dfae43fb8d641
--! Hash: sha1:bc96102b2507bf092097833f9161862414d1701d
--! Message: search pieces in one statement

-- Search pieces in one statement. app_hidden.search_pieces found the pieces by lowercasing and
-- testing every three characters of the pattern and counting the separators before each, and
-- chose among them in a plpgsql loop: a third of a millisecond per search. The words of the
-- lowercased pattern are now matched once by one regular expression, each piece's share looked
-- up by its key (joined, the table would be read whole: the planner cannot tell how few pieces
-- a pattern has), and the three choices are three nested subqueries. The rule is the one of
-- migration 000008, ties going to the earlier piece as before.
set local role svc_owner;

create or replace function app_hidden.search_pieces(pattern text) returns text[]
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  chosen text[];
begin
  if not exists (select 1 from app_private.search_trigrams) then
    return array[pattern, pattern, pattern];
  end if;
  with pieces as materialized (
    -- each distinct piece once, from its first word; pieces never counted are rarer than the
    -- sample could see
    select p.piece, p.word, p.position,
           coalesce((select t.share from app_private.search_trigrams t where t.trigram = p.piece), 0.00001) as share
      from (select distinct on (piece) substr(w.run[1], i, 3) as piece, w.n as word, i as position
              from regexp_matches(lower(pattern), '[a-z0-9]+', 'g') with ordinality as w(run, n)
             cross join lateral generate_series(1, length(w.run[1]) - 2) i
             order by piece, w.n, i) p)
  select array_remove(array[
           '%' || a.piece || '%',
           case when a.share * (1 - b.effective) > b.share / 300 then '%' || b.piece || '%' end,
           case when a.share * (1 - b.effective) > b.share / 300
                 and a.share * b.effective * (1 - d.effective) > d.share / 300 then '%' || d.piece || '%' end], null)
    into chosen
    from (select * from pieces order by share, word, position limit 1) a
    -- a piece of a word already chosen from narrows far less than its share says
    left join lateral (
      select x.piece, x.word, x.share, case when x.word = a.word then sqrt(x.share) else x.share end as effective
        from pieces x where x.piece <> a.piece
       order by effective, x.word, x.position limit 1) b on true
    left join lateral (
      select y.piece, y.share, case when y.word in (a.word, b.word) then sqrt(y.share) else y.share end as effective
        from pieces y where y.piece <> a.piece and y.piece <> b.piece
       order by effective, y.word, y.position limit 1) d on true;
  if coalesce(cardinality(chosen), 0) = 0 then
    return array[pattern, pattern, pattern];
  end if;
  -- three patterns for one fixed statement; the index reads a repeated piece once
  return chosen || array_fill(chosen[cardinality(chosen)], array[3 - cardinality(chosen)]);
end $$;

reset role;
