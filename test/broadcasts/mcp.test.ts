// The schedule operations as MCP tools: listed for a key that may write sequences, the same
// answers and refusals as REST (structuredContent), through the SDK's client as an agent connects.
import test from 'ava';
import type { TestApp } from '../helpers/app.ts';
import { callTool, toolNames, withMcpClient } from '../helpers/mcp.ts';
import { unchanged } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { drainBroadcasts, insertAudience, insertBroadcast, makeScheduleDue, startBroadcastsApp } from './helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => {
  ({ app, acme } = await startBroadcastsApp());
});
test.after.always(async () => { await app?.close(); });

const TOOLS = ['sequences_set_schedule', 'sequences_get_schedule', 'sequences_start_schedule', 'sequences_pause_schedule', 'sequences_cancel_schedule_run'];

test.serial('the five tools are listed for the organization key; a member key sees none of the writes', async (t) => {
  const names = await toolNames(app, acme.keys.org!);
  for (const name of TOOLS) t.true(names.includes(name), name);
  const member = await toolNames(app, acme.keys.member_key!);
  for (const name of TOOLS) t.false(member.includes(name), name);
});

test.serial('set, start, read the run, cancel: the same answers as REST', async (t) => {
  const org = acme.organization_id;
  const audience = await insertAudience(app.db, org, [acme.ids.ann!, acme.ids.bob!]);
  const id = await insertBroadcast(app.db, org, audience);
  const key = acme.keys.org!;
  const set = await callTool(app, key, 'sequences_set_schedule', {
    sequenceId: id, schedule_kind: 'recurring', rrule: 'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=17;BYMINUTE=0', timezone: 'Europe/Berlin' });
  t.false(set.isError, JSON.stringify(set.body));
  t.like(set.body, { status: 'draft', schedule_kind: 'recurring' });
  const started = await withMcpClient(app, key, (client) => client.callTool({ name: 'sequences_start_schedule', arguments: { sequenceId: id } }));
  t.like(started.structuredContent, { status: 'scheduled' });
  await makeScheduleDue(app.db, id);
  await drainBroadcasts(app.db);
  const read = await callTool(app, key, 'sequences_get_schedule', { sequenceId: id, limit: 5 });
  t.like(read.body, { runs_total: 1, status: 'scheduled' });
  t.like(read.body.runs[0], { status: 'completed', recipients: 2, sent: 2 });
  const finished = await callTool(app, key, 'sequences_cancel_schedule_run', { sequenceId: id, runId: read.body.runs[0].id });
  t.true(finished.isError);
  t.is(finished.body.error, 'run_finished');
  const paused = await callTool(app, key, 'sequences_pause_schedule', { sequenceId: id });
  t.like(paused.body, { status: 'paused', next_fire_at: null });
});

test.serial('a faulty rule is an error result naming its part, and nothing is written', async (t) => {
  const org = acme.organization_id;
  const id = await insertBroadcast(app.db, org, await insertAudience(app.db, org, [acme.ids.ann!], 'Faulty'));
  const res = await unchanged(t, app, org, () => callTool(app, acme.keys.org!, 'sequences_set_schedule',
    { sequenceId: id, schedule_kind: 'recurring', rrule: 'FREQ=DAILY;INTERVAL=500', timezone: 'UTC' }));
  t.true(res.isError);
  t.regex(res.body.message, /rrule\.INTERVAL/);
  const missing = await unchanged(t, app, org, () => callTool(app, acme.keys.org!, 'sequences_get_schedule', { sequenceId: id }));
  t.true(missing.isError);
  t.is(missing.body.error, 'not_found');
});
