// Who reaches which sequence (spec: Authentication 6-7; operations.tsv): a MANAGER with the
// sequences power writes only its locations' sequences (an organization-wide one: 403; another
// location's: 404); MEMBERs and managers read organization-wide sequences and their locations';
// other credentials are refused by role or scope; another organization sees nothing. And the
// operations as MCP tools.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { callTool, mcpCall, toolNames } from '../helpers/mcp.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { automation, sequencesFixture } from './authoring-helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
const seq: Record<'wide' | 'north' | 'south' | 'theirs', string> = { wide: '', north: '', south: '', theirs: '' };

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(sequencesFixture()));
  other = await app.apply(sequencesFixture('Other Dental'));
  const make = async (key: string, body: unknown) => {
    const res = await app.request('POST', '/api/v1/sequences', { key, body });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.id as string;
  };
  seq.wide = await make(acme.keys.org!, automation({ name: 'Wide' }));
  seq.north = await make(acme.keys.org!, automation({ name: 'North', location_id: acme.ids.north }));
  seq.south = await make(acme.keys.org!, automation({ name: 'South', location_id: acme.ids.south }));
  seq.theirs = await make(other.keys.org!, automation({ name: 'Theirs' }));
});
test.after.always(async () => { await app?.close(); });

const listed = async (key: string) => {
  const res = await app.request('GET', '/api/v1/sequences', { key });
  // the sequences made in test.before (other tests add their own)
  const label: Record<string, string> = { [seq.wide]: 'Wide', [seq.north]: 'North', [seq.south]: 'South', [seq.theirs]: 'Theirs' };
  return res.status === 200 ? res.body.items.map((s: { id: string }) => label[s.id]).filter(Boolean).sort() : res.status;
};

test('list: organization-wide sequences and those of the credential\'s locations', async (t) => {
  t.deepEqual(await listed(acme.keys.org!), ['North', 'South', 'Wide']);
  t.deepEqual(await listed(acme.keys.admin_personal!), ['North', 'South', 'Wide']);
  t.deepEqual(await listed(acme.keys.mgr_personal!), ['North', 'Wide']);
  t.deepEqual(await listed(acme.keys.north_member!), ['North', 'Wide']);
  t.deepEqual(await listed(acme.keys.sam_personal!), ['North', 'Wide']);
  t.deepEqual(await listed(acme.keys.quiet_personal!), ['South', 'Wide']);
  t.deepEqual(await listed(acme.keys.weak_mgr_personal!), ['South', 'Wide']);
  t.deepEqual(await listed(other.keys.org!), ['Theirs']);
  const scoped = await app.request('GET', '/api/v1/sequences', { key: acme.keys.org_reader });
  t.is(scoped.status, 403);
  t.like(scoped.body, { error: 'insufficient_scope', required: 'sequences:read' });
});

test('get: in reach 200, out of reach or another organization 404', async (t) => {
  const status = async (key: string, id: string) => (await app.request('GET', `/api/v1/sequences/${id}`, { key })).status;
  for (const key of [acme.keys.mgr_personal!, acme.keys.north_member!, acme.keys.sam_personal!]) {
    t.is(await status(key, seq.wide), 200);
    t.is(await status(key, seq.north), 200);
    t.is(await status(key, seq.south), 404);
    t.is(await status(key, seq.theirs), 404);
  }
  t.is(await status(acme.keys.quiet_personal!, seq.north), 404);
  t.is(await status(acme.keys.quiet_personal!, seq.south), 200);
  t.is(await status(other.keys.org!, seq.wide), 404);
  t.is(await status(acme.keys.org!, seq.theirs), 404);
});

const writes = (id: string): [string, string, unknown][] => [
  ['PATCH', `/api/v1/sequences/${id}`, { name: 'Changed' }],
  ['POST', `/api/v1/sequences/${id}/activate`, undefined],
  ['POST', `/api/v1/sequences/${id}/pause`, undefined],
  ['POST', `/api/v1/sequences/${id}/resume`, undefined],
  ['POST', `/api/v1/sequences/${id}/duplicate`, undefined],
];

test.serial('a manager with the sequences power: its location\'s sequences yes, organization-wide 403, another location\'s 404', async (t) => {
  const key = acme.keys.mgr_personal!;
  for (const [method, path, body] of writes(seq.wide)) {
    const res = await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_role', () => app.request(method, path, { key, body }));
    t.regex(res.body.message, /own locations/);
  }
  for (const [method, path, body] of writes(seq.south)) {
    await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => app.request(method, path, { key, body }));
  }
  for (const [method, path, body] of writes(seq.theirs)) {
    await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => app.request(method, path, { key, body }));
  }
  // create: its own location, or refused
  await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_role',
    () => app.request('POST', '/api/v1/sequences', { key, body: automation() }));
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
    () => app.request('POST', '/api/v1/sequences', { key, body: automation({ location_id: acme.ids.south }) }));
  const mine = await app.request('POST', '/api/v1/sequences', { key, body: automation({ name: 'Mine', location_id: acme.ids.north }) });
  t.is(mine.status, 201, JSON.stringify(mine.body));
  // moving its sequence out of its reach or to the whole organization is refused
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
    () => app.request('PATCH', `/api/v1/sequences/${mine.body.id}`, { key, body: { location_id: acme.ids.south } }));
  await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_role',
    () => app.request('PATCH', `/api/v1/sequences/${mine.body.id}`, { key, body: { location_id: null } }));
  // and its own location's sequence it changes, activates, pauses, resumes and duplicates
  for (const [method, path, body] of writes(seq.north)) {
    const res = await app.request(method, path, { key, body });
    t.true([200, 201].includes(res.status), `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  }
});

test.serial('members, managers without the sequences power and read-only keys cannot write', async (t) => {
  for (const key of [acme.keys.member_key!, acme.keys.north_member!, acme.keys.sam_personal!, acme.keys.north_mgr!, acme.keys.weak_mgr_personal!]) {
    for (const [method, path, body] of [...writes(seq.north), ['POST', '/api/v1/sequences', automation({ location_id: acme.ids.north })] as [string, string, unknown]]) {
      await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_role', () => app.request(method, path, { key, body }));
    }
  }
  const res = await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_scope',
    () => app.request('POST', '/api/v1/sequences', { key: acme.keys.org_reader, body: automation() }));
  t.is(res.body.required, 'sequences:write');
});

test.serial('another organization\'s audience, location and send schedule are 404 to create and update', async (t) => {
  const audience = (await app.request('POST', '/api/v1/audiences', { key: other.keys.org, body: { name: 'Theirs' } })).body.id;
  const key = acme.keys.org!;
  for (const body of [
    { name: 'x', kind: 'broadcast', audience: { id: audience } },
    automation({ location_id: other.ids.north }),
    automation({ send_schedule_id: other.ids.always }),
  ]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => app.request('POST', '/api/v1/sequences', { key, body }));
  }
  for (const body of [{ location_id: other.ids.north }, { send_schedule_id: other.ids.always }]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => app.request('PATCH', `/api/v1/sequences/${seq.wide}`, { key, body }));
  }
});

test('discovery is open to members; send schedules are the organization\'s own', async (t) => {
  for (const path of ['capabilities', 'triggers', 'variables', 'condition-vocabulary', 'send-schedules']) {
    const res = await app.request('GET', `/api/v1/sequences/${path}`, { key: acme.keys.north_member });
    t.is(res.status, 200, path);
  }
  const schedules = await app.request('GET', '/api/v1/sequences/send-schedules', { key: acme.keys.north_member });
  t.deepEqual(schedules.body.items.map((s: { id: string }) => s.id), [acme.ids.always, acme.ids.office]);
  const theirs = await app.request('GET', '/api/v1/sequences/send-schedules', { key: other.keys.org });
  t.deepEqual(theirs.body.items.map((s: { id: string }) => s.id), [other.ids.always, other.ids.office]);
});

test.serial('as MCP tools: listed with the REST flags, create, activate, pause, resume, and the same refusals', async (t) => {
  const key = acme.keys.org!;
  const names = await toolNames(app, key);
  for (const n of ['sequences_list', 'sequences_create', 'sequences_get', 'sequences_update', 'sequences_activate', 'sequences_pause',
    'sequences_resume', 'sequences_duplicate', 'sequences_capabilities', 'sequences_list_triggers', 'sequences_list_variables',
    'sequences_get_condition_vocabulary', 'sequences_list_send_schedules']) t.true(names.includes(n), n);
  const made = await callTool(app, key, 'sequences_create', { ...automation({ name: 'From MCP' }), idempotency_key: 'mcp-1' });
  t.false(made.isError, JSON.stringify(made.body));
  t.like(made.body, { name: 'From MCP', status: 'inactive' });
  const replay = await app.request('POST', '/api/v1/sequences', { key, body: { ...automation({ name: 'From MCP' }), idempotency_key: 'mcp-1' } });
  t.is(replay.body.id, made.body.id, 'one idempotency key across REST and MCP');
  t.like((await callTool(app, key, 'sequences_activate', { sequenceId: made.body.id })).body, { status: 'active' });
  t.like((await callTool(app, key, 'sequences_pause', { sequenceId: made.body.id })).body, { status: 'paused' });
  t.like((await callTool(app, key, 'sequences_resume', { sequenceId: made.body.id })).body, { status: 'active' });
  const notPaused = await callTool(app, key, 'sequences_resume', { sequenceId: made.body.id });
  t.true(notPaused.isError);
  t.is((await callTool(app, key, 'sequences_get', { sequenceId: seq.theirs })).isError, true);
  const blocked = await callTool(app, key, 'sequences_create', { name: 'Bad', is_active: true });
  t.true(blocked.isError);
  const caps = await callTool(app, acme.keys.north_member!, 'sequences_capabilities', {});
  t.false(caps.isError);
  t.is(caps.body.limits.steps_per_sequence, 50);
  const denied = await mcpCall(app, acme.keys.north_member!, 'sequences_create', automation());
  t.true(denied.body?.result?.isError ?? denied.http >= 400);
});
