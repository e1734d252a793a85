// Email coming back (issue: Delivery): the inbound MIME webhook (signed with an HMAC of the
// body; replies found by In-Reply-To, References or reply+TOKEN; auto-replies recorded but not
// replies; once per Message-ID), the delivery events webhook (delivered, soft and hard bounces,
// complaints, opens and clicks; once per event id; a hard bounce or complaint suppresses), `svc admin delivery`
// and `svc admin inbound email` on the same paths, the enrollment's events in order and analytics.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { sentStep } from './helpers.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inboundEmail } from '../../src/conversations/inbound.ts';
import { svc } from '../helpers/cli.ts';
import { adminDelivery } from '../../src/delivery/admin.ts';
import { emailDeliveryReported, replyAddress } from '../../src/delivery/index.ts';
import { signBody } from '../../src/delivery/signed_body.ts';
import { insertSendSchedule, insertSequence } from '../sequences/helpers.ts';
import { enrollment, events } from '../sequences/engine-helpers.ts';

const SECRET = 'email-webhook-secret';
process.env.EMAIL_WEBHOOK_SECRET = SECRET;


let app: TestApp;
let acme: Applied;
let other: Applied;
let seq: string;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture()));
  other = await app.apply({ ...acmeFixture('Other Co'), organization: { ...acmeFixture('Other Co').organization,
    sending_email_domain: 'other.example', default_sms_number: '+15550009990' },
  locations: acmeFixture('Other Co').locations.map((l, i) => ({ ...l, sms_number: `+1555000999${i + 1}` })) });
  await insertSendSchedule(app.db, acme.organization_id);
  seq = await insertSequence(app.db, acme.organization_id, { exit_conditions: [{ type: 'replied' }], steps: [
    { step_key: 'mail', type: 'email', subject: 'Your visit', body: 'How was it?' },
    { step_key: 'later', type: 'email', subject: 'Again', body: 'Still there?', delay: { days: 2 } }] });
});
test.after.always(async () => { await app?.close(); });

const orgs = () => [acme.organization_id, other.organization_id];

const sent = (contactId: string) => sentStep(app, acme.keys.org!, seq, contactId);
const typesOf = async (id: string) => (await events(app.db, id)).map((e) => e.type);

const postEvents = (body: unknown, signature?: string | null) => {
  const raw = JSON.stringify(body);
  return app.request('POST', '/webhooks/email/events', { rawBody: raw, headers: signature === null ? {} : { 'x-svc-signature': signature ?? signBody(SECRET, raw) } });
};
const postMime = (raw: string, signature?: string | null) => app.request('POST', '/webhooks/email/inbound', { rawBody: raw,
  headers: { 'content-type': 'message/rfc822', ...(signature === null ? {} : { 'x-svc-signature': signature ?? signBody(SECRET, raw) }) } });

let mimeSeq = 0;
function mime(h: { from?: string; to?: string; subject?: string; inReplyTo?: string; references?: string; extra?: string; body?: string; id?: string }) {
  return [`From: ${h.from ?? 'Ann Lee <ann@example.com>'}`, `To: ${h.to ?? 'no-reply@acme.example'}`, `Subject: ${h.subject ?? 'Re: Your visit'}`,
    `Message-ID: ${h.id ?? `<in-${Date.now()}-${++mimeSeq}@mail.example.com>`}`, 'Date: Tue, 24 Nov 2026 07:00:00 +0000', 'MIME-Version: 1.0',
    ...(h.inReplyTo ? [`In-Reply-To: ${h.inReplyTo}`] : []), ...(h.references ? [`References: ${h.references}`] : []), ...(h.extra ? [h.extra] : []),
    'Content-Type: text/plain; charset=utf-8', '', h.body ?? 'It was great, thanks!', ''].join('\r\n');
}

test.serial('delivery events: signed, once per id; delivered then a soft bounce, in order; bad or missing signature 403 and nothing recorded', async (t) => {
  const { enrollment: eid, message } = await sent(acme.ids.ann!);
  const body = { events: [{ id: `ev-${message}-1`, message_id: `<${message}@acme.example>`, type: 'delivered' }] };
  for (const signature of [null, 'sha256=00', signBody('another-secret', JSON.stringify(body))]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 403, 'invalid_signature', () => postEvents(body, signature));
  }
  const res = await postEvents(body);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body.results[0], { known: true, recorded: true, type: 'delivered' });
  const replay = await unchanged(t, app, orgs(), () => postEvents(body));
  t.like(replay.body.results[0], { duplicate: true });
  await postEvents({ id: `ev-${message}-2`, message_id: message, type: 'bounced', bounce: 'soft', reason: 'mailbox full' });
  t.deepEqual(await typesOf(eid), ['enrolled', 'sent', 'delivered', 'bounced']);
  t.is((await events(app.db, eid)).at(-1)!.reason, 'soft: mailbox full');
  t.is((await enrollment(app.db, eid)).status, 'active', 'a soft bounce ends nothing');
  const { rows } = await app.db.owner.query('select count(*)::int as n from app_public.email_suppressions where organization_id = $1 and email = $2',
    [acme.organization_id, 'ann@example.com']);
  t.is(rows[0].n, 0);
  // the sequence's analytics count them; the events webhook is configured: delivery reporting supported
  const analytics = await app.request('GET', `/api/v1/sequences/${seq}/analytics`, { key: acme.keys.org });
  t.is(analytics.status, 200, JSON.stringify(analytics.body));
  t.is(analytics.body.email_delivery_reporting, 'supported');
  t.like(analytics.body.steps[0], { step_key: 'mail', delivered: 1, bounced: 1 });
  // malformed: 400, nothing recorded
  for (const [bad, names] of [[{ id: 'x', message_id: message, type: 'read' }, /type/], [{ id: 'x', message_id: 'nope', type: 'delivered' }, /message_id/],
    [{ id: 'x', message_id: message, type: 'bounced' }, /bounce/], [{ events: [] }, /events/], [{ id: '', message_id: message, type: 'delivered' }, /id/],
    [{ events: [{ id: 'x', message_id: message, type: 'failed' }] }, /events\.0\.type/]] as const) {
    const r = await unchanged(t, app, orgs(), () => postEvents(bad));
    t.is(r.status, 400, JSON.stringify(bad));
    t.regex(r.body.message, names, 'the 400 names the faulty field');
  }
  const unknown = await unchanged(t, app, orgs(), () => postEvents({ id: 'ev-unknown', message_id: '00000000-0000-4000-8000-000000000000', type: 'delivered' }));
  t.like(unknown.body.results[0], { known: false, recorded: false });
});

test.serial('opens and clicks: the enrollment\'s opened and clicked events, once per event id, counted by analytics; the delivery status stays', async (t) => {
  const { enrollment: eid, message } = await sent(acme.ids.cy!);
  const status = async () => (await app.db.owner.query('select delivery_status from app_private.outgoing_messages where id = $1', [message])).rows[0].delivery_status;
  await postEvents({ id: `oc-${message}-d`, message_id: message, type: 'delivered' });
  const before = await analyticsOf();
  const res = await postEvents({ events: [{ id: `oc-${message}-o`, message_id: `<${message}@acme.example>`, type: 'opened' },
    { id: `oc-${message}-c`, message_id: message, type: 'clicked' }] });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body.results, [{ recorded: true, type: 'opened' }, { recorded: true, type: 'clicked' }]);
  const replay = await unchanged(t, app, orgs(), () => postEvents({ id: `oc-${message}-o`, message_id: message, type: 'opened' }));
  t.like(replay.body.results[0], { duplicate: true });
  // through the command too: a second open of the same message is the same report (one per message and kind)
  t.like(await adminDelivery(app.db.owner, { messageId: message, event: 'opened' }), { duplicate: true });
  t.deepEqual(await typesOf(eid), ['enrolled', 'sent', 'delivered', 'opened', 'clicked']);
  t.is(await status(), 'delivered', 'an open or a click leaves the delivery status');
  const after = await analyticsOf();
  t.is(after.opened - before.opened, 1, 'opened counts enrollments, not opens');
  t.is(after.clicked - before.clicked, 1);
  // the conditions event.opened / event.clicked read these events (sequences › authoring-language)
});

const analyticsOf = async (): Promise<{ opened: number; clicked: number; delivered: number; failed: number; sent: number }> => {
  const r = await app.request('GET', `/api/v1/sequences/${seq}/analytics`, { key: acme.keys.org });
  return r.body.steps.find((s: { step_key: string }) => s.step_key === 'mail');
};

test('email_delivery_reporting: supported with the sink or the events webhook, unsupported for plain SMTP', (t) => {
  t.true(emailDeliveryReported('sink', {}));
  t.true(emailDeliveryReported('smtp://mail.example', { EMAIL_WEBHOOK_SECRET: 's' }));
  t.false(emailDeliveryReported('smtp://mail.example', {}));
});

test.serial('a hard bounce suppresses the address and fails the enrollment; a complaint suppresses and cancels', async (t) => {
  const bob = await sent(acme.ids.bob!);
  const res = await postEvents({ id: `hb-${bob.message}`, message_id: bob.message, type: 'bounced', bounce: 'hard', reason: '550 5.1.1 unknown user' });
  t.like(res.body.results[0], { recorded: true, suppressed: true });
  t.like(await enrollment(app.db, bob.enrollment), { status: 'failed', end_reason: 'hard_bounce' });
  t.deepEqual(await typesOf(bob.enrollment), ['enrolled', 'sent', 'bounced', 'failed']);
  const { rows: [s] } = await app.db.owner.query('select source, contact_id from app_public.email_suppressions where organization_id = $1 and email = $2',
    [acme.organization_id, 'bob@example.com']);
  t.deepEqual(s, { source: 'bounce', contact_id: acme.ids.bob });
  const cy = await sent(acme.ids.cy!);
  await postEvents({ id: `c-${cy.message}`, message_id: cy.message, type: 'complained' });
  t.is((await enrollment(app.db, cy.enrollment)).status, 'cancelled');
  const { rows: [c] } = await app.db.owner.query('select source from app_public.email_suppressions where organization_id = $1 and email = $2',
    [acme.organization_id, 'cy@example.com']);
  t.is(c.source, 'complaint');
  // the other organization's contacts with those addresses are untouched
  const { rows: [o] } = await app.db.owner.query('select count(*)::int as n from app_public.email_suppressions where organization_id = $1', [other.organization_id]);
  t.is(o.n, 0);
});

test.serial('a report that arrives twice is recorded once, whatever its path or provider id; analytics count it once', async (t) => {
  const before = await analyticsOf();
  const { enrollment: eid, message } = await sent(acme.ids.ann!);
  // the command, then the events webhook under two ids of its own, then the command again
  t.like(await adminDelivery(app.db.owner, { messageId: message, event: 'delivered' }), { recorded: true });
  for (const id of [`twice-${message}-a`, `twice-${message}-b`]) {
    const res = await postEvents({ id, message_id: message, type: 'delivered' });
    t.like(res.body.results[0], { known: true, recorded: false, duplicate: true }, id);
  }
  t.like(await adminDelivery(app.db.owner, { messageId: message, event: 'delivered' }), { duplicate: true });
  // a soft bounce then a hard one: two reports (the hard one still suppresses and fails), one bounced event
  await postEvents({ id: `twice-${message}-s`, message_id: message, type: 'bounced', bounce: 'soft', reason: 'mailbox full' });
  await postEvents({ id: `twice-${message}-s2`, message_id: message, type: 'bounced', bounce: 'soft', reason: 'again' });
  const hard = await postEvents({ id: `twice-${message}-h`, message_id: message, type: 'bounced', bounce: 'hard', reason: 'gone' });
  t.like(hard.body.results[0], { recorded: true, suppressed: true });
  t.deepEqual(await typesOf(eid), ['enrolled', 'sent', 'delivered', 'bounced', 'failed']);
  const { rows } = await app.db.owner.query(`select type, detail->>'bounce' as bounce from app_private.delivery_events where message_id = $1 order by id`, [message]);
  t.deepEqual(rows.map((r) => [r.type, r.bounce]), [['delivered', null], ['bounced', 'soft'], ['bounced', 'hard']]);
  t.is((await analyticsOf()).delivered - before.delivered, 1);
  // the database holds the rule, not only the function that records reports
  const dup = app.db.owner.query(`insert into app_public.enrollment_events (organization_id, enrollment_id, type, step_key, message_id)
    values ($1, $2, 'delivered', 'mail', $3)`, [acme.organization_id, eid, message]);
  await t.throwsAsync(dup, { message: /duplicate key/ });
  await app.db.owner.query('delete from app_public.email_suppressions where organization_id = $1 and email = $2', [acme.organization_id, 'ann@example.com']);
});

test.serial('a failed report is the enrollment\'s failed event after sent, counted in the step\'s failed analytics', async (t) => {
  const before = await analyticsOf();
  const { enrollment: eid, message } = await sent(acme.ids.ann!);
  t.like(await adminDelivery(app.db.owner, { messageId: message, event: 'failed', reason: 'relay refused' }), { recorded: true, type: 'failed' });
  t.like(await adminDelivery(app.db.owner, { messageId: message, event: 'failed' }), { duplicate: true });
  const evs = await events(app.db, eid);
  t.deepEqual(evs.map((e) => e.type), ['enrolled', 'sent', 'failed']);
  t.like(evs.at(-1), { step_key: 'mail', message_id: message, reason: 'relay refused' });
  const after = await analyticsOf();
  t.is(after.failed - before.failed, 1, 'counted as failed');
  t.is(after.sent - before.sent, 1, 'and as sent: it was handed over');
});

test.serial('svc admin delivery takes the same path: once per event; refusals name the flag', async (t) => {
  const ann = await sent(acme.ids.ann!);
  t.like(await adminDelivery(app.db.owner, { messageId: ann.message, event: 'delivered' }), { recorded: true, type: 'delivered' });
  t.like(await adminDelivery(app.db.owner, { messageId: ann.message, event: 'delivered' }), { duplicate: true });
  t.like(await adminDelivery(app.db.owner, { messageId: ann.message, event: 'bounced', bounce: 'soft' }), { recorded: true });
  t.deepEqual(await typesOf(ann.enrollment), ['enrolled', 'sent', 'delivered', 'bounced']);
  for (const [input, message] of [[{ messageId: 'x', event: 'delivered' }, /--message-id/], [{ messageId: ann.message, event: 'read' }, /--event/],
    [{ messageId: ann.message, event: 'delivered', bounce: 'hard' }, /--bounce goes with/],
    [{ messageId: '00000000-0000-4000-8000-000000000000', event: 'delivered' }, /No message/]] as const) {
    await unchanged(t, app, orgs(), () => t.throwsAsync(adminDelivery(app.db.owner, input), { message }));
  }
});

test.serial('an inbound reply by In-Reply-To continues the thread and ends the enrollment (replied exit), once per Message-ID', async (t) => {
  const ann = await sent(acme.ids.ann!);
  const raw = mime({ inReplyTo: `<${ann.message}@acme.example>` });
  for (const signature of [null, 'sha256=abc', signBody('wrong', raw)]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 403, 'invalid_signature', () => postMime(raw, signature));
  }
  const res = await postMime(raw);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { organization_id: acme.organization_id, contact_id: acme.ids.ann, auto_reply: false });
  t.like(await enrollment(app.db, ann.enrollment), { status: 'completed', end_reason: 'exit_condition:replied' });
  const types = await typesOf(ann.enrollment);
  t.deepEqual(types, ['enrolled', 'sent', 'replied', 'completed']);
  // the same email delivered three times at once, later: still once
  const racing = await Promise.all([1, 2, 3].map(() => postMime(raw)));
  t.deepEqual(racing.map((r) => r.body.message_id), [res.body.message_id, res.body.message_id, res.body.message_id]);
  const again = await unchanged(t, app, orgs(), () => postMime(raw));
  t.like(again.body, { duplicate: true, message_id: res.body.message_id });
  const { rows: [m] } = await app.db.owner.query('select body, direction from app_public.conversation_messages where id = $1', [res.body.message_id]);
  t.deepEqual(m, { body: 'It was great, thanks!', direction: 'inbound' });
});

test.serial('a reply found by References alone, or by the reply+TOKEN address alone', async (t) => {
  const byRefs = await sent(acme.ids.ann!);
  await postMime(mime({ references: `<unrelated@mail.example.com> <${byRefs.message}@acme.example>`, subject: 'hello' }));
  t.true((await typesOf(byRefs.enrollment)).includes('replied'));
  const byToken = await sent(acme.ids.ann!);
  const res = await postMime(mime({ to: replyAddress(byToken.message, 'acme.example'), subject: 'no threading headers' }));
  t.is(res.status, 200, JSON.stringify(res.body));
  t.true((await typesOf(byToken.enrollment)).includes('replied'));
  const { rows: [cv] } = await app.db.owner.query('select business_address from app_public.conversations where id = $1', [res.body.conversation_id]);
  t.is(cv.business_address, 'no-reply@acme.example', 'the thread is at the address the message came from');
  // a token naming no message of ours: 404, nothing recorded
  const none = await unchanged(t, app, orgs(), () => postMime(mime({ to: `reply+${'0'.repeat(32)}@acme.example` })));
  t.is(none.status, 404);
});

test.serial('auto-replies are recorded on the message but are not replies: no conversation message, no replied, no exit', async (t) => {
  for (const extra of ['Auto-Submitted: auto-replied', 'Auto-Submitted: auto-generated', 'X-Autoreply: yes', 'X-Autorespond: yes',
    'Precedence: auto_reply', 'Precedence: bulk', 'Precedence: junk']) {
    const ann = await sent(acme.ids.ann!);
    const res = await postMime(mime({ inReplyTo: `<${ann.message}@acme.example>`, extra, body: 'I am away until Monday.' }));
    t.is(res.status, 200, JSON.stringify(res.body));
    t.like(res.body, { auto_reply: true, recorded: true, message_id: ann.message });
    t.deepEqual(await typesOf(ann.enrollment), ['enrolled', 'sent', 'auto_replied'], extra);
    t.is((await enrollment(app.db, ann.enrollment)).status, 'active');
  }
  const ann = await sent(acme.ids.ann!);
  const ooo = await postMime(mime({ inReplyTo: `<${ann.message}@acme.example>`, subject: 'Out of Office: Your visit' }));
  t.like(ooo.body, { auto_reply: true });
  const { rows } = await app.db.owner.query(`select type from app_private.delivery_events where message_id = $1`, [ann.message]);
  t.deepEqual(rows.map((r) => r.type), ['auto_replied']);
  // Auto-Submitted: no is a person's message
  const person = await postMime(mime({ inReplyTo: `<${ann.message}@acme.example>`, extra: 'Auto-Submitted: no' }));
  t.like(person.body, { auto_reply: false });
});

// The subjects mail clients give their automatic answers, in the main languages (Outlook, Exchange,
// Gmail, Apple Mail, Thunderbird), with no header saying so
const AUTO_SUBJECTS = ['Automatic reply: Your visit', 'Auto-Reply: Your visit', 'AutoReply: Your visit', 'Autoreply', 'Auto Response: away',
  'Out of Office: Your visit', 'Out of the office until Monday', 'OOO: Your visit', '[Auto-Reply] Your visit', 'Re: Automatic reply: Your visit',
  'Abwesenheitsnotiz: Your visit', 'Automatische Antwort: Your visit', 'Réponse automatique : Your visit', 'RÉPONSE AUTOMATIQUE: Your visit',
  'Respuesta automática: Your visit', 'Risposta automatica: Your visit', 'Automatisch antwoord: Your visit', 'Resposta automática: Your visit',
  'Automatiskt svar: Your visit', 'Automatisk svar: Your visit', 'Automaattinen vastaus: Your visit', 'Automatyczna odpowiedź: Your visit',
  'Automatická odpověď: Your visit', 'Автоматический ответ: Your visit', '自動応答: Your visit', '自动回复: Your visit', 'Otomatik yanıt: Your visit'];
const PERSON_SUBJECTS = ['Re: Your visit', 'About the out of office hours', 'Question about automatic replies', 'Reply', 'Réponse : votre visite'];

test.serial('auto-replies by subject alone, in the main languages, on every path: recorded as auto_replied, never a reply', async (t) => {
  for (const subject of AUTO_SUBJECTS) {
    const ann = await sent(acme.ids.ann!);
    const res = await postMime(mime({ inReplyTo: `<${ann.message}@acme.example>`, subject, body: 'I am away until Monday.' }));
    t.like(res.body, { auto_reply: true, recorded: true }, subject);
    t.like(await enrollment(app.db, ann.enrollment), { status: 'active' }, subject);
  }
  // the issue's case: Outlook's wording through the command, then the same through the command with a header
  const ann = await sent(acme.ids.ann!);
  const r = await inboundEmail(app.db.owner, { to: 'no-reply@acme.example', from: 'ann@example.com', subject: 'Automatic reply: Out of office',
    body: 'I am out of the office until Monday.', inReplyTo: ann.message });
  t.like(r, { auto_reply: true, recorded: true });
  t.like(await enrollment(app.db, ann.enrollment), { status: 'active' });
  t.deepEqual(await typesOf(ann.enrollment), ['enrolled', 'sent', 'auto_replied']);
  const byHeader = await sent(acme.ids.ann!);
  const cli = await svc(['admin', 'inbound', 'email', '--to', 'no-reply@acme.example', '--from', 'ann@example.com', '--subject', 'Re: Your visit',
    '--body', 'Away', '--in-reply-to', byHeader.message, '--header', 'Auto-Submitted: auto-replied'], { databaseUrl: app.db.ownerUrl });
  t.is(cli.code, 0, cli.stderr);
  t.like(JSON.parse(cli.stdout), { auto_reply: true });
  t.deepEqual(await typesOf(byHeader.enrollment), ['enrolled', 'sent', 'auto_replied']);
  const badHeader = await unchanged(t, app, orgs(), () => svc(['admin', 'inbound', 'email', '--to', 'no-reply@acme.example', '--from', 'ann@example.com',
    '--body', 'x', '--header', 'no colon'], { databaseUrl: app.db.ownerUrl }));
  t.not(badHeader.code, 0);
  t.regex(badHeader.stderr, /--header/);
  // two auto-replies to one message: one event
  await inboundEmail(app.db.owner, { to: 'no-reply@acme.example', from: 'ann@example.com', subject: 'Out of office', body: 'Again', inReplyTo: byHeader.message });
  t.deepEqual(await typesOf(byHeader.enrollment), ['enrolled', 'sent', 'auto_replied']);
  // a person's subjects stay replies
  for (const subject of PERSON_SUBJECTS) {
    const m = await sent(acme.ids.ann!);
    const res = await postMime(mime({ inReplyTo: `<${m.message}@acme.example>`, subject }));
    t.like(res.body, { auto_reply: false }, subject);
    t.like(await enrollment(app.db, m.enrollment), { status: 'completed', end_reason: 'exit_condition:replied' }, subject);
  }
});

test.serial('malformed MIME: no From, or no address at all, is 400 with nothing recorded', async (t) => {
  for (const raw of ['this is not an email', mime({ from: 'nobody' }), 'Subject: only a subject\r\n\r\nhi']) {
    const res = await unchanged(t, app, orgs(), () => postMime(raw));
    t.is(res.status, 400, `${raw.slice(0, 30)}: ${JSON.stringify(res.body)}`);
  }
});

test.serial('svc admin inbound email takes the same path: reply+TOKEN in --to is a reply', async (t) => {
  const ann = await sent(acme.ids.ann!);
  const r = await inboundEmail(app.db.owner, { to: replyAddress(ann.message, 'acme.example'), from: 'ann@example.com', body: 'Thanks!' });
  t.like(r, { contact_id: acme.ids.ann, auto_reply: false });
  t.like(await enrollment(app.db, ann.enrollment), { status: 'completed', end_reason: 'exit_condition:replied' });
  // --in-reply-to with the outbox line's bare message_id, as `admin delivery --message-id` takes it, or the Message-ID
  // (a new subject, so only the id can thread it)
  for (const form of [(id: string) => id, (id: string) => id.toUpperCase(), (id: string) => `<${id}@acme.example>`]) {
    const m = await sent(acme.ids.ann!);
    const r2 = await inboundEmail(app.db.owner, { to: 'no-reply@acme.example', from: 'ann@example.com', subject: `New ${form('x')}`,
      body: 'About that', inReplyTo: form(m.message) });
    t.like(r2, { organization_id: acme.organization_id, contact_id: acme.ids.ann, auto_reply: false }, form('x'));
    t.like(await enrollment(app.db, m.enrollment), { status: 'completed', end_reason: 'exit_condition:replied' }, form('x'));
  }
});

test.serial('the real CLI: svc admin delivery prints what it recorded; a bad flag is one line on stderr and nothing is written', async (t) => {
  const ann = await sent(acme.ids.ann!);
  const r = await svc(['admin', 'delivery', '--message-id', ann.message, '--event', 'delivered'], { databaseUrl: app.db.ownerUrl });
  t.is(r.code, 0, r.stderr);
  t.like(JSON.parse(r.stdout), { recorded: true, type: 'delivered', message_id: ann.message });
  const bad = await unchanged(t, app, orgs(), () => svc(['admin', 'delivery', '--message-id', ann.message, '--event', 'exploded'],
    { databaseUrl: app.db.ownerUrl }));
  t.not(bad.code, 0);
  t.is(bad.stderr.trim().split('\n').length, 1);
  t.regex(bad.stderr, /--event/);
});
