// Internal GraphQL never shows a credential more than REST would. Over HTTP it takes only
// credentials REST narrows nothing for (the whole organization, every field, every read
// scope); every other kind of credential gets 403 and no data. For those it takes, every row
// and every field of every exposed table is compared with what REST answers for the same
// record; each exposed table has a REST mirror here, and a table without one fails.
import test from 'ava';
import { isDeepStrictEqual } from 'node:util';
import {
  buildClientSchema, getIntrospectionQuery, getNamedType, isEnumType, isInputObjectType, isLeafType, isObjectType,
  type GraphQLNamedType, type GraphQLSchema,
} from 'postgraphile/graphql';
import type { Applied } from '../../src/admin/fixture.ts';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { exposureOf } from '../../src/graphql/exposed.ts';
import { createInternalGraphql, type InternalGraphql } from '../../src/graphql/internal.ts';
import { OPERATION_LIMITS } from '../../src/graphql/limits.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { existsSync } from 'node:fs';
import { contactsFixture } from '../contacts/helpers.ts';
import type { Fixture } from '../helpers/fixtures.ts';
import type { MalformedInput } from '../helpers/fuzz.ts';
import { asKey } from '../helpers/sql.ts';
import { AREAS } from '../../src/areas.ts';

const EXPOSED = exposureOf(AREAS.flatMap((a) => (a.graphql ? [a.graphql.tables] : [])));

const READ_SCOPES = ALL_SCOPES.filter((s) => s.endsWith(':read'));

/** Each area's part of the malformed-input suite (test/<area>/helpers.ts): its records in a tenant. */
const PARTS: MalformedInput[] = [];
for (const area of AREAS) {
  const helpers = new URL(`../${area.name}/helpers.ts`, import.meta.url);
  const part = existsSync(helpers) ? ((await import(helpers.href)) as { malformedInput?: MalformedInput }).malformedInput : undefined;
  if (part && area.name !== 'contacts') PARTS.push(part);
}

/**
 * The contacts suites' tenant (every credential kind of acmeFixture and more), with a few kinds
 * added, and every area's records (so that no exposed table is empty).
 */
function accessFixture(name: string) {
  // the areas' parts bring their own dee and eve, and a London contact with phil's phone
  const contacts = contactsFixture(name);
  let base = { ...contacts, contacts: contacts.contacts.filter((c) => !['dee', 'eve', 'phil'].includes(c.ref)) } as unknown as Fixture;
  for (const part of PARTS) base = part.fixture?.(base) ?? base;
  return {
    ...base,
    api_keys: [
      ...base.api_keys,
      { ref: 'north_org', kind: 'organization', created_by_ref: 'owner', location_refs: ['north'] },
      { ref: 'reads_only', kind: 'organization', created_by_ref: 'owner', scopes: READ_SCOPES },
      ...READ_SCOPES.map((scope) => ({
        ref: `lacks_${scope}`, kind: 'organization', created_by_ref: 'owner', scopes: ALL_SCOPES.filter((s) => s !== scope),
      })),
    ],
  };
}

type Expected = { status: 200 } | { status: 403; error: 'insufficient_role' } | { status: 403; error: 'insufficient_scope'; required: string };
const allowed: Expected = { status: 200 };
const role: Expected = { status: 403, error: 'insufficient_role' };
/** What /internal/graphql answers each credential of accessFixture. */
const EXPECTED: Record<string, Expected> = {
  org: allowed,
  admin_org: allowed,
  owner_personal: allowed,
  admin_personal: allowed,
  reads_only: allowed,
  org_reader: { status: 403, error: 'insufficient_scope', required: 'sequences:read' },
  ...Object.fromEntries(READ_SCOPES.map((s) => [`lacks_${s}`, { status: 403, error: 'insufficient_scope', required: s }])),
  // location limits, MANAGER and MEMBER roles, own records, missing powers
  north_org: role,
  north_mgr: role,
  mgr_key: role,
  member_key: role,
  north_member: role,
  staff_mgr_key: role,
  mgr_personal: role,
  weak_mgr_personal: role,
  sam_personal: role,
  quiet_personal: role,
  own_personal: role,
  south_mgr: role,
  north_mgr_nopower: role,
  // the areas' parts
  north_seq_mgr: role,
  south_seq_mgr: role,
  nia_personal: role,
  ora_personal: role,
  north_appt_mgr: role,
  london_member: role,
  appt_reader: { status: 403, error: 'insufficient_scope', required: 'contacts:read' },
  leaver_key: allowed, // an organization key whose creator left: reads go on
};
const ALLOWED = Object.keys(EXPECTED).filter((ref) => EXPECTED[ref]!.status === 200);

/** The query of the finding: what a MEMBER key could read although REST shows it much less. */
const PROBE = `{
  allContacts(first: 50) { nodes { name fieldValues totalCalls smsConsent stageId } }
  allContactNotes(first: 50) { nodes { body } }
  allInteractions(first: 50) { nodes { capturedFields } }
  allPeople(first: 50) { nodes { email role active } }
  allAudienceMembers(first: 50) { nodes { contactId } }
}`;

let app: TestApp;
let gql: InternalGraphql;
let a: Applied;
let another: Applied;
test.before(async () => {
  ({ app, tenant: a } = await startWithTenant(accessFixture('GraphQL access'),
    { mount: async (deps) => (gql = await createInternalGraphql(deps)).mount }));
  another = await app.apply(accessFixture('Another organization'));
  for (const part of PARTS) {
    await part.setup?.(app, a);
    await part.setup?.(app, another);
  }
  // a step the engine ran for an enrollment of each organization (running the engine is the sequences suites' part)
  await app.db.owner.query(`insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, reason)
    select distinct on (e.organization_id) e.organization_id, e.id, 'graphql_probe', 'wait', 'waited', 'probe'
      from app_public.enrollments e where e.organization_id = any($1) order by e.organization_id, e.created_at, e.id`,
  [[a.organization_id, another.organization_id]]);
  // what the fixture cannot make: a note written by a person, and audiences with members
  const key = a.keys.owner_personal;
  expect(201, await app.request('POST', `/api/v1/contacts/${a.ids.bob}/notes`, { key, body: { body: 'Called back' } }));
  const vip = await app.request('POST', '/api/v1/audiences', { key, body: { name: 'VIP', description: 'Hand-picked' } });
  expect(201, vip);
  for (const contact of [a.ids.ann, a.ids.cy]) {
    expect(200, await app.request('POST', `/api/v1/audiences/${vip.body.id}/members`, { key, body: { contact_id: contact } }));
  }
  expect(201, await app.request('POST', '/api/v1/audiences', {
    key, body: { name: 'Callers', definition: { match: 'all', rules: [{ field: 'total_calls', op: 'gte', value: 1 }] } },
  }));
});
test.after.always(async () => {
  await gql?.release();
  await app?.close();
});

function expect(status: number, res: { status: number; body: unknown }) {
  if (res.status !== status) throw new Error(`setup failed: ${res.status} ${JSON.stringify(res.body)}`);
}

const post = (key: string, query: string) => app.request('POST', '/internal/graphql', { key, body: { query } });

// ---------------------------------------------------------------------------------------------
// Who may use it
// ---------------------------------------------------------------------------------------------

test('every credential kind: 403 and no data unless it reaches the whole organization with every field and read scope', async (t) => {
  t.deepEqual(Object.keys(a.keys).sort(), Object.keys(EXPECTED).sort(), 'every credential of the fixture has an expectation');
  for (const [ref, key] of Object.entries(a.keys)) {
    const expected = EXPECTED[ref]!;
    const res = await post(key, PROBE);
    if (expected.status === 403) {
      t.is(res.status, 403, ref);
      const { status, ...envelope } = expected;
      t.like(res.body, { statusCode: status, path: '/internal/graphql', ...envelope }, ref);
      t.false('data' in res.body, ref);
      t.false('errors' in res.body, ref);
      continue;
    }
    // taken, but the schema no longer has people: the probe fails validation, nothing runs
    t.is(res.status, 400, ref);
    t.is(res.body.data, undefined, ref);
    t.deepEqual(res.body.errors.map((e: { message: string }) => e.message), ['Cannot query field "allPeople" on type "Query".'], ref);
    const withoutPeople = await post(key, PROBE.replace(/allPeople.*\n/, ''));
    t.is(withoutPeople.status, 200, ref);
    t.is(withoutPeople.body.errors, undefined, ref);
  }
});

test('the rule is the database\'s: app_hidden.authorize_internal_graphql after authenticate, callable by the request role only', async (t) => {
  for (const [ref, key] of Object.entries(a.keys)) {
    const expected = EXPECTED[ref]!;
    const outcome = await asKey(app, key, async (c) => {
      try {
        await c.query('select app_hidden.authorize_internal_graphql()');
        return { status: 200 };
      } catch (e) {
        const { code, message, hint } = e as { code: string; message: string; hint: string };
        return { status: Number(code.slice(2)), error: message, ...(hint ? JSON.parse(hint) : {}) };
      }
    });
    t.deepEqual(outcome, expected, ref);
  }
  // no claims at all is nothing, never everything
  const none = await asKey(app, undefined, (c) => c.query('select app_hidden.authorize_internal_graphql()').catch((e) => e));
  t.like(none, { code: 'SV403', message: 'insufficient_scope', hint: '{"required": "contacts:read"}' });
  const { rows: [grants] } = await app.db.owner.query(`select
      has_function_privilege('svc_request', 'app_hidden.authorize_internal_graphql()', 'execute') as request,
      has_function_privilege('svc_analyst', 'app_hidden.authorize_internal_graphql()', 'execute') as analyst,
      has_function_privilege('svc_worker', 'app_hidden.authorize_internal_graphql()', 'execute') as worker`);
  t.deepEqual(grants, { request: true, analyst: false, worker: false });
});

// ---------------------------------------------------------------------------------------------
// What the schema shows
// ---------------------------------------------------------------------------------------------

const pascal = (s: string) => s.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());
const camel = (s: string) => s.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
const constant = (s: string) => s.toUpperCase();
/** The GraphQL field of a column: PostGraphile names the primary key `id` rowId (`id` is the node id). */
const fieldOf = (column: string) => (column === 'id' ? 'rowId' : camel(column));
const connectionOf = (table: string) => `all${pascal(table)}`;

let schemaPromise: Promise<GraphQLSchema> | undefined;
const schema = () => (schemaPromise ??= post(a.keys.org!, getIntrospectionQuery()).then((res) => buildClientSchema(res.body.data)));
const fieldsOf = (type: GraphQLNamedType | undefined | null) =>
  isObjectType(type) || isInputObjectType(type) ? Object.keys(type.getFields()) : isEnumType(type) ? type.getValues().map((v) => v.name) : [];

/** The row type of an exposed table, from its connection. */
function nodeType(s: GraphQLSchema, table: string) {
  const connection = getNamedType(s.getQueryType()!.getFields()[connectionOf(table)]!.type);
  const type = isObjectType(connection) ? getNamedType(connection.getFields().nodes!.type) : undefined;
  if (!isObjectType(type)) throw new Error(`${table}: no row type`);
  return type;
}

/** Fields of a row type that are values, not relations. */
const leafFields = (type: ReturnType<typeof nodeType>) =>
  Object.values(type.getFields()).filter((f) => isLeafType(getNamedType(f.type))).map((f) => f.name);

test('the schema has the exposed tables and nothing else: no people, no functions, one connection per exposed table', async (t) => {
  const s = await schema();
  const query = Object.keys(s.getQueryType()!.getFields());
  t.deepEqual(query.filter((f) => /^all[A-Z]/.test(f)).sort(), Object.keys(EXPOSED).map(connectionOf).sort());
  const { rows: tables } = await app.db.owner.query(`select tablename from pg_tables where schemaname = 'app_public'`);
  const hidden = (tables as { tablename: string }[]).map((r) => r.tablename).filter((n) => !Object.hasOwn(EXPOSED, n));
  t.true(['people', 'person_locations', 'role_agent_access', 'staff_profiles', 'custom_fields', 'chat_widgets'].every((n) => hidden.includes(n)));
  for (const table of hidden) t.false(query.includes(connectionOf(table)), table);
  // every table type is a Node: as many as there are exposed tables (and Query)
  const nodes = Object.values(s.getTypeMap()).filter((x) => isObjectType(x) && x.getInterfaces().some((i) => i.name === 'Node'));
  t.deepEqual(nodes.map((x) => x.name).sort(), ['Query', ...Object.keys(EXPOSED).map((table) => nodeType(s, table).name)].sort());
  // every app_public function, operations and helpers alike, is gone
  const { rows: functions } = await app.db.owner.query(`select distinct p.proname from pg_proc p
    join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'app_public'`);
  t.true(functions.length >= 20);
  for (const { proname } of functions as { proname: string }[]) t.false(query.includes(camel(proname)), proname);
  for (const name of ['contactsListNotes', 'audiencesListMembers', 'contactsSearch', 'contactsGet', 'allPeople', 'allChatWidgets']) {
    t.false(query.includes(name), name);
  }
});

test('each exposed table shows exactly its listed columns, and the others are no condition, order, grouping or aggregate', async (t) => {
  const s = await schema();
  const enums = Object.values(s.getTypeMap()).filter(isEnumType).flatMap((e) => e.getValues().map((v) => v.name));
  const { rows } = await app.db.owner.query(`select table_name, column_name from information_schema.columns
    where table_schema = 'app_public' and table_name = any($1)`, [Object.keys(EXPOSED)]);
  for (const [table, columns] of Object.entries(EXPOSED)) {
    const type = nodeType(s, table);
    t.deepEqual(leafFields(type).filter((f) => f !== 'id').sort(), columns.map(fieldOf).sort(), table);
    // the types PostGraphile and pg-aggregates derive from the row type
    const derived = Object.values(s.getTypeMap()).filter((x) => new RegExp(`^${type.name}(Condition|OrderBy|GroupBy|`
      + `Having(Sum|DistinctCount|Min|Max|Average|StddevSample|StddevPopulation|VarianceSample|VariancePopulation)?Input|`
      + `(Sum|DistinctCount|Min|Max|Average|StddevSample|StddevPopulation|VarianceSample|VariancePopulation)Aggregates)$`).test(x.name));
    t.true(derived.length >= 2, table);
    const names = derived.flatMap(fieldsOf);
    for (const { column_name: column } of (rows as { table_name: string; column_name: string }[]).filter((r) => r.table_name === table)) {
      if (columns.includes(column)) continue;
      const C = constant(column);
      t.false(names.some((n) => n === camel(column) || n === C || n.startsWith(`${C}_`)), `${table}.${column} in ${type.name}'s types`);
      // ordering another table's rows by aggregates of this one's: TABLE_BY_<keys>_<AGGREGATE>_<COLUMN>_ASC
      t.false(enums.some((n) => n.startsWith(`${constant(table)}_BY_`) && new RegExp(`_${C}_(ASC|DESC)$`).test(n)),
        `${table}.${column} in an ordering by related aggregates`);
    }
  }
});

test('relations lead only to exposed tables', async (t) => {
  const s = await schema();
  const rowTypes = new Set(Object.keys(EXPOSED).map((table) => nodeType(s, table).name));
  for (const table of Object.keys(EXPOSED)) {
    for (const field of Object.values(nodeType(s, table).getFields())) {
      const target = getNamedType(field.type);
      if (isLeafType(target)) continue;
      const row = isObjectType(target) && target.name.endsWith('Connection') ? getNamedType(target.getFields().nodes!.type) : target;
      t.true(rowTypes.has(row.name), `${table}.${field.name} leads to ${row.name}`);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// GraphQL against REST, row by row and field by field
// ---------------------------------------------------------------------------------------------

type Row = Record<string, unknown>;
/** What REST shows of one record, by REST field name. */
type RestView = Record<string, unknown>;

/** REST reads for one key, each path fetched once. */
function restFor(key: string) {
  const cache = new Map<string, Promise<any>>();
  const get = (path: string) => {
    if (!cache.has(path)) {
      cache.set(path, app.request('GET', path, { key }).then((res) => {
        if (res.status === 404) return undefined;
        if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body;
      }));
    }
    return cache.get(path)!;
  };
  return {
    get,
    /** Every item of a page/limit list. */
    async pages(path: string): Promise<any[]> {
      const items = [];
      for (let page = 1; ; page++) {
        const body = await get(`${path}?page=${page}&limit=100`);
        items.push(...body.items);
        if (page * 100 >= body.total) return items;
      }
    },
    /** Every item of a cursor list. */
    async cursorPages(path: string): Promise<any[]> {
      const items = [];
      for (let cursor: string | null = null; ;) {
        const body: { items: unknown[]; next_cursor: string | null } = await get(`${path}?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        items.push(...body.items);
        if (!(cursor = body.next_cursor)) return items;
      }
    },
  };
}
type Rest = ReturnType<typeof restFor>;

/**
 * A value to compare: a timestamp with its fraction to the microsecond, as GraphQL writes it
 * (PostgreSQL's JSON leaves out trailing zeros).
 */
const comparable = (value: unknown) => typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/.test(value)
  ? value.replace(/(:\d\d)(?:\.(\d+))?([+-])/, (_m, s: string, f = '', sign: string) => `${s}.${f.padEnd(6, '0')}${sign}`)
  : value;

interface Mirror {
  /**
   * The REST view of the record a GraphQL row is (REST field names), or undefined when REST shows
   * no such record. organization_id is added from me_get.
   */
  view(row: Row, rest: Rest, rows: Record<string, Row[]>): Promise<RestView | undefined>;
  /** GraphQL fields whose REST name is not the column's (the field in snake case; rowId is id). */
  renamed?: Readonly<Record<string, string>>;
}

/** Every contact REST shows, in full. */
const restContacts = async (rest: Rest) =>
  Promise.all((await rest.pages('/api/v1/contacts')).map((c: { id: string }) => rest.get(`/api/v1/contacts/${c.id}`)));

/** How REST shows each exposed table's rows. A table exposed without a mirror fails the test below. */
const MIRRORS: Record<string, Mirror> = {
  organizations: {
    async view(row, rest) {
      const { organization } = await rest.get('/api/v1/me');
      return organization.id === row.rowId ? organization : undefined;
    },
  },
  contacts: {
    view: (row, rest) => rest.get(`/api/v1/contacts/${row.rowId}`),
    renamed: { fieldValues: 'custom_fields' },
  },
  contact_locations: {
    async view(row, rest) {
      const contact = await rest.get(`/api/v1/contacts/${row.contactId}`);
      return contact?.location_ids.includes(row.locationId) ? { contact_id: contact.id, location_id: row.locationId } : undefined;
    },
  },
  contact_notes: {
    async view(row, rest) {
      const note = (await rest.pages(`/api/v1/contacts/${row.contactId}/notes`)).find((n) => n.id === row.rowId);
      return note && { ...note, author_id: note.author?.id ?? null };
    },
  },
  tags: {
    // REST names a tag by its name (contacts_add_tag, contacts_remove_tag); the tag's id is only
    // the key contact_tags joins it by
    async view(row, rest) {
      const shown = (await restContacts(rest)).some((c) => c.tags.includes(row.name));
      return shown ? { id: row.rowId, name: row.name } : undefined;
    },
  },
  contact_tags: {
    async view(row, rest, rows) {
      const tag = rows.tags!.find((x) => x.rowId === row.tagId);
      const contact = await rest.get(`/api/v1/contacts/${row.contactId}`);
      return tag && contact?.tags.includes(tag.name) ? { contact_id: contact.id, tag_id: tag.rowId } : undefined;
    },
  },
  pipeline_stages: {
    async view(row, rest) {
      return (await rest.get('/api/v1/contacts/stages')).stages.find((s: { id: string }) => s.id === row.rowId);
    },
  },
  interactions: {
    async view(row, rest) {
      return (await rest.pages(`/api/v1/contacts/${row.contactId}/interactions`)).find((i) => i.id === row.rowId);
    },
  },
  audiences: {
    view: (row, rest) => rest.get(`/api/v1/audiences/${row.rowId}`),
  },
  audience_members: {
    async view(row, rest) {
      const members = await rest.cursorPages(`/api/v1/audiences/${row.audienceId}/contacts`);
      return members.some((m) => m.id === row.contactId) ? { audience_id: row.audienceId, contact_id: row.contactId } : undefined;
    },
  },
  calls: {
    view: (row, rest) => rest.get(`/api/v1/calls/${row.rowId}`),
    renamed: { staffProfileId: 'team_member_id', fromNumber: 'from', toNumber: 'to' },
  },
  call_transcript_lines: {
    // a line's position is its place in calls_get's transcript
    async view(row, rest) {
      const line = (await rest.get(`/api/v1/calls/${row.callId}`))?.transcript[row.position as number];
      return line && { call_id: row.callId, position: row.position, ...line };
    },
  },
  forms: {
    view: (row, rest) => rest.get(`/api/v1/forms/${row.rowId}`),
  },
  form_fields: {
    // a field's position is its place in forms_get's fields
    async view(row, rest) {
      const field = (await rest.get(`/api/v1/forms/${row.formId}`))?.fields[row.position as number];
      return field && field.key === row.key ? { form_id: row.formId, position: row.position, ...field } : undefined;
    },
  },
  form_submissions: {
    async view(row, rest) {
      return (await rest.pages(`/api/v1/forms/${row.formId}/submissions`)).find((x) => x.id === row.rowId);
    },
  },
  conversations: {
    async view(row, rest) {
      const conversation = await rest.get(`/api/v1/conversations/${row.rowId}`);
      return conversation && { ...conversation, contact_id: conversation.contact.id };
    },
  },
  appointments: {
    view: (row, rest) => rest.get(`/api/v1/appointments/${row.rowId}`),
    renamed: { staffProfileId: 'team_member_id', startsAt: 'start_time', endsAt: 'end_time' },
  },
  locations: {
    async view(row, rest) {
      return (await rest.pages('/api/v1/locations')).find((x) => x.id === row.rowId);
    },
  },
  calendars: {
    async view(row, rest) {
      return (await rest.pages('/api/v1/calendars')).find((x) => x.id === row.rowId);
    },
  },
  territories: {
    async view(row, rest) {
      return (await rest.pages('/api/v1/territories')).find((x) => x.id === row.rowId);
    },
  },
  sequences: {
    async view(row, rest) {
      const sequence = await rest.get(`/api/v1/sequences/${row.rowId}`);
      return sequence && { ...sequence, audience_id: sequence.audience?.id ?? null };
    },
  },
  enrollments: {
    view: (row, rest) => rest.get(`/api/v1/sequences/${row.sequenceId}/enrollments/${row.rowId}`),
  },
  step_runs: {
    // REST lists an enrollment's step runs without their ids: the run of that step started then
    async view(row, rest, rows) {
      const enrollment = rows.enrollments!.find((e) => e.rowId === row.enrollmentId);
      const shown = enrollment && await rest.get(`/api/v1/sequences/${enrollment.sequenceId}/enrollments/${enrollment.rowId}`);
      const run = shown?.step_runs.find((r: Row) => r.step_key === row.stepKey && comparable(r.created_at) === comparable(row.createdAt));
      return run && { id: row.rowId, enrollment_id: row.enrollmentId, ...run };
    },
  },
  broadcast_schedules: {
    async view(row, rest) {
      const schedule = await rest.get(`/api/v1/sequences/${row.sequenceId}/schedule`);
      return schedule && { ...schedule, runs: undefined };
    },
  },
  broadcast_runs: {
    async view(row, rest) {
      const schedule = await rest.get(`/api/v1/sequences/${row.sequenceId}/schedule?page=1&limit=100`);
      const run = schedule?.runs.find((r: Row) => r.id === row.rowId);
      return run && { ...run, sequence_id: row.sequenceId };
    },
  },
  conversation_messages: {
    // a message's channel is its conversation's
    async view(row, rest) {
      const conversation = await rest.get(`/api/v1/conversations/${row.conversationId}`);
      const message = conversation?.messages.find((m: { id: string }) => m.id === row.rowId);
      return message && { ...message, channel: conversation.channel };
    },
  },
};

test('every exposed table has a REST mirror', (t) => {
  t.deepEqual(Object.keys(EXPOSED).filter((table) => !MIRRORS[table]), []);
});

test('for every credential it takes, GraphQL shows no row and no field that REST does not', async (t) => {
  const s = await schema();
  const tables = Object.keys(EXPOSED).filter((table) => MIRRORS[table]);
  // as many operations as the limit of top-level fields asks
  const queries: string[] = [];
  for (let i = 0; i < tables.length; i += OPERATION_LIMITS.rootFields) {
    queries.push(`{ ${tables.slice(i, i + OPERATION_LIMITS.rootFields).map((table) => `${table}: ${connectionOf(table)}(first: ${
      OPERATION_LIMITS.pageSize}) { totalCount nodes { ${leafFields(nodeType(s, table)).join(' ')} } }`).join('\n')} }`);
  }
  for (const ref of ALLOWED) {
    const key = a.keys[ref]!;
    const data: Record<string, { totalCount: number; nodes: Row[] }> = {};
    for (const query of queries) {
      const res = await post(key, query);
      t.is(res.status, 200, ref);
      t.is(res.body.errors, undefined, ref);
      Object.assign(data, res.body.data);
    }
    const res = { body: { data } };
    const rows: Record<string, Row[]> = Object.fromEntries(tables.map((table) => [table, data[table]!.nodes]));
    const rest = restFor(key);
    const { organization } = await rest.get('/api/v1/me');
    const failures: string[] = [];
    for (const table of tables) {
      const { totalCount, nodes } = res.body.data[table]!;
      t.is(nodes.length, totalCount, `${ref}: every row of ${table} in one page`);
      t.true(nodes.length > 0, `${table}: the fixture leaves no exposed table empty`);
      const mirror = MIRRORS[table]!;
      for (const row of nodes as Row[]) {
        const found = await mirror.view(row, rest, rows);
        const at = `${ref} ${table} ${JSON.stringify(row.rowId ?? Object.fromEntries(Object.entries(row).filter(([f]) => f !== 'id')))}`;
        if (!found) {
          failures.push(`${at}: REST does not show this row`);
          continue;
        }
        const view: RestView = { organization_id: organization.id, ...found };
        for (const [field, value] of Object.entries(row)) {
          if (field === 'id') {
            // the node id: the type name and the row's primary key, which the row shows
            const [type, ...keys] = JSON.parse(Buffer.from(String(value), 'base64').toString());
            if (type !== nodeType(s, table).name || !keys.every((k: unknown) => Object.values(row).includes(k))) {
              failures.push(`${at}: node id ${value} carries more than the row`);
            }
            continue;
          }
          const name = mirror.renamed?.[field] ?? (field === 'rowId' ? 'id' : field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
          if (!(name in view)) failures.push(`${at}: ${field} — REST does not show ${name}`);
          else if (!isDeepStrictEqual(comparable(value), comparable(view[name]))) {
            failures.push(`${at}: ${field} is ${JSON.stringify(value)}; REST shows ${name} ${JSON.stringify(view[name])}`);
          }
        }
      }
    }
    t.deepEqual(failures, [], ref);
  }
});

// ---------------------------------------------------------------------------------------------
// The tables of appointments, sequences, broadcasts, calls, forms and conversations
// ---------------------------------------------------------------------------------------------

const AREA_TABLES: Record<string, string[]> = {
  appointments: ['appointments', 'locations', 'calendars', 'territories'],
  sequences: ['sequences', 'enrollments', 'step_runs'],
  broadcasts: ['broadcast_schedules', 'broadcast_runs'],
  calls: ['calls', 'call_transcript_lines'],
  forms: ['forms', 'form_fields', 'form_submissions'],
  conversations: ['conversations', 'conversation_messages'],
};

test('each area\'s tables: a query answers every row of the caller\'s organization and none of another\'s', async (t) => {
  for (const table of Object.values(AREA_TABLES).flat()) {
    const { rows } = await app.db.owner.query(`select organization_id::text as org, count(*)::int as n from app_public.${table}
      where organization_id = any($1) group by 1`, [[a.organization_id, another.organization_id]]);
    const counts = Object.fromEntries(rows.map((r) => [r.org, r.n]));
    for (const tenant of [a, another]) {
      t.true((counts[tenant.organization_id] ?? 0) > 0, `${table}: rows in both organizations`);
      const res = await post(tenant.keys.org!, `{ ${connectionOf(table)}(first: 1000) { totalCount nodes { organizationId } } }`);
      t.is(res.status, 200, table);
      const { totalCount, nodes } = res.body.data[connectionOf(table)];
      t.is(totalCount, counts[tenant.organization_id], `${table}: every row of the organization`);
      t.true(nodes.every((n: { organizationId: string }) => n.organizationId === tenant.organization_id), `${table}: only its own`);
    }
  }
});

test('secrets and bookkeeping stay out: provider ids, addresses, hashes, who booked, progress; chat widgets and sessions', async (t) => {
  const s = await schema();
  const forbidden: Record<string, string[]> = {
    calls: ['externalId'],
    form_submissions: ['emailKey', 'clientAddress', 'createdAt'],
    conversation_messages: ['providerMessageId'],
    appointments: ['createdBy', 'createdByCredential', 'source', 'during', 'cancelledAt'],
    locations: ['smsNumber', 'createdAt'],
    sequences: ['createdBy', 'pausedAt'],
    enrollments: ['entryEvent', 'runId'],
    broadcast_schedules: ['anchor'],
    broadcast_runs: ['inFlight', 'progressAt', 'claimedThrough'],
  };
  for (const [table, fields] of Object.entries(forbidden)) {
    const shown = Object.keys(nodeType(s, table).getFields());
    for (const field of fields) t.false(shown.includes(field), `${table}.${field}`);
    const res = await post(a.keys.org!, `{ ${connectionOf(table)}(first: 1) { nodes { ${fields[0]} } } }`);
    t.is(res.status, 400, table);
  }
  const query = Object.keys(s.getQueryType()!.getFields());
  for (const name of ['allChatWidgets', 'allChatSessions', 'allFormSecrets', 'allOfferings', 'allEnrollmentEvents', 'allSendSchedules']) {
    t.false(query.includes(name), name);
  }
  const types = Object.keys(s.getTypeMap());
  t.false(types.some((n) => /ChatWidget|ChatSession|FormSecret|TokenHash/.test(n)), types.filter((n) => /Chat|Secret|Token/.test(n)).join());
});
