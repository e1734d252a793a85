// The OpenAPI document: generated from the registry, every x-svc-* flag, the schemas' examples,
// nothing unserved.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { startApp, type TestApp } from '../helpers/app.ts';
import { AREAS } from '../../src/areas.ts';
import { inputSchemaOf } from '../../src/mcp/tools.ts';
import { operationsOf } from '../../src/registry/area.ts';
import { openApiDocument } from '../../src/registry/openapi.ts';

const operations = operationsOf(AREAS);

let app: TestApp;
test.before(async () => { app = await startApp(); });
test.after.always(async () => { await app?.close(); });

test('the served document is OpenAPI 3.1, version 1.0.0, and matches svc openapi', async (t) => {
  const res = await app.request('GET', '/api/v1/docs-json');
  t.is(res.status, 200);
  t.is(res.body.openapi, '3.1.0');
  t.is(res.body.info.version, '1.0.0');
  t.deepEqual(res.body, JSON.parse(JSON.stringify(openApiDocument(operations, app.config.baseUrl))));
});

test('me_get carries every extension with the spec\'s values', async (t) => {
  const doc = (await app.request('GET', '/api/v1/docs-json')).body;
  const op = doc.paths['/api/v1/me'].get;
  t.like(op, {
    operationId: 'me_get',
    'x-svc-scope': null,
    'x-svc-confirm': false,
    'x-svc-changes': null,
    'x-svc-idempotent': false,
    'x-member-access': 'open',
    'x-manager-power': null,
  });
  t.truthy(op.responses['200'].content['application/json'].schema.properties.scopes_available);
});

test('every documented operation is routed, and nothing else under /api/v1 is', async (t) => {
  const doc = (await app.request('GET', '/api/v1/docs-json')).body;
  for (const [path, item] of Object.entries<Record<string, { operationId: string }>>(doc.paths)) {
    for (const method of Object.keys(item)) {
      const res = await app.request(method.toUpperCase(), path.replace(/\{\w+\}/g, '00000000-0000-0000-0000-000000000000'));
      t.is(res.status, 401, `${method} ${path} is live and asks for a key`);
    }
  }
  const ids = operations.map((o) => o.operationId);
  t.is(new Set(ids).size, ids.length, 'operationIds are unique');
});

test('the examples of the input schemas are in the document, for parameters and bodies alike', async (t) => {
  const doc = (await app.request('GET', '/api/v1/docs-json')).body;
  let seen = 0;
  for (const op of operations) {
    const documented = doc.paths[op.path][op.method.toLowerCase()];
    const body = documented.requestBody?.content['application/json'].schema.properties ?? {};
    const fields = (inputSchemaOf(op) as { properties?: Record<string, { examples?: unknown[] }> }).properties ?? {};
    for (const [name, schema] of Object.entries(fields)) {
      const parameter = documented.parameters.find((p: { name: string }) => p.name === name);
      t.deepEqual((parameter?.schema ?? body[name]).examples, schema.examples, `${op.operationId} ${name}`);
      if (schema.examples) seen++;
    }
  }
  t.true(seen >= 15, `${seen} fields carry examples`);
  const q = doc.paths['/api/v1/contacts'].get.parameters.find((p: { name: string }) => p.name === 'q');
  t.deepEqual(q.schema.examples, ['ann', 'example.com', '(555) 123']);
});

// test/registry/operations.tsv is the API specification's table of operations, copied: every operation's method, path, scope, member access, manager power and flags, pinned.
test('every operation carries the method, path, scope, member access, manager power and flags of the spec\'s table', async (t) => {
  const doc = (await app.request('GET', '/api/v1/docs-json')).body;
  const [header, ...lines] = readFileSync(new URL('./operations.tsv', import.meta.url), 'utf8').trimEnd().split('\n');
  const columns = header!.split('\t');
  const rows = lines.map((l) => Object.fromEntries(l.split('\t').map((v, i) => [columns[i]!, v])));
  t.is(rows.length, 71);
  const served = new Map<string, { method: string; path: string; op: Record<string, unknown> }>();
  for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) served.set(op.operationId as string, { method: method.toUpperCase(), path, op });
  }
  for (const row of rows) {
    const s = served.get(row.operation_id!);
    if (!s) { t.fail(`${row.operation_id} is not served`); continue; }
    t.deepEqual({
      method: s.method, path: s.path, scope: s.op['x-svc-scope'] ?? '', member_access: s.op['x-member-access'],
      manager_power: s.op['x-manager-power'] ?? '', confirm: s.op['x-svc-confirm'] ? 'confirm' : '',
      changes: ((s.op['x-svc-changes'] as string[] | null) ?? []).join(','), idempotent: s.op['x-svc-idempotent'] ? 'idempotent' : '',
    }, {
      // no scope: `null` in the table, `live credential` for the MCP endpoint itself (any credential)
      method: row.method, path: row.path, scope: ['null', 'live credential'].includes(row.scope!) ? '' : row.scope,
      member_access: row.member_access || null, manager_power: row.manager_power,
      confirm: row.confirm, changes: row.changes === 'none' ? '' : row.changes, idempotent: row.idempotent,
    }, row.operation_id);
  }
  t.deepEqual([...served.keys()].filter((id) => !rows.some((r) => r.operation_id === id)), [], 'nothing served beyond the table');
});
