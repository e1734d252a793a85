// A fresh database per test file, cloned from the migrated template that test/run.ts made.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loginUrlFor } from '../../src/db/connect.ts';

export interface TestDatabase {
  name: string;
  ownerUrl: string;
  loginUrl: string;
  owner: pg.Pool;
  drop(): Promise<void>;
}

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the tests with npm test`);
  return v;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = env('SVC_TEST_OWNER_URL');
  const template = env('SVC_TEST_TEMPLATE');
  const name = `svc_t_${Math.floor(Date.now() / 1000)}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client(base);
  await admin.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(template)}`);
        break;
      } catch (e) {
        // another file is cloning the same template at this moment
        if ((e as { code?: string }).code !== '55006' || attempt > 50) throw e;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  const ownerUrl = url.toString();
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 4 });
  owner.on('error', () => undefined); // an idle connection dropped with the database
  return {
    name,
    ownerUrl,
    loginUrl: loginUrlFor(ownerUrl, process.env.SVC_LOGIN_PASSWORD),
    owner,
    async drop() {
      await owner.end();
      const c = new pg.Client(base);
      await c.connect();
      await c.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`).catch(() => undefined);
      await c.end();
    },
  };
}
