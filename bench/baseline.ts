// The same-run baseline of bench:contacts: a copy of the loaded database put back to how the
// contacts reads and upserts were before migrations 000008 and 000011 (the renderer under nested
// policies, q through every trigram of an (organization_id, search text) index without a pending
// list, the upserted row written under the contacts policies), built from the committed
// migrations themselves, so both sides run on the same machine at the same time.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

const migrations = new URL('../migrations/committed/', import.meta.url);

function migration(prefix: string): string {
  const file = readdirSync(migrations).find((f) => f.startsWith(prefix));
  if (!file) throw new Error(`no committed migration ${prefix}`);
  return readFileSync(new URL(file, migrations), 'utf8');
}

/** One statement of a migration, from its first line to the end of its body or statement. */
function statement(text: string, start: string): string {
  const i = text.indexOf(start);
  if (i < 0) throw new Error(`not found: ${start}`);
  const body = text.indexOf('$$', i);
  const end = body >= 0 && body < text.indexOf(';', i) ? text.indexOf('$$;', text.indexOf('$$', body + 2)) + 3 : text.indexOf(';', i) + 1;
  return text.slice(i, end);
}

/** The definitions the read paths and the upsert had before 000008, as 000004 and 000005 wrote them. */
export function beforeSql(): string {
  const m4 = migration('000004-');
  const m5 = migration('000005-');
  const replace = (s: string) => s.replace(/^create function/, 'create or replace function');
  return [
    'set role svc_owner',
    replace(statement(m4, 'create function app_hidden.contact_json(c app_public.contacts)')),
    replace(statement(m5, 'create function app_hidden.contacts_matching(pattern text, digits text)')),
    statement(m5, 'create or replace function app_public.contacts_search('),
    replace(statement(m4, 'create function app_public.contacts_upsert(')),
    'drop index app_public.contacts_search',
    `set maintenance_work_mem = '1GB'`,
    statement(m4, 'create index contacts_org_search on app_public.contacts'),
    'analyze app_public.contacts',
    'reset role',
  ].map((sql) => sql.replace(/;\s*$/, '')).join(';\n');
}

/**
 * Copies `source` to `target` (dropping an older copy) and puts the copy back to the read paths
 * and the upsert before 000008. The source must have no other sessions while it is copied.
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
    await copy.query(beforeSql());
  } finally {
    await copy.end();
  }
}
