-- db/schema/delivery.sql: what src/delivery/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: delivery_inbound_email(text, text, text, text, text, text, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
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

ALTER FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) IS 'An inbound email: the message answered by In-Reply-To or reply+TOKEN, the conversation continued (and the sequence''s replied event) through conversations_inbound_email; an auto-reply (auto_reply from the headers, or its subject: email_auto_reply_subject) is only recorded on the message answered and as the enrollment''s auto_replied event.';

--
-- Name: delivery_inbound_sms(text, text, text, text, boolean); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  result jsonb;
begin
  -- the webhook: a number two organizations share is refused (409 number_ambiguous), not guessed;
  -- `svc admin inbound sms` (owner_check false) keeps the conversations area's rule, the first
  -- organization that took the number
  if owner_check then
    perform app_hidden.number_owner(to_number);
  end if;
  -- one delivery of a message at a time: a retry racing the first waits, then finds it recorded
  if provider_id is not null then
    perform pg_advisory_xact_lock(hashtextextended('inbound-sms|' || provider_id, 0));
  end if;
  result := app_private.conversations_inbound_sms(to_number, from_number, body, provider_id);
  -- the `replied` exit holds from this moment (sequences.md: checked when the event arrives)
  if result->>'contact_id' is not null and not coalesce((result->>'duplicate')::boolean, false) then
    perform app_private.check_contact_exits((result->>'organization_id')::uuid, (result->>'contact_id')::uuid);
  end if;
  return result;
end $$;

ALTER FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) IS 'An inbound SMS from the provider''s webhook, through conversations_inbound_sms (idempotent on the provider id).';

--
-- Name: delivery_note_provider_id(uuid, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_private.outgoing_messages m set provider_id = delivery_note_provider_id.provider_id
   where m.organization_id = app_hidden.current_org_id() and m.id = message_id
$$;

ALTER FUNCTION app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) OWNER TO svc_owner;

--
-- Name: delivery_record_event(text, uuid, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  om app_private.outgoing_messages;
begin
  if (provider_id is null) = (message_id is null) or length(provider_id) not between 1 and 200 then
    perform app_hidden.raise_error(400, 'bad_request', 'One message id: the provider''s (1 to 200 characters) or ours');
  end if;
  if provider_id is not null then
    select * into om from app_private.outgoing_messages m where m.provider_id = delivery_record_event.provider_id for update;
  else
    select * into om from app_private.outgoing_messages m where m.id = delivery_record_event.message_id for update;
  end if;
  if not found then
    return jsonb_build_object('known', false, 'recorded', false);
  end if;
  return app_private.delivery_message_event(om, event_key, type, detail);
end $$;

ALTER FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) IS 'A provider''s delivery report about a message by its provider id or ours, recorded once per event key.';

--
-- Name: delivery_reply_address_known(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.delivery_reply_address_known(address text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
  select exists (
    select 1
      from (select substring(lower(address) from '^reply\+([0-9a-f]{32})@[^@\s]+$') as token) t
      join app_private.outgoing_messages m
        on m.id = (substr(t.token, 1, 8) || '-' || substr(t.token, 9, 4) || '-' || substr(t.token, 13, 4) || '-'
                   || substr(t.token, 17, 4) || '-' || substr(t.token, 21))::uuid
     where t.token is not null and m.channel = 'email'
       and lower(split_part(address, '@', 2)) = coalesce(nullif(lower(split_part(m.sender, '@', 2)), ''), 'localhost'))
$_$;

ALTER FUNCTION app_hidden.delivery_reply_address_known(address text) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_reply_address_known(address text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.delivery_reply_address_known(address text) IS 'Whether an address is the reply+TOKEN@domain of an email the service sent from that domain (the SMTP listener''s RCPT TO check).';

--
-- Name: number_owner(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.number_owner(number text, OUT organization_id uuid, OUT location_id uuid) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  orgs uuid[];
begin
  select array_agg(distinct x.org) into orgs
    from (select l.organization_id as org from app_public.locations l where l.sms_number = number_owner.number
          union all
          select o.id from app_public.organizations o where o.default_sms_number = number_owner.number) x;
  if orgs is null then
    perform app_hidden.raise_error(404, 'unknown_number', 'No organization uses this number');
  end if;
  if cardinality(orgs) > 1 then
    perform app_hidden.raise_error(409, 'number_ambiguous', 'More than one organization uses this number');
  end if;
  organization_id := orgs[1];
  select l.id into location_id from app_public.locations l
   where l.organization_id = orgs[1] and l.sms_number = number_owner.number
   order by l.created_at, l.id limit 1;
end $$;

ALTER FUNCTION app_hidden.number_owner(number text, OUT organization_id uuid, OUT location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION number_owner(number text, OUT organization_id uuid, OUT location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.number_owner(number text, OUT organization_id uuid, OUT location_id uuid) IS 'The organization (and location, when it is a location''s) of one of the service''s numbers; 404 unknown, 409 shared by organizations.';

--
-- Name: ops_message_counts(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.ops_message_counts() RETURNS TABLE(channel text, status text, n bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select m.channel, m.status, count(*) from app_private.outgoing_messages m group by 1, 2
$$;

ALTER FUNCTION app_hidden.ops_message_counts() OWNER TO svc_owner;

--
-- Name: FUNCTION ops_message_counts(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.ops_message_counts() IS 'Outgoing messages by channel and status, every organization (for /metrics).';

--
-- Name: queue_message(text, text, text, text, text, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text DEFAULT NULL::text, meta jsonb DEFAULT '{}'::jsonb) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  org app_public.organizations;
  message_id uuid;
begin
  select * into org from app_public.organizations where id = app_hidden.current_org_id();
  if not found then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  insert into app_private.outgoing_messages (organization_id, channel, sender, recipient, subject, body, meta)
  values (org.id, channel, coalesce(sender, case channel
            when 'email' then 'no-reply@' || coalesce(org.sending_email_domain, 'localhost')
            else org.default_sms_number end),
          recipient, subject, body, coalesce(meta, '{}'))
  returning id into message_id;
  perform app_private.add_job('deliver_message',
    jsonb_build_object('organization_id', org.id, 'message_id', message_id),
    job_key => 'message:' || message_id);
  return message_id;
end $$;

ALTER FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) IS 'Queues an email or SMS of the current organization and its delivery job, in the caller''s transaction.';

--
-- Name: delivery_enrollment_ended(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_enrollment_ended(org_id uuid, message_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  m app_private.outgoing_messages;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id;
  if m.meta->>'enrollment_id' is null
     or exists (select 1 from app_public.enrollments e where e.organization_id = org_id
                   and e.id = (m.meta->>'enrollment_id')::uuid and e.status in ('active', 'paused')) then
    return false;
  end if;
  update app_private.outgoing_messages x set status = 'failed', error = 'not sent: the enrollment ended while it was retried', next_attempt_at = null
   where x.organization_id = org_id and x.id = m.id and x.status = 'queued';
  update app_public.step_runs r set status = 'failed', reason = 'enrollment ended while retrying', updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = (m.meta->>'enrollment_id')::uuid and r.message_id = m.id and r.status = 'retrying';
  return true;
end $$;

ALTER FUNCTION app_private.delivery_enrollment_ended(org_id uuid, message_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_enrollment_ended(org_id uuid, message_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.delivery_enrollment_ended(org_id uuid, message_id uuid) IS 'Before a retry: whether the message belongs to an enrollment that has ended (cancelled, unsubscribed, completed) meanwhile; if so it is failed, never sent.';

--
-- Name: outgoing_messages; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.outgoing_messages (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    channel text NOT NULL,
    sender text,
    recipient text NOT NULL,
    subject text,
    body text NOT NULL,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sent_at timestamp with time zone,
    provider_id text,
    delivery_status text,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone,
    CONSTRAINT outgoing_messages_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'sms'::text]))),
    CONSTRAINT outgoing_messages_check CHECK (((channel <> 'email'::text) OR (subject IS NOT NULL))),
    CONSTRAINT outgoing_messages_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'sent'::text, 'failed'::text, 'unknown'::text])))
);

ALTER TABLE app_private.outgoing_messages OWNER TO svc_owner;

--
-- Name: TABLE outgoing_messages; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.outgoing_messages IS 'Every email and SMS the service decided to send; the deliver_message task hands each to its transport once.';

--
-- Name: COLUMN outgoing_messages.provider_id; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.outgoing_messages.provider_id IS 'The provider''s id of the message once it accepted it (Twilio''s MessageSid): status callbacks name it.';

--
-- Name: COLUMN outgoing_messages.delivery_status; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.outgoing_messages.delivery_status IS 'The provider''s last reported status (queued, sent, delivered, undelivered, failed; bounced, complained for email).';

--
-- Name: COLUMN outgoing_messages.attempts; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.outgoing_messages.attempts IS 'Deliveries refused for now (temporary failures) so far; error holds the last one''s reason.';

--
-- Name: COLUMN outgoing_messages.next_attempt_at; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON COLUMN app_private.outgoing_messages.next_attempt_at IS 'When a message refused for now is tried again (its deliver_message job runs then).';

--
-- Name: delivery_message_event(app_private.outgoing_messages, text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  ev_id bigint;
  enrollment uuid := case when om.meta ? 'enrollment_id' then (om.meta->>'enrollment_id')::uuid end;
  -- a provider that could not deliver (Twilio's `undelivered` and `failed`, a `failed` report) is
  -- the enrollment's `failed` after `sent`; `bounced` is an email bounce
  enrollment_event text := case type when 'delivered' then 'delivered' when 'undelivered' then 'failed'
                                     when 'failed' then 'failed' when 'bounced' then 'bounced'
                                     when 'opened' then 'opened' when 'clicked' then 'clicked'
                                     -- an out-of-office answer: shown, never a reply (353-delivery-auto-replies.sql)
                                     when 'auto_replied' then 'auto_replied' end;
  hard boolean := om.channel = 'email' and (type = 'complained' or (type = 'bounced' and detail->>'bounce' = 'hard'));
  holder uuid;
begin
  if type is null or type not in ('queued', 'sent', 'delivered', 'undelivered', 'failed', 'bounced', 'complained', 'auto_replied',
                                  'opened', 'clicked') then
    perform app_hidden.raise_error(400, 'bad_request', 'Unknown delivery event');
  end if;
  -- either the same provider key again or the same kind of report for this message: nothing new
  insert into app_private.delivery_events (organization_id, message_id, event_key, type, detail)
  values (om.organization_id, om.id, delivery_message_event.event_key, delivery_message_event.type,
          coalesce(delivery_message_event.detail, '{}'))
  on conflict do nothing
  returning id into ev_id;
  if ev_id is null then
    return jsonb_build_object('known', true, 'recorded', false, 'duplicate', true, 'message_id', om.id);
  end if;
  if type not in ('auto_replied', 'opened', 'clicked')
     and not (type in ('queued', 'sent') and om.delivery_status in ('delivered', 'undelivered', 'failed', 'bounced', 'complained')) then
    update app_private.outgoing_messages m set delivery_status = delivery_message_event.type
     where m.organization_id = om.organization_id and m.id = om.id;
  end if;
  if enrollment_event is not null and enrollment is not null then
    -- a soft bounce then a hard one: one `bounced` event (enrollment_events_once_per_message)
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
    select om.organization_id, e.id, enrollment_event, om.meta->>'step_key', om.id,
           case when enrollment_event = 'bounced'
                then left(concat_ws(': ', detail->>'bounce', coalesce(detail->>'reason', type)), 500)
                when enrollment_event = 'failed' then left(coalesce(detail->>'reason', detail->>'error_code', type), 500) end
      from app_public.enrollments e
     where e.organization_id = om.organization_id and e.id = enrollment
    on conflict do nothing;
  end if;
  if hard then
    if type = 'bounced' and enrollment is not null then
      perform app_private.end_enrollments(om.organization_id, array[enrollment], 'failed', 'hard_bounce');
    end if;
    select c.id into holder from app_public.contacts c
     where c.organization_id = om.organization_id and c.email_key = lower(om.recipient) order by c.created_at, c.id limit 1;
    if holder is not null then
      insert into app_public.email_suppressions (organization_id, email, contact_id, source)
      values (om.organization_id, lower(om.recipient), holder, case when type = 'complained' then 'complaint' else 'bounce' end)
      on conflict do nothing;
    end if;
  end if;
  return jsonb_build_object('known', true, 'recorded', true, 'duplicate', false, 'message_id', om.id,
    'organization_id', om.organization_id, 'type', type, 'suppressed', hard and holder is not null);
end $$;

ALTER FUNCTION app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb) IS 'A provider''s report about one message, once per event key and once per kind (delivery_events_once_per_kind): delivery_status, the enrollment''s delivered/bounced/failed/opened/clicked event (once per message), and for a hard bounce or complaint the address suppressed (a hard bounce also fails the enrollment).';

--
-- Name: delivery_retry(uuid, uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_retry(org_id uuid, message_id uuid, error text) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  m app_private.outgoing_messages;
  at timestamptz;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id for update;
  if not found or m.status <> 'queued' then
    return null;
  end if;
  at := app_private.delivery_retry_at(m.attempts + 1, m.created_at);
  update app_private.outgoing_messages x
     set attempts = x.attempts + 1, error = left(delivery_retry.error, 1000), next_attempt_at = at,
         status = case when at is null then 'failed' else x.status end
   where x.organization_id = org_id and x.id = m.id;
  if at is null then
    perform app_private.delivery_settle(org_id, m.id, 'gave up after ' || (m.attempts + 1) || ' attempts: ' || left(delivery_retry.error, 400));
  else
    perform app_private.add_job('deliver_message', jsonb_build_object('organization_id', org_id, 'message_id', m.id), 'message:' || m.id, at);
  end if;
  return at;
end $$;

ALTER FUNCTION app_private.delivery_retry(org_id uuid, message_id uuid, error text) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_retry(org_id uuid, message_id uuid, error text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.delivery_retry(org_id uuid, message_id uuid, error text) IS 'A queued message refused for now: attempts and last error kept, its deliver_message job queued for the next attempt of the retry schedule; past the schedule''s lifetime, failed (and settled). Answers the next attempt, or NULL.';

--
-- Name: delivery_retry_at(integer, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_retry_at(attempts integer, queued_at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select case when now() < queued_at + make_interval(secs => s.lifetime_seconds)
              then now() + make_interval(secs => least(s.max_seconds, s.first_seconds * power(2, least(greatest(attempts, 1) - 1, 20))))
         end
    from app_private.delivery_retry_settings s
$$;

ALTER FUNCTION app_private.delivery_retry_at(attempts integer, queued_at timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_retry_at(attempts integer, queued_at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.delivery_retry_at(attempts integer, queued_at timestamp with time zone) IS 'When a message refused for now `attempts` times is tried again; NULL once its lifetime (from queued_at) has passed.';

--
-- Name: delivery_retry_later(uuid, uuid, text, uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_retry_later(org_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_public.step_runs r set status = 'retrying', reason = left(error, 500), updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = delivery_retry_later.enrollment_id
     and r.step_key = delivery_retry_later.step_key and r.message_id = delivery_retry_later.message_id and r.status = 'sending';
  if found then
    perform app_private.delivery_retry(org_id, message_id, error);
  end if;
end $$;

ALTER FUNCTION app_private.delivery_retry_later(org_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_retry_later(org_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.delivery_retry_later(org_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text) IS 'A sequence or broadcast message refused for now: its step run retrying (the enrollment stays on the step) and the message handed to the delivery queue''s retries.';

--
-- Name: delivery_set_provider_id(uuid, uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_set_provider_id(org uuid, message_id uuid, provider_id text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update app_private.outgoing_messages m set provider_id = delivery_set_provider_id.provider_id
   where m.organization_id = org and m.id = message_id
$$;

ALTER FUNCTION app_private.delivery_set_provider_id(org uuid, message_id uuid, provider_id text) OWNER TO svc_owner;

--
-- Name: delivery_settle(uuid, uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.delivery_settle(org_id uuid, message_id uuid, error text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  m app_private.outgoing_messages;
  sr app_public.step_runs;
  e app_public.enrollments;
begin
  select * into m from app_private.outgoing_messages x where x.organization_id = org_id and x.id = message_id;
  if not found or m.meta->>'enrollment_id' is null then
    return;
  end if;
  update app_public.step_runs r
     set status = case when error is null then 'sent' else 'failed' end, reason = left(error, 500), updated_at = now()
   where r.organization_id = org_id and r.enrollment_id = (m.meta->>'enrollment_id')::uuid and r.step_key = m.meta->>'step_key'
     and r.message_id = m.id and r.status = 'retrying'
  returning * into sr;
  if not found then
    return;
  end if;
  select * into e from app_public.enrollments x where x.organization_id = org_id and x.id = sr.enrollment_id for update;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
  values (org_id, sr.enrollment_id, case when error is null then 'sent' else 'failed' end, sr.step_key, m.id,
          case when error is not null then 'transport_error' end);
  if e.status = 'active' and e.current_step_key = sr.step_key then
    perform app_private.advance_enrollment(org_id, e.id);
  end if;
  if e.run_id is not null then
    update app_public.broadcast_runs r
       set sent = r.sent + (error is null)::int, failed = r.failed + (error is not null)::int, progress_at = now()
     where r.organization_id = org_id and r.id = e.run_id;
    -- the run's job ends it once nothing of it is left retrying (app_private.broadcast_finish)
    perform app_private.add_job('broadcast_run', jsonb_build_object('organization_id', org_id, 'run_id', e.run_id),
      'broadcast_run:' || e.run_id, now());
  end if;
end $$;

ALTER FUNCTION app_private.delivery_settle(org_id uuid, message_id uuid, error text) OWNER TO svc_owner;

--
-- Name: FUNCTION delivery_settle(org_id uuid, message_id uuid, error text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.delivery_settle(org_id uuid, message_id uuid, error text) IS 'A message the delivery queue retried is done (sent, or failed with error): its retrying step run recorded, the enrollment moved on, its broadcast run counted and its job queued to end the run.';

--
-- Name: email_auto_reply_subject(text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.email_auto_reply_subject(subject text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.email_auto_reply_subject(subject text) OWNER TO svc_owner;

--
-- Name: FUNCTION email_auto_reply_subject(subject text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.email_auto_reply_subject(subject text) IS 'Whether an email''s subject is one mail clients give an automatic answer (Automatic reply, Auto-Reply, Out of Office, Abwesenheitsnotiz, Réponse automatique, Respuesta automática, …): an auto-reply, never a reply.';

--
-- Name: email_from_name(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.email_from_name(org uuid, message_id uuid) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select coalesce((select nullif(btrim(p.name), '') || ', ' || o.name
                     from app_public.conversation_messages m
                     join app_public.people p on p.organization_id = m.organization_id and p.id = m.author_person_id
                    where m.organization_id = org and m.id = email_from_name.message_id and m.author = 'person'),
                  o.name)
    from app_public.organizations o where o.id = org
$$;

ALTER FUNCTION app_private.email_from_name(org uuid, message_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION email_from_name(org uuid, message_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.email_from_name(org uuid, message_id uuid) IS 'The display name of an email''s From: "<person>, <organization>" for a person''s reply in a conversation, else the organization''s name.';

--
-- Name: send_refusal(uuid, text, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.send_refusal(organization_id uuid, channel text, address text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if address is null or address = '' then
    return 'missing_address';
  end if;
  if channel = 'email' then
    if exists (select 1 from app_public.email_suppressions s
                where s.organization_id = send_refusal.organization_id and s.email = lower(address)) then
      return 'suppressed';
    end if;
  else
    if exists (select 1 from app_public.sms_opt_outs o
                where o.organization_id = send_refusal.organization_id and o.phone = address and o.ended_at is null) then
      return 'opted_out';
    end if;
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.send_refusal(organization_id uuid, channel text, address text) OWNER TO svc_owner;

--
-- Name: FUNCTION send_refusal(organization_id uuid, channel text, address text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.send_refusal(organization_id uuid, channel text, address text) IS 'Why an email or SMS may not go to this address now (missing_address, suppressed, opted_out), or NULL. SMS consent is the contact''s and checked beside it.';

--
-- Name: tg_outgoing_messages__conversation_status(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_outgoing_messages__conversation_status() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update app_public.conversation_messages m set status = new.status, error = new.error
   where m.organization_id = new.organization_id and m.id = new.id and m.direction = 'outbound'
     and (m.status, m.error) is distinct from (new.status, new.error);
  return null;
end $$;

ALTER FUNCTION app_private.tg_outgoing_messages__conversation_status() OWNER TO svc_owner;

--
-- Name: delivery_events; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.delivery_events (
    id bigint NOT NULL,
    organization_id uuid NOT NULL,
    message_id uuid NOT NULL,
    event_key text NOT NULL,
    type text NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT delivery_events_event_key_check CHECK (((length(event_key) >= 1) AND (length(event_key) <= 400))),
    CONSTRAINT delivery_events_type_check CHECK ((type = ANY (ARRAY['queued'::text, 'sent'::text, 'delivered'::text, 'undelivered'::text, 'failed'::text, 'bounced'::text, 'complained'::text, 'auto_replied'::text, 'opened'::text, 'clicked'::text])))
);

ALTER TABLE app_private.delivery_events OWNER TO svc_owner;

--
-- Name: TABLE delivery_events; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.delivery_events IS 'Delivery reports from providers (status callbacks, bounces, complaints), each recorded once by its provider key.';

--
-- Name: delivery_events_id_seq; Type: SEQUENCE; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.delivery_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.delivery_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: delivery_retry_settings; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.delivery_retry_settings (
    only_row boolean DEFAULT true NOT NULL,
    first_seconds integer DEFAULT 60 NOT NULL,
    max_seconds integer DEFAULT 3600 NOT NULL,
    lifetime_seconds integer DEFAULT 432000 NOT NULL,
    CONSTRAINT delivery_retry_settings_first_seconds_check CHECK ((first_seconds > 0)),
    CONSTRAINT delivery_retry_settings_lifetime_seconds_check CHECK ((lifetime_seconds > 0)),
    CONSTRAINT delivery_retry_settings_max_seconds_check CHECK ((max_seconds > 0)),
    CONSTRAINT delivery_retry_settings_only_row_check CHECK (only_row)
);

ALTER TABLE app_private.delivery_retry_settings OWNER TO svc_owner;

--
-- Name: TABLE delivery_retry_settings; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.delivery_retry_settings IS 'The retry schedule of temporary delivery failures (one row): first wait, doubling up to max_seconds, for lifetime_seconds after the message was queued (default 1 minute, 1 hour, 5 days).';

--
-- Name: outbox; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.outbox (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    channel text NOT NULL,
    sender text,
    recipient text NOT NULL,
    subject text,
    body text NOT NULL,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT outbox_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'sms'::text])))
);

ALTER TABLE app_private.outbox OWNER TO svc_owner;

--
-- Name: TABLE outbox; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.outbox IS 'Every email and SMS handed to the local delivery sink (EMAIL_TRANSPORT/SMS_TRANSPORT = sink).';

--
-- Name: delivery_events delivery_events_event_key_key; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_events
    ADD CONSTRAINT delivery_events_event_key_key UNIQUE (event_key);

--
-- Name: delivery_events delivery_events_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_events
    ADD CONSTRAINT delivery_events_pkey PRIMARY KEY (id);

--
-- Name: delivery_retry_settings delivery_retry_settings_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_retry_settings
    ADD CONSTRAINT delivery_retry_settings_pkey PRIMARY KEY (only_row);

--
-- Name: outbox outbox_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (organization_id, id);

--
-- Name: outgoing_messages outgoing_messages_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.outgoing_messages
    ADD CONSTRAINT outgoing_messages_pkey PRIMARY KEY (organization_id, id);

--
-- Name: delivery_events_by_message; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX delivery_events_by_message ON app_private.delivery_events USING btree (organization_id, message_id, id);

--
-- Name: delivery_events_once_per_kind; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE UNIQUE INDEX delivery_events_once_per_kind ON app_private.delivery_events USING btree (organization_id, message_id, type, COALESCE((detail ->> 'bounce'::text), ''::text));

--
-- Name: outbox_org_created; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX outbox_org_created ON app_private.outbox USING btree (organization_id, created_at);

--
-- Name: outgoing_messages_by_id; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX outgoing_messages_by_id ON app_private.outgoing_messages USING btree (id);

--
-- Name: outgoing_messages_provider_id; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE UNIQUE INDEX outgoing_messages_provider_id ON app_private.outgoing_messages USING btree (provider_id) WHERE (provider_id IS NOT NULL);

--
-- Name: outgoing_messages _700_conversation_status; Type: TRIGGER; Schema: app_private; Owner: svc_owner
--

CREATE TRIGGER _700_conversation_status AFTER UPDATE OF status, error ON app_private.outgoing_messages FOR EACH ROW WHEN ((new.meta ? 'conversation_id'::text)) EXECUTE FUNCTION app_private.tg_outgoing_messages__conversation_status();

--
-- Name: delivery_events delivery_events_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_events
    ADD CONSTRAINT delivery_events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: delivery_events delivery_events_organization_id_message_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.delivery_events
    ADD CONSTRAINT delivery_events_organization_id_message_id_fkey FOREIGN KEY (organization_id, message_id) REFERENCES app_private.outgoing_messages(organization_id, id) ON DELETE CASCADE;

--
-- Name: outbox outbox_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.outbox
    ADD CONSTRAINT outbox_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: outgoing_messages outgoing_messages_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.outgoing_messages
    ADD CONSTRAINT outgoing_messages_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: delivery_events; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.delivery_events ENABLE ROW LEVEL SECURITY;

--
-- Name: delivery_retry_settings; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.delivery_retry_settings ENABLE ROW LEVEL SECURITY;

--
-- Name: outbox; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.outbox ENABLE ROW LEVEL SECURITY;

--
-- Name: outgoing_messages; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.outgoing_messages ENABLE ROW LEVEL SECURITY;

--
-- Name: FUNCTION delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_inbound_email(to_address text, from_address text, subject text, body text, in_reply_to text, provider_id text, auto_reply boolean) TO svc_request;

--
-- Name: FUNCTION delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_inbound_sms(to_number text, from_number text, body text, provider_id text, owner_check boolean) TO svc_request;

--
-- Name: FUNCTION delivery_note_provider_id(message_id uuid, provider_id text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_note_provider_id(message_id uuid, provider_id text) TO svc_request;

--
-- Name: FUNCTION delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_record_event(provider_id text, message_id uuid, event_key text, type text, detail jsonb) TO svc_request;

--
-- Name: FUNCTION delivery_reply_address_known(address text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.delivery_reply_address_known(address text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.delivery_reply_address_known(address text) TO svc_request;

--
-- Name: FUNCTION number_owner(number text, OUT organization_id uuid, OUT location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.number_owner(number text, OUT organization_id uuid, OUT location_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION ops_message_counts(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.ops_message_counts() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.ops_message_counts() TO svc_worker;

--
-- Name: FUNCTION queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.queue_message(channel text, recipient text, subject text, body text, sender text, meta jsonb) TO svc_worker;

--
-- Name: FUNCTION delivery_enrollment_ended(org_id uuid, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_enrollment_ended(org_id uuid, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_message_event(om app_private.outgoing_messages, event_key text, type text, detail jsonb) FROM PUBLIC;

--
-- Name: FUNCTION delivery_retry(org_id uuid, message_id uuid, error text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_retry(org_id uuid, message_id uuid, error text) FROM PUBLIC;

--
-- Name: FUNCTION delivery_retry_at(attempts integer, queued_at timestamp with time zone); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_retry_at(attempts integer, queued_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION delivery_retry_later(org_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_retry_later(org_id uuid, enrollment_id uuid, step_key text, message_id uuid, error text) FROM PUBLIC;

--
-- Name: FUNCTION delivery_set_provider_id(org uuid, message_id uuid, provider_id text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_set_provider_id(org uuid, message_id uuid, provider_id text) FROM PUBLIC;

--
-- Name: FUNCTION delivery_settle(org_id uuid, message_id uuid, error text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.delivery_settle(org_id uuid, message_id uuid, error text) FROM PUBLIC;

--
-- Name: FUNCTION email_auto_reply_subject(subject text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.email_auto_reply_subject(subject text) FROM PUBLIC;

--
-- Name: FUNCTION email_from_name(org uuid, message_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.email_from_name(org uuid, message_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION send_refusal(organization_id uuid, channel text, address text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.send_refusal(organization_id uuid, channel text, address text) FROM PUBLIC;

--
-- Name: FUNCTION tg_outgoing_messages__conversation_status(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_outgoing_messages__conversation_status() FROM PUBLIC;
