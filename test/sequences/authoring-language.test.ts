// The template and condition language of sequences (app_hidden.render_template and
// app_hidden.condition_*): rendering with defaults and HTML escaping, unknown and malformed
// placeholders, the message variables, and conditions over the contact and the enrollment's events.
import test from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertSequence } from './helpers.ts';

let db: TestDatabase;
let org: string;
let other: string;
let contact: string;
let location: string;
let sequence: string;
let enrollment: string;
let stage: string;

test.before(async () => {
  db = await createTestDatabase();
  const q = (text: string, values: unknown[] = []) => db.owner.query(text, values);
  org = (await q(`insert into app_public.organizations (name, default_sms_number) values ('Acme & Sons', '+15550000001') returning id`)).rows[0].id;
  other = (await q(`insert into app_public.organizations (name) values ('Other') returning id`)).rows[0].id;
  location = (await q(`insert into app_public.locations (organization_id, name, sms_number) values ($1, 'North <1>', null) returning id`, [org])).rows[0].id;
  stage = (await q(`insert into app_public.pipeline_stages (organization_id, name, position) values ($1, 'Won', 1) returning id`, [org])).rows[0].id;
  await q(`insert into app_public.custom_fields (organization_id, key, label, type) values ($1, 'budget', 'Budget', 'number'), ($1, 'city', 'City', 'text')`, [org]);
  contact = (await q(`insert into app_public.contacts (organization_id, name, email, phone, total_calls, stage_id, field_values)
    values ($1, '  Maria   de la Cruz ', 'Maria@Example.com', '+15551234567', 3, $2, '{"budget": 1200, "city": "Austin"}') returning id`, [org, stage])).rows[0].id;
  sequence = await insertSequence(db, org, {});
  enrollment = (await q(`insert into app_public.enrollments (organization_id, sequence_id, contact_id, current_step_key)
    values ($1, $2, $3, 'hello') returning id`, [org, sequence, contact])).rows[0].id;
});
test.after.always(async () => {
  await db?.drop();
});

async function render(template: string, vars: unknown, html = false): Promise<string> {
  const { rows } = await db.owner.query('select app_hidden.render_template($1, $2::jsonb, $3) as r', [template, JSON.stringify(vars), html]);
  return rows[0].r;
}
async function unknown(template: string): Promise<string[]> {
  const { rows } = await db.owner.query('select app_hidden.template_unknown_variables($1) as r', [template]);
  return rows[0].r;
}
async function valid(condition: unknown): Promise<boolean> {
  const { rows } = await db.owner.query('select app_hidden.condition_valid($1::jsonb) as r', [JSON.stringify(condition)]);
  return rows[0].r;
}
async function holds(condition: unknown, e = enrollment, c = contact, o = org): Promise<boolean> {
  const { rows } = await db.owner.query('select app_hidden.condition_holds($1, $2, $3, $4::jsonb) as r', [o, c, e, JSON.stringify(condition)]);
  return rows[0].r;
}

test('the variables: the design\'s names, each with a description and an example', async (t) => {
  const { rows } = await db.owner.query('select * from app_hidden.sequence_variables()');
  const names = rows.map((r) => r.name);
  for (const n of ['contact.first_name', 'contact.last_name', 'contact.name', 'contact.email', 'contact.phone',
    'location.name', 'organization.name', 'unsubscribe_url']) t.true(names.includes(n), n);
  for (const r of rows) {
    t.true(r.description.length > 0);
    t.true(r.example.length > 0);
  }
});

test('placeholders render their value, with or without spaces; a default when the value is null or empty', async (t) => {
  const vars = { 'contact.first_name': 'Maria', 'contact.last_name': '', 'location.name': null };
  t.is(await render('Hi {{contact.first_name}}!', vars), 'Hi Maria!');
  t.is(await render('Hi {{ contact.first_name }}!', vars), 'Hi Maria!');
  t.is(await render('Hi {{contact.first_name|there}}!', vars), 'Hi Maria!');
  t.is(await render('Hi {{contact.last_name|there}}!', vars), 'Hi there!', 'empty takes the default');
  t.is(await render('Hi {{ location.name | our team }}!', vars), 'Hi our team!', 'null takes the default, trimmed');
  t.is(await render('Hi {{contact.email}}.', vars), 'Hi .', 'missing: empty');
  t.is(await render('{{nope.nothing}}x{{nope|d}}', vars), 'xd', 'unknown names render empty (or their default)');
  t.is(await render('{{contact.first_name}}{{contact.first_name}}', vars), 'MariaMaria');
  t.is(await render('', vars), '');
  t.is(await render('no placeholders', {}), 'no placeholders');
});

test('a value is never read again as a template, and nothing is evaluated', async (t) => {
  const vars = { 'contact.name': '{{organization.name}}', 'organization.name': 'Acme', 'contact.email': "'); drop table x; --" };
  t.is(await render('{{contact.name}}', vars), '{{organization.name}}');
  t.is(await render('{{contact.email}}', vars), "'); drop table x; --");
  t.is(await render('{{ 1+1 }} {{contact.name.upper()}} {{ }}', vars), '{{ 1+1 }} {{contact.name.upper()}} {{ }}');
  t.is(await render('{{ unclosed and {{organization.name}}', vars), '{{ unclosed and Acme');
  t.is(await render('trailing {{', vars), 'trailing {{');
  t.is(await render('}} {{organization.name}} }}', vars), '}} Acme }}');
});

test('in HTML, values and defaults are escaped; the template\'s own markup is not', async (t) => {
  const vars = { 'contact.name': `<script>alert("x")</script> & 'co'` };
  t.is(await render('<p>{{contact.name}}</p>', vars, true), '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;</p>');
  t.is(await render('<p>{{contact.first_name|<b>"you" & me</b>}}</p>', vars, true), '<p>&lt;b&gt;&quot;you&quot; &amp; me&lt;/b&gt;</p>');
  t.is(await render('<p>{{contact.name}}</p>', vars, false), `<p><script>alert("x")</script> & 'co'</p>`, 'plain text: as it is');
});

test('unknown variables: each once, in order; malformed placeholders are reported as written', async (t) => {
  t.deepEqual(await unknown('Hi {{contact.first_name|there}}, {{ organization.name }} {{unsubscribe_url}}'), []);
  t.deepEqual(await unknown('{{contact.nickname}} {{foo}} {{contact.nickname|x}}'), ['contact.nickname', 'foo']);
  t.deepEqual(await unknown('{{contact.first name}}'), ['{{contact.first name}}']);
  t.deepEqual(await unknown('Hello {{contact.name'), ['{{contact.name']);
  t.deepEqual(await unknown('{{ }} and {{}}'), ['{{ }}', '{{}}']);
  t.deepEqual(await unknown(''), []);
  t.deepEqual(await unknown('a } b { c }}'), []);
});

test('the message variables of a contact: name split into first and last, location and organization', async (t) => {
  const { rows } = await db.owner.query('select app_hidden.sequence_message_variables($1, $2, $3, $4) as v',
    [org, contact, location, 'https://u.example/x']);
  t.deepEqual(rows[0].v, {
    'contact.first_name': 'Maria', 'contact.last_name': 'de la Cruz', 'contact.name': 'Maria de la Cruz',
    'contact.email': 'Maria@Example.com', 'contact.phone': '+15551234567', 'location.name': 'North <1>',
    'location.phone': '+15550000001', 'organization.name': 'Acme & Sons', 'unsubscribe_url': 'https://u.example/x',
  });
  // another organization's contact gives nothing of it
  const cross = await db.owner.query('select app_hidden.sequence_message_variables($1, $2, null, null) as v', [other, contact]);
  t.is(cross.rows[0].v['contact.name'], null);
  t.is(cross.rows[0].v['organization.name'], 'Other');
  // rendered in HTML, the escaped name
  const html = await db.owner.query(`select app_hidden.render_template('Hi {{contact.first_name}} from {{location.name}}',
    app_hidden.sequence_message_variables($1, $2, $3, null), true) as r`, [org, contact, location]);
  t.is(html.rows[0].r, 'Hi Maria from North &lt;1&gt;');
});

test('a request credential cannot read the message variables (owner-only helper)', async (t) => {
  const { rows } = await db.owner.query(`select has_function_privilege('svc_request',
    'app_hidden.sequence_message_variables(uuid, uuid, uuid, text)', 'execute') as r`);
  t.false(rows[0].r);
});

test('conditions: well formed or not', async (t) => {
  for (const c of [
    { field: 'event.replied', op: 'exists' }, { field: 'event.opened', op: 'not_exists' },
    { field: 'display_name', op: 'contains', value: 'mar' }, { field: 'email', op: 'eq', value: 'a@b.c' },
    { field: 'total_calls', op: 'gte', value: 2 }, { field: 'created_at', op: 'lt', value: '2030-01-01' },
    { field: 'stage_id', op: 'exists' }, { field: 'field_values.budget', op: 'gt', value: 100 },
    { field: 'phone_number', op: 'in', value: ['+15551234567', '+15550000000'] },
  ]) t.true(await valid(c), JSON.stringify(c));
  for (const c of [
    null, 'x', [], {}, { field: 'event.replied', op: 'eq', value: 1 }, { field: 'event.replied', op: 'exists', value: true },
    { field: 'event.bounced', op: 'exists' }, { field: 'nope', op: 'eq', value: 1 }, { field: 'email', op: 'like', value: 'x' },
    { field: 'email', op: 'eq' }, { field: 'email', op: 'in', value: 'x' }, { field: 'email', op: 'eq', value: { a: 1 } },
    { field: 'email', op: 'gt', value: 'x' }, { field: 'total_calls', op: 'contains', value: '1' },
    { field: 'total_calls', op: 'eq', value: 'many' }, { field: 'created_at', op: 'eq', value: 'yesterday' },
    { field: 'stage_id', op: 'eq', value: 'not-a-uuid' }, { field: 'email', op: 'eq', value: 'a', extra: 1 },
    { field: 'email', op: 'eq', value: 'x'.repeat(1001) }, { field: 'field_values.a b', op: 'exists' },
    { field: 1, op: 'exists' },
  ]) t.false(await valid(c), JSON.stringify(c));
});

test('conditions hold over the contact as the audience rules compare', async (t) => {
  t.true(await holds({ field: 'display_name', op: 'contains', value: 'CRUZ' }));
  t.true(await holds({ field: 'email', op: 'eq', value: 'maria@example.com' }), 'case-insensitive');
  t.false(await holds({ field: 'email', op: 'neq', value: 'MARIA@example.com' }));
  t.true(await holds({ field: 'phone_number', op: 'in', value: ['+15550000000', '+15551234567'] }));
  t.true(await holds({ field: 'total_calls', op: 'gte', value: 3 }));
  t.false(await holds({ field: 'total_calls', op: 'gt', value: 3 }));
  t.true(await holds({ field: 'created_at', op: 'lt', value: '2999-01-01' }));
  t.true(await holds({ field: 'stage_id', op: 'eq', value: stage }));
  t.true(await holds({ field: 'field_values.budget', op: 'gt', value: 1000 }));
  t.true(await holds({ field: 'field_values.city', op: 'eq', value: 'austin' }));
  t.false(await holds({ field: 'field_values.unknown_key', op: 'exists' }), 'no such custom field: holds for nobody');
  t.true(await holds({ field: 'email', op: 'exists' }));
  t.false(await holds({ field: 'email', op: 'not_exists' }));
  t.false(await holds({ field: 'email', op: 'gt', value: 'x' }), 'not well formed: false');
  t.false(await holds({ field: 'email', op: 'eq', value: 'maria@example.com' }, enrollment, contact, other), 'other organization');
});

test('event conditions look at the enrollment\'s own events only', async (t) => {
  t.false(await holds({ field: 'event.replied', op: 'exists' }));
  t.true(await holds({ field: 'event.replied', op: 'not_exists' }));
  await db.owner.query(`insert into app_public.enrollment_events (organization_id, enrollment_id, type) values ($1, $2, 'clicked')`, [org, enrollment]);
  t.true(await holds({ field: 'event.clicked', op: 'exists' }));
  t.false(await holds({ field: 'event.clicked', op: 'not_exists' }));
  t.false(await holds({ field: 'event.replied', op: 'exists' }));
  // another enrollment of the same contact has no events
  const second = await insertSequence(db, org, { name: 'Second' });
  const e2 = (await db.owner.query(`insert into app_public.enrollments (organization_id, sequence_id, contact_id) values ($1, $2, $3) returning id`,
    [org, second, contact])).rows[0].id;
  t.false(await holds({ field: 'event.clicked', op: 'exists' }, e2));
});

test('rendering is quick: a thousand placeholders in one body', async (t) => {
  const body = '{{contact.first_name|x}} '.repeat(1000);
  const started = Date.now();
  const r = await render(body, { 'contact.first_name': 'A&B' }, true);
  t.is(r, 'A&amp;B '.repeat(1000));
  t.true(Date.now() - started < 2000);
});
