-- Delivery, email coming back: an inbound email from the signed MIME webhook
-- (src/delivery/inbound_email.ts) or `svc admin inbound email`, one path for both. The answer to
-- a message the service sent is found by In-Reply-To/References (the webhook picks the id of
-- ours among them) or by the reply+TOKEN@ address our Reply-To names (TOKEN: the message id,
-- hex); it then continues that message's conversation through the conversations area's own
-- function (701-…), which also records the sequence's `replied` event. An auto-reply
-- (Auto-Submitted, out-of-office) is recorded as the message's `auto_replied` delivery event
-- and is not a reply: no conversation message, no `replied`, no exit.
set local role svc_owner;

create or replace function app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text,
  in_reply_to text, provider_id text, auto_reply boolean) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  token text := substring(lower(to_address) from '^reply\+([0-9a-f]{32})@[^@\s]+$');
  replied_id uuid;
  om app_private.outgoing_messages;
  result jsonb;
begin
  if to_address is null or from_address is null or to_address !~ '^[^@\s]+@[^@\s]+$' or from_address !~ '^[^@\s]+@[^@\s]+$' then
    perform app_hidden.raise_error(400, 'bad_request', 'to and from are email addresses');
  end if;
  replied_id := substring(in_reply_to from '^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@')::uuid;
  if replied_id is null and token is not null then
    replied_id := (substr(token, 1, 8) || '-' || substr(token, 9, 4) || '-' || substr(token, 13, 4) || '-'
                   || substr(token, 17, 4) || '-' || substr(token, 21))::uuid;
  end if;
  if replied_id is not null then
    select * into om from app_private.outgoing_messages m where m.id = replied_id and m.channel = 'email';
  end if;
  if token is not null then
    if om.id is null then
      perform app_hidden.raise_error(404, 'not_found', 'No message of ours answers to ' || to_address);
    end if;
    -- the thread's address is the one the message was sent from, not the reply address
    to_address := coalesce(om.sender, to_address);
  end if;
  -- one delivery of a message at a time: a retry racing the first waits, then finds it recorded
  if provider_id is not null then
    perform pg_advisory_xact_lock(hashtextextended('inbound-email|' || provider_id, 0));
  end if;
  if auto_reply then
    if om.id is null then
      return jsonb_build_object('auto_reply', true, 'recorded', false);
    end if;
    return app_private.delivery_message_event(om, 'auto:' || coalesce(provider_id, md5(coalesce(body, ''))) || ':' || om.id,
      'auto_replied', jsonb_build_object('from', lower(from_address), 'subject', left(subject, 500))) || jsonb_build_object('auto_reply', true);
  end if;
  result := app_private.conversations_inbound_email(to_address, from_address, subject, body,
    case when om.id is not null then '<' || om.id || '@reply>' else in_reply_to end, provider_id);
  -- the `replied` exit holds from this moment (sequences.md: checked when the event arrives)
  if result->>'contact_id' is not null then
    perform app_private.check_contact_exits((result->>'organization_id')::uuid, (result->>'contact_id')::uuid);
  end if;
  return result || jsonb_build_object('auto_reply', false);
end $$;
comment on function app_hidden.delivery_inbound_email(text, text, text, text, text, text, boolean) is
  'An inbound email: the message answered by In-Reply-To or reply+TOKEN, the conversation continued (and the sequence''s '
  'replied event) through conversations_inbound_email; an auto-reply is only recorded on the message answered.';
revoke execute on function app_hidden.delivery_inbound_email(text, text, text, text, text, text, boolean) from public;
grant execute on function app_hidden.delivery_inbound_email(text, text, text, text, text, text, boolean) to svc_request;

reset role;
