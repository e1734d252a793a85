// `svc admin analyst create|revoke`: login roles for analysts who query read-only replicas under
// the same row-level policies as the API (db/README.md, Analysts). The organization and the
// locations an analyst reads come from app_private.analysts, keyed by the role's name, which the
// claim helpers read for the session's user; the analyst cannot write it, and setting
// svc.organization_id in its session changes nothing.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import pg from 'pg';
import { AdminError, inTransaction } from './commands.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PREFIX = 'svc_analyst_';
const NAME = /^[a-z0-9_]{1,40}$/;
/**
 * Defaults of a new analyst role: at most this many sessions, each statement at most this long,
 * and a lock waited for at most this long (an analyst's query queued behind a lock would hold
 * others up in turn).
 */
export const ANALYST_DEFAULTS = { connectionLimit: 5, statementTimeout: '60s', lockTimeout: '5s' };

/** What `analyst create` says when the connection string it prints is the primary's. */
export const PRIMARY_WARNING = 'this connection string names the primary: analysts belong on a replica. On the primary an '
  + 'analyst still reaches LISTEN/NOTIFY (PostgreSQL cannot take them from a role) and shares its connections and CPU '
  + 'with the service; give analysts a replica\'s host.';

export interface AnalystCreate {
  org?: string; locations?: string; allOrganizations?: boolean; name?: string;
  connectionLimit?: string; statementTimeout?: string;
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802/7677, as libpq's
 * PQencryptPasswordConn writes it): the password itself never reaches the server, so no log of
 * the CREATE ROLE statement holds it.
 */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

function roleName(name: string | undefined): string {
  if (name === undefined) return `${PREFIX}${randomBytes(5).toString('hex')}`;
  const bare = name.startsWith(PREFIX) ? name.slice(PREFIX.length) : name;
  if (!NAME.test(bare)) throw new AdminError('--name must be 1 to 40 characters a-z, 0-9 or _');
  return `${PREFIX}${bare}`;
}

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9][0-9]{0,3}$/.test(value)) throw new AdminError(`${flag} must be an integer from 1 to 9999`);
  return Number(value);
}

function duration(value: string | undefined): string {
  if (value === undefined) return ANALYST_DEFAULTS.statementTimeout;
  if (!/^[1-9][0-9]{0,6}(ms|s|min|h)$/.test(value)) throw new AdminError('--statement-timeout must be like 500ms, 30s, 5min or 1h');
  return value;
}

/** The connection string of `role` on the server and database of `ownerUrl`. */
function connectionString(ownerUrl: string, role: string, password: string): string {
  const url = new URL(ownerUrl);
  url.username = role;
  url.password = password;
  url.search = '';
  return url.toString();
}

/**
 * Creates an analyst login role, member of svc_analyst, for one organization (and, with
 * `locations`, those of its locations only) or, with `allOrganizations`, the operator's own
 * analyst reading every organization (BYPASSRLS: needs a superuser). Answers its connection
 * string, printed once: the password is generated here and PostgreSQL keeps only its verifier.
 */
export async function createAnalyst(pool: pg.Pool, ownerUrl: string, a: AnalystCreate) {
  if (a.allOrganizations && (a.org !== undefined || a.locations !== undefined)) {
    throw new AdminError('--all-organizations takes no --org or --locations');
  }
  if (!a.allOrganizations && (a.org === undefined || !UUID.test(a.org))) {
    throw new AdminError('--org must be a uuid (or --all-organizations for the operator\'s own analysts)');
  }
  const org = a.org?.toLowerCase() ?? null;
  let locations: string[] | null = null;
  if (a.locations !== undefined) {
    locations = [...new Set(a.locations.split(',').map((l) => l.trim().toLowerCase()).filter(Boolean))];
    if (!locations.length || locations.some((l) => !UUID.test(l))) throw new AdminError('--locations must be location ids, comma-separated');
  }
  const role = roleName(a.name);
  const connectionLimit = positiveInt(a.connectionLimit, '--connection-limit', ANALYST_DEFAULTS.connectionLimit);
  const statementTimeout = duration(a.statementTimeout);
  const password = randomBytes(24).toString('base64url');
  let lockedDown = false;
  let primary = false;

  await inTransaction(pool, async (c) => {
    if (org) {
      const { rowCount } = await c.query(`select 1 from app_public.organizations where id = $1`, [org]);
      if (!rowCount) throw new AdminError(`no organization with id ${org}`);
    }
    if (locations) {
      const { rows } = await c.query(
        `select count(*)::int as n from app_public.locations where organization_id = $1 and id = any($2::uuid[])`, [org, locations]);
      if (rows[0].n !== locations.length) throw new AdminError('--locations: every location must belong to the organization');
    }
    const { rowCount: taken } = await c.query(`select 1 from pg_roles where rolname = $1`, [role]);
    if (taken) throw new AdminError(`a role named ${role} exists already`);
    // Identifiers and literals below are ours (a checked name, a verifier, a checked duration),
    // quoted all the same: DDL takes no parameters.
    const ident = pg.escapeIdentifier(role);
    await c.query(`create role ${ident} login ${a.allOrganizations ? 'bypassrls' : 'nobypassrls'}
      connection limit ${connectionLimit} password ${pg.escapeLiteral(scramVerifier(password))}`);
    await c.query(`grant svc_analyst to ${ident}`);
    await c.query(`alter role ${ident} set statement_timeout = ${pg.escapeLiteral(statementTimeout)}`);
    await c.query(`alter role ${ident} set lock_timeout = ${pg.escapeLiteral(ANALYST_DEFAULTS.lockTimeout)}`);
    // no temporary tables (TEMP taken from PUBLIC on this database; advisory locks: migration)
    lockedDown = (await c.query(`select app_private.analysts_lock_down_database() as done`)).rows[0].done;
    primary = !(await c.query(`select pg_is_in_recovery() as r`)).rows[0].r;
    await c.query(`alter role ${ident} set idle_in_transaction_session_timeout = '5min'`);
    await c.query(`alter role ${ident} set default_transaction_read_only = on`);
    // as for svc_login: the policies' subplans inflate a statement's estimated cost past the JIT
    // thresholds, and compiling then costs far more than the scan (bench/RESULTS.md, analysts)
    await c.query(`alter role ${ident} set jit = off`);
    await c.query(
      `insert into app_private.analysts (role_name, organization_id, location_ids, all_organizations) values ($1, $2, $3, $4)`,
      [role, org, locations, Boolean(a.allOrganizations)]);
  }).catch((e: unknown) => {
    if ((e as { code?: string }).code === '42501') {
      throw new AdminError(`the owner connection may not create this role (${(e as Error).message}); `
        + '--all-organizations needs a superuser (BYPASSRLS), any analyst needs CREATEROLE');
    }
    throw e;
  });
  return {
    name: role,
    organization_id: org,
    location_ids: locations,
    all_organizations: Boolean(a.allOrganizations),
    connection_limit: connectionLimit,
    statement_timeout: statementTimeout,
    lock_timeout: ANALYST_DEFAULTS.lockTimeout,
    connection_string: connectionString(ownerUrl, role, password),
    note: 'shown once: PostgreSQL keeps only a verifier of the password. Point the host at a replica to query it.',
    ...(primary ? { warning: PRIMARY_WARNING } : {}),
    ...(lockedDown ? {} : { temporary_tables: 'not taken from PUBLIC: the owner connection is neither superuser nor the database\'s owner' }),
  };
}

/**
 * Drops an analyst's role and mapping. First the role may no longer log in and its open sessions
 * on this server are ended (a session's temporary tables would keep the role from being dropped);
 * then what it came to own anyway (a large object made on the primary: the functions for them are
 * PostgreSQL's, open to everyone) is dropped with it. On a replica the role disappears when the
 * drop is replayed: no new connection, and an open session loses svc_analyst's rights with it.
 */
export async function revokeAnalyst(pool: pg.Pool, name: string | undefined) {
  if (name === undefined) throw new AdminError('--name is required');
  const role = roleName(name);
  const ident = pg.escapeIdentifier(role);
  const oid = await inTransaction(pool, async (c) => {
    const { rows: [found] } = await c.query(`select oid from pg_roles where rolname = $1`, [role]);
    if (!found) throw new AdminError(`no analyst named ${role}`);
    // refuse before anything: a role of this name that is not an analyst of ours
    const { rows } = await c.query(`select 1 from app_private.analysts where role_name = $1`, [role]);
    const member = await c.query(`select pg_has_role($1, 'svc_analyst', 'USAGE') and not rolsuper as is from pg_roles where rolname = $1`, [role]);
    if (!rows.length && !member.rows[0].is) throw new AdminError(`${role} is not an analyst`);
    await c.query(`alter role ${ident} nologin`);
    return found.oid as number;
  });
  // by oid, waiting up to 5 s for each session to end
  const { rows } = await pool.query(
    `select count(*) filter (where pg_terminate_backend(pid, 5000))::int as ended from pg_stat_activity where usesysid = $1`, [oid]);
  await inTransaction(pool, async (c) => {
    await c.query(`delete from app_private.analysts where role_name = $1`, [role]);
    // DROP OWNED needs the role's privileges: a superuser has them, a CREATEROLE owner grants itself the role
    const { rows: [me] } = await c.query(`select rolsuper from pg_roles where rolname = current_user`);
    if (!me.rolsuper) await c.query(`grant ${ident} to current_user`);
    await c.query(`drop owned by ${ident}`);
    await c.query(`drop role ${ident}`);
  });
  return { name: role, revoked: true, sessions_ended: rows[0].ended };
}
