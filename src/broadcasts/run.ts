// Task `broadcast_run` (payload {organization_id, run_id}; job key broadcast_run:<run id>): sends
// a run in checkpointed batches until none is left (SQL: db/schema/broadcasts.sql):
//   1. app_private.broadcast_claim_batch claims the next batch in a few statements, with the
//      rules of the sequences engine's per-message claim (send-time refusals, rendering, the
//      sink: app_private.claim_enrollment_messages) and writes the checkpoint,
//      committed;
//   2. the channel's transport (src/delivery) gets each claimed message, after that commit;
//   3. app_private.broadcast_record_batch records the answers in one statement and takes the
//      batch out of the checkpoint.
// Pipelined: while the transport has one batch, the next is claimed (the claim `following` it)
// but only prepared: the record of the batch out puts it in
// flight, in the same transaction, and only then does the transport get it. So the checkpoint
// never holds more than one batch handed over, and a prepared one is claimed again by whoever
// sends the run next.
// Within the batch in flight, the messages go to the transport IN_FLIGHT at a time, each marked
// handed (app_private.broadcast_mark_handed, committed to disk) before it goes, and each answer
// written to its mark as it comes, in small transactions on a second connection (so the claim of
// the next batch never holds them up): a process killed outright leaves at most IN_FLIGHT messages
// `unknown` (handed, no answer); what it had answered is recorded and what it never handed over is
// claimed again and sent (app_private.broadcast_settle_in_flight, app_private.broadcast_handed).
// One process sends a run at a time: the job holds a session advisory lock on the run on its
// connection for as long as it sends; the lock dies with the connection, so a worker killed
// outright frees it, and the next job for the run finds the checkpoint it left (unknown).
import type { Task } from 'graphile-worker';
import type pg from 'pg';
import { z } from 'zod';
import { loadConfig } from '../config.ts';
import { serially } from '../db/serial.ts';
import { handOverOne, IN_FLIGHT, type HandOverAnswer, type OutgoingMessage, type Transports } from '../delivery/index.ts';
import type { TaskDeps } from '../registry/area.ts';

const Payload = z.object({ organization_id: z.uuid(), run_id: z.uuid() });

/** Recipients per batch (claimed, rendered and recorded together). BROADCAST_BATCH_SIZE overrides. */
export const DEFAULT_BATCH_SIZE = 200;

type Claim =
  | { action: 'none' | 'done' | 'wait' }
  | { action: 'batch'; handled: number; messages: { enrollment_id: string; step_key: string; message: OutgoingMessage }[] };

export interface RunOptions {
  transports: Transports; baseUrl: string; batchSize?: number; log?: (line: string) => void;
  /** A second connection for the marks of messages handed over (the sender's own, shared, if none). */
  markClient?: pg.ClientBase;
}

/** Marks written together at least this many at a time, unless the transport would otherwise wait. */
const MARK_STEP = 4;

type Claimed = Extract<Claim, { action: 'batch' }>['messages'];

/**
 * The batch's messages to the transport, at most IN_FLIGHT handed over and not answered on disk
 * at any moment: each marked handed before it goes, each answer written to its mark before the
 * message's place is taken by another. Answers every message's answer, in the batch's order.
 */
async function handOverMarked(opts: RunOptions, client: pg.ClientBase, markClient: pg.ClientBase, organizationId: string,
  runId: string, claimed: Claimed): Promise<HandOverAnswer[]> {
  const log = (l: string) => opts.log?.(`broadcast ${l}`);
  const answers: HandOverAnswer[] = new Array(claimed.length);
  const unwritten: object[] = [];
  let marked = 0; // handed over, in the batch's order
  let open = 0; // handed over, answer not yet on disk
  let wake: (() => void) | undefined;
  for (;;) {
    const left = claimed.length - marked;
    // the answers written in the same transaction free their places in it
    const take = Math.min(IN_FLIGHT - open + unwritten.length, left);
    if (left > 0 && take > 0 && take >= Math.min(MARK_STEP, left)) {
      const handing = claimed.slice(marked, marked + take);
      const written = unwritten.splice(0);
      await serially(markClient, 'select app_private.broadcast_mark_handed($1, $2, $3, $4::jsonb)',
        [organizationId, runId, handing.map((m) => m.enrollment_id), JSON.stringify(written)]);
      open += take - written.length;
      for (const [k, m] of handing.entries()) {
        const i = marked + k;
        void handOverOne(opts.transports, client, m.message, log, markClient).then((answer) => {
          answers[i] = answer;
          unwritten.push({ enrollment_id: m.enrollment_id, step_key: m.step_key, ...answer });
          wake?.();
        });
      }
      marked += take;
      continue;
    }
    // every message handed over and answered: the batch's record writes what is left
    if (marked === claimed.length && unwritten.length === open) return answers;
    await new Promise<void>((r) => { wake = r; });
    wake = undefined;
  }
}

/** Sends the run to the end (or until another process holds it); answers whether this call sent it. */
export async function sendRun(client: pg.ClientBase, organizationId: string, runId: string, opts: RunOptions): Promise<boolean> {
  const size = opts.batchSize ?? (Number(process.env.BROADCAST_BATCH_SIZE) || DEFAULT_BATCH_SIZE);
  const sinkChannels = (['email', 'sms'] as const).filter((c) => opts.transports[c].name === 'sink');
  const { rows: [lock] } = await client.query<{ got: boolean }>(
    `select pg_try_advisory_lock(hashtextextended('svc.broadcast_run:' || $1::text, 0)) as got`, [runId]);
  if (!lock?.got) return false;
  // the batch with the transport: its messages, and their answers to come
  let out: { claimed: Claimed; answers: Promise<HandOverAnswer[]> } | undefined;
  // records the batch out; with `promote`, the batch prepared meanwhile is put in flight in the same
  // transaction (answers how many: none when the run was cancelled meanwhile)
  const record = async (batch: NonNullable<typeof out>, promote: boolean) => {
    const answers = await batch.answers;
    const results = batch.claimed.map(({ enrollment_id, step_key }, i) => ({ enrollment_id, step_key, ...answers[i]! }));
    const { rows: [row] } = await serially<{ promoted: number }>(client,
      'select app_private.broadcast_record_batch($1, $2, $3::jsonb, $4) as promoted',
      [organizationId, runId, JSON.stringify(results), promote]);
    return row!.promoted;
  };
  try {
    for (;;) {
      // claimed while the transport has the batch out (the client is shared with it, for its
      // providers' ids: one query at a time)
      const { rows: [row] } = await serially<{ claim: Claim }>(client,
        'select app_private.broadcast_claim_batch($1, $2, $3, $4, $5, $6) as claim',
        [organizationId, runId, size, opts.baseUrl, sinkChannels, out !== undefined]);
      const claim = row!.claim;
      let next = claim.action === 'batch' ? claim.messages : [];
      if (out) {
        const batch = out;
        out = undefined;
        if (await record(batch, next.length > 0) === 0) next = [];
      }
      // wait: nothing was left to claim but the batch out, now recorded; the run can finish
      if (claim.action === 'wait') continue;
      if (claim.action !== 'batch') return true;
      if (!next.length) continue;
      const answers = handOverMarked(opts, client, opts.markClient ?? client, organizationId, runId, next);
      answers.catch(() => undefined); // awaited by its record; a failure surfaces there
      out = { claimed: next, answers };
    }
  } finally {
    try {
      if (out) await record(out, false);
    } finally {
      await client.query(`select pg_advisory_unlock(hashtextextended('svc.broadcast_run:' || $1::text, 0))`, [runId]);
    }
  }
}

export function broadcastRun(deps: TaskDeps): Task {
  const baseUrl = deps.baseUrl ?? loadConfig().baseUrl;
  return async (payload, helpers) => {
    const { organization_id, run_id } = Payload.parse(payload);
    const sent = await helpers.withPgClient((client) => helpers.withPgClient((markClient) =>
      sendRun(client, organization_id, run_id, { transports: deps.transports, baseUrl, markClient, log: (l) => helpers.logger.warn(l) })));
    // another process holds the run (a second job for it, or a dead worker's connection not yet
    // closed): fail, so graphile-worker tries again later and the run is not left unsent
    if (!sent) throw new Error(`broadcast run ${run_id} is held by another process; retrying later`);
  };
}
