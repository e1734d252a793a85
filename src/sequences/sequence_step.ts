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
//   3. app_private.sequence_steps_record: the transport's answer (sent or failed) and the move
//      to the next step, in a second transaction; a refusal for now leaves the step `retrying`
//      and the message with the delivery queue, which moves the enrollment on once it is done.
// The local sink (EMAIL_TRANSPORT/SMS_TRANSPORT=sink) is a table: nothing leaves the database, so
// the claim writes its outbox row (the row the sink writes) and records it in one transaction.
// If the process dies between 1 and 3, the step run stays `sending`; the job runs again once
// graphile-worker frees it, the claim finds `sending`, marks it `unknown` and moves on: the
// message is never handed over a second time.
//
// A job runs its own step together with up to TAKEN_PER_JOB other due steps it takes off the queue
// (app_private.sequence_steps_take): one claim for all of them (app_private.sequence_steps_claim,
// the per-message claim's rules set-based), the messages handed to the
// transports at once, one record of the answers (app_private.sequence_steps_record). A burst of
// enrollments then costs two statements and one job's queue bookkeeping per batch. Should the
// batch's claim fail (nothing is then claimed), its steps run one by one as above; a taken step
// whose run fails gets its own job again, flagged so that no job takes it (graphile-worker's
// attempts and backoff govern it), and so does a job that failed before. A dead process leaves
// at most its batches `sending` (unknown, never handed over twice); the taken steps it held are
// queued by the sweep within a minute.
import type { PoolClient } from 'pg';
import type { Logger, Task } from 'graphile-worker';
import { z } from 'zod';
import { loadConfig } from '../config.ts';
import { serially } from '../db/serial.ts';
import { handOver, isPermanentDeliveryError, type OutgoingMessage } from '../delivery/index.ts';
import type { TaskDeps } from '../registry/area.ts';

const Payload = z.object({ organization_id: z.uuid(), enrollment_id: z.uuid(), step_key: z.string().min(1) });
type Step = z.infer<typeof Payload>;

type Claim = { action: 'none' | 'done' } | { action: 'send'; message: OutgoingMessage };

/**
 * How many other due steps a job runs with its own: the messages of a batch go out at once and are
 * recorded together, so one slow answer delays the record of its batch, and a process killed
 * while it sends leaves that many `unknown`.
 */
export const TAKEN_PER_JOB = 49;
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
    let permanent = false;
    try {
      const accepted = await deps.transports[message.channel].send(message, client);
      // the provider's id (Twilio's SID), which its delivery reports name (src/delivery/webhooks.ts)
      if (accepted?.providerId) {
        await client.query('select app_private.delivery_set_provider_id($1, $2, $3)', [organization_id, message.id, accepted.providerId]);
      }
    } catch (e) {
      error = String((e as Error)?.message ?? e).slice(0, 1000);
      permanent = isPermanentDeliveryError(e);
      logger.warn(`sequence message ${message.id} refused by the ${message.channel} transport: ${error}`);
    }
    // a refusal for now is not final: the record hands the message to the delivery queue's retries
    // and the enrollment stays on the step (app_private.record_enrollment_messages)
    await client.query('select app_private.sequence_steps_record($1::jsonb)', [JSON.stringify([
      { organization_id, enrollment_id, step_key, message_id: message.id, error, provider_id: null, permanent }])]);
  }

  /** The steps' messages claimed together, handed over at once, their answers recorded together. */
  async function runTogether(client: PoolClient, logger: Logger, steps: Step[]): Promise<'claimed' | 'unclaimed'> {
    let claimed: (Step & { message: OutgoingMessage })[];
    try {
      const { rows } = await client.query<{ claimed: typeof claimed }>(
        'select app_private.sequence_steps_claim($1::jsonb, $2, $3) as claimed', [JSON.stringify(steps), baseUrl, sinkChannels]);
      claimed = rows[0]!.claimed;
    } catch (e) {
      logger.warn(`sequence steps claimed together failed, each runs alone: ${(e as Error)?.message ?? e}`);
      return 'unclaimed';
    }
    if (!claimed.length) return 'claimed';
    const answers = await handOver(deps.transports, client, claimed.map((c) => c.message), (l) => logger.warn(`sequence ${l}`));
    // a failure here leaves the claimed step runs `sending`: this job fails and its step, and the
    // sweep the taken ones, come back to find them (unknown), never to hand them over again
    await serially(client, 'select app_private.sequence_steps_record($1::jsonb)', [JSON.stringify(claimed.map(
      ({ organization_id, enrollment_id, step_key }, i) => ({ organization_id, enrollment_id, step_key, ...answers[i]! })))]);
    return 'claimed';
  }

  return async (payload, helpers) => {
    const own = Payload.parse(payload);
    // a job that failed before (or was given back to run alone) runs its own step alone, under
    // graphile-worker's attempts and backoff
    const alone = helpers.job.attempts > 1 || Boolean(helpers.job.flags?.[RUN_ALONE]);
    await helpers.withPgClient(async (client) => {
      if (alone) await run(client, helpers.logger, own);
      const { rows: taken } = await client.query<Step>('select * from app_private.sequence_steps_take($1)', [TAKEN_PER_JOB]);
      const steps = alone ? taken : [own, ...taken];
      if (!steps.length || await runTogether(client, helpers.logger, steps) === 'claimed') return;
      if (!alone) await run(client, helpers.logger, own);
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
