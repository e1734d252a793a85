// The operator CLI (operator-cli.md): admin apply round trip, admin commands, errors.
import test from 'ava';
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.ts';
import { svc } from '../helpers/cli.ts';
import { acmeFixture } from '../helpers/fixtures.ts';

let app: TestApp;
let url: string;
test.before(async () => {
  app = await startApp();
  url = app.db.ownerUrl;
});
test.after.always(async () => { await app?.close(); });

const oneLineError = (t: import('ava').ExecutionContext, r: { code: number; stderr: string; stdout: string }, pattern: RegExp) => {
  t.not(r.code, 0);
  t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  t.regex(r.stderr, pattern);
  t.is(r.stdout, '');
};

test('admin apply FILE creates a tenant whose keys work; applying twice makes a second organization', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-'));
  const file = join(dir, 'tenant.json');
  await writeFile(file, JSON.stringify(acmeFixture()));
  const first = await svc(['admin', 'apply', file], { databaseUrl: url });
  t.is(first.code, 0, first.stderr);
  const out = JSON.parse(first.stdout);
  t.deepEqual(Object.keys(out).sort(), ['ids', 'key_ids', 'keys', 'organization_id', 'team_member_ids']);
  // team members are staff profiles: managers and members have one by default
  t.deepEqual(Object.keys(out.team_member_ids).sort(), ['mgr', 'quiet', 'staff', 'weak_mgr']);
  for (const ref of ['north', 'south', 'owner', 'mgr', 'staff', 'lead', 'won', 'ann', 'bob', 'cy']) t.regex(out.ids[ref], /^[0-9a-f-]{36}$/, ref);
  t.deepEqual(Object.keys(out.keys).sort(), Object.keys(out.key_ids).sort());
  for (const key of Object.values(out.keys)) t.regex(key as string, /^svc_sk_[A-Za-z0-9]{32}$/);

  const me = await app.request('GET', '/api/v1/me', { key: out.keys.north_mgr });
  t.is(me.status, 200);
  t.is(me.body.organization.id, out.organization_id);
  t.deepEqual(me.body.api_key, { id: out.key_ids.north_mgr, kind: 'organization', scopes: me.body.api_key.scopes,
    role: 'MANAGER', location_ids: [out.ids.north], powers: ['contacts'] });

  // its domain and numbers are the first organization's: a second application is refused whole
  const taken = await svc(['admin', 'apply', file], { databaseUrl: url });
  t.is(taken.code, 2);
  t.regex(taken.stderr, /acme\.example is in use by another organization/);
  // without them, the same file makes a second organization
  const { organization: { sending_email_domain: _d, default_sms_number: _n, ...bare }, locations, ...rest } = acmeFixture();
  await writeFile(file, JSON.stringify({ ...rest, organization: bare, locations: locations.map(({ sms_number: _s, ...l }) => l) }));
  const second = JSON.parse((await svc(['admin', 'apply', file], { databaseUrl: url })).stdout);
  t.not(second.organization_id, out.organization_id);
  t.not(second.ids.ann, out.ids.ann);
  const third = JSON.parse((await svc(['admin', 'apply', file], { databaseUrl: url })).stdout);
  t.not(third.organization_id, second.organization_id);

  const { rows } = await app.db.owner.query(`select key_hash from app_private.api_keys where id = $1`, [out.key_ids.org]);
  t.is(rows[0].key_hash.length, 32, 'only a 32-byte hash is stored');
  const { rows: leaked } = await app.db.owner.query(
    `select count(*)::int as n from app_private.api_keys where encode(key_hash, 'escape') like '%svc_sk_%'`);
  t.is(leaked[0].n, 0);
});

test('admin apply - reads stdin; every fixture field lands', async (t) => {
  const stdin = JSON.stringify(acmeFixture('Stdin Co'));
  const r = await svc(['admin', 'apply', '-'], { databaseUrl: url, stdin });
  t.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  const q = async (text: string, values: unknown[]) => (await app.db.owner.query(text, values)).rows;
  const [org] = await q(`select name, mcp_enabled, tag_limit, sending_email_domain, default_sms_number from app_public.organizations where id = $1`, [out.organization_id]);
  const given = JSON.parse(stdin);
  t.deepEqual(org, { name: 'Stdin Co', mcp_enabled: true, tag_limit: 100, sending_email_domain: given.organization.sending_email_domain,
    default_sms_number: given.organization.default_sms_number });
  const [loc] = await q(`select timezone, staffed, sms_number, hours from app_public.locations where id = $1`, [out.ids.north]);
  t.deepEqual(loc, { timezone: 'America/New_York', staffed: true, sms_number: given.locations[0].sms_number, hours: [{ day: 'mon', open: '09:00', close: '17:00' }] });
  const [staff] = await q(`select role, sms_enabled, records_level, agent_access, active,
      (select count(*)::int from app_public.staff_profiles s where s.person_id = p.id) as profiles,
      (select array_agg(location_id) from app_public.person_locations l where l.person_id = p.id) as locations
    from app_public.people p where id = $1`, [out.ids.staff]);
  t.deepEqual(staff, { role: 'member', sms_enabled: true, records_level: 'all', agent_access: true, active: true, profiles: 1, locations: [out.ids.north] });
  const [ann] = await q(`select name, email, phone, stage_id, field_values, sms_consent, total_calls, notes_count,
      (select array_agg(t.name::text) from app_public.contact_tags ct join app_public.tags t on t.id = ct.tag_id where ct.contact_id = c.id) as tags
    from app_public.contacts c where id = $1`, [out.ids.ann]);
  t.deepEqual(ann, { name: 'Ann Lee', email: 'ann@example.com', phone: '+15551230001', stage_id: out.ids.lead,
    field_values: { plan: 'gold' }, sms_consent: true, total_calls: 2, notes_count: 2, tags: ['vip'] });
  const stages = await q(`select id, position from app_public.pipeline_stages where organization_id = $1 order by position`, [out.organization_id]);
  t.deepEqual(stages.map((s) => s.id), [out.ids.lead, out.ids.won]);
});

test('admin apply refuses bad fixtures with one line and creates nothing', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{}, /organization/],
    [{ organization: {} }, /organization\.name/],
    [{ organization: { name: 'X' }, locations: [{ name: 'L', timezone: 'Mars/Olympus' }] }, /time zone/],
    // Intl takes these; PostgreSQL would read +05:30 as a POSIX zone west of Greenwich, and knows no US/Pacific-New
    [{ organization: { name: 'X' }, locations: [{ name: 'L', timezone: '+05:30' }] }, /locations\[0\]\.timezone/],
    [{ organization: { name: 'X' }, locations: [{ name: 'L', timezone: 'US/Pacific-New' }] }, /locations\[0\]\.timezone/],
    [{ organization: { name: 'X' }, users: [{ name: 'U', email: 'u@x.example', role: 'boss' }] }, /users\.0\.role/],
    [{ organization: { name: 'X' }, users: [{ name: 'U', email: 'u@x.example', role: 'owner', location_refs: ['nope'] }] }, /unknown ref "nope"/],
    [{ organization: { name: 'X' }, stages: [{ ref: 'a', name: 'A' }, { ref: 'a', name: 'B' }] }, /used twice/],
    [{ organization: { name: 'X' }, contacts: [{ phone: '12' }] }, /phone/],
    [{ organization: { name: 'X' }, contacts: [{ custom_fields: { nope: 1 } }] }, /not a custom field/],
    [{ organization: { name: 'X' }, contacts: [{ email: 'a@x.example' }, { email: 'A@x.example' }] }, /already uses/],
    [{ organization: { name: 'X' }, users: [{ ref: 'm', name: 'M', email: 'm@x.example', role: 'member' }],
       api_keys: [{ kind: 'organization', created_by_ref: 'm' }] }, /only an owner or admin/],
    [{ organization: { name: 'X' }, api_keys: [{ kind: 'organization', scopes: ['everything'] }] }, /scopes/],
    [{ organization: { name: 'X' }, surprise: 1 }, /surprise|Unrecognized/],
    // accepted by the fixture's schema, refused by PostgreSQL
    [{ organization: { name: 'X' }, contacts: [{ email: 'nul@x.example', name: 'a\u0000b' }] }, /PostgreSQL refuses/],
  ];
  for (const [fixture, pattern] of cases) {
    oneLineError(t, await svc(['admin', 'apply', '-'], { databaseUrl: url, stdin: JSON.stringify(fixture) }), pattern);
  }
  oneLineError(t, await svc(['admin', 'apply', '-'], { databaseUrl: url, stdin: '{not json' }), /not valid JSON/);
  oneLineError(t, await svc(['admin', 'apply', '/nonexistent/file.json'], { databaseUrl: url }), /cannot read/);
  oneLineError(t, await svc(['admin', 'apply'], { databaseUrl: url }), /FILE/);
  const after = (await app.db.owner.query(`select count(*)::int as n from app_public.organizations where name = 'X'`)).rows[0].n;
  t.is(after, 0, 'nothing was written');
});

test('admin key revoke, user update, role-access and org update change the next request', async (t) => {
  const out = JSON.parse((await svc(['admin', 'apply', '-'], { databaseUrl: url, stdin: JSON.stringify(acmeFixture('Ops Co')) })).stdout);
  const revoke = await svc(['admin', 'key', 'revoke', '--id', out.key_ids.org], { databaseUrl: url });
  t.is(revoke.code, 0, revoke.stderr);
  t.is((await app.request('GET', '/api/v1/me', { key: out.keys.org })).status, 401);

  const upd = await svc(['admin', 'user', 'update', '--id', out.ids.staff, '--role', 'manager', '--powers', 'contacts,sequences', '--locations', `${out.ids.north},${out.ids.south}`], { databaseUrl: url });
  t.is(upd.code, 0, upd.stderr);
  const me = await app.request('GET', '/api/v1/me', { key: out.keys.sam_personal });
  t.is(me.body.principal.role, 'MANAGER');
  t.deepEqual(me.body.api_key.powers, ['contacts', 'sequences']);
  t.deepEqual([...me.body.principal.location_ids].sort(), [out.ids.north, out.ids.south].sort());

  const demote = await svc(['admin', 'user', 'update', '--id', out.ids.staff, '--role', 'member'], { databaseUrl: url });
  t.deepEqual(JSON.parse(demote.stdout).powers, [], 'a role other than manager clears powers');

  const access = await svc(['admin', 'role-access', '--org', out.organization_id, '--role', 'member', '--agent-access', 'off'], { databaseUrl: url });
  t.is(access.code, 0, access.stderr);
  t.is((await app.request('GET', '/api/v1/me', { key: out.keys.sam_personal })).status, 401);

  const org = await svc(['admin', 'org', 'update', '--id', out.organization_id, '--mcp', 'off', '--tag-limit', '7'], { databaseUrl: url });
  t.is(org.code, 0, org.stderr);
  t.like(JSON.parse(org.stdout), { mcp_enabled: false, tag_limit: 7 });

  const outbox = await svc(['admin', 'outbox', '--org', out.organization_id], { databaseUrl: url });
  t.is(outbox.code, 0, outbox.stderr);
  t.is(outbox.stdout, '', 'nothing was sent yet');
});

test('admin commands refuse bad input with one line', async (t) => {
  const bad: [string[], RegExp][] = [
    [['admin', 'key', 'revoke'], /--id must be a uuid/],
    [['admin', 'key', 'revoke', '--id', 'abc'], /--id must be a uuid/],
    [['admin', 'key', 'revoke', '--id', '00000000-0000-0000-0000-000000000000'], /no key/],
    [['admin', 'user', 'update', '--id', '00000000-0000-0000-0000-000000000000', '--role', 'king'], /--role/],
    [['admin', 'user', 'update', '--id', '00000000-0000-0000-0000-000000000000'], /no user/],
    [['admin', 'user', 'update', '--id', '00000000-0000-0000-0000-000000000000', '--powers', 'flying'], /unknown power/],
    [['admin', 'user', 'update', '--bogus'], /bogus/],
    [['admin', 'role-access', '--org', '00000000-0000-0000-0000-000000000000', '--role', 'member', '--agent-access', 'maybe'], /on or off/],
    [['admin', 'org', 'update', '--id', '00000000-0000-0000-0000-000000000000', '--tag-limit', '-1'], /tag-limit/],
    [['admin', 'outbox', '--org', '00000000-0000-0000-0000-000000000000', '--since', 'yesterday'], /--since/],
    [['admin', 'outbox', '--org', '00000000-0000-0000-0000-000000000000', '--since', 'Nov 1 2026'], /--since/],
    [['admin', 'outbox', '--org', '00000000-0000-0000-0000-000000000000', '--since', '2030'], /--since/],
    [['admin', 'outbox', '--org', '00000000-0000-0000-0000-000000000000', '--since', '2026-02-30'], /--since/],
    [['admin', 'outbox', '--org', '00000000-0000-0000-0000-000000000000', '--since', '2026-04-31T10:00:00Z'], /--since/],
    [['admin', 'outbox', '--org', '00000000-0000-0000-0000-000000000000', '--since', '2026-11-01T10:00:00+2359'], /--since/],
    [['admin', 'outbox', '--org', '00000000-0000-0000-0000-000000000000'], /no organization/],
    [['admin', 'outbox', '--org', '00000000-0000-0000-0000-000000000000', '--since', '2026-11-01'], /no organization/],
    [['admin', 'apply', 'one.json', 'two.json'], /one FILE/],
    [['admin', 'frobnicate'], /unknown admin command/],
    [['frobnicate'], /unknown command/],
    [['serve', '--port', 'eighty'], /--port/],
  ];
  for (const [args, pattern] of bad) oneLineError(t, await svc(args, { databaseUrl: url }), pattern);
});

test('svc openapi prints the document without a database', async (t) => {
  const r = await svc(['openapi'], { env: { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' } });
  t.is(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  t.is(doc.info.version, '1.0.0');
  t.is(doc.paths['/api/v1/me'].get.operationId, 'me_get');
});

test('seed demo creates a demo organization and prints its keys', async (t) => {
  const r = await svc(['seed', 'demo'], { databaseUrl: url });
  t.is(r.code, 0, r.stderr);
  const keys = r.stdout.match(/svc_sk_[A-Za-z0-9]{32}/g) ?? [];
  t.true(keys.length >= 4);
  const me = await app.request('GET', '/api/v1/me', { key: keys[0] });
  t.is(me.body.organization.name, 'Bright Smile Dental');
});
