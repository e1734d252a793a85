// The database's standard refusals answer as the caller's fault or a passing condition, never
// as a 500: a policy's WITH CHECK is 403, a foreign key 409, contention and shutdowns 503 with
// Retry-After; the database's own message never reaches the caller.
import test from 'ava';
import { z } from 'zod';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { callTool } from '../helpers/mcp.ts';
import { rows } from '../helpers/sql.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { sql } from '../../src/db/sql.ts';
import { fromDatabase, toApiError } from '../../src/platform/errors.ts';
import { defineOperation } from '../../src/registry/operation.ts';

const base = { tag: 'Probe', summary: 'probe', description: 'test-only', confirm: false, changes: [], idempotent: false } as const;

// Links a contact to a location straight in the table, under the caller's policies: the
// contact_locations insert policy admits only locations in the credential's reach, and its
// foreign key only locations of the organization. No live operation can reach either refusal
// (contacts_upsert takes only credentials that reach every location, and checks the ids first).
const probeLink = defineOperation({
  ...base, operationId: 'probe_link', method: 'POST', path: '/api/v1/probe/link',
  scope: 'contacts:write', memberAccess: 'deny', managerPower: 'contacts',
  body: z.strictObject({ contact_id: z.uuid(), location_id: z.uuid() }), response: z.any(),
  run: {
    statement: ({ contact_id, location_id }) => sql`insert into app_public.contact_locations (organization_id, contact_id, location_id)
      values (app_hidden.current_org_id(), ${contact_id}::uuid, ${location_id}::uuid) returning location_id`,
    shape: ([row]) => row,
  },
});

// Raises a SQLSTATE, with a message that must not reach the caller.
const probeRaise = defineOperation({
  ...base, operationId: 'probe_raise', method: 'GET', path: '/api/v1/probe/raise',
  scope: null, memberAccess: 'open', managerPower: null,
  query: z.object({ code: z.string().regex(/^[0-9A-Z]{5}$/) }), response: z.any(),
  run: { statement: ({ code }) => sql`select app_hidden.probe_raise(${code}::text) as raised`, shape: () => ({}) },
});

// Writes a row, then meets a deadlock on its first two tries (a sequence counts the tries, as
// a sequence is not undone with the transaction).
const probeFlaky = defineOperation({
  ...base, operationId: 'probe_flaky', method: 'POST', path: '/api/v1/probe/flaky',
  scope: null, memberAccess: 'open', managerPower: null,
  body: z.strictObject({ note: z.string() }), response: z.any(),
  run: { statement: ({ note }) => sql`select app_hidden.probe_flaky(${note}::text) as tries`, shape: ([row]) => row },
});

let app: TestApp;
let acme: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture(), { operations: [probeLink, probeRaise, probeFlaky] }));
  await app.db.owner.query(`set role svc_owner;
    create function app_hidden.probe_raise(code text) returns void language plpgsql as $$
    begin
      raise exception 'secret relation app_private.api_keys, row (42, hunter2)' using errcode = code;
    end $$;
    grant execute on function app_hidden.probe_raise(text) to svc_request;
    create sequence app_hidden.probe_tries;
    create table app_hidden.probe_writes (note text);
    create function app_hidden.probe_flaky(note text) returns bigint language plpgsql security definer as $$
    declare
      try bigint := nextval('app_hidden.probe_tries');
    begin
      insert into app_hidden.probe_writes values (note);
      if try % 3 <> 0 then
        raise exception 'deadlock detected' using errcode = '40P01';
      end if;
      return try;
    end $$;
    grant execute on function app_hidden.probe_flaky(text) to svc_request;
    reset role`);
});
test.after.always(async () => { await app?.close(); });

const links = async (contactId: string) =>
  (await rows(app, `select location_id from app_public.contact_locations where organization_id = $1 and contact_id = $2 order by 1`,
    [acme.organization_id, contactId])).map((r) => r.location_id);

test.serial('a write a policy\'s WITH CHECK refuses is 403 insufficient_role, and nothing is written', async (t) => {
  // north_mgr reaches North only; Ann is at North, South is out of its reach
  const res = await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_role', () => app.request('POST',
    '/api/v1/probe/link', { key: acme.keys.north_mgr, body: { contact_id: acme.ids.ann, location_id: acme.ids.south } }));
  t.like(res.body, { statusCode: 403, path: '/api/v1/probe/link', message: 'This credential may not make this change' });
  t.notRegex(JSON.stringify(res.body), /policy|contact_locations|row-level/);

  // the same over MCP: the tool's error is the envelope
  const result = await unchanged(t, app, acme.organization_id,
    () => callTool(app, acme.keys.north_mgr!, 'probe_link', { contact_id: acme.ids.ann, location_id: acme.ids.south }));
  t.true(result.isError);
  t.like(result.body, { statusCode: 403, error: 'insufficient_role' });

  // what the policy lets through is written
  const ok = await app.request('POST', '/api/v1/probe/link', { key: acme.keys.org, body: { contact_id: acme.ids.bob, location_id: acme.ids.north } });
  t.is(ok.status, 200);
  t.deepEqual(await links(acme.ids.bob!), [acme.ids.south, acme.ids.north].sort());
});

test.serial('a write a foreign key refuses is 409 conflict, and nothing is written', async (t) => {
  const other = await app.apply(acmeFixture('Elsewhere Co'));
  for (const location of ['7d1f0a52-9a0e-4c2b-8f7e-3c5d2b1a0f99', other.ids.north]) {
    const res = await refusedWithoutWrites(t, app, acme.organization_id, 409, 'conflict', () => app.request('POST',
      '/api/v1/probe/link', { key: acme.keys.org, body: { contact_id: acme.ids.cy, location_id: location } }));
    t.like(res.body, { statusCode: 409, path: '/api/v1/probe/link' }, location);
    t.notRegex(JSON.stringify(res.body), /foreign|constraint|contact_locations|Key \(/);
  }
});

// [SQLSTATE, status, error code] for each standard refusal a policy, a constraint or the server raises
const REFUSALS: [string, number, string][] = [
  ['42501', 403, 'insufficient_role'],
  ['23503', 409, 'conflict'], ['23505', 409, 'conflict'],
  ['23000', 400, 'bad_request'], ['23001', 400, 'bad_request'], ['23502', 400, 'bad_request'],
  ['23514', 400, 'bad_request'], ['23P01', 400, 'bad_request'],
  ['22001', 400, 'bad_request'], ['22P02', 400, 'bad_request'], ['22003', 400, 'bad_request'],
  ['40001', 503, 'contention'], ['40P01', 503, 'contention'], ['40000', 503, 'contention'], ['55P03', 503, 'contention'],
  ['53000', 503, 'busy'], ['53100', 503, 'busy'], ['53200', 503, 'busy'], ['53300', 503, 'busy'], ['53400', 503, 'busy'],
  ['54000', 400, 'bad_request'], ['54001', 400, 'bad_request'], ['54011', 400, 'bad_request'], ['54023', 400, 'bad_request'],
  ['57P01', 503, 'unavailable'], ['57P02', 503, 'unavailable'], ['57P03', 503, 'unavailable'], ['57P04', 503, 'unavailable'],
  ['57P05', 503, 'unavailable'], ['57000', 503, 'unavailable'], ['57014', 503, 'timeout'],
  ['08000', 503, 'unavailable'], ['08003', 503, 'unavailable'], ['08006', 503, 'unavailable'], ['08P01', 503, 'unavailable'],
  ['25006', 503, 'unavailable'],
];
// faults of ours: a bug in our SQL, or the service's own login refused
const OURS = ['42703', '42P01', '42883', '42601', 'P0001', 'P0004', 'XX000', 'XX001', '0A000', '21000', '28P01', '0P000', '25001'];

test('the map: every standard refusal has its status and code, ours stay 500, and no database message leaks', (t) => {
  const secret = 'secret relation app_private.api_keys, row (42, hunter2)';
  for (const [code, status, error] of REFUSALS) {
    const mapped = fromDatabase({ code, message: secret, detail: secret, hint: secret });
    t.truthy(mapped, code);
    t.is(mapped!.statusCode, status, code);
    t.is(mapped!.code, error, code);
    t.notRegex(`${mapped!.message} ${JSON.stringify(mapped!.extra)}`, /secret|hunter2|api_keys/, code);
    // whoever should come back is told when
    t.is(mapped!.extra.retry_after, status === 503 && code !== '57014' ? 1 : undefined, code);
  }
  for (const code of OURS) {
    t.is(fromDatabase({ code, message: secret }), undefined, code);
    t.like(toApiError({ code, message: secret }), { statusCode: 500, code: 'internal_error' });
  }
  // a system error's code is no SQLSTATE
  t.is(fromDatabase(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })), undefined);
  t.like(fromDatabase({ code: 'SV422', message: 'tag_limit_reached', detail: 'At the limit', hint: '' }),
    { statusCode: 422, code: 'tag_limit_reached', message: 'At the limit' });
});

test('through HTTP each refusal is its envelope, with Retry-After when it passes, never the database\'s words', async (t) => {
  for (const [code, status, error] of REFUSALS) {
    const res = await app.request('GET', `/api/v1/probe/raise?code=${code}`, { key: acme.keys.org });
    t.is(res.status, status, code);
    t.like(res.body, { statusCode: status, error, path: '/api/v1/probe/raise' }, code);
    t.notRegex(JSON.stringify(res.body), /secret|hunter2|api_keys/, code);
    t.is(res.headers.get('retry-after'), status === 503 && code !== '57014' ? '1' : null, code);
  }
  const ours = await app.request('GET', '/api/v1/probe/raise?code=XX000', { key: acme.keys.org });
  t.is(ours.status, 500);
  t.like(ours.body, { error: 'internal_error' });
  t.notRegex(JSON.stringify(ours.body), /secret|hunter2/);
});

test('a deadlock or serialization failure is run again: the third try answers, and its write is the only one', async (t) => {
  const res = await app.request('POST', '/api/v1/probe/flaky', { key: acme.keys.org, body: { note: 'once' } });
  t.is(res.status, 200);
  t.is(Number(res.body.tries), 3);
  t.deepEqual(await rows(app, `select note from app_hidden.probe_writes`), [{ note: 'once' }]);
  // a statement that keeps meeting it answers 503 contention after its last try, with nothing written
  const always = await app.request('GET', '/api/v1/probe/raise?code=40P01', { key: acme.keys.org });
  t.is(always.status, 503);
  t.is(always.body.error, 'contention');
  t.is(always.headers.get('retry-after'), '1');
});
