// Hourly (crontab in workers/index.ts): drops idempotency records past their 24 h replay window
// and rate-limit windows no process counts in any more. Nothing reads rows that old, and both
// tables would otherwise only grow.
import type { Task } from 'graphile-worker';

export const purgeExpiredRequestRecords: Task = async (_payload, helpers) => {
  const keys = await helpers.query(`delete from app_private.idempotency_keys where created_at < now() - interval '24 hours'`);
  const windows = await helpers.query(`delete from app_private.rate_limit_windows where window_start < now() - interval '2 minutes'`);
  helpers.logger.info(`purged ${keys.rowCount} idempotency records and ${windows.rowCount} rate-limit windows`);
};
