// One statement for a public endpoint (a form post, a provider's webhook): no credential and no
// claims, as the request role, which may call only the definer functions granted to it for this.
import type pg from 'pg';
import { checkout, publicStatementOn, releaseClient } from './request.ts';

/** Runs `text` in its own transaction as svc_request; the rows. Nothing is committed when it throws. */
export async function publicStatement<T = Record<string, unknown>>(pool: pg.Pool, text: string, values: unknown[]): Promise<T[]> {
  const client = await checkout(pool);
  let broken = false;
  try {
    await client.query('begin');
    await client.query('set local role svc_request');
    const { rows } = await client.query(text, values);
    await client.query('commit');
    return rows as T[];
  } catch (e) {
    broken = await client.query('rollback').then(() => false, () => true);
    throw e;
  } finally {
    releaseClient(client, broken);
  }
}

/**
 * publicStatement in one round trip instead of four (begin, role, statement, commit): the
 * statement prepared once per connection (publicStatementOn). For a page called at a provider's
 * rate (the SMS webhooks).
 */
export async function publicCall<T = Record<string, unknown>>(pool: pg.Pool, text: string, values: unknown[]): Promise<T[]> {
  const client = await checkout(pool);
  try {
    return (await publicStatementOn(client, text, values)) as T[];
  } finally {
    releaseClient(client);
  }
}
