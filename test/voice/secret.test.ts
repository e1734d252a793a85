// The voice secret: `svc admin voice secret` prints a new one once and keeps only its hash; a
// new one revokes the old; the dashboard's organization page rotates it for owners and admins
// only (CSRF as every form); nothing is written when refused.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { svc } from '../helpers/cli.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { hashVoiceSecret, VOICE_SECRET_PATTERN } from '../../src/voice/secret.ts';
import { Browser, signIn } from '../dashboard/helpers.ts';

let app: TestApp;
let tenant: Applied;
test.before(async () => {
  ({ app, tenant } = await startWithTenant(acmeFixture()));
});
test.after.always(async () => { await app?.close(); });

const orgOf = async (secret: string) => (await app.db.owner.query<{ org: string | null }>(
  'select app_private.voice_organization($1) as org', [hashVoiceSecret(secret)])).rows[0]!.org;
const live = async () => (await app.db.owner.query(
  'select count(*)::int as n from app_private.voice_secrets where organization_id = $1 and revoked_at is null', [tenant.organization_id])).rows[0].n;

test.serial('the CLI prints a new secret once, keeps its hash only, and a new one revokes the old', async (t) => {
  const first = await svc(['admin', 'voice', 'secret', '--org', tenant.organization_id], { databaseUrl: app.db.ownerUrl });
  t.is(first.code, 0, first.stderr);
  const a = JSON.parse(first.stdout);
  t.regex(a.secret, VOICE_SECRET_PATTERN);
  t.is(a.organization_id, tenant.organization_id);
  t.is(await orgOf(a.secret), tenant.organization_id);
  const stored = (await app.db.owner.query('select secret_hash from app_private.voice_secrets where id = $1', [a.id])).rows[0];
  t.deepEqual(stored.secret_hash, hashVoiceSecret(a.secret));
  t.false(JSON.stringify(stored).includes(a.secret.slice(10)));

  const b = JSON.parse((await svc(['admin', 'voice', 'secret', '--org', tenant.organization_id], { databaseUrl: app.db.ownerUrl })).stdout);
  t.not(b.secret, a.secret);
  t.is(await orgOf(a.secret), null, 'the old secret is revoked');
  t.is(await orgOf(b.secret), tenant.organization_id);
  t.is(await live(), 1);
});

test.serial('the CLI refuses a malformed or unknown organization in one line', async (t) => {
  const bad = await svc(['admin', 'voice', 'secret', '--org', 'nope'], { databaseUrl: app.db.ownerUrl });
  t.not(bad.code, 0);
  t.regex(bad.stderr, /--org must be a uuid/);
  const unknown = await svc(['admin', 'voice', 'secret', '--org', '00000000-0000-4000-8000-000000000000'], { databaseUrl: app.db.ownerUrl });
  t.not(unknown.code, 0);
  t.regex(unknown.stderr, /no organization/);
});

test.serial('an admin rotates the secret on the organization page and sees the new one once', async (t) => {
  const admin = await signIn(app, 'adam@acme.example', undefined, tenant.organization_id);
  const page = await admin.get('/dashboard/organization');
  t.regex(page.text, /New voice secret/);
  const r = await admin.post('/dashboard/organization/voice-secret', { csrf: Browser.csrf(page), rotate: 'yes' });
  t.is(r.status, 200, r.text.slice(-400));
  const secret = /data-voice-secret>([^<]+)</.exec(r.text)?.[1];
  t.truthy(secret);
  t.regex(secret!, VOICE_SECRET_PATTERN);
  t.is(await orgOf(secret!), tenant.organization_id);
  t.is(await live(), 1);
  const again = await admin.get('/dashboard/organization');
  t.false(again.text.includes(secret!), 'shown once');
});

test.serial('a manager is refused, and a post without the CSRF token changes nothing', async (t) => {
  const before = (await app.db.owner.query('select count(*)::int as n from app_private.voice_secrets')).rows[0].n;
  const mgr = await signIn(app, 'max@acme.example', undefined, tenant.organization_id);
  const page = await mgr.get('/dashboard/organization');
  const r = await mgr.post('/dashboard/organization/voice-secret', { csrf: Browser.csrf(page), rotate: 'yes' });
  t.is(r.status, 403);
  t.notRegex(r.text, /data-voice-secret/);
  const admin = await signIn(app, 'adam@acme.example', undefined, tenant.organization_id);
  const forged = await admin.post('/dashboard/organization/voice-secret', { csrf: 'x', rotate: 'yes' });
  t.is(forged.status, 403);
  t.is((await app.db.owner.query('select count(*)::int as n from app_private.voice_secrets')).rows[0].n, before);
});
