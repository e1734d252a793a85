// Hourly (the contacts area's crontab, index.ts): recounts how common each three-character
// piece of the contacts' names, emails and phones is, from a sample of contacts. contacts_search
// looks up the rarest pieces of a q in the trigram index; stale counts make a search slower, never
// different, and with none counted yet it looks up the whole q.
import type { Task } from 'graphile-worker';

export const refreshSearchTrigrams: Task = async (_payload, helpers) => {
  const { rows } = await helpers.query<{ pieces: number }>('select app_private.refresh_search_trigrams() as pieces');
  helpers.logger.info(`counted ${rows[0]?.pieces ?? 0} search pieces`);
};
