// forms_list, forms_get and forms_list_submissions (spec: Authentication 7; operations.tsv:
// forms:read; member access open for forms, deny for submissions): forms by reach (a location's
// form to credentials reaching it, a form of no location to all), submissions filtered by status,
// time (with a time: a date alone is a 400) and part of an email; a staff member gets 403
// insufficient_role on submissions (a MANAGER too: no manager power opens them); another organization's forms are never found.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { formsFixture, intakeFields } from './helpers.ts';
import { demoFixture } from '../../src/seed/demo.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(formsFixture()));
  other = await app.apply(formsFixture('Other Co'));
});
test.after.always(async () => { await app?.close(); });

const key = (k: string) => acme.keys[k]!;
const refOf = (id: string) => Object.entries(acme.ids).find(([, x]) => x === id)?.[0] ?? id;
const subs = (k: string, form = 'intake', query = '', tenant = acme) =>
  app.request('GET', `/api/v1/forms/${tenant.ids[form]}/submissions${query}`, { key: key(k) });
const subRefs = (res: { body: { items: { id: string }[] } }) => res.body.items.map((s) => refOf(s.id));

test('forms are listed by reach, with their fields', async (t) => {
  const names = async (k: string) => (await app.request('GET', '/api/v1/forms', { key: key(k) })).body.items.map((f: { id: string }) => refOf(f.id));
  for (const k of ['org', 'owner_personal', 'mgr_key', 'member_key']) t.deepEqual(await names(k), ['intake', 'org_form', 'south_form'], k);
  for (const k of ['north_mgr', 'mgr_personal', 'sam_personal', 'north_member']) t.deepEqual(await names(k), ['intake', 'org_form'], k);
  for (const k of ['south_mgr', 'quiet_personal']) t.deepEqual(await names(k), ['org_form', 'south_form'], k);
  const res = await app.request('GET', `/api/v1/forms/${acme.ids.intake}`, { key: key('sam_personal') });
  t.is(res.status, 200);
  t.like(res.body, { name: 'Intake', location_id: acme.ids.north, allowed_origins: ['https://acme.example'] });
  t.deepEqual(res.body.fields, intakeFields.map((f) => ({ options: null, required: false, ...f })));
});

test('a form out of reach, or of another organization, is not found', async (t) => {
  for (const [k, form, tenant] of [['north_mgr', 'south_form', acme], ['sam_personal', 'south_form', acme], ['org', 'intake', other]] as const) {
    await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
      () => app.request('GET', `/api/v1/forms/${tenant.ids[form]}`, { key: key(k) }));
  }
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => subs('org', 'intake', '', other));
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found', () => subs('org', 'org_form', '', other));
});

test('submissions, newest first, with payload, status and contact', async (t) => {
  const res = await subs('org');
  t.is(res.status, 200);
  t.deepEqual(subRefs(res), ['s_ann', 's_bob', 's_spam', 's_odd']);
  t.like(res.body, { total: 4, page: 1, limit: 25 });
  t.like(res.body.items[0], { status: 'accepted', payload: { email: 'ann@example.com', name: 'Ann Lee' }, contact_id: acme.ids.ann,
    contact: { id: acme.ids.ann, name: 'Ann Lee', email: 'ann@example.com', phone: '+15551230001' }, spam_reason: null });
  t.like(res.body.items[2], { status: 'spam', spam_reason: 'links', contact_id: null, contact: null });
});

test('filters: status, time range, part of an email, pages', async (t) => {
  t.deepEqual(subRefs(await subs('org', 'intake', '?status=spam')), ['s_spam']);
  t.deepEqual(subRefs(await subs('org', 'intake', '?status=accepted')), ['s_ann', 's_bob', 's_odd']);
  t.deepEqual(subRefs(await subs('org', 'intake', '?from=2026-11-18T10:00:00Z&to=2026-11-20T10:00:00Z')), ['s_bob', 's_spam']);
  t.deepEqual(subRefs(await subs('org', 'intake', `?from=${encodeURIComponent('2026-11-20T05:00:00-05:00')}`)), ['s_ann']);
  t.deepEqual(subRefs(await subs('org', 'intake', '?search=BOB@')), ['s_bob']);
  t.deepEqual(subRefs(await subs('org', 'intake', '?search=example.com')), ['s_ann', 's_bob', 's_odd']);
  t.deepEqual(subRefs(await subs('org', 'intake', '?search=%25')), ['s_odd'], '% is a character, not a wildcard');
  t.deepEqual(subRefs(await subs('org', 'intake', '?search=_')), ['s_odd'], '_ is a character, not a wildcard');
  t.deepEqual(subRefs(await subs('org', 'intake', '?search=spam&status=accepted')), []);
  const p2 = await subs('org', 'intake', '?page=2&limit=3');
  t.deepEqual(subRefs(p2), ['s_odd']);
  t.like(p2.body, { total: 4, page: 2, limit: 3 });
  t.deepEqual(subRefs(await subs('org', 'intake', '?page=9')), []);
});

test('a date without a time, and other bad input, is a 400 that writes nothing', async (t) => {
  for (const q of ['?from=2026-11-18', '?to=2026-11-20', '?from=2026-11-18T10:00:00', '?status=maybe', '?limit=101', '?page=0',
    '?from=2026-11-20T00:00:00Z&to=2026-11-19T00:00:00Z', '?search=']) {
    const res = await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => subs('org', 'intake', q));
    t.truthy(res.body.message, q);
  }
});

test('a staff member reads forms but gets 403 insufficient_role on submissions; so does a MANAGER', async (t) => {
  for (const k of ['sam_personal', 'member_key', 'north_member', 'quiet_personal', 'north_mgr', 'mgr_personal', 'mgr_key']) {
    t.is((await app.request('GET', `/api/v1/forms/${acme.ids.intake}`, { key: key(k) })).status, k === 'quiet_personal' ? 404 : 200, k);
    await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_role', () => subs(k));
  }
  await refusedWithoutWrites(t, app, acme.organization_id, 403, 'insufficient_scope', () => subs('org_reader'));
});

test('MCP serves the same reads', async (t) => {
  const list = await callTool(app, key('north_mgr'), 'forms_list', {});
  t.deepEqual(list.body.items.map((f: { id: string }) => refOf(f.id)), ['intake', 'org_form']);
  const page = await callTool(app, key('org'), 'forms_list_submissions', { formId: acme.ids.intake, status: 'spam' });
  t.deepEqual(page.body.items.map((s: { id: string }) => refOf(s.id)), ['s_spam']);
  t.true((await callTool(app, key('sam_personal'), 'forms_list_submissions', { formId: acme.ids.intake })).isError);
});

test('the demo organization has a web form with a submission', async (t) => {
  const demo = await app.apply(demoFixture());
  const forms = await app.request('GET', '/api/v1/forms', { key: demo.keys.organization });
  t.is(forms.status, 200, JSON.stringify(forms.body).slice(0, 200));
  t.deepEqual(forms.body.items.map((f: { name: string }) => f.name), ['Contact us']);
  const subs = await app.request('GET', `/api/v1/forms/${demo.ids.contact_us}/submissions`, { key: demo.keys.organization });
  t.like(subs.body, { total: 1 });
  t.is(subs.body.items[0].contact_id, demo.ids.ann);
});
