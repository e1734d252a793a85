// Idempotency when the first call's owner is gone: a server killed mid-write, records the
// earlier two-transaction protocol left behind (spec: Errors, idempotency_outcome_unknown),
// and the answers a retry gets while the first call is alive or has just finished.
import test from 'ava';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { requestAt, startApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { adminApply } from '../../src/admin/commands.ts';
import { hashKey } from '../../src/auth/keys.ts';
import { type Tx } from '../../src/db/request.ts';
import { sql } from '../../src/db/sql.ts';
import { runIdempotent } from '../../src/platform/idempotency.ts';
import { AREAS } from '../../src/areas.ts';
import { operationsOf } from '../../src/registry/area.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

/** `svc serve --no-worker` over a test database, as its own process. */
async function serveProcess(db: TestDatabase) {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--no-worker'], {
    env: { ...process.env, DATABASE_URL: db.ownerUrl, LOG_LEVEL: 'info', NODE_ENV: 'production' },
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 60_000);
    const read = (d: Buffer) => {
      output += d;
      const m = /"url":"(http:\/\/[^"]+)".*"msg":"serving"/.exec(output);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
  });
  return { url, kill: async () => { child.kill('SIGKILL'); await exited; } };
}

const addNote = async (url: string, key: string, contactId: string, body: Record<string, unknown>) => {
  const { status, body: answer } = await requestAt(url, operationsOf(AREAS), 'POST', `/api/v1/contacts/${contactId}/notes`, { key, body });
  return { status, body: answer };
};

/**
 * Holds the contact's row lock from an owner connection, so a note on it waits (its foreign
 * key check needs a share lock), until release().
 */
async function blockNotes(owner: pg.Pool, contactId: string) {
  const c = await owner.connect();
  await c.query('begin');
  await c.query('select 1 from app_public.contacts where id = $1 for update', [contactId]);
  let released: Promise<void> | undefined;
  return () => (released ??= c.query('rollback').then(() => c.release()));
}

/** The backend of the request connection that waits for a lock, once there is one. */
async function waitingBackend(db: TestDatabase): Promise<number> {
  for (let i = 0; i < 300; i++) {
    const { rows } = await db.owner.query(`select pid from pg_stat_activity
      where datname = current_database() and usename = 'svc_login' and wait_event_type = 'Lock'`);
    if (rows[0]) return rows[0].pid as number;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no request waits for a lock');
}

async function backendGone(db: TestDatabase, pid: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const { rowCount } = await db.owner.query('select 1 from pg_stat_activity where pid = $1', [pid]);
    if (!rowCount) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`backend ${pid} did not end`);
}

/** Advisory locks held in this test database. */
const advisoryLocks = async (db: TestDatabase) => (await db.owner.query(`select count(*)::int as n from pg_locks
  where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`)).rows[0].n as number;

const notes = async (db: TestDatabase, body: string) =>
  (await db.owner.query('select count(*)::int as n from app_public.contact_notes where body = $1', [body])).rows[0].n as number;

// The claim, the write and the storing of its answer go to PostgreSQL as one statement, so a
// server killed while its write waits may still see the write commit, with its answer, once the
// wait ends; or, should PostgreSQL notice the lost connection first, see nothing commit. Either
// way the key and the write stay together, and the retry runs the call at most once.
test('a server killed mid-write: the write commits with its answer or not at all; the retry runs it at most once, then replays it', async (t) => {
  const db = await createTestDatabase();
  try {
    const acme = await adminApply(db.owner, acmeFixture(), AREAS);
    const ann = acme.ids.ann!;
    const note = { body: 'Written once', idempotency_key: 'k-crash' };
    const first = await serveProcess(db);
    const release = await blockNotes(db.owner, ann);
    try {
      const pending = addNote(first.url, acme.keys.org!, ann, note).catch(() => undefined);
      const pid = await waitingBackend(db);
      await first.kill();
      await pending;
      await release();
      await backendGone(db, pid);
    } finally {
      await first.kill();
      await release();
    }
    const committed = await notes(db, 'Written once');
    t.true(committed === 0 || committed === 1);
    t.deepEqual((await db.owner.query(`select count(*)::int as n, count(*) filter (where response_status = 201)::int as answered
        from app_private.idempotency_keys where key = 'k-crash'`)).rows[0], { n: committed, answered: committed },
      'the key is stored, with its answer, exactly when the write committed');

    const second = await serveProcess(db);
    try {
      const retry = await addNote(second.url, acme.keys.org!, ann, note);
      t.is(retry.status, 201);
      t.deepEqual(await addNote(second.url, acme.keys.org!, ann, note), retry, 'then replayed');
      t.is(await notes(db, 'Written once'), 1);
    } finally {
      await second.kill();
    }
  } finally {
    await db.drop();
  }
});

/**
 * Adds `note` to a contact whose row is locked, so that the call waits inside its write; `during`
 * runs meanwhile with a retry of the same call, then the lock goes and the first call answers.
 */
async function whileFirstCallWaits(app: TestApp, note: Record<string, unknown>,
  during: (retry: () => ReturnType<typeof addNote>) => Promise<void>) {
  const acme = await app.apply(acmeFixture());
  const retry = () => addNote(app.url, acme.keys.org!, acme.ids.ann!, note);
  const release = await blockNotes(app.db.owner, acme.ids.ann!);
  const pending = retry();
  pending.catch(() => undefined); // awaited below, unless an assertion ends the test first
  try {
    await waitingBackend(app.db);
    await during(retry);
  } finally {
    await release();
  }
  return { first: await pending, retry };
}

test('while the first call runs, a retry answers idempotency_in_progress, then the first answer', async (t) => {
  const app = await startApp();
  try {
    const { first, retry } = await whileFirstCallWaits(app, { body: 'Still running', idempotency_key: 'k-alive' }, async (retry) => {
      const res = await retry();
      t.is(res.status, 409);
      t.is(res.body.error, 'idempotency_in_progress');
    });
    t.is(first.status, 201);
    t.deepEqual(await retry(), first);
    t.is(await notes(app.db, 'Still running'), 1);
  } finally {
    await app.close();
  }
});

test('records the two-transaction protocol left running or failed answer idempotency_outcome_unknown until they expire', async (t) => {
  const clock = new Date();
  const app = await startApp({ clock: () => clock });
  try {
    const acme = await app.apply(acmeFixture());
    const ann = acme.ids.ann!;
    // what a first call of that protocol left behind when its process died after its claim
    // (recorded as running) or was found gone (failed): its record, without an answer
    for (const state of ['running', 'failed']) {
      const note = { body: `Left ${state}`, idempotency_key: `k-left-${state}` };
      t.is((await addNote(app.url, acme.keys.org!, ann, note)).status, 201);
      await app.db.owner.query(`update app_private.idempotency_keys
        set state = $2, response_status = null, response_body = null where key = $1`, [note.idempotency_key, state]);
      const res = await addNote(app.url, acme.keys.org!, ann, note);
      t.is(res.status, 409, state);
      t.is(res.body.error, 'idempotency_outcome_unknown', state);
      t.is(await notes(app.db, note.body), 1, 'nothing written again');
    }
    await app.db.owner.query(`update app_private.idempotency_keys set created_at = created_at - interval '24 hours'
      where key like 'k-left-%'`);
    t.is((await addNote(app.url, acme.keys.org!, ann, { body: 'Left running', idempotency_key: 'k-left-running' })).status, 201,
      'after 24 hours the key starts over');
    t.is(await notes(app.db, 'Left running'), 2);
  } finally {
    await app.close();
  }
});

test('a retry after the first call\'s commit, before its answer reached its caller, gets the stored answer', async (t) => {
  const app = await startApp();
  // The first call runs on a connection that stops right after its commit, before it answers.
  let resume!: () => void;
  const gate = new Promise<void>((r) => { resume = r; });
  try {
    const acme = await app.apply(acmeFixture());
    const ann = acme.ids.ann!;
    const note = { body: 'Just finished', idempotency_key: 'k-finished' };
    let committed!: () => void;
    const atCommit = new Promise<void>((r) => { committed = r; });
    const pausing = Object.create(app.pool) as pg.Pool;
    pausing.connect = (async () => {
      const client = await app.pool.connect();
      const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = async (...args: unknown[]) => {
        const result = await query(...args);
        if (args[0] === 'commit') { committed(); await gate; }
        return result;
      };
      return client;
    }) as typeof app.pool.connect;
    const req = { scope: 'contacts:write', memberAccess: 'deny', managerPower: 'contacts' };
    const write = async (tx: Tx) => (await tx.query<{ result: unknown }>(
      sql`select app_public.contacts_add_note(${ann}::uuid, ${note.body}::text) as result`))[0]!.result;
    const first = runIdempotent(pausing, hashKey(acme.keys.org!), req, 'contacts_add_note',
      { contactId: ann, ...note }, note.idempotency_key, new Date(), 201, write);
    await atCommit;
    t.is(await advisoryLocks(app.db), 0, 'its lock ended with its transaction');
    const retry = await addNote(app.url, acme.keys.org!, ann, note);
    resume();
    const answer = await first;
    t.is(retry.status, 201, JSON.stringify(retry.body));
    t.deepEqual(retry.body, answer.body);
    t.is(await notes(app.db, 'Just finished'), 1);
  } finally {
    resume();
    await app.close();
  }
});
