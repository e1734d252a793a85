// The voice platform's webhook (issue: "Calls and forms from outside"): signed with
// VOICE_WEBHOOK_SECRET (a bad or missing signature: 403 and nothing recorded), idempotent on the
// platform's call id, the organization found by the called number, the contact matched by phone
// or created, total_calls counted and an interaction recorded.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { signVoiceBody } from '../../src/calls/webhook.ts';
import { svc } from '../helpers/cli.ts';

const SECRET = 'voice-test-secret';
process.env.VOICE_WEBHOOK_SECRET = SECRET;

/** acmeFixture with numbers of its own (+1 555 2nn 000x): the called number names one organization. */
function voiceFixture(name: string, n: number) {
  const base = acmeFixture(name);
  const num = (x: number) => `+1555${200 + n}000${x}`;
  return {
    ...base,
    organization: { ...base.organization, default_sms_number: num(0) },
    locations: base.locations.map((l, i) => ({ ...l, sms_number: num(i + 1) })),
  };
}

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(voiceFixture('Acme Dental', 1)));
  other = await app.apply(voiceFixture('Other Co', 2));
});
test.after.always(async () => { await app?.close(); });

const NORTH = '+15552010001';
const SOUTH = '+15552010002';
const DEFAULT = '+15552010000';
const orgs = () => [acme.organization_id, other.organization_id];

const deliver = (body: unknown, signature?: string | null) => {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return app.request('POST', '/webhooks/voice', { rawBody: raw,
    headers: signature === null ? {} : { 'x-svc-signature': signature ?? signVoiceBody(SECRET, raw) } });
};
const contact = async (id: string) => (await app.db.owner.query('select * from app_public.contacts where id = $1', [id])).rows[0];

let seq = 0;
const callId = () => `CA${Date.now()}${++seq}`;

test.serial('an inbound call from a known number is recorded on that contact, once', async (t) => {
  const body = { call_id: callId(), direction: 'inbound', from: '+1 555 123 0001', to: NORTH, started_at: '2026-11-23T15:00:00Z',
    duration_seconds: 62, summary: 'Booked a cleaning', transcript: [
      { speaker: 'caller', text: 'I would like a cleaning.' }, { speaker: 'assistant', text: 'Monday at 10 works.' }] };
  const res = await deliver(body);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { contact_id: acme.ids.ann, duplicate: false });
  t.is((await contact(acme.ids.ann!)).total_calls, 3, 'the fixture\'s 2, and this one');
  const got = await app.request('GET', `/api/v1/calls/${res.body.call_id}`, { key: acme.keys.org });
  t.like(got.body, { contact_id: acme.ids.ann, location_id: acme.ids.north, direction: 'inbound', status: 'completed',
    from: '+15551230001', to: NORTH, duration_seconds: 62, summary: 'Booked a cleaning', team_member_id: null });
  t.deepEqual(got.body.transcript, body.transcript);
  const { rows: interactions } = await app.db.owner.query(`select channel, status, summary, location_id, ended_at - started_at as took
    from app_public.interactions where contact_id = $1`, [acme.ids.ann]);
  t.like(interactions, [{ channel: 'voice', status: 'completed', summary: 'Booked a cleaning', location_id: acme.ids.north }]);

  // the platform delivers again: the same answer, nothing new
  const again = await unchanged(t, app, orgs(), () => deliver(body));
  t.is(again.status, 200);
  t.deepEqual(again.body, { ...res.body, duplicate: true });
});

test.serial('a caller nobody knows becomes a contact at the called location', async (t) => {
  const res = await deliver({ call_id: callId(), from: '+15559990001', to: SOUTH, caller_name: 'Una Known', status: 'missed' });
  t.is(res.status, 200);
  const c = await contact(res.body.contact_id);
  t.like(c, { organization_id: acme.organization_id, phone: '+15559990001', name: 'Una Known', total_calls: 1 });
  const { rows } = await app.db.owner.query('select location_id from app_public.contact_locations where contact_id = $1', [c.id]);
  t.deepEqual(rows, [{ location_id: acme.ids.south }]);
  const { rows: [i] } = await app.db.owner.query('select status from app_public.interactions where contact_id = $1', [c.id]);
  t.is(i.status, 'abandoned', 'a missed call');
  // another organization never finds it
  t.is((await app.request('GET', `/api/v1/calls/${res.body.call_id}`, { key: other.keys.org })).status, 404);
});

test.serial('the organization\'s default number: a call of no location; outbound calls match the callee', async (t) => {
  const res = await deliver({ call_id: callId(), from: '+15551230002', to: DEFAULT });
  t.like(res.body, { contact_id: acme.ids.bob });
  t.is((await app.request('GET', `/api/v1/calls/${res.body.call_id}`, { key: acme.keys.org })).body.location_id, null);
  const out = await deliver({ call_id: callId(), direction: 'outbound', from: NORTH, to: '+15551230002' });
  t.like(out.body, { contact_id: acme.ids.bob, duplicate: false });
  t.like((await app.request('GET', `/api/v1/calls/${out.body.call_id}`, { key: acme.keys.org })).body,
    { direction: 'outbound', location_id: acme.ids.north });
  t.is((await contact(acme.ids.bob!)).total_calls, 2);
  // the same call id in another organization is another call
  const theirs = await deliver({ call_id: 'CA-shared', from: '+15551230002', to: '+15552020001' });
  const ours = await deliver({ call_id: 'CA-shared', from: '+15551230002', to: NORTH });
  t.false(theirs.body.duplicate);
  t.false(ours.body.duplicate);
  t.not(theirs.body.call_id, ours.body.call_id);
});

test.serial('a bad or missing signature is a 403 and records nothing', async (t) => {
  const body = JSON.stringify({ call_id: callId(), from: '+15551230001', to: NORTH });
  for (const signature of [null, '', 'sha256=', signVoiceBody('wrong-secret', body), signVoiceBody(SECRET, `${body} `),
    signVoiceBody(SECRET, body).toUpperCase(), signVoiceBody(SECRET, body).replace('sha256=', 'sha1='), `${signVoiceBody(SECRET, body)}00`]) {
    await unchanged(t, app, orgs(), async () => {
      const res = await deliver(body, signature);
      t.is(res.status, 403, String(signature));
      t.is(res.body.error, 'invalid_signature');
    });
  }
  // a signed body that is not JSON is still refused before it is read, when the signature is wrong
  await unchanged(t, app, orgs(), async () => t.is((await deliver('{not json', 'sha256=00')).status, 403));
});

test.serial('without a configured secret every delivery is refused', async (t) => {
  delete process.env.VOICE_WEBHOOK_SECRET;
  try {
    await unchanged(t, app, orgs(), async () => {
      t.is((await deliver({ call_id: callId(), from: '+15551230001', to: NORTH })).status, 403);
      t.is((await deliver({ call_id: callId(), from: '+15551230001', to: NORTH }, signVoiceBody('', '{}'))).status, 403);
    });
  } finally {
    process.env.VOICE_WEBHOOK_SECRET = SECRET;
  }
});

test.serial('a signed body that does not fit, or a number of no one, is refused and records nothing', async (t) => {
  for (const body of ['{not json', '[]', { call_id: '', from: '+15551230001', to: NORTH }, { call_id: callId(), from: '12', to: NORTH },
    { call_id: callId(), from: '+15551230001', to: NORTH, transcript: [{ speaker: 'robot', text: 'hi' }] },
    { call_id: callId(), from: '+15551230001', to: NORTH, started_at: '2026-11-23' },
    { call_id: callId(), from: '+15551230001', to: NORTH, duration_seconds: -1 },
    { call_id: callId(), from: '+15551230001', to: NORTH, summary: 'nul \u0000' }]) {
    await refusedWithoutWrites(t, app, orgs() as never, 400, 'bad_request', () => deliver(body));
  }
  await refusedWithoutWrites(t, app, orgs() as never, 404, 'unknown_number',
    () => deliver({ call_id: callId(), from: '+15551230001', to: '+15553330000' }));
  // a number is one organization's: the second claim is refused, so a call to it names one
  await app.db.owner.query('update app_public.locations set sms_number = $1 where organization_id = $2 and name = $3',
    ['+15554440000', other.organization_id, 'South']);
  const taken = await app.db.owner.query('update app_public.locations set sms_number = $1 where organization_id = $2 and name = $3',
    ['+15554440000', acme.organization_id, 'South']).catch((e: { code: string; message: string }) => e);
  t.like(taken, { code: 'SV409', message: 'number_in_use' });
});

test.serial('deliveries of one call racing each other record it once', async (t) => {
  const body = { call_id: callId(), from: '+15551230004', to: NORTH, caller_name: 'Racer' };
  const answers = await Promise.all(Array.from({ length: 6 }, () => deliver(body)));
  t.true(answers.every((a) => a.status === 200), JSON.stringify(answers.map((a) => a.body)));
  t.is(new Set(answers.map((a) => a.body.call_id)).size, 1);
  t.is(answers.filter((a) => !a.body.duplicate).length, 1);
  const { rows } = await app.db.owner.query('select total_calls from app_public.contacts where organization_id = $1 and phone = $2',
    [acme.organization_id, '+15551230004']);
  t.deepEqual(rows, [{ total_calls: 1 }]);
});

test.serial('svc admin inbound call takes the webhook\'s body unsigned, through the same path: recorded once; bad input one line, nothing written', async (t) => {
  const body = { call_id: callId(), from: '+1 555 123 0002', to: NORTH, summary: 'Asked for a callback', duration_seconds: 30 };
  const run = (payload: string) => svc(['admin', 'inbound', 'call', '--payload', payload], { databaseUrl: app.db.ownerUrl });
  const first = await run(JSON.stringify(body));
  t.is(first.code, 0, first.stderr);
  const out = JSON.parse(first.stdout);
  t.like(out, { contact_id: acme.ids.bob, duplicate: false });
  const got = await app.request('GET', `/api/v1/calls/${out.call_id}`, { key: acme.keys.org });
  t.like(got.body, { contact_id: acme.ids.bob, location_id: acme.ids.north, summary: 'Asked for a callback', duration_seconds: 30 });
  const again = await run(JSON.stringify(body));
  t.like(JSON.parse(again.stdout), { call_id: out.call_id, duplicate: true });
  for (const [payload, message] of [['{not json', /--payload must be/], [JSON.stringify({ ...body, call_id: callId(), from: '12' }), /--payload: from/],
    [JSON.stringify({ call_id: callId(), from: '+15551230001', to: '+15553330000' }), /No organization/i]] as const) {
    const r = await unchanged(t, app, orgs() as never, () => run(payload));
    t.not(r.code, 0);
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    t.regex(r.stderr, message);
  }
});
