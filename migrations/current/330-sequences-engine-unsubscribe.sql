-- One-click unsubscribe (RFC 8058) from sequence email: GET /unsubscribe/<token> shows a
-- confirmation page, POST suppresses the address (email channel), which cancels its email
-- sequences (the suppression trigger of 320). No sign-in: the token is the authority. It is 32
-- random bytes made when the message was built; only its SHA-256 is stored
-- (app_private.unsubscribe_tokens), so the table cannot be turned back into working links.
-- Both functions run with no claims (the page has no credential) and reach one organization's
-- row through the token alone.
set local role svc_owner;

create or replace function app_hidden.unsubscribe_token_row(token text) returns app_private.unsubscribe_tokens
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  t app_private.unsubscribe_tokens;
begin
  if token is null or token !~ '^[A-Za-z0-9_-]{20,100}$' then
    return null;
  end if;
  select * into t from app_private.unsubscribe_tokens x where x.token_hash = sha256(convert_to(token, 'UTF8'));
  return t;
end $$;
revoke execute on function app_hidden.unsubscribe_token_row(text) from public;

-- The address shown on the page, partly hidden (a@… of a forwarded message tells a stranger little).
create or replace function app_hidden.mask_email(email text) returns text
language sql immutable as $$
  select left(split_part(email, '@', 1), 1) || '…@' || split_part(email, '@', 2)
$$;
revoke execute on function app_hidden.mask_email(text) from public;

create or replace function app_hidden.unsubscribe_lookup(token text) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  t app_private.unsubscribe_tokens := app_hidden.unsubscribe_token_row(token);
begin
  if t.token_hash is null then
    return null;
  end if;
  return jsonb_build_object(
    'organization', (select o.name from app_public.organizations o where o.id = t.organization_id),
    'email', app_hidden.mask_email(t.email),
    'unsubscribed', exists (select 1 from app_public.email_suppressions s where s.organization_id = t.organization_id and s.email = t.email));
end $$;
comment on function app_hidden.unsubscribe_lookup(text) is
  'What the unsubscribe page shows for a token: the organization''s name, the address (masked), whether it is suppressed; NULL for an unknown token.';

create or replace function app_hidden.unsubscribe_confirm(token text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  t app_private.unsubscribe_tokens := app_hidden.unsubscribe_token_row(token);
  contact uuid;
begin
  if t.token_hash is null then
    return null;
  end if;
  select c.id into contact from app_public.contacts c where c.organization_id = t.organization_id and c.email_key = t.email;
  contact := coalesce(contact, t.contact_id);
  if contact is not null then
    -- the first record of an address is kept (contacts_suppress's rule)
    insert into app_public.email_suppressions (organization_id, email, contact_id, source)
    values (t.organization_id, t.email, contact, 'unsubscribe')
    on conflict do nothing;
    perform app_private.cancel_channel_enrollments(t.organization_id, array[contact], 'email');
  end if;
  update app_private.unsubscribe_tokens x set used_at = coalesce(x.used_at, now()) where x.token_hash = t.token_hash;
  -- an address no contact carries (a test send to its author) is on no list: nothing to record
  return jsonb_build_object('organization', (select o.name from app_public.organizations o where o.id = t.organization_id),
                            'email', app_hidden.mask_email(t.email), 'unsubscribed', contact is not null);
end $$;
comment on function app_hidden.unsubscribe_confirm(text) is
  'One-click unsubscribe: suppresses the token''s address (source unsubscribe; the first record kept) and cancels its email '
  'enrollments; unsubscribed false for an address no contact carries (nothing to record); NULL for an unknown token. Safe to repeat.';

grant execute on function app_hidden.unsubscribe_lookup(text), app_hidden.unsubscribe_confirm(text) to svc_request;

reset role;
