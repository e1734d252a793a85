// Input limits hold in the SQL functions themselves, not only at the REST edge: page sizes and
// pages of every paged function, and the spec's limits of an audience definition, called
// straight at the SQL as a key (as the internal GraphQL view and any other SQL caller reach
// them). Each refusal is SQLSTATE SV400 with the message REST gives for the same input.
import test from 'ava';
import type { DatabaseError } from 'pg';
import { startApp, type TestApp } from '../helpers/app.ts';
import { asKey, contactsFixture } from '../contacts/helpers.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
let audienceId: string;
test.before(async () => {
  app = await startApp({ env: { SVC_RATE_LIMIT: '1000000' } });
  acme = await app.apply(contactsFixture());
  // more contacts than a default page holds
  await app.db.owner.query(`
    insert into app_public.contacts (organization_id, name, email)
    select $1, 'Bulk ' || i, 'bulk' || i || '@example.com' from generate_series(1, 40) i`, [acme.organization_id]);
  const res = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org!, body: { name: 'Everyone', definition: {} } });
  audienceId = res.body.id;
});
test.after.always(async () => { await app?.close(); });

type Outcome = { ok: true; result: any } | { ok: false; error: DatabaseError };
const call = (statement: string, values: unknown[], key = acme.keys.org!): Promise<Outcome> =>
  asKey(app, key, async (c) => {
    try {
      return { ok: true, result: (await c.query(statement, values)).rows[0].result };
    } catch (e) {
      return { ok: false, error: e as DatabaseError };
    }
  });

// ---------------------------------------------------------------------------------------------
// Pages
// ---------------------------------------------------------------------------------------------
interface Paged {
  name: string;
  sql: (page: number | null, limit: number | null) => [string, unknown[]];
  rest: (query: string) => string;
  pages: boolean;
}
const PAGED: Paged[] = [
  { name: 'contacts_search', pages: true, rest: (q) => `/api/v1/contacts?${q}`,
    sql: (p, l) => [`select app_public.contacts_search(null, null, null, $1, $2) as result`, [p, l]] },
  { name: 'contacts_list_notes', pages: true, rest: (q) => `/api/v1/contacts/${acme.ids.ann}/notes?${q}`,
    sql: (p, l) => [`select app_public.contacts_list_notes($1, $2, $3) as result`, [acme.ids.ann, p, l]] },
  { name: 'contacts_list_interactions', pages: true, rest: (q) => `/api/v1/contacts/${acme.ids.ann}/interactions?${q}`,
    sql: (p, l) => [`select app_public.contacts_list_interactions($1, null, null, $2, $3) as result`, [acme.ids.ann, p, l]] },
  { name: 'audiences_list_members', pages: false, rest: (q) => `/api/v1/audiences/${audienceId}/contacts?${q}`,
    sql: (_p, l) => [`select app_public.audiences_list_members($1, null, $2) as result`, [audienceId, l]] },
];
const BAD_LIMITS: [number, string][] = [
  [0, 'query.limit: Too small: expected number to be >=1'],
  [-1, 'query.limit: Too small: expected number to be >=1'],
  [-2147483648, 'query.limit: Too small: expected number to be >=1'],
  [101, 'query.limit: Too big: expected number to be <=100'],
  [1000, 'query.limit: Too big: expected number to be <=100'],
  [2147483647, 'query.limit: Too big: expected number to be <=100'],
];
const BAD_PAGES: [number, string][] = [
  [0, 'query.page: Too small: expected number to be >=1'],
  [-1, 'query.page: Too small: expected number to be >=1'],
  [-2147483648, 'query.page: Too small: expected number to be >=1'],
];

test('every paged function refuses a page size outside 1 to 100 and a page below 1 with a 400 naming the parameter', async (t) => {
  for (const op of PAGED) {
    const cases: [number | null, number | null, string][] = [
      ...BAD_LIMITS.map(([l, m]): [null, number, string] => [null, l, m]),
      ...(op.pages ? BAD_PAGES.map(([p, m]): [number, number, string] => [p, 10, m]) : []),
    ];
    for (const [page, limit, message] of cases) {
      const out = await call(...op.sql(page, limit));
      const what = `${op.name}(page ${page}, limit ${limit})`;
      if (out.ok) {
        t.fail(`${what} answered ${JSON.stringify(out.result).slice(0, 200)}`);
        continue;
      }
      t.is(out.error.code, 'SV400', what);
      t.is(out.error.message, 'bad_request', what);
      t.is(out.error.detail, message, what);
      t.deepEqual(JSON.parse(out.error.hint!).issues, [{ path: message.split(':')[0], message: message.replace(/^[^:]+: /, '') }], what);
    }
  }
});

test('the SQL answers what REST answers for the same page and page size', async (t) => {
  for (const op of PAGED) {
    for (const [limit] of BAD_LIMITS.filter(([l]) => Math.abs(l) < 2 ** 31 - 1)) {
      const rest = await app.request('GET', op.rest(`limit=${limit}`), { key: acme.keys.org! });
      const out = await call(...op.sql(null, limit));
      t.is(rest.status, 400, `${op.name} limit ${limit}`);
      t.is(out.ok ? undefined : out.error.detail, rest.body.message, `${op.name} limit ${limit}`);
    }
    if (!op.pages) continue;
    for (const [page] of BAD_PAGES) {
      const rest = await app.request('GET', op.rest(`page=${page}`), { key: acme.keys.org! });
      const out = await call(...op.sql(page, null));
      t.is(rest.status, 400, `${op.name} page ${page}`);
      t.is(out.ok ? undefined : out.error.detail, rest.body.message, `${op.name} page ${page}`);
    }
  }
});

test('a NULL page size or page is the spec\'s default (25 a page, page 1), never every row', async (t) => {
  const search = await call(...PAGED[0]!.sql(null, null));
  t.true(search.ok);
  if (search.ok) {
    t.like(search.result, { page: 1, limit: 25 });
    t.is(search.result.items.length, 25);
    t.true(search.result.total > 25);
  }
  for (const op of PAGED.slice(1, 3)) {
    const out = await call(...op.sql(null, null));
    t.true(out.ok && out.result.page === 1 && out.result.limit === 25, op.name);
  }
  const members = await call(...PAGED[3]!.sql(null, null));
  t.true(members.ok && members.result.items.length === 25 && members.result.next_after !== null, 'members: one page of 25');
  const bounds = await call(...PAGED[0]!.sql(2, 100));
  t.true(bounds.ok && bounds.result.page === 2 && bounds.result.limit === 100, 'limit 100 is allowed');
  const one = await call(...PAGED[3]!.sql(null, 1));
  t.true(one.ok && one.result.items.length === 1, 'limit 1 is allowed');
});

test('a MEMBER key meets the same page limits', async (t) => {
  const out = await call(...PAGED[0]!.sql(null, 5000), acme.keys.member_key!);
  t.false(out.ok);
  if (!out.ok) t.is(out.error.detail, 'query.limit: Too big: expected number to be <=100');
});

// ---------------------------------------------------------------------------------------------
// The spec's limits of a definition
// ---------------------------------------------------------------------------------------------
const r = (rule: unknown, at = 0) => ({ rules: [...Array.from({ length: at }, () => ({ field: 'email', op: 'exists' })), rule] });
const VALUE_SHAPE = 'a string (at most 1000 characters), a number or a boolean, or for in, not_in and contains_any a list of '
  + '1 to 500 of those; objects and nested lists are not rule values';
/** [why, preview body, the message REST gives today] */
const DEFINITIONS: [string, unknown, string][] = [
  ['51 rules', { rules: Array.from({ length: 51 }, () => ({ field: 'email', op: 'exists' })) }, 'body.rules: Too big: expected array to have <=50 items'],
  ['1,000 rules', { rules: Array.from({ length: 1000 }, () => ({ field: 'email', op: 'exists' })) }, 'body.rules: Too big: expected array to have <=50 items'],
  ['rules not a list', { rules: 'all' }, 'body.rules: Invalid input: expected array, received string'],
  ['rules null', { rules: null }, 'body.rules: Invalid input: expected array, received null'],
  ['match unknown', { match: 'some' }, 'body.match: Invalid option: expected one of "all"|"any"'],
  ['match null', { match: null }, 'body.match: Invalid option: expected one of "all"|"any"'],
  ['an unknown top-level key', { rules: [], where: 1 }, 'body: Unrecognized key: "where"'],
  ['a rule that is not an object', { rules: [5] }, 'body.rules.0: Invalid input: expected object, received number'],
  ['a rule that is a list', { rules: [[]] }, 'body.rules.0: Invalid input: expected object, received array'],
  ['an unknown rule key', r({ field: 'email', op: 'exists', negate: true }), 'body.rules.0: Unrecognized key: "negate"'],
  ['missing field', r({ op: 'exists' }), 'body.rules.0.field: Invalid input: expected string, received undefined'],
  ['a number for field', r({ field: 5, op: 'exists' }), 'body.rules.0.field: Invalid input: expected string, received number'],
  ['empty field', r({ field: '', op: 'exists' }), 'body.rules.0.field: Too small: expected string to have >=1 characters'],
  ['field over 200 characters', r({ field: 'a'.repeat(201), op: 'exists' }), 'body.rules.0.field: Too big: expected string to have <=200 characters'],
  ['field with a space', r({ field: 'field values.plan', op: 'exists' }), 'body.rules.0.field: a field name: letters, digits and underscores, or field_values.<key>'],
  ['unknown op', r({ field: 'email', op: 'like', value: 'x' }), 'body.rules.0.op: Invalid option: expected one of "eq"|"neq"|"in"|"not_in"|"gt"|"gte"|"lt"|"lte"|"contains"|"contains_any"|"exists"|"not_exists"'],
  ['missing op', r({ field: 'email', value: 'x' }), 'body.rules.0.op: Invalid option: expected one of "eq"|"neq"|"in"|"not_in"|"gt"|"gte"|"lt"|"lte"|"contains"|"contains_any"|"exists"|"not_exists"'],
  ['eq without value', r({ field: 'email', op: 'eq' }), 'body.rules.0.value: eq needs a value'],
  ['exists with a value', r({ field: 'email', op: 'exists', value: true }), 'body.rules.0.value: omit value for exists'],
  ['in with one value', r({ field: 'email', op: 'in', value: 'x' }), 'body.rules.0.value: in takes a list of 1 to 500 values'],
  ['eq with a list', r({ field: 'email', op: 'eq', value: ['x'] }), 'body.rules.0.value: eq takes one value (in, not_in and contains_any take lists)'],
  ['an object value', r({ field: 'email', op: 'eq', value: { a: 1 } }), `body.rules.0.value: ${VALUE_SHAPE}`],
  ['a null value', r({ field: 'email', op: 'eq', value: null }), `body.rules.0.value: ${VALUE_SHAPE}`],
  ['a nested list', r({ field: 'email', op: 'in', value: [['x']] }), `body.rules.0.value: ${VALUE_SHAPE}`],
  ['an object in a list', r({ field: 'email', op: 'in', value: ['x', { a: 1 }] }), `body.rules.0.value: ${VALUE_SHAPE}`],
  ['an empty list', r({ field: 'email', op: 'in', value: [] }), 'body.rules.0.value: Too small: expected array to have >=1 items'],
  ['501 values', r({ field: 'email', op: 'in', value: Array.from({ length: 501 }, (_, i) => `v${i}`) }), `body.rules.0.value: ${VALUE_SHAPE}`],
  ['a string over 1000 characters', r({ field: 'email', op: 'contains', value: 'x'.repeat(1001) }), 'body.rules.0.value: Too big: expected string to have <=1000 characters'],
  ['a listed string over 1000 characters', r({ field: 'email', op: 'in', value: ['a', 'x'.repeat(1001)] }), 'body.rules.0.value.1: Too big: expected string to have <=1000 characters'],
  ['the rule\'s index is named', r({ field: 'email', op: 'eq' }, 3), 'body.rules.3.value: eq needs a value'],
  ['the first problem is named', { rules: [{ field: 'email', op: 'eq' }, { field: '', op: 'exists' }] }, 'body.rules.0.value: eq needs a value'],
  ['an unknown exclude_opted_out', { rules: [], exclude_opted_out: 'yes' }, 'body.exclude_opted_out: Invalid input: expected boolean, received string'],
];

test('the spec\'s definition limits hold at the SQL with the messages REST gives', async (t) => {
  for (const [why, body, message] of DEFINITIONS) {
    const rest = await app.request('POST', '/api/v1/audiences/preview-count', { key: acme.keys.org!, body });
    t.is(rest.status, 400, why);
    t.is(rest.body.message, message, `REST, ${why}`);
    for (const key of [acme.keys.org!, acme.keys.member_key!]) {
      const out = await call(`select app_public.audiences_preview_count($1::jsonb) as result`, [JSON.stringify(body)], key);
      t.false(out.ok, `SQL, ${why}`);
      if (out.ok) continue;
      t.is(out.error.code, 'SV400', why);
      t.is(out.error.detail, message, `SQL, ${why}`);
      t.deepEqual(JSON.parse(out.error.hint!).issues.map((i: { path: string }) => i.path), [message.split(': ')[0]], why);
    }
  }
  // the preview body's extra field is accepted as REST accepts it
  const ok = await call(`select app_public.audiences_preview_count($1::jsonb) as result`, [JSON.stringify({ exclude_opted_out: true })]);
  t.true(ok.ok && ok.result.count > 40);
});

test('create and update meet the same definition limits at the SQL, with REST\'s messages, and write nothing', async (t) => {
  const before = (await app.db.owner.query(`select count(*)::int as n from app_public.audiences`)).rows[0].n;
  for (const [why, body, message] of DEFINITIONS.filter(([w]) => !w.includes('exclude_opted_out'))) {
    const expected = message.replace(/^body/, 'body.definition');
    const rest = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org!, body: { name: 'Bad', definition: body } });
    t.is(rest.body.message, expected, `REST create, ${why}`);
    const created = await call(`select app_public.audiences_create('Bad', null, null, null, $1::jsonb, null) as result`, [JSON.stringify(body)]);
    t.is(created.ok ? undefined : created.error.detail, expected, `SQL create, ${why}`);
    const updated = await call(`select app_public.audiences_update($1, $2::jsonb) as result`, [audienceId, JSON.stringify({ definition: body })]);
    t.is(updated.ok ? undefined : updated.error.detail, expected, `SQL update, ${why}`);
  }
  const nullDefinition = await call(`select app_public.audiences_update($1, '{"definition": null}') as result`, [audienceId]);
  t.is(nullDefinition.ok ? undefined : nullDefinition.error.detail, 'body.definition: Invalid input: expected object, received null');
  t.is((await app.db.owner.query(`select count(*)::int as n from app_public.audiences`)).rows[0].n, before);
});
