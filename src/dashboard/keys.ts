// The keys page: the keys the person sees (never a secret), a form for each kind of key the
// person's role may create now, the new key shown once in the answer to its creation, revoke.
import { generateKey, hashKey } from '../auth/keys.ts';
import { ALL_SCOPES, POWERS } from '../auth/scopes.ts';
import { esc } from './html.ts';
import { chosen, dashboardPage, FormError, oneOf, uuid, uuids, type View } from './pages.ts';
import type pg from 'pg';

const KINDS = ['personal', 'organization', 'organization_role', 'location_limited'] as const;
type Kind = (typeof KINDS)[number];
const LABELS: Record<Kind, string> = {
  personal: 'Personal key (acts for you, with your role as it is)',
  organization: 'Organization key (the whole organization)',
  organization_role: 'Organization key with a role (MANAGER or MEMBER)',
  location_limited: 'Location-limited key (MANAGER unless MEMBER is chosen)',
};

interface KeyRow {
  id: string; kind: string; name: string | null; role: string | null; scopes: string[]; powers: string[];
  locations: string[]; created_by: string; created_at: Date; revoked_at: Date | null;
}

const checkboxes = (name: string, values: readonly string[], checked: readonly string[]) =>
  values.map((v) => `<label><input type="checkbox" name="${name}" value="${esc(v)}"${checked.includes(v) ? ' checked' : ''}> ${esc(v)}</label>`).join(' ');

async function render(c: pg.PoolClient, { person, csrf }: View): Promise<string> {
  const { rows: [{ kinds }] } = await c.query(`select app_hidden.dashboard_key_kinds(app_hidden.dashboard_actor()) as kinds`);
  const { rows: keys } = await c.query<KeyRow>(`select * from app_hidden.dashboard_keys()`);
  const { rows: locations } = await c.query<{ id: string; name: string }>(`select * from app_hidden.dashboard_key_locations()`);
  const myPowers = person.role === 'manager' ? person.powers : [...POWERS];
  const csrfInput = `<input type="hidden" name="csrf" value="${esc(csrf)}">`;
  const list = keys.length ? `<table><thead><tr><th>Name</th><th>Kind</th><th>Role</th><th>Locations</th><th>Scopes</th><th>Powers</th><th>Created</th><th></th></tr></thead><tbody>
${keys.map((k) => `<tr data-key="${esc(k.id)}"><td>${esc(k.name ?? '—')}</td><td>${esc(k.kind)}</td><td>${esc(k.role ?? '—')}</td>
<td>${esc(k.locations.join(', ') || (k.kind === 'organization' ? 'all' : '—'))}</td><td>${esc(k.scopes.join(' '))}</td><td>${esc(k.powers.join(', ') || '—')}</td>
<td>${esc(k.created_at.toISOString().slice(0, 16).replace('T', ' '))} by ${esc(k.created_by)}</td>
<td>${k.revoked_at ? 'revoked' : `<form method="post" action="/dashboard/keys/revoke">${csrfInput}<input type="hidden" name="id" value="${esc(k.id)}"><button type="submit">Revoke</button></form>`}</td></tr>`).join('\n')}
</tbody></table>` : '<p>No keys yet.</p>';
  const forms = (kinds as Kind[]).map((kind) => `<form method="post" action="/dashboard/keys/create" class="create" data-kind="${kind}"><fieldset><legend>${esc(LABELS[kind])}</legend>
${csrfInput}<input type="hidden" name="kind" value="${kind}">
<label>Name <input name="name" maxlength="200"></label>
${kind === 'organization_role' || kind === 'location_limited' ? `<p>Role: <label><input type="radio" name="role" value="MANAGER" checked> MANAGER</label> <label><input type="radio" name="role" value="MEMBER"> MEMBER</label></p>
<p>Powers (MANAGER keys): ${checkboxes('powers', myPowers, myPowers)}</p>` : ''}
${kind === 'location_limited' ? `<p>Locations: ${locations.map((l) => `<label><input type="checkbox" name="locations" value="${esc(l.id)}"> ${esc(l.name)}</label>`).join(' ')}</p>` : ''}
<p>Scopes: ${checkboxes('scopes', ALL_SCOPES, ALL_SCOPES)}</p>
<button type="submit">Create</button></fieldset></form>`).join('\n');
  return `<h2>Your keys${person.role === 'owner' || person.role === 'admin' ? ' and the organization\'s' : ''}</h2>${list}<h2>Create a key</h2>${forms}`;
}

export const keysPages = dashboardPage('/dashboard/keys', 'Keys', render, {
  async create(c, form) {
    const kind = oneOf(form, 'kind', KINDS);
    const role = kind === 'organization_role' || kind === 'location_limited' ? oneOf(form, 'role', ['MANAGER', 'MEMBER'] as const) : null;
    const name = form.get('name') ?? '';
    if (name.length > 200) throw new FormError('A key\'s name is at most 200 characters');
    const key = generateKey();
    await c.query(`select app_hidden.dashboard_create_key($1, $2, $3, $4, $5, $6, $7)`, [
      kind, name, role, chosen(form, 'scopes', ALL_SCOPES), role === 'MANAGER' ? chosen(form, 'powers', POWERS) : [],
      kind === 'location_limited' ? uuids(form, 'locations') : [], hashKey(key)]);
    // shown here once: only its hash was stored, and it is never logged
    return {
      notice: 'Key created. Copy it now: it will not be shown again.',
      extra: `<p>Your new key:</p><p class="secret" id="new-key">${esc(key)}</p>`,
    };
  },
  async revoke(c, form) {
    await c.query(`select app_hidden.dashboard_revoke_key($1)`, [uuid(form, 'id')]);
    return { notice: 'Key revoked: it stops working at its next request.' };
  },
});
