-- Delivery, the optional SMTP listener (src/delivery/smtp_listener.ts, SVC_SMTP_LISTEN): at RCPT
-- TO it accepts only an address our Reply-To named, reply+TOKEN@ the domain the message was sent
-- from, TOKEN an email message of ours (its id, hex). Anything else is refused there (550): the
-- listener relays nothing and takes no mail for unknown tokens. What it accepts then goes through
-- app_hidden.delivery_inbound_email, as the signed MIME webhook's mail does.
set local role svc_owner;

create or replace function app_hidden.delivery_reply_address_known(address text) returns boolean
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select exists (
    select 1
      from (select substring(lower(address) from '^reply\+([0-9a-f]{32})@[^@\s]+$') as token) t
      join app_private.outgoing_messages m
        on m.id = (substr(t.token, 1, 8) || '-' || substr(t.token, 9, 4) || '-' || substr(t.token, 13, 4) || '-'
                   || substr(t.token, 17, 4) || '-' || substr(t.token, 21))::uuid
     where t.token is not null and m.channel = 'email'
       and lower(split_part(address, '@', 2)) = coalesce(nullif(lower(split_part(m.sender, '@', 2)), ''), 'localhost'))
$$;
comment on function app_hidden.delivery_reply_address_known(text) is
  'Whether an address is the reply+TOKEN@domain of an email the service sent from that domain (the SMTP listener''s RCPT TO check).';
revoke execute on function app_hidden.delivery_reply_address_known(text) from public;
grant execute on function app_hidden.delivery_reply_address_known(text) to svc_request;

reset role;
