--! Previous: sha1:317ed0f7ecd99efd01543821dd130df4d96b86fd
--! Hash: sha1:32583c0c6a0c5408758fbdcfc6f0e1d10a1cce3d
--! Message: contacts_search keeps generic plans: its paged statements were planned again on every call (a third of the unfiltered first page's PostgreSQL CPU at a million contacts); the trigram lookup still plans per call

--! split: 010-contacts-search-generic-plans.sql
-- contacts_search keeps its plans (README, "Contacts", "Search"). Its statements page with
-- LIMIT and OFFSET taken from arguments, and read the organization through the caller's
-- policies. For such statements PostgreSQL's plan cache compares the generic plan's estimate
-- with the custom plans' and, when a custom plan looks cheaper (a limit it knows, an
-- organization's size), plans the statement again on every call: at 1,000,000 contacts a
-- profile of the first page with no filter spent a third of its PostgreSQL CPU in the planner
-- (the policies' helpers parsed and inlined again each time), and a typical q a fifth. The
-- generic plans are the same index scans, so they are kept.
--
-- The trigram lookup in contacts_matching is left to choose per call (plan_cache_mode = auto):
-- how selective a pattern's pieces are is what its plan depends on, and a generic plan there made
-- a small organization's common pieces slower.
set local role svc_owner;

alter function app_public.contacts_search(text, public.citext, text, integer, integer)
  set plan_cache_mode = force_generic_plan;
alter function app_hidden.contacts_matching(text, text)
  set plan_cache_mode = auto;

reset role;
