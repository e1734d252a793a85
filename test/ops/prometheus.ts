// A strict parser of the Prometheus text exposition format (version 0.0.4): every line must be
// a HELP or TYPE comment, or a sample `name{label="value",…} value`, each sample under the TYPE
// of its family; anything else throws.

export interface Sample { name: string; labels: Record<string, string>; value: number }
export interface Family { name: string; type: string; help: string; samples: Sample[] }

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/;
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

function value(raw: string, line: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  if (raw === 'NaN') return NaN;
  const n = Number(raw);
  if (raw === '' || Number.isNaN(n)) throw new Error(`bad value in: ${line}`);
  return n;
}

function labels(raw: string, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  let rest = raw;
  while (rest.length) {
    const m = LABEL.exec(rest);
    if (!m) throw new Error(`bad labels in: ${line}`);
    if (m[1]! in out) throw new Error(`label ${m[1]} twice in: ${line}`);
    out[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    rest = rest.slice(m[0].length);
  }
  return out;
}

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  let current: Family | undefined;
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const help = /^# HELP (\S+) (.*)$/.exec(line);
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (help || type) {
      const name = (help ?? type)![1]!;
      if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`);
      let f = families.get(name);
      if (!f) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
      if (help) f.help = help[2]!;
      if (type) {
        if (f.samples.length) throw new Error(`TYPE after samples: ${line}`);
        f.type = type[2]!;
      }
      current = f;
      continue;
    }
    if (line.startsWith('#')) continue; // another comment
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample: ${line}`);
    const name = m[1]!;
    const owner = current && (SUFFIXES[current.type] ?? ['']).some((s) => `${current!.name}${s}` === name) ? current : undefined;
    if (!owner) throw new Error(`sample outside its family: ${line}`);
    owner.samples.push({ name, labels: labels(m[3] ?? '', line), value: value(m[4]!, line) });
  }
  return families;
}

/** The value of the sample of `name` whose labels include `where`, or undefined. */
export function sampleValue(families: Map<string, Family>, name: string, where: Record<string, string> = {}): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}
