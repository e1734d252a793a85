// Every setting the service reads from the environment, in one place (README: Configuration).
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

function share(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`${name} must be a number from 0 to 1, got "${raw}"`);
  return n;
}

function trustProxy(raw: string | undefined): boolean | number | string {
  if (!raw || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw; // addresses or subnets, comma-separated, as express takes them
}

/** `host` or `host:port`, as SVC_ALLOWED_HOSTS lists them. */
function hostEntry(entry: string): URL {
  let url: URL | undefined;
  try { url = new URL(`http://${entry}`); } catch { /* refused below */ }
  if (!url || url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    throw new Error(`SVC_ALLOWED_HOSTS entries must be host names, with a port or without, got "${entry}"`);
  }
  return url;
}

/** The origin of an entry under a scheme: without a port, that scheme's default port. */
const originAs = (scheme: 'http' | 'https', entry: string) => new URL(`${scheme}://${entry}`).origin;

function onOff(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on' || raw === 'off') return raw === 'on';
  throw new Error(`${name} must be on or off, got "${raw}"`);
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false' || raw === 'off') return false;
  if (raw === '1' || raw === 'true' || raw === 'on') return true;
  throw new Error(`${name} must be 1 or 0, got "${raw}"`);
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
  /** Requests per 60 s per client address per route; null when turned off (`off`). */
  rateLimit: number | null;
  /** The same for the providers' signed webhooks (SMS, email, voice), which report in bursts; null when `off`. */
  webhookRateLimit: number | null;
  /** express's `trust proxy`: whether and which proxies' X-Forwarded-For to believe. */
  trustProxy: boolean | number | string;
  /** Host names the MCP endpoint answers for (DNS rebinding protection), without ports. */
  allowedHosts: string[];
  /** This server's own names: a browser Origin naming one of them at the listening port is ours. */
  localHosts: string[];
  /** Further origins (scheme://host[:port]) a browser may call the MCP endpoint from. */
  allowedOrigins: string[];
  logLevel: string;
  /** Whether /internal/graphql is served (`SVC_INTERNAL_GRAPHQL=off` turns it off). */
  internalGraphql: boolean;
  /** Connections of the heavy lane, where expensive calls run (src/platform/heavy.ts). */
  heavyConnections: number;
  /** Expensive calls one credential, and one organization, may have in flight. */
  heavyPerCredential: number;
  heavyPerOrganization: number;
  /** Whether webhook URLs may be http or name private, loopback or link-local addresses (`SVC_WEBHOOKS_ALLOW_PRIVATE=1`). */
  webhooksAllowPrivate: boolean;
  /** The first retry delay of a webhook delivery; each next one doubles (docs/webhooks.md). */
  webhooksRetryBaseMs: number;
  /** The bearer token /metrics asks for (SVC_METRICS_TOKEN); undefined: metrics off, /metrics answers 404. */
  metricsToken: string | undefined;
  /** The share of requests that write an access log line (SVC_ACCESS_LOG_SAMPLE, 0 to 1). */
  accessLogSample: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'PORT', 3000);
  const host = env.HOST || '127.0.0.1';
  const base = new URL(env.SVC_BASE_URL || `http://${host}:${port}`);
  const localHosts = [...new Set(['localhost', '127.0.0.1', '[::1]', host.includes(':') ? `[${host}]` : host])];
  const extraHosts = (env.SVC_ALLOWED_HOSTS || '').split(',').map((h) => h.trim()).filter(Boolean);
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
    rateLimit: env.SVC_RATE_LIMIT === 'off' ? null : int(env, 'SVC_RATE_LIMIT', 600),
    webhookRateLimit: env.SVC_WEBHOOK_RATE_LIMIT === 'off' ? null : int(env, 'SVC_WEBHOOK_RATE_LIMIT', 60_000),
    trustProxy: trustProxy(env.SVC_TRUST_PROXY),
    allowedHosts: [...new Set([...localHosts, base.hostname, ...extraHosts.map((h) => hostEntry(h).hostname)])],
    localHosts,
    allowedOrigins: [...new Set([base.origin, ...extraHosts.flatMap((h) => [originAs('http', h), originAs('https', h)])])],
    logLevel: env.SVC_LOG_LEVEL || env.LOG_LEVEL || 'info',
    internalGraphql: onOff(env, 'SVC_INTERNAL_GRAPHQL', true),
    // half the cores, so that expensive calls leave the other half to everything else
    heavyConnections: int(env, 'SVC_HEAVY_CONNECTIONS', Math.max(1, Math.floor(availableParallelism() / 2))),
    heavyPerCredential: int(env, 'SVC_HEAVY_PER_CREDENTIAL', 2),
    heavyPerOrganization: int(env, 'SVC_HEAVY_PER_ORGANIZATION', 4),
    webhooksAllowPrivate: flag(env, 'SVC_WEBHOOKS_ALLOW_PRIVATE'),
    webhooksRetryBaseMs: int(env, 'SVC_WEBHOOKS_RETRY_BASE_MS', 30_000),
    metricsToken: env.SVC_METRICS_TOKEN || undefined,
    accessLogSample: share(env, 'SVC_ACCESS_LOG_SAMPLE', 1),
  };
}
