// The audiences' part of the malformed-input suite: a static and a dynamic audience in each
// tenant, rules over the fixture's custom fields and stages, cursors of its contacts.
import { RULE_OPS, encodeCursor } from '../../src/audiences/schemas.ts';
import { CUSTOM_FIELDS } from '../contacts/helpers.ts';
import { pick, type MalformedInput, type Pools, type Rand } from '../helpers/fuzz.ts';

/** Rule fields of the fixture: its custom fields (one disabled), one it lacks, and the stage. */
const FIELDS = [...CUSTOM_FIELDS.map((f) => `field_values.${f.key}`), 'field_values.plan', 'field_values.nope', 'stage_id', 'total_calls'];
const VALUES = ['gold', 'example', 3, 12.5, true, '2026-01-05', '2026-01-05T10:00:00Z', '1990-02-28', 'Delta'];
const LIST_OPS: readonly string[] = ['in', 'not_in', 'contains_any'];

/** A rule of the fixture's fields with a value of the op's shape: what the compiler resolves, or refuses by meaning. */
function rule(r: Rand, pools: Pools) {
  const field = pick(r, FIELDS);
  const op = pick(r, RULE_OPS);
  const value = () => (field === 'stage_id' ? pick(r, [...pools.ids(field).own, ...pools.ids(field).other]) : pick(r, VALUES));
  if (op === 'exists' || op === 'not_exists') return { field, op };
  return { field, op, value: LIST_OPS.includes(op) ? Array.from({ length: 1 + Math.floor(r() * 3) }, value) : value() };
}

// Well-formed rules over the evaluation bound: 600 contains_any values in all (at most 500).
const costlyRules = () => [0, 1].map((i) => ({
  field: 'display_name', op: 'contains_any', value: Array.from({ length: 300 }, (_, j) => `c${i}.${j}`) }));
const rules = (r: Rand, pools: Pools) => (r() < 0.1 ? costlyRules() : Array.from({ length: Math.floor(r() * 4) }, () => rule(r, pools)));

export const malformedInput: MalformedInput = {
  async setup(app, tenant) {
    for (const [i, body] of [
      { name: 'Static', kind: 'static' },
      { name: 'Dynamic', kind: 'dynamic', definition: { match: 'all', rules: [{ field: 'email', op: 'contains', value: 'example' }] } },
    ].entries()) {
      const res = await app.request('POST', '/api/v1/audiences', { key: tenant.keys.org, body: { ...body, idempotency_key: `setup-${i}` } });
      if (res.status !== 201) throw new Error(`audience setup: ${res.status} ${JSON.stringify(res.body)}`);
    }
  },
  values: {
    rules,
    definition: (r, pools) => ({ match: pick(r, ['all', 'any']), rules: rules(r, pools) }),
    cursor: (r, pools) => encodeCursor(pick(r, pools.ids('contact_id').own)),
  },
};
