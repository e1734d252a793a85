// calls_list and calls_get (spec: Authentication 7; operations.tsv: calls:read, member access
// scoped): organization-wide credentials read every call; a MANAGER its locations'; a MEMBER only
// its own clients' calls, none without a staff profile; an own-records member likewise; another
// organization's calls are never found. Cursor paging is complete and without duplicates while
// calls arrive; bad input is a 400 that writes nothing.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { callsFixture } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(callsFixture()));
  other = await app.apply(callsFixture('Other Co'));
});
test.after.always(async () => { await app?.close(); });

const list = (key: string, query = '') => app.request('GET', `/api/v1/calls${query}`, { key: acme.keys[key] ?? key });
const get = (key: string, call: string, tenant = acme) => app.request('GET', `/api/v1/calls/${tenant.ids[call]}`, { key: acme.keys[key] ?? key });
const refsOf = (items: { id: string }[]) => items.map((c) => Object.entries(acme.ids).find(([, id]) => id === c.id)?.[0] ?? c.id);

test.serial('organization-wide credentials read every call, newest first, without transcripts', async (t) => {
  for (const k of ['org', 'admin_org', 'owner_personal', 'admin_personal', 'mgr_key']) {
    const res = await list(k);
    t.is(res.status, 200, k);
    t.deepEqual(refsOf(res.body.items), ['call_ann', 'call_bob', 'call_cy', 'call_dee'], k);
    t.is(res.body.next_cursor, null);
  }
  const [ann] = (await list('org')).body.items;
  t.like(ann, { contact_id: acme.ids.ann, location_id: acme.ids.north, direction: 'inbound', status: 'completed',
    from: '+15551230001', to: '+15550000001', duration_seconds: 95, summary: 'Asked about prices' });
  t.false('transcript' in ann);
  const { rows } = await app.db.owner.query('select id from app_public.staff_profiles where organization_id = $1 and person_id = $2',
    [acme.organization_id, acme.ids.staff]);
  t.is(ann.team_member_id, rows[0].id);
});

test.serial('calls_get answers the transcript in the order spoken', async (t) => {
  const res = await get('org', 'call_ann');
  t.is(res.status, 200);
  t.deepEqual(res.body.transcript, [
    { speaker: 'caller', text: 'Hi, how much is a cleaning?' },
    { speaker: 'assistant', text: 'A cleaning is $90.' },
    { speaker: 'caller', text: 'Thanks, bye.' },
  ]);
  t.deepEqual((await get('org', 'call_bob')).body.transcript, []);
});

test.serial('a MANAGER reads the calls of its locations only', async (t) => {
  for (const k of ['north_mgr', 'mgr_personal', 'staff_mgr_key']) {
    t.deepEqual(refsOf((await list(k)).body.items), ['call_ann', 'call_dee'], k);
    t.is((await get(k, 'call_ann')).status, 200, k);
    for (const c of ['call_bob', 'call_cy']) {
      await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => get(k, c));
    }
  }
  t.deepEqual(refsOf((await list('south_mgr')).body.items), ['call_bob']);
  t.deepEqual(refsOf((await list('weak_mgr_personal')).body.items), ['call_bob']);
});

test.serial('a MEMBER reads only its own clients\' calls; without a staff profile, none', async (t) => {
  // Sam took ann's call: ann is Sam's client
  t.deepEqual(refsOf((await list('sam_personal')).body.items), ['call_ann']);
  t.is((await get('sam_personal', 'call_ann')).status, 200);
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => get('sam_personal', 'call_dee'));
  // the own-records member reads the call it took, and that contact
  t.deepEqual(refsOf((await list('ora_personal')).body.items), ['call_dee']);
  t.is((await get('ora_personal', 'call_dee')).status, 200);
  t.is((await app.request('GET', `/api/v1/contacts/${acme.ids.dee}`, { key: acme.keys.ora_personal })).status, 200);
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => get('ora_personal', 'call_ann'));
  // no staff profile behind the credential: an empty list
  for (const k of ['nia_personal', 'member_key', 'north_member', 'quiet_personal']) {
    const res = await list(k);
    t.is(res.status, 200, k);
    t.deepEqual(res.body, { items: [], next_cursor: null }, k);
    await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => get(k, 'call_ann'));
  }
});

test.serial('a new call a team member takes makes the contact its client; removing the call ends that', async (t) => {
  const { rows: [sp] } = await app.db.owner.query('select id from app_public.staff_profiles where organization_id = $1 and person_id = $2',
    [acme.organization_id, acme.ids.staff]);
  const { rows: [c] } = await app.db.owner.query(`insert into app_public.calls (organization_id, contact_id, location_id, staff_profile_id)
    values ($1, $2, $3, $4) returning id`, [acme.organization_id, acme.ids.dee, acme.ids.north, sp.id]);
  t.true(refsOf((await list('sam_personal')).body.items).includes(c.id));
  t.true(refsOf((await list('sam_personal')).body.items).includes('call_dee'), 'dee is now Sam\'s client: her other calls too');
  await app.db.owner.query('delete from app_public.calls where organization_id = $1 and id = $2', [acme.organization_id, c.id]);
  t.deepEqual(refsOf((await list('sam_personal')).body.items), ['call_ann']);
});

test.serial('contact_id keeps one contact\'s calls; a contact out of reach is a 404', async (t) => {
  t.deepEqual(refsOf((await list('org', `?contact_id=${acme.ids.bob}`)).body.items), ['call_bob']);
  t.deepEqual((await list('org', `?contact_id=${acme.ids.won}`)).status, 404, 'a stage id is no contact');
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => list('north_mgr', `?contact_id=${acme.ids.bob}`));
  t.deepEqual(refsOf((await list('north_mgr', `?contact_id=${acme.ids.ann}`)).body.items), ['call_ann']);
  // a contact the member sees but whose calls are not its
  t.deepEqual((await list('sam_personal', `?contact_id=${acme.ids.dee}`)).body.items, []);
});

test.serial('another organization\'s calls and contacts are never found', async (t) => {
  for (const k of ['org', 'north_mgr', 'sam_personal']) {
    await refusedWithoutWrites(t, app, [acme.organization_id, other.organization_id] as never, 404, 'not_found',
      () => get(k, 'call_ann', other));
    await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => list(k, `?contact_id=${other.ids.ann}`));
  }
  const ours = new Set(Object.values(acme.ids));
  t.true((await list('org')).body.items.every((c: { id: string }) => ours.has(c.id)));
});

test.serial('a key without calls:read is refused', async (t) => {
  await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_scope', () => list('org_reader'));
  await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_scope', () => get('org_reader', 'call_ann'));
});

test.serial('bad input is a 400 that writes nothing', async (t) => {
  for (const q of ['?limit=0', '?limit=101', '?limit=x', '?cursor=abc', `?cursor=${Buffer.from('2026-01-01T00:00:00Z_x').toString('base64url')}`,
    '?contact_id=nope', '?cursor=' + Buffer.from(`9999-99-99T00:00:00.000000Z_${acme.ids.ann}`).toString('base64url')]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => list('org', q));
  }
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => app.request('GET', '/api/v1/calls/not-a-uuid', { key: acme.keys.org }));
});

test.serial('paging is complete and without duplicates while calls arrive', async (t) => {
  // a contact of its own, thirty calls with some starts equal (the id breaks ties)
  const { rows: [c] } = await app.db.owner.query(`insert into app_public.contacts (organization_id, name, email)
    values ($1, 'Pat Pages', 'pat@example.com') returning id`, [acme.organization_id]);
  const { rows } = await app.db.owner.query(`insert into app_public.calls (organization_id, contact_id, started_at)
    select $1, $2, timestamptz '2026-10-01T00:00:00Z' + (n / 3) * interval '1 minute' from generate_series(1, 30) n returning id`,
  [acme.organization_id, c.id]);
  const expected = new Set(rows.map((r) => r.id as string));
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await list('org', `?contact_id=${c.id}&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
    t.is(res.status, 200);
    seen.push(...res.body.items.map((x: { id: string }) => x.id));
    cursor = res.body.next_cursor;
    // calls arriving meanwhile (newer: they belong before the first page) never disturb the rest
    await app.db.owner.query(`insert into app_public.calls (organization_id, contact_id) values ($1, $2), ($1, $2)`, [acme.organization_id, c.id]);
    pages++;
  } while (cursor && pages < 20);
  t.is(new Set(seen).size, seen.length, 'no duplicates');
  t.deepEqual([...seen].sort(), [...expected].sort(), 'every call present when paging began, once');
  t.is(pages, 5);
});

test.serial('MCP serves the same reads', async (t) => {
  const mine = await callTool(app, acme.keys.sam_personal!, 'calls_list', {});
  t.false(mine.isError);
  t.deepEqual(mine.body.items.map((c: { id: string }) => c.id), [acme.ids.call_ann]);
  const one = await callTool(app, acme.keys.org!, 'calls_get', { callId: acme.ids.call_bob });
  t.is(one.body.id, acme.ids.call_bob);
  const denied = await callTool(app, acme.keys.sam_personal!, 'calls_get', { callId: acme.ids.call_bob });
  t.true(denied.isError);
});
