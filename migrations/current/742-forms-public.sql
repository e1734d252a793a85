-- The public form endpoint's database half (src/forms/public.ts validates the payload against
-- the fields and runs the checks that need only the request; `svc admin form submit` goes the
-- same way). No credential: the form's id in the URL is the only input naming an organization,
-- so these functions are security definer and take nothing else from the caller.
--
--   app_hidden.public_form(form)        the form's fields and allowed origins, or NULL (404)
--   app_hidden.form_token(form)         a render-time token: when it was issued, signed with the
--                                       form's secret (which never leaves the database)
--   app_hidden.form_submit(…)           the token's age (too fast: spam), the rate per client
--                                       address (spam beyond it), the submission stored, and for
--                                       an accepted one the contact upserted and form_submitted fired
set local role svc_owner;

-- Seconds a person needs at least to fill a form, and submissions per client address per
-- organization in ten minutes before the next is spam; tokens older than a day are refused.
create or replace function app_hidden.form_limits() returns jsonb
language sql immutable parallel safe as $$
  select '{"min_elapsed_ms": 3000, "token_max_age_ms": 86400000, "rate_per_address": 5, "rate_window_minutes": 10}'::jsonb
$$;
comment on function app_hidden.form_limits() is 'The spam thresholds of public form submissions.';
grant execute on function app_hidden.form_limits() to svc_request, svc_worker;

create or replace function app_hidden.public_form(form_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', f.id, 'organization_id', f.organization_id, 'allowed_origins', to_jsonb(f.allowed_origins),
           'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                                   'required', x.required, 'options', x.options) order by x.position)
                                 from app_public.form_fields x
                                where x.organization_id = f.organization_id and x.form_id = f.id), '[]'))
    from app_public.forms f where f.id = public_form.form_id
$$;
comment on function app_hidden.public_form(uuid) is 'A form as its public endpoint needs it (fields, allowed origins), or NULL: no credential involved.';
revoke execute on function app_hidden.public_form(uuid) from public;
grant execute on function app_hidden.public_form(uuid) to svc_request;

-- The signature of a token's issue time: SHA-256 of the secret around the message (the secret
-- on both sides: no length extension can forge another issue time).
create or replace function app_hidden.form_token_mac(secret text, form_id uuid, issued_ms bigint) returns text
language sql immutable parallel safe as $$
  select encode(sha256(convert_to(secret || '|' || form_id::text || '|' || issued_ms::text || '|' || secret, 'UTF8')), 'hex')
$$;
comment on function app_hidden.form_token_mac(text, uuid, bigint) is 'The MAC of a form''s render-time token.';
revoke execute on function app_hidden.form_token_mac(text, uuid, bigint) from public;

create or replace function app_hidden.form_token(form_id uuid) returns text
language sql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
  select t.ms::text || '.' || app_hidden.form_token_mac(s.secret, s.form_id, t.ms)
    from app_private.form_secrets s,
         lateral (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) t
   where s.form_id = form_token.form_id
$$;
comment on function app_hidden.form_token(uuid) is
  'A render-time token of the form (`<issued ms>.<mac>`), sent back as the hidden field _token; NULL when no such form.';
revoke execute on function app_hidden.form_token(uuid) from public;
grant execute on function app_hidden.form_token(uuid) to svc_request;

-- How long ago the token was issued (ms), or NULL when it is not a valid token of this form.
create or replace function app_hidden.form_token_age(form_id uuid, token text) returns bigint
language plpgsql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  m text[] := regexp_match(token, '^([0-9]{1,15})\.([0-9a-f]{64})$');
  secret text;
begin
  if m is null then
    return null;
  end if;
  select s.secret into secret from app_private.form_secrets s where s.form_id = form_token_age.form_id;
  if secret is null or app_hidden.form_token_mac(secret, form_id, m[1]::bigint) <> m[2] then
    return null;
  end if;
  return (extract(epoch from clock_timestamp()) * 1000)::bigint - m[1]::bigint;
end $$;
comment on function app_hidden.form_token_age(uuid, text) is 'Milliseconds since a valid token of the form was issued; NULL for anything else.';
revoke execute on function app_hidden.form_token_age(uuid, text) from public;

-- Stores a submission. `spam_reason` is what the request's own checks found (honeypot, links) or
-- NULL; then, when it is NULL: the token (elapsed_ms, when given, stands for it: the CLI), then
-- the rate per client address. `contact` is {email, phone, name} as validated, for an accepted one.
create or replace function app_hidden.form_submit(form_id uuid, payload jsonb, contact jsonb, token text, elapsed_ms bigint,
  client_address text, spam_reason text) returns jsonb
language plpgsql volatile security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  f app_public.forms;
  lim jsonb := app_hidden.form_limits();
  reason text := spam_reason;
  age bigint := elapsed_ms;
  c app_public.contacts;
  v_email text := nullif(lower(contact->>'email'), '');
  v_phone text := nullif(contact->>'phone', '');
  sub_id uuid;
  s record;
begin
  select * into f from app_public.forms x where x.id = form_submit.form_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Form not found');
  end if;
  if reason is null and age is null then
    age := app_hidden.form_token_age(f.id, token);
    if age is null or age > (lim->>'token_max_age_ms')::bigint or age < 0 then
      reason := 'bad_token';
    end if;
  end if;
  if reason is null and age < (lim->>'min_elapsed_ms')::bigint then
    reason := 'too_fast';
  end if;
  if client_address is not null then
    -- one client address at a time per organization, so that concurrent posts count each other
    perform pg_advisory_xact_lock(hashtextextended(f.organization_id::text || '|form-rate|' || client_address, 0));
    if reason is null and (select count(*) from app_public.form_submissions x
                            where x.organization_id = f.organization_id and x.client_address = form_submit.client_address
                              and x.submitted_at > now() - make_interval(mins => (lim->>'rate_window_minutes')::int))
                          >= (lim->>'rate_per_address')::int then
      reason := 'rate';
    end if;
  end if;

  if reason is null and (v_email is not null or v_phone is not null) then
    -- the contact: by email, else by phone; created when neither matches
    select * into c from app_public.contacts x where x.organization_id = f.organization_id and x.email_key = v_email;
    if not found and v_phone is not null then
      select * into c from app_public.contacts x
       where x.organization_id = f.organization_id and x.phone = v_phone and (v_email is null or x.email is null);
    end if;
    if c.id is null then
      insert into app_public.contacts (organization_id, email, name, phone)
      values (f.organization_id, v_email, nullif(contact->>'name', ''),
              case when not exists (select 1 from app_public.contacts x
                                     where x.organization_id = f.organization_id and x.phone = v_phone) then v_phone end)
      -- the same new email posted twice at once: the second finds the first's contact
      on conflict (organization_id, email_key) do update set last_seen_at = now(), updated_at = now()
      returning * into c;
    else
      update app_public.contacts x
         set name = coalesce(x.name, nullif(contact->>'name', '')),
             email = coalesce(x.email, v_email::citext),
             phone = coalesce(x.phone, case when not exists (select 1 from app_public.contacts y
                                                            where y.organization_id = f.organization_id and y.phone = v_phone)
                                           then v_phone end),
             last_seen_at = now(),
             updated_at = now()
       where x.organization_id = c.organization_id and x.id = c.id
      returning * into c;
    end if;
    if f.location_id is not null then
      insert into app_public.contact_locations (organization_id, contact_id, location_id)
      values (f.organization_id, c.id, f.location_id) on conflict do nothing;
    end if;
  end if;

  insert into app_public.form_submissions (organization_id, form_id, contact_id, payload, status, spam_reason, email_key,
                                           client_address)
  values (f.organization_id, f.id, c.id, payload, case when reason is null then 'accepted' else 'spam' end, reason,
          left(v_email, 320), client_address)
  returning id into sub_id;

  -- form_submitted: the active automations this form starts
  if reason is null and c.id is not null then
    for s in
      select x.id from app_public.sequences x
       where x.organization_id = f.organization_id and x.status = 'active' and x.kind = 'automation'
         and x.trigger->>'type' = 'form_submitted' and x.trigger->>'form_id' = f.id::text
       order by x.id
    loop
      perform app_private.enroll_by_trigger(f.organization_id, s.id, c.id, 'form_submitted', null);
    end loop;
  end if;
  return jsonb_build_object('submission_id', sub_id, 'status', case when reason is null then 'accepted' else 'spam' end,
                            'spam_reason', reason, 'contact_id', c.id, 'organization_id', f.organization_id);
end $$;
comment on function app_hidden.form_submit(uuid, jsonb, jsonb, text, bigint, text, text) is
  'Stores a public form submission after the token and rate checks; an accepted one upserts its contact (linked to the '
  'form''s location) and enrolls it in the automations triggered by form_submitted for this form.';
revoke execute on function app_hidden.form_submit(uuid, jsonb, jsonb, text, bigint, text, text) from public;
grant execute on function app_hidden.form_submit(uuid, jsonb, jsonb, text, bigint, text, text) to svc_request;

reset role;
