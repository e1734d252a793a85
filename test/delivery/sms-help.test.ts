// An organization's own answer to HELP (and INFO), through the signed Twilio webhook: the default
// names the business, the number texted and how to opt out; a text set in the fixture or with
// `svc admin org update --sms-help` is sent instead, with the business's name put first when it
// does not name it and "Reply STOP to unsubscribe." added when it says nothing of STOP (carrier
// rules); '' goes back to the default; a text too long is refused and changes nothing.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { AdminError, FixtureError, updateOrg } from '../../src/admin/commands.ts';
import { twilioSignature } from '../../src/delivery/twilio.ts';

const TOKEN = 'twilio-help-token';
process.env.TWILIO_AUTH_TOKEN = TOKEN;
delete process.env.SVC_BASE_URL;

/** acmeFixture with numbers of its own (+1555 4n0 000x), and the organization's settings as given. */
function fixture(name: string, n: number, organization: Record<string, unknown> = {}) {
  const base = acmeFixture(name);
  const num = (x: number) => `+1555${400 + n}000${x}`;
  return {
    ...base,
    organization: { ...base.organization, default_sms_number: num(0), ...organization },
    locations: base.locations.map((l, i) => ({ ...l, sms_number: num(i + 1) })),
  };
}

let app: TestApp;
let plain: Applied;
let custom: Applied;
test.before(async () => {
  ({ app, tenant: plain } = await startWithTenant(fixture('Bright Smiles', 1)));
  custom = await app.apply(fixture('Oak Dental', 2, { sms_help_text: 'Questions? Call 555-0100 or visit oak.example/help.' }));
});
test.after.always(async () => {
  await app?.close();
});

let seq = 0;
/** A signed inbound SMS to `to`; the system's answer to it (the HELP reply). */
async function helpReply(to: string, body = 'HELP'): Promise<string> {
  const from = `+1666555${String(++seq).padStart(4, '0')}`;
  const params = { MessageSid: `SMhelp${Date.now()}${seq}`, From: from, To: to, Body: body };
  const res = await app.request('POST', '/webhooks/twilio/sms', { rawBody: new URLSearchParams(params).toString(), headers: {
    'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(TOKEN, `${app.url}/webhooks/twilio/sms`, params) } });
  if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
  const { rows } = await app.db.owner.query(
    `select body from app_private.outgoing_messages where recipient = $1 and channel = 'sms' and meta ? 'conversation_id'`, [from]);
  if (rows.length !== 1) throw new Error(`${rows.length} answers to ${from}`);
  return rows[0].body as string;
}

test.serial('the default HELP answer names the business, the number texted and STOP; INFO is the same keyword', async (t) => {
  const reply = await helpReply('+15554010001');
  t.is(reply, 'Bright Smiles: for help, call or text +15554010001 or reply with your question. '
    + 'Msg & data rates may apply; reply STOP to unsubscribe, START to resubscribe.');
  t.is(await helpReply('+15554010000', 'info'), reply.replace('+15554010001', '+15554010000'), 'the organization\'s own number');
});

test.serial('a HELP text from the fixture is sent, named and with STOP added', async (t) => {
  t.is(await helpReply('+15554020001', 'Help'),
    'Oak Dental: Questions? Call 555-0100 or visit oak.example/help. Reply STOP to unsubscribe.');
});

test.serial('svc admin org update --sms-help: used as written when it names the business and STOP; \'\' is the default again', async (t) => {
  const text = 'Oak Dental help: call 555-0100, Mon-Fri 9-5. Text STOP to opt out, msg & data rates may apply.';
  t.like(await updateOrg(app.db.owner, custom.organization_id, undefined, undefined, text), { sms_help_text: text });
  t.is(await helpReply('+15554020001'), text);
  t.like(await updateOrg(app.db.owner, custom.organization_id, undefined, undefined, ''), { sms_help_text: null });
  t.regex(await helpReply('+15554020001'), /^Oak Dental: for help, call or text \+15554020001 .*reply STOP to unsubscribe/);
  // the other organization's answer did not change
  t.regex(await helpReply('+15554010001'), /^Bright Smiles: for help/);
});

test.serial('a HELP text over 300 characters is refused, by the CLI and the fixture, and changes nothing', async (t) => {
  const row = async () => (await app.db.owner.query('select * from app_public.organizations where id = $1', [plain.organization_id])).rows[0];
  const before = await row();
  const err = await t.throwsAsync(updateOrg(app.db.owner, plain.organization_id, undefined, undefined, 'x'.repeat(301)));
  t.true(err instanceof AdminError);
  t.regex(err!.message, /--sms-help is at most 300 characters/);
  t.deepEqual(await row(), before);
  const count = async () => (await app.db.owner.query('select count(*)::int as n from app_public.organizations')).rows[0].n as number;
  const orgs = await count();
  const bad = await t.throwsAsync(app.apply(fixture('Too Long', 3, { sms_help_text: 'y'.repeat(301) })));
  t.true(bad instanceof FixtureError, String(bad));
  t.regex(bad!.message, /organization\.sms_help_text/);
  t.is(await count(), orgs, 'no organization created');
});
