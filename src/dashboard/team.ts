// The people, agent access and organization pages. Each person's row is one form carrying the
// whole state (a checkbox absent means off); the SQL functions decide whether the signed-in
// person may make the change (owners and admins only) and keep the spec's rules.
import type pg from 'pg';
import { POWERS } from '../auth/scopes.ts';
import { DOMAIN } from '../admin/commands.ts';
import { toE164 } from '../platform/phone.ts';
import { generateVoiceSecret, hashVoiceSecret } from '../voice/secret.ts';
import { esc } from './html.ts';
import { chosen, dashboardPage, FormError, oneOf, uuid, uuids, type View } from './pages.ts';

const ROLES = ['owner', 'admin', 'manager', 'member'] as const;
const on = (form: URLSearchParams, name: string) => form.get(name) === 'on';
const csrfInput = (csrf: string) => `<input type="hidden" name="csrf" value="${esc(csrf)}">`;
const box = (name: string, checked: boolean, label: string, value = 'on') =>
  `<label><input type="checkbox" name="${name}" value="${esc(value)}"${checked ? ' checked' : ''}> ${esc(label)}</label>`;
const manages = (view: View) => view.person.role === 'owner' || view.person.role === 'admin';

interface PersonRow {
  id: string; name: string; email: string; role: string; powers: string[]; sms_enabled: boolean; records_level: string;
  agent_access: boolean; active: boolean; location_ids: string[];
}

async function renderPeople(c: pg.PoolClient, view: View): Promise<string> {
  const { rows: people } = await c.query<PersonRow>(`select * from app_hidden.dashboard_people()`);
  const { rows: locations } = await c.query<{ id: string; name: string }>(`select * from app_hidden.dashboard_locations()`);
  if (!manages(view)) {
    return `<p>Only an owner or admin manages the team. You are ${esc(view.person.role)}.</p>`;
  }
  return people.map((p) => {
    const owner = p.role === 'owner';
    return `<form method="post" action="/dashboard/people/update" class="person" data-person="${esc(p.id)}"><fieldset>
<legend>${esc(p.name)} &lt;${esc(p.email)}&gt;${p.active ? '' : ' (deactivated)'}</legend>${csrfInput(view.csrf)}
<input type="hidden" name="id" value="${esc(p.id)}">
<label>Role <select name="role">${ROLES.map((r) => `<option value="${r}"${r === p.role ? ' selected' : ''}>${r}</option>`).join('')}</select></label>
<p>Locations (managers and members): ${locations.map((l) => box('locations', p.location_ids.includes(l.id), l.name, l.id)).join(' ')}</p>
<p>Powers (managers): ${POWERS.map((w) => box('powers', p.powers.includes(w), w, w)).join(' ')}</p>
<p>${box('sms_enabled', p.sms_enabled, 'May send SMS')}
<label>Records <select name="records_level"><option value="all"${p.records_level === 'all' ? ' selected' : ''}>all</option><option value="own"${p.records_level === 'own' ? ' selected' : ''}>own only</option></select></label>
${owner ? '<input type="hidden" name="agent_access" value="on"><label><input type="checkbox" checked disabled> Agent access (always on for an owner)</label>'
    : box('agent_access', p.agent_access, 'Agent access')}
${box('active', p.active, 'Active (off: deactivated, keys revoked, sessions ended)')}</p>
<button type="submit">Save</button></fieldset></form>`;
  }).join('\n');
}

async function renderAgentAccess(c: pg.PoolClient, view: View): Promise<string> {
  if (!manages(view)) return '<p>Only an owner or admin sets agent access.</p>';
  const { rows } = await c.query<{ role: string; agent_access: boolean }>(`select * from app_hidden.dashboard_role_access()`);
  return `<p>While a role's agent access is off, the personal keys and OAuth tokens of everyone in it get 401; nothing is revoked. An owner's is always on.</p>
${rows.map((r) => `<form method="post" action="/dashboard/agent-access/set" data-role="${r.role}">${csrfInput(view.csrf)}
<input type="hidden" name="role" value="${r.role}">${box('agent_access', r.agent_access, `${r.role}s`)} <button type="submit">Save</button></form>`).join('\n')}`;
}

async function renderOrganization(c: pg.PoolClient, view: View): Promise<string> {
  const { rows: [o] } = await c.query(`select name, mcp_enabled, sending_email_domain, default_sms_number from app_public.organizations`);
  if (!manages(view)) {
    return `<p>${esc(o.name)}: MCP ${o.mcp_enabled ? 'on' : 'off'}. Only an owner or admin changes these settings.</p>`;
  }
  return `<form method="post" action="/dashboard/organization/update">${csrfInput(view.csrf)}<fieldset><legend>${esc(o.name)}</legend>
<p>${box('mcp_enabled', o.mcp_enabled, 'MCP endpoint on')}</p>
<p><label>Sending email domain <input name="sending_email_domain" value="${esc(o.sending_email_domain ?? '')}" maxlength="253"></label></p>
<p><label>Default SMS number <input name="default_sms_number" value="${esc(o.default_sms_number ?? '')}" maxlength="32"></label></p>
<button type="submit">Save</button></fieldset></form>
${await renderVoiceSecret(c, view)}`;
}

/** The voice secret's form: a new secret is shown once, on the page that made it. */
async function renderVoiceSecret(c: pg.PoolClient, view: View): Promise<string> {
  const { rows: [s] } = await c.query<{ at: Date | null }>('select app_hidden.dashboard_voice_secret_created_at() as at');
  return `<form method="post" action="/dashboard/organization/voice-secret">${csrfInput(view.csrf)}<fieldset><legend>Voice secret</legend>
<p>Voice platforms send it to answer calls with the receptionist. ${s?.at ? `The current one was made ${esc(s.at.toISOString())}; a new one stops it at once.` : 'There is none yet.'}</p>
<button type="submit" name="rotate" value="yes">New voice secret</button></fieldset></form>`;
}

export const teamPages = [
  ...dashboardPage('/dashboard/people', 'People', renderPeople, {
    async update(c, form) {
      const role = oneOf(form, 'role', ROLES);
      await c.query(`select app_hidden.dashboard_update_person($1, $2, $3, $4, $5, $6, $7, $8)`, [
        uuid(form, 'id'), role, uuids(form, 'locations'), chosen(form, 'powers', POWERS), on(form, 'sms_enabled'),
        oneOf(form, 'records_level', ['all', 'own'] as const), on(form, 'agent_access'), on(form, 'active')]);
      return { notice: 'Saved: the change applies from the next request.' };
    },
  }),
  ...dashboardPage('/dashboard/agent-access', 'Agent access', renderAgentAccess, {
    async set(c, form) {
      const role = oneOf(form, 'role', ['owner', 'admin', 'manager', 'member'] as const);
      await c.query(`select app_hidden.dashboard_set_role_access($1, $2)`, [role, on(form, 'agent_access')]);
      return { notice: 'Saved: the change applies from the next request.' };
    },
  }),
  ...dashboardPage('/dashboard/organization', 'Organization', renderOrganization, {
    async update(c, form) {
      // a browser sends text fields even when empty: a post without them is no form of this page
      if (!form.has('sending_email_domain') || !form.has('default_sms_number')) throw new FormError('The form is incomplete');
      const domain = (form.get('sending_email_domain') ?? '').trim().toLowerCase();
      if (domain && !DOMAIN.test(domain)) throw new FormError('The sending domain must be a domain name, like example.com');
      const rawNumber = (form.get('default_sms_number') ?? '').trim();
      const number = rawNumber ? toE164(rawNumber) : '';
      if (number === undefined) throw new FormError('The default SMS number must be a phone number in international form, like +15551234567');
      await c.query(`select app_hidden.dashboard_update_organization($1, $2, $3)`, [on(form, 'mcp_enabled'), domain, number]);
      return { notice: 'Saved.' };
    },
    async 'voice-secret'(c, form) {
      // the button's own field: a post without it is no press of that button
      if (form.get('rotate') !== 'yes') throw new FormError('The form is incomplete');
      const secret = generateVoiceSecret();
      await c.query('select app_hidden.dashboard_rotate_voice_secret($1)', [hashVoiceSecret(secret)]);
      return { notice: 'A new voice secret: the previous one no longer works.',
        extra: `<p class="secret">Voice secret (shown once; copy it into the voice platform now): <code data-voice-secret>${esc(secret)}</code></p>` };
    },
  }),
];
