// Web chat from a site (src/conversations/chat.ts): a visitor starts a chat through a widget,
// the AI receptionist's job is queued with each message (one job per message, in the writing
// transaction) and answers; the visitor reads the thread with its token, which the database
// keeps only as a hash. Wrong tokens, other widgets and other organizations are 404; malformed
// bodies 400/415; the rates 429; all with nothing written. CORS answers the widget's sites.
import test from 'ava';
import { createHash } from 'node:crypto';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { jobsFor, runJobs, sinkOnly } from '../helpers/messages.ts';
import { refusedWithoutWrites, unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { inboxFixture } from './fixture.ts';

const withWidgets = (name: string) => ({
  ...inboxFixture(name),
  chat_widgets: [
    { ref: 'north_chat', name: 'North site chat', location_ref: 'north', allowed_origins: ['https://acme.example'], greeting: 'Hi there!' },
    { ref: 'org_chat', name: 'Main site chat' },
  ],
});

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => {
  delete process.env.AI_BASE_URL; // the deterministic responder
  ({ app, tenant: acme } = await startWithTenant(withWidgets('Acme Dental'), { env: { SVC_TRUST_PROXY: 'loopback' } }));
  other = await app.apply(withWidgets('Other Dental'));
});
test.after.always(async () => { await app?.close(); });

let addresses = 0;
const nextAddress = () => `10.9.${Math.floor(++addresses / 250)}.${addresses % 250 + 1}`;
const start = (widget: string, body: unknown, headers: Record<string, string> = {}) =>
  app.request('POST', `/chat/${widget}/conversations`, { body, headers: { 'x-forwarded-for': nextAddress(), ...headers } });
const say = (widget: string, conversation: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  app.request('POST', `/chat/${widget}/conversations/${conversation}/messages`,
    { body, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
const read = (widget: string, conversation: string, token: string | undefined, after?: string) =>
  app.request('GET', `/chat/${widget}/conversations/${conversation}/messages${after ? `?after=${after}` : ''}`,
    { headers: token ? { authorization: `Bearer ${token}` } : {} });
const drain = () => runJobs(app.db, sinkOnly);
const org = () => acme.organization_id;

test.serial('a visitor starts a chat, the AI answers, and the visitor reads the thread with its token', async (t) => {
  const widget = acme.ids.north_chat!;
  const info = await app.request('GET', `/chat/${widget}`);
  t.like(info, { status: 200, body: { widget_id: widget, name: 'North site chat', greeting: 'Hi there!', message_max_length: 2000 } });
  const res = await start(widget, { message: 'When are you open?', name: 'Vera Visitor', email: 'Vera@Example.com' });
  t.is(res.status, 201, JSON.stringify(res.body));
  const { conversation_id: conversation, message_id: message, token } = res.body;
  t.regex(token, /^svc_chat_[A-Za-z0-9_-]{43}$/);
  t.is(res.body.response_mode, 'ai');
  // the conversation: chat, at the widget's location, with the contact matched or created there
  const { rows: [cv] } = await app.db.owner.query(`select cv.*, c.name, c.email from app_public.conversations cv
    join app_public.contacts c on c.organization_id = cv.organization_id and c.id = cv.contact_id where cv.id = $1`, [conversation]);
  t.like(cv, { organization_id: org(), channel: 'chat', location_id: acme.ids.north, ai_held: false, name: 'Vera Visitor',
    email: 'vera@example.com' });
  // only the token's hash is kept, nowhere the token itself
  const { rows: [session] } = await app.db.owner.query('select * from app_private.chat_sessions where conversation_id = $1', [conversation]);
  t.is(session.token_hash, createHash('sha256').update(token).digest('hex'));
  t.is(session.client_address, '10.9.0.2');
  const { rows: [{ n }] } = await app.db.owner.query(`select count(*)::int as n from app_private.chat_sessions s
    where s::text like '%' || $1 || '%'`, [token.slice(9)]);
  t.is(n, 0);
  // the AI's job was queued with the message, keyed by it
  t.like(await jobsFor(app.db, message), [{ task_identifier: 'conversation_ai_reply', key: `conversation_ai:${message}` }]);
  await drain();
  await drain(); // a second run finds the message answered
  const thread = await read(widget, conversation, token);
  t.is(thread.status, 200);
  t.is(thread.body.response_mode, 'ai');
  t.deepEqual(thread.body.messages.map((m: { from: string }) => m.from), ['visitor', 'assistant']);
  t.regex(thread.body.messages[1].body, /Mon/);
  t.deepEqual(Object.keys(thread.body.messages[0]).sort(), ['body', 'created_at', 'from', 'id']);
  // the next message, and only what is new after the last one read
  const next = await say(widget, conversation, token, { message: 'What are your hours on Monday?' });
  t.like(next, { status: 201, body: { conversation_id: conversation, response_mode: 'ai' } });
  await drain();
  const fresh = await read(widget, conversation, token, thread.body.messages[1].id);
  t.deepEqual(fresh.body.messages.map((m: { from: string; id: string }) => m.from), ['visitor', 'assistant']);
  t.is(fresh.body.messages[0].id, next.body.message_id);
  // the inbox shows it like any chat, and the AI's handling as an interaction
  const inbox = await app.request('GET', `/api/v1/conversations/${conversation}`, { key: acme.keys.org });
  t.is(inbox.body.messages.length, 4);
  const interactions = await app.request('GET', `/api/v1/contacts/${cv.contact_id}/interactions?channel=chat`, { key: acme.keys.org });
  t.like(interactions.body, { total: 1, items: [{ channel: 'chat', status: 'in_progress' }] });
});

test.serial('a person takes over: the AI stops answering, the visitor sees the staff reply, the interaction completes', async (t) => {
  const widget = acme.ids.org_chat!;
  const res = await start(widget, { message: 'Can I pay by card?', phone: '+1 (555) 888-0001' });
  t.is(res.status, 201);
  const { conversation_id: conversation, token } = res.body;
  await drain(); // the built-in receptionist hands a question it cannot answer to a person, and says so
  const handed = await read(widget, conversation, token);
  t.is(handed.body.response_mode, 'human');
  t.deepEqual(handed.body.messages.map((m: { from: string }) => m.from), ['visitor', 'assistant']);
  const { rows: [contact] } = await app.db.owner.query('select * from app_public.contacts where organization_id = $1 and phone = $2',
    [org(), '+15558880001']);
  t.truthy(contact);
  const listed = await app.request('GET', `/api/v1/contacts/${contact.id}/interactions`, { key: acme.keys.org });
  t.like(listed.body.items, [{ channel: 'chat', status: 'completed' }]);
  // a message while a person answers queues nothing
  const held = await say(widget, conversation, token, { message: 'Hello?' });
  t.like(held, { status: 201, body: { response_mode: 'human' } });
  t.deepEqual(await jobsFor(app.db, held.body.message_id), []);
  const reply = await app.request('POST', `/api/v1/conversations/${conversation}/reply`,
    { key: acme.keys.owner_personal, body: { body: 'Yes, cards are fine.' } });
  t.is(reply.status, 201, JSON.stringify(reply.body));
  const thread = await read(widget, conversation, token, held.body.message_id);
  t.like(thread.body.messages, [{ from: 'staff', body: 'Yes, cards are fine.' }]);
});

test.serial('no token 401, a wrong token, another widget or organization 404: nothing written', async (t) => {
  const widget = acme.ids.north_chat!;
  const res = await start(widget, { message: 'Hi' });
  const { conversation_id: conversation, token } = res.body;
  t.is((await refusedWithoutWrites(t, app, org(), 401, 'unauthorized', () => say(widget, conversation, undefined, { message: 'x' }))).status, 401);
  t.is((await read(widget, conversation, undefined)).status, 401);
  const forged = `svc_chat_${'A'.repeat(43)}`;
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => say(widget, conversation, forged, { message: 'x' }));
  t.like(await read(widget, conversation, forged), { status: 404, body: { error: 'not_found' } });
  // the right token through another widget of the organization, or another organization's
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => say(acme.ids.org_chat!, conversation, token, { message: 'x' }));
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => say(other.ids.north_chat!, conversation, token, { message: 'x' }));
  t.is((await read(other.ids.north_chat!, conversation, token)).status, 404);
  // unknown widget, malformed ids
  await refusedWithoutWrites(t, app, org(), 404, 'not_found', () => start('00000000-0000-4000-8000-000000000000', { message: 'x' }));
  t.is((await start('not-a-uuid', { message: 'x' })).status, 404);
  t.is((await read(widget, 'nope', token)).status, 404);
  t.like(await read(widget, conversation, token, 'nope'), { status: 400 });
  t.like(await read(widget, conversation, token, '00000000-0000-4000-8000-000000000000'), { status: 400 });
  // another organization's visitor lands in that organization only, and our keys cannot see it
  const theirs = await start(other.ids.north_chat!, { message: 'Hello', email: 'ann@example.com' });
  t.is(theirs.status, 201);
  const { rows: [cv] } = await app.db.owner.query('select organization_id from app_public.conversations where id = $1', [theirs.body.conversation_id]);
  t.is(cv.organization_id, other.organization_id);
  t.is((await app.request('GET', `/api/v1/conversations/${theirs.body.conversation_id}`, { key: acme.keys.org })).status, 404);
  t.is((await app.request('GET', `/api/v1/conversations/${theirs.body.conversation_id}`, { key: other.keys.org })).status, 200);
});

test.serial('malformed bodies: 400 naming the field or 415, nothing written', async (t) => {
  const widget = acme.ids.north_chat!;
  for (const body of [{}, { message: '' }, { message: '   ' }, { message: 'x'.repeat(2001) }, { message: 'Hi', email: 'nope' },
    { message: 'Hi', phone: '555' }, { message: 'Hi', extra: 1 }, { message: 12 }, [], 'text', null]) {
    await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => start(widget, body));
  }
  await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => app.request('POST', `/chat/${widget}/conversations`,
    { rawBody: '{"message": ', headers: { 'x-forwarded-for': nextAddress() } }));
  await refusedWithoutWrites(t, app, org(), 415, 'unsupported_media_type', () => app.request('POST', `/chat/${widget}/conversations`,
    { rawBody: 'message=hi', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': nextAddress() } }));
  const { conversation_id: conversation, token } = (await start(widget, { message: 'Hi' })).body;
  for (const body of [{}, { message: '' }, { message: 'x'.repeat(2001) }, { message: 'Hi', name: 'x' }]) {
    await refusedWithoutWrites(t, app, org(), 400, 'bad_request', () => say(widget, conversation, token, body));
  }
  // the database checks the message too, whoever calls it
  for (const body of ['   ', 'x'.repeat(2001)]) {
    const refused = await unchanged(t, app, org(), () => app.db.owner.query(
      `select app_hidden.chat_post($1, $2, encode(sha256(convert_to($3, 'UTF8')), 'hex'), $4)`, [widget, conversation, token, body])
      .catch((e: { code: string }) => e.code));
    t.is(refused, 'SV400');
    const startRefused = await unchanged(t, app, org(), () => app.db.owner.query(
      `select app_hidden.chat_start($1, repeat('b', 64), '{}', $2, null)`, [widget, body]).catch((e: { code: string }) => e.code));
    t.is(startRefused, 'SV400');
  }
});

test.serial('rates: five new chats per client address in ten minutes, ten messages a minute per chat (429, nothing written)', async (t) => {
  const widget = acme.ids.north_chat!;
  const address = { 'x-forwarded-for': '198.51.100.77' };
  const started = await Promise.all(Array.from({ length: 5 }, (_, i) => start(widget, { message: `Hi ${i}` }, address)));
  t.true(started.every((r) => r.status === 201), JSON.stringify(started.map((r) => r.body)).slice(0, 200));
  await refusedWithoutWrites(t, app, org(), 429, 'rate_limited', () => start(widget, { message: 'One more' }, address));
  // concurrent starts from a fresh address: exactly five pass
  const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => start(widget, { message: `Burst ${i}` }, { 'x-forwarded-for': '198.51.100.78' })));
  t.is(burst.filter((r) => r.status === 201).length, 5);
  t.true(burst.every((r) => r.status === 201 || r.status === 429));
  // messages: the first message and nine more in a minute, then 429
  const { conversation_id: conversation, token } = started[0]!.body;
  for (let i = 0; i < 9; i++) t.is((await say(widget, conversation, token, { message: `m${i}` })).status, 201);
  await refusedWithoutWrites(t, app, org(), 429, 'rate_limited', () => say(widget, conversation, token, { message: 'too many' }));
});

test.serial('the new-chat limit is per client address across organizations; other visitors of the organization go on', async (t) => {
  const address = { 'x-forwarded-for': '198.51.100.90' };
  // five at one organization's widgets (two widgets), then the other organization's refuses it too
  for (let i = 0; i < 5; i++) {
    t.is((await start(i % 2 ? acme.ids.org_chat! : acme.ids.north_chat!, { message: `Hop ${i}` }, address)).status, 201);
  }
  await refusedWithoutWrites(t, app, other.organization_id, 429, 'rate_limited', () => start(other.ids.org_chat!, { message: 'Elsewhere' }, address));
  await refusedWithoutWrites(t, app, other.organization_id, 429, 'rate_limited', () => start(other.ids.north_chat!, { message: 'Elsewhere' }, address));
  // the limited address holds up no one else: other visitors of both organizations start chats
  for (const w of [acme.ids.north_chat!, acme.ids.org_chat!, other.ids.org_chat!]) {
    for (let i = 0; i < 3; i++) t.is((await start(w, { message: 'Hello' })).status, 201);
  }
});

test.serial('a visitor with neither email nor phone is a contact with no address; CORS answers the widget\'s sites only', async (t) => {
  const widget = acme.ids.north_chat!;
  const anon = await start(widget, { message: 'Just browsing', name: 'Anon' }, { origin: 'https://acme.example' });
  t.is(anon.status, 201);
  t.is(anon.headers.get('access-control-allow-origin'), 'https://acme.example');
  const { rows: [c] } = await app.db.owner.query(`select c.name, c.email, c.phone from app_public.conversations cv
    join app_public.contacts c on c.organization_id = cv.organization_id and c.id = cv.contact_id where cv.id = $1`, [anon.body.conversation_id]);
  t.deepEqual(c, { name: 'Anon', email: null, phone: null });
  const pre = await app.request('OPTIONS', `/chat/${widget}/conversations/${anon.body.conversation_id}/messages`, {
    headers: { origin: 'https://acme.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
  t.is(pre.status, 204);
  t.is(pre.headers.get('access-control-allow-origin'), 'https://acme.example');
  t.regex(pre.headers.get('access-control-allow-headers') ?? '', /Authorization/);
  const elsewhere = await app.request('OPTIONS', `/chat/${widget}/conversations`, { headers: { origin: 'https://evil.example' } });
  t.is(elsewhere.headers.get('access-control-allow-origin'), null);
  const refused = await unchanged(t, app, org(), () => start(widget, {}, { origin: 'https://acme.example' }));
  t.is(refused.status, 400);
  t.is(refused.headers.get('access-control-allow-origin'), 'https://acme.example', 'the page can read why');
  // the org-wide widget has no sites: no CORS for anyone
  t.is((await start(acme.ids.org_chat!, { message: 'Hi' }, { origin: 'https://acme.example' })).headers.get('access-control-allow-origin'), null);
});

test.serial('concurrent messages into one chat: the per-minute limit holds, each accepted message has its own job', async (t) => {
  const widget = acme.ids.north_chat!;
  const { conversation_id: conversation, token } = (await start(widget, { message: 'Hello' })).body;
  const sent = await Promise.all(Array.from({ length: 15 }, (_, i) => say(widget, conversation, token, { message: `at once ${i}` })));
  t.true(sent.every((r) => r.status === 201 || r.status === 429), JSON.stringify(sent.map((r) => r.status)));
  const accepted = sent.filter((r) => r.status === 201);
  t.is(accepted.length, 9, 'the first message and nine more in a minute');
  const { rows: [{ n }] } = await app.db.owner.query(`select count(*)::int as n from app_public.conversation_messages
    where conversation_id = $1 and direction = 'inbound'`, [conversation]);
  t.is(n, 10);
  for (const r of accepted) t.is((await jobsFor(app.db, r.body.message_id)).length, 1);
});
