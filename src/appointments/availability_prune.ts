// Each minute (the appointments area's crontab, index.ts): drops kept availability answers past
// their five minutes and the noted changes no live answer can still miss (SQL:
// app_private.availability_prune). A kept answer is never used past its time
// whether or not this ran; the prune only keeps the two tables small.
import type { Task } from 'graphile-worker';

export const availabilityPrune: Task = async (_payload, helpers) => {
  const { rows } = await helpers.query<{ dropped: number }>('select app_private.availability_prune() as dropped');
  if (rows[0]?.dropped) helpers.logger.debug(`dropped ${rows[0].dropped} kept availability answers`);
};

/** graphile-worker's crontab syntax: every minute. */
export const availabilityPruneCron = '* * * * * availability_prune';
