// Many writers on the same threads at once: inbound texts from a new number racing to create
// its contact and thread, and replies, texts, holds and resumes crossing each other over the
// API. No answer is a 5xx, and afterwards there is one contact, one thread per number, and
// every message in it.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { prng } from '../helpers/random.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inboundSms } from '../../src/conversations/inbound.ts';
import { inboxFixture } from './fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(inboxFixture())); });
test.after.always(async () => { await app?.close(); });

test('sixteen inbound texts from one new number at once: one contact, one thread, sixteen messages', async (t) => {
  const results = await Promise.all(Array.from({ length: 16 }, (_, i) =>
    inboundSms(app.db.owner, { to: '+15550000001', from: '+15557778888', body: `message ${i}` })));
  t.is(new Set(results.map((r) => r.contact_id)).size, 1);
  t.is(new Set(results.map((r) => r.conversation_id)).size, 1);
  t.is(results.filter((r) => r.contact_created).length, 1);
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_public.conversation_messages where conversation_id = $1`,
    [results[0]!.conversation_id]);
  t.deepEqual(rows, [{ n: 16 }]);
});

test('replies, first texts, holds and resumes crossing each other: no 5xx, one thread per number', async (t) => {
  const r = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const keys = [acme.keys.org!, acme.keys.north_mgr!, acme.keys.owner_personal!];
  const calls = Array.from({ length: 48 }, () => {
    const key = pick(keys);
    switch (pick(['reply', 'sms', 'hold', 'resume'])) {
      case 'reply': return app.request('POST', `/api/v1/conversations/${pick([acme.ids.ann_sms, acme.ids.ann_chat])}/reply`,
        { key, body: { body: 'racing' } });
      case 'sms': return app.request('POST', '/api/v1/conversations/sms', { key, body: { contact_id: pick([acme.ids.ann, acme.ids.fay_client]), body: 'hi' } });
      case 'hold': return app.request('POST', `/api/v1/conversations/${acme.ids.ann_sms}/hold`, { key });
      default: return app.request('POST', `/api/v1/conversations/${acme.ids.ann_chat}/resume`, { key });
    }
  });
  const answers = await Promise.all(calls);
  t.deepEqual(answers.filter((a) => a.status >= 500).map((a) => a.body), []);
  t.true(answers.some((a) => a.status === 201));
  const { rows } = await app.db.owner.query(`select contact_id, business_address, count(*)::int as n from app_public.conversations
    where organization_id = $1 and channel = 'sms' group by 1, 2 having count(*) > 1`, [acme.organization_id]);
  t.deepEqual(rows, []);
  const { rows: [flo] } = await app.db.owner.query(`select count(*)::int as n from app_public.conversations where contact_id = $1`,
    [acme.ids.fay_client]);
  t.true(flo.n <= 1);
});
