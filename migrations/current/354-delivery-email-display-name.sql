-- Delivery: the display name of an email's From. Every email went out as a bare
-- `no-reply@<domain>`, a person's reply included, so a recipient saw no one. The name is the
-- organization's, and for a person's reply in a conversation `<person>, <organization>`; the
-- address and the Reply-To routing stay as they are. The SMTP transport asks for it as it hands
-- a message over (src/delivery/smtp.ts), and quotes it as an address object, never by hand.
set local role svc_owner;

create or replace function app_private.email_from_name(org uuid, message_id uuid)
returns text language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select nullif(btrim(p.name), '') || ', ' || o.name
                     from app_public.conversation_messages m
                     join app_public.people p on p.organization_id = m.organization_id and p.id = m.author_person_id
                    where m.organization_id = org and m.id = email_from_name.message_id and m.author = 'person'),
                  o.name)
    from app_public.organizations o where o.id = org
$$;
comment on function app_private.email_from_name(uuid, uuid) is
  'The display name of an email''s From: "<person>, <organization>" for a person''s reply in a conversation, else the organization''s name.';

reset role;
