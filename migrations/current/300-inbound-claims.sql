-- Inbound routing identifiers: a sending domain or a phone number belongs to one organization.
--
-- Inbound email is routed by the domain of its address, inbound SMS and calls by the number they
-- were sent to. A domain or number two organizations hold sends one organization's mail to the
-- other and drops texts (a STOP among them), so app_private.inbound_claims holds one row per
-- identifier in use, naming the organization that holds it; its primary key is the constraint.
-- Triggers on the tables that hold identifiers (organizations.sending_email_domain and
-- default_sms_number, locations.sms_number, which the voice platform's calls use too) keep it:
-- a claim of an identifier another organization holds is refused (409 domain_in_use or
-- number_in_use), an identifier no longer held by anyone in its organization is released.
-- Within one organization a number may serve as the default and as a location's number.
-- Widget and form ids route the public chat and form endpoints: their unique indexes are below.

set local role svc_owner;

create table if not exists app_private.inbound_claims (
  identifier text primary key,
  kind text not null check (kind in ('email_domain', 'phone_number')),
  -- deferred: an organization's insert claims its identifiers before its row exists
  organization_id uuid not null references app_public.organizations (id) on delete cascade deferrable initially deferred,
  claimed_at timestamptz not null default now()
);
comment on table app_private.inbound_claims is
  'Every sending domain (lower case) and phone number (E.164) in use, with the one organization that holds it; kept by app_private.claim_inbound_identifiers.';
create index if not exists inbound_claims_by_organization on app_private.inbound_claims (organization_id);

-- The identifier as routing compares it: domains case-insensitively, numbers as stored (E.164).
create or replace function app_private.inbound_identifier(kind text, value text) returns text
  language sql immutable parallel safe as $$
  select case when nullif(btrim(value), '') is null then null
              when kind = 'email_domain' then lower(btrim(value)) else btrim(value) end
$$;

-- Does anything of the organization still hold the identifier (its default or a location)?
create or replace function app_private.inbound_identifier_held(org uuid, ident text) returns boolean
  language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.organizations o
                  where o.id = org and (app_private.inbound_identifier('email_domain', o.sending_email_domain) = ident
                                        or o.default_sms_number = ident))
      or exists (select 1 from app_public.locations l where l.organization_id = org and l.sms_number = ident)
$$;

-- Claims one identifier for an organization: 409 when another organization holds it. The
-- insert waits for a concurrent claim of the same identifier, so exactly one of two wins.
create or replace function app_private.claim_inbound_identifier(org uuid, kind text, value text) returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  ident text := app_private.inbound_identifier(kind, value);
  holder uuid;
begin
  if ident is null then return; end if;
  insert into app_private.inbound_claims as c (identifier, kind, organization_id) values (ident, kind, org)
  on conflict (identifier) do update set organization_id = c.organization_id
  returning c.organization_id into holder;
  if holder <> org then
    if kind = 'email_domain' then
      perform app_hidden.raise_error(409, 'domain_in_use',
        format('The sending domain %s is in use by another organization', ident), jsonb_build_object('identifier', ident));
    else
      perform app_hidden.raise_error(409, 'number_in_use',
        format('The number %s is in use by another organization', ident), jsonb_build_object('identifier', ident));
    end if;
  end if;
end $$;
comment on function app_private.claim_inbound_identifier(uuid, text, text) is
  'Claims a sending domain or phone number for an organization; 409 domain_in_use / number_in_use when another organization holds it.';

-- Releases an identifier nothing of the organization holds any more.
create or replace function app_private.release_inbound_identifier(org uuid, kind text, value text) returns void
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  ident text := app_private.inbound_identifier(kind, value);
begin
  if ident is null then return; end if;
  delete from app_private.inbound_claims c
   where c.identifier = ident and c.organization_id = org
     and not app_private.inbound_identifier_held(org, ident);
end $$;

-- The triggers: claims before the row is written (a refusal writes nothing), releases after.
create or replace function app_private.organizations_claim_identifiers() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'INSERT' or new.sending_email_domain is distinct from old.sending_email_domain then
    perform app_private.claim_inbound_identifier(new.id, 'email_domain', new.sending_email_domain);
  end if;
  if tg_op = 'INSERT' or new.default_sms_number is distinct from old.default_sms_number then
    perform app_private.claim_inbound_identifier(new.id, 'phone_number', new.default_sms_number);
  end if;
  return new;
end $$;

create or replace function app_private.organizations_release_identifiers() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.sending_email_domain is distinct from old.sending_email_domain then
    perform app_private.release_inbound_identifier(old.id, 'email_domain', old.sending_email_domain);
  end if;
  if new.default_sms_number is distinct from old.default_sms_number then
    perform app_private.release_inbound_identifier(old.id, 'phone_number', old.default_sms_number);
  end if;
  return null;
end $$;

create or replace function app_private.locations_claim_number() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'INSERT' or new.sms_number is distinct from old.sms_number or new.organization_id <> old.organization_id then
    perform app_private.claim_inbound_identifier(new.organization_id, 'phone_number', new.sms_number);
  end if;
  return new;
end $$;

create or replace function app_private.locations_release_number() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'DELETE' or new.sms_number is distinct from old.sms_number or new.organization_id <> old.organization_id then
    perform app_private.release_inbound_identifier(old.organization_id, 'phone_number', old.sms_number);
  end if;
  return null;
end $$;

-- Existing databases may hold an identifier in two organizations already: the organization
-- that has held it longest (created first) keeps it; the newer one's is cleared, and each
-- clearing is logged (a WARNING in the migration's output) for the operator to follow up.
do $$
declare
  r record;
  holder uuid;
begin
  for r in
    select * from (
      select o.id as org, o.created_at, 'email_domain' as kind,
             app_private.inbound_identifier('email_domain', o.sending_email_domain) as ident, 'organization' as what, o.id as row_id
        from app_public.organizations o where nullif(btrim(o.sending_email_domain), '') is not null
      union all
      select o.id, o.created_at, 'phone_number', btrim(o.default_sms_number), 'organization', o.id
        from app_public.organizations o where nullif(btrim(o.default_sms_number), '') is not null
      union all
      select l.organization_id, o.created_at, 'phone_number', btrim(l.sms_number), 'location', l.id
        from app_public.locations l join app_public.organizations o on o.id = l.organization_id
       where nullif(btrim(l.sms_number), '') is not null) x
    order by x.created_at, x.org
  loop
    insert into app_private.inbound_claims as c (identifier, kind, organization_id) values (r.ident, r.kind, r.org)
    on conflict (identifier) do update set organization_id = c.organization_id
    returning c.organization_id into holder;
    continue when holder = r.org;
    raise warning 'inbound_claims: % % was held by organizations % and %; % keeps it, cleared on % %',
      r.kind, r.ident, holder, r.org, holder, r.what, r.row_id;
    if r.what = 'location' then
      update app_public.locations set sms_number = null where organization_id = r.org and id = r.row_id;
    elsif r.kind = 'email_domain' then
      update app_public.organizations set sending_email_domain = null where id = r.org;
    else
      update app_public.organizations set default_sms_number = null where id = r.org;
    end if;
  end loop;
end $$;

drop trigger if exists _300_claim_identifiers on app_public.organizations;
create trigger _300_claim_identifiers before insert or update of sending_email_domain, default_sms_number
  on app_public.organizations for each row execute function app_private.organizations_claim_identifiers();
drop trigger if exists _300_release_identifiers on app_public.organizations;
create trigger _300_release_identifiers after update of sending_email_domain, default_sms_number
  on app_public.organizations for each row execute function app_private.organizations_release_identifiers();
drop trigger if exists _300_claim_number on app_public.locations;
create trigger _300_claim_number before insert or update of sms_number, organization_id
  on app_public.locations for each row execute function app_private.locations_claim_number();
drop trigger if exists _300_release_number on app_public.locations;
create trigger _300_release_number after update of sms_number, organization_id or delete
  on app_public.locations for each row execute function app_private.locations_release_number();

-- An operator moves a domain or number from the organization that holds it to another: every
-- holder in the old organization lets go and the new one takes it, in one transaction, so
-- inbound traffic is routed to one of them at every moment. to_location: the number becomes
-- that location's; otherwise the organization's default (or its sending domain).
create or replace function app_private.move_inbound_identifier(kind text, value text, to_org uuid, to_location uuid default null)
  returns jsonb language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  ident text := app_private.inbound_identifier(kind, value);
  old_org uuid;
begin
  if ident is null or kind not in ('email_domain', 'phone_number') then
    perform app_hidden.raise_error(422, 'invalid_identifier', 'Name a sending domain or a phone number');
  end if;
  if kind = 'email_domain' and to_location is not null then
    perform app_hidden.raise_error(422, 'invalid_identifier', 'A sending domain belongs to an organization, not a location');
  end if;
  perform 1 from app_public.organizations o where o.id = to_org for update;
  if not found then perform app_hidden.raise_error(404, 'not_found', 'No such organization'); end if;
  if to_location is not null then
    perform 1 from app_public.locations l where l.organization_id = to_org and l.id = to_location;
    if not found then perform app_hidden.raise_error(404, 'not_found', 'No such location in that organization'); end if;
  end if;
  select c.organization_id into old_org from app_private.inbound_claims c where c.identifier = ident for update;
  if old_org is not null and old_org <> to_org then
    update app_public.organizations o set sending_email_domain = null
     where o.id = old_org and app_private.inbound_identifier('email_domain', o.sending_email_domain) = ident;
    update app_public.organizations o set default_sms_number = null where o.id = old_org and o.default_sms_number = ident;
    update app_public.locations l set sms_number = null where l.organization_id = old_org and l.sms_number = ident;
  end if;
  if kind = 'email_domain' then
    update app_public.organizations o set sending_email_domain = ident where o.id = to_org;
  elsif to_location is null then
    update app_public.organizations o set default_sms_number = ident where o.id = to_org;
  else
    update app_public.locations l set sms_number = ident where l.organization_id = to_org and l.id = to_location;
  end if;
  return jsonb_build_object('identifier', ident, 'kind', kind, 'from_organization_id', old_org,
                            'to_organization_id', to_org, 'to_location_id', to_location);
end $$;
comment on function app_private.move_inbound_identifier(text, text, uuid, uuid) is
  'Operators only (svc admin org move): moves a sending domain or number to another organization (or one of its locations) in one transaction.';
revoke all on function app_private.move_inbound_identifier(text, text, uuid, uuid) from public;

-- Widget and form ids route the public chat and form endpoints without an organization: each
-- is one row's (they are generated, and the unique index keeps it so).
create unique index if not exists chat_widgets_id_key on app_public.chat_widgets (id);
drop index if exists app_public.chat_widgets_by_id;
create unique index if not exists forms_id_key on app_public.forms (id);

reset role;
