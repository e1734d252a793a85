// Every setting the service reads from the environment, in one place (README: Configuration).
import { resolve } from 'node:path';

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

export interface Config {
  databaseUrl: string | undefined;
  loginPassword: string | undefined;
  dataDir: string;
  embeddedPort: number;
  port: number;
  host: string;
  baseUrl: string;
  emailTransport: string;
  smsTransport: string;
  rateLimit: number;
  logLevel: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'PORT', 3000);
  const host = env.HOST || '127.0.0.1';
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    loginPassword: env.SVC_LOGIN_PASSWORD || undefined,
    dataDir: resolve(env.SVC_DATA_DIR || '.data'),
    embeddedPort: int(env, 'SVC_EMBEDDED_PORT', 54329),
    port,
    host,
    baseUrl: (env.SVC_BASE_URL || `http://${host}:${port}`).replace(/\/+$/, ''),
    emailTransport: env.EMAIL_TRANSPORT || 'sink',
    smsTransport: env.SMS_TRANSPORT || 'sink',
    rateLimit: int(env, 'SVC_RATE_LIMIT', 600),
    logLevel: env.LOG_LEVEL || 'info',
  };
}
