// VOICE_RATE_LIMIT: turns a minute per organization (its voice secret), whatever address the
// platform calls from; past it, 429 in OpenAI's shape with Retry-After, and nothing written.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { adminVoiceSecret } from '../../src/voice/secret.ts';
import { post, type Platform } from './helpers.ts';

process.env.VOICE_RATE_LIMIT = '3';

let app: TestApp;
let platform: Platform;
test.before(async () => {
  const started = await startWithTenant(acmeFixture());
  app = started.app;
  platform = { url: app.url, secret: (await adminVoiceSecret(app.db.owner, started.tenant.organization_id)).secret };
});
test.after.always(async () => {
  delete process.env.VOICE_RATE_LIMIT;
  await app?.close();
});

test('the fourth turn in a minute is a 429 in OpenAI\'s shape, and writes nothing', async (t) => {
  const turn = (n: number) => post(platform, { messages: Array.from({ length: n }, () => ({ role: 'user', content: 'hours?' })),
    metadata: { call_id: 'limited', from: '+15557773001', to: '+15550000001' } });
  for (let n = 1; n <= 3; n++) t.is((await turn(n)).status, 200);
  const count = async () => (await app.db.owner.query('select count(*)::int as n from app_private.voice_turns')).rows[0].n;
  const before = await count();
  const r = await turn(4);
  t.is(r.status, 429);
  t.like(r.body.error, { type: 'rate_limit_error', code: 'rate_limited', param: null });
  t.truthy(r.headers.get('retry-after'));
  t.is(await count(), before);
});
