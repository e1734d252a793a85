-- A form's thank-you address: a plain HTML form post (a browser's, Accept: text/html) that
-- succeeds is answered 303 See Other to it; without one, the endpoint answers a short thank-you
-- page (src/forms/public.ts). forms_list and forms_get show it.
set local role svc_owner;

alter table app_public.forms add column if not exists redirect_url text;
alter table app_public.forms drop constraint if exists forms_redirect_url_check;
alter table app_public.forms add constraint forms_redirect_url_check
  check (length(redirect_url) <= 2000 and redirect_url ~ '^https?://[^\s/?#]+([/?#]\S*)?$');
comment on column app_public.forms.redirect_url is
  'Where a browser''s plain HTML post goes after a submission (303); NULL: the endpoint''s own thank-you page.';

create or replace function app_hidden.form_json(f app_public.forms) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object(
    'id', f.id,
    'name', f.name,
    'location_id', f.location_id,
    'allowed_origins', to_jsonb(f.allowed_origins),
    'redirect_url', f.redirect_url,
    'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                            'required', x.required, 'options', x.options) order by x.position)
                          from app_public.form_fields x
                         where x.organization_id = f.organization_id and x.form_id = f.id), '[]'),
    'created_at', f.created_at,
    'updated_at', f.updated_at)
$$;

create or replace function app_hidden.public_form(form_id uuid) returns jsonb
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', f.id, 'organization_id', f.organization_id, 'name', f.name,
           'allowed_origins', to_jsonb(f.allowed_origins), 'redirect_url', f.redirect_url,
           'fields', coalesce((select jsonb_agg(jsonb_build_object('key', x.key, 'label', x.label, 'type', x.type,
                                                                   'required', x.required, 'options', x.options) order by x.position)
                                 from app_public.form_fields x
                                where x.organization_id = f.organization_id and x.form_id = f.id), '[]'))
    from app_public.forms f where f.id = public_form.form_id
$$;

reset role;
