// Where the database is: DATABASE_URL when set (the owner/migration connection), else the
// embedded PostgreSQL. The request pool logs in as svc_login, derived from the same server.
import type { Config } from '../config.ts';
import { startEmbedded } from './embedded.ts';

export interface Database {
  /** Owner connection: migrations and operator commands. */
  ownerUrl: string;
  /** svc_login connection: the request pool (no data rights until it sets a role). */
  loginUrl: string;
  /** Set on svc_login by `migrate` when known (embedded, or SVC_LOGIN_PASSWORD). */
  loginPassword: string | undefined;
  stop(): Promise<void>;
}

export function loginUrlFor(ownerUrl: string, password: string | undefined): string {
  const url = new URL(ownerUrl);
  url.username = 'svc_login';
  url.password = password ? encodeURIComponent(password) : '';
  return url.toString();
}

export async function openDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    return {
      ownerUrl: config.databaseUrl,
      loginUrl: loginUrlFor(config.databaseUrl, config.loginPassword),
      loginPassword: config.loginPassword,
      stop: async () => undefined,
    };
  }
  const embedded = await startEmbedded(config.dataDir, config.embeddedPort);
  return {
    ownerUrl: embedded.ownerUrl,
    loginUrl: loginUrlFor(embedded.ownerUrl, embedded.loginPassword),
    loginPassword: embedded.loginPassword,
    stop: embedded.stop,
  };
}
