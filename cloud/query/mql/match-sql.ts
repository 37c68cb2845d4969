// Translates a $match filter into DuckDB SQL. A translation is either exact (the SQL keeps exactly the
// documents MongoDB would keep) or a prefilter (it keeps a superset; the $match must still run after it).
// Every SQL predicate produced here is two-valued (never NULL), so NOT and OR keep MongoDB's meaning.
import { READING_FIELDS } from './reading-fields.js';
import { isFiniteNumber, isPlainObject, isValidDate, sqlNumber, sqlString, sqlStringList, sqlTimestamp } from './sql-literals.js';

export interface Predicate {
  sql: string;
  exact: boolean;
}

const TRUE: Predicate = { sql: 'true', exact: true };
const and = (parts: Predicate[]): Predicate =>
  parts.length === 0 ? TRUE : { sql: parts.map((p) => `(${p.sql})`).join(' AND '), exact: parts.every((p) => p.exact) };
const nz = (sql: string) => `coalesce(${sql}, false)`;
const MS = 'INTERVAL 1 millisecond';

/** The whole filter as one predicate, or null when nothing of it can be expressed in SQL. */
export function filterPredicate(filter: Record<string, unknown>): Predicate | null {
  const { pushed, residual } = splitFilter(filter);
  if (pushed.length === 0) return null;
  const p = and(pushed);
  return { sql: p.sql, exact: p.exact && Object.keys(residual).length === 0 };
}

/** Splits a filter's top-level conjuncts into SQL predicates and the part that must stay in $match. */
export function splitFilter(filter: Record<string, unknown>): { pushed: Predicate[]; residual: Record<string, unknown> } {
  const pushed: Predicate[] = [];
  const residual: Record<string, unknown> = {};
  for (const [key, cond] of Object.entries(filter)) {
    const p = conjunct(key, cond);
    if (p) pushed.push(p);
    if (!p || !p.exact) residual[key] = cond;
  }
  return { pushed, residual };
}

function conjunct(key: string, cond: unknown): Predicate | null {
  if (key === '$and' || key === '$or' || key === '$nor') {
    if (!Array.isArray(cond) || cond.length === 0 || !cond.every(isPlainObject)) return null;
    const children = cond.map((c) => filterPredicate(c as Record<string, unknown>));
    if (key === '$and') {
      const known = children.filter((c): c is Predicate => c !== null);
      if (known.length === 0) return null;
      const p = and(known);
      return { sql: p.sql, exact: p.exact && known.length === children.length };
    }
    if (children.some((c) => c === null)) return null;
    const sql = (children as Predicate[]).map((c) => `(${c.sql})`).join(' OR ');
    const exact = (children as Predicate[]).every((c) => c.exact);
    if (key === '$or') return { sql, exact };
    return exact ? { sql: `NOT (${sql})`, exact: true } : null;
  }
  if (key.startsWith('$')) return null;
  return fieldPredicate(key, cond);
}

function fieldPredicate(path: string, cond: unknown): Predicate | null {
  const operators =
    isPlainObject(cond) && Object.keys(cond).length > 0 && Object.keys(cond).every((k) => k.startsWith('$'))
      ? Object.entries(cond)
      : [['$eq', cond] as [string, unknown]];
  if (operators.some(([op]) => op === '$options')) return null; // belongs to $regex
  const dot = path.indexOf('.');
  const field = READING_FIELDS[dot < 0 ? path : path.slice(0, dot)];
  if (!field) return null;
  const parts: Predicate[] = [];
  let complete = true;
  for (const [op, value] of operators) {
    const p = dot < 0 ? topLevel(field.kind, field.column, op, value) : jsonPrefilter(field.kind, field.column, path.slice(dot + 1), op, value);
    if (p) parts.push(p);
    else complete = false;
  }
  if (parts.length === 0) return null;
  const p = and(parts);
  return { sql: p.sql, exact: p.exact && complete };
}

function topLevel(kind: string, col: string, op: string, value: unknown): Predicate | null {
  const exact = (sql: string): Predicate => ({ sql, exact: true });
  if (op === '$exists' && typeof value === 'boolean') return exact(value ? 'true' : 'false');
  if (value === null && kind !== 'tags' && kind !== 'json') {
    if (op === '$eq') return exact(`${col} IS NULL`);
    if (op === '$ne') return exact(`${col} IS NOT NULL`);
    return null;
  }
  if (op === '$in' || op === '$nin') {
    if (!Array.isArray(value) || value.length === 0) return null;
    const members = value.map((v) => topLevel(kind, col, '$eq', v));
    if (members.some((m) => m === null)) return null;
    const any = nz((members as Predicate[]).map((m) => `(${m.sql})`).join(' OR '));
    return exact(op === '$in' ? any : `NOT ${any}`);
  }
  if (kind === 'tags') {
    if (op === '$all' && Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) {
      return exact(nz(`list_has_all(${col}, ${sqlStringList(value)})`));
    }
    if (op === '$size' && Number.isInteger(value) && (value as number) >= 0) return exact(nz(`len(${col}) = ${value}`));
    if (typeof value !== 'string') return null;
    if (op === '$eq') return exact(nz(`list_contains(${col}, ${sqlString(value)})`));
    if (op === '$ne') return exact(`NOT ${nz(`list_contains(${col}, ${sqlString(value)})`)}`);
    return null;
  }
  const literal = kind === 'string' && typeof value === 'string' ? sqlString(value) : kind === 'id' && isFiniteNumber(value) ? sqlNumber(value) : null;
  if (literal !== null) {
    const cmp = { $eq: '=', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
    if (cmp) return exact(nz(`${col} ${cmp} ${literal}`));
    if (op === '$ne') return exact(`${col} IS DISTINCT FROM ${literal}`);
    return null;
  }
  if (kind === 'date' && isValidDate(value)) {
    // Documents carry millisecond Dates, the column microseconds: compare against whole milliseconds.
    const d = sqlTimestamp(value);
    const sameMs = `${col} >= ${d} AND ${col} < ${d} + ${MS}`;
    const sql = {
      $eq: nz(sameMs),
      $ne: `NOT ${nz(sameMs)}`,
      $gt: nz(`${col} >= ${d} + ${MS}`),
      $gte: nz(`${col} >= ${d}`),
      $lt: nz(`${col} < ${d}`),
      $lte: nz(`${col} < ${d} + ${MS}`),
    }[op];
    return sql ? exact(sql) : null;
  }
  return null;
}

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A superset test for a path inside a JSON column. MongoDB walks into arrays anywhere along a path; rather
 * than model that, any array on the way lets the row through and the real $match decides.
 */
function jsonPrefilter(kind: string, col: string, subPath: string, op: string, value: unknown): Predicate | null {
  if (kind !== 'json') return null;
  const segments = subPath.split('.');
  if (!segments.every((s) => SEGMENT.test(s))) return null;
  const jsonPath = (n: number) => sqlString(`$.${segments.slice(0, n).join('.')}`);
  const anyArray = segments.map((_, i) => nz(`json_type(${col}, ${jsonPath(i + 1)}) = 'ARRAY'`)).join(' OR ');
  const leaf = jsonPath(segments.length);
  const test = (v: unknown, cmp: string): string | null => {
    if (isFiniteNumber(v))
      return nz(
        `json_type(${col}, ${leaf}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') AND TRY_CAST(json_extract_string(${col}, ${leaf}) AS DOUBLE) ${cmp} ${sqlNumber(v)}`,
      );
    if (typeof v === 'string') return nz(`json_type(${col}, ${leaf}) = 'VARCHAR' AND json_extract_string(${col}, ${leaf}) ${cmp} ${sqlString(v)}`);
    if (typeof v === 'boolean' && cmp === '=')
      return nz(`json_type(${col}, ${leaf}) = 'BOOLEAN' AND json_extract_string(${col}, ${leaf}) = ${sqlString(String(v))}`);
    return null;
  };
  let leafTest: string | null;
  if (op === '$in') {
    if (!Array.isArray(value) || value.length === 0) return null;
    const tests = value.map((v) => test(v, '='));
    leafTest = tests.some((t) => t === null) ? null : tests.map((t) => `(${t})`).join(' OR ');
  } else {
    const cmp = { $eq: '=', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
    leafTest = cmp ? test(value, cmp) : null;
  }
  return leafTest === null ? null : { sql: `(${anyArray}) OR (${leafTest})`, exact: false };
}
