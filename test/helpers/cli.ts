// Runs `svc` as a user would, against a test database.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

export interface CliResult { code: number; stdout: string; stderr: string }

export function svc(args: string[], opts: { databaseUrl?: string; stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, ...(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : {}), ...opts.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(opts.stdin ?? '');
  });
}

/**
 * `svc serve --port 0` as a long-running child: `ready` once it logs where it serves (its output
 * so far, the demo keys among it), `exited` with its exit code, `output()` everything it wrote.
 * With `databaseUrl` undefined the server starts the embedded PostgreSQL (set SVC_DATA_DIR and
 * SVC_EMBEDDED_PORT in `env`). `args` go after `serve --port 0` (`--no-worker`).
 */
export function startServe(databaseUrl: string | undefined, env: Record<string, string> = {}, args: string[] = []) {
  const childEnv: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'info', NODE_ENV: 'production', ...env };
  if (databaseUrl === undefined) delete childEnv.DATABASE_URL;
  else childEnv.DATABASE_URL = databaseUrl;
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', ...args], { env: childEnv });
  let stdout = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stdout += d; });
  const ready = new Promise<{ url: string; output: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stdout}`)), 60_000);
    child.stdout.on('data', () => {
      const m = /"url":"(http:\/\/[^"]+)".*"msg":"serving"/.exec(stdout);
      if (m) { clearTimeout(timer); resolve({ url: m[1]!, output: stdout }); }
    });
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, ready, exited, output: () => stdout };
}
