// Audiences (spec: Endpoints → Audiences): create (idempotent), read, list, update, archive and
// restore; kind fixed; access per scope and role; isolation between organizations; the
// operations as MCP tools.
import test from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from '../contacts/helpers.ts';
import { withMcpClient } from '../helpers/mcp.ts';
import { asRole, claim, rows } from '../helpers/sql.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
let otherAudience: string;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(contactsFixture()));
  other = await app.apply(contactsFixture('Other Dental'));
  otherAudience = (await app.request('POST', '/api/v1/audiences', { key: other.keys.org, body: { name: 'Theirs', kind: 'static' } })).body.id;
  await app.request('POST', `/api/v1/audiences/${otherAudience}/members`, { key: other.keys.org, body: { contact_id: other.ids.ann } });
});
test.after.always(async () => { await app?.close(); });

const create = (body: unknown, key = acme.keys.org) => app.request('POST', '/api/v1/audiences', { key, body });
const get = (id: string, key = acme.keys.org) => app.request('GET', `/api/v1/audiences/${id}`, { key });
const patch = (id: string, body: unknown, key = acme.keys.org) => app.request('PATCH', `/api/v1/audiences/${id}`, { key, body });

const VIP = { match: 'all', rules: [{ field: 'field_values.plan', op: 'eq', value: 'gold' }] };

test('create answers 201 with the audience; get and list read it back', async (t) => {
  const res = await create({ name: '  Gold plan ', description: 'Gold customers', channel: 'email', definition: VIP, exclude_opted_out: true });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, { name: 'Gold plan', description: 'Gold customers', kind: 'dynamic', channel: 'email', definition: VIP,
    exclude_opted_out: true, is_archived: false, archived_at: null });
  t.deepEqual(Object.keys(res.body).sort(), ['archived_at', 'channel', 'created_at', 'definition', 'description', 'exclude_opted_out',
    'id', 'is_archived', 'kind', 'name', 'updated_at']);
  t.deepEqual((await get(res.body.id)).body, res.body);
  const list = await app.request('GET', '/api/v1/audiences', { key: acme.keys.org });
  t.is(list.status, 200);
  t.true(list.body.items.some((a: { id: string }) => a.id === res.body.id));
  t.false(list.body.items.some((a: { id: string }) => a.id === otherAudience), 'another organization\'s audience is not listed');
});

test('defaults: kind follows the definition; a static audience ignores a definition; dynamic without one selects everyone', async (t) => {
  const plain = await create({ name: 'Plain' });
  t.like(plain.body, { kind: 'static', channel: 'any', definition: null, exclude_opted_out: false, description: null });
  const staticWithRules = await create({ name: 'Static', kind: 'static', definition: VIP });
  t.like(staticWithRules.body, { kind: 'static', definition: null });
  const everyone = await create({ name: 'Everyone', kind: 'dynamic' });
  t.deepEqual(everyone.body.definition, { match: 'all', rules: [] });
  const all = await app.request('GET', `/api/v1/audiences/${everyone.body.id}/count`, { key: acme.keys.org });
  const contacts = await rows(app, `select count(*)::int as n from app_public.contacts where organization_id = $1`, [acme.organization_id]);
  t.deepEqual(all.body, { audience_id: everyone.body.id, count: contacts[0].n });
  const matchAny = await create({ name: 'Any', definition: { match: 'any' } });
  t.deepEqual(matchAny.body.definition, { match: 'any', rules: [] });
});

test.serial('create validates its body', async (t) => {
  const bad: unknown[] = [
    {}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 'x', kind: 'smart' }, { name: 'x', channel: 'fax' },
    { name: 'x', description: 'd'.repeat(2001) }, { name: 'x', exclude_opted_out: 'yes' }, { name: 'x', surprise: 1 },
    { name: 'x', definition: { rules: [{ field: 'email', op: 'eq' }] } }, { name: 'x', idempotency_key: '' },
    { name: 'x', idempotency_key: 'k'.repeat(256) }, { name: 'x', is_archived: true },
  ];
  for (const body of bad) await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create(body));
});

test('create is idempotent with an idempotency_key: the same answer, one audience; other details are 409', async (t) => {
  const body = { name: 'Once', definition: VIP, idempotency_key: 'create-once-1' };
  const first = await create(body);
  t.is(first.status, 201);
  const again = await create(body);
  t.is(again.status, 201);
  t.deepEqual(again.body, first.body, 'the first answer again');
  const concurrent = await Promise.all(Array.from({ length: 6 }, () => create({ ...body, idempotency_key: 'create-once-2' })));
  t.true(concurrent.every((r) => r.status === 201 || (r.status === 409 && r.body.error === 'idempotency_in_progress')),
    JSON.stringify(concurrent.map((r) => r.status)));
  const made = await rows(app, `select count(*)::int as n from app_public.audiences where organization_id = $1 and name = 'Once'`, [acme.organization_id]);
  t.is(made[0].n, 2, 'one audience per key');
  const reused = await create({ ...body, name: 'Twice' });
  t.is(reused.status, 409);
  t.is(reused.body.error, 'idempotency_key_reused');
  const otherOrg = await create(body, other.keys.org);
  t.is(otherOrg.status, 201, 'keys belong to the credential');
  t.not(otherOrg.body.id, first.body.id);
  const noKey = [await create({ name: 'No key' }), await create({ name: 'No key' })];
  t.not(noKey[0]!.body.id, noKey[1]!.body.id, 'without a key every call creates');
});

test('update changes the fields sent, replaces the definition whole, and keeps the kind', async (t) => {
  const a = (await create({ name: 'Editable', description: 'first', definition: { match: 'any', rules: [...VIP.rules, { field: 'email', op: 'exists' }] } })).body;
  const renamed = await patch(a.id, { name: 'Edited', description: null });
  t.like(renamed.body, { name: 'Edited', description: null, channel: 'any', kind: 'dynamic' });
  t.deepEqual(renamed.body.definition, a.definition);
  t.true(Date.parse(renamed.body.updated_at) >= Date.parse(a.updated_at));
  const replaced = await patch(a.id, { definition: { rules: [{ field: 'total_calls', op: 'gte', value: 1 }] } });
  t.deepEqual(replaced.body.definition, { match: 'all', rules: [{ field: 'total_calls', op: 'gte', value: 1 }] }, 'replaced whole');
  t.like((await patch(a.id, { kind: 'dynamic', channel: 'sms', exclude_opted_out: true })).body, { kind: 'dynamic', channel: 'sms', exclude_opted_out: true },
    'the same kind may be sent back');
  const kind = await patch(a.id, { kind: 'static' });
  t.is(kind.status, 400);
  t.regex(kind.body.message, /^kind: /);
  const s = (await create({ name: 'Static', kind: 'static' })).body;
  const def = await patch(s.id, { definition: VIP });
  t.is(def.status, 400, 'a static audience has no definition');
  t.regex(def.body.message, /^definition: /);
  t.is((await get(s.id)).body.definition, null);
  for (const body of [{}, { name: '' }, { definition: null }, { channel: 'fax' }, { id: a.id }, { is_archived: 'no' }]) {
    t.is((await patch(a.id, body)).status, 400, JSON.stringify(body));
  }
  t.is((await patch('00000000-0000-4000-8000-000000000000', { name: 'x' })).status, 404);
});

test('archive archives, safe to repeat; is_archived false restores', async (t) => {
  const a = (await create({ name: 'Seasonal', definition: VIP })).body;
  const archived = await app.request('POST', `/api/v1/audiences/${a.id}/archive`, { key: acme.keys.org });
  t.is(archived.status, 200);
  t.like(archived.body, { id: a.id, is_archived: true });
  t.truthy(archived.body.archived_at);
  const again = await app.request('POST', `/api/v1/audiences/${a.id}/archive`, { key: acme.keys.org });
  t.is(again.body.archived_at, archived.body.archived_at, 'archiving again keeps the first archived_at');
  t.like((await get(a.id)).body, { is_archived: true });
  t.is((await app.request('GET', `/api/v1/audiences/${a.id}/count`, { key: acme.keys.org })).status, 200, 'still countable');
  const restored = await patch(a.id, { is_archived: false });
  t.like(restored.body, { is_archived: false, archived_at: null });
  t.like((await patch(a.id, { is_archived: true })).body, { is_archived: true });
});

test.serial('another organization\'s audience is absent: 404 everywhere, nothing changes', async (t) => {
  const calls: [string, string, unknown?][] = [
    ['GET', `/api/v1/audiences/${otherAudience}`],
    ['PATCH', `/api/v1/audiences/${otherAudience}`, { name: 'Mine now' }],
    ['POST', `/api/v1/audiences/${otherAudience}/archive`],
    ['GET', `/api/v1/audiences/${otherAudience}/count`],
    ['GET', `/api/v1/audiences/${otherAudience}/contacts`],
    ['POST', `/api/v1/audiences/${otherAudience}/members`, { contact_id: acme.ids.ann }],
    ['DELETE', `/api/v1/audiences/${otherAudience}/members/${other.ids.ann}`],
  ];
  await unchanged(t, app, other.organization_id, async () => {
    for (const [method, path, body] of calls) {
      await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => app.request(method, path, { key: acme.keys.org, body }));
    }
  });
  t.is((await rows(app, `select count(*)::int as n from app_public.audience_members where audience_id = $1`, [otherAudience]))[0].n, 1);
  const mine = (await create({ name: 'Mine', kind: 'static' })).body;
  // another organization's contact cannot join
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
    () => app.request('POST', `/api/v1/audiences/${mine.id}/members`, { key: acme.keys.org, body: { contact_id: other.ids.ann } }));
  const counted = await app.request('GET', `/api/v1/audiences/${otherAudience}/count`, { key: other.keys.org });
  t.deepEqual(counted.body, { audience_id: otherAudience, count: 1 });
});

test.serial('access follows the spec: reads for every role, writes and member lists not for MEMBER or MANAGER keys', async (t) => {
  const a = (await create({ name: 'Access', kind: 'static' })).body;
  await app.request('POST', `/api/v1/audiences/${a.id}/members`, { key: acme.keys.org, body: { contact_id: acme.ids.ann } });
  const reads: [string, string, unknown?][] = [
    ['GET', '/api/v1/audiences'], ['GET', `/api/v1/audiences/${a.id}`], ['GET', `/api/v1/audiences/${a.id}/count`],
    ['POST', '/api/v1/audiences/preview-count', { rules: [] }],
  ];
  const writes: [string, string, unknown?][] = [
    ['POST', '/api/v1/audiences', { name: 'Nope' }], ['PATCH', `/api/v1/audiences/${a.id}`, { name: 'Nope' }],
    ['POST', `/api/v1/audiences/${a.id}/archive`], ['POST', `/api/v1/audiences/${a.id}/members`, { contact_id: acme.ids.bob }],
    ['DELETE', `/api/v1/audiences/${a.id}/members/${acme.ids.ann}`], ['GET', `/api/v1/audiences/${a.id}/contacts`],
  ];
  for (const key of ['member_key', 'north_member', 'sam_personal', 'mgr_key', 'north_mgr', 'mgr_personal']) {
    for (const [method, path, body] of reads) {
      t.is((await app.request(method, path, { key: acme.keys[key], body })).status, 200, `${key} ${method} ${path}`);
    }
    for (const [method, path, body] of writes) {
      await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_role',
        () => app.request(method, path, { key: acme.keys[key], body }));
    }
  }
  for (const key of ['org', 'admin_org', 'owner_personal', 'admin_personal']) {
    t.is((await app.request('GET', `/api/v1/audiences/${a.id}/contacts`, { key: acme.keys[key] })).status, 200, key);
  }
  const scopeless = await app.request('GET', '/api/v1/audiences', { key: acme.keys.org_reader });
  t.is(scopeless.status, 403);
  t.like(scopeless.body, { error: 'insufficient_scope', required: 'audiences:read' });
  const noWrite = await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_scope',
    () => app.request('POST', '/api/v1/audiences', { key: acme.keys.org_reader, body: {} }));
  t.like(noWrite.body, { statusCode: 403, required: 'audiences:write' }, 'authorization before validation');
  const noKey = await app.request('GET', '/api/v1/audiences');
  t.is(noKey.status, 401);
});

test('the database refuses audience writes from MEMBER and MANAGER claims whatever the façade does', async (t) => {
  for (const role of ['member', 'manager']) {
    const claims = [claim('organization_id', acme.organization_id), claim('location_ids', '*'), claim('role', role),
      claim('powers', '{contacts,sequences}')];
    const err = await asRole(app, 'svc_request', claims, (c) => t.throwsAsync(c.query(`select app_public.audiences_create('Sneaky', null, 'static', null, null, null)`)));
    t.regex(err!.message, /row-level security/, role);
  }
});

const withClient = <T>(key: string, fn: (c: Client) => Promise<T>) => withMcpClient(app, key, fn);

test('MCP: the audience tools per credential, their hints, and calls answering as REST does', async (t) => {
  const tools = await withClient(acme.keys.org!, async (c) => (await c.listTools()).tools.filter((x) => x.name.startsWith('audiences_')));
  t.deepEqual(tools.map((x) => x.name).sort(), ['audiences_add_member', 'audiences_archive', 'audiences_count', 'audiences_create',
    'audiences_get', 'audiences_list', 'audiences_list_members', 'audiences_preview_count', 'audiences_remove_member', 'audiences_update']);
  const tool = (name: string) => tools.find((x) => x.name === name)!;
  t.true(tool('audiences_preview_count').annotations!.readOnlyHint, 'preview_count is a read');
  t.like(tool('audiences_remove_member')._meta, { 'svc/confirm': true, 'svc/changes': ['audiences'] });
  t.true(tool('audiences_remove_member').annotations!.destructiveHint);
  t.like(tool('audiences_create')._meta, { 'svc/confirm': false, 'svc/changes': ['audiences'] });
  t.false(tool('audiences_create').annotations!.idempotentHint, 'its idempotency key is optional');
  t.truthy((tool('audiences_preview_count').inputSchema.properties as Record<string, unknown>).rules);
  const member = await withClient(acme.keys.member_key!, async (c) => (await c.listTools()).tools.map((x) => x.name).filter((n) => n.startsWith('audiences_')).sort());
  t.deepEqual(member, ['audiences_count', 'audiences_get', 'audiences_list', 'audiences_preview_count']);

  const json = (res: any) => JSON.parse(res.content[0].text);
  const preview = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'audiences_preview_count', arguments: VIP }));
  t.falsy(preview.isError);
  t.deepEqual(json(preview), (await app.request('POST', '/api/v1/audiences/preview-count', { key: acme.keys.org, body: VIP })).body);
  const bad = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'audiences_preview_count', arguments: { rules: [{ field: 'nope', op: 'exists' }] } }));
  t.true(bad.isError);
  t.like(json(bad), { statusCode: 400, error: 'bad_request' });
  t.regex(json(bad).message, /^body\.rules\.0\.field: /);
  const created = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'audiences_create', arguments: { name: 'From MCP', kind: 'static', idempotency_key: 'mcp-1' } }));
  const replay = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'From MCP', kind: 'static', idempotency_key: 'mcp-1' } });
  t.is(replay.body.id, json(created).id, 'one idempotency record for REST and MCP');
  const added = await withClient(acme.keys.org!, (c) => c.callTool({ name: 'audiences_add_member', arguments: { audienceId: json(created).id, contact_id: acme.ids.bob } }));
  t.deepEqual(json(added), { audience_id: json(created).id, contact_id: acme.ids.bob, is_member: true });
});
