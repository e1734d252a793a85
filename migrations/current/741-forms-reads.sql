-- forms_list, forms_get and forms_list_submissions: read as the caller, so the policies of
-- 740-forms.sql decide what a credential sees (a form out of reach: 404).
set local role svc_owner;

-- The form as the API shows it, with its fields in order.
create or replace function app_hidden.form_json(f app_public.forms) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object(
    'id', f.id,
    'name', f.name,
    'location_id', f.location_id,
    'allowed_origins', to_jsonb(f.allowed_origins),
    'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                            'required', x.required, 'options', x.options) order by x.position)
                          from app_public.form_fields x
                         where x.organization_id = f.organization_id and x.form_id = f.id), '[]'),
    'created_at', f.created_at,
    'updated_at', f.updated_at)
$$;
comment on function app_hidden.form_json(app_public.forms) is 'A form with its fields, as forms_list and forms_get answer it.';
grant execute on function app_hidden.form_json(app_public.forms) to svc_request, svc_worker;

create or replace function app_public.forms_list() returns jsonb
language sql stable as $$
  select jsonb_build_object('items', coalesce(jsonb_agg(app_hidden.form_json(f) order by f.name, f.id), '[]'))
    from app_public.forms f
   where f.organization_id = app_hidden.current_org_id()
$$;
comment on function app_public.forms_list() is 'forms_list: the forms the credential reaches, by name, with their fields.';

-- The credential's form, or 404.
create or replace function app_hidden.form_for(form_id uuid) returns app_public.forms
language plpgsql stable as $$
declare
  f app_public.forms;
begin
  select * into f from app_public.forms x where x.organization_id = app_hidden.current_org_id() and x.id = form_for.form_id;
  if not found then
    perform app_hidden.raise_error(404, 'not_found', 'Form not found');
  end if;
  return f;
end $$;
comment on function app_hidden.form_for(uuid) is 'The form, when the credential reaches it; 404 otherwise.';
grant execute on function app_hidden.form_for(uuid) to svc_request, svc_worker;

create or replace function app_public.forms_get(form_id uuid) returns jsonb
language sql stable as $$
  select app_hidden.form_json(app_hidden.form_for(form_id))
$$;
comment on function app_public.forms_get(uuid) is 'forms_get: one form with its fields; 404 when out of reach.';

drop function if exists app_public.forms_list_submissions(uuid, int, int, text, timestamptz, timestamptz, text);
-- A page of a form's submissions, newest first, filtered by status, a time range [from, to)
-- and part of the email. `contact` is the contact as the caller sees it (null when it sees none).
create or replace function app_public.forms_list_submissions(form_id uuid, page int, page_size int, status text,
  from_at timestamptz, to_at timestamptz, search text) returns jsonb
language plpgsql stable as $$
declare
  -- the page first, before anything is read (NULL: page 1 of 25; out of range: 400, as over REST)
  pg int := app_hidden.page_number(page);
  lim int := app_hidden.page_limit(page_size);
  f app_public.forms := app_hidden.form_for(form_id);
  -- part of the email: a plain substring test (no pattern characters to escape)
  part text := lower(search);
  total int;
  items jsonb;
begin
  if forms_list_submissions.status not in ('accepted', 'spam') then
    perform app_hidden.raise_error(400, 'bad_request', 'query.status: expected accepted or spam');
  end if;
  select count(*) into total from app_public.form_submissions s
   where s.organization_id = f.organization_id and s.form_id = f.id
     and (forms_list_submissions.status is null or s.status = forms_list_submissions.status)
     and (from_at is null or s.submitted_at >= from_at)
     and (to_at is null or s.submitted_at < to_at)
     and (part is null or strpos(s.email_key, part) > 0);
  select coalesce(jsonb_agg(x.j order by x.submitted_at desc, x.id desc), '[]') into items
    from (select s.submitted_at, s.id, jsonb_build_object(
                   'id', s.id,
                   'form_id', s.form_id,
                   'payload', s.payload,
                   'status', s.status,
                   'spam_reason', s.spam_reason,
                   'contact_id', s.contact_id,
                   'contact', (select jsonb_build_object('id', c.id, 'name', c.name, 'email', c.email, 'phone', c.phone)
                                 from app_public.contacts c where c.organization_id = s.organization_id and c.id = s.contact_id),
                   'submitted_at', s.submitted_at) as j
            from app_public.form_submissions s
           where s.organization_id = f.organization_id and s.form_id = f.id
             and (forms_list_submissions.status is null or s.status = forms_list_submissions.status)
             and (from_at is null or s.submitted_at >= from_at)
             and (to_at is null or s.submitted_at < to_at)
             and (part is null or strpos(s.email_key, part) > 0)
           order by s.submitted_at desc, s.id desc
           limit lim offset (pg - 1)::bigint * lim) x;
  return jsonb_build_object('items', items, 'total', total, 'page', pg, 'limit', lim);
end $$;
comment on function app_public.forms_list_submissions(uuid, int, int, text, timestamptz, timestamptz, text) is
  'forms_list_submissions: a page of the form''s submissions, newest first, by status, time range [from, to) and part of the email.';

grant execute on function app_public.forms_list(), app_public.forms_get(uuid),
  app_public.forms_list_submissions(uuid, int, int, text, timestamptz, timestamptz, text) to svc_request;

reset role;
