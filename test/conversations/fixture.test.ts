// The fixture's contacts[].conversations: what lands, and what is refused with the entry named.
import test from 'ava';
import { startApp, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import { FixtureError } from '../../src/admin/fixture.ts';
import { inboxFixture } from './fixture.ts';

let app: TestApp;
test.before(async () => { app = await startApp(); });
test.after.always(async () => { await app?.close(); });

test.serial('conversations land with their messages, defaults and refs', async (t) => {
  const tenant = await app.apply(inboxFixture());
  const { rows: [ann] } = await app.db.owner.query(`select channel, location_id, business_address, ai_held, created_at, last_message_at
    from app_public.conversations where id = $1`, [tenant.ids.ann_sms]);
  t.like(ann, { channel: 'sms', location_id: tenant.ids.north, business_address: '+15550000001', ai_held: false });
  t.deepEqual([ann.created_at.toISOString(), ann.last_message_at.toISOString()], ['2026-11-20T10:00:00.000Z', '2026-11-20T10:00:05.000Z']);
  const { rows } = await app.db.owner.query(`select direction, author, author_person_id, status from app_public.conversation_messages
    where conversation_id = $1 order by created_at`, [tenant.ids.cy_email]);
  t.deepEqual(rows, [{ direction: 'inbound', author: 'contact', author_person_id: null, status: 'received' },
    { direction: 'outbound', author: 'person', author_person_id: tenant.ids.owner, status: 'sent' }]);
  const { rows: [email] } = await app.db.owner.query(`select business_address from app_public.conversations where id = $1`, [tenant.ids.cy_email]);
  t.is(email.business_address, 'inbox@acme.example');
});

test.serial('bad conversations are refused with the entry named, and nothing is created', async (t) => {
  const base = acmeFixture('Bad Dental');
  const withConversation = (contact: Record<string, unknown>, conversation: Record<string, unknown>) =>
    ({ ...base, contacts: [{ ...contact, conversations: [conversation] }] });
  const ann = base.contacts[0] as Record<string, unknown>;
  const { ref: _ref, ...annWithoutRef } = ann;
  const cases: [unknown, RegExp][] = [
    [withConversation(ann, { channel: 'email', ai_held: true }), /conversations\[0\]\.ai_held: an email conversation has no AI/],
    [withConversation(annWithoutRef, { channel: 'chat' }), /contacts\[0\]: a contact with conversations needs a ref/],
    [withConversation(ann, { channel: 'fax' }), /channel/],
    [withConversation(ann, { channel: 'sms', location_ref: 'nowhere' }), /unknown ref "nowhere"/],
    [withConversation(ann, { channel: 'chat', messages: [{ direction: 'inbound', author: 'ai', body: 'x' }] }), /messages\[0\]\.author/],
    [withConversation(ann, { channel: 'email', messages: [{ direction: 'outbound', body: 'x' }] }), /an email conversation has no AI/],
    [{ ...withConversation(ann, { channel: 'sms', location_ref: 'south' }), organization: { ...base.organization, default_sms_number: null } },
      /needs a number/],
  ];
  const count = async () => (await app.db.owner.query(`select count(*)::int as n from app_public.organizations`)).rows[0].n;
  const before = await count();
  for (const [fixture, message] of cases) {
    const e = await t.throwsAsync(app.apply(fixture));
    t.true(e instanceof FixtureError, String(e));
    t.regex(e!.message, message);
  }
  t.is(await count(), before);
});
