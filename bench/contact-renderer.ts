// `node bench/contact-renderer.ts`: what generating the contact renderer from
// app_private.contact_fields costs contacts_get. Loads one organization of 10,000 contacts (tags,
// locations, a stage, suppressions) and times, side by side in one run, contacts_get as it is now
// (app_hidden.contacts_json generated from the registered fields) and as it was (the
// hand-written renderer, restated under another name), as the request role under an organization key,
// straight at the SQL; then again with one more field registered by another area. Writes the
// `contact-renderer` section of bench/RESULTS.md.
//
//   BENCH_CONTACTS=10000 BENCH_ROUNDS=15 BENCH_SAMPLE=1000
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { adminApply } from '../src/admin/commands.ts';
import { AREAS } from '../src/areas.ts';
import { hashKey } from '../src/auth/keys.ts';
import { migrate } from '../src/db/migrate.ts';
import os from 'node:os';
import { benchServer, databaseUrl, fmt, LINK_LOCATIONS, writeSection } from './lib.ts';

const CONTACTS = Number(process.env.BENCH_CONTACTS || 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 15);
const SAMPLE = Number(process.env.BENCH_SAMPLE || 1000);
const DB_NAME = 'svc_bench_contact_renderer';

const db = await benchServer();
const admin = new pg.Client(db.ownerUrl);
await admin.connect();
await admin.query(`drop database if exists ${DB_NAME} with (force)`);
await admin.query(`create database ${DB_NAME}`);
await admin.end();
const ownerUrl = databaseUrl(db, DB_NAME);
await migrate(ownerUrl, db.loginPassword, { withCurrent: true });

const pool = new pg.Pool({ connectionString: ownerUrl, max: 2 });
const org = await adminApply(pool, {
  organization: { name: 'Bench renderer' },
  locations: ['north', 'south', 'east'].map((ref) => ({ ref, name: ref })),
  users: [{ ref: 'owner', name: 'Owner', email: 'owner@renderer.bench', role: 'owner' }],
  api_keys: [{ ref: 'org', kind: 'organization', created_by_ref: 'owner' }],
  stages: [{ ref: 'lead', name: 'Lead' }, { ref: 'won', name: 'Won' }],
}, AREAS);
const o = org.organization_id;
await pool.query(`
  insert into app_public.contacts (organization_id, name, email, phone, stage_id, field_values, total_calls)
  select $1::uuid, 'First' || (g.i % 100) || ' Last' || (g.i % 250), 'c' || g.i || '@example.com', '+1' || (2000000000 + g.i)::text,
         case g.i % 3 when 0 then $2::uuid when 1 then $3::uuid end, jsonb_build_object('visits', g.i % 20), g.i % 6
    from generate_series(1, $4::int) g(i)`, [o, org.ids.lead, org.ids.won, CONTACTS]);
await pool.query(LINK_LOCATIONS, [o]);
await pool.query(`insert into app_public.tags (organization_id, name) select $1, 'tag' || g from generate_series(1, 20) g`, [o]);
await pool.query(`insert into app_public.contact_tags (organization_id, contact_id, tag_id)
  select c.organization_id, c.id, t.id from app_public.contacts c join app_public.tags t
    on t.organization_id = c.organization_id and abs(hashtext(c.id::text || t.name)) % 10 < 2
   where c.organization_id = $1`, [o]);
await pool.query(`insert into app_public.email_suppressions (organization_id, email, contact_id)
  select organization_id, email_key, id from app_public.contacts where organization_id = $1 and abs(hashtext(id::text)) % 20 = 0`, [o]);
await pool.query(`insert into app_public.contact_notes (organization_id, contact_id, body, source)
  select organization_id, id, 'note', 'user' from app_public.contacts where organization_id = $1 and abs(hashtext(id::text)) % 4 = 0`, [o]);
await pool.query('vacuum analyze');

// The hand-written renderer (bench/contacts-renderer-hand-written.sql) under another name, and
// contacts_get as it was around it.
const renderer = readFileSync(new URL('./contacts-renderer-hand-written.sql', import.meta.url), 'utf8');
await pool.query(`set role svc_owner;
  ${renderer.replace('FUNCTION app_hidden.contacts_json(', 'FUNCTION app_hidden.bench_contacts_json_before(')}
  create function app_hidden.bench_contacts_get_before(contact_id uuid) returns jsonb language plpgsql stable as $$
  declare
    c app_public.contacts;
  begin
    select * into c from app_public.contacts
     where organization_id = app_hidden.current_org_id() and id = bench_contacts_get_before.contact_id;
    if not found then
      perform app_hidden.raise_error(404, 'not_found', 'Contact not found');
    end if;
    return case when app_hidden.current_sees_contact_details() then app_hidden.bench_contacts_json_before(array[c]) -> 0
                else app_hidden.contact_card(c) end;
  end $$;
  grant execute on function app_hidden.bench_contacts_json_before(app_public.contacts[]), app_hidden.bench_contacts_get_before(uuid) to svc_request;
  reset role`);

const client = new pg.Client(ownerUrl);
await client.connect();
const ids = (await client.query(`select id from app_public.contacts where organization_id = $1 order by random() limit $2`, [o, SAMPLE]))
  .rows.map((r) => r.id as string);

/** Median µs per contacts_get of each function, alternating them round by round. */
async function measure(fns: [string, string]): Promise<[number, number]> {
  await client.query('begin');
  await client.query('set local role svc_request');
  await client.query(`select app_hidden.authenticate($1, 'contacts:read', 'scoped', null)`, [hashKey(org.keys.org!)]);
  const times: number[][] = fns.map(() => []);
  for (let round = 0; round < ROUNDS + 2; round++) {
    for (const [i, fn] of (round % 2 ? [...fns.entries()].reverse() : [...fns.entries()])) {
      const t0 = process.hrtime.bigint();
      // the text of each answer, as a request sends it
      await client.query(`select sum(length(${fn}(id)::text)) from unnest($1::uuid[]) id`, [ids]);
      const us = Number(process.hrtime.bigint() - t0) / 1000 / ids.length;
      if (round >= 2) times[i]!.push(us); // the first two rounds warm the caches and plans
    }
  }
  await client.query('rollback');
  const median = (ts: number[]) => ts.sort((a, b) => a - b)[Math.floor(ts.length / 2)]!;
  return [median(times[0]!), median(times[1]!)];
}

const [now, before] = await measure(['app_public.contacts_get', 'app_hidden.bench_contacts_get_before']);
await client.query(`insert into app_private.contact_fields (name, area, expression) values ('open_tasks', 'bench',
  $$(select count(*) from app_public.contact_notes n where n.organization_id = c.organization_id and n.contact_id = c.id)$$)`);
const [extended, before2] = await measure(['app_public.contacts_get', 'app_hidden.bench_contacts_get_before']);

// same answers, field for field, before the extension
await client.query('delete from app_private.contact_fields where area = $1', ['bench']);
await client.query('begin');
await client.query('set local role svc_request');
await client.query(`select app_hidden.authenticate($1, null, 'open', null)`, [hashKey(org.keys.org!)]);
const same = (await client.query(`select bool_and(app_public.contacts_get(id) = app_hidden.bench_contacts_get_before(id)) as same
  from unnest($1::uuid[]) id`, [ids])).rows[0].same;
await client.query('rollback');
await client.end();
await pool.end();
await db.stop();

const md = `
## The contact renderer generated from registered fields

Produced by \`DATABASE_URL=… node bench/contact-renderer.ts\` (run with the project's Node:
\`node_modules/.bin/node\`) on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores, PostgreSQL from
${process.env.DATABASE_URL ? 'DATABASE_URL' : 'the embedded server'}, Node ${process.version}. One organization of
${fmt(CONTACTS)} contacts (tags, locations, a stage, suppressions, notes); \`contacts_get\` of ${fmt(SAMPLE)} contacts per
statement as the request role under an organization key, ${ROUNDS} rounds, the two functions alternating; median µs per
call. "hand-written" is the renderer before it was generated, restated under another name; "generated" is
\`app_hidden.contacts_json\` as app_private.contact_fields generates it. Same answers, contact for contact: ${same}.

| renderer | µs per call | ratio |
|---|---:|---:|
| hand-written | ${fmt(before, 1)} | 1 |
| generated (the contacts area's fields) | ${fmt(now, 1)} | ${fmt(now / before, 3)} |
| hand-written (second pass) | ${fmt(before2, 1)} | 1 |
| generated, one more field (a count over contact_notes) | ${fmt(extended, 1)} | ${fmt(extended / before2, 3)} |
`;
console.log(md);
writeSection('contact-renderer', md);
