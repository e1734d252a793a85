// `svc` processes for crash tests: started as children (`svc worker` unless told otherwise), their
// output kept, killed outright (SIGKILL) or stopped (SIGTERM); whatever is left is killed by
// killAll. And `until`, the poll every such test waits with.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const svcBin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

export interface SvcProcess {
  child: ChildProcess;
  /** The signal that ended it (null for an exit of its own). */
  exited: Promise<NodeJS.Signals | null>;
  output(): string;
  /** SIGKILL, resolved once it is gone. */
  kill(): Promise<NodeJS.Signals | null>;
  /** SIGTERM (a clean stop), resolved once it is gone. */
  stop(): Promise<NodeJS.Signals | null>;
}

/** Starts and tracks `svc` processes with `env` over the test's own; `killAll` ends what is left. */
export function svcProcesses(env: NodeJS.ProcessEnv) {
  const children: ChildProcess[] = [];
  const start = (more: NodeJS.ProcessEnv = {}, args: string[] = ['worker']): SvcProcess => {
    const child = spawn(process.execPath, [svcBin, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env, ...more },
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d) => { output += d; });
    child.stderr!.on('data', (d) => { output += d; });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const end = (signal: NodeJS.Signals) => { child.kill(signal); return exited; };
    return { child, exited, output: () => output, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
  };
  const killAll = () => { for (const child of children) child.kill('SIGKILL'); };
  return { start, killAll };
}

/** Polls `ok` every `stepMs` until it holds; throws after `ms`. Answers the milliseconds waited. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 60_000, stepMs = 5): Promise<number> {
  const begin = Date.now();
  while (!(await ok())) {
    if (Date.now() - begin > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return Date.now() - begin;
}
