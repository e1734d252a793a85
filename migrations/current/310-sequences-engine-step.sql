-- Running one due step of an enrollment (task sequence_step, src/sequences/sequence_step.ts).
--
-- Each (enrollment, step) is at most one step run (unique). A message is claimed in one
-- transaction (step run `sending` + the message row, app_private.sequence_step_claim), handed
-- to the transport after that commit, and its outcome recorded in a second
-- (app_private.sequence_step_record). A job that finds its step run still `sending` knows the
-- process died between hand-off and record (once the claim is five minutes old, longer than any
-- transport may hold a message): it marks the run `unknown` (with an `unknown` event) and moves
-- on; the message is never handed over again.
set local role svc_owner;

-- A sequence message whose outcome nobody recorded: the process died holding it.
alter table app_private.outgoing_messages drop constraint if exists outgoing_messages_status_check;
alter table app_private.outgoing_messages add constraint outgoing_messages_status_check
  check (status in ('queued', 'sent', 'failed', 'unknown'));

--------------------------------------------------------------------------------
-- Unsubscribe tokens
--------------------------------------------------------------------------------
-- The token in a sequence email's List-Unsubscribe URL: 32 random bytes (two v4 UUIDs' worth of
-- randomness, 244 bits), base64url, shown only in the message; the table keeps its SHA-256.
create table if not exists app_private.unsubscribe_tokens (
  token_hash bytea primary key,
  organization_id uuid not null references app_public.organizations on delete cascade,
  email text not null check (email = lower(email)),
  contact_id uuid,
  enrollment_id uuid,
  message_id uuid,
  created_at timestamptz not null default now(),
  used_at timestamptz
);
alter table app_private.unsubscribe_tokens enable row level security;
comment on table app_private.unsubscribe_tokens is
  'One-click unsubscribe tokens of sequence email (RFC 8058): the SHA-256 of the random token the URL carries, the address it '
  'suppresses, and when it was used.';

create or replace function app_private.new_unsubscribe_token(organization_id uuid, email text, contact_id uuid,
  enrollment_id uuid, message_id uuid) returns text
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  token text := rtrim(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=');
begin
  insert into app_private.unsubscribe_tokens (token_hash, organization_id, email, contact_id, enrollment_id, message_id)
  values (sha256(convert_to(token, 'UTF8')), organization_id, lower(email), contact_id, enrollment_id, message_id);
  return token;
end $$;
comment on function app_private.new_unsubscribe_token(uuid, text, uuid, uuid, uuid) is
  'A new unsubscribe token for an address (random, only its hash kept); answers the token for the URL.';
revoke execute on function app_private.new_unsubscribe_token(uuid, text, uuid, uuid, uuid) from public;

--------------------------------------------------------------------------------
-- When a contact's stage last changed
--------------------------------------------------------------------------------
-- The stage_changed exit asks whether the contact moved to a stage since it enrolled, which
-- updated_at cannot tell (any edit moves it). Set on insert and whenever stage_id changes.
alter table app_public.contacts add column if not exists stage_changed_at timestamptz not null default now();
comment on column app_public.contacts.stage_changed_at is 'When stage_id last changed (or the contact was created).';

create or replace function app_private.tg_contacts__stage_changed_at() returns trigger
language plpgsql as $$
begin
  new.stage_changed_at := now();
  return new;
end $$;
comment on function app_private.tg_contacts__stage_changed_at() is 'Stamps contacts.stage_changed_at when the stage changes.';
revoke execute on function app_private.tg_contacts__stage_changed_at() from public;
drop trigger if exists _200_stage_changed_at on app_public.contacts;
create trigger _200_stage_changed_at before update of stage_id on app_public.contacts
  for each row when (old.stage_id is distinct from new.stage_id)
  execute function app_private.tg_contacts__stage_changed_at();

--------------------------------------------------------------------------------
-- Exits and next steps
--------------------------------------------------------------------------------
-- The first exit condition of the enrollment's sequence that holds now (its type), or NULL.
-- `replied`: the enrollment has a replied event; `tag_added`: the contact carries the tag, added
-- since it enrolled; `stage_changed`: the contact moved to the stage since it enrolled
-- (contacts.stage_changed_at; a contact already on it when enrolled does not exit by another
-- edit); `condition`: app_hidden.condition_holds. Types other areas add (appointment_booked)
-- hold when the function their row names says so.
-- An area that adds an exit type (appointment_booked, …) gives its row the function that tells
-- whether it holds for an enrollment: (app_public.enrollments, the exit condition jsonb) → boolean.
alter table app_private.sequence_exit_types add column if not exists holds regprocedure;
comment on column app_private.sequence_exit_types.holds is
  'For an exit type of another area: its function (enrollment app_public.enrollments, exit jsonb) returns boolean, '
  'asked when an event arrives and before each send. NULL for the sequences'' own types, evaluated here.';

create or replace function app_private.exit_condition_holding(e app_public.enrollments, exits jsonb) returns text
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  x jsonb;
  hook text;
  held boolean;
begin
  for x in select value from jsonb_array_elements(coalesce(exits, '[]')) loop
    if x->>'type' = 'replied' then
      if exists (select 1 from app_public.enrollment_events v
                  where v.organization_id = e.organization_id and v.enrollment_id = e.id and v.type = 'replied') then
        return 'replied';
      end if;
    elsif x->>'type' = 'tag_added' then
      if exists (select 1 from app_public.contact_tags ct join app_public.tags t on t.organization_id = ct.organization_id and t.id = ct.tag_id
                  where ct.organization_id = e.organization_id and ct.contact_id = e.contact_id
                    and t.name = (x->>'tag')::citext and ct.created_at >= e.created_at) then
        return 'tag_added';
      end if;
    elsif x->>'type' = 'stage_changed' then
      if exists (select 1 from app_public.contacts c
                  where c.organization_id = e.organization_id and c.id = e.contact_id
                    and c.stage_id::text = x->>'stage_id' and c.stage_changed_at >= e.created_at) then
        return 'stage_changed';
      end if;
    elsif x->>'type' = 'condition' then
      if app_hidden.condition_holds(e.organization_id, e.contact_id, e.id, x->'condition') then
        return 'condition';
      end if;
    else
      -- an exit type another area added: its row names the function that tells (a catalog name,
      -- never input, so the statement is built from the catalog only)
      select format('select %I.%I($1, $2)', n.nspname, p.proname) into hook
        from app_private.sequence_exit_types t
        join pg_catalog.pg_proc p on p.oid = t.holds
        join pg_catalog.pg_namespace n on n.oid = p.pronamespace
       where t.type = x->>'type';
      if hook is not null then
        execute hook into held using e, x;
        if held then
          return x->>'type';
        end if;
      end if;
    end if;
  end loop;
  return null;
end $$;
comment on function app_private.exit_condition_holding(app_public.enrollments, jsonb) is
  'The type of the first exit condition that holds for the enrollment now (replied, tag_added, stage_changed, condition), or NULL.';
revoke execute on function app_private.exit_condition_holding(app_public.enrollments, jsonb) from public;

-- Moves an enrollment on from the step it stands on: with edges, the first edge from that step
-- whose condition holds (none: completed); without, the next step in list order (none:
-- completed). The next step is due now + its delay, run at the next opening of the send
-- window, and its job scheduled.
create or replace function app_private.advance_enrollment(organization_id uuid, enrollment_id uuid, at timestamptz default now())
returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  e app_public.enrollments;
  s app_public.sequences;
  next_key text;
  idx int;
  step jsonb;
  due timestamptz;
  edge jsonb;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = advance_enrollment.organization_id and x.id = advance_enrollment.enrollment_id;
  if e.status <> 'active' then
    return;
  end if;
  select * into s from app_public.sequences x where x.organization_id = e.organization_id and x.id = e.sequence_id;
  if jsonb_array_length(s.edges) > 0 then
    for edge in select value from jsonb_array_elements(s.edges) loop
      if edge->>'from' = e.current_step_key
         and (edge->'condition' is null or jsonb_typeof(edge->'condition') = 'null'
              or app_hidden.condition_holds(e.organization_id, e.contact_id, e.id, edge->'condition')) then
        next_key := edge->>'to';
        exit;
      end if;
    end loop;
    if next_key is not null then
      select t.o - 1 into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = next_key limit 1;
    end if;
  else
    select t.o into idx from jsonb_array_elements(s.steps) with ordinality t(v, o) where t.v->>'step_key' = e.current_step_key limit 1;
  end if;
  step := case when idx is not null then s.steps->idx end;
  if step is null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'completed', 'last_step');
    return;
  end if;
  due := at + app_hidden.step_delay(step);
  update app_public.enrollments x
     set current_step_index = idx, current_step_key = step->>'step_key', next_step_due_at = due,
         next_run_at = app_hidden.sequence_next_run(e.organization_id, s.send_schedule_id, due), updated_at = at
   where x.organization_id = e.organization_id and x.id = e.id;
  perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id]);
end $$;
comment on function app_private.advance_enrollment(uuid, uuid, timestamptz) is
  'Moves an active enrollment to its next step (edges: first whose condition holds; else list order), due at + delay, in the '
  'send window, job scheduled; no next step: completed.';
revoke execute on function app_private.advance_enrollment(uuid, uuid, timestamptz) from public;

-- Why a message of this channel may not go to the contact now, or NULL: missing_address,
-- suppressed (email), opted_out, no_consent (SMS). Checked at send time, whatever the checks
-- at enrollment said.
create or replace function app_private.send_refusal(organization_id uuid, channel text, address text) returns text
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
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
comment on function app_private.send_refusal(uuid, text, text) is
  'Why an email or SMS may not go to this address now (missing_address, suppressed, opted_out), or NULL. SMS consent is the contact''s and checked beside it.';
revoke execute on function app_private.send_refusal(uuid, text, text) from public;

-- Builds a sequence message (rendered subject and body, sender, headers, meta) and stores it
-- as an outgoing message in `queued` (no delivery job: the caller hands it over itself), or
-- `sent` when the caller stores it in the local sink in the same transaction.
-- `html` bodies have their variables HTML-escaped. Email from the organization's sending domain
-- carries Message-ID on that domain and, when `unsubscribe` is set, List-Unsubscribe with a new
-- one-click token URL and List-Unsubscribe-Post (RFC 8058).
drop function if exists app_private.build_sequence_message(uuid, app_public.sequences, jsonb, uuid, text, uuid, text, boolean);
create or replace function app_private.build_sequence_message(organization_id uuid, s app_public.sequences, step jsonb,
  contact_id uuid, recipient text, enrollment_id uuid, base_url text, unsubscribe boolean, status text default 'queued') returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  org app_public.organizations;
  message_id uuid := gen_random_uuid();
  channel text := step->>'type';
  domain text;
  sender text;
  unsubscribe_url text;
  vars jsonb;
  is_html boolean := coalesce(step->>'format' = 'html', coalesce(step->>'body', '') ~* '<(html|body|p|br|div|a|table|span|strong|em)[\s/>]');
  subject text;
  body text;
  headers jsonb := '{}';
  meta jsonb;
begin
  select * into org from app_public.organizations o where o.id = build_sequence_message.organization_id;
  if channel = 'email' then
    domain := coalesce(org.sending_email_domain, 'localhost');
    sender := 'no-reply@' || domain;
    if unsubscribe then
      unsubscribe_url := rtrim(base_url, '/') || '/unsubscribe/'
        || app_private.new_unsubscribe_token(org.id, recipient, contact_id, enrollment_id, message_id);
      headers := jsonb_build_object('List-Unsubscribe', '<' || unsubscribe_url || '>',
                                    'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click');
    end if;
    headers := jsonb_build_object('Message-ID', '<' || message_id || '@' || domain || '>') || headers;
  else
    sender := coalesce((select l.sms_number from app_public.locations l
                         where l.organization_id = org.id and l.id = s.location_id), org.default_sms_number);
  end if;
  vars := coalesce(app_hidden.sequence_message_variables(org.id, contact_id, s.location_id, unsubscribe_url), '{}');
  if contact_id is null then
    vars := vars || jsonb_build_object('unsubscribe_url', unsubscribe_url);
  end if;
  subject := case when channel = 'email' then app_hidden.render_template(coalesce(step->>'subject', ''), vars, false) end;
  body := app_hidden.render_template(coalesce(step->>'body', ''), vars, channel = 'email' and is_html);
  meta := jsonb_strip_nulls(jsonb_build_object('sequence_id', s.id, 'enrollment_id', enrollment_id, 'step_key', step->>'step_key',
    'message_id', message_id, 'html', case when channel = 'email' and is_html then true end))
    || case when channel = 'email' then jsonb_build_object('headers', headers) else '{}' end;
  insert into app_private.outgoing_messages (organization_id, id, channel, sender, recipient, subject, body, meta, status, sent_at)
  values (org.id, message_id, channel, sender, recipient, subject, body, meta, build_sequence_message.status,
          case when build_sequence_message.status = 'sent' then now() end);
  return jsonb_build_object('organization_id', org.id, 'id', message_id, 'channel', channel, 'sender', sender,
    'recipient', recipient, 'subject', subject, 'body', body, 'meta', meta);
end $$;
comment on function app_private.build_sequence_message(uuid, app_public.sequences, jsonb, uuid, text, uuid, text, boolean, text) is
  'Renders a sequence step''s message for a contact (variables HTML-escaped in HTML bodies), with Message-ID and one-click '
  'List-Unsubscribe headers on email, stores it queued without a delivery job, and answers it as the transports take it.';
revoke execute on function app_private.build_sequence_message(uuid, app_public.sequences, jsonb, uuid, text, uuid, text, boolean, text) from public;

--------------------------------------------------------------------------------
-- The step job
--------------------------------------------------------------------------------
-- First transaction of a step: nothing unless the enrollment is active, its sequence active,
-- and it stands on step_key. A step run already `sending` becomes `unknown` (event unknown) and
-- the enrollment moves on. Exit conditions first (completed); a wait step is `waited`; an email
-- or SMS the contact may not get now is `skipped` with the reason; otherwise the step run
-- `sending` and the message are written and the message answered for the transport.
-- Answers {action: none|done|send, message?}.
drop function if exists app_private.sequence_step_claim(uuid, uuid, text, text);
create or replace function app_private.sequence_step_claim(organization_id uuid, enrollment_id uuid, step_key text, base_url text,
  sink_channels text[] default '{}')
returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  e app_public.enrollments;
  s app_public.sequences;
  c app_public.contacts;
  step jsonb;
  run app_public.step_runs;
  exiting text;
  address text;
  refusal text;
  message jsonb;
begin
  select * into e from app_public.enrollments x
   where x.organization_id = sequence_step_claim.organization_id and x.id = sequence_step_claim.enrollment_id
     for update;
  if not found or e.status <> 'active' or e.current_step_key is distinct from sequence_step_claim.step_key then
    return jsonb_build_object('action', 'none');
  end if;
  select * into s from app_public.sequences x where x.organization_id = e.organization_id and x.id = e.sequence_id;
  if s.status <> 'active' then
    return jsonb_build_object('action', 'none');
  end if;

  select * into run from app_public.step_runs r
   where r.organization_id = e.organization_id and r.enrollment_id = e.id and r.step_key = e.current_step_key;
  if found then
    -- Claimed under five minutes ago: its job may still be waiting for the transport (a resume
    -- scheduled a second job for the enrollment meanwhile). The transports give up well within
    -- that (SMTP 20 s idle, HTTP 15 s), so look again once it has passed.
    if run.status = 'sending' and run.updated_at > now() - interval '5 minutes' then
      update app_public.enrollments x set next_run_at = run.updated_at + interval '5 minutes'
       where x.organization_id = e.organization_id and x.id = e.id;
      perform app_private.schedule_enrollment_steps(e.organization_id, array[e.id]);
      return jsonb_build_object('action', 'none');
    end if;
    if run.status = 'sending' then
      update app_public.step_runs r set status = 'unknown', reason = 'interrupted', updated_at = now()
       where r.organization_id = run.organization_id and r.id = run.id;
      update app_private.outgoing_messages m set status = 'unknown', error = 'the process died while the transport held it'
       where m.organization_id = run.organization_id and m.id = run.message_id and m.status = 'queued';
      insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
      values (e.organization_id, e.id, 'unknown', run.step_key, run.message_id, 'interrupted');
    end if;
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  exiting := case when jsonb_array_length(s.exit_conditions) > 0 then app_private.exit_condition_holding(e, s.exit_conditions) end;
  if exiting is not null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'completed', 'exit_condition:' || exiting);
    return jsonb_build_object('action', 'done');
  end if;

  select v into step from jsonb_array_elements(s.steps) v where v->>'step_key' = e.current_step_key limit 1;
  if step is null then
    perform app_private.end_enrollments(e.organization_id, array[e.id], 'failed', 'step_removed');
    return jsonb_build_object('action', 'done');
  end if;

  if step->>'type' not in ('email', 'sms') then
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status)
    values (e.organization_id, e.id, e.current_step_key, 'wait', 'waited');
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  select * into c from app_public.contacts x where x.organization_id = e.organization_id and x.id = e.contact_id;
  address := case step->>'type' when 'email' then c.email::text else c.phone end;
  refusal := app_private.send_refusal(e.organization_id, step->>'type', address);
  if refusal is null and step->>'type' = 'sms' and not c.sms_consent then
    refusal := 'no_consent';
  end if;
  if refusal is not null then
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
    values (e.organization_id, e.id, e.current_step_key, step->>'type', 'skipped', refusal);
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, reason)
    values (e.organization_id, e.id, 'skipped', e.current_step_key, refusal);
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;

  if step->>'type' = any(sink_channels) then
    -- The local sink is a table: nothing leaves the database, so storing the message and
    -- recording it sent commit together (exactly once). Should a crash lose the commit, nothing
    -- happened and the job runs again; so it need not wait for the disk.
    perform set_config('synchronous_commit', 'off', true);
    message := app_private.build_sequence_message(e.organization_id, s, step, c.id, address, e.id, base_url, true, 'sent');
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    values (e.organization_id, (message->>'id')::uuid, message->>'channel', message->>'sender', message->>'recipient',
            message->>'subject', message->>'body', message->'meta');
    insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
    values (e.organization_id, e.id, e.current_step_key, step->>'type', 'sent', (message->>'id')::uuid);
    -- the sink reports every message delivered as it stores it (sequences.md, Analytics)
    insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
    values (e.organization_id, e.id, 'sent', e.current_step_key, (message->>'id')::uuid),
           (e.organization_id, e.id, 'delivered', e.current_step_key, (message->>'id')::uuid);
    perform app_private.advance_enrollment(e.organization_id, e.id);
    return jsonb_build_object('action', 'done');
  end if;
  message := app_private.build_sequence_message(e.organization_id, s, step, c.id, address, e.id, base_url, true);
  insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, message_id)
  values (e.organization_id, e.id, e.current_step_key, step->>'type', 'sending', (message->>'id')::uuid);
  return jsonb_build_object('action', 'send', 'message', message);
end $$;
comment on function app_private.sequence_step_claim(uuid, uuid, text, text, text[]) is
  'First transaction of a sequence step: checks, exits, waits, skips (with reason) or claims the message (step run sending); '
  'a step run found sending becomes unknown; on a channel of sink_channels the message is stored and recorded at once. '
  'Answers {action: none|done|send, message?}.';
revoke execute on function app_private.sequence_step_claim(uuid, uuid, text, text, text[]) from public;

-- Second transaction: what the transport answered (error NULL: accepted). The step run and the
-- message become sent or failed, with the event; the enrollment moves on either way (a message
-- the transport refused is not tried again: a refusal after a timeout may still have gone out).
-- `sink`: the local sink is a table, so its outbox row is written here, with the record.
-- The commit need not wait for the disk: should a crash lose it, the step run stays `sending`
-- and becomes `unknown` (the sink's row is lost with it); nothing is sent twice.
drop function if exists app_private.sequence_step_record(uuid, uuid, text, uuid, text);
create or replace function app_private.sequence_step_record(organization_id uuid, enrollment_id uuid, step_key text,
  message_id uuid, error text, sink boolean default false) returns void
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  e app_public.enrollments;
  ok boolean := sequence_step_record.error is null;
begin
  perform set_config('synchronous_commit', 'off', true);
  select * into e from app_public.enrollments x
   where x.organization_id = sequence_step_record.organization_id and x.id = sequence_step_record.enrollment_id
     for update;
  update app_public.step_runs r
     set status = case when ok then 'sent' else 'failed' end, reason = left(sequence_step_record.error, 500), updated_at = now()
   where r.organization_id = sequence_step_record.organization_id and r.enrollment_id = sequence_step_record.enrollment_id
     and r.step_key = sequence_step_record.step_key and r.message_id = sequence_step_record.message_id and r.status = 'sending';
  if not found then
    return; -- recorded already (unknown, by a job that thought this one dead)
  end if;
  update app_private.outgoing_messages m
     set status = case when ok then 'sent' else 'failed' end, sent_at = case when ok then now() end,
         error = left(sequence_step_record.error, 1000)
   where m.organization_id = sequence_step_record.organization_id and m.id = sequence_step_record.message_id;
  if sink and ok then
    insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
    select m.organization_id, m.id, m.channel, m.sender, m.recipient, m.subject, m.body, m.meta
      from app_private.outgoing_messages m
     where m.organization_id = sequence_step_record.organization_id and m.id = sequence_step_record.message_id
    on conflict do nothing;
  end if;
  insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id, reason)
  values (sequence_step_record.organization_id, sequence_step_record.enrollment_id,
          case when ok then 'sent' else 'failed' end, sequence_step_record.step_key, sequence_step_record.message_id,
          case when not ok then 'transport_error' end);
  if e.status = 'active' and e.current_step_key = sequence_step_record.step_key then
    perform app_private.advance_enrollment(e.organization_id, e.id);
  end if;
end $$;
comment on function app_private.sequence_step_record(uuid, uuid, text, uuid, text, boolean) is
  'Second transaction of a sequence step: records sent or failed (step run, message, event; with sink, the outbox row) and '
  'moves the enrollment on. Commits without waiting for the disk: a lost record leaves the run sending, later unknown.';
revoke execute on function app_private.sequence_step_record(uuid, uuid, text, uuid, text, boolean) from public;

reset role;
