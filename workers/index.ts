// Background tasks, one file per task beside this one, named after what it does. Jobs are
// enqueued from SQL in the same transaction as the write that causes them.
import type { TaskList } from 'graphile-worker';
import type { Transports } from '../src/delivery/index.ts';
import { deliverMessage } from './deliver_message.ts';
import { purgeExpiredRequestRecords } from './purge_expired_request_records.ts';
import { refreshSearchTrigrams } from './refresh_search_trigrams.ts';

export function createTaskList(transports: Transports): TaskList {
  return {
    deliver_message: deliverMessage(transports),
    purge_expired_request_records: purgeExpiredRequestRecords,
    refresh_search_trigrams: refreshSearchTrigrams,
  };
}

// graphile-worker's cron: each tick runs once however many workers run (it records the last run
// in its known_crontabs table); a tick missed while no worker ran is skipped, not made up.
export const crontab = [
  '0 * * * * purge_expired_request_records',
  '30 * * * * refresh_search_trigrams',
].join('\n');
