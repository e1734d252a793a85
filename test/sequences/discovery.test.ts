// Discovery returns exactly what the service accepts (sequences.md): every trigger type with its
// fields, every variable, every condition field and op, every exit type and the limits are taken
// at their word, and a trigger or exit type an area adds later is offered and accepted only once
// its row exists ("plug in by data").
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { rows } from '../helpers/sql.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { automation, sequencesFixture } from './authoring-helpers.ts';
import { withForms } from '../forms/helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  // forms too: a form_submitted trigger names a form of the organization
  ({ app, tenant: acme } = await startWithTenant(withForms(sequencesFixture()) as ReturnType<typeof sequencesFixture>));
});
test.after.always(async () => { await app?.close(); });

const read = async (path: string) => {
  const res = await app.request('GET', `/api/v1/sequences/${path}`, { key: acme.keys.org });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const create = (body: unknown) => app.request('POST', '/api/v1/sequences', { key: acme.keys.org, body });
const activate = (id: string) => app.request('POST', `/api/v1/sequences/${id}/activate`, { key: acme.keys.org });

/** A value that a field spec accepts. */
function sample(spec: { type: string; values?: string[]; pattern?: string }, field: string): unknown {
  if (spec.type === 'enum') return spec.values![0];
  if (spec.type === 'uuid') return field === 'stage_id' ? acme.ids.won : field === 'form_id' ? acme.ids.org_form : acme.ids.north;
  if (spec.type === 'condition') return { field: 'event.replied', op: 'exists' };
  return field === 'event' ? 'assessment_abandoned' : 'sample';
}
function instance(t: { type: string; fields: Record<string, any> }, all: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { type: t.type };
  for (const [k, spec] of Object.entries(t.fields)) if (all || spec.required) out[k] = sample(spec, k);
  return out;
}

test('every trigger type listed is accepted with its required fields, and with all of them; others are refused', async (t) => {
  const { items } = await read('triggers');
  // form_submitted is the forms area's, appointment_booked the appointments area's
  t.deepEqual(items.map((i: { type: string }) => i.type), ['manual', 'event', 'tag_added', 'form_submitted', 'appointment_booked']);
  for (const type of items) {
    for (const all of [false, true]) {
      const res = await create(automation({ trigger: instance(type, all) }));
      t.is(res.status, 201, `${type.type}: ${JSON.stringify(res.body)}`);
      t.is((await activate(res.body.id)).status, 200);
    }
    for (const [k, spec] of Object.entries(type.fields as Record<string, any>)) {
      if (!spec.required) continue;
      const missing = instance(type, true);
      delete missing[k];
      t.is((await create(automation({ trigger: missing }))).status, 400, `${type.type} without ${k}`);
    }
  }
  t.is((await create(automation({ trigger: { type: 'review_left', location_id: acme.ids.north } }))).status, 400);
});

test('every exit-condition type of the vocabulary is accepted; the vocabulary\'s exits and the capabilities\' agree', async (t) => {
  const vocabulary = await read('condition-vocabulary');
  const caps = await read('capabilities');
  t.deepEqual(vocabulary.exit_conditions.map((x: { type: string }) => x.type), caps.exit_condition_types);
  t.deepEqual(caps.exit_condition_types, ['replied', 'tag_added', 'stage_changed', 'condition', 'appointment_booked']);
  const res = await create(automation({ exit_conditions: vocabulary.exit_conditions.map((x: any) => instance(x, true)) }));
  t.is(res.status, 201, JSON.stringify(res.body));
  t.is((await activate(res.body.id)).status, 200);
});

test.serial('a trigger or exit type added by an area\'s row is offered and accepted; removed, neither', async (t) => {
  t.is((await create(automation({ trigger: { type: 'review_left', location_id: acme.ids.north } }))).status, 400);
  t.is((await create(automation({ exit_conditions: [{ type: 'review_left' }] }))).status, 400);
  await rows(app, `insert into app_private.sequence_trigger_types (type, area, description, fields, position)
    values ('review_left', 'reviews', 'The contact left a review.', '{"location_id": {"type": "uuid", "required": true}}', 4)`);
  await rows(app, `insert into app_private.sequence_exit_types (type, area, description, fields, position)
    values ('review_left', 'reviews', 'The contact left a review.', '{"location_id": {"type": "uuid"}}', 6)`);
  try {
    t.true((await read('triggers')).items.some((i: { type: string }) => i.type === 'review_left'));
    t.true((await read('capabilities')).exit_condition_types.includes('review_left'));
    const res = await create(automation({ trigger: { type: 'review_left', location_id: acme.ids.north },
      exit_conditions: [{ type: 'review_left' }, { type: 'review_left', location_id: acme.ids.north }] }));
    t.is(res.status, 201, JSON.stringify(res.body));
    t.is((await create(automation({ trigger: { type: 'review_left' } }))).status, 400);
    t.is((await create(automation({ trigger: { type: 'review_left', location_id: 'nope' } }))).status, 400);
  } finally {
    await rows(app, `delete from app_private.sequence_trigger_types where type = 'review_left'`);
    await rows(app, `delete from app_private.sequence_exit_types where type = 'review_left'`);
  }
  t.false((await read('triggers')).items.some((i: { type: string }) => i.type === 'review_left'));
  t.is((await create(automation({ trigger: { type: 'review_left', location_id: acme.ids.north } }))).status, 400);
});

test('every variable listed may be used, with and without a default, and activates', async (t) => {
  const { items } = await read('variables');
  const names = items.map((v: { name: string }) => v.name);
  for (const n of ['contact.first_name', 'contact.last_name', 'contact.name', 'contact.email', 'contact.phone', 'location.name',
    'organization.name', 'unsubscribe_url']) t.true(names.includes(n), n);
  const body = names.map((n: string, i: number) => (i % 2 ? `{{${n}}}` : `{{ ${n} | fallback }}`)).join(' ');
  const res = await create(automation({ steps: [{ step_key: 'all', type: 'email', subject: `{{${names[0]}}}`, body }] }));
  t.is(res.status, 201);
  const on = await activate(res.body.id);
  t.is(on.status, 200, JSON.stringify(on.body));
  const unknown = await create(automation({ steps: [{ step_key: 'x', type: 'sms', body: '{{contact.nickname}}' }] }));
  const blocked = await activate(unknown.body.id);
  t.is(blocked.status, 400);
  t.like(blocked.body.blockers[0], { code: 'unknown_variable', step_key: 'x' });
});

test('every condition field of the vocabulary with each of its ops is accepted in an edge', async (t) => {
  const v = await read('condition-vocabulary');
  t.deepEqual(v.custom_fields, [{ field: 'field_values.plan', kind: 'text', label: 'Plan' }]);
  const value = (kind: string, op: string) => {
    const one = ({ text: 'gold', number: 3, datetime: '2026-01-05', stage: acme.ids.won } as Record<string, unknown>)[kind] ?? 'x';
    if (op === 'exists' || op === 'not_exists') return undefined;
    return ['in', 'not_in', 'contains_any'].includes(op) ? [one] : one;
  };
  const conditions: unknown[] = [];
  for (const f of [...v.contact_fields, ...v.custom_fields.map((c: any) => ({ ...c, ops: v.contact_fields.find((x: any) => x.kind === 'text').ops })),
    ...v.event_fields.map((e: any) => ({ ...e, kind: 'event' }))]) {
    for (const op of f.ops) conditions.push({ field: f.field, op, ...(value(f.kind, op) === undefined ? {} : { value: value(f.kind, op) }) });
  }
  t.true(conditions.length > 60);
  const steps = [{ step_key: 'a', type: 'wait' }, { step_key: 'b', type: 'wait' }];
  for (let i = 0; i < conditions.length; i += 40) {
    const edges = conditions.slice(i, i + 40).map((condition) => ({ from: 'a', to: 'b', condition }));
    const res = await create({ name: 'Conditions', steps, edges });
    t.is(res.status, 201, JSON.stringify(res.body).slice(0, 300));
  }
  // ops a field does not list are refused
  t.is((await create({ name: 'x', steps, edges: [{ from: 'a', to: 'b', condition: { field: 'event.opened', op: 'eq', value: 1 } }] })).status, 400);
  t.is((await create({ name: 'x', steps, edges: [{ from: 'a', to: 'b', condition: { field: 'stage_id', op: 'gt', value: acme.ids.won } }] })).status, 400);
});

test.serial('the capabilities\' limits are the ones enforced, to the unit', async (t) => {
  const { limits, delay, step_types: types } = await read('capabilities');
  t.deepEqual(types.map((s: { type: string }) => s.type), ['email', 'sms', 'wait']);
  t.deepEqual(delay.units, ['minutes', 'hours', 'days']);
  const waits = (n: number) => Array.from({ length: n }, (_, i) => ({ step_key: `s${i}`, type: 'wait' }));
  t.is((await create({ name: 'Max', steps: waits(limits.steps_per_sequence) })).status, 201);
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create({ name: 'Over', steps: waits(limits.steps_per_sequence + 1) }));
  for (const unit of delay.units as ('minutes' | 'hours' | 'days')[]) {
    t.is((await create({ name: 'Delay', steps: [{ step_key: 'w', type: 'wait', delay: { [unit]: delay.max[unit] } }] })).status, 201, unit);
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
      () => create({ name: 'Delay', steps: [{ step_key: 'w', type: 'wait', delay: { [unit]: delay.max[unit] + 1 } }] }));
  }
  const sms = (n: number) => ({ name: 'SMS', steps: [{ step_key: 's', type: 'sms', body: 'x'.repeat(n) }] });
  t.is((await create(sms(limits.sms_body_max_length))).status, 201);
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create(sms(limits.sms_body_max_length + 1)));
  const email = (subject: number, body: number) => ({ name: 'Mail', steps: [{ step_key: 'e', type: 'email', subject: 's'.repeat(subject), body: 'b'.repeat(body) }] });
  t.is((await create(email(limits.subject_max_length, limits.email_body_max_length))).status, 201);
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create(email(limits.subject_max_length + 1, 1)));
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create(email(1, limits.email_body_max_length + 1)));
  const keyed = (k: string) => ({ name: 'Key', steps: [{ step_key: k, type: 'wait' }] });
  t.is((await create(keyed('A-z_0'.padEnd(50, 'x')))).status, 201);
  t.true(new RegExp(limits.step_key_pattern).test('A-z_0'.padEnd(50, 'x')));
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create(keyed('x'.repeat(51))));
  const edges = (n: number) => ({ name: 'Edges', steps: waits(2), edges: Array.from({ length: n }, () => ({ from: 's0', to: 's1' })) });
  t.is((await create(edges(limits.edges_per_sequence))).status, 201);
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create(edges(limits.edges_per_sequence + 1)));
  const exits = (n: number) => ({ name: 'Exits', exit_conditions: Array.from({ length: n }, () => ({ type: 'replied' })) });
  t.is((await create(exits(limits.exit_conditions_per_sequence))).status, 201);
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => create(exits(limits.exit_conditions_per_sequence + 1)));
  t.deepEqual((await read('capabilities')).activation_blockers.sort(), ['audience_archived', 'audience_missing', 'empty_content',
    'missing_sending_domain', 'missing_sms_number', 'no_send_schedule', 'no_steps', 'trigger_missing', 'unknown_step_key', 'unknown_variable']);
});

test('send schedules: pages of the organization\'s schedules, the default first, with windows', async (t) => {
  const all = await read('send-schedules');
  t.like(all, { total: 2, page: 1, limit: 25 });
  t.like(all.items[0], { id: acme.ids.always, name: 'Any time', timezone: 'UTC', is_default: true });
  t.like(all.items[1], { id: acme.ids.office, timezone: 'America/New_York', is_default: false });
  t.is(all.items[1].windows.length, 5);
  const second = await read('send-schedules?page=2&limit=1');
  t.like(second, { total: 2, page: 2, limit: 1 });
  t.deepEqual(second.items.map((s: { id: string }) => s.id), [acme.ids.office]);
  t.deepEqual((await read('send-schedules?page=3&limit=1')).items, []);
  for (const q of ['limit=101', 'limit=0', 'page=0', 'page=x', 'other=1']) {
    const res = await app.request('GET', `/api/v1/sequences/send-schedules?${q}`, { key: acme.keys.org });
    t.is(res.status, 400, q);
  }
});
