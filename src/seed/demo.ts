// The demo organization: what `svc seed demo` creates and `npm start` seeds on an empty database.
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { adminApply } from '../admin/commands.ts';
import type { Applied } from '../admin/fixture.ts';

const demo: unknown = JSON.parse(readFileSync(new URL('./demo.json', import.meta.url), 'utf8'));

export function seedDemo(pool: pg.Pool): Promise<Applied> {
  return adminApply(pool, demo);
}

/** Seeds only when no organization exists yet; returns what it created, if anything. */
export async function seedIfEmpty(pool: pg.Pool): Promise<Applied | undefined> {
  const { rows } = await pool.query(`select not exists (select 1 from app_public.organizations) as empty`);
  return rows[0].empty ? seedDemo(pool) : undefined;
}

export function describeSeed(applied: Applied, baseUrl: string): string {
  const lines = [
    'Demo organization created. These keys are shown once; only their hashes are stored:',
    ...Object.entries(applied.keys).map(([ref, key]) => `  ${ref.padEnd(18)} ${key}`),
    '',
    `Try: curl -H "Authorization: Bearer ${applied.keys.organization ?? Object.values(applied.keys)[0]}" ${baseUrl}/api/v1/me`,
  ];
  return lines.join('\n');
}
