// The faster read paths of the contacts area and of MCP keep row-level security the authority: none
// may widen what a credential sees (README, "Contacts"; src/mcp/endpoint.ts). Each answer of a fast
// path is held to the spec's reach rule evaluated by the owner over the rows (the organization, the
// credential's locations, its own clients at the own-records level), and to what the policies let
// the same credential select:
// 1. the unfiltered total from app_private.contact_counts, for every kind of
//    credential, as contacts are added, deleted and moved between locations;
// 2. q searches through both of contacts_matching's ways (the organization's own rows,
//    and the rarest trigram pieces, app_hidden.search_rarest_share), each forced by the shares and
//    the table's statistics, and contacts_search's generic plans shared by every credential on one
//    connection;
// 3. the renderer app_hidden.contacts_json, which reads stage, tags, locations and suppression as the
//    owner: locations only in reach, nothing of another organization (an address suppressed there, a
//    tag or a stage of a contact with the same id);
// 4. a lone JSON tools/call of a read, answered without the SDK: a key without the scope, MCP turned
//    off, agent access off, an OAuth token beyond its scopes and another organization's ids are
//    refused as through the SDK's server and as REST refuses them.
import test from 'ava';
import type pg from 'pg';
import { randomBytes, randomUUID } from 'node:crypto';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { asKey, authenticate } from '../helpers/sql.ts';
import { mcpCall, mcpRpc, rpcMessages } from '../helpers/mcp.ts';
import { contactsFixture } from './helpers.ts';
import { updateOrg } from '../../src/admin/commands.ts';
import { oauthAccessHash, resourceOf } from '../../src/auth/oauth.ts';
import type { Applied } from '../../src/admin/fixture.ts';

/** contactsFixture, with a key that lacks contacts:read and a manager whose agent access is off. */
function fastFixture(name: string, opts: { mcp?: boolean; empty?: boolean } = {}) {
  const base = contactsFixture(name);
  return {
    ...base,
    organization: { ...base.organization, mcp_enabled: opts.mcp ?? true },
    users: [
      ...base.users,
      { ref: 'no_agent', name: 'Nora Noagent', email: 'nora@acme.example', role: 'manager', location_refs: ['north'],
        powers: ['contacts'], agent_access: false },
    ],
    api_keys: [
      ...base.api_keys,
      { ref: 'aud_reader', kind: 'organization', created_by_ref: 'owner', scopes: ['audiences:read'] },
      { ref: 'no_agent_personal', kind: 'personal', user_ref: 'no_agent' },
    ],
    ...(opts.empty ? { stages: [], contacts: [] } : {}),
  };
}

let app: TestApp;
let a: Applied;
let b: Applied;
test.before(async () => {
  ({ app, tenant: a } = await startWithTenant(fastFixture('Fast A')));
  b = await app.apply(fastFixture('Fast B'));
});
test.after.always(async () => { await app?.close(); });

const owner = (text: string, values: unknown[] = []) => app.db.owner.query(text, values);

// ---------------------------------------------------------------------------------------------
// Who reaches what, by the spec's rule (spec: Authentication 6–7; README, "Reach")
// ---------------------------------------------------------------------------------------------

/** A credential: its organization, its key's ref, the locations it reaches (null: all), and whose own clients bound it. */
interface Cred { org: () => Applied; key: string; locations: string[] | null; ownOf?: string }
const A = (key: string, locations: string[] | null, ownOf?: string): Cred => ({ org: () => a, key, locations, ownOf });
const B = (key: string, locations: string[] | null): Cred => ({ org: () => b, key, locations });

/** Every kind of credential that reads contacts: whole-organization ones, location-limited keys, personal keys of managers and members, own records, another organization. */
const CREDS: Cred[] = [
  A('org', null), A('admin_personal', null), A('member_key', null), A('mgr_key', null),
  A('north_mgr', ['north']), A('south_mgr', ['south']), A('staff_mgr_key', ['north']), A('north_mgr_nopower', ['north']),
  A('mgr_personal', ['north']), A('weak_mgr_personal', ['south']),
  A('north_member', ['north']), A('sam_personal', ['north']), A('quiet_personal', ['south']),
  A('own_personal', ['north'], 'own'),
  B('org', null), B('north_mgr', ['north']), { ...B('own_personal', ['north']), ownOf: 'own' },
];

const keyOf = (c: Cred) => c.org().keys[c.key]!;
const label = (c: Cred) => `${c.org() === a ? 'A' : 'B'}.${c.key}`;
/** Reaches every contact of its organization: the callers whose unfiltered total is the kept count. */
const whole = (c: Cred) => c.locations === null && c.ownOf === undefined;

/** The ids the credential may see, by the spec's rule, computed by the owner over the rows (no policy involved). */
async function reach(c: Cred): Promise<string[]> {
  const org = c.org();
  const { rows } = await owner(`select c.id from app_public.contacts c
     where c.organization_id = $1
       and ($2::uuid[] is null or exists (select 1 from app_public.contact_locations cl
             where cl.organization_id = c.organization_id and cl.contact_id = c.id and cl.location_id = any($2::uuid[])))
       and ($3::uuid is null or exists (select 1 from app_private.own_clients o
             where o.organization_id = c.organization_id and o.person_id = $3 and o.contact_id = c.id))
     order by c.id`,
  [org.organization_id, c.locations && c.locations.map((l) => org.ids[l]!), c.ownOf ? org.ids[c.ownOf]! : null]);
  return rows.map((r) => r.id as string);
}

/** What the policies let the credential select from the table itself. */
const policies = (c: Cred): Promise<string[]> =>
  asKey(app, keyOf(c), async (client) => (await client.query(`select id from app_public.contacts order by id`)).rows.map((r) => r.id as string));

/** The ids among `ids` whose name, email or phone contains q (case-insensitive), or whose phone holds a phone-like q's digits. */
async function matching(ids: string[], q: string): Promise<string[]> {
  const phoneLike = /^\+?[0-9 ()[\]-]+$/.test(q) && /[ ()[\]-]/.test(q) && q.replace(/[^0-9]/g, '').length >= 3;
  const { rows } = await owner(`select c.id from app_public.contacts c where c.id = any($1::uuid[])
      and (strpos(lower(coalesce(c.name, '')), lower($2)) > 0 or strpos(lower(coalesce(c.email::text, '')), lower($2)) > 0
           or strpos(lower(coalesce(c.phone, '')), lower($2)) > 0 or ($3::text is not null and strpos(coalesce(c.phone, ''), $3) > 0))
      order by c.id`, [ids, q, phoneLike ? q.replace(/[^0-9+]/g, '') : null]);
  return rows.map((r) => r.id as string);
}

const sorted = (ids: string[]) => [...ids].sort();

/** contacts_search over REST: one page of up to 100, its total and its ids. */
async function search(c: Cred, query: Record<string, string> = {}): Promise<{ total: number; ids: string[]; items: any[] }> {
  const params = new URLSearchParams({ limit: '100', ...query });
  const res = await app.request('GET', `/api/v1/contacts?${params}`, { key: keyOf(c) });
  if (res.status !== 200) throw new Error(`${label(c)} ${params}: ${res.status} ${JSON.stringify(res.body)}`);
  return { total: res.body.total, ids: sorted(res.body.items.map((i: { id: string }) => i.id)), items: res.body.items };
}

/** Each credential's unfiltered page and total are exactly its reach (and what its policies select). */
async function everyTotalIsItsReach(t: import('ava').ExecutionContext, when: string) {
  for (const c of CREDS) {
    const expected = await reach(c);
    t.deepEqual(await policies(c), expected, `${when}: the policies of ${label(c)} agree with the spec's reach`);
    const page = await search(c);
    t.is(page.total, expected.length, `${when}: total of ${label(c)}`);
    t.deepEqual(page.ids, expected, `${when}: items of ${label(c)}`);
    // a later page, of the card or the detail listing, echoes the same total
    const later = await app.request('GET', '/api/v1/contacts?page=2&limit=2', { key: keyOf(c) });
    t.is(later.status, 200);
    t.is(later.body.total, expected.length, `${when}: total of a later page of ${label(c)}`);
  }
}

/** Contacts written straight to the tables, as an import does: each at the given locations of A (refs; none for []). */
async function bulk(prefix: string, placements: string[][]): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, locations] of placements.entries()) {
    const { rows: [row] } = await owner(`insert into app_public.contacts (organization_id, name, email, phone)
      values ($1, $2, $3, $4) returning id`,
    [a.organization_id, `${prefix} ${i}`, `${prefix.toLowerCase()}${i}@bulk.example`, `+1555777${4000 + i}`]);
    for (const l of locations) {
      await owner(`insert into app_public.contact_locations (organization_id, contact_id, location_id) values ($1, $2, $3)`,
        [a.organization_id, row.id, a.ids[l]]);
    }
    ids.push(row.id);
  }
  return ids;
}

async function move(id: string, from: string[], to: string[]) {
  await owner(`delete from app_public.contact_locations where organization_id = $1 and contact_id = $2 and location_id = any($3::uuid[])`,
    [a.organization_id, id, from.map((l) => a.ids[l])]);
  for (const l of to) {
    await owner(`insert into app_public.contact_locations (organization_id, contact_id, location_id) values ($1, $2, $3)
      on conflict do nothing`, [a.organization_id, id, a.ids[l]]);
  }
}

// ---------------------------------------------------------------------------------------------
// 1. The kept count (app_private.contact_counts)
// ---------------------------------------------------------------------------------------------

test.serial('the unfiltered total is each credential\'s own reach, never the organization\'s count, through additions, deletions and moves', async (t) => {
  await everyTotalIsItsReach(t, 'as the fixture left it');

  // added: straight to the tables at each location and at none, and through the API with locations
  const added = await bulk('Bulk', [['north'], ['north'], ['north'], ['south'], ['south'], ['north', 'south'], [], []]);
  for (const [i, locations] of [['north'], ['south'], []].entries()) {
    const res = await app.request('POST', '/api/v1/contacts', { key: a.keys.org,
      body: { email: `api${i}@bulk.example`, name: `Api ${i}`, location_ids: locations.map((l) => a.ids[l]) } });
    t.is(res.status, 200);
    added.push(res.body.id);
  }
  await everyTotalIsItsReach(t, 'after additions');

  // deleted: one at North, one at both, one at none
  await owner(`delete from app_public.contacts where organization_id = $1 and id = any($2::uuid[])`, [a.organization_id, [added[0], added[5], added[6]]]);
  await everyTotalIsItsReach(t, 'after deletions');

  // moved: North to South, South to none, none to North; the organization's count does not move
  const before = (await search(A('org', null))).total;
  await move(added[1]!, ['north'], ['south']);
  await move(added[3]!, ['south'], []);
  await move(added[7]!, [], ['north']);
  t.is((await search(A('org', null))).total, before);
  await everyTotalIsItsReach(t, 'after moves');

  // own clients: one at North (reached), one at South (out of Olga's locations), one moved to North
  for (const id of [a.ids.ann!, a.ids.bob!, added[7]!]) {
    await owner(`insert into app_private.own_clients (organization_id, person_id, contact_id, source) values ($1, $2, $3, 'appointments')`,
      [a.organization_id, a.ids.own, id]);
  }
  t.deepEqual(await reach(A('own_personal', ['north'], 'own')), sorted([a.ids.ann!, added[7]!]));
  await everyTotalIsItsReach(t, 'with own clients');
  await move(added[7]!, ['north'], ['south']);
  await everyTotalIsItsReach(t, 'an own client moved out of reach');

  // B's counts never moved with A's contacts
  t.is((await search(B('org', null))).total, (await reach(B('org', null))).length);

  // Only a caller that reaches every contact takes the kept count: skewed by 1000, it shows there
  // and nowhere else (a member key with no locations, a manager key with none, the admin's own key
  // reach them all too); B's callers take B's count.
  const exact = new Map<Cred, number>();
  for (const c of CREDS) exact.set(c, (await search(c)).total);
  await owner(`insert into app_private.contact_counts (organization_id, n) values ($1, 1000)`, [a.organization_id]);
  try {
    for (const c of CREDS) {
      const skew = whole(c) && c.org() === a ? 1000 : 0;
      t.is((await search(c)).total, exact.get(c)! + skew, `${label(c)} ${skew ? 'takes' : 'never takes'} A's kept count`);
      t.is((await search(c, { page: '3', limit: '2' })).total, exact.get(c)! + skew, `${label(c)}, a later page`);
    }
  } finally {
    await owner(`insert into app_private.contact_counts (organization_id, n) values ($1, -1000)`, [a.organization_id]);
  }
  await owner(`select app_private.fold_contact_counts($1)`, [a.organization_id]);
  await everyTotalIsItsReach(t, 'folded');
});

// ---------------------------------------------------------------------------------------------
// 2. q through the organization's own rows and through the rarest pieces (app_hidden.contacts_matching)
// ---------------------------------------------------------------------------------------------

// Pieces shared by both organizations (B's fixture has the same people), phone-like and short ones,
// and some that match nothing or only B's contacts of the same names.
const QUERIES = ['example', 'ANN', 'ee', 'e', 'Bulk', 'api', 'South', 'Nowhere', 'both', '555', '(555) 123', '123-000', '+44', 'phil',
  'bulk.example', '.com', 'zzq'];

/** The three-character pieces (ASCII letters and digits) of q, as search_rarest_share reads them. */
const piecesOf = (q: string) => (q.toLowerCase().match(/[a-z0-9]+/g) ?? []).flatMap((run) =>
  Array.from({ length: Math.max(0, run.length - 2) }, (_, i) => run.slice(i, i + 3)));

/** Sets the counted share of every piece of QUERIES (and of every piece counted) to `share`. */
async function shares(share: number) {
  await owner(`update app_private.search_trigrams set share = $1`, [share]);
  await owner(`insert into app_private.search_trigrams (trigram, share) select p, $2 from unnest($1::text[]) p
    on conflict (trigram) do update set share = excluded.share`, [[...new Set(QUERIES.flatMap(piecesOf))], share]);
}

/** Whether contacts_matching takes the organization's own rows for q (its test). */
async function ownRows(org: Applied, q: string): Promise<boolean> {
  const { rows: [r] } = await owner(`select (select reltuples from pg_class where oid = 'app_public.contacts'::regclass) as everyone,
      (select coalesce(sum(n), 0) from app_private.contact_counts where organization_id = $1)::float8 as own,
      app_hidden.search_rarest_share(app_hidden.like_anywhere($2)) as share`, [org.organization_id, q]);
  return r.everyone > 0 && r.own < r.everyone * r.share;
}

const phoneLike = (q: string) => /^\+?[0-9 ()[\]-]+$/.test(q) && /[ ()[\]-]/.test(q) && q.replace(/[^0-9]/g, '').length >= 3;

/** Every credential's q searches answer and count exactly the matches in its reach. */
async function everyQueryInReach(t: import('ava').ExecutionContext, way: 'own rows' | 'pieces') {
  for (const c of CREDS) {
    const mine = await reach(c);
    for (const q of QUERIES) {
      // the digits of a phone-like q are always looked up by their pieces; a q without a piece of
      // three letters or digits gives the index nothing to narrow: the own rows either way
      if (!phoneLike(q)) {
        t.is(await ownRows(c.org(), q), way === 'own rows' || piecesOf(q).length === 0, `${way}: the way ${label(c)} searches "${q}"`);
      }
      const expected = await matching(mine, q);
      const page = await search(c, { q });
      t.is(page.total, expected.length, `${way}: total of ${label(c)} for "${q}"`);
      t.deepEqual(page.ids, expected, `${way}: items of ${label(c)} for "${q}"`);
    }
  }
}

test.serial('q searches count and answer only contacts in reach, through the organization\'s own rows and through the rarest pieces', async (t) => {
  // the table's statistics know both organizations' rows (the own-rows test reads them)
  await owner('analyze app_public.contacts');
  await owner('select app_private.refresh_search_trigrams()');
  // own clients of B's Olga: none; of A's Olga, as the previous test left them (Ann at North, Bob at South)
  t.true((await search(A('org', null), { q: 'example' })).total > 0);

  // every piece as common as can be: each organization (smaller than the table) reads its own rows
  await shares(1);
  await everyQueryInReach(t, 'own rows');

  // every piece rare: the trigram index, which hands over both organizations' candidates
  await shares(0.000001);
  await everyQueryInReach(t, 'pieces');

  await owner('select app_private.refresh_search_trigrams()');
});

test.serial('contacts_search\'s generic plans, shared by every credential on one connection, keep each one\'s reach', async (t) => {
  const { rows: [fn] } = await owner(`select proconfig from pg_proc
    where oid = 'app_public.contacts_search(text, public.citext, text, integer, integer)'::regprocedure`);
  t.true((fn.proconfig as string[]).includes('plan_cache_mode=force_generic_plan'), 'the statements are planned once per connection');

  const calls: [string, unknown[]][] = [
    ['no filter', [null, null, null, 1, 100]],
    ['q', ['example', null, null, 1, 100]],
    ['q card order', ['ee', null, null, 1, 100]],
    ['phone-like q', ['(555) 123', null, null, 1, 100]],
    ['email', [null, 'dee@example.com', null, 1, 100]],
    ['phone', [null, null, '+15551230002', 1, 100]],
  ];
  const expectedOf = async (c: Cred, args: unknown[]) => {
    const mine = await reach(c);
    if (args[1]) return (await owner(`select id from app_public.contacts where id = any($1::uuid[]) and email = $2::citext`, [mine, args[1]])).rows.map((r) => r.id);
    if (args[2]) return (await owner(`select id from app_public.contacts where id = any($1::uuid[]) and phone = $2`, [mine, args[2]])).rows.map((r) => r.id);
    return args[0] ? matching(mine, args[0] as string) : mine;
  };
  const client: pg.PoolClient = await app.db.owner.connect();
  try {
    // the organization's key first, many times (any plan it leaves is cached), then every credential in turn, three rounds
    const order = [...Array.from({ length: 6 }, () => CREDS[0]!), ...CREDS, ...CREDS.toReversed(), ...CREDS];
    for (const c of order) {
      for (const [what, args] of calls) {
        await client.query('begin');
        try {
          await client.query('set local role svc_request');
          await client.query(authenticate(keyOf(c)));
          const { rows: [r] } = await client.query(`select app_public.contacts_search($1, $2::citext, $3, $4, $5) as r`, args);
          const expected = sorted(await expectedOf(c, args));
          t.is(r.r.total, expected.length, `${label(c)} ${what}`);
          t.deepEqual(sorted(r.r.items.map((i: { id: string }) => i.id)), expected, `${label(c)} ${what}`);
        } finally {
          await client.query('rollback');
        }
      }
    }
  } finally {
    client.release();
  }
});

// ---------------------------------------------------------------------------------------------
// 3. The renderer (app_hidden.contacts_json)
// ---------------------------------------------------------------------------------------------

test.serial('the renderer lists only the locations in reach, and nothing of another organization\'s tags, stage or suppression', async (t) => {
  const email = 'spread@example.com';
  const phone = '+15559870001';
  // A's contact at both locations, tagged, at a stage
  const mine = await app.request('POST', '/api/v1/contacts', { key: a.keys.org,
    body: { email, name: 'Spread Both', phone, location_ids: [a.ids.north, a.ids.south] } });
  t.is(mine.status, 200);
  const id = mine.body.id as string;
  t.is((await app.request('POST', `/api/v1/contacts/${id}/tags`, { key: a.keys.org, body: { name: 'a-tag' } })).status, 200);
  t.is((await app.request('PATCH', `/api/v1/contacts/${id}`, { key: a.keys.org, body: { stage_id: a.ids.lead } })).status, 200);

  // B: the same address and number, suppressed on both channels, with its own tag and stage; and a
  // contact of B with the very id of A's, at B's South, tagged and staged in B
  const theirs = await app.request('POST', '/api/v1/contacts', { key: b.keys.org, body: { email, name: 'B Spread', phone, location_ids: [b.ids.north] } });
  t.is(theirs.status, 200);
  t.is((await app.request('POST', `/api/v1/contacts/${theirs.body.id}/tags`, { key: b.keys.org, body: { name: 'b-secret' } })).status, 200);
  t.is((await app.request('PATCH', `/api/v1/contacts/${theirs.body.id}`, { key: b.keys.org, body: { stage_id: b.ids.won } })).status, 200);
  t.is((await app.request('POST', `/api/v1/contacts/${theirs.body.id}/suppress`, { key: b.keys.org, body: { channels: ['email', 'sms'] } })).status, 200);
  await owner(`insert into app_public.contacts (organization_id, id, name, email, stage_id) values ($1, $2, 'B Twin', 'twin@example.com', $3)`,
    [b.organization_id, id, b.ids.lead]);
  await owner(`insert into app_public.contact_locations (organization_id, contact_id, location_id) values ($1, $2, $3)`, [b.organization_id, id, b.ids.south]);
  t.is((await app.request('POST', `/api/v1/contacts/${id}/tags`, { key: b.keys.org, body: { name: 'b-twin' } })).status, 200);

  const aStage = { id: a.ids.lead, name: 'Lead' };
  const readers: [string, string[]][] = [
    ['org', [a.ids.north!, a.ids.south!]], ['admin_personal', [a.ids.north!, a.ids.south!]], ['mgr_key', [a.ids.north!, a.ids.south!]],
    ['north_mgr', [a.ids.north!]], ['staff_mgr_key', [a.ids.north!]], ['mgr_personal', [a.ids.north!]], ['south_mgr', [a.ids.south!]],
  ];
  for (const [ref, locations] of readers) {
    const key = a.keys[ref]!;
    const inPage = async (query: string) => {
      const res = await app.request('GET', `/api/v1/contacts?${query}`, { key });
      t.is(res.status, 200, `${ref} ${query}`);
      return res.body.items.find((i: { id: string }) => i.id === id);
    };
    const fast = await mcpCall(app, key, 'contacts_get', { contactId: id });
    const reads: [string, any][] = [
      ['contacts_get', (await app.request('GET', `/api/v1/contacts/${id}`, { key })).body],
      ['no filter', await inPage('limit=100')],
      ['q', await inPage('q=spread')],
      ['q by its phone', await inPage('q=987-0001')],
      ['email', await inPage(`email=${email}`)],
      ['phone', await inPage(`phone=${encodeURIComponent(phone)}`)],
      ['contacts_update', (await app.request('PATCH', `/api/v1/contacts/${id}`, { key, body: { name: 'Spread Both' } })).body],
      ['MCP contacts_get', fast.body.result?.structuredContent],
      ['MCP contacts_search', (await mcpCall(app, key, 'contacts_search', { q: 'spread' })).body.result?.structuredContent?.items
        ?.find((i: { id: string }) => i.id === id)],
    ];
    for (const [how, contact] of reads) {
      t.truthy(contact, `${ref} ${how}`);
      t.deepEqual(contact?.location_ids, sorted(locations), `${ref} ${how}: locations in reach only`);
      t.like(contact, { id, name: 'Spread Both', tags: ['a-tag'], stage_id: a.ids.lead, stage: aStage,
        email_suppressed: false, sms_opted_out: false }, `${ref} ${how}: A's own tags, stage and suppression state`);
    }
  }
  // B's contacts render B's rows: the address and number suppressed there, the twin's own tag and location
  const bSpread = (await app.request('GET', `/api/v1/contacts/${theirs.body.id}`, { key: b.keys.org })).body;
  t.like(bSpread, { tags: ['b-secret'], stage_id: b.ids.won, email_suppressed: true, sms_opted_out: true, location_ids: [b.ids.north] });
  const twin = (await app.request('GET', `/api/v1/contacts/${id}`, { key: b.keys.org })).body;
  t.like(twin, { id, name: 'B Twin', tags: ['b-twin'], stage_id: b.ids.lead, location_ids: [b.ids.south] });
  t.is((await app.request('GET', `/api/v1/contacts/${id}`, { key: b.keys.north_mgr })).status, 404, 'the twin is at B\'s South');

  // straight at the SQL: the renderer run under a location-limited key's claims, on rows the policies let it read
  const rendered = await asKey(app, a.keys.north_mgr!, async (c) => (await c.query(
    `select app_hidden.contacts_json(array(select c from app_public.contacts c where c.id = $1)) as j`, [id])).rows[0].j);
  t.is(rendered.length, 1, 'A\'s row only: the twin of B is no row of A');
  t.deepEqual(rendered[0].location_ids, [a.ids.north]);
  t.deepEqual(rendered[0].tags, ['a-tag']);
});

// ---------------------------------------------------------------------------------------------
// 4. A lone tools/call of a read, answered directly (src/mcp/endpoint.ts, fastCall)
// ---------------------------------------------------------------------------------------------

/** REST's route of each read tool, from its arguments. */
const REST: Record<string, (args: Record<string, any>) => string> = {
  me_get: () => '/api/v1/me',
  contacts_search: (x) => `/api/v1/contacts?${new URLSearchParams(x)}`,
  contacts_get: (x) => `/api/v1/contacts/${x.contactId}`,
  contacts_list_notes: (x) => `/api/v1/contacts/${x.contactId}/notes`,
  contacts_list_interactions: (x) => `/api/v1/contacts/${x.contactId}/interactions`,
  contacts_list_stages: () => '/api/v1/contacts/stages',
  audiences_list: () => '/api/v1/audiences',
  audiences_get: (x) => `/api/v1/audiences/${x.audienceId}`,
};

/** An answer of the MCP endpoint, as comparable: the HTTP refusal, the tool's error envelope, or its REST body (the text). */
function outcomeOf(res: { http: number; body: any }): any {
  if (res.http !== 200) return { http: res.http, error: res.body?.error, statusCode: res.body?.statusCode, required: res.body?.required };
  const result = res.body.result;
  if (result.isError) {
    const { timestamp: _t, ...envelope } = JSON.parse(result.content[0].text);
    return { tool: envelope };
  }
  return { body: JSON.parse(result.content[0].text) };
}

/** The same call through the SDK's server: an SSE answer is preferred, which the direct answer never serves. */
async function viaSdk(key: string, name: string, args: Record<string, unknown>): Promise<{ http: number; body: any }> {
  const res = await mcpRpc(app, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    { authorization: `Bearer ${key}`, accept: 'text/event-stream, application/json' });
  const text = await res.text();
  return { http: res.status, body: rpcMessages(text) ?? text };
}

/** Checks a read tool answers alike directly and through the SDK, and as REST does; answers the direct outcome. */
async function sameAsSdkAndRest(t: import('ava').ExecutionContext, key: string, name: string, args: Record<string, any>, what: string,
  rest: 'compare' | 'skip' = 'compare'): Promise<any> {
  const direct = outcomeOf(await mcpCall(app, key, name, args));
  const sdk = outcomeOf(await viaSdk(key, name, args));
  t.deepEqual(direct, sdk, `${what}: ${name} directly and through the SDK`);
  if (rest === 'compare') {
    const res = await app.request('GET', REST[name]!(args), { key });
    if (res.status === 200) t.deepEqual(direct, { body: res.body }, `${what}: ${name} answers REST's body`);
    else if (direct.tool) {
      t.like(direct.tool, { statusCode: res.status, error: res.body.error }, `${what}: ${name} refused as REST refuses it`);
      t.is(direct.tool.required, res.body.required, `${what}: ${name} names what REST names`);
    }
    else t.like(direct, { http: res.status, error: res.body.error }, `${what}: ${name} refused as REST refuses it`);
  }
  return direct;
}

test.serial('MCP, a lone read: a key without the scope and another organization\'s ids are refused as through the SDK and REST; reach as REST', async (t) => {
  // the calls below do take the direct path: its answer is written by express (with a charset),
  // the SDK's transport writes plain application/json (a batch of one is answered through it)
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'contacts_search', arguments: { q: 'ann' } } };
  const headers = { authorization: `Bearer ${a.keys.north_mgr}` };
  t.is((await mcpRpc(app, call, headers)).headers.get('content-type'), 'application/json; charset=utf-8', 'answered directly');
  t.is((await mcpRpc(app, [call], headers)).headers.get('content-type'), 'application/json', 'answered through the SDK');

  // a key with audiences:read only: every contacts read is the scope's 403, naming it
  for (const [name, args] of [['contacts_search', {}], ['contacts_search', { q: 'ann' }], ['contacts_get', { contactId: a.ids.ann }],
    ['contacts_list_stages', {}], ['contacts_list_interactions', { contactId: a.ids.ann }]] as [string, Record<string, unknown>][]) {
    const out = await sameAsSdkAndRest(t, a.keys.aud_reader!, name, args, 'audiences:read only');
    t.like(out.tool, { statusCode: 403, error: 'insufficient_scope', required: 'contacts:read' }, name);
  }
  t.deepEqual(await sameAsSdkAndRest(t, a.keys.aud_reader!, 'audiences_list', {}, 'its own scope'), { body: { items: [] } });
  t.like((await sameAsSdkAndRest(t, a.keys.org_reader!, 'audiences_list', {}, 'contacts:read only')).tool,
    { statusCode: 403, error: 'insufficient_scope', required: 'audiences:read' });

  // another organization's contact and audience: 404 for every kind of key (a member's deny read: its 403)
  const theirAudience = await app.request('POST', '/api/v1/audiences', { key: b.keys.org, body: { name: 'Theirs', kind: 'static' } });
  t.is(theirAudience.status, 201);
  const foreign: [string, Record<string, unknown>, string][] = [
    ['contacts_get', { contactId: b.ids.ann }, b.ids.ann!], ['contacts_get', { contactId: b.ids.cy }, b.ids.cy!],
    ['contacts_list_notes', { contactId: b.ids.ann }, b.ids.ann!], ['contacts_list_interactions', { contactId: b.ids.ann }, b.ids.ann!],
    ['audiences_get', { audienceId: theirAudience.body.id }, theirAudience.body.id],
  ];
  for (const ref of ['org', 'admin_personal', 'north_mgr', 'mgr_personal', 'member_key', 'sam_personal', 'own_personal']) {
    for (const [name, args, id] of foreign) {
      const out = await sameAsSdkAndRest(t, a.keys[ref]!, name, args, `${ref} on B's id`);
      t.true(out.tool?.statusCode === 404 || (out.tool?.statusCode === 403 && out.tool?.error === 'insufficient_role'), `${ref} ${name}: ${JSON.stringify(out)}`);
      t.false(JSON.stringify(out).includes(id), `${ref} ${name}: the id is not echoed`);
    }
  }

  // out of reach in the same organization: 404; in reach: REST's body, totals included
  for (const [ref, away] of [['north_mgr', ['bob', 'cy']], ['south_mgr', ['ann', 'cy', 'eve']], ['mgr_personal', ['bob', 'cy']],
    ['sam_personal', ['bob', 'cy']], ['own_personal', ['cy', 'eve', 'bob']]] as [string, string[]][]) {
    for (const target of away) {
      t.like((await sameAsSdkAndRest(t, a.keys[ref]!, 'contacts_get', { contactId: a.ids[target] }, `${ref} on ${target}`)).tool,
        { statusCode: 404, error: 'not_found' }, `${ref} on ${target}`);
    }
    for (const args of [{}, { q: 'example' }, { q: 'ee' }, { q: '(555) 123' }, { email: 'bob@example.com' }, { phone: '+15551230001' }]) {
      const out = await sameAsSdkAndRest(t, a.keys[ref]!, 'contacts_search', args, `${ref} ${JSON.stringify(args)}`);
      t.true(out.body.items.every((i: { id: string }) => !Object.values(b.ids).includes(i.id)), `${ref}: nothing of B`);
    }
  }
});

test.serial('MCP, a lone read: MCP turned off, agent access off and an OAuth token beyond its scopes are refused as through the SDK', async (t) => {
  // an organization with MCP off, no pipeline and no contacts: reads that would answer empty lists
  const off = await app.apply(fastFixture('Fast Off', { mcp: false, empty: true }));
  const reads: [string, Record<string, unknown>][] = [['me_get', {}], ['contacts_search', {}], ['contacts_search', { q: 'nobody' }],
    ['contacts_list_stages', {}], ['audiences_list', {}], ['contacts_get', { contactId: randomUUID() }]];
  for (const ref of ['org', 'north_mgr', 'member_key', 'own_personal', 'mgr_personal', 'aud_reader']) {
    for (const [name, args] of reads) {
      t.like(await sameAsSdkAndRest(t, off.keys[ref]!, name, args, `MCP off, ${ref}`, 'skip'), { http: 404, error: 'not_found' }, `${ref} ${name}`);
    }
  }
  t.like((await app.request('GET', '/api/v1/contacts', { key: off.keys.org })).body, { items: [], total: 0 }, 'REST keeps working');
  t.like((await app.request('GET', '/api/v1/contacts/stages', { key: off.keys.org })).body, { stages: [] });

  // turned off and on again: each call reads the setting as it is now (the direct read's statement is prepared once per connection)
  for (const [setting, expected] of [['off', 404], ['on', 200], ['off', 404], ['on', 200]] as const) {
    await updateOrg(app.db.owner, a.organization_id, setting, undefined);
    for (let i = 0; i < 10; i++) {
      for (const ref of ['org', 'north_mgr', 'own_personal']) {
        t.is((await mcpCall(app, a.keys[ref]!, 'contacts_search', { q: 'ann' })).http, expected, `MCP ${setting}, ${ref}`);
      }
    }
  }

  // agent access: the person's, the role's, and a deactivated person: the same 401 on every face
  const refused = async (key: string, what: string) => {
    for (const [name, args] of [['contacts_search', {}], ['contacts_get', { contactId: a.ids.ann }]] as [string, Record<string, unknown>][]) {
      t.like(await sameAsSdkAndRest(t, key, name, args, what), { http: 401, error: 'unauthorized' }, `${what} ${name}`);
    }
  };
  await refused(a.keys.no_agent_personal!, 'a manager whose agent access is off');
  await owner(`insert into app_public.role_agent_access (organization_id, role, agent_access) values ($1, 'member', false)
    on conflict (organization_id, role) do update set agent_access = false`, [a.organization_id]);
  await refused(a.keys.sam_personal!, 'agent access off for members');
  await refused(a.keys.own_personal!, 'agent access off for members');
  t.is((await mcpCall(app, a.keys.mgr_personal!, 'contacts_search', {})).http, 200, 'a manager is unaffected');
  await owner(`update app_public.role_agent_access set agent_access = true where organization_id = $1 and role = 'member'`, [a.organization_id]);
  t.is((await mcpCall(app, a.keys.sam_personal!, 'contacts_search', {})).http, 200);
  await owner(`update app_public.people set active = false where organization_id = $1 and id = $2`, [a.organization_id, a.ids.staff]);
  await refused(a.keys.sam_personal!, 'a deactivated member');
  await owner(`update app_public.people set active = true where organization_id = $1 and id = $2`, [a.organization_id, a.ids.staff]);

  // OAuth access tokens act as their person's personal key, within the grant's scopes
  const resource = resourceOf(app.config.baseUrl);
  const token = async (person: string, scopes: string[]) => {
    const value = `svc_at_${randomBytes(32).toString('base64url')}`;
    const clientId = `svc_client_fast_${randomBytes(8).toString('hex')}`;
    await owner(`insert into app_private.oauth_clients (client_id, registration, client_name, redirect_uris)
      values ($1, 'dynamic', 'Fast paths', array['http://127.0.0.1:7777/callback'])`, [clientId]);
    const { rows: [grant] } = await owner(`insert into app_private.oauth_grants (organization_id, person_id, client_id, scopes, resource)
      values ($1, $2, $3, $4, $5) returning id`, [a.organization_id, a.ids[person], clientId, scopes, resource]);
    await owner(`insert into app_private.oauth_tokens (token_hash, grant_id, kind, expires_at) values ($1, $2, 'access', now() + interval '1 hour')`,
      [oauthAccessHash(resource, value), grant.id]);
    return value;
  };
  const audiencesOnly = await token('owner', ['audiences:read']);
  for (const [name, args] of [['contacts_search', {}], ['contacts_get', { contactId: a.ids.ann }], ['contacts_list_stages', {}]] as [string, Record<string, unknown>][]) {
    const out = await sameAsSdkAndRest(t, audiencesOnly, name, args, 'a token for audiences:read', 'skip');
    t.like(out, { http: 403, error: 'insufficient_scope', required: 'contacts:read' }, name);
  }
  const northManager = await token('mgr', ['contacts:read']);
  for (const args of [{}, { q: 'example' }, { q: 'ee' }]) {
    const out = await sameAsSdkAndRest(t, northManager, 'contacts_search', args, 'a North manager\'s token', 'skip');
    const rest = await app.request('GET', REST.contacts_search!(args), { key: a.keys.mgr_personal });
    t.deepEqual(out, { body: rest.body }, `the token reaches what its person's key reaches ${JSON.stringify(args)}`);
  }
  t.like((await sameAsSdkAndRest(t, northManager, 'contacts_get', { contactId: a.ids.bob }, 'a North manager\'s token', 'skip')).tool,
    { statusCode: 404, error: 'not_found' });

  // a foreign Origin is refused before any read
  const foreignOrigin = await mcpRpc(app, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'contacts_search', arguments: {} } },
    { authorization: `Bearer ${a.keys.org}`, origin: 'http://evil.example' });
  t.is(foreignOrigin.status, 403);
});
