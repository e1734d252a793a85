// The import graph keeps the shape the README promises: the shared machinery knows no area
// (it reads the Areas it is given), only the composition roots name src/areas.ts, and nothing
// imports in a circle.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AREAS } from '../../src/areas.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : /\.ts$/.test(name) ? [path] : [];
  });
}

/** Every file's relative imports, as paths from the repository root. */
const graph = new Map<string, string[]>();
for (const file of [...sources('src'), ...sources('workers')]) {
  const text = readFileSync(join(root, file), 'utf8');
  const specs = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+)'/gm), ...text.matchAll(/import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)]
    .map((m) => normalize(join(dirname(file), m[1]!)));
  graph.set(file, specs);
}

const SHARED = ['src/platform/', 'src/registry/', 'src/http/', 'src/mcp/', 'src/graphql/', 'src/db/', 'src/auth/',
  'src/delivery/', 'src/admin/', 'src/ops/', 'workers/', 'src/config.ts', 'src/log.ts'];
// src/delivery/ is both: the transports every area sends through, and an area with the providers' webhooks
const areaFolders = AREAS.map((a) => `src/${a.name}/`).filter((f) => !SHARED.includes(f));
const ROOTS = ['src/server.ts', 'src/worker.ts', 'src/cli/', 'src/seed/', 'src/areas.ts'];

const isFolder = (path: string) => statSync(join(root, path), { throwIfNoEntry: false })?.isDirectory() ?? false;

test('every area has its folder in src/ and in test/', (t) => {
  for (const area of AREAS) {
    t.true(isFolder(`src/${area.name}`), `src/${area.name}/`);
    t.true(isFolder(`test/${area.name}`), `test/${area.name}/`);
    t.true(isFolder(`test/${area.name}`) && readdirSync(join(root, 'test', area.name)).some((f) => f.endsWith('.test.ts')),
      `test/${area.name}/ holds a suite`);
  }
  t.is(new Set(AREAS.map((a) => a.name)).size, AREAS.length, 'area names are unique');
});

test('test/ mirrors the code: every suite is in the test/ folder of the src/ folder it tests', (t) => {
  // each folder of src/ (an area or a piece of the shared machinery), and workers/
  const folders = [...readdirSync(join(root, 'src')).filter((f) => isFolder(`src/${f}`)), 'workers'].map((f) => `test/${f}/`);
  const suites = (readdirSync(join(root, 'test'), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
  t.true(suites.length > 0);
  t.deepEqual(suites.filter((f) => !folders.some((d) => f.startsWith(d) && !f.slice(d.length).includes('/'))), []);
});

test('the shared machinery imports no area, and not the list of areas', (t) => {
  const offending: string[] = [];
  for (const [file, imports] of graph) {
    if (!SHARED.some((s) => file.startsWith(s))) continue;
    for (const target of imports) {
      if (areaFolders.some((a) => target.startsWith(a)) || target === 'src/areas.ts') offending.push(`${file} → ${target}`);
    }
  }
  t.deepEqual(offending, []);
});

test('only the composition roots import src/areas.ts', (t) => {
  const importers = [...graph].filter(([, imports]) => imports.includes('src/areas.ts')).map(([file]) => file);
  t.deepEqual(importers.filter((f) => !ROOTS.some((r) => f.startsWith(r))), []);
});

test('every source file is either shared machinery, a composition root or part of an area', (t) => {
  const unplaced = [...graph.keys()].filter((f) => ![...SHARED, ...ROOTS, ...areaFolders].some((p) => f.startsWith(p)));
  t.deepEqual(unplaced, []);
});

test('no import cycle', (t) => {
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative('.', f)).join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  t.deepEqual(cycles, []);
});

test('the database layer has two ways in for a request: idempotency uses only runStatement and runTransaction', (t) => {
  const text = readFileSync(join(root, 'src/platform/idempotency.ts'), 'utf8');
  const imports = [...text.matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/gm)]
    .filter((m) => m[3]!.startsWith('.'))
    .map((m) => ({
      from: normalize(join('src/platform', m[3]!)),
      names: m[2]!.split(',').map((n) => n.trim()).filter(Boolean).map((n) => (m[1] ? `type ${n}` : n)),
    }));
  t.deepEqual(imports.map((i) => i.from).sort(), ['src/db/request.ts', 'src/db/sql.ts']);
  const values = imports.flatMap((i) => i.names).filter((n) => !n.startsWith('type '));
  t.deepEqual(values.sort(), ['runStatement', 'runTransaction']);
  // the transaction's internals stay inside the database layer
  const request = readFileSync(join(root, 'src/db/request.ts'), 'utf8');
  for (const internal of ['checkout', 'releaseClient', 'transactionOn', 'statementOn', 'publicStatementOn']) {
    t.notRegex(request, new RegExp(`^export (?:async )?function ${internal}\\b`, 'm'), internal);
  }
});

// Who may do what is decided by row-level security and the SQL functions
// (app_hidden.requirement_refusal_for and the predicates beside each table), never in
// TypeScript: code may hand an operation's requirements to SQL and show a credential's claims,
// but not compare them.
const PERMISSION_IN_TYPESCRIPT = [
  /\b(memberAccess|managerPower|member_access|manager_power)\s*(===|!==|==|!=)/,
  /\bclaims\??\.(role|key_role|powers|scopes|records_level|location_ids|sms_enabled)\s*(===|!==|==|!=|\.includes|\.some|\.every)/,
  /\.(powers|scopes)\s*\.\s*(includes|some|every)\(\s*(op|operation|requirement|req|required)\b/,
];
// lines that match a pattern above but show a value instead of deciding with it
const SHOWS_ONLY: Record<string, RegExp> = {
  // /me reports a MEMBER key's powers as none, as the spec's example does
  'src/me/me_get.ts': /powers: claims\.key_role === 'MEMBER' \? \[\] : claims\.powers/,
};

test('TypeScript decides no permission: requirements and claims are handed to SQL, never compared', (t) => {
  const found: string[] = [];
  for (const file of graph.keys()) {
    if (file.startsWith('src/registry/')) continue; // where requirements are declared
    readFileSync(join(root, file), 'utf8').split('\n').forEach((line, i) => {
      if (PERMISSION_IN_TYPESCRIPT.some((p) => p.test(line)) && !SHOWS_ONLY[file]?.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  t.deepEqual(found, []);
});
