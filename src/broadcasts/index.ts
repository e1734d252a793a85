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
};
