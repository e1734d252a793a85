// contacts_search by q through the rarest pieces of q (app_hidden.search_pieces): the trigram index is
// asked only for up to three pieces of q chosen by how common they are, and every candidate is
// checked against the whole q, so the results must not depend on the counted shares. Random
// queries are answered against an independent in-memory evaluation with no shares, with shares
// counted from the data, and with shares made up at random. Also: the renderer that reads a
// contact's related rows as the owner lists only the locations in the caller's reach. An
// organization with fewer contacts than the index would hand over reads its own rows instead
// (app_hidden.contacts_matching's test): the same answers either way.
import test from 'ava';
import fc from 'fast-check';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { prng } from '../helpers/random.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;

interface Person { id?: string; name: string; email: string; phone: string }

const rnd = prng(20261122);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
// Few first and last names, so pieces repeat across contacts and within words ("ern", "dez").
const FIRST = ['Richard', 'Cynthia', 'Mary', 'Maryann', 'Ann', 'Anna', 'Hernan', 'Dez', 'Lee', 'Al'];
const LAST = ['Hernandez', 'Fernandez', 'Herrera', 'Lee', 'Leeds', 'Smith', 'Smithson', 'Nguyen', 'O\'Hara', 'Ng'];
const people: Person[] = Array.from({ length: 80 }, (_, i) => {
  const name = `${pick(FIRST)} ${pick(LAST)}`;
  return {
    name,
    email: `${name.toLowerCase().replace(/[^a-z]+/g, '.')}${i}@${pick(['example.com', 'mail.example', 'ex-ample.org'])}`,
    phone: `+1555${String(Math.floor(rnd() * 10_000_000)).padStart(7, '0')}`,
  };
});

test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture('Pieces A')));
  other = await app.apply(acmeFixture('Pieces B'));
  for (const p of people) {
    const res = await app.request('POST', '/api/v1/contacts', { key: acme.keys.org, body: { name: p.name, email: p.email, phone: p.phone } });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    p.id = res.body.id;
  }
  // The other organization has the same names: its contacts are candidates of the index too.
  for (const p of people.slice(0, 30)) {
    await app.request('POST', '/api/v1/contacts', { key: other.keys.org, body: { name: p.name, email: `b.${p.email}`, phone: p.phone } });
  }
});
test.after.always(async () => { await app?.close(); });

/** The search rule of the spec, evaluated over the organization's contacts in memory. */
function expected(q: string): string[] {
  const all = [...people, ...fixtureContacts];
  const needle = q.toLowerCase();
  const phoneLike = /^\+?[0-9 ()[\]-]+$/.test(q) && /[ ()[\]-]/.test(q) && q.replace(/[^0-9]/g, '').length >= 3;
  const digits = q.replace(/[^0-9+]/g, '');
  return all.filter((p) => [p.name, p.email, p.phone].some((f) => f != null && f.toLowerCase().includes(needle))
    || (phoneLike && p.phone != null && p.phone.includes(digits))).map((p) => p.id!).sort();
}
let fixtureContacts: Person[] = [];

async function found(q: string): Promise<string[]> {
  const res = await app.request('GET', `/api/v1/contacts?q=${encodeURIComponent(q)}&limit=100`, { key: acme.keys.org });
  if (res.status !== 200) throw new Error(`${q}: ${res.status} ${JSON.stringify(res.body)}`);
  if (res.body.total !== res.body.items.length) throw new Error(`${q}: total ${res.body.total} for ${res.body.items.length} items`);
  return res.body.items.map((c: { id: string }) => c.id).sort();
}

const owner = (sql: string, params: unknown[] = []) => app.db.owner.query(sql, params);
const pieces = async (pattern: string) => (await owner('select app_hidden.search_pieces($1) as p', [pattern])).rows[0].p as string[];

/** Queries a receptionist types: parts of names, emails and phones, in any case, and noise. */
const queryOf = fc.oneof(
  fc.tuple(fc.constantFrom(...people), fc.constantFrom('name', 'email', 'phone'), fc.nat(), fc.nat(), fc.boolean())
    .map(([p, field, a, b, upper]) => {
      const text = p[field as 'name' | 'email' | 'phone'];
      const start = a % text.length;
      const piece = text.slice(start, start + 1 + (b % (text.length - start)));
      return upper ? piece.toUpperCase() : piece;
    }),
  fc.constantFrom(...people).map((p) => `${p.phone.slice(4, 7)}-${p.phone.slice(7)}`),
  fc.constantFrom(...people).map((p) => `(${p.phone.slice(2, 5)}) ${p.phone.slice(5, 8)}`),
  fc.stringMatching(/^[a-z0-9 .@'-]{1,12}$/),
  fc.constantFrom('ern', 'dez', 'Hernandez', 'ann lee', 'Mary Ann', 'nandez', 'smith', 'LEE', '%', '_', 'a_b', 'x@y', '555'),
);

async function agreeWithMemory(t: import('ava').ExecutionContext, label: string) {
  await fc.assert(fc.asyncProperty(queryOf, async (q) => {
    const got = await found(q);
    const want = expected(q);
    if (JSON.stringify(got) !== JSON.stringify(want)) t.log(label, q, await pieces(`%${q}%`));
    return JSON.stringify(got) === JSON.stringify(want);
  }), { numRuns: 120, seed: 42 });
  t.pass(label);
}

test.serial('q finds exactly the contacts containing it, whatever the trigram shares', async (t) => {
  const { rows } = await owner(`select id, name, email::text as email, phone from app_public.contacts where organization_id = $1`, [acme.organization_id]);
  fixtureContacts = rows.filter((r) => !people.some((p) => p.id === r.id));

  await owner('delete from app_private.search_trigrams');
  t.deepEqual(await pieces('%Richard Hernandez%'), ['%Richard Hernandez%', '%Richard Hernandez%', '%Richard Hernandez%'],
    'with no shares counted the whole pattern is looked up');
  await agreeWithMemory(t, 'no shares');

  const counted = (await owner('select app_private.refresh_search_trigrams() as n')).rows[0].n as number;
  t.true(counted > 50, `counted ${counted} pieces`);
  const chosen = await pieces('%Richard Hernandez%');
  t.is(chosen.length, 3);
  t.true(chosen.every((p) => /^%[a-z0-9]{3}%$/.test(p)), `pieces of a name: ${chosen}`);
  t.true(chosen.some((p) => 'richard'.includes(p.slice(1, 4))) && chosen.some((p) => 'hernandez'.includes(p.slice(1, 4))),
    'pieces come from both words: two pieces of one word narrow little');
  t.deepEqual(await pieces('%ab%'), ['%ab%', '%ab%', '%ab%'], 'under three letters the pattern is looked up whole');
  await agreeWithMemory(t, 'counted shares');

  // Shares made up at random: a bad choice of pieces may cost time, never change results.
  await owner(`update app_private.search_trigrams set share = random()`);
  await owner(`insert into app_private.search_trigrams (trigram, share) values ('ern', 0.000001), ('zzz', 1) on conflict (trigram) do update set share = excluded.share`);
  await agreeWithMemory(t, 'random shares');
});

test.serial('an organization with fewer contacts than the index would hand over reads its own rows, with the same answers', async (t) => {
  await owner('analyze app_public.contacts');
  const { rows: [sizes] } = await owner(`select (select reltuples from pg_class where oid = 'app_public.contacts'::regclass) as everyone,
    (select sum(n) from app_private.contact_counts where organization_id = $1)::int as own`, [acme.organization_id]);
  t.true(sizes.everyone > sizes.own, `the table holds other organizations' contacts too (${sizes.everyone} rows, ${sizes.own} of acme)`);
  const share = async (q: string) => (await owner('select app_hidden.search_rarest_share($1) as s', [q])).rows[0].s as number;

  // every piece as common as can be: any organization smaller than the table reads its own rows
  await owner(`update app_private.search_trigrams set share = 1`);
  t.is(await share('%Hernandez%'), 1);
  t.is(await share('%ab%'), 1, 'a q with no piece of three: the index cannot narrow it');
  await agreeWithMemory(t, 'own rows');

  // every piece rare: the index
  await owner(`update app_private.search_trigrams set share = 0.000001`);
  t.true(await share('%Hernandez%') < 0.0001);
  t.is((await owner(`select count(*)::int as n from app_private.search_trigrams where trigram = 'qxq'`)).rows[0].n, 0);
  t.true(Math.abs(await share('%qxq%') - 0.00001) < 1e-9, 'a piece the sample never saw counts as rare');
  await agreeWithMemory(t, 'index');
  await owner('select app_private.refresh_search_trigrams()');
});

test.serial('the trigram index serves the pieces, and the organization is checked on each candidate', async (t) => {
  await owner('select app_private.refresh_search_trigrams()');
  const client = await app.db.owner.connect();
  try {
    await client.query('begin');
    await client.query(`select set_config('svc.organization_id', $1, true)`, [acme.organization_id]);
    await client.query('set local enable_seqscan = off'); // the table is small here
    const p = await client.query(`select app_hidden.search_pieces('%Hernandez%') as p`);
    const { rows } = await client.query(`explain (costs off) select c.id from app_public.contacts c
       where app_hidden.contact_search_text(c.name, c.email, c.phone) ilike $1 and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike $2
         and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike $3`, p.rows[0].p);
    await client.query('rollback');
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    t.regex(plan, /Bitmap Index Scan on contacts_search/, 'the trigram index serves the pieces');
    t.false(plan.includes('Hernandez'), 'the whole q is not an index condition');
    t.deepEqual(p.rows[0].p.length, 3);
  } finally {
    client.release();
  }
  // Another organization's contacts with the same names are candidates, never answers.
  const mine = await found('Hernandez');
  const { rows } = await owner(`select id from app_public.contacts where organization_id = $1`, [other.organization_id]);
  t.true(mine.length > 0);
  t.false(mine.some((id) => rows.some((r) => r.id === id)));
  const theirs = await app.request('GET', '/api/v1/contacts?q=Hernandez&limit=100', { key: other.keys.org });
  t.false(theirs.body.items.some((c: { id: string }) => mine.includes(c.id)));
});

test.serial('a location-limited credential sees only the locations in its reach on a contact', async (t) => {
  const both = await app.request('POST', '/api/v1/contacts', {
    key: acme.keys.org, body: { email: 'two.places@example.com', name: 'Two Places', location_ids: [acme.ids.north, acme.ids.south] },
  });
  t.is(both.status, 200, JSON.stringify(both.body));
  t.deepEqual([...both.body.location_ids].sort(), [acme.ids.north, acme.ids.south].sort());
  for (const read of [
    () => app.request('GET', `/api/v1/contacts/${both.body.id}`, { key: acme.keys.north_mgr }),
    async () => {
      const res = await app.request('GET', '/api/v1/contacts?q=two.places', { key: acme.keys.north_mgr });
      return { ...res, body: res.body.items[0] };
    },
    async () => {
      const res = await app.request('GET', '/api/v1/contacts?email=two.places@example.com', { key: acme.keys.north_mgr });
      return { ...res, body: res.body.items[0] };
    },
  ]) {
    const res = await read();
    t.is(res.status, 200);
    t.deepEqual(res.body.location_ids, [acme.ids.north]);
  }
  const whole = await app.request('GET', `/api/v1/contacts/${both.body.id}`, { key: acme.keys.org });
  t.deepEqual([...whole.body.location_ids].sort(), [acme.ids.north, acme.ids.south].sort());
});

test.serial('the renderer answers nothing for a contact of another organization', async (t) => {
  const { rows: [theirs] } = await owner(`select id from app_public.contacts where organization_id = $1 limit 1`, [other.organization_id]);
  const client = await app.db.owner.connect();
  try {
    await client.query('begin');
    await client.query(`select set_config('svc.organization_id', $1, true), set_config('svc.location_ids', '*', true)`, [acme.organization_id]);
    const res = await client.query(`select app_hidden.contact_json(c) as j from app_public.contacts c where c.id = $1`, [theirs.id]);
    t.is(res.rows[0].j, null, 'a row of another organization renders as nothing');
    const page = await client.query(`select app_hidden.contacts_json(array(select c from app_public.contacts c
      where c.organization_id in ($1, $2) order by c.organization_id = $1, c.email)) as j`, [acme.organization_id, other.organization_id]);
    const mine = await client.query(`select count(*)::int as n from app_public.contacts where organization_id = $1`, [acme.organization_id]);
    t.is(page.rows[0].j.length, mine.rows[0].n, 'a page renders only the caller organization\'s contacts');
    await client.query('rollback');
  } finally {
    client.release();
  }
  const analyst = await owner(`select has_function_privilege('svc_analyst', 'app_hidden.contacts_json(app_public.contacts[])', 'execute') as can`);
  t.false(analyst.rows[0].can, 'analysts read the tables under their policies, not through the renderer');
});
