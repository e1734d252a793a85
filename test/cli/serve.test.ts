// `npm start`'s promise: migrate, seed an empty database, print the demo keys once, serve.
import test from 'ava';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '../helpers/db.ts';
import { startServe } from '../helpers/cli.ts';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

test('serve seeds an empty database once, answers with the printed key, and stops on SIGTERM', async (t) => {
  const db = await createTestDatabase();
  try {
    const first = startServe(db.ownerUrl);
    const { url, output } = await first.ready;
    const keys = output.match(/svc_sk_[A-Za-z0-9]{32}/g) ?? [];
    t.true(keys.length >= 4, output);
    const me = await fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${keys[0]}` } });
    t.is(me.status, 200);
    t.is(((await me.json()) as any).organization.name, 'Bright Smile Dental');
    const doc = await fetch(`${url}/api/v1/docs-json`);
    t.is(((await doc.json()) as any).openapi, '3.1.0');
    first.child.kill('SIGTERM');
    t.is(await first.exited, 0);

    const second = startServe(db.ownerUrl);
    const again = await second.ready;
    t.notRegex(again.output, /svc_sk_/, 'keys are printed once: a seeded database is not seeded again');
    second.child.kill('SIGTERM');
    t.is(await second.exited, 0);
  } finally {
    await db.drop();
  }
});

test('svc worker starts, with its queue schema in place, and stops on SIGTERM', async (t) => {
  const db = await createTestDatabase();
  try {
    const child = spawn(process.execPath, [bin, 'worker'], {
      env: { ...process.env, DATABASE_URL: db.ownerUrl, LOG_LEVEL: 'info', NODE_ENV: 'production' },
    });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 300 && !output.includes('worker started'); i++) await new Promise((r) => setTimeout(r, 100));
    t.regex(output, /worker started/);
    const { rows } = await db.owner.query(`select to_regclass('graphile_worker._private_jobs') is not null as present`);
    t.true(rows[0].present);
    child.kill('SIGTERM');
    t.is(await exited, 0, output);
  } finally {
    await db.drop();
  }
});
