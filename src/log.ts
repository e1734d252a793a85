// Structured JSON logs (pino): one line per event, with the request id where there is one.
// SVC_LOG_LEVEL (or LOG_LEVEL) sets the level; the access log (src/ops/access-log.ts) writes at info.
import { pino } from 'pino';

export const log = pino({
  level: process.env.SVC_LOG_LEVEL || process.env.LOG_LEVEL || (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
  base: { service: 'svc' },
  timestamp: pino.stdTimeFunctions.isoTime,
});
export type Logger = typeof log;
