// The same-run baseline of bench:contacts: a copy of the loaded database put back to how the
// contacts reads and upserts were first written (the renderer under nested
// policies, q through every trigram of an (organization_id, search text) index without a pending
// list, the upserted row written under the contacts policies), so both sides run on the same
// machine at the same time. The old definitions are those a database held before,
// kept in contacts-before-renderer.sql (its header says how it was made).
import { readFileSync } from 'node:fs';
import pg from 'pg';

/** The definitions the read paths and the upsert had as first written, and the index they used. */
const beforeSql = readFileSync(new URL('contacts-before-renderer.sql', import.meta.url), 'utf8');

/**
 * Copies `source` to `target` (dropping an older copy) and puts the copy back to the read paths
 * and the upsert as first written. The source must have no other sessions while it is copied.
 */
export async function prepareBaseline(adminUrl: string, source: string, target: string): Promise<void> {
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${target} with (force)`);
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database ${target} template ${source}`);
        break;
      } catch (e) {
        // an autovacuum worker or a closing session still on the source
        if ((e as { code?: string }).code !== '55006' || attempt >= 30) throw e;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${target}`;
  const copy = new pg.Client(url.toString());
  await copy.connect();
  try {
    await copy.query(beforeSql);
  } finally {
    await copy.end();
  }
}
