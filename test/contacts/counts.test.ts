// contacts_search without a filter takes its total from app_private.contact_counts (deltas written
// by the statements that insert or delete contacts) for a caller that reaches every contact, and
// counts under its policies for others. The totals must stay exact: after contacts made through
// the API and in bulk, deleted, rolled back, folded, truncated, and in each organization alone.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from './helpers.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let a: Applied;
let b: Applied;
test.before(async () => {
  ({ app, tenant: a } = await startWithTenant(contactsFixture('Counts A')));
  b = await app.apply(contactsFixture('Counts B'));
});
test.after.always(async () => { await app?.close(); });

const owner = (sql: string, params: unknown[] = []) => app.db.owner.query(sql, params);
const rows = async (org: string) => Number((await owner(`select count(*) as n from app_public.contacts where organization_id = $1`, [org])).rows[0].n);
const deltas = async (org: string) => Number((await owner(`select count(*) as n from app_private.contact_counts where organization_id = $1`, [org])).rows[0].n);
const total = async (key: string) => {
  const r = await app.request('GET', '/api/v1/contacts', { key });
  if (r.status !== 200) throw new Error(`contacts_search answered ${r.status}`);
  return r.body.total as number;
};

test.serial('the unfiltered total of a caller that reaches every contact is the organization\'s count, through every kind of change', async (t) => {
  const key = a.keys.org!;
  t.is(await total(key), await rows(a.organization_id), 'as the fixture left it');

  // through the API: a new contact counts, an existing one upserted again does not
  for (const i of [1, 2, 3]) {
    t.is((await app.request('POST', '/api/v1/contacts', { key, body: { email: `count${i}@example.com`, name: `Count ${i}` } })).status, 200);
  }
  t.is((await app.request('POST', '/api/v1/contacts', { key, body: { email: 'count1@example.com', name: 'Count One' } })).status, 200);
  t.is(await total(key), await rows(a.organization_id));

  // in bulk, as an import does, and deleted
  await owner(`insert into app_public.contacts (organization_id, name, email)
    select $1, 'Bulk ' || g, 'bulk' || g || '@example.com' from generate_series(1, 250) g`, [a.organization_id]);
  t.is(await total(key), await rows(a.organization_id));
  await owner(`delete from app_public.contacts where organization_id = $1 and email like 'bulk1%@example.com'`, [a.organization_id]);
  t.is(await total(key), await rows(a.organization_id));

  // a rolled-back insert leaves nothing counted
  const before = await total(key);
  const c = await app.db.owner.connect();
  try {
    await c.query('begin');
    await c.query(`insert into app_public.contacts (organization_id, name) select $1, 'Gone ' || g from generate_series(1, 40) g`, [a.organization_id]);
    await c.query('rollback');
  } finally {
    c.release();
  }
  t.is(await total(key), before);

  // folded into one row, the sum is the same
  t.true(await deltas(a.organization_id) > 1);
  await owner(`select app_private.fold_contact_counts($1)`, [a.organization_id]);
  t.is(await deltas(a.organization_id), 1);
  t.is(await total(key), await rows(a.organization_id));

  // the other organization's count never moved with these
  t.is(await total(b.keys.org!), await rows(b.organization_id));

  // the total is the counts' (not a count of the rows), and only for a caller that reaches them all
  const counted = await total(key);
  const north = await total(a.keys.north_mgr!);
  await owner(`insert into app_private.contact_counts (organization_id, n) values ($1, 1000)`, [a.organization_id]);
  t.is(await total(key), counted + 1000);
  t.is(await total(a.keys.north_mgr!), north);
  await owner(`insert into app_private.contact_counts (organization_id, n) values ($1, -1000)`, [a.organization_id]);

  // without contact details (a card page) the total is the same
  t.is((await app.request('GET', '/api/v1/contacts?page=2&limit=10', { key })).body.total, await rows(a.organization_id));
});

test.serial('a caller that reaches only some contacts counts those, not the organization\'s', async (t) => {
  const reached = await total(a.keys.north_mgr!);
  t.true(reached < await rows(a.organization_id));
  // the contacts linked to North, as its manager's policies see them
  const { rows: [r] } = await owner(`select count(distinct cl.contact_id) as n from app_public.contact_locations cl
    where cl.organization_id = $1 and cl.location_id = $2`, [a.organization_id, a.ids.north]);
  t.is(reached, Number(r.n));
});

test.serial('many small statements fold as they go, and a truncate leaves no count', async (t) => {
  for (let i = 0; i < 200; i++) {
    await owner(`insert into app_public.contacts (organization_id, name) values ($1, $2)`, [b.organization_id, `One by one ${i}`]);
  }
  t.true(await deltas(b.organization_id) < 200, 'some of the 200 deltas were folded');
  t.is(await total(b.keys.org!), await rows(b.organization_id));
  await owner(`truncate app_public.contacts cascade`);
  t.is(Number((await owner(`select count(*) as n from app_private.contact_counts`)).rows[0].n), 0);
  t.is(await total(a.keys.org!), 0);
  t.is(await total(b.keys.org!), 0);
});
