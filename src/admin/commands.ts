// Operator commands that change a tenant (operator-cli.md). Each runs as the owner in one
// transaction; keys and claims are read afresh on every request, so a change applies to the
// next request of an already running server.
import type pg from 'pg';
import { POWERS } from '../auth/scopes.ts';
import type { Area } from '../registry/area.ts';
import { applyFixture, parseFixture, FixtureError, normalizePhone, type Applied } from './fixture.ts';

export class AdminError extends Error {}

/** Runs a command's database call; the database's refusal (SV4xx) becomes the operator's one-line error, anything else stays a fault. */
export async function asAdmin<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    const err = e as { code?: string; detail?: string; message?: string };
    if (typeof err.code === 'string' && /^SV4\d\d$/.test(err.code)) throw new AdminError(err.detail || err.message || 'refused');
    throw e;
  }
}

/** A domain name as a sending domain takes it (lower case letters, digits, hyphens; a top-level label). */
export const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function uuid(value: string | undefined, flag: string): string {
  if (!value || !UUID.test(value)) throw new AdminError(`${flag} must be a uuid`);
  return value.toLowerCase();
}
function onOff(value: string | undefined, flag: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on' || value === 'true') return true;
  if (value === 'off' || value === 'false') return false;
  throw new AdminError(`${flag} must be on or off (or true or false)`);
}

export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const out = await fn(client);
    await client.query('commit');
    return out;
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/** `svc admin apply`: one tenant from a fixture, with the parts the areas add (their sections). */
export async function adminApply(pool: pg.Pool, json: unknown, areas: readonly Area[]): Promise<Applied> {
  const sections = areas.flatMap((a) => (a.fixture ? [a.fixture] : []));
  const fixture = parseFixture(json, sections);
  return inTransaction(pool, (c) => applyFixture(c, fixture, sections)).catch((e: unknown) => {
    // a value the schema accepted but PostgreSQL cannot store (a NUL byte, a date out of its
    // range): the fixture's fault, reported like the others, and nothing was applied
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('22')) throw new FixtureError(`fixture: a value PostgreSQL refuses: ${(e as Error).message}`);
    // a refusal of the database's own rules (a number another organization holds: SV409)
    if (typeof code === 'string' && /^SV4\d\d$/.test(code)) throw new FixtureError(`fixture: ${(e as { detail?: string }).detail || (e as Error).message}`);
    throw e;
  });
}

export async function revokeKey(pool: pg.Pool, id: string | undefined) {
  const keyId = uuid(id, '--id');
  const { rows } = await pool.query(
    `update app_private.api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning id, revoked_at`,
    [keyId],
  );
  if (!rows.length) throw new AdminError(`no key with id ${keyId}`);
  return { id: keyId, revoked_at: rows[0].revoked_at };
}

export interface UserUpdate {
  id?: string; role?: string; active?: string; agentAccess?: string; sms?: string; powers?: string; locations?: string;
}

export async function updateUser(pool: pg.Pool, u: UserUpdate) {
  const id = uuid(u.id, '--id');
  if (u.role !== undefined && !['owner', 'admin', 'manager', 'member'].includes(u.role)) {
    throw new AdminError('--role must be owner, admin, manager or member');
  }
  const powers = u.powers === undefined ? undefined : u.powers.split(',').map((p) => p.trim()).filter(Boolean);
  for (const p of powers ?? []) {
    if (!(POWERS as readonly string[]).includes(p)) throw new AdminError(`--powers: unknown power "${p}" (${POWERS.join(', ')})`);
  }
  const locations = u.locations === undefined ? undefined
    : u.locations.split(',').map((l) => l.trim()).filter(Boolean).map((l) => uuid(l, '--locations'));
  const active = onOff(u.active, '--active');
  const agentAccess = onOff(u.agentAccess, '--agent-access');
  const sms = onOff(u.sms, '--sms');

  return inTransaction(pool, async (c) => {
    const { rows: [person] } = await c.query(`select organization_id, role from app_public.people where id = $1 for update`, [id]);
    if (!person) throw new AdminError(`no user with id ${id}`);
    const role: string = u.role ?? person.role;
    // A new role keeps the records level and clears powers unless it is manager.
    const newPowers = role !== 'manager' ? [] : powers ?? (u.role !== undefined && person.role !== 'manager' ? [] : undefined);
    if (locations) {
      const { rows } = await c.query(
        `select count(*)::int as n from app_public.locations where organization_id = $1 and id = any($2::uuid[])`,
        [person.organization_id, locations]);
      if (rows[0].n !== new Set(locations).size) throw new AdminError('--locations: every location must belong to the user\'s organization');
      await c.query(`delete from app_public.person_locations where organization_id = $1 and person_id = $2 and location_id <> all($3::uuid[])`,
        [person.organization_id, id, locations]);
      await c.query(
        `insert into app_public.person_locations (organization_id, person_id, location_id)
         select $1, $2, unnest($3::uuid[]) on conflict do nothing`, [person.organization_id, id, locations]);
    }
    const { rows: [updated] } = await c.query(
      `update app_public.people set
         role = $2,
         powers = coalesce($3::text[], powers),
         active = coalesce($4, active),
         agent_access = coalesce($5, agent_access),
         sms_enabled = coalesce($6, sms_enabled),
         updated_at = now()
       where id = $1
       returning id, organization_id, role, powers, active, agent_access, sms_enabled, records_level`,
      [id, role, newPowers ?? null, active ?? null, agentAccess ?? null, sms ?? null]);
    return updated;
  });
}

export async function setRoleAccess(pool: pg.Pool, org: string | undefined, role: string | undefined, access: string | undefined) {
  const orgId = uuid(org, '--org');
  if (role === 'owner') throw new AdminError('an owner\'s agent access is always on');
  if (!role || !['admin', 'manager', 'member'].includes(role)) throw new AdminError('--role must be admin, manager or member');
  const on = onOff(access, '--agent-access');
  if (on === undefined) throw new AdminError('--agent-access on|off is required');
  const { rowCount } = await pool.query(`select 1 from app_public.organizations where id = $1`, [orgId]);
  if (!rowCount) throw new AdminError(`no organization with id ${orgId}`);
  await pool.query(
    `insert into app_public.role_agent_access (organization_id, role, agent_access) values ($1, $2, $3)
     on conflict (organization_id, role) do update set agent_access = excluded.agent_access`, [orgId, role, on]);
  return { organization_id: orgId, role, agent_access: on };
}

export async function updateOrg(pool: pg.Pool, id: string | undefined, mcp: string | undefined, tagLimit: string | undefined,
  smsHelp?: string) {
  const orgId = uuid(id, '--id');
  const mcpEnabled = onOff(mcp, '--mcp');
  let limit: number | undefined;
  if (tagLimit !== undefined) {
    limit = Number(tagLimit);
    if (!/^\d+$/.test(tagLimit) || !Number.isSafeInteger(limit)) throw new AdminError('--tag-limit must be a nonnegative integer');
  }
  // --sms-help '' goes back to the default answer
  const help = smsHelp?.trim();
  if (help !== undefined && (help.length > 300 || help.includes('\u0000'))) throw new AdminError('--sms-help is at most 300 characters, without NUL');
  const { rows } = await pool.query(
    `update app_public.organizations set mcp_enabled = coalesce($2, mcp_enabled), tag_limit = coalesce($3, tag_limit),
            sms_help_text = case when $4 then nullif($5, '') else sms_help_text end
     where id = $1 returning id, name, mcp_enabled, tag_limit, sms_help_text`,
    [orgId, mcpEnabled ?? null, limit ?? null, help !== undefined, help ?? null]);
  if (!rows.length) throw new AdminError(`no organization with id ${orgId}`);
  return rows[0];
}

/**
 * Moves a sending domain or phone number to another organization (or one of its locations):
 * the holder lets go and the new organization takes it in one transaction (docs/operator-cli.md).
 */
export async function moveIdentifier(pool: pg.Pool, o: { domain?: string; number?: string; to?: string; location?: string }) {
  if ((o.domain === undefined) === (o.number === undefined)) throw new AdminError('give one of --domain DOMAIN or --number E164');
  const to = uuid(o.to, '--to');
  const location = o.location === undefined ? null : uuid(o.location, '--location');
  let kind: 'email_domain' | 'phone_number';
  let value: string;
  if (o.domain !== undefined) {
    value = o.domain.trim().toLowerCase();
    if (!DOMAIN.test(value)) throw new AdminError('--domain must be a domain name, like example.com');
    kind = 'email_domain';
  } else {
    value = normalizePhone(o.number!.trim(), '--number');
    kind = 'phone_number';
  }
  return asAdmin(async () => (await pool.query(`select app_private.move_inbound_identifier($1, $2, $3, $4) as moved`,
    [kind, value, to, location])).rows[0].moved);
}

/** A date, or a date and time with an optional offset, as PostgreSQL's timestamptz reads it. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i;

export async function readOutbox(pool: pg.Pool, org: string | undefined, since: string | undefined) {
  const orgId = uuid(org, '--org');
  const badSince = () => new AdminError('--since must be an ISO 8601 date or time (2026-11-01, 2026-11-01T09:00:00Z)');
  if (since !== undefined && !ISO_TIME.test(since)) throw badSince();
  // a day that does not exist (2026-02-30: Date.parse rolls it into March) or an offset out of
  // range, as PostgreSQL reads it (its data exceptions are class 22)
  if (since !== undefined) {
    await pool.query('select $1::timestamptz', [since]).catch((e: { code?: string }) => {
      throw e.code?.startsWith('22') ? badSince() : e;
    });
  }
  const { rows: [known] } = await pool.query('select 1 from app_public.organizations where id = $1', [orgId]);
  if (!known) throw new AdminError(`no organization with id ${orgId}`);
  const { rows } = await pool.query(
    `select id, organization_id, channel, sender as "from", recipient as "to", subject, body, meta, created_at
       from app_private.outbox
      where organization_id = $1 and ($2::timestamptz is null or created_at >= $2)
      order by created_at, id`, [orgId, since ?? null]);
  return rows;
}

export { FixtureError };
