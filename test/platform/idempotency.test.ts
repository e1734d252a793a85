// Idempotency (spec: Limits, Errors): replay within 24 h for the same credential, key and
// details; 409s for reuse, in-progress and unknown outcomes; 503 when the store is down.
import test from 'ava';
import pg from 'pg';
import { startApp, startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { probeIdempotentOperations } from '../helpers/probes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { updateUser } from '../../src/admin/commands.ts';
import { hashKey } from '../../src/auth/keys.ts';
import { runIdempotent } from '../../src/platform/idempotency.ts';
import { CommitOutcomeUnknown } from '../../src/db/request.ts';
import { sql } from '../../src/db/sql.ts';

const now = new Date('2026-11-21T12:00:00Z');
let app: TestApp;
let acme: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture(), { operations: probeIdempotentOperations, clock: () => now }));
});
test.after.always(async () => { await app?.close(); });

const messages = async (to: string) =>
  (await app.db.owner.query(`select count(*)::int as n from app_private.outgoing_messages where recipient = $1`, [to])).rows[0].n as number;
const queue = (key: string | undefined, body: Record<string, unknown>) =>
  app.request('POST', '/api/v1/probe/queue', { key, body });

test('the same key and details return the first answer', async (t) => {
  const first = await queue(acme.keys.org, { to: '+15550001001', idempotency_key: 'k-replay' });
  t.is(first.status, 201);
  const again = await queue(acme.keys.org, { to: '+15550001001', idempotency_key: 'k-replay' });
  t.is(again.status, 201);
  t.deepEqual(again.body, first.body);
  t.is(await messages('+15550001001'), 1);
});

test('the same key with other details is 409 idempotency_key_reused and writes nothing', async (t) => {
  await queue(acme.keys.org, { to: '+15550001002', idempotency_key: 'k-reuse' });
  const other = await queue(acme.keys.org, { to: '+15550001003', idempotency_key: 'k-reuse' });
  t.is(other.status, 409);
  t.is(other.body.error, 'idempotency_key_reused');
  t.is(await messages('+15550001003'), 0);
});

test('without a key every call runs', async (t) => {
  await queue(acme.keys.org, { to: '+15550001004' });
  await queue(acme.keys.org, { to: '+15550001004' });
  t.is(await messages('+15550001004'), 2);
});

test('50 concurrent requests with one key produce exactly one effect', async (t) => {
  const results = await Promise.all(Array.from({ length: 50 }, () =>
    queue(acme.keys.org, { to: '+15550001005', idempotency_key: 'k-race' })));
  t.is(await messages('+15550001005'), 1);
  const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.message_id));
  t.is(ids.size, 1, 'every success is the same answer');
  for (const r of results) {
    t.true(r.status === 201 || (r.status === 409 && r.body.error === 'idempotency_in_progress'), JSON.stringify(r.body));
  }
});

test('another credential with the same key is not a replay', async (t) => {
  const a = await queue(acme.keys.org, { to: '+15550001006', idempotency_key: 'k-shared' });
  const b = await queue(acme.keys.admin_org, { to: '+15550001006', idempotency_key: 'k-shared' });
  t.is(b.status, 201);
  t.not(b.body.message_id, a.body.message_id);
  t.is(await messages('+15550001006'), 2);
});

test('a key expires after 24 hours', async (t) => {
  // its own app: this test moves the clock
  let clock = new Date('2026-11-21T12:00:00Z');
  const own = await startApp({ operations: probeIdempotentOperations, clock: () => clock });
  try {
    const f = await own.apply(acmeFixture('Expiry Co'));
    const call = () => own.request('POST', '/api/v1/probe/queue', { key: f.keys.org, body: { to: '+15550001007', idempotency_key: 'k-expiry' } });
    const first = await call();
    clock = new Date(clock.getTime() + 23 * 3600_000);
    t.deepEqual((await call()).body, first.body, 'replayed within 24 h');
    clock = new Date(clock.getTime() + 2 * 3600_000);
    const later = await call();
    t.is(later.status, 201);
    t.not(later.body.message_id, first.body.message_id, 'runs again after 24 h');
    const { rows } = await own.db.owner.query(`select count(*)::int as n from app_private.outgoing_messages where recipient = '+15550001007'`);
    t.is(rows[0].n, 2);
  } finally {
    await own.close();
  }
});

test('a replay after the caller\'s access changed is 409 idempotency_key_reused', async (t) => {
  const f = await app.apply(acmeFixture('Access Change Co'));
  t.is((await queue(f.keys.mgr_personal, { to: '+15550001008', idempotency_key: 'k-access' })).status, 201);
  await updateUser(app.db.owner, { id: f.ids.mgr, powers: 'contacts,staff' });
  const replay = await queue(f.keys.mgr_personal, { to: '+15550001008', idempotency_key: 'k-access' });
  t.is(replay.status, 409);
  t.is(replay.body.error, 'idempotency_key_reused');
  t.is(await messages('+15550001008'), 1);
});

test('a call refused by authorization or validation claims no key', async (t) => {
  t.is((await queue(acme.keys.member_key, { to: '+15550001009', idempotency_key: 'k-refused' })).status, 403);
  t.is((await queue(acme.keys.org, { to: '', idempotency_key: 'k-refused' })).status, 400);
  t.is((await queue(acme.keys.org, { to: '+15550001009', idempotency_key: 'k-refused' })).status, 201);
});

test('when the store is unreachable the call is 503 and does not run', async (t) => {
  // its own database: the store goes away for everyone in it
  const own = await startApp({ operations: probeIdempotentOperations });
  try {
    const f = await own.apply(acmeFixture('Store Down Co'));
    await own.db.owner.query('alter table app_private.idempotency_keys rename to idempotency_keys_away');
    const res = await own.request('POST', '/api/v1/probe/queue', { key: f.keys.org, body: { to: '+15550001010', idempotency_key: 'k-down' } });
    t.is(res.status, 503);
    t.is(res.body.error, 'idempotency_unavailable');
    const { rows } = await own.db.owner.query(`select count(*)::int as n from app_private.outgoing_messages`);
    t.is(rows[0].n, 0);
  } finally {
    await own.close();
  }
});

/**
 * A pool whose connections "drop" at commit: the server either rolls the transaction back
 * (`committed: false`) or commits it, and the caller hears nothing back either way.
 */
function droppingAtCommit(committed: boolean) {
  const pool = new pg.Pool({ connectionString: app.db.loginUrl, max: 2 });
  const lossy = Object.create(pool) as pg.Pool;
  lossy.connect = (async () => {
    const client = await pool.connect();
    const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
    (client as unknown as { query: unknown }).query = async (...args: unknown[]) => {
      if (args[0] === 'commit') {
        await query(committed ? 'commit' : 'rollback');
        throw new Error('connection lost');
      }
      return query(...args);
    };
    return client;
  }) as typeof pool.connect;
  return { lossy, end: () => pool.end() };
}

for (const committed of [false, true]) {
  test(`a first call whose commit went unanswered (${committed ? 'committed' : 'rolled back'}): the retry ${committed ? 'gets its answer' : 'runs it'}, once`, async (t) => {
    const to = committed ? '+15550001015' : '+15550001011';
    const { lossy, end } = droppingAtCommit(committed);
    const req = { scope: 'contacts:write', memberAccess: 'deny', managerPower: 'contacts' };
    const write = async (tx: import('../../src/db/request.ts').Tx) => {
      await tx.query(sql`select app_hidden.queue_message('sms', ${to}::text, null, 'x')`);
      return { queued: to };
    };
    const input = { to, idempotency_key: `k-unanswered-${committed}` };
    await t.throwsAsync(runIdempotent(lossy, hashKey(acme.keys.org!), req, 'probe_queue', input, input.idempotency_key, now, 201, write),
      { instanceOf: CommitOutcomeUnknown });
    await end();
    const res = await queue(acme.keys.org, input);
    t.is(res.status, 201);
    if (committed) t.deepEqual(res.body, { queued: to }, 'the answer the first call committed');
    t.is(await messages(to), 1);
  });
}

/** Whether some connection holds the advisory lock of this credential's call with this key. */
const lockHeld = async (credentialId: string, key: string) => (await app.db.owner.query(`select count(*)::int as n from pg_locks l
  where l.locktype = 'advisory' and l.database = (select oid from pg_database where datname = current_database())
    and (l.classid::bigint << 32 | l.objid::bigint) = app_private.idempotency_lock_key($1, 'probe_queue', $2)`,
  [credentialId, key])).rows[0].n > 0;

test('a write that fails frees its key and lets go of its lock; the key then runs', async (t) => {
  const req = { scope: 'contacts:write', memberAccess: 'deny', managerPower: 'contacts' };
  const input = { to: '+15550001012', idempotency_key: 'k-fails' };
  const failing = async (tx: import('../../src/db/request.ts').Tx) => {
    await tx.query(sql`select app_hidden.queue_message('sms', '+15550001012', null, 'x')`);
    return tx.query(sql`select 1 / 0`);
  };
  await t.throwsAsync(runIdempotent(app.pool, hashKey(acme.keys.org!), req, 'probe_queue', input, 'k-fails', now, 201, failing),
    { message: /division by zero/ });
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_private.idempotency_keys where key = 'k-fails'`);
  t.is(rows[0].n, 0);
  t.false(await lockHeld(acme.key_ids.org!, 'k-fails'));
  t.is(await messages('+15550001012'), 0, 'the write before the failure was undone too');
  t.is((await queue(acme.keys.org, input)).status, 201);
  t.is((await queue(acme.keys.org, input)).status, 201, 'replayed');
  t.is((await queue(acme.keys.org, { ...input, to: '+15550001013' })).body.error, 'idempotency_key_reused');
  t.false(await lockHeld(acme.key_ids.org!, 'k-fails'), 'no connection went back to the pool holding it');
  t.is(await messages('+15550001012'), 1);
});

test('the stored answer is kept only in the private schema', async (t) => {
  const { rows } = await app.db.owner.query(`select grantee from information_schema.role_table_grants
    where table_schema = 'app_private' and table_name = 'idempotency_keys' and grantee like 'svc\\_%' and grantee <> 'svc_owner'`);
  t.deepEqual(rows, []);
});

test('an idempotent call resolves its key once: the write re-applies the claim\'s settings', async (t) => {
  // A pool that counts the messages that authenticate a key.
  const pool = new pg.Pool({ connectionString: app.db.loginUrl, max: 1 });
  let authentications = 0;
  const counted = new WeakSet<pg.PoolClient>();
  const counting = Object.create(pool) as pg.Pool;
  counting.connect = (async () => {
    const client = await pool.connect();
    if (counted.has(client)) return client;
    counted.add(client);
    const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
    (client as unknown as { query: unknown }).query = async (...args: unknown[]) => {
      if (typeof args[0] === 'string' && /execute svc_auth\(/.test(args[0])) authentications++;
      return query(...args);
    };
    return client;
  }) as typeof pool.connect;
  try {
    const req = { scope: 'contacts:write', memberAccess: 'deny', managerPower: 'contacts' };
    const input = { to: '+15550001014', idempotency_key: 'k-once' };
    const write = async (tx: import('../../src/db/request.ts').Tx) => {
      const [row] = await tx.query<{ role: string; org: string; credential: string }>(sql`select current_user as role,
        app_hidden.current_org_id() as org, app_hidden.current_credential_id() as credential,
        app_hidden.queue_message('sms', '+15550001014', null, 'x') as message_id`);
      return row;
    };
    const answer = await runIdempotent(counting, hashKey(acme.keys.org!), req, 'probe_queue', input, 'k-once', now, 201, write);
    t.is(authentications, 1);
    t.like(answer.body, { role: 'svc_request', org: acme.organization_id, credential: acme.key_ids.org });
    t.is(await messages('+15550001014'), 1);
    const replay = await runIdempotent(counting, hashKey(acme.keys.org!), req, 'probe_queue', input, 'k-once', now, 201, write);
    t.deepEqual(replay, answer);
    t.is(authentications, 2, 'a replay is one round trip');
  } finally {
    await pool.end();
  }
});
