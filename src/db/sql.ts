// A tagged template for SQL. Interpolated values never become SQL text by concatenation:
// the text keeps $1, $2, … and values travel either as bind parameters or, on the
// one-round-trip request path, as arguments of EXECUTE rendered through the driver's literal
// escaping (literal()). Casts belong in the SQL text (`${id}::uuid`) so a statement can be
// prepared; pass lists as one array value (`= any(${ids}::uuid[])`), never as a varying
// number of placeholders, so one operation keeps one statement text.
import { escapeLiteral } from 'pg';

const SQL = Symbol('sql');
export interface Sql {
  readonly [SQL]: true;
  readonly strings: readonly string[];
  readonly values: readonly unknown[];
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  // Nested fragments are flattened so their values keep their own positions.
  const outStrings: string[] = [strings[0]!];
  const outValues: unknown[] = [];
  values.forEach((value, i) => {
    if (isSql(value)) {
      outStrings[outStrings.length - 1] += value.strings[0]!;
      for (let j = 0; j < value.values.length; j++) {
        outValues.push(value.values[j]);
        outStrings.push(value.strings[j + 1]!);
      }
      outStrings[outStrings.length - 1] += strings[i + 1]!;
    } else {
      outValues.push(value);
      outStrings.push(strings[i + 1]!);
    }
  });
  return { [SQL]: true, strings: outStrings, values: outValues };
}

export function isSql(value: unknown): value is Sql {
  return typeof value === 'object' && value !== null && SQL in value;
}

/** Joins fragments with a separator (itself SQL text, never input). */
export function join(fragments: readonly Sql[], separator: string): Sql {
  if (fragments.length === 0) return sql``;
  const parts: unknown[] = [];
  const strings: string[] = [''];
  fragments.forEach((f, i) => {
    parts.push(f);
    strings.push(i === fragments.length - 1 ? '' : separator);
  });
  return sql(Object.assign(strings, { raw: strings }) as unknown as TemplateStringsArray, ...parts);
}

/** The parameterized form, for the driver's extended protocol. */
export function toQuery(q: Sql): { text: string; values: unknown[] } {
  let text = q.strings[0]!;
  for (let i = 0; i < q.values.length; i++) text += `$${i + 1}${q.strings[i + 1]}`;
  return { text, values: q.values.map(toParam) };
}

function toParam(value: unknown): unknown {
  if (Array.isArray(value)) return arrayText(value);
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    return JSON.stringify(value);
  }
  return value;
}

/** A JS array as PostgreSQL array text ('{"a","b",NULL}'), for `${ids}::uuid[]`. */
function arrayText(values: readonly unknown[]): string {
  return `{${values.map((v) => {
    if (v === null || v === undefined) return 'NULL';
    if (Array.isArray(v)) return arrayText(v);
    const text = typeof v === 'string' ? v : String(v);
    return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  }).join(',')}}`;
}

export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('non-finite number in SQL');
    return `(${String(value)})`;
  }
  if (typeof value === 'bigint') return `(${value.toString()})`;
  if (Buffer.isBuffer(value)) return `'\\x${value.toString('hex')}'`;
  if (value instanceof Date) return escapeLiteral(value.toISOString());
  if (typeof value === 'string') return escapeLiteral(noNul(value));
  if (Array.isArray(value)) return escapeLiteral(noNul(arrayText(value)));
  return escapeLiteral(noNul(JSON.stringify(value)));
}

// A NUL would end the query string early; callers refuse such input before it gets here.
function noNul(text: string): string {
  if (text.includes('\u0000')) throw new TypeError('NUL character in SQL literal');
  return text;
}
