// db/schema.sql is the schema the migrations leave. Its header names the migrations it was
// dumped from, checked everywhere; where a pg_dump can dump the test server (one of the same or
// a newer major version), its text is also compared with a dump of the migrated template.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { ownerOf, splitByArea } from '../../scripts/schema-areas.ts';
import { dumpSchema, findPgDump, migrationsHash, readSchemaFile, renderAreaFiles, schemaFolder } from '../../scripts/schema-dump.ts';
import { AREAS } from '../../src/areas.ts';
import { createTestDatabase } from '../helpers/db.ts';

const stale = 'db/schema.sql is out of date: run `npm run db:dump` (db/README.md) and commit it';

/** The first lines where `want` and `got` part, with a little context. */
function firstDifference(want: string, got: string): string {
  const a = want.split('\n');
  const b = got.split('\n');
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return [
    ...a.slice(Math.max(0, i - 3), i).map((l) => `  ${l}`),
    ...a.slice(i, i + 6).map((l) => `- ${l}`),
    ...b.slice(i, i + 6).map((l) => `+ ${l}`),
  ].join('\n');
}

const ownerUrl = process.env.SVC_TEST_OWNER_URL;
if (!ownerUrl) throw new Error('SVC_TEST_OWNER_URL is not set: run the tests with npm test');
// ava takes no test declared after an await, so the pg_dump is found first.
const pgDump = await findPgDump(ownerUrl);

test('db/schema.sql is current: dumped from the migrations of this tree, and what pg_dump makes of them', async (t) => {
  t.is(readSchemaFile().hash, migrationsHash(true), stale);
  // The text itself is compared wherever a pg_dump can read the test server (the embedded
  // PostgreSQL ships none); the header check above runs everywhere.
  if ('unusable' in pgDump) {
    t.log(`text not compared: ${pgDump.unusable}`);
    return;
  }
  const db = await createTestDatabase();
  try {
    const dumped = await dumpSchema(db.ownerUrl, pgDump.path);
    const { body } = readSchemaFile();
    t.true(dumped === body, `${stale}. With ${pgDump.version}, it differs from the file first here (- file, + dump):\n${firstDifference(body, dumped)}`);
  } finally {
    await db.drop();
  }
});

test('db/schema/<area>.sql is db/schema.sql split by owner: one file per area of src/areas.ts and the platform', (t) => {
  const want = renderAreaFiles(readSchemaFile().body);
  t.deepEqual([...want.keys()].sort(), [...AREAS.map((a) => `${a.name}.sql`), 'platform.sql'].sort());
  const have = readdirSync(schemaFolder).filter((f) => f.endsWith('.sql')).sort();
  t.deepEqual(have, [...want.keys()].sort(), `${stale}: db/schema/ holds other files than the areas'`);
  for (const [file, text] of want) t.true(readFileSync(`${schemaFolder}/${file}`, 'utf8') === text, `db/schema/${file}: ${stale}`);
});

test('every table and function has an owning area, and a trigger function follows its table', (t) => {
  t.is(ownerOf('table', 'contacts'), 'contacts');
  t.is(ownerOf('function', 'tg_appointments__inserted'), 'appointments');
  t.is(ownerOf('function', 'authenticate'), 'platform');
  t.is(ownerOf('function', 'no_such_function_anywhere'), undefined);
  t.throws(() => splitByArea('--\n-- Name: mystery; Type: TABLE; Schema: app_public; Owner: svc_owner\n--\n\nCREATE TABLE app_public.mystery ();'),
    { message: /no area owns table app_public\.mystery: add each to OWNERSHIP in scripts\/schema-areas\.ts/ });
});
