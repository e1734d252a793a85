// The SQL template: values reach PostgreSQL as data on both paths (bind parameters and the
// escaped literals of the one-round-trip path), arrays included.
import test from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { literal, sql, toQuery } from '../../src/db/sql.ts';

let db: TestDatabase;
test.before(async () => { db = await createTestDatabase(); });
test.after.always(async () => { await db?.drop(); });

const values = ['plain', 'quote " and \\ backslash', "it's", 'comma, {brace}', 'NULL', null];

test('a JS array is a PostgreSQL array, as a bind parameter and as a literal', async (t) => {
  const q = sql`select ${values}::text[] as a, ${[1, 2, 3]}::int[] as n`;
  const { rows: [bound] } = await db.owner.query(toQuery(q));
  t.deepEqual(bound.a, values);
  t.deepEqual(bound.n, [1, 2, 3]);
  const { rows: [inlined] } = await db.owner.query(`select ${literal(values)}::text[] as a, ${literal([])}::uuid[] as e`);
  t.deepEqual(inlined.a, values);
  t.deepEqual(inlined.e, []);
});
