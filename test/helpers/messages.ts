// Queueing messages the way the service does (app_hidden.queue_message under the request role
// and a key's claims) and draining the job queue once, for the worker and delivery tests.
import { runOnce } from 'graphile-worker';
import pg from 'pg';
import type { OutgoingMessage, Transport, Transports } from '../../src/delivery/index.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { allTasks, workerLogger, workerPreset } from '../../src/worker.ts';

import type { TestDatabase } from './db.ts';
import { asKey } from './sql.ts';

export interface MessageInput {
  channel: 'email' | 'sms';
  recipient: string;
  subject?: string | null;
  body: string;
  meta?: Record<string, unknown>;
}

/** Queues a message in a transaction as svc_request with `key`'s claims; commits unless told to roll back. */
export async function queueMessage(db: TestDatabase, key: string, m: MessageInput, opts: { rollback?: boolean } = {}): Promise<string> {
  return asKey({ db }, key, async (c) => (await c.query(`select app_hidden.queue_message($1, $2, $3, $4, null, $5) as id`,
    [m.channel, m.recipient, m.subject ?? null, m.body, m.meta ?? {}])).rows[0].id as string, { commit: !opts.rollback });
}

/** Runs every job that is due, with these transports, and returns when the queue is drained. */
export async function runJobs(db: TestDatabase, transports: Transports, concurrency = 1): Promise<void> {
  // Our own pool, ended and awaited here: graphile-worker does not wait for the pool it makes to
  // close, and a connection still closing when the file drops its database would throw.
  const pgPool = new pg.Pool({ connectionString: db.ownerUrl, max: concurrency + 2 });
  pgPool.on('error', () => undefined); // an idle connection dropped with the database
  pgPool.on('connect', (client) => client.on('error', () => undefined));
  try {
    await runOnce({ pgPool, taskList: allTasks({ transports }), concurrency, logger: workerLogger, preset: workerPreset });
  } finally {
    await pgPool.end();
  }
}

export const sinkOnly: Transports = { email: sinkTransport, sms: sinkTransport };

/** A transport that records what it was handed, then behaves like `inner`. */
export function recording(inner: Transport, delayMs = 0): Transport & { sent: OutgoingMessage[] } {
  const sent: OutgoingMessage[] = [];
  return {
    name: `recording ${inner.name}`,
    sent,
    async send(m, tx) {
      sent.push(m);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      await inner.send(m, tx);
    },
  };
}

export async function messageRow(db: TestDatabase, id: string) {
  const { rows: [row] } = await db.owner.query(
    `select status, error, sent_at, attempts, next_attempt_at from app_private.outgoing_messages where id = $1`, [id]);
  return row as { status: string; error: string | null; sent_at: Date | null; attempts: number; next_attempt_at: Date | null } | undefined;
}

export async function jobsFor(db: TestDatabase, id: string) {
  const { rows } = await db.owner.query(
    `select t.identifier as task_identifier, j.key, j.attempts, j.max_attempts, j.last_error, j.locked_at, j.run_at
       from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where j.payload->>'message_id' = $1`, [id]);
  return rows as { task_identifier: string; key: string | null; attempts: number; max_attempts: number; last_error: string | null; locked_at: Date | null; run_at: Date }[];
}
