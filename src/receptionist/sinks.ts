import type { TaskDeps } from '../registry/area.ts';

/** The channels whose transport is the local sink: SQL stores their messages with the record. */
export const sinkOnlyChannels = (deps: TaskDeps): string[] =>
  (['email', 'sms'] as const).filter((c) => deps.transports[c].name === 'sink');
