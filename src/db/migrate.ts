// Applies graphile-migrate's committed migrations (idempotent; concurrent runs serialize on
// graphile-migrate's advisory lock), then gives svc_login its password when one is known.
import { fileURLToPath } from 'node:url';
import { migrate as gmMigrate, Logger } from 'graphile-migrate';
import pg from 'pg';
import { literal } from './sql.ts';
import { log } from '../log.ts';

const migrationsFolder = fileURLToPath(new URL('../../migrations', import.meta.url));

const logger = new Logger((scope) => (level, message) => {
  if (level === 'error') log.error({ scope }, message);
  else log.debug({ scope }, message);
});

export async function migrate(ownerUrl: string, loginPassword?: string): Promise<void> {
  await gmMigrate({ connectionString: ownerUrl, migrationsFolder, logger });
  if (loginPassword) {
    const client = new pg.Client(ownerUrl);
    await client.connect();
    try {
      // ALTER ROLE takes no bind parameters; the password is ours (generated or from the
      // operator's environment) and goes through the driver's literal escaping.
      await client.query(`alter role svc_login with login password ${literal(loginPassword)}`);
    } finally {
      await client.end();
    }
  }
}
