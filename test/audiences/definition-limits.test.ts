// The spec's limits of an audience definition hold in the SQL functions themselves, not only at
// the REST edge: previews, creates and updates called straight at the SQL as a key (as the
// internal GraphQL view and any other SQL caller reach them) refuse with SQLSTATE SV400 and the
// message REST gives for the same input, and write nothing.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from '../contacts/helpers.ts';
import { outcome, type Outcome } from '../helpers/sql.ts';
import { unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
let audienceId: string;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(contactsFixture()));
  const res = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org!, body: { name: 'Everyone', definition: {} } });
  audienceId = res.body.id;
});
test.after.always(async () => { await app?.close(); });

const call = (statement: string, values: unknown[], key = acme.keys.org!): Promise<Outcome> => outcome(app, key, statement, values);

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
  t.like(ok, { ok: true, result: { count: 6 } }, 'every contact of the fixture');
});

test('create and update meet the same definition limits at the SQL, with REST\'s messages, and write nothing', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    for (const [why, body, message] of DEFINITIONS.filter(([w]) => !w.includes('exclude_opted_out'))) {
      const expected = message.replace(/^body/, 'body.definition');
      const rest = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org!, body: { name: 'Bad', definition: body } });
      t.like(rest, { status: 400, body: { error: 'bad_request', message: expected } }, `REST create, ${why}`);
      const created = await call(`select app_public.audiences_create('Bad', null, null, null, $1::jsonb, null) as result`, [JSON.stringify(body)]);
      t.is(created.ok ? undefined : created.error.detail, expected, `SQL create, ${why}`);
      const updated = await call(`select app_public.audiences_update($1, $2::jsonb) as result`, [audienceId, JSON.stringify({ definition: body })]);
      t.is(updated.ok ? undefined : updated.error.detail, expected, `SQL update, ${why}`);
    }
    const nullDefinition = await call(`select app_public.audiences_update($1, '{"definition": null}') as result`, [audienceId]);
    t.is(nullDefinition.ok ? undefined : nullDefinition.error.detail, 'body.definition: Invalid input: expected object, received null');
  });
});
