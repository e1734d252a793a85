// The broadcasts area: the schedule of a `kind: broadcast` sequence (once or recurring), the
// scheduler that fires each occurrence once, and the runs that send to the audience in
// checkpointed batches through the sequences engine's rendering and transports.
// docs/broadcasts.md describes it.
import type { Area } from '../registry/area.ts';
import { broadcastFire, broadcastFireCron } from './fire.ts';
import { broadcastOperations } from './operations.ts';
import { broadcastRun } from './run.ts';

export const broadcasts: Area = {
  name: 'broadcasts',
  operations: broadcastOperations,
  tasks: (deps) => ({ broadcast_fire: broadcastFire, broadcast_run: broadcastRun(deps) }),
  crontab: [broadcastFireCron],
  graphql: {
    // what sequences_get_schedule shows, runs included. Not a schedule's recurrence anchor, nor a
    // run's progress bookkeeping (in_flight, prepared, prepared_after, progress_at, claimed_through).
    tables: {
      broadcast_schedules: ['organization_id', 'sequence_id', 'schedule_kind', 'send_at', 'rrule', 'timezone', 'ends_on', 'status',
        'next_fire_at', 'created_at', 'updated_at'],
      broadcast_runs: ['organization_id', 'id', 'sequence_id', 'fire_at', 'status', 'started_at', 'finished_at', 'recipients', 'sent',
        'skipped', 'failed', 'unknown', 'cancelled'],
    },
  },
};
