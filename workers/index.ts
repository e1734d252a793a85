// The platform's background tasks (delivery and housekeeping), one file per task beside this
// one, named after what it does; each area brings its own (Area.tasks). Jobs are enqueued from
// SQL in the same transaction as the write that causes them.
import type { TaskList } from 'graphile-worker';
import type { TaskDeps } from '../src/registry/area.ts';
import { deliverMessage } from './deliver_message.ts';
import { purgeExpiredRequestRecords } from './purge_expired_request_records.ts';

export function platformTasks({ transports }: TaskDeps): TaskList {
  return {
    deliver_message: deliverMessage(transports),
    purge_expired_request_records: purgeExpiredRequestRecords,
  };
}

// graphile-worker's cron: each tick runs once however many workers run (it records the last run
// in its known_crontabs table); a tick missed while no worker ran is skipped, not made up.
export const platformCrontab = ['0 * * * * purge_expired_request_records'];
