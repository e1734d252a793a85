-- db/schema/webhooks.sql: what src/webhooks/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: webhook_appointment_data(app_public.appointments); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_appointment_data(a app_public.appointments) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('id', a.id, 'location_id', a.location_id, 'calendar_id', a.calendar_id,
    'team_member_id', a.staff_profile_id, 'offering_id', a.offering_id, 'contact_id', a.contact_id,
    'title', a.title, 'start_time', a.starts_at, 'end_time', a.ends_at, 'recurring', a.rrule is not null,
    'status', a.status, 'cancelled_at', a.cancelled_at,
    'attendee_name', a.attendee_name, 'attendee_phone', a.attendee_phone, 'attendee_email', a.attendee_email)
$$;

ALTER FUNCTION app_private.webhook_appointment_data(a app_public.appointments) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_appointment_data(a app_public.appointments); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_appointment_data(a app_public.appointments) IS 'The data of the appointment.booked and appointment.cancelled webhook events.';

--
-- Name: webhook_contact_data(app_public.contacts); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_contact_data(c app_public.contacts) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone, 'stage_id', c.stage_id,
    'custom_fields', c.field_values, 'sms_consent', c.sms_consent, 'created_at', c.created_at, 'updated_at', c.updated_at)
$$;

ALTER FUNCTION app_private.webhook_contact_data(c app_public.contacts) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_contact_data(c app_public.contacts); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_contact_data(c app_public.contacts) IS 'The data of a contact.created or contact.updated event.';

--
-- Name: webhook_emit(uuid, text, timestamp with time zone, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  d record;
begin
  for d in
    insert into app_public.webhook_deliveries (organization_id, subscription_id, event, occurred_at, data)
    select s.organization_id, s.id, webhook_emit.event, webhook_emit.occurred_at, webhook_emit.data
      from app_public.webhook_subscriptions s
     where s.organization_id = webhook_emit.organization_id and s.status = 'active' and webhook_emit.event = any(s.events)
    -- a subscription being removed is passed over: its delivery's foreign key would wait for the
    -- removal and then fail the customer's write (key share is what that key's check takes anyway)
    for key share of s skip locked
    returning webhook_deliveries.organization_id, webhook_deliveries.id
  loop
    perform app_private.add_job('webhook_deliver', jsonb_build_object('organization_id', d.organization_id, 'delivery_id', d.id),
      'webhook:' || d.id);
  end loop;
end $$;

ALTER FUNCTION app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) IS 'An event of the organization: a delivery, and its job, for each active subscription that takes it, in the caller''s transaction.';

--
-- Name: webhook_subscriptions; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.webhook_subscriptions (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    disabled_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_subscriptions_check CHECK (((status = 'disabled'::text) = (disabled_reason IS NOT NULL))),
    CONSTRAINT webhook_subscriptions_disabled_reason_check CHECK ((length(disabled_reason) <= 200)),
    CONSTRAINT webhook_subscriptions_events_check CHECK ((((cardinality(events) >= 1) AND (cardinality(events) <= 8)) AND (array_position(events, NULL::text) IS NULL) AND (events <@ ARRAY['contact.created'::text, 'contact.updated'::text, 'enrollment.completed'::text, 'appointment.booked'::text, 'appointment.cancelled'::text, 'message.received'::text, 'form.submitted'::text, 'conversation.handed_over'::text]))),
    CONSTRAINT webhook_subscriptions_status_check CHECK ((status = ANY (ARRAY['active'::text, 'disabled'::text]))),
    CONSTRAINT webhook_subscriptions_url_check CHECK (((length(url) <= 2000) AND (url ~ '^https?://[^/?#\s]+([/?#]\S*)?$'::text)))
);

ALTER TABLE app_public.webhook_subscriptions OWNER TO svc_owner;

--
-- Name: TABLE webhook_subscriptions; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.webhook_subscriptions IS 'An URL of an integration that receives the organization''s events it lists, signed (Standard Webhooks). Disabled when the receiver answers 410 Gone.';

--
-- Name: COLUMN webhook_subscriptions.events; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.webhook_subscriptions.events IS 'The event types delivered: contact.created, contact.updated, enrollment.completed, appointment.booked, appointment.cancelled, message.received, form.submitted.';

--
-- Name: webhook_subscribe(uuid, text, text[], text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text) RETURNS app_public.webhook_subscriptions
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  s app_public.webhook_subscriptions;
begin
  insert into app_public.webhook_subscriptions (organization_id, url, events)
  values (webhook_subscribe.organization_id, webhook_subscribe.url,
          array(select distinct e from unnest(webhook_subscribe.events) e order by e))
  returning * into s;
  insert into app_private.webhook_secrets (organization_id, subscription_id, secret)
  values (s.organization_id, s.id, webhook_subscribe.secret);
  return s;
end $$;

ALTER FUNCTION app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_subscribe(organization_id uuid, url text, events text[], secret text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text) IS 'Adds a subscription with its signing secret; events after the commit are delivered to it.';

--
-- Name: webhook_unsubscribe(uuid, uuid); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  -- its secret and deliveries go with it: a delivery job that runs later finds nothing to send
  delete from app_public.webhook_subscriptions s
   where s.organization_id = webhook_unsubscribe.organization_id and s.id = webhook_unsubscribe.subscription_id;
  return found;
end $$;

ALTER FUNCTION app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_unsubscribe(organization_id uuid, subscription_id uuid); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) IS 'Removes a subscription, its secret and its deliveries: nothing more is sent to it, pending retries included.';

--
-- Name: webhook_wanted(uuid, text); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.webhook_wanted(organization_id uuid, event text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
begin
  return exists (select 1 from app_public.webhook_subscriptions s
                  where s.organization_id = webhook_wanted.organization_id and s.status = 'active'
                    and webhook_wanted.event = any(s.events));
end $$;

ALTER FUNCTION app_private.webhook_wanted(organization_id uuid, event text) OWNER TO svc_owner;

--
-- Name: FUNCTION webhook_wanted(organization_id uuid, event text); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.webhook_wanted(organization_id uuid, event text) IS 'Whether some active subscription of the organization takes the event: triggers ask before building an event''s data.';

--
-- Name: webhook_secrets; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE TABLE app_private.webhook_secrets (
    organization_id uuid NOT NULL,
    subscription_id uuid NOT NULL,
    secret text NOT NULL,
    CONSTRAINT webhook_secrets_secret_check CHECK ((secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'::text))
);

ALTER TABLE app_private.webhook_secrets OWNER TO svc_owner;

--
-- Name: TABLE webhook_secrets; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.webhook_secrets IS 'The signing secret of a subscription (whsec_ + 32 random bytes in base64, as Standard Webhooks writes it). Kept raw, since signing needs it; only svc_owner (the worker, operator commands, definer functions) reads it.';

--
-- Name: webhook_deliveries; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.webhook_deliveries (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    subscription_id uuid NOT NULL,
    event text NOT NULL,
    occurred_at timestamp with time zone NOT NULL,
    data jsonb NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now(),
    last_status integer,
    last_error text,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_deliveries_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT webhook_deliveries_check CHECK (((status = 'pending'::text) = (next_attempt_at IS NOT NULL))),
    CONSTRAINT webhook_deliveries_check1 CHECK (((status = 'delivered'::text) = (delivered_at IS NOT NULL))),
    CONSTRAINT webhook_deliveries_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT webhook_deliveries_last_error_check CHECK ((length(last_error) <= 1000)),
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text, 'cancelled'::text])))
);

ALTER TABLE app_public.webhook_deliveries OWNER TO svc_owner;

--
-- Name: TABLE webhook_deliveries; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.webhook_deliveries IS 'One event for one subscription: its body is {type: event, timestamp: occurred_at, data}, its webhook-id msg_<id> on every attempt. pending until a 2xx (delivered), a 410 or three days of failures (failed), or its subscription disabled (cancelled).';

--
-- Name: webhook_secrets webhook_secrets_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.webhook_secrets
    ADD CONSTRAINT webhook_secrets_pkey PRIMARY KEY (organization_id, subscription_id);

--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (organization_id, id);

--
-- Name: webhook_subscriptions webhook_subscriptions_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.webhook_subscriptions
    ADD CONSTRAINT webhook_subscriptions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: webhook_deliveries_by_subscription; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX webhook_deliveries_by_subscription ON app_public.webhook_deliveries USING btree (organization_id, subscription_id, created_at DESC);

--
-- Name: webhook_secrets webhook_secrets_organization_id_subscription_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.webhook_secrets
    ADD CONSTRAINT webhook_secrets_organization_id_subscription_id_fkey FOREIGN KEY (organization_id, subscription_id) REFERENCES app_public.webhook_subscriptions(organization_id, id) ON DELETE CASCADE;

--
-- Name: webhook_deliveries webhook_deliveries_organization_id_subscription_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_organization_id_subscription_id_fkey FOREIGN KEY (organization_id, subscription_id) REFERENCES app_public.webhook_subscriptions(organization_id, id) ON DELETE CASCADE;

--
-- Name: webhook_subscriptions webhook_subscriptions_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.webhook_subscriptions
    ADD CONSTRAINT webhook_subscriptions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: webhook_secrets; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.webhook_secrets ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_deliveries select_org_admin; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_org_admin ON app_public.webhook_deliveries FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT COALESCE((app_hidden."current_role"() = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text])), false) AS "coalesce")));

--
-- Name: webhook_subscriptions select_org_admin; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_org_admin ON app_public.webhook_subscriptions FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND ( SELECT COALESCE((app_hidden."current_role"() = ANY (ARRAY['organization'::text, 'owner'::text, 'admin'::text])), false) AS "coalesce")));

--
-- Name: webhook_deliveries; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.webhook_deliveries ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_subscriptions; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.webhook_subscriptions ENABLE ROW LEVEL SECURITY;

--
-- Name: FUNCTION webhook_appointment_data(a app_public.appointments); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_appointment_data(a app_public.appointments) FROM PUBLIC;

--
-- Name: FUNCTION webhook_contact_data(c app_public.contacts); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_contact_data(c app_public.contacts) FROM PUBLIC;

--
-- Name: FUNCTION webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_emit(organization_id uuid, event text, occurred_at timestamp with time zone, data jsonb) FROM PUBLIC;

--
-- Name: TABLE webhook_subscriptions; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.webhook_subscriptions TO svc_request;
GRANT SELECT ON TABLE app_public.webhook_subscriptions TO svc_worker;
GRANT SELECT ON TABLE app_public.webhook_subscriptions TO svc_analyst;

--
-- Name: FUNCTION webhook_subscribe(organization_id uuid, url text, events text[], secret text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_subscribe(organization_id uuid, url text, events text[], secret text) FROM PUBLIC;

--
-- Name: FUNCTION webhook_unsubscribe(organization_id uuid, subscription_id uuid); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_unsubscribe(organization_id uuid, subscription_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION webhook_wanted(organization_id uuid, event text); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.webhook_wanted(organization_id uuid, event text) FROM PUBLIC;

--
-- Name: TABLE webhook_deliveries; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.webhook_deliveries TO svc_request;
GRANT SELECT ON TABLE app_public.webhook_deliveries TO svc_worker;
GRANT SELECT ON TABLE app_public.webhook_deliveries TO svc_analyst;
