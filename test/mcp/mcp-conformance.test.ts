// The official MCP conformance package (@modelcontextprotocol/conformance) run against this
// server: its server scenarios for every protocol revision it knows, 2025-03-26 to 2026-07-28
// (the stateless one included), one run each. The
// scenarios connect without credentials, so a local proxy adds an organization key to each
// request and passes everything else through; a Host or Origin naming the proxy's own address is
// rewritten to the server's (the server accepts its own port only), any other is passed as sent,
// so the DNS-rebinding scenario's foreign Host still reaches the server's check.
// mcp-conformance.baseline.yml (the 2025 revisions) and mcp-conformance.baseline-2026-07-28.yml
// list the scenarios expected to fail, each with its reason.
import test from 'ava';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { acmeFixture } from '../helpers/fixtures.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
let proxy: http.Server;
let proxyUrl: string;
let own = 0;
test.before(async () => {
  ({ app, tenant: acme } = await startWithTenant(acmeFixture()));
  const target = new URL(app.url);
  proxy = http.createServer((req, res) => {
    const ours = (value: string | undefined) => value?.replace(`localhost:${own}`, `localhost:${target.port}`);
    const headers = { ...req.headers, host: ours(req.headers.host), ...(req.headers.origin ? { origin: ours(req.headers.origin) } : {}),
      authorization: `Bearer ${acme.keys.org}` };
    const upstream = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  own = (proxy.address() as { port: number }).port;
  proxyUrl = `http://localhost:${own}/api/v1/mcp`;
});
test.after.always(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await app?.close();
});

const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');
const baselineOf = (revision: string) => fileURLToPath(new URL(revision === '2026-07-28'
  ? './mcp-conformance.baseline-2026-07-28.yml' : './mcp-conformance.baseline.yml', import.meta.url));

function conformance(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

// the revisions the installed package knows (its --spec-version values)
const REVISIONS = ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];

for (const revision of REVISIONS) test.serial(`the conformance package's server scenarios for ${revision} pass, but for the baseline's`, async (t) => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'));
  try {
    const { code, output } = await conformance(['server', '--url', proxyUrl, '--spec-version', revision,
      '--expected-failures', baselineOf(revision), '-o', out]);
    t.log(output.split('\n').filter((l) => /passed|failed|FAIL|✓|✗|Expected|stale|Unexpected/i.test(l)).join('\n'));
    t.is(code, 0, output.slice(-4000));
    t.true(readdirSync(out).length > 0, 'results were written');
  } finally {
    if (!process.env.KEEP_CONFORMANCE) rmSync(out, { recursive: true, force: true });
  }
});
