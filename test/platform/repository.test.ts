// The repository's own rules, as a newcomer meets them: the commit-msg hook that keeps
// `git log --oneline` readable (CONTRIBUTING.md) is kept in the repository and installed by npm;
// every link of the documentation resolves inside a clone; the README stays short; the list of
// operations in docs/ is the registry's; comments and docs cite no migration by number or part.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { operationsDocFile, renderOperationsDoc } from '../../scripts/operations-doc.ts';

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

/** The Markdown files of the repository a reader meets (node_modules and data folders aside). */
function markdownFiles(dir = ''): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return ['node_modules', '.git', '.data', '.out'].includes(e.name) ? [] : markdownFiles(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[`*_]/g, '').replace(/[^\p{L}\p{N} -]/gu, '').replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

test('every link of every Markdown file resolves inside the repository, anchors included', (t) => {
  const broken: string[] = [];
  for (const file of markdownFiles()) {
    const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`]*`/g, '');
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g), ...text.matchAll(/<(https?:\/\/[^>\s]+)>/g)].map((m) => m[1]!);
    for (const link of links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) {
        // the service's own pages on the machine it runs on are the only addresses a document names
        if (!/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(link)) broken.push(`${file}: ${link} points outside the repository`);
        continue;
      }
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path ? normalize(join(dirname(file), path)) : file;
      if (target.startsWith('..') || !existsSync(join(root, target))) {
        broken.push(`${file}: ${link} (no ${target} in the repository)`);
      } else if (anchor && target.endsWith('.md') && !anchorsOf(target).has(anchor)) {
        broken.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
      }
    }
  }
  t.deepEqual(broken, []);
});

test('README.md stays a front door: at most 350 lines', (t) => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n').length;
  t.true(lines <= 350, `README.md has ${lines} lines; details belong in docs/`);
});

test('docs/operations.md is what the registry generates (npm run docs:operations)', (t) => {
  t.true(readFileSync(operationsDocFile, 'utf8') === renderOperationsDoc(), 'docs/operations.md is out of date: run `npm run docs:operations`');
});

test('nothing in the repository points at files outside it', (t) => {
  const outside = '../' + 'shared/'; // spelt in two so that this file does not name it
  const files = (dir: string): string[] => readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    // committed migrations are history, never edited
    if (e.isDirectory()) return ['node_modules', '.git', '.data', '.out', 'committed'].includes(e.name) ? [] : files(path);
    return /\.(ts|md|sql|json|yml)$/.test(e.name) ? [path] : [];
  });
  const naming = files('').filter((f) => readFileSync(join(root, f), 'utf8').includes(outside));
  t.deepEqual(naming, []);
});

/**
 * A citation of a migration by number or part: "migration 0000NN", "part NNN", "NNN-topic.sql",
 * "NNN-…" or a bare six-digit migration number. Decimals (0.0000NN), thousands (10,000-row),
 * one-word compounds (300-recipient) and a file of migrations/current/ by its path are not.
 */
const migrationCitation = new RegExp([
  String.raw`\bmigrations?,?\s+(?:part\s+)?\d{3,6}\b`,
  String.raw`\bparts?\s+\x60?\d{3}\b`,
  String.raw`(?<![\d,.])\b\d{3}-(?:…|[a-z][a-z0-9_]*-[a-z]|\S*\.sql\b)`,
  String.raw`(?<![\d.,=])\b0000\d{2}\b`,
].join('|'), 'i');

/** The lines of `text` that cite a migration, as file:line: the line. */
function migrationCitations(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) =>
    migrationCitation.test(line.replace(/migrations\/current\/\S*/g, '')) ? [`${file}:${i + 1}: ${line.trim()}`] : []);
}

test('the citation pattern finds migrations by number or part, and nothing else', (t) => {
  const m = 'migration';
  for (const cited of [`${m} 0000` + '15', `${m} 0000` + '16 part 0' + '50', `${m} 7` + '00-…', 'part 5' + '40-x', 'parts `3' + '00-…`',
    '5' + '40-appointments-availability.sql', '(7' + '00-7' + '03-*.sql)', 'before 0000' + '08', `${m}s 1` + '10 and 120', `(${m}s, 5` + '00-ops-metrics)']) {
    t.is(migrationCitations('x', cited).length, 1, cited);
  }
  for (const plain of ['SVC_ACCESS_LOG_SAMPLE=0.000001', 'share 0.000001', 'a 10,000-row insert', 'a 300-recipient broadcast',
    '+1 555-0100', '127.0.0.1:5432', '2026-11-22', '12 committed migrations run', 'the 50 × 500-value definition',
    '`migrations/current/990-…`', 'migration 2.0.0-rc.3', 'status 404', 'a 1,000,000-contact load']) {
    t.deepEqual(migrationCitations('x', plain), [], plain);
  }
});

test('comments and docs name functions and tables, never a migration by number or part', (t) => {
  const files = (dir: string): string[] => !existsSync(join(root, dir)) ? [] : readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return ['node_modules', '.data', '.out'].includes(e.name) ? [] : files(path);
    return /\.(ts|md)$/.test(e.name) ? [path] : [];
  });
  // docs/operations.md is generated from the registry; migrations/ itself is the history
  const checked = [...['src', 'docs', 'bench', 'scripts', 'workers', 'test'].flatMap((d) => files(d)), 'README.md', 'db/README.md']
    .filter((f) => f !== join('docs', 'operations.md'));
  const cited = checked.flatMap((f) => migrationCitations(f, readFileSync(join(root, f), 'utf8')));
  t.deepEqual(cited, [], `name the function or table (and db/schema/<area>.sql) instead:\n${cited.join('\n')}`);
});
