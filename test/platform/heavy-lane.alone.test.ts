// Expensive calls cannot starve the others (src/http/heavy.ts): audience previews, counts and
// member pages run in a lane of their own, each credential and organization may have only a few
// in flight (429 too_many_concurrent_requests with Retry-After), and a request that cannot get a
// connection in time answers 503 busy within seconds instead of waiting a minute.
import test from 'ava';
import { startApp, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { mcpRpc } from '../helpers/mcp.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { HEAVY_CHECKOUT_TIMEOUT_MS } from '../../src/platform/heavy.ts';
import { createInternalGraphql, type InternalGraphql } from '../../src/graphql/internal.ts';

let app: TestApp;
let gql: InternalGraphql | undefined;
let acme: Applied;

// Enough contacts that one preview of the definition below keeps a core busy for a while.
const CONTACTS = 30_000;

test.before(async () => {
  app = await startApp({
    env: { SVC_HEAVY_CONNECTIONS: '1', SVC_HEAVY_PER_CREDENTIAL: '2', SVC_HEAVY_PER_ORGANIZATION: '4' },
    mount: async (deps) => (gql = await createInternalGraphql(deps)).mount,
  });
  acme = await app.apply(acmeFixture());
  await app.db.owner.query(`
    insert into app_public.contacts (organization_id, name, email)
    select $1::uuid, 'Load ' || md5(g::text), 'load' || g || '@load.example' from generate_series(1, $2::int) g`,
  [acme.organization_id, CONTACTS]);
  await app.db.owner.query('analyze app_public.contacts');
  await calibrate();
});

test.after.always(async () => {
  await gql?.release();
  await app?.close();
});

// Substring rules over the names: every contact is scanned for every pattern.
const heavyDefinition = {
  match: 'any',
  rules: Array.from({ length: 10 }, (_, r) => ({
    field: 'display_name',
    op: 'contains_any',
    value: Array.from({ length: 40 }, (_, v) => `zz${r}x${v}q`),
  })),
};

const preview = (key: string, body: typeof heavyDefinition = heavyDefinition) =>
  app.request('POST', '/api/v1/audiences/preview-count', { key, body });

// The admission tests send several previews at once that then queue for the lane's one
// connection: each must last long enough to overlap the others' arrival, and the four admitted
// ones together must end well within the connection wait (HEAVY_CHECKOUT_TIMEOUT_MS), on a fast
// machine or a slow one. So their definition is cut to last about a third of a second, from how
// long the heavy one takes here.
let admissionDefinition = heavyDefinition;
const admissionPreview = (key: string) => preview(key, admissionDefinition);
async function calibrate(): Promise<void> {
  const single = await timed(() => preview(acme.keys.org!));
  const rules = Math.max(1, Math.min(heavyDefinition.rules.length, Math.round(heavyDefinition.rules.length * 350 / single.ms)));
  admissionDefinition = { ...heavyDefinition, rules: heavyDefinition.rules.slice(0, rules) };
}

async function timed(fn: () => Promise<{ status: number }>): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const { status } = await fn();
  return { ms: performance.now() - started, status };
}

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!;
}

/**
 * me_get latencies, one request after another: what a cheap call costs while the lane is busy
 * (a closed loop of several at once would measure the machine's throughput instead).
 */
async function meGetLatencies(count: number, until?: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until?.then(() => { done = true; });
  const out: number[] = [];
  while (until ? !done : out.length < count) {
    const r = await timed(() => app.request('GET', '/api/v1/me', { key: acme.keys.owner_personal! }));
    if (r.status !== 200) throw new Error(`me_get answered ${r.status}`);
    out.push(r.ms);
  }
  return out;
}

test.serial('40 heavy previews from one key: a few run, the rest get 429 at once, and me_get stays fast', async (t) => {
  // a single preview, to know it is heavy enough to matter
  const single = await timed(() => preview(acme.keys.org!));
  t.is(single.status, 200);
  t.log(`one preview: ${single.ms.toFixed(0)} ms over ${CONTACTS} contacts`);
  await meGetLatencies(50); // warm

  // Idle and loaded side by side, three rounds, the median ratio: the machine's own speed
  // drifts from one second to the next, a ratio measured in the same moment does not.
  const ratios: number[] = [];
  for (let round = 0; round < 3; round++) {
    const idle = p95(await meGetLatencies(300));
    const started = performance.now();
    const heavy = Promise.all(Array.from({ length: 40 }, () =>
      preview(acme.keys.org!).then((r) => ({ ...r, at: performance.now() - started }))));
    // for as long as the previews run
    const loadedSamples = await meGetLatencies(0, heavy);
    const loaded = p95(loadedSamples);
    const busyFor = performance.now() - started;
    const answers = await heavy;
    const lastDone = Math.max(...answers.map((a) => a.at));
    ratios.push(loaded / idle);

    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    t.log(`round ${round + 1}: me_get p95 idle ${idle.toFixed(2)} ms, under 40 previews ${loaded.toFixed(2)} ms `
      + `(${loadedSamples.length} calls over ${busyFor.toFixed(0)} ms, previews done after ${lastDone.toFixed(0)} ms); `
      + `previews: ${[...byStatus].map(([s, n]) => `${n}×${s}`).join(', ')}`);
    t.true(loadedSamples.length >= 100, 'me_get was measured throughout');
    t.true(answers.every((a) => a.status === 200 || a.status === 429), 'only 200 and 429');
    t.is(byStatus.get(200), 2, 'two in flight per credential');
    for (const a of answers.filter((x) => x.status === 429)) {
      t.is(a.body.error, 'too_many_concurrent_requests');
      t.is(a.headers.get('retry-after'), '1');
      t.is(a.body.retry_after, 1);
      t.true(a.at < single.ms, 'refused before any preview could have finished');
    }
  }
  const median = [...ratios].sort((a, b) => a - b)[1]!;
  t.true(median < 2, `me_get p95 under load / idle: ${ratios.map((r) => r.toFixed(2)).join(', ')}; median ${median.toFixed(2)} must stay under 2`);
});

test.serial('an organization has at most four expensive calls in flight, whatever its keys', async (t) => {
  const keys = [acme.keys.org!, acme.keys.owner_personal!, acme.keys.admin_org!, acme.keys.admin_personal!];
  const answers = await Promise.all(keys.flatMap((key) => [admissionPreview(key), admissionPreview(key)]));
  const ok = answers.filter((a) => a.status === 200).length;
  const refused = answers.filter((a) => a.status === 429);
  t.is(ok, 4);
  t.is(refused.length, 4);
  t.true(refused.every((a) => a.body.error === 'too_many_concurrent_requests'));

  // once they are done, the organization may start more
  t.is((await admissionPreview(acme.keys.org!)).status, 200);
});

test.serial('another organization is not refused because of the first one\'s calls', async (t) => {
  const other = await app.apply(acmeFixture('Other Dental'));
  const first = [preview(acme.keys.org!), preview(acme.keys.org!)];
  const theirs = await app.request('POST', '/api/v1/audiences/preview-count', {
    key: other.keys.org!, body: { match: 'all', rules: [{ field: 'email', op: 'contains', value: 'example' }] },
  });
  t.is(theirs.status, 200);
  t.is(theirs.body.count, 3);
  t.true((await Promise.all(first)).every((a) => a.status === 200));
});

test.serial('a refused key or a bad body leaves nothing counted against the organization', async (t) => {
  for (let i = 0; i < 6; i++) {
    const bad = await app.request('POST', '/api/v1/audiences/preview-count', { key: acme.keys.org!, body: { match: 'maybe' } });
    t.is(bad.status, 400);
  }
  const unknown = await app.request('POST', '/api/v1/audiences/preview-count', { key: `svc_sk_${'x'.repeat(32)}`, body: heavyDefinition });
  t.is(unknown.status, 401);
  const noScope = await app.request('POST', '/api/v1/audiences/preview-count', { key: acme.keys.org_reader!, body: heavyDefinition });
  t.is(noScope.status, 403);
  t.is(noScope.body.error, 'insufficient_scope');
  const keys = [acme.keys.org!, acme.keys.owner_personal!];
  t.true((await Promise.all(keys.flatMap((key) => [admissionPreview(key), admissionPreview(key)]))).every((a) => a.status === 200));
});

test.serial('MCP tool calls share the same limit: refused calls are isError results with the 429 envelope', async (t) => {
  const batch = Array.from({ length: 5 }, (_, i) => ({
    jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'audiences_preview_count', arguments: heavyDefinition },
  }));
  const res = await mcpRpc(app, batch, { authorization: `Bearer ${acme.keys.org}` });
  t.is(res.status, 200);
  const replies = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } }[];
  const refused = replies.filter((r) => r.result.isError).map((r) => JSON.parse(r.result.content[0]!.text));
  t.is(replies.length - refused.length, 2);
  t.true(refused.every((e) => e.statusCode === 429 && e.error === 'too_many_concurrent_requests'));
});

test.serial('internal GraphQL queries are expensive calls too: the same limit, the same lane', async (t) => {
  const query = { query: '{ allContacts { totalCount } }' };
  const gqlCall = () => app.request('POST', '/internal/graphql', { key: acme.keys.org!, body: query });
  const answers = await Promise.all([gqlCall(), gqlCall(), gqlCall(), gqlCall(), preview(acme.keys.org!)]);
  const ok = answers.filter((a) => a.status === 200);
  t.true(ok.every((a) => a.body.data?.allContacts?.totalCount > CONTACTS));
  const refused = answers.filter((a) => a.status === 429);
  t.is(ok.length, 2);
  t.is(refused.length, 3);
  t.true(refused.every((a) => a.body.error === 'too_many_concurrent_requests' && a.headers.get('retry-after') === '1'));
  // and nothing stays counted once they are answered
  t.is((await gqlCall()).status, 200);
  t.is((await gqlCall()).status, 200);
});

test.serial('a request that cannot get a connection in time answers 503 busy within seconds', async (t) => {
  // every connection of the heavy lane taken: an admitted call waits, then gives up
  const held = await app.heavy.pool.connect();
  try {
    const r = await timed(() => preview(acme.keys.org!));
    t.is(r.status, 503);
    t.true(r.ms >= HEAVY_CHECKOUT_TIMEOUT_MS - 100 && r.ms < HEAVY_CHECKOUT_TIMEOUT_MS + 3_000, `answered in ${r.ms.toFixed(0)} ms`);
    // cheap calls are untouched meanwhile
    t.is((await app.request('GET', '/api/v1/me', { key: acme.keys.org! })).status, 200);
  } finally {
    held.release();
  }
  const busy = await (async () => {
    const clients = await Promise.all(Array.from({ length: 8 }, () => app.pool.connect()));
    try {
      return await app.request('GET', '/api/v1/me', { key: acme.keys.org! });
    } finally {
      for (const c of clients) c.release();
    }
  })();
  t.is(busy.status, 503);
  t.is(busy.body.error, 'busy');
  t.is(busy.headers.get('retry-after'), '1');
  t.is((await app.request('GET', '/api/v1/me', { key: acme.keys.org! })).status, 200);
});
