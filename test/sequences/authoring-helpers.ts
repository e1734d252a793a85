// The authoring suites' setup: the acme tenant with a default send schedule, sequence bodies
// that activate as they are, and the authoring part of the malformed-input suite (exported for
// test/sequences/helpers.ts to compose with the other parts').
import { acmeFixture, type Fixture } from '../helpers/fixtures.ts';
import { pick, type MalformedInput, type Pools, type Rand } from '../helpers/fuzz.ts';

export const ALWAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '00:00', end: '24:00' }));

type WithSequences = Fixture & { send_schedules?: unknown[]; sequences?: unknown[] };

/** acme with a default send schedule (ref always) and a New York business-hours one (ref office). */
export function sequencesFixture(name = 'Acme Dental'): WithSequences {
  return {
    ...acmeFixture(name),
    send_schedules: [
      { ref: 'always', name: 'Any time', timezone: 'UTC', is_default: true, windows: ALWAYS },
      { ref: 'office', name: 'Office hours', timezone: 'America/New_York',
        windows: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, start: '09:00', end: '17:00' })) },
    ],
  };
}

/** An automation that activates as it is (the fixture has a sending domain and numbers). */
export const automation = (over: Record<string, unknown> = {}) => ({
  name: 'Follow-up',
  trigger: { type: 'event', event: 'assessment_abandoned', assessmentAudience: 'started' },
  steps: [
    { step_key: 'hello', type: 'email', delay: { minutes: 0 }, subject: 'Hi {{contact.first_name|there}}', body: '<p>Hello from {{organization.name}}</p>' },
    { step_key: 'wait', type: 'wait', delay: { days: 1 } },
    { step_key: 'nudge', type: 'sms', delay: { days: 2 }, body: 'Still there, {{ contact.first_name }}? Reply STOP to opt out.' },
  ],
  edges: [],
  exit_conditions: [{ type: 'replied' }, { type: 'condition', condition: { field: 'event.clicked', op: 'exists' } }],
  ...over,
});

const STEP_KEYS = ['hello', 'wait', 'nudge', 'hello', 'wait', 'nudge', 'x', 'bad key', ''];
// near-valid most of the time (the steps of automation(), whose keys the edges name), broken otherwise
const step = (r: Rand) => pick(r, [
  () => ({ step_key: pick(r, STEP_KEYS), type: 'email', delay: { minutes: pick(r, [0, 5, 5, -1, 1e9]) }, subject: 'Hi {{contact.name}}', body: pick(r, ['B', 'B {{nope}}']) }),
  () => ({ step_key: pick(r, STEP_KEYS), type: 'sms', delay: { days: pick(r, [0, 2, 2, 366]) }, body: pick(r, ['Hi', 'Hi', '', 'x'.repeat(1700)]) }),
  () => ({ step_key: pick(r, STEP_KEYS), type: 'wait', delay: pick(r, [{ hours: 3 }, { hours: 3 }, { weeks: 1 }, { hours: 1, days: 1 }, {}]) }),
  () => ({ step_key: pick(r, STEP_KEYS), type: pick(r, ['email', 'fax']) }),
])();
const steps = (r: Rand) => (r() < 0.5 ? automation().steps : Array.from({ length: Math.floor(r() * 4) }, () => step(r)));
const condition = (r: Rand, pools: Pools) => pick(r, [
  () => ({ field: pick(r, ['event.replied', 'event.opened', 'event.bounced']), op: pick(r, ['exists', 'not_exists', 'eq']) }),
  () => ({ field: pick(r, ['email', 'total_calls', 'field_values.plan', 'field_values.nope', 'created_at']),
    op: pick(r, ['eq', 'gt', 'contains', 'in']), value: pick(r, ['gold', 3, '2026-01-01', ['a', 'b']]) }),
  () => ({ field: 'stage_id', op: 'eq', value: pick(r, [...pools.ids('stage_id').own, ...pools.ids('stage_id').other]) }),
])();

export const authoringMalformedInput: MalformedInput = {
  onceOnly: ['sequences_resume'],
  fixture: (base) => ({ ...base, send_schedules: [{ ref: 'always', name: 'Any time', timezone: 'UTC', windows: ALWAYS }] }) as Fixture,
  async setup(app, tenant) {
    const key = tenant.keys.org;
    const res = await app.request('POST', '/api/v1/sequences', { key, body: { ...automation(), idempotency_key: 'setup' } });
    if (res.status !== 201) throw new Error(`sequence setup: ${res.status} ${JSON.stringify(res.body)}`);
    // paused ones, so that some resumes succeed, and drafts that activate
    for (let i = 0; i < 2; i++) {
      await app.request('POST', '/api/v1/sequences', { key, body: { ...automation({ name: `Draft ${i}` }), idempotency_key: `draft-${i}` } });
    }
    for (let i = 0; i < 3; i++) {
      const s = await app.request('POST', '/api/v1/sequences', { key, body: { ...automation({ name: `Paused ${i}` }), idempotency_key: `paused-${i}` } });
      await app.request('POST', `/api/v1/sequences/${s.body.id}/activate`, { key });
      await app.request('POST', `/api/v1/sequences/${s.body.id}/pause`, { key });
    }
  },
  values: {
    steps,
    edges: (r, pools) => Array.from({ length: Math.floor(r() * 3) }, () => ({
      from: pick(r, STEP_KEYS), to: pick(r, STEP_KEYS), condition: r() < 0.6 ? null : condition(r, pools) })),
    trigger: (r) => pick(r, [{ type: 'manual' }, { type: 'event', event: 'assessment_abandoned', assessmentAudience: 'started' },
      { type: 'event', event: 'signup', assessmentAudience: 'started' }, { type: 'tag_added', tag: 'vip' }, { type: 'form_submitted', form_id: 'x' },
      { type: 'tag_added' }, null]),
    exit_conditions: (r, pools) => Array.from({ length: Math.floor(r() * 3) }, () => pick(r, [
      { type: 'replied' }, { type: 'tag_added', tag: 'done' }, { type: 'stage_changed', stage_id: pick(r, pools.ids('stage_id').own) },
      { type: 'condition', condition: condition(r, pools) }, { type: 'appointment_booked' }])),
    audience: (r, pools) => pick(r, [{ id: pick(r, pools.ids('audience_id').own) }, null, pick(r, pools.ids('contact_id').own)]),
  },
};

/** The sequences parts' malformed inputs as one (test/sequences/helpers.ts exports it as malformedInput). */
export function composeMalformedInput(...parts: MalformedInput[]): MalformedInput {
  return {
    fixture: (base) => parts.reduce((f, p) => p.fixture?.(f) ?? f, base),
    async setup(app, tenant) {
      for (const p of parts) await p.setup?.(app, tenant);
    },
    values: Object.assign({}, ...parts.map((p) => p.values ?? {})),
    onceOnly: parts.flatMap((p) => p.onceOnly ?? []),
    async prepare(app, tenant, operationId) {
      for (const p of parts) await p.prepare?.(app, tenant, operationId);
    },
  };
}
