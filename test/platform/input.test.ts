// Input the service used to take leniently and now refuses, over REST and MCP: keys JavaScript
// drops (`__proto__`), query parameters no operation takes, invalid UTF-8, integers JSON cannot
// carry exactly, several Authorization headers, and MCP arguments that are not an object. Each
// refusal writes nothing.
import test from 'ava';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from '../contacts/helpers.ts';
import { callTool, mcpRpc } from '../helpers/mcp.ts';
import { unchanged } from '../helpers/writes.ts';
import { createInternalGraphql, type InternalGraphql } from '../../src/graphql/internal.ts';
import { UNAUTHORIZED_MESSAGE } from '../../src/platform/errors.ts';
import { AREAS } from '../../src/areas.ts';
import { operationsOf } from '../../src/registry/area.ts';
import type { AnyOperation } from '../../src/registry/operation.ts';
import type { Applied } from '../../src/admin/fixture.ts';

const operations = operationsOf(AREAS);

let app: TestApp;
let gql: InternalGraphql;
let acme: Applied;
let proto: Applied;
let audienceId: string;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(contactsFixture(),
    { mount: async (deps) => (gql = await createInternalGraphql(deps)).mount }));
  const withProtoField = contactsFixture('Proto Co');
  withProtoField.custom_fields.push({ key: '__proto__', label: 'Proto', type: 'text' });
  proto = await app.apply(withProtoField);
  const created = await app.request('POST', '/api/v1/audiences', { key: acme.keys.org, body: { name: 'Static', kind: 'static' } });
  audienceId = created.body.id;
});
test.after.always(async () => {
  await gql?.release();
  await app?.close();
});

/** A REST request with the body exactly as given (text or bytes). */
const rest = (method: string, path: string, body?: string | Uint8Array, key = acme.keys.org!) =>
  app.request(method, path, { key, ...(body === undefined ? {} : { rawBody: body }) });

/** An MCP POST with the body exactly as given; answers the HTTP status and the JSON-RPC answer. */
async function mcp(body: string | Uint8Array, key = acme.keys.org!) {
  const res = await mcpRpc(app, body, { authorization: `Bearer ${key}` });
  return { status: res.status, body: (await res.json()) as any };
}

function pathOf(op: AnyOperation): string {
  const values: Record<string, string> = { contactId: acme.ids.ann!, audienceId, tag: 'vip' };
  return op.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(values[k]!));
}

test.serial('custom_fields keys __proto__, constructor and prototype are unknown custom fields: 400 naming the key, over REST and MCP', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const fields = `{"${key}":"x"}`;
      for (const [method, path, body] of [
        ['PATCH', `/api/v1/contacts/${acme.ids.ann}`, `{"custom_fields":${fields}}`],
        ['POST', '/api/v1/contacts', `{"email":"ann@example.com","custom_fields":${fields}}`],
      ] as const) {
        const res = await rest(method, path, body);
        t.is(res.status, 400, `${method} ${path} ${key}`);
        t.like(res.body, { error: 'bad_request', field: `custom_fields.${key}` });
        t.regex(res.body.message, new RegExp(`custom_fields\\.${key}: not an enabled custom field`));
      }
      const tool = await callTool(app, acme.keys.org!, 'contacts_update', `{"contactId":"${acme.ids.ann}","custom_fields":${fields}}`);
      t.true(tool.isError);
      t.like(tool.body, { statusCode: 400, field: `custom_fields.${key}` });
    }
  });
});

test.serial('a custom field an organization named __proto__ takes values like any other', async (t) => {
  const res = await rest('PATCH', `/api/v1/contacts/${proto.ids.ann}`, '{"custom_fields":{"__proto__":"gold"}}', proto.keys.org);
  t.is(res.status, 200);
  t.true(Object.hasOwn(res.body.custom_fields, '__proto__'));
  t.is(res.body.custom_fields.__proto__, 'gold');
  const { rows } = await app.db.owner.query(`select field_values->>'__proto__' as v from app_public.contacts where id = $1`, [proto.ids.ann]);
  t.is(rows[0].v, 'gold');
});

test.serial('a __proto__ key anywhere else is checked like any other key, never dropped', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    const fields = await rest('POST', '/api/v1/contacts', `{"email":"new@example.com","fields":{"__proto__":"${'x'.repeat(1001)}"}}`);
    t.is(fields.status, 400);
    t.regex(fields.body.message, /^body\.fields\.__proto__: /);
    const rule = await rest('POST', '/api/v1/audiences/preview-count', '{"rules":[{"field":"email","op":"exists","__proto__":1}]}');
    t.is(rule.status, 400);
    t.regex(rule.body.message, /__proto__/);
    const top = await rest('POST', '/api/v1/contacts', '{"email":"new@example.com","__proto__":{"name":"x"}}');
    t.is(top.status, 400);
    t.regex(top.body.message, /__proto__/);
    const args = await callTool(app, acme.keys.org!, 'contacts_upsert', '{"email":"new@example.com","__proto__":{"name":"x"}}');
    t.true(args.isError);
    t.regex(args.body.message, /__proto__/);
    const noBody = await callTool(app, acme.keys.org!, 'contacts_get', `{"contactId":"${acme.ids.ann}","__proto__":1}`);
    t.like(noBody.body, { statusCode: 400, message: 'Unknown argument: __proto__' });
  });
});

test.serial('a query parameter the operation does not take is 400 naming it, on every operation', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    for (const op of operations.filter((o) => o.operationId !== 'mcp_request')) {
      for (const [query, name] of [['emial=ann%40example.com', 'emial'], ['q%5B%5D=x', 'q[]'], ['__proto__=1', '__proto__']] as const) {
        const res = await rest(op.method, `${pathOf(op)}?${query}`, op.body ? '{}' : undefined);
        t.is(res.status, 400, `${op.operationId} ?${query}`);
        t.regex(res.body.message ?? '', new RegExp(`^query\\.${name.replace(/[[\]]/g, '\\$&')}: not a parameter of this operation`),
          `${op.operationId} ?${query}`);
      }
    }
    const search = await rest('GET', '/api/v1/contacts?q%5B%5D=x');
    t.is(search.status, 400);
    t.regex(search.body.message, /^query\.q\[\]: not a parameter of this operation \(it takes page, limit, q, email, phone\)/);
  });
});

test.serial('a misspelt filter no longer lists every contact', async (t) => {
  const res = await rest('GET', '/api/v1/contacts?emial=ann%40example.com');
  t.is(res.status, 400);
  t.false('items' in res.body);
});

test.serial('a query parameter sent twice is 400 naming it, on every operation that takes parameters', async (t) => {
  for (const op of operations.filter((o) => o.query)) {
    for (const name of Object.keys(op.query!.shape)) {
      const res = await rest(op.method, `${pathOf(op)}?${name}=1&${name}=1`, op.body ? '{}' : undefined);
      t.is(res.status, 400, `${op.operationId} ${name}`);
      t.is(res.body.message, `query.${name}: sent more than once; send each parameter once`);
    }
  }
  t.is((await rest('GET', '/api/v1/contacts?q=a&q=b')).status, 400);
});

const INVALID_UTF8 = Buffer.concat([Buffer.from('{"name":"Ann '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);

test.serial('invalid UTF-8 in a body is 400 on every operation that takes one, and a parse error over MCP', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    for (const op of operations.filter((o) => o.body && o.operationId !== 'mcp_request')) {
      const res = await rest(op.method, pathOf(op), INVALID_UTF8);
      t.is(res.status, 400, op.operationId);
      t.is(res.body.message, 'The request body is not valid UTF-8', op.operationId);
    }
    const call = Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"contacts_update",`
      + `"arguments":{"contactId":"${acme.ids.ann}","name":"Ann `), Buffer.from([0xc3, 0x28]), Buffer.from('"}}}')]);
    const res = await mcp(call);
    t.is(res.status, 400);
    t.like(res.body, { jsonrpc: '2.0', error: { code: -32700 } });
  });
  const name = await app.db.owner.query(`select name from app_public.contacts where id = $1`, [acme.ids.ann]);
  t.is(name.rows[0].name, 'Ann Lee', 'not stored with U+FFFD');
});

test.serial('an integer beyond ±(2^53 - 1) is 400 naming the field, over REST and MCP; the largest safe one is stored exactly', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    const res = await rest('PATCH', `/api/v1/contacts/${acme.ids.ann}`, '{"custom_fields":{"visits":9007199254740993}}');
    t.is(res.status, 400);
    t.like(res.body, { field: 'body.custom_fields.visits' });
    t.regex(res.body.message, /^body\.custom_fields\.visits: integers must lie within ±9007199254740991/);
    for (const number of ['-9007199254740993', '1e20', '9007199254740992']) {
      t.is((await rest('PATCH', `/api/v1/contacts/${acme.ids.ann}`, `{"custom_fields":{"visits":${number}}}`)).status, 400, number);
    }
    for (const op of operations.filter((o) => o.body && o.operationId !== 'mcp_request')) {
      const any = await rest(op.method, pathOf(op), '{"n":9007199254740993}');
      t.like(any.body, { statusCode: 400, field: 'body.n' }, op.operationId);
    }
    const tool = await callTool(app, acme.keys.org!, 'contacts_update', `{"contactId":"${acme.ids.ann}","custom_fields":{"visits":9007199254740993}}`);
    t.like(tool.body, { statusCode: 400, field: 'body.custom_fields.visits' });
    const page = await callTool(app, acme.keys.org!, 'contacts_search', '{"page":9007199254740993}');
    t.like(page.body, { statusCode: 400, field: 'query.page' });
  });
  const safe = await rest('PATCH', `/api/v1/contacts/${acme.ids.ann}`, '{"custom_fields":{"visits":9007199254740991}}');
  t.is(safe.status, 200);
  const { rows } = await app.db.owner.query(`select field_values->>'visits' as v from app_public.contacts where id = $1`, [acme.ids.ann]);
  t.is(rows[0].v, '9007199254740991');
});

/** A request carrying each of `keys` in an Authorization header of its own. */
function withAuthorizations(method: string, path: string, keys: string[], body?: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: any }>((resolve, reject) => {
    const req = httpRequest(app.url + path, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    // a list goes out as one header line per value
    req.setHeader('authorization', keys.map((k) => `Bearer ${k}`));
    req.on('error', reject);
    req.end(body);
  });
}

test.serial('more than one Authorization header is the 401 of an invalid key: every operation, MCP and internal GraphQL', async (t) => {
  const key = acme.keys.org!;
  const other = acme.keys.org_reader!;
  const mcpInit = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const targets: [string, string, string | undefined][] = [
    ...operations.filter((o) => o.operationId !== 'mcp_request').map((o) => [o.method, pathOf(o), o.body ? '{}' : undefined] as [string, string, string | undefined]),
    ['POST', '/api/v1/mcp', mcpInit],
    ['POST', '/internal/graphql', '{"query":"{ allContacts(first: 1) { totalCount } }"}'],
  ];
  for (const [method, path, body] of [['GET', '/api/v1/me', undefined], ...targets.slice(-2)]) {
    t.is((await withAuthorizations(method!, path!, [key], body)).status, 200, `one header: ${method} ${path}`);
  }
  await unchanged(t, app, acme.organization_id, async () => {
    for (const [method, path, body] of targets) {
      for (const keys of [[key, key], [key, other], [other, key]]) {
        const res = await withAuthorizations(method, path, keys, body);
        t.is(res.status, 401, `${method} ${path}`);
        // the MCP endpoint's challenge also names where its OAuth metadata is (src/oauth/)
        if (path === '/api/v1/mcp') t.regex(String(res.headers['www-authenticate']), /^Bearer resource_metadata="[^"]+", scope="[^"]+", error="invalid_token", error_description="[^"]+"$/);
        else t.is(res.headers['www-authenticate'], 'Bearer');
        t.like(res.body, { statusCode: 401, error: 'unauthorized', message: UNAUTHORIZED_MESSAGE });
      }
    }
  });
});

test.serial('tools/call with arguments that are not an object is JSON-RPC -32602, invalid params', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    for (const args of ['null', '[]', '"x"', '5']) {
      const res = await mcp(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"contacts_upsert","arguments":${args}}}`);
      t.is(res.status, 200, args);
      t.is(res.body.id, 3);
      t.is(res.body.error?.code, -32602, args);
      t.regex(res.body.error?.message ?? '', /arguments/, args);
    }
  });
  const none = await mcp('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"contacts_list_stages"}}');
  t.falsy(none.body.result.isError, 'absent arguments are no arguments');
});

test.serial('a compressed body that does not decompress is 400, over REST and MCP; nothing written', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await app.request('PATCH', `/api/v1/contacts/${acme.ids.ann}`,
        { key: acme.keys.org!, rawBody: 'not compressed', headers: { 'content-encoding': encoding } });
      t.is(res.status, 400, encoding);
      t.is(res.body.message, 'The request body could not be read', encoding);
      const rpc = await mcpRpc(app, 'not compressed', { authorization: `Bearer ${acme.keys.org}`, 'content-encoding': encoding });
      t.is(rpc.status, 400, `MCP ${encoding}`);
    }
  });
});

test.serial('JSON nested 50,000 levels deep is 400 over REST and MCP, not a stack overflow; nothing written', async (t) => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  await unchanged(t, app, acme.organization_id, async () => {
    const res = await rest('POST', '/api/v1/contacts', `{"email":"deep@example.com","fields":{"x":${deep(50_000)}}}`);
    t.is(res.status, 400, JSON.stringify(res.body).slice(0, 200));
    t.regex(res.body.message, /nested more than 64 levels/);
    const rpc = await mcp(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"contacts_search","arguments":{"q":${deep(50_000)}}}}`);
    t.like(JSON.parse(rpc.body.result.content[0].text), { statusCode: 400 });
  });
});

test.serial('a lone UTF-16 surrogate in a string is 400, not stored as U+FFFD (two tags would become one); nothing written', async (t) => {
  await unchanged(t, app, acme.organization_id, async () => {
    for (const [path, body] of [[`/api/v1/contacts/${acme.ids.ann}/notes`, '{"body":"note \\ud800 x"}'],
      [`/api/v1/contacts/${acme.ids.ann}/tags`, '{"name":"t\\udfff"}'], ['/api/v1/audiences', '{"name":"A \\ud800","kind":"static"}']] as const) {
      const res = await rest('POST', path, body);
      t.is(res.status, 400, path);
      t.regex(res.body.message, /surrogate/, path);
    }
    const rpc = await mcp('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"contacts_add_note","arguments":{"contactId":"' + acme.ids.ann + '","body":"mcp \\ud800"}}}');
    t.like(JSON.parse(rpc.body.result.content[0].text), { statusCode: 400 });
  });
});

test.serial('an MCP id beyond 2^53 is -32600, never answered under a neighbouring id', async (t) => {
  const rpc = await mcp('{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"me_get"}}');
  t.is(rpc.status, 400);
  t.like(rpc.body, { error: { code: -32600 }, id: null });
});

test.serial('bytes after a request on its connection: the request gets its own answer, then the connection closes', async (t) => {
  const { port, hostname } = new URL(app.url);
  const before = (await app.db.owner.query(`select name from app_public.contacts where id = $1`, [acme.ids.ann])).rows[0].name as string;
  const body = '{"name":"Pipelined"}';
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`PATCH /api/v1/contacts/${acme.ids.ann} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${acme.keys.org}\r\n`
        + `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}{"junk":1}`);
    });
    let text = '';
    socket.on('data', (d) => { text += d.toString(); });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
  t.regex(answer, /^HTTP\/1\.1 200 /, answer.slice(0, 200));
  t.regex(answer, /"name":"Pipelined"/);
  const name = await app.db.owner.query(`select name from app_public.contacts where id = $1`, [acme.ids.ann]);
  t.is(name.rows[0].name, 'Pipelined');
  await app.request('PATCH', `/api/v1/contacts/${acme.ids.ann}`, { key: acme.keys.org!, body: { name: before } });
});
