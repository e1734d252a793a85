// The official conformance package's authorization-server scenarios
// (`conformance authorization`, in the 0.2.0 prereleases of @modelcontextprotocol/conformance;
// pinned at 0.2.0-alpha.12, as `latest`, 0.1.16, has none):
// `authorization-server-metadata-endpoint` reads our RFC 8414 document, and
// `authorization-code-grant` prints an authorization URL, waits on its own callback server for the
// person's answer, then exchanges the code with PKCE and the resource. The person is played by a
// signed-in dashboard session that approves the consent form and follows the redirect.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestApp } from '../helpers/app.ts';
import { as, decide, freePort, openAuthorization, registerClient, startOAuthApp } from './helpers.ts';

const CLI = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

let app: TestApp;
test.before(async () => { ({ app } = await startOAuthApp()); });
test.after.always(async () => { await app?.close(); });

interface Check { id: string; name: string; status: string; errorMessage?: string }

test('the conformance package\'s authorization-server scenarios pass', async (t) => {
  const port = await freePort();
  const clientId = await registerClient(app, { client_name: 'Conformance suite', redirect_uris: [`http://127.0.0.1:${port}/callback`] });
  const out = mkdtempSync(join(tmpdir(), 'svc-conformance-'));
  t.teardown(() => rmSync(out, { recursive: true, force: true }));
  const child = spawn(process.execPath, [CLI, 'authorization', '--url', app.url, '--client-id', clientId,
    '--resource', `${app.url}/api/v1/mcp`, '--port', String(port), '--output-dir', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

  // the person opens the URL the suite prints, approves, and the browser follows the redirect to the suite's callback
  const authorizationUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      const m = /^(http\S+\/oauth\/authorize\?\S+)$/m.exec(stdout);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`the suite ended before printing an authorization URL:\n${stdout}\n${stderr}`)));
  });
  const browser = await as(app, 'olive@acme.example');
  const consent = await openAuthorization(authorizationUrl, browser);
  t.is(consent.status, 200, consent.html.slice(0, 300));
  const back = await decide(browser, consent, 'approve');
  t.is(back.origin, `http://127.0.0.1:${port}`);
  t.is((await fetch(back)).status, 200);

  const code = await exited;
  const checks: Check[] = readdirSync(out, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('checks.json'))
    .flatMap((f) => JSON.parse(readFileSync(join(out, f), 'utf8')) as Check[]);
  t.log(checks.map((c) => `${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`).join('\n'));
  t.true(checks.some((c) => c.id === 'authorization-server-metadata'), 'the metadata scenario ran');
  t.true(checks.some((c) => c.id === 'authorization-code-grant'), 'the code grant scenario ran');
  t.deepEqual(checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO'), [], `${stdout}\n${stderr}`);
  t.is(code, 0, `${stdout}\n${stderr}`);
});
