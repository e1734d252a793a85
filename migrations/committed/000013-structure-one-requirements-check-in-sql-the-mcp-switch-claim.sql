--! Previous: sha1:5e7438a57a8c3313349dafe978b43d541fc5fb60
--! Hash: sha1:fa5ae6451142651d76b97830a0b774c1a10c129b
--! Message: structure: one requirements check in SQL, the MCP switch, claims' settings, own clients, contact events and subscriptions, contact fields by data

--! split: 301-requirements-and-claim-settings.sql
-- An operation's requirements are checked in one place, and the claims' settings travel as
-- authenticate set them.
--
-- 1. app_hidden.requirement_refusal(scope, member_access, manager_power) is the check
--    app_hidden.authenticate made inline: scope first (403 insufficient_scope, naming it), then
--    role (403 insufficient_role: a MEMBER on a deny operation or on an SMS one with texting
--    off; a MANAGER without the operation's power, or on a deny operation that names none). It
--    reads the claims of the transaction and answers the refusal, or null. authenticate raises
--    what it answers; the MCP endpoint asks it for every operation of the registry at once to
--    list the tools a credential may call (app_hidden.authorize_mcp), so the list can never
--    disagree with what a call would be allowed.
-- 2. app_hidden.authorize_mcp(requirements) is the organization's MCP switch (404 while it is
--    off) and that listing, called right after authenticate in the same round trip.
-- 3. authenticate answers, besides the claims, the exact svc.* settings it set (`settings`). A
--    later transaction of the same call re-applies them instead of resolving the key again (an
--    idempotent write: src/platform/idempotency.ts), and internal GraphQL hands them to
--    PostGraphile as they are: nothing outside this function encodes a claim as a setting.
set local role svc_owner;

create or replace function app_hidden.current_sms_enabled() returns boolean
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('svc.sms_enabled', true), '')::boolean, false)
$$;
comment on function app_hidden.current_sms_enabled() is
  'Whether the credential may text (a MEMBER''s SMS setting; a MEMBER key never); false when unset.';
grant execute on function app_hidden.current_sms_enabled() to svc_request, svc_worker;

-- plpgsql, not SQL: authenticate calls it on every request, and PostgreSQL would plan a SQL
-- function's body on every call.
create or replace function app_hidden.requirement_refusal(required_scope text, member_access text, manager_power text)
returns jsonb
language plpgsql stable as $$
declare
  acting text := app_hidden.current_role();
begin
  if required_scope is not null and not (required_scope = any(app_hidden.current_scopes())) then
    return jsonb_build_object('status', 403, 'error', 'insufficient_scope',
      'message', format('This credential lacks the %s scope', required_scope),
      'extra', jsonb_build_object('required', required_scope));
  end if;
  if acting = 'manager' then
    if manager_power is not null and not (manager_power = any(app_hidden.current_powers())) then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', format('A manager needs the %s power for this operation', manager_power));
    elsif manager_power is null and member_access = 'deny' then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'A manager cannot call this operation');
    end if;
  elsif acting = 'member' then
    if member_access = 'deny' then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'A member cannot call this operation');
    elsif member_access = 'sms_setting' and not app_hidden.current_sms_enabled() then
      return jsonb_build_object('status', 403, 'error', 'insufficient_role',
        'message', 'Texting is turned off for this member');
    end if;
  end if;
  return null;
end $$;
comment on function app_hidden.requirement_refusal(text, text, text) is
  'Whether the current claims meet an operation''s requirements (scope, member access, manager power): null, or the '
  'refusal as {status, error, message, extra}. Scope is checked first, so insufficient_scope names the scope.';
grant execute on function app_hidden.requirement_refusal(text, text, text) to svc_request;

create or replace function app_hidden.authenticate(
  key_hash bytea,
  required_scope text,
  member_access text,
  manager_power text
) returns jsonb
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  k app_private.api_keys;
  p app_public.people;
  eff_role text;
  loc_ids uuid[];
  powers text[];
  sms_enabled boolean := true;
  records_level text := 'all';
  role_switch boolean;
  settings jsonb;
  refusal jsonb;
begin
  select * into k from app_private.api_keys where api_keys.key_hash = authenticate.key_hash;
  if not found or k.revoked_at is not null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;

  select * into p from app_public.people
   where organization_id = k.organization_id and id = k.created_by;

  if k.kind = 'personal' then
    select r.agent_access into role_switch from app_public.role_agent_access r
     where r.organization_id = p.organization_id and r.role = p.role;
    if not p.active
       or (p.role <> 'owner' and (not p.agent_access or not coalesce(role_switch, true))) then
      perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
    end if;
    eff_role := p.role;
    sms_enabled := p.sms_enabled;
    if p.role in ('manager', 'member') then
      select coalesce(array_agg(location_id order by location_id), '{}') into loc_ids
        from app_public.person_locations
       where organization_id = p.organization_id and person_id = p.id;
      records_level := case when p.role = 'member' then p.records_level else 'all' end;
      powers := case when p.role = 'manager' then p.powers else '{}' end;
    end if;
  else
    eff_role := coalesce(lower(k.role), 'organization');
    select array_agg(location_id order by location_id) into loc_ids
      from app_private.api_key_locations
     where organization_id = k.organization_id and api_key_id = k.id;
    powers := case when k.role = 'MANAGER' then k.powers else '{}' end;
    -- a Member key sends no SMS
    sms_enabled := k.role is distinct from 'MEMBER';
  end if;

  -- Every claim as the text of its setting, set from this one object and answered with it.
  settings := jsonb_build_object(
    'svc.organization_id', k.organization_id::text,
    'svc.credential_id', k.id::text,
    'svc.user_id', case when k.kind = 'personal' then p.id::text else '' end,
    'svc.role', eff_role,
    'svc.location_ids', coalesce(loc_ids::text, '*'),
    'svc.powers', coalesce(powers, '{}')::text,
    'svc.scopes', k.scopes::text,
    'svc.records_level', records_level,
    'svc.sms_enabled', sms_enabled::text);
  perform set_config(s.key, s.value, true) from jsonb_each_text(settings) s;

  refusal := app_hidden.requirement_refusal(required_scope, member_access, manager_power);
  if refusal is not null then
    perform app_hidden.raise_error((refusal->>'status')::int, refusal->>'error', refusal->>'message', refusal->'extra');
  end if;

  return jsonb_build_object(
    'organization_id', k.organization_id,
    'credential_id', k.id,
    'kind', k.kind,
    'user_id', case when k.kind = 'personal' then p.id end,
    'role', eff_role,
    'key_role', case when eff_role in ('manager', 'member') then upper(eff_role) end,
    'location_ids', to_jsonb(loc_ids),
    'powers', case when eff_role = 'manager' then to_jsonb(powers) end,
    'scopes', to_jsonb(k.scopes),
    'records_level', records_level,
    'sms_enabled', sms_enabled,
    'settings', settings
  );
end $$;
comment on function app_hidden.authenticate(bytea, text, text, text) is
  'Resolves a key hash, sets the svc.* claims for the transaction, enforces the operation''s requirements '
  '(app_hidden.requirement_refusal), and answers the claims with the exact settings it set (settings).';

-- The MCP endpoint, after authenticate: 404 while the organization has MCP turned off, else
-- the operations of `requirements` ([{operation_id, scope, member_access, manager_power}], the
-- registry's) this credential may call, in the order given.
create or replace function app_hidden.authorize_mcp(requirements jsonb) returns text[]
language plpgsql stable as $$
begin
  if not exists (select 1 from app_public.organizations o
                  where o.id = app_hidden.current_org_id() and o.mcp_enabled) then
    perform app_hidden.raise_error(404, 'not_found', 'MCP endpoint not found');
  end if;
  return array(
    select r->>'operation_id'
      from jsonb_array_elements(requirements) with ordinality as x(r, n)
     where app_hidden.requirement_refusal(r->>'scope', r->>'member_access', r->>'manager_power') is null
     order by n);
end $$;
comment on function app_hidden.authorize_mcp(jsonb) is
  'Raises 404 while the current organization has MCP turned off; else answers the operation ids of requirements '
  '([{operation_id, scope, member_access, manager_power}]) the current claims meet. Called right after app_hidden.authenticate.';
grant execute on function app_hidden.authorize_mcp(jsonb) to svc_request;

reset role;

--! split: 310-own-clients.sql
-- Own clients: the contacts a person deals with themselves, kept as rows that the areas which
-- know it write, instead of a function each of them would have to redefine.
--
-- A MEMBER at the own-records level reads only the contacts on their own appointments (spec:
-- roles), and later the contacts of their own calls and conversations. Until now
-- app_hidden.current_own_client_ids() answered '{}' and waited for the appointments area to
-- redefine it; a second area (calls) could then only redefine it again, restating the first.
-- Now each area keeps its own rows of app_private.own_clients, by triggers on its own tables
-- (an appointment booked for a staff profile adds (its person, its contact, 'appointments'); the
-- last one cancelled removes it), and the reach policies read the union. With no rows (today)
-- such a member reaches no contact, as before.
set local role svc_owner;

create table if not exists app_private.own_clients (
  organization_id uuid not null,
  person_id uuid not null,
  contact_id uuid not null,
  source text not null check (source ~ '^[a-z][a-z0-9_]{0,49}$'),
  created_at timestamptz not null default now(),
  primary key (organization_id, person_id, contact_id, source),
  foreign key (organization_id, person_id) references app_public.people on delete cascade,
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade
);
comment on table app_private.own_clients is
  'A contact is a person''s own client for as long as an area (source: appointments, calls…) keeps a row for it; '
  'each area writes only its own rows. Read by app_hidden.current_own_client_ids().';
create index if not exists own_clients_by_contact on app_private.own_clients (organization_id, contact_id);
-- Written and read only by the owner's functions.
alter table app_private.own_clients enable row level security;

-- Runs once per statement wherever a policy names it (`(select …)`), as the owner: the request
-- and analyst roles cannot read app_private.
create or replace function app_hidden.current_own_client_ids() returns uuid[]
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  return coalesce((select array_agg(distinct o.contact_id)
                     from app_private.own_clients o
                    where o.organization_id = app_hidden.current_org_id()
                      and o.person_id = app_hidden.current_user_id()), '{}');
end $$;
comment on function app_hidden.current_own_client_ids() is
  'Contacts that are the acting person''s own clients (own-records level): app_private.own_clients, from every source.';

reset role;

--! split: 320-contact-events.sql
-- Events of contacts_upsert, extended by data: who listens to an event is a row of
-- app_private.event_subscriptions, and every event accepted is a row of
-- app_private.contact_events, which the listener's trigger (or job) reacts to.
--
-- Until now app_hidden.contacts_process_events answered no_subscriber and waited for the
-- sequences area to redefine it. Now it is the contacts area's for good (spec: Events;
-- ../shared/design/sequences.md, "Events fired by contacts_upsert"):
--   - cancel_events are processed first: each name some subscription listens to is recorded
--     (kind cancel), for the listeners to cancel what that event started for the contact;
--   - then each event: an (event, key) already accepted in the organization answers its first
--     receipt again and records nothing; an event no subscription takes (after the filters)
--     answers no_subscriber and records nothing, so its key stays unspent and a retry may still
--     enroll; otherwise it is recorded (kind fire, with the subscriptions it matched) and answers
--     accepted, or legacy_unverified when it came without a key (older clients: recorded every
--     time, never deduplicated);
--   - the one filter of the spec: a subscription to assessment_abandoned may carry an
--     assessment_audience, started (fields.user_message_count > 0) or never_started (= 0); an
--     event without a count matches only subscriptions without it.
-- Everything is written in the upsert's transaction: an upsert that fails or rolls back spends
-- no key and records nothing. With no subscriptions (today) every answer is what it was.
set local role svc_owner;

create table if not exists app_private.event_subscriptions (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  event text not null check (event ~ '^[a-z][a-z0-9_]{0,99}$'),
  subscriber_kind text not null check (subscriber_kind ~ '^[a-z][a-z0-9_]{0,49}$'),
  subscriber_id uuid not null,
  assessment_audience text check (assessment_audience in ('started', 'never_started')),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, event, subscriber_kind, subscriber_id),
  check (assessment_audience is null or event = 'assessment_abandoned')
);
comment on table app_private.event_subscriptions is
  'Who listens to an event of contacts_upsert: one row per (event, subscriber), written by the subscriber''s area '
  '(an active sequence with an event trigger). assessment_audience filters assessment_abandoned by fields.user_message_count.';
alter table app_private.event_subscriptions enable row level security;

create table if not exists app_private.contact_events (
  organization_id uuid not null references app_public.organizations on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- the order of recording, across one upsert's cancels and events
  seq bigint generated always as identity,
  contact_id uuid not null,
  kind text not null check (kind in ('cancel', 'fire')),
  event text not null check (event ~ '^[a-z][a-z0-9_]{0,99}$'),
  key text check (length(key) between 1 and 255),
  fields jsonb not null default '{}' check (jsonb_typeof(fields) = 'object'),
  subscription_ids uuid[] not null check (cardinality(subscription_ids) > 0),
  receipt jsonb,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, contact_id) references app_public.contacts on delete cascade,
  check ((kind = 'fire') = (receipt is not null)),
  check (kind = 'fire' or key is null)
);
comment on table app_private.contact_events is
  'Events of contacts_upsert that some subscription took (kind fire, with its receipt) and cancels of events some '
  'subscription listens to (kind cancel), in order (seq), with the subscriptions they matched. Listeners react by '
  'trigger or job; a fired (event, key) is accepted once per organization.';
create unique index if not exists contact_events_once on app_private.contact_events (organization_id, event, key)
  where kind = 'fire' and key is not null;
create index if not exists contact_events_by_contact on app_private.contact_events (organization_id, contact_id);
alter table app_private.contact_events enable row level security;

-- The subscriptions of the current organization an event (or a cancel: count_filter false)
-- reaches, in a stable order.
create or replace function app_private.event_subscribers(event text, fields jsonb, count_filter boolean) returns uuid[]
language plpgsql stable
set search_path to pg_catalog, public, pg_temp as $$
declare
  answers numeric := case jsonb_typeof(fields->'user_message_count') when 'number' then (fields->>'user_message_count')::numeric end;
begin
  return array(
    select s.id from app_private.event_subscriptions s
     where s.organization_id = app_hidden.current_org_id() and s.event = event_subscribers.event
       and (not count_filter or s.assessment_audience is null
            or (s.assessment_audience = 'started' and answers > 0)
            or (s.assessment_audience = 'never_started' and answers = 0))
     order by s.id);
end $$;
comment on function app_private.event_subscribers(text, jsonb, boolean) is
  'Subscriptions of the current organization to an event; with count_filter, those whose assessment_audience the '
  'fields'' user_message_count meets.';
revoke execute on function app_private.event_subscribers(text, jsonb, boolean) from public;

-- Runs as the owner (it reads and writes app_private) for the credentials that may upsert,
-- as app_hidden.contacts_upsert_row does, and only for a contact of the current organization.
create or replace function app_hidden.contacts_process_events(contact_id uuid, events jsonb, cancel_events jsonb, fields jsonb)
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org uuid := app_hidden.current_org_id();
  given jsonb := coalesce(fields, '{}');
  cancelled text;
  e jsonb;
  subscribers uuid[];
  receipt jsonb;
  answer jsonb := '{}';
begin
  if org is null or not app_hidden.current_reaches_all_locations() or app_hidden.current_records_level() <> 'all'
     or not app_hidden.current_has_power('contacts') then
    perform app_hidden.raise_error(403, 'insufficient_role',
      'Upserting contacts needs a credential that reaches the whole organization with the contacts power');
  end if;
  if not exists (select 1 from app_public.contacts c where c.organization_id = org and c.id = contacts_process_events.contact_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
  end if;

  for cancelled in select value from jsonb_array_elements_text(coalesce(cancel_events, '[]')) loop
    subscribers := app_private.event_subscribers(cancelled, given, false);
    if cardinality(subscribers) > 0 then
      insert into app_private.contact_events (organization_id, contact_id, kind, event, fields, subscription_ids)
      values (org, contacts_process_events.contact_id, 'cancel', cancelled, given, subscribers);
    end if;
  end loop;

  for e in select value from jsonb_array_elements(coalesce(events, '[]')) loop
    receipt := null;
    if e->>'key' is not null then
      select ce.receipt into receipt from app_private.contact_events ce
       where ce.organization_id = org and ce.kind = 'fire' and ce.event = e->>'name' and ce.key = e->>'key';
    end if;
    if receipt is null then
      subscribers := app_private.event_subscribers(e->>'name', given, true);
      if cardinality(subscribers) = 0 then
        receipt := jsonb_build_object('status', 'no_subscriber', 'key', e->>'key');
      elsif e->>'key' is null then
        receipt := jsonb_build_object('status', 'legacy_unverified', 'key', null);
        insert into app_private.contact_events (organization_id, contact_id, kind, event, fields, subscription_ids, receipt)
        values (org, contacts_process_events.contact_id, 'fire', e->>'name', given, subscribers, receipt);
      else
        insert into app_private.contact_events (organization_id, contact_id, kind, event, key, fields, subscription_ids, receipt)
        values (org, contacts_process_events.contact_id, 'fire', e->>'name', e->>'key', given, subscribers,
                jsonb_build_object('status', 'accepted', 'key', e->>'key'))
        on conflict (organization_id, event, key) where kind = 'fire' and key is not null do nothing
        returning contact_events.receipt into receipt;
        -- a concurrent upsert accepted the same key first (and has committed)
        if receipt is null then
          select ce.receipt into receipt from app_private.contact_events ce
           where ce.organization_id = org and ce.kind = 'fire' and ce.event = e->>'name' and ce.key = e->>'key';
        end if;
      end if;
    end if;
    if e->>'name' = 'assessment_abandoned' and not answer ? 'assessmentAbandonment' then
      answer := jsonb_build_object('assessmentAbandonment', receipt);
    end if;
  end loop;
  return answer;
end $$;
comment on function app_hidden.contacts_process_events(uuid, jsonb, jsonb, jsonb) is
  'Processes the cancel_events, then the events, of a contacts_upsert against app_private.event_subscriptions, '
  'recording what some subscription takes in app_private.contact_events; answers receipts to merge into its response '
  '(assessmentAbandonment: accepted, no_subscriber, legacy_unverified).';

reset role;

--! split: 330-contact-fields.sql
-- The contact record, extended by data: each field of the record is a row of
-- app_private.contact_fields (its name, the area that owns it, and the SQL expression that
-- renders it), and app_hidden.contacts_json, the renderer of contacts_get, contacts_search and
-- the writes, is generated from those rows whenever they change.
--
-- Until now another area could add a field (next appointment, active sequences) only by
-- restating contacts_json whole, and a second area by restating the first one's restatement.
-- Reading a registry at render time would cost every page a lookup and an EXECUTE; generating
-- the function keeps what 000008 measured: one plpgsql function, one statement per page, its
-- plan cached per connection, each field an expression inlined in that statement.
--
-- An expression is rendered in
--   select jsonb_agg(jsonb_build_object(<name>, <expression>, …) order by c.ordinality)
--     from unnest(contacts) with ordinality as c where c.organization_id = org
-- as the owner, like the rest of the renderer, so it sees what no policy filters. In scope:
-- `c` (the contact, app_public.contacts), `org` (the current organization) and `reach` (the
-- caller's locations; null when it reaches them all). It must read only rows of `org` that
-- belong to the contact, and restrict what the related table's policies would restrict (as
-- location_ids does with `reach`). Field limiting needs nothing of it: callers who read only a
-- contact's id, name, email and phone get app_hidden.contact_card and never this renderer.
-- An expression that does not compile fails the statement that registers it, and the
-- renderer stays as it was.
set local role svc_owner;

create table if not exists app_private.contact_fields (
  name text primary key check (name ~ '^[a-z][a-z0-9_]{0,62}$'),
  area text not null check (area ~ '^[a-z][a-z0-9_]{0,49}$'),
  expression text not null check (length(expression) between 1 and 4000),
  position int not null default 1000
);
comment on table app_private.contact_fields is
  'The fields of the contact record as contacts_get answers it: name, owning area, SQL expression (over c, org, reach). '
  'Changing a row regenerates app_hidden.contacts_json.';
alter table app_private.contact_fields enable row level security;

-- (Re)creates app_hidden.contacts_json from the registered fields, then runs it once on no
-- contact so that an expression that does not compile fails here, with the change it came with.
create or replace function app_private.define_contacts_json() returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $fn$
declare
  -- jsonb_build_object takes at most 100 arguments: 50 fields per call, the calls joined by ||
  objects text;
begin
  select string_agg(format('jsonb_build_object(%s)', pairs), E'\n      || ' order by chunk) into objects
    from (select chunk, string_agg(format('%L, %s', name, expression), E',\n        ' order by position, name) as pairs
            from (select f.*, (row_number() over (order by position, name) - 1) / 50 as chunk
                    from app_private.contact_fields f) numbered
           group by chunk) chunks;
  execute format($define$
create or replace function app_hidden.contacts_json(contacts app_public.contacts[]) returns jsonb
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $renderer$
declare
  org uuid := app_hidden.current_org_id();
  reach uuid[] := app_hidden.current_location_ids();
begin
  return (
    select coalesce(jsonb_agg(%s
      order by c.ordinality), '[]')
      from unnest(contacts) with ordinality as c
     where c.organization_id = org);
end $renderer$
$define$, coalesce(objects, $$'{}'::jsonb$$));
  perform app_hidden.contacts_json('{}');
end $fn$;
comment on function app_private.define_contacts_json() is
  'Generates app_hidden.contacts_json from app_private.contact_fields; run by the table''s trigger.';
revoke execute on function app_private.define_contacts_json() from public;

create or replace function app_private.tg_contact_fields__define() returns trigger
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  perform app_private.define_contacts_json();
  return null;
end $$;
revoke execute on function app_private.tg_contact_fields__define() from public;
drop trigger if exists _500_define_contacts_json on app_private.contact_fields;
create trigger _500_define_contacts_json after insert or update or delete or truncate on app_private.contact_fields
  for each statement execute function app_private.tg_contact_fields__define();

-- The contacts area's own fields, as 000008's renderer wrote them.
insert into app_private.contact_fields (name, area, position, expression) values
  ('id', 'contacts', 10, 'c.id'),
  ('name', 'contacts', 20, 'c.name'),
  ('email', 'contacts', 30, 'c.email'),
  ('phone', 'contacts', 40, 'c.phone'),
  ('stage_id', 'contacts', 50, 'c.stage_id'),
  ('stage', 'contacts', 60, $$(select jsonb_build_object('id', s.id, 'name', s.name) from app_public.pipeline_stages s
                 where s.organization_id = c.organization_id and s.id = c.stage_id)$$),
  ('tags', 'contacts', 70, $$coalesce((select jsonb_agg(t.name order by t.name) from app_public.contact_tags ct
                          join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                         where ct.organization_id = c.organization_id and ct.contact_id = c.id), '[]')$$),
  ('custom_fields', 'contacts', 80, 'c.field_values'),
  ('notes_count', 'contacts', 90, 'c.notes_count'),
  ('location_ids', 'contacts', 100, $$coalesce((select jsonb_agg(cl.location_id order by cl.location_id) from app_public.contact_locations cl
                                 where cl.organization_id = c.organization_id and cl.contact_id = c.id
                                   and (reach is null or cl.location_id = any(reach))), '[]')$$),
  ('sms_consent', 'contacts', 110, 'c.sms_consent'),
  ('sms_consent_at', 'contacts', 120, 'c.sms_consent_at'),
  ('email_suppressed', 'contacts', 130, $$c.email is not null and exists (
        select 1 from app_public.email_suppressions es where es.organization_id = c.organization_id and es.email = c.email_key)$$),
  ('sms_opted_out', 'contacts', 140, $$c.phone is not null and exists (
        select 1 from app_public.sms_opt_outs so
         where so.organization_id = c.organization_id and so.phone = c.phone and so.ended_at is null)$$),
  ('total_calls', 'contacts', 150, 'c.total_calls'),
  ('first_seen_at', 'contacts', 160, 'c.first_seen_at'),
  ('last_seen_at', 'contacts', 170, 'c.last_seen_at'),
  ('created_at', 'contacts', 180, 'c.created_at'),
  ('updated_at', 'contacts', 190, 'c.updated_at')
on conflict (name) do update set area = excluded.area, position = excluded.position, expression = excluded.expression;

comment on function app_hidden.contacts_json(app_public.contacts[]) is
  'Contacts read under the caller''s policies, in order, with the fields of app_private.contact_fields (generated from it): '
  'stage, tags, custom fields, notes count, locations in reach, suppression state, and what other areas register.';

reset role;
