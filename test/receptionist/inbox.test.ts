// The dashboard inbox over HTTP, as a browser without JavaScript uses it: a handed-over
// conversation is listed first among the others, its page shows the thread, a reply goes out
// through the normal send path and keeps the AI quiet, "Let the AI answer" gives it back; another
// organization's conversation and one out of a member's reach answer 404 and change nothing;
// a form without its CSRF token is refused.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { Browser, signIn as signInAnywhere } from '../dashboard/helpers.ts';
import { answers, clinicFixture, drain, sms } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
/** Ann's conversation, handed to a person; Dee's, answered by the AI after it; the other organization's. */
let held: string;
let answered: string;
let theirs: string;
/** Bob's, at South. */
let south: string;
const southNumber = async () => (await app.db.owner.query(`select sms_number from app_public.locations where id = $1`, [acme.ids.south])).rows[0].sms_number as string;

test.before(async () => {
  delete process.env.AI_BASE_URL;
  ({ app, tenant: acme } = await startWithTenant(clinicFixture()));
  other = await app.apply(clinicFixture('Other Dental'));
  held = (await sms(app, '+15551230001', 'Can I talk to a person please?')).conversation_id as string;
  await drain(app);
  answered = (await sms(app, '+15551230009', 'What are your hours?')).conversation_id as string;
  await drain(app);
  const { rows: [north] } = await app.db.owner.query(`select sms_number from app_public.locations where organization_id = $1 and name = 'North'`,
    [other.organization_id]);
  theirs = (await sms(app, '+15551230001', 'A person please', north.sms_number)).conversation_id as string;
  south = (await sms(app, '+15551230002', 'What are your hours?', await southNumber())).conversation_id as string;
  await drain(app);
});
test.after.always(async () => { await app?.close(); });

// the same addresses are in both organizations: sign in to Acme's
const signIn = (email: string) => signInAnywhere(app, email, undefined, acme.organization_id);
const aiHeld = async (id: string) => (await app.db.owner.query('select ai_held from app_public.conversations where id = $1', [id])).rows[0].ai_held as boolean;
const messageCount = async (id: string) => (await app.db.owner.query(
  'select count(*)::int as n from app_public.conversation_messages where conversation_id = $1', [id])).rows[0].n as number;
const listed = (html: string) => [...html.matchAll(/data-conversation="([^"]+)"/g)].map((m) => m[1]!);

test.serial('the inbox lists the handed-over conversation first; a reply goes out and "Let the AI answer" resumes the AI', async (t) => {
  const owner = await signIn('olive@acme.example');
  const inbox = await owner.get('/dashboard/inbox');
  t.is(inbox.status, 200);
  t.false(/<script/i.test(inbox.text), 'no script: plain links and forms');
  const ids = listed(inbox.text);
  t.is(ids[0], held, 'waiting for a person first, though the others have newer messages');
  t.deepEqual(ids.slice(1, 3), [south, answered], 'then the newest message first');
  t.false(ids.includes(theirs));
  t.regex(inbox.text, new RegExp(`data-conversation="${held}">.*?Ann Lee.*?Waiting for a person`, 's'));

  const path = `/dashboard/inbox/${held}`;
  const thread = await owner.get(path);
  t.is(thread.status, 200);
  t.regex(thread.text, /Can I talk to a person please\?/);
  t.regex(thread.text, /Someone from our team will text you shortly/);
  t.regex(thread.text, new RegExp(`<form method="post" action="${path}/reply">`));
  t.regex(thread.text, new RegExp(`<form method="post" action="${path}/resume">.*Let the AI answer`, 's'));
  t.false(/<script/i.test(thread.text));

  // the reply: sent as the SMS it is, through the outbox, and the AI stays on hold
  const sent = await owner.post(`${path}/reply`, { csrf: Browser.csrf(thread), body: 'Hi Ann, this is Olive. How can I help?' });
  t.is(sent.status, 200, sent.text.slice(-400));
  t.regex(sent.text, /Sent\. The AI stays quiet until you let it answer\./);
  await drain(app);
  const { rows: out } = await app.db.owner.query(`select recipient, body from app_private.outbox
     where meta->>'conversation_id' = $1 and body like 'Hi Ann%'`, [held]);
  t.deepEqual(out, [{ recipient: '+15551230001', body: 'Hi Ann, this is Olive. How can I help?' }]);
  const { rows: [reply] } = await app.db.owner.query(`select author, direction, channel from app_public.conversation_messages
     where conversation_id = $1 and body like 'Hi Ann%'`, [held]);
  t.like(reply, { author: 'person', direction: 'outbound', channel: 'sms' });
  t.true(await aiHeld(held));

  // while held the AI says nothing; let it answer: it answers the contact's last message
  await sms(app, '+15551230001', 'What are your hours?');
  await drain(app);
  const before = await answers(app, held);
  t.is(before.at(-1), 'Hi Ann, this is Olive. How can I help?');
  const resumed = await owner.submit(path, `${path}/resume`, {});
  t.is(resumed.status, 200);
  t.regex(resumed.text, /The AI answers this conversation again\./);
  t.false(await aiHeld(held));
  await drain(app);
  const after = await answers(app, held);
  t.is(after.length, before.length + 1);
  t.regex(after.at(-1)!, /open|hours/i);
  t.regex((await owner.get(path)).text, /The AI answers/);
});

test.serial('another organization\'s conversation answers 404 on its page and its forms; nothing is written', async (t) => {
  const owner = await signIn('olive@acme.example');
  const page = await owner.get(`/dashboard/inbox/${theirs}`);
  t.is(page.status, 404);
  t.regex(page.text, /not in your inbox/);
  t.false(page.text.includes('A person please'));
  t.is((await owner.get('/dashboard/inbox/not-a-uuid')).status, 404);
  const count = await messageCount(theirs);
  const csrf = Browser.csrf(page);
  t.is((await owner.post(`/dashboard/inbox/${theirs}/reply`, { csrf, body: 'Hello from Acme' })).status, 404);
  t.is((await owner.post(`/dashboard/inbox/${theirs}/resume`, { csrf })).status, 404);
  t.is(await messageCount(theirs), count);
  t.true(await aiHeld(theirs));
});

test.serial('a member sees what row-level security lets them: the inbox matches conversations_list for their key', async (t) => {
  const quinn = await signIn('quinn@acme.example'); // a member at South
  const inbox = await quinn.get('/dashboard/inbox');
  t.is(inbox.status, 200);
  const api = await app.request('GET', '/api/v1/conversations?limit=100', { key: acme.keys.quiet_personal! });
  t.is(api.status, 200, JSON.stringify(api.body));
  t.deepEqual(listed(inbox.text).sort(), (api.body.items as { id: string }[]).map((c) => c.id).sort());
  t.false(listed(inbox.text).includes(held));
  t.deepEqual(listed(inbox.text), [south], 'South\'s conversation, not North\'s');
  const page = await quinn.get(`/dashboard/inbox/${held}`);
  t.is(page.status, 404);
  t.false(page.text.includes('Can I talk to a person'));
  const count = await messageCount(held);
  const csrf = Browser.csrf(page);
  t.is((await quinn.post(`/dashboard/inbox/${held}/reply`, { csrf, body: 'Not mine' })).status, 404);
  t.is(await messageCount(held), count);

  // a manager at North sees Ann's
  const max = await signIn('max@acme.example');
  t.true(listed((await max.get('/dashboard/inbox')).text).includes(held));
});

test.serial('a form without its CSRF token, or with another session\'s, is refused and writes nothing', async (t) => {
  const owner = await signIn('olive@acme.example');
  const admin = await signIn('adam@acme.example');
  const path = `/dashboard/inbox/${held}`;
  const count = await messageCount(held);
  const heldBefore = await aiHeld(held);
  const bare = await owner.post(`${path}/reply`, { body: 'No token' });
  t.is(bare.status, 403);
  t.regex(bare.text, /nothing was changed/);
  const foreign = await owner.post(`${path}/reply`, { csrf: Browser.csrf(await admin.get(path)), body: 'Their token' });
  t.is(foreign.status, 403);
  t.is((await owner.post(`${path}/resume`, {})).status, 403);
  t.is(await messageCount(held), count);
  t.is(await aiHeld(held), heldBefore);
  // an empty reply is a 400, also writing nothing
  t.is((await owner.submit(path, `${path}/reply`, { body: '   ' })).status, 400);
  t.is(await messageCount(held), count);
});
