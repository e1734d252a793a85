// The dashboard's stylesheet: served from the installed Pico CSS package under its fixed path,
// cached for a year, linked (with the package's version) from every page, signed in or not, and
// allowed by the pages' Content-Security-Policy.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { signIn } from './helpers.ts';

const require = createRequire(import.meta.url);
const pico = readFileSync(require.resolve('@picocss/pico/css/pico.classless.min.css'), 'utf8');
const version = (require('@picocss/pico/package.json') as { version: string }).version;

let app: TestApp;
let tenant: Applied;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture()));
});
test.after.always(async () => { await app?.close(); });

test('the stylesheet is served from the package, cached for a year', async (t) => {
  const res = await fetch(`${app.url}/dashboard/assets/pico.css?v=${version}`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type')!, /^text\/css/);
  t.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.is(await res.text(), pico);
});

test('every dashboard page links it, and its Content-Security-Policy lets it load', async (t) => {
  const link = `<link rel="stylesheet" href="/dashboard/assets/pico.css?v=${version}">`;
  const signedOut = await fetch(`${app.url}/dashboard/sign-in`);
  t.is(signedOut.status, 200);
  t.true((await signedOut.text()).includes(link));
  t.regex(signedOut.headers.get('content-security-policy')!, /style-src 'self'/);
  const owner = await signIn(app, 'olive@acme.example', undefined, tenant.organization_id);
  for (const path of ['/dashboard', '/dashboard/inbox', '/dashboard/keys', '/dashboard/people', '/dashboard/organization']) {
    const page = await owner.get(path);
    t.is(page.status, 200, path);
    t.true(page.text.includes(link), path);
    t.false(/<script/i.test(page.text), path);
  }
});
