// Malformed posts to the inbox's forms (the receptionist's own HTTP surface; it has no
// operations of its own): bad conversation ids, another organization's, bad bodies, the wrong
// content type, a body too large: a 4xx, never a 5xx, and nothing written or sent.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { Browser, signIn } from '../dashboard/helpers.ts';
import { clinicFixture, drain, sms } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let held: string;
let theirs: string;

test.before(async () => {
  delete process.env.AI_BASE_URL;
  ({ app, tenant: acme } = await startWithTenant(clinicFixture()));
  const other = await app.apply(clinicFixture('Other Dental'));
  held = (await sms(app, '+15551230001', 'A person please')).conversation_id as string;
  const { rows: [north] } = await app.db.owner.query(`select sms_number from app_public.locations where organization_id = $1 and name = 'North'`,
    [other.organization_id]);
  theirs = (await sms(app, '+15551230001', 'A person please', north.sms_number)).conversation_id as string;
  await drain(app);
});
test.after.always(async () => { await app?.close(); });

// everything the inbox's forms can change, as one value
const snapshot = async () => (await app.db.owner.query(`select
  (select jsonb_agg(c order by c.id) from (select id, ai_held from app_public.conversations) c) as conversations,
  (select count(*) from app_public.conversation_messages) as messages,
  (select count(*) from app_private.outbox) as outbox`)).rows[0];

test.serial('garbage posted to the inbox forms: a 4xx, never a 5xx, and nothing written', async (t) => {
  const owner = await signIn(app, 'olive@acme.example', undefined, acme.organization_id);
  const csrf = Browser.csrf(await owner.get(`/dashboard/inbox/${held}`));
  await drain(app); // the sign-in email, sent before counting
  const before = await snapshot();
  const badIds = ['x', "'; drop table x; --", '00000000-0000-0000-0000-000000000000', '%00', 'a'.repeat(500), theirs, held.toUpperCase() + 'x'];
  const badBodies: Record<string, string | string[]>[] = [
    {}, { body: '' }, { body: '   ' }, { body: 'x'.repeat(1601) }, { body: '\u0000' }, { body: 'a\u0000b' }, { body: ['', ''] },
  ];
  const check = (r: { status: number }, what: string) => t.true(r.status >= 400 && r.status < 500, `${what} answered ${r.status}`);
  for (const id of badIds) {
    for (const action of ['reply', 'resume']) {
      const path = `/dashboard/inbox/${id}/${action}`;
      check(await owner.post(path, { csrf, body: 'Hello' }), path);
      check(await owner.get(`/dashboard/inbox/${id}`), `GET ${id}`);
    }
  }
  const reply = `/dashboard/inbox/${held}/reply`;
  for (const fields of badBodies) check(await owner.post(reply, { csrf, ...fields }), `${reply} ${JSON.stringify(fields).slice(0, 60)}`);
  for (const action of ['reply', 'resume']) {
    const path = `/dashboard/inbox/${held}/${action}`;
    t.is((await owner.request('POST', path, undefined, { 'content-type': 'application/json' })).status, 415, path);
    t.is((await owner.post(path, { csrf, body: 'x'.repeat(20_000) })).status, 413, path);
    t.is((await owner.post(path, { csrf: 'forged', body: 'Hello' })).status, 403, path);
  }
  await drain(app);
  t.deepEqual(await snapshot(), before);
});
