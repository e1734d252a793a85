// The OpenAPI document: generated from the registry, every x-svc-* flag, the schemas' examples,
// nothing unserved.
import test from 'ava';
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
