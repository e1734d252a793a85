// Task `sequence_step`: runs the step an enrollment stands on, once (payload {organization_id,
// enrollment_id, step_key}; job key sequence_step:<enrollment id>, so an enrollment has at most
// one pending job). Runs on graphile-worker's owner connection, since the engine's functions
// are the owner's (app_private).
//
// Exactly the order that keeps a message from going twice:
//   1. app_private.sequence_step_claim: one transaction (one statement) that checks the
//      enrollment, its exits and the send-time rules, and either finishes the step (wait,
//      skip, exit) or claims the message: step run `sending` + the message row, committed.
//   2. The transport gets the message, after that commit.
//   3. app_private.sequence_step_record: the transport's answer (sent or failed) and the move
//      to the next step, in a second transaction.
// The local sink (EMAIL_TRANSPORT/SMS_TRANSPORT=sink) is a table: nothing leaves the database, so
// the claim writes its outbox row (the row the sink writes) and records it in one transaction.
// If the process dies between 1 and 3, the step run stays `sending`; the job runs again once
// graphile-worker frees it, the claim finds `sending`, marks it `unknown` and moves on: the
// message is never handed over a second time.
//
// After its own step, the job takes up to TAKEN_PER_JOB other due steps off the queue
// (app_private.sequence_steps_take) and runs them the same way on its connection: a burst of
// enrollments then costs one job's queue bookkeeping per handful of messages. A taken step whose
// run fails gets its own job again, flagged so that no job takes it (graphile-worker's attempts
// and backoff govern it); one left by a dead process is queued by the sweep within a minute.
import type { PoolClient } from 'pg';
import type { Logger, Task } from 'graphile-worker';
import { z } from 'zod';
import { loadConfig } from '../config.ts';
import type { OutgoingMessage } from '../delivery/index.ts';
import type { TaskDeps } from '../registry/area.ts';

const Payload = z.object({ organization_id: z.uuid(), enrollment_id: z.uuid(), step_key: z.string().min(1) });
type Step = z.infer<typeof Payload>;

type Claim = { action: 'none' | 'done' } | { action: 'send'; message: OutgoingMessage };

/** How many other due steps a job runs after its own: small, so a slow transport delays few. */
export const TAKEN_PER_JOB = 16;
/** The flag of a step's job that must not be taken by another (it failed when taken). */
const RUN_ALONE = 'alone';

export function sequenceStep(deps: TaskDeps): Task {
  const baseUrl = deps.baseUrl ?? loadConfig().baseUrl;
  // Channels whose transport is the local sink, a table: the claim stores and records their
  // messages in its own transaction (nothing leaves the database, so exactly once).
  const sinkChannels = (['email', 'sms'] as const).filter((c) => deps.transports[c].name === 'sink');

  async function run(client: PoolClient, logger: Logger, { organization_id, enrollment_id, step_key }: Step) {
    const { rows } = await client.query<{ claim: Claim }>(
      'select app_private.sequence_step_claim($1, $2, $3, $4, $5) as claim', [organization_id, enrollment_id, step_key, baseUrl, sinkChannels]);
    const claim = rows[0]!.claim;
    if (claim.action !== 'send') return;
    const message = claim.message;
    let error: string | null = null;
    try {
      const accepted = await deps.transports[message.channel].send(message, client);
      // the provider's id (Twilio's SID), which its delivery reports name (src/delivery/webhooks.ts)
      if (accepted?.providerId) {
        await client.query('select app_private.delivery_set_provider_id($1, $2, $3)', [organization_id, message.id, accepted.providerId]);
      }
    } catch (e) {
      error = String((e as Error)?.message ?? e).slice(0, 1000);
      logger.warn(`sequence message ${message.id} refused by the ${message.channel} transport: ${error}`);
    }
    await client.query('select app_private.sequence_step_record($1, $2, $3, $4, $5)',
      [organization_id, enrollment_id, step_key, message.id, error]);
  }

  return async (payload, helpers) => {
    const own = Payload.parse(payload);
    await helpers.withPgClient(async (client) => {
      await run(client, helpers.logger, own);
      const { rows: taken } = await client.query<Step>('select * from app_private.sequence_steps_take($1)', [TAKEN_PER_JOB]);
      for (const step of taken) {
        try {
          await run(client, helpers.logger, step);
        } catch (e) {
          helpers.logger.error(`sequence step of enrollment ${step.enrollment_id} failed, queued again: ${(e as Error)?.message ?? e}`);
          // its own job again, which no other job takes: graphile-worker's attempts and backoff
          // then govern it (should this fail too, the sweep queues it within a minute)
          await helpers.addJob('sequence_step', step, { jobKey: `sequence_step:${step.enrollment_id}`, flags: [RUN_ALONE] })
            .catch(() => undefined);
        }
      }
    });
  };
}
