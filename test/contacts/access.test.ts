// Who may do what with contacts (spec: Authentication 6–7, Contact): the registry's role rules
// for every operation, field limiting per role, location and own-records reach, and
// isolation between organizations — over HTTP and straight at the SQL.
import test from 'ava';
import type pg from 'pg';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from './helpers.ts';
import { asKey } from '../helpers/sql.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let a: Applied;
let b: Applied;
test.before(async () => {
  ({ app, tenant: a } = await startWithTenant(contactsFixture('Org A')));
  b = await app.apply(contactsFixture('Org B'));
});
test.after.always(async () => { await app?.close(); });

interface Call { op: string; method: string; path: (id: string) => string; body?: unknown }

/** One call per contact operation that takes a contact id, with a valid body. */
const perContact: Call[] = [
  { op: 'contacts_get', method: 'GET', path: (id) => `/api/v1/contacts/${id}` },
  { op: 'contacts_update', method: 'PATCH', path: (id) => `/api/v1/contacts/${id}`, body: { name: 'Changed' } },
  { op: 'contacts_add_note', method: 'POST', path: (id) => `/api/v1/contacts/${id}/notes`, body: { body: 'note' } },
  { op: 'contacts_list_notes', method: 'GET', path: (id) => `/api/v1/contacts/${id}/notes` },
  { op: 'contacts_add_tag', method: 'POST', path: (id) => `/api/v1/contacts/${id}/tags`, body: { name: 'vip' } },
  { op: 'contacts_remove_tag', method: 'DELETE', path: (id) => `/api/v1/contacts/${id}/tags/vip` },
  { op: 'contacts_suppress', method: 'POST', path: (id) => `/api/v1/contacts/${id}/suppress`, body: { channels: ['email'] } },
  { op: 'contacts_record_sms_consent', method: 'POST', path: (id) => `/api/v1/contacts/${id}/sms-consent`, body: {} },
  { op: 'contacts_list_interactions', method: 'GET', path: (id) => `/api/v1/contacts/${id}/interactions` },
];
const call = (c: Call, id: string, key: string | undefined) => app.request(c.method, c.path(id), { key, body: c.body });
const writes = new Set(['contacts_update', 'contacts_add_note', 'contacts_add_tag', 'contacts_remove_tag', 'contacts_suppress', 'contacts_record_sms_consent']);
const readsScoped = new Set(['contacts_get', 'contacts_list_interactions']);
/** MEMBER credentials, and MANAGER ones without the contacts power: only the scoped reads are theirs. */
const MEMBERS = ['member_key', 'north_member', 'sam_personal', 'quiet_personal', 'own_personal'];
const WITHOUT_CONTACTS_POWER = ['weak_mgr_personal', 'north_mgr_nopower'];

/** What a credential gets for a contact it cannot reach: its scope's or role's 403 where the operation refuses it, else 404. */
function outOfReach(ref: string, c: Call): { status: number; error: string } {
  if (ref === 'org_reader' && writes.has(c.op)) return { status: 403, error: 'insufficient_scope' };
  if (!readsScoped.has(c.op) && [...MEMBERS, ...WITHOUT_CONTACTS_POWER].includes(ref)) return { status: 403, error: 'insufficient_role' };
  return { status: 404, error: 'not_found' };
}

// ---------------------------------------------------------------------------------------------
// Roles and scopes (the registry's flags, enforced by app_hidden.authenticate)
// ---------------------------------------------------------------------------------------------

test.serial('members: scoped reads allowed; writes and notes are 403 insufficient_role', async (t) => {
  for (const key of ['member_key', 'north_member', 'sam_personal']) {
    for (const c of perContact) {
      const res = await call(c, a.ids.ann!, a.keys[key]);
      if (readsScoped.has(c.op)) t.is(res.status, 200, `${key} ${c.op}`);
      else {
        t.is(res.status, 403, `${key} ${c.op}`);
        t.is(res.body.error, 'insufficient_role', `${key} ${c.op}`);
      }
    }
    const up = await app.request('POST', '/api/v1/contacts', { key: a.keys[key], body: { email: 'm@example.com' } });
    t.is(up.body.error, 'insufficient_role', key);
    t.is((await app.request('GET', '/api/v1/contacts', { key: a.keys[key] })).status, 200, key);
    t.is((await app.request('GET', '/api/v1/contacts/stages', { key: a.keys[key] })).status, 200, key);
  }
});

test.serial('managers: contact writes and notes need the contacts power; upsert is for the whole organization only', async (t) => {
  for (const key of ['weak_mgr_personal', 'north_mgr_nopower']) {
    for (const c of perContact) {
      const res = await call(c, key === 'weak_mgr_personal' ? a.ids.bob! : a.ids.ann!, a.keys[key]);
      t.is(res.status, readsScoped.has(c.op) ? 200 : 403, `${key} ${c.op}`);
      if (!readsScoped.has(c.op)) t.is(res.body.error, 'insufficient_role');
    }
  }
  for (const key of ['mgr_key', 'north_mgr', 'mgr_personal', 'staff_mgr_key']) {
    const up = await app.request('POST', '/api/v1/contacts', { key: a.keys[key], body: { email: 'mgr@example.com' } });
    t.is(up.status, 403, key);
    t.is(up.body.error, 'insufficient_role', key);
  }
  const c = perContact.find((x) => x.op === 'contacts_add_note')!;
  t.is((await call(c, a.ids.phil!, a.keys.north_mgr)).status, 201, 'a manager with the contacts power writes at its location');
});

test.serial('scopes: contacts:read reads, contacts:write is required to write', async (t) => {
  for (const c of perContact) {
    const res = await call(c, a.ids.ann!, a.keys.org_reader);
    if (writes.has(c.op)) {
      t.is(res.status, 403, c.op);
      t.is(res.body.error, 'insufficient_scope');
      t.is(res.body.required, 'contacts:write');
    } else t.is(res.status, 200, c.op);
  }
  const up = await app.request('POST', '/api/v1/contacts', { key: a.keys.org_reader, body: { email: 'r@example.com' } });
  t.is(up.body.required, 'contacts:write');
  for (const c of perContact) t.is((await call(c, a.ids.ann!, undefined)).status, 401, c.op);
});

// ---------------------------------------------------------------------------------------------
// Field limiting
// ---------------------------------------------------------------------------------------------

const CARD = ['email', 'id', 'name', 'phone'];

test.serial('a MEMBER and a MANAGER without the contacts power read only id, name, email and phone', async (t) => {
  for (const key of ['member_key', 'north_member', 'sam_personal', 'north_mgr_nopower']) {
    const one = await app.request('GET', `/api/v1/contacts/${a.ids.ann}`, { key: a.keys[key] });
    t.is(one.status, 200, key);
    t.deepEqual(Object.keys(one.body).sort(), CARD, key);
    t.deepEqual(one.body, { id: a.ids.ann, name: 'Ann Lee', email: 'ann@example.com', phone: '+15551230001' });
    for (const query of ['', '?q=ann', '?email=ann@example.com', '?phone=%2B15551230001']) {
      const res = await app.request('GET', `/api/v1/contacts${query}`, { key: a.keys[key] });
      t.is(res.status, 200, `${key} ${query}`);
      t.true(res.body.items.length > 0, `${key} ${query}`);
      for (const item of res.body.items) t.deepEqual(Object.keys(item).sort(), CARD, `${key} ${query}`);
    }
  }
  const weak = await app.request('GET', `/api/v1/contacts/${a.ids.bob}`, { key: a.keys.weak_mgr_personal });
  t.deepEqual(Object.keys(weak.body).sort(), CARD);
});

test.serial('limited callers get the list by name; others most recently seen first', async (t) => {
  const names = async (key: string) => (await app.request('GET', '/api/v1/contacts?limit=100', { key: a.keys[key] })).body.items.map((c: any) => c.name);
  const byName = await names('member_key');
  t.deepEqual(byName, [...byName].sort((x, y) => (x === null ? 1 : y === null ? -1 : x < y ? -1 : x > y ? 1 : 0)));
  t.is(byName.length, 6);
  const full = (await app.request('GET', '/api/v1/contacts?limit=100', { key: a.keys.org })).body.items;
  t.is(full.at(-1).name, 'Dee Both', 'seen longest ago comes last');
  t.true('tags' in full[0]);
});

test.serial('owners, admins, organization keys and managers with the contacts power read the whole contact', async (t) => {
  for (const key of ['org', 'admin_org', 'owner_personal', 'admin_personal', 'mgr_key', 'north_mgr', 'mgr_personal', 'org_reader']) {
    const res = await app.request('GET', `/api/v1/contacts/${a.ids.ann}`, { key: a.keys[key] });
    t.is(res.status, 200, key);
    t.like(res.body, { tags: ['vip'], stage_id: a.ids.lead, custom_fields: { plan: 'gold' }, notes_count: 2 }, key);
  }
});

// ---------------------------------------------------------------------------------------------
// Location and own-records reach
// ---------------------------------------------------------------------------------------------

test.serial('location-limited credentials: every operation answers 404 for a contact elsewhere or at no location, and writes nothing', async (t) => {
  const cases: [string, string[]][] = [
    ['north_mgr', ['bob', 'cy']],
    ['staff_mgr_key', ['bob', 'cy']],
    ['mgr_personal', ['bob', 'cy']],
    ['south_mgr', ['ann', 'cy', 'eve']],
  ];
  for (const [key, targets] of cases) {
    for (const target of targets) {
      for (const c of perContact) {
        await refusedWithoutWrites(t, app, a.organization_id, 404, 'not_found', () => call(c, a.ids[target]!, a.keys[key]));
      }
    }
  }
  for (const key of ['north_member', 'sam_personal', 'north_mgr_nopower']) {
    for (const op of ['contacts_get', 'contacts_list_interactions']) {
      const c = perContact.find((x) => x.op === op)!;
      t.is((await call(c, a.ids.bob!, a.keys[key])).status, 404, `${key} ${op}`);
      t.is((await call(c, a.ids.cy!, a.keys[key])).status, 404, `${key} ${op}`);
    }
  }
});

test.serial('location-limited credentials search only contacts linked to their locations', async (t) => {
  const found = async (key: string, query = '') =>
    (await app.request('GET', `/api/v1/contacts${query}${query ? '&' : '?'}limit=100`, { key: a.keys[key] })).body.items.map((c: any) => c.id).sort();
  const north = [a.ids.ann, a.ids.dee, a.ids.eve, a.ids.phil].sort();
  t.deepEqual(await found('north_mgr'), north);
  t.deepEqual(await found('sam_personal'), north);
  t.deepEqual(await found('south_mgr'), [a.ids.bob, a.ids.dee].sort());
  t.deepEqual(await found('north_mgr', '?q=example.com'), [a.ids.ann, a.ids.dee, a.ids.eve].sort());
  t.deepEqual(await found('north_mgr', '?email=bob@example.com'), []);
  t.deepEqual(await found('north_mgr', '?phone=%2B15551230002'), []);
  t.deepEqual(await found('north_mgr', '?q=Nowhere'), []);
  const total = (await app.request('GET', '/api/v1/contacts', { key: a.keys.north_mgr })).body.total;
  t.is(total, 4, 'the total counts only contacts in reach');
});

test.serial('a manager with the contacts power writes to contacts at its locations', async (t) => {
  const key = a.keys.north_mgr;
  const dee = a.ids.dee!;
  t.is((await app.request('PATCH', `/api/v1/contacts/${dee}`, { key, body: { name: 'Dee Both' } })).status, 200);
  t.is((await app.request('POST', `/api/v1/contacts/${dee}/tags`, { key, body: { name: 'north-tag' } })).status, 200);
  t.is((await app.request('DELETE', `/api/v1/contacts/${dee}/tags/north-tag`, { key })).status, 200);
  t.is((await app.request('GET', `/api/v1/contacts/${dee}/notes`, { key })).status, 200);
  t.is((await app.request('POST', `/api/v1/contacts/${dee}/sms-consent`, { key, body: {} })).status, 200);
  t.is((await app.request('POST', `/api/v1/contacts/${dee}/suppress`, { key, body: { channels: ['sms'] } })).status, 200);
});

test.serial('a MEMBER at the own-records level finds none of the organization\'s contacts until they are its clients', async (t) => {
  const key = a.keys.own_personal;
  const list = await app.request('GET', '/api/v1/contacts', { key });
  t.is(list.status, 200);
  t.like(list.body, { items: [], total: 0 });
  t.is((await app.request('GET', `/api/v1/contacts?email=ann@example.com`, { key })).body.total, 0);
  for (const op of ['contacts_get', 'contacts_list_interactions']) {
    t.is((await call(perContact.find((x) => x.op === op)!, a.ids.ann!, key)).status, 404, op);
  }
});

// ---------------------------------------------------------------------------------------------
// Isolation between organizations
// ---------------------------------------------------------------------------------------------

test.serial('every key of one organization gets 404 (or its role\'s 403) for every contact of another, on every operation', async (t) => {
  const targets = ['ann', 'bob', 'cy', 'dee', 'eve', 'phil'].map((r) => b.ids[r]!);
  await unchanged(t, app, [a.organization_id, b.organization_id], async () => {
    for (const [ref, key] of Object.entries(a.keys)) {
      for (const c of perContact) {
        for (const id of targets) {
          const res = await call(c, id, key);
          t.like(res, { status: outOfReach(ref, c).status, body: { error: outOfReach(ref, c).error } }, `${ref} ${c.op}`);
          t.false(JSON.stringify({ ...res.body, path: undefined }).includes(id));
        }
      }
    }
  }, 'nothing of either organization changed');
});

test.serial('search, upsert and stages never reach another organization', async (t) => {
  const bIds = new Set(Object.values(b.ids));
  for (const query of ['', '?q=example', '?email=ann@example.com', '?phone=%2B15551230001', '?q=Ann']) {
    const res = await app.request('GET', `/api/v1/contacts${query}`, { key: a.keys.org });
    t.true(res.body.items.every((c: any) => !bIds.has(c.id)), query);
  }
  const stages = await app.request('GET', '/api/v1/contacts/stages', { key: a.keys.org });
  t.deepEqual(stages.body.stages.map((s: any) => s.id), [a.ids.lead, a.ids.won]);
  await unchanged(t, app, b.organization_id, async () => {
    const up = await app.request('POST', '/api/v1/contacts', { key: a.keys.org, body: { email: 'ANN@example.com', name: 'A\'s Ann' } });
    t.is(up.body.id, a.ids.ann, 'the same email in another organization is another contact');
    // another organization's location is unknown here, its stage not of this pipeline
    await refusedWithoutWrites(t, app, a.organization_id, 400, 'bad_request',
      () => app.request('POST', '/api/v1/contacts', { key: a.keys.org, body: { email: 'new@example.com', location_ids: [b.ids.north] } }));
    await refusedWithoutWrites(t, app, a.organization_id, 400, 'bad_request',
      () => app.request('PATCH', `/api/v1/contacts/${a.ids.bob}`, { key: a.keys.org, body: { stage_id: b.ids.lead } }));
  });
});

// ---------------------------------------------------------------------------------------------
// Straight at the SQL: the policies, not the TypeScript, keep these rules
// ---------------------------------------------------------------------------------------------

const as = <T>(key: string, fn: (c: pg.PoolClient) => Promise<T>) => asKey(app, key, fn);

test.serial('SQL: the functions limit fields for members whoever calls them', async (t) => {
  const card = await as(a.keys.member_key!, (c) => c.query(`select app_public.contacts_get($1) as r`, [a.ids.ann]));
  t.deepEqual(Object.keys(card.rows[0].r).sort(), CARD);
  const page = await as(a.keys.member_key!, (c) => c.query(`select app_public.contacts_search(null, null, null, 1, 100) as r`));
  for (const item of page.rows[0].r.items) t.deepEqual(Object.keys(item).sort(), CARD);
  const inter = await as(a.keys.sam_personal!, (c) => c.query(`select app_public.contacts_list_interactions($1, null, null, 1, 25) as r`, [a.ids.ann]));
  t.true(inter.rows[0].r.items.every((i: any) => !('captured_fields' in i)));
});

test.serial('SQL: the request role cannot write around the functions\' rules', async (t) => {
  const denied = async (key: string, text: string, values: unknown[]) =>
    t.throwsAsync(as(key, (c) => c.query(text, values)), { code: '42501' }, `${text}`);
  await denied(a.keys.org!, `insert into app_public.contacts (organization_id, name) values ($1, 'no email')`, [a.organization_id]);
  await denied(a.keys.org!, `insert into app_public.contacts (organization_id, email) values ($1, 'x@example.com')`, [b.organization_id]);
  await denied(a.keys.north_mgr!, `insert into app_public.contacts (organization_id, email) values ($1, 'x@example.com')`, [a.organization_id]);
  await denied(a.keys.org!, `update app_public.contacts set notes_count = 0 where id = $1`, [a.ids.ann]);
  await denied(a.keys.org!, `update app_public.contacts set organization_id = $2 where id = $1`, [a.ids.ann, b.organization_id]);
  await denied(a.keys.org!, `insert into app_public.contact_notes (organization_id, contact_id, body, source) values ($1, $2, 'x', 'system')`, [a.organization_id, a.ids.ann]);
  await denied(a.keys.org!, `insert into app_public.contact_notes (organization_id, contact_id, body, source) values ($1, $2, 'x', 'user')`, [b.organization_id, b.ids.ann]);
  await denied(a.keys.org!, `delete from app_public.contact_notes where contact_id = $1`, [a.ids.ann]);
  await denied(a.keys.org!, `update app_public.contact_notes set body = 'edited' where contact_id = $1`, [a.ids.ann]);
  await denied(a.keys.org!, `delete from app_public.email_suppressions where organization_id = $1`, [a.organization_id]);
  await denied(a.keys.org!, `insert into app_public.interactions (organization_id, contact_id, channel, status) values ($1, $2, 'voice', 'completed')`, [a.organization_id, a.ids.ann]);
  const updated = await as(a.keys.north_mgr!, (c) => c.query(`update app_public.contacts set name = 'x' where id = $1`, [a.ids.bob]));
  t.is(updated.rowCount, 0, 'a contact out of reach is not updated');
  const weak = await as(a.keys.north_mgr_nopower!, (c) => c.query(`update app_public.contacts set name = 'x' where id = $1`, [a.ids.ann]));
  t.is(weak.rowCount, 0, 'without the contacts power nothing is updated');
});

test.serial('SQL: suppressions, opt-outs and interactions are visible only within reach', async (t) => {
  const count = (key: string, table: string) => as(key, async (c) => (await c.query(`select count(*)::int as n from app_public.${table}`)).rows[0].n as number);
  // eve (north) is suppressed on both channels by the fixture; dee (north and south) was opted out of SMS above
  t.is(await count(a.keys.org!, 'email_suppressions'), 1);
  t.is(await count(a.keys.org!, 'sms_opt_outs'), 2);
  t.is(await count(a.keys.south_mgr!, 'email_suppressions'), 0, 'eve is at north');
  t.is(await count(a.keys.south_mgr!, 'sms_opt_outs'), 1);
  t.is(await count(a.keys.north_mgr!, 'sms_opt_outs'), 2);
  t.is(await count(a.keys.org!, 'interactions'), 5);
  t.is(await count(a.keys.north_mgr!, 'interactions'), 2);
  t.is(await count(a.keys.south_mgr!, 'interactions'), 1, 'ann\'s south interaction is hidden with ann; dee\'s is visible');
  t.is(await count(a.keys.own_personal!, 'interactions'), 0);
  const none = await as(a.keys.org!, async (c) =>
    (await c.query(`select count(*)::int as n from app_public.interactions where organization_id = $1`, [b.organization_id])).rows[0].n);
  t.is(none, 0);
});
