// Suppression and SMS consent (spec: Contact suppression), pipeline stages (spec: Pipeline
// stage) and interactions (spec: Interaction).
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from './helpers.ts';
import { rows } from '../helpers/sql.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(contactsFixture())); });
test.after.always(async () => { await app?.close(); });

const suppress = (id: string, body: unknown, key = acme.keys.org) => app.request('POST', `/api/v1/contacts/${id}/suppress`, { key, body });
const consent = (id: string, body: unknown, key = acme.keys.org) => app.request('POST', `/api/v1/contacts/${id}/sms-consent`, { key, body });
const get = async (id: string, key = acme.keys.org) => (await app.request('GET', `/api/v1/contacts/${id}`, { key })).body;
const interactions = (id: string, query = '', key = acme.keys.org) =>
  app.request('GET', `/api/v1/contacts/${id}/interactions${query}`, { key });

// ---------------------------------------------------------------------------------------------
// contacts_suppress
// ---------------------------------------------------------------------------------------------

test.serial('email suppression blocks the address for good and keeps its first record', async (t) => {
  const res = await suppress(acme.ids.bob!, { channels: ['email'] });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.contact_id, acme.ids.bob);
  t.is(res.body.email.address, 'bob@example.com');
  t.false('sms' in res.body);
  t.true((await get(acme.ids.bob!)).email_suppressed);
  t.false((await get(acme.ids.bob!)).sms_opted_out);
  await new Promise((r) => setTimeout(r, 20));
  const again = await suppress(acme.ids.bob!, { channels: ['email'] });
  t.is(again.status, 200);
  t.is(again.body.email.suppressed_at, res.body.email.suppressed_at, 'the first record is kept');
  // The address stays blocked whichever contact carries it later.
  t.is((await app.request('PATCH', `/api/v1/contacts/${acme.ids.bob}`, { key: acme.keys.org, body: { email: 'bob.new@example.com' } })).status, 200);
  t.false((await get(acme.ids.bob!)).email_suppressed);
  const newcomer = await app.request('POST', '/api/v1/contacts', { key: acme.keys.org, body: { email: 'BOB@example.com', name: 'New Bob' } });
  t.true(newcomer.body.email_suppressed);
  const records = await rows(app, `select email, contact_id from app_public.email_suppressions where organization_id = $1 and email = 'bob@example.com'`, [acme.organization_id]);
  t.deepEqual(records, [{ email: 'bob@example.com', contact_id: acme.ids.bob }]);
});

test.serial('SMS suppression records an opt-out and revokes consent', async (t) => {
  t.true((await get(acme.ids.ann!)).sms_consent);
  const res = await suppress(acme.ids.ann!, { channels: ['sms'] });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { contact_id: acme.ids.ann, sms: { phone: '+15551230001', sms_consent: false } });
  const contact = await get(acme.ids.ann!);
  t.like(contact, { sms_consent: false, sms_consent_at: null, sms_opted_out: true, email_suppressed: false });
  const again = await suppress(acme.ids.ann!, { channels: ['sms', 'email'] });
  t.is(again.body.sms.opted_out_at, res.body.sms.opted_out_at, 'an open opt-out keeps its first record');
  t.is(again.body.email.address, 'ann@example.com');
  const optOuts = await rows(app, `select phone, ended_at from app_public.sms_opt_outs where organization_id = $1 and contact_id = $2`, [acme.organization_id, acme.ids.ann]);
  t.deepEqual(optOuts, [{ phone: '+15551230001', ended_at: null }]);
});

test.serial('suppressing a channel the contact has no address on is 400 and writes nothing', async (t) => {
  const noEmail = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => suppress(acme.ids.phil!, { channels: ['email'] }));
  t.regex(noEmail.body.message, /email/);
  const noPhone = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => suppress(acme.ids.cy!, { channels: ['sms'] }));
  t.regex(noPhone.body.message, /phone/);
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => suppress(acme.ids.cy!, { channels: ['email', 'sms'] }));
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => suppress(acme.ids.phil!, { channels: ['sms', 'email'] }));
  for (const body of [{}, { channels: [] }, { channels: ['fax'] }, { channels: ['email', 'email'] }, { channels: 'email' }, { email: true }]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => suppress(acme.ids.dee!, body));
  }
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
    () => suppress('00000000-0000-4000-8000-000000000000', { channels: ['email'] }));
});

// ---------------------------------------------------------------------------------------------
// contacts_record_sms_consent
// ---------------------------------------------------------------------------------------------

test.serial('recording SMS consent sets it with its source and ends an opt-out of the number', async (t) => {
  t.like(await get(acme.ids.eve!), { sms_consent: false, sms_opted_out: true });
  const res = await consent(acme.ids.eve!, { source: 'web form', consented_at: '2026-01-02T03:04:05Z' });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { contact_id: acme.ids.eve, phone: '+15551230005', sms_consent: true, source: 'web form' });
  t.is(Date.parse(res.body.sms_consent_at), Date.parse('2026-01-02T03:04:05Z'));
  t.like(await get(acme.ids.eve!), { sms_consent: true, sms_opted_out: false });
  const history = await rows(app, `select ended_at is not null as ended from app_public.sms_opt_outs where organization_id = $1 and contact_id = $2`, [acme.organization_id, acme.ids.eve]);
  t.deepEqual(history, [{ ended: true }], 'the opt-out stays on record, ended');
  const plain = await consent(acme.ids.dee!, {});
  t.is(plain.status, 200);
  t.like(plain.body, { sms_consent: true, source: null });
  t.true(Math.abs(Date.parse(plain.body.sms_consent_at) - Date.now()) < 60_000);
  // a later opt-out opens a new record
  t.is((await suppress(acme.ids.eve!, { channels: ['sms'] })).status, 200);
  t.like(await get(acme.ids.eve!), { sms_consent: false, sms_opted_out: true });
});

test.serial('SMS consent needs a phone and a past time: 400 and nothing written', async (t) => {
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => consent(acme.ids.cy!, {}));
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => consent(acme.ids.dee!, { consented_at: new Date(Date.now() + 3_600_000).toISOString() }));
  for (const body of [{ consented_at: 'yesterday' }, { consented_at: '2026-01-01T00:00:00' }, { source: '' }, { source: 'x'.repeat(201) }, { sms_consent: true }]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => consent(acme.ids.dee!, body));
  }
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => consent('00000000-0000-4000-8000-000000000000', {}));
});

// ---------------------------------------------------------------------------------------------
// contacts_list_stages
// ---------------------------------------------------------------------------------------------

test.serial('stages come in dashboard order with the audience field, for members too', async (t) => {
  for (const key of ['org', 'member_key', 'sam_personal', 'north_mgr_nopower', 'org_reader']) {
    const res = await app.request('GET', '/api/v1/contacts/stages', { key: acme.keys[key] });
    t.is(res.status, 200, key);
    t.deepEqual(res.body, {
      stages: [
        { id: acme.ids.lead, name: 'Lead', position: 1, audience_field: 'stage_id' },
        { id: acme.ids.won, name: 'Won', position: 2, audience_field: 'stage_id' },
      ],
      audience_field: 'stage_id',
    }, key);
  }
});

test.serial('an organization without a pipeline answers an empty list', async (t) => {
  const bare = await app.apply({ organization: { name: 'No Pipeline' },
    users: [{ ref: 'o', name: 'O', email: 'o@np.example', role: 'owner' }], api_keys: [{ ref: 'k', kind: 'organization' }] });
  const res = await app.request('GET', '/api/v1/contacts/stages', { key: bare.keys.k });
  t.is(res.status, 200);
  t.deepEqual(res.body, { stages: [], audience_field: null });
});

// ---------------------------------------------------------------------------------------------
// contacts_list_interactions
// ---------------------------------------------------------------------------------------------

const refs = (body: any) => body.items.map((i: any) => Object.entries(acme.ids).find(([, id]) => id === i.id)?.[0]);

test.serial('interactions: most recent first, with channel and status filters', async (t) => {
  const res = await interactions(acme.ids.ann!);
  t.is(res.status, 200);
  t.deepEqual(refs(res.body), ['ann_sms_org', 'ann_sms_south', 'ann_chat', 'ann_call']);
  t.like(res.body, { total: 4, page: 1, limit: 25 });
  t.like(res.body.items[3], { channel: 'voice', status: 'completed', location_id: acme.ids.north, summary: 'Booked a cleaning',
    appointment_id: null, captured_fields: { reason: 'cleaning' }, contact_id: acme.ids.ann });
  t.deepEqual(refs((await interactions(acme.ids.ann!, '?channel=sms')).body), ['ann_sms_org', 'ann_sms_south']);
  t.deepEqual(refs((await interactions(acme.ids.ann!, '?status=completed')).body), ['ann_sms_south', 'ann_call']);
  t.deepEqual(refs((await interactions(acme.ids.ann!, '?channel=voice&status=abandoned')).body), []);
  const page2 = await interactions(acme.ids.ann!, '?limit=3&page=2');
  t.deepEqual(refs(page2.body), ['ann_call']);
});

test.serial('interactions: a page past the last and an invalid filter are 400', async (t) => {
  for (const query of ['?limit=2&page=3', '?page=2&channel=voice', '?channel=email', '?status=done', '?limit=101']) {
    const res = await interactions(acme.ids.ann!, query);
    t.is(res.status, 400, query);
    t.is(res.body.error, 'bad_request', query);
  }
  t.is((await interactions(acme.ids.cy!)).status, 200, 'the first page of none is empty');
  t.is((await interactions('00000000-0000-4000-8000-000000000000')).status, 404);
});

test.serial('interactions: location-limited credentials see only their locations; captured fields need contact details', async (t) => {
  const seen = async (key: string) => {
    const res = await interactions(acme.ids.ann!, '', acme.keys[key]);
    t.is(res.status, 200, key);
    return { refs: refs(res.body), captured: res.body.items.map((i: any) => 'captured_fields' in i) };
  };
  t.deepEqual(await seen('north_mgr'), { refs: ['ann_chat', 'ann_call'], captured: [true, true] });
  t.deepEqual(await seen('north_mgr_nopower'), { refs: ['ann_chat', 'ann_call'], captured: [false, false] });
  t.deepEqual(await seen('sam_personal'), { refs: ['ann_chat', 'ann_call'], captured: [false, false] });
  t.deepEqual(await seen('member_key'), { refs: ['ann_sms_org', 'ann_sms_south', 'ann_chat', 'ann_call'], captured: [false, false, false, false] });
  t.deepEqual(await seen('mgr_key'), { refs: ['ann_sms_org', 'ann_sms_south', 'ann_chat', 'ann_call'], captured: [true, true, true, true] });
  t.is((await interactions(acme.ids.ann!, '', acme.keys.south_mgr)).status, 404, 'a contact the key cannot read');
  const dee = await interactions(acme.ids.dee!, '', acme.keys.north_mgr);
  t.is(dee.status, 200);
  t.like(dee.body, { items: [], total: 0 }, 'the contact is readable but its interaction is at another location');
  t.is((await interactions(acme.ids.dee!, '', acme.keys.south_mgr)).body.total, 1);
});
