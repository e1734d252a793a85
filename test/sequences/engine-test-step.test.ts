// sequences_test_step: the saved step sent once to an address or a contact, the send-time checks
// answered as reason codes, transport errors, refusals with nothing written, reach and MCP.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { callTool } from '../helpers/mcp.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import { insertSendSchedule, insertSequence } from './helpers.ts';
import { engineFixture, outbox } from './engine-helpers.ts';

let app: TestApp;
let tenant: Applied;
let other: Applied;
let org: string;
let seq: string;
let north: string;
let smsStatus = 200;
const smsRequests: any[] = [];
const provider = createServer(async (req, res) => {
  let text = '';
  for await (const chunk of req) text += chunk;
  smsRequests.push(JSON.parse(text));
  res.statusCode = smsStatus;
  res.end('{}');
});

test.before(async () => {
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
  const smsUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/sms`;
  ({ app, tenant } = await startWithTenant(engineFixture(), { env: { SMS_TRANSPORT: smsUrl, SVC_BASE_URL: 'https://svc.example' } }));
  other = await app.apply(engineFixture('Other Co'));
  org = tenant.organization_id;
  await insertSendSchedule(app.db, org);
  seq = await insertSequence(app.db, org, { status: 'inactive', steps: [
    { step_key: 'mail', type: 'email', subject: 'Hi {{contact.first_name|there}}', body: 'Hello {{contact.name|friend}}' },
    { step_key: 'text', type: 'sms', body: 'Hey {{contact.first_name|you}}' },
    { step_key: 'hold', type: 'wait', delay: { days: 1 } }] });
  north = await insertSequence(app.db, org, { location_id: tenant.ids.north });
});
test.after.always(async () => {
  await app?.close();
  provider.closeAllConnections();
  await new Promise<void>((r) => provider.close(() => r()));
});

const send = (step: string, body: Record<string, unknown>, key = tenant.keys.org!, id = seq) =>
  app.request('POST', `/api/v1/sequences/${id}/steps/${step}/test`, { key, body });

test.serial('an email step to an address: sent now, variables from no contact take their defaults, with the unsubscribe headers', async (t) => {
  const res = await send('mail', { to_email: 'author@acme.example' });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.success, true);
  const [m] = (await outbox(app.db, org)).filter((o) => o.id === res.body.message_id);
  t.like(m, { channel: 'email', recipient: 'author@acme.example', subject: 'Hi there', body: 'Hello friend' });
  t.like(m.meta, { sequence_id: seq, step_key: 'mail', message_id: m.id, test: true });
  t.regex(m.meta.headers['List-Unsubscribe'], /^<https:\/\/svc\.example\/unsubscribe\/[A-Za-z0-9_-]{40,}>$/);
  t.is(m.meta.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
  t.is(m.meta.headers['Message-ID'], `<${m.id}@acme.example>`);
  // nothing of an enrollment was made
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_public.enrollments where sequence_id = $1`, [seq]);
  t.is(rows[0].n, 0);
});

test.serial('a contact fills the variables and receives it; an SMS step goes through the SMS transport', async (t) => {
  const mail = await send('mail', { contact_id: tenant.ids.ann });
  t.is(mail.body.success, true);
  const [m] = (await outbox(app.db, org)).filter((o) => o.id === mail.body.message_id);
  t.like(m, { recipient: 'ann@example.com', subject: 'Hi Ann', body: 'Hello Ann Lee' });
  const before = smsRequests.length;
  const text = await send('text', { contact_id: tenant.ids.ann });
  t.deepEqual(text.body, { success: true, message_id: text.body.message_id });
  // Ann is North's contact: a sequence texts from her location's number, as people do
  t.deepEqual(smsRequests.slice(before), [{ from: '+15550000001', to: '+15551230001', body: 'Hey Ann' }]);
  const phone = await send('text', { to_phone: '+1 (555) 999-0000' });
  t.is(phone.body.success, true);
  t.deepEqual(smsRequests.at(-1), { from: '+15550000000', to: '+15559990000', body: 'Hey you' });
});

test.serial('reason codes: suppressed, opted_out, no_consent, missing_address, transport_error; nothing goes out', async (t) => {
  const before = smsRequests.length;
  const code = async (step: string, body: Record<string, unknown>) => {
    const res = await send(step, body);
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is(res.body.success, false);
    t.is(typeof res.body.error, 'string');
    return res.body.reason_code;
  };
  t.is(await code('mail', { contact_id: tenant.ids.eve }), 'suppressed');
  t.is(await code('mail', { to_email: 'EVE@example.com' }), 'suppressed');
  t.is(await code('text', { contact_id: tenant.ids.eve }), 'opted_out');
  t.is(await code('text', { to_phone: '+15551230005' }), 'opted_out');
  t.is(await code('text', { contact_id: tenant.ids.dee }), 'no_consent');
  t.is(await code('text', { to_phone: '+15551230004' }), 'no_consent');
  t.is(await code('text', { contact_id: tenant.ids.cy }), 'missing_address');
  t.is(smsRequests.length, before);
  smsStatus = 503;
  try {
    t.is(await code('text', { contact_id: tenant.ids.ann }), 'transport_error');
  } finally {
    smsStatus = 200;
  }
  const { rows } = await app.db.owner.query(
    `select status from app_private.outgoing_messages where organization_id = $1 and meta->>'test' = 'true' order by created_at desc limit 1`, [org]);
  t.is(rows[0].status, 'failed');
});

test.serial('400 and 404, nothing written: unknown sequence, step or contact; a wait step; recipients that do not fit', async (t) => {
  const none = '00000000-0000-4000-8000-000000000000';
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => send('mail', { to_email: 'a@example.com' }, undefined, none));
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => send('nope', { to_email: 'a@example.com' }));
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => send('mail', { contact_id: none }));
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => send('mail', { contact_id: other.ids.ann }));
  const otherSeq = await insertSequence(app.db, other.organization_id);
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => send('hello', { to_email: 'a@example.com' }, undefined, otherSeq));
  for (const [step, body] of [
    ['hold', { to_email: 'a@example.com' }], ['mail', {}], ['mail', { to_email: 'a@example.com', contact_id: tenant.ids.ann }],
    ['mail', { to_phone: '+15551230001' }], ['text', { to_email: 'a@example.com' }], ['text', { to_phone: '555' }],
    ['mail', { to_email: 'not an email' }], ['mail', { to_email: 'a@example.com', extra: true }],
  ] as const) {
    await refusedWithoutWrites(t, app, org, 400, 'bad_request', () => send(step, body));
  }
});

test.serial('reach: a manager tests its location\'s sequences (organization-wide: 403); members are refused', async (t) => {
  const mgr = tenant.keys.mgr_personal!;
  const ok = await send('hello', { to_email: 'max@acme.example' }, mgr, north);
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.is(ok.body.success, true);
  await refusedWithoutWrites(t, app, org, 403, 'insufficient_role', () => send('mail', { to_email: 'max@acme.example' }, mgr));
  const south = await insertSequence(app.db, org, { location_id: tenant.ids.south });
  await refusedWithoutWrites(t, app, org, 404, 'not_found', () => send('hello', { to_email: 'max@acme.example' }, mgr, south));
  for (const k of ['member_key', 'north_member', 'sam_personal', 'north_mgr']) {
    await refusedWithoutWrites(t, app, org, 403, 'insufficient_role', () => send('hello', { to_email: 'a@example.com' }, tenant.keys[k]!, north));
  }
});

test.serial('MCP: the same operation as a tool', async (t) => {
  const res = await callTool(app, tenant.keys.org!, 'sequences_test_step', { sequenceId: seq, step_key: 'mail', contact_id: tenant.ids.eve });
  t.false(res.isError);
  t.like(res.body, { success: false, reason_code: 'suppressed' });
  const bad = await callTool(app, tenant.keys.org!, 'sequences_test_step', { sequenceId: seq, step_key: 'nope', to_email: 'a@example.com' });
  t.true(bad.isError);
  t.like(bad.body, { statusCode: 404 });
});
