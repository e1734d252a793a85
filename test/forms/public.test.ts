// The public form endpoint and `svc admin form submit` (issue: "Calls and forms from outside"):
// the payload is checked against the form's fields (400, nothing stored); spam (honeypot, too
// fast or no valid render-time token, link stuffing, rate per client address) is stored as spam
// and answered like an accepted submission; an accepted one upserts the contact, links it to the
// form's location and fires form_submitted for sequences; CORS answers the form's sites only.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { svc } from '../helpers/cli.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { insertSendSchedule, insertSequence } from '../sequences/helpers.ts';
import { formsFixture } from './helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  // the client address comes from X-Forwarded-For (a proxy on loopback): each submission its own
  // address unless a test gives one, so that only the rate test meets the rate
  ({ app, tenant: acme } = await startWithTenant(formsFixture(), { env: { SVC_TRUST_PROXY: 'loopback' } }));
});
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;

/** A valid token of the form, issued `agoMs` ago (as a page rendered then would carry). */
async function tokenIssued(formId: string, agoMs: number): Promise<string> {
  const { rows } = await app.db.owner.query(`select t.ms || '.' || app_hidden.form_token_mac(s.secret, s.form_id, t.ms) as token
      from app_private.form_secrets s, (select (extract(epoch from clock_timestamp()) * 1000)::bigint - $2 as ms) t
     where s.form_id = $1`, [formId, agoMs]);
  return rows[0].token;
}

let addresses = 0;
const nextAddress = () => `10.0.${Math.floor(++addresses / 250)}.${addresses % 250 + 1}`;
const post = (formId: string, body: unknown, headers: Record<string, string> = {}) =>
  app.request('POST', `/forms/${formId}/submissions`, { body, headers: { 'x-forwarded-for': nextAddress(), ...headers } });

async function lastSubmission(formId: string) {
  const { rows } = await app.db.owner.query(`select * from app_public.form_submissions where form_id = $1
    order by created_at desc, submitted_at desc limit 1`, [formId]);
  return rows[0];
}

const contactByEmail = async (tenant: Applied, email: string) => (await app.db.owner.query(
  'select * from app_public.contacts where organization_id = $1 and email_key = lower($2)', [tenant.organization_id, email])).rows[0];

test.serial('an accepted submission creates the contact at the form\'s location and fires form_submitted', async (t) => {
  const form = acme.ids.intake!;
  await insertSendSchedule(app.db, org());
  const seq = await insertSequence(app.db, org(), { name: 'After intake', location_id: acme.ids.north, trigger: { type: 'form_submitted', form_id: form } });
  const other = await insertSequence(app.db, org(), { name: 'Other form', trigger: { type: 'form_submitted', form_id: acme.ids.org_form } });
  const res = await post(form, { email: 'New.Person@Example.com', name: 'New Person', phone: '+1 (555) 777-0001', plan: 'gold',
    visits: '3', newsletter: 'on', first_visit: '2026-12-01', extra: 'ignored', _hp: '', _token: await tokenIssued(form, 10_000) });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.true(res.body.received);
  const sub = await lastSubmission(form);
  t.is(sub.id, res.body.id);
  t.like(sub, { status: 'accepted', spam_reason: null, email_key: 'new.person@example.com', client_address: '10.0.0.2' });
  t.deepEqual(sub.payload, { email: 'New.Person@Example.com', name: 'New Person', phone: '+15557770001', plan: 'gold', visits: 3,
    newsletter: true, first_visit: '2026-12-01' });
  const contact = await contactByEmail(acme, 'new.person@example.com');
  t.like(contact, { id: sub.contact_id, name: 'New Person', phone: '+15557770001' });
  const { rows: links } = await app.db.owner.query('select location_id from app_public.contact_locations where contact_id = $1', [contact.id]);
  t.deepEqual(links.map((l) => l.location_id), [acme.ids.north]);
  const { rows: enrolled } = await app.db.owner.query('select sequence_id, source from app_public.enrollments where contact_id = $1', [contact.id]);
  t.deepEqual(enrolled, [{ sequence_id: seq, source: 'form_submitted' }], `not ${other}`);
  // it shows in forms_list_submissions with its contact
  const listed = await app.request('GET', `/api/v1/forms/${form}/submissions?search=new.person`, { key: acme.keys.org });
  t.like(listed.body.items[0], { id: sub.id, status: 'accepted', contact: { id: contact.id, name: 'New Person' } });
});

test.serial('an accepted submission of a known email updates that contact, no new one', async (t) => {
  const form = acme.ids.org_form!;
  const before = (await app.db.owner.query('select count(*)::int as n from app_public.contacts where organization_id = $1', [org()])).rows[0].n;
  const res = await post(form, { email: 'ANN@example.com', _token: await tokenIssued(form, 5_000) });
  t.is(res.status, 201);
  t.is((await lastSubmission(form)).contact_id, acme.ids.ann);
  t.is((await app.db.owner.query('select count(*)::int as n from app_public.contacts where organization_id = $1', [org()])).rows[0].n, before);
});

test.serial('spam is stored as spam, answered alike, and creates no contact', async (t) => {
  const form = acme.ids.intake!;
  const old = await tokenIssued(form, 10_000);
  const cases: [string, Record<string, unknown>][] = [
    ['honeypot', { email: 'bot1@spam.example', _hp: 'http://buy.example', _token: old }],
    ['too_fast', { email: 'bot2@spam.example', _token: await tokenIssued(form, 200) }],
    ['bad_token', { email: 'bot3@spam.example' }],
    ['bad_token', { email: 'bot4@spam.example', _token: `${Date.now() - 10_000}.${'0'.repeat(64)}` }],
    ['bad_token', { email: 'bot5@spam.example', _token: await tokenIssued(acme.ids.org_form!, 10_000) }],
    ['links', { email: 'bot6@spam.example', message: 'see http://a.example and https://b.example and www.c.example', _token: old }],
  ];
  for (const [reason, body] of cases) {
    const res = await post(form, body);
    t.is(res.status, 201, `${reason} ${JSON.stringify(res.body)}`);
    t.deepEqual(Object.keys(res.body).sort(), ['id', 'received'], reason);
    t.like(await lastSubmission(form), { id: res.body.id, status: 'spam', spam_reason: reason, contact_id: null }, reason);
    t.is(await contactByEmail(acme, body.email as string), undefined, reason);
  }
  // a fresh token from the token endpoint is a valid one: too fast at once
  const issued = await app.request('GET', `/forms/${form}/token`);
  t.is(issued.status, 200);
  t.like(issued.body, { token_field: '_token', honeypot_field: '_hp' });
  await post(form, { email: 'quick@spam.example', _token: issued.body.token });
  t.is((await lastSubmission(form)).spam_reason, 'too_fast');
});

test.serial('more than five submissions from one address in ten minutes: the rest is spam', async (t) => {
  const tenant = await app.apply(formsFixture('Rate Co'));
  const form = tenant.ids.org_form!;
  const token = await tokenIssued(form, 10_000);
  const statuses: string[] = [];
  for (let i = 0; i < 7; i++) {
    await post(form, { email: `rate${i}@example.com`, _token: token }, { 'x-forwarded-for': '192.0.2.7' });
    statuses.push((await lastSubmission(form)).status);
  }
  t.deepEqual(statuses, ['accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'spam', 'spam']);
  t.is((await lastSubmission(form)).spam_reason, 'rate');
  // another address is not limited by this one
  await post(form, { email: 'rate-other@example.com', _token: token }, { 'x-forwarded-for': '192.0.2.8' });
  t.is((await lastSubmission(form)).status, 'accepted');
});

test.serial('a payload that does not fit the fields is a 400 naming the field, and stores nothing', async (t) => {
  const form = acme.ids.intake!;
  const token = await tokenIssued(form, 10_000);
  const cases: [unknown, string][] = [
    [{ name: 'No Email', _token: token }, 'body.email'],
    [{ email: 'not-an-email', _token: token }, 'body.email'],
    [{ email: 'ok@example.com', phone: '12', _token: token }, 'body.phone'],
    [{ email: 'ok@example.com', plan: 'platinum', _token: token }, 'body.plan'],
    [{ email: 'ok@example.com', visits: 'many', _token: token }, 'body.visits'],
    [{ email: 'ok@example.com', first_visit: '2026-02-30', _token: token }, 'body.first_visit'],
    [{ email: 'ok@example.com', newsletter: 'maybe', _token: token }, 'body.newsletter'],
    [{ email: ['a@example.com'], _token: token }, 'body.email'],
    [{ email: 'ok@example.com', message: 'x'.repeat(10_001), _token: token }, 'body.message'],
  ];
  for (const [body, path] of cases) {
    const res = await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => post(form, body));
    t.is(res.body.issues?.[0]?.path, path, JSON.stringify(body).slice(0, 80));
  }
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => post(form, [1, 2]));
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => app.request('POST', `/forms/${form}/submissions`, { rawBody: '{"email": ' }));
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => post(form, { email: 'nul\u0000@example.com', _token: token }));
  await refusedWithoutWrites(t, app, org(), 415, 'unsupported_media_type', () => app.request('POST', `/forms/${form}/submissions`,
    { rawBody: 'email=a@example.com', headers: { 'content-type': 'text/plain' } }));
  await refusedWithoutWrites(t, app, org(), 413, 'payload_too_large', () => post(form, { email: 'big@example.com', message: 'x'.repeat(70_000) }));
  for (const id of ['not-a-form', '00000000-0000-4000-8000-000000000000']) {
    await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => post(id, { email: 'a@example.com' }));
    t.is((await app.request('GET', `/forms/${id}/token`)).status, 404);
  }
});

test.serial('a plain HTML form post (urlencoded) is accepted like JSON', async (t) => {
  const form = acme.ids.org_form!;
  const body = new URLSearchParams({ email: 'html@example.com', _hp: '', _token: await tokenIssued(form, 8_000) }).toString();
  const res = await app.request('POST', `/forms/${form}/submissions`, { rawBody: body,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', 'x-forwarded-for': nextAddress() } });
  t.is(res.status, 201);
  t.like(await lastSubmission(form), { status: 'accepted', payload: { email: 'html@example.com' } });
  t.truthy(await contactByEmail(acme, 'html@example.com'));
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => app.request('POST', `/forms/${form}/submissions`,
    { rawBody: 'email=a@example.com&email=b@example.com', headers: { 'content-type': 'application/x-www-form-urlencoded' } }));
});

test.serial('CORS answers the form\'s own sites only', async (t) => {
  const form = acme.ids.intake!;
  const pre = await app.request('OPTIONS', `/forms/${form}/submissions`, {
    headers: { origin: 'https://acme.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
  t.is(pre.status, 204);
  t.is(pre.headers.get('access-control-allow-origin'), 'https://acme.example');
  t.regex(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
  t.regex(pre.headers.get('access-control-allow-headers') ?? '', /Content-Type/i);
  const elsewhere = await app.request('OPTIONS', `/forms/${form}/submissions`, { headers: { origin: 'https://evil.example' } });
  t.is(elsewhere.status, 204);
  t.is(elsewhere.headers.get('access-control-allow-origin'), null);
  const token = await app.request('GET', `/forms/${form}/token`, { headers: { origin: 'https://acme.example' } });
  t.is(token.headers.get('access-control-allow-origin'), 'https://acme.example');
  const posted = await post(form, { email: 'cors@example.com', _token: await tokenIssued(form, 9_000) }, { origin: 'https://acme.example' });
  t.is(posted.headers.get('access-control-allow-origin'), 'https://acme.example');
  const refused = await post(form, { _token: 'x' }, { origin: 'https://acme.example' });
  t.is(refused.status, 400);
  t.is(refused.headers.get('access-control-allow-origin'), 'https://acme.example', 'the page can read why');
});

test.serial('svc admin form submit goes through the same checks', async (t) => {
  const form = acme.ids.org_form!;
  const run = (args: string[]) => svc(['admin', 'form', 'submit', '--form', form, ...args], { databaseUrl: app.db.ownerUrl });
  const fast = await run(['--payload', JSON.stringify({ email: 'cli-fast@example.com' }), '--elapsed-ms', '500']);
  t.is(fast.code, 0, fast.stderr);
  t.like(JSON.parse(fast.stdout), { status: 'spam', spam_reason: 'too_fast', contact_id: null });
  const ok = await run(['--payload', JSON.stringify({ email: 'cli@example.com' })]);
  t.is(ok.code, 0, ok.stderr);
  const done = JSON.parse(ok.stdout);
  t.like(done, { status: 'accepted', spam_reason: null, organization_id: org() });
  t.is(done.contact_id, (await contactByEmail(acme, 'cli@example.com')).id);
  const bot = await run(['--payload', JSON.stringify({ email: 'cli-bot@example.com', _hp: 'x' })]);
  t.like(JSON.parse(bot.stdout), { status: 'spam', spam_reason: 'honeypot' });
  await unchanged(t, app, org(), async () => {
    for (const args of [['--payload', '{"email": "nope"}'], ['--payload', 'not json'], ['--payload', '{}', '--elapsed-ms', '-1']]) {
      const res = await run(args);
      t.is(res.code, 2, args.join(' '));
      t.regex(res.stderr, /^svc: /);
    }
    const res = await svc(['admin', 'form', 'submit', '--form', 'nope', '--payload', '{}'], { databaseUrl: app.db.ownerUrl });
    t.is(res.code, 2);
  });
});

test.serial('form_submitted is a trigger sequences list and accept', async (t) => {
  const triggers = await app.request('GET', '/api/v1/sequences/triggers', { key: acme.keys.org });
  t.is(triggers.status, 200, JSON.stringify(triggers.body).slice(0, 200));
  const found = JSON.stringify(triggers.body);
  t.regex(found, /form_submitted/);
  const created = await app.request('POST', '/api/v1/sequences', { key: acme.keys.org, body: {
    name: 'Thanks for your message', trigger: { type: 'form_submitted', form_id: acme.ids.org_form } } });
  t.is(created.status, 201, JSON.stringify(created.body).slice(0, 300));
  const refused = await app.request('POST', '/api/v1/sequences', { key: acme.keys.org, body: {
    name: 'No form', trigger: { type: 'form_submitted' } } });
  t.is(refused.status, 400);
});

test.serial('concurrent posts: one contact for one new email, and the rate holds under a burst', async (t) => {
  const tenant = await app.apply(formsFixture('Burst Co'));
  const form = tenant.ids.org_form!;
  const token = await tokenIssued(form, 10_000);
  const same = await Promise.all(Array.from({ length: 8 }, () => post(form, { email: 'Burst@Example.com', _token: token })));
  t.true(same.every((r) => r.status === 201), JSON.stringify(same.map((r) => r.body)).slice(0, 300));
  const { rows } = await app.db.owner.query(`select count(*)::int as n from app_public.contacts where organization_id = $1 and email_key = 'burst@example.com'`,
    [tenant.organization_id]);
  t.is(rows[0].n, 1);
  const burst = await Promise.all(Array.from({ length: 10 }, (_, i) =>
    post(form, { email: `burst${i}@example.com`, _token: token }, { 'x-forwarded-for': '198.51.100.9' })));
  t.true(burst.every((r) => r.status === 201));
  const { rows: counted } = await app.db.owner.query(`select status, count(*)::int as n from app_public.form_submissions
    where organization_id = $1 and client_address = '198.51.100.9' group by status order by status`, [tenant.organization_id]);
  t.deepEqual(counted, [{ status: 'accepted', n: 5 }, { status: 'spam', n: 5 }]);
});

// A browser's own post: urlencoded, Accept preferring HTML (what a browser sends for a <form>).
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const browserPost = (formId: string, fields: Record<string, string>, accept = BROWSER_ACCEPT) =>
  fetch(`${app.url}/forms/${formId}/submissions`, { method: 'POST', redirect: 'manual', body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept, 'x-forwarded-for': nextAddress() } });

test.serial('a browser\'s plain HTML post gets a thank-you page, or a 303 to the form\'s redirect_url', async (t) => {
  const form = acme.ids.org_form!;
  const res = await browserPost(form, { email: 'browser@example.com', _hp: '', _token: await tokenIssued(form, 8_000) });
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
  const html = await res.text();
  t.regex(html, /<h1>Thank you<\/h1>/);
  t.regex(html, /Newsletter/, 'names the form');
  t.like(await lastSubmission(form), { status: 'accepted', payload: { email: 'browser@example.com' } });
  // spam gets the same page
  const spam = await browserPost(form, { email: 'bot@example.com', _hp: 'filled', _token: await tokenIssued(form, 8_000) });
  t.is(spam.status, 200);
  t.regex(await spam.text(), /<h1>Thank you<\/h1>/);
  t.like(await lastSubmission(form), { status: 'spam', spam_reason: 'honeypot' });
  // a form with a redirect_url: 303 there, and the submission stored
  const south = acme.ids.south_form!;
  const redirected = await browserPost(south, { email: 'redirect@example.com', _token: await tokenIssued(south, 8_000) });
  t.is(redirected.status, 303);
  t.is(redirected.headers.get('location'), 'https://south.example/thanks?from=form');
  t.like(await lastSubmission(south), { status: 'accepted', payload: { email: 'redirect@example.com' } });
  // forms_get shows it
  const shown = await app.request('GET', `/api/v1/forms/${south}`, { key: acme.keys.org });
  t.is(shown.body.redirect_url, 'https://south.example/thanks?from=form');
  t.is((await app.request('GET', `/api/v1/forms/${form}`, { key: acme.keys.org })).body.redirect_url, null);
});

test.serial('a browser\'s post that is refused gets an HTML page with the status, and nothing is stored', async (t) => {
  const form = acme.ids.intake!;
  const bad = await unchanged(t, app, org(), () => browserPost(form, { email: 'not an address', plan: 'platinum' }));
  t.is(bad.status, 400);
  t.regex(bad.headers.get('content-type') ?? '', /^text\/html/);
  const html = await bad.text();
  t.regex(html, /Please check the form/);
  t.regex(html, /email: not a valid email address/);
  t.regex(html, /plan: one of basic, gold/);
  const missing = await browserPost('00000000-0000-4000-8000-000000000000', { email: 'a@example.com' });
  t.is(missing.status, 404);
  t.regex(await missing.text(), /Form not found/);
  // markup in a value is escaped, never echoed as markup
  const tag = await unchanged(t, app, org(), () => browserPost(form, { email: 'x@example.com', plan: '<script>alert(1)</script>' }));
  t.is(tag.status, 400);
  t.notRegex(await tag.text(), /<script>/);
  // a JSON client (Accept */* or JSON) posting urlencoded keeps JSON answers
  const json = await browserPost(form, { email: 'not an address' }, '*/*');
  t.is(json.status, 400);
  t.like(await json.json(), { error: 'bad_request' });
  const ok = await browserPost(acme.ids.org_form!, { email: 'json-client@example.com', _token: await tokenIssued(acme.ids.org_form!, 8_000) },
    'application/json');
  t.is(ok.status, 201);
  t.true(((await ok.json()) as { received: boolean }).received);
});

test.serial('a trigger or exit naming another organization\'s form or location, or one out of reach, is 404 with nothing written', async (t) => {
  const other = await app.apply(formsFixture('Trigger Other Co'));
  const key = acme.keys.org!;
  const create = (body: Record<string, unknown>, k = key) => app.request('POST', '/api/v1/sequences', { key: k, body: { name: 'Refs', ...body } });
  for (const body of [
    { trigger: { type: 'form_submitted', form_id: other.ids.org_form } },
    { trigger: { type: 'form_submitted', form_id: '00000000-0000-4000-8000-000000000000' } },
    { trigger: { type: 'appointment_booked', location_id: other.ids.north } },
    { trigger: { type: 'manual' }, exit_conditions: [{ type: 'appointment_booked', location_id: other.ids.north }] },
  ]) {
    const res = await unchanged(t, app, [org(), other.organization_id], () => create(body));
    t.like(res, { status: 404, body: { error: 'not_found' } }, JSON.stringify(body));
  }
  // a manager at North with the sequences power: South's form is out of its reach (as another organization's)
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => create({ location_id: acme.ids.north,
    trigger: { type: 'form_submitted', form_id: acme.ids.south_form } }, acme.keys.mgr_personal!));
  // sequences_update checks the same, and changes nothing
  const made = await create({ trigger: { type: 'form_submitted', form_id: acme.ids.org_form } });
  t.is(made.status, 201, JSON.stringify(made.body).slice(0, 200));
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => app.request('PATCH', `/api/v1/sequences/${made.body.id}`,
    { key, body: { trigger: { type: 'form_submitted', form_id: other.ids.intake } } }));
  // the organization's own: accepted
  t.is((await create({ trigger: { type: 'appointment_booked', location_id: acme.ids.south } })).status, 201);
  t.is((await create({ location_id: acme.ids.north, trigger: { type: 'form_submitted', form_id: acme.ids.intake } },
    acme.keys.mgr_personal!)).status, 201);
});
