// A run's batches claimed and recorded set-based (app_private.broadcast_claim_batch and _record_batch)
// apply every rule of the sequences engine's per-message claim and record: each one tested here in
// the batch path. The send-time refusals (missing_address, suppressed, opted_out, no_consent) and
// the sink are in runs.test.ts; here: the rendering is the per-message one's, a provider
// transport's answers (sent, failed, the provider's id), the cases the per-message claim still
// decides (an exit condition, a step run already there, a wait, a step removed), the next step of
// a broadcast with more than one, edges, a cancel while a live sender holds its batch, and the
// pipeline (the next batch claimed while one is out, and only prepared until the one out is
// recorded: released and claimed again when its sender died).
import test from 'ava';
import type pg from 'pg';
import type { TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { fireDue } from '../../src/broadcasts/fire.ts';
import { sendRun } from '../../src/broadcasts/run.ts';
import type { Transport } from '../../src/delivery/index.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { PermanentDeliveryError } from '../../src/delivery/transport.ts';
import { insertAudience, insertBroadcast, outboxOf, runsOf, schedulePath, startBroadcastsApp } from './helpers.ts';

let app: TestApp;
let acme: Applied;
let everyone: string[];
test.before(async () => {
  ({ app, acme } = await startBroadcastsApp());
  everyone = ['ann', 'bob', 'cy', 'dee', 'eve'].map((c) => acme.ids[c]!);
});
test.after.always(async () => { await app?.close(); });

const org = () => acme.organization_id;
const sink = { email: sinkTransport, sms: sinkTransport };

/** An active broadcast of these steps to these contacts, fired now: its id and its run's. */
async function fired(name: string, steps: unknown[], over: { location_id?: string; exit_conditions?: unknown[]; edges?: unknown[]; contacts?: string[] } = {}) {
  const audience = await insertAudience(app.db, org(), over.contacts ?? everyone, name);
  const id = await insertBroadcast(app.db, org(), audience, { name, status: 'active', steps, location_id: over.location_id ?? null });
  if (over.exit_conditions || over.edges) {
    await app.db.owner.query(`update app_public.sequences set exit_conditions = $2, edges = $3 where id = $1`,
      [id, JSON.stringify(over.exit_conditions ?? []), JSON.stringify(over.edges ?? [])]);
  }
  await app.db.owner.query(`insert into app_public.broadcast_schedules (organization_id, sequence_id, schedule_kind, send_at, status, next_fire_at)
    values ($1, $2, 'once', now() + interval '1 day', 'scheduled', now() - interval '1 second')`, [org(), id]);
  const c = await app.db.owner.connect();
  try { await fireDue(c); } finally { c.release(); }
  const [run] = await runsOf(app.db, id);
  return { id, run: run.id as string };
}
async function send(run: string, transports = sink, batchSize = 2) {
  const c = await app.db.owner.connect();
  try { return await sendRun(c, org(), run, { transports, baseUrl: 'https://svc.example/', batchSize }); } finally { c.release(); }
}
/** Each recipient's name, step run status and reason, enrollment status and end reason. */
async function outcome(run: string) {
  return (await app.db.owner.query(`select c.name, sr.status, sr.reason, e.status as enrollment, e.end_reason, e.current_step_key
      from app_public.enrollments e join app_public.contacts c on c.id = e.contact_id
      left join app_public.step_runs sr on sr.enrollment_id = e.id and sr.step_key = 'news'
     where e.run_id = $1 order by c.name`, [run])).rows;
}
const eventsOf = async (run: string, name: string) => (await app.db.owner.query(`select v.type, v.reason, v.message_id is not null as has_message
    from app_public.enrollment_events v join app_public.enrollments e on e.id = v.enrollment_id join app_public.contacts c on c.id = e.contact_id
   where e.run_id = $1 and c.name = $2 order by v.id`, [run, name])).rows;

test.serial('the batch renders what the per-message claim renders: variables, HTML escaping, sender, headers, meta, a working unsubscribe token', async (t) => {
  await app.db.owner.query(`update app_public.contacts set name = '  Ann   <b>Lee</b>  Smith ' where id = $1`, [acme.ids.ann]);
  try {
    const step = { step_key: 'news', type: 'email', subject: 'News for {{contact.first_name|you}} from {{organization.name}}',
      body: '<p>Hello {{contact.first_name}} {{contact.last_name}} ({{contact.email}}) at {{location.name}}, call {{location.phone}}. '
        + '{{ contact.phone | no phone }} <a href="{{unsubscribe_url}}">stop</a> {{nope}} {{contact.name</p>' };
    const { id, run } = await fired('Rendered', [step], { location_id: acme.ids.north, contacts: [acme.ids.ann!, acme.ids.bob!] });
    await send(run);
    const { rows: [batch] } = await app.db.owner.query(`select m.* from app_private.outgoing_messages m
      where m.meta->>'run_id' = $1 and m.recipient = 'ann@example.com'`, [run]);
    const { rows: [e] } = await app.db.owner.query(`select id from app_public.enrollments where run_id = $1 and contact_id = $2`, [run, acme.ids.ann]);
    // the per-message path, for the same contact and step, in a transaction rolled back
    const c = await app.db.owner.connect();
    let single: { sender: string; recipient: string; subject: string; body: string; meta: Record<string, any> };
    try {
      await c.query('begin');
      single = (await c.query(`select app_private.build_sequence_message($1, s, $3::jsonb, $4, 'ann@example.com', $5, 'https://svc.example/', true) as m
        from app_public.sequences s where s.id = $2`, [org(), id, JSON.stringify(step), acme.ids.ann, e.id])).rows[0].m;
    } finally {
      await c.query('rollback');
      c.release();
    }
    const token = (s: string) => s.replace(/\/unsubscribe\/[A-Za-z0-9_-]{43}/g, '/unsubscribe/TOKEN').replace(/[0-9a-f-]{36}@/g, 'ID@');
    t.is(batch.sender, single.sender);
    t.is(batch.recipient, single.recipient);
    t.is(batch.subject, single.subject);
    t.is(batch.subject, 'News for Ann from Acme Dental');
    t.is(token(batch.body), token(single.body));
    t.regex(batch.body, /^<p>Hello Ann &lt;b&gt;Lee.* \(ann@example.com\) at North, call \+15550000001\. \+15551230001 <a href="https:\/\/svc.example\/unsubscribe\/[A-Za-z0-9_-]{43}">stop<\/a>  \{\{contact.name<\/p>$/);
    t.deepEqual(Object.keys(batch.meta).sort(), [...Object.keys(single.meta), 'run_id'].sort());
    t.like(batch.meta, { sequence_id: id, enrollment_id: e.id, step_key: 'news', message_id: batch.id, html: true, run_id: run });
    t.deepEqual(JSON.parse(token(JSON.stringify(batch.meta.headers))), JSON.parse(token(JSON.stringify(single.meta.headers))));
    t.is(batch.meta.headers['Message-ID'], `<${batch.id}@acme.example>`);
    // the token in the URL is the one stored (its hash), for this address, contact, enrollment and message
    const url = /\/unsubscribe\/([A-Za-z0-9_-]{43})/.exec(batch.body)![1]!;
    const { rows: [tok] } = await app.db.owner.query(`select email, contact_id, enrollment_id, message_id from app_private.unsubscribe_tokens
      where token_hash = sha256(convert_to($1, 'UTF8'))`, [url]);
    t.deepEqual(tok, { email: 'ann@example.com', contact_id: acme.ids.ann, enrollment_id: e.id, message_id: batch.id });
    t.is(batch.meta.headers['List-Unsubscribe'], `<https://svc.example/unsubscribe/${url}>`);
    // the sink's row is the message, and the events are the sink's (sent, delivered), then completed
    const [stored] = (await outboxOf(app.db, id)).filter((m) => m.recipient === 'ann@example.com');
    t.deepEqual([stored.subject, stored.body, stored.meta], [batch.subject, batch.body, batch.meta]);
    t.deepEqual((await eventsOf(run, '  Ann   <b>Lee</b>  Smith ')).map((v) => v.type), ['enrolled', 'sent', 'delivered', 'completed']);
    // an SMS goes from the number people text the contact from: Ann's location's (North), though the broadcast has none
    const sms = await fired('Rendered SMS', [{ step_key: 'news', type: 'sms', body: 'Hi {{contact.first_name}} from {{location.name|us}}' }],
      { contacts: [acme.ids.ann!] });
    await send(sms.run);
    const { rows: [text] } = await app.db.owner.query(`select sender, body from app_private.outbox where meta->>'run_id' = $1`, [sms.run]);
    t.deepEqual(text, { sender: '+15550000001', body: 'Hi Ann from us' });
  } finally {
    await app.db.owner.query(`update app_public.contacts set name = 'Ann Lee' where id = $1`, [acme.ids.ann]);
  }
});

test.serial('a provider transport: claimed, handed over after the commit, answers recorded at once: sent, failed, the provider\'s id', async (t) => {
  const { id, run } = await fired('Provider', [{ step_key: 'news', type: 'sms', body: 'Sale today' }]);
  await app.db.owner.query(`update app_public.contacts set sms_consent = true where id = $1`, [acme.ids.bob]);
  const seen: { recipient: string; status: string }[] = [];
  const provider: Transport = {
    name: 'fake',
    async send(m, tx) {
      // the claim has committed: the step run is `sending` for everybody else
      const { rows: [sr] } = await app.db.owner.query(`select status from app_public.step_runs where message_id = $1`, [m.id]);
      seen.push({ recipient: m.recipient, status: sr.status });
      t.truthy(tx);
      if (m.recipient === '+15551230002') throw new PermanentDeliveryError('number unreachable');
      return { providerId: `SM-${m.recipient}` };
    },
  };
  await send(run, { email: provider, sms: provider }, 10);
  t.deepEqual(seen.sort((a, b) => a.recipient.localeCompare(b.recipient)),
    [{ recipient: '+15551230001', status: 'sending' }, { recipient: '+15551230002', status: 'sending' }]);
  t.deepEqual((await outcome(run)).map((r) => [r.name, r.status, r.reason, r.enrollment]), [
    ['Ann Lee', 'sent', null, 'completed'], ['Bob South', 'failed', 'number unreachable', 'completed'],
    ['Cy Nowhere', 'skipped', 'missing_address', 'completed'], ['Dee Noconsent', 'skipped', 'no_consent', 'completed'],
    ['Eve Stopped', 'skipped', 'opted_out', 'completed']]);
  const { rows: messages } = await app.db.owner.query(`select recipient, status, error, provider_id, sent_at is not null as stamped
    from app_private.outgoing_messages where meta->>'run_id' = $1 order by recipient`, [run]);
  t.deepEqual(messages, [
    { recipient: '+15551230001', status: 'sent', error: null, provider_id: 'SM-+15551230001', stamped: true },
    { recipient: '+15551230002', status: 'failed', error: 'number unreachable', provider_id: null, stamped: false }]);
  t.deepEqual((await eventsOf(run, 'Bob South')).map((v) => [v.type, v.reason]),
    [['enrolled', 'broadcast'], ['failed', 'transport_error'], ['completed', 'last_step']]);
  t.deepEqual((await eventsOf(run, 'Dee Noconsent')).map((v) => [v.type, v.reason]),
    [['enrolled', 'broadcast'], ['skipped', 'no_consent'], ['completed', 'last_step']]);
  t.like((await app.db.owner.query(`select * from app_public.broadcast_runs where id = $1`, [run])).rows[0],
    { status: 'completed', recipients: 5, sent: 1, failed: 1, skipped: 3, unknown: 0, cancelled: 0, in_flight: [] });
  await app.db.owner.query(`update app_public.contacts set sms_consent = false where id = $1`, [acme.ids.bob]);
  await countsHold(t, id);
});

test.serial('between the fire and the send: the audience\'s changes do not reach the run; an address suppressed or a number opted out meanwhile gets nothing', async (t) => {
  t.teardown(async () => {
    // bob's address and ann's number are as the other tests expect them again
    await app.db.owner.query(`delete from app_public.email_suppressions where organization_id = $1 and email = 'bob@example.com'`, [org()]);
    await app.db.owner.query(`delete from app_public.sms_opt_outs where organization_id = $1 and phone = '+15551230001' and source = 'api'`, [org()]);
  });
  const { id, run } = await fired('Snapshot', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' }],
    { contacts: [acme.ids.ann!, acme.ids.bob!, acme.ids.cy!, acme.ids.dee!] });
  const { rows: [{ audience_id: audience }] } = await app.db.owner.query(`select audience_id from app_public.sequences where id = $1`, [id]);
  const { rows: [fay] } = await app.db.owner.query(`insert into app_public.contacts (organization_id, name, email)
    values ($1, 'Fay Late', 'fay@example.com') returning id`, [org()]);
  await app.db.owner.query(`insert into app_public.audience_members (organization_id, audience_id, contact_id) values ($1, $2, $3)`, [org(), audience, fay.id]);
  await app.db.owner.query(`delete from app_public.audience_members where audience_id = $1 and contact_id = $2`, [audience, acme.ids.dee]);
  await app.db.owner.query(`insert into app_public.email_suppressions (organization_id, email, contact_id) values ($1, 'bob@example.com', $2)`, [org(), acme.ids.bob]);
  await send(run);
  // dee, removed after the fire, still gets it; fay, added after it, does not; bob's address was suppressed meanwhile
  t.deepEqual((await outboxOf(app.db, id)).map((m) => m.recipient), ['ann@example.com', 'cy@example.com', 'dee@example.com']);
  t.deepEqual((await outcome(run)).map((r) => [r.name, r.status, r.enrollment]), [
    ['Ann Lee', 'sent', 'completed'], ['Bob South', null, 'cancelled'], ['Cy Nowhere', 'sent', 'completed'], ['Dee Noconsent', 'sent', 'completed']]);
  t.like((await runsOf(app.db, id))[0], { status: 'completed', recipients: 4, sent: 3, skipped: 0, failed: 0, unknown: 0, cancelled: 1 });

  const texts = await fired('Snapshot texts', [{ step_key: 'news', type: 'sms', body: 'Sale' }], { contacts: [acme.ids.ann!] });
  await app.db.owner.query(`insert into app_public.sms_opt_outs (organization_id, phone, contact_id) values ($1, '+15551230001', $2)`, [org(), acme.ids.ann]);
  await send(texts.run);
  t.is((await outboxOf(app.db, texts.id)).length, 0);
  t.like((await runsOf(app.db, texts.id))[0], { status: 'completed', recipients: 1, sent: 0, cancelled: 1 });
});

test.serial('what the per-message claim decides stays its own: an exit condition, a step run already there, a step removed', async (t) => {
  const { id, run } = await fired('Exits', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' }],
    { exit_conditions: [{ type: 'replied' }] });
  const enrollmentOf = async (name: string) => (await app.db.owner.query(`select e.id from app_public.enrollments e
    join app_public.contacts c on c.id = e.contact_id where e.run_id = $1 and c.name = $2`, [run, name])).rows[0].id;
  // ann replied: her exit holds; bob's step run is there already, `sending` for longer than a transport holds one
  await app.db.owner.query(`insert into app_public.enrollment_events (organization_id, enrollment_id, type) values ($1, $2, 'replied')`,
    [org(), await enrollmentOf('Ann Lee')]);
  await app.db.owner.query(`insert into app_public.step_runs (organization_id, enrollment_id, step_key, step_type, status, updated_at)
    values ($1, $2, 'news', 'email', 'sending', now() - interval '10 minutes')`, [org(), await enrollmentOf('Bob South')]);
  await send(run, sink, 10);
  t.deepEqual((await outcome(run)).map((r) => [r.name, r.status, r.reason, r.enrollment, r.end_reason]), [
    ['Ann Lee', null, null, 'completed', 'exit_condition:replied'],
    ['Bob South', 'unknown', 'interrupted', 'completed', 'last_step'],
    ['Cy Nowhere', 'sent', null, 'completed', 'last_step'],
    ['Dee Noconsent', 'sent', null, 'completed', 'last_step'],
    ['Eve Stopped', 'skipped', 'suppressed', 'completed', 'last_step']]);
  t.deepEqual((await outboxOf(app.db, id)).map((m) => m.recipient), ['cy@example.com', 'dee@example.com']);
  t.like((await runsOf(app.db, id))[0], { status: 'completed', recipients: 5, sent: 2, skipped: 1, cancelled: 2 });

  // a step removed after the run fired: failed, step_removed; nothing sent
  const removed = await fired('Removed', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' }], { contacts: [acme.ids.ann!, acme.ids.bob!] });
  await app.db.owner.query(`update app_public.sequences set steps = '[{"step_key": "other", "type": "email", "subject": "S", "body": "B"}]' where id = $1`, [removed.id]);
  await send(removed.run);
  t.deepEqual((await outcome(removed.run)).map((r) => [r.enrollment, r.end_reason]), [['failed', 'step_removed'], ['failed', 'step_removed']]);
  t.is((await outboxOf(app.db, removed.id)).length, 0);
});

test.serial('a broadcast of several steps: the batch moves each recipient to the next step (due after its delay), a wait first waits, edges choose', async (t) => {
  const { run } = await fired('Two steps', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' },
    { step_key: 'later', type: 'email', subject: 'Again', body: 'B', delay: { days: 2 } }], { contacts: [acme.ids.ann!, acme.ids.eve!] });
  await send(run);
  const { rows } = await app.db.owner.query(`select status, current_step_key, current_step_index,
      next_step_due_at between now() + interval '47 hours' and now() + interval '49 hours' as in_two_days, next_run_at is not null as scheduled
    from app_public.enrollments where run_id = $1`, [run]);
  t.deepEqual(rows, [0, 1].map(() => ({ status: 'active', current_step_key: 'later', current_step_index: 1, in_two_days: true, scheduled: true })));
  t.like((await app.db.owner.query(`select * from app_public.broadcast_runs where id = $1`, [run])).rows[0], { status: 'completed', sent: 1, skipped: 1 });

  const waits = await fired('Wait first', [{ step_key: 'news', type: 'wait', delay: { hours: 1 } },
    { step_key: 'after', type: 'email', subject: 'S', body: 'B' }], { contacts: [acme.ids.ann!] });
  await send(waits.run);
  t.deepEqual((await outcome(waits.run)).map((r) => [r.status, r.enrollment, r.current_step_key]), [['waited', 'active', 'after']]);

  const edged = await fired('Edges', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' },
    { step_key: 'skipped_one', type: 'email', subject: 'S', body: 'B' }, { step_key: 'chosen', type: 'email', subject: 'S', body: 'B' }],
  { contacts: [acme.ids.ann!, acme.ids.bob!], edges: [{ from: 'news', to: 'chosen' }] });
  await send(edged.run);
  t.deepEqual((await outcome(edged.run)).map((r) => [r.status, r.enrollment, r.current_step_key]),
    [['sent', 'active', 'chosen'], ['sent', 'active', 'chosen']]);
  await countsHold(t, edged.id);
});

/** The enrollment counts (moved by the batch for its rows, by the per-row trigger otherwise) match the rows. */
async function countsHold(t: import('ava').ExecutionContext, sequenceId: string) {
  const { rows } = await app.db.owner.query(`select s.status, (select count(*)::int from app_public.enrollments e where e.sequence_id = $1 and e.status = s.status) as n,
      (select coalesce(sum(k.n), 0)::int from app_private.enrollment_counts k where k.sequence_id = $1 and k.status = s.status) as counted
    from unnest(array['active', 'paused', 'completed', 'cancelled', 'failed']) s(status)`, [sequenceId]);
  for (const r of rows) t.is(r.counted, r.n, r.status);
}

type Claimed = { action: string; messages?: { enrollment_id: string; step_key: string; message: { id: string } }[] };

/** A sender's steps by hand, on a connection that holds the run's lock as a live sender does (batches of 2). */
async function byHand(run: string, id: string) {
  const c: pg.PoolClient = await app.db.owner.connect();
  await c.query(`select pg_advisory_lock(hashtextextended('svc.broadcast_run:' || $1::text, 0))`, [run]);
  const claim = async (following: boolean) => (await c.query<{ claim: Claimed }>(
    `select app_private.broadcast_claim_batch($1, $2, 2, 'http://x', '{}', $3) as claim`, [org(), run, following])).rows[0]!.claim;
  const record = async (claimed: Claimed, promote = false) => (await c.query<{ n: number }>(
    `select app_private.broadcast_record_batch($1, $2, $3::jsonb, $4) as n`, [org(), run, JSON.stringify(
      claimed.messages!.map((m) => ({ enrollment_id: m.enrollment_id, step_key: m.step_key, message_id: m.message.id, error: null }))), promote])).rows[0]!.n;
  /** As the sender does before handing messages over (and with the answers come meanwhile). */
  const hand = async (handing: string[], answers: object[] = []) => c.query(
    `select app_private.broadcast_mark_handed($1, $2, $3, $4::jsonb)`, [org(), run, handing, JSON.stringify(answers)]);
  const checkpoint = async () => {
    const [r] = await runsOf(app.db, id);
    return { in_flight: [...r.in_flight as string[]].sort(), prepared: [...r.prepared as string[]].sort() };
  };
  const release = async () => {
    await c.query(`select pg_advisory_unlock_all()`);
    c.release();
  };
  return { claim, record, checkpoint, release, hand };
}
const enrollmentsOf = (claimed: Claimed) => claimed.messages!.map((m) => m.enrollment_id).sort();
/** Step runs, messages and unsubscribe tokens of the run, by status. */
async function leftOf(run: string) {
  const { rows: [r] } = await app.db.owner.query(`select
      (select coalesce(jsonb_object_agg(status, n), '{}') from (select sr.status, count(*)::int as n from app_public.step_runs sr
         join app_public.enrollments e on e.id = sr.enrollment_id where e.run_id = $1 group by 1) x) as step_runs,
      (select coalesce(jsonb_object_agg(status, n), '{}') from (select status, count(*)::int as n from app_private.outgoing_messages
         where meta->>'run_id' = $1::text group by 1) x) as messages,
      (select count(*)::int from app_private.unsubscribe_tokens t join app_public.enrollments e on e.id = t.enrollment_id
         where e.run_id = $1) as tokens`, [run]);
  return r;
}

test.serial('cancelled while a live sender holds its batch: that batch is recorded by its sender, the rest cancelled', async (t) => {
  const { id, run } = await fired('Held', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' }],
    { contacts: [acme.ids.ann!, acme.ids.bob!, acme.ids.dee!] });
  const s = await byHand(run, id);
  try {
    // a provider transport (no sink channels): two claimed and handed over
    const claim = await s.claim(false);
    t.is(claim.messages!.length, 2);
    const res = await app.request('POST', schedulePath(id, `/runs/${run}/cancel`), { key: acme.keys.org! });
    t.deepEqual(res.body, { run_id: run, status: 'cancelled', cancelled: 1 });
    const { rows: held } = await app.db.owner.query(`select sr.status from app_public.step_runs sr join app_public.enrollments e on e.id = sr.enrollment_id
      where e.run_id = $1`, [run]);
    t.deepEqual(held.map((r) => r.status), ['sending', 'sending'], 'a live sender\'s batch is left to it');
    await s.record(claim);
    t.like((await runsOf(app.db, id))[0], { status: 'cancelled', recipients: 3, sent: 2, cancelled: 1, unknown: 0, in_flight: [] });
    await countsHold(t, id);
  } finally {
    await s.release();
  }
});

test.serial('pipelined: the batch claimed while one is out is prepared, and put in flight by the record of the one before', async (t) => {
  const { id, run } = await fired('Piped', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' }],
    { contacts: [acme.ids.ann!, acme.ids.bob!, acme.ids.dee!] });
  const s = await byHand(run, id);
  try {
    const first = await s.claim(false);
    const second = await s.claim(true);
    t.is(first.messages!.length, 2);
    t.is(second.messages!.length, 1);
    t.deepEqual(await s.checkpoint(), { in_flight: enrollmentsOf(first), prepared: enrollmentsOf(second) },
      'one batch in flight, the next prepared');
    await t.throwsAsync(s.claim(true), { message: /prepared batch already/ }, 'a sender records before it claims again');
    t.is(await s.record(first, true), 1, 'the record puts the prepared batch in flight');
    t.deepEqual(await s.checkpoint(), { in_flight: enrollmentsOf(second), prepared: [] });
    t.deepEqual(await s.claim(true), { action: 'wait' }, 'nothing left, but a batch out: the run does not finish');
    t.like((await runsOf(app.db, id))[0], { status: 'sending', sent: 2, unknown: 0 });
    t.is(await s.record(second), 0);
    t.deepEqual(await s.claim(true), { action: 'done' });
    t.like((await runsOf(app.db, id))[0], { status: 'completed', recipients: 3, sent: 3, unknown: 0, cancelled: 0, in_flight: [], prepared: [] });
    t.deepEqual(await leftOf(run), { step_runs: { sent: 3 }, messages: { sent: 3 }, tokens: 3 });
    await countsHold(t, id);
  } finally {
    await s.release();
  }
});

test.serial('a sender that died with a batch out and the next prepared: what it answered recorded, what it handed unknown, the rest claimed again and sent once', async (t) => {
  const { id, run } = await fired('Died', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' }],
    { contacts: [acme.ids.ann!, acme.ids.bob!, acme.ids.dee!] });
  const dead = await byHand(run, id);
  const first = await dead.claim(false);
  const second = await dead.claim(true);
  t.is(first.messages!.length, 2);
  // the first batch's two messages handed over; the first one's answer came and was written
  const [answered, held] = first.messages!;
  await dead.hand([answered!.enrollment_id, held!.enrollment_id]);
  await dead.hand([], [{ enrollment_id: answered!.enrollment_id, step_key: answered!.step_key, message_id: answered!.message.id, error: null, provider_id: null }]);
  await dead.release(); // its connection's lock gone, as when the process is killed
  const n = first.messages!.length + second.messages!.length;
  t.deepEqual(await leftOf(run), { step_runs: { sending: n }, messages: { queued: n }, tokens: n });
  const next = await byHand(run, id);
  try {
    const again = await next.claim(false);
    t.deepEqual(enrollmentsOf(again), enrollmentsOf(second), 'the prepared recipient claimed again');
    t.notDeepEqual(again.messages!.map((m) => m.message.id), second.messages!.map((m) => m.message.id), 'as a new message');
    t.deepEqual(await next.checkpoint(), { in_flight: enrollmentsOf(second), prepared: [] });
    t.like((await runsOf(app.db, id))[0], { status: 'sending', unknown: 1, sent: 1 });
    // the released message and token are gone: one of each for the recipient, the new one's
    t.deepEqual(await leftOf(run), { step_runs: { unknown: 1, sent: 1, sending: 1 }, messages: { unknown: 1, sent: 1, queued: 1 }, tokens: 3 });
    t.is(await next.record(again), 0);
    t.deepEqual(await next.claim(false), { action: 'done' });
    t.like((await runsOf(app.db, id))[0], { status: 'completed', recipients: 3, sent: 2, unknown: 1, cancelled: 0, in_flight: [], prepared: [] });
    t.deepEqual(await leftOf(run), { step_runs: { unknown: 1, sent: 2 }, messages: { unknown: 1, sent: 2 }, tokens: 3 });
    const { rows: [{ marks }] } = await app.db.owner.query(`select count(*)::int as marks from app_private.broadcast_handed where run_id = $1`, [run]);
    t.is(marks, 0, 'no mark left');
    await countsHold(t, id);
  } finally {
    await next.release();
  }
});

test.serial('a sender that died before handing its batch over: nothing unknown, the whole batch claimed again and sent once', async (t) => {
  const { id, run } = await fired('Died early', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' }],
    { contacts: [acme.ids.ann!, acme.ids.bob!, acme.ids.dee!] });
  const dead = await byHand(run, id);
  const first = await dead.claim(false);
  await dead.claim(true);
  await dead.release();
  const next = await byHand(run, id);
  try {
    const again = await next.claim(false);
    t.deepEqual(enrollmentsOf(again), enrollmentsOf(first), 'the batch never handed over is claimed again');
    t.is(await next.record(again, false), 0);
    const rest = await next.claim(false);
    t.is(await next.record(rest, false), 0);
    t.deepEqual(await next.claim(false), { action: 'done' });
    t.like((await runsOf(app.db, id))[0], { status: 'completed', recipients: 3, sent: 3, unknown: 0, cancelled: 0 });
    t.deepEqual(await leftOf(run), { step_runs: { sent: 3 }, messages: { sent: 3 }, tokens: 3 });
    await countsHold(t, id);
  } finally {
    await next.release();
  }
});

test.serial('cancelled while a live sender has a batch out and the next prepared: the prepared one released and cancelled, never handed over', async (t) => {
  const { id, run } = await fired('Prepared', [{ step_key: 'news', type: 'email', subject: 'S', body: 'B' }],
    { contacts: [acme.ids.ann!, acme.ids.bob!, acme.ids.dee!] });
  const s = await byHand(run, id);
  try {
    const first = await s.claim(false);
    await s.claim(true);
    const res = await app.request('POST', schedulePath(id, `/runs/${run}/cancel`), { key: acme.keys.org! });
    t.deepEqual(res.body, { run_id: run, status: 'cancelled', cancelled: 1 });
    t.deepEqual(await s.checkpoint(), { in_flight: enrollmentsOf(first), prepared: [] }, 'the batch out is left to its sender');
    t.is(await s.record(first, true), 0, 'nothing prepared is left to put in flight');
    t.like((await runsOf(app.db, id))[0], { status: 'cancelled', recipients: 3, sent: 2, cancelled: 1, unknown: 0, in_flight: [] });
    t.deepEqual(await leftOf(run), { step_runs: { sent: 2 }, messages: { sent: 2 }, tokens: 2 });
    t.deepEqual(await s.claim(false), { action: 'none' });
    await countsHold(t, id);
  } finally {
    await s.release();
  }
});

test.serial('a run of 1,200 recipients (its first batch samples the new enrollments for the planner): each one once, counts adding up', async (t) => {
  const { rows: many } = await app.db.owner.query(`insert into app_public.contacts (organization_id, name, email)
    select $1, 'Many ' || i, 'many' || i || '@example.com' from generate_series(1, 1200) i returning id`, [org()]);
  const { id, run } = await fired('Many', [{ step_key: 'news', type: 'email', subject: 'Hi {{contact.first_name}}', body: 'B' }],
    { contacts: many.map((c) => c.id) });
  await send(run, sink, 200);
  const sent = await outboxOf(app.db, id);
  t.is(sent.length, 1200);
  t.is(new Set(sent.map((m) => m.recipient)).size, 1200);
  t.like((await runsOf(app.db, id))[0], { status: 'completed', recipients: 1200, sent: 1200, skipped: 0, cancelled: 0, unknown: 0 });
  await countsHold(t, id);
});
