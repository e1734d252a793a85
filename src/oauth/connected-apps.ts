// The dashboard's connected apps page: the OAuth clients a person approved (an owner or admin
// sees everyone's), with the scopes granted; revoke ends the grant's tokens at their next use.
import { esc } from '../dashboard/html.ts';
import { dashboardPage, uuid, type View } from '../dashboard/pages.ts';
import type pg from 'pg';

interface GrantRow { id: string; client_id: string; client_name: string | null; person_name: string; own: boolean; scopes: string[]; created_at: Date }

async function render(c: pg.PoolClient, { csrf }: View): Promise<string> {
  const { rows } = await c.query<GrantRow>('select * from app_hidden.oauth_connected_apps()');
  if (rows.length === 0) return '<p>No apps are connected. An MCP client connects when you approve it on its consent page.</p>';
  return `<table><thead><tr><th>App</th><th>Approved by</th><th>Scopes</th><th>Since</th><th></th></tr></thead><tbody>
${rows.map((g) => `<tr data-grant="${esc(g.id)}"><td>${esc(g.client_name ?? g.client_id)}<br><small>${esc(g.client_id)}</small></td>
<td>${g.own ? 'you' : esc(g.person_name)}</td><td>${esc(g.scopes.join(' '))}</td>
<td>${esc(g.created_at.toISOString().slice(0, 16).replace('T', ' '))}</td>
<td><form method="post" action="/dashboard/connected-apps/revoke"><input type="hidden" name="csrf" value="${esc(csrf)}">
<input type="hidden" name="id" value="${esc(g.id)}"><button type="submit">Revoke</button></form></td></tr>`).join('\n')}
</tbody></table>`;
}

export const connectedAppsPages = dashboardPage('/dashboard/connected-apps', 'Connected apps', render, {
  async revoke(c, form) {
    await c.query('select app_hidden.oauth_revoke_grant($1)', [uuid(form, 'id')]);
    return { notice: 'App disconnected: its tokens stop working at their next request.' };
  },
});
