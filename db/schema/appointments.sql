-- db/schema/appointments.sql: what src/appointments/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

--
-- Name: appointments; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.appointments (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    kind text DEFAULT 'appointment'::text NOT NULL,
    location_id uuid NOT NULL,
    staff_profile_id uuid,
    calendar_id uuid,
    offering_id uuid,
    contact_id uuid,
    title text,
    description text,
    attendee_name text,
    attendee_phone text,
    attendee_email text,
    attendee_notes text,
    service_address jsonb,
    starts_at timestamp with time zone NOT NULL,
    ends_at timestamp with time zone NOT NULL,
    during tstzrange GENERATED ALWAYS AS (tstzrange(starts_at, ends_at, '[)'::text)) STORED,
    status text DEFAULT 'booked'::text NOT NULL,
    cancelled_at timestamp with time zone,
    rrule text,
    recurrence_ends_on date,
    created_by uuid,
    created_by_credential uuid,
    source text DEFAULT 'api'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT appointments_attendee_email_check CHECK ((length(attendee_email) <= 320)),
    CONSTRAINT appointments_attendee_name_check CHECK ((length(attendee_name) <= 200)),
    CONSTRAINT appointments_attendee_notes_check CHECK ((length(attendee_notes) <= 10000)),
    CONSTRAINT appointments_attendee_phone_check CHECK ((attendee_phone ~ '^\+[1-9][0-9]{6,14}$'::text)),
    CONSTRAINT appointments_check CHECK ((ends_at > starts_at)),
    CONSTRAINT appointments_check1 CHECK (((staff_profile_id IS NULL) OR (calendar_id IS NULL))),
    CONSTRAINT appointments_check2 CHECK (((kind = 'appointment'::text) = (contact_id IS NOT NULL))),
    CONSTRAINT appointments_check3 CHECK (((status = 'cancelled'::text) = (cancelled_at IS NOT NULL))),
    CONSTRAINT appointments_check4 CHECK (((rrule IS NOT NULL) OR (recurrence_ends_on IS NULL))),
    CONSTRAINT appointments_description_check CHECK ((length(description) <= 10000)),
    CONSTRAINT appointments_kind_check CHECK ((kind = ANY (ARRAY['appointment'::text, 'block'::text]))),
    CONSTRAINT appointments_rrule_check CHECK ((length(rrule) <= 500)),
    CONSTRAINT appointments_service_address_check CHECK (((service_address IS NULL) OR (jsonb_typeof(service_address) = 'object'::text))),
    CONSTRAINT appointments_source_check CHECK ((source = ANY (ARRAY['api'::text, 'fixture'::text]))),
    CONSTRAINT appointments_status_check CHECK ((status = ANY (ARRAY['booked'::text, 'cancelled'::text]))),
    CONSTRAINT appointments_title_check CHECK ((length(title) <= 500))
);

ALTER TABLE app_public.appointments OWNER TO svc_owner;

--
-- Name: TABLE appointments; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.appointments IS 'A booking (kind appointment: a contact with a team member or a calendar at a location) or a block (time off of a location or of one team member). A repeating series is one row with rrule; its occurrences are in app_public.appointment_occurrences. Cancelled rows stay, left out of lists.';

--
-- Name: COLUMN appointments.during; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.appointments.during IS 'The booked range [starts_at, ends_at): what the exclusion constraints compare.';

--
-- Name: appointment_for_change(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.appointment_for_change(appointment_id uuid) RETURNS app_public.appointments
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.appointments;
begin
  select * into a from app_public.appointments x
   where x.organization_id = app_hidden.current_org_id() and x.id = appointment_id
   for update;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Appointment not found');
  end if;
  if a.staff_profile_id is not null then
    if not app_hidden.current_may_book_team_member(a.staff_profile_id) then
      perform app_hidden.raise_error(403, 'insufficient_role', 'This credential may not change appointments of this team member');
    end if;
  elsif a.kind = 'block' and a.calendar_id is null then
    if app_hidden.current_role() not in ('owner', 'admin', 'organization') then
      perform app_hidden.raise_error(403, 'insufficient_role', 'Only an owner, an admin or an organization key may change a location-wide block');
    end if;
  end if;
  if a.rrule is not null then
    perform app_hidden.raise_error(409, 'recurring_series_not_supported',
      'This is a repeating series; the API cannot change one (change it where it was set up)');
  end if;
  return a;
end $$;

ALTER FUNCTION app_hidden.appointment_for_change(appointment_id uuid) OWNER TO svc_owner;

--
-- Name: appointment_json(app_public.appointments, timestamp with time zone); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select jsonb_build_object(
    'id', a.id,
    'kind', a.kind,
    'recurring', a.rrule is not null,
    'occurrence_start', case when a.rrule is not null then coalesce(occurrence_start, a.starts_at) end,
    'location_id', a.location_id,
    'team_member_id', a.staff_profile_id,
    'calendar_id', a.calendar_id,
    'offering_id', a.offering_id,
    'contact_id', a.contact_id,
    'title', a.title,
    'description', a.description,
    'attendee_name', a.attendee_name,
    'attendee_phone', a.attendee_phone,
    'attendee_email', a.attendee_email,
    'attendee_notes', a.attendee_notes,
    'service_address', a.service_address,
    'start_time', case when a.rrule is not null and occurrence_start is not null then occurrence_start else a.starts_at end,
    'end_time', case when a.rrule is not null and occurrence_start is not null
                     then occurrence_start + (a.ends_at - a.starts_at) else a.ends_at end,
    'status', a.status,
    'rrule', a.rrule,
    'recurrence_ends_on', a.recurrence_ends_on,
    'created_at', a.created_at,
    'updated_at', a.updated_at)
$$;

ALTER FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION appointment_json(a app_public.appointments, occurrence_start timestamp with time zone); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) IS 'An appointment (or one occurrence of a repeating series) as the API answers it.';

--
-- Name: availability_keep(uuid, uuid, date, text, tstzrange, timestamp with time zone, pg_snapshot, jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.availability_keep(org uuid, location_id uuid, day date, variant text, within tstzrange, made_at timestamp with time zone, snap pg_snapshot, answer jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  insert into app_private.availability_answers as a (organization_id, location_id, day, variant, within, made_at, snap, answer)
  values (org, location_id, day, variant, within, made_at, snap, answer)
  on conflict on constraint availability_answers_pkey do update
    set within = excluded.within, made_at = excluded.made_at, snap = excluded.snap, answer = excluded.answer
    where a.made_at <= excluded.made_at;
end $$;

ALTER FUNCTION app_hidden.availability_keep(org uuid, location_id uuid, day date, variant text, within tstzrange, made_at timestamp with time zone, snap pg_snapshot, answer jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION availability_keep(org uuid, location_id uuid, day date, variant text, within tstzrange, made_at timestamp with time zone, snap pg_snapshot, answer jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.availability_keep(org uuid, location_id uuid, day date, variant text, within tstzrange, made_at timestamp with time zone, snap pg_snapshot, answer jsonb) IS 'Keeps an availability answer with the snapshot it was computed under (the later of two for one question).';

--
-- Name: availability_kept(uuid, uuid, date, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.availability_kept(org uuid, location_id uuid, day date, variant text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
begin
  return (select a.answer
            from app_private.availability_answers a
           where a.organization_id = org and a.location_id = availability_kept.location_id
             and a.day = availability_kept.day and a.variant = availability_kept.variant
             -- the clock read after this statement's snapshot: a prune it sees ran before it
             and a.made_at > clock_timestamp() - app_hidden.availability_ttl()
             -- no committed change over the day that its snapshot did not see
             and not exists (select 1 from app_private.availability_changes c
                              where c.organization_id = org and c.during && a.within
                                and not pg_visible_in_snapshot(c.xid, a.snap)));
end $$;

ALTER FUNCTION app_hidden.availability_kept(org uuid, location_id uuid, day date, variant text) OWNER TO svc_owner;

--
-- Name: FUNCTION availability_kept(org uuid, location_id uuid, day date, variant text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.availability_kept(org uuid, location_id uuid, day date, variant text) IS 'A kept availability answer that is still right, or NULL.';

--
-- Name: availability_ttl(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.availability_ttl() RETURNS interval
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ select interval '5 minutes' $$;

ALTER FUNCTION app_hidden.availability_ttl() OWNER TO svc_owner;

--
-- Name: FUNCTION availability_ttl(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.availability_ttl() IS 'How long a kept availability answer may be used at most.';

--
-- Name: booking_options(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.booking_options(organization_id uuid, location_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select app_hidden.location_booking_options(booking_options.organization_id, booking_options.location_id)
$$;

ALTER FUNCTION app_hidden.booking_options(organization_id uuid, location_id uuid) OWNER TO svc_owner;

--
-- Name: current_may_book_team_member(uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
begin
  return coalesce(case app_hidden.current_role()
    when 'owner' then true
    when 'admin' then true
    when 'manager' then 'appointments' = any(app_hidden.current_powers())
                        or current_may_book_team_member.staff_profile_id = app_hidden.current_staff_profile_id()
    when 'member' then current_may_book_team_member.staff_profile_id = app_hidden.current_staff_profile_id()
    else false end, false);
end $$;

ALTER FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_may_book_team_member(staff_profile_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) IS 'Whether the credential may book or change an appointment of this team member: owner and admin any; a manager with the appointments power any (at its locations); a manager without it and a member only itself; keys with no role, and Member or Manager keys without the power, none. Asked with null: whether it may book any team member (the service choosing one). Stricter than current_has_power, which grants organization keys all.';

--
-- Name: current_reads_team_member(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select app_hidden.current_role() is distinct from 'member'
      or app_hidden.current_records_level() <> 'own'
      or (staff_profile_id is not null and staff_profile_id = own_staff_profile_id)
$$;

ALTER FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid) IS 'Whether the credential reads appointments of this team member (own-records MEMBERs only their own: own_staff_profile_id, the credential''s app_hidden.current_staff_profile_id(), which a policy passes as a sub-select run once).';

--
-- Name: current_staff_profile_id(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.current_staff_profile_id() RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return (select sp.id from app_public.staff_profiles sp
           where sp.organization_id = app_hidden.current_org_id() and sp.person_id = app_hidden.current_user_id());
end $$;

ALTER FUNCTION app_hidden.current_staff_profile_id() OWNER TO svc_owner;

--
-- Name: FUNCTION current_staff_profile_id(); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.current_staff_profile_id() IS 'The staff profile (team member id) of the person the credential acts for, or NULL.';

--
-- Name: eligible_team_member_rows(uuid, uuid, uuid, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.eligible_team_member_rows(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) RETURNS TABLE(id uuid, created_at timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
  select sp.id, sp.created_at
    from app_public.staff_profiles sp
    join app_public.people p on p.organization_id = sp.organization_id and p.id = sp.person_id and p.active
    join app_public.person_locations pl on pl.organization_id = sp.organization_id and pl.person_id = sp.person_id
   where sp.organization_id = eligible_team_member_rows.organization_id and pl.location_id = eligible_team_member_rows.location_id
     and (eligible_team_member_rows.offering_id is null
          or not exists (select 1 from app_public.offering_team_members ot
                          where ot.organization_id = eligible_team_member_rows.organization_id
                            and ot.offering_id = eligible_team_member_rows.offering_id)
          or exists (select 1 from app_public.offering_team_members ot
                      where ot.organization_id = eligible_team_member_rows.organization_id
                        and ot.offering_id = eligible_team_member_rows.offering_id and ot.staff_profile_id = sp.id))
     and (eligible_team_member_rows.postal_code is null
          or exists (select 1 from app_public.territories t
                      where t.organization_id = eligible_team_member_rows.organization_id
                        and t.location_id = eligible_team_member_rows.location_id
                        and t.country_code = upper(eligible_team_member_rows.country_code)
                        and app_hidden.postal_code_key(eligible_team_member_rows.postal_code) = any(t.postal_codes)
                        and (not exists (select 1 from app_public.territory_team_members tt
                                          where tt.organization_id = t.organization_id and tt.territory_id = t.id)
                             or exists (select 1 from app_public.territory_team_members tt
                                         where tt.organization_id = t.organization_id and tt.territory_id = t.id
                                           and tt.staff_profile_id = sp.id))))
$$;

ALTER FUNCTION app_hidden.eligible_team_member_rows(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) OWNER TO svc_owner;

--
-- Name: FUNCTION eligible_team_member_rows(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.eligible_team_member_rows(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) IS 'The rule of eligible_team_members as rows (inlined into it; reads past the policies, so not granted).';

--
-- Name: eligible_team_members(uuid, uuid, uuid, text, text, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text, only_team_member_id uuid DEFAULT NULL::uuid) RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if only_team_member_id is null then
    return (select coalesce(array_agg(e.id order by e.created_at, e.id), '{}')
              from app_hidden.eligible_team_member_rows(organization_id, location_id, offering_id, postal_code, country_code) e);
  end if;
  return (select coalesce(array_agg(e.id), '{}')
            from app_hidden.eligible_team_member_rows(organization_id, location_id, offering_id, postal_code, country_code) e
           where e.id = only_team_member_id);
end $$;

ALTER FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text, only_team_member_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text, only_team_member_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text, only_team_member_id uuid) IS 'Team members of the location who do the offering and cover the postal code (each filter skipped when NULL), oldest first; only_team_member_id: that one alone (an empty array when it is not eligible).';

--
-- Name: held_by_blocks_or_series(app_public.locations, uuid, uuid, tstzrange, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid DEFAULT NULL::uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return exists (
    select 1 from app_public.appointments a
     where a.organization_id = loc.organization_id and a.location_id = loc.id and a.status = 'booked' and a.rrule is null
       and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null and a.during && held_by_blocks_or_series.during
       and a.id is distinct from held_by_blocks_or_series.except_id)
  or exists (
    select 1 from app_public.appointment_occurrences o
      join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
     where o.organization_id = loc.organization_id and o.during && held_by_blocks_or_series.during and a.status = 'booked'
       and (a.staff_profile_id = held_by_blocks_or_series.staff_profile_id or a.calendar_id = held_by_blocks_or_series.calendar_id
            or (a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null)));
end $$;

ALTER FUNCTION app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid) OWNER TO svc_owner;

--
-- Name: hours_hold(jsonb, text, tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.hours_hold(hours jsonb, tz text, during tstzrange) RETURNS boolean
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
declare
  d date := (lower(during) at time zone tz)::date;
begin
  if exists (select 1 from jsonb_array_elements(case when jsonb_typeof(hours) = 'array' then hours else '[]' end) h(e)
              where h.e->>'day' = lower(to_char(d, 'dy'))
                and (h.e->>'close')::time > (h.e->>'open')::time
                and tstzrange((d + (h.e->>'open')::time) at time zone tz, (d + (h.e->>'close')::time) at time zone tz, '[)')
                    @> during) then
    return true;
  end if;
  return app_hidden.opening_multirange(hours, tz, during) @> during;
end $$;

ALTER FUNCTION app_hidden.hours_hold(hours jsonb, tz text, during tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION hours_hold(hours jsonb, tz text, during tstzrange); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.hours_hold(hours jsonb, tz text, during tstzrange) IS 'Whether a range lies inside weekly hours (in a time zone): one opening of its first day, else the merged openings around it.';

--
-- Name: listed_appointments(timestamp with time zone, timestamp with time zone, text, text, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) RETURNS TABLE(a app_public.appointments, starts_at timestamp with time zone, occurrence_start timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
  select a, a.starts_at, null::timestamptz
    from app_public.appointments a
   where a.organization_id = app_hidden.current_org_id() and a.kind = 'appointment' and a.status = 'booked' and a.rrule is null
     and a.starts_at >= window_start and a.starts_at < window_end
     and (listed_appointments.contact_id is null or a.contact_id = listed_appointments.contact_id
          or a.attendee_phone = contact_phone or lower(a.attendee_email) = contact_email)
  union all
  select a, o.occurrence_start, o.occurrence_start
    from app_public.appointment_occurrences o
    join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
   where o.organization_id = app_hidden.current_org_id() and a.kind = 'appointment' and a.status = 'booked' and a.rrule is not null
     and o.occurrence_start >= window_start and o.occurrence_start < window_end
     and (listed_appointments.contact_id is null or a.contact_id = listed_appointments.contact_id
          or a.attendee_phone = contact_phone or lower(a.attendee_email) = contact_email)
$$;

ALTER FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) IS 'The live bookings starting in a window, one row per occurrence of a series, optionally of one contact (by id, attendee phone or email).';

--
-- Name: listed_team_member_ids(uuid, uuid, uuid[]); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) RETURNS uuid[]
    LANGUAGE sql STABLE
    AS $$
  select coalesce(array_agg(m order by ord), '{}')
    from app_hidden.location_team_members(organization_id, location_id) with ordinality t(m, ord)
   where cardinality(listed) = 0 or m = any(listed)
$$;

ALTER FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) OWNER TO svc_owner;

--
-- Name: FUNCTION listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) IS 'The listed team members still at the location (all of its team members when none is listed), oldest first.';

--
-- Name: local_day(date, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.local_day(d date, tz text) RETURNS tstzrange
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select tstzrange(d::timestamp at time zone tz, (d + 1)::timestamp at time zone tz, '[)')
$$;

ALTER FUNCTION app_hidden.local_day(d date, tz text) OWNER TO svc_owner;

--
-- Name: location_booking_options(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'location_id', l.id,
    'timezone', l.timezone,
    'staffed', l.staffed,
    'slot_interval_minutes', l.slot_interval_minutes,
    'offerings', coalesce((select jsonb_agg(jsonb_build_object('id', o.id, 'name', o.name, 'duration_minutes', o.duration_minutes,
                                                               'team_member_ids', to_jsonb(app_hidden.offering_team_member_ids(o)))
                                            order by o.name, o.id)
                             from app_public.offerings o where o.organization_id = l.organization_id and o.location_id = l.id), '[]'),
    'team_member_ids', coalesce((select jsonb_agg(m order by ord)
                                   from app_hidden.location_team_members(l.organization_id, l.id) with ordinality t(m, ord)), '[]'),
    'team_members', coalesce((select jsonb_agg(jsonb_build_object('id', sp.id, 'name', sp.display_name,
                                                                  'working_hours', coalesce(sp.working_hours, l.hours)) order by t.ord)
                                from app_hidden.location_team_members(l.organization_id, l.id) with ordinality t(m, ord)
                                join app_public.staff_profiles sp on sp.organization_id = l.organization_id and sp.id = t.m), '[]'),
    'calendars', coalesce((select jsonb_agg(jsonb_build_object('id', c.id, 'name', c.name) order by c.name, c.id)
                             from app_public.calendars c where c.organization_id = l.organization_id and c.location_id = l.id), '[]'))
    from app_public.locations l
   where l.organization_id = location_booking_options.organization_id and l.id = location_booking_options.location_id
$$;

ALTER FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION location_booking_options(organization_id uuid, location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) IS 'A location''s offerings (with duration and team members), team members (with working hours), and calendars; NULL when out of reach.';

--
-- Name: location_team_members(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select sp.id
    from app_public.staff_profiles sp
    join app_public.people p on p.organization_id = sp.organization_id and p.id = sp.person_id and p.active
    join app_public.person_locations pl on pl.organization_id = sp.organization_id and pl.person_id = sp.person_id
   where sp.organization_id = location_team_members.organization_id and pl.location_id = location_team_members.location_id
   order by sp.created_at, sp.id
$$;

ALTER FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION location_team_members(organization_id uuid, location_id uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) IS 'Staff profile ids of the active people who work at the location, oldest first (the order "first free team member" follows).';

--
-- Name: lock_booking_target(uuid, uuid); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform pg_advisory_xact_lock(hashtextextended('appointments:' || lock_booking_target.organization_id::text || ':'
                                                 || lock_booking_target.target::text, 0));
end $$;

ALTER FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION lock_booking_target(organization_id uuid, target uuid); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) IS 'Orders concurrent writers of one team member''s or calendar''s time (see above); the exclusion constraint decides.';

--
-- Name: offerings; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.offerings (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid NOT NULL,
    name text NOT NULL,
    duration_minutes integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT offerings_duration_minutes_check CHECK (((duration_minutes >= 5) AND (duration_minutes <= 1440))),
    CONSTRAINT offerings_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE app_public.offerings OWNER TO svc_owner;

--
-- Name: TABLE offerings; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.offerings IS 'A service a location books, with its length. A location with offerings requires one on booking (offering_required).';

--
-- Name: offering_team_member_ids(app_public.offerings); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) RETURNS uuid[]
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.listed_team_member_ids(o.organization_id, o.location_id,
    array(select x.staff_profile_id from app_public.offering_team_members x where x.organization_id = o.organization_id and x.offering_id = o.id))
$$;

ALTER FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) OWNER TO svc_owner;

--
-- Name: FUNCTION offering_team_member_ids(o app_public.offerings); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) IS 'Team members who do the offering, oldest first.';

--
-- Name: opening_multirange(jsonb, text, tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) RETURNS tstzmultirange
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
begin
  return (select coalesce(range_agg(o.opening), '{}'::tstzmultirange)
            from app_hidden.opening_ranges(opening_multirange.hours, opening_multirange.tz, opening_multirange.within) o);
end $$;

ALTER FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION opening_multirange(hours jsonb, tz text, within tstzrange); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) IS 'The openings of weekly hours around `within`, merged.';

--
-- Name: opening_ranges(jsonb, text, tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) RETURNS TABLE(opening tstzrange)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select r
    from generate_series((lower(within) at time zone tz)::date - 1, (upper(within) at time zone tz)::date, interval '1 day') g(d)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(hours) = 'array' then hours else '[]' end) h(e)
    cross join lateral (select tstzrange((g.d::date + (h.e->>'open')::time) at time zone tz,
                                         (g.d::date + (h.e->>'close')::time) at time zone tz, '[)') as r) x
   where h.e->>'day' = lower(to_char(g.d, 'dy'))
     and (h.e->>'close')::time > (h.e->>'open')::time
     and x.r && within
   order by lower(x.r)
$$;

ALTER FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION opening_ranges(hours jsonb, tz text, within tstzrange); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) IS 'Each opening of weekly hours (wall times in the zone, 24:00 = midnight after) on the days `within` touches, as an absolute range.';

--
-- Name: postal_code_key(text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.postal_code_key(code text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select upper(regexp_replace(code, '\s', '', 'g'))
$$;

ALTER FUNCTION app_hidden.postal_code_key(code text) OWNER TO svc_owner;

--
-- Name: FUNCTION postal_code_key(code text); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.postal_code_key(code text) IS 'A postal code as territories compare it: spaces removed, case ignored.';

--
-- Name: slot_taken(); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.slot_taken() RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform app_hidden.raise_error(409, 'slot_taken', 'This time is already booked; ask appointments_availability for open slots');
end $$;

ALTER FUNCTION app_hidden.slot_taken() OWNER TO svc_owner;

--
-- Name: slots_from_now(jsonb); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.slots_from_now(answer jsonb) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select case
    when coalesce((answer->'slots'->0->>'start')::timestamptz >= now(), true) then answer
    else jsonb_set(answer, '{slots}', coalesce((
      select jsonb_agg(x.slot order by x.n)
        from jsonb_array_elements(answer->'slots') with ordinality x(slot, n)
       where (x.slot->>'start')::timestamptz >= now()), '[]'::jsonb))
  end
$$;

ALTER FUNCTION app_hidden.slots_from_now(answer jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION slots_from_now(answer jsonb); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.slots_from_now(answer jsonb) IS 'An availability answer without the slots that have already started (slots in start order; a later day''s answer as it is).';

--
-- Name: team_member_refusal(app_public.locations, uuid, text, text, uuid, tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.team_member_refusal(loc app_public.locations, offering_id uuid, postal_code text, country_code text, team_member_id uuid, during tstzrange) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  -- the day the booking starts on, where the hours are (hours_hold's first test, inline)
  d date := (lower(during) at time zone loc.timezone)::date;
  eligible boolean;
  own jsonb;
begin
  -- eligible_team_member_rows for this one team member (a booking with no service address is
  -- planned without the territory test)
  if postal_code is null then
    select true, sp.working_hours into eligible, own
      from app_hidden.eligible_team_member_rows(loc.organization_id, loc.id, team_member_refusal.offering_id, null, null) x
      join app_public.staff_profiles sp on sp.organization_id = loc.organization_id and sp.id = x.id
     where x.id = team_member_refusal.team_member_id;
  else
    select true, sp.working_hours into eligible, own
      from app_hidden.eligible_team_member_rows(loc.organization_id, loc.id, team_member_refusal.offering_id,
                                                team_member_refusal.postal_code, team_member_refusal.country_code) x
      join app_public.staff_profiles sp on sp.organization_id = loc.organization_id and sp.id = x.id
     where x.id = team_member_refusal.team_member_id;
  end if;
  if eligible is null then
    return 'team_member_not_eligible';
  end if;
  -- the location's hours, then the team member's own (none: the location's); then blocks and series
  return (
    select case
      when not (exists (select 1 from jsonb_array_elements(case when jsonb_typeof(loc.hours) = 'array' then loc.hours else '[]' end) h(e)
                         where h.e->>'day' = lower(to_char(d, 'dy')) and (h.e->>'close')::time > (h.e->>'open')::time
                           and tstzrange((d + (h.e->>'open')::time) at time zone loc.timezone,
                                         (d + (h.e->>'close')::time) at time zone loc.timezone, '[)') @> team_member_refusal.during)
                or app_hidden.opening_multirange(loc.hours, loc.timezone, team_member_refusal.during) @> team_member_refusal.during)
        or (own is not null
            and not (exists (select 1 from jsonb_array_elements(case when jsonb_typeof(own) = 'array' then own else '[]' end) h(e)
                              where h.e->>'day' = lower(to_char(d, 'dy')) and (h.e->>'close')::time > (h.e->>'open')::time
                                and tstzrange((d + (h.e->>'open')::time) at time zone loc.timezone,
                                              (d + (h.e->>'close')::time) at time zone loc.timezone, '[)') @> team_member_refusal.during)
                     or app_hidden.opening_multirange(own, loc.timezone, team_member_refusal.during) @> team_member_refusal.during))
        then 'outside_hours'
      when exists (
          select 1 from app_public.appointments a
           where a.organization_id = loc.organization_id and a.location_id = loc.id and a.status = 'booked' and a.rrule is null
             and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null
             and a.during && team_member_refusal.during)
        or exists (
          select 1 from app_public.appointment_occurrences o
            join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
           where o.organization_id = loc.organization_id and o.during && team_member_refusal.during and a.status = 'booked'
             and (a.staff_profile_id = team_member_refusal.team_member_id
                  or (a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null)))
        then 'slot_taken'
    end);
end $$;

ALTER FUNCTION app_hidden.team_member_refusal(loc app_public.locations, offering_id uuid, postal_code text, country_code text, team_member_id uuid, during tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION team_member_refusal(loc app_public.locations, offering_id uuid, postal_code text, country_code text, team_member_id uuid, during tstzrange); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.team_member_refusal(loc app_public.locations, offering_id uuid, postal_code text, country_code text, team_member_id uuid, during tstzrange) IS 'The first booking rule a booking of a named team member breaks (team_member_not_eligible, outside_hours, slot_taken), or NULL: eligible_team_members, within_hours and held_by_blocks_or_series for one team member, in one statement.';

--
-- Name: team_time(app_public.locations, uuid[], uuid[], tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) RETURNS TABLE(staff_profile_id uuid, calendar_id uuid, ord integer, open tstzmultirange, busy tstzmultirange)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return query
  with window_rows as materialized (
    -- one pass over the organization's booked one-offs of the window (one descent of
    -- appointments_by_location_time), before anything asks whose they are
    select a.location_id, a.kind, a.staff_profile_id, a.calendar_id, a.during
      from app_public.appointments a
     where a.organization_id = loc.organization_id and a.status = 'booked' and a.rrule is null and a.during && within
  ), taken as materialized (
    select a.staff_profile_id, a.calendar_id, a.during,
           a.staff_profile_id is null and a.calendar_id is null as everyone
      from window_rows a
     where (a.location_id = loc.id and a.kind = 'block' and a.staff_profile_id is null and a.calendar_id is null)
        or a.staff_profile_id = any(team_members) or a.calendar_id = any(calendars)
    union all
    select a.staff_profile_id, a.calendar_id, o.during,
           a.staff_profile_id is null and a.calendar_id is null
      from app_public.appointment_occurrences o
      join app_public.appointments a on a.organization_id = o.organization_id and a.id = o.appointment_id
     where o.organization_id = loc.organization_id and o.during && within and a.status = 'booked'
       and ((a.location_id = loc.id and a.staff_profile_id is null and a.calendar_id is null)
            or a.staff_profile_id = any(team_members) or a.calendar_id = any(calendars))
  ), open_location as materialized (
    -- the location's hours less its blocks and location-wide series
    select app_hidden.opening_multirange(loc.hours, loc.timezone, within)
             - coalesce((select range_agg(t.during) from taken t where t.everyone), '{}') as r
  ), members as (
    select m.id, m.n, sp.working_hours
      from unnest(team_members) with ordinality m(id, n)
      join app_public.staff_profiles sp on sp.organization_id = loc.organization_id and sp.id = m.id
  ), own_hours as materialized (
    -- each distinct week of working hours once (most team members keep the location's: NULL)
    select h.working_hours, case when h.working_hours is null then ol.r
                                 else ol.r * app_hidden.opening_multirange(h.working_hours, loc.timezone, within) end as r
      from (select distinct working_hours from members) h, open_location ol
  ), busy as (
    select t.staff_profile_id, t.calendar_id, range_agg(t.during) as r
      from taken t
     where not t.everyone
     group by t.staff_profile_id, t.calendar_id
  )
  select m.id, null::uuid, m.n::int, oh.r, coalesce(b.r, '{}')
    from members m
    join own_hours oh on oh.working_hours is not distinct from m.working_hours
    left join busy b on b.staff_profile_id = m.id
  union all
  select null::uuid, c.id, c.n::int, ol.r, coalesce(b.r, '{}')
    from unnest(calendars) with ordinality c(id, n)
    cross join open_location ol
    left join busy b on b.calendar_id = c.id;
end $$;

ALTER FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) IS 'Open time (location hours less its blocks, * own hours) and busy time (bookings, blocks, series) of each team member and calendar within a range: free for a range when open @> range and not busy && range.';

--
-- Name: territory_covers(uuid, uuid, text, text); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return exists (select 1 from app_public.territories t
                  where t.organization_id = territory_covers.organization_id and t.location_id = territory_covers.location_id
                    and t.country_code = upper(territory_covers.country_code)
                    and app_hidden.postal_code_key(territory_covers.postal_code) = any(t.postal_codes));
end $$;

ALTER FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) OWNER TO svc_owner;

--
-- Name: territories; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.territories (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid NOT NULL,
    name text NOT NULL,
    country_code text NOT NULL,
    postal_codes text[] DEFAULT '{}'::text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT territories_country_code_check CHECK ((country_code ~ '^[A-Z]{2}$'::text)),
    CONSTRAINT territories_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT territories_postal_codes_check CHECK (((array_position(postal_codes, NULL::text) IS NULL) AND (cardinality(postal_codes) <= 10000)))
);

ALTER TABLE app_public.territories OWNER TO svc_owner;

--
-- Name: TABLE territories; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.territories IS 'Postal codes (normalized by app_hidden.postal_code_key) in one country that a location''s team members visit.';

--
-- Name: territory_json(app_public.territories); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.territory_json(t app_public.territories) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object('id', t.id, 'location_id', t.location_id, 'name', t.name, 'country_code', t.country_code,
                            'postal_codes', to_jsonb(t.postal_codes), 'team_member_ids', to_jsonb(app_hidden.territory_team_member_ids(t)))
$$;

ALTER FUNCTION app_hidden.territory_json(t app_public.territories) OWNER TO svc_owner;

--
-- Name: territory_team_member_ids(app_public.territories); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) RETURNS uuid[]
    LANGUAGE sql STABLE
    AS $$
  select app_hidden.listed_team_member_ids(t.organization_id, t.location_id,
    array(select x.staff_profile_id from app_public.territory_team_members x where x.organization_id = t.organization_id and x.territory_id = t.id))
$$;

ALTER FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) OWNER TO svc_owner;

--
-- Name: FUNCTION territory_team_member_ids(t app_public.territories); Type: COMMENT; Schema: app_hidden; Owner: svc_owner
--

COMMENT ON FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) IS 'Team members who cover the territory, oldest first.';

--
-- Name: within_hours(app_public.locations, uuid, tstzrange); Type: FUNCTION; Schema: app_hidden; Owner: svc_owner
--

CREATE FUNCTION app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  own jsonb;
begin
  if not app_hidden.hours_hold(loc.hours, loc.timezone, within_hours.during) then
    return false;
  end if;
  if within_hours.staff_profile_id is null then
    return true;
  end if;
  select sp.working_hours into own from app_public.staff_profiles sp
   where sp.organization_id = loc.organization_id and sp.id = within_hours.staff_profile_id;
  return own is null or app_hidden.hours_hold(own, loc.timezone, within_hours.during);
end $$;

ALTER FUNCTION app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) OWNER TO svc_owner;

--
-- Name: appointment_booked_holds(app_public.enrollments, jsonb); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select exists (select 1 from app_public.appointments a
                  where a.organization_id = e.organization_id and a.contact_id = e.contact_id
                    and a.kind = 'appointment' and a.status = 'booked' and a.created_at >= e.created_at
                    and (exit->>'location_id' is null or a.location_id::text = exit->>'location_id'))
$$;

ALTER FUNCTION app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION appointment_booked_holds(e app_public.enrollments, exit jsonb); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) IS 'The appointment_booked exit: the contact has a live booking made since it enrolled (at exit.location_id when given).';

--
-- Name: availability_prune(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.availability_prune() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  oldest app_private.availability_marks;
  dropped int;
begin
  -- the snapshot is taken before clock_timestamp() is read: all it sees committed before taken_at
  insert into app_private.availability_marks (taken_at, snap) values (clock_timestamp(), pg_current_snapshot())
  on conflict do nothing;
  delete from app_private.availability_answers where made_at <= now() - app_hidden.availability_ttl();
  get diagnostics dropped = row_count;
  -- A live answer, used only while made_at > (the user's clock) - ttl, and this prune's now() came
  -- before that clock; its snapshot, taken after made_at, is later than every mark at least a
  -- ttl old and sees every change such a mark sees.
  select * into oldest from app_private.availability_marks
   where taken_at <= now() - app_hidden.availability_ttl() order by taken_at desc limit 1;
  if found then
    delete from app_private.availability_changes c where pg_visible_in_snapshot(c.xid, oldest.snap);
    delete from app_private.availability_marks m where m.taken_at < oldest.taken_at;
  end if;
  return dropped;
end $$;

ALTER FUNCTION app_private.availability_prune() OWNER TO svc_owner;

--
-- Name: FUNCTION availability_prune(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.availability_prune() IS 'Drops kept availability answers older than their time to live and the changes no live answer can miss; answers how many answers it dropped.';

--
-- Name: note_availability_change(uuid, tstzrange); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.note_availability_change(org uuid, span tstzrange) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
begin
  -- once per transaction and range: a change the transaction already noted covers it
  insert into app_private.availability_changes (organization_id, during)
  select org, span
   where not exists (select 1 from app_private.availability_changes c
                      where c.organization_id = org and c.during @> span and c.xid = pg_current_xact_id());
end $$;

ALTER FUNCTION app_private.note_availability_change(org uuid, span tstzrange) OWNER TO svc_owner;

--
-- Name: FUNCTION note_availability_change(org uuid, span tstzrange); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.note_availability_change(org uuid, span tstzrange) IS 'Notes that the transaction changed availability of the organization over `span` (''(,)'': all of it).';

--
-- Name: tg__availability_everything(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg__availability_everything() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op = 'DELETE' then
    perform app_private.note_availability_change(old.organization_id, '(,)');
  else
    perform app_private.note_availability_change(new.organization_id, '(,)');
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg__availability_everything() OWNER TO svc_owner;

--
-- Name: tg__availability_truncated(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg__availability_truncated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  delete from app_private.availability_answers;
  return null;
end $$;

ALTER FUNCTION app_private.tg__availability_truncated() OWNER TO svc_owner;

--
-- Name: tg_appointment_occurrences__availability(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_appointment_occurrences__availability() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.note_availability_change(old.organization_id, old.during);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform app_private.note_availability_change(new.organization_id, new.during);
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_appointment_occurrences__availability() OWNER TO svc_owner;

--
-- Name: tg_appointments__availability(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_appointments__availability() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  -- a repeating series (rrule) holds time up to its end or forever: all of it
  if tg_op in ('INSERT', 'UPDATE') then
    insert into app_private.availability_changes (organization_id, during)
    values (new.organization_id, case when new.rrule is null then new.during else '(,)' end);
  end if;
  if tg_op = 'DELETE' then
    insert into app_private.availability_changes (organization_id, during)
    values (old.organization_id, case when old.rrule is null then old.during else '(,)' end);
  elsif tg_op = 'UPDATE' then
    if old.during is distinct from new.during or old.rrule is distinct from new.rrule
       or old.organization_id is distinct from new.organization_id then
      insert into app_private.availability_changes (organization_id, during)
      values (old.organization_id, case when old.rrule is null then old.during else '(,)' end);
    end if;
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_appointments__availability() OWNER TO svc_owner;

--
-- Name: tg_appointments__inserted(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_appointments__inserted() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  booked boolean := new.kind = 'appointment' and new.status = 'booked';
  asked record;
  automation uuid;
begin
  -- own clients: the new row is a live booking joining them, nothing to ask; otherwise asked
  if booked then
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'appointments'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id and new.contact_id is not null
    on conflict do nothing;

    -- who listens, in one read: the contact's live enrollments (their exits), the automations
    -- appointment_booked starts (a booking made through the API only), the booked webhook
    select exists (select 1 from app_public.enrollments e
                    where e.organization_id = new.organization_id and e.contact_id = new.contact_id
                      and e.status in ('active', 'paused')) as enrolled,
           array(select x.id from app_public.sequences x
                  where x.organization_id = new.organization_id and x.status = 'active' and x.kind = 'automation'
                    and x.trigger->>'type' = 'appointment_booked'
                    and (x.trigger->>'location_id' is null or x.trigger->>'location_id' = new.location_id::text)
                  order by x.id) as automations,
           exists (select 1 from app_public.webhook_subscriptions ws
                    where ws.organization_id = new.organization_id and ws.status = 'active'
                      and 'appointment.booked' = any(ws.events)) as hooked
      into asked;
  else
    perform app_private.refresh_appointment_own_client(new.organization_id, new.staff_profile_id, new.contact_id);
  end if;

  -- sequences: exits of the contact's enrollments, then the automations it starts
  if booked and new.source = 'api' then
    if asked.enrolled then
      perform app_private.check_contact_exits(new.organization_id, new.contact_id);
    end if;
    foreach automation in array asked.automations loop
      perform app_private.enroll_by_trigger(new.organization_id, automation, new.contact_id, 'appointment_booked', null);
    end loop;
  end if;

  -- the availability note (a repeating series holds time up to its end or forever: all of it)
  insert into app_private.availability_changes (organization_id, during)
  values (new.organization_id, case when new.rrule is null then new.during else '(,)' end);

  -- the booked webhook
  if booked and asked.hooked then
    perform app_private.webhook_emit(new.organization_id, 'appointment.booked', new.created_at,
      app_private.webhook_appointment_data(new));
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_appointments__inserted() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_appointments__inserted(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_appointments__inserted() IS 'After a new appointment: own clients, appointment_booked, the availability note and the booked webhook, in that order (one trigger call).';

--
-- Name: tg_appointments__own_clients(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_appointments__own_clients() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.refresh_appointment_own_client(old.organization_id, old.staff_profile_id, old.contact_id);
  end if;
  if tg_op = 'INSERT' and new.kind = 'appointment' and new.status = 'booked' then
    -- the new row is a live booking joining them: nothing to ask
    insert into app_private.own_clients (organization_id, person_id, contact_id, source)
    select new.organization_id, sp.person_id, new.contact_id, 'appointments'
      from app_public.staff_profiles sp
     where sp.organization_id = new.organization_id and sp.id = new.staff_profile_id and new.contact_id is not null
    on conflict do nothing;
  elsif tg_op in ('INSERT', 'UPDATE') then
    perform app_private.refresh_appointment_own_client(new.organization_id, new.staff_profile_id, new.contact_id);
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_appointments__own_clients() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_appointments__own_clients(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_appointments__own_clients() IS 'After a booking is written, moved, cancelled or deleted: the own clients of its team member(s) follow.';

--
-- Name: tg_appointments__webhooks(); Type: FUNCTION; Schema: app_private; Owner: svc_owner
--

CREATE FUNCTION app_private.tg_appointments__webhooks() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if app_private.webhook_wanted(new.organization_id, 'appointment.cancelled') then
    perform app_private.webhook_emit(new.organization_id, 'appointment.cancelled', new.cancelled_at,
      app_private.webhook_appointment_data(new));
  end if;
  return null;
end $$;

ALTER FUNCTION app_private.tg_appointments__webhooks() OWNER TO svc_owner;

--
-- Name: FUNCTION tg_appointments__webhooks(); Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON FUNCTION app_private.tg_appointments__webhooks() IS 'appointment.cancelled when an appointment is cancelled (blocks of time off are not); appointment.booked is the insert trigger''s.';

--
-- Name: appointments_availability(uuid, date, uuid, uuid, text, text, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid DEFAULT NULL::uuid, team_member_id uuid DEFAULT NULL::uuid, postal_code text DEFAULT NULL::text, country_code text DEFAULT NULL::text, duration_minutes integer DEFAULT NULL::integer) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  -- before anything is read: every change this snapshot misses makes the answer stale; the
  -- transaction's start, earlier than any of its snapshots, is when the answer was made
  snap pg_snapshot := pg_current_snapshot();
  made_at timestamptz := now();
  org uuid := app_hidden.current_org_id();
  loc app_public.locations;
  o app_public.offerings;
  len interval;
  cc text := country_code;
  members uuid[] := '{}';
  cals uuid[] := '{}';
  variant text;
  keep boolean := coalesce(current_setting('availability.keep_answers', true), '') <> 'off';
  slots jsonb;
  answer jsonb;
begin
  select * into loc from app_public.locations l where l.organization_id = org and l.id = appointments_availability.location_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if offering_id is not null then
    select * into o from app_public.offerings x
     where x.organization_id = org and x.id = appointments_availability.offering_id and x.location_id = loc.id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
    end if;
  end if;
  len := make_interval(mins => coalesce(o.duration_minutes, appointments_availability.duration_minutes, loc.slot_interval_minutes));
  if postal_code is not null and cc is null then
    cc := upper(loc.address->>'country_code');
    if cc is null then
      perform app_hidden.raise_error(400, 'bad_request', 'query.country_code: send the country of postal_code (this location has no address to take it from)');
    end if;
  end if;

  -- The location and offering are in the caller's reach (its policies found them), and what
  -- follows reads past the policies alike for every caller: an answer kept for one serves all.
  -- Only answers are kept, so a team member found not eligible is looked up again each time.
  variant := concat_ws('|', o.id, extract(epoch from len)::int / 60, team_member_id, postal_code, cc);
  if keep then
    answer := app_hidden.availability_kept(org, loc.id, day, variant);
    if answer is not null then
      return answer;
    end if;
  end if;

  if loc.staffed then
    members := app_hidden.eligible_team_members(org, loc.id, o.id, postal_code, cc);
    if team_member_id is not null then
      if not team_member_id = any(app_hidden.eligible_team_members(org, loc.id, null, null, null)) then
        perform app_hidden.raise_error(404, 'not_found', 'Team member not found at this location');
      end if;
      members := case when team_member_id = any(members) then array[team_member_id] else '{}' end;
    end if;
  else
    if team_member_id is not null then
      perform app_hidden.raise_error(404, 'not_found', 'Team member not found at this location (it is not staffed: it books calendars)');
    end if;
    select coalesce(array_agg(c.id order by c.name, c.id), '{}') into cals
      from app_public.calendars c where c.organization_id = org and c.location_id = loc.id;
  end if;

  -- A start s suits a free range r of some team member (or calendar) when [s, s + len) lies
  -- within r: s in [lower(r), upper(r) - len]. Those windows of every one merged are the
  -- valid starts, and each start of the grid is one lookup in them (testing every start against
  -- every team member's open and busy multiranges cost most of the call).
  with free as (
    select r
      from app_hidden.team_time(loc, members, cals, app_hidden.local_day(day, loc.timezone)) t
      cross join lateral unnest(t.open - t.busy) r
     where upper(r) - len >= lower(r)
  ), valid as (
    select coalesce(range_agg(tstzrange(lower(r), upper(r) - len, case when lower_inc(r) then '[]' else '(]' end)),
                    '{}'::tstzmultirange) as starts
      from free
  ), starts as (
    -- each opening of the location's hours on that day starts a grid of slots
    select distinct s
      from app_hidden.opening_ranges(loc.hours, loc.timezone, app_hidden.local_day(day, loc.timezone)) w
      cross join lateral generate_series(lower(w.opening), upper(w.opening) - len, make_interval(mins => loc.slot_interval_minutes)) s
     where (s at time zone loc.timezone)::date = day
  )
  select coalesce(jsonb_agg(jsonb_build_object('start', x.s, 'end', x.s + len) order by x.s), '[]')
    into slots
    from starts x, valid
   where valid.starts @> x.s;

  answer := jsonb_build_object(
    'location_id', loc.id,
    'date', day,
    'timezone', loc.timezone,
    'offering_id', o.id,
    'duration_minutes', extract(epoch from len)::int / 60,
    'slot_interval_minutes', loc.slot_interval_minutes,
    'team_member_ids', to_jsonb(members),
    'calendar_ids', to_jsonb(cals),
    'slots', slots);
  if keep then
    perform app_hidden.availability_keep(org, loc.id, day, variant, app_hidden.local_day(day, loc.timezone), made_at, snap, answer);
  end if;
  return answer;
end $$;

ALTER FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer) IS 'appointments_availability: the starts on a local day where some eligible team member (or calendar) is free for the whole length, stepped by the slot interval from each opening of the location''s hours; 404 for a location, offering or team member out of reach. An answer is kept and reused until a change it read commits (app_private.availability_answers); availability.keep_answers = off computes every one.';

--
-- Name: appointments_cancel(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_cancel(appointment_id uuid) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
begin
  if a.status = 'booked' then
    update app_public.appointments x set status = 'cancelled', cancelled_at = now(), updated_at = now()
     where x.organization_id = a.organization_id and x.id = a.id
    returning * into a;
  end if;
  return app_hidden.appointment_json(a);
end $$;

ALTER FUNCTION app_public.appointments_cancel(appointment_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_cancel(appointment_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_cancel(appointment_id uuid) IS 'appointments_cancel: frees the time; a cancelled one answers as it is.';

--
-- Name: appointments_create(uuid, uuid, uuid, uuid, jsonb, uuid, timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  org uuid := app_hidden.current_org_id();
  named record;
  loc app_public.locations;
  cal app_public.calendars;
  during tstzrange;
  postal text := nullif(btrim(service_address->>'postal_code'), '');
  country text := upper(nullif(btrim(service_address->>'country_code'), ''));
  tm uuid := team_member_id;
  refusal text;
  candidates uuid[];
  chosen uuid;
  a app_public.appointments;
begin
  if (location_id is null) = (calendar_id is null) then
    perform app_hidden.raise_error(400, 'bad_request', 'Send exactly one of location_id and calendar_id');
  end if;
  if calendar_id is not null and (offering_id is not null or team_member_id is not null or service_address is not null) then
    perform app_hidden.raise_error(400, 'bad_request',
      'offering_id, team_member_id and service_address go with location_id; a calendar is booked with none of them');
  end if;
  if end_time <= start_time then
    perform app_hidden.raise_error(400, 'bad_request', 'body.end_time: must be after start_time');
  end if;
  during := tstzrange(start_time, end_time, '[)');

  -- what the request names, found through the caller's policies: one read
  if calendar_id is not null then
    select * into cal from app_public.calendars x where x.organization_id = org and x.id = appointments_create.calendar_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Calendar not found');
    end if;
  end if;
  select l as loc, ct.id as contact_id, ct.name as contact_name, ct.phone as contact_phone, ct.email as contact_email,
         f.id as offering_id, f.duration_minutes,
         appointments_create.team_member_id is null
           or exists (select 1 from app_public.staff_profiles sp
                       where sp.organization_id = org and sp.id = appointments_create.team_member_id) as team_member_found
    into named
    from (select) one
    left join app_public.locations l on l.organization_id = org and l.id = coalesce(appointments_create.location_id, cal.location_id)
    left join lateral (select x.id, x.name, x.phone, x.email::text as email from app_public.contacts x
                        where x.organization_id = org and x.id = appointments_create.contact_id) ct on true
    left join app_public.offerings f on appointments_create.offering_id is not null and f.organization_id = org
                                    and f.id = appointments_create.offering_id and f.location_id = l.id;
  loc := named.loc;
  if loc.id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Location not found');
  end if;
  if named.contact_id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;
  if offering_id is not null and named.offering_id is null then
    perform app_hidden.raise_error(404, 'not_found', 'Offering not found at this location');
  end if;
  if not named.team_member_found then
    perform app_hidden.raise_error(404, 'not_found', 'Team member not found');
  end if;
  -- only an organization key has a creator who may leave (a personal key's person is its user)
  if app_hidden.current_user_id() is null and app_hidden.current_key_creator_left() then
    perform app_hidden.raise_error(422, 'key_creator_left',
      'The person who created this organization key has left the organization; bookings need a key of someone still here');
  end if;

  if cal.id is not null then
    -- a calendar: an unstaffed location's resource, bookable by anyone who reaches it
    if loc.staffed then
      perform app_hidden.raise_error(400, 'bad_request', 'body.calendar_id: this location is staffed; book it by location_id (and a team member)');
    end if;
    if not app_hidden.within_hours(loc, null, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the location''s hours');
    end if;
    if app_hidden.held_by_blocks_or_series(loc, null, cal.id, during) then
      perform app_hidden.slot_taken();
    end if;
    perform pg_advisory_xact_lock(hashtextextended('appointments:' || org::text || ':' || cal.id::text, 0));
    begin
      insert into app_public.appointments (organization_id, kind, location_id, calendar_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, cal.id, named.contact_id, title, named.contact_name, named.contact_phone,
        named.contact_email, start_time, end_time, app_hidden.current_user_id(), app_hidden.current_credential_id(), 'api')
      returning * into a;
    exception when exclusion_violation then
      perform app_hidden.slot_taken();
    end;
    return app_hidden.appointment_json(a);
  end if;

  if not loc.staffed then
    perform app_hidden.raise_error(400, 'bad_request', 'body.location_id: this location is not staffed; book one of its calendars by calendar_id (calendars_list)');
  end if;

  -- who may book whom
  if tm is null and app_hidden.current_role() in ('manager', 'member')
     and not app_hidden.current_may_book_team_member(null) then
    -- a member (or a manager without the appointments power) may not pick among the team: it books itself
    tm := app_hidden.current_staff_profile_id();
    if tm is null then
      perform app_hidden.raise_error(403, 'insufficient_role',
        'This credential books only its own time and has no staff profile; book a calendar, or use a credential that may book team members');
    end if;
  elsif app_hidden.current_role() not in ('owner', 'admin', 'manager', 'member')
        or (tm is not null and not app_hidden.current_may_book_team_member(tm)) then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'This credential may not book appointments for this team member (a member books only itself; keys without a role book calendars only)');
  end if;

  -- the booking rules
  if named.offering_id is null then
    if exists (select 1 from app_public.offerings x where x.organization_id = org and x.location_id = loc.id) then
      perform app_hidden.raise_error(409, 'offering_required', 'This location books offerings: send offering_id (booking_options lists them)',
        jsonb_build_object('booking_options', app_hidden.booking_options(org, loc.id)));
    end if;
  elsif end_time - start_time <> make_interval(mins => named.duration_minutes) then
    perform app_hidden.raise_error(409, 'duration_mismatch',
      format('The offering takes %s minutes: end_time must be start_time + %s minutes', named.duration_minutes, named.duration_minutes));
  end if;
  if postal is not null and not app_hidden.territory_covers(org, loc.id, postal, country) then
    perform app_hidden.raise_error(409, 'address_out_of_area', 'No territory of this location covers the service address''s postal code');
  end if;

  if tm is not null then
    -- a named team member (or the member itself): its rules in one statement
    refusal := app_hidden.team_member_refusal(loc, named.offering_id, postal, country, tm, during);
    if refusal = 'team_member_not_eligible' then
      perform app_hidden.raise_error(409, 'team_member_not_eligible',
        'The team member does not work at this location, does not do this offering, or does not cover this address');
    elsif refusal = 'outside_hours' then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the team member''s working hours');
    elsif refusal = 'slot_taken' then
      perform app_hidden.slot_taken();
    end if;
    candidates := array[tm];
  else
    -- the first eligible team member (oldest first) who works then and is free
    candidates := app_hidden.eligible_team_members(org, loc.id, named.offering_id, postal, country, null);
    if not app_hidden.within_hours(loc, null, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The time is outside the location''s hours');
    end if;
    candidates := array(select m.id from unnest(candidates) with ordinality m(id, n)
                         where app_hidden.within_hours(loc, m.id, during) order by m.n);
    if cardinality(candidates) = 0 then
      perform app_hidden.raise_error(409, 'no_team_member_available', 'No team member who may take this booking works at that time');
    end if;
    candidates := array(select t.staff_profile_id from app_hidden.team_time(loc, candidates, '{}', during) t
                         where t.open @> during and not t.busy && during order by t.ord);
  end if;
  foreach chosen in array candidates loop
    -- (a named team member's blocks and series were asked above)
    continue when tm is null and app_hidden.held_by_blocks_or_series(loc, chosen, null, during);
    -- orders concurrent writers of one team member's time; the exclusion constraint decides
    perform pg_advisory_xact_lock(hashtextextended('appointments:' || org::text || ':' || chosen::text, 0));
    begin
      insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id, offering_id, contact_id, title,
        attendee_name, attendee_phone, attendee_email, service_address, starts_at, ends_at, created_by, created_by_credential, source)
      values (org, 'appointment', loc.id, chosen, named.offering_id, named.contact_id, title, named.contact_name,
        named.contact_phone, named.contact_email, service_address, start_time, end_time, app_hidden.current_user_id(),
        app_hidden.current_credential_id(), 'api')
      returning * into a;
      return app_hidden.appointment_json(a);
    exception when exclusion_violation then
      -- someone else took this team member's time meanwhile: the next one, if any
      null;
    end;
  end loop;
  perform app_hidden.slot_taken();
  return null;
end $$;

ALTER FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) IS 'appointments_create: books a team member (named, or the first free eligible one) at a staffed location, or a calendar of an unstaffed one; the exclusion constraints decide races (409 slot_taken).';

--
-- Name: appointments_get(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_get(appointment_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  a app_public.appointments;
begin
  select * into a from app_public.appointments x
   where x.organization_id = app_hidden.current_org_id() and x.id = appointments_get.appointment_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Appointment not found');
  end if;
  return app_hidden.appointment_json(a);
end $$;

ALTER FUNCTION app_public.appointments_get(appointment_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_get(appointment_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_get(appointment_id uuid) IS 'appointments_get: one appointment or block in reach (a series: recurring, its first start), cancelled ones too.';

--
-- Name: appointments_list(timestamp with time zone, timestamp with time zone, uuid, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
declare
  total bigint;
  items jsonb;
  c_phone text;
  c_email text;
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  -- spec: from defaults to now, to to 30 days after from; the window is not empty and at most 92 days
  window_from := coalesce(window_from, now());
  window_to := coalesce(window_to, window_from + interval '30 days');
  if window_to <= window_from then
    perform app_hidden.page_error('to', 'must be after from (the window is empty)');
  -- 92 days of 24 hours, and the hour an autumn clock change adds to 92 local days
  elsif window_to > window_from + interval '92 days 1 hour' then
    perform app_hidden.page_error('to', 'at most 92 days after from');
  end if;
  if contact_id is not null then
    select c.phone, c.email_key into c_phone, c_email from app_public.contacts c
     where c.organization_id = app_hidden.current_org_id() and c.id = appointments_list.contact_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
    end if;
  end if;
  select count(*) into total from app_hidden.listed_appointments(window_from, window_to, c_phone, c_email, contact_id);
  select coalesce(jsonb_agg(app_hidden.appointment_json(p.a, p.occurrence_start) order by p.starts_at, (p.a).id), '[]') into items
    from (select * from app_hidden.listed_appointments(window_from, window_to, c_phone, c_email, contact_id) x
           order by x.starts_at, (x.a).id limit page_size offset (page - 1)::bigint * page_size) p;
  return jsonb_build_object('items', items, 'total', total, 'page', page, 'limit', page_size,
                            'from', window_from, 'to', window_to);
end $$;

ALTER FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) IS 'appointments_list: live bookings starting in [from, to), earliest first, one row per occurrence of a repeating series.';

--
-- Name: appointments_reschedule(uuid, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
  loc app_public.locations;
  minutes int;
  during tstzrange;
begin
  if a.status = 'cancelled' then
    perform app_hidden.raise_error(409, 'appointment_cancelled', 'This appointment is cancelled; book a new one');
  end if;
  if end_time <= start_time then
    perform app_hidden.raise_error(400, 'bad_request', 'body.end_time: must be after start_time');
  end if;
  during := tstzrange(start_time, end_time, '[)');
  select * into loc from app_public.locations l where l.organization_id = a.organization_id and l.id = a.location_id;
  if a.kind = 'appointment' then
    select o.duration_minutes into minutes from app_public.offerings o where o.organization_id = a.organization_id and o.id = a.offering_id;
    if minutes is not null and end_time - start_time <> make_interval(mins => minutes) then
      perform app_hidden.raise_error(409, 'duration_mismatch',
        format('The offering takes %s minutes: end_time must be start_time + %s minutes', minutes, minutes));
    end if;
    if not app_hidden.within_hours(loc, a.staff_profile_id, during) then
      perform app_hidden.raise_error(409, 'outside_hours', 'The new time is outside the hours of the location or the team member');
    end if;
    if app_hidden.held_by_blocks_or_series(loc, a.staff_profile_id, a.calendar_id, during, a.id) then
      perform app_hidden.slot_taken();
    end if;
  end if;
  if coalesce(a.staff_profile_id, a.calendar_id) is not null then
    perform app_hidden.lock_booking_target(a.organization_id, coalesce(a.staff_profile_id, a.calendar_id));
  end if;
  begin
    update app_public.appointments x set starts_at = start_time, ends_at = end_time, updated_at = now()
     where x.organization_id = a.organization_id and x.id = a.id
    returning * into a;
  exception when exclusion_violation then
    perform app_hidden.slot_taken();
  end;
  return app_hidden.appointment_json(a);
end $$;

ALTER FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) IS 'appointments_reschedule: moves a live appointment or block, re-checking hours, length and availability (409 slot_taken).';

--
-- Name: appointments_update(uuid, jsonb); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
declare
  a app_public.appointments := app_hidden.appointment_for_change(appointment_id);
begin
  update app_public.appointments x set
    title = case when patch ? 'title' then patch->>'title' else x.title end,
    description = case when patch ? 'description' then patch->>'description' else x.description end,
    attendee_name = case when patch ? 'attendee_name' then patch->>'attendee_name' else x.attendee_name end,
    attendee_phone = case when patch ? 'attendee_phone' then patch->>'attendee_phone' else x.attendee_phone end,
    attendee_email = case when patch ? 'attendee_email' then patch->>'attendee_email' else x.attendee_email end,
    attendee_notes = case when patch ? 'attendee_notes' then patch->>'attendee_notes' else x.attendee_notes end,
    updated_at = now()
   where x.organization_id = a.organization_id and x.id = a.id
  returning * into a;
  return app_hidden.appointment_json(a);
end $$;

ALTER FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) OWNER TO svc_owner;

--
-- Name: FUNCTION appointments_update(appointment_id uuid, patch jsonb); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) IS 'appointments_update: title, description and attendee fields only (times: appointments_reschedule; status: appointments_cancel).';

--
-- Name: calendars_list(uuid, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_location(location_id);
  return app_hidden.page_of((
    select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'location_id', c.location_id, 'name', c.name) order by c.name, c.id), '[]')
      from app_public.calendars c
     where c.organization_id = app_hidden.current_org_id()
       and (calendars_list.location_id is null or c.location_id = calendars_list.location_id)), page, page_size);
end $$;

ALTER FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION calendars_list(location_id uuid, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) IS 'calendars_list: calendars in reach, optionally of one location.';

--
-- Name: locations_booking_options(uuid); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.locations_booking_options(location_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform app_hidden.require_location(location_id);
  return app_hidden.location_booking_options(app_hidden.current_org_id(), location_id);
end $$;

ALTER FUNCTION app_public.locations_booking_options(location_id uuid) OWNER TO svc_owner;

--
-- Name: FUNCTION locations_booking_options(location_id uuid); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.locations_booking_options(location_id uuid) IS 'locations_booking_options: what a booking at the location may name.';

--
-- Name: locations_list(integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.locations_list(page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  return app_hidden.page_of((select coalesce(jsonb_agg(app_hidden.location_json(l) order by l.name, l.id), '[]')
                               from app_public.locations l where l.organization_id = app_hidden.current_org_id()), page, page_size);
end $$;

ALTER FUNCTION app_public.locations_list(page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION locations_list(page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.locations_list(page integer, page_size integer) IS 'locations_list: the locations the credential reaches, by name.';

--
-- Name: territories_list(uuid, text, text, integer, integer); Type: FUNCTION; Schema: app_public; Owner: svc_owner
--

CREATE FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
begin
  page := app_hidden.page_number(page);
  page_size := app_hidden.page_limit(page_size);
  perform app_hidden.require_location(location_id);
  return app_hidden.page_of((
    select coalesce(jsonb_agg(app_hidden.territory_json(t) order by t.name, t.id), '[]')
      from app_public.territories t
     where t.organization_id = app_hidden.current_org_id()
       and (territories_list.location_id is null or t.location_id = territories_list.location_id)
       and (territories_list.postal_code is null or t.postal_codes @> array[app_hidden.postal_code_key(territories_list.postal_code)])
       and (territories_list.country_code is null or t.country_code = upper(territories_list.country_code))), page, page_size);
end $$;

ALTER FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) OWNER TO svc_owner;

--
-- Name: FUNCTION territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer); Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) IS 'territories_list: territories in reach, optionally of one location and covering one postal code (spaces and case ignored).';

--
-- Name: appointment_occurrences; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.appointment_occurrences (
    organization_id uuid NOT NULL,
    appointment_id uuid NOT NULL,
    occurrence_start timestamp with time zone NOT NULL,
    during tstzrange NOT NULL
);

ALTER TABLE app_public.appointment_occurrences OWNER TO svc_owner;

--
-- Name: TABLE appointment_occurrences; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.appointment_occurrences IS 'Each occurrence of a repeating appointment (its series'' row in app_public.appointments holds the rest).';

--
-- Name: appointments_per_day; Type: VIEW; Schema: app_analytics; Owner: svc_owner
--

CREATE VIEW app_analytics.appointments_per_day WITH (security_invoker='true') AS
 WITH booked AS (
         SELECT a.organization_id,
            a.location_id,
            a.starts_at,
            a.status
           FROM app_public.appointments a
          WHERE ((a.kind = 'appointment'::text) AND (a.rrule IS NULL))
        UNION ALL
         SELECT a.organization_id,
            a.location_id,
            o.occurrence_start,
            a.status
           FROM (app_public.appointments a
             JOIN app_public.appointment_occurrences o ON (((o.organization_id = a.organization_id) AND (o.appointment_id = a.id))))
          WHERE ((a.kind = 'appointment'::text) AND (a.rrule IS NOT NULL))
        )
 SELECT b.organization_id,
    b.location_id,
    l.name AS location,
    ((b.starts_at AT TIME ZONE l.timezone))::date AS day,
    count(*) FILTER (WHERE (b.status = 'booked'::text)) AS booked,
    count(*) FILTER (WHERE (b.status = 'cancelled'::text)) AS cancelled
   FROM (booked b
     JOIN app_public.locations l ON (((l.organization_id = b.organization_id) AND (l.id = b.location_id))))
  GROUP BY b.organization_id, b.location_id, l.name, (((b.starts_at AT TIME ZONE l.timezone))::date);

ALTER TABLE app_analytics.appointments_per_day OWNER TO svc_owner;

--
-- Name: VIEW appointments_per_day; Type: COMMENT; Schema: app_analytics; Owner: svc_owner
--

COMMENT ON VIEW app_analytics.appointments_per_day IS 'Booked and cancelled appointments per location and local day (occurrences of a series each count).';

--
-- Name: availability_answers; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE UNLOGGED TABLE app_private.availability_answers (
    organization_id uuid NOT NULL,
    location_id uuid NOT NULL,
    day date NOT NULL,
    variant text NOT NULL,
    within tstzrange NOT NULL,
    made_at timestamp with time zone NOT NULL,
    snap pg_snapshot NOT NULL,
    answer jsonb NOT NULL
);

ALTER TABLE app_private.availability_answers OWNER TO svc_owner;

--
-- Name: TABLE availability_answers; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.availability_answers IS 'Kept appointments_availability answers: used while no change over `within` is missing from `snap` and younger than app_hidden.availability_ttl().';

--
-- Name: availability_changes; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE UNLOGGED TABLE app_private.availability_changes (
    organization_id uuid NOT NULL,
    during tstzrange NOT NULL,
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL
);

ALTER TABLE app_private.availability_changes OWNER TO svc_owner;

--
-- Name: TABLE availability_changes; Type: COMMENT; Schema: app_private; Owner: svc_owner
--

COMMENT ON TABLE app_private.availability_changes IS 'What writes changed for availability, by organization and time, with the writing transaction: see app_private.availability_answers.';

--
-- Name: availability_marks; Type: TABLE; Schema: app_private; Owner: svc_owner
--

CREATE UNLOGGED TABLE app_private.availability_marks (
    taken_at timestamp with time zone NOT NULL,
    snap pg_snapshot NOT NULL
);

ALTER TABLE app_private.availability_marks OWNER TO svc_owner;

--
-- Name: calendars; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.calendars (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    location_id uuid NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT calendars_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE app_public.calendars OWNER TO svc_owner;

--
-- Name: TABLE calendars; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.calendars IS 'What a location that is not staffed books: busy while it holds an appointment, open during its location''s hours.';

--
-- Name: offering_team_members; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.offering_team_members (
    organization_id uuid NOT NULL,
    offering_id uuid NOT NULL,
    staff_profile_id uuid NOT NULL
);

ALTER TABLE app_public.offering_team_members OWNER TO svc_owner;

--
-- Name: TABLE offering_team_members; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.offering_team_members IS 'Who does an offering; an offering with no rows here can be done by every team member of its location.';

--
-- Name: staff_profiles; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.staff_profiles (
    organization_id uuid NOT NULL,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    person_id uuid NOT NULL,
    display_name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    working_hours jsonb,
    CONSTRAINT staff_profiles_working_hours_check CHECK (((working_hours IS NULL) OR (jsonb_typeof(working_hours) = 'array'::text)))
);

ALTER TABLE app_public.staff_profiles OWNER TO svc_owner;

--
-- Name: TABLE staff_profiles; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.staff_profiles IS 'A team member who can be booked and who owns client relationships.';

--
-- Name: COLUMN staff_profiles.working_hours; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON COLUMN app_public.staff_profiles.working_hours IS 'The team member''s weekly hours [{day: mon..sun, open: HH:MM, close: HH:MM|24:00}] in each location''s time zone; NULL: the location''s hours.';

--
-- Name: territory_team_members; Type: TABLE; Schema: app_public; Owner: svc_owner
--

CREATE TABLE app_public.territory_team_members (
    organization_id uuid NOT NULL,
    territory_id uuid NOT NULL,
    staff_profile_id uuid NOT NULL
);

ALTER TABLE app_public.territory_team_members OWNER TO svc_owner;

--
-- Name: TABLE territory_team_members; Type: COMMENT; Schema: app_public; Owner: svc_owner
--

COMMENT ON TABLE app_public.territory_team_members IS 'Who covers a territory; a territory with no rows here is covered by every team member of its location.';

--
-- Name: availability_answers availability_answers_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.availability_answers
    ADD CONSTRAINT availability_answers_pkey PRIMARY KEY (organization_id, location_id, day, variant);

--
-- Name: availability_marks availability_marks_pkey; Type: CONSTRAINT; Schema: app_private; Owner: svc_owner
--

ALTER TABLE ONLY app_private.availability_marks
    ADD CONSTRAINT availability_marks_pkey PRIMARY KEY (taken_at);

--
-- Name: appointment_occurrences appointment_occurrences_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointment_occurrences
    ADD CONSTRAINT appointment_occurrences_pkey PRIMARY KEY (organization_id, appointment_id, occurrence_start);

--
-- Name: appointments appointments_no_overlap_calendar; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_no_overlap_calendar EXCLUDE USING gist (organization_id WITH =, calendar_id WITH =, during WITH &&) WHERE (((status = 'booked'::text) AND (calendar_id IS NOT NULL) AND (rrule IS NULL)));

--
-- Name: appointments appointments_no_overlap_team_member; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_no_overlap_team_member EXCLUDE USING gist (organization_id WITH =, staff_profile_id WITH =, during WITH &&) WHERE (((status = 'booked'::text) AND (staff_profile_id IS NOT NULL) AND (rrule IS NULL)));

--
-- Name: appointments appointments_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_pkey PRIMARY KEY (organization_id, id);

--
-- Name: calendars calendars_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calendars
    ADD CONSTRAINT calendars_pkey PRIMARY KEY (organization_id, id);

--
-- Name: offering_team_members offering_team_members_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offering_team_members
    ADD CONSTRAINT offering_team_members_pkey PRIMARY KEY (organization_id, offering_id, staff_profile_id);

--
-- Name: offerings offerings_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offerings
    ADD CONSTRAINT offerings_pkey PRIMARY KEY (organization_id, id);

--
-- Name: staff_profiles staff_profiles_organization_id_person_id_key; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.staff_profiles
    ADD CONSTRAINT staff_profiles_organization_id_person_id_key UNIQUE (organization_id, person_id);

--
-- Name: staff_profiles staff_profiles_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.staff_profiles
    ADD CONSTRAINT staff_profiles_pkey PRIMARY KEY (organization_id, id);

--
-- Name: territories territories_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territories
    ADD CONSTRAINT territories_pkey PRIMARY KEY (organization_id, id);

--
-- Name: territory_team_members territory_team_members_pkey; Type: CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territory_team_members
    ADD CONSTRAINT territory_team_members_pkey PRIMARY KEY (organization_id, territory_id, staff_profile_id);

--
-- Name: availability_changes_by_time; Type: INDEX; Schema: app_private; Owner: svc_owner
--

CREATE INDEX availability_changes_by_time ON app_private.availability_changes USING gist (organization_id, during);

--
-- Name: appointment_occurrences_by_start; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointment_occurrences_by_start ON app_public.appointment_occurrences USING btree (organization_id, occurrence_start);

--
-- Name: appointment_occurrences_by_time; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointment_occurrences_by_time ON app_public.appointment_occurrences USING gist (organization_id, during);

--
-- Name: appointments_by_attendee_email; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_attendee_email ON app_public.appointments USING btree (organization_id, lower(attendee_email)) WHERE (attendee_email IS NOT NULL);

--
-- Name: appointments_by_attendee_phone; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_attendee_phone ON app_public.appointments USING btree (organization_id, attendee_phone) WHERE (attendee_phone IS NOT NULL);

--
-- Name: appointments_by_contact; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_contact ON app_public.appointments USING btree (organization_id, contact_id, starts_at);

--
-- Name: appointments_by_location_time; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_location_time ON app_public.appointments USING gist (organization_id, location_id, during) WHERE (status = 'booked'::text);

--
-- Name: appointments_by_start; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_by_start ON app_public.appointments USING btree (organization_id, starts_at, id) WHERE (status = 'booked'::text);

--
-- Name: appointments_location_blocks; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX appointments_location_blocks ON app_public.appointments USING gist (organization_id, location_id, during) WHERE ((status = 'booked'::text) AND (kind = 'block'::text) AND (rrule IS NULL) AND (staff_profile_id IS NULL) AND (calendar_id IS NULL));

--
-- Name: calendars_by_location; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX calendars_by_location ON app_public.calendars USING btree (organization_id, location_id, name);

--
-- Name: offerings_by_location; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX offerings_by_location ON app_public.offerings USING btree (organization_id, location_id, name);

--
-- Name: territories_by_location; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX territories_by_location ON app_public.territories USING btree (organization_id, location_id, name);

--
-- Name: territories_postal_codes; Type: INDEX; Schema: app_public; Owner: svc_owner
--

CREATE INDEX territories_postal_codes ON app_public.territories USING gin (postal_codes);

--
-- Name: appointments _500_inserted; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_inserted AFTER INSERT ON app_public.appointments FOR EACH ROW EXECUTE FUNCTION app_private.tg_appointments__inserted();

--
-- Name: appointments _500_own_clients; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _500_own_clients AFTER DELETE OR UPDATE OF status, staff_profile_id, contact_id, kind ON app_public.appointments FOR EACH ROW EXECUTE FUNCTION app_private.tg_appointments__own_clients();

--
-- Name: appointment_occurrences _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.appointment_occurrences FOR EACH ROW EXECUTE FUNCTION app_private.tg_appointment_occurrences__availability();

--
-- Name: appointments _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER DELETE ON app_public.appointments FOR EACH ROW EXECUTE FUNCTION app_private.tg_appointments__availability();

--
-- Name: calendars _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.calendars FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: offering_team_members _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.offering_team_members FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: offerings _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.offerings FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: staff_profiles _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.staff_profiles FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: territories _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.territories FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: territory_team_members _700_availability; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability AFTER INSERT OR DELETE OR UPDATE ON app_public.territory_team_members FOR EACH ROW EXECUTE FUNCTION app_private.tg__availability_everything();

--
-- Name: appointment_occurrences _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.appointment_occurrences FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: appointments _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.appointments FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: calendars _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.calendars FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: offering_team_members _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.offering_team_members FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: offerings _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.offerings FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: staff_profiles _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.staff_profiles FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: territories _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.territories FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: territory_team_members _700_availability_truncate; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_truncate AFTER TRUNCATE ON app_public.territory_team_members FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg__availability_truncated();

--
-- Name: appointments _700_availability_update; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _700_availability_update AFTER UPDATE ON app_public.appointments FOR EACH ROW WHEN (((old.during IS DISTINCT FROM new.during) OR (old.status IS DISTINCT FROM new.status) OR (old.staff_profile_id IS DISTINCT FROM new.staff_profile_id) OR (old.calendar_id IS DISTINCT FROM new.calendar_id) OR (old.location_id IS DISTINCT FROM new.location_id) OR (old.kind IS DISTINCT FROM new.kind) OR (old.rrule IS DISTINCT FROM new.rrule) OR (old.recurrence_ends_on IS DISTINCT FROM new.recurrence_ends_on) OR (old.organization_id IS DISTINCT FROM new.organization_id))) EXECUTE FUNCTION app_private.tg_appointments__availability();

--
-- Name: appointments _900_webhooks_cancelled; Type: TRIGGER; Schema: app_public; Owner: svc_owner
--

CREATE TRIGGER _900_webhooks_cancelled AFTER UPDATE OF status ON app_public.appointments FOR EACH ROW WHEN (((new.kind = 'appointment'::text) AND (new.status = 'cancelled'::text) AND (old.status IS DISTINCT FROM 'cancelled'::text))) EXECUTE FUNCTION app_private.tg_appointments__webhooks();

--
-- Name: appointment_occurrences appointment_occurrences_organization_id_appointment_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointment_occurrences
    ADD CONSTRAINT appointment_occurrences_organization_id_appointment_id_fkey FOREIGN KEY (organization_id, appointment_id) REFERENCES app_public.appointments(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_calendar_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_calendar_id_fkey FOREIGN KEY (organization_id, calendar_id) REFERENCES app_public.calendars(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES app_public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_created_by_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_created_by_fkey FOREIGN KEY (organization_id, created_by) REFERENCES app_public.people(organization_id, id) ON DELETE SET NULL (created_by);

--
-- Name: appointments appointments_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: appointments appointments_organization_id_offering_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_offering_id_fkey FOREIGN KEY (organization_id, offering_id) REFERENCES app_public.offerings(organization_id, id) ON DELETE SET NULL (offering_id);

--
-- Name: appointments appointments_organization_id_staff_profile_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.appointments
    ADD CONSTRAINT appointments_organization_id_staff_profile_id_fkey FOREIGN KEY (organization_id, staff_profile_id) REFERENCES app_public.staff_profiles(organization_id, id) ON DELETE CASCADE;

--
-- Name: calendars calendars_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calendars
    ADD CONSTRAINT calendars_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: calendars calendars_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.calendars
    ADD CONSTRAINT calendars_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: offering_team_members offering_team_members_organization_id_offering_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offering_team_members
    ADD CONSTRAINT offering_team_members_organization_id_offering_id_fkey FOREIGN KEY (organization_id, offering_id) REFERENCES app_public.offerings(organization_id, id) ON DELETE CASCADE;

--
-- Name: offering_team_members offering_team_members_organization_id_staff_profile_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offering_team_members
    ADD CONSTRAINT offering_team_members_organization_id_staff_profile_id_fkey FOREIGN KEY (organization_id, staff_profile_id) REFERENCES app_public.staff_profiles(organization_id, id) ON DELETE CASCADE;

--
-- Name: offerings offerings_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offerings
    ADD CONSTRAINT offerings_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: offerings offerings_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.offerings
    ADD CONSTRAINT offerings_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: staff_profiles staff_profiles_organization_id_person_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.staff_profiles
    ADD CONSTRAINT staff_profiles_organization_id_person_id_fkey FOREIGN KEY (organization_id, person_id) REFERENCES app_public.people(organization_id, id) ON DELETE CASCADE;

--
-- Name: territories territories_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territories
    ADD CONSTRAINT territories_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app_public.organizations(id) ON DELETE CASCADE;

--
-- Name: territories territories_organization_id_location_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territories
    ADD CONSTRAINT territories_organization_id_location_id_fkey FOREIGN KEY (organization_id, location_id) REFERENCES app_public.locations(organization_id, id) ON DELETE CASCADE;

--
-- Name: territory_team_members territory_team_members_organization_id_staff_profile_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territory_team_members
    ADD CONSTRAINT territory_team_members_organization_id_staff_profile_id_fkey FOREIGN KEY (organization_id, staff_profile_id) REFERENCES app_public.staff_profiles(organization_id, id) ON DELETE CASCADE;

--
-- Name: territory_team_members territory_team_members_organization_id_territory_id_fkey; Type: FK CONSTRAINT; Schema: app_public; Owner: svc_owner
--

ALTER TABLE ONLY app_public.territory_team_members
    ADD CONSTRAINT territory_team_members_organization_id_territory_id_fkey FOREIGN KEY (organization_id, territory_id) REFERENCES app_public.territories(organization_id, id) ON DELETE CASCADE;

--
-- Name: availability_answers; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.availability_answers ENABLE ROW LEVEL SECURITY;

--
-- Name: availability_changes; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.availability_changes ENABLE ROW LEVEL SECURITY;

--
-- Name: availability_marks; Type: ROW SECURITY; Schema: app_private; Owner: svc_owner
--

ALTER TABLE app_private.availability_marks ENABLE ROW LEVEL SECURITY;

--
-- Name: appointment_occurrences; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.appointment_occurrences ENABLE ROW LEVEL SECURITY;

--
-- Name: appointments; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.appointments ENABLE ROW LEVEL SECURITY;

--
-- Name: calendars; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.calendars ENABLE ROW LEVEL SECURITY;

--
-- Name: appointments insert_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY insert_in_reach ON app_public.appointments FOR INSERT WITH CHECK (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: offering_team_members; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.offering_team_members ENABLE ROW LEVEL SECURITY;

--
-- Name: offerings; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.offerings ENABLE ROW LEVEL SECURITY;

--
-- Name: appointments select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.appointments FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND app_hidden.current_reads_team_member(staff_profile_id, ( SELECT app_hidden.current_staff_profile_id() AS current_staff_profile_id))));

--
-- Name: calendars select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.calendars FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: offerings select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.offerings FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: territories select_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_in_reach ON app_public.territories FOR SELECT USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[])))));

--
-- Name: offering_team_members select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.offering_team_members FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: staff_profiles select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.staff_profiles FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: territory_team_members select_own_org; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_own_org ON app_public.territory_team_members FOR SELECT USING ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: appointment_occurrences select_with_series; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY select_with_series ON app_public.appointment_occurrences FOR SELECT USING ((EXISTS ( SELECT 1
   FROM app_public.appointments a
  WHERE ((a.organization_id = appointment_occurrences.organization_id) AND (a.id = appointment_occurrences.appointment_id)))));

--
-- Name: staff_profiles; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.staff_profiles ENABLE ROW LEVEL SECURITY;

--
-- Name: territories; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.territories ENABLE ROW LEVEL SECURITY;

--
-- Name: territory_team_members; Type: ROW SECURITY; Schema: app_public; Owner: svc_owner
--

ALTER TABLE app_public.territory_team_members ENABLE ROW LEVEL SECURITY;

--
-- Name: appointments update_in_reach; Type: POLICY; Schema: app_public; Owner: svc_owner
--

CREATE POLICY update_in_reach ON app_public.appointments FOR UPDATE USING (((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)) AND (( SELECT app_hidden.current_reaches_all_locations() AS current_reaches_all_locations) OR (location_id = ANY (( SELECT app_hidden.current_location_ids() AS current_location_ids)::uuid[]))) AND app_hidden.current_reads_team_member(staff_profile_id, ( SELECT app_hidden.current_staff_profile_id() AS current_staff_profile_id)))) WITH CHECK ((organization_id = ( SELECT app_hidden.current_org_id() AS current_org_id)));

--
-- Name: TABLE appointments; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT,INSERT,UPDATE ON TABLE app_public.appointments TO svc_request;
GRANT SELECT ON TABLE app_public.appointments TO svc_worker;
GRANT SELECT ON TABLE app_public.appointments TO svc_analyst;

--
-- Name: FUNCTION appointment_for_change(appointment_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.appointment_for_change(appointment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.appointment_for_change(appointment_id uuid) TO svc_request;

--
-- Name: FUNCTION appointment_json(a app_public.appointments, occurrence_start timestamp with time zone); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.appointment_json(a app_public.appointments, occurrence_start timestamp with time zone) TO svc_worker;

--
-- Name: FUNCTION availability_keep(org uuid, location_id uuid, day date, variant text, within tstzrange, made_at timestamp with time zone, snap pg_snapshot, answer jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.availability_keep(org uuid, location_id uuid, day date, variant text, within tstzrange, made_at timestamp with time zone, snap pg_snapshot, answer jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.availability_keep(org uuid, location_id uuid, day date, variant text, within tstzrange, made_at timestamp with time zone, snap pg_snapshot, answer jsonb) TO svc_request;

--
-- Name: FUNCTION availability_kept(org uuid, location_id uuid, day date, variant text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.availability_kept(org uuid, location_id uuid, day date, variant text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.availability_kept(org uuid, location_id uuid, day date, variant text) TO svc_request;

--
-- Name: FUNCTION availability_ttl(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.availability_ttl() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.availability_ttl() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.availability_ttl() TO svc_worker;

--
-- Name: FUNCTION booking_options(organization_id uuid, location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.booking_options(organization_id uuid, location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.booking_options(organization_id uuid, location_id uuid) TO svc_request;

--
-- Name: FUNCTION current_may_book_team_member(staff_profile_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_may_book_team_member(staff_profile_id uuid) TO svc_worker;

--
-- Name: FUNCTION current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid) TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_reads_team_member(staff_profile_id uuid, own_staff_profile_id uuid) TO svc_analyst;

--
-- Name: FUNCTION current_staff_profile_id(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.current_staff_profile_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.current_staff_profile_id() TO svc_request;
GRANT ALL ON FUNCTION app_hidden.current_staff_profile_id() TO svc_worker;
GRANT ALL ON FUNCTION app_hidden.current_staff_profile_id() TO svc_analyst;

--
-- Name: FUNCTION eligible_team_member_rows(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.eligible_team_member_rows(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text) FROM PUBLIC;

--
-- Name: FUNCTION eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text, only_team_member_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text, only_team_member_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text, only_team_member_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.eligible_team_members(organization_id uuid, location_id uuid, offering_id uuid, postal_code text, country_code text, only_team_member_id uuid) TO svc_worker;

--
-- Name: FUNCTION held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.held_by_blocks_or_series(loc app_public.locations, staff_profile_id uuid, calendar_id uuid, during tstzrange, except_id uuid) TO svc_request;

--
-- Name: FUNCTION hours_hold(hours jsonb, tz text, during tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.hours_hold(hours jsonb, tz text, during tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.hours_hold(hours jsonb, tz text, during tstzrange) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.hours_hold(hours jsonb, tz text, during tstzrange) TO svc_worker;

--
-- Name: FUNCTION listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.listed_appointments(window_start timestamp with time zone, window_end timestamp with time zone, contact_phone text, contact_email text, contact_id uuid) TO svc_worker;

--
-- Name: FUNCTION listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.listed_team_member_ids(organization_id uuid, location_id uuid, listed uuid[]) TO svc_worker;

--
-- Name: FUNCTION local_day(d date, tz text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.local_day(d date, tz text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.local_day(d date, tz text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.local_day(d date, tz text) TO svc_worker;

--
-- Name: FUNCTION location_booking_options(organization_id uuid, location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.location_booking_options(organization_id uuid, location_id uuid) TO svc_worker;

--
-- Name: FUNCTION location_team_members(organization_id uuid, location_id uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.location_team_members(organization_id uuid, location_id uuid) TO svc_worker;

--
-- Name: FUNCTION lock_booking_target(organization_id uuid, target uuid); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.lock_booking_target(organization_id uuid, target uuid) TO svc_request;

--
-- Name: TABLE offerings; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.offerings TO svc_request;
GRANT SELECT ON TABLE app_public.offerings TO svc_worker;
GRANT SELECT ON TABLE app_public.offerings TO svc_analyst;

--
-- Name: FUNCTION offering_team_member_ids(o app_public.offerings); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.offering_team_member_ids(o app_public.offerings) TO svc_worker;

--
-- Name: FUNCTION opening_multirange(hours jsonb, tz text, within tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.opening_multirange(hours jsonb, tz text, within tstzrange) TO svc_worker;

--
-- Name: FUNCTION opening_ranges(hours jsonb, tz text, within tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.opening_ranges(hours jsonb, tz text, within tstzrange) TO svc_worker;

--
-- Name: FUNCTION postal_code_key(code text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.postal_code_key(code text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.postal_code_key(code text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.postal_code_key(code text) TO svc_worker;

--
-- Name: FUNCTION slot_taken(); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.slot_taken() FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.slot_taken() TO svc_request;

--
-- Name: FUNCTION slots_from_now(answer jsonb); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.slots_from_now(answer jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.slots_from_now(answer jsonb) TO svc_request;

--
-- Name: FUNCTION team_member_refusal(loc app_public.locations, offering_id uuid, postal_code text, country_code text, team_member_id uuid, during tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.team_member_refusal(loc app_public.locations, offering_id uuid, postal_code text, country_code text, team_member_id uuid, during tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.team_member_refusal(loc app_public.locations, offering_id uuid, postal_code text, country_code text, team_member_id uuid, during tstzrange) TO svc_request;

--
-- Name: FUNCTION team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.team_time(loc app_public.locations, team_members uuid[], calendars uuid[], within tstzrange) TO svc_worker;

--
-- Name: FUNCTION territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.territory_covers(organization_id uuid, location_id uuid, postal_code text, country_code text) TO svc_worker;

--
-- Name: TABLE territories; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.territories TO svc_request;
GRANT SELECT ON TABLE app_public.territories TO svc_worker;
GRANT SELECT ON TABLE app_public.territories TO svc_analyst;

--
-- Name: FUNCTION territory_json(t app_public.territories); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.territory_json(t app_public.territories) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.territory_json(t app_public.territories) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.territory_json(t app_public.territories) TO svc_worker;

--
-- Name: FUNCTION territory_team_member_ids(t app_public.territories); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) TO svc_request;
GRANT ALL ON FUNCTION app_hidden.territory_team_member_ids(t app_public.territories) TO svc_worker;

--
-- Name: FUNCTION within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange); Type: ACL; Schema: app_hidden; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) FROM PUBLIC;
GRANT ALL ON FUNCTION app_hidden.within_hours(loc app_public.locations, staff_profile_id uuid, during tstzrange) TO svc_request;

--
-- Name: FUNCTION appointment_booked_holds(e app_public.enrollments, exit jsonb); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.appointment_booked_holds(e app_public.enrollments, exit jsonb) FROM PUBLIC;

--
-- Name: FUNCTION availability_prune(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.availability_prune() FROM PUBLIC;

--
-- Name: FUNCTION note_availability_change(org uuid, span tstzrange); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.note_availability_change(org uuid, span tstzrange) FROM PUBLIC;

--
-- Name: FUNCTION tg__availability_everything(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg__availability_everything() FROM PUBLIC;

--
-- Name: FUNCTION tg__availability_truncated(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg__availability_truncated() FROM PUBLIC;

--
-- Name: FUNCTION tg_appointment_occurrences__availability(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_appointment_occurrences__availability() FROM PUBLIC;

--
-- Name: FUNCTION tg_appointments__availability(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_appointments__availability() FROM PUBLIC;

--
-- Name: FUNCTION tg_appointments__inserted(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_appointments__inserted() FROM PUBLIC;

--
-- Name: FUNCTION tg_appointments__own_clients(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_appointments__own_clients() FROM PUBLIC;

--
-- Name: FUNCTION tg_appointments__webhooks(); Type: ACL; Schema: app_private; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_private.tg_appointments__webhooks() FROM PUBLIC;

--
-- Name: FUNCTION appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_availability(location_id uuid, day date, offering_id uuid, team_member_id uuid, postal_code text, country_code text, duration_minutes integer) TO svc_request;

--
-- Name: FUNCTION appointments_cancel(appointment_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_cancel(appointment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_cancel(appointment_id uuid) TO svc_request;

--
-- Name: FUNCTION appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_create(location_id uuid, calendar_id uuid, offering_id uuid, team_member_id uuid, service_address jsonb, contact_id uuid, start_time timestamp with time zone, end_time timestamp with time zone, title text) TO svc_request;

--
-- Name: FUNCTION appointments_get(appointment_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_get(appointment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_get(appointment_id uuid) TO svc_request;

--
-- Name: FUNCTION appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_list(window_from timestamp with time zone, window_to timestamp with time zone, contact_id uuid, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_reschedule(appointment_id uuid, start_time timestamp with time zone, end_time timestamp with time zone) TO svc_request;

--
-- Name: FUNCTION appointments_update(appointment_id uuid, patch jsonb); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.appointments_update(appointment_id uuid, patch jsonb) TO svc_request;

--
-- Name: FUNCTION calendars_list(location_id uuid, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.calendars_list(location_id uuid, page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION locations_booking_options(location_id uuid); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.locations_booking_options(location_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.locations_booking_options(location_id uuid) TO svc_request;

--
-- Name: FUNCTION locations_list(page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.locations_list(page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.locations_list(page integer, page_size integer) TO svc_request;

--
-- Name: FUNCTION territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer); Type: ACL; Schema: app_public; Owner: svc_owner
--

REVOKE ALL ON FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_public.territories_list(location_id uuid, postal_code text, country_code text, page integer, page_size integer) TO svc_request;

--
-- Name: TABLE appointment_occurrences; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.appointment_occurrences TO svc_request;
GRANT SELECT ON TABLE app_public.appointment_occurrences TO svc_worker;
GRANT SELECT ON TABLE app_public.appointment_occurrences TO svc_analyst;

--
-- Name: TABLE appointments_per_day; Type: ACL; Schema: app_analytics; Owner: svc_owner
--

GRANT SELECT ON TABLE app_analytics.appointments_per_day TO svc_analyst;

--
-- Name: TABLE calendars; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.calendars TO svc_request;
GRANT SELECT ON TABLE app_public.calendars TO svc_worker;
GRANT SELECT ON TABLE app_public.calendars TO svc_analyst;

--
-- Name: TABLE offering_team_members; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.offering_team_members TO svc_request;
GRANT SELECT ON TABLE app_public.offering_team_members TO svc_worker;
GRANT SELECT ON TABLE app_public.offering_team_members TO svc_analyst;

--
-- Name: TABLE staff_profiles; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.staff_profiles TO svc_request;
GRANT SELECT ON TABLE app_public.staff_profiles TO svc_worker;
GRANT SELECT ON TABLE app_public.staff_profiles TO svc_analyst;

--
-- Name: TABLE territory_team_members; Type: ACL; Schema: app_public; Owner: svc_owner
--

GRANT SELECT ON TABLE app_public.territory_team_members TO svc_request;
GRANT SELECT ON TABLE app_public.territory_team_members TO svc_worker;
GRANT SELECT ON TABLE app_public.territory_team_members TO svc_analyst;
