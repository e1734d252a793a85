// What one definition may cost, and what it may test. A definition's contains and contains_any
// values are bounded in all (500 values, 10,000 characters: each is a scan of every contact),
// over REST, MCP and straight at the SQL, for previews, saves and saved audiences alike. A
// credential that reads only a contact's name, email and phone may test only those: counts
// over any other field would let it read that field by bisection.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from '../contacts/helpers.ts';
import { callTool } from '../helpers/mcp.ts';
import { sqlError } from '../helpers/sql.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { LIMITS } from '../../src/audiences/schemas.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(contactsFixture())); });
test.after.always(async () => { await app?.close(); });

const preview = (body: unknown, key = acme.keys.org!) => app.request('POST', '/api/v1/audiences/preview-count', { key, body });
const create = (body: unknown) => app.request('POST', '/api/v1/audiences', { key: acme.keys.org!, body });

/** n rules of contains_any on display_name, each with `per` distinct values of `len` characters. */
const containsAny = (n: number, per: number, len: number, match: 'all' | 'any' = 'any') => ({
  match,
  rules: Array.from({ length: n }, (_, i) => ({
    field: 'display_name', op: 'contains_any',
    value: Array.from({ length: per }, (_, j) => `q${i}v${j}x`.padEnd(len, 'z')),
  })),
});
/** The definition of the probe: 50 rules of 500 contains_any values, match any (about 850 kB). */
const probe = () => containsAny(50, 500, 30);

// ---------------------------------------------------------------------------------------------
// The cost of a definition
// ---------------------------------------------------------------------------------------------
test('the probe\'s definition (50 × 500 contains_any values) is a 400 naming body.rules, over REST and MCP, for any key', async (t) => {
  const body = probe();
  t.true(JSON.stringify(body).length > 800_000, 'the probe\'s size');
  for (const key of [acme.keys.org!, acme.keys.member_key!]) {
    const started = Date.now();
    const res = await preview(body, key);
    t.is(res.status, 400, JSON.stringify(res.body).slice(0, 300));
    t.is(res.body.error, 'bad_request');
    t.is(res.body.message, 'body.rules: the contains and contains_any rules hold 25000 values in all; a definition may hold at '
      + 'most 500, as each one is a scan of every contact\'s text: shorten the contains_any lists (in, not_in and eq compare '
      + 'whole values and are not limited so)');
    t.deepEqual(res.body.issues.map((i: { path: string }) => i.path), ['body.rules']);
    t.true(Date.now() - started < 10_000, 'refused before anything is evaluated');
  }
  const mcp = await callTool(app, acme.keys.member_key!, 'audiences_preview_count', body);
  t.true(mcp.isError);
  t.is(mcp.body.statusCode, 400);
  t.regex(mcp.body.message, /^body\.rules: the contains and contains_any rules hold 25000 values/);
});

test('a definition at the bound runs; one value or one character more is a 400', async (t) => {
  t.deepEqual([LIMITS.substrings, LIMITS.substringCharacters], [500, 10_000], 'the schema describes the bound the database enforces');
  // 500 values of 20 characters: 10,000 characters, both bounds exactly
  const atBound = containsAny(50, 10, 20);
  for (const match of ['any', 'all'] as const) {
    const res = await preview({ ...atBound, match });
    t.is(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    t.is(res.body.count, 0);
  }
  const mcp = await callTool(app, acme.keys.org!, 'audiences_preview_count', atBound);
  t.falsy(mcp.isError, JSON.stringify(mcp).slice(0, 300));
  t.is(mcp.body.count, 0);

  const oneValueMore = containsAny(50, 10, 19);
  oneValueMore.rules[0]!.value.push('x');
  const values = await preview(oneValueMore);
  t.is(values.status, 400);
  t.regex(values.body.message, /^body\.rules: the contains and contains_any rules hold 501 values in all; a definition may hold at most 500/);

  const oneCharacterMore = containsAny(50, 10, 20);
  oneCharacterMore.rules[7]!.value[3] += 'z';
  const chars = await preview(oneCharacterMore);
  t.is(chars.status, 400);
  t.regex(chars.body.message, /^body\.rules: the values of the contains and contains_any rules have 10001 characters in all; a definition may have at most 10000/);
  t.regex((await preview({ rules: [{ field: 'display_name', op: 'contains_any', value: Array.from({ length: 11 }, () => 'a'.repeat(1000)) }] })).body.message,
    /^body\.rules: the values of the contains and contains_any rules have 11000 characters/, 'one rule can pass the bound too');
});

test('legitimate definitions pass: 50 rules of a few values, in on email with 500 values, 50 × 500 in values', async (t) => {
  const fewEach = { match: 'any', rules: Array.from({ length: 50 }, (_, i) => ({
    field: i % 2 ? 'email' : 'display_name', op: i % 3 ? 'contains_any' : 'in', value: [`a${i}`, `b${i}`, `ann`] })) };
  const few = await preview(fewEach);
  t.is(few.status, 200, JSON.stringify(few.body).slice(0, 300));
  t.true(few.body.count >= 1);
  const emails = Array.from({ length: 498 }, (_, i) => `person${i}@example.com`).concat(['ann@example.com', 'BOB@example.com']);
  const inEmail = await preview({ rules: [{ field: 'email', op: 'in', value: emails }] });
  t.is(inEmail.status, 200);
  t.is(inEmail.body.count, 2);
  // in, not_in and eq lists are hashed lookups: their values are not what a definition costs
  const manyIn = { match: 'any', rules: Array.from({ length: 50 }, (_, i) => ({
    field: 'email', op: 'in', value: Array.from({ length: 500 }, (_, j) => `p${i}.${j}@example.com`) })) };
  const many = await preview(manyIn);
  t.is(many.status, 200, JSON.stringify(many.body).slice(0, 300));
  t.is(many.body.count, 0);
});

test.serial('create and update refuse a definition over the bound, and write nothing', async (t) => {
  const created = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => create({ name: 'Too costly', definition: containsAny(2, 300, 5), idempotency_key: 'costly-1' }));
  t.regex(created.body.message, /^body\.definition\.rules: the contains and contains_any rules hold 600 values in all/);

  const ok = await create({ name: 'Fine', definition: containsAny(1, 5, 5) });
  t.is(ok.status, 201);
  const updated = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => app.request('PATCH', `/api/v1/audiences/${ok.body.id}`, { key: acme.keys.org!, body: { definition: containsAny(2, 300, 5) } }));
  t.regex(updated.body.message, /^body\.definition\.rules: the contains and contains_any rules hold 600 values in all/);

  // a static audience ignores a definition, so its cost does not matter
  const stat = await create({ name: 'Static', kind: 'static', definition: containsAny(2, 300, 5) });
  t.is(stat.status, 201);
  t.is(stat.body.definition, null);
});

test.serial('a saved definition over the bound answers 400 naming definition.rules on count and members', async (t) => {
  // saved before the bound existed: written as the owner
  const { rows: [a] } = await app.db.owner.query(`insert into app_public.audiences (organization_id, name, kind, definition)
    values ($1, 'Saved before', 'dynamic', $2) returning id`, [acme.organization_id, JSON.stringify(containsAny(3, 200, 10))]);
  for (const path of ['count', 'contacts']) {
    const res = await app.request('GET', `/api/v1/audiences/${a.id}/${path}`, { key: acme.keys.org! });
    t.is(res.status, 400, path);
    t.regex(res.body.message, /^definition\.rules: the contains and contains_any rules hold 600 values in all/, path);
  }
  const member = await app.request('GET', `/api/v1/audiences/${a.id}/count`, { key: acme.keys.member_key! });
  t.is(member.status, 400);
  const mcp = await callTool(app, acme.keys.org!, 'audiences_list_members', { audienceId: a.id });
  t.true(mcp.isError);
  t.regex(mcp.body.message, /^definition\.rules: /);
});

test('the bound holds straight at the SQL, for a MEMBER key too', async (t) => {
  const def = JSON.stringify(probe());
  for (const key of [acme.keys.org!, acme.keys.member_key!]) {
    const err = await sqlError(app, key, `select app_public.audiences_preview_count($1::jsonb)`, [def]);
    t.is(err.code, 'SV400');
    t.is(err.message, 'bad_request');
    t.regex(err.detail!, /^body\.rules: the contains and contains_any rules hold 25000 values in all/);
  }
});

// ---------------------------------------------------------------------------------------------
// Field limiting: rules test only what the credential reads
// ---------------------------------------------------------------------------------------------
const HIDDEN_FIELDS = ['field_values.plan', 'field_values.visits', 'field_values.nope', 'total_calls', 'stage_id',
  'last_seen_at', 'created_at'];
const hiddenRule = (field: string) => (field === 'stage_id' ? { field, op: 'exists' }
  : field.startsWith('field_values.') && field !== 'field_values.visits' ? { field, op: 'eq', value: 'gold' }
  : { field, op: 'gt', value: field.endsWith('_at') ? '2020-01-01' : 1 });
// the probe's bisection: one contact by email, and a hidden value compared
const bisect = (field: string) => ({ rules: [{ field: 'email', op: 'eq', value: 'ann@example.com' }, hiddenRule(field)] });

test('a field-limited credential (MEMBER key, MANAGER without the contacts power, a member\'s personal key) may test only name, email and phone', async (t) => {
  for (const ref of ['member_key', 'north_member', 'north_mgr_nopower', 'weak_mgr_personal', 'sam_personal']) {
    const key = acme.keys[ref]!;
    for (const field of HIDDEN_FIELDS) {
      const res = await preview(bisect(field), key);
      t.is(res.status, 400, `${ref} ${field}: ${JSON.stringify(res.body)}`);
      t.is(res.body.message, `body.rules.1.field: ${field} is not a field this credential can read: a MEMBER, and a MANAGER `
        + 'without the contacts power, may test only display_name, email and phone_number', `${ref} ${field}`);
      t.deepEqual(res.body.issues.map((i: { path: string }) => i.path), ['body.rules.1.field']);
    }
    const readable = await preview({ match: 'all', rules: [
      { field: 'display_name', op: 'contains', value: 'ann' }, { field: 'email', op: 'in', value: ['ann@example.com'] },
      { field: 'phone_number', op: 'exists' }] }, key);
    t.is(readable.status, 200, `${ref}: ${JSON.stringify(readable.body)}`);
  }
  const mcp = await callTool(app, acme.keys.member_key!, 'audiences_preview_count', bisect('field_values.plan'));
  t.true(mcp.isError);
  t.regex(mcp.body.message, /^body\.rules\.1\.field: field_values\.plan is not a field this credential can read/);
});

test('an organization key and managers with the contacts power may test every field', async (t) => {
  for (const ref of ['org', 'admin_personal', 'mgr_key', 'north_mgr', 'mgr_personal']) {
    for (const field of HIDDEN_FIELDS.filter((f) => f !== 'field_values.nope')) {
      const res = await preview(bisect(field), acme.keys[ref]!);
      t.is(res.status, 200, `${ref} ${field}: ${JSON.stringify(res.body)}`);
    }
  }
  t.is((await preview({ rules: [{ field: 'field_values.plan', op: 'eq', value: 'gold' }] })).body.count, 1, 'ann is gold');
});

test.serial('a saved audience over hidden fields: its count and members are a 400 naming definition.rules.N.field for field-limited credentials', async (t) => {
  const saved = await create({ name: 'Gold', definition: { rules: [
    { field: 'display_name', op: 'exists' }, { field: 'field_values.plan', op: 'eq', value: 'gold' }] } });
  t.is(saved.status, 201);
  const message = 'definition.rules.1.field: field_values.plan is not a field this credential can read: a MEMBER, and a MANAGER '
    + 'without the contacts power, may test only display_name, email and phone_number';
  for (const ref of ['member_key', 'north_mgr_nopower', 'sam_personal']) {
    const res = await app.request('GET', `/api/v1/audiences/${saved.body.id}/count`, { key: acme.keys[ref]! });
    t.is(res.status, 400, ref);
    t.is(res.body.message, message, ref);
    // members are refused to these roles over the API (403); the SQL refuses the rule as well
    const err = await sqlError(app, acme.keys[ref]!, `select app_public.audiences_list_members($1, null, 10)`, [saved.body.id]);
    t.is(err.code, 'SV400', ref);
    t.is(err.detail, message, ref);
    const count = await sqlError(app, acme.keys[ref]!, `select app_public.audiences_count($1)`, [saved.body.id]);
    t.is(count.detail, message, ref);
  }
  const org = await app.request('GET', `/api/v1/audiences/${saved.body.id}/count`, { key: acme.keys.org! });
  t.is(org.body.count, 1);
  const mgr = await app.request('GET', `/api/v1/audiences/${saved.body.id}/count`, { key: acme.keys.north_mgr! });
  t.is(mgr.body.count, 1, 'a manager with the contacts power counts it');
});
