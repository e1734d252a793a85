// An operation's requirements (scope, member access, manager power) are checked by the database
// in one place, app_hidden.requirement_refusal: authenticate raises its refusal for a call, and
// the MCP endpoint lists exactly the operations it lets a credential call
// (app_hidden.authorize_mcp, with the organization's MCP switch, in the authentication round trip).
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { toolNames } from '../helpers/mcp.ts';
import { probeIdempotentOperations } from '../helpers/probes.ts';
import { asKey, asRole, outcome } from '../helpers/sql.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { updateOrg } from '../../src/admin/commands.ts';
import { hashKey } from '../../src/auth/keys.ts';
import { AREAS } from '../../src/areas.ts';
import { operationsOf } from '../../src/registry/area.ts';
import type { AnyOperation } from '../../src/registry/operation.ts';

// the live operations and the probes, which carry the flag combinations no live one has yet
const operations: AnyOperation[] = [...new Map([...operationsOf(AREAS), ...probeIdempotentOperations]
  .map((op) => [op.operationId, op])).values()];
const requirements = JSON.stringify(operations.map((op) => ({
  operation_id: op.operationId, scope: op.scope, member_access: op.memberAccess, manager_power: op.managerPower })));

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(acmeFixture(), { operations })); });
test.after.always(async () => { await app?.close(); });

/** The operations authenticate lets this key call: those whose requirements it raises no 403 for. */
async function callable(key: string): Promise<string[]> {
  const allowed: string[] = [];
  for (const op of operations) {
    const out = await outcome(app, undefined, `select app_hidden.authenticate($1, $2, $3, $4) is not null as result`,
      [hashKey(key), op.scope, op.memberAccess, op.managerPower]);
    if (out.ok) allowed.push(op.operationId);
    else if (out.error.code !== 'SV403') throw out.error;
  }
  return allowed.sort();
}

test('every credential\'s MCP tools are exactly the operations authenticate lets it call', async (t) => {
  const seen = new Set<string>();
  for (const [ref, key] of Object.entries(acme.keys)) {
    const tools = await toolNames(app, key);
    t.deepEqual(tools, await callable(key), ref);
    seen.add(tools.join(','));
  }
  t.true(seen.size >= 5, `the credentials see different lists: ${seen.size}`);
});

test('the MCP switch and the tool list are the database\'s, after authenticate', async (t) => {
  const f = await app.apply(acmeFixture('Switch Co'));
  const listed = await asKey(app, f.keys.member_key, async (c) =>
    (await c.query(`select app_hidden.authorize_mcp($1::jsonb) as tools`, [requirements])).rows[0].tools);
  t.deepEqual([...listed].sort(), await callable(f.keys.member_key!));
  t.true(listed.includes('me_get'));
  t.false(listed.includes('probe_write'), 'a MEMBER is denied probe_write');

  await updateOrg(app.db.owner, f.organization_id, 'off', undefined);
  const off = await t.throwsAsync(asKey(app, f.keys.org, (c) => c.query(`select app_hidden.authorize_mcp($1::jsonb)`, [requirements])));
  t.like(off, { code: 'SV404', message: 'not_found' });
  // without claims there is no organization whose switch is on
  const none = await t.throwsAsync(asKey(app, undefined, (c) => c.query(`select app_hidden.authorize_mcp('[]'::jsonb)`)));
  t.like(none, { code: 'SV404' });
  await asRole(app, 'svc_analyst', [], async (c) =>
    t.like(await t.throwsAsync(c.query(`select app_hidden.authorize_mcp('[]'::jsonb)`)), { code: '42501' }));
});

test('authenticate\'s refusals are requirement_refusal\'s: scope first, then role', async (t) => {
  const refusal = (key: string, scope: string | null, access: string, power: string | null) =>
    asKey(app, key, async (c) => (await c.query(`select app_hidden.requirement_refusal($1, $2, $3) as r`, [scope, access, power])).rows[0].r);
  t.deepEqual(await refusal(acme.keys.org_reader!, 'contacts:write', 'deny', 'contacts'), {
    status: 403, error: 'insufficient_scope', message: 'This credential lacks the contacts:write scope', extra: { required: 'contacts:write' } });
  t.like(await refusal(acme.keys.member_key!, 'contacts:read', 'deny', null), { status: 403, error: 'insufficient_role' });
  t.like(await refusal(acme.keys.quiet_personal!, null, 'sms_setting', null), { error: 'insufficient_role', message: 'Texting is turned off for this member' });
  t.is(await refusal(acme.keys.sam_personal!, null, 'sms_setting', null), null);
  t.like(await refusal(acme.keys.weak_mgr_personal!, null, 'deny', 'contacts'), { message: 'A manager needs the contacts power for this operation' });
  t.like(await refusal(acme.keys.mgr_key!, null, 'deny', null), { message: 'A manager cannot call this operation' });
  t.is(await refusal(acme.keys.org!, 'contacts:write', 'deny', 'contacts'), null);

  const raised = await t.throwsAsync(asKey(app, undefined, (c) =>
    c.query(`select app_hidden.authenticate($1, 'contacts:write', 'open', null)`, [hashKey(acme.keys.org_reader!)])));
  t.like(raised, { code: 'SV403', message: 'insufficient_scope', detail: 'This credential lacks the contacts:write scope' });
  t.deepEqual(JSON.parse((raised as unknown as { hint: string }).hint), { required: 'contacts:write' });
});

test('the OAuth scopes a person may grant are those of the operations their personal key may call', async (t) => {
  const byRef = new Map(operations.map((op) => [op.operationId, op]));
  for (const ref of ['owner_personal', 'admin_personal', 'mgr_personal', 'weak_mgr_personal', 'sam_personal', 'quiet_personal']) {
    const key = acme.keys[ref]!;
    const { rows: [k] } = await app.db.owner.query(`select organization_id, created_by, scopes from app_private.api_keys where key_hash = $1`,
      [hashKey(key)]);
    const { rows: [{ scopes }] } = await app.db.owner.query(`select app_hidden.oauth_grantable_scopes($1, $2, $3::jsonb) as scopes`,
      [k.organization_id, k.created_by, requirements]);
    const { rows: [{ p }] } = await app.db.owner.query(`select app_hidden.oauth_person($1, $2) as p`, [k.organization_id, k.created_by]);
    const mayNotText = p.role === 'member' && !p.sms_enabled;
    const expected = [...new Set((await callable(key)).map((id) => byRef.get(id)!.scope).filter((s) => s !== null))]
      .filter((s) => k.scopes.includes(s!) && !(s === 'conversations:write' && mayNotText)).sort();
    t.deepEqual([...scopes].sort(), expected, ref);
  }
});
