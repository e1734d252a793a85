// The internal GraphQL layer: same keys, same claims, same row-level security as REST;
// read-only; aggregates; nothing of app_private; and in-process execution under claims.
// Which credentials it takes and what its schema shows: graphql-access.test.ts.
import test from 'ava';
import pg from 'pg';
import type { Applied } from '../../src/admin/fixture.ts';
import { hashKey } from '../../src/auth/keys.ts';
import { loadConfig } from '../../src/config.ts';
import { runStatement, type Claims } from '../../src/db/request.ts';
import { createInternalGraphql, type InternalGraphql } from '../../src/graphql/internal.ts';
import { pgSettingsFor } from '../../src/graphql/pg-settings.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { getIntrospectionQuery } from 'postgraphile/graphql';
import { OPERATION_LIMITS } from '../../src/graphql/limits.ts';
import { exposureOf } from '../../src/graphql/exposed.ts';
import { AREAS } from '../../src/areas.ts';

const EXPOSED = exposureOf(AREAS.flatMap((a) => (a.graphql ? [a.graphql.tables] : [])));

let app: TestApp;
let gql: InternalGraphql;
let a: Applied;
let b: Applied;
test.before(async () => {
  app = await startApp({
    mount: async (deps) => {
      gql = await createInternalGraphql(deps);
      return gql.mount;
    },
  });
  a = await app.apply(acmeFixture('GraphQL A'));
  b = await app.apply(acmeFixture('GraphQL B'));
});
test.after.always(async () => {
  await gql?.release();
  await app?.close();
});

const post = (key: string | undefined, query: string, variables?: Record<string, unknown>) =>
  app.request('POST', '/internal/graphql', { key, body: { query, variables } });

const claimsOf = async (key: string): Promise<Claims> =>
  (await runStatement(app.pool, hashKey(key), { scope: null, memberAccess: 'open', managerPower: null }, undefined)).claims;

const TENANT = `{
  allOrganizations(first: 10) { nodes { rowId } }
  allPipelineStages(first: 10, orderBy: PRIMARY_KEY_ASC) { nodes { rowId organizationId } }
  allContacts(first: 10, orderBy: PRIMARY_KEY_ASC) { totalCount nodes { rowId organizationId } }
}`;
// uuids order as their hex text does
const sorted = (ids: (string | undefined)[]) => [...ids].sort();

test('a key sees only its own organization', async (t) => {
  for (const tenant of [a, b]) {
    const res = await post(tenant.keys.org, TENANT);
    t.is(res.status, 200);
    t.is(res.body.errors, undefined);
    const { allOrganizations, allPipelineStages, allContacts } = res.body.data;
    t.deepEqual(allOrganizations.nodes, [{ rowId: tenant.organization_id }]);
    t.deepEqual(allPipelineStages.nodes.map((n: any) => n.rowId), sorted([tenant.ids.lead, tenant.ids.won]));
    t.is(allContacts.totalCount, 3);
    t.deepEqual(allContacts.nodes.map((n: any) => n.rowId), sorted([tenant.ids.ann, tenant.ids.bob, tenant.ids.cy]));
    t.true([...allPipelineStages.nodes, ...allContacts.nodes].every((n: any) => n.organizationId === tenant.organization_id));
  }
});

test('a row of another organization is simply absent', async (t) => {
  const res = await post(a.keys.org, `query ($org: UUID!, $id: UUID!) {
    contactByOrganizationIdAndRowId(organizationId: $org, rowId: $id) { rowId }
  }`, { org: b.organization_id, id: b.ids.ann });
  t.is(res.status, 200);
  t.deepEqual(res.body, { data: { contactByOrganizationIdAndRowId: null } });
});

test('a missing, unknown or malformed key gets the 401 envelope', async (t) => {
  const cases: Record<string, string>[] = [
    {},
    { authorization: `Bearer svc_sk_${'Z'.repeat(32)}` },
    { authorization: 'Bearer nope' },
    { authorization: `Basic ${a.keys.org}` },
  ];
  for (const headers of cases) {
    const res = await app.request('POST', '/internal/graphql', { headers, body: { query: '{ __typename }' } });
    t.is(res.status, 401);
    t.is(res.headers.get('www-authenticate'), 'Bearer');
    t.like(res.body, { statusCode: 401, error: 'unauthorized', path: '/internal/graphql' });
    t.is(typeof res.body.timestamp, 'string');
  }
});

test('aggregates over contacts follow the same policies', async (t) => {
  const query = `{ allContacts {
    totalCount
    aggregates { sum { totalCalls } max { totalCalls } distinctCount { totalCalls } }
  } }`;
  const whole = await post(a.keys.org, query);
  t.is(whole.body.errors, undefined);
  t.deepEqual(whole.body.data.allContacts, {
    totalCount: 3,
    aggregates: { sum: { totalCalls: '2' }, max: { totalCalls: 2 }, distinctCount: { totalCalls: '2' } },
  });
  // HTTP takes only organization-wide keys; in-process, a location-limited one's claims count its locations only
  const south = await gql.execute(await claimsOf(a.keys.weak_mgr_personal!), query);
  t.is(south.errors, undefined);
  t.deepEqual(south.data?.allContacts, {
    totalCount: 1,
    aggregates: { sum: { totalCalls: '0' }, max: { totalCalls: 0 }, distinctCount: { totalCalls: '1' } },
  });
});

test('the schema is read-only: no mutations at all', async (t) => {
  const res = await post(a.keys.org, '{ __schema { mutationType { name } } }');
  t.deepEqual(res.body, { data: { __schema: { mutationType: null } } });
  const write = await post(a.keys.org, `mutation { createContact(input: { contact: { name: "x" } }) { clientMutationId } }`);
  t.is(write.status, 400);
  t.regex(write.body.errors?.[0]?.message ?? '', /read-only/);
  t.is(write.body.data, undefined);
  const { rows: [{ n }] } = await app.db.owner.query(`select count(*)::int as n from app_public.contacts`);
  t.is(n, 6);
});

test('one operation is bounded: top-level fields, total fields, depth, page sizes; introspection is not counted', async (t) => {
  const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `c${i}: allContacts { totalCount }`).join(' ')} }`;
  const fits = await post(a.keys.org, aliases(OPERATION_LIMITS.rootFields));
  t.is(fits.status, 200);
  t.is(fits.body.data.c0.totalCount, 3);
  for (const [query, message] of [
    [aliases(OPERATION_LIMITS.rootFields + 1), /more than 20 top-level fields/],
    [aliases(2000), /top-level fields/],
    // the same fields through a fragment count the same
    [`{ ...F } fragment F on Query { ${aliases(OPERATION_LIMITS.rootFields + 1).slice(1, -1)} }`, /top-level fields/],
    [`{ allContacts(first: 5) { nodes { ${Array.from({ length: 1001 }, (_, i) => `f${i}: name`).join(' ')} } } }`, /more than 1000 fields/],
    [`{ allOrganizations(first: 1) { nodes { ${'contactsByOrganizationId(first: 1) { nodes { organizationByOrganizationId { '.repeat(3)} rowId ${'} } }'.repeat(3)} } } }`,
      /nests more than 10 levels deep/],
    // rows are read only a page at a time: first or last is required, at most 1000, and nested pages multiply
    ['{ allContacts { nodes { rowId } } }', /allContacts: give first or last \(at most 1000\)/],
    ['{ c: allContacts(first: 1001) { edges { node { rowId } } } }', /c: give first or last/],
    ['{ allContacts(first: 1000) { ...N } } fragment N on ContactConnection { nodes { rowId } }', null],
    ['{ allOrganizations(first: 100) { nodes { contactsByOrganizationId(last: 101) { nodes { rowId } } } } }', /up to 10100 rows; at most 10000/],
  ] as const) {
    const res = await post(a.keys.org, query);
    if (message === null) {
      t.is(res.status, 200, JSON.stringify(res.body));
      continue;
    }
    t.is(res.status, 400);
    t.regex(res.body.errors?.[0]?.message ?? '', message);
    t.is(res.body.data, undefined);
  }
  // without nodes or edges, a connection needs no page size: counts and aggregates read no rows out
  t.is((await post(a.keys.org, '{ allContacts { totalCount aggregates { sum { totalCalls } } } }')).status, 200);
  // a page size from a variable counts the same
  const byVariable = await app.request('POST', '/internal/graphql', { key: a.keys.org,
    body: { query: 'query ($n: Int) { allContacts(first: $n) { nodes { rowId } } }', variables: { n: 5000 } } });
  t.regex(byVariable.body.errors?.[0]?.message ?? '', /give first or last/);
  const introspection = await post(a.keys.org, getIntrospectionQuery());
  t.is(introspection.status, 200);
  t.truthy(introspection.body.data.__schema.queryType);
});

test('groupedAggregates groups only by values many rows share', async (t) => {
  const values = async (type: string) => ((await post(a.keys.org, `{ __type(name: "${type}") { enumValues { name } } }`))
    .body.data.__type.enumValues as { name: string }[]).map((v) => v.name).sort();
  t.deepEqual(await values('ContactGroupBy'),
    ['LAST_SEEN_AT_TRUNCATED_TO_DAY', 'LAST_SEEN_AT_TRUNCATED_TO_HOUR', 'ORGANIZATION_ID', 'STAGE_ID']);
  t.deepEqual(await values('ContactTagGroupBy'), ['ORGANIZATION_ID', 'TAG_ID']);
  const byRow = await post(a.keys.org, '{ allContacts { groupedAggregates(groupBy: [ROW_ID]) { keys } } }');
  t.is(byRow.status, 400);
  const byStage = await post(a.keys.org, '{ allContacts { groupedAggregates(groupBy: [STAGE_ID]) { keys distinctCount { rowId } } } }');
  t.is(byStage.status, 200);
  t.is(byStage.body.data.allContacts.groupedAggregates.length, 2, 'Lead, and no stage');
});

test('nothing of app_private is reachable', async (t) => {
  const res = await post(a.keys.org, '{ __schema { types { name } queryType { fields { name } } } }');
  const types: string[] = res.body.data.__schema.types.map((x: any) => x.name);
  const { rows } = await app.db.owner.query(
    `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'app_private' and c.relkind in ('r', 'v', 'm', 'p')`);
  t.true(rows.length > 0);
  for (const { relname } of rows as { relname: string }[]) {
    const typeName = relname.replace(/s$/, '').replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());
    t.false(types.some((name) => name.startsWith(typeName)), `${relname} appears as ${typeName}`);
  }
  // one connection per exposed table, and no more
  const connections = res.body.data.__schema.queryType.fields.filter((f: any) => /^all[A-Z]/.test(f.name));
  t.is(connections.length, Object.keys(EXPOSED).length);
  const direct = await post(a.keys.org, '{ allApiKeys { nodes { keyHash } } }');
  t.regex(direct.body.errors?.[0]?.message ?? '', /Cannot query field "allApiKeys"/);
});

test('SVC_INTERNAL_GRAPHQL=off answers 404', async (t) => {
  let off: InternalGraphql | undefined;
  const other = await startApp({
    env: { SVC_INTERNAL_GRAPHQL: 'off' },
    mount: async (deps) => (off = await createInternalGraphql(deps)).mount,
  });
  try {
    const tenant = await other.apply(acmeFixture('GraphQL off'));
    const res = await other.request('POST', '/internal/graphql', { key: tenant.keys.org, body: { query: '{ __typename }' } });
    t.is(res.status, 404);
    t.like(res.body, { statusCode: 404, error: 'not_found', path: '/internal/graphql' });
    // handlers may still run GraphQL in-process
    const inProcess = await off!.execute(
      (await runStatement(other.pool, hashKey(tenant.keys.org!), { scope: null, memberAccess: 'open', managerPower: null }, undefined)).claims,
      '{ allContacts { totalCount } }');
    t.deepEqual(inProcess, { data: { allContacts: { totalCount: 3 } } });
  } finally {
    await off?.release();
    await other.close();
  }
});

test('SVC_INTERNAL_GRAPHQL is on by default and takes only on or off', (t) => {
  t.true(loadConfig({}).internalGraphql);
  t.true(loadConfig({ SVC_INTERNAL_GRAPHQL: 'on' }).internalGraphql);
  t.false(loadConfig({ SVC_INTERNAL_GRAPHQL: 'off' }).internalGraphql);
  t.throws(() => loadConfig({ SVC_INTERNAL_GRAPHQL: 'false' }), { message: /SVC_INTERNAL_GRAPHQL/ });
});

test('execute runs in-process under the given claims, which the policies follow', async (t) => {
  const query = `query ($first: Int) { allContacts(first: $first, orderBy: PRIMARY_KEY_ASC) { totalCount nodes { rowId } } }`;
  // a location-limited key, which HTTP refuses, sees only its locations' contacts
  const north = await gql.execute(await claimsOf(a.keys.north_mgr!), query, { first: 10 });
  t.deepEqual(north, { data: { allContacts: { totalCount: 1, nodes: [{ rowId: a.ids.ann }] } } });
  const links = await gql.execute(await claimsOf(a.keys.north_mgr!), '{ allContactLocations { totalCount } }');
  t.deepEqual(links, { data: { allContactLocations: { totalCount: 1 } } });
  const other = await gql.execute(await claimsOf(b.keys.org!), query, { first: 1 });
  const first = sorted([b.ids.ann, b.ids.bob, b.ids.cy])[0];
  t.deepEqual(other, { data: { allContacts: { totalCount: 3, nodes: [{ rowId: first }] } } });
});

test('pgSettings are a copy of the settings authenticate set, for every kind of key', async (t) => {
  const client = new pg.Client(app.db.ownerUrl);
  await client.connect();
  try {
    // every svc.* setting a function of ours reads, directly or through app_hidden.session_claim
    // (the claim helpers: an analyst's session reads its mapping instead), so that a claim left
    // out of the copy fails here
    const { rows: [{ names }] } = await client.query(String.raw`
      select array(select distinct n from (
          select m[1] as n from pg_proc p, regexp_matches(p.prosrc, 'current_setting\(''(svc\.\w+)''', 'g') m
           where p.pronamespace in ('app_public'::regnamespace, 'app_hidden'::regnamespace, 'app_private'::regnamespace)
          union
          select 'svc.' || m[1] from pg_proc p, regexp_matches(p.prosrc, 'session_claim\(''(\w+)''', 'g') m
           where p.pronamespace in ('app_public'::regnamespace, 'app_hidden'::regnamespace, 'app_private'::regnamespace)) x
        order by 1) as names`);
    t.true(names.length >= 9);
    const settingsNow = async () => Object.fromEntries((await client.query(
      `select name, current_setting(name, true) as setting from unnest($1::text[]) name`, [names])).rows
      .map((r) => [r.name, r.setting ?? '']));
    for (const [ref, key] of Object.entries(a.keys)) {
      await client.query('begin');
      await client.query('set local role svc_request');
      const { rows: [{ claims }] } = await client.query(
        `select app_hidden.authenticate($1, null, 'open', null) as claims`, [hashKey(key)]);
      const set = await settingsNow();
      await client.query('rollback');
      // what authenticate answers is what it set, and it sets every setting the database reads
      t.deepEqual(Object.keys(claims.settings).sort(), names, ref);
      t.deepEqual(claims.settings, set, ref);

      // PostGraphile applies pgSettings as the role and a set_config(…, true) per setting
      const { role, ...settings } = pgSettingsFor(claims as Claims);
      t.is(role, 'svc_request');
      t.deepEqual(settings, claims.settings, ref);
      await client.query('begin');
      await client.query(`select set_config('role', $1, true)`, [role]);
      await client.query(`select set_config(key, value, true) from json_each_text($1)`, [JSON.stringify(settings)]);
      const { rows: [{ current }] } = await client.query('select current_user as current');
      const copied = await settingsNow();
      await client.query('rollback');
      t.is(current, 'svc_request');
      t.deepEqual(copied, set, ref);
    }
  } finally {
    await client.end();
  }
});
