--! Previous: sha1:8440f71cdbddc4de4ef8971eda7e2368becd6e76
--! Hash: sha1:04589d97408e710ac1f4f235cf008f31b55f68fb
--! Message: audiences: the static count planned on every call

-- Audiences: the count of a static audience is planned on every call. As plpgsql's cached
-- statement it switched, after five calls, to a generic plan that does not know the audience
-- (it walked every contact of the organization and probed the members for each: about 1 s for
-- 100,000 members of 1,000,000 contacts, against 0.25 s planned with the values).
set local role svc_owner;

create or replace function app_public.audiences_count(audience_id uuid) returns jsonb
language plpgsql stable as $$
declare
  a app_public.audiences := app_hidden.audience_for(audience_id, false);
  n bigint;
begin
  if a.kind = 'dynamic' then
    n := app_hidden.audience_count(a.definition, 'definition.rules');
  else
    execute 'select count(*) from app_public.audience_members m
               join app_public.contacts c on c.organization_id = m.organization_id and c.id = m.contact_id
              where m.organization_id = $1 and m.audience_id = $2'
      into n using a.organization_id, a.id;
  end if;
  return jsonb_build_object('audience_id', a.id, 'count', n);
end $$;
comment on function app_public.audiences_count(uuid) is
  'audiences_count: how many contacts the audience holds now, within the caller''s reach (opted-out contacts included).';

reset role;
