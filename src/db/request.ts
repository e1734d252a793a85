// How every API request touches the database: as svc_request, with the credential's claims,
// inside one transaction. The credential is resolved and authorized by one security-definer
// call (app_hidden.authenticate) in the same round trip as a single-statement operation:
//   set local role svc_request; select app_hidden.authenticate(...); <statement>
// sent as one simple-protocol query, which PostgreSQL runs as one implicit transaction, so
// role and claims end with it. Values are inlined only through the driver's literal escaping
// (db/sql.ts) and are either server-produced (the key hash) or validated by zod.
import type pg from 'pg';
import { inline, sql, toQuery, type Sql } from './sql.ts';

export interface Requirement {
  scope: string | null;
  memberAccess: string;
  managerPower: string | null;
}

/** The claims app_hidden.authenticate set for the transaction, as it returns them. */
export interface Claims {
  organization_id: string;
  credential_id: string;
  kind: 'personal' | 'organization';
  user_id: string | null;
  role: 'organization' | 'owner' | 'admin' | 'manager' | 'member';
  key_role: 'MANAGER' | 'MEMBER' | null;
  location_ids: string[] | null;
  powers: string[] | null;
  scopes: string[];
  records_level: 'all' | 'own';
  sms_enabled: boolean;
}

export interface Tx {
  query<T = Record<string, unknown>>(q: Sql): Promise<T[]>;
}

function prelude(keyHash: Buffer, req: Requirement): string {
  return inline(sql`set local role svc_request;
select app_hidden.authenticate(${keyHash}::bytea, ${req.scope}::text, ${req.memberAccess}::text, ${req.managerPower}::text) as claims`);
}

type Results = pg.QueryResult<Record<string, unknown>>[];

/** Authenticate, authorize and run one statement: one round trip. */
export async function runStatement(
  pool: pg.Pool,
  keyHash: Buffer,
  req: Requirement,
  statement: Sql | undefined,
): Promise<{ claims: Claims; rows: Record<string, unknown>[] }> {
  const text = statement ? `${prelude(keyHash, req)};\n${inline(statement)}` : prelude(keyHash, req);
  const results = (await pool.query(text)) as unknown as Results;
  const claims = results[1]!.rows[0]!.claims as Claims;
  return { claims, rows: statement ? results[2]!.rows : [] };
}

/** Authenticate and authorize, then hand a transaction to a multi-statement handler. */
export async function runTransaction<T>(
  pool: pg.Pool,
  keyHash: Buffer,
  req: Requirement,
  body: (tx: Tx, claims: Claims) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    const results = (await client.query(`begin;\n${prelude(keyHash, req)}`)) as unknown as Results;
    const claims = results[2]!.rows[0]!.claims as Claims;
    const tx: Tx = {
      async query<R>(q: Sql) {
        const { text, values } = toQuery(q);
        return (await client.query(text, values)).rows as R[];
      },
    };
    const out = await body(tx, claims);
    await client.query('commit');
    return out;
  } catch (e) {
    await client.query('rollback').catch(() => { broken = true; });
    throw e;
  } finally {
    client.release(broken);
  }
}
