// Structured JSON logs (pino): one line per event, with the request id where there is one.
import { pino } from 'pino';

export const log = pino({
  level: process.env.LOG_LEVEL || (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
  base: { service: 'svc' },
  timestamp: pino.stdTimeFunctions.isoTime,
});
export type Logger = typeof log;
