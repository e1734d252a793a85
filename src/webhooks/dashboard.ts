// The dashboard's webhooks page: an owner or admin lists the organization's subscriptions, adds
// one (its secret shown once, in the answer) and removes one. The URL is checked as by
// `svc admin webhook add`; the SQL functions decide who may.
import type pg from 'pg';
import { AdminError } from '../admin/commands.ts';
import { esc } from '../dashboard/html.ts';
import { chosen, dashboardPage, FormError, uuid, type View } from '../dashboard/pages.ts';
import { WEBHOOK_EVENTS } from './events.ts';
import { checkWebhookUrl, newSecret } from './subscriptions.ts';

interface Row {
  id: string; url: string; events: string[]; status: string; disabled_reason: string | null; created_at: Date;
  pending: string; delivered: string; failed: string;
}

async function render(c: pg.PoolClient, { csrf }: View): Promise<string> {
  const { rows } = await c.query<Row>('select * from app_hidden.dashboard_webhooks()');
  const csrfInput = `<input type="hidden" name="csrf" value="${esc(csrf)}">`;
  const list = rows.length ? `<table><thead><tr><th>URL</th><th>Events</th><th>Status</th><th>Deliveries</th><th>Added</th><th></th></tr></thead><tbody>
${rows.map((w) => `<tr data-webhook="${esc(w.id)}"><td>${esc(w.url)}</td><td>${esc(w.events.join(', '))}</td>
<td>${esc(w.status)}${w.disabled_reason ? ` (${esc(w.disabled_reason)})` : ''}</td>
<td>${esc(w.delivered)} delivered, ${esc(w.pending)} pending, ${esc(w.failed)} failed</td>
<td>${esc(w.created_at.toISOString().slice(0, 16).replace('T', ' '))}</td>
<td><form method="post" action="/dashboard/webhooks/remove">${csrfInput}<input type="hidden" name="id" value="${esc(w.id)}"><button type="submit">Remove</button></form></td></tr>`).join('\n')}
</tbody></table>` : '<p>No webhooks yet.</p>';
  const form = `<form method="post" action="/dashboard/webhooks/add"><fieldset><legend>Add a webhook</legend>${csrfInput}
<label>URL (https) <input name="url" type="url" maxlength="2000" required></label>
<p>Events: ${WEBHOOK_EVENTS.map((e) => `<label><input type="checkbox" name="events" value="${e}" checked> ${e}</label>`).join(' ')}</p>
<button type="submit">Add</button></fieldset></form>`;
  return `<p>Each event is POSTed to the URL, signed as Standard Webhooks says (headers webhook-id, webhook-timestamp, webhook-signature).</p>${list}${form}`;
}

export const webhookPages = dashboardPage('/dashboard/webhooks', 'Webhooks', render, {
  async add(c, form, { deps }) {
    const events = chosen(form, 'events', WEBHOOK_EVENTS);
    if (!events.length) throw new FormError('Choose at least one event');
    const url = await checkWebhookUrl(form.get('url') ?? '', deps.config.webhooksAllowPrivate).catch((e: unknown) => {
      throw e instanceof AdminError ? new FormError(e.message.replace(/^--url:? ?/, 'The URL ').replace(/--url/g, 'the URL')) : e;
    });
    const secret = newSecret();
    await c.query('select app_hidden.dashboard_add_webhook($1, $2, $3)', [url, events, secret]);
    // shown here once; the service keeps it only to sign with
    return {
      notice: 'Webhook added. Copy its signing secret now: it will not be shown again.',
      extra: `<p>Signing secret:</p><p class="secret" id="new-secret">${esc(secret)}</p>`,
    };
  },
  async remove(c, form) {
    await c.query('select app_hidden.dashboard_remove_webhook($1)', [uuid(form, 'id')]);
    return { notice: 'Webhook removed: nothing more is sent to it.' };
  },
});
