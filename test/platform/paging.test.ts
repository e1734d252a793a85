// Page limits hold in the SQL functions themselves, not only at the REST edge: the page size and
// page of every paged function, called straight at the SQL as a key (as the internal GraphQL view
// and any other SQL caller reach them). Each refusal is SQLSTATE SV400 with the message REST
// gives for the same input.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from '../contacts/helpers.ts';
import { outcome, type Outcome } from '../helpers/sql.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
let audienceId: string;
const NO_FORM = '00000000-0000-4000-8000-000000000000';
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(contactsFixture()));
  // more contacts than a default page holds
  await app.db.owner.query(`
    insert into app_public.contacts (organization_id, name, email)
    select $1, 'Bulk ' || i, 'bulk' || i || '@example.com' from generate_series(1, 40) i`, [acme.organization_id]);
  const res = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org!, body: { name: 'Everyone', definition: {} } });
  audienceId = res.body.id;
});
test.after.always(async () => { await app?.close(); });

const call = (statement: string, values: unknown[], key = acme.keys.org!): Promise<Outcome> => outcome(app, key, statement, values);

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
  // the page is checked before the form is looked for (this fixture has none)
  { name: 'forms_list_submissions', pages: true, rest: (q) => `/api/v1/forms/${NO_FORM}/submissions?${q}`,
    sql: (p, l) => [`select app_public.forms_list_submissions($1, $2, $3, null, null, null, null) as result`, [NO_FORM, p, l]] },
  { name: 'calls_list', pages: false, rest: (q) => `/api/v1/calls?${q}`,
    sql: (_p, l) => [`select app_public.calls_list(null, null, null, $1) as result`, [l]] },
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
