// contacts_upsert writes its row as the owner: app_hidden.contacts_upsert_row
// stands in for the insert, update and select policies of contacts, so it must refuse every
// credential those policies would refuse, write only into the caller's organization and keep
// the phone rule. And the trigram index takes new entries through a short pending list: a
// search must find a contact written a moment ago, before and after the list is merged.
import test from 'ava';
import type pg from 'pg';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from './helpers.ts';
import { asKey } from '../helpers/sql.ts';
import { unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let a: Applied;
let b: Applied;
test.before(async () => {
  ({ app, tenant: a } = await startWithTenant(contactsFixture('Upsert A')));
  b = await app.apply(contactsFixture('Upsert B'));
});
test.after.always(async () => { await app?.close(); });

const as = <T>(key: string | undefined, fn: (c: pg.PoolClient) => Promise<T>) => asKey(app, key, fn);

const upsertRow = (c: pg.PoolClient, email: string, phone: string | null = null) =>
  c.query(`select (app_hidden.contacts_upsert_row($1::citext, 'Row Test', $2, '{"plan":"x"}')).*`, [email, phone]);

test.serial('SQL: the row is refused to every credential that does not reach the whole organization with the contacts power', async (t) => {
  // managers limited to locations or without the power, members, own-records members, and no
  // claims at all (a manager key over the whole organization with the power passes the
  // policies and this function alike; the operation's role rule refuses it, see access.test.ts)
  await unchanged(t, app, a.organization_id, async () => {
    for (const key of ['north_mgr', 'south_mgr', 'north_mgr_nopower', 'member_key', 'north_member', 'staff_mgr_key',
      'mgr_personal', 'weak_mgr_personal', 'sam_personal', 'own_personal', undefined] as const) {
      const err = await t.throwsAsync(as(key && a.keys[key], async (c) => {
        await upsertRow(c, 'refused@example.com');
        // a refused row may not have been written either: read it back inside the same transaction
        return c.query('select 1');
      }), undefined, String(key));
      t.is((err as { code?: string }).code, 'SV403', String(key));
      t.is((err as { message?: string }).message, 'insufficient_role', String(key));
    }
  });
});

test.serial('SQL: whole-organization credentials write the row of their own organization only', async (t) => {
  for (const key of ['org', 'owner_personal', 'admin_personal', 'admin_org'] as const) {
    await unchanged(t, app, b.organization_id, () => as(a.keys[key], async (c) => {
      // ann@example.com exists in both organizations: the row that changes is A's
      const { rows: [row] } = await upsertRow(c, 'ANN@example.com');
      t.is(row.organization_id, a.organization_id, key);
      t.is(row.id, a.ids.ann, key);
      t.is(row.name, 'Row Test', key);
      t.deepEqual(row.field_values.plan, 'x', key);
      const { rows: [fresh] } = await upsertRow(c, `fresh.${key}@example.com`);
      t.is(fresh.organization_id, a.organization_id, key);
      const { rows } = await c.query(`select organization_id from app_public.contacts where email_key = $1`, [`fresh.${key}@example.com`]);
      t.deepEqual(rows.map((r) => r.organization_id), [a.organization_id], key);
    }), `${key}: nothing of the other organization changed`);
  }
});

test.serial('SQL: another contact\'s phone is a conflict and nothing is written', async (t) => {
  await unchanged(t, app, a.organization_id, async () => {
    const err = await t.throwsAsync(as(a.keys.org, (c) => upsertRow(c, 'phone.taken@example.com', '+15551230002')));
    t.is((err as { code?: string }).code, 'SV409');
    // the same phone in another organization is no conflict
    await as(b.keys.org, async (c) => {
      const { rows: [row] } = await upsertRow(c, 'phone.free@example.com', '+15551230099');
      t.is(row.organization_id, b.organization_id);
    });
  });
});

test.serial('SQL: analysts and PUBLIC cannot call the row function; the request role can', async (t) => {
  const can = async (role: string) => (await app.db.owner.query(
    `select has_function_privilege($1, 'app_hidden.contacts_upsert_row(citext, text, text, jsonb)', 'execute') as can`, [role])).rows[0].can;
  t.false(await can('svc_analyst'));
  t.false(await can('public'));
  t.true(await can('svc_request'));
});

test.serial('HTTP: a contact upserted a moment ago is found by q, through the pending list and after it is merged', async (t) => {
  const { rows: [opts] } = await app.db.owner.query(
    `select reloptions from pg_class where oid = 'app_public.contacts_search'::regclass`);
  t.deepEqual([...opts.reloptions].sort(), ['fastupdate=on', 'gin_pending_list_limit=256']);

  const search = async (q: string) => {
    const res = await app.request('GET', `/api/v1/contacts?q=${encodeURIComponent(q)}&limit=100`, { key: a.keys.org });
    t.is(res.status, 200);
    return res.body as { total: number; items: { email: string }[] };
  };
  const one = await app.request('POST', '/api/v1/contacts', { key: a.keys.org, body: { email: 'q.pending@example.com', name: 'Quentin Quokka' } });
  t.is(one.status, 200);
  t.deepEqual((await search('Quokka')).items.map((c) => c.email), ['q.pending@example.com']);
  // an update changes what the index holds for the contact: the old name is gone at once
  await app.request('POST', '/api/v1/contacts', { key: a.keys.org, body: { email: 'q.pending@example.com', name: 'Quentin Wombat' } });
  t.is((await search('Quokka')).total, 0);
  t.is((await search('Wombat')).total, 1);

  // Enough contacts to pass the 256 kB list several times over (each writes about sixty
  // entries), so writers merge it while others are still pending: every one is found.
  const N = 600;
  for (let i = 0; i < N; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => app.request('POST', '/api/v1/contacts', {
      key: a.keys.org,
      body: { email: `numbat.${i + j}@pending.example`, name: `Numbat Pending Longname ${i + j}`, phone: `+1555777${String(i + j).padStart(4, '0')}` },
    })));
  }
  t.is((await search('numbat')).total, N);
  t.is((await search('@pending.example')).total, N);
  t.is((await search('Longname 599')).total, 1);
  t.is((await search('555-777-0421')).total, 1);
  await app.db.owner.query('vacuum app_public.contacts');
  t.is((await search('numbat')).total, N);
  t.is((await search('Wombat')).total, 1);
  // and nothing of another organization shows up
  const theirs = await app.request('GET', '/api/v1/contacts?q=numbat', { key: b.keys.org });
  t.is(theirs.body.total, 0);
});
