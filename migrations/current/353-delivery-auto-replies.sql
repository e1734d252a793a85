-- Delivery: an automatic answer (out of office, vacation responder) is never a reply, on any
-- inbound email path (the inbound webhook, the SMTP listener, `svc admin inbound email`). The
-- caller reads the headers (Auto-Submitted other than `no`, X-Autoreply, X-Autorespond,
-- Precedence auto_reply|bulk|junk: src/delivery/inbound_email.ts, isAutoReply); the subject is
-- read here, so that a message without such headers is recognised whichever path it came by.
-- It is recorded as the message's `auto_replied` delivery event and the enrollment's
-- `auto_replied` event (once per message), and the enrollment goes on.

set local role svc_owner;

alter table app_public.enrollment_events drop constraint if exists enrollment_events_type_check;
alter table app_public.enrollment_events add constraint enrollment_events_type_check
  check (type in ('enrolled', 'sent', 'delivered', 'bounced', 'opened', 'clicked', 'replied', 'auto_replied', 'skipped',
                  'failed', 'unknown', 'paused', 'resumed', 'completed', 'cancelled'));

-- The subjects the common mail clients (Outlook and Exchange, Gmail, Apple Mail, Thunderbird,
-- webmail) give their automatic answers, in the main languages, at the start of the subject
-- after any Re:/Fwd:-style prefixes or a bracket. An accented letter is matched by any one
-- character, so an upper-case accent (not lowered under the C collation) matches too. A subject
-- that merely mentions an office or replies later in its text is a person's.
create or replace function app_private.email_auto_reply_subject(subject text)
returns boolean language sql immutable parallel safe set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(lower(subject) ~ (
    '^\s*(((re|aw|sv|vs|antw|odp|rif|r|fw|fwd|wg|tr|rv|enc)\s*:|\[)\s*)*('
    || 'auto(matic|mated)?[ _-]?(reply|replied|response|responder|answer)'   -- Automatic reply, Auto-Reply, Autoreply
    || '|out of (the )?office|ooo\y'                                        -- Out of Office
    || '|abwesenheit|automatische antwort'                                  -- German
    || '|r.?ponse automatique|absence du bureau|absent du bureau'           -- French
    || '|respuesta autom.?tica|fuera de (la )?oficina'                      -- Spanish
    || '|risposta automatica|fuori ufficio'                                 -- Italian
    || '|automatisch antwoord|afwezig'                                      -- Dutch
    || '|resposta autom.?tica|ausente do escrit'                            -- Portuguese
    || '|automatiskt? svar|autosvar|fr.?nvaro'                              -- Swedish, Danish, Norwegian
    || '|automaattinen vastaus'                                             -- Finnish
    || '|automatyczna odpowied'                                             -- Polish
    || '|automatick.? odpov'                                                -- Czech, Slovak
    || '|automatikus v.?lasz'                                               -- Hungarian
    || '|otomatik yan.?t'                                                   -- Turkish
    || '|[аА]втоматический ответ|[аА]втоответ'                              -- Russian
    || '|自動応答|自動返信|自动回复|自動回覆|自動回復'                         -- Japanese, Chinese
    || ')'), false)
$$;
comment on function app_private.email_auto_reply_subject(text) is
  'Whether an email''s subject is one mail clients give an automatic answer (Automatic reply, Auto-Reply, Out of Office, Abwesenheitsnotiz, Réponse automatique, Respuesta automática, …): an auto-reply, never a reply.';

create or replace function app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text,
  in_reply_to text, provider_id text, auto_reply boolean)
returns jsonb language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $_$
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
  -- the headers were read by the caller (auto_reply); the subject is read here, for every path
  if coalesce(auto_reply, false) or app_private.email_auto_reply_subject(subject) then
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
end $_$;


comment on function app_hidden.delivery_inbound_email(text, text, text, text, text, text, boolean) is
  'An inbound email: the message answered by In-Reply-To or reply+TOKEN, the conversation continued (and the sequence''s replied event) through conversations_inbound_email; an auto-reply (auto_reply from the headers, or its subject: email_auto_reply_subject) is only recorded on the message answered and as the enrollment''s auto_replied event.';

reset role;
