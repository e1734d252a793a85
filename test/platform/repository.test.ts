// The repository's own rules, as a newcomer meets them: the commit-msg hook that keeps
// `git log --oneline` readable (CONTRIBUTING.md) is kept in the repository and installed by npm.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const hook = join(root, '.githooks', 'commit-msg');

function commitMsg(message: string): { status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-msg-'));
  try {
    writeFileSync(join(dir, 'COMMIT_EDITMSG'), message);
    const r = spawnSync(hook, [join(dir, 'COMMIT_EDITMSG')], { encoding: 'utf8' });
    return { status: r.status, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the commit-msg hook takes a subject of up to 72 characters, a blank line and a body', (t) => {
  t.is(commitMsg(`${'x'.repeat(72)}\n\nWhy it changed.\n`).status, 0);
  t.is(commitMsg('Contacts: one subject line only\n').status, 0);
  // git's own comment lines are not the message
  t.is(commitMsg('# Please enter the commit message\nAppointments: a short subject\n\nbody\n').status, 0);
  // characters, not bytes
  t.is(commitMsg(`${'é'.repeat(72)}\n`).status, 0);
});

test('the commit-msg hook refuses a subject over 72 characters, or a body with no blank line before it', (t) => {
  const long = commitMsg(`${'x'.repeat(73)}\n\nbody\n`);
  t.is(long.status, 1);
  t.regex(long.stderr, /the subject is 73 characters; at most 72/);
  const glued = commitMsg('Subject\nbody on the second line\n');
  t.is(glued.status, 1);
  t.regex(glued.stderr, /the second line must be blank/);
});

test('npm installs the hook: the prepare script points git at .githooks', (t) => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  t.regex(pkg.scripts.prepare ?? '', /git config core\.hooksPath \.githooks/);
});
