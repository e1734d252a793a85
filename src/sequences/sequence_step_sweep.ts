// Task `sequence_step_sweep`: adds the sequence_step job of every active enrollment whose step
// runs within the next two minutes and has none, in one add_jobs call (job keys make a second
// sweep add nothing twice). The enrollment, with its next_run_at, is the durable unit of work:
// a write that moves an enrollment to a step due later adds no job in its transaction.
//   - cron, each minute, payload {}: every organization;
//   - payload {organization_id}: one organization, kicked by requests whose enrollments run
//     within those two minutes (job key sequence_step_sweep:<organization id>, one waiting job for
//     a burst of requests). app_private.sweep_enrollment_steps first waits for the requests that
//     relied on this job to commit.
// Runs on graphile-worker's owner connection, as sequence_step does.
import type { Task } from 'graphile-worker';
import { z } from 'zod';

const Payload = z.object({ organization_id: z.uuid().optional() });

export const sequenceStepSweep: Task = async (payload, helpers) => {
  const { organization_id } = Payload.parse(payload ?? {});
  const { rows } = await helpers.query<{ added: number }>(
    'select app_private.sweep_enrollment_steps($1) as added', [organization_id ?? null]);
  const added = rows[0]?.added ?? 0;
  if (added > 0) helpers.logger.debug(`sequence_step_sweep queued ${added} step jobs`);
};

/** Each minute: the sweep of every organization (graphile-worker's crontab syntax). */
export const sequenceStepSweepCron = '* * * * * sequence_step_sweep';
