// $group in SQL, for the common shapes whose MongoDB meaning SQL reproduces exactly: grouping by a
// top-level text field (or by a constant), with $sum/$avg over numbers and counts. Groups come out in the
// order their first document appears, as mingo emits them. Anything else stays in mingo.
import { READING_FIELDS } from './reading-fields.js';
import { isFiniteNumber, isPlainObject, sqlString } from './sql-literals.js';

export interface GroupSql {
  /** One JSON object per group. */
  select: string;
  groupBy: string | null;
}

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NUMERIC = `('BIGINT', 'UBIGINT', 'DOUBLE')`;

/** The numeric value at '$data.a.b' (NULL unless a JSON number: MongoDB's $sum/$avg ignore the rest). */
function numericPath(expr: unknown): string | null {
  if (typeof expr !== 'string' || !expr.startsWith('$') || expr.startsWith('$$')) return null;
  const [root, ...segments] = expr.slice(1).split('.');
  const field = READING_FIELDS[root];
  if (!field || field.kind !== 'json' || segments.length === 0 || !segments.every((s) => SEGMENT.test(s))) return null;
  const path = sqlString(`$.${segments.join('.')}`);
  return `CASE WHEN json_type(${field.column}, ${path}) IN ${NUMERIC} THEN TRY_CAST(json_extract_string(${field.column}, ${path}) AS DOUBLE) END`;
}

function accumulator(spec: unknown): string | null {
  if (!isPlainObject(spec) || Object.keys(spec).length !== 1) return null;
  const [op, arg] = Object.entries(spec)[0];
  if (op === '$count' && isPlainObject(arg) && Object.keys(arg).length === 0) return 'count(*)';
  if (op === '$sum' && isFiniteNumber(arg) && Number.isInteger(arg)) return `count(*) * ${arg}`;
  const value = numericPath(arg);
  if (!value) return null;
  if (op === '$sum') return `coalesce(sum(${value}), 0)`;
  if (op === '$avg') return `avg(${value})`;
  return null;
}

export function groupSql(spec: unknown): GroupSql | null {
  if (!isPlainObject(spec) || !('_id' in spec)) return null;
  const id = spec._id;
  let key: string;
  let groupBy: string | null = null;
  if (id === null) key = 'NULL';
  else if (typeof id === 'string' && id.startsWith('$') && !id.startsWith('$$') && READING_FIELDS[id.slice(1)]?.kind === 'string') {
    key = READING_FIELDS[id.slice(1)].column;
    groupBy = key;
  } else return null;
  const pairs = [`'_id', ${key}`];
  for (const [name, acc] of Object.entries(spec)) {
    if (name === '_id') continue;
    if (name.includes('.') || name.startsWith('$')) return null;
    const sql = accumulator(acc);
    if (!sql) return null;
    pairs.push(`${sqlString(name)}, ${sql}`);
  }
  return { select: `json_object(${pairs.join(', ')})::VARCHAR AS doc`, groupBy };
}
