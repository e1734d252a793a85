// Who reaches which enrollments (spec: Authentication 6–7; operations.tsv: sequences:read or
// :write, member access deny, manager power sequences): organization-wide credentials reach
// all; a manager with the sequences power reads organization-wide sequences and its locations'
// (only its contacts' enrollments in them) and cancels only in its locations' sequences (an
// organization-wide one: 403, another location's: 404); MEMBER keys, members' personal keys and
// managers without the power get 403; every refusal changes nothing.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { errorEnvelope, mcpCall, toolNames } from '../helpers/mcp.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { insertEnrollment, readsFixture, seedReads, type ReadsData } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
let data: ReadsData;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(readsFixture()));
  data = await seedReads(app.db, acme);
});
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;
type Seq = 'orgWide' | 'north' | 'south';
const seq = (s: Seq) => data[s];
// live ones only: the suite cancels enrollments of fresh contacts as it goes
const list = (s: Seq, k: string) => app.request('GET', `/api/v1/sequences/${seq(s)}/enrollments?status=active`, { key: k });
const get = (s: Seq, c: string, k: string) => app.request('GET', `/api/v1/sequences/${seq(s)}/enrollments/${data.enrollments[`${s}.${c}`]}`, { key: k });
const analytics = (s: Seq, k: string) => app.request('GET', `/api/v1/sequences/${seq(s)}/analytics`, { key: k });
const cancel = (s: Seq, id: string, k: string) => app.request('POST', `/api/v1/sequences/${seq(s)}/enrollments/${id}/cancel`, { key: k });
const ofContact = (c: string, k: string) => app.request('GET', `/api/v1/contacts/${acme.ids[c]}/enrollments`, { key: k });
const contactsOf = (res: { body: { items: { contact_id: string }[] } }) =>
  res.body.items.map((e) => Object.entries(acme.ids).find(([, id]) => id === e.contact_id)![0]).sort();

/** A fresh live enrollment of a new contact linked to `at` (or none) in sequence `s`. */
async function fresh(s: Seq, at: 'north' | 'south' | null): Promise<string> {
  const { rows } = await app.db.owner.query(`insert into app_public.contacts (organization_id, name, email)
    values ($1, 'Fresh', 'fresh-' || gen_random_uuid() || '@example.com') returning id`, [org()]);
  if (at) {
    await app.db.owner.query(`insert into app_public.contact_locations (organization_id, contact_id, location_id) values ($1, $2, $3)`,
      [org(), rows[0].id, acme.ids[at]]);
  }
  return insertEnrollment(app.db, org(), { sequence_id: seq(s), contact_id: rows[0].id });
}

test.serial('organization-wide credentials read and cancel every enrollment', async (t) => {
  for (const k of ['org', 'admin_org', 'owner_personal', 'admin_personal']) {
    for (const s of ['orgWide', 'north', 'south'] as const) {
      const res = await list(s, acme.keys[k]!);
      t.is(res.status, 200, `${k} ${s}`);
      t.deepEqual(contactsOf(res), ['ann', 'bob', 'cy', 'dee'], `${k} ${s}`);
      t.is(res.body.total, 4, `${k} ${s}`);
      t.is((await get(s, 'bob', acme.keys[k]!)).status, 200);
      t.is((await analytics(s, acme.keys[k]!)).body.rollup.active, 4);
      t.like((await cancel(s, await fresh(s, null), acme.keys[k]!)).body, { status: 'cancelled' }, `${k} ${s}`);
    }
    t.is((await ofContact('cy', acme.keys[k]!)).body.total, 3);
  }
});

for (const k of ['mgr_personal', 'north_seq_mgr'] as const) {
  test.serial(`a manager with the sequences power at North (${k}): North's contacts, organization-wide and North sequences`, async (t) => {
    const key = acme.keys[k]!;
    for (const s of ['orgWide', 'north'] as const) {
      const res = await list(s, key);
      t.is(res.status, 200, s);
      t.deepEqual(contactsOf(res), ['ann', 'dee'], `${s}: only contacts at North`);
      t.is(res.body.total, 2, `${s}: total counts what it sees`);
      t.is((await get(s, 'ann', key)).status, 200);
      await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => get(s, 'bob', key));
      const a = await analytics(s, key);
      t.like(a.body.rollup, { active: 2 }, s);
    }
    // filters by contact: only contacts in reach (an email of one out of reach is an empty page)
    const by = (q: string) => app.request('GET', `/api/v1/sequences/${data.orgWide}/enrollments?${q}`, { key });
    t.deepEqual(contactsOf(await by(`contact_id=${acme.ids.ann}`)), ['ann']);
    t.deepEqual(contactsOf(await by('email=ANN@example.com')), ['ann']);
    t.like((await by(`contact_id=${acme.ids.bob}`)).body, { items: [], total: 0 });
    t.like((await by('email=bob@example.com')).body, { items: [], total: 0 });
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => list('south', key));
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => get('south', 'ann', key));
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => analytics('south', key));
    // writes: its own location's sequence only
    t.like((await cancel('north', await fresh('north', 'north'), key)).body, { status: 'cancelled' });
    const orgWide = await fresh('orgWide', 'north');
    await refusedWithoutWrites(t, app, org(), 403, 'insufficient_role', () => cancel('orgWide', orgWide, key));
    t.like((await cancel('orgWide', orgWide, acme.keys.org!)).body, { status: 'cancelled' }, 'an organization key may');
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => cancel('south', data.enrollments['south.ann']!, key));
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => cancel('north', data.enrollments['north.bob']!, key));
    // a contact's list: the contact in reach, its enrollments in sequences it sees
    const ann = await ofContact('ann', key);
    t.is(ann.status, 200);
    t.deepEqual(ann.body.items.map((e: { sequence_name: string }) => e.sequence_name).sort(), ['Everyone', 'North follow-up']);
    t.is(ann.body.total, 2);
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => ofContact('bob', key));
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => ofContact('cy', key));
  });
}

test.serial('a manager with the sequences power at South: the mirror image', async (t) => {
  const key = acme.keys.south_seq_mgr!;
  t.deepEqual(contactsOf(await list('south', key)), ['bob', 'dee']);
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => list('north', key));
  t.like((await cancel('south', await fresh('south', 'south'), key)).body, { status: 'cancelled' });
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => cancel('north', data.enrollments['north.dee']!, key));
});

test.serial('a MANAGER key reaching every location: writes location sequences, not organization-wide ones', async (t) => {
  const key = acme.keys.mgr_key!;
  t.is((await list('orgWide', key)).body.total, 4);
  t.like((await cancel('south', await fresh('south', null), key)).body, { status: 'cancelled' });
  await refusedWithoutWrites(t, app, org(), 403, 'insufficient_role', () => cancel('orgWide', data.enrollments['orgWide.cy']!, key));
});

test.serial('MEMBER keys, members\' personal keys and managers without the sequences power: 403, nothing changes', async (t) => {
  const id = data.enrollments['north.ann']!;
  for (const k of ['member_key', 'north_member', 'sam_personal', 'quiet_personal', 'north_mgr', 'weak_mgr_personal', 'staff_mgr_key']) {
    const key = acme.keys[k]!;
    for (const call of [() => list('north', key), () => get('north', 'ann', key), () => analytics('north', key),
      () => cancel('north', id, key), () => ofContact('ann', key)]) {
      await refusedWithoutWrites(t, app, org(), 403, 'insufficient_role', call);
    }
  }
  const reader = acme.keys.org_reader!;
  const res = await refusedWithoutWrites(t, app, org(), 403, 'insufficient_scope', () => list('north', reader));
  t.is(res.body.required, 'sequences:read');
  t.is((await get('north', 'ann', acme.keys.org!)).body.status, 'active');
});

test.serial('over MCP: the tools follow the credential, and refusals are the REST ones', async (t) => {
  const names = ['contacts_list_enrollments', 'sequences_analytics', 'sequences_cancel_enrollment', 'sequences_get_enrollment',
    'sequences_list_enrollments'];
  const ours = (all: string[]) => all.filter((n) => names.includes(n)).sort();
  t.deepEqual(ours(await toolNames(app, acme.keys.org!)), names);
  t.deepEqual(ours(await toolNames(app, acme.keys.north_seq_mgr!)), names);
  t.deepEqual(ours(await toolNames(app, acme.keys.member_key!)), []);
  t.deepEqual(ours(await toolNames(app, acme.keys.north_mgr!)), []);
  const orgWide = await refusedWithoutWrites(t, app, org(), 403, 'insufficient_role', async () => {
    const res = await mcpCall(app, acme.keys.north_seq_mgr!, 'sequences_cancel_enrollment',
      { sequenceId: data.orgWide, enrollmentId: data.enrollments['orgWide.ann'] });
    const body = errorEnvelope(res.body.result);
    return { status: body.statusCode as number, body };
  });
  t.true(Boolean(orgWide));
  const south = await mcpCall(app, acme.keys.north_seq_mgr!, 'sequences_get_enrollment',
    { sequenceId: data.south, enrollmentId: data.enrollments['south.ann'] });
  t.true(south.body.result.isError);
  t.like(errorEnvelope(south.body.result), { statusCode: 404 });
});
