// Structured JSON logs (pino): one line per event, with the request id where there is one.
// SVC_LOG_LEVEL (or LOG_LEVEL) sets the level; the access log (src/ops/access-log.ts) writes at info.
//
// Lines go to stdout in batches: pino's destination keeps them until 4 kB have gathered, or for
// at most a second, and writes them in one system call, synchronously (no hand-off to a thread).
// A write per line cost the access log most of its CPU under load (bench/ops-access-log.ts).
// Whatever is pending is written when the process exits; only a process killed outright
// (SIGKILL) can lose its last second of lines.
import { pino } from 'pino';

const destination = pino.destination({ dest: 1, sync: true, minLength: 4096, periodicFlush: 1000 });
process.on('exit', () => { try { destination.flushSync(); } catch { /* stdout already closed */ } });

export const log = pino({
  level: process.env.SVC_LOG_LEVEL || process.env.LOG_LEVEL || (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
  base: { service: 'svc' },
  timestamp: pino.stdTimeFunctions.isoTime,
}, destination);
export type Logger = typeof log;
