-- The dashboard's webhooks page (src/webhooks/dashboard.ts): an organization's owners and
-- admins list, add and remove its subscriptions, each action deciding from the signed-in
-- person's row as it is now (app_hidden.dashboard_manager_of_team: 403 for anyone else).
set local role svc_owner;

create or replace function app_hidden.dashboard_webhooks()
returns table (id uuid, url text, events text[], status text, disabled_reason text, created_at timestamptz,
               pending bigint, delivered bigint, failed bigint)
language sql stable security definer
set search_path to pg_catalog, public, pg_temp as $$
  select s.id, s.url, s.events, s.status, s.disabled_reason, s.created_at,
         count(d.id) filter (where d.status = 'pending'), count(d.id) filter (where d.status = 'delivered'),
         count(d.id) filter (where d.status = 'failed')
    from app_hidden.dashboard_manager_of_team() me
    join app_public.webhook_subscriptions s on s.organization_id = me.organization_id
    left join app_public.webhook_deliveries d on d.organization_id = s.organization_id and d.subscription_id = s.id
   group by s.organization_id, s.id
   order by s.created_at, s.id
$$;
comment on function app_hidden.dashboard_webhooks() is
  'The organization''s webhook subscriptions with their deliveries counted, for an owner or admin signed in to the dashboard (never a secret).';
revoke execute on function app_hidden.dashboard_webhooks() from public;
grant execute on function app_hidden.dashboard_webhooks() to svc_request;

create or replace function app_hidden.dashboard_add_webhook(url text, events text[], secret text) returns uuid
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  return (app_private.webhook_subscribe(me.organization_id, url, events, secret)).id;
end $$;
comment on function app_hidden.dashboard_add_webhook(text, text[], text) is
  'Subscribes an URL (checked by the page: https, public addresses) to events of the signed-in owner''s or admin''s organization.';
revoke execute on function app_hidden.dashboard_add_webhook(text, text[], text) from public;
grant execute on function app_hidden.dashboard_add_webhook(text, text[], text) to svc_request;

create or replace function app_hidden.dashboard_remove_webhook(webhook_id uuid) returns void
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  me app_public.people := app_hidden.dashboard_manager_of_team();
begin
  if not app_private.webhook_unsubscribe(me.organization_id, webhook_id) then
    perform app_hidden.raise_error(404, 'not_found', 'Webhook not found');
  end if;
end $$;
comment on function app_hidden.dashboard_remove_webhook(uuid) is
  'Removes a subscription of the signed-in owner''s or admin''s organization (404 for any other id).';
revoke execute on function app_hidden.dashboard_remove_webhook(uuid) from public;
grant execute on function app_hidden.dashboard_remove_webhook(uuid) to svc_request;

reset role;
